"""RunSummary: validate at the last step and write `summary.json` next to the run's saved config."""

from __future__ import annotations

import time
from pathlib import Path

import lightning as L

from minibert.code_version import code_version
from minibert.files import write_json


class RunSummary(L.Callback):
    """Writes `<log_dir>/summary.json` when fit ends: the final `val/*` metrics, the last `train/loss`,
    `step`, `wall_time_s` (setup to end of fit), the module's parameter counts and `code`, the code that
    made it (minibert.code_version: source hash, git commit, dirty flag).

    It also makes the last training step a validation step, so the summary's metrics are those of the
    final weights whatever `val_check_interval` is. The file is written atomically and only at the end,
    so its presence means the run finished.
    """

    def __init__(self, filename: str = "summary.json") -> None:
        self.filename = filename
        self._start = time.perf_counter()

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        self._start = time.perf_counter()

    def on_train_batch_end(self, trainer: L.Trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        if trainer.max_steps > 0 and trainer.global_step >= trainer.max_steps:
            trainer.should_stop = True  # Lightning validates before stopping

    def summary(self, trainer: L.Trainer, pl_module: L.LightningModule) -> dict:
        metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith(("val/", "train/"))}
        out = {**metrics, "step": trainer.global_step, "wall_time_s": round(time.perf_counter() - self._start, 3)}
        counts = getattr(pl_module, "parameter_counts", None)
        return {**out, **(counts() if counts else {}), "code": code_version()}

    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        log_dir = trainer.log_dir  # a broadcast from rank 0 under DDP: every rank must ask, or rank 0 waits forever
        if trainer.is_global_zero and log_dir is not None:
            write_json(Path(log_dir) / self.filename, self.summary(trainer, pl_module))
