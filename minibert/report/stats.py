"""The statistics every page uses: one interval per kind of quantity, one verdict, one formatter.

- An accuracy over seeds: `minibert.stats.intervals.accuracy_interval`, seed spread plus the sampling of
  the validation questions when every seed graded the same set (when each seed drew its own, the spread over
  seeds holds that error already).
- Any other figure over seeds (a loss, a probe's UUAS, a count): the t-interval over seeds.
- A paired difference A - B: per-seed differences, plus both accuracies' sampling terms on a shared set.
- A verdict: the interval's side of zero, or equivalence when it lies inside a stated margin.

Figures are shown in points (100 x) for accuracies, as they are measured otherwise.

Example:
    >>> iv = Interval(0.2212, 0.2112, 0.2312, 30)
    >>> fmt(iv), verdict(iv), verdict(Interval(0.001, -0.004, 0.006, 10), margin=0.01)
    ('22.1 (21.1 to 23.1)', 'A better', 'equivalent within ±1.0')
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping

from minibert.stats.intervals import (
    NAN,
    Interval,
    accuracy_interval,
    difference_interval,
    p_value,
    reference_difference,
    t95,
    variance,
    with_sampling,
)

__all__ = ["NAN", "Interval", "Family", "summary", "paired", "reference", "sign", "verdict", "fmt", "number", "sd"]


def summary(values: Mapping[int, float], n: float | None, proportion: bool) -> Interval:
    """Mean over seeds of one figure with its 95% interval; `n`: questions of a validation set every seed
    shared (None when each seed drew its own, or for a figure that is not a proportion)."""
    clean = [v for v in values.values() if not math.isnan(v)]
    if proportion:
        return accuracy_interval(clean, n)
    if not clean:
        return NAN
    mean = statistics.fmean(clean)
    if len(clean) < 2:
        return Interval(mean, mean, mean, 1)
    half = t95(len(clean) - 1) * math.sqrt(variance(clean)) / math.sqrt(len(clean))
    return Interval(mean, mean - half, mean + half, len(clean), len(clean) - 1)


def paired(a: Mapping[int, float], b: Mapping[int, float], n_a: float | None, n_b: float | None) -> Interval:
    """A - B over the seeds both have: the seeds' spread of the differences, plus the validation sampling
    of each proportion where `n_a`, `n_b` are given (a shared set; see `summary`)."""
    return difference_interval(dict(a), dict(b), n_a, n_b)


def reference(values: Mapping[int, float], n: float | None, published: float) -> Interval:
    """Our mean over seeds minus one published single run's figure (a write-up's): that run carries one seed's
    spread and, on `n` questions of its own, its own sampling error as well as ours. Within noise when the
    interval covers zero.

    >>> iv = reference({0: 0.90, 1: 0.91, 2: 0.89}, 2000, 0.895)
    >>> iv.lo < 0 < iv.hi, reference({0: 0.90, 1: 0.91, 2: 0.89}, 2000, 0.80).lo > 0
    (True, True)
    """
    return reference_difference(list(values.values()), n, published)


def sd(values: Mapping[int, float]) -> float:
    """The spread over seeds (sample standard deviation, NaN values left out; NaN below two seeds): how far
    one seed's figure strays, shown beside the interval of the mean when a recipe is judged on its spread.

    >>> round(sd({0: 0.1, 1: 0.2, 2: 0.3}), 6), sd({0: 0.5})
    (0.1, nan)
    """
    clean = [v for v in values.values() if not math.isnan(v)]
    return math.sqrt(variance(clean)) if len(clean) > 1 else math.nan


def gap(values: Mapping[int, float], ceiling: float, accuracy: float, n: float | None) -> Interval:
    """A logged gap (ceiling minus accuracy on the same questions, per seed) over seeds: the seeds' spread of
    the gaps plus, on a shared set of `n` questions, both proportions' sampling terms (as `paired`)."""
    clean = [v for v in values.values() if not math.isnan(v)]
    if not clean:
        return NAN
    sampling = (ceiling * (1 - ceiling) + accuracy * (1 - accuracy)) / n if n else 0.0
    return with_sampling(clean, sampling)


class Family:
    """The paired comparisons drawn from one grid's table, held together by Holm's step-down (Holm, Scand. J.
    Statist. 1979). The report renders twice: first every dashboard and page asks its questions (`sign`
    records each interval's p-value), then `freeze` adjusts them together and every verdict is read again. So
    the "A better" verdicts drawn from one table hold together at 95% however many pages show them, and two
    pages that quote one comparison say the same of it. The p-value of an interval is its t-test's: |mean| over
    the standard error its half-width implies, on its degrees of freedom. Intervals are shown as they are (each
    95%); only the verdicts are adjusted.

    >>> f = Family("g")  # two intervals that each exclude 0 (p = 0.03 and 0.04), but not both at 95% together
    >>> ivs = [Interval(0.03, 0.003, 0.057, 30, 29.0), Interval(0.02, 0.001, 0.039, 30, 29.0)]
    >>> [f.sign(iv) for iv in ivs], f.freeze(), [f.sign(iv) for iv in ivs]
    ([1, 1], 2, [0, 0])
    """

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.p: dict[tuple, float] = {}
        self.holds: set[tuple] | None = None  # None while collecting

    @property
    def frozen(self) -> bool:
        return self.holds is not None

    @staticmethod
    def key(iv: Interval) -> tuple:
        return tuple(round(float(x), 12) for x in (iv.mean, iv.lo, iv.hi, iv.df))

    def sign(self, iv: Interval) -> int:
        """+1 / -1 when the interval's sign is decided (while collecting: on its own; then: after Holm), else 0.
        LateQuestion for one not asked while collecting: a family chosen after seeing the answers holds nothing."""
        side = 1 if iv.lo > 0 else -1 if iv.hi < 0 else 0
        key = self.key(iv)
        if self.holds is None:
            self.p[key] = p_value(iv)
            return side
        if key in self.p:
            return side if key in self.holds else 0
        raise LateQuestion(f"{self.name or 'a table'}: a paired comparison was asked after its family was frozen "
                           f"({iv.mean:+.4g}, {iv.lo:+.4g} to {iv.hi:+.4g}): a page must ask every question it judges "
                           "while the families collect, whatever the answers")  # fmt: skip

    def freeze(self, alpha: float = 0.05) -> int:
        """Decide: Holm's step-down over the collected p-values; returns the family's size."""
        ordered = sorted(self.p.items(), key=lambda kv: kv[1])
        self.holds = set()
        for i, (key, p) in enumerate(ordered):
            if p > alpha / (len(ordered) - i):
                break
            self.holds.add(key)
        return len(ordered)

    def summary(self) -> str:
        """'3 of 54 decided (27 one by one)': what Holm decided, and what each interval alone would have."""
        alone = sum(p < 0.05 for p in self.p.values())
        return f"{len(self.holds or ())} of {len(self.p)} decided ({alone} one by one)"


class LateQuestion(ValueError):
    """A verdict asked of a frozen family that never collected its question."""


def family_note(families: list[Family]) -> str:
    """The line a page ends with: for each grid it quotes, the family its verdicts are held in."""
    each = "; ".join(f"{f.name}: {f.summary()}" for f in families)
    return (f"<sub>Verdicts hold together at 95% with every other verdict drawn from the same grid's table (Holm's "
            f"step-down over each grid's paired comparisons, on every page): {each}. Each interval is shown at 95% "
            "on its own (docs/statistics.md).</sub>")  # fmt: skip


def sign(iv: Interval, family: Family | None = None) -> int:
    """+1 when the interval of A - B (oriented so that > 0 favours A) decides for A, -1 for B, 0 undecided; in a
    grid's `family`, after Holm's adjustment over it."""
    if family is None or math.isnan(iv.mean):
        return 1 if iv.lo > 0 else -1 if iv.hi < 0 else 0
    return family.sign(iv)


def verdict(iv: Interval, margin: float | None = None, a: str = "A", b: str = "B", family: Family | None = None) -> str:
    """'A better' / 'B better' when the interval of A - B (oriented so that > 0 favours A) excludes zero (in a
    grid's `family`, after Holm's adjustment), 'equivalent within ±m' when it lies inside (-margin, margin),
    else 'undecided'."""
    if math.isnan(iv.mean):
        return "no data"
    side = sign(iv, family)
    if side > 0:
        return f"{a} better"
    if side < 0:
        return f"{b} better"
    if margin is not None and -margin < iv.lo and iv.hi < margin:
        return f"equivalent within ±{number(margin)}"
    return "undecided"


def number(x: float, scale: float = 100, digits: int = 1) -> str:
    """One figure: `x * scale` to `digits` decimals, thousands separated; 'n/a' for NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x * scale:,.{digits}f}"


def rate(x: float) -> str:
    """A learning rate as configs are read aloud: 0.01 -> '1e-2', 0.003 -> '3e-3'."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def fmt(iv: Interval, scale: float = 100, digits: int = 1, signed: bool = False) -> str:
    """'22.1 (21.1 to 23.1)': mean and 95% interval; one seed: the mean alone; no seeds: 'n/a'."""
    if math.isnan(iv.mean):
        return "n/a"
    sign = "+" if signed and iv.mean > 0 else ""
    mean = f"{sign}{number(iv.mean, scale, digits)}"
    if iv.seeds < 2 and iv.lo == iv.hi:
        return mean
    return f"{mean} ({number(iv.lo, scale, digits)} to {number(iv.hi, scale, digits)})"
