"""Feature-based grammaticality: one linear layer on features chosen from the encoder (BERT's Table 7).

The task and its data are `Grammaticality`'s; only what the head reads differs. The features are the
hidden states of one layer, or of `concat` consecutive layers ending at `layer` laid side by side, pooled
over the sentence's rows:

- `layer`: 0 is the embeddings (token + position [+ segment]), i is block i's output, negative counts from
  the top (-1, the default, is the last layer: what `Grammaticality` reads);
- `concat`: how many layers, ending at `layer`, are concatenated (BERT's "concat last four" is
  `layer=-1, concat=4`); the head then reads `concat * width` features;
- `pooling`: `cls` (row 0), `mean` or `max` over every row ([CLS] included), or `last` (the last row, the
  only one a causal encoder lets see the whole sentence).

The head is linear (`nn.Linear(concat * width, 2)`), so a probe measures what the features hold, not what
a second network could compute from them. With `layer=-1, concat=1, pooling="cls"` a probe is exactly the
`frozen` fine-tuning regime's classifier (same initial head, same predictions, bit for bit).

Used with `FinetuneModule(regime="probe")` (the encoder frozen), and possible with any other regime.

Example:
    >>> import numpy as np
    >>> probe = Probe(layer=0, pooling="mean")  # a bag of token embeddings
    >>> out = probe(probe.setup_encoder(), probe.make_batch(np.random.default_rng(0), 4, "val"))
    >>> out.preds.shape, probe.head.in_features
    (torch.Size([4]), 32)
"""

from __future__ import annotations

import torch
from torch import nn

from minibert.languages import Language
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.grammaticality import Grammaticality
from minibert.validation import POSITIVE_INT, Range, check

POOLINGS = ("cls", "mean", "max", "last")


class Probe(Grammaticality):
    """language: whose sentences are judged; layer, concat, pooling: the features (see the module docstring)."""

    is_probe = True  # reads a frozen encoder (FinetuneModule's probe regime)

    def __init__(
        self, language: Language | None = None, layer: int = -1, concat: int = 1, pooling: str = "cls"
    ) -> None:
        super().__init__(language)
        check("Probe", "layer", layer, Range(integer=True))  # 0 = the embeddings, negative from the top
        check("Probe", "concat", concat, POSITIVE_INT)
        if pooling not in POOLINGS:
            raise ValueError(f"Probe.pooling={pooling!r} is not allowed: choose one of {', '.join(POOLINGS)}")
        self.layer, self.concat, self.pooling = layer, concat, pooling

    def build(self, config: EncoderConfig) -> None:
        states = config.layers + 1  # the embeddings and every block
        if not -states <= self.layer < states:
            raise ValueError(
                f"Probe.layer={self.layer} is not allowed with a {config.layers}-layer encoder: "
                f"use 0..{config.layers} (0 = the embeddings) or -{states}..-1"
            )
        self.top = self.layer % states  # index of the last state read, in [embeddings, block 1, ...]
        if self.concat > self.top + 1:
            raise ValueError(
                f"Probe.concat={self.concat} is not allowed with layer={self.layer}: "
                f"only {self.top + 1} layers end there (the embeddings included)"
            )
        if self.pooling == "cls" and (config.causal or self.top == 0):  # the row would be one constant vector
            if self.top == 0:
                where, instead = "the embeddings' [CLS] row is the [CLS] token's own", "'mean' or 'max'"
            else:
                where = "a causal encoder's [CLS] row sees only [CLS]"
                instead = "'last' (the row that has seen the whole sentence), 'mean' or 'max'"
            raise ValueError(
                f"Probe.pooling='cls' is not allowed at layer={self.layer} here: {where}, so it is the same for every "
                f"sentence and the probe sits at chance by construction; use {instead}"
            )
        self.head = nn.Linear(self.concat * config.width, 2)  # the only parameters drawn: as Grammaticality's head
        self.segmented = config.segments > 0

    def features(self, encoder: Encoder, ids: torch.Tensor) -> torch.Tensor:
        """(B, T) ids -> (B, concat * width) pooled features."""
        states = encoder(ids, self.segments(ids), all_layers=True)[self.top - self.concat + 1 : self.top + 1]
        return pool(torch.cat(states, dim=-1), self.pooling)  # (B, T, concat * width) -> (B, concat * width)


def pool(rows: torch.Tensor, pooling: str) -> torch.Tensor:
    """(B, T, C) -> (B, C): row 0 (`cls`), the last row (`last`), or the `mean` or `max` over the rows."""
    if pooling == "cls":
        return rows[:, 0]
    if pooling == "last":
        return rows[:, -1]
    if pooling == "mean":
        return rows.mean(dim=1)
    return rows.amax(dim=1)
