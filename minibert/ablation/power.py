"""Paired comparisons sized by power: how many seeds a difference A - B needs, and what it then says.

Seed s gives every arm the same training stream, the same validation questions and, where the shapes
match, the same initial weights, so the per-seed difference d_s = A_s - B_s cancels what the arms share.
The number of seeds comes from Stein's two-stage procedure (Stein, 1945): a pilot of n0 seeds gives the
spread s0 of the differences, and the comparison then takes

    n = max(n0, ceil((t * s0 / h)^2)),   t = the 0.975 quantile of Student's t on n0 - 1 df,

seeds in all (capped by a budget). Its interval, mean(d_1..d_n) +/- t * s0 / sqrt(n), has half-width at most
h (unless capped) and covers the true mean difference with probability 95% exactly for normal differences,
for the procedure as it stops: n depends on the pilot's spread only, which is independent of the mean.
"Stop when it looks significant" has no such guarantee. `tests/test_power.py` checks the coverage by
simulation: at least 93% on normal, skewed and heavy-tailed differences. No procedure on a few seeds
covers when the differences are bimodal (some seeds learn, some do not: a pilot without a failed seed
underestimates the spread), so each comparison also runs a Shapiro-Wilk test on its differences and
flags `not_normal` at p < 0.05: the cure is a recipe whose seeds all train.

Reports use `paired_interval` (the same t-interval on the differences of all seeds, the pilot's spread when
there was a pilot) and `detectable`, the smallest true difference that the same seeds would find beyond
noise four times in five.

Example:
    >>> seeds_needed([0.010, 0.030, 0.020, 0.025], half_width=0.01, cap=50)  # t(3) * 0.0085 / 0.01, squared
    8
    >>> c = compare({0: 0.010, 1: 0.030, 2: 0.020, 3: 0.025, 4: 0.02, 5: 0.015, 6: 0.03, 7: 0.02}, pilot=4,
    ...             half_width=0.01, capped=False)
    >>> c.verdict, round(c.interval.lo, 3), round(c.interval.hi, 3)
    ('A better', 0.012, 0.031)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy import stats

from minibert.ablation.intervals import NAN, Interval, t95

POWER = 0.8  # the chance of finding a true difference of `detectable` size beyond noise


def seeds_needed(pilot: Sequence[float], half_width: float, cap: int) -> int:
    """Stein's second-stage size: seeds in all (pilot included) for a 95% half-width of `half_width`,
    at most `cap`. Needs at least 2 pilot differences."""
    if len(pilot) < 2:
        raise ValueError(f"a pilot of {len(pilot)} seeds is too small: the spread needs at least 2")
    if not half_width > 0:
        raise ValueError(f"half_width={half_width!r} is not allowed: it must be > 0")
    sd = statistics.stdev(pilot)
    n = math.ceil((t95(len(pilot) - 1) * sd / half_width) ** 2)
    return min(max(len(pilot), n), max(cap, len(pilot)))


def paired_interval(diffs: Sequence[float], pilot: int | None = None) -> Interval:
    """The 95% t-interval of the mean of per-seed differences `diffs` (in seed order). With `pilot`, the
    spread and its degrees of freedom come from the first `pilot` differences (Stein's interval); without
    it, from all of them."""
    diffs = [float(d) for d in diffs if not math.isnan(d)]
    if not diffs:
        return NAN
    mean = statistics.fmean(diffs)
    spread = diffs[:pilot] if pilot else diffs
    if len(spread) < 2:
        return Interval(mean, mean, mean, len(diffs))
    df = len(spread) - 1
    half = t95(df) * statistics.stdev(spread) / math.sqrt(len(diffs))
    return Interval(mean, mean - half, mean + half, len(diffs), df)


def half_width(iv: Interval) -> float:
    return (iv.hi - iv.lo) / 2


def detectable(iv: Interval, power: float = POWER) -> float:
    """The smallest true difference that an interval of this width excludes from zero with probability
    `power`: (t_0.975 + t_power) x its standard error, on the interval's degrees of freedom."""
    if math.isnan(iv.mean) or iv.seeds < 2 or math.isinf(iv.df):
        return math.nan
    return half_width(iv) * (1 + float(stats.t.ppf(power, iv.df)) / t95(iv.df))


@dataclass(frozen=True)
class Comparison:
    """A - B over paired seeds: the interval, its verdict at half-width target h, and how the seeds fell."""

    diffs: dict[int, float]  # seed -> A - B
    pilot: int  # how many of the first seeds sized the rest
    half_width: float  # the target h
    capped: bool  # the seed budget stopped it before the half-width was reached
    interval: Interval
    verdict: str

    @property
    def p_a_better(self) -> float:
        """The share of seeds on which A beats B (ties count half)."""
        values = list(self.diffs.values())
        return sum(1.0 if d > 0 else 0.5 if d == 0 else 0.0 for d in values) / len(values)

    @property
    def detectable(self) -> float:
        return detectable(self.interval)

    @property
    def normality_p(self) -> float:
        """Shapiro-Wilk's p-value for the differences being normal (NaN under 3 seeds or all equal)."""
        values = list(self.diffs.values())
        if len(values) < 3 or max(values) - min(values) < 1e-12:
            return math.nan
        return float(stats.shapiro(values).pvalue)

    @property
    def not_normal(self) -> bool:
        return self.normality_p < 0.05


def verdict(iv: Interval, h: float, capped: bool) -> str:
    """'A better' or 'B better' when the interval excludes 0; 'equivalent within ±h' when it lies inside
    (-h, h); otherwise 'undecided' ('undecided at the cap' when the seed budget ran out first)."""
    if math.isnan(iv.mean):
        return "no values"
    if iv.lo > 0:
        return "A better"
    if iv.hi < 0:
        return "B better"
    if -h < iv.lo and iv.hi < h:
        return f"equivalent within ±{h:g}"
    return "undecided at the cap" if capped else "undecided"


def compare(diffs: Mapping[int, float], pilot: int, half_width: float, capped: bool) -> Comparison:
    """The comparison of per-seed differences `diffs` (seeds in the order they were run: the first `pilot`
    are the pilot's)."""
    ordered = dict(sorted(diffs.items()))
    iv = paired_interval(list(ordered.values()), pilot=pilot)
    return Comparison(ordered, pilot, half_width, capped, iv, verdict(iv, half_width, capped))
