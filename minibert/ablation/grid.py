"""Ablation grids as data: a YAML file of named experiments, the write-up's figures and the claims to test.

A grid file (see configs/ablations/default.yaml):

    experiments:
      - name: pretrain/causal
        job_type: pretrain                      # pretrain | finetune (wandb job_type, report section)
        configs: [configs/pretrain.yaml, configs/causal.yaml]
        overrides: {}                           # dotted CLI keys -> values
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

Example:
    >>> grid = load_grid("configs/ablations/default.yaml")  # doctest: +SKIP
    >>> [e.name for e in grid.select(["finetune/full"])]  # doctest: +SKIP
    ['pretrain/bidirectional', 'finetune/full']
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

JOB_TYPES = ("pretrain", "finetune")


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
    if entry["experiment"] not in names:
        raise GridError(f"{where}.experiment={entry['experiment']!r} is not an experiment; valid: {', '.join(names)}")
    return MetricRef(str(entry["experiment"]), str(entry["metric"]))


def _experiment(where: str, entry: Any, root: Path) -> Experiment:
    _check_keys(where, entry, {"name", "job_type", "configs"}, {"overrides", "encoder_from", "metrics", "reference"})
    if entry["job_type"] not in JOB_TYPES:
        raise GridError(f"{where}.job_type={entry['job_type']!r} is not allowed; use one of {list(JOB_TYPES)}")
    configs = entry["configs"]
    if not isinstance(configs, list) or not configs:
        raise GridError(f"{where}.configs must be a non-empty list of YAML paths, got {configs!r}")
    for config in configs:
        if not (root / config).is_file():
            raise GridError(f"{where}.configs: {config!r} does not exist (paths are relative to {root})")
    overrides = entry.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise GridError(f"{where}.overrides must be a mapping of dotted keys to values, got {overrides!r}")
    return Experiment(
        name=str(entry["name"]),
        job_type=entry["job_type"],
        configs=tuple(str(c) for c in configs),
        overrides=dict(overrides),
        encoder_from=entry.get("encoder_from"),
        metrics=tuple(entry.get("metrics") or ()),
        reference={str(k): float(v) for k, v in (entry.get("reference") or {}).items()},
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
    experiments = [_experiment(f"{path}: experiments[{i}]", e, root) for i, e in enumerate(entries)]
    names = [e.name for e in experiments]
    if len(set(names)) != len(names):
        raise GridError(f"{path}: experiment names must be unique, got {names}")
    for e in experiments:
        if e.encoder_from is not None and e.encoder_from not in names:
            raise GridError(
                f"{path}: {e.name}.encoder_from={e.encoder_from!r} is not an experiment; valid: {', '.join(names)}"
            )
    claims = []
    for i, c in enumerate(data.get("claims") or []):
        where = f"{path}: claims[{i}]"
        _check_keys(where, c, {"text"}, {"lower", "higher", "value", "at_least", "at_most"})
        pair, single = "lower" in c and "higher" in c, "value" in c and ("at_least" in c or "at_most" in c)
        if pair == single:
            raise GridError(f"{where} must have either lower+higher or value with at_least/at_most")
        ref = {k: _metric_ref(f"{where}.{k}", c[k], names) for k in ("lower", "higher", "value") if k in c}
        claims.append(Claim(text=str(c["text"]), at_least=c.get("at_least"), at_most=c.get("at_most"), **ref))
    return Grid(tuple(experiments), tuple(claims), str(data.get("reference_source", "")), str(path))
