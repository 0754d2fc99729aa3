"""Several objectives on one encoder input, with weighted losses (BERT = next sentence prediction + MLM).

The first objective lays out the input (`make_batch`); each later one corrupts that input in turn and adds
its own targets (`corrupt`), so every part reads the same hidden states from one encoder pass (`score`).
With next sentence prediction first and MLM second, the encoder sees BERT's input: a masked
`[CLS] A [SEP] B [SEP]`, and [CLS] must judge the pair through the masks.

Metrics: each part's scoreboards, prefixed with its name: `val/nsp/acc_is_next`, `val/mlm/acc_opener`, ...

Example:
    >>> import numpy as np
    >>> from minibert.objectives import MaskedLM, NextSentence
    >>> bert = Combined({"nsp": NextSentence(), "mlm": MaskedLM()}, {"nsp": 1.0, "mlm": 1.0})
    >>> encoder = bert.setup_encoder()  # sized for the pair layout: 19 tokens, 35 positions, 2 segments
    >>> sorted(bert(encoder, bert.make_batch(np.random.default_rng(0), 8, "train")).graded())
    ['mlm/', 'nsp/']
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scoreboard, Scored, Split
from minibert.validation import NONNEGATIVE, check


class Combined(Objective):
    """`objectives`: name -> objective, in the order they touch the input; `weights`: name -> loss weight
    (every name needs one, each >= 0). The loss is the weighted sum of the parts' losses."""

    def __init__(self, objectives: dict[str, Objective], weights: dict[str, float] | None = None) -> None:
        super().__init__()
        if not objectives:
            raise ValueError("Combined.objectives={} is not allowed: name at least one objective")
        for name, part in objectives.items():
            if not isinstance(name, str) or not name or "/" in name or "." in name:
                raise ValueError(f"Combined.objectives key {name!r} is not allowed: use a plain name like 'mlm'")
            if not isinstance(part, Objective):
                raise ValueError(f"Combined.objectives[{name!r}]={part!r} is not allowed: it must be an Objective")
        weights = {name: 1.0 for name in objectives} if weights is None else dict(weights)
        if set(weights) != set(objectives):
            raise ValueError(
                f"Combined.weights keys {sorted(weights)} are not allowed: give exactly one weight per objective "
                f"{sorted(objectives)}"
            )
        for name, w in weights.items():
            check("Combined", f"weights[{name!r}]", w, NONNEGATIVE)
        for i, (name, part) in enumerate(objectives.items()):
            if type(part).score is Objective.score:
                raise ValueError(
                    f"Combined.objectives[{name!r}] ({type(part).__name__}) is not allowed: it runs the encoder "
                    "itself (no `score`), so it cannot share one encoder pass with other objectives"
                )
            if i > 0 and type(part).corrupt is Objective.corrupt:
                raise ValueError(
                    f"Combined.objectives[{name!r}] ({type(part).__name__}) is not allowed after the first: it "
                    "cannot corrupt another objective's input (no `corrupt`); put it first or leave it out"
                )
        languages = {name: part.language for name, part in objectives.items()}
        first = next(iter(languages.values()))
        if any(lang != first for lang in languages.values()):
            raise ValueError(f"Combined.objectives are not allowed to differ in language: {languages}")
        self.parts = nn.ModuleDict(objectives)
        self.weights = weights
        self.language = first

    def configure_encoder(self, config: EncoderConfig) -> EncoderConfig:
        for part in self.parts.values():  # each may widen what the previous ones asked for
            config = part.configure_encoder(config)
        return config

    def scoreboards(self) -> dict[str, Scoreboard]:
        boards = {name: part.scoreboards() for name, part in self.parts.items()}
        return {f"{name}/{prefix}": b for name, board in boards.items() for prefix, b in board.items()}

    def build(self, config: EncoderConfig) -> None:
        for part in self.parts.values():
            part.build(config)

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        names = list(self.parts)
        batch = self.parts[names[0]].make_batch(rng, size, split)
        for name in names[1:]:
            out = self.parts[name].corrupt(batch, rng, split)
            clash = [k for k in batch if k != "inputs" and out[k] is not batch[k]]
            if clash:
                raise ValueError(f"Combined: objective {name!r} overwrites batch keys {clash} of an earlier part")
            batch = out
        return batch

    def score(self, hidden: torch.Tensor, batch: Batch) -> Scored:
        scored = {name: part.score(hidden, batch) for name, part in self.parts.items()}  # one shared pass
        loss = sum(self.weights[name] * out.loss for name, out in scored.items())
        parts = {f"{name}/{prefix}": s for name, out in scored.items() for prefix, s in out.graded().items()}
        nothing = torch.zeros(0, dtype=torch.long, device=hidden.device)  # graded only through the parts
        return Scored(loss, nothing, nothing, torch.zeros(0, 0, dtype=torch.bool, device=hidden.device), parts)

    @property
    def scoring(self) -> str | None:
        """The first part's rule that can score a sentence (BERT's MLM head under NSP + MLM), named with it."""
        name = self._scorer()
        return None if name is None else f"{self.parts[name].scoring} (its {name} head)"

    def _scorer(self) -> str | None:
        return next((name for name, part in self.parts.items() if part.scoring is not None), None)

    def sentence_scores(self, encoder: Encoder, ids: torch.Tensor, batch_size: int = 8192) -> torch.Tensor:
        name = self._scorer()
        if name is None:
            return super().sentence_scores(encoder, ids, batch_size)
        return self.parts[name].sentence_scores(encoder, ids, batch_size)
