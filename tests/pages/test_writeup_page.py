"""The write-up page model (minibert.report.writeup) on the committed default grid: every published figure it
compares with is the one the grid's config quotes (`reference:`), never a number typed on the page; the farthest
difference and each row's word agree with brute force over the same intervals."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from minibert.ablation.grid import load_grid
from minibert.report.writeup import ROWS, WriteUp
from minibert.tables import table
from minibert.tables.query import Data

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def grid():
    return load_grid(ROOT / "configs/ablations/default.yaml", ROOT)


def page(g=None) -> WriteUp:
    return WriteUp(Data.load(ROOT / "results"), lambda: Data.load(ROOT / "results/probes"), g or grid())


def test_every_published_figure_is_the_grids_quote():
    w = page()
    quoted = {(e.name, key): v for e in grid().experiments for key, v in e.reference.items()}
    shown = [(w.roles.get(e, e), key) for _, parts in ROWS for e, key, _ in parts if (w.roles.get(e, e), key) in quoted]
    assert len(w.compared) == len(shown) > 10
    for c, (e, key) in zip(w.compared, shown, strict=True):
        assert c.published == quoted[(e, key)] and c.category == table.split(key)[1]


def test_a_changed_quote_changes_the_page():
    g = grid()
    moved = [replace(e, reference={**e.reference, "val/acc": 0.5}) if e.name == "finetune/full" else e
             for e in g.experiments]  # fmt: skip
    w = page(replace(g, experiments=moved))
    row = next(r for r in w.rows if r[0] == "fine-tune, everything (the paper's way)")
    assert row[3] == "50.0" and row[4] != "within noise"


def test_the_farthest_difference_and_the_words_follow_the_intervals():
    w = page()
    proportions = [c for c in w.compared if c.ours.proportion]
    assert abs(w.far.ours.mean - w.far.published) == max(abs(c.ours.mean - c.published) for c in proportions)
    for c in w.compared:
        within = c.against.lo <= 0 <= c.against.hi
        assert (c in w.noisy) == within and (c.word in ("within noise", "equal")) == within


def test_the_readings_the_page_words_follow_the_figures():
    w = page()
    assert w.beyond_noise == sum(not c.against.lo <= 0 <= c.against.hi for c in w.compared)
    c = w.far
    spread = {s: 0.5 + 0.1 * s for s in range(3)}  # SD 0.1: the seeds disagree
    assert replace(c, ours=replace(c.ours, values=spread)).seeds_disagree
    assert not replace(c, ours=replace(c.ours, values={0: 0.5, 1: 0.51, 2: 0.52})).seeds_disagree
    assert not replace(c, ours=replace(c.ours, values={0: 0.5})).seeds_disagree  # one seed disagrees with nothing
    several = next(c for c in w.compared if "/" in c.label and c.category)
    assert several.part == f" ({several.category})" and replace(several, label="one figure").part == ""


def test_the_probes_table_is_read_only_for_the_rows():
    read = []
    w = WriteUp(Data.load(ROOT / "results"), lambda: read.append(1) or Data.load(ROOT / "results/probes"), grid())
    assert w.saturated in (True, False) and w.at_ceiling in (True, False) and not read
    assert w.rows and read == [1]
