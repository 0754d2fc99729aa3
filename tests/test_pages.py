"""The structural-probe, length and real-text pages are what their committed grids say: rebuilt from the committed
`ablation.csv` alone, they come out as committed (above the notes), and the claims read the intervals."""

import shutil
from pathlib import Path

import pytest

from minibert.ablation.intervals import Interval
from scripts import length, structure, text
from scripts.bert_tables import NOTES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("script", [structure, length, text], ids=["structure", "length", "text"])
def test_a_page_rebuilt_from_the_committed_csv_is_the_committed_page(script, tmp_path):
    name = script.__name__.rsplit(".", 1)[-1]
    out = tmp_path / name
    out.mkdir()
    for f in ("ablation.csv", "ablation.md", "corpus.json"):  # corpus.json: the text grid's corpus record
        if (ROOT / "results" / name / f).is_file():
            shutil.copy(ROOT / "results" / name / f, out / f)
    if (ROOT / "results" / name / "comparisons").is_dir():  # compare.py's sized comparisons, read by the page
        shutil.copytree(ROOT / "results" / name / "comparisons", out / "comparisons")
    assert script.main(["--out", str(out)]) == 0
    rebuilt = (tmp_path / f"{name}.md").read_text().split(NOTES)[0]
    committed = (ROOT / "results" / f"{name}.md").read_text().split(NOTES)[0]
    assert rebuilt == committed
    assert (out / next(out.glob("*_by_*.png")).name).stat().st_size > 10_000  # the figure was drawn


def test_a_verdict_needs_the_whole_interval_on_one_side():
    assert structure.verdict(Interval(0.1, 0.01, 0.2, 3)) == "holds"
    assert structure.verdict(Interval(-0.1, -0.2, -0.01, 3)) == "does not hold"
    assert structure.verdict(Interval(0.1, -0.01, 0.2, 3)) == "undecided"
    iv = structure.paired_interval([0.5, 0.6, 0.7])  # the pages' interval: t(0.975, 2) = 4.303, sd 0.1
    assert iv.mean == pytest.approx(0.6) and iv.hi - iv.mean == pytest.approx(4.303 * 0.1 / 3**0.5, abs=1e-3)
