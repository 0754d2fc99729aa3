"""Next-token language modelling (GPT-style): predict every token from the ones on its left.

The honest left-to-right baseline, distinct from "MLM with a causal mask": no masking, labels are the
inputs shifted by one (`inputs = ids[:, :-1]`, `labels = ids[:, 1:]`) and the loss is on every position.
`configure_encoder` forces causal attention whatever the config says. Accuracy is split by what the next
token is: a closer follows from its opener (learnable to 100%), an opener is a fresh uniform draw (1/8).

Example:
    >>> import numpy as np
    >>> batch = NextTokenLM().make_batch(np.random.default_rng(0), 2, "train")
    >>> bool((batch["labels"][:, :-1] == batch["inputs"][:, 1:]).all())
    True
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minibert.language import is_opener, sample_sentences
from minibert.model import EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split


class NextTokenLM(Objective):
    categories = ("opener", "closer")  # of the token to predict

    def configure_encoder(self, config: EncoderConfig) -> EncoderConfig:
        return replace(config, causal=True)

    def build(self, config: EncoderConfig) -> None:
        self.head = nn.Linear(config.width, config.vocab_size)

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        ids = torch.from_numpy(sample_sentences(rng, size))  # (B, T)
        return {"inputs": ids[:, :-1].contiguous(), "labels": ids[:, 1:].contiguous()}  # (B, T - 1) each

    def score(self, hidden: torch.Tensor, batch: Batch) -> Scored:
        logits = self.head(hidden).flatten(0, 1)  # (B * (T - 1), V): every position is graded
        target = batch["labels"].flatten()
        opener = is_opener(target)
        return Scored(F.cross_entropy(logits, target), logits.argmax(-1), target, torch.stack([opener, ~opener], -1))
