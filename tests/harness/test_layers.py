"""The harness's floors, read from the imports: the statistics, the tables, the comparisons, the runner and the
sweep never import the report engine (which renders the pages above them); the tables never import the
comparisons; the n-gram references import nothing of minibert but each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "minibert"


def imported(path: Path) -> set[str]:
    """Every minibert module `path` imports, anywhere in it (a deferred import counts as much as a top one)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m.split(".")[0] == "minibert"}


def sources(*places: str) -> list[Path]:
    return [p for place in places for p in ([PACKAGE / place] if place.endswith(".py") else
                                            sorted((PACKAGE / place).rglob("*.py")))]  # fmt: skip


@pytest.mark.parametrize(
    ("places", "forbidden"),
    [
        (("stats", "tables", "compare", "ablation", "references", "sweep.py"), "minibert.report"),
        (("stats", "tables", "references"), "minibert.compare"),
        (("stats", "references"), "minibert.tables"),
    ],
)
def test_a_floor_never_imports_one_above_it(places, forbidden):
    found = {p.relative_to(PACKAGE).as_posix(): m for p in sources(*places) for m in imported(p)
             if m == forbidden or m.startswith(forbidden + ".")}  # fmt: skip
    assert not found, f"{forbidden} imported from below it: {found}"


def test_the_references_stand_on_numpy_alone():
    for path in sources("references"):
        assert all(m.startswith("minibert.references") for m in imported(path)), path
