"""Exact resume: a pre-training run SIGKILLed mid-way twice (the second time after resuming from the first)
and resumed with `--ckpt_path last` ends with the same weights, optimizer state and final metrics, bit for
bit, as the same run left alone.

The batch stream restarts at `global_step * accumulate_grad_batches` and the LR schedule and AdamW moments
come back from the checkpoint; if any of them did not, the weights would differ after the first step.
"""

from __future__ import annotations

import csv
import random
import signal
import time
from pathlib import Path

import pytest
import torch
import yaml

from minibert.training.checkpoints import newest_last_checkpoint
from tests.clirun import ROOT, checkpoints_every, run_fit, start_fit, summaries, weights

# the shipped config with checkpoints every 20 steps instead of 100 (checkpoints_every), and a shorter run
MAX_STEPS = 120
SHORT = [f"--trainer.max_steps={MAX_STEPS}", "--trainer.val_check_interval=30", "--data.val_size=400"]


def checkpoint_step(path: Path) -> int:
    return torch.load(path, map_location="cpu", weights_only=True)["global_step"]


def kill_after_checkpoint(proc, root: Path, at_least: int, timeout: float = 240) -> Path:
    """SIGKILL `proc` at a random moment soon after it has kept a last checkpoint of step >= `at_least`;
    returns the newest last checkpoint left behind."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended (status {proc.returncode}) before it could be killed"
        last = newest_last_checkpoint(root)
        if last is not None and checkpoint_step(last) >= at_least:
            time.sleep(random.uniform(0.0, 0.05))  # somewhere inside the next few steps (~10 ms each when idle)
            proc.send_signal(signal.SIGKILL)
            assert proc.wait() == -signal.SIGKILL, "the run finished before the kill landed"
            return newest_last_checkpoint(root)
        time.sleep(0.02)
    proc.kill()
    raise TimeoutError(f"no last checkpoint of step >= {at_least} under {root} in {timeout} s")


@pytest.mark.slow
def test_killed_run_resumes_bit_identical(tmp_path):
    every_20 = tmp_path / "every_20.yaml"
    every_20.write_text(checkpoints_every(20))
    args = ["-c", "configs/pretrain.yaml", "-c", every_20, *SHORT, "--ckpt_path=last"]  # "last": fresh if none

    reference = tmp_path / "reference"
    done = run_fit(*args, f"--trainer.default_root_dir={reference}")
    assert done.returncode == 0, done.stderr[-3000:]

    resumed = tmp_path / "resumed"
    killed_at = []
    for _ in range(2):  # the second kill hits the run that resumed from the first, after its own checkpoint
        at_least = checkpoint_step(killed_at[-1]) + 20 if killed_at else 20
        proc = start_fit(*args, f"--trainer.default_root_dir={resumed}")
        killed_at.append(kill_after_checkpoint(proc, resumed, at_least))
        assert summaries(resumed) == [], "a killed run must not leave a summary behind"
    steps = [checkpoint_step(p) for p in killed_at]
    assert 20 <= steps[0] < steps[1] < MAX_STEPS and killed_at[0].parent != killed_at[1].parent
    done = run_fit(*args, f"--trainer.default_root_dir={resumed}")
    assert done.returncode == 0, done.stderr[-3000:]

    # the final run really continued the second one: its saved config names that checkpoint, and its
    # first logged step comes after it
    final_dir = max(resumed.glob("lightning_logs/version_*"), key=lambda p: int(p.name.split("_")[1]))
    assert yaml.safe_load((final_dir / "config.yaml").read_text())["ckpt_path"] == str(killed_at[1])
    with open(final_dir / "metrics.csv") as f:
        assert min(int(row["step"]) for row in csv.DictReader(f)) > steps[1]

    # the same final metrics: every val/* and train/loss number and the step count
    (want,), (got,) = summaries(reference), summaries(resumed)
    assert got["step"] == want["step"] == MAX_STEPS
    metrics = [k for k in want if k.startswith(("val/", "train/"))]
    assert metrics and {k: got[k] for k in metrics} == {k: want[k] for k in metrics}

    # bit-identical weights and optimizer moments
    want_ckpt = torch.load(newest_last_checkpoint(reference), map_location="cpu", weights_only=True)
    got_ckpt = torch.load(newest_last_checkpoint(resumed), map_location="cpu", weights_only=True)
    assert want_ckpt["global_step"] == got_ckpt["global_step"] == MAX_STEPS
    want_w, got_w = weights(newest_last_checkpoint(reference)), weights(newest_last_checkpoint(resumed))
    assert want_w.keys() == got_w.keys()
    assert all(torch.equal(want_w[k], got_w[k]) for k in want_w)
    want_opt, got_opt = want_ckpt["optimizer_states"][0]["state"], got_ckpt["optimizer_states"][0]["state"]
    assert all(torch.equal(want_opt[i][m], got_opt[i][m]) for i in want_opt for m in ("exp_avg", "exp_avg_sq"))
    assert want_ckpt["lr_schedulers"][0]["last_epoch"] == got_ckpt["lr_schedulers"][0]["last_epoch"] == MAX_STEPS


def test_resume_with_gradient_accumulation_continues_the_same_batches(tmp_path):
    """With accumulate_grad_batches=2 every optimizer step eats two batches: a run resumed from its step-20
    checkpoint must pick the stream up at batch 40 (not 20) to end with the uninterrupted run's weights."""
    keep_all = tmp_path / "keep_all.yaml"
    keep_all.write_text(
        "trainer:\n  callbacks:\n    - class_path: lightning.pytorch.callbacks.ModelCheckpoint\n"
        "      init_args: {save_top_k: -1, every_n_train_steps: 20, filename: '{step}'}\n"
    )
    args = ["--trainer.max_steps=40", "--trainer.accumulate_grad_batches=2", "--trainer.val_check_interval=40",
            "--data.val_size=100"]  # fmt: skip
    from minibert.training.fit import fit

    reference = fit(["configs/pretrain.yaml", keep_all], args, root_dir=tmp_path / "reference")
    (at_20,) = Path(reference["log_dir"]).rglob("step=20.ckpt")
    (at_40,) = Path(reference["log_dir"]).rglob("step=40.ckpt")
    assert checkpoint_step(at_20) == 20
    resumed = fit(["configs/pretrain.yaml", keep_all], [*args, f"--ckpt_path={at_20}"], root_dir=tmp_path / "resumed")
    (got,) = Path(resumed["log_dir"]).rglob("step=40.ckpt")
    want_w, got_w = weights(at_40), weights(got)
    assert want_w.keys() == got_w.keys() and all(torch.equal(want_w[k], got_w[k]) for k in want_w)
    assert resumed["val/acc"] == reference["val/acc"]


def test_last_checkpoint_is_the_step_training_ended_on_when_steps_are_not_a_multiple_of_its_interval(tmp_path):
    """A budget's steps need not be a multiple of the checkpoint interval (100 steps in the shipped config):
    the `last.ckpt` that fine-tuning loads holds the final step's encoder, not the one 30 steps before."""
    from minibert.training.fit import fit

    summary = fit([ROOT / "configs/pretrain.yaml"], ["--trainer.max_steps=130", "--trainer.val_check_interval=130",
                  "--data.val_size=16", "--trainer.logger=false"], root_dir=tmp_path)  # fmt: skip
    assert summary["step"] == 130
    (last,) = tmp_path.rglob("last.ckpt")
    assert checkpoint_step(last) == 130
