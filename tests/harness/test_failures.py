"""Seeds that did not learn, per arm (minibert.stats.failures), and Holm's step-down (minibert.stats.holm),
against scipy's exact references."""

from __future__ import annotations

import pytest
from scipy import stats

from minibert.stats.failures import ALPHA, clopper_pearson, compare_failures
from minibert.stats.holm import holm


def test_clopper_pearson_is_scipys_exact_interval_and_covers_at_every_rate():
    for k, n in [(0, 10), (1, 10), (3, 20), (20, 20)]:
        ci = stats.binomtest(k, n).proportion_ci(method="exact")
        assert clopper_pearson(k, n) == pytest.approx((ci.low, ci.high))
    for p in (0.05, 0.3, 0.5):  # exact coverage over every outcome, weighted by its probability
        intervals = [clopper_pearson(k, 20) for k in range(21)]
        covered = sum(stats.binom.pmf(k, 20, p) for k, (lo, hi) in enumerate(intervals) if lo <= p <= hi)
        assert covered >= 1 - ALPHA


def test_failures_are_counted_per_arm_and_compared_on_the_seeds_that_tell_them_apart():
    """An arm that fails on every seed is not hidden behind one that never does: each arm has its own count,
    and McNemar's exact test reads only the seeds where exactly one arm failed."""
    never, always = [False] * 8, [True] * 8
    f = compare_failures(never, always)
    assert (f.a, f.b, f.seeds) == (0, 8, 8) and f.p == pytest.approx(2 * 0.5**8)
    assert f.rate("b")[0] == 1.0 and f.rate("b")[1] == pytest.approx(clopper_pearson(8, 8)[0])
    same = compare_failures([True, False, True, False], [True, False, True, False])
    assert same.p == 1.0 and same.any
    with pytest.raises(ValueError, match="paired"):
        compare_failures([True], [True, False])


def test_holm_steps_down():
    assert holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]  # .005 <= .05/4, .01 <= .05/3, .03 > .05/2
    assert holm([0.04, 0.04]) == [False, False]  # the smallest needs <= .05/2
    assert holm([0.001, 0.02, 0.04]) == [True, True, True]
    assert holm([61.0, 40.0, 19.0], e_values=True) == [True, True, False]  # e >= 3/.05, 2/.05, 1/.05
