"""MLM pre-training: the loss is cross-entropy on picked positions only, training lowers it, an empty
batch is harmless, and (slow) the default config reaches the write-up's figures."""

import csv
import math
import statistics

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minibert.logs import metric_history
from minibert.masking import IGNORE, MaskingRecipe
from minibert.module import EncoderModule
from minibert.objectives import MaskedLM


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


# Issue 2's acceptance: the default config (600 steps), seeds 0, 1, 2, mean over seeds.
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


def test_pretrain_table_reports_the_runs_next_to_the_write_up(scripts, root, tmp_path, monkeypatch):
    table = scripts("pretrain_table")
    monkeypatch.chdir(root)  # the script names configs relative to the repository root
    out = tmp_path / "pretrain.md"
    table.main(["--seeds", "0", "--override=--trainer.max_steps=2", f"--out={out}", f"--root-dir={tmp_path}/runs"])
    text = out.read_text()
    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert {(r["variant"], r["seed"]) for r in rows} == {("bidirectional", "0"), ("causal", "0")}
    acc = {r["variant"]: float(r["value"]) for r in rows if r["metric"] == "val/acc"}
    line = next(line for line in text.splitlines() if line.startswith("| all masked tokens |"))
    # write-up figure, ours, target, for each variant
    assert line.split(" | ")[1:3] == ["89.4%", f"{100 * acc['bidirectional']:.1f}%"]
    assert line.split(" | ")[4:6] == ["55.5%", f"{100 * acc['causal']:.1f}%"]
    assert "python scripts/pretrain_table.py --seeds 0 --override=--trainer.max_steps=2" in text
    assert "train loss at step 1 | 3.083 |" in text and "train loss at step 2 | about 0.4 |" in text
