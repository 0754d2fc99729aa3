"""Which way a figure is better is declared (minibert.stats.scoreboard), for every metric the committed tables
hold: gaps, losses and wall times are better low, accuracies and probe scores high, counts are not scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from minibert.stats import scoreboard
from minibert.tables import table
from minibert.tables.query import Data
from minibert.training.metrics import CategoryAccuracy

ROOT = Path(__file__).resolve().parents[2]
METRICS = sorted({m for csv in ROOT.glob("results/**/results.csv") for m in table.read(csv.parent)["metric"].unique()})


@pytest.mark.parametrize("metric", METRICS)
def test_every_committed_metric_has_a_declared_kind(metric):
    kind = scoreboard.kind(metric)
    assert kind is not scoreboard.OTHER, metric
    parts = metric.split("/")
    if "gap" in parts or parts[-1] == "loss" or metric == "wall_time_s":
        assert not kind.higher_is_better
    elif parts[-1].startswith("acc"):
        assert kind.higher_is_better and kind.higher_is_better == CategoryAccuracy.higher_is_better


def test_a_gap_is_judged_lower_is_better_and_an_accuracy_higher():
    data = Data.load(ROOT / "results/dyck")
    mlm, span = {"experiment": "dyck/pretrain/mlm"}, {"experiment": "dyck/pretrain/span"}
    assert data.diff("val/gap/acc", mlm, span).lower_is_better and not data.diff("val/acc", mlm, span).lower_is_better


def test_a_figure_nothing_declares_reads_higher_is_better():
    assert scoreboard.kind("val/my_plugin_score") is scoreboard.OTHER and not scoreboard.lower_is_better("x/y")
