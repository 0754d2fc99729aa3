"""BERT's ablation tables (Tables 7, 8, 5) and the objectives page, as templates over the grids' tables: each cell is
its experiment's mean over seeds, found by the table's axes; the verdicts follow the paired intervals' signs on
constructed tables; the committed pages are what the committed tables render to."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from minibert.report.render import Renderer
from minibert.tables import table
from minibert.tables.stats import number
from tests.templates import copy_templates

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"probes": "results/probes/probes.md", "masking": "results/masking/masking.md",
         "objectives": "results/objectives.md", "tasks": "results/objectives/pretraining_tasks.md"}  # fmt: skip
GRIDS = {"probes": "results/probes", "masking": "results/masking", "objectives": "results/objectives"}


def committed(grid: str) -> pd.DataFrame:
    return table.read(ROOT / GRIDS[grid])


def render(tmp_path: Path, page: str, **tables: pd.DataFrame) -> str:
    """`page` rendered in a copy of the repository whose grids hold `tables` (the rest: the committed tables)."""
    for out in [*GRIDS.values(), "results"]:
        (tmp_path / out).mkdir(parents=True, exist_ok=True)
        for name in (*table.READ, "run.json", "grid.yaml"):
            if (ROOT / out / name).is_file():
                shutil.copy(ROOT / out / name, tmp_path / out / name)
    for grid, frame in tables.items():
        table.write(frame, tmp_path / GRIDS[grid])
    template = Path(PAGES[page] + ".j2")
    copy_templates(tmp_path, template)
    return Renderer(tmp_path).render(template)[1]


def randomised(grid: str, seed: int = 0) -> pd.DataFrame:
    """The committed table of `grid` with every validation figure replaced by a random accuracy."""
    frame = committed(grid)
    val = frame.metric.str.startswith("val/")
    frame.loc[val, "value"] = np.random.default_rng(seed).uniform(0.05, 0.95, val.sum())
    return frame


def values(frame: pd.DataFrame, metric: str = "val/acc", category: str = "", **where) -> dict[int, float]:
    rows = frame[(frame.metric == metric) & (frame.category == category)]
    for column, value in where.items():
        rows = rows[rows[column] == value]
    assert rows.experiment.nunique() == 1, where
    return dict(zip(rows.seed.astype(int), rows.value))


def shown(v: dict[int, float]) -> str:
    """How a page writes a figure: its mean over seeds in points, then each seed's."""
    return f"{number(np.mean(list(v.values())))} ("


def seeds(v: dict[int, float]) -> str:
    return " / ".join(number(v[s]) for s in sorted(v))


def row(text: str, label: str) -> list[str]:
    """The cells of the Markdown table row that starts with `label` (the first such row)."""
    line = next(line for line in text.splitlines() if line.startswith(f"| {label} |"))
    return [c.strip() for c in line.strip().strip("|").split("|")][1:]


def test_each_probes_cell_is_its_experiments_mean_and_the_best_probe_is_the_highest_mean(tmp_path):
    frame = randomised("probes")
    text = render(tmp_path, "probes", probes=frame)
    labels = {"**fine-tuning, every parameter** (the paper's way)": {"regime": "full"},
              "layer 2 (last), [CLS]: the `frozen` regime (fine-tuning budget)": {"regime": "frozen"},
              "embeddings, mean": {"features": "emb", "pooling": "mean"},
              "layer 2 (last), [CLS] (probe budget)": {"features": "layer2", "pooling": "cls"},
              "concat layers 1-2, max": {"features": "concat2", "pooling": "max"}}  # fmt: skip
    for label, where in labels.items():
        for cell, language in zip(row(text, label), ("pairs", "dyck"), strict=True):
            v = values(frame, language=language, **where)
            assert cell.startswith(shown(v)) and cell.endswith(seeds(v)), (label, language, cell)
    probes = frame[(frame.regime == "probe") & (frame.metric == "val/acc") & (frame.category == "")]
    for language, name in (("pairs", "bracket pairs (seed language)"), ("dyck", "Dyck (4 types, 32 tokens)")):
        means = probes[probes.language == language].groupby(["features", "pooling"]).value.mean()
        features, pooling = means.idxmax()
        best = values(frame, language=language, features=features, pooling=pooling)
        assert f": {shown(best)}" in row(text, name)[0], (language, features, pooling)


def test_masking_rows_read_the_splits_rates_from_the_table_and_each_cell_is_its_mean(tmp_path):
    frame = randomised("masking")
    text = render(tmp_path, "masking", masking=frame)
    pairs = text.split("### Dyck")[0]
    pretrain = frame[(frame.stage == "pretrain") & (frame.language == "pairs")]
    for split, rates in pretrain.groupby("split")[["p_mask", "p_random"]].first().iterrows():
        mask, rnd = (number(rates[k], 100, 0) for k in ("p_mask", "p_random"))
        same = number(abs(1 - rates.p_mask - rates.p_random), 100, 0)
        lines = [line for line in pairs.splitlines() if line.startswith(f"| {mask}% | {same}% | {rnd}% |")]
        assert len(lines) == 1, split
        cells = [c.strip() for c in lines[0].strip().strip("|").split("|")][3:]
        stat = {"stage": "pretrain"}, {"regime": "full"}, {"regime": "probe"}
        expected = [values(frame, language="pairs", split=split, **stat[0]),
                    values(frame, "val/gap/acc", language="pairs", split=split, **stat[0]),
                    values(frame, language="pairs", split=split, **stat[1]),
                    values(frame, language="pairs", split=split, **stat[2])]  # fmt: skip
        for cell, v in zip(cells, expected, strict=True):
            assert cell.startswith(shown(v)), (split, cell)


def sided(frame: pd.DataFrame, language: str, offsets: dict[str, float]) -> pd.DataFrame:
    """`frame` with every probe of `language` at one figure per seed, plus each split's offset."""
    frame = frame.copy()
    base = {0: 0.6, 1: 0.62, 2: 0.61}
    for split in frame.split.dropna().unique():
        rows = (frame.language == language) & (frame.split == split) & (frame.regime == "probe")
        rows &= (frame.metric == "val/acc") & (frame.category == "")
        frame.loc[rows, "value"] = frame.loc[rows, "seed"].map(base) + offsets.get(split, 0.0)
    return frame


def test_masking_verdicts_follow_the_paired_intervals_signs(tmp_path):
    frame = sided(committed("masking"), "pairs", {"80-20-0": 0.2, "0-0-100": -0.2})
    text = render(tmp_path, "masking", masking=frame)
    line = next(line for line in text.splitlines() if line.startswith("- **bracket pairs"))
    probe = line.split("Probe: ")[1]
    assert probe.startswith("better than 80-10-10: 80-20-0; worse: 0-0-100; not told apart: 100-0-0, 80-0-20, 0-20-80")
    (tmp_path / "again").mkdir()
    flipped = render(tmp_path / "again", "masking", masking=sided(frame, "pairs", {"80-20-0": -0.2}))
    line = next(line for line in flipped.splitlines() if line.startswith("- **bracket pairs"))
    assert "Probe: better than 80-10-10: none; worse: 80-20-0;" in line


@pytest.mark.parametrize(("nsp_gain", "verdict"), [(0.2, "holds"), (-0.2, "does not hold"), (0.0, "undecided")])
def test_the_nsp_verdict_follows_the_paired_interval(tmp_path, nsp_gain, verdict):
    frame = committed("objectives")
    full = (frame.stage == "finetune") & (frame.regime == "full") & (frame.metric == "val/acc") & (frame.category == "")
    mlm, bert = full & (frame.objective == "MaskedLM"), full & (frame.objective == "Combined")
    base = {0: 0.6, 1: 0.65, 2: 0.62}
    frame.loc[mlm, "value"] = frame.loc[mlm, "seed"].map(base)
    frame.loc[bert, "value"] = frame.loc[bert, "seed"].map(base) + nsp_gain
    text = render(tmp_path, "tasks", objectives=frame)
    assert f"by 0.1 to 3.5): {verdict}\n  here." in text
    assert row(text, "MLM + NSP (BERT)")[0].startswith(shown(values(frame, objective="Combined", regime="full")))


def test_each_objectives_cell_is_its_experiments_mean(tmp_path):
    frame = randomised("objectives")
    text = render(tmp_path, "objectives", objectives=frame)
    for label, objective in (("mlm", "MaskedLM"), ("rtd (ELECTRA)", "ReplacedTokenDetection"), ("nsp", "NextSentence")):
        own, frozen, full = row(text, label)
        assert own.split(" ", 2)[-1].startswith(shown(values(frame, objective=objective, stage="pretrain")))
        for cell, regime in ((frozen, "frozen"), (full, "full")):
            v = values(frame, objective=objective, stage="finetune", regime=regime)
            assert cell.startswith(shown(v)) and cell.endswith(seeds(v))
    assert row(text, "no pre-training")[2].startswith(shown(values(frame, regime="no_pretrain")))
