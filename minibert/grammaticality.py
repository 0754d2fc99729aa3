"""A miniature CoLA: is this bracket sentence well formed?

Half of each batch is well formed (label 1); in the other half exactly one closer, at a uniformly chosen
pair, is replaced by a *wrong* closer (label 0). The classifier reads the [CLS] output (row 0 of the
encoder's last layer) through one linear layer to 2 logits.

Encoders pre-trained by other objectives (minibert.objectives) fit as they are: one pre-trained on sentence
pairs (next sentence prediction: 19 tokens, 35 positions, 2 segments) reads the 17-token sentence as
segment 0, BERT's convention for single-sentence tasks; `[CLS] A` is exactly the start of its pair layout.
A causal encoder's [CLS] sees only itself, so there the classifier reads the last row, which has seen the
whole sentence (GPT's way of classifying).

Example:
    >>> import numpy as np
    >>> batch = Grammaticality().make_batch(np.random.default_rng(0), 6, "train")
    >>> batch["labels"].sum().item()  # balanced
    3
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minibert.language import FIRST_CLOSER, N_KINDS, N_PAIRS, sample_sentences
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split

UNGRAMMATICAL, GRAMMATICAL = 0, 1


class Grammaticality(Objective):
    categories = ("ungrammatical", "grammatical")  # column c holds the examples of class c

    def build(self, config: EncoderConfig) -> None:
        self.head = nn.Linear(config.width, 2)
        self.segmented = config.segments > 0
        self.readout = -1 if config.causal else 0  # the row that has seen the whole sentence

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        ids = sample_sentences(rng, size)  # (B, T)
        labels = rng.permutation(np.arange(size) % 2)  # exactly balanced (to within one)
        bad = np.flatnonzero(labels == UNGRAMMATICAL)
        pair = rng.integers(0, N_PAIRS, size=len(bad))  # which pair gets the wrong closer
        closer_pos = 2 + 2 * pair  # closer of pair k sits at 2k + 2
        kind = ids[bad, closer_pos] - FIRST_CLOSER
        wrong = (kind + rng.integers(1, N_KINDS, size=len(bad))) % N_KINDS  # any closer but the right one
        ids[bad, closer_pos] = FIRST_CLOSER + wrong
        corrupted = np.full(size, -1)
        corrupted[bad] = closer_pos  # for inspection and tests: where the wrong closer is, -1 if none
        return {
            "inputs": torch.from_numpy(ids),
            "labels": torch.from_numpy(labels.astype(np.int64)),
            "corrupted_at": torch.from_numpy(corrupted),
        }

    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        ids = batch["inputs"]  # (B, T)
        segments = torch.zeros_like(ids) if self.segmented else None  # one sentence: all segment 0
        logits = self.head(encoder(ids, segments)[:, self.readout])  # (B, 2) from the [CLS] (or last) row
        target = batch["labels"]
        classes = F.one_hot(target, 2).bool()  # (B, 2): category = true class
        return Scored(F.cross_entropy(logits, target), logits.argmax(-1), target, classes)
