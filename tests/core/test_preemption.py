"""A scheduler's signals: SIGTERM (before preemption) and SIGUSR1 (SLURM's requeue warning) stop a training
run after the step under way with `last.ckpt` saved at that step and status 128 + signal, and
`--ckpt_path last` then ends with the same summary metrics and weights as a run left alone."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import lightning as L
import pytest
import torch

from minibert.training.checkpoints import newest_last_checkpoint
from minibert.training.fit import fit
from minibert.training.preemption import Preempted
from tests.clirun import checkpoints_every, run_fit, start_fit, summaries, weights

MAX_STEPS = 300
SHORT = [f"--trainer.max_steps={MAX_STEPS}", "--trainer.val_check_interval=100", "--data.val_size=200"]


def signal_after_first_checkpoint(tmp_path: Path, root: Path, signum: int):
    """Start a run, send `signum` shortly after its step-25 checkpoint exists; returns (status, stderr, args)."""
    config = tmp_path / "every_25.yaml"
    config.write_text(checkpoints_every(25))
    args = ["-c", "configs/pretrain.yaml", "-c", config, *SHORT, f"--trainer.default_root_dir={root}"]
    log = tmp_path / f"stderr-{signum}.txt"
    with open(log, "w") as err:
        proc = start_fit(*args, stderr=err)
        deadline = time.monotonic() + 120
        while newest_last_checkpoint(root) is None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # a few steps on: a signal at step 25's own end would be saved where the cadence saved
        assert proc.poll() is None, "the run ended before it could be signalled"
        proc.send_signal(signum)
        status = proc.wait(timeout=120)
    return status, log.read_text(), args


def checkpoint_step(path: Path) -> int:
    return torch.load(path, map_location="cpu", weights_only=True)["global_step"]


@pytest.mark.slow  # signals to a real training process: with the claims
@pytest.mark.parametrize(("signum", "status", "resume"), [(signal.SIGTERM, 143, True), (signal.SIGUSR1, 138, False)])
def test_a_signal_saves_the_current_step_and_resume_matches_an_uninterrupted_run(tmp_path, signum, status, resume):
    root = tmp_path / "preempted"
    got, stderr, args = signal_after_first_checkpoint(tmp_path, root, signum)
    assert got == status, stderr[-2000:]
    step = checkpoint_step(newest_last_checkpoint(root))
    assert 25 < step < MAX_STEPS  # saved at the signal, not at the every-25-steps cadence's step 25
    assert f"stopped by {signal.Signals(signum).name} after step {step}" in stderr
    assert summaries(root) == [], "a stopped run has no summary: it did not finish"
    if not resume:  # the resume is the same whichever signal stopped the run: once is enough
        return

    resumed = run_fit(*args, "--ckpt_path=last")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    reference = run_fit(*args[:-1], f"--trainer.default_root_dir={tmp_path / 'reference'}")
    assert reference.returncode == 0, reference.stderr[-2000:]
    (want,), (got,) = summaries(tmp_path / "reference"), summaries(root)
    metrics = [k for k in want if k.startswith(("val/", "train/"))] + ["step"]
    assert {k: got[k] for k in metrics} == {k: want[k] for k in metrics}
    want_w, got_w = (weights(newest_last_checkpoint(r)) for r in (tmp_path / "reference", root))
    assert want_w.keys() == got_w.keys() and all(torch.equal(want_w[k], got_w[k]) for k in want_w)


class SignalAt(L.Callback):
    """Sends this process `signum` at the end of training step `step`, before Preemption looks for one."""

    def __init__(self, signum: int, step: int) -> None:
        self.signum, self.step = signum, step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step == self.step:
            os.kill(os.getpid(), self.signum)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGUSR1, 138), (signal.SIGINT, 130)], ids=["SIGUSR1", "Ctrl-C"])
def test_a_signal_in_this_process_saves_that_step_and_stops_with_128_plus_signum(tmp_path, capsys, signum, status):
    """The fast tier's check of the path the claims test in real processes: the step under way is saved as
    last.ckpt (Ctrl-C too, so that `--ckpt_path last` continues it), the run stops with status 128 + signum and
    says how to continue, and the handler it replaced is back."""
    layer = tmp_path / "signal.yaml"
    layer.write_text(
        checkpoints_every(100)
        + f"""\
    - class_path: tests.core.test_preemption.SignalAt
      init_args: {{signum: {int(signum)}, step: 3}}
"""
    )
    before = signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
    try:
        handler = signal.getsignal(signum)
        with pytest.raises(Preempted) as stopped:
            fit(["configs/pretrain.yaml", layer], ["--trainer.max_steps=20", "--data.val_size=64"], root_dir=tmp_path)
        assert signal.getsignal(signum) == handler
    finally:
        signal.signal(signum, before)
    assert stopped.value.code == status
    (saved,) = tmp_path.glob("**/checkpoints/last.ckpt")
    assert checkpoint_step(saved) == 3
    err = capsys.readouterr().err
    assert f"stopped by {signal.Signals(signum).name} after step 3" in err and "--ckpt_path last" in err
