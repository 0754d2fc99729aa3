"""Languages as plug-ins: every shipped objective and the fine-tuning task run on every language where they
make sense, every run logs its ceilings beside its accuracies, and what cannot run fails at start-up."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from minibert.training.checkpoints import last_checkpoint
from minibert.training.fit import fit
from minibert.training.metrics import CategoryAccuracy
from tests.clirun import FEW_PAIRS_ARGS

DYCK = "configs/languages/dyck.yaml"
TINY = [
    "--trainer.max_steps=2",
    "--trainer.val_check_interval=2",
    "--data.val_size=200",
    "--data.batch_size=16",
    *FEW_PAIRS_ARGS,
]


def ceilings_are_beside_accuracies(summary: dict, prefix: str = "val/") -> list[str]:
    """The categories of `prefix`acc..., after checking that each has the oracle's figure under the right name:
    a ceiling with gap = ceiling - accuracy where it is a bound, else the Bayes predictor's own accuracy."""
    names = [k[len(prefix) + 3 :] for k in summary if k.startswith(prefix + "acc")]
    assert names
    for name in names:
        acc, ceiling = summary[f"{prefix}acc{name}"], summary.get(f"{prefix}ceiling/acc{name}")
        reference = summary.get(f"{prefix}bayes/acc{name}")
        assert ceiling is not None or f"{prefix}bayes/acc{name}" in summary, name
        if acc is None:  # an empty category (NaN, written as null)
            continue
        if ceiling is not None:
            assert 0.0 <= ceiling <= 1.0 + 1e-6
            assert summary[f"{prefix}gap/acc{name}"] == pytest.approx(ceiling - acc, abs=1e-6)
            if reference is not None:  # a category's own bound is not below the Bayes predictor's score there,
                # in expectation: on these n questions each scores its own outcomes, so allow 3 binomial SEs
                assert ceiling >= reference - 3 * (0.25 / summary[f"{prefix}n{name}"]) ** 0.5, name
        else:
            assert f"{prefix}gap/acc{name}" not in summary, name  # no gap to a value that is not a bound
    return names


def test_ceiling_and_gap_where_bound_and_the_bayes_reference_elsewhere_equal_a_plain_numpy_count():
    rng = np.random.default_rng(0)
    n, c = 500, 3
    preds, target = rng.integers(0, 4, n), rng.integers(0, 4, n)
    cats, credit = rng.random((n, c)) < 0.4, rng.random(n)
    metric = CategoryAccuracy(["x", "y", "z"], input_categories=["x"])
    for part in np.array_split(np.arange(n), 4):  # several updates sum up
        metric.update(*(torch.from_numpy(a[part]) for a in (preds, target, cats, credit)))
    out = {k: v.item() for k, v in metric.compute().items()}
    assert out["ceiling/acc"] == pytest.approx(credit.mean(), abs=1e-6)
    for j, name in enumerate("xyz"):
        acc, oracle = (preds == target)[cats[:, j]].mean(), credit[cats[:, j]].mean()
        if name == "x":  # decided by the input: a ceiling and a gap
            assert out[f"ceiling/acc_{name}"] == pytest.approx(oracle, abs=1e-6)
            assert out[f"gap/acc_{name}"] == pytest.approx(oracle - acc, abs=1e-6)
            assert f"bayes/acc_{name}" not in out
        else:  # not decided: the Bayes predictor's accuracy, and no ceiling or gap
            assert out[f"bayes/acc_{name}"] == pytest.approx(oracle, abs=1e-6)
            assert f"ceiling/acc_{name}" not in out and f"gap/acc_{name}" not in out


def test_a_categorys_own_best_predictor_gives_its_ceiling_where_known_and_none_where_nan():
    n = 400
    rng = np.random.default_rng(1)
    preds, target, cats = rng.integers(0, 3, n), rng.integers(0, 3, n), rng.random((n, 2)) < 0.5
    bounds = rng.random((n, 2))
    bounds[:, 1] = np.nan  # the second category's own best predictor is not known
    metric = CategoryAccuracy(["u", "v"])
    metric.update(*(torch.from_numpy(a) for a in (preds, target, cats, rng.random(n), bounds)))
    out = {k: v.item() for k, v in metric.compute().items()}
    assert out["ceiling/acc_u"] == pytest.approx(bounds[cats[:, 0], 0].mean(), abs=1e-6)
    assert out["gap/acc_u"] == pytest.approx(out["ceiling/acc_u"] - (preds == target)[cats[:, 0]].mean(), abs=1e-6)
    assert "ceiling/acc_v" not in out and {"bayes/acc_u", "bayes/acc_v"} <= set(out)


def test_no_ceiling_is_claimed_when_some_predictions_came_without_credit():
    metric = CategoryAccuracy(["x"])
    metric.update(torch.tensor([1]), torch.tensor([1]), torch.tensor([[True]]), torch.tensor([1.0]))
    metric.update(torch.tensor([1]), torch.tensor([0]), torch.tensor([[True]]))
    assert not any("/" in k for k in metric.compute())


def test_seed_language_run_logs_a_ceiling_beside_every_accuracy_and_causal_runs_read_the_causal_oracle(tmp_path):
    both = fit(["configs/pretrain.yaml"], ["--trainer.max_steps=2"], root_dir=tmp_path / "both")
    left = fit(["configs/pretrain.yaml", "configs/causal.yaml"], ["--trainer.max_steps=2"], root_dir=tmp_path / "l")
    assert set(ceilings_are_beside_accuracies(both)) == set(ceilings_are_beside_accuracies(left))
    # the ceilings depend on the questions only, not on training: the seed validation set's 90.1% and 54.3%
    assert both["val/ceiling/acc"] == pytest.approx(0.9011, abs=1e-4)
    assert left["val/ceiling/acc"] == pytest.approx(0.5435, abs=1e-4)
    assert left["val/bayes/acc_closer"] == pytest.approx(both["val/bayes/acc_closer"])  # left is enough
    # kept tokens: the best predictor of that category alone copies the shown token, so its bound is 100%
    assert both["val/ceiling/acc_kind_kept"] == pytest.approx(1.0)
    assert both["val/bayes/acc_kind_kept"] < 0.99


@pytest.mark.parametrize(
    "objective, prefix",
    [
        (None, "val/"),
        ("configs/causal.yaml", "val/"),
        ("configs/objectives/span.yaml", "val/"),
        ("configs/objectives/next_token.yaml", "val/"),
        ("configs/objectives/rtd.yaml", "val/generator/"),
    ],
)
def test_every_shipped_objective_runs_on_dyck_with_its_ceilings(tmp_path, objective, prefix):
    configs = ["configs/pretrain.yaml", *([objective] if objective else []), DYCK]
    summary = fit(configs, TINY, root_dir=tmp_path)
    names = ceilings_are_beside_accuracies(summary, prefix)
    if prefix == "val/generator/" or "next_token" not in str(objective):
        assert {"_dist_1", "_dist_8_plus", "_depth_1", "_depth_4_plus", "_partner_hidden"} <= set(names)
    config = json.dumps(summary)
    assert summary[f"{prefix}ceiling/acc"] < 0.9, config  # Dyck questions are harder than the seed's


def test_dyck_finetuning_logs_its_spoils_and_a_ceiling_of_one(tmp_path):
    pretrained = fit(["configs/pretrain.yaml", DYCK], TINY, root_dir=tmp_path / "pre")
    ckpt = last_checkpoint(pretrained["log_dir"])
    tuned = fit(["configs/finetune.yaml", DYCK], [*TINY, f"--model.init_args.encoder_ckpt={ckpt}"], tmp_path / "ft")
    assert {"val/acc_spoil_swap", "val/acc_spoil_move", "val/acc_grammatical"} <= set(tuned)
    assert tuned["val/ceiling/acc"] == 1.0 and tuned["val/ceiling/acc_spoil_move"] == 1.0
