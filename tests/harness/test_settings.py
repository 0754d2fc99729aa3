"""A run's settings as pages state them are read from its stack of configs, merged as LightningCLI merges them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from minibert.report.settings import STACKS, Run, language, setting
from minibert.tables.query import QueryError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(STACKS))
def test_every_named_run_reads_its_steps_from_the_last_config_that_sets_them(name):
    run = Run(ROOT, name)
    last = next(c for c in reversed(STACKS[name]) if "max_steps" in (yaml.safe_load((ROOT / c).read_text())["trainer"]))
    assert run.steps == f"{yaml.safe_load((ROOT / last).read_text())['trainer']['max_steps']:,}"


def test_a_mapping_merges_key_by_key_and_a_value_is_the_last_configs(tmp_path):
    (tmp_path / "a.yaml").write_text("model: {encoder: {width: 32, layers: 2}, lr: 0.003}\n")
    (tmp_path / "b.yaml").write_text("model: {encoder: {width: 64}, lr: 0.01}\n")
    assert setting(tmp_path, ["a.yaml", "b.yaml"], "model.encoder") == {"width": 64, "layers": 2}
    assert setting(tmp_path, ["a.yaml", "b.yaml"], "model.lr") == 0.01
    assert setting(tmp_path, ["b.yaml", "a.yaml"], "model.encoder") == {"width": 32, "layers": 2}
    with pytest.raises(QueryError, match="no setting 'model.heads'"):
        setting(tmp_path, ["a.yaml", "b.yaml"], "model.heads")


def test_the_text_recipe_keeps_the_default_depth_and_a_language_gives_its_own_settings():
    encoder = Run(ROOT, "text-pretrain").encoder
    assert (
        encoder["layers"] == Run(ROOT, "pretrain").encoder["layers"]
        and encoder["width"] != Run(ROOT, "pretrain").encoder["width"]
    )
    assert set(language(ROOT, "dyck")) >= {"kinds", "length", "max_depth"}
    with pytest.raises(QueryError, match="no run 'nope'"):
        Run(ROOT, "nope")
