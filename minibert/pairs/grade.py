"""Grading an encoder on a language's minimal pairs: zero-shot by its objective's own sentence score, rule-free
by the convex probe, each beside the n-gram floors on the same pairs.

The figures, keyed as a run logs them under `val/pairs/` (minibert.training.pair_eval):

- `acc`: the zero-shot share of pairs whose good sentence scores higher, over the judged cells (those whose
  every floor is at most `floor_limit`, fixed before any run: a cell that local counts can solve says nothing
  about a model); `acc_<category>` for every edit, stratum and cell, judged or not; absent for an objective that
  cannot score a sentence (`Objective.scoring` is None);
- `probe/acc`, `probe/acc_<category>`: the same read by the probe (minibert.pairs.probe);
- `floor/<name>/acc`, `floor/<name>/acc_<category>`: the n-gram floors (minibert.pairs.floors);
- `n`, `n_<category>` (and likewise under `probe/` and each floor): the pairs behind each figure;
  `judged_cells`: how many cells are judged.

The ceiling is 100% on every category: the good sentence is in the language and the bad one is not, so the
language's own distribution gives the bad one probability zero.

Pairs, probe-training pairs and n-gram counts are drawn from `seed` alone, so every run of one seed is graded
on the same pairs (the arms of a comparison are paired on them). Which cells are judged is fixed once per
language and settings, from the floors of a design draw that no run's seed touches (`judged_design`), so every
run of a language averages the same cells whatever its seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from minibert.languages import Language
from minibert.model import Encoder
from minibert.objectives.base import Objective
from minibert.pairs.draw import MinimalPairs, draw_pairs
from minibert.pairs.floors import NGramFloors, floor_accuracies, judged_cells, pair_credit
from minibert.pairs.keys import check_order, floor_names
from minibert.pairs.probe import fit_direction, pooled_features, probe_credit
from minibert.validation import POSITIVE_INT, UNIT_INTERVAL, check

STREAMS = {"pairs": 1, "probe": 2, "ngrams": 3, "flips": 4}  # each draw's own stream under one seed
DESIGN_SEED, DESIGN_PER_CELL = 2026, 250  # the draw that fixes the judged cells, before any run
_DESIGNS: dict[tuple, tuple[tuple[str, ...], tuple[str, ...]]] = {}


@dataclass(frozen=True)
class PairSettings:
    """per_cell: graded pairs per (edit, stratum) cell; probe_per_cell: the probe's training pairs per cell;
    floor_limit: a cell is judged where every floor scores at most this; floor_order: the floors run through the
    n-gram of this order (a language whose pairs hinge on longer stretches than a trigram sees declares more, so
    that the judged cells are those no local count solves); batch_size: rows per forward pass."""

    per_cell: int = 100
    probe_per_cell: int = 500
    floor_limit: float = 0.7
    batch_size: int = 256
    floor_order: int = 3

    owner: str = field(default="PairSettings", compare=False, repr=False)  # what errors name: pair_eval on the CLI

    def __post_init__(self) -> None:
        for name in ("per_cell", "probe_per_cell", "batch_size"):
            check(self.owner, name, getattr(self, name), POSITIVE_INT)
        check(self.owner, "floor_limit", self.floor_limit, UNIT_INTERVAL)
        try:
            check_order(self.floor_order, 2)  # the language's own vocabulary is checked when its floors are counted
        except ValueError as err:
            raise ValueError(f"{self.owner}: {err}") from None


def _design(language: Language, settings: PairSettings) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the categories the design draw has pairs in, the judged cells): DESIGN_PER_CELL pairs a cell drawn
    with DESIGN_SEED, which no run's seed touches, made once per language, floor limit and floor order."""
    key = (repr(language), settings.floor_limit, settings.floor_order)
    if key not in _DESIGNS:
        pairs = draw_pairs(language, np.random.default_rng([DESIGN_SEED, STREAMS["pairs"]]), DESIGN_PER_CELL)
        rng = np.random.default_rng([DESIGN_SEED, STREAMS["ngrams"]])
        floors = NGramFloors(language, rng, order=settings.floor_order)
        present = tuple(n for n, k in zip(pairs.names, pairs.categories.sum(0)) if k)
        _DESIGNS[key] = present, judged_cells(pairs, floor_accuracies(floors, pairs), settings.floor_limit)
    return _DESIGNS[key]


def judged_design(language: Language, settings: PairSettings) -> tuple[str, ...]:
    """The cells of `language` whose every floor is at most `settings.floor_limit` on the design draw: the
    cells `acc` averages, the same for every run."""
    return _design(language, settings)[1]


def logged_names(language: Language, objective: Objective, settings: PairSettings) -> set[str]:
    """The keys (under `val/pairs/`) that grading `objective` on `language` gives, without grading anything:
    every category the design draw has pairs in (a run's own draw of 100 a cell reaches the same ones)."""
    present, judged = _design(language, settings)
    floors = floor_names(settings.floor_order)
    heads = [""] * (objective.scoring is not None) + ["probe/"] + [f"floor/{f}/" for f in floors]
    names = {"judged_cells"} | {f"{h}{stat}_{c}" for h in heads for c in present for stat in ("acc", "n")}
    return names | ({f"{h}{stat}" for h in heads for stat in ("acc", "n")} if judged else set())


class PairGrader:
    """The pairs, probe-training pairs and floors of `language` under `seed`, made once; `grade` reads a model."""

    def __init__(self, language: Language, seed: int, settings: PairSettings = PairSettings()) -> None:
        self.language, self.settings = language, settings
        self.pairs = draw_pairs(language, np.random.default_rng([seed, STREAMS["pairs"]]), settings.per_cell)
        self.train = draw_pairs(language, np.random.default_rng([seed, STREAMS["probe"]]), settings.probe_per_cell,
                                split="train")  # fmt: skip
        floors = NGramFloors(language, np.random.default_rng([seed, STREAMS["ngrams"]]), order=settings.floor_order)
        self.floors = {name: pair_credit(*floors.scores(name, self.pairs)) for name in floors.names}  # (N,) each
        self.judged = judged_design(language, settings)
        column = {n: i for i, n in enumerate(self.pairs.names)}
        judged = [column[c] for c in self.judged if c in column]  # a judged cell this draw never made adds nothing
        self.in_judged = self.pairs.categories[:, judged].any(1)  # (N,)
        self.seed = seed

    def _figures(self, credit: np.ndarray, prefix: str) -> dict[str, float]:
        """`<prefix>acc` over the judged pairs and `<prefix>acc_<category>` for every category, each with its
        count of pairs (`<prefix>n`, `<prefix>n_<category>`), as every accuracy of a run is logged."""
        n = self.pairs.categories.sum(0)
        per = self.pairs.by_category(credit)  # a category with no pair is NaN, and is not logged
        out = {f"{prefix}acc_{name}": float(v) for name, v in zip(self.pairs.names, per)}
        out |= {f"{prefix}n_{name}": float(k) if k else math.nan for name, k in zip(self.pairs.names, n)}
        if self.judged:
            out[f"{prefix}acc"] = float(credit[self.in_judged].mean())
            out[f"{prefix}n"] = float(self.in_judged.sum())
        return out

    def floor_figures(self) -> dict[str, float]:
        out = {"judged_cells": float(len(self.judged))}
        for name, floor in self.floors.items():
            out |= self._figures(floor, f"floor/{name}/")
        return out

    @torch.no_grad()
    def grade(self, objective: Objective, encoder: Encoder) -> dict[str, float]:
        """Every figure of the module docstring for `encoder` under `objective` (eval mode while it reads)."""
        was_training = encoder.training
        encoder.eval()
        objective.eval()
        try:
            out = self.floor_figures()
            device = next(encoder.parameters()).device
            if objective.scoring is not None:
                good, bad = (objective.sentence_scores(encoder, torch.from_numpy(ids).to(device),
                                                       self.settings.batch_size).cpu().numpy()
                             for ids in (self.pairs.good, self.pairs.bad))  # fmt: skip
                out |= self._figures(pair_credit(good, bad), "")
            out |= self._figures(self._probe(encoder), "probe/")
        finally:
            encoder.train(was_training)
            objective.train(was_training)
        return {k: v for k, v in out.items() if not math.isnan(v)}

    def _probe(self, encoder: Encoder) -> np.ndarray:
        def differences(pairs: MinimalPairs) -> np.ndarray:
            good, bad = (
                pooled_features(encoder, ids, self.language.is_content(ids)) for ids in (pairs.good, pairs.bad)
            )
            return good - bad

        direction = fit_direction(differences(self.train), np.random.default_rng([self.seed, STREAMS["flips"]]))
        return probe_credit(direction, differences(self.pairs))
