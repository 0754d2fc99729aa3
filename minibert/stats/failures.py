"""Seeds that did not learn, counted per arm: each arm's rate with its exact interval, and an exact test of
whether the two rates differ.

A recipe whose seeds sometimes stall is a recipe that sometimes stalls: the verdict keeps those seeds at their
value (minibert.stats.betting), and the rates are a second figure beside it, per arm, never per pair, so that an
arm that fails on every seed is not hidden behind one that never does. The two arms ran on the same seeds, so
their failures are paired: McNemar's exact test reads only the seeds where one arm failed and the other did not.

Example:
    >>> f = compare_failures([True, False, False, False], [True, True, True, True])
    >>> f.a, f.b, f.seeds, round(f.p, 3)
    (1, 4, 4, 0.25)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

ALPHA = 0.05


def clopper_pearson(k: int, n: int, alpha: float = ALPHA) -> tuple[float, float]:
    """The exact binomial (Clopper-Pearson, 1934) interval for k successes in n: at least 1 - alpha always.

    >>> [round(x, 3) for x in clopper_pearson(0, 10)], [round(x, 3) for x in clopper_pearson(1, 10)]
    ([0.0, 0.308], [0.003, 0.445])
    """
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class ArmFailures:
    """Of `seeds` seeds, `a` failed for arm A and `b` for arm B; `p` is McNemar's exact two-sided p for equal
    rates (1 when no seed tells them apart)."""

    a: int
    b: int
    seeds: int
    p: float

    def rate(self, arm: str) -> tuple[float, float, float]:
        """(rate, lo, hi) of arm "a" or "b": the share of its seeds that failed and its exact 95% interval."""
        k = self.a if arm == "a" else self.b
        return (k / self.seeds if self.seeds else math.nan, *clopper_pearson(k, self.seeds))

    @property
    def any(self) -> bool:
        return self.a > 0 or self.b > 0


def compare_failures(a_failed: Sequence[bool], b_failed: Sequence[bool]) -> ArmFailures:
    """Each arm's failures over the same seeds, and McNemar's exact test of equal rates: under equal rates a
    seed on which exactly one arm failed is A's with probability 1/2."""
    if len(a_failed) != len(b_failed):
        raise ValueError(f"{len(a_failed)} seeds of A against {len(b_failed)} of B: the seeds are paired")
    only_a = sum(x and not y for x, y in zip(a_failed, b_failed))
    only_b = sum(y and not x for x, y in zip(a_failed, b_failed))
    p = float(stats.binomtest(only_a, only_a + only_b).pvalue) if only_a + only_b else 1.0
    return ArmFailures(int(sum(a_failed)), int(sum(b_failed)), len(a_failed), p)
