"""A grid's verdicts are data: every declared question judged once from the table into verdicts.csv, a recorded
comparison's pair stated by its own row, and every verdict a page, dashboard or the README states is its
question's row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from minibert.report import render, verdicts
from minibert.stats import holm
from minibert.stats.intervals import p_value
from minibert.tables import sealed, stats, table
from minibert.tables.query import Data, Diff
from minibert.tables.stats import Family, held_back

ROOT = Path(__file__).resolve().parents[2]


def frame(arms: dict[str, list[float]], metric: str = "val/acc", n: float | None = 2000) -> pd.DataFrame:
    rows = [{"grid": "g", "experiment": e, "stage": "pretrain", "arm": e.rsplit("/", 1)[-1], "seed": seed,
             "val_seed": 2018, "metric": metric, "category": "", "value": v, "n": n, "run": f"{e}-{seed}", "code": ""}
            for e, values in arms.items() for seed, v in enumerate(values)]  # fmt: skip
    return pd.DataFrame(rows, columns=[*table.FIRST, "arm", *table.LAST])


ARMS = {"p/a": [0.70, 0.72, 0.71, 0.73], "p/b": [0.60, 0.61, 0.59, 0.62], "p/c": [0.70, 0.69, 0.72, 0.71]}


def judged(arms: dict[str, list[float]], questions: list[str], metric: str = "val/acc") -> tuple[Data, list]:
    d = Data(frame(arms, metric), family=Family("g"))
    d.family.declare(questions, "here")
    return d, verdicts.judge(d)


def test_each_declared_question_is_one_row_of_the_interval_a_page_computes_and_holm_adjusts_them_once():
    qs = ["p/a val/acc vs p/b val/acc", "p/c val/acc vs p/a val/acc", "p/b val/acc vs p/c val/acc",
          "p/a val/acc vs p/z val/acc"]  # fmt: skip
    d, rows = judged(ARMS, qs)
    by = {r.question: r for r in rows}
    assert set(by) == {stats.canonical(q) for q in qs} and all(r.judged_by == verdicts.HOLM for r in rows)
    diff = d.diff("val/acc", {"experiment": "p/b"}, {"experiment": "p/a"})  # asked the other way round
    row = by["p/a val/acc vs p/b val/acc"]
    assert (row.estimate, row.lo, row.hi) == pytest.approx((-diff.mean, -diff.interval.hi, -diff.interval.lo))
    assert row.p == pytest.approx(p_value(diff.interval)) and row.verdict == "first better"
    assert diff.verdict("b", "a") == "a better"  # the page's verdict is the row's
    assert by["p/a val/acc vs p/z val/acc"].verdict == "not in the table"  # p/z logs nothing: p = 1
    ps = [by[stats.canonical(q)].p for q in qs]
    assert [by[stats.canonical(q)].adjusted for q in qs] == pytest.approx(holm.adjusted(ps))


def test_a_gap_row_names_the_side_with_the_lower_gap_and_a_bound_reads_the_claimed_side():
    gaps = {"p/a": [0.05, 0.06, 0.05, 0.04], "p/b": [0.30, 0.31, 0.29, 0.30]}
    _, rows = judged(gaps, ["p/a val/gap/acc vs p/b val/gap/acc"], "val/gap/acc")
    assert rows[0].estimate < 0 and rows[0].verdict == "first better"
    _, rows = judged(ARMS, ["p/a val/acc >= 0.5", "p/b val/acc <= 0.5"])
    by = {r.question: r for r in rows}
    assert by["p/a val/acc >= 0.5"].verdict == "holds" and by["p/a val/acc >= 0.5"].estimate > 0
    assert by["p/b val/acc <= 0.5"].verdict == "fails" and by["p/b val/acc <= 0.5"].estimate < 0


def test_the_table_round_trips_and_is_byte_stable(tmp_path):
    _, rows = judged(ARMS, ["p/a val/acc vs p/b val/acc", "p/a val/acc vs p/c val/acc"])
    assert verdicts.write(tmp_path, rows) == [tmp_path / verdicts.FILE]
    assert verdicts.write(tmp_path, rows) == []  # unchanged: not written again
    back = verdicts.read(tmp_path)
    assert [(r.question, r.verdict, r.seeds) for r in back] == [(r.question, r.verdict, r.seeds) for r in rows]
    (tmp_path / verdicts.FILE).write_text("question\nx\n")
    with pytest.raises(table.TableError, match="holds 1 rows of the 2 it was written with"):  # its seal says so first
        verdicts.read(tmp_path)
    sealed.seal_of(tmp_path / verdicts.FILE).unlink()  # as one written before seals: parsed, and found not to be one
    with pytest.raises(table.TableError, match="not a verdicts table"):
        verdicts.read(tmp_path)


def test_a_recorded_comparison_states_its_pair_and_every_reading_of_it_quotes_that_row():
    """Dyck's committed comparison of MLM and span on the gap: its row is the sign rule's, and the grid's page
    reading of the same question (Data.diff) gives that row, not a second, fixed-sample verdict."""
    r = render.Renderer(ROOT)
    d = r.grid("dyck")
    q = "dyck/pretrain/mlm val/gap/acc vs dyck/pretrain/span val/gap/acc"
    (stated,) = [row for row in d.family.rows if row.question == q and row.stated]
    assert stated.judged_by == "comparisons/pretrain-gap" and stated.evidence > 0
    diff = d.diff("val/gap/acc", {"experiment": "dyck/pretrain/span"}, {"experiment": "dyck/pretrain/mlm"})
    assert diff.record == "comparisons/pretrain-gap" and diff.seeds == stated.seeds
    assert diff.verdict("span", "MLM") == {"first better": "MLM better", "second better": "span better"}.get(
        stated.verdict, stated.verdict
    )
    assert r.answer("dyck", "val/gap/acc", "dyck/pretrain/mlm", "dyck/pretrain/span").diff.record == stated.judged_by


def _side(row: verdicts.Row, diff: Diff) -> int:
    """+1 when the row names the Diff's A side better, -1 its B side, 0 when it names neither."""
    named = {"first better": 1, "second better": -1}.get(row.verdict, 0)
    first = row.first == f"{diff.a.experiment} {diff.a.metric}" + (f"[{diff.a.category}]" if diff.a.category else "")
    return named if first else -named


def test_every_verdict_a_page_or_dashboard_states_is_its_questions_row(monkeypatch):
    """Build every page and dashboard from the committed tables, noting each verdict a Diff states (by `verdict`
    or `say`), and find each one's row in its table's verdicts.csv: the row pages quote (a recorded comparison's
    where one judged the question) names the same side. One question, one verdict."""
    stated: list[tuple[Diff, int]] = []
    verdict, sign = Diff.verdict, Diff.sign

    def noted_verdict(self, a="A", b="B", margin=None):
        v = verdict(self, a, b, margin)
        stated.append((self, {f"{a} better": 1, f"{b} better": -1}.get(v, 0)))
        return v

    def noted_sign(self):
        s = sign(self)
        stated.append((self, s))
        return s

    monkeypatch.setattr(Diff, "verdict", noted_verdict)
    monkeypatch.setattr(Diff, "sign", noted_sign)
    render.build(ROOT, check=True)
    tables = {}
    checked = 0
    for diff, side in stated:
        if diff.family is None or diff.family.declared is None:
            continue
        folder = diff.family.name
        if folder not in tables:
            tables[folder] = {(r.question, r.stated): r for r in verdicts.read(ROOT / folder)}
        row = tables[folder].get((stats.canonical(diff.question), 1))
        assert row is not None, f"{folder}: {diff.question!r} states a verdict with no row in verdicts.csv"
        assert side == _side(row, diff), f"{folder}: {diff.question!r}: the page says {side}, its row {row.verdict}"
        checked += 1
    assert checked > 200 and {"results/dyck", "results/text"} <= set(tables)


def test_every_committed_table_has_its_verdicts_beside_it():
    """(That each is today's, tests/pages/test_pages_current.py checks: `--check` lists a stale verdicts.csv.)"""
    assert sorted(p.parent for p in ROOT.glob(f"results/**/{verdicts.FILE}")) == sorted(
        p.parent for p in ROOT.glob(f"results/**/{table.FILE}")
    )


def test_a_grid_report_written_alone_writes_its_verdicts_beside_it(tmp_path):
    out = tmp_path / "dyck"
    shutil.copytree(ROOT / "results/dyck", out)
    (out / verdicts.FILE).unlink()
    from minibert.report import grid_report
    from minibert.tables.record import grid_of

    written = grid_report.write(out, grid_of(out, ROOT), root=ROOT)
    assert out / verdicts.FILE in written
    assert (out / verdicts.FILE).read_text() == (ROOT / "results/dyck" / verdicts.FILE).read_text()


def test_a_claim_whose_interval_alone_decides_but_its_family_does_not_says_why_on_its_line():
    """p/c above p/d: the paired interval excludes zero (p about 0.02), but held with three questions the table
    cannot answer (each at p = 1) Holm asks it for p <= 0.05 / 4 at rank 1 of 4. Its verdict reads undecided and
    states, on the same line, the family's size and the p it needed against its own; alone, the claim holds."""
    from minibert.ablation.grid import Claim, MetricRef
    from minibert.report import grid_report

    arms = {"p/c": [0.70, 0.69, 0.72, 0.71], "p/d": [0.68, 0.655, 0.71, 0.685]}
    claim = Claim("d below c", lower=MetricRef("p/d", "val/acc"), higher=MetricRef("p/c", "val/acc"))
    question = "p/c val/acc vs p/d val/acc"
    d = Data(frame(arms, n=100_000), family=Family("g"))
    d.family.declare([question, *(f"p/c val/acc vs p/z{i} val/acc" for i in range(3))], "here")
    (row, *_) = verdicts.judge(d)
    assert row.question == question and row.lo > 0 and 0.0125 < row.p < 0.05  # decided alone, not at 0.05 / 4
    answer = grid_report.claim_answer(claim, d)
    assert answer.diff.favour.lo > 0 and answer.decided is False  # drawn grey, as its verdict reads
    assert answer.verdict.startswith("undecided: held with 3 other questions"), answer.verdict
    assert "rank 1 of 4" in answer.verdict and "needs p ≤ 0.05 / 4 = 0.0125" in answer.verdict, answer.verdict
    assert f"(its p is {row.p:.2g})" in answer.verdict, answer.verdict
    said = d.diff("val/acc", {"experiment": "p/c"}, {"experiment": "p/d"}).say("c", "d")  # a page's comparison
    assert said.startswith("undecided: c − d = +") and "; held with 3 other questions" in said, said
    alone = Data(frame(arms, n=100_000), family=Family("g"))
    alone.family.declare([question], "here")
    verdicts.judge(alone)
    assert grid_report.claim_answer(claim, alone).verdict == "holds"


def test_a_p_within_its_ranks_threshold_is_held_back_where_the_step_down_stopped():
    """Holm stops at the first rank whose p misses its threshold: a later question whose own p meets its rank's
    threshold is undecided all the same, and the reason names the rank where the step-down stopped."""
    f = Family("g")
    f.declare(["a vs b", "c vs d", "e vs f"], "here")
    f.decide({"a vs b": 0.02, "c vs d": 0.021, "e vs f": 0.5})  # 0.02 > 0.05 / 3: rank 1 stops it
    assert not f.holds
    said = held_back(f, "c vs d")
    assert said.startswith("held with 2 other questions") and "rank 2 of 3" in said and "p ≤ 0.05 / 2 = 0.025" in said
    assert "which its p (0.021) meets" in said, said
    assert "stops before it, at rank 1 (p 0.02 > 0.05 / 3 = 0.0167)" in said, said
    assert held_back(None, "c vs d") == ""  # no family: the interval alone is the verdict
