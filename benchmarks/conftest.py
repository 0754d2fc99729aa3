"""Fixtures of the benchmarks' own tests (`pytest benchmarks`; the default `pytest` does not collect them)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(HERE)]  # the benches import each other (bench_steps) by name
os.environ.setdefault("WANDB_MODE", "offline")


@pytest.fixture(scope="session")
def benches():
    """benches("bench") -> benchmarks/bench.py imported as a module (benchmarks/ is not a package)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
