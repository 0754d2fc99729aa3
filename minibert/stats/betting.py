"""The confidence sequence that `scripts/compare.py` stops on: the mean of bounded per-seed differences, by
betting, valid whatever their shape (skewed, bimodal, a seed that collapses).

A per-seed difference A - B of two accuracies lies in [-1, 1]; nothing else is assumed. For a candidate mean m,
a gambler who bets that the mean is above m multiplies her wealth at each seed by 1 + f (x - m) / (m - lo), a
fraction f in [0, 1) of what she may stake without going broke when x is as low as it can be (lo). If the mean is
m, that wealth is a nonnegative martingale, so by Ville's inequality it ever reaches 2 / alpha with probability at
most alpha / 2, however many looks are taken. Betting the other way gives the other half. The sequence at a look
is the set of m at which neither wealth has reached 2 / alpha at any look so far (Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting", JRSS-B 2024; the capital process of Shafer & Vovk).

The fraction f is not tuned on any comparison: the wealth is averaged (with equal weights; an average of
martingales is one) over a fixed grid, f = 1/8, 1/4, 1/2, 3/4, ..., 127/128, even on the log of the stake kept,
1 - f. The grid leans towards bold bets because Kelly's fraction for a difference of mean mu and SD sigma on
[-1, 1] is about mu / sigma^2, above the cap of 1 whenever the seeds' spread is small against the range: on every
figure minibert has recorded, SDs of a difference of 1-15 points against a range of 200. Against the best
fraction in hindsight it loses at most log 9 of log-wealth. Over an even grid on (0, 1) it saves 10-20% of the
seeds on every shape simulated (constant, normal, wide), skewed or not (docs/statistics.md).

What validity costs. No test of a mean that holds for every distribution on [lo, hi] can do better than the
best bet: if every seed shows the same difference d, the wealth after n seeds is at most (1 + d / (-lo))^n (the
two-point distribution on {lo, d} with mean 0 would make those seeds likely otherwise). So a difference of 36
points needs at least 12 seeds at alpha / 2 = 0.025 (this sequence: 15), and no verdict at all is possible
before 7 seeds; a t-based sequence, which assumes normal differences, can stop at 3. docs/statistics.md
tabulates the price.

Decisions need the wealth at a handful of m only (0 for the sign, ±margin for equivalence): `stops` computes
them for many simulated comparisons at once; `sequence` finds the interval's ends by bisection (the wealth for
"above m" falls as m rises, so each end is one root).

Example:
    >>> v = decide([0.36, 0.40, 0.33, 0.38, 0.35, 0.37, 0.41, 0.36, 0.39, 0.34, 0.36, 0.38, 0.37, 0.35, 0.40],
    ...            margin=0.01, cap=30)
    >>> v.verdict, v.look, v.reason
    ('A better', 14, 'sign decided')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from minibert.stats.intervals import NAN, Interval

ALPHA = 0.05
FRACTIONS = 1 - np.array([7 / 8, 3 / 4, 1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128])  # the bets averaged over
DIFFERENCE = (-1.0, 1.0)  # what a difference of two proportions can be


@dataclass(frozen=True)
class SequentialVerdict:
    """Where a sequential comparison stopped: the verdict, the look (seeds run), the confidence sequence's
    interval there and why it stopped."""

    verdict: str  # "A better", "B better", "equivalent within ±m", "undecided (cap)" or "undecided"
    look: int
    interval: Interval
    reason: str  # "sign decided", "interval inside ±m", "cap reached" or "below the cap"
    history: tuple[Interval, ...] = ()  # the sequence at every look run (up to the cap), the stop's included


def _bet(x: np.ndarray, m: float | np.ndarray, lo: float, hi: float, side: int) -> np.ndarray:
    """Log-wealth after each look, over the last axis of x (..., N), of betting that the mean is above m (side
    +1) or below it (side -1): (..., N). Under mean m it is a nonnegative martingale started at 1. `m` is a
    number, or an array broadcast against x's leading axes (one candidate mean per row)."""
    m = np.asarray(m, float)
    if not np.all((lo < m) & (m < hi)):
        raise ValueError(f"m={m!r} must lie strictly inside the range ({lo!r}, {hi!r})")
    m = m[..., None]  # against the seeds' axis
    y = (np.asarray(x, float) - m)[..., None]  # (..., N, 1)
    stake = (m - lo) if side > 0 else -(hi - m)  # the most a bet may risk: x as low (high) as it can be
    bets = np.log1p(FRACTIONS * y / stake[..., None])  # (..., N, J): >= log(1 - f) > -inf
    return logsumexp(np.cumsum(bets, -2), -1) - math.log(len(FRACTIONS))


def log_wealth(x: np.ndarray, m: float, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Log-wealth after each look, over the last axis of x (..., N), of betting that the mean is above m and
    that it is below m: two arrays (..., N). Under mean m each is a nonnegative martingale started at 1."""
    return _bet(x, m, lo, hi, +1), _bet(x, m, lo, hi, -1)


def _check(x: np.ndarray, lo: float, hi: float) -> None:
    if x.size and (np.nanmin(x) < lo or np.nanmax(x) > hi):
        raise ValueError(f"a difference of {np.nanmin(x):g} or {np.nanmax(x):g} lies outside the range [{lo:g}, "
                         f"{hi:g}] the sequence was designed for")  # fmt: skip


def _reached(x: np.ndarray, m: float, lo: float, hi: float, level: float, side: int) -> np.ndarray:
    """Whether the bet that the mean is above m (side +1) or below it (side -1) has reached `level` (in log) at
    some look so far: (..., N) booleans. Outside the range the answer is known: no mean lies there."""
    if m <= lo:
        return np.full(x.shape, side > 0)
    if m >= hi:
        return np.full(x.shape, side < 0)
    return np.maximum.accumulate(_bet(x, m, lo, hi, side) >= level, -1)


def stops(
    x: np.ndarray, margin: float, alpha: float = ALPHA, bounds: tuple[float, float] = DIFFERENCE, widen: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A better, B better, equivalent) after each look, over the last axis of x (..., N): whether the sequence,
    widened by `widen` on each side, lies above 0, below 0, or inside (-margin, margin) at that look or before.
    Exactly what `decide` reads, for many comparisons at once."""
    x = np.asarray(x, float)
    lo, hi = bounds
    level = math.log(2 / alpha)
    a = _reached(x, widen, lo, hi, level, +1)  # lower end > widen: the widened sequence lies above 0
    b = _reached(x, -widen, lo, hi, level, -1)
    inside = _reached(x, widen - margin, lo, hi, level, +1) & _reached(x, margin - widen, lo, hi, level, -1)
    return a, b, inside & (margin > widen)


def _end(x: np.ndarray, alpha: float, lo: float, hi: float, side: int) -> np.ndarray:
    """The sequence's lower (side +1) or upper (side -1) end after each look n = 1..N of x (N,), before the
    running intersection: the m at which the bet on that side reaches 2 / alpha, by bisection (its wealth is
    monotone in m), every look at once."""
    n = len(x)
    a, b = np.full(n, lo), np.full(n, hi)  # the root lies in (a, b) for every look
    level = math.log(2 / alpha)
    looks = np.arange(n)
    for _ in range(50):  # (hi - lo) / 2^50: below any printed digit
        mid = (a + b) / 2  # (look,)
        reached = _bet(x[None, :], mid, lo, hi, side)[looks, looks] >= level  # look k's bet at its own mid
        if side > 0:  # reached at mid: the lower end lies above mid
            a, b = np.where(reached, mid, a), np.where(reached, b, mid)
        else:
            a, b = np.where(reached, a, mid), np.where(reached, mid, b)
    return a if side > 0 else b


def sequence(
    diffs: Sequence[float], alpha: float = ALPHA, bounds: tuple[float, float] = DIFFERENCE, widen: float = 0.0
) -> list[Interval]:
    """The confidence sequence of the mean per-seed difference: one interval per look (seeds in run order), all
    of which hold at once with probability at least 1 - alpha for independent differences in `bounds`, of any
    distribution. Each is the intersection of the looks so far, widened by `widen` on each side (a shared
    validation set's own error; minibert.compare.comparison).

    >>> [(round(iv.lo, 2), round(iv.hi, 2)) for iv in sequence([0.4] * 15)][-1]
    (0.05, 0.55)
    """
    x = np.asarray(diffs, float)
    lo, hi = bounds
    _check(x, lo, hi)
    if not len(x):
        return []
    low = np.maximum.accumulate(_end(x, alpha, lo, hi, +1))
    high = np.minimum.accumulate(_end(x, alpha, lo, hi, -1))
    mean = np.cumsum(x) / np.arange(1, len(x) + 1)
    return [Interval(float(m), float(a) - widen, float(b) + widen, i + 1)
            for i, (m, a, b) in enumerate(zip(mean, low, high))]  # fmt: skip


def first_bound(alpha: float = ALPHA, bounds: tuple[float, float] = DIFFERENCE) -> int:
    """The fewest seeds at which any verdict is possible: when every seed shows the largest difference the range
    allows, the bet that the mean is above 0 reaches 2 / alpha only after this many. 7 at alpha 0.05 on [-1, 1],
    9 at 0.0125 (a family of four), 11 at 0.05 / 15. No look before it can decide, so a comparison runs that
    many seeds before its first.

    >>> first_bound(0.05), first_bound(0.05 / 4), first_bound(0.05 / 15)
    (7, 9, 11)
    """
    n = 1
    while not stops(np.full(n, bounds[1]), margin=1e-9, alpha=alpha, bounds=bounds)[0][-1]:
        n += 1
    return n


def seeds_to_decide(
    diffs: Sequence[float],
    margin: float,
    alpha: float = ALPHA,
    bounds: tuple[float, float] = DIFFERENCE,
    widen: float = 0.0,
    limit: int = 200,
    paths: int = 400,
    seed: int = 0,
) -> int | None:
    """The seeds at which half of comparisons like this one would have stopped: `paths` continuations drawn
    from the differences seen so far (resampled with replacement, so their skew and any failed seed come with
    them), each judged by `stops`. None when fewer than half stop by `limit`. A planning figure read off the
    seeds so far, not a promise.

    >>> seeds_to_decide([0.35, 0.38, 0.40, 0.33], 0.01), seeds_to_decide([0.05, -0.03, 0.02], 0.01, limit=50)
    (14, None)
    """
    x = np.asarray(diffs, float)
    if len(x) < 2:
        return None
    rng = np.random.default_rng(seed)
    draws = x[rng.integers(0, len(x), (paths, limit))]  # (paths, limit)
    a, b, inside = stops(draws, margin, alpha, bounds, widen)
    stopped = a | b | inside
    first = np.where(stopped.any(-1), np.argmax(stopped, -1) + 1, limit + 1)  # (paths,)
    n = int(np.median(first))
    return n if n <= limit else None


def decide(
    diffs: Sequence[float],
    margin: float,
    cap: int,
    alpha: float = ALPHA,
    bounds: tuple[float, float] = DIFFERENCE,
    widen: float = 0.0,
) -> SequentialVerdict:
    """Look after every seed of `diffs` (A - B per seed, in run order; every seed at its value) and stop at the
    first look where the sequence excludes 0 ("A better" / "B better") or lies inside (-margin, margin)
    ("equivalent within ±margin"), or at `cap` seeds. Fewer than `cap` seeds and no decision: "undecided".

    Error rates, whatever the look it stops at and whatever the differences' distribution in `bounds`: a wrong
    sign, or "equivalent" when |mean| >= margin, at most alpha together (either needs the sequence to miss the
    mean at some look).
    """
    if not margin > 0 or cap < 1:
        raise ValueError(f"margin={margin!r}, cap={cap!r}: the margin must be > 0 and the cap >= 1")
    x = np.asarray(diffs, float)[:cap]
    _check(x, *bounds)
    if not len(x):
        return SequentialVerdict("undecided", 0, NAN, "below the cap")
    a, b, inside = stops(x, margin, alpha, bounds, widen)
    stop = a | b | inside
    j = int(np.argmax(stop)) if stop.any() else len(x) - 1
    history = tuple(sequence(x, alpha, bounds, widen))  # a look's interval depends on the seeds up to it only
    if stop.any():
        if a[j] or b[j]:
            return SequentialVerdict("A better" if a[j] else "B better", j + 1, history[j], "sign decided", history)
        return SequentialVerdict(f"equivalent within ±{margin:g}", j + 1, history[j], "interval inside ±m", history)
    if len(x) >= cap:
        return SequentialVerdict("undecided (cap)", cap, history[j], "cap reached", history)
    return SequentialVerdict("undecided", len(x), history[j], "below the cap", history)
