"""`python -m minibert fit -c configs/pretrain.yaml`: LightningCLI with minibert's defaults.

- The model is any `EncoderModule` subclass chosen by class path; the data is `StreamDataModule`,
  which receives the model's objective (`model.objective` -> `data.source`) and the seed.
- `seed_everything` defaults to 0 (LightningCLI's default is random).
- The logger defaults to a CSVLogger under `trainer.default_root_dir` (no account needed);
  stack `-c configs/wandb.yaml` for wandb (offline without an API key).
- Every run saves its config and a `summary.json` (RunSummary) in its log directory.
"""

from __future__ import annotations

from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import TQDMProgressBar
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI

from minibert.callbacks import RunSummary
from minibert.data import StreamDataModule
from minibert.module import EncoderModule

BAR_REFRESH = 10  # steps between progress-bar redraws, unless trainer.callbacks names a progress bar


class MiniBertCLI(LightningCLI):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("seed_everything_default", 0)
        kwargs.setdefault("save_config_kwargs", {"overwrite": True})
        super().__init__(EncoderModule, StreamDataModule, *args, subclass_mode_model=True, **kwargs)

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_lightning_class_args(RunSummary, "summary")
        parser.link_arguments("seed_everything", "data.seed")
        parser.link_arguments("model.objective", "data.source", apply_on="instantiate")

    def instantiate_trainer(self, **kwargs) -> Trainer:
        trainer = super().instantiate_trainer(**kwargs)
        bar = trainer.progress_bar_callback
        if type(bar) is TQDMProgressBar and not self._configured_progress_bar():
            # Lightning's default bar redraws the terminal twice every step, which costs more than a step of
            # the default model; every BAR_REFRESH steps is still several times a second.
            trainer.callbacks[trainer.callbacks.index(bar)] = TQDMProgressBar(refresh_rate=BAR_REFRESH)
        return trainer

    def _configured_progress_bar(self) -> bool:
        config = self.config[self.subcommand] if self.subcommand else self.config
        callbacks = config.trainer.callbacks or []
        return any("ProgressBar" in str(getattr(c, "class_path", c)) for c in callbacks)

    def before_instantiate_classes(self) -> None:
        config = self.config[self.subcommand] if self.subcommand else self.config
        trainer = config.trainer
        if not isinstance(trainer.max_steps, int) or trainer.max_steps <= 0:
            raise ValueError(
                f"trainer.max_steps={trainer.max_steps!r} is not allowed: it must be a positive integer "
                "(the training stream is infinite, so steps are the budget)"
            )
        if trainer.logger is None or trainer.logger is True:
            trainer.logger = {
                "class_path": "lightning.pytorch.loggers.CSVLogger",
                "init_args": {"save_dir": trainer.default_root_dir or "."},
            }


def main(args=None) -> None:
    MiniBertCLI(args=args)
