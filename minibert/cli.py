"""`python -m minibert fit -c configs/pretrain.yaml`: LightningCLI with minibert's defaults.

- The model is any `EncoderModule` subclass chosen by class path; the data is `StreamDataModule`,
  which receives the model's objective (`model.objective` -> `data.source`) and the seed.
- `seed_everything` defaults to 0 (LightningCLI's default is random).
- The logger defaults to a CSVLogger under `trainer.default_root_dir` (no account needed);
  stack `-c configs/wandb.yaml` for wandb (offline without an API key). A logger whose `save_dir` is left
  at its class default also writes under `trainer.default_root_dir`, so a run's files stay together.
- Every run saves its config and a `summary.json` (RunSummary) in its log directory.
- `--ckpt_path last` resumes from the newest `last*.ckpt` anywhere under `trainer.default_root_dir`
  (each run logs to a new version folder, where Lightning alone would look), or starts fresh if none.
- A bad setting stops the run before training with one line naming the setting, its value and what is
  allowed (`ConfigError`; `python -m minibert` prints it as `error: ...` and exits with status 2; set
  `JSONARGPARSE_DEBUG=1` for the full traceback).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import yaml
from jsonargparse import Namespace
from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import TQDMProgressBar
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI

from minibert.callbacks import RunSummary, SaveAndLogConfig
from minibert.data import StreamDataModule
from minibert.finetune import read_checkpoint
from minibert.module import EncoderModule

BAR_REFRESH = 10  # steps between progress-bar redraws, unless trainer.callbacks names a progress bar

# ckpt_path values Lightning resolves itself rather than reading a file
_CKPT_KEYWORDS = ("last", "best", "hpc")


class ConfigError(ValueError):
    """A bad setting found before training; the message says where, what was given and what is allowed."""


def explain(err: BaseException) -> str:
    """One line from a chain of errors wrapped by jsonargparse: where it happened (`model > encoder > width`,
    with the class path tried there) and the innermost message, which is the one the failing class raised.
    An unknown option also lists the options that class accepts."""
    where, seen, owner = [], set(), None
    while True:
        seen.add(id(err))
        for pattern in (r'Parser key "([^"]+)"', r"Problem with given class_path '([^']+)'"):
            found = re.match(pattern, str(err))
            if found and found[1] not in where:
                where.append(found[1])
                owner = found[1] if "class_path" in pattern else owner
        nxt = err.__cause__ if err.__cause__ is not None else None if err.__suppress_context__ else err.__context__
        if nxt is None or id(nxt) in seen:
            break
        err = nxt
    message = " ".join(str(err).split()) or type(err).__name__  # jsonargparse messages span lines
    if isinstance(err, KeyError) and owner is not None:
        module, _, name = owner.rpartition(".")
        accepted = inspect.signature(getattr(importlib.import_module(module), name)).parameters
        message += f"; {name} accepts: {', '.join(accepted)}"
    return f"{' > '.join(where)}: {message}" if where else message


def _check_yaml_files(args: Sequence[str]) -> None:
    """Name the file when a `-c/--config` file is not valid YAML (jsonargparse's message does not)."""
    paths = [b for a, b in zip(args, args[1:], strict=False) if a in ("-c", "--config")]
    paths += [a.partition("=")[2] for a in args if a.startswith(("-c=", "--config="))]
    for path in filter(os.path.isfile, paths):
        with open(path) as f:
            try:
                yaml.safe_load(f)
            except yaml.YAMLError as err:
                raise ConfigError(f"config file {path!r} is not valid YAML: {' '.join(str(err).split())}") from None


@contextmanager
def _config_errors() -> Iterator[None]:
    try:
        yield
    except ConfigError:
        raise
    except Exception as err:  # parsing and construction only: anything failing here is a bad setting
        raise ConfigError(explain(err)) from err


def newest_last_checkpoint(root: str | Path) -> Path | None:
    """The most recently written `last*.ckpt` under `root` (any run, any logger layout), or None."""
    found = [p for p in Path(root).glob("**/checkpoints/last*.ckpt") if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


class MiniBertCLI(LightningCLI):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("seed_everything_default", 0)
        kwargs.setdefault("save_config_callback", SaveAndLogConfig)  # in the run's own folder, and to the loggers
        kwargs.setdefault("save_config_kwargs", {"overwrite": True})
        # errors come back to us (see main); no abbreviations (as in jsonargparse 5), so a typo such as
        # --trainer.max_step is an error instead of silently meaning --trainer.max_steps
        kwargs.setdefault("parser_kwargs", {"exit_on_error": False, "allow_abbrev": False})
        self._checkpoint: dict | None = None  # the ckpt_path file, read while parsing
        super().__init__(EncoderModule, StreamDataModule, *args, subclass_mode_model=True, **kwargs)

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_lightning_class_args(RunSummary, "summary")
        parser.link_arguments("seed_everything", "data.seed")
        parser.link_arguments("model.objective", "data.source", apply_on="instantiate")

    def instantiate_trainer(self, **kwargs) -> Trainer:
        trainer = super().instantiate_trainer(**kwargs)
        bar = trainer.progress_bar_callback
        if type(bar) is TQDMProgressBar and not self._configured_progress_bar():
            # Lightning's default bar redraws the terminal twice a step, a cost paid on every step (figures in
            # results/bench.md); every BAR_REFRESH steps is still several times a second.
            trainer.callbacks[trainer.callbacks.index(bar)] = TQDMProgressBar(refresh_rate=BAR_REFRESH)
        return trainer

    def _configured_progress_bar(self) -> bool:
        callbacks = self._subcommand_config().trainer.callbacks or []
        return any("ProgressBar" in str(getattr(c, "class_path", c)) for c in callbacks)

    def _subcommand_config(self) -> Namespace:
        return self.config[self.config.subcommand] if self.config.get("subcommand") else self.config

    def parse_arguments(self, parser: LightningArgumentParser, args) -> None:
        with _config_errors():
            if not isinstance(args, (dict, Namespace)):
                _check_yaml_files(sys.argv[1:] if args is None else args)
            super().parse_arguments(parser, args)
            self._resolve_ckpt_path(self._subcommand_config())  # before Lightning reads the file

    def _resolve_ckpt_path(self, config: Namespace) -> None:
        ckpt_path = config.get("ckpt_path")
        if ckpt_path == "last":
            ckpt_path = newest_last_checkpoint(config.trainer.default_root_dir or ".") or "last"
            config.ckpt_path = str(ckpt_path)
        if ckpt_path is not None and str(ckpt_path) not in _CKPT_KEYWORDS:
            self._checkpoint = read_checkpoint(ckpt_path, field="ckpt_path")  # exists, loads, is minibert's

    def before_instantiate_classes(self) -> None:
        with _config_errors():
            trainer = self._subcommand_config().trainer
            if not isinstance(trainer.max_steps, int) or trainer.max_steps <= 0:
                raise ConfigError(
                    f"trainer.max_steps={trainer.max_steps!r} is not allowed: it must be a positive integer "
                    "(the training stream is infinite, so steps are the budget)"
                )
            root = trainer.default_root_dir or "."
            if trainer.logger is None or trainer.logger is True:
                trainer.logger = {"class_path": "lightning.pytorch.loggers.CSVLogger", "init_args": {"save_dir": root}}
            loggers = trainer.logger if isinstance(trainer.logger, list) else [trainer.logger]
            for logger in loggers:
                _default_save_dir_to(logger, root)

    def instantiate_classes(self) -> None:
        with _config_errors():
            super().instantiate_classes()
            if self._checkpoint is not None:
                self.model.check_checkpoint(self._checkpoint)  # a resume of another shape fails here, not in torch
                self._checkpoint = None


def _default_save_dir_to(logger: object, root: str) -> None:
    """Point a logger config's `save_dir` at `root` when it is still its class's default."""
    if not isinstance(logger, (dict, Namespace)) or not logger.get("init_args"):
        return
    module, _, name = logger["class_path"].rpartition(".")
    for cls in getattr(importlib.import_module(module), name).__mro__:  # a subclass may pass it on as **kwargs
        parameter = inspect.signature(cls.__init__).parameters.get("save_dir")
        if parameter is not None:
            init_args = logger["init_args"]
            if init_args.get("save_dir", parameter.default) == parameter.default:
                init_args["save_dir"] = root
            return


def main(args=None) -> None:
    try:
        MiniBertCLI(args=args)
    except ConfigError as err:
        if os.environ.get("JSONARGPARSE_DEBUG"):
            raise
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
