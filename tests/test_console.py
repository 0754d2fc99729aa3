"""What a user's console shows is minibert's own: no third-party tip or deprecation warning, a training bar
counted in steps without the logger's version number, and the grid runner's pace in runs a minute."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOISE = ("💡", "Tip:", "LeafSpec", "Warning:", "v_num", "Epoch 0/")


def _run(args: list[str], tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"} | {"COLUMNS": "160"}  # as a user sees it
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return (done.stdout + done.stderr).replace("\r", "\n")


def test_a_run_prints_no_third_party_noise_and_counts_steps(tmp_path):
    out = _run(["-m", "minibert", "fit", "-c", "configs/pretrain.yaml", "--trainer.max_steps=12",
                "--trainer.val_check_interval=12", f"--trainer.default_root_dir={tmp_path}"], tmp_path)  # fmt: skip
    assert not [n for n in NOISE if n in out], out
    assert re.search(r"^train\s", out, re.M) and "final: val/acc" in out


def test_the_grid_runner_reads_its_pace_in_runs_a_minute(tmp_path):
    from tests.test_ablate import tiny_grid  # one pre-training run of 4 steps

    grid = tiny_grid(tmp_path / "grid.yaml")
    out = _run(["scripts/ablate.py", "--grid", str(grid), "--only", "pretrain/bidirectional", "--seeds", "1",
                "--workers", "1", "--out", str(tmp_path / "out")], tmp_path)  # fmt: skip
    assert "run/s" not in out and "s/run" not in out
    assert re.search(r"\d+\.\d runs/min", out), out
