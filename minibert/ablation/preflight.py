"""Checks before training: every cell a grid is about to train is resolved and built, and what it will log
is known, before any run is launched (scripts/ablate.py).

A cell is built as its first run would be (LightningCLI parses its config files and overrides, imports its
plug-ins and instantiates the trainer, model and data) but nothing trains: the untrained model scores one
small validation batch, which tells the summary keys its runs will write. A fine-tuning cell whose
pre-training run has not finished loads a stand-in checkpoint of that run's untrained encoder, so a shape
that does not fit is found here too. Every failure is a GridError naming the cell.

Example:
    >>> keys = preflight(todo_runs, root)  # doctest: +SKIP
    >>> "val/acc" in keys["pretrain/bidirectional"]  # doctest: +SKIP
    True
"""

from __future__ import annotations

import contextlib
import logging
import re
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from minibert.ablation.crashes import plugin_crash
from minibert.ablation.grid import GridError
from minibert.ablation.runner import Run
from minibert.training.length_eval import LengthEval
from minibert.training.pair_eval import PairEval

ALWAYS_LOGGED = ("step", "wall_time_s", "train/loss", "val/loss")  # besides the metrics and parameter counts
PROBE_SIZE, PROBE_TRIES = 4, 8  # validation sentences the untrained model scores; batches drawn at most


def logged_keys(module, callbacks=()) -> set[str]:
    """The numeric summary keys a run of `module` (an EncoderModule) writes, with its trainer's `callbacks`
    (a LengthEval logs the validation's figures again per length). Small batches are scored until every head
    has graded something (a head that grades nothing logs no oracle figures)."""
    objective = module.objective
    pending = dict(zip(module.metric_prefixes, module.val_metrics, strict=True))
    keys = {*ALWAYS_LOGGED, *module.parameter_counts()}
    for seed in range(PROBE_TRIES):
        batch = objective.make_batch(np.random.default_rng(seed), PROBE_SIZE, "val")
        with torch.no_grad():
            graded = objective(module.encoder, batch).graded()
        for prefix, metric in list(pending.items()):
            part = graded[prefix]
            metric.update(*part.grades())
            if len(part.target) or seed == PROBE_TRIES - 1:
                keys |= {f"val/{prefix}{k}" for k in metric.compute()}
                del pending[prefix]
            metric.reset()
        if not pending:
            break
    graded = {k.removeprefix("val/") for k in keys if k.startswith("val/")}  # what LengthEval grades again
    keys |= {f"val/{name}" for name in module.val_values.names}
    for callback in callbacks:
        if isinstance(callback, LengthEval):
            keys |= {f"val/length_{n}/{k}" for n in callback.lengths for k in graded}
        if isinstance(callback, PairEval):
            keys |= callback.logged_keys(module)
    return keys


def _one_line(err: BaseException, run: Run, root: Path) -> str:
    """The error in one line; one raised in a plug-in's own code names its type, file and line; a missing module
    that the cell names by class path gets the plug-in hint."""
    from minibert.training.cli import ConfigError, explain

    if (crash := plugin_crash(err)) is not None:
        return f"crashed in plug-in code: {crash}; fix the plug-in and run again"
    line = str(err) if isinstance(err, ConfigError) else explain(err)
    missing = re.search(r"No module named '([^'.]+)", line)
    named = " ".join([*((root / c).read_text() for c in run.experiment.configs), repr(run.experiment.overrides)])
    if missing and f"{missing[1]}." in named:
        line += " (a plug-in must be importable: give its folder with --plugins, or put it on PYTHONPATH)"
    return line


def build(run: Run, root: Path, scratch: Path, encoder_ckpt: Path | None):
    """The cell of `run`, built as LightningCLI builds it for training, writing only under `scratch`."""
    from minibert.training.cli import MiniBertCLI
    from minibert.training.fit import QUIET

    args = [*(f"--config={root / c}" for c in run.experiment.configs), f"--seed_everything={run.seed}"]
    args += [*run.experiment.cli_args(), f"--trainer.default_root_dir={scratch}", "--trainer.logger=false", *QUIET]
    if encoder_ckpt is not None:
        args.append(f"--model.init_args.encoder_ckpt={encoder_ckpt}")
    with warnings.catch_warnings(), _quiet():  # this process's sys.argv is ablate.py's, not the cell's: the point
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter is intended")
        return MiniBertCLI(args=args, run=False)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Lightning's per-trainer info lines ("Seed set to 0", "GPU available: ..."), once per cell, left out."""
    loggers = [
        logging.getLogger(n) for n in ("lightning.fabric.utilities.seed", "lightning.pytorch.utilities.rank_zero")
    ]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def preflight(runs: list[Run], root: Path) -> dict[str, set[str]]:
    """Build the first run of every experiment among `runs` (upstream first); return experiment -> the keys
    its runs will log. GridError naming the cell (and the field, where the error names one) on any failure."""
    firsts: dict[str, Run] = {}
    for r in sorted(runs, key=lambda r: r.seed):
        firsts.setdefault(r.experiment.name, r)
    keys: dict[str, set[str]] = {}
    stand_ins: dict[str, Path] = {}
    loaded = {r.upstream.experiment.name for r in firsts.values() if r.upstream is not None}  # need a stand-in
    with tempfile.TemporaryDirectory(prefix="minibert-preflight-") as tmp:
        for name, run in sorted(firsts.items(), key=lambda kv: kv[1].depth):
            try:
                ckpt = None
                if (up := run.upstream) is not None:
                    ckpt = up.path(up.summary()["checkpoint"]) if up.done else stand_ins.get(up.experiment.name)
                    if ckpt is None:  # not trained here, not finished: the stand-in of its untrained encoder
                        ckpt = stand_ins[up.experiment.name] = _stand_in(
                            build(up, root, Path(tmp) / "up", None), tmp, up
                        )
                cli = build(run, root, Path(tmp) / name, ckpt)
                keys[name] = logged_keys(cli.model, cli.trainer.callbacks)
                if name in loaded and name not in stand_ins:
                    stand_ins[name] = _stand_in(cli, tmp, run)
            except Exception as err:  # anything: the cell cannot be built as written
                line = _one_line(err, run, root)
                if run.upstream is not None and ckpt is not None:
                    line = line.replace(repr(str(ckpt)), f"<the checkpoint of {run.upstream.experiment.name}>")
                raise GridError(f"cell {name}: {line}") from err
    return keys


def _stand_in(cli, tmp: str, run: Run) -> Path:
    """A checkpoint of the cell's untrained encoder, for the cells that fine-tune it."""
    path = Path(tmp) / f"{run.experiment.name.replace('/', '_')}-stand-in.ckpt"
    torch.save({"state_dict": cli.model.state_dict(), "encoder_config": asdict(cli.model.encoder_config)}, path)
    return path
