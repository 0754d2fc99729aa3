"""Next sentence prediction: does segment B continue segment A's document? Judged from the [CLS] output.

The input is BERT's pair layout, `[CLS] A [SEP] B [SEP]` (3 + 4 * n_pairs tokens; 35 by default), with a
learned segment embedding (0 for [CLS] A [SEP], 1 for B [SEP]). Segments come from `MarkovDocuments`
(minibert.objectives.documents), where each document's openers follow its own Markov chain, so a true continuation
shares A's statistics; in the plain language NSP would be unlearnable. Exactly half of each batch (to
within one) is a true pair (B is the next segment of A's document); in the other half B is the next
segment of *another* document of the same batch (`b_from` says which), as BERT draws negatives from
elsewhere in the corpus.

[SEP] exists only for this objective: it takes the id after the language's vocabulary (18 for the seed's
language), and `configure_encoder` widens the encoder by that token, to 3 + 4 * n_pairs positions and 2
segments. The language's vocabulary and every other objective are unchanged. The corpus is made of the
seed's kind of sentences (adjacent pairs), so the language must be a BracketPairs, or a corpus of real
documents (minibert.languages.Text): there A and B are consecutive stretches of one document of the split
(`Text.segment_pairs`), as long as fit the window (30 tokens each in 63), [SEP] is the tokenizer's own,
and a negative's B is the second stretch of another example's document (by chance, rarely, the same
document). Fine-tuning such an
encoder on a plain sentence reads it as segment 0 (BERT's convention for single-sentence tasks); `[CLS] A`
is exactly the start of the pair layout.

Alone, NSP trains only what [CLS] needs; stacked with MLM in a `Combined` (configs/objectives/bert.yaml),
it is BERT's original pre-training: MLM masks the pair's openers and closers, never [CLS] or [SEP].

Example:
    >>> import numpy as np
    >>> batch = NextSentence().make_batch(np.random.default_rng(0), 6, "train")
    >>> batch["inputs"].shape, batch["segments"].shape, batch["is_next"].sum().item()
    (torch.Size([6, 35]), torch.Size([6, 35]), 3)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minibert.languages import CLS_ID, BracketPairs, Language
from minibert.model import EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split, sized_for
from minibert.objectives.documents import MarkovDocuments
from minibert.validation import POSITIVE_INT, check

NOT_NEXT, IS_NEXT = 0, 1


class NextSentence(Objective):
    """n_pairs: pairs per segment (A and B alike); documents: the corpus the segments come from; language:
    the bracket types (a BracketPairs; the seed's by default)."""

    categories = ("not_next", "is_next")  # column c holds the examples of class c
    measure = "nsp"
    chance = 0.5  # B follows A in exactly half of the pairs

    def __init__(
        self, n_pairs: int = 8, documents: MarkovDocuments = MarkovDocuments(), language: Language | None = None
    ) -> None:
        super().__init__()
        check("NextSentence", "n_pairs", n_pairs, POSITIVE_INT)
        language = language or BracketPairs()
        self.real = hasattr(language, "segment_pairs")  # a corpus: real documents instead of MarkovDocuments
        if not (self.real or isinstance(language, BracketPairs)):
            raise ValueError(
                f"NextSentence.language={language!r} is not allowed: its document corpus (MarkovDocuments) "
                "is made of adjacent bracket pairs, so it needs a BracketPairs language (or a corpus such as Text)"
            )
        self.n_pairs, self.documents, self.language = n_pairs, documents, language
        # one past the language's vocabulary, unless the language has its own (text's tokenizer has [SEP])
        self.sep_id = getattr(language, "sep_id", language.vocab_size)

    @property
    def segment_length(self) -> int:
        """Tokens per segment: 2 * n_pairs in the bracket corpus; on text, the most that fit its window."""
        return (self.language.seq_len - 3) // 2 if self.real else 2 * self.n_pairs

    @property
    def seq_len(self) -> int:
        return 3 + 2 * self.segment_length

    def configure_encoder(self, config: EncoderConfig) -> EncoderConfig:
        config = sized_for(config, self.language, vocab_size=max(self.sep_id + 1, self.language.vocab_size),
                           max_len=self.seq_len)  # fmt: skip
        return replace(config, segments=max(config.segments, 2))

    def build(self, config: EncoderConfig) -> None:
        self.head = nn.Linear(config.width, 2)

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        if size < 2:
            raise ValueError(
                f"NextSentence needs batches of 2 or more (negatives come from another document), got {size}"
            )
        if self.real:  # consecutive stretches of one document of the split
            docs = self.language.segment_pairs(rng, size, split, self.segment_length)
        else:
            docs = self.documents.sample(rng, size, n_segments=2, n_pairs=self.n_pairs, language=self.language)
        is_next = rng.permutation(np.arange(size) % 2)  # exactly balanced (to within one)
        own = np.arange(size)
        b_from = np.where(is_next == IS_NEXT, own, (own + rng.integers(1, size, size=size)) % size)  # never own
        a, b = docs[:, 0], docs[b_from, 1]  # (B, 2P) each
        cls, sep = np.full((size, 1), CLS_ID), np.full((size, 1), self.sep_id)
        inputs = np.concatenate([cls, a, sep, b, sep], axis=1)  # (B, 3 + 4P)
        segments = (np.arange(inputs.shape[1]) > a.shape[1] + 1).astype(np.int64)  # 0 up to the first [SEP]
        return {
            "inputs": torch.from_numpy(inputs.astype(np.int64)),
            "segments": torch.from_numpy(np.broadcast_to(segments, inputs.shape).copy()),
            "is_next": torch.from_numpy(is_next.astype(np.int64)),
            "b_from": torch.from_numpy(b_from),  # for inspection and tests: the document B comes from
        }

    def score(self, hidden: torch.Tensor, batch: Batch) -> Scored:
        logits = self.head(hidden[:, 0])  # (B, 2) from the [CLS] row
        target = batch["is_next"]
        return Scored(F.cross_entropy(logits, target), logits.argmax(-1), target, F.one_hot(target, 2).bool())
