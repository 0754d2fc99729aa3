"""The tests travel: a test file is read alone, so one never imports another (what several share lives in a helper
module of `tests/`, named for what it provides: ablating, corpora, finetuning, validity_tables, ...)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_test_file_imports_another():
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found += [f"{path.name}: {n}" for n in names if n.startswith("tests.test_")]
    assert not found, found
