"""Dyck's claims at the research grid's recipe (configs/ablations/dyck.yaml), on 3 seeds: the language is
not saturated, and the grid tells objectives apart. (Its pages are rendered from the table:
tests/pages/test_dyck_pages.py.)"""

import pytest

from minibert.stats.intervals import accuracy_interval, difference_interval

pytestmark = pytest.mark.slow

SEEDS = (0, 1, 2)


def by_seed(grid, experiment: str, metric: str) -> dict[int, float]:
    return {seed: grid.summaries[(experiment, seed)][metric] for seed in SEEDS}


def test_the_bidirectional_mlm_stays_at_least_three_points_below_the_ceiling_on_every_seed(dyck_grid):
    assert dyck_grid.proc.returncode == 0, dyck_grid.proc.stderr
    runs = [dyck_grid.summaries[("dyck/pretrain/mlm", seed)] for seed in SEEDS]
    assert min(s["val/gap/acc"] for s in runs) >= 0.03, [s["val/gap/acc"] for s in runs]
    # and the distance to the Bayes predictor grows with the distance to the partner (a reference, not a
    # bound, on a category that the hidden partner decides): long-range structure is what is not learned
    behind = [{d: s[f"val/bayes/acc_{d}"] - s[f"val/acc_{d}"] for d in ("dist_1", "dist_8_plus")} for s in runs]
    assert all(b["dist_1"] < b["dist_8_plus"] for b in behind), behind


def test_token_and_span_masking_are_told_apart_beyond_their_intervals_on_the_same_questions(dyck_grid):
    """Both are graded on BERT's token-level questions of seed s's own validation set, so on each seed they
    share one ceiling and the difference of their gaps is the difference of their accuracies. Every seed
    draws its own set, so the paired interval over seeds holds the sampling error (no fixed-set term)."""
    mlm, span = (by_seed(dyck_grid, f"dyck/pretrain/{name}", "val/acc") for name in ("mlm", "span"))
    for s in SEEDS:
        ceilings = {dyck_grid.summaries[(f"dyck/pretrain/{e}", s)]["val/ceiling/acc"] for e in ("mlm", "span")}
        assert len(ceilings) == 1, (s, ceilings)
    assert len({dyck_grid.summaries[("dyck/pretrain/mlm", s)]["seeds"]["val"] for s in SEEDS}) == len(SEEDS)
    a, b = accuracy_interval(list(mlm.values()), None), accuracy_interval(list(span.values()), None)
    assert a.lo > b.hi or b.lo > a.hi, (a, b)  # the two 95% intervals do not overlap
    paired = difference_interval(mlm, span, None, None)
    assert paired.lo > 0 or paired.hi < 0, paired


def test_pretraining_pays_for_fine_tuning_on_every_seed(dyck_grid):
    full = by_seed(dyck_grid, "dyck/finetune/mlm-full", "val/acc")
    none = by_seed(dyck_grid, "dyck/finetune/no_pretrain", "val/acc")
    assert all(full[s] > none[s] for s in SEEDS), (full, none)
