"""The length, structural-probe and real-text pages (results/{length,structure,text}.md) are declared over their
grids' tables: they render from the committed tables as committed; on small constructed tables a verdict names the
arm the table favours (and says "undecided" when it favours neither), a cell equals the table's mean, and the text
page reads Dyck's ranking against text's from both tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from minibert.report.render import Renderer
from minibert.tables import query, table
from tests.templates import copy_templates

ROOT = Path(__file__).resolve().parents[2]
PAGE_GRIDS = {"length": ["length"], "structure": ["structure"], "text": ["text", "dyck"]}


def render(root: Path, page: str, change: dict[tuple, np.ndarray]) -> tuple[str, dict[str, pd.DataFrame]]:
    """Render `page` in a repository under `root` whose tables are the committed ones (the page's own grid: seeds
    0-2), with the values of each selection in `change` ((grid, experiment, metric) -> one value per seed) replaced;
    a replaced figure loses its parts per validation document, which would no longer add up to it."""
    copy_templates(root, f"results/{page}.md.j2")
    frames = {}
    for grid in PAGE_GRIDS[page]:
        frame = table.read(ROOT / "results" / grid)
        if grid == page:
            frame = frame[frame["seed"] < 3].sort_values("seed", kind="stable").copy()
        for (g, experiment, metric), values in change.items():
            if g == grid:
                rows = (frame["experiment"] == experiment) & (frame["metric"] == metric) & (frame["category"] == "")
                assert rows.sum() == 3, (experiment, metric)
                frame.loc[rows, "value"] = values
                parts = (frame["experiment"] == experiment) & (frame["metric"] == query.by_document(metric))
                frame = frame[~parts]
        table.write(frame, root / "results" / grid)
        if (ROOT / "results" / grid / "corpus.json").is_file():  # the corpus record the text page quotes
            shutil.copy(ROOT / "results" / grid / "corpus.json", root / "results" / grid / "corpus.json")
        if (ROOT / "results" / grid / "comparisons").is_dir():  # records the page quotes
            shutil.copytree(ROOT / "results" / grid / "comparisons", root / "results" / grid / "comparisons")
        frames[grid] = frame
    return Renderer(root).render(Path(f"results/{page}.md.j2"))[1], frames


def row(text: str, start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [c.strip() for c in line.strip("|").split("|")]


def three(rng: np.random.Generator, low: float, high: float, shift: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Per-seed values of two arms: the second above the first by `shift` (plus a little noise), or, for None, by
    differences that average to zero (no arm favoured)."""
    base = rng.uniform(low, high) + rng.normal(0, 0.002, 3)
    other = base + shift + rng.normal(0, 0.002, 3) if shift is not None else base + np.array([0.01, -0.01, 0.0])
    return base, other


@pytest.mark.parametrize("winner", ["rotary (RoPE)", "learned", None])
def test_length_the_verdict_names_the_scheme_with_the_smaller_gap_and_cells_equal_the_table(tmp_path, winner):
    rng = np.random.default_rng(len(str(winner)))
    small, large = three(rng, 0.15, 0.4, 0.08 if winner else None)
    rotary, learned = (small, large) if winner != "learned" else (large, small)
    metric = "val/length_48/gap/acc"
    text, frames = render(tmp_path, "length", {("length", "length/pretrain/mlm/rotary", metric): rotary,
                                               ("length", "length/pretrain/mlm/learned", metric): learned})  # fmt: skip
    cells = row(text, "| MLM | rotary (RoPE) | 48 |")
    assert cells[-1] == (f"{winner} better" if winner else "undecided")
    if winner:  # A − B as measured: rotary's gap minus learned's
        assert cells[3].startswith("-" if winner == "rotary (RoPE)" else "+")
    # the gap table's cell at 48 is the table's mean over seeds, in points
    frame = frames["length"]
    mean = frame[(frame["experiment"] == "length/pretrain/mlm/rotary") & (frame["metric"] == metric)
                 & (frame["category"] == "")]["value"].mean()  # fmt: skip
    gaps = text.split("## MLM: gap to the ceiling by length")[1]
    assert row(gaps, "| rotary (RoPE) |")[4].split(" ")[0] == f"{100 * mean:.1f}"


@pytest.mark.parametrize("winner", ["MLM", "next-token LM", None])
def test_structure_the_depth_verdict_names_the_encoder_with_the_higher_spearman(tmp_path, winner):
    rng = np.random.default_rng(len(str(winner)))
    low, high = three(rng, 0.5, 0.7, 0.15 if winner else None)
    mlm, nt = (high, low) if winner == "MLM" else (low, high)
    metric = "val/probe/layer1/depth_spearman"
    text, frames = render(tmp_path, "structure", {("structure", "structure/probe/mlm", metric): mlm,
                                                  ("structure", "structure/probe/next_token", metric): nt})  # fmt: skip
    cells = row(text, "| depth Spearman | MLM, layer 1 | next-token LM, layer 1 |")
    assert cells[-1] == (f"{winner} better" if winner else "undecided")
    assert float(cells[3].split(" ")[0]) == pytest.approx((mlm - nt).mean(), abs=6e-4)
    depth = text.split("## depth Spearman")[1]
    assert row(depth, "| next-token LM |")[3].split(" ")[0] == f"{nt.mean():.3f}"


@pytest.mark.parametrize("winner", ["MLM", "next-token LM", None])
def test_text_the_ranking_row_reads_both_tables_and_says_whether_dyck_s_verdict_holds(tmp_path, winner):
    rng = np.random.default_rng(len(str(winner)))
    low, high = three(rng, 0.52, 0.6, 0.12 if winner else None)
    mlm, other = (high, low) if winner == "MLM" else (low, high)
    text, frames = render(tmp_path, "text", {("text", "text/finetune/mlm-full", "val/acc"): mlm,
                                             ("text", "text/finetune/next_token-full", "val/acc"): other})  # fmt: skip
    cells = row(text, "| fine-tuning: MLM vs next-token LM |")
    dyck = cells[1].split(" better")[0]  # Dyck's verdict, from the committed Dyck table
    assert cells[5] == (f"{winner} better" if winner else "undecided")
    undecided_on_dyck = cells[1].startswith("undecided")  # Dyck's verdict, held together with the page's others
    want = ("undecided on text" if not winner else "undecided on Dyck" if undecided_on_dyck
            else "holds" if winner == dyck else "reverses")  # fmt: skip
    assert cells[6] == want
    assert float(cells[2].split(" ")[0]) == pytest.approx(100 * (mlm - other).mean(), abs=0.06)
    # a pair a recorded comparison holds is read from its record's sign rule (ELECTRA won all 8 seeds), not again
    # from the grid's seeds, whose interval on the mean crosses zero
    recorded = row(text, "| fine-tuning: MLM vs ELECTRA |")
    assert recorded[5] == "ELECTRA better" and recorded[2].startswith("-2.9 (")


@pytest.mark.parametrize("shift", [0.05, -0.05])
def test_text_a_cloze_model_is_read_against_its_strongest_reference_not_chance(tmp_path, shift):
    frame = table.read(ROOT / "results/text")
    trigram = frame[(frame["experiment"] == "text/pretrain/mlm") & (frame["category"] == "")
                    & (frame["metric"] == "val/reference/left_right_trigram/acc")]["value"].mean()  # fmt: skip
    mlm = trigram + shift + np.array([0.004, -0.004, 0.0])
    text, _ = render(tmp_path, "text", {("text", "text/pretrain/mlm", "val/acc"): mlm})
    cells = row(text, "| MLM | 3 |")
    assert cells[-1] == ("MLM better" if shift > 0 else "left+right trigram better")
    assert cells[-2].startswith("+" if shift > 0 else "-")
    # causal MLM sees no right context: its baseline is the left bigram, and the trigram is not read
    causal = row(text, "| causal MLM (left context only) |")
    assert causal[5].startswith("not graded") and causal[-1] in ("causal MLM better", "left bigram better", "undecided")
