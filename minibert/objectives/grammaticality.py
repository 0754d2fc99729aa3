"""A miniature CoLA: is this sentence a sentence of the language?

Half of each batch is well formed (label 1); the other half is spoiled once by the language's own
`spoil` (on the seed's language: one closer, at a uniformly chosen pair, replaced by a wrong closer; on
Dyck: two closers swapped or one bracket moved, so that only long-range structure tells). The classifier
reads the [CLS] output (row 0 of the encoder's last layer) through one linear layer to 2 logits.

Categories: the two classes, then one per way of spoiling (`spoil_<way>`, on languages that have several).
Spoiled sentences are never in the language, so the Bayes ceiling is 100%; every validation batch says so
(`credit`), and the run logs `val/ceiling/acc` = 1 beside `val/acc`.

Encoders pre-trained by other objectives (minibert.objectives) fit as they are: one pre-trained on sentence
pairs (next sentence prediction: 19 tokens, 35 positions, 2 segments) reads the sentence as segment 0,
BERT's convention for single-sentence tasks; `[CLS] A` is exactly the start of its pair layout. A causal
encoder's [CLS] sees only itself, so there the classifier reads the last row, which has seen the whole
sentence (GPT's way of classifying). An encoder of BERT's layout (`EncoderConfig.layout="bert"`) gets BERT's
head instead, `BertClassifier`: the pooler (dense + tanh) before the linear layer.

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

from minibert.languages import BracketPairs, Language
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split

UNGRAMMATICAL, GRAMMATICAL = 0, 1


class BertClassifier(nn.Module):
    """BERT's sequence classifier (`EncoderConfig.layout="bert"`): the pooler, a dense + tanh layer on the
    [CLS] row, then a linear layer to the classes, (B, width) -> (B, classes). What `BertForSequenceClassification`
    computes (its dropout aside, which minibert does not use)."""

    def __init__(self, width: int, classes: int = 2) -> None:
        super().__init__()
        self.pooler = nn.Linear(width, width)
        self.classifier = nn.Linear(width, classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.tanh(self.pooler(features)))


class Grammaticality(Objective):
    """language: whose sentences are judged (BracketPairs by default)."""

    measure = "grammaticality"
    chance = 0.5  # the classes are exactly balanced (make_batch)

    def __init__(self, language: Language | None = None) -> None:
        super().__init__()
        self.language = language or BracketPairs()
        if not self.language.has_grammar:
            raise ValueError(
                f"{type(self).__name__}.language={self.language!r} is not allowed: it has no grammar to break "
                "(no `spoil`); fine-tune on real text with minibert.objectives.SegmentPairs"
            )
        # column c < 2 holds the examples of class c; then one column per way of spoiling
        self.categories = ("ungrammatical", "grammatical") + tuple(f"spoil_{k}" for k in self.language.spoilings)
        self.input_categories = self.categories  # the oracle scores 100% on every sentence: a bound on each

    def build(self, config: EncoderConfig) -> None:
        self.head = BertClassifier(config.width) if config.layout == "bert" else nn.Linear(config.width, 2)
        self.segmented = config.segments > 0
        self.readout = -1 if config.causal else 0  # the row that has seen the whole sentence

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        ids = self.language.draw(rng, size, split)  # (B, T)
        labels = rng.permutation(np.arange(size) % 2)  # exactly balanced (to within one)
        bad = np.flatnonzero(labels == UNGRAMMATICAL)
        corrupted = np.full(size, -1)  # for inspection and tests: the first spoiled position, -1 if none
        how = np.full(size, -1)
        ids[bad], corrupted[bad], how[bad] = self.language.spoil(ids[bad], rng)
        spoils = how[:, None] == np.arange(len(self.language.spoilings))  # (B, ways)
        classes = np.arange(2) == labels[:, None]  # (B, 2)
        return {
            "inputs": torch.from_numpy(ids),
            "labels": torch.from_numpy(labels.astype(np.int64)),
            "categories": torch.from_numpy(np.concatenate([classes, spoils], axis=1)),
            "corrupted_at": torch.from_numpy(corrupted),
        }

    def segments(self, ids: torch.Tensor) -> torch.Tensor | None:
        """Segment ids for an encoder pre-trained on pairs: one sentence is all segment 0."""
        return torch.zeros_like(ids) if self.segmented else None

    def features(self, encoder: Encoder, ids: torch.Tensor) -> torch.Tensor:
        """(B, T) ids -> (B, width): the last layer's [CLS] row (the last row for a causal encoder)."""
        return encoder(ids, self.segments(ids))[:, self.readout]

    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        logits = self.head(self.features(encoder, batch["inputs"]))  # (B, 2)
        target = batch["labels"]
        credit = torch.ones(target.shape, dtype=torch.float64, device=target.device)  # decidable exactly
        return Scored(F.cross_entropy(logits, target), logits.argmax(-1), target, batch["categories"], credit=credit)
