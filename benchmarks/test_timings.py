"""Wall-clock figures the README states, checked on this machine (`pytest benchmarks`; not part of the default
`pytest`, whose results must not depend on how fast or busy the machine is). The bounds leave about 2x room
over the figures measured on the project's quiet 2-core machine (README, docs/reliability.md)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from minibert.languages import Dyck
from minibert.masking import MaskingRecipe
from minibert.oracle import mlm_credit
from minibert.report import measurements
from tests.clirun import cli_env, run_fit, summaries

ROOT = Path(__file__).resolve().parent.parent


def test_the_default_grid_runs_within_its_stated_bound(tmp_path):
    """results/measurements.yaml's `default_grid_fresh`: the measured wall time of `python scripts/ablate.py` from
    scratch, and the bound that the pages promise and this checks."""
    bound = measurements.load(ROOT)["default_grid_fresh"].bound("wall")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "scripts/ablate.py", "--out", str(tmp_path / "out")], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.perf_counter() - start < bound


@pytest.mark.parametrize("causal", [False, True])
def test_the_oracle_grades_a_2000_sentence_dyck_validation_set_in_a_few_seconds(causal):
    """results: 0.8 s bidirectional, 0.4 s causal (benchmarks/bench_oracle.py --length 32)."""
    lang, recipe = Dyck(), MaskingRecipe()
    rng = np.random.default_rng(11)
    masked = recipe.apply(lang.sample(rng, 2000), rng, lang)
    start = time.perf_counter()
    credit = mlm_credit(lang, recipe, masked.inputs, masked.labels, causal=causal)
    assert time.perf_counter() - start < 5.0
    start = time.perf_counter()
    again = mlm_credit(lang, recipe, masked.inputs, masked.labels, causal=causal)  # cached by content
    assert time.perf_counter() - start < 0.5 and again is credit


def test_a_short_run_logging_to_wandb_offline_takes_seconds(tmp_path):
    """Set-up to the end of fit, wandb's start-up included: a few seconds on an idle laptop."""
    env = cli_env(WANDB_API_KEY=None, WANDB_MODE=None, HOME=str(tmp_path / "home"), WANDB_BASE_URL="http://127.0.0.1:9")
    root = tmp_path / "run"
    done = run_fit("-c", "configs/pretrain.yaml", "-c", "configs/wandb.yaml", "--trainer.max_steps=20",
                   "--data.val_size=100", f"--trainer.default_root_dir={root}", env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (summary,) = summaries(root)
    assert summary["wall_time_s"] < 15


def test_every_usage_error_answers_within_two_seconds():
    """benchmarks/usage_errors.py: each entry point's usage errors, a bare interpreter's start included."""
    from usage_errors import main

    rows = main(heavy=False)  # the refusals that need torch are timed by the script itself, not bounded here
    assert rows and all(code == expected and lines == 1 for _, expected, code, lines, _, _ in rows)
    assert max(seconds for *_, seconds, _ in rows) <= 2.0
