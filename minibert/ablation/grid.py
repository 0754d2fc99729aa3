"""Ablation grids as data: a YAML file of named experiments, the write-up's figures and the claims to test.

A grid file (see configs/ablations/default.yaml):

    experiments:
      - name: pretrain/causal
        job_type: pretrain                      # pretrain | finetune (wandb job_type, report section)
        configs: [configs/pretrain.yaml, configs/causal.yaml]
        overrides: {}                           # dotted CLI keys -> values
        sweep: {model.init_args.lr: [1e-3, 3e-3]}   # optional: one experiment per combination of values,
                                                # named `<name>/lr0.001` (the key's last part + value,
                                                # several joined by '-'), each with those overrides
        encoder_from: null                      # an experiment whose same-seed checkpoint is loaded
        metrics: [val/acc, val/acc_opener]      # optional: narrow the report to these (default: all logged)
        reference: {val/acc: 0.555}             # the original write-up's figures
    reference_source: "..."                     # where the reference figures come from
    claims:
      - text: left-only context fails on openers
        lower: {experiment: pretrain/causal, metric: val/acc_opener}
        higher: {experiment: pretrain/bidirectional, metric: val/acc_opener}
      - text: frozen [CLS] is at chance
        value: {experiment: finetune/frozen, metric: val/acc}
        at_most: 0.60

Every field is type-checked with a one-line error naming the file, the entry and the field; experiment
names are folder names under `<out>/runs/` (letters, digits, `_.-`, parts joined by `/`, no `..`); an
experiment may name its `encoder_from` before or after itself (runs are ordered by dependency, and a
cycle is an error); metric names are checked against what finished runs logged (`check_metrics`).

Example:
    >>> grid = load_grid("configs/ablations/default.yaml")  # doctest: +SKIP
    >>> [e.name for e in grid.select(["finetune/full"])]  # doctest: +SKIP
    ['pretrain/bidirectional', 'finetune/full']
"""

from __future__ import annotations

import difflib
import fnmatch
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

JOB_TYPES = ("pretrain", "finetune")
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")  # relative, no '.' or '..' parts


class GridError(ValueError):
    """A grid file or a selection that cannot be run; the message says what and where."""


def _check_keys(where: str, entry: Any, required: set[str], optional: set[str]) -> None:
    if not isinstance(entry, dict):
        raise GridError(f"{where} must be a mapping, got {type(entry).__name__}: {entry!r}")
    unknown = set(entry) - required - optional
    if unknown:
        raise GridError(f"{where} has unknown keys {sorted(unknown)}; allowed: {sorted(required | optional)}")
    missing = required - set(entry)
    if missing:
        raise GridError(f"{where} is missing {sorted(missing)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _str_list(where: str, value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise GridError(f"{where} must be a non-empty list of {what}, got {value!r}")
    return value


def _str(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise GridError(f"{where} must be a non-empty string, got {value!r}")
    return value


def _number_map(where: str, value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and _is_number(v) for k, v in value.items()):
        raise GridError(f"{where} must map metric names to numbers, got {value!r}")
    return {k: float(v) for k, v in value.items()}


@dataclass(frozen=True)
class Experiment:
    name: str
    job_type: str
    configs: tuple[str, ...]
    overrides: dict[str, Any] = field(default_factory=dict)
    encoder_from: str | None = None
    metrics: tuple[str, ...] = ()  # what the report shows; empty: every metric the runs logged
    reference: dict[str, float] = field(default_factory=dict)

    def cli_args(self) -> list[str]:
        """The overrides as LightningCLI arguments, e.g. ['--model.init_args.regime=full']."""
        return [
            f"--{key}={yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('...').strip()}"
            for key, value in self.overrides.items()
        ]


@dataclass(frozen=True)
class MetricRef:
    experiment: str
    metric: str


@dataclass(frozen=True)
class Claim:
    """Either `lower` < `higher` on every seed, or `value` within [at_least, at_most] on every seed."""

    text: str
    lower: MetricRef | None = None
    higher: MetricRef | None = None
    value: MetricRef | None = None
    at_least: float | None = None
    at_most: float | None = None

    def experiments(self) -> set[str]:
        return {ref.experiment for ref in (self.lower, self.higher, self.value) if ref is not None}


@dataclass(frozen=True)
class Grid:
    experiments: tuple[Experiment, ...]
    claims: tuple[Claim, ...] = ()
    reference_source: str = ""
    path: str = ""

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.experiments]

    def __getitem__(self, name: str) -> Experiment:
        for e in self.experiments:
            if e.name == name:
                return e
        raise KeyError(name)

    def metric_refs(self) -> list[tuple[str, str, str]]:
        """(where, experiment, metric) for every metric the grid names."""
        refs = []
        for e in self.experiments:
            refs += [(f"{e.name}.metrics", e.name, m) for m in e.metrics]
            refs += [(f"{e.name}.reference", e.name, m) for m in e.reference]
        for i, c in enumerate(self.claims):
            refs += [(f"claims[{i}]", r.experiment, r.metric) for r in (c.lower, c.higher, c.value) if r is not None]
        return refs

    def select(self, patterns: list[str] | None) -> list[Experiment]:
        """Experiments matching any glob in `patterns` (all when None), plus the experiments they load
        encoders from, in grid order."""
        if not patterns:
            return list(self.experiments)
        chosen: set[str] = set()
        for pattern in patterns:
            hits = fnmatch.filter(self.names, pattern)
            if not hits:
                raise GridError(
                    f"--only {pattern!r} matches no experiment in {self.path or 'the grid'}; "
                    f"valid names: {', '.join(self.names)}"
                )
            chosen.update(hits)
        pending = list(chosen)
        while pending:  # pull in what selected fine-tuning cells depend on
            upstream = self[pending.pop()].encoder_from
            if upstream and upstream not in chosen:
                chosen.add(upstream)
                pending.append(upstream)
        return [e for e in self.experiments if e.name in chosen]


def _metric_ref(where: str, entry: Any, names: list[str]) -> MetricRef:
    _check_keys(where, entry, {"experiment", "metric"}, set())
    experiment, metric = _str(f"{where}.experiment", entry["experiment"]), _str(f"{where}.metric", entry["metric"])
    if experiment not in names:
        raise GridError(f"{where}.experiment={experiment!r} is not an experiment; valid: {', '.join(names)}")
    return MetricRef(experiment, metric)


def _sweep(where: str, entry: Any) -> list[tuple[str, dict[str, Any]]]:
    """(name suffix, overrides) for each combination of a `sweep` mapping's values, in the order written."""
    if not isinstance(entry, dict) or not entry:
        raise GridError(f"{where} must map dotted keys to lists of values, got {entry!r}")
    for key, values in entry.items():
        if not isinstance(key, str) or not isinstance(values, list) or not values:
            raise GridError(f"{where}.{key} must be a non-empty list of values, got {values!r}")
    combos = []
    for values in itertools.product(*entry.values()):
        suffix = "-".join(f"{key.rsplit('.', 1)[-1]}{value}" for key, value in zip(entry, values))
        combos.append((suffix, dict(zip(entry, values))))
    return combos


def _experiments(where: str, entry: Any, root: Path) -> list[Experiment]:
    """One experiment, or one per combination of its `sweep`."""
    if not isinstance(entry, dict) or "sweep" not in entry:
        return [_experiment(where, entry, root)]
    entry = dict(entry)
    combos = _sweep(f"{where}.sweep", entry.pop("sweep"))
    return [
        _experiment(
            where,
            {
                **entry,
                "name": f"{entry.get('name')}/{suffix}",
                "overrides": {**(entry.get("overrides") or {}), **swept},
            },
            root,
        )
        for suffix, swept in combos
    ]


def _experiment(where: str, entry: Any, root: Path) -> Experiment:
    _check_keys(where, entry, {"name", "job_type", "configs"}, {"overrides", "encoder_from", "metrics", "reference"})
    name = entry["name"]
    if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name.split("/"):
        raise GridError(
            f"{where}.name={name!r} is not allowed: it names folders under <out>/runs/, so use letters, digits, "
            "'_', '.', '-' in parts joined by '/' (no leading '/' or '.', no '..')"
        )
    if entry["job_type"] not in JOB_TYPES:
        raise GridError(f"{where}.job_type={entry['job_type']!r} is not allowed; use one of {list(JOB_TYPES)}")
    configs = _str_list(f"{where}.configs", entry["configs"], "YAML paths")
    for config in configs:
        if not (root / config).is_file():
            raise GridError(f"{where}.configs: {config!r} does not exist (paths are relative to {root})")
    overrides = entry.get("overrides") or {}
    if not isinstance(overrides, dict) or not all(isinstance(k, str) for k in overrides):
        raise GridError(f"{where}.overrides must be a mapping of dotted keys to values, got {overrides!r}")
    encoder_from = entry.get("encoder_from")
    if encoder_from is not None:
        _str(f"{where}.encoder_from", encoder_from)
    metrics = entry.get("metrics")
    return Experiment(
        name=name,
        job_type=entry["job_type"],
        configs=tuple(configs),
        overrides=dict(overrides),
        encoder_from=encoder_from,
        metrics=() if metrics is None else tuple(_str_list(f"{where}.metrics", metrics, "metric names")),
        reference=_number_map(f"{where}.reference", entry.get("reference") or {}),
    )


def _in_dependency_order(path: Path, experiments: list[Experiment]) -> list[Experiment]:
    """Grid order, except that an experiment comes after the one it loads its encoder from."""
    by_name = {e.name: e for e in experiments}
    ordered: list[Experiment] = []
    placed: set[str] = set()

    def place(e: Experiment, chain: list[str]) -> None:
        if e.name in placed:
            return
        if e.name in chain:
            cycle = " -> ".join([*chain[chain.index(e.name) :], e.name])
            raise GridError(f"{path}: encoder_from makes a cycle ({cycle})")
        if e.encoder_from is not None:
            place(by_name[e.encoder_from], [*chain, e.name])
        placed.add(e.name)
        ordered.append(e)

    for e in experiments:
        place(e, [])
    return ordered


def check_metrics(grid: Grid, logged: Mapping[str, set[str]], planned: bool = False) -> None:
    """Raise GridError for a metric the grid names (shown, referenced or in a claim) that an experiment's
    finished runs do not log. `logged` maps experiment names to the keys of their runs' summaries (or, with
    `planned`, the keys their runs will write: minibert.ablation.preflight); experiments without any are not
    checked."""
    for where, experiment, metric in grid.metric_refs():
        keys = logged.get(experiment)
        if keys and metric not in keys:
            near = difflib.get_close_matches(metric, sorted(keys), n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            verb, then = ("will not log", "Fix the grid: nothing was trained") if planned else (
                "do not log", "Fix the grid and rebuild with --report-only (finished runs are kept)")  # fmt: skip
            raise GridError(
                f"{grid.path}: {where} names metric {metric!r}, which the runs of {experiment} {verb}; "
                f"{hint}they log: {', '.join(sorted(k for k in keys if '/' in k or k.endswith('params')))}. {then}"
            )


def load_grid(path: str | Path, root: str | Path = ".") -> Grid:
    """Read and validate a grid file; config paths are resolved against `root` (the repository)."""
    path, root = Path(path), Path(root)
    if not path.is_file():
        raise GridError(f"grid file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise GridError(f"grid file {str(path)!r} is not valid YAML: {err}") from None
    _check_keys(str(path), data, {"experiments"}, {"claims", "reference_source"})
    entries = data["experiments"]
    if not isinstance(entries, list) or not entries:
        raise GridError(f"{path}: experiments must be a non-empty list")
    experiments = [x for i, e in enumerate(entries) for x in _experiments(f"{path}: experiments[{i}]", e, root)]
    names = [e.name for e in experiments]
    if len(set(names)) != len(names):
        raise GridError(f"{path}: experiment names must be unique, got {names}")
    for e in experiments:
        if e.encoder_from is not None and e.encoder_from not in names:
            raise GridError(
                f"{path}: {e.name}.encoder_from={e.encoder_from!r} is not an experiment; valid: {', '.join(names)}"
            )
    experiments = _in_dependency_order(path, experiments)
    claims = data.get("claims") or []
    if not isinstance(claims, list):
        raise GridError(f"{path}: claims must be a list, got {claims!r}")
    parsed = []
    for i, c in enumerate(claims):
        where = f"{path}: claims[{i}]"
        _check_keys(where, c, {"text"}, {"lower", "higher", "value", "at_least", "at_most"})
        pair, single = "lower" in c and "higher" in c, "value" in c and ("at_least" in c or "at_most" in c)
        if pair == single:
            raise GridError(f"{where} must have either lower+higher or value with at_least/at_most")
        for bound in ("at_least", "at_most"):
            if bound in c and not _is_number(c[bound]):
                raise GridError(f"{where}.{bound} must be a number, got {c[bound]!r}")
        ref = {k: _metric_ref(f"{where}.{k}", c[k], names) for k in ("lower", "higher", "value") if k in c}
        text = _str(f"{where}.text", c["text"])
        parsed.append(Claim(text=text, at_least=c.get("at_least"), at_most=c.get("at_most"), **ref))
    source = data.get("reference_source", "")
    if not isinstance(source, str):
        raise GridError(f"{path}: reference_source must be a string, got {source!r}")
    return Grid(tuple(experiments), tuple(parsed), source, str(path))
