"""The grid format: every committed grid loads, each sweep expands to the product of its axes minus its
excludes, names are unique, upstreams come first, and a committed table's axes (from its saved configs) tell apart
every two experiments that are set up differently; sweeps (products, named alternatives, zip, exclude) and their errors;
every field type-checked in one line; one dependency order."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import pytest
import yaml

from minibert.ablation.grid import GridError, check_metrics, load_grid
from minibert.ablation.runner import plan
from minibert.tables import saved
from minibert.tables.axes import grid_axes, settings
from minibert.tables.query import Data
from minibert.tables.record import grid_of

ROOT = Path(__file__).resolve().parents[2]
GRIDS = sorted(p.stem for p in (ROOT / "configs/ablations").glob("*.yaml"))
TABLES = sorted(p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("results/**/results.csv"))
GOOD = {"name": "a", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"]}


@functools.cache
def committed(name: str):
    return load_grid(ROOT / f"configs/ablations/{name}.yaml", ROOT)


def test_the_committed_grids_are_there():
    assert {"default", "dyck", "objectives", "masking", "probes", "recipe", "scaling", "text"} <= set(GRIDS)


def combinations(entry: dict) -> list[dict[str, str]]:
    """The labels of every combination an entry's `sweep` and `zip` make, less those its `exclude` leaves out,
    as the grid format documents them (a dotted key's labels are its last part and value: `lr0.01`)."""
    axes = []
    for key, values in (entry.get("sweep") or {}).items():
        short = key.rsplit(".", 1)[-1]
        axes.append([{key: label} for label in values] if isinstance(values, dict) else
                    [{short: f"{short}{v}"} for v in values])  # fmt: skip
    if zipped := entry.get("zip"):
        shorts = [k.rsplit(".", 1)[-1] for k in zipped]
        axes.append([{s: f"{s}{v}" for s, v in zip(shorts, row)} for row in zip(*zipped.values())])
    combos = [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*axes)]
    rules = entry.get("exclude") or []
    return [c for c in combos if not any(all(c.get(k) == str(v) for k, v in r.items()) for r in rules)]


def expected_names(entry: dict) -> list[str]:
    if not any(k in entry for k in ("sweep", "zip", "exclude")):
        return [entry["name"]]
    name = entry["name"]
    return [name.format_map(c) if "{" in name else f"{name}/{'-'.join(c.values())}" for c in combinations(entry)]


@pytest.mark.parametrize("name", GRIDS)
def test_every_grid_loads_and_each_sweep_expands_to_the_product_of_its_axes_minus_its_excludes(name):
    grid = committed(name)
    written = yaml.safe_load((ROOT / f"configs/ablations/{name}.yaml").read_text())["experiments"]
    want = [n for entry in written for n in expected_names(entry)]
    assert len(grid.names) == len(set(grid.names)) == len(want)  # names are unique
    assert sorted(grid.names) == sorted(want)
    runs = plan(list(grid.experiments), [0], Path("out"), ROOT)
    assert len({r.key for r in runs}) == len(runs)  # no two cells are one run


@pytest.mark.parametrize("name", GRIDS)
def test_every_upstream_is_an_earlier_experiment(name):
    seen: set[str] = set()
    for e in committed(name).experiments:
        assert e.encoder_from is None or e.encoder_from in seen, (e.name, e.encoder_from)
        seen.add(e.name)


def setup(grid, trees: dict, name: str) -> tuple:
    """What an experiment runs: its stage, its settings (its saved config, less how it is logged) and, for a
    fine-tuning run, its upstream's."""
    e = grid[name]
    own = tuple(sorted((k, repr(v)) for k, v in settings(trees[name]).items()))
    return e.job_type, own, setup(grid, trees, e.encoder_from) if e.encoder_from else None


@pytest.mark.parametrize("out", TABLES)
def test_the_tables_axes_tell_apart_every_two_experiments_set_up_differently(out):
    grid = grid_of(ROOT / out, ROOT)
    trees = saved.of(ROOT / out, grid)
    axes = grid_axes(grid, trees)
    if len(trees) > 1:
        assert axes[next(iter(trees))], f"{out}: no axis"
    setups = {name: setup(grid, trees, name) for name in trees}
    for a, b in itertools.combinations(trees, 2):
        same_axes = (grid[a].job_type, axes[a]) == (grid[b].job_type, axes[b])  # the stage is a column too
        assert same_axes == (setups[a] == setups[b]), (a, b, axes[a])


@pytest.mark.parametrize("out", TABLES)
def test_every_committed_table_is_of_a_grid_that_has_its_experiments(out):
    data = Data.load(ROOT / out)
    assert len(set(data.frame["grid"])) == 1
    assert set(data.experiments()) <= set(grid_of(ROOT / out, ROOT).names)  # its grid.yaml, or the named


def write(tmp_path: Path, *entries: dict, **top) -> Path:
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump({"experiments": list(entries), **top}, sort_keys=False))
    return path


def test_a_sweep_of_values_expands_to_one_experiment_per_combination(tmp_path):
    entry = {**GOOD, "name": "r/mlm", "overrides": {"trainer.max_steps": 5},
             "sweep": {"model.init_args.lr": [0.001, 0.01], "data.batch_size": [8, 16]}}  # fmt: skip
    grid = load_grid(write(tmp_path, entry), ROOT)  # the sweep's keys in written order
    assert grid.names == ["r/mlm/lr0.001-batch_size8", "r/mlm/lr0.001-batch_size16", "r/mlm/lr0.01-batch_size8",
                          "r/mlm/lr0.01-batch_size16"]  # fmt: skip
    assert grid.experiments[1].overrides == {"trainer.max_steps": 5, "model.init_args.lr": 0.001, "data.batch_size": 16}


def test_named_alternatives_add_configs_and_overrides_and_fill_names_and_upstreams(tmp_path):
    pre = {**GOOD, "name": "p/{language}", "sweep": {"language": {
        "pairs": {"overrides": {"trainer.max_steps": 6}},
        "dyck": {"configs": ["configs/languages/dyck.yaml"], "overrides": {"trainer.max_steps": 9}}}}}  # fmt: skip
    fine = {"name": "f/{language}/{regime}", "job_type": "finetune", "configs": ["configs/finetune.yaml"],
            "encoder_from": "p/{language}", "overrides": {"trainer.max_steps": 3},
            "sweep": {"language": {"pairs": {}, "dyck": {"configs": ["configs/languages/dyck.yaml"]}},
                      "regime": {"full": {"overrides": {"model.init_args.regime": "full"}},
                                 "frozen": {"overrides": {"model.init_args.regime": "frozen"}}}},
            "exclude": [{"language": "dyck", "regime": "frozen"}]}  # fmt: skip
    grid = load_grid(write(tmp_path, fine, pre), ROOT)
    assert grid.names == ["p/pairs", "f/pairs/full", "f/pairs/frozen", "p/dyck", "f/dyck/full"]  # upstream first
    f = grid["f/dyck/full"]
    assert f.configs == ("configs/finetune.yaml", "configs/languages/dyck.yaml") and f.encoder_from == "p/dyck"
    assert f.overrides == {"trainer.max_steps": 3, "model.init_args.regime": "full"}
    assert grid["p/dyck"].overrides == {"trainer.max_steps": 9}


def test_zip_takes_its_lists_in_step(tmp_path):
    entry = {**GOOD, "name": "z", "zip": {"data.batch_size": [8, 16, 32], "trainer.max_steps": [40, 20, 10]}}
    grid = load_grid(write(tmp_path, entry), ROOT)
    assert grid.names == ["z/batch_size8-max_steps40", "z/batch_size16-max_steps20", "z/batch_size32-max_steps10"]
    assert [e.overrides["trainer.max_steps"] * e.overrides["data.batch_size"] for e in grid.experiments] == [320] * 3


CLAIM = {"text": "t", "value": {"experiment": "a", "metric": "val/acc"}, "at_least": "0.9"}
# (a change to the one experiment, the grid's other top-level entries, the message)
BAD = [
    # sweeps
    ({"sweep": {"model.init_args.lr": []}}, {}, "sweep.model.init_args.lr must be a non-empty list"),
    ({"sweep": {}}, {}, "sweep must map dotted keys to lists of values"),
    ({"zip": {"data.batch_size": [8, 16], "trainer.max_steps": [4]}}, {}, "lists of one length"),
    ({"name": "a/{lang}", "sweep": {"language": {"pairs": {}}}}, {}, "which are not axes; axes: ['language']"),
    ({"sweep": {"language": {"pairs": {}}}, "exclude": [{"lang": "pairs"}]}, {}, "exclude[0] names ['lang']"),
    ({"sweep": {"lang": {"pairs": {}, "dyck": {}}}, "exclude": [{"lang": "dyk"}]}, {}, "leaves out no combination"),
    ({"sweep": {"language": {"pairs": {"overides": {}}}}}, {}, "sweep.language.pairs has unknown keys ['overides']"),
    ({"sweep": {"language": {"dyck": {"configs": ["configs/nope.yaml"]}}}}, {}, "'configs/nope.yaml' does not exist"),
    # sweeps that would crash or run other than written
    ({"sweep": {1: [1, 2]}}, {}, "axes are named by strings"),
    ({"zip": {1: [1, 2]}}, {}, "zip must map dotted keys"),
    ({"name": "a/{x", "sweep": {"x": {"p": {}}}}, {}, "is not a name template"),
    ({"sweep": {"m.x": {"p": {}}}}, {}, "an axis of named alternatives is a plain word"),
    ({"sweep": {"on": {True: {}}}}, {}, "has the label True: quote it"),
    ({"sweep": {"x": {"p": {}}}, "exclude": [{}]}, {}, "exclude[0] is empty"),
    ({"sweep": {"x": {"p": {}}}, "exclude": [{"x": "p"}]}, {}, "exclude leaves out every combination"),
    ({"overrides": {"trainer.max_steps": 3}, "sweep": {"trainer.max_steps": [1, 2]}}, {}, "is set twice"),
    ({"sweep": {"trainer.max_steps": [1], "x": {"p": {"overrides": {"trainer.max_steps": 9}}}}}, {}, "is set twice"),
    ({1: "x", "b": 2}, {}, "unknown keys [1, 'b']"),
    # field types
    ({"metrics": "val/acc"}, {}, "metrics must be a non-empty list of metric names, got 'val/acc'"),
    ({"configs": "configs/pretrain.yaml"}, {}, "configs must be a non-empty list of YAML paths"),
    ({"name": "../escape"}, {}, "name='../escape' is not allowed"),
    ({"name": "a/../../b"}, {}, "name='a/../../b' is not allowed"),
    ({"name": "/abs"}, {}, "name='/abs' is not allowed"),
    ({"name": 7}, {}, "name=7 is not allowed"),
    ({"reference": {"val/acc": "high"}}, {}, "reference must map metric names to numbers"),
    ({"overrides": ["trainer.max_steps=4"]}, {}, "overrides must be a mapping"),
    ({"encoder_from": ["b"]}, {}, "encoder_from must be a non-empty string"),
    ({}, {"claims": [CLAIM]}, "claims[0].at_least must be a number, got '0.9'"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "top", "message"), BAD)
def test_a_bad_grid_is_one_line_naming_its_file(tmp_path, change, top, message):
    path = write(tmp_path, {**GOOD, **change}, **top)
    with pytest.raises(GridError) as err:
        load_grid(path, ROOT)
    assert message in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_encoder_from_may_come_later_and_cycles_are_named(tmp_path):
    fine = {"name": "ft", "job_type": "finetune", "configs": ["configs/finetune.yaml"], "encoder_from": "pre"}
    pre = {**GOOD, "name": "pre"}
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump({"experiments": [fine, pre]}))
    grid = load_grid(path, ROOT)
    assert grid.names == ["pre", "ft"]
    runs = plan(list(grid.experiments), [0, 1], tmp_path / "out", ROOT)
    assert [r.experiment.name for r in runs] == ["pre", "pre", "ft", "ft"]
    assert all(r.upstream.experiment.name == "pre" and r.upstream.seed == r.seed for r in runs[2:])
    path.write_text(yaml.safe_dump({"experiments": [fine, {**pre, "job_type": "finetune", "encoder_from": "ft"}]}))
    with pytest.raises(GridError, match=r"encoder_from makes a cycle \(ft -> pre -> ft\)"):
        load_grid(path, ROOT)


def test_check_metrics_only_judges_experiments_with_finished_runs(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump({"experiments": [{**GOOD, "metrics": ["val/acc", "val/acc_closer"]}]}))
    grid = load_grid(path, ROOT)
    check_metrics(grid, {})  # nothing finished: nothing to judge
    check_metrics(grid, {"a": {"val/acc", "val/acc_closer", "step"}})
    with pytest.raises(GridError, match="a.metrics names metric 'val/acc_closer'"):
        check_metrics(grid, {"a": {"val/acc", "val/acc_opener"}})


def test_runs_come_out_upstream_first_along_a_chain_whatever_the_names(tmp_path):
    chain = [
        {**GOOD, "name": "z"},
        {**GOOD, "name": "m", "encoder_from": "z"},
        {**GOOD, "name": "a", "encoder_from": "m"},
    ]
    grid = load_grid(write(tmp_path, *reversed(chain)), ROOT)
    assert grid.names == ["z", "m", "a"]
    runs = plan(list(grid.experiments), [1, 0], tmp_path / "out", ROOT)
    assert [(r.experiment.name, r.seed, r.depth) for r in runs] == [
        ("z", 0, 0), ("z", 1, 0), ("m", 0, 1), ("m", 1, 1), ("a", 0, 2), ("a", 1, 2)]  # fmt: skip
    assert runs[4].upstream is runs[2] and runs[2].upstream is runs[0]
    with pytest.raises(ValueError, match="a loads m, which is not planned before it"):
        plan([grid["a"], grid["m"]], [0], tmp_path / "out", ROOT)


def test_null_for_an_optional_field_is_its_default(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump({"experiments": [{**GOOD, "overrides": None, "metrics": None}]}))
    (e,) = load_grid(path, ROOT).experiments
    assert e.overrides == {} and e.metrics == ()
