"""`python -m minibert fit -c configs/pretrain.yaml`: LightningCLI with minibert's defaults.

- The model is any `EncoderModule` subclass chosen by class path; the data is `StreamDataModule`,
  which receives the model's objective (`model.objective` -> `data.source`) and the seed.
- `seed_everything` defaults to 0 (LightningCLI's default is random). It also sets the two seeds left
  unset: `model.init_args.init_seed` (initial weights) and `data.seed` (training stream); each can be set on
  its own, as can `data.val_seed` (the validation set: fixed at 2018 unless set; `null` for the seed's).
  The config saved with the run holds the values used.
- The optimizer and schedule are the module's (AdamW; warm-up, then decay to zero at `trainer.max_steps`):
  LightningCLI's `--optimizer` and `--lr_scheduler` are refused, since the schedule they add would step once
  an epoch, which the endless training stream never ends.
- `--budget.flops F` (or `--budget.tokens N`) trains for the steps that spend that compute instead of
  `trainer.max_steps`, with the warm-up keeping its configured fraction (minibert.training.budget); the
  saved config holds the steps and warm-up it gave.
- The logger defaults to a CSVLogger under `trainer.default_root_dir` (no account needed);
  stack `-c configs/wandb.yaml` for wandb (offline without an API key). A logger whose `save_dir` is left
  at its class default also writes under `trainer.default_root_dir`, so a run's files stay together.
- Every run saves its config and a `summary.json` (RunSummary) in its log directory.
- `--length_eval.lengths [16,48,64]` grades the final weights again at other sentence lengths
  (minibert.training.length_eval).
- `pair_eval` grades a pre-training run's final weights on its language's minimal pairs, zero-shot and by a
  probe (minibert.training.pair_eval); `--pair_eval.enabled false` skips it.
- `--ckpt_path last` resumes from the newest readable checkpoint anywhere under `trainer.default_root_dir`
  (each run logs to a new version folder, where Lightning alone would look), or starts fresh if none; a
  damaged newest checkpoint is named and the previous complete one is used.
- A resume is checked first: a checkpoint written with other training settings is refused, naming them;
  so is one written by other code (the package's or a plug-in's sources), naming the files that changed,
  unless `--allow-code-change` is given, which the run's summary.json then records
  (`code_changed_on_resume`); a checkpoint of a finished run is not resumed (the command says so and exits
  with status 0, writing nothing). Checkpoints are written atomically and carry the settings and the source
  hashes they were trained with.
- Config files and flags stack in order, as in any LightningCLI, except that a flag never loses to a `-c`
  file given after it: flags are applied after every file, and a file that sets the same key is named.
- SIGTERM or SIGUSR1 during training saves `last.ckpt` at the current step and exits with 128 + signal
  (143 for SIGTERM), see minibert.training.preemption.
- A bad setting stops the run before training with one line naming the setting, its value and what is
  allowed (`ConfigError`; `python -m minibert` prints it as `error: ...` and exits with status 2; set
  `JSONARGPARSE_DEBUG=1` for the full traceback). A run whose loss stops being finite (a learning rate far too
  high) stops there with one line and status 2. A file the run cannot read or write (read-only folder, full
  disk) is one line too, with status 3. A bad setting found once training is set up (a callback's check, a
  language that refuses the objective) is one line with status 2 too, and the run's folder is removed.
- `python -m minibert fit` ends with three lines: where the run is, its final metrics and its time.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import shutil
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import yaml
from jsonargparse import ActionYesNo, Namespace, set_parsing_settings
from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import RichProgressBar, TQDMProgressBar
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI
from lightning.pytorch.plugins.io import CheckpointIO
from lightning.pytorch.utilities import rank_zero_info
from lightning.pytorch.utilities.exceptions import SIGTERMException

from minibert.masking import MaskingRecipe
from minibert.places import shown
from minibert.training.budget import Budget, plan_steps
from minibert.training.callbacks import RunSummary, SaveAndLogConfig
from minibert.training.checkpoints import (
    AtomicCheckpointIO,
    FinalCheckpoint,
    TrainingConfig,
    check_same_module,
    config_differences,
    read_checkpoint,
    resumable_checkpoint,
    saved_code_files,
    saved_settings,
    training_settings,
)
from minibert.training.code_version import changed_files, class_paths, code_files, running_plugin_hashes
from minibert.training.data import StreamDataModule
from minibert.training.length_eval import LengthEval
from minibert.training.loggers import run_log_dir
from minibert.training.module import EncoderModule
from minibert.training.pair_eval import PairEval
from minibert.training.preemption import Preempted, Preemption
from minibert.training.progress import StepRichBar, StepTQDMBar, quiet_third_parties
from minibert.validation import NONNEGATIVE, NONNEGATIVE_INT, POSITIVE, POSITIVE_INT, SEED, Range, check

# A masking recipe is a frozen dataclass, which jsonargparse reads field by field and, by default, never as a
# subclass; a plug-in recipe (a MaskingRecipe subclass named by class_path) must be accepted, and kept in the
# saved config under its own class path.
set_parsing_settings(subclasses_enabled=[MaskingRecipe])

EXIT_BAD_INPUT = 2  # a setting or a file given by the user
EXIT_ENVIRONMENT = 3  # the machine: a folder that cannot be written, a full disk

BAR_REFRESH = 10  # steps between progress-bar redraws, unless trainer.callbacks names a progress bar

# ckpt_path values Lightning resolves itself rather than reading a file
_CKPT_KEYWORDS = ("last", "best", "hpc")


class ConfigError(ValueError):
    """A bad setting found before training; the message says where, what was given and what is allowed."""


class AlreadyFinished(Exception):
    """`ckpt_path` is the checkpoint of a run that reached its last step: there is nothing to resume."""


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
    message = _quoted_number(message)
    if isinstance(err, KeyError) and owner is not None:
        module, _, name = owner.rpartition(".")
        accepted = inspect.signature(getattr(importlib.import_module(module), name)).parameters
        message += f"; {name} accepts: {', '.join(accepted)}"
    return f"{' > '.join(where)}: {message}" if where else message


def _quoted_number(message: str) -> str:
    """jsonargparse says "Expected a <class 'int'>. Got value: 4" for the text '"4"' (it shows the text without
    its quotes): when the value shown is a valid number of the expected type, say it was given as text."""
    found = re.search(r"Expected a <class '(int|float)'>\. Got value: (\S+)$", message)
    if found is None:
        return message
    expected, shown = found.groups()
    try:
        (int if expected == "int" else float)(shown.strip('"'))
    except ValueError:
        return message
    text = shown.strip('"')
    fixed = f"Expected a <class '{expected}'>. Got the text \"{text}\" (quoted, so a string): "
    fixed += "write it as a plain number"
    return message[: found.start()] + fixed


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
    except (ConfigError, AlreadyFinished):
        raise
    except Exception as err:  # parsing and construction only: anything failing here is a bad setting
        raise ConfigError(explain(err)) from err


# trainer settings Lightning accepts but that fail (or silently do nothing) later:
# (range, other values also allowed, why the range is what it is)
_TRAINER_RANGES = {
    "max_steps": (POSITIVE_INT, (), "the training stream is infinite, so steps are the budget"),
    "log_every_n_steps": (POSITIVE_INT, (), ""),
    "accumulate_grad_batches": (POSITIVE_INT, (), ""),
    "val_check_interval": (POSITIVE, (None, "a duration"), "a positive number of steps between validations"),
    "gradient_clip_val": (NONNEGATIVE, (None,), ""),
    "check_val_every_n_epoch": (POSITIVE_INT, (None,), ""),
    "max_epochs": (POSITIVE_INT, (None, -1), "the training stream is one endless epoch; max_steps is the budget"),
    "limit_val_batches": (POSITIVE, (None,), "the run's summary is its validation metrics"),
}


def _check(owner: str, name: str, value: object, allowed: Range) -> None:
    """`minibert.validation.check` for a CLI setting (`owner.name`, or `name` at the top), as a ConfigError."""
    try:
        check(owner, name, value, allowed)
    except ValueError as err:
        raise ConfigError(str(err).removeprefix(".")) from None


def resolve_seeds(config: Namespace) -> None:
    """Give the seeds left unset (`model.init_args.init_seed`, `data.seed`, and `data.val_seed` when null)
    `seed_everything`'s value, once that is a number, so that the saved config holds the seeds used."""
    seed = config.get("seed_everything")
    if isinstance(seed, bool) or not isinstance(seed, int):
        return  # `true`: LightningCLI draws one later, and this runs again then
    model, data = config.get("model"), config.get("data")
    init_args = model.get("init_args") if isinstance(model, (dict, Namespace)) else None
    if isinstance(init_args, (dict, Namespace)) and init_args.get("init_seed", None) is None:
        init_args["init_seed"] = seed
    if isinstance(data, (dict, Namespace)):
        for name in ("seed", "val_seed"):
            if data.get(name, 0) is None:
                data[name] = seed


_SUBCOMMANDS = ("fit", "validate", "test", "predict")


def flags_after_configs(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """`args` with every `-c/--config FILE` ahead of the other flags, each group in its given order, and a note
    for each flag that a file given after it also sets (which, in plain order, would have replaced it).

    >>> flags_after_configs(["fit", "--data.val_size=10", "-c", "a.yaml"])[0]
    ['fit', '-c', 'a.yaml', '--data.val_size=10']
    """
    head = 1 + next((i for i, a in enumerate(args) if a in _SUBCOMMANDS), -1)
    groups: list[tuple[bool, list[str]]] = []  # (is a config file, its words), as given
    rest = list(args[head:])
    while rest:
        arg = rest.pop(0)
        if arg in ("-c", "--config") and rest:
            groups.append((True, [arg, rest.pop(0)]))
        elif arg.startswith(("-c=", "--config=")):
            groups.append((True, [arg]))
        else:
            group = [arg]
            while "=" not in arg and arg.startswith("--") and rest and not rest[0].startswith("--") and rest[0] != "-c":
                group.append(rest.pop(0))
            groups.append((False, group))
    keys = {i: _config_keys(g[-1].partition("=")[2] or g[-1]) for i, (is_file, g) in enumerate(groups) if is_file}
    notes = []
    for i, (is_file, group) in enumerate(groups):
        key = None if is_file else _flag_key(group[0])
        later = [j for j in keys if j > i]
        if key and (j := next((j for j in later if any(_overlaps(key, k) for k in keys[j])), None)) is not None:
            path = groups[j][1][-1].partition("=")[2] or groups[j][1][-1]
            notes.append(f"note: --{group[0].lstrip('-').partition('=')[0]} is kept over {path}, given after it")
    ordered = [w for is_file in (True, False) for f, g in groups if f == is_file for w in g]
    return [*args[:head], *ordered], notes


def _flag_key(flag: str) -> str | None:
    if not flag.startswith("--") or flag.startswith("--print_config"):
        return None
    return _normal(flag[2:].partition("=")[0])


def _normal(key: str) -> str:
    return ".".join(part for part in key.split(".") if part != "init_args")


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _config_keys(path: str) -> list[str]:
    """The dotted keys of the values a YAML config file sets (its leaves: a mapping merges into what is there,
    a value replaces it), without `init_args`; none for an unreadable file."""
    try:
        with open(path) as f:
            tree = yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return []
    keys: list[str] = []

    def walk(node: object, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                key = _normal(f"{prefix}{k}")
                walk(v, key + "." if key else "")
        elif prefix:
            keys.append(prefix[:-1])

    walk(tree, "")
    return keys


def _refuse_optimizer_args(args: Sequence[str]) -> None:
    for arg in args:
        if isinstance(arg, str) and arg.startswith(("--optimizer", "--lr_scheduler")):
            raise ConfigError(
                f"{arg.partition('=')[0].lstrip('-')} is not supported: the optimizer is AdamW with linear warm-up, "
                "then linear decay to zero at trainer.max_steps; set model.init_args.lr, weight_decay and warmup_steps"
            )


def check_ranges(config: Namespace) -> None:
    """Raise ConfigError, in one line, for a setting that passes its type check but would fail after start-up."""
    seed = config.get("seed_everything")
    if not isinstance(seed, bool):  # LightningCLI's `seed_everything: true` draws one
        _check("", "seed_everything", seed, SEED)
    val_seed = config.get("data", {}).get("val_seed") if isinstance(config.get("data"), (dict, Namespace)) else None
    if val_seed is not None:
        _check("data", "val_seed", val_seed, NONNEGATIVE_INT)
    for name, (allowed, also, why) in _TRAINER_RANGES.items():
        value = config.trainer.get(name)
        duration = "a duration" in also and isinstance(value, (str, dict))  # Lightning's "00:01:00" or {minutes: 1}
        if not (allowed.allows(value) or value in also and not isinstance(value, bool) or duration):
            options = ", ".join([*(repr(a) if a is not None else "None" for a in also if a != "a duration"), ""])
            extra = " or a duration" if "a duration" in also else ""
            raise ConfigError(
                f"trainer.{name}={value!r} is not allowed: it must be {options}{allowed}{extra}"
                + (f" ({why})" if why else "")
            )


# Parsers built in this process, by what builds them: building one reads every class signature (about
# 0.8 s here), and a worker that trains run after run (scripts/ablate.py) would pay it on every run.
# Parsing does not change a parser, so a run is the same whether its parser is new or reused
# (tests/core/test_determinism.py).
_PARSERS: dict[str, tuple] = {}


class MiniBertCLI(LightningCLI):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("seed_everything_default", 0)
        kwargs.setdefault("save_config_callback", SaveAndLogConfig)  # in the run's own folder, and to the loggers
        kwargs.setdefault("save_config_kwargs", {"overwrite": True})
        # errors come back to us (see main); no abbreviations (as in jsonargparse 5), so a typo such as
        # --trainer.max_step is an error instead of silently meaning --trainer.max_steps
        kwargs.setdefault("parser_kwargs", {"exit_on_error": False, "allow_abbrev": False})
        kwargs.setdefault("auto_configure_optimizers", False)  # see the module docstring
        self._checkpoint: dict | None = None  # the ckpt_path file, read while parsing
        self._settings: dict = {}  # this run's training settings, stored in its checkpoints
        self._code: dict[str, str] = {}  # this run's source files' hashes, stored in its checkpoints
        self._code_change: list[str] = []  # the files changed since the resumed checkpoint, when allowed
        super().__init__(EncoderModule, StreamDataModule, *args, subclass_mode_model=True, **kwargs)

    def setup_parser(self, add_subcommands: bool, main_kwargs: dict, subparser_kwargs: dict) -> None:
        key = repr((type(self), add_subcommands, main_kwargs, subparser_kwargs, self.trainer_class,
                    self.trainer_defaults, self.seed_everything_default, self.save_config_callback))  # fmt: skip
        if key in _PARSERS:
            self.parser, self._subcommand_parsers, self._subcommand_method_arguments = _PARSERS[key]
            return
        super().setup_parser(add_subcommands, main_kwargs, subparser_kwargs)
        _PARSERS[key] = (
            self.parser,
            getattr(self, "_subcommand_parsers", {}),
            getattr(self, "_subcommand_method_arguments", {}),
        )

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument(
            "--allow-code-change", "--allow_code_change", dest="allow_code_change", action=ActionYesNo,
            default=False, help="resume a checkpoint written by other code (recorded in summary.json)",
        )  # fmt: skip
        parser.add_lightning_class_args(RunSummary, "summary")
        parser.add_lightning_class_args(LengthEval, "length_eval")
        parser.add_lightning_class_args(PairEval, "pair_eval")
        parser.add_class_arguments(Budget, "budget")
        parser.link_arguments("model.objective", "data.source", apply_on="instantiate")

    def instantiate_trainer(self, **kwargs) -> Trainer:
        plugins = self._subcommand_config().trainer.get("plugins")
        plugins = [] if plugins is None else plugins if isinstance(plugins, list) else [plugins]
        if not any(isinstance(p, CheckpointIO) for p in plugins):
            kwargs["plugins"] = [*plugins, AtomicCheckpointIO()]
        trainer = super().instantiate_trainer(**kwargs)
        trainer.callbacks += [Preemption(), TrainingConfig(self._settings, self._code), FinalCheckpoint()]
        bar = trainer.progress_bar_callback
        if type(bar) in (TQDMProgressBar, RichProgressBar) and not self._configured_progress_bar():
            # Lightning's default bar, counted in steps (minibert.training.progress). Its tqdm form redraws the
            # terminal twice a step, a cost paid on every step (figures in results/bench.md); every BAR_REFRESH
            # steps is still several times a second.
            step_bar = StepTQDMBar(refresh_rate=BAR_REFRESH) if type(bar) is TQDMProgressBar else StepRichBar()
            trainer.callbacks[trainer.callbacks.index(bar)] = step_bar
        return trainer

    def _configured_progress_bar(self) -> bool:
        callbacks = self._subcommand_config().trainer.callbacks or []
        return any("ProgressBar" in str(getattr(c, "class_path", c)) for c in callbacks)

    def _subcommand_config(self) -> Namespace:
        return self.config[self.config.subcommand] if self.config.get("subcommand") else self.config

    def parse_arguments(self, parser: LightningArgumentParser, args) -> None:
        with _config_errors():
            if not isinstance(args, (dict, Namespace)):
                args, notes = flags_after_configs(sys.argv[1:] if args is None else list(args))
                for note in notes:
                    print(note, file=sys.stderr)
                _check_yaml_files(args)
                _refuse_optimizer_args(args)
            with warnings.catch_warnings():  # args are sys.argv's, reordered: what the warning guards against
                warnings.filterwarnings("ignore", message="LightningCLI's args parameter is intended")
                super().parse_arguments(parser, args)
            config = self._subcommand_config()
            if config.get("trainer") is not None:  # not for --print_config and the like
                check_ranges(config)
                resolve_seeds(config)
                plain = config.clone().as_dict()
                self._settings = training_settings(plain)
                self._code = code_files(class_paths(plain))
                self._resolve_ckpt_path(config)  # before Lightning reads the file

    def _parse_ckpt_path(self) -> None:
        """Lightning would take a resumed run's model settings from the checkpoint's hyper-parameters, over the
        config given. A resume here keeps the config given: `_check_resume` refuses a checkpoint trained with
        other settings, and `check_same_module` one of another kind of model, each in one line."""

    def _resolve_ckpt_path(self, config: Namespace) -> None:
        ckpt_path = config.get("ckpt_path")
        if ckpt_path == "last":
            found = resumable_checkpoint(config.trainer.default_root_dir or ".")
            if found is None:
                return  # Lightning starts fresh, with a warning
            ckpt_path, self._checkpoint = found
            config.ckpt_path = str(ckpt_path)
        elif ckpt_path is not None and str(ckpt_path) not in _CKPT_KEYWORDS:
            self._checkpoint = read_checkpoint(ckpt_path, field="ckpt_path")  # exists, loads, is minibert's
        if self._checkpoint is not None:
            self._check_resume(str(ckpt_path), self._checkpoint, config)

    def _check_resume(self, path: str, checkpoint: dict, config: Namespace) -> None:
        """Refuse a checkpoint trained with other settings; stop early when its run already finished."""
        saved = saved_settings(checkpoint)
        self._check_code(path, checkpoint, config)
        if saved is not None and (differ := config_differences(saved, self._settings)):
            shape = any(d.startswith("model.init_args.encoder.") for d in differ)
            raise ConfigError(
                f"ckpt_path={path!r} was trained with other settings{', an encoder of another shape' if shape else ''}"
                f" ({'; '.join(differ)}): resume with the settings it was trained with, or start a new run in "
                "another trainer.default_root_dir"
            )
        if not _budget(config).given:  # a budget's steps are known once the model is built
            self._check_unfinished(path, checkpoint, config.trainer.max_steps)

    def _check_code(self, path: str, checkpoint: dict, config: Namespace) -> None:
        """Refuse a checkpoint written by other code than this, naming the files, unless allowed (and then record
        them for the run's summary). A checkpoint that stored no sources (older code) cannot be checked."""
        saved = saved_code_files(checkpoint)
        if saved is None:
            return
        changed = changed_files(saved, self._code)
        if not changed:
            return
        if not config.get("allow_code_change"):
            raise ConfigError(
                f"ckpt_path={path!r} was written by other code ({len(changed)} file(s) changed: "
                f"{', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}): restore that code, start a new run "
                "in another trainer.default_root_dir, or pass --allow-code-change to continue with this code"
            )
        self._code_change = changed

    @staticmethod
    def _check_unfinished(path: str, checkpoint: dict, max_steps: int) -> None:
        step = checkpoint.get("global_step", 0)
        if step >= max_steps:
            raise AlreadyFinished(
                f"{path} is already finished (step {step} of trainer.max_steps={max_steps}): nothing to resume, "
                "its outputs are left as they are"
            )

    def before_instantiate_classes(self) -> None:
        with _config_errors():
            resolve_seeds(self._subcommand_config())  # a seed LightningCLI drew (`seed_everything: true`)
            trainer = self._subcommand_config().trainer
            root = trainer.default_root_dir or "."
            self._new_root = not os.path.exists(root)  # a run that never trains removes it again
            if trainer.logger is None or trainer.logger is True:
                trainer.logger = {"class_path": "lightning.pytorch.loggers.CSVLogger", "init_args": {"save_dir": root}}
            loggers = trainer.logger if isinstance(trainer.logger, list) else [trainer.logger]
            for logger in loggers:
                _default_save_dir_to(logger, root)

    def instantiate_classes(self) -> None:
        with _config_errors():
            super().instantiate_classes()
            self._spend_budget()
            plugins = running_plugin_hashes(class_paths(self._subcommand_config().clone().as_dict()))
            for callback in self.trainer.callbacks:
                if isinstance(callback, RunSummary):
                    callback.plugins = plugins  # the plug-ins this config imported, hashed as they were
                    callback.code_change = self._code_change
                if hasattr(callback, "check_module"):  # a callback's own check of the model, before any folder
                    callback.check_module(self.model)
            if self._checkpoint is not None:  # a resume of another shape fails here, not in torch
                self.model.check_checkpoint(
                    self._checkpoint, where=f"ckpt_path={self._subcommand_config().ckpt_path!r}"
                )
                check_same_module(self._checkpoint, self.model)
                self._checkpoint = None

    def _spend_budget(self) -> None:
        """Under a budget, set the steps that spend it and the warm-up that keeps its fraction, in the trainer,
        the module and the config saved with the run."""
        config = self._subcommand_config()
        budget = _budget(config)
        if not budget.given:
            return
        trainer, model = self.trainer, self.model
        plan = plan_steps(budget, model, self.datamodule.batch_size, trainer.accumulate_grad_batches,
                          trainer.world_size, trainer.max_steps, model.warmup_steps)  # fmt: skip
        trainer.fit_loop.epoch_loop.max_steps = config.trainer.max_steps = plan.steps
        model.warmup_steps = config.model.init_args.warmup_steps = plan.warmup_steps
        if self._checkpoint is not None:
            self._check_unfinished(str(config.ckpt_path), self._checkpoint, plan.steps)
        spent = f"{budget.flops:.3g} FLOPs" if budget.flops is not None else f"{budget.tokens:.3g} tokens"
        rank_zero_info(f"A budget of {spent} is {plan.steps} steps of {plan.flops_per_step:.4g} FLOPs "
                       f"({plan.tokens_per_step} tokens), warm-up {plan.warmup_steps}")  # fmt: skip

    def fit(self, **kwargs) -> None:
        """`trainer.fit`; a stop on SIGTERM that Lightning raised itself (e.g. under DDP during validation)
        ends with status 143 like one that Preemption handled. A ValueError before the first step (a setup hook
        that refuses the config) is a bad setting: one line, and the run's folder is removed."""
        try:
            self.trainer.fit(**kwargs)
        except SIGTERMException:
            raise Preempted(15) from None
        except ValueError as err:
            if self.trainer.global_step > 0 or kwargs.get("ckpt_path") is not None:
                raise
            _remove_run_folder(self.trainer, remove_root=getattr(self, "_new_root", False))
            raise ConfigError(explain(err)) from err


def _remove_run_folder(trainer: Trainer, remove_root: bool) -> None:
    """Remove the folder a run that never trained made, and the folders above it that it leaves empty, up to its
    `default_root_dir` (which goes too when the run made it); never a folder holding a checkpoint."""
    log_dir = run_log_dir(trainer) if trainer.loggers else None
    if log_dir is None or not os.path.isdir(log_dir) or any(Path(log_dir).rglob("*.ckpt")):
        return
    shutil.rmtree(log_dir, ignore_errors=True)
    root, folder = Path(trainer.default_root_dir).resolve(), Path(log_dir).resolve().parent
    while folder.is_relative_to(root) and (folder != root or remove_root) and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _budget(config: Namespace) -> Budget:
    given = config.get("budget") or {}
    return Budget(**(given.as_dict() if isinstance(given, Namespace) else given))


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


def io_error_line(err: OSError) -> str:
    """One line for a file the run could not read or write: what failed, where, and what to do."""
    where = f" {err.filename!r}" if err.filename else ""
    what = err.strerror or str(err)
    return (
        f"cannot read or write{where}: {what}. Check the folder's permissions and free space, "
        "or set trainer.default_root_dir to a writable folder"
    )


def finished_lines(summary: dict, log_dir: str) -> list[str]:
    """Three lines for a finished run: where it is, its final metrics, its time and steps.

    >>> print("\\n".join(finished_lines({"val/acc": 0.9, "val/loss": 0.41, "train/loss": 0.38, "step": 600,
    ...     "wall_time_s": 6.2, "val/n": 5}, "runs/x/version_0")))
    run: runs/x/version_0 (summary.json, config.yaml and checkpoints there)
    final: val/acc 0.9000, val/loss 0.4100, train/loss 0.3800
    time: 6.2 s for 600 steps
    """
    shown = [k for k in ("val/acc", "val/gap/acc", "val/loss", "train/loss") if isinstance(summary.get(k), float)]
    metrics = ", ".join(f"{k} {summary[k]:.4f}" for k in shown) or "none logged"
    return [
        f"run: {log_dir} (summary.json, config.yaml and checkpoints there)",
        f"final: {metrics}",
        f"time: {summary.get('wall_time_s', float('nan')):.1f} s for {summary.get('step', '?')} steps",
    ]


def _say_finished(cli: MiniBertCLI) -> None:
    """The three lines, from the summary this process wrote (rank 0 only; no other rank wrote one)."""
    written = [c.written for c in getattr(getattr(cli, "trainer", None), "callbacks", []) if isinstance(c, RunSummary)]
    if written and written[0] is not None and written[0].is_file():
        summary = json.loads(written[0].read_text())
        print("\n".join(finished_lines(summary, shown(written[0].parent))), file=sys.stderr)


def main(args=None) -> None:
    quiet_third_parties()
    try:
        _say_finished(MiniBertCLI(args=args))
    except ConfigError as err:
        if os.environ.get("JSONARGPARSE_DEBUG"):
            raise
        print(f"error: {err}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except AlreadyFinished as err:
        print(f"minibert: {err}", file=sys.stderr)
        sys.exit(0)
    except FloatingPointError as err:  # the settings diverge (EncoderModule.training_step): bad input, said once
        if os.environ.get("JSONARGPARSE_DEBUG"):
            raise
        hint = "" if getattr(err, "first", False) else " (see model.init_args.lr)"
        print(f"error: {err}{hint}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except OSError as err:
        if os.environ.get("JSONARGPARSE_DEBUG"):
            raise
        print(f"error: {io_error_line(err)}", file=sys.stderr)
        sys.exit(EXIT_ENVIRONMENT)
