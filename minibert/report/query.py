"""What a page asks of a grid's table: one figure over seeds, a paired difference, a table of them.

`Data` wraps one grid's table (minibert.report.table). Every selection names columns and values
(`d.stat("val/gap/acc", objective="SpanMaskedLM", stage="pretrain")`) and must pick exactly one experiment,
so a page never averages two arms by accident; `experiment=` picks one by name.

Example:
    >>> d = Data.load("results/dyck")
    >>> span = d.stat("val/gap/acc", experiment="dyck/pretrain/span")
    >>> span.seeds, span.proportion
    (30, True)
    >>> c = d.diff("val/gap/acc", {"experiment": "dyck/pretrain/mlm"}, {"experiment": "dyck/pretrain/span"})
    >>> c.say("MLM", "span masking")  # lower gap is better: MLM's gap is smaller
    'MLM better by 22.1 (21.2 to 23.0)'
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from minibert.ablation import accuracies
from minibert.report import stats, table
from minibert.report.stats import Interval

LOWER_IS_BETTER = re.compile(r"(^|/)(gap|loss)(/|$)|loss$|wall_time")


class QueryError(ValueError):
    """A page asks for something the table does not hold; the message names the page's selection."""


@dataclass(frozen=True)
class Stat:
    """One figure of one experiment over its seeds."""

    experiment: str
    metric: str
    category: str
    values: dict[int, float]  # seed -> value
    n: float | None  # questions behind it (mean over seeds), for a proportion
    shared: bool  # every seed graded the same validation set
    interval: Interval

    @property
    def proportion(self) -> bool:
        return self.n is not None or accuracies.parse(self.metric) is not None

    @property
    def seeds(self) -> int:
        return self.interval.seeds

    @property
    def mean(self) -> float:
        return self.interval.mean

    @property
    def sd(self) -> float:
        """The spread over seeds (`stats.sd`), in the figure's own units."""
        return stats.sd(self.values)

    def __str__(self) -> str:
        return stats.fmt(self.interval, scale=100 if self.proportion else 1)


@dataclass(frozen=True)
class Diff:
    """A - B paired by seed; `lower_is_better` orients the verdict (a gap or a loss)."""

    a: Stat
    b: Stat
    interval: Interval  # A - B, as measured
    lower_is_better: bool

    @property
    def favour(self) -> Interval:
        """The interval oriented so that > 0 favours A."""
        iv = self.interval
        return Interval(-iv.mean, -iv.hi, -iv.lo, iv.seeds, iv.df) if self.lower_is_better else iv

    def verdict(self, a: str = "A", b: str = "B", margin: float | None = None) -> str:
        return stats.verdict(self.favour, margin, a, b)

    def say(self, a: str = "A", b: str = "B") -> str:
        """'A better by 22.1 (21.1 to 23.1)' in points: the winner named by the interval's sign, or
        'undecided: A − B = +0.4 (−1.2 to 2.0)'."""
        scale = 100 if self.a.proportion else 1
        iv = self.favour
        if iv.lo > 0 or iv.hi < 0:
            better = iv if iv.lo > 0 else Interval(-iv.mean, -iv.hi, -iv.lo, iv.seeds, iv.df)
            return f"{a if iv.lo > 0 else b} better by {stats.fmt(better, scale)}"
        return f"undecided: {a} − {b} = {stats.fmt(self.interval, scale, signed=True)}"

    def __str__(self) -> str:
        return stats.fmt(self.interval, scale=100 if self.a.proportion else 1, signed=True)

    # read like a Stat's, so a figure draws a difference (A - B, as measured) as it draws a figure
    @property
    def seeds(self) -> int:
        return self.interval.seeds

    @property
    def mean(self) -> float:
        return self.interval.mean

    @property
    def proportion(self) -> bool:
        return self.a.proportion


class Data:
    """One grid's table, with how it was made (`<out>/run.json`: command, date, machine, wall time)."""

    def __init__(self, frame: pd.DataFrame, made: dict | None = None, out: str = ""):
        self.frame, self.made, self.out = frame, made or {}, out

    @classmethod
    def load(cls, out: str | Path) -> Data:
        out = Path(out)
        made = json.loads((out / "run.json").read_text()) if (out / "run.json").is_file() else {}
        return cls(table.read(out), made, str(out))

    def rows(self, **where: Any) -> pd.DataFrame:
        """Rows whose columns equal the given values (a list: any of them); unknown columns are an error."""
        frame = self.frame
        for column, value in where.items():
            if column not in frame.columns:
                raise QueryError(f"{self.out}: no column {column!r}; columns: {', '.join(frame.columns)}")
            frame = frame[frame[column].isin(value if isinstance(value, (list, tuple)) else [value])]
        return frame

    def experiments(self, **where: Any) -> list[str]:
        return list(dict.fromkeys(self.rows(**where)["experiment"]))

    def stat(self, metric: str, category: str = "", **where: Any) -> Stat:
        rows = self.rows(metric=metric, category=category, **where)
        found = list(dict.fromkeys(rows["experiment"]))
        if len(found) != 1:
            what = ", ".join(f"{k}={v!r}" for k, v in where.items())
            raise QueryError(f"{self.out}: {metric} {category!r} where {what} matches {len(found)} experiments "
                             f"({', '.join(found) or 'none'}); a figure is one experiment's")  # fmt: skip
        values = dict(zip(rows["seed"].astype(int), rows["value"].astype(float)))
        counts = rows["n"].dropna()
        n = float(counts.mean()) if len(counts) else None
        shared = rows["val_seed"].nunique(dropna=False) == 1
        proportion = n is not None or accuracies.parse(metric) is not None
        iv = stats.summary(values, n if shared else None, proportion)
        return Stat(found[0], metric, category, values, n, shared, iv)

    def diff(self, metric: str, a: dict, b: dict, category: str = "", lower_is_better: bool | None = None) -> Diff:
        """A - B on `metric`, paired by seed; `a`, `b`: selections as for `stat`."""
        sa, sb = self.stat(metric, category, **a), self.stat(metric, category, **b)
        na = sa.n if sa.shared and sb.shared else None
        nb = sb.n if sa.shared and sb.shared else None
        iv = stats.paired(sa.values, sb.values, na, nb)
        lower = bool(LOWER_IS_BETTER.search(metric)) if lower_is_better is None else lower_is_better
        return Diff(sa, sb, iv, lower)

    def between(self, a: str, b: str, category: str = "", **where: Any) -> Diff:
        """Metric `a` - metric `b` of one experiment, paired by seed: e.g. the Bayes predictor's accuracy minus
        the run's on a category that has no bound (a reference gap, which a model may beat)."""
        sa, sb = self.stat(a, category, **where), self.stat(b, category, **where)
        shared = sa.shared and sb.shared
        iv = stats.paired(sa.values, sb.values, sa.n if shared else None, sb.n if shared else None)
        return Diff(sa, sb, iv, False)

    def total(self, metric: str = "wall_time_s", **where: Any) -> float:
        """The sum of `metric` over the selected runs (e.g. their own wall time)."""
        return float(self.rows(metric=metric, category="", **where)["value"].sum())

    def seeds(self, **where: Any) -> list[int]:
        return sorted({int(s) for s in self.rows(**where)["seed"]})

    def runs(self, **where: Any) -> int:
        return len(self.rows(**where)[["experiment", "seed"]].drop_duplicates())


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; each cell is str()'d (a Stat or Diff prints its figure)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def is_nan(x: float) -> bool:
    return isinstance(x, float) and math.isnan(x)
