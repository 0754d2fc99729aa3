"""Determinism: the same seed and settings give identical metrics and weights; another seed gives others."""

from __future__ import annotations

import pytest
import torch

from minibert.training.checkpoints import last_checkpoint
from minibert.training.fit import fit
from tests.clirun import weights

SHORT = ["--trainer.max_steps=30", "--trainer.val_check_interval=15", "--data.val_size=200"]


@pytest.fixture
def one_thread():
    """One intra-op thread, as in the subprocess runs (and much faster on a shared 2-core machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def metrics(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k.startswith(("val/", "train/"))}


def test_same_seed_same_numbers_other_seed_other_numbers(tmp_path, one_thread):
    runs = {
        name: fit(["configs/pretrain.yaml"], [*SHORT, f"--seed_everything={seed}"], root_dir=tmp_path / name)
        for name, seed in (("a", 0), ("b", 0), ("other", 1))
    }
    a, b, other = runs["a"], runs["b"], runs["other"]
    assert metrics(a) and metrics(a) == metrics(b)
    wa, wb, wo = (weights(last_checkpoint(r["log_dir"])) for r in (a, b, other))
    assert all(torch.equal(wa[k], wb[k]) for k in wa)

    # another seed changes the initial weights and every training batch: all of it differs
    assert metrics(other)["val/loss"] != metrics(a)["val/loss"]
    assert metrics(other)["train/loss"] != metrics(a)["train/loss"]
    assert not any(torch.equal(wa[k], wo[k]) for k in wa if wa[k].ndim >= 2)
    # ... but not the validation set, which is drawn from data.val_seed: the same questions are graded
    assert metrics(other)["val/n"] == metrics(a)["val/n"]


@pytest.mark.slow  # several runs one after another: with the claims
def test_a_run_after_others_in_one_process_is_the_run_alone(tmp_path, one_thread):
    """Workers train run after run in one process, reusing the CLI's parser: each run's numbers and weights
    are those of the same run in a fresh process."""
    from minibert.training import cli
    from tests.clirun import run_fit, summaries

    dyck = ["configs/pretrain.yaml", "configs/languages/dyck.yaml"]
    fit(dyck, [*SHORT, "--seed_everything=2", "--model.init_args.lr=0.01"], root_dir=tmp_path / "before")
    assert cli._PARSERS  # the next run reuses a parser
    after = fit(["configs/pretrain.yaml"], [*SHORT, "--seed_everything=1"], root_dir=tmp_path / "after")
    alone = run_fit(
        "-c", "configs/pretrain.yaml", *SHORT, "--seed_everything=1", f"--trainer.default_root_dir={tmp_path / 'alone'}"
    )
    assert alone.returncode == 0, alone.stderr
    (fresh,) = summaries(tmp_path / "alone")
    assert metrics(after) == metrics(fresh) and after["seeds"] == fresh["seeds"]
    wa, wf = (weights(last_checkpoint(p)) for p in (after["log_dir"], next((tmp_path / "alone").glob("**/version_*"))))
    assert all(torch.equal(wa[k], wf[k]) for k in wa)
