"""The per-category figure draws no bound that is not one: read off the matplotlib objects it actually drew, every
black bar is the exact ceiling the arm(s) under it log, an arm that logs none has no bar over it, and no arm's
mean rises above its own bar by more than its interval's upper half-width (an accuracy beyond its exact ceiling
is a bug, beyond noise)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from minibert.report import figures, grid_report
from minibert.tables.query import Data

ROOT = Path(__file__).resolve().parents[2]
CEILING = "val/ceiling/acc"


def points(ax, arms: dict) -> list[tuple[float, float, float, object]]:
    """(x, mean, upper end of its interval, its Stat) of every point the panel's errorbars drew, in the drawing's
    units; the containers come in the panel's arm order, skipping an arm with nothing to show."""
    shown = [found for found in arms.values() if any(s is not None for s in found)]
    containers = [c for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    assert len(containers) == len(shown)
    found = []
    for container, stats in zip(containers, shown):
        line, _, (bars,) = container.lines
        xs, ys = line.get_xdata(), line.get_ydata()
        tops = [max(seg[:, 1]) for seg in bars.get_segments()]  # each vertical bar: (x, lo) to (x, hi)
        stats = [s for s in stats if s is not None]
        assert len(xs) == len(ys) == len(tops) == len(stats)
        found += list(zip(xs, ys, tops, stats))
    return found


def ceilings(ax) -> list[tuple[float, float, float]]:
    """(left, right, height) of every horizontal segment drawn (the hlines; an errorbar's bars are vertical)."""
    found = []
    for collection in ax.collections:
        for seg in collection.get_segments():
            (x0, y0), (x1, y1) = seg[0], seg[-1]
            if y0 == y1 and x0 != x1:
                found.append((min(x0, x1), max(x0, x1), y0))
    return found


def check_panel(ax, arms: dict, data: Data) -> tuple[int, int]:
    """Every bar over exactly the points whose arms log that ceiling, every point with a logged ceiling under
    exactly one bar, none above its own beyond its interval; returns (bars, points bounded)."""
    bars, bounded = ceilings(ax), 0
    for x, mean, top, s in points(ax, arms):
        scale = 100 if s.proportion else 1
        logged = data.find(CEILING, s.category, experiment=s.experiment)
        over = [b for b in bars if b[0] <= x <= b[1]]
        if logged is None or np.isnan(logged.mean):
            assert not over, (s.experiment, s.category, over)  # an arm with no ceiling gets none
            continue
        assert len(over) == 1, (s.experiment, s.category, over)
        height = over[0][2]
        assert height == pytest.approx(scale * logged.mean), (s.experiment, s.category)  # its own, not pooled
        assert mean - height <= (top - mean) + 1e-9, (s.experiment, s.category, mean, height, top)
        bounded += 1
    for left, right, _ in bars:  # no bar stands over an empty slot
        assert any(left <= x <= right for x, *_ in points(ax, arms)), (left, right)
    return len(bars), bounded


@pytest.mark.parametrize("grid", ["results", "results/dyck"])
def test_a_committed_grids_ceilings_are_each_arms_own_and_bound_its_points(grid, drawn, tmp_path):
    """Both grids hold a causal arm, whose left-only ceiling at openers sits beside bidirectional arms' ceilings:
    no line pooled from them may stand below the points it claims to bound."""
    data = Data.load(ROOT / grid)
    metric, panels = grid_report.by_category(data)
    figures.categories(tmp_path / "k.png", panels, f"{metric}, points", "by category")
    (fig,) = drawn
    bounded = 0
    for ax, (_, _, arms, _, _) in zip(fig.axes, panels):
        bounded += check_panel(ax, arms, data)[1]
    assert bounded > 0  # the committed table logs ceilings: the check is not vacuous


def rows(arms: dict[str, tuple[float, float | None]]) -> list[dict]:
    """A table of arms, each (accuracy, exact ceiling or None) on openers, three seeds a little apart."""
    out = []
    for e, (acc, ceiling) in arms.items():
        for s in range(3):
            logged = [("val/acc", acc + 0.01 * (s - 1))] + ([(CEILING, ceiling)] if ceiling is not None else [])
            for category in ("", "opener"):
                out += [{"grid": "g", "experiment": e, "stage": "pretrain", "seed": s, "val_seed": 0, "metric": m,
                         "category": category, "value": v, "n": 1000, "run": f"{e}-{s}", "code": ""}
                        for m, v in logged]  # fmt: skip
    return out


def test_arms_bounded_apart_get_a_bar_each_and_equal_neighbours_share_one(drawn, tmp_path):
    arms = {"x/causal": (0.55, 0.60), "x/bi": (0.85, 0.90), "x/bi_again": (0.86, 0.90), "x/none": (0.70, None)}
    data = Data(pd.DataFrame(rows(arms)))
    metric, panels = grid_report.by_category(data)
    figures.categories(tmp_path / "k.png", panels, f"{metric}, points", "by category")
    (fig,) = drawn
    ((_, _, drawn_arms, _, _),) = panels
    bars, bounded = check_panel(fig.axes[0], drawn_arms, data)
    assert (bars, bounded) == (2, 3)  # the causal arm's, and one over both bidirectional arms; none over x/none
    heights = sorted(h for *_, h in ceilings(fig.axes[0]))
    assert heights == pytest.approx([60.0, 90.0])
