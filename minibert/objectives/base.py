"""The objective interface: what differs between pre-training (or fine-tuning) methods.

An objective owns how a clean batch becomes inputs and targets (`make_batch`, numpy, run by the data
pipeline), the attention it needs (`configure_encoder`), its head(s) on the shared encoder (`build`), its
loss and what it grades (`forward`, or just `score` when it reads the encoder once), and the categories its
accuracy is split by (`categories`, or several groups of them via `scoreboards`).

Adding an objective is one file: subclass `Objective`, then name it by class path in YAML:

    model:
      objective:
        class_path: my_package.MyObjective
        init_args: {...}

Objectives that can share one encoder input also implement `corrupt` (add their corruption and targets
to a batch another objective made) and `score` (loss from the shared hidden states); `Combined` stacks
them with weights (BERT = next sentence prediction + MLM). docs/objectives.md walks through an example.

Every pre-training objective that has a head able to score a whole sentence also implements
`sentence_scores` (and names its rule in `scoring`): minimal pairs (minibert.pairs) are graded zero-shot by it,
with no fine-tuning. One that cannot say so (`scoring = None`); its encoder is still read by the pairs' probe.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import replace
from typing import Literal, NamedTuple

import numpy as np
import torch
from torch import nn

from minibert.languages import Language
from minibert.model import Encoder, EncoderConfig

Split = Literal["train", "val"]
Batch = dict[str, torch.Tensor]


class Scored(NamedTuple):
    """One batch's loss and what it grades: N graded predictions with their targets and categories.

    An objective that grades several things (a `Combined`, or ELECTRA's discriminator and generator) sets
    `parts`, keyed by the metric prefixes of its `scoreboards()`; metrics then read the parts instead.
    """

    loss: torch.Tensor  # () scalar
    preds: torch.Tensor  # (N,) predicted class ids
    target: torch.Tensor  # (N,) true class ids
    categories: torch.Tensor  # (N, len(objective.categories)) bool
    parts: Mapping[str, Scored] | None = None
    credit: torch.Tensor | None = None  # (N,) float: the exact oracle's score on each question, if known
    # (N, C) float, if known: per question and category, the credit of that category's own best predictor
    # (minibert.oracle.mlm_grades); NaN for a category it is not known for
    bounds: torch.Tensor | None = None
    # name -> (B,) float: per-example figures that are not accuracies (a structural probe's UUAS), each averaged
    # over the validation set and logged as `val/<name>`; NaN leaves an example out of that name's average
    values: Mapping[str, torch.Tensor] | None = None
    # (N, R) float, if known: per question, the credit of each reference predictor its scoreboard names
    # (`Scoreboard.references`: n-gram counts on real text, which has no exact oracle)
    references: torch.Tensor | None = None
    # (N,) int64, where the language has documents (real text): the validation document each question comes
    # from, the unit its sampling error clusters by (minibert.training.metrics.DocumentTally)
    documents: torch.Tensor | None = None

    def grades(self) -> tuple:
        """What `CategoryAccuracy.update` takes, in its order."""
        return self.preds, self.target, self.categories, self.credit, self.bounds, self.references

    def graded(self) -> Mapping[str, Scored]:
        """What metrics read: the parts by prefix, or this one under the empty prefix."""
        return self.parts if self.parts is not None else {"": self}


class Scoreboard(NamedTuple):
    """One accuracy metric, with what it means (written into every run's summary.json, where reports read it).

    - `categories`: what the accuracy is split by; `input_categories`: those of them the model's input decides.
      Only these (and the overall accuracy) get a Bayes ceiling and a gap; the oracle's accuracy on every other
      category is the Bayes predictor's own, a reference (`val/bayes/...`) that another predictor may beat.
    - `measure`: what is predicted ('cloze', 'next_token', 'nsp', 'detection', 'grammaticality', or a
      plug-in's own word); accuracies of different measures never share an axis.
    - `chance`: the accuracy of a guess that sees nothing but the position, where the task defines one
      (computed from the language: `Language.chance`); None where it does not.
    - `labels`: (category, family, label) for categories the reports do not know (a plug-in's own), e.g.
      ("rare", "frequency", "rare token"); known ones need none.
    - `references`: names of the reference predictors graded on the same questions (`Scored.references`),
      logged as `val/<prefix>reference/<name>/acc...`: the baseline where no exact ceiling exists.
    """

    categories: tuple[str, ...]
    input_categories: tuple[str, ...] = ()
    measure: str = "accuracy"
    chance: float | None = None
    labels: tuple[tuple[str, str, str], ...] = ()
    references: tuple[str, ...] = ()

    def describe(self) -> dict:
        """The board as summary.json holds it."""
        return {"measure": self.measure, "chance": self.chance, "categories": list(self.categories),
                "input_categories": list(self.input_categories), "labels": [list(x) for x in self.labels],
                **({"references": list(self.references)} if self.references else {})}  # fmt: skip


class Objective(nn.Module, ABC):
    """Base class of every objective. Heads are created in `build`, once the encoder's shape is known."""

    #: names of the categories accuracy is split by, in the column order of `Scored.categories`
    categories: tuple[str, ...] = ()
    #: those of them that are a function of the model's input (see `Scoreboard`)
    input_categories: tuple[str, ...] = ()
    #: the language the objective's sentences come from (set in `__init__`)
    language: Language
    #: what its accuracy measures (see `Scoreboard`)
    measure: str = "accuracy"

    #: the accuracy of a guess that sees nothing but the position (see `Scoreboard`); None: undefined. A
    #: number here, or a property when it depends on the language (MaskedLM)
    chance: float | None = None

    #: how `sentence_scores` scores a sentence, in words for pages ("pseudo-log-likelihood", ...); None: this
    #: objective has no head that scores a sentence, so its minimal pairs are read by the probe alone
    scoring: str | None = None

    def sentence_scores(self, encoder: Encoder, ids: torch.Tensor, batch_size: int = 8192) -> torch.Tensor:
        """(B, T) sentences of the language -> (B,) float64: how likely each one is under this objective's
        head(s), higher = more likely (a log-likelihood or a pseudo one). `batch_size` bounds the rows of one
        forward pass. Implemented by objectives that set `scoring`."""
        raise NotImplementedError(f"{type(self).__name__} cannot score a sentence zero-shot: it has no head that "
                                  "scores one (set `scoring` and implement `sentence_scores`)")  # fmt: skip

    def configure_encoder(self, config: EncoderConfig) -> EncoderConfig:
        """The encoder this objective needs, given the configured one: sized for the language (an unset
        `vocab_size`/`max_len` takes the language's), and whatever else it needs (e.g. causal attention)."""
        language = getattr(self, "language", None)
        if language is None:
            raise ValueError(
                f"{type(self).__name__} has no language: set self.language in __init__ (BracketPairs() by default)"
            )
        return sized_for(config, language)

    def scoreboards(self) -> dict[str, Scoreboard]:
        """Metric prefix -> its `Scoreboard`: one accuracy metric each, logged as `val/<prefix>acc_<category>`.

        One board with the empty prefix by default (`val/acc`, `val/acc_opener`, ...)."""
        board = Scoreboard(tuple(self.categories), tuple(self.input_categories), self.measure, self.chance,
                           references=self.reference_names())  # fmt: skip
        return {"": board}

    def reference_names(self) -> tuple[str, ...]:
        """The reference predictors its validation batches grade (`Scored.references`; none by default)."""
        return ()

    def value_names(self) -> tuple[str, ...]:
        """The names of the per-example figures its validation batches give in `Scored.values` (none by
        default); known once `build` has run."""
        return ()

    def boards(self) -> dict[str, Scoreboard]:
        """`scoreboards()` with every board a Scoreboard: a plug-in's may be a plain tuple of categories,
        none of them decided by the input."""
        return {k: b if isinstance(b, Scoreboard) else Scoreboard(tuple(b)) for k, b in self.scoreboards().items()}

    def setup_encoder(self, config: EncoderConfig | None = None) -> Encoder:
        """A fresh encoder sized for this objective (`configure_encoder`) and the objective's heads built for
        it, in that order (the order EncoderModule creates them in, so the same seed gives the same weights)."""
        config = self.configure_encoder(config or EncoderConfig())
        encoder = Encoder(config)
        self.build(config)
        return encoder

    @abstractmethod
    def build(self, config: EncoderConfig) -> None:
        """Create the head(s) for an encoder of this shape."""

    @abstractmethod
    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        """A fresh batch of `size` examples drawn with `rng` alone (so it is reproducible)."""

    def corrupt(self, batch: Batch, rng: np.random.Generator, split: Split) -> Batch:
        """Add this objective's corruption of `batch["inputs"]` and its targets to a batch another
        objective made (how `Combined` shares one input); return a new dict, leaving other keys as they are."""
        raise NotImplementedError(f"{type(self).__name__} cannot corrupt another objective's input")

    def score(self, hidden: torch.Tensor, batch: Batch) -> Scored:
        """Loss and graded predictions from the encoder's output (B, T, C) on this batch's inputs."""
        raise NotImplementedError(f"{type(self).__name__} implements forward, not score")

    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        """Run the encoder and head(s) on a batch; return loss and graded predictions."""
        return self.score(encode(encoder, batch), batch)


def sized_for(config: EncoderConfig, language: Language, vocab_size: int = 0, max_len: int = 0) -> EncoderConfig:
    """`config` with `vocab_size` and `max_len` of at least the language's (or the given minimums, for an
    objective that adds tokens or positions); unset ones take exactly that, set ones that are smaller fail."""
    need = {"vocab_size": max(vocab_size, language.vocab_size), "max_len": max(max_len, language.seq_len)}
    for name, least in need.items():
        given = getattr(config, name)
        if given is not None and given < least:
            raise ValueError(
                f"EncoderConfig.{name}={given} is not allowed with {language!r}: it needs at least {least} "
                "(leave it unset to take the language's)"
            )
    return replace(config, **{name: getattr(config, name) or least for name, least in need.items()})


def encode(encoder: Encoder, batch: Batch) -> torch.Tensor:
    """The encoder on `batch["inputs"]` (B, T), with `batch["segments"]` when the batch has them -> (B, T, C)."""
    return encoder(batch["inputs"], batch.get("segments"))


def read_sentences(encoder: Encoder, ids: torch.Tensor) -> torch.Tensor:
    """The encoder on plain sentences (B, T) -> (B, T, C): segment 0 throughout where it has segments (an
    encoder trained on [CLS] A [SEP] B [SEP] reads one sentence as its first segment)."""
    return encoder(ids, torch.zeros_like(ids) if encoder.seg is not None else None)


def masked_mean_cross_entropy(logits: torch.Tensor, target: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """Sum of cross-entropies over `count` graded positions divided by that count; zero when none is graded
    (a plain mean over an empty set would be NaN)."""
    return nn.functional.cross_entropy(logits, target, reduction="sum") / count.clamp(min=1)
