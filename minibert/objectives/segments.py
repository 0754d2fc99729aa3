"""Segment pairs: a fine-tuning task on real text, about two stretches of text shown as `[CLS] A [SEP] B [SEP]`.

Each example takes two consecutive stretches A and B of `segment_length` tokens from one document of the
language's split (`Text.segment_pairs`: the training split for training batches, the validation split for the
validation set, so the task respects the corpus's split by module). Two questions (`question`):

- `next` (BERT's next sentence prediction as a downstream task): B is A's continuation (label 1), or
  (label 0) B is replaced by the second stretch of another example's document, drawn the same way (by
  chance, rarely, the same document). Topic and vocabulary shared with A give it away, as in BERT's NSP;
- `order` (ALBERT's sentence-order prediction, with fixed-length stretches): `[CLS] A [SEP] B [SEP]` (label 1)
  or `[CLS] B [SEP] A [SEP]` (label 0). Both stretches come from one document, so topic says nothing: only
  how the text runs on across the boundary tells. A 64-wide, 2-layer encoder does not learn it from 14-token
  stretches in a few hundred steps (results/text.md), so `next` is the default.

Exactly half of each batch is positive (to within one), so the majority-class baseline is 50%.

The classifier is linear on features of the encoder (`layer`: 0 the embeddings, -1 the last block;
`pooling`: `cls`, `mean`, `max` or `last`, as `Probe` reads them). With the defaults (last layer, [CLS]) it is
BERT's fine-tuning head; it is a probe too (`is_probe`), for `FinetuneModule(regime="probe")`. Where [CLS]'s
row cannot have seen the pair (the embeddings, a causal encoder) `cls` reads the mean, or the last row. An encoder
pre-trained with segment embeddings (next sentence prediction) gets segment 0 for `[CLS] A [SEP]` and 1 after.

Example:
    >>> import numpy as np
    >>> task = SegmentPairs()
    >>> batch = task.make_batch(np.random.default_rng(0), 4, "val")
    >>> batch["inputs"].shape, batch["labels"].sum().item()
    (torch.Size([4, 63]), 2)
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minibert.languages import CLS_ID, Language
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split, sized_for
from minibert.objectives.probe import POOLINGS, pool
from minibert.validation import POSITIVE_INT, Range, check

NEGATIVE, POSITIVE = 0, 1
QUESTIONS = {"next": ("other_document", "next"), "order": ("swapped", "in_order")}  # the classes' names


class SegmentPairs(Objective):
    """language: a corpus language (Text by default); question: `next` or `order` (see the module docstring);
    segment_length: tokens per stretch (default: the most that fit the language's window, (seq_len - 3) // 2);
    layer, pooling: the features the head reads."""

    chance = 0.5  # exactly balanced: the majority class scores 50%
    is_probe = True

    def __init__(
        self, language: Language | None = None, question: str = "next", segment_length: int | None = None,
        layer: int = -1, pooling: str = "cls",
    ) -> None:  # fmt: skip
        super().__init__()
        if language is None:
            from minibert.languages import Text

            language = Text()
        if question not in QUESTIONS:
            raise ValueError(f"SegmentPairs.question={question!r} is not allowed: choose one of {', '.join(QUESTIONS)}")
        if not hasattr(language, "segment_pairs"):
            raise ValueError(
                f"SegmentPairs.language={language!r} is not allowed: it needs documents to cut stretches from "
                "(a corpus language such as minibert.languages.Text)"
            )
        check("SegmentPairs", "layer", layer, Range(integer=True))
        if pooling not in POOLINGS:
            raise ValueError(f"SegmentPairs.pooling={pooling!r} is not allowed: choose one of {', '.join(POOLINGS)}")
        self.language, self.question, self.layer, self.pooling = language, question, layer, pooling
        self.categories = QUESTIONS[question]  # column c holds the examples of class c
        self.measure = question
        self.segment_length = (language.seq_len - 3) // 2 if segment_length is None else segment_length
        check("SegmentPairs", "segment_length", self.segment_length, POSITIVE_INT)

    @property
    def seq_len(self) -> int:
        return 3 + 2 * self.segment_length

    def configure_encoder(self, config: EncoderConfig) -> EncoderConfig:
        return sized_for(config, self.language, max_len=self.seq_len)

    def build(self, config: EncoderConfig) -> None:
        states = config.layers + 1
        if not -states <= self.layer < states:
            raise ValueError(
                f"SegmentPairs.layer={self.layer} is not allowed with a {config.layers}-layer encoder: use "
                f"0..{config.layers} (0 = the embeddings) or -{states}..-1"
            )
        self.top = self.layer % states
        self.reading = self.pooling  # [CLS]'s row says nothing in the embeddings, nor under a causal mask
        if self.pooling == "cls" and (config.causal or self.top == 0):
            self.reading = "last" if config.causal and self.top else "mean"
        self.head = nn.Linear(config.width, 2)
        self.segmented = config.segments > 0

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        k = self.segment_length
        documents = None  # a plug-in corpus language may not say which document a pair comes from
        if hasattr(self.language, "segment_pairs_with_documents"):
            pairs, documents = self.language.segment_pairs_with_documents(rng, size, split, k)  # (B, 2, k), (B,)
        else:
            pairs = self.language.segment_pairs(rng, size, split, k)  # (B, 2, k): A then B
        labels = rng.permutation(np.arange(size) % 2)  # exactly balanced (to within one)
        positive = labels[:, None] == POSITIVE
        if self.question == "next":  # a negative's B: another example's second stretch (never its own)
            own = np.arange(size)
            other = (own + rng.integers(1, max(size, 2), size=size)) % size
            first, second = pairs[:, 0], np.where(positive, pairs[:, 1], pairs[other, 1])
        else:
            first = np.where(positive, pairs[:, 0], pairs[:, 1])
            second = np.where(positive, pairs[:, 1], pairs[:, 0])
        cls, sep = np.full((size, 1), CLS_ID), np.full((size, 1), self.language.sep_id)
        inputs = np.concatenate([cls, first, sep, second, sep], axis=1)  # (B, 3 + 2k)
        segments = np.broadcast_to((np.arange(inputs.shape[1]) > k + 1).astype(np.int64), inputs.shape)
        batch = {
            "inputs": torch.from_numpy(inputs.astype(np.int64)),
            "segments": torch.from_numpy(segments.copy()),
            "labels": torch.from_numpy(labels.astype(np.int64)),
        }
        if split == "val" and documents is not None:  # A's document: what the example's sampling error clusters by
            batch["document"] = torch.from_numpy(documents)
        return batch

    def features(self, encoder: Encoder, batch: Batch) -> torch.Tensor:
        """(B, width): the chosen layer's rows, pooled."""
        segments = batch["segments"] if self.segmented else None
        states = encoder(batch["inputs"], segments, all_layers=True)
        return pool(states[self.top], self.reading)

    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        logits = self.head(self.features(encoder, batch))  # (B, 2)
        target = batch["labels"]
        return Scored(F.cross_entropy(logits, target), logits.argmax(-1), target, F.one_hot(target, 2).bool(),
                      documents=batch.get("document"))  # fmt: skip
