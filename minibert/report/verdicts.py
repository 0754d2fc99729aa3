"""Every verdict a grid's pages may state, computed once from its table: `<out>/verdicts.csv`.

A grid declares its family before its runs (minibert.tables.questions). `decide` reads each declared question
off the table (`interval_of`: the paired difference, or a figure against a claimed bound, exactly as a page
computes it), adjusts the whole family once (Holm's step-down, minibert.stats.holm) and adds a row for every
pair a comparison recorded in `<out>/comparisons/` judged on its sign rule. A question a recorded comparison
judged is stated by that comparison's row: its interval is the mean's sequence at the last look and its verdict
the sign rule's, so the grid's fixed-sample reading of the same seeds is never a second verdict.

The rows are the verdicts: `Data.diff` returns the stated row's figures, a page's verdict is its question's row
(minibert.tables.stats.Family refuses a page whose interval is not its row's), and the dashboards, the pages,
the README and compare quote the same row. Columns of verdicts.csv:

    question    canonical: its two sides sorted ('A m vs B m'), or '<side> >= <bound>'
    judged_by   'holm' (the grid's seeds, in its declared family) or 'comparisons/<name>' (a sign rule)
    stated      1 for the row pages quote (a recorded comparison's, where one judged the question)
    estimate, lo, hi
                first side minus second (a bound's: the figure minus the bound, oriented to the claimed side),
                with its 95% interval (a comparison's: the betting sequence at the last look)
    seeds       the seeds behind the interval
    decided_on  the seeds the verdict was reached on (a comparison's: the look it stopped at)
    p, adjusted the interval's p-value, and Holm's adjusted p-value over the family (blank for a comparison)
    evidence    a comparison's sign e-value at its last look (blank for Holm's rows)
    verdict     'first better', 'second better' (the better side: the higher figure, or the lower gap or loss;
                for a comparison's, the side its rule names), 'holds' or 'fails' (a bound), 'alike', 'tied',
                'undecided', 'undecided (cap)', 'no data', or 'not in the table'
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import pandas as pd

from minibert.ablation.grid import Grid
from minibert.compare import comparison
from minibert.stats import intervals, scoreboard
from minibert.tables import questions, sealed, stats
from minibert.tables.query import Data, QueryError
from minibert.tables.stats import Interval
from minibert.tables.table import TableError, split

FILE = "verdicts.csv"
HOLM = "holm"
REWRITE = "`python -m minibert.report` writes it again"


@dataclass(frozen=True)
class Row:
    """One verdict: a row of verdicts.csv (the module's docstring names its columns)."""

    question: str
    judged_by: str
    stated: int
    estimate: float
    lo: float
    hi: float
    seeds: int
    decided_on: int
    p: float
    adjusted: float
    evidence: float
    verdict: str

    @property
    def interval(self) -> Interval:
        return Interval(self.estimate, self.lo, self.hi, self.seeds)

    @property
    def first(self) -> str:
        return self.question.split(" vs ", 1)[0]

    @property
    def record(self) -> str:
        """The comparison whose sequence judged it, '' for the grid's family."""
        return "" if self.judged_by == HOLM else self.judged_by


def interval_of(data: Data, question: str) -> Interval:
    """The interval a page computes for `question`, first side minus second (a bound's oriented so that > 0 is
    the claimed side): `Data.diff` for one figure of two experiments, `Data.between` for two figures of one, a
    paired difference of the two figures otherwise. QueryError where the table does not hold a side."""
    if (m := questions.BOUND.fullmatch(question)) is not None:
        side = questions.parse_side(m["side"])
        iv = data.stat(side.metric, side.category, **side.where).interval.minus(float(m["b"]))
        return iv if m["op"] == ">=" else -iv
    a, b = (questions.parse_side(s) for s in question.split(" vs ", 1))
    if (a.metric, a.category) == (b.metric, b.category):
        return data.diff(a.metric, a.where, b.where, a.category).interval
    if a.where == b.where and a.category == b.category:
        return data.between(a.metric, b.metric, a.category, **a.where).interval
    sa, sb = data.stat(a.metric, a.category, **a.where), data.stat(b.metric, b.category, **b.where)
    shared = sa.shared and sb.shared
    return stats.paired(sa.values, sb.values, *((sa.n, sb.n) if shared else (None, None)))


def _holm_rows(data: Data) -> list[Row]:
    """Every declared question of `data`'s family read off its table and judged together (Holm's step-down, in
    `Family.decide`); a question the table does not hold counts at p = 1."""
    found: dict[str, Interval | None] = {}
    for q in sorted(data.family.declared or ()):
        try:
            found[q] = interval_of(data, q)
        except QueryError:
            found[q] = None
    p = {q: intervals.p_value(iv) for q, iv in found.items() if iv is not None and not math.isnan(iv.mean)}
    data.family.decide(p)
    rows = []
    for q, iv in found.items():
        adj = data.family.adjusted[q]
        if iv is None:
            rows.append(Row(q, HOLM, 1, math.nan, math.nan, math.nan, 0, 0, 1.0, adj, math.nan, "not in the table"))
            continue
        if math.isnan(iv.mean):
            nan = math.nan
            rows.append(Row(q, HOLM, 1, nan, nan, nan, iv.seeds, iv.seeds, 1.0, adj, nan, "no data"))
            continue
        side = iv if not _lower_is_better(q) else -iv  # > 0 favours the first side (a bound's: its claim)
        verdict = "undecided"
        if q in data.family.holds and (side.lo > 0 or side.hi < 0):
            named = ("holds", "fails") if questions.BOUND.fullmatch(q) else ("first better", "second better")
            verdict = named[0] if side.lo > 0 else named[1]
        rows.append(Row(q, HOLM, 1, iv.mean, iv.lo, iv.hi, iv.seeds, iv.seeds, p[q], adj, math.nan, verdict))
    return rows


def _lower_is_better(question: str) -> bool:
    """A difference of one figure of two experiments reads its metric's direction (a gap, a loss: lower is
    better); two figures of one experiment, mixed figures and bounds read higher as better (as pages do)."""
    if questions.BOUND.fullmatch(question) is not None:
        return False
    a, b = (questions.parse_side(s) for s in question.split(" vs ", 1))
    return (a.metric, a.category) == (b.metric, b.category) and scoreboard.lower_is_better(a.metric)


def records(data: Data) -> dict[str, comparison.Recorded]:
    """Record name -> every comparison recorded beside `data`'s table (`<out>/comparisons/`), judged on it once
    for its rows and for every claim, dashboard row and page that reads it (again when a record's text changes)."""
    if not data.out:  # a table built in memory: nothing recorded beside it
        return {}
    paths = sorted((Path(data.out) / "comparisons").glob("*.json"))
    return _judged(data, tuple((p.stem, p.read_bytes()) for p in paths))


@functools.lru_cache(maxsize=64)
def _judged(data: Data, texts: tuple[tuple[str, bytes], ...]) -> dict[str, comparison.Recorded]:
    return {name: comparison.recorded(Path(data.out), name, data) for name, _ in texts}


def _comparison_rows(data: Data) -> list[Row]:
    """A row for every pair each comparison recorded beside the table judged: its sign rule's verdict, the
    mean's sequence at the last look (as measured, first side minus second), the seeds it stopped at."""
    rows = []
    for name, recorded in records(data).items():
        for j in recorded.judged:
            metric, category = split(j.pair.metric)
            a, b = (questions.side(e, metric, category) for e in (j.pair.a, j.pair.b))
            iv = -j.interval if scoreboard.lower_is_better(j.pair.metric) else j.interval  # as measured, A - B
            verdict = j.verdict.verdict
            if questions.canonical(questions.pair(a, b)).startswith(b + " vs "):  # the question's first side is B
                iv, verdict = -iv, {"A better": "B better", "B better": "A better"}.get(verdict, verdict)
            verdict = {"A better": "first better", "B better": "second better"}.get(verdict, verdict)
            decided_on = j.verdict.look if j.stopped else j.looks
            rows.append(Row(questions.canonical(questions.pair(a, b)), f"comparisons/{name}", 1, iv.mean,
                            iv.lo, iv.hi, iv.seeds, decided_on, math.nan, math.nan, j.verdict.e_value,
                            verdict))  # fmt: skip
    return rows


def decide(data: Data, grid: Grid, root: str | Path) -> list[Row]:
    """Declare `data`'s family as `grid` does (minibert.tables.questions.declare) and `judge` it."""
    questions.declare(data, grid, root)
    return judge(data)


def judge(data: Data) -> list[Row]:
    """Judge every question of `data`'s declared family, and every pair a comparison recorded beside its table
    judged, once; the family then answers every verdict a page asks from these rows. Returns the rows, as
    verdicts.csv holds them."""
    rows = _holm_rows(data)
    judged = _comparison_rows(data)
    last = {r.question: r for r in judged}  # two records of one question: the later (by name) is stated
    judged = [r if last[r.question] is r else replace(r, stated=0) for r in judged]
    rows = [replace(r, stated=0) if r.question in last else r for r in rows]
    data.family.stated = {r.question: r for r in judged if r.stated}
    data.family.rows = sorted(rows + judged, key=lambda r: (r.question, r.judged_by != HOLM, r.judged_by))
    return data.family.rows


def table_of(rows: list[Row]) -> str:
    """verdicts.csv's text: one row per verdict, figures to 6 significant digits (byte-stable)."""
    frame = pd.DataFrame([asdict(r) for r in rows], columns=[f.name for f in fields(Row)])
    return frame.to_csv(index=False, float_format="%.6g", lineterminator="\n")


def write(out: str | Path, rows: list[Row], check: bool = False) -> list[Path]:
    """Write `out/verdicts.csv`, sealed (minibert.tables.sealed), or with `check` only say whether it would change;
    returns it if it changed. One that has not changed is left as it is, with or without a seal."""
    path, text = Path(out) / FILE, table_of(rows)
    if path.is_file() and path.read_text() == text:
        return []
    if not check:
        sealed.write(path, text)
    return [path]


def read(out: str | Path) -> list[Row]:
    """The rows of `out/verdicts.csv`, as written; TableError in one line for a missing or damaged file, or one cut
    or edited since it was written."""
    path = Path(out) / FILE
    sealed.check(path, REWRITE)
    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
        return [Row(**{f.name: _typed(f.type, row[f.name]) for f in fields(Row)}) for row in frame.to_dict("records")]
    except (OSError, KeyError, ValueError, pd.errors.ParserError) as err:
        raise TableError(f"{path}: not a verdicts table ({type(err).__name__}: {err}); {REWRITE}") from None


def _typed(kind: str, value):
    return {"str": str, "int": int, "float": float}[kind](value)
