"""What a user's console shows is minibert's own: no third-party tip or deprecation warning, a training bar
counted in steps without the logger's version number, and the grid runner's pace in runs a minute."""

from __future__ import annotations

import functools
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
NOISE = (
    "💡",
    "Tip:",
    "LeafSpec",
    "Warning:",
    "v_num",
    "Epoch 0/",
    "Seed set to",
    "GPU available: False",
    "TPU available: False",
)


def _run(args: list[str], tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"} | {"COLUMNS": "160"}  # as a user sees it
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return (done.stdout + done.stderr).replace("\r", "\n")


def test_a_run_prints_no_third_party_noise_and_counts_steps(tmp_path):
    out = _run(["-m", "minibert", "fit", "-c", "configs/pretrain.yaml", "--trainer.max_steps=12",
                "--trainer.val_check_interval=12", f"--trainer.default_root_dir={tmp_path}"], tmp_path)  # fmt: skip
    assert not [n for n in NOISE if n in out], out
    assert re.search(r"^train:?\s", out, re.M) and "final: val/acc" in out  # tqdm's "train: 50%", rich's "train  ━"
    assert f"run: {tmp_path}/" in out  # the folder as given (absolute), not a path climbing out of the checkout


def test_the_grid_runner_reads_its_pace_in_runs_a_minute(monkeypatch):
    """The sweep's bar counts runs and gives the pace of the runs trained here, in runs a minute, never tqdm's own
    rate: runs reused at the start would read as thousands a second."""
    from minibert import sweep

    shown = io.StringIO()
    monkeypatch.setattr(sweep, "tqdm", functools.partial(sweep.tqdm, file=shown, mininterval=0))
    times = [0.0, 30.0, 60.0]  # training began, then two runs trained here finished 30 s apart
    monkeypatch.setattr(sweep.time, "perf_counter", lambda: times.pop(0) if len(times) > 1 else times[0])
    progress = sweep._Progress(3)
    progress.began()
    for status, label in (("reused", "a"), ("finished", "b"), ("finished", "c")):
        progress(SimpleNamespace(label=label), status)
    progress.close()
    out = shown.getvalue().replace("\r", "\n")
    assert "run/s" not in out and "s/run" not in out and "it/s" not in out, out
    assert re.search(r"3/3 runs .*finished: c, 2\.0 runs/min", out), out
