"""A grid's verdicts are held together over a family declared before its runs: its claims and its family file.
A page cannot judge a question outside it, a declared question no page reads still spends its share of alpha,
a family changed after the runs is refused, and a bad family file is one line naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from minibert.ablation.grid import load_grid
from minibert.report.render import Renderer, main
from minibert.stats.intervals import p_value
from minibert.tables import questions
from minibert.tables.stats import Family, Interval, LateQuestion, NotItsRow, UndeclaredQuestion

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "configs/ablations/pairs.yaml and configs/families/pairs.yaml"  # where _checkout's family is declared
DECIDED = Interval(0.03, 0.003, 0.057, 30, 29.0)  # p = 0.03


def test_a_declared_family_refuses_a_question_it_does_not_hold():
    f = Family("g")
    f.declare(["a m vs b m"], "configs/families/g.yaml")
    f.decide({"a m vs b m": p_value(DECIDED)})
    assert f.sign(DECIDED, "b m vs a m") == 1  # the same question, either way round
    with pytest.raises(UndeclaredQuestion, match="configs/families/g.yaml"):
        f.sign(DECIDED, "a m vs c m")


def test_a_page_states_its_questions_row_and_no_other_interval():
    f = Family("g")
    f.declare(["a m vs b m"], "f")
    f.decide({"a m vs b m": p_value(DECIDED)})
    assert f.sign(DECIDED, "a m vs b m") == 1 and f.sign(-DECIDED, "b m vs a m") == -1  # either way round
    with pytest.raises(NotItsRow, match="other than its row's in verdicts.csv"):
        f.sign(Interval(0.01, -0.01, 0.03, 30, 29.0), "a m vs b m")
    with pytest.raises(ValueError, match="names its question"):
        f.sign(DECIDED, "")
    undecided = Family("g")
    undecided.declare(["a m vs b m"], "f")
    with pytest.raises(LateQuestion, match="before its family was judged"):
        undecided.sign(DECIDED, "a m vs b m")


def test_holm_over_the_declared_family_decides_what_each_interval_alone_would_not():
    """Holm over K declared questions: two intervals at p = 0.02 are decided together among two, not among three
    (the third declared question counts whether or not a page reads it); a question the table does not hold
    counts at p = 1."""
    both = Interval(0.03, 0.0051, 0.0549, 30, 29.0)  # p = 0.02
    alone, wider = Family(), Family()
    alone.declare(["a m vs b m", "c m vs d m"], "f")
    wider.declare(["a m vs b m", "c m vs d m", "e m vs f m"], "f")
    for f in (alone, wider):
        f.decide({"a m vs b m": p_value(both), "c m vs d m": p_value(both)})
    assert len(alone.holds) == 2 and not wider.holds
    assert alone.sign(both, "a m vs b m") == 1 and wider.sign(both, "a m vs b m") == 0
    assert "1 not in the table, counted at p = 1" in wider.summary()


def test_groups_expand_to_every_pair_on_every_category_and_value():
    entry = {"metric": "val/acc", "among": ["g/{x}/a", "g/{x}/b", "g/{x}/c"], "categories": ["", "dist_1"],
             "each": {"x": [1, 2]}}  # fmt: skip
    found = questions.expand(entry, "here")
    assert len(found) == 3 * 2 * 2 and len(set(found)) == len(found)
    assert "g/2/a val/acc[dist_1] vs g/2/c val/acc[dist_1]" in found


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"metric": "val/acc"}, "a question is a string, or a group"),
        ({"metric": "val/acc", "pairs": [["a"]]}, "pairs must be a list of [A, B]"),
        ({"metric": "val/acc", "among": ["{y}/a", "b"], "each": {"x": [1]}}, "each does not give"),
        ({"pairs": [["a", "b"]], "metrics": "val/acc"}, "a question is a string"),
    ],
)
def test_a_bad_group_is_one_line_naming_where(entry, fragment):
    with pytest.raises(questions.FamilyError, match="here") as err:
        questions.expand(entry, "here")
    assert fragment in str(err.value) and "\n" not in str(err.value)


def _checkout(tmp_path: Path, family: object) -> Path:
    """A checkout of the bracket-pairs grid's table (no page but its own report) with `family` as its family file."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("pages", "families"))
    (tmp_path / "configs/pages").mkdir()
    (tmp_path / "configs/families").mkdir()
    (tmp_path / "configs/families/pairs.yaml").write_text(yaml.safe_dump(family))
    shutil.copytree(ROOT / "results/pairs", tmp_path / "results/pairs")
    (tmp_path / "results/pairs" / questions.FILE).unlink()  # the committed table's record: each test writes its own
    return tmp_path


def test_the_family_counts_its_claims_and_its_file():
    grid = load_grid(ROOT / "configs/ablations/pairs.yaml", ROOT)
    found = questions.declared(grid, ROOT)
    claimed = [q for c in grid.claims for q in questions.of_claim(c)]
    assert set(claimed) <= set(found) and len(found) == len(set(found))


@pytest.mark.parametrize(
    ("family", "fragment"),
    [
        ({"questions": [{"metric": "val/acc", "pairs": [["pairs/no", "pairs/no2"]]}]}, "'pairs/no', which is not an"),
        ({"asked": []}, "one key, questions: a list"),
        ({"questions": [7]}, "questions[0]: a question is a string"),
        ({"questions": ["pairs/dyck/pretrain/mlm val/acc  vs pairs/dyck/pretrain/span val/acc"]}, "not a question as"),
    ],
)
def test_a_bad_family_file_is_one_line_with_status_2(tmp_path, capsys, family, fragment):
    root = _checkout(tmp_path, family)
    assert main(["--root", str(root), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0] and "configs/families/pairs.yaml" in err[0]


def test_a_family_changed_after_the_runs_is_refused(tmp_path, capsys):
    root = _checkout(tmp_path, {"questions": []})
    grid = load_grid(root / "configs/ablations/pairs.yaml", root)
    dropped = "pairs/dyck/pretrain/mlm val/acc vs pairs/dyck/pretrain/span val/acc"
    record = root / "results/pairs" / questions.FILE
    record.write_text(json.dumps({"declared": [*questions.declared(grid, root), dropped]}))
    assert main(["--root", str(root), "--check"]) == 2
    err = capsys.readouterr().err.strip()
    assert "differs from the one its runs recorded (0 question(s) added, 1 removed; removed " in err
    assert "results/pairs/family.json" in err and len(err.splitlines()) == 1
    record.write_text(json.dumps({"declared": questions.declared(grid, root)}))  # as the runs recorded it
    assert main(["--root", str(root)]) == 0
    assert Renderer(root).data(root / "results/pairs").family.source == SOURCE
    for made_after in ({"declared": questions.declared(grid, root), "after_runs": True}, None):
        if made_after is None:
            record.unlink()  # no record at all: the same
        else:
            record.write_text(json.dumps(made_after))
        assert Renderer(root).data(root / "results/pairs").family.source == SOURCE + ", after its runs"


def test_a_sweep_records_the_family_once_and_says_whether_it_came_before_the_runs(tmp_path):
    """A table with no finished run gets its family recorded; one whose runs finished before any record gets it
    marked as declared after them; a recorded one is checked, never rewritten."""
    grid = load_grid(ROOT / "configs/ablations/pairs.yaml", ROOT)
    fresh, old = tmp_path / "fresh", tmp_path / "old"
    questions.record(fresh, grid, ROOT, started=False)
    assert questions.read_record(fresh)["declared"] == questions.declared(grid, ROOT)
    before = (fresh / questions.FILE).read_bytes()
    questions.record(fresh, grid, ROOT, started=True)
    assert (fresh / questions.FILE).read_bytes() == before
    questions.record(old, grid, ROOT, started=True)  # a table made before families: fixed now, marked as after
    assert questions.read_record(old) == {"declared": questions.declared(grid, ROOT), "after_runs": True}


def test_a_page_that_judges_an_undeclared_question_is_refused(tmp_path, capsys):
    asked = "{{ grid('pairs').diff('val/acc', {'experiment': A}, {'experiment': B}).verdict() }}\n"
    mlm, span = "pairs/dyck/pretrain/mlm", "pairs/dyck/pretrain/span"
    root = _checkout(tmp_path, {"questions": []})
    (root / "configs/pages/page.md.j2").write_text(f"{{% set A = '{mlm}' %}}{{% set B = '{span}' %}}" + asked)
    assert main(["--root", str(root), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"'{mlm} val/acc vs {span} val/acc' is not in the family declared in" in err[0]
    (root / "configs/families/pairs.yaml").write_text(
        yaml.safe_dump({"questions": [f"{span} val/acc vs {mlm} val/acc"]})
    )
    assert main(["--root", str(root)]) == 0  # declared (either way round): judged
    assert "B better" in (root / "page.md").read_text() or "A better" in (root / "page.md").read_text()
