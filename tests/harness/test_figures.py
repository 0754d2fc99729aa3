"""Every kind of figure the report engine draws keeps its words apart: on crowded inputs (a dozen arms that
agree, long names, many categories) no two pieces of text overlap, so a reader never sees a label on a label."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np

from minibert.report import figures
from minibert.stats.intervals import Interval
from minibert.tables.query import Diff, Stat

ARMS = [f"objective number {i} with a long descriptive name" for i in range(12)]


def stat(mean: float, spread: float = 0.02, experiment: str = "e") -> Stat:
    values = {s: mean + spread * (s - 1) for s in range(3)}
    return Stat(experiment, "val/acc", "", values, 1000.0, True, Interval(mean, mean - spread, mean + spread, 3))


def texts(fig) -> list:
    """(text, its box on the canvas) of every visible, non-empty piece of text in the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    unseen = set()  # labels of ticks outside the axes' view: kept by matplotlib, never drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not lo <= tick.get_loc() <= hi:
                    unseen |= {id(tick.label1), id(tick.label2)}
    found = []
    for t in fig.findobj(matplotlib.text.Text):
        if t.get_visible() and t.get_text().strip() and id(t) not in unseen:
            found.append((t.get_text(), t.get_window_extent(renderer)))
    return found


def overlaps(fig) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes share more than a pixel each way (a tick label may touch the one round the
    axes' corner)."""
    boxes = [(t, b.expanded(1, 1).padded(-1)) for t, b in texts(fig)]
    pairs = itertools.combinations(boxes, 2)
    return [(a, b) for (a, p), (b, q) in pairs if p.width > 0 and q.width > 0 and p.overlaps(q)]


def test_scatter_of_a_dozen_arms_that_agree(drawn, tmp_path):
    # the validity study's case: arms whose effects sit on top of one another in both settings
    effect = [Interval(m, m - 0.02, m + 0.03, 3) for m in np.linspace(0.0, 0.02, len(ARMS))]
    points = {a: (effect[i], effect[-1 - i]) for i, a in enumerate(ARMS)}
    panel = (
        "Dyck cloze against text cloze",
        "effect on Dyck's cloze, points",
        "effect on text's cloze, points",
        points,
    )
    figures.scatter(tmp_path / "x.png", [panel] * 2, "each arm against MLM")
    assert drawn and not overlaps(drawn[0])


def test_forest_lines_curves_and_categories_on_crowded_inputs(drawn, tmp_path):
    diffs = [(f"{a} against {b}", Diff(stat(0.8), stat(0.7), Interval(0.1, 0.05, 0.15, 3), False, None))
             for a, b in zip(ARMS, reversed(ARMS))]  # fmt: skip
    figures.forest(tmp_path / "f.png", diffs, "every comparison of the grid")
    series = {a: [(x, stat(0.5 + 0.01 * i + 0.001 * x)) for x in (1, 2, 4, 8)] for i, a in enumerate(ARMS)}
    figures.lines(tmp_path / "l.png", series, "budget, multiples of the default", "accuracy, points", "by budget")
    steps = np.arange(10, 610, 10)
    band = (steps, np.exp(-steps / 200), np.exp(-steps / 180), np.exp(-steps / 220))
    panels = [(f"pretrain: train/loss ({k} of 4)", "train/loss", {a: band for a in ARMS[:8]}) for k in range(1, 5)]
    figures.curves(tmp_path / "c.png", panels, "learning curves")
    labels = ["opener", "closer", *(f"partner at distance {d}" for d in ("1", "2-3", "4-7", "8+")),
              *(f"depth {d}" for d in range(1, 5)), "kept token", "[MASK]", "random token"]  # fmt: skip
    arms = {a: [stat(0.5 + 0.03 * j) for j in range(len(labels))] for a in ARMS[:8]}
    groups = ["", "", *["partner"] * 4, *["depth"] * 4, *["kind"] * 3]  # named groups, and the single ones
    logged = [0.9, 0.95, *[None] * 8, 1.0, 0.7, 0.7]  # the exact ceiling where one is logged
    bounds = {a: logged for a in arms}  # each arm's own
    figures.categories(tmp_path / "k.png", [("pretrain: val/acc by category", labels, arms, groups, bounds)],
                       "val/acc, points", "val/acc by category")  # fmt: skip
    assert len(drawn) == 4
    for fig in drawn:
        assert not overlaps(fig), fig.texts[0].get_text() if fig.texts else fig
