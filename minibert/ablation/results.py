"""A grid's finished runs, read once and organised by what their numbers mean.

`Results.values[(experiment, metric)] = {seed: value}` holds every numeric summary entry. On top of it,
`boards()` groups each experiment's accuracies by head (`Board`: one prefix, one `Measure`, its
categories with question counts, ceilings and gaps), which is what tables and figures draw.

Example:
    >>> results = Results.collect(runs)  # doctest: +SKIP
    >>> [b.title for b in results.boards(experiments)]  # doctest: +SKIP
    ['pretrain/bidirectional', 'pretrain/causal', ...]
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from minibert.ablation import accuracies
from minibert.ablation.accuracies import AccKey, Measure
from minibert.ablation.grid import Experiment, MetricRef
from minibert.ablation.intervals import Interval, accuracy_interval, difference_interval
from minibert.ablation.runner import DamagedSummary, Run


def _metrics(summary: dict) -> dict[str, float | None]:
    """The numeric entries of a run's summary (None is a NaN that JSON could not hold)."""
    return {k: v for k, v in summary.items() if isinstance(v, (int, float)) or v is None}


def _seeds(summary: dict) -> dict[str, int]:
    seeds = summary.get("seeds") or {}
    return {f"seeds/{k}": v for k in ("init", "data", "val") if isinstance(v := seeds.get(k), int)}


@dataclass
class Category:
    """One accuracy of one head: values, ceilings (bounds) and gaps by seed, or the Bayes predictor's own
    accuracy where no bound is known (a reference), question count (mean over seeds)."""

    key: AccKey
    values: dict[int, float]
    ceiling: dict[int, float] = field(default_factory=dict)
    gap: dict[int, float] = field(default_factory=dict)
    bayes: dict[int, float] = field(default_factory=dict)
    n: float | None = None
    sampling_n: float | None = None  # n for the interval's sampling term (Results.sampling_n)

    @property
    def metric(self) -> str:
        return self.key.accuracy

    @property
    def name(self) -> str:
        return self.key.category

    def interval(self) -> Interval:
        return accuracy_interval(list(self.values.values()), self.sampling_n)

    def gap_interval(self) -> Interval:
        """Ceiling minus accuracy, paired by seed, with the report's interval (NaN without a ceiling)."""
        return difference_interval(self.ceiling, self.values, self.sampling_n, self.sampling_n)

    def reference_interval(self) -> Interval:
        """The Bayes predictor's accuracy minus this one, paired by seed (not a gap: it may well be negative)."""
        return difference_interval(self.bayes, self.values, self.sampling_n, self.sampling_n)

    def ceiling_mean(self) -> float | None:
        return statistics.fmean(self.ceiling.values()) if self.ceiling else None

    def bayes_mean(self) -> float | None:
        return statistics.fmean(self.bayes.values()) if self.bayes else None


@dataclass
class Board:
    """One experiment's accuracies from one head (prefix), all of one measure."""

    experiment: Experiment
    prefix: str
    measure: Measure
    categories: dict[str, Category]  # by category name, in display order ('' first)

    @property
    def title(self) -> str:
        head = accuracies.head_label(self.prefix)
        return f"{self.experiment.name} · {head}" if head else self.experiment.name

    @property
    def short(self) -> str:
        head = accuracies.head_label(self.prefix)
        name = self.experiment.name.rsplit("/", 1)[-1]
        return f"{name} · {head}" if head else name


@dataclass
class Results:
    """Metric values by (experiment, metric) -> {seed: value}, and the finished runs with their summaries."""

    values: dict[tuple[str, str], dict[int, float]]
    summaries: list[tuple[Run, dict]]
    # experiment -> prefix -> what its runs' summaries say the accuracy means (Scoreboard.describe)
    meanings: dict[str, dict[str, dict]] = field(default_factory=dict)
    # experiments whose seeds graded validation sets of their own (`data.val_seed: null`): the sampling of
    # the questions is then part of the spread over seeds, not one offset that every seed shares
    own_val_sets: set[str] = field(default_factory=set)

    @classmethod
    def collect(cls, runs: list[Run]) -> Results:
        values: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
        summaries = []
        for run in runs:  # each summary.json read once; a damaged one is the runner's to redo, not ours
            with contextlib.suppress(DamagedSummary):
                if (summary := run.read()) is not None:
                    summaries.append((run, summary))
        meanings: dict[str, dict[str, dict]] = {}
        for run, summary in summaries:
            for metric, value in _metrics(summary).items():
                values[(run.experiment.name, metric)][run.seed] = math.nan if value is None else float(value)
            if "scoreboards" in summary:  # {} for a run that grades no accuracy (a structural probe)
                meanings.setdefault(run.experiment.name, summary["scoreboards"])
        val_seeds: dict[str, set] = defaultdict(set)
        for run, summary in summaries:
            val_seeds[run.experiment.name].add((summary.get("seeds") or {}).get("val"))
        own = {e for e, seen in val_seeds.items() if len(seen) > 1}
        if unknown := sorted({r.experiment.name for r, _ in summaries} - set(meanings)):
            warnings.warn(
                f"the runs of {', '.join(unknown)} were made by older code and do not say what their accuracies "
                "measure: their figures get no chance line and one axis per head; train them again (`--force`) "
                "to have them described",
                stacklevel=2,
            )
        return cls(dict(values), summaries, meanings, own)

    def get(self, ref: MetricRef) -> dict[int, float]:
        return self.values.get((ref.experiment, ref.metric), {})

    def metrics_of(self, experiment: str) -> list[str]:
        return [m for (e, m) in self.values if e == experiment]

    def rows(self, out: Path) -> list[dict]:
        """Tidy rows, the run's seeds among them (`seeds/init`, `seeds/data`, `seeds/val`: a reader of the csv
        alone can tell whether each seed graded its own validation set); `run_dir` is relative to `out`, so
        the table stays valid wherever `out` is moved."""
        return [
            {"experiment": r.experiment.name, "seed": r.seed, "metric": m, "value": v,
             "run_dir": os.path.relpath(r.run_dir, out)}
            for r, summary in self.summaries
            for m, v in sorted({**_metrics(summary), **_seeds(summary)}.items())
        ]  # fmt: skip

    def sampling_n(self, experiment: str, key: AccKey) -> float | None:
        """The question count for an interval's sampling term: `n_of`, or None when every seed graded its own
        validation set, since the spread over seeds then holds that error already."""
        return None if experiment in self.own_val_sets else self.n_of(experiment, key)

    def n_of(self, experiment: str, key: AccKey) -> float | None:
        counts = [v for v in self.values.get((experiment, key.key("n")), {}).values() if not math.isnan(v)]
        return statistics.fmean(counts) if counts else None

    def reported(self, e: Experiment) -> list[str]:
        """The metrics of `e` the report shows: everything its runs logged, unless the grid narrows it
        with `metrics:` (then those, with their counts and the oracle's figures)."""
        logged = self.metrics_of(e.name)
        if not e.metrics:
            return logged
        keep = set(e.metrics)
        return [m for m in logged if m in keep or ((k := accuracies.parse(m)) is not None and k.accuracy in keep)]

    def boards(self, experiments: list[Experiment]) -> list[Board]:
        """Every head of every experiment, in experiment order, each with its categories in display order."""
        boards = []
        for e in experiments:
            by_prefix: dict[str, dict[str, Category]] = defaultdict(dict)
            keys = [k for m in self.reported(e) if (k := accuracies.parse(m)) is not None]
            for k in keys:
                if k.role == "acc":
                    by_prefix[k.prefix][k.category] = Category(k, self.values[(e.name, k.accuracy)])
            for k in keys:
                cat = by_prefix.get(k.prefix, {}).get(k.category)
                if cat is not None and k.role in ("ceiling", "gap", "bayes"):
                    setattr(cat, k.role, self.values[(e.name, k.key(k.role))])
            for prefix in sorted(by_prefix):
                cats = by_prefix[prefix]
                for cat in cats.values():
                    cat.n, cat.sampling_n = self.n_of(e.name, cat.key), self.sampling_n(e.name, cat.key)
                measure = self.measure(e.name, prefix)
                ordered = {c: cats[c] for c in sorted(cats, key=measure.sort_key)}
                boards.append(Board(e, prefix, measure, ordered))
        return boards

    def measure(self, experiment: str, prefix: str) -> accuracies.Measure:
        """What the accuracies of `experiment`'s head `prefix` measure, as its runs' summaries say."""
        meaning = self.meanings.get(experiment, {}).get(prefix, {})
        return accuracies.measure(meaning.get("measure", "accuracy"), meaning.get("chance"), meaning.get("labels", ()))

    def others(self, e: Experiment) -> list[str]:
        """The reported metrics of `e` that are not about an accuracy (losses, parameter counts, time)."""
        return [m for m in self.reported(e) if accuracies.parse(m) is None]
