"""95% intervals for accuracies over a few seeds that cover both sources of error and stay inside [0, 1].

An accuracy measured over seeds s = 1..S on one validation set of n graded questions has two errors:
the training seed (estimated by the seeds' variance s^2, on S - 1 degrees of freedom) and the sampling of
the validation questions (binomial, p(1 - p) / n, the same draw for every seed since the set is fixed, so
it does not shrink with more seeds). Their sum is the variance of the mean:

    V = s^2 / S + p(1 - p) / n

The interval is Wilson's score interval at the effective sample size n_eff = p(1 - p) / V, with a quantile
t in place of 1.96 that takes each part at its own: t^2 V = t(S - 1)^2 s^2 / S + 1.96^2 p(1 - p) / n (`_quantile`).
It is close to mean +/- t * sqrt(V) in the middle and never leaves [0, 1] at the edges (at p = 1 it is
[1 - t^2/(n + t^2), 1]).

A paired difference (A - B on the same seeds and the same validation set, or a gap to the oracle ceiling)
uses the per-seed differences for the seed term and p_A(1 - p_A)/n_A + p_B(1 - p_B)/n_B for the sampling term
(exact for disjoint question sets; for the same questions it assumes the two models' errors are not
negatively correlated, so it errs on the wide side), clipped to [-1, 1].

Example:
    >>> iv = accuracy_interval([0.9, 0.91, 0.89], n=2000)
    >>> round(iv.mean, 3), 0 <= iv.lo < iv.mean < iv.hi <= 1
    (0.9, True)
    >>> accuracy_interval([1.0, 1.0, 1.0], n=100).hi
    1.0
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

_Z95 = 1.959964


@functools.lru_cache(maxsize=4096)  # seeds' df repeat: S - 1
def t95(df: float) -> float:
    """The 0.975 quantile of Student's t with `df` (>= 1, may be fractional or inf) degrees of freedom.

    >>> round(t95(2), 3), t95(math.inf), round(t95(45), 3)
    (4.303, 1.959964, 2.014)
    """
    if df < 1:
        raise ValueError(f"df={df!r} is not allowed: degrees of freedom must be >= 1")
    if math.isinf(df) or df > 1e9:
        return _Z95
    return float(stats.t.ppf(0.975, df))


@dataclass(frozen=True)
class Interval:
    """A mean with its 95% interval [lo, hi]; `seeds` values went in; `df` of its quantile."""

    mean: float
    lo: float
    hi: float
    seeds: int
    df: float = math.inf

    def __neg__(self) -> Interval:
        """B - A from A - B: the same interval, mirrored."""
        return Interval(-self.mean, -self.hi, -self.lo, self.seeds, self.df)

    def minus(self, value: float) -> Interval:
        """The interval of (the figure - `value`): a figure read against a bound."""
        return Interval(self.mean - value, self.lo - value, self.hi - value, self.seeds, self.df)

    @property
    def contains_zero(self) -> bool:
        return self.lo <= 0 <= self.hi

    def percent(self, digits: int = 1) -> str:
        """'90.0 (89.1–90.8)': percent points, the interval in brackets; 'n/a' without values."""
        if math.isnan(self.mean):
            return "n/a"
        if self.lo == self.hi == self.mean:
            return f"{100 * self.mean:.{digits}f}"
        return f"{100 * self.mean:.{digits}f} ({100 * self.lo:.{digits}f}–{100 * self.hi:.{digits}f})"


NAN = Interval(math.nan, math.nan, math.nan, 0)


def _clean(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(v)]


def variance(values: Sequence[float]) -> float:
    """The sample variance (n - 1), in floats: `statistics.variance` computes it in exact fractions, which a
    report asking thousands of intervals pays for in seconds.

    >>> variance([0.1, 0.2, 0.3]) == statistics.variance([0.1, 0.2, 0.3])
    True
    """
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _seed_term(values: list[float]) -> tuple[float, float]:
    """(s^2 / S, its degrees of freedom S - 1); (0, inf) for one value (no seed spread can be estimated)."""
    if len(values) < 2:
        return 0.0, math.inf
    var = variance(values)
    return (var if var > 1e-15 else 0.0) / len(values), len(values) - 1  # float noise of equal values is 0


_LOG_DF = np.linspace(0.0, math.log(1e7), 600)  # df from 1 to 1e7
_T_OF_LOG_DF = stats.t.ppf(0.975, np.exp(_LOG_DF))  # decreasing in df


def _df_of(t: float) -> float:
    """The degrees of freedom whose 0.975 t quantile is `t` (interpolated in log df on a table: a root
    finder costs a millisecond per interval, and a report computes thousands)."""
    return float(np.exp(np.interp(-t, -_T_OF_LOG_DF, _LOG_DF)))


def _quantile(seed_var: float, seed_df: float, total: float) -> tuple[float, float]:
    """(quantile, its degrees of freedom) for a variance `total` whose seed part `seed_var` is estimated on
    `seed_df` df and whose rest (the validation sampling) is known: each part at its own quantile,
    sqrt(t(seed_df)^2 seed_var + z^2 (total - seed_var)) / sqrt(total), between z and t(seed_df).

    Welch-Satterthwaite's df would take the df from the estimated seed variance itself, which makes the
    interval too narrow exactly when that estimate is low: at 3 seeds it covers as little as 92.6% at nominal
    95% (benchmarks/welch_coverage.py). Each part at its own quantile covers 95% at either extreme and a little more
    in between. The df returned is the one whose t quantile this is.
    """
    if seed_var <= 0 or total <= 0 or math.isinf(seed_df):
        return _Z95, math.inf
    t_seed = t95(seed_df)
    t = math.sqrt((t_seed**2 * seed_var + _Z95**2 * max(total - seed_var, 0.0)) / total)
    if t >= t_seed:
        return t_seed, seed_df
    if t - _Z95 < 1e-9:
        return _Z95, math.inf
    return t, _df_of(t)


def seed_interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of the plain 95% t-interval over seeds, for figures that are not proportions
    (gaps, differences, counts); NaN half-width for one seed.

    >>> mean, half = seed_interval([0.2, 0.3, 0.4])
    >>> round(mean, 3), round(half, 3)
    (0.3, 0.248)
    """
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan
    return mean, t95(len(values) - 1) * math.sqrt(variance(values)) / math.sqrt(len(values))


def binomial_variance(p: float, n: float | None) -> float:
    """The variance of an accuracy p measured on n questions, p(1 - p) / n; 0 without a count.

    >>> binomial_variance(0.5, 100)
    0.0025
    """
    return p * (1 - p) / n if n else 0.0


def accuracy_interval(values: Sequence[float | None], n: float | None) -> Interval:
    """Mean over seeds of a proportion graded on `n` validation questions, with its bounded 95% interval
    (seed spread plus validation sampling; see the module docstring). `n=None`: seed spread only."""
    values = _clean(values)
    if not values:
        return NAN
    p = statistics.fmean(values)
    seed_var, seed_df = _seed_term(values)
    sampling = binomial_variance(p, n)
    total = seed_var + sampling
    t, df = _quantile(seed_var, seed_df, total)
    if p * (1 - p) > 0 and total > 0:
        n_eff = p * (1 - p) / total
    elif n:
        n_eff = float(n)  # p is 0 or 1 on every seed: the binomial bound alone
    else:
        return Interval(p, p, p, len(values), df)
    denom = 1 + t * t / n_eff
    centre = (p + t * t / (2 * n_eff)) / denom
    half = t / denom * math.sqrt(p * (1 - p) / n_eff + t * t / (4 * n_eff * n_eff))
    # Wilson's interval holds p; min/max keep rounding (1 - 1e-16 at p = 1) from putting it outside
    return Interval(p, max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)), len(values), df)


def with_sampling(values: Sequence[float], sampling: float) -> Interval:
    """The mean of per-seed `values` (differences, or gaps) with its 95% interval: their spread over seeds at
    Student's quantile plus `sampling`, the known variance a shared validation set adds to the mean, at the
    normal one (`_quantile`); clipped to [-1, 1]."""
    values = list(values)
    mean = statistics.fmean(values)
    seed_var, seed_df = _seed_term(values)
    total = seed_var + sampling
    t, df = _quantile(seed_var, seed_df, total)
    half = t * math.sqrt(total)
    return Interval(mean, max(-1.0, mean - half), min(1.0, mean + half), len(values), df)


def p_value(iv: Interval) -> float:
    """Two-sided p-value of mean = 0 implied by a symmetric 95% interval on `iv.df` degrees of freedom."""
    half = max(iv.mean - iv.lo, iv.hi - iv.mean)
    df = iv.df if iv.df is not None and iv.df >= 1 else math.inf
    if not half > 0:
        return 0.0 if iv.mean != 0 else 1.0
    t = abs(iv.mean) / (half / t95(df))
    return float(2 * stats.t.sf(t, df)) if not math.isinf(df) else float(2 * stats.norm.sf(t))


def difference_interval(a: dict[int, float], b: dict[int, float], n_a: float | None, n_b: float | None) -> Interval:
    """Paired A - B over the seeds both have (seed term from per-seed differences, sampling term from both
    proportions), clipped to [-1, 1]."""
    seeds = sorted(s for s in set(a) & set(b) if not (math.isnan(a[s]) or math.isnan(b[s])))
    if not seeds:
        return NAN
    pa, pb = statistics.fmean(a[s] for s in seeds), statistics.fmean(b[s] for s in seeds)
    sampling = binomial_variance(pa, n_a) + binomial_variance(pb, n_b)
    return with_sampling([a[s] - b[s] for s in seeds], sampling)


def reference_difference(values: Sequence[float | None], n: float | None, reference: float) -> Interval:
    """Our mean minus a single reference run (another run, on its own validation set of about the same
    size): the reference carries one seed's spread and its own sampling error as well as ours."""
    values = _clean(values)
    if not values:
        return NAN
    p = statistics.fmean(values)
    seed_var, seed_df = _seed_term(values)
    seed_var *= 1 + len(values)  # s^2/S for our mean plus s^2 for the one reference run
    sampling = (p * (1 - p) + reference * (1 - reference)) / n if n else 0.0
    total = seed_var + sampling
    t, df = _quantile(seed_var, seed_df, total)
    half = t * math.sqrt(total)
    d = p - reference
    return Interval(d, max(-1.0, d - half), min(1.0, d + half), len(values), df)
