"""Next-token language modelling (GPT-style): predict every token from the ones on its left.

The honest left-to-right baseline, distinct from "MLM with a causal mask": no masking, labels are the
inputs shifted by one (`inputs = ids[:, :-1]`, `labels = ids[:, 1:]`) and the loss is on every position.
`configure_encoder` forces causal attention whatever the config says. Accuracy is split by what the next
token is: on the seed's language a closer follows from its opener (learnable to 100%) and an opener is a
fresh uniform draw (1/8). Validation batches carry the exact ceiling of each prediction,
P(w_{t+1} | w_0..w_t) from the language's causal oracle.

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

from minibert.languages import BracketPairs, Language
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split, read_sentences
from minibert.oracle import next_token_credit


class NextTokenLM(Objective):
    def __init__(self, language: Language | None = None) -> None:
        super().__init__()
        self.language = language or BracketPairs()
        # the class of the token to predict, where the language has classes; the left context does not
        # decide it, so the oracle's accuracy there is a reference (val/bayes/...), not a ceiling
        self.categories = tuple(c for c in ("opener", "closer") if c in self.language.shared_categories)

    def configure_encoder(self, config: EncoderConfig) -> EncoderConfig:
        return replace(super().configure_encoder(config), causal=True)

    measure = "next_token"

    @property
    def chance(self) -> float | None:
        return self.language.chance

    def build(self, config: EncoderConfig) -> None:
        self.head = nn.Linear(config.width, config.vocab_size)

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        ids, documents = (self.language.draw_with_documents(rng, size, split) if split == "val"
                          else (self.language.draw(rng, size, split), None))  # (B, T) each  # fmt: skip
        batch = {"inputs": torch.from_numpy(ids[:, :-1].copy()), "labels": torch.from_numpy(ids[:, 1:].copy())}
        if split == "val" and documents is not None:  # the document of each predicted token
            batch["document"] = torch.from_numpy(documents[:, 1:].copy())
        if split == "val" and self.language.has_oracle:
            batch["credit"] = torch.from_numpy(next_token_credit(self.language, ids))  # (B, T - 1)
        elif split == "val":  # real text: the n-gram references' credit on each prediction, (B, T - 1, R)
            refs = self.language.next_token_references(ids)
            batch["references"] = torch.from_numpy(np.stack([refs[n] for n in self.reference_names()], axis=-1))
        return batch

    def reference_names(self) -> tuple[str, ...]:
        return () if self.language.has_oracle else self.language.reference_names(causal=True)

    def score(self, hidden: torch.Tensor, batch: Batch) -> Scored:
        logits = self.head(hidden).flatten(0, 1)  # (B * (T - 1), V): every position is graded
        target = batch["labels"].flatten()
        classes = {"opener": self.language.is_opener, "closer": self.language.is_closer}
        credit = batch["credit"].flatten() if "credit" in batch else None
        columns = [classes[c](target) for c in self.categories]
        categories = torch.stack(columns, -1) if columns else target.new_zeros((len(target), 0), dtype=torch.bool)
        refs = batch["references"].flatten(0, 1) if "references" in batch else None
        documents = batch["document"].flatten() if "document" in batch else None
        return Scored(F.cross_entropy(logits, target), logits.argmax(-1), target, categories, credit=credit,
                      references=refs, documents=documents)  # fmt: skip

    scoring = "log-likelihood"

    @torch.no_grad()
    def sentence_scores(self, encoder: Encoder, ids: torch.Tensor, batch_size: int = 8192) -> torch.Tensor:
        """Left-to-right log-likelihood: the sum over content tokens of log P(w_t | w_<t), one pass per
        `batch_size` sentences (the exact likelihood, not a pseudo one)."""
        content = torch.from_numpy(self.language.is_content(ids[:, 1:].cpu().numpy())).to(ids.device)  # (B, T - 1)
        scores = []
        for part, graded in zip(ids.split(batch_size), content.split(batch_size)):
            logp = self.head(read_sentences(encoder, part[:, :-1])).float().log_softmax(-1)  # (b, T - 1, V)
            token = logp.gather(2, part[:, 1:, None]).squeeze(2)  # (b, T - 1)
            scores.append((token * graded).double().sum(1))
        return torch.cat(scores)
