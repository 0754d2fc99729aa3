"""Console output of a run that reads as minibert's own: a progress bar counted in steps, and no third-party noise.

Training streams batches without end, so an epoch never closes and Lightning's bar would read "Epoch 0/-2"
(max_epochs is -1); it also shows the logger's version number (`v_num`) beside the losses. These bars say
"train" and leave the version out. `quiet_third_parties` drops Lightning's advertising tip and a deprecation
warning Lightning raises about its own use of torch's pytree, neither of which is the user's to act on.
"""

from __future__ import annotations

import logging
import re
import warnings

from lightning.pytorch.callbacks import RichProgressBar, TQDMProgressBar

TRAIN = "train"
TIP = "💡 Tip:"  # Lightning's advertisement, logged at INFO once per trainer


def _without_version(metrics: dict) -> dict:
    metrics.pop("v_num", None)
    return metrics


class StepRichBar(RichProgressBar):
    """Lightning's rich bar without an epoch count or the logger's version number."""

    def _get_train_description(self, current_epoch: int) -> str:
        return f"{TRAIN:{len(self.validation_description)}}"  # as wide as "Validation", so the bars do not flicker

    def get_metrics(self, trainer, pl_module) -> dict:
        return _without_version(super().get_metrics(trainer, pl_module))


class StepTQDMBar(TQDMProgressBar):
    """Lightning's tqdm bar (drawn every `refresh_rate` steps) without an epoch count or version number."""

    def on_train_epoch_start(self, trainer, *_) -> None:
        super().on_train_epoch_start(trainer, *_)
        self.train_progress_bar.set_description(TRAIN)

    def get_metrics(self, trainer, pl_module) -> dict:
        return _without_version(super().get_metrics(trainer, pl_module))


# Lightning's lines that say nothing a run's own summary does not: the seed (config.yaml records it) and an
# accelerator that is neither there nor used
NOISE = re.compile(r"Seed set to |(GPU|TPU|HPU|IPU) available: False")


class _NoTip(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.getMessage())
        return not (message.startswith(TIP) or NOISE.match(message))


def quiet_third_parties() -> None:
    """Drop Lightning's tip, its seed and no-accelerator lines and its pytree deprecation warning from this
    process's output (idempotent)."""
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.seed"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _NoTip) for f in log.filters):
            log.addFilter(_NoTip())
    warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\)", category=FutureWarning)
