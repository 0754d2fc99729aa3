"""How often minibert.stats.intervals.accuracy_interval covers a true accuracy at 3 seeds, against the same
interval with Welch-Satterthwaite's degrees of freedom in place of each variance part at its own quantile
(`intervals._quantile`). Each simulated grid draws one validation set of n questions, shared by its seeds, and
one normal effect per seed, as tests/harness/test_intervals.py does; the seed SD runs from negligible to dominant
against the sampling error, sqrt(p (1 - p) / n) = 1.8 points at p = 0.8 and n = 500.

    python benchmarks/welch_coverage.py
"""

from __future__ import annotations

import math
from unittest import mock

import numpy as np

from minibert.stats import intervals

P, N, SEEDS, TRIALS = 0.8, 500, 3, 20_000
SEED_SDS = [0.005, 0.01, 0.02, 0.04, 0.06, 0.1]


def welch(seed_var: float, seed_df: float, total: float) -> tuple[float, float]:
    """Welch-Satterthwaite: one t quantile on the df of the total, taken from the estimated seed part."""
    if seed_var <= 0 or total <= 0 or math.isinf(seed_df):
        return intervals._Z95, math.inf
    df = total**2 / (seed_var**2 / seed_df)
    return intervals.t95(df), df


def coverage(seed_sd: float, rng: np.random.Generator) -> float:
    hits = 0
    for _ in range(TRIALS):
        shared = rng.binomial(N, P) / N - P  # the validation set's own error, the same for every seed
        values = np.clip(P + shared + rng.normal(0, seed_sd, SEEDS), 0, 1)
        iv = intervals.accuracy_interval(list(values), N)
        hits += iv.lo <= P <= iv.hi
    return hits / TRIALS


def main() -> None:
    print(f"p = {P}, n = {N}, {SEEDS} seeds, {TRIALS} grids per row; coverage at nominal 95%")
    print("seed SD   each part at its quantile   Welch-Satterthwaite")
    for sd in SEED_SDS:
        own = coverage(sd, np.random.default_rng(1))
        with mock.patch.object(intervals, "_quantile", welch):
            ws = coverage(sd, np.random.default_rng(1))
        print(f"{sd:7.3f}   {own:26.3f}   {ws:19.3f}")


if __name__ == "__main__":
    main()
