"""The comparisons pages were written to answer, read once from `configs/pages/questions.yaml`.

A page that lists a grid's arms finds them in its table (minibert.tables.arms); a page written to answer named
questions (MLM against span masking on Dyck's gap, a paper's claim at each budget) finds them here, so no page model
types an arm. Each side is named by the arm registry when the page is rendered. The runs whose settings pages
state are named here too (minibert.report.settings).

Example:
    >>> asked().dyck[0]
    Pair(a='dyck/pretrain/mlm', b='dyck/pretrain/span', gap=True)
    >>> [c.budgets for c in asked().claims][:2]
    [slice(None, None, None), slice(None, 2, None)]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from minibert.checkout import CHECKOUT
from minibert.tables.table import TableError

FILE = Path("configs/pages/questions.yaml")


@dataclass(frozen=True)
class Pair:
    """A − B between two experiments (or, for the transfer table, two experiments' names below a grid)."""

    a: str
    b: str
    gap: bool = False  # on the cloze gap to the ceiling rather than accuracy


@dataclass(frozen=True)
class Claim:
    """A published claim "A beats B", read on the budgets `budgets` picks from the grid's (all, first n, last n)."""

    claim: str
    a: str
    b: str
    budgets: slice = field(default_factory=lambda: slice(None))


@dataclass(frozen=True)
class Asked:
    dyck: tuple[Pair, ...]
    transfer: tuple[Pair, ...]
    claims: tuple[Claim, ...]
    two_stage: str  # the scaling arm whose next-token half is read against the control at the budget below
    depth_against: str  # the left-to-right arm the results digest reads the control against on depth
    runs: dict[str, tuple[str, str]]  # a run pages state the settings of -> (its table's folder, its experiment)


def _pairs(entries: list, where: str) -> tuple[Pair, ...]:
    if not isinstance(entries, list):
        raise ValueError(f"{where}: a list of [A, B] or [A, B, gap]")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, list) or len(entry) not in (2, 3) or entry[2:] not in ([], ["gap"]):
            raise ValueError(f"{where}[{i}]: {entry!r} is not [A, B] or [A, B, gap]")
        out.append(Pair(str(entry[0]), str(entry[1]), entry[2:] == ["gap"]))
    return tuple(out)


def _claim(entry: dict, where: str) -> Claim:
    if not isinstance(entry, dict) or not {"claim", "a", "b"} <= set(entry) <= {"claim", "a", "b", "budgets"}:
        raise ValueError(f"{where}: give claim, a, b and optional budgets")
    end, n = entry.get("budgets", ["all", 0])
    if end not in ("all", "first", "last") or not isinstance(n, int) or n < 0:
        raise ValueError(f"{where}: budgets is [first, n] or [last, n]")
    budgets = slice(None) if end == "all" else slice(None, n) if end == "first" else slice(-n, None)
    return Claim(str(entry["claim"]), str(entry["a"]), str(entry["b"]), budgets)


def _runs(entries: dict) -> dict[str, tuple[str, str]]:
    if not isinstance(entries, dict):
        raise ValueError("runs: a mapping of name: [table folder, experiment]")
    for name, entry in entries.items():
        if not isinstance(entry, list) or len(entry) != 2 or not all(isinstance(x, str) for x in entry):
            raise ValueError(f"runs.{name}: {entry!r} is not [table folder, experiment]")
    return {str(name): (entry[0], entry[1]) for name, entry in entries.items()}


@functools.cache
def asked(root: Path = CHECKOUT) -> Asked:
    """What `root/configs/pages/questions.yaml` asks; TableError in one line for a file it cannot read."""
    path = Path(root) / FILE
    try:
        found = yaml.safe_load(path.read_text())
        if not isinstance(found, dict) or set(found) != {"dyck", "transfer", "scaling", "structure", "runs"}:
            raise ValueError("give the sections dyck, transfer, scaling, structure and runs")
        scaling, structure = found["scaling"], found["structure"]
        return Asked(_pairs(found["dyck"], "dyck"), _pairs(found["transfer"], "transfer"),
                     tuple(_claim(c, f"scaling.claims[{i}]") for i, c in enumerate(scaling["claims"])),
                     str(scaling["two_stage"]), str(structure["depth_against"]), _runs(found["runs"]))  # fmt: skip
    except OSError as err:
        raise TableError(f"{path}: cannot read it: {err.strerror}") from None
    except (yaml.YAMLError, ValueError, TypeError, KeyError) as err:
        raise TableError(f"{path}: not the pages' questions: {' '.join(str(err).split())}") from None
