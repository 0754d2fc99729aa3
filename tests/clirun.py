"""Run `python -m minibert fit ...` as a real subprocess from the repository root, as a user would.

One torch thread per process: on a shared 2-core machine, two spinning OpenMP threads per process make a
short run tens of times slower, and a fixed thread count keeps float results comparable between runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from minibert.training.fit import QUIET

ROOT = Path(__file__).resolve().parents[1]


def checkpoints_every(steps: int) -> str:
    """A config layer that keeps checkpoints/last.ckpt every `steps` steps (the shipped config: every 100)."""
    return f"""\
trainer:
  callbacks:
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {{save_last: true, save_top_k: 0, every_n_train_steps: {steps}}}
"""


# A run that is not about minimal pairs grades a few of them: the same keys are logged, and a Dyck run's pair
# draw and probe (seconds at the shipped 100 and 500 per cell) shrink to a fraction of a second.
FEW_PAIRS_ARGS = ["--pair_eval.per_cell=10", "--pair_eval.probe_per_cell=20"]


def cli_env(**changes: str | None) -> dict[str, str]:
    """This process's environment with the worktree importable, one thread, and `changes` (None removes)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def fit_command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "minibert", "fit", *QUIET, *map(str, args)]


def run_fit(*args: str | Path, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m minibert fit ARGS`, waited for (no stdin: a prompt fails instead of waiting); output as text."""
    return subprocess.run(
        fit_command(*args),
        cwd=ROOT,
        env=env or cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_fit(*args: str | Path, env: dict[str, str] | None = None, stderr=subprocess.DEVNULL) -> subprocess.Popen:
    """`python -m minibert fit ARGS` started in the background (output discarded, stderr unless given)."""
    return subprocess.Popen(
        fit_command(*args),
        cwd=ROOT,
        env=env or cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )


def summaries(root: Path) -> list[dict]:
    """Every summary.json written under `root`, oldest first."""
    found = sorted(root.glob("**/summary.json"), key=lambda p: p.stat().st_mtime)
    return [json.loads(p.read_text()) for p in found]


def weights(checkpoint: Path) -> dict[str, torch.Tensor]:
    return torch.load(checkpoint, map_location="cpu", weights_only=True)["state_dict"]
