"""The rule `scripts/compare.py` stops on: does A beat B on most seeds? A sign e-process on the paired seeds.

The estimand is theta = P(A beats B on a shared seed) - P(B beats A), or, equivalently for its sign, the win
rate p = P(A beats B | the seed is not a tie). "A better" means A wins on more than half of the untied seeds
(p > 1/2); it does not mean that A's mean is higher (one seed where A collapses can pull A's mean below B's
while A wins most seeds), and it says nothing of by how much: the median difference and the betting interval on
the mean (minibert.stats.betting) stand beside it for that.

Each untied seed is a coin: a win for A with probability p, whatever the shape of the per-seed figures (skewed,
bimodal, a point mass at 100%, a seed that collapses). For a candidate rate q, the mixture likelihood ratio

    M_n(q) = integral of r^k (1 - r)^(m - k) dBeta(1, 1)(r) / (q^k (1 - q)^(m - k))
           = B(1 + k, 1 + m - k) / (q^k (1 - q)^(m - k)),         k wins in m untied seeds

is a nonnegative martingale with mean 1 when p = q (Robbins' method of mixtures), so by Ville's inequality it
ever reaches 1 / alpha with probability at most alpha, at however many looks, on a cap extended later or a stop
on the clock. The confidence sequence for p is {q : M_n(q) < 1 / alpha}, an interval around k / m (log M_n is
convex in q with its least value, at most 0, at k / m). A look decides:

- "A better" / "B better" when the interval excludes 1/2 (M_n(1/2) >= 1 / alpha: the sign e-value);
- "alike" when the interval lies inside a band (lo, hi) declared before any run (configs/compare.yaml): A wins
  between lo and hi of the untied seeds, so neither wins on most seeds by much;

and every decision is wrong only if the sequence missed p at some look, which happens with probability at most
alpha. A family of K pairs runs each sequence at alpha / K (Bonferroni), so the family's verdicts are all right
together with probability at least 1 - alpha. Ties (both arms at one value, as at 100%) carry no sign and are
skipped; every seed counts, a seed whose run failed at its arm's worst value (a loss).

Beta(1, 1) is fixed here, before any comparison: on win rates of 0.75-0.94 it stops within a seed or two of
every Beta(a, a) with a in 1/4..4 (docs/statistics.md), and at 16 wins in 19 it decides a family of four
in about 22 seeds, where the betting sequence on the mean needs about 131.

Example:
    >>> v = decide([0.02, 0.03, -0.01, 0.04, 0.05, 0.0, 0.01, 0.02, 0.03, 0.02, 0.01, 0.04, 0.02, 0.9], cap=40)
    >>> v.verdict, v.look, v.reason, (v.wins, v.losses, v.ties), round(v.e_value, 1)
    ('A better', 13, 'sign decided', (11, 1, 1), 26.3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import betaln

ALPHA = 0.05
BAND = (0.25, 0.75)  # the default "alike" band on the win rate; configs/compare.yaml declares the one in force
TIE = 1e-12  # two figures closer than this are one value (a float's rounding, not a difference)

REASONS = {
    "sign decided": "the win rate's sequence excludes one half",
    "alike within band": "the win rate's sequence lies inside the band",
    "every seed tied": "no seed tells A from B",
    "cap reached": "the cap came first",
    "below the cap": "seeds remain below the cap",
}


def signs(diffs: Sequence[float] | np.ndarray, tie: float = TIE) -> np.ndarray:
    """+1 where A beats B, -1 where B beats A, 0 for a tie, over the last axis of `diffs` (A - B, > 0 favours A)."""
    x = np.asarray(diffs, float)
    return np.where(x > tie, 1, np.where(x < -tie, -1, 0))


def log_evidence(wins: np.ndarray, untied: np.ndarray, q: float | np.ndarray = 0.5) -> np.ndarray:
    """log M_n(q): the log mixture likelihood ratio of k wins in m untied seeds against the win rate q, elementwise.
    At q = 1/2 it is the sign e-value's log; 0 before any untied seed."""
    k, m = np.asarray(wins, float), np.asarray(untied, float)
    q = np.asarray(q, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        against = np.where(k > 0, k * np.log(q), 0.0) + np.where(m > k, (m - k) * np.log1p(-q), 0.0)
    return betaln(1 + k, 1 + m - k) - against


def counts(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(wins, untied seeds) after each look, over the last axis of the signs `s`."""
    return np.cumsum(s > 0, -1), np.cumsum(s != 0, -1)


def stops(
    s: np.ndarray, alpha: float = ALPHA, band: tuple[float, float] = BAND
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A better, B better, alike) at each look or before, over the last axis of the signs `s` (..., N): whether
    the win rate's interval at some look so far excluded 1/2 from above, from below, or lay inside `band`
    (each look's own interval: inside the band at one look is inside it from then on). Exactly what `decide`
    reads, for many comparisons at once."""
    k, m = counts(np.asarray(s))
    level = math.log(1 / alpha)
    rate = np.divide(k, m, out=np.full(k.shape, 0.5), where=m > 0)
    sign = log_evidence(k, m, 0.5) >= level
    lo, hi = band
    inside = (log_evidence(k, m, lo) >= level) & (log_evidence(k, m, hi) >= level) & (lo < rate) & (rate < hi)
    seen = np.maximum.accumulate
    return seen(sign & (rate > 0.5), -1), seen(sign & (rate < 0.5), -1), seen(inside, -1)


def interval(wins: int, untied: int, alpha: float = ALPHA) -> tuple[float, float]:
    """The win rate's interval at one look, {q : M_n(q) < 1 / alpha}: its two ends by root finding (log M_n is
    convex in q and at most 0 at k / m); (0, 1) before any untied seed."""
    from scipy.optimize import brentq  # here, not above: compare.py reads the band from this module before it answers

    if untied == 0:
        return 0.0, 1.0
    level, rate = math.log(1 / alpha), wins / untied

    def f(q: float) -> float:
        return float(log_evidence(wins, untied, q)) - level

    lo = 0.0 if wins == 0 or f(1e-300) < 0 else brentq(f, 1e-300, rate)
    hi = 1.0 if wins == untied or f(1 - 1e-16) < 0 else brentq(f, rate, 1 - 1e-16)
    return lo, hi


@dataclass(frozen=True)
class SignVerdict:
    """Where a pair stopped on the sign rule: the verdict, the look (seeds run), why, the wins, losses and ties
    over the seeds judged, the sign e-value there (M_n(1/2)), and the win rate's interval at every look
    (running intersection)."""

    verdict: str  # "A better", "B better", "alike", "tied", "undecided (cap)" or "undecided"
    look: int
    reason: str  # a key of REASONS
    wins: int
    losses: int
    ties: int
    e_value: float
    history: tuple[tuple[float, float], ...] = ()  # P(A beats B | untied) at every look

    @property
    def untied(self) -> int:
        return self.wins + self.losses

    @property
    def rate(self) -> tuple[float, float]:
        """The win rate's interval at the last look."""
        return self.history[-1] if self.history else (0.0, 1.0)


def sequence(s: Sequence[int], alpha: float = ALPHA) -> list[tuple[float, float]]:
    """The win rate's confidence sequence: one interval per look, each the intersection of the looks so far."""
    k, m = counts(np.asarray(s))
    out, lo, hi = [], 0.0, 1.0
    for wins, untied in zip(k.tolist(), m.tolist()):
        a, b = interval(wins, untied, alpha)
        lo, hi = max(lo, a), min(hi, b)
        out.append((lo, hi))
    return out


def first_bound(alpha: float = ALPHA) -> int:
    """The fewest seeds at which a verdict is possible: A wins every one and the sign e-value reaches 1 / alpha.
    8 at alpha 0.05, 10 at 0.0125 (a family of four), 12 at 0.05 / 15.

    >>> first_bound(0.05), first_bound(0.05 / 4), first_bound(0.05 / 15)
    (8, 10, 12)
    """
    n = 1
    while log_evidence(n, n) < math.log(1 / alpha):
        n += 1
    return n


def decide(
    diffs: Sequence[float], cap: int, alpha: float = ALPHA, band: tuple[float, float] = BAND, tie: float = TIE
) -> SignVerdict:
    """Look after every seed of `diffs` (A - B per seed, in run order, > 0 favours A) and stop at the first look
    where the win rate's interval excludes 1/2 or lies inside `band`, or at `cap` seeds. A pair whose every seed
    tied once a verdict could have been reached (`first_bound`) stops as "tied": no seed tells its arms apart,
    and more of the same would not.

    Whatever the look it stops at and the figures' distribution, a wrong sign or a wrong "alike" has probability
    at most alpha (either needs the sequence to miss the win rate at some look)."""
    check_band(band)
    if cap < 1:
        raise ValueError(f"cap={cap!r}: must be >= 1")
    s = signs(np.asarray(diffs, float)[:cap], tie)
    n = len(s)
    if not n:
        return SignVerdict("undecided", 0, "below the cap", 0, 0, 0, 1.0)
    a, b, inside = stops(s, alpha, band)
    stop = a | b | inside
    tied = (np.cumsum(s != 0) == 0) & (np.arange(1, n + 1) >= first_bound(alpha))
    j = int(np.argmax(stop | tied)) if (stop | tied).any() else n - 1
    history = tuple(sequence(s[: j + 1], alpha))
    wins, losses = int(np.sum(s[: j + 1] > 0)), int(np.sum(s[: j + 1] < 0))
    ties, e = j + 1 - wins - losses, float(np.exp(log_evidence(wins, wins + losses)))
    counted = (wins, losses, ties, e, history)
    if a[j] or b[j]:
        return SignVerdict("A better" if a[j] else "B better", j + 1, "sign decided", *counted)
    if inside[j]:
        return SignVerdict("alike", j + 1, "alike within band", *counted)
    if tied[j]:
        return SignVerdict("tied", j + 1, "every seed tied", *counted)
    if n >= cap:
        return SignVerdict("undecided (cap)", cap, "cap reached", *counted)
    return SignVerdict("undecided", n, "below the cap", *counted)


def named(verdict: str, a: str = "A", b: str = "B") -> str:
    """A verdict ("A better", "B better", "tied", "alike", "undecided (cap)", ...) with the arms named, as every
    page words it.

    >>> named("B better", "mlm", "span"), named("tied"), named("undecided (cap)")
    ('span better', 'tied on every seed', 'undecided (cap)')
    """
    return {"A better": f"{a} better", "B better": f"{b} better", "tied": "tied on every seed"}.get(verdict, verdict)


def check_band(band: Sequence[float]) -> tuple[float, float]:
    """The band as (lo, hi), or ValueError in one line unless 0 < lo < 1/2 < hi < 1."""
    try:
        lo, hi = (float(x) for x in band)
    except (TypeError, ValueError):
        raise ValueError(f"alike band {band!r}: give two numbers, lo and hi") from None
    if not 0 < lo < 0.5 < hi < 1:
        raise ValueError(f"alike band [{lo:g}, {hi:g}]: needs 0 < lo < 0.5 < hi < 1 (a win rate, around one half)")
    return lo, hi


def seeds_to_decide(
    diffs: Sequence[float],
    alpha: float = ALPHA,
    band: tuple[float, float] = BAND,
    limit: int = 500,
    paths: int = 400,
    seed: int = 0,
) -> int | None:
    """The seeds at which half of comparisons like this one would stop on the sign rule: `paths` continuations
    of the seeds so far, drawn from their wins, losses and ties (with replacement), each judged by `stops`.
    None when fewer than half stop by `limit`, or below 2 seeds. A planning figure, not a promise.

    >>> seeds_to_decide([0.02, 0.03, -0.01, 0.04]), seeds_to_decide([0.01, -0.02, 0.03, -0.01], limit=40)
    (31, None)
    """
    s = signs(diffs)
    if len(s) < 2:
        return None
    if len(s) >= limit:
        return None
    drawn = s[np.random.default_rng(seed).integers(0, len(s), (paths, limit - len(s)))]
    a, b, inside = stops(np.concatenate([np.broadcast_to(s, (paths, len(s))), drawn], -1), alpha, band)
    stopped = a | b | inside
    first = np.where(stopped.any(-1), np.argmax(stopped, -1) + 1, limit + 1)
    n = int(np.median(first))
    return n if n <= limit else None
