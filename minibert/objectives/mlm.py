"""Masked language modelling: BERT's cloze test on the bracket language.

Example:
    >>> import numpy as np
    >>> from minibert.model import Encoder, EncoderConfig
    >>> mlm = MaskedLM()
    >>> mlm.build(EncoderConfig())
    >>> batch = mlm.make_batch(np.random.default_rng(0), 8, "train")
    >>> out = mlm(Encoder(EncoderConfig()), batch)
    >>> out.preds.shape == out.target.shape, out.categories.shape[1] == len(mlm.categories)
    (True, True)
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from minibert.language import is_content, sample_sentences
from minibert.masking import IGNORE, MLM_CATEGORIES, MaskingRecipe, categories
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split, masked_mean_cross_entropy


class MaskedLM(Objective):
    """Cross-entropy on picked positions only, through a linear head to vocabulary logits.

    masking: the recipe for training batches; eval_masking: the recipe of the validation questions
    (BERT's default, so that runs trained on other recipes are graded on the same questions).
    Stacked in a `Combined` after an objective that lays out the input (next sentence prediction), it
    masks that input's openers and closers (`corrupt`).
    """

    categories = MLM_CATEGORIES

    def __init__(self, masking: MaskingRecipe = MaskingRecipe(), eval_masking: MaskingRecipe = MaskingRecipe()):
        super().__init__()
        self.masking, self.eval_masking = masking, eval_masking

    def build(self, config: EncoderConfig) -> None:
        self.head = nn.Linear(config.width, config.vocab_size)

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        return self.corrupt({"inputs": torch.from_numpy(sample_sentences(rng, size))}, rng, split)

    def corrupt(self, batch: Batch, rng: np.random.Generator, split: Split) -> Batch:
        recipe = self.masking if split == "train" else self.eval_masking
        ids = batch["inputs"].numpy()
        masked = recipe.apply(ids, rng, pickable=is_content(ids))
        return {
            **batch,
            "inputs": torch.from_numpy(masked.inputs),
            "labels": torch.from_numpy(masked.labels),
            "categories": torch.from_numpy(categories(masked.labels, masked.kind)),
        }

    def score(self, hidden: torch.Tensor, batch: Batch) -> Scored:
        picked = batch["labels"] != IGNORE  # (B, T)
        logits = self.head(hidden[picked])  # (N, V): only graded positions reach the head
        target = batch["labels"][picked]  # (N,)
        loss = masked_mean_cross_entropy(logits, target, picked.sum())
        return Scored(loss, logits.argmax(-1), target, batch["categories"][picked])

    def predict(self, encoder: Encoder, inputs: torch.Tensor) -> torch.Tensor:
        """Most likely token at every position, (B, T) -> (B, T)."""
        return self.head(encoder(inputs)).argmax(-1)
