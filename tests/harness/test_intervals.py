"""The report's intervals: inside [0, 1] whatever the values, wider for fewer questions or more seed spread,
and honest: about 95% coverage when seeds vary and the one validation set is a random draw."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minibert.stats.intervals import accuracy_interval, difference_interval, reference_difference, t95


@pytest.mark.parametrize("df,expected", [(1, 12.706), (2, 4.303), (10, 2.228), (25, 2.060), (45, 2.014), (200, 1.972)])
def test_t_quantile_matches_the_table(df, expected):
    assert t95(df) == pytest.approx(expected, abs=0.004)


def test_intervals_stay_inside_zero_one_for_any_values():
    rng = np.random.default_rng(0)
    cases = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.5], [0.05, 0.62, 0.99], [0.999, 1.0], [0.001]]
    cases += [[1.0, 1.0, 0.9995]]  # the mean stays inside where rounding the bounds would not
    cases += [list(rng.uniform(0, 1, size=rng.integers(1, 6))) for _ in range(300)]
    for values in cases:
        for n in (None, 1, 9, 100, 2000, 10_000, 1_000_000):
            iv = accuracy_interval(values, n)
            assert 0.0 <= iv.lo <= iv.mean <= iv.hi <= 1.0, (values, n, iv)


def test_a_perfect_score_still_has_sampling_error_and_no_seed_error():
    iv = accuracy_interval([1.0, 1.0, 1.0], n=100)
    assert iv.hi == 1.0 and 0.95 < iv.lo < 0.99  # Wilson's bound at n = 100: 1 - z^2/(n + z^2) ~ 0.963


def test_fewer_questions_or_more_seed_spread_widen_the_interval():
    width = lambda iv: iv.hi - iv.lo  # noqa: E731
    base = accuracy_interval([0.80, 0.81, 0.79], n=2000)
    assert width(accuracy_interval([0.80, 0.81, 0.79], n=200)) > width(base)
    assert width(accuracy_interval([0.75, 0.85, 0.80], n=2000)) > width(base)
    assert width(accuracy_interval([0.80, 0.80, 0.80], n=2000)) < width(base)  # sampling alone: narrower still


def test_middle_of_the_range_is_mean_plus_minus_t_sqrt_variance():
    values, n = [0.50, 0.52, 0.48], 1_000_000  # sampling negligible: the t interval over seeds, df = 2
    iv = accuracy_interval(values, n)
    half = 4.303 * np.std(values, ddof=1) / math.sqrt(3)
    assert iv.lo == pytest.approx(0.5 - half, abs=2e-3) and iv.hi == pytest.approx(0.5 + half, abs=2e-3)


def test_coverage_is_about_95_percent_with_seed_and_validation_noise():
    """Truth p; each grid draws one validation set (shared by its seeds) and 3 seed effects."""
    rng = np.random.default_rng(1)
    p, n, seed_sd, trials = 0.8, 500, 0.02, 2000
    hits = 0
    for _ in range(trials):
        val = rng.binomial(n, p) / n - p  # the validation set's own error, the same for every seed
        values = np.clip(p + val + rng.normal(0, seed_sd, 3), 0, 1)
        iv = accuracy_interval(list(values), n)
        hits += iv.lo <= p <= iv.hi
    assert 0.92 <= hits / trials <= 0.995, hits / trials
    # the seed-only t interval (the old report) misses the shared validation error far more often
    seed_only = 0
    for _ in range(trials):
        val = rng.binomial(n, p) / n - p
        values = np.clip(p + val + rng.normal(0, seed_sd, 3), 0, 1)
        iv = accuracy_interval(list(values), None)
        seed_only += iv.lo <= p <= iv.hi
    assert seed_only / trials < hits / trials - 0.03


def test_paired_difference_uses_per_seed_differences():
    a = {0: 0.90, 1: 0.80, 2: 0.70}
    b = {0: 0.88, 1: 0.78, 2: 0.68}  # large seed spread, constant difference: paired, it is clearly positive
    iv = difference_interval(a, b, None, None)
    assert iv.mean == pytest.approx(0.02) and iv.lo == pytest.approx(0.02) and iv.hi == pytest.approx(0.02)
    iv = difference_interval(a, b, 20_000, 20_000)
    assert 0 < iv.lo < 0.02 < iv.hi and -1 <= iv.lo and iv.hi <= 1
    assert difference_interval({0: 1.0}, {0: 0.0}, 1, 1).hi == 1.0  # clipped


def test_reference_difference_within_noise_only_when_the_interval_covers_zero():
    assert reference_difference([0.90, 0.91, 0.89], 2000, 0.895).contains_zero
    assert not reference_difference([0.90, 0.91, 0.89], 2000, 0.80).contains_zero


@pytest.mark.parametrize(
    ("against", "seeds", "seed_sd"),
    [("reference", 3, 0.02), ("reference", 5, 0.01), ("reference", 3, 0.0),
     ("truth", 3, 0.05), ("truth", 3, 0.004), ("truth", 5, 0.01)],
)  # fmt: skip
def test_intervals_cover_at_the_nominal_95_percent(against, seeds, seed_sd):
    """Our seeds share one fixed validation set (a common offset). Against the truth: the accuracy interval
    covers the true accuracy whether the seeds' spread or the sampling error dominates. Against a reference:
    the write-up's single run is one more draw of the same recipe on its own validation set, so our mean minus
    it is 0 in expectation, and the difference's interval (which decides every "within noise" verdict against
    the write-up) must cover 0."""
    rng = np.random.default_rng(5 if against == "reference" else 6)
    p, n, trials = 0.85, 2000, 4000
    sampling_sd = math.sqrt(p * (1 - p) / n)
    covered = 0
    for _ in range(trials):
        ours = p + rng.normal(0, sampling_sd) + rng.normal(0, seed_sd, seeds)  # one validation set for all seeds
        if against == "reference":
            reference = p + rng.normal(0, sampling_sd) + rng.normal(0, seed_sd)  # its own set, its own seed
            covered += reference_difference(list(ours), n, float(reference)).contains_zero
        else:
            iv = accuracy_interval(list(ours), n)
            covered += iv.lo <= p <= iv.hi
    assert 0.93 <= covered / trials <= 0.99, covered / trials
