"""A run's settings as pages state them are read from the config its runs saved (the table's `configs/`), never
from a stack of config files merged again; a single file's setting is read as the file writes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from minibert.report.asked import asked
from minibert.report.settings import Run, setting
from minibert.tables import saved, table
from minibert.tables.query import QueryError
from minibert.tables.stats import number

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(asked(ROOT).runs))
def test_every_named_run_is_an_experiment_of_its_table_and_reads_its_saved_config(name):
    folder, experiment = asked(ROOT).runs[name]
    assert experiment in set(table.read(ROOT / folder, borrowed=False)["experiment"])
    config = yaml.safe_load(saved.path(ROOT / folder, experiment).read_text())
    run = Run(ROOT, name)
    assert run.steps == number(config["trainer"]["max_steps"], 1, 0)
    assert run.batch == config["data"]["batch_size"]


def test_a_page_states_the_settings_its_runs_saved_not_todays_configs(tmp_path):
    folder, experiment = asked(ROOT).runs["dyck-pretrain"]
    kept = saved.path(tmp_path / folder, experiment)
    kept.parent.mkdir(parents=True)
    shutil.copy(saved.path(ROOT / folder, experiment), kept)
    config = yaml.safe_load(kept.read_text())
    config["trainer"]["max_steps"] = 7  # the runs were made with 7 steps, whatever configs/ says today
    kept.write_text(yaml.safe_dump(config))
    assert Run(tmp_path, "dyck-pretrain").steps == "7"
    kept.unlink()
    with pytest.raises(QueryError, match=rf"{experiment}.yaml: no saved config for {experiment} .*saved_configs"):
        Run(tmp_path, "dyck-pretrain")


def test_a_files_setting_is_read_as_the_file_writes_it(tmp_path):
    (tmp_path / "a.yaml").write_text("model: {encoder: {width: 32, layers: 2}, lr: 0.003}\nlist: [{x: 1}, {x: 2}]\n")
    assert setting(tmp_path, "a.yaml", "model.encoder") == {"width": 32, "layers": 2}
    assert setting(tmp_path, "a.yaml", "list.1.x") == 2
    with pytest.raises(QueryError, match="a.yaml: no setting 'model.heads'"):
        setting(tmp_path, "a.yaml", "model.heads")
    with pytest.raises(QueryError, match="no such config"):
        setting(tmp_path, "b.yaml", "model")


def test_the_text_recipe_keeps_the_default_depth_and_a_language_gives_its_own_settings():
    encoder = Run(ROOT, "text-pretrain").encoder
    assert (
        encoder["layers"] == Run(ROOT, "pretrain").encoder["layers"]
        and encoder["width"] != Run(ROOT, "pretrain").encoder["width"]
    )
    assert set(Run(ROOT, "dyck-pretrain").language) >= {"kinds", "length", "max_depth"}
    with pytest.raises(QueryError, match="no run 'nope'"):
        Run(ROOT, "nope")
