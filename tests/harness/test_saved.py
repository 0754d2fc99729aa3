"""Each experiment's saved config beside its table: what its runs saved alike (a resolved one is exactly that), every
committed table's axis columns read from them, and one line for a missing or damaged one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from minibert.ablation.grid import Experiment
from minibert.tables import saved, table
from minibert.tables.record import grid_of
from minibert.training.fit import fit

ROOT = Path(__file__).resolve().parents[2]
TABLES = sorted(p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("results/**/results.csv"))
SHORT = {"trainer.max_steps": 2, "trainer.val_check_interval": 2, "data.val_size": 16, "data.batch_size": 8}


def test_a_resolved_config_is_what_two_runs_of_a_budgeted_experiment_saved_alike(tmp_path):
    """Without training: LightningCLI's parser, its defaults and plug-in arguments, and a budget planned into steps
    as a run plans it; a seed and the folders, which differ between runs, are null. (An experiment without a
    budget: tests/harness/test_ablate.py, on a sweep's own runs.)"""
    experiment = Experiment("p/mlm", "pretrain", ("configs/pretrain.yaml",), {**SHORT, "budget.flops": 2e8})
    trees = []
    for seed in (0, 1):
        summary = fit([ROOT / c for c in experiment.configs], [f"--seed_everything={seed}", *experiment.cli_args()],
                      root_dir=tmp_path / str(seed))  # fmt: skip
        trees.append(yaml.safe_load((Path(summary["log_dir"]) / saved.SAVED).read_text()))
    kept = saved.shared(trees)
    assert kept["seed_everything"] is None and kept["trainer"]["max_steps"] == trees[0]["trainer"]["max_steps"]
    assert saved.resolve(experiment, ROOT) == kept


def test_what_runs_share_is_kept_and_what_they_differ_on_is_null():
    a = {"seed": 0, "data": {"seed": 0, "size": 8}, "layers": [1, 2], "objective": {"class_path": "A", "k": 1}}
    b = {"seed": 1, "data": {"seed": 1, "size": 8}, "layers": [1, 3], "objective": {"class_path": "B", "j": 1}}
    assert saved.shared([a, b]) == {"seed": None, "data": {"seed": None, "size": 8}, "layers": None, "objective": None}
    assert saved.shared([a]) == a


@pytest.mark.parametrize("out", TABLES)
def test_every_committed_tables_axis_columns_are_what_its_saved_configs_give(tmp_path, out):
    grid = grid_of(ROOT / out, ROOT)
    trees = saved.of(ROOT / out, grid)  # one for every experiment of the table, and for its upstreams
    for name in table.FILES:
        if found := table.narrow_file(ROOT / out, name):
            shutil.copy(found, tmp_path / found.name)
    table.relabel(tmp_path, grid, trees)
    assert (tmp_path / table.FILE).read_bytes() == (ROOT / out / table.FILE).read_bytes()


def test_an_objective_that_masks_nothing_states_no_masking_recipe():
    """Next-token LM and NSP replace the objective whose masking recipe configs/pretrain.yaml sets: their runs had
    none, and the table says so (MLM's is BERT's 80/10/10; ELECTRA's generator masks every picked token)."""
    per = table.read(ROOT / "results/objectives", borrowed=False).groupby("experiment").first()
    assert per.loc["objectives/pretrain/mlm", "masking.p_mask"] == 0.8
    assert per.loc["objectives/pretrain/rtd", "masking.p_mask"] == 1.0
    for e in ("objectives/pretrain/next_token", "objectives/pretrain/nsp"):
        assert pd.isna(per.loc[e, "masking.p_mask"]) and pd.isna(per.loc[e, "eval_masking.p_mask"])


def test_a_missing_or_damaged_saved_config_is_one_line(tmp_path):
    with pytest.raises(saved.SavedError, match=r"p/a.yaml: no saved config for p/a \(record the table again"):
        saved.read(tmp_path, ["p/a"])
    saved.path(tmp_path, "p/a").parent.mkdir(parents=True)
    for text, says in (("a: [1\n", "not a saved config \\(ParserError\\)"), ("- 1\n", "a YAML list, not a mapping")):
        saved.path(tmp_path, "p/a").write_text(text)
        with pytest.raises(saved.SavedError, match=says) as err:
            saved.read(tmp_path, ["p/a"])
        assert "\n" not in str(err.value)
