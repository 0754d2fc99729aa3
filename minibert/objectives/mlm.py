"""Masked language modelling: BERT's cloze test, on any language.

Validation batches carry each graded position's ceiling credit (minibert.oracle): the exact Bayes
oracle's score on the same question, read against the causal oracle when the encoder is causal; and the
joint posterior figures that bound each category they are known for (`minibert.oracle.mlm_grades`).

Example:
    >>> import numpy as np
    >>> mlm = MaskedLM()
    >>> encoder = mlm.setup_encoder()
    >>> out = mlm(encoder, mlm.make_batch(np.random.default_rng(0), 8, "train"))
    >>> out.preds.shape == out.target.shape, out.categories.shape[1] == len(mlm.categories)
    (True, True)
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from minibert.languages import MASK_ID, BracketPairs, Language
from minibert.masking import IGNORE, INPUT_CATEGORIES, MaskingRecipe, categories, check_gradable, mlm_categories
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split, masked_mean_cross_entropy, read_sentences
from minibert.oracle import mlm_grades


class BertLMHead(nn.Module):
    """BERT's MLM head (`EncoderConfig.layout="bert"`): a dense + GELU + LayerNorm transform of each hidden
    state, then the decoder to vocabulary logits, (..., width) -> (..., vocab_size). The transform gives the
    cloze a projection of its own, so that the last layer's states need not be the decoder's inputs as well
    as what other heads read. What `transformers`' BertForMaskedLM computes (minibert.export)."""

    def __init__(self, width: int, vocab_size: int) -> None:
        super().__init__()
        self.dense = nn.Linear(width, width)
        self.act = nn.GELU()  # exact (erf) GELU, BERT's and `transformers`' "gelu"
        self.norm = nn.LayerNorm(width)
        self.decoder = nn.Linear(width, vocab_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.norm(self.act(self.dense(hidden))))


class MaskedLM(Objective):
    """Cross-entropy on picked positions only, through a linear head to vocabulary logits (BERT's transform
    first, `BertLMHead`, for an encoder of `layout="bert"`).

    masking: the recipe for training batches; eval_masking: the recipe of the validation questions
    (BERT's default, so that runs trained on other recipes are graded on the same questions); language:
    the sentences (BracketPairs by default). Stacked in a `Combined` after an objective that lays out the
    input (next sentence prediction), it masks that input's openers and closers (`corrupt`).
    """

    def __init__(
        self,
        masking: MaskingRecipe = MaskingRecipe(),
        eval_masking: MaskingRecipe = MaskingRecipe(),
        language: Language | None = None,
    ):
        super().__init__()
        check_gradable(eval_masking, "MaskedLM.eval_masking", "the validation questions",
                       "grade on a MaskingRecipe (train on any recipe with `masking`), or give the recipe its own "
                       "`emissions`")  # fmt: skip
        self.masking, self.eval_masking = masking, eval_masking
        self.language = language or BracketPairs()
        self.categories = mlm_categories(self.language)
        self.input_categories = INPUT_CATEGORIES + tuple(self.language.input_categories)
        self.causal = False  # whether the encoder is; set by build, read by the oracle

    measure = "cloze"

    @property
    def chance(self) -> float | None:
        return self.language.chance

    def build(self, config: EncoderConfig) -> None:
        if config.layout == "bert":
            self.head = BertLMHead(config.width, config.vocab_size)
        else:
            self.head = nn.Linear(config.width, config.vocab_size)
        self.causal = config.causal

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        # which document each token comes from matters to validation only: training draws skip the lookup
        ids, documents = (self.language.draw_with_documents(rng, size, split) if split == "val"
                          else (self.language.draw(rng, size, split), None))  # fmt: skip
        batch = self.corrupt({"inputs": torch.from_numpy(ids)}, rng, split)
        if split == "val":
            batch |= self.grades(batch["inputs"].numpy(), batch["labels"].numpy())
            if documents is not None:  # (B, T): what each question's sampling error clusters by
                batch["document"] = torch.from_numpy(documents)
        return batch

    def grades(self, inputs: np.ndarray, labels: np.ndarray) -> Batch:
        """What validation questions carry to be read against: the oracle's credit on each and its category
        bounds (for val/ceiling/*), or on a language without an oracle, the references' credit (B, T, R)."""
        if not self.language.has_oracle:
            refs = self.language.references(self.eval_masking, inputs, labels, self.causal)
            return {"references": torch.from_numpy(np.stack([refs[n] for n in self.reference_names()], axis=-1))}
        credit, bounds = mlm_grades(self.language, self.eval_masking, inputs, labels, self.causal, self.categories)
        return {"credit": torch.from_numpy(credit), "bounds": torch.from_numpy(bounds)}

    def reference_names(self) -> tuple[str, ...]:
        return () if self.language.has_oracle else self.language.reference_names(self.causal)

    def corrupt(self, batch: Batch, rng: np.random.Generator, split: Split) -> Batch:
        recipe = self.masking if split == "train" else self.eval_masking
        ids = batch["inputs"].numpy()
        masked = recipe.apply(ids, rng, self.language)
        return {
            **batch,
            "inputs": torch.from_numpy(masked.inputs),
            "labels": torch.from_numpy(masked.labels),
            "categories": torch.from_numpy(categories(self.language, ids, masked.labels, masked.kind)),
        }

    def score(self, hidden: torch.Tensor, batch: Batch) -> Scored:
        picked = batch["labels"] != IGNORE  # (B, T)
        logits = self.head(hidden[picked])  # (N, V): only graded positions reach the head
        target = batch["labels"][picked]  # (N,)
        loss = masked_mean_cross_entropy(logits, target, picked.sum())
        credit = batch["credit"][picked] if "credit" in batch else None
        bounds = batch["bounds"][picked] if "bounds" in batch else None
        refs = batch["references"][picked] if "references" in batch else None
        documents = batch["document"][picked] if "document" in batch else None
        return Scored(loss, logits.argmax(-1), target, batch["categories"][picked], credit=credit, bounds=bounds,
                      references=refs, documents=documents)  # fmt: skip

    scoring = "pseudo-log-likelihood"

    @torch.no_grad()
    def sentence_scores(self, encoder: Encoder, ids: torch.Tensor, batch_size: int = 8192) -> torch.Tensor:
        """Pseudo-log-likelihood (Salazar et al. 2020): mask each content position in turn and sum the
        log-probability of its true token. Where a word has several pieces, the later pieces of the same word
        are masked too (PLL-word-l2r, Kauf & Ivanova 2023), so a word is not scored from its own pieces. Every
        masked copy of every sentence goes through the encoder in passes of `batch_size` rows."""
        lang = self.language
        host = ids.cpu().numpy()
        content = torch.from_numpy(lang.is_content(host)).to(ids.device)  # (B, T)
        word = torch.from_numpy(lang.word_starts(host)).to(ids.device).cumsum(1)  # (B, T): a word's pieces share it
        rows, cols = content.nonzero(as_tuple=True)  # (N,): one masked copy per content position
        after = torch.arange(ids.shape[1], device=ids.device)
        scores = torch.zeros(len(ids), dtype=torch.float64, device=ids.device)
        for start in range(0, len(rows), batch_size):
            r, c = rows[start : start + batch_size], cols[start : start + batch_size]
            hide = (word[r] == word[r, c][:, None]) & (after >= c[:, None]) & content[r]  # (n, T)
            copies = ids[r].masked_fill(hide, MASK_ID)
            hidden = read_sentences(encoder, copies)[torch.arange(len(r)), c]  # (n, C)
            logp = self.head(hidden).float().log_softmax(-1).gather(1, ids[r, c][:, None]).squeeze(1)
            scores.index_add_(0, r, logp.double())
        return scores

    def predict(self, encoder: Encoder, inputs: torch.Tensor) -> torch.Tensor:
        """Most likely token at every position, (B, T) -> (B, T)."""
        return self.head(encoder(inputs)).argmax(-1)
