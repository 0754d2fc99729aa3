"""Dyck's claims at the research grid's budget (configs/ablations/dyck.yaml), on 3 seeds: the language is
not saturated, and the grid tells objectives apart; the gap report reads the same figures."""

import math
import statistics

import pytest

pytestmark = pytest.mark.slow

T95_2DF = 4.303  # two-sided 95% Student t quantile, 2 degrees of freedom (3 seeds)
SEEDS = (0, 1, 2)


def ci95(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), T95_2DF * statistics.stdev(values) / math.sqrt(len(values))


def test_the_bidirectional_mlm_stays_at_least_three_points_below_the_ceiling_on_every_seed(dyck_grid):
    assert dyck_grid.proc.returncode == 0, dyck_grid.proc.stderr
    runs = [dyck_grid.summaries[("dyck/pretrain/mlm", seed)] for seed in SEEDS]
    assert min(s["val/gap/acc"] for s in runs) >= 0.03, [s["val/gap/acc"] for s in runs]
    # and the gap grows with the distance to the partner: long-range structure is what is not learned
    assert all(s["val/gap/acc_dist_1"] < s["val/gap/acc_dist_8_plus"] for s in runs)


def test_pretraining_objectives_are_told_apart_beyond_their_confidence_intervals(dyck_grid):
    full = [dyck_grid.summaries[("dyck/finetune/mlm-full", seed)]["val/acc"] for seed in SEEDS]
    none = [dyck_grid.summaries[("dyck/finetune/no_pretrain", seed)]["val/acc"] for seed in SEEDS]
    (mean_full, half_full), (mean_none, half_none) = ci95(full), ci95(none)
    assert mean_full - half_full > mean_none + half_none, (full, none)


def test_the_gap_report_shows_the_runs_own_figures(dyck_grid, scripts):
    assert scripts("gap_report").main(["--grid", "configs/ablations/dyck.yaml", "--out", str(dyck_grid.out)]) == 0
    text = (dyck_grid.out / "gap.md").read_text()
    gaps = [dyck_grid.summaries[("dyck/pretrain/mlm", seed)]["val/gap/acc_dist_8_plus"] for seed in SEEDS]
    mean, half = ci95(gaps)
    row = next(line for line in text.splitlines() if line.startswith("| dyck/pretrain/mlm |"))
    assert f"{100 * mean:.1f} ± {100 * half:.1f}" in row
    assert (dyck_grid.out / "gap_by_distance.png").stat().st_size > 10_000
    assert (dyck_grid.out / "gap_curves.png").stat().st_size > 10_000
