"""`python -m minibert.report` on bad input: a damaged table is one line naming its file, line and column; a folder
that is not a checkout is an error, never a silent pass; every error exits 2, and --check's "a page would change"
exits 1; nothing is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from minibert.report.render import main

ROOT = Path(__file__).resolve().parents[2]
GOOD = (ROOT / "results/pairs/results.csv").read_text().splitlines()[:40]


def _checkout(tmp_path: Path, lines: list[str]) -> Path:
    """A checkout of one grid whose table holds `lines`, and no page templates but its own report's."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("pages"))
    (tmp_path / "configs/pages").mkdir()
    (tmp_path / "results/pairs").mkdir(parents=True)
    (tmp_path / "results/pairs/results.csv").write_text("\n".join(lines) + ("\n" if lines else ""))
    return tmp_path


def _with(column: str, value: str, line: int = 5) -> list[str]:
    header = GOOD[0].split(",")
    cells = GOOD[line - 1].split(",")
    cells[header.index(column)] = value
    return [*GOOD[: line - 1], ",".join(cells), *GOOD[line:]]


def _without(column: str) -> list[str]:
    i = GOOD[0].split(",").index(column)
    return [",".join(c for j, c in enumerate(row.split(",")) if j != i) for row in GOOD]


@pytest.mark.parametrize(
    ("lines", "fragment"),
    [
        (_with("value", "abc", 5), "line 5, column value: 'abc' is not a number"),
        (_with("seed", "", 9), "line 9, column seed"),
        (_without("n"), "lacks the column(s) n"),
        (_without("metric"), "lacks the column(s) metric"),
        (GOOD[:1], "holds no rows"),
        ([], "not a results table"),
    ],
    ids=["text value", "no seed", "no n", "no metric", "header only", "empty file"],
)
def test_a_damaged_table_is_one_line_naming_where_with_status_2(tmp_path, capsys, lines, fragment):
    root = _checkout(tmp_path, lines)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    for argv in ([], ["--check"]):
        assert main(["--root", str(root), *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0] and "results/pairs/results.csv" in err[0]
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # nothing written


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("curves.csv", "", "not a curves table"),
        ("curves.csv", "experiment,seed\ne,0\n", "lacks the column(s) metric, step, value"),
        ("curves.csv", "experiment,seed,metric,step,value\ne,0,train/loss,ten,0.5\n", "line 2, column step"),
        ("code.csv", "", "not a code table"),
        ("code.csv", "code,file\nabc,minibert/model.py\n", "lacks the column(s) hash"),
        ("run.json", "{broken", "not JSON (line 1, column 2"),
        ("family.json", "{broken", "family.json: not JSON (line 1, column 2"),
        ("family.json", '{"declared": 3}', "`declared` must be a list of questions"),
        ("comparisons/x.json", "{}", "lacks design, looks"),
        ("comparisons/x.json", "[1]", "a JSON list, not an object"),
        ("comparisons/x.json", '{"design": {}, "looks": {}}', "its design does not read"),
    ],
    ids=[
        "empty curves",
        "curves without columns",
        "a step that is text",
        "empty code",
        "code without hashes",
        "run.json",
        "family record not JSON",
        "family record not a list",
        "record without design",
        "record not an object",
        "record with a broken design",
    ],
)
def test_a_damaged_table_or_record_beside_the_results_is_one_line_too(tmp_path, capsys, name, text, fragment):
    root = _checkout(tmp_path, GOOD)
    (root / "results/pairs" / name).parent.mkdir(exist_ok=True)
    (root / "results/pairs" / name).write_text(text)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    for argv in ([], ["--check"]):
        assert main(["--root", str(root), *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0] and f"results/pairs/{name}" in err[0], err
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # nothing written


def test_a_wrong_place_is_an_error_not_a_silent_pass(tmp_path, capsys, monkeypatch):
    assert main(["--root", str(tmp_path / "nowhere"), "--check"]) == 2
    assert "no such folder" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)  # a folder that is no checkout, as when --check runs outside the repository
    assert main(["--check"]) == 2
    assert "not a minibert checkout" in capsys.readouterr().err


def test_check_says_1_only_for_a_page_that_would_change(tmp_path, capsys):
    root = _checkout(tmp_path, GOOD)
    assert main(["--root", str(root)]) == 0  # writes the grid's report
    capsys.readouterr()
    assert main(["--root", str(root), "--check"]) == 0
    (root / "results/pairs/ablation.md").write_text("stale\n")
    assert main(["--root", str(root), "--check"]) == 1
    assert "would change: " in capsys.readouterr().out
