"""Dyck's claims at the research grid's budget (configs/ablations/dyck.yaml), on 3 seeds: the language is
not saturated, and the grid tells objectives apart."""

import math
import statistics

import pytest

pytestmark = pytest.mark.slow

T95_2DF = 4.303  # two-sided 95% Student t quantile, 2 degrees of freedom (3 seeds)


def ci95(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), T95_2DF * statistics.stdev(values) / math.sqrt(len(values))


def test_the_bidirectional_mlm_stays_at_least_three_points_below_the_ceiling_on_every_seed(dyck_grid):
    proc, summaries = dyck_grid
    assert proc.returncode == 0, proc.stderr
    gaps = [summaries[("dyck/pretrain/mlm", seed)]["val/gap/acc"] for seed in (0, 1, 2)]
    assert min(gaps) >= 0.03, gaps
    # and the gap grows with the distance to the partner: long-range structure is what is not learned
    for seed in (0, 1, 2):
        s = summaries[("dyck/pretrain/mlm", seed)]
        assert s["val/gap/acc_dist_1"] < s["val/gap/acc_dist_8_plus"]


def test_pretraining_objectives_are_told_apart_beyond_their_confidence_intervals(dyck_grid):
    _, summaries = dyck_grid
    full = [summaries[("dyck/finetune/mlm-full", seed)]["val/acc"] for seed in (0, 1, 2)]
    none = [summaries[("dyck/finetune/no_pretrain", seed)]["val/acc"] for seed in (0, 1, 2)]
    (mean_full, half_full), (mean_none, half_none) = ci95(full), ci95(none)
    assert mean_full - half_full > mean_none + half_none, (full, none)
