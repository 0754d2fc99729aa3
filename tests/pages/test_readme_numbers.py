"""The README cannot drift from the data: it is rendered from the grids' tables (`configs/pages/README.md.j2`),
its sentences name the arm the table favours (checked on a constructed table where the favoured arm changes),
and its pandas example runs as written on the committed tables."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from minibert.report.render import Renderer
from minibert.tables import saved, table
from tests.templates import copy_templates

ROOT = Path(__file__).resolve().parents[2]
GAP, MLM, SPAN = "val/gap/acc", "dyck/pretrain/mlm", "dyck/pretrain/span"
QUOTED = "results/compare/mlm-vs-span"  # the sequential comparison the README's Dyck sentence quotes


def winner_on_span_masking(text: str) -> str:
    """The arm the README's first Dyck comparison names: '... MLM against span masking on the gap, X better after'."""
    found = re.search(r"MLM against span masking on the gap,\s+(.+?) better after", text)
    assert found, "the README no longer compares MLM with span masking on the gap"
    return found[1]


@pytest.mark.parametrize("swapped", [False, True])
def test_the_dyck_sentence_names_the_arm_with_the_smaller_gap(tmp_path, swapped):
    """On a copy of the committed tables whose MLM and span-masking gaps are swapped seed by seed in the
    comparison the README quotes, the README names span masking the better arm; unswapped, MLM (span masking's
    gap is about 22 points larger)."""
    copy_templates(tmp_path, "README.md.j2")
    for made in ROOT.glob("results/**/run.json"):
        into = tmp_path / made.parent.relative_to(ROOT)
        into.mkdir(parents=True, exist_ok=True)
        for name in ("run.json", "grid.yaml", "objective.yaml", *table.READ):
            if (made.parent / name).is_file():
                shutil.copy(made.parent / name, into / name)
        for folder in ("comparisons", saved.FOLDER):  # the comparisons the README quotes; the runs' settings
            if (made.parent / folder).is_dir():
                shutil.copytree(made.parent / folder, into / folder, dirs_exist_ok=True)
    shutil.copy(ROOT / "results/measurements.yaml", tmp_path / "results/measurements.yaml")  # figures it quotes
    if swapped:
        frame = table.read(ROOT / QUOTED)
        gap = (frame["metric"] == GAP) & (frame["category"] == "")
        mlm, span = gap & (frame["experiment"] == MLM), gap & (frame["experiment"] == SPAN)
        by_seed = {e: frame[rows].set_index("seed")["value"] for e, rows in ((MLM, mlm), (SPAN, span))}
        frame.loc[mlm, "value"] = frame.loc[mlm, "seed"].map(by_seed[SPAN]).to_numpy()
        frame.loc[span, "value"] = frame.loc[span, "seed"].map(by_seed[MLM]).to_numpy()
        table.write(frame, tmp_path / QUOTED)
    _, text = Renderer(tmp_path).render(Path("README.md.j2"))
    assert winner_on_span_masking(text) == ("span masking" if swapped else "MLM")


def test_the_results_pandas_example_runs_on_the_committed_table(monkeypatch):
    (block,) = re.findall(r"```python\n(.*?)```", (ROOT / "docs/results.md").read_text(), re.S)
    monkeypatch.chdir(ROOT)
    lines = block.strip().splitlines()
    scope: dict = {}
    exec("\n".join(lines[:-1]), scope)  # the README's own example
    means = eval(lines[-1], scope)
    assert means[("SpanMaskedLM", False)] > means[("MaskedLM", False)] > 0  # span masking's gap is the larger
    assert len(means) == 4  # MLM, causal MLM, span masking, next-token LM
