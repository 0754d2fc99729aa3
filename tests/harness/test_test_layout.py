"""The tests travel: a test file is read alone, so one never imports another (what several share lives in a helper
module of `tests/`, named for what it provides: ablating, corpora, finetuning, validity_tables, ...); and each sits
with what it protects: `core/` the model, objectives, languages, oracles and training; `harness/` the sweeps,
tables, statistics, comparisons and report engine; `pages/` the pages, their models and templates, the README and
docs."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_test_file_imports_another():
    found = []
    for path in sorted(TESTS.glob("*/test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found += [f"{path.name}: {n}" for n in names if n.startswith("tests.") and ".test_" in n]
    assert not found, found


def test_every_test_file_sits_in_the_group_it_protects():
    groups = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    assert groups == {"core", "harness", "pages"} and not list(TESTS.glob("test_*.py"))
