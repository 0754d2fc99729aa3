"""The objective interface: what differs between pre-training (or fine-tuning) methods.

An objective owns how a clean batch becomes inputs and targets (`make_batch`, numpy, run by the data
pipeline), the attention it needs (`configure_encoder`), its head(s) on the shared encoder (`build`), its
loss and what it grades (`forward`), and the categories its accuracy is split by (`categories`).

Adding an objective is one file: subclass `Objective`, then name it by class path in YAML:

    model:
      objective:
        class_path: my_package.MyObjective
        init_args: {...}
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal, NamedTuple

import numpy as np
import torch
from torch import nn

from minibert.model import Encoder, EncoderConfig

Split = Literal["train", "val"]
Batch = dict[str, torch.Tensor]


class Scored(NamedTuple):
    """One batch's loss and what it grades: N graded predictions with their targets and categories."""

    loss: torch.Tensor  # () scalar
    preds: torch.Tensor  # (N,) predicted class ids
    target: torch.Tensor  # (N,) true class ids
    categories: torch.Tensor  # (N, len(objective.categories)) bool


class Objective(nn.Module, ABC):
    """Base class of every objective. Heads are created in `build`, once the encoder's shape is known."""

    #: names of the categories accuracy is split by, in the column order of `Scored.categories`
    categories: tuple[str, ...] = ()

    def configure_encoder(self, config: EncoderConfig) -> EncoderConfig:
        """The encoder this objective needs, given the configured one (e.g. force causal attention)."""
        return config

    @abstractmethod
    def build(self, config: EncoderConfig) -> None:
        """Create the head(s) for an encoder of this shape."""

    @abstractmethod
    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        """A fresh batch of `size` examples drawn with `rng` alone (so it is reproducible)."""

    @abstractmethod
    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        """Run the encoder and head(s) on a batch; return loss and graded predictions."""


def masked_mean_cross_entropy(logits: torch.Tensor, target: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """Sum of cross-entropies over `count` graded positions divided by that count; zero when none is graded
    (a plain mean over an empty set would be NaN)."""
    return nn.functional.cross_entropy(logits, target, reduction="sum") / count.clamp(min=1)
