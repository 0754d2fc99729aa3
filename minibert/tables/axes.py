"""What each experiment of a grid is, as columns: the grid's axes, read from its runs' saved configs, never from
names.

An experiment's settings are its saved config (minibert.tables.saved: the config LightningCLI resolved for its
runs, every default and plug-in argument included) flattened to dotted keys (`model.init_args.encoder.width: 64`),
less the ones that say how a run is logged. Its axes are the settings that differ between the grid's experiments,
named by their last part (`width`, `flops`, `regime`), or for a plug-in by the key that holds it (`objective:
SpanMaskedLM`, `language: Dyck`), plus the labels of the grid's named sweep axes (`arm`, `budget`), which win over
a derived axis of the same name. A setting one run has and another lacks (a plug-in argument of one class only)
differs. A fine-tuning experiment also carries the axes of the pre-training run its encoder comes from
(`objective` is then the pre-training objective), its own under the same names when no pre-training setting has
them.

Example:
    >>> from minibert.ablation.grid import load_grid
    >>> from minibert.tables import saved
    >>> grid = load_grid("configs/ablations/dyck.yaml")
    >>> axes = grid_axes(grid, saved.of("results/dyck", grid))
    >>> axes["dyck/pretrain/span"]["objective"], axes["dyck/finetune/span-full"]["regime"]
    ('SpanMaskedLM', 'full')
    >>> axes["dyck/finetune/span-full"]["objective"], axes["dyck/pretrain/mlm_causal"]["causal"]
    ('SpanMaskedLM', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from minibert.ablation.grid import Grid

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


def _flat(tree: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(tree, dict):
        return {prefix: tuple(tree) if isinstance(tree, list) else tree}
    return {k: v for key, sub in tree.items() for k, v in _flat(sub, f"{prefix}{key}.").items()}


def settings(tree: dict) -> dict[str, Any]:
    """Dotted key -> value of a saved config, without the settings that only say how a run is logged."""
    flat = {k.removesuffix("."): v for k, v in _flat(tree).items()}
    return {k: v for k, v in flat.items() if not k.startswith(_IGNORED)}


def _name(key: str) -> str:
    """`model.init_args.objective.class_path` -> `objective`, `model.init_args.encoder.width` -> `width`."""
    parts = [p for p in key.split(".") if p != "init_args"]
    return parts[-2] if parts[-1] == "class_path" and len(parts) > 1 else parts[-1]


def _depth(key: str) -> int:
    return len([p for p in key.split(".") if p != "init_args"])


def _value(key: str, value: Any) -> Any:
    if value is None:
        return "null"  # null in the saved config: set so (data.val_seed: each seed its own validation set), or
        # a seed that followed each run's seed_everything
    return value.rsplit(".", 1)[-1] if key.endswith("class_path") and isinstance(value, str) else value


def grid_axes(grid: Grid, saved: Mapping[str, dict]) -> dict[str, dict[str, Any]]:
    """experiment -> {axis: value} for each experiment of `grid` that `saved` holds (experiment -> its saved
    config: minibert.tables.saved; a table's own experiments, upstreams included); every experiment has every axis
    (None where it does not apply: a pre-training run has no fine-tuning `regime`)."""
    experiments = [e for e in grid.experiments if e.name in saved]
    own = {e.name: settings(saved[e.name]) for e in experiments}
    # the pre-training run whose weights each run loads; a run that loads none (no_pretrain) names an upstream
    # for the encoder's shape only
    source = {e.name: e.encoder_from if own[e.name].get(_NO_PRETRAIN[0]) != _NO_PRETRAIN[1] else None
              for e in experiments}  # fmt: skip
    full: dict[str, dict[str, Any]] = {}
    for e in experiments:  # dependency order: the upstream's settings are there already
        upstream = full[source[e.name]] if source[e.name] else {}
        full[e.name] = {**upstream, **{(e.job_type, k): v for k, v in own[e.name].items()}}
    # a setting varies when the runs that have its stage do not all agree on it (absent: the default)
    keys = sorted({k for s in full.values() for k in s})
    absent = object()  # a setting left out (its default) differs from one set to null
    varying = [k for k in keys
               if len({repr(s.get(k, absent)) for s in full.values() if any(x[0] == k[0] for x in s)}) > 1]  # fmt: skip
    # settings of one stage that share a name (masking.p_mask, eval_masking.p_mask) are named by their last two
    # parts, except the one nearest the top when it is alone there (the encoder's causal, not the generator's)
    depths: dict[tuple[str, str], list[int]] = {}
    for stage, key in varying:
        depths.setdefault((stage, _name(key)), []).append(_depth(key))
    named: dict[str, tuple[str, str]] = {}  # axis name -> (stage, key); pre-training first on a clash
    for stage, key in sorted(varying, key=lambda k: (k[0] != "pretrain", k[1])):
        name = _name(key)
        same = depths[(stage, name)]
        if len(same) > 1 and not (_depth(key) == min(same) and same.count(min(same)) == 1):
            name = ".".join([p for p in key.split(".") if p != "init_args"][-2:])
        if name in named:
            first = named[name]
            if all(s.get(first) == s.get((stage, key)) for s in full.values() if (stage, key) in s and first in s):
                continue  # the same setting seen twice (the fine-tuning config repeats the language)
            name = f"{stage} {name}"
        named.setdefault(name, (stage, key))
    axes = {}
    for e in experiments:
        derived = {n: _value(k[1], full[e.name][k]) if k in full[e.name] else None for n, k in named.items()}
        labels = dict(e.axes)
        if source[e.name] and e.job_type == "finetune":  # the upstream's labels describe the encoder it tunes
            labels = {**axes[source[e.name]]["_labels"], **labels}
        axes[e.name] = {**derived, **labels, "_labels": labels}
    names = list(dict.fromkeys(k for a in axes.values() for k in a if k != "_labels"))
    return {e: {n: a.get(n) for n in names} for e, a in axes.items()}
