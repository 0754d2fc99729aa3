"""What each experiment of a grid is, as columns: the grid's axes, read from the configs, never from names.

An experiment's settings are its config files merged in order with its overrides, flattened to dotted keys
(`model.init_args.encoder.width: 64`). Its axes are the settings that differ between the grid's
experiments, named by their last part (`width`, `flops`, `regime`), or for a plug-in by the key that holds it
(`objective: SpanMaskedLM`, `language: Dyck`), plus the labels of the grid's named sweep axes (`arm`,
`budget`), which win over a derived axis of the same name. A fine-tuning experiment also carries the axes of
the pre-training run its encoder comes from (`objective` is then the pre-training objective), its own under
the same names when no pre-training setting has them.

Example:
    >>> from minibert.ablation.grid import load_grid
    >>> axes = grid_axes(load_grid("configs/ablations/dyck.yaml"))
    >>> axes["dyck/pretrain/span"]["objective"], axes["dyck/finetune/span-full"]["regime"]
    ('SpanMaskedLM', 'full')
    >>> axes["dyck/finetune/span-full"]["objective"], axes["dyck/pretrain/mlm_causal"]["causal"]
    ('SpanMaskedLM', True)
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from minibert.ablation.grid import Experiment, Grid

# settings that say how a run is logged or checkpointed, not what it is
_IGNORED = (
    "trainer.default_root_dir",
    "trainer.callbacks",
    "trainer.logger",
    "trainer.log_every_n_steps",
    "trainer.enable_",
    "trainer.accelerator",
    "trainer.devices",
    "trainer.val_check_interval",
    "trainer.check_val_every_n_epoch",
    "trainer.num_sanity_val_steps",
    "seed_everything",
    "model.class_path",
    "model.init_args.encoder_ckpt",
)  # fmt: skip  (model.class_path is the stage)


_NO_PRETRAIN = ("model.init_args.regime", "no_pretrain")


@functools.lru_cache(maxsize=256)
def _yaml(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text()) or {}


def _merge(into: dict, other: dict) -> None:
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _flat(tree: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(tree, dict):
        return {prefix: tuple(tree) if isinstance(tree, list) else tree}
    return {k: v for key, sub in tree.items() for k, v in _flat(sub, f"{prefix}{key}.").items()}


@functools.lru_cache(maxsize=256)
def merged(configs: tuple[str, ...], root: Path) -> dict:
    """The configs under `root` merged in order as LightningCLI merges a stack of `-c` files: a mapping key by
    key, anything else the last that sets it. Shared between callers: copy before changing it."""
    tree: dict = {}
    for config in configs:
        _merge(tree, copy.deepcopy(_yaml(str(root / config))))
    return tree


def settings(configs: tuple[str, ...], overrides: dict[str, Any], root: Path) -> dict[str, Any]:
    """Dotted key -> value of the merged configs and overrides (the settings LightningCLI reads, before
    defaults), without the ones that only say how a run is logged."""
    tree = copy.deepcopy(merged(tuple(configs), root))
    for key, value in overrides.items():  # `a.b.c: v` as {a: {b: {c: v}}}, so a mapping is flattened too
        for part in reversed(key.split(".")):
            value = {part: value}
        _merge(tree, copy.deepcopy(value))
    flat = {k.removesuffix("."): v for k, v in _flat(tree).items()}
    return {k: v for k, v in flat.items() if not k.startswith(_IGNORED)}


def _name(key: str) -> str:
    """`model.init_args.objective.class_path` -> `objective`, `model.init_args.encoder.width` -> `width`."""
    parts = [p for p in key.split(".") if p != "init_args"]
    return parts[-2] if parts[-1] == "class_path" and len(parts) > 1 else parts[-1]


def _value(key: str, value: Any) -> Any:
    if value is None:
        return "null"  # set to null in a config (e.g. data.val_seed: each seed its own validation set)
    return value.rsplit(".", 1)[-1] if key.endswith("class_path") and isinstance(value, str) else value


def grid_axes(
    grid: Grid, root: str | Path = ".", read: Callable[[Experiment], dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """experiment -> {axis: value} for every experiment of `grid`; every experiment has every axis (None
    where it does not apply: a pre-training run has no fine-tuning `regime`). `read(experiment)` gives an
    experiment's dotted settings, by default `settings` of its configs and overrides (another reading is
    compared with it in benchmarks/axes_readings.py)."""
    root = Path(root)
    own = {e.name: (read(e) if read else settings(e.configs, e.overrides, root)) for e in grid.experiments}
    # the pre-training run whose weights each run loads; a run that loads none (no_pretrain) names an upstream
    # for the encoder's shape only
    source = {e.name: e.encoder_from if own[e.name].get(_NO_PRETRAIN[0]) != _NO_PRETRAIN[1] else None
              for e in grid.experiments}  # fmt: skip
    full: dict[str, dict[str, Any]] = {}
    for e in grid.experiments:  # dependency order: the upstream's settings are there already
        upstream = full[source[e.name]] if source[e.name] else {}
        full[e.name] = {**upstream, **{(e.job_type, k): v for k, v in own[e.name].items()}}
    # a setting varies when the runs that have its stage do not all agree on it (absent: the default)
    keys = sorted({k for s in full.values() for k in s})
    absent = object()  # a setting left out (its default) differs from one set to null
    varying = [k for k in keys
               if len({repr(s.get(k, absent)) for s in full.values() if any(x[0] == k[0] for x in s)}) > 1]  # fmt: skip
    clashes = Counter((stage, _name(key)) for stage, key in varying)  # masking.p_mask, eval_masking.p_mask
    named: dict[str, tuple[str, str]] = {}  # axis name -> (stage, key); pre-training first on a clash
    for stage, key in sorted(varying, key=lambda k: (k[0] != "pretrain", k[1])):
        name = _name(key)
        if clashes[(stage, name)] > 1:
            name = ".".join([p for p in key.split(".") if p != "init_args"][-2:])
        if name in named:
            first = named[name]
            if all(s.get(first) == s.get((stage, key)) for s in full.values() if (stage, key) in s and first in s):
                continue  # the same setting seen twice (the fine-tuning config repeats the language)
            name = f"{stage} {name}"
        named.setdefault(name, (stage, key))
    axes = {}
    for e in grid.experiments:
        derived = {n: _value(k[1], full[e.name][k]) if k in full[e.name] else None for n, k in named.items()}
        labels = dict(e.axes)
        if source[e.name] and e.job_type == "finetune":  # the upstream's labels describe the encoder it tunes
            labels = {**axes[source[e.name]]["_labels"], **labels}
        axes[e.name] = {**derived, **labels, "_labels": labels}
    names = list(dict.fromkeys(k for a in axes.values() for k in a if k != "_labels"))
    return {e: {n: a.get(n) for n in names} for e, a in axes.items()}
