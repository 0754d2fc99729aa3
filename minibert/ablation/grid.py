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
    quick: {trainer.max_steps: 3}               # optional: what `ablate.py --quick` sets on every experiment
    claims:
      - text: left-only context fails on openers
        lower: {experiment: pretrain/causal, metric: val/acc_opener}
        higher: {experiment: pretrain/bidirectional, metric: val/acc_opener}
      - text: frozen [CLS] is at chance
        value: {experiment: finetune/frozen, metric: val/acc}
        at_most: 0.60

An entry may stand for many experiments, the product of its axes (as a Hydra multirun sweep does):

        name: masking/{language}/{split}/pretrain
        sweep:
          model.init_args.lr: [0.001, 0.003]    # a dotted key's values: labels `lr0.001`, `lr0.003`
          language:                             # named alternatives, each adding configs and overrides
            pairs: {}
            dyck: {configs: [configs/languages/dyck.yaml], overrides: {trainer.max_steps: 1000}}
        zip: {data.batch_size: [8, 16], trainer.max_steps: [200, 100]}   # lists taken in step: one axis
        exclude: [{language: pairs, lr: lr0.001}]                         # combinations left out
        encoder_from: masking/{language}/{split}/pretrain

Each combination is one experiment: the entry's overrides and configs, then each axis's in the order
written (the `zip` axis last). `{axis}` in `name` and `encoder_from` is that axis's label (a dotted key's
axis is named by its last part: `{lr}`); a name without placeholders gets `/<labels joined by '-'>`.

Every field is type-checked against the dataclasses below by one validator (`_build`), with a one-line
error naming the file, the entry and the field; experiment names are folder names under `<out>/runs/`
(letters, digits, `_.-`, parts joined by `/`, no `..`); an experiment may name its `encoder_from` before or
after itself (experiments are ordered by dependency, once, here; a cycle is an error); metric names are
checked against what the runs log (`check_metrics`).

Example:
    >>> grid = load_grid("configs/ablations/default.yaml")  # doctest: +SKIP
    >>> [e.name for e in grid.select(["finetune/full"])]  # doctest: +SKIP
    ['pretrain/bidirectional', 'finetune/full']
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import itertools
import re
import string
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")  # relative, no '.' or '..' parts


class GridError(ValueError):
    """A grid file or a selection that cannot be run; the message says what and where."""


# What a field holds, where its Python type alone does not say it (read by `_build`).
@dataclass(frozen=True)
class Strings:
    """A non-empty list of strings."""

    what: str


@dataclass(frozen=True)
class Numbers:
    """A mapping of metric names to numbers."""


@dataclass(frozen=True)
class RunName:
    """A name that is a relative folder path under <out>/runs/."""


Overrides = dict[str, Any]  # dotted CLI keys -> values


@dataclass(frozen=True)
class Experiment:
    name: Annotated[str, RunName()]
    job_type: Literal["pretrain", "finetune"]
    configs: Annotated[tuple[str, ...], Strings("YAML paths")]
    overrides: Overrides = field(default_factory=dict)
    encoder_from: str | None = None
    metrics: Annotated[tuple[str, ...], Strings("metric names")] = ()  # what the report shows; empty: all logged
    reference: Annotated[dict[str, float], Numbers()] = field(default_factory=dict)
    # what the experiment is, axis -> value (objective: mlm), for the results table; a sweep adds its named
    # axes' labels, and minibert.tables.axes adds what its configs set differently from the grid's others
    axes: dict[str, Any] = field(default_factory=dict)

    def cli_args(self) -> list[str]:
        """The overrides as LightningCLI arguments, e.g. ['--model.init_args.regime=full']."""
        return [
            f"--{key}={yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('...').strip()}"
            for key, value in self.overrides.items()
        ]


@dataclass(frozen=True)
class Alternative:
    """One value of a named sweep axis: configs appended and overrides merged into the experiment's."""

    configs: Annotated[tuple[str, ...], Strings("YAML paths")] = ()
    overrides: Overrides = field(default_factory=dict)


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
    experiments: tuple[Experiment, ...]  # in dependency order: an experiment after the one it loads
    claims: tuple[Claim, ...] = ()
    reference_source: str = ""
    path: str = ""
    quick: Overrides = field(default_factory=dict)  # `ablate.py --quick`: merged into every experiment's overrides

    def quickened(self) -> Grid:
        """The same experiments with the grid's `quick` overrides on top of each one's own: its tiny budget,
        which runs every cell's code in seconds."""
        if not self.quick:
            raise GridError(f"{self.path or 'the grid'} has no `quick` overrides, so it has no --quick variant")
        runs = tuple(dataclasses.replace(e, overrides={**e.overrides, **self.quick}) for e in self.experiments)
        return dataclasses.replace(self, experiments=runs)

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
        encoders from, in the grid's (dependency) order."""
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


@dataclass(frozen=True)
class _File:
    """A grid file as written."""

    experiments: list[Any]  # entries, each expanded by `_experiments`
    claims: list[Claim] = field(default_factory=list)
    reference_source: str = ""
    quick: Overrides = field(default_factory=dict)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _value(where: str, hint: Any, value: Any) -> Any:
    """`value` checked against a field's type `hint` (and what its Annotated marker says); GridError otherwise."""
    marker = None
    if typing.get_origin(hint) is Annotated:
        hint, marker = typing.get_args(hint)[0], typing.get_args(hint)[1]
    if hint is Any:
        return value
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or type(hint).__name__ == "UnionType":  # X | None
        if value is None:
            return None
        hint, origin, args = args[0], typing.get_origin(args[0]), typing.get_args(args[0])
    if isinstance(marker, RunName):
        if not isinstance(value, str) or not NAME.fullmatch(value) or ".." in value.split("/"):
            raise GridError(
                f"{where}={value!r} is not allowed: it names folders under <out>/runs/, so use letters, digits, "
                "'_', '.', '-' in parts joined by '/' (no leading '/' or '.', no '..')"
            )
        return value
    if isinstance(marker, Strings):
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise GridError(f"{where} must be a non-empty list of {marker.what}, got {value!r}")
        return tuple(value)
    if isinstance(marker, Numbers):
        if not isinstance(value, Mapping) or not all(isinstance(k, str) and _is_number(v) for k, v in value.items()):
            raise GridError(f"{where} must map metric names to numbers, got {value!r}")
        return {k: float(v) for k, v in value.items()}
    if origin is Literal:
        if value not in args:
            raise GridError(f"{where}={value!r} is not allowed; use one of {list(args)}")
        return value
    if dataclasses.is_dataclass(hint):
        return _build(hint, where, value)
    if origin is list:
        if not isinstance(value, list):
            raise GridError(f"{where} must be a list, got {value!r}")
        return [_value(f"{where}[{i}]", args[0], v) for i, v in enumerate(value)] if args else value
    if origin is dict:  # Overrides
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise GridError(f"{where} must be a mapping of dotted keys to values, got {value!r}")
        return dict(value)
    if hint is str:
        if not isinstance(value, str) or not value:
            raise GridError(f"{where} must be a non-empty string, got {value!r}")
        return value
    if hint is float:
        if not _is_number(value):
            raise GridError(f"{where} must be a number, got {value!r}")
        return value
    raise TypeError(f"grid field type {hint!r} has no check")  # a programming error, not a user's


def _build(cls: type, where: str, entry: Any) -> Any:
    """An instance of dataclass `cls` from a YAML mapping, every field checked by `_value`. A `where` ending
    in ': ' (a file) is followed by bare field names."""
    at = where.removesuffix(": ")
    if not isinstance(entry, dict):
        raise GridError(f"{at} must be a mapping, got {type(entry).__name__}: {entry!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    required = {n for n, f in fields.items() if f.default is f.default_factory is dataclasses.MISSING}
    if unknown := set(entry) - set(fields):
        raise GridError(f"{at} has unknown keys {sorted(unknown, key=str)}; allowed: {sorted(fields)}")
    if missing := required - set(entry):
        raise GridError(f"{at} is missing {sorted(missing)}")
    hints = typing.get_type_hints(cls, include_extras=True)
    sep = "" if where.endswith(": ") else "."
    given = {k: v for k, v in entry.items() if k in fields and not (v is None and k not in required)}  # null: default
    return cls(**{k: _value(f"{where}{sep}{k}", hints[k], v) for k, v in given.items()})


def _axes(where: str, entry: dict) -> list[tuple[list[str], list[tuple[dict[str, str], Alternative]], bool]]:
    """The axes of an entry's `sweep` and `zip`: for each, its placeholder names, per value the labels it
    gives those placeholders and what it adds, and whether its labels are named (not made from a value)."""
    axes = []
    sweep = entry.get("sweep", {})
    if not isinstance(sweep, dict) or ("sweep" in entry and not sweep):
        raise GridError(
            f"{where}.sweep must map dotted keys to lists of values, or axes to alternatives, got {sweep!r}"
        )
    for key, values in sweep.items():
        at = f"{where}.sweep.{key}"
        if not isinstance(key, str) or not key:
            raise GridError(f"{where}.sweep has the key {key!r}: axes are named by strings")
        if isinstance(values, dict) and values:  # named alternatives
            if "." in key:
                raise GridError(f"{at}: an axis of named alternatives is a plain word (no '.'), got {key!r}")
            if bad := [label for label in values if not isinstance(label, str)]:
                raise GridError(f"{at} has the label {bad[0]!r}: quote it, labels are strings (they name experiments)")
            alts = [
                ({key: label}, _build(Alternative, f"{at}.{label}", {} if alt is None else alt))
                for label, alt in values.items()
            ]
            axes.append(([key], alts, True))
        elif isinstance(values, list) and values:
            short = key.rsplit(".", 1)[-1]
            axes.append(([short], [({short: f"{short}{v}"}, Alternative(overrides={key: v})) for v in values], False))
        else:
            raise GridError(
                f"{at} must be a non-empty list of values (or a mapping of named alternatives), got {values!r}"
            )
    if "zip" in entry:
        zipped = entry["zip"]
        lists = isinstance(zipped, dict) and all(isinstance(k, str) and isinstance(v, list) for k, v in zipped.items())
        if not zipped or not lists or len({len(v) for v in zipped.values()}) != 1 or not next(iter(zipped.values())):
            raise GridError(f"{where}.zip must map dotted keys to non-empty lists of one length, got {zipped!r}")
        shorts = [k.rsplit(".", 1)[-1] for k in zipped]
        values = [
            ({s: f"{s}{v}" for s, v in zip(shorts, row)}, Alternative(overrides=dict(zip(zipped, row))))
            for row in zip(*zipped.values())
        ]
        axes.append((shorts, values, False))
    return axes


def _fill(where: str, template: str, labels: dict[str, str]) -> str:
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as err:
        raise GridError(f"{where}={template!r} is not a name template ({err})") from None
    if unknown := fields - set(labels):
        raise GridError(f"{where}={template!r} names {sorted(unknown)}, which are not axes; axes: {sorted(labels)}")
    return template.format_map(labels)


def _experiments(where: str, entry: Any, root: Path) -> list[Experiment]:
    """One experiment, or one per combination of the entry's axes."""
    sweeps = ("sweep", "zip", "exclude")
    if not isinstance(entry, dict) or not any(k in entry for k in sweeps):
        return [_experiment(where, entry, root)]
    axes = _axes(where, entry)
    exclude = _value(f"{where}.exclude", list[dict[str, Any]], entry.get("exclude", []))
    placeholders = {p for names, _, _ in axes for p in names}
    for i, rule in enumerate(exclude):
        if not rule:
            raise GridError(f"{where}.exclude[{i}] is empty: it would leave out every combination")
        if unknown := set(rule) - placeholders:
            raise GridError(
                f"{where}.exclude[{i}] names {sorted(unknown)}, which are not axes; axes: {sorted(placeholders)}"
            )
    base = {k: v for k, v in entry.items() if k not in sweeps}
    named = {"name": "x"} if isinstance(base.get("name"), str) else {}  # a template is checked once filled
    _build(Experiment, where, {**base, **named})  # the entry's own fields, before they are combined
    experiments, excluded = [], set()
    named_axes = [named for _, _, named in axes]
    for combo in itertools.product(*(values for _, values, _ in axes)):
        labels = {k: v for part, _ in combo for k, v in part.items()}
        hits = {i for i, rule in enumerate(exclude) if all(labels.get(k) == str(v) for k, v in rule.items())}
        if hits:
            excluded |= hits
            continue
        overrides = dict(base.get("overrides") or {})
        for _, alt in combo:  # an override key is set by the entry or by one axis, never by two
            if twice := sorted(set(alt.overrides) & set(overrides)):
                raise GridError(f"{where}: {twice[0]} is set twice in the combination {labels} (by the entry or "
                                "another axis too); set it in one place")  # fmt: skip
            overrides.update(alt.overrides)
        name = base["name"]
        name = _fill(f"{where}.name", name, labels) if "{" in name else f"{name}/{'-'.join(labels.values())}"
        named = {k: v for (part, _), is_named in zip(combo, named_axes) if is_named for k, v in part.items()}
        combined = {**base, "name": name, "overrides": overrides, "axes": {**(base.get("axes") or {}), **named},
                    "configs": [*base["configs"], *(c for _, alt in combo for c in alt.configs)]}  # fmt: skip
        if isinstance(base.get("encoder_from"), str):
            combined["encoder_from"] = _fill(f"{where}.encoder_from", base["encoder_from"], labels)
        experiments.append(_experiment(where, combined, root))
    if unused := sorted(set(range(len(exclude))) - excluded):
        raise GridError(f"{where}.exclude[{unused[0]}]={exclude[unused[0]]!r} leaves out no combination")
    if not experiments:
        raise GridError(f"{where}: exclude leaves out every combination")
    return experiments


def _experiment(where: str, entry: Any, root: Path) -> Experiment:
    e = _build(Experiment, where, entry)
    for config in e.configs:
        if not (root / config).is_file():
            raise GridError(f"{where}.configs: {config!r} does not exist (paths are relative to {root})")
    return e


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
        raise GridError(f"grid file {str(path)!r} is not valid YAML: {' '.join(str(err).split())}") from None
    grid = _build(_File, f"{path}: ", data)
    if not grid.experiments:
        raise GridError(f"{path}: experiments must be a non-empty list")
    experiments = [
        x for i, e in enumerate(grid.experiments) for x in _experiments(f"{path}: experiments[{i}]", e, root)
    ]
    names = [e.name for e in experiments]
    if len(set(names)) != len(names):
        raise GridError(f"{path}: experiment names must be unique, got {names}")
    for e in experiments:
        if e.encoder_from is not None and e.encoder_from not in names:
            raise GridError(
                f"{path}: {e.name}.encoder_from={e.encoder_from!r} is not an experiment; valid: {', '.join(names)}"
            )
    for i, c in enumerate(grid.claims):
        where = f"{path}: claims[{i}]"
        pair, single = None not in (c.lower, c.higher), c.value is not None and (c.at_least, c.at_most) != (None, None)
        if pair == single or (pair and c.value is not None):
            raise GridError(f"{where} must have either lower+higher or value with at_least/at_most")
        for k in ("lower", "higher", "value"):
            ref = getattr(c, k)
            if ref is not None and ref.experiment not in names:
                raise GridError(
                    f"{where}.{k}.experiment={ref.experiment!r} is not an experiment; valid: {', '.join(names)}"
                )
    experiments = _in_dependency_order(path, experiments)
    return Grid(tuple(experiments), tuple(grid.claims), grid.reference_source, str(path), grid.quick)
