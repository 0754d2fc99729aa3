"""The settings each experiment of a table was run with, as Lightning saved them: `<out>/configs/<experiment>.yaml`.

LightningCLI writes the config a run resolved (every default, every plug-in's arguments, a budget's planned
steps) as `config.yaml` in the run's own folder. `texts` keeps one per experiment of a table (`of_table`: its
own, their upstreams, and those whose runs it borrows) beside it: the settings all of the experiment's runs share,
with a setting that differs between them (the seed, the seeds that follow it, the run's own folders) null; for
borrowed runs, the file of the committed table they come from. The table's axes (minibert.tables.axes) and the
settings pages state (minibert.report.settings) are read from these files, so nothing in the harness stacks
config files itself.

An experiment whose runs kept no config (runs made before tables kept them, or a test's stand-in) gets the one
LightningCLI resolves for it: `resolve` parses its configs and overrides with the parser a run uses, for two
seeds in two folders, and plans a budget as a run does; nothing trains. Its file says so in its first line.

Example:
    >>> saved = read("results/dyck", ["dyck/pretrain/span"])  # or of("results/dyck", grid): the table's own
    >>> saved["dyck/pretrain/span"]["model"]["init_args"]["objective"]["class_path"]
    'minibert.objectives.SpanMaskedLM'
"""

from __future__ import annotations

import copy
import json
import logging
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from minibert.ablation.grid import Experiment, Grid
from minibert.atomic_writes import write_atomic
from minibert.checkout import without_absolute_paths
from minibert.tables import table

FOLDER = "configs"
SAVED = "config.yaml"  # what Lightning's SaveConfigCallback writes in a run's folder
FROM_RUNS = "# the settings its runs share, from the config.yaml each saved; a setting they differ on is null"
RESOLVED = "# resolved by LightningCLI's parser from the experiment's configs and overrides: its runs kept no config"


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # safe either way; libyaml parses a table's hundreds faster


def load(text: str) -> Any:
    """A saved config's text as a tree."""
    return yaml.load(text, Loader=_LOADER)


class SavedError(ValueError):
    """A table without the saved config of one of its experiments, or one that does not parse."""


def path(out: str | Path, experiment: str) -> Path:
    return Path(out) / FOLDER / f"{experiment}.yaml"


def shared(trees: Sequence[Any]) -> Any:
    """What every tree of `trees` holds alike, mapping by mapping; a value they differ on is None.

    >>> shared([{"seed": 0, "data": {"seed": 0, "size": 8}}, {"seed": 1, "data": {"seed": 1, "size": 8}}])
    {'seed': None, 'data': {'seed': None, 'size': 8}}
    """
    first, *rest = trees
    if isinstance(first, dict) and all(isinstance(t, dict) and t.keys() == first.keys() for t in rest):
        return {key: shared([t[key] for t in trees]) for key in first}
    return first if all(t == first for t in rest) else None


def _text(tree: dict, header: str, root: Path) -> str:
    body = yaml.safe_dump(tree, sort_keys=False, default_flow_style=False)
    return f"{header}\n{without_absolute_paths(body, root.resolve(), elide=False)}"


def resolve(experiment: Experiment, root: str | Path = ".") -> dict:
    """The config LightningCLI resolves for `experiment`'s runs, as `texts` would keep it; parsed once a process
    for the same config files (by their text) and overrides."""
    key = json.dumps([[(Path(root) / c).read_text() for c in experiment.configs], experiment.cli_args()])
    if key not in _RESOLVED:
        _RESOLVED[key] = _resolve(experiment, root)
    return copy.deepcopy(_RESOLVED[key])


_RESOLVED: dict[str, dict] = {}  # what `resolve` parsed, by its experiment's config texts and overrides


def _resolve(experiment: Experiment, root: str | Path) -> dict:
    from jsonargparse import Namespace

    from minibert.training.budget import Budget
    from minibert.training.cli import MiniBertCLI
    from minibert.training.fit import QUIET

    class Resolved(MiniBertCLI):
        def instantiate_classes(self) -> None:
            given = self._subcommand_config().get("budget") or {}
            if Budget(**(given.as_dict() if isinstance(given, Namespace) else given)).given:
                super().instantiate_classes()  # the steps a budget buys depend on the model built

        def _run_subcommand(self, subcommand: str) -> None:
            pass

    trees = []
    configs = [f"--config={Path(root) / c}" for c in experiment.configs]
    muted = logging.root.manager.disable
    logging.disable(logging.INFO)  # Lightning's info lines (seed set, devices found), once per run resolved
    try:
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Lightning's notes on a CLI given its args; jsonargparse's on skip_none
            for seed in (0, 1):  # two runs in two folders: what differs between them is null, as `texts` keeps it
                args = ["fit", *configs, *QUIET, f"--seed_everything={seed}", *experiment.cli_args(),
                        f"--trainer.default_root_dir={tmp}/{seed}"]  # fmt: skip
                cli = Resolved(args=args)
                trees.append(yaml.safe_load(cli._parser("fit").dump(cli.config["fit"], skip_none=False)))
    finally:
        logging.disable(muted)
    return shared(trees)


def of_table(grid: Grid, names: Iterable[str]) -> list[Experiment]:
    """The experiments `names` of `grid` (a table's, those it borrows included) with the upstreams their encoders
    come from, in the grid's order: the experiments whose saved configs a table keeps and its axes are read from."""
    needed = set(names)
    for e in reversed(grid.experiments):  # an upstream comes before the experiments that load it
        if e.name in needed and e.encoder_from:
            needed.add(e.encoder_from)
    return [e for e in grid.experiments if e.name in needed]


def texts(
    experiments: Iterable[Experiment], runs: Iterable, root: str | Path = ".", borrowed: Mapping[str, str] | None = None
) -> dict[str, str]:
    """experiment -> its saved config's text for each of `experiments`: the settings its finished `runs`
    (minibert.ablation.runner.Run) share in the `config.yaml` each saved; for one whose runs are `borrowed`
    (experiment -> the committed table they are read from), that table's saved config; else `resolve`'s."""
    kept: dict[str, list[dict]] = {}
    for run in runs:
        config = run.run_dir / run.summary()["log_dir"] / SAVED
        if config.is_file():
            kept.setdefault(run.experiment.name, []).append(load(config.read_text()))
    found, borrowed = {}, borrowed or {}
    for e in experiments:
        source = path(Path(root) / borrowed[e.name], e.name) if e.name in borrowed else None
        if e.name in kept:
            found[e.name] = _text(shared(kept[e.name]), FROM_RUNS, Path(root))
        elif source is not None and source.is_file():
            found[e.name] = source.read_text()
        else:
            found[e.name] = _text(resolve(e, root), RESOLVED, Path(root))
    return found


def of_folder(
    out: str | Path, grid: Grid, names: Iterable[str], runs: Iterable, root: str | Path = "."
) -> dict[str, str]:
    """experiment -> its saved config's text (`texts`) for the table in `out` holding `names`: those experiments,
    the ones it borrows (`yardsticks.csv`) and their upstreams (`of_table`)."""
    borrowed = table.borrowed_from(out)
    return texts(of_table(grid, {*names, *borrowed}), runs, root, borrowed)


def of(out: str | Path, grid: Grid) -> dict[str, dict]:
    """The saved configs of the table in `out` (of `grid`): its experiments' (those it borrows included) and their
    upstreams'."""
    return read(out, [e.name for e in of_table(grid, table.experiments_in(out))])


def write(out: str | Path, texts: dict[str, str]) -> list[Path]:
    """Each experiment's saved config in `out/configs/`, atomically; returns the files written."""
    written = []
    for experiment, text in texts.items():
        written.append(path(out, experiment))
        written[-1].parent.mkdir(parents=True, exist_ok=True)
        write_atomic(written[-1], text)
    return written


def read(out: str | Path, experiments: Iterable[str]) -> dict[str, dict]:
    """experiment -> its saved config in `out/configs/`; SavedError, in one line, for one missing or damaged."""
    trees = {}
    for experiment in experiments:
        file = path(out, experiment)
        try:
            tree = load(file.read_text())
        except FileNotFoundError:
            raise SavedError(
                f"{file}: no saved config for {experiment} (record the table again, or run scripts/saved_configs.py "
                f"{Path(out)})"
            ) from None
        except (OSError, yaml.YAMLError, UnicodeDecodeError) as err:
            raise SavedError(f"{file}: not a saved config ({type(err).__name__})") from None
        if not isinstance(tree, dict):
            raise SavedError(f"{file}: not a saved config (a YAML {type(tree).__name__}, not a mapping)")
        trees[experiment] = tree
    return trees
