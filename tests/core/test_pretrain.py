"""MLM pre-training: the loss is cross-entropy on picked positions only, training lowers it, an empty
batch is harmless, and (slow) the default config reaches the write-up's figures."""

import math
import statistics

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minibert.ablation.grid import load_grid
from minibert.masking import IGNORE, MaskingRecipe
from minibert.metrics_history import metric_history
from minibert.objectives import MaskedLM
from minibert.training.module import EncoderModule


def train_losses(log_dir: str) -> list[float]:
    steps, losses = zip(*metric_history(log_dir, "train/loss"))
    assert list(steps) == list(range(1, len(steps) + 1)), "expected every step logged"
    return list(losses)


def test_short_run_lowers_the_loss_below_uniform_guessing(short_run):
    losses = train_losses(short_run["log_dir"])
    assert len(losses) == 60 and short_run["step"] == 60
    first, last = statistics.fmean(losses[:5]), statistics.fmean(losses[-5:])
    assert first == pytest.approx(math.log(18), abs=0.5)  # an untrained head guesses near uniformly over 18 tokens
    assert last < first - 0.5
    assert last < math.log(16)  # better than uniform over the 16 content tokens
    assert short_run["val/loss"] < math.log(16)
    assert short_run["val/acc"] > 1 / 8  # beyond knowing only whether a blank is an opener or a closer


def test_loss_is_cross_entropy_over_picked_positions_only():
    torch.manual_seed(0)
    module = EncoderModule(objective=MaskedLM())
    batch = module.objective.make_batch(np.random.default_rng(0), 32, "train")
    out = module.objective(module.encoder, batch)
    logits = module.objective.head(module.encoder(batch["inputs"]))  # (B, T, V) at every position
    expected = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=IGNORE)
    assert torch.allclose(out.loss, expected, atol=1e-6)
    picked = batch["labels"] != IGNORE
    assert torch.equal(out.target, batch["labels"][picked]) and len(out.preds) == picked.sum()


def test_batch_with_no_picked_position_gives_zero_loss_and_zero_gradients():
    torch.manual_seed(0)
    module = EncoderModule(objective=MaskedLM(masking=MaskingRecipe(p_pick=0.0)))
    batch = module.objective.make_batch(np.random.default_rng(0), 8, "train")
    assert (batch["labels"] == IGNORE).all()
    loss = module.training_step(batch, 0)
    assert loss.item() == 0.0 and torch.isfinite(loss)
    loss.backward()
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    assert len(grads) == len(list(module.parameters()))  # the graph reaches every weight, with zeros
    assert all(torch.count_nonzero(g) == 0 for g in grads)


def test_non_finite_loss_stops_training_with_a_clear_error():
    torch.manual_seed(0)
    module = EncoderModule(objective=MaskedLM())
    with torch.no_grad():
        module.encoder.tok.weight.fill_(float("nan"))
    batch = module.objective.make_batch(np.random.default_rng(0), 8, "train")
    with pytest.raises(FloatingPointError, match="non-finite training loss nan at step 0"):
        module.training_step(batch, 0)


@pytest.mark.parametrize(
    "field, value, allowed",
    [("lr", 0.0, "positive number"), ("weight_decay", -0.1, ">= 0"), ("warmup_steps", 1.5, ">= 0")],
)
def test_invalid_optimisation_settings_raise_naming_field_and_value(field, value, allowed):
    with pytest.raises(ValueError, match=rf"EncoderModule\.{field}={value!r} is not allowed: .*{allowed}"):
        EncoderModule(objective=MaskedLM(), **{field: value})


# The write-up's figures for the default config (600 steps), seeds 0, 1, 2, mean over seeds.
ACCEPTANCE = {
    "bidirectional": {
        "val/acc": (0.88, 1.0),
        "val/acc_partner_visible": (0.99, 1.0),
        "val/acc_partner_hidden": (0.0, 0.30),
        "val/acc_kind_kept": (0.97, 1.0),
    },
    "causal": {"val/acc": (0.50, 0.62), "val/acc_closer": (0.87, 1.0), "val/acc_opener": (0.0, 0.26)},
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["bidirectional", "causal"])
def test_default_pretraining_reaches_the_acceptance_figures(variant, default_grid):
    """Default config, seeds 0, 1, 2 (the pretrain/* cells of the default ablation grid, run once)."""
    values = default_grid.results.values
    assert set(values[(f"pretrain/{variant}", "step")].values()) == {600}
    for key, (low, high) in ACCEPTANCE[variant].items():
        by_seed = values[(f"pretrain/{variant}", key)]
        assert sorted(by_seed) == [0, 1, 2]
        mean = statistics.fmean(by_seed.values())
        assert low <= mean <= high, f"{variant} {key}: mean {mean:.4f} over seeds 0-2 is outside [{low}, {high}]"


def test_the_default_grid_reports_the_pretraining_figures_next_to_the_write_up(root):
    """The default grid's report puts each of our figures beside the write-up's, from the table."""
    from minibert.report.grid_report import against_reference
    from minibert.tables.query import Data

    grid = load_grid(root / "configs/ablations/default.yaml", root=root)
    data = Data.load(root / "results")
    rows = {(r[0], r[1]): r[2:] for r in against_reference(grid, data).rows}
    ours, published = rows[("pretrain/bidirectional", "val/acc")]
    assert published == "89.4" and rows[("pretrain/causal", "val/acc")][1] == "55.5"
    assert ours == str(data.stat("val/acc", experiment="pretrain/bidirectional"))
    assert float(ours.split()[0]) == pytest.approx(100 * data.stat("val/acc", experiment="pretrain/bidirectional").mean,
                                                   abs=0.05)  # fmt: skip


def test_the_summary_says_what_each_accuracy_means(short_run):
    """Reports read a metric's meaning from here (minibert.objectives.Scoreboard), never from class names."""
    from minibert.masking import INPUT_CATEGORIES, MLM_CATEGORIES

    ((prefix, board),) = short_run["scoreboards"].items()
    assert prefix == "" and board["measure"] == "cloze" and board["chance"] == 1 / 8
    assert board["categories"] == list(MLM_CATEGORIES) and board["input_categories"] == list(INPUT_CATEGORIES)
    assert all(f"val/acc_{c}" in short_run for c in board["categories"])
