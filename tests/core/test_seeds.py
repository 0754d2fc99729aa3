"""Three seeds, each settable on its own: initial weights (`model.init_seed`), training stream (`data.seed`)
and validation set (`data.val_seed`). Each moves only what it names, the run's summary records all three,
and by default they follow `seed_everything` as before (the validation set stays one fixed draw)."""

from __future__ import annotations

import pytest
import torch
import yaml

from minibert.ablation.grid import load_grid
from minibert.objectives import MaskedLM, SpanMaskedLM
from minibert.training.checkpoints import last_checkpoint
from minibert.training.fit import fit
from minibert.training.module import EncoderModule
from tests.clirun import weights

SHORT = ["--trainer.max_steps=8", "--trainer.val_check_interval=8", "--data.val_size=64", "--data.batch_size=16"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    torch.set_num_threads(1)
    settings = {
        "base": ["--seed_everything=3"],
        "init": ["--seed_everything=3", "--model.init_seed=9"],
        "data": ["--seed_everything=3", "--data.seed=9"],
        "val": ["--seed_everything=3", "--data.val_seed=null"],
        "explicit": ["--seed_everything=5", "--model.init_seed=3", "--data.seed=3"],
    }
    root = tmp_path_factory.mktemp("seeds")
    return {
        name: fit(["configs/pretrain.yaml"], [*SHORT, *args], root_dir=root / name) for name, args in settings.items()
    }


def test_summary_records_all_three_seeds(runs):
    assert runs["base"]["seeds"] == {"seed_everything": 3, "init": 3, "data": 3, "val": 2018}
    assert runs["init"]["seeds"] == {"seed_everything": 3, "init": 9, "data": 3, "val": 2018}
    assert runs["data"]["seeds"] == {"seed_everything": 3, "init": 3, "data": 9, "val": 2018}
    assert runs["val"]["seeds"] == {"seed_everything": 3, "init": 3, "data": 3, "val": 3}


def test_each_seed_moves_only_what_it_names(runs):
    base, init, data, val = (runs[k] for k in ("base", "init", "data", "val"))
    # the validation set: only data.val_seed changes the questions graded
    assert base["val/n"] == init["val/n"] == data["val/n"]
    assert val["val/n"] != base["val/n"] or val["val/acc"] != base["val/acc"]
    # init and data seeds both change what is trained
    for other in (init, data):
        assert other["train/loss"] != base["train/loss"]
    # the validation seed changes no weight: the same training, graded on other questions
    wb, wv = (weights(last_checkpoint(r["log_dir"])) for r in (base, val))
    assert all(torch.equal(wb[k], wv[k]) for k in wb)


def test_explicit_seeds_reproduce_the_default_run_whatever_seed_everything_is(runs):
    """seed_everything=5 with init and data seeds of 3 trains exactly the run seed_everything=3 trains."""
    a, b = (weights(last_checkpoint(runs[k]["log_dir"])) for k in ("base", "explicit"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_encoders_of_one_shape_start_equal_across_objectives():
    """Paired seeds: the same init seed gives MLM and span masking the same initial encoder."""
    a = EncoderModule(objective=MaskedLM(), init_seed=4).encoder.state_dict()
    b = EncoderModule(objective=SpanMaskedLM(), init_seed=4).encoder.state_dict()
    c = EncoderModule(objective=MaskedLM(), init_seed=5).encoder.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_the_dyck_grid_gives_every_seed_its_own_validation_set():
    grid = load_grid("configs/ablations/dyck.yaml")
    for e in grid.experiments:
        layers = [yaml.safe_load(open(c)) or {} for c in e.configs]
        val_seeds = [layer["data"]["val_seed"] for layer in layers if "val_seed" in (layer.get("data") or {})]
        assert val_seeds and val_seeds[-1] is None, e.name
