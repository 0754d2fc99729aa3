"""The questions a grid's verdicts are held together over, declared before its runs.

A family (Holm's step-down, minibert.tables.stats.Family) chosen after the results holds nothing: a page could
ask until something is decided. So every grid declares its family in its config, before any run:

- its claims (`claims:` of `configs/ablations/<grid>.yaml`), each one question;
- the file `configs/families/<grid>.yaml`, the questions its pages judge besides, under `questions:`: one
  string each, or a group: `{metric: <metric>, pairs: [[A, B], ...]}` asks A vs B on the metric for every pair,
  `{metric: <metric>, among: [A, B, C]}` every pair of the list, `{of: [A, B], metrics: [[M1, M2], ...]}` M1 vs
  M2 of each experiment; optional `categories: [...]` asks each on every category ('' the whole metric), and
  `each: {x: [v1, v2]}` asks them again for every value of `{x}` in the experiments' and metrics' names.
  Where a page picks what to show from the results (the leading arm, a crossing), the file declares every
  question it could pick: the family must not depend on the answers.

A question is written as a page asks it: `<experiment> <metric>[<category>] vs <experiment> <metric>[...]` for a
paired difference (either way round), `<experiment> <metric> >= 0.03` for a claim's bound, with `{seeds a,b}`
after a side that reads only some seeds. A sweep records the family beside its table (`family.json`) before it
trains, and a later sweep or a report refuses a family changed since (`record`, `declare`). A table made before
families were declared records it at its next sweep, marked as declared after its runs.
Every declared question is read off the table and judged once (minibert.report.verdicts); one the table does not
hold counts in Holm's step-down at p = 1.

Example:
    >>> pair(side("dyck/pretrain/mlm", "val/acc", "dist_8_plus"), side("dyck/pretrain/span", "val/acc"))
    'dyck/pretrain/mlm val/acc[dist_8_plus] vs dyck/pretrain/span val/acc'
    >>> expand({"metric": "val/acc", "categories": ["", "dist_1"], "pairs": [["a", "b"]]}, "f")
    ['a val/acc vs b val/acc', 'a val/acc[dist_1] vs b val/acc[dist_1]']
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from minibert.ablation.grid import Claim, Grid
from minibert.atomic_writes import write_atomic
from minibert.tables.stats import canonical
from minibert.tables.table import read_json, split

FOLDER = Path("configs/families")
SIDE = re.compile(r"(?P<e>[^\s\[\]{}]+) (?P<m>[^\s\[\]{}]+)(?:\[(?P<c>[^\s\]]+)\])?(?: \{seeds (?P<s>\d+(?:,\d+)*)\})?")
_SIDE = re.sub(r"\?P<\w+>", "?:", SIDE.pattern)  # the same, without its groups, to be repeated in one pattern
QUESTION = re.compile(rf"{_SIDE} vs {_SIDE}|{_SIDE} (?:>=|<=) \S+")  # what `pair` and `bound` write
BOUND = re.compile(rf"(?P<side>{_SIDE}) (?P<op>>=|<=) (?P<b>\S+)")  # what `bound` writes
FILE = "family.json"  # beside a table: the family it is held to, recorded by the sweep that made it
GROUP = {"metric", "pairs", "among", "of", "metrics", "categories", "each"}  # the keys a group of questions may hold


class FamilyError(ValueError):
    """A family file that cannot be read as declared questions, or a family changed after its runs."""


def side(experiment: str, metric: str, category: str = "", seeds: Iterable[int] | None = None) -> str:
    """One side of a question: the figure `metric` (on `category`) of `experiment`, over `seeds` if only some."""
    text = f"{experiment} {metric}" + (f"[{category}]" if category else "")
    return text + (f" {{seeds {','.join(map(str, sorted(seeds)))}}}" if seeds is not None else "")


@dataclass(frozen=True)
class Side:
    """One side of a question as `side` writes it: a figure of an experiment, on some seeds (None: all)."""

    experiment: str
    metric: str
    category: str
    seeds: list[int] | None

    @property
    def where(self) -> dict:
        return {"experiment": self.experiment} | ({"seed": self.seeds} if self.seeds is not None else {})


def parse_side(text: str) -> Side:
    """'<experiment> <metric>[<category>] {seeds 0,1}' as a Side; FamilyError for text that is not one."""
    m = SIDE.fullmatch(text)
    if m is None:
        raise FamilyError(f"{text!r}: not one side of a question ('<experiment> <metric>[<category>]')")
    return Side(m["e"], m["m"], m["c"] or "", [int(s) for s in m["s"].split(",")] if m["s"] else None)


def pair(a: str, b: str) -> str:
    """A paired difference between two sides (the family's p-value is the same either way round)."""
    return f"{a} vs {b}"


def bound(figure: str, at_least: float | None = None, at_most: float | None = None) -> str:
    """A figure against a claimed bound: one of `at_least`, `at_most`."""
    return f"{figure} >= {at_least:g}" if at_least is not None else f"{figure} <= {at_most:g}"


def of_claim(claim: Claim) -> list[str]:
    """The questions a grid's claim asks: higher vs lower, or the value against each of its bounds."""
    if claim.value is None:
        return [pair(*(side(r.experiment, *split(r.metric)) for r in (claim.higher, claim.lower)))]
    figure = side(claim.value.experiment, *split(claim.value.metric))
    found = [bound(figure, at_least=claim.at_least)] if claim.at_least is not None else []
    return found + ([bound(figure, at_most=claim.at_most)] if claim.at_most is not None else [])


def expand(entry: Any, where: str) -> list[str]:
    """One entry of a family file's `questions:` as question strings."""
    if isinstance(entry, str) and entry.strip():
        return [entry.strip()]
    keys = set(entry) if isinstance(entry, dict) else set()
    across, within = {"metric"} <= keys and len(keys & {"pairs", "among"}) == 1, {"of", "metrics"} <= keys
    if keys - GROUP or across == within:
        raise FamilyError(f"{where}: a question is a string, or a group: {{metric: M, pairs: [[A, B], ...]}}, "
                          "{metric: M, among: [A, B, ...]} or {of: [A, ...], metrics: [[M1, M2], ...]}, with optional "
                          f"categories: [...] and each: {{name: [values]}}; got {entry!r}")  # fmt: skip
    if within:  # two figures of each experiment
        metrics = entry["metrics"]
        if not isinstance(metrics, list) or not all(isinstance(m, list) and len(m) == 2 for m in metrics):
            raise FamilyError(f"{where}: metrics must be a list of [M1, M2] pairs; got {metrics!r}")
        asked = [(e, m1, e, m2) for e in _strings(entry["of"], f"{where}: of") for m1, m2 in metrics]
    elif "among" in entry:
        among = _strings(entry["among"], f"{where}: among")
        asked = [(a, entry["metric"], b, entry["metric"]) for i, a in enumerate(among) for b in among[i + 1 :]]
    else:
        pairs = entry["pairs"]
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise FamilyError(f"{where}: pairs must be a list of [A, B] experiment pairs; got {pairs!r}")
        asked = [(a, entry["metric"], b, entry["metric"]) for a, b in pairs]
    categories = _strings(entry.get("categories", [""]), f"{where}: categories")
    each = entry.get("each", {})
    if not isinstance(each, dict):
        raise FamilyError(f"{where}: each must map a name to its values; got {each!r}")
    values = [dict(zip(each, v, strict=True)) for v in itertools.product(*(_strings(x, where) for x in each.values()))]
    try:
        return [pair(side(a.format(**v), ma.format(**v), c), side(b.format(**v), mb.format(**v), c))
                for v in values for a, ma, b, mb in asked for c in categories]  # fmt: skip
    except (KeyError, IndexError) as err:
        raise FamilyError(f"{where}: a name in braces that each does not give: {err}") from None


def _strings(x: Any, where: str) -> list[str]:
    if not isinstance(x, list) or not all(isinstance(v, str | int | float) for v in x):
        raise FamilyError(f"{where}: a list of names; got {x!r}")
    return [str(v) for v in x]


def file_of(grid: Grid, root: str | Path) -> Path | None:
    """The family file of a grid of the configs (`configs/ablations/<grid>.yaml` -> `configs/families/<grid>.yaml`);
    None for a grid elsewhere (a plug-in's comparison), whose family is its claims."""
    path, root = Path(grid.path).resolve(), Path(root).resolve()
    if path.parent != (root / "configs/ablations").resolve():
        return None
    return root / FOLDER / path.name


def declared(grid: Grid, root: str | Path) -> list[str]:
    """Every question of `grid`'s family: its claims', then its family file's, as written (sorted, unique)."""
    found = [q for c in grid.claims for q in of_claim(c)]
    path = file_of(grid, root)
    if path is not None and path.is_file():
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as err:
            raise FamilyError(f"{path}: not valid YAML: {' '.join(str(err).split())}") from None
        if not isinstance(data, dict) or set(data) != {"questions"} or not isinstance(data["questions"], list):
            raise FamilyError(f"{path}: a family file holds one key, questions: a list")
        for i, entry in enumerate(data["questions"]):
            for q in expand(entry, f"{path}: questions[{i}]"):
                if not QUESTION.fullmatch(q):
                    raise FamilyError(f"{path}: questions[{i}]: {q!r} is not a question as pages ask it "
                                      "('<experiment> <metric>[<category>] vs <experiment> <metric>[<category>]', "
                                      "one space apart, or '<experiment> <metric> >= <bound>')")  # fmt: skip
                found.append(q)
    names = set(grid.names)
    for q in found:
        for experiment in (part.split(maxsplit=1)[0] for part in q.split(" vs ")):
            if experiment not in names:
                raise FamilyError(f"{path or grid.path}: {q!r} names {experiment!r}, which is not an experiment of "
                                  f"{grid.path}")  # fmt: skip
    return sorted(set(found), key=lambda q: (canonical(q), q))


def source(grid: Grid, root: str | Path) -> str:
    """Where `grid`'s family is declared, as a page names it."""
    path, root = file_of(grid, root), Path(root).resolve()
    grid_file = Path(grid.path).resolve()
    where = [grid_file.relative_to(root).as_posix() if grid_file.is_relative_to(root) else grid_file.name]
    if path is not None and path.is_file():
        where.append(path.relative_to(root).as_posix())
    return " and ".join(where)


def read_record(out: str | Path) -> dict | None:
    """`<out>/family.json`: the family a table is held to (`declared`) and whether it was recorded after its
    first run had finished (`after_runs`); None where there is none. A damaged one is a TableError, in one line."""
    path = Path(out) / FILE
    if not path.is_file():
        return None
    found = read_json(path, ("declared",))
    declared_, after = found["declared"], found.get("after_runs", False)
    if not isinstance(declared_, list) or not all(isinstance(q, str) for q in declared_):
        raise FamilyError(f"{path}: `declared` must be a list of questions")
    if not isinstance(after, bool):
        raise FamilyError(f"{path}: `after_runs` must be true or false")
    return {"declared": declared_, "after_runs": after}


def _checked(out: str | Path, grid: Grid, root: str | Path) -> tuple[list[str], str, dict | None]:
    """(the questions `grid` declares, where it declares them, the record `out` holds), refusing a family other
    than the one the table recorded, naming the first question that differs; nothing recorded passes."""
    found, where = declared(grid, root), source(grid, root)
    before = read_record(out) if out else None  # a table built in memory (Data's out "") records nothing
    if before is not None:
        now, then = {canonical(q) for q in found}, {canonical(q) for q in before["declared"]}
        if now != then:
            added, removed = sorted(now - then), sorted(then - now)
            first = f"added {added[0]!r}" if added else f"removed {removed[0]!r}"
            raise FamilyError(
                f"{Path(out) / FILE}: the family declared in {where} differs from the one its runs recorded "
                f"({len(added)} question(s) added, {len(removed)} removed; {first}): a family is fixed before the "
                "runs; restore the declaration, or run the grid again into a new folder"
            )
    return found, where, before


def record(out: str | Path, grid: Grid, root: str | Path, started: bool) -> None:
    """Before a sweep trains: check `grid`'s family against the one `out` recorded, or record it
    (`<out>/family.json`). Recorded once some of its runs had finished (`started`, a table made before families
    were declared), it says so, and its pages say its family was declared after its runs; either way it is fixed
    from then on."""
    found, where, before = _checked(out, grid, root)
    if before is None:
        text = json.dumps({"declared": found, "source": where, "after_runs": started}, indent=1)
        write_atomic(Path(out) / FILE, text + "\n")


def declare(data, grid: Grid, root: str | Path) -> None:
    """Declare `data`'s family (minibert.tables.query.Data) as `grid` does, after checking it against the one its
    table recorded; a family recorded after its runs, or never, is said to be declared after them."""
    found, where, before = _checked(data.out, grid, root)
    in_time = before is not None and not before["after_runs"]
    data.family.declare(found, where + ("" if in_time else ", after its runs"))
