"""The Dyck dashboard read in two minutes: an accuracy that is not the cloze test's (no exact ceiling beside it,
ELECTRA's detection) is labelled and drawn apart, losses of very different scales share a log axis, categories
come in named groups with the exact ceiling drawn where one is logged, and an arm keeps its colour across panels."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from minibert.report import figures, grid_report
from minibert.tables.query import Data

ROOT = Path(__file__).resolve().parents[2]


def dyck() -> Data:
    return Data.load(ROOT / "results/dyck")


def test_an_accuracy_with_no_ceiling_is_its_own_tasks_in_the_table_and_the_curves():
    data = dyck()
    own = {e for e in data.experiments() if data.find("val/acc", experiment=e) is not None
           and data.find("val/ceiling/acc", experiment=e) is None}  # fmt: skip
    assert own  # the committed grid has one (ELECTRA's detection): the check is not vacuous
    section = grid_report.overview(data)
    at = section.header.index("accuracy")
    labelled = {row[0] for row in section.rows if row[at].endswith("(own task)")}
    assert labelled == own and "(own task)" in section.note
    panels = grid_report.learning_curves(data, data.curves)
    apart = {arm for name, _, arms in panels if "own task" in name for arm in arms}
    together = {arm for name, ylabel, arms in panels if "own task" not in name and "acc" in ylabel for arm in arms}
    assert apart == {e for e in own if e in {a for _, _, arms in panels for a in arms}} and not apart & together


def test_losses_a_scale_apart_share_a_log_axis_and_close_ones_a_linear_one():
    steps = np.arange(3)
    near = {
        "a": (steps, np.ones(3), np.full(3, 0.9), np.full(3, 1.1)),
        "b": (steps, np.ones(3) * 2, *[np.ones(3) * 2] * 2),
    }
    far = {**near, "c": (steps, np.ones(3) * 20, *[np.ones(3) * 20] * 2)}
    assert not figures.log_scale("train/loss", near) and figures.log_scale("train/loss", far)
    assert not figures.log_scale("val/acc, points", far)  # an accuracy stays in points


def test_categories_come_grouped_and_with_the_exact_ceiling_where_one_is_logged():
    data = dyck()
    metric, panels = grid_report.by_category(data)
    for name, labels, arms, groups, bounds in panels:
        starts = [g for i, g in enumerate(groups) if i == 0 or g != groups[i - 1]]
        assert len(starts) == len(set(starts)), name  # each group in one run of categories
        assert len(labels) == len(groups) and set(bounds) == set(arms), name  # a ceiling per arm, its own
        assert all(len(b) == len(labels) for b in bounds.values()), name
        assert any(b is not None for each in bounds.values() for b in each), name
    pretrain = next(p for p in panels if p[0].startswith("pretrain"))
    assert {"depth", "dist", "kind"} <= set(pretrain[3])


def test_an_arm_keeps_its_colour_across_panels_and_its_fine_tuning_takes_its_pre_trainings():
    panels = [("a", "", {"x/pretrain/mlm": 0, "x/pretrain/span": 0}), ("b", "", {"x/finetune/span-full": 0})]
    colour = figures._colours(panels, 2)
    assert colour["x/finetune/span-full"] == colour["x/pretrain/span"] != colour["x/pretrain/mlm"]
