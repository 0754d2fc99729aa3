"""Preemption: SIGTERM (what a cluster sends before it takes a job's node back), SIGUSR1 (what SLURM sends
before a requeue) and SIGINT (Ctrl-C in a terminal) save `last.ckpt` at the current step and end the run with
status 128 + signal number (143 for SIGTERM, 138 for SIGUSR1, 130 for Ctrl-C), so the scheduler records a
failure and `--ckpt_path last` continues the run exactly where it stopped. A second Ctrl-C stops at once, as
Python's default does; where SIGINT is ignored (the grid runner's workers, whose runner handles it), it stays
ignored.

The handlers only note the signal; the checkpoint is written at the end of the training step under way,
where Lightning's ModelCheckpoint writes its own (so a resume from it is bit-identical), and validation
under way is finished first. With several processes the decision is Lightning's: its SIGTERM handler,
which these handlers also call, broadcasts rank 0's flag, so every rank stops after the same step.
Under SLURM this takes the place of Lightning's SIGUSR1 handler (which saves `hpc_ckpt_*.ckpt` and requeues
the job itself): the run stops with `last.ckpt`, and requeueing is left to the scheduler (`--requeue`)
or to whoever reruns the command.

Example:
    >>> Preempted(15).code
    143
"""

from __future__ import annotations

import signal
import sys

import lightning as L

from minibert.training.checkpoints import last_checkpoint_path

SIGNALS = (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT)


class Preempted(SystemExit):
    """The run stopped on a signal after saving its state; the exit status is 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


class Preemption(L.Callback):
    """Save `last.ckpt` and stop with status 128 + signum when SIGTERM, SIGUSR1 or SIGINT arrives in training."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}
        self._world_size = 1

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        # after Lightning registered its own handlers (which it restores when fit ends)
        self.signum = None
        self._world_size = trainer.world_size
        try:
            for signum in SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:  # ignored on purpose: left so
                    self._previous[signum] = signal.signal(signum, self._note)
        except ValueError:  # not the main thread: signals cannot be handled here
            self._previous = {}

    def _note(self, signum: int, frame) -> None:
        if signum == signal.SIGINT and self.signum is not None:  # Ctrl-C again: the user will not wait
            raise KeyboardInterrupt
        self.signum = self.signum or signum
        lightning_handler = self._previous.get(signal.SIGTERM)
        if self._world_size > 1 and callable(lightning_handler):
            lightning_handler(signal.SIGTERM, frame)  # sets trainer.received_sigterm and syncs the ranks

    def on_train_batch_end(self, trainer: L.Trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        stop = trainer.received_sigterm if trainer.world_size > 1 else self.signum is not None
        if not stop or trainer.global_step >= trainer.max_steps:
            return  # the last step: let the run finish, validate and write its summary
        path = last_checkpoint_path(trainer)
        trainer.save_checkpoint(path)
        signum = self.signum or signal.SIGTERM
        if trainer.is_global_zero:
            print(
                f"stopped by {signal.Signals(signum).name} after step {trainer.global_step}; saved {path}; "
                "continue with --ckpt_path last",
                file=sys.stderr,
                flush=True,
            )
        raise Preempted(signum)

    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._restore()

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        self._restore()

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous = {}
