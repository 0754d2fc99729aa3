"""The speed-ups keep behaviour: fused AdamW takes the for-loop AdamW's steps, batched validation fetches
equal per-example collation, and sparse train/loss logging still reaches the logger and the summary."""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch.utils.data import default_collate

from minibert.objectives import MaskedLM
from minibert.training.data import StreamDataModule
from minibert.training.fit import fit
from minibert.training.module import EncoderModule


def test_fused_adamw_takes_the_same_steps_as_the_for_loop_adamw():
    torch.manual_seed(0)
    module = EncoderModule(MaskedLM(), weight_decay=0.1)
    reference = EncoderModule(MaskedLM(), weight_decay=0.1)
    reference.load_state_dict(module.state_dict())
    fused = module.optimizer()
    plain = torch.optim.AdamW(
        [{"params": [p for p in reference.parameters() if p.ndim >= 2], "weight_decay": 0.1},
         {"params": [p for p in reference.parameters() if p.ndim < 2], "weight_decay": 0.0}],
        lr=module.lr, betas=(0.9, 0.98), foreach=False,
    )  # fmt: skip
    assert fused.defaults["fused"] and [len(g["params"]) for g in fused.param_groups] == [
        len(g["params"]) for g in plain.param_groups
    ]
    before = module.encoder.tok.weight.detach().clone()
    # the same gradients for both (recomputing them would let rounding noise in the key bias, whose true
    # gradient is zero, be amplified by Adam's normalisation into different steps)
    generator = torch.Generator().manual_seed(0)
    for _ in range(5):
        for p, q in zip(module.parameters(), reference.parameters(), strict=True):
            p.grad = torch.randn(p.shape, generator=generator)
            q.grad = p.grad.clone()
        fused.step()
        plain.step()
    for a, b in zip(module.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert not torch.equal(module.encoder.tok.weight, before)  # the steps did move the weights


def test_validation_batches_equal_per_example_collation():
    data = StreamDataModule(source=MaskedLM(), val_size=100, val_batch_size=40)
    data.setup("fit")
    batches = list(data.val_dataloader())
    assert [len(b["inputs"]) for b in batches] == [40, 40, 20]
    per_example = default_collate([data.val_set[i] for i in range(40, 80)])
    assert per_example.keys() == batches[1].keys()
    for k in per_example:  # exactly equal, NaN where NaN (a category bound the oracle does not know)
        torch.testing.assert_close(per_example[k], batches[1][k], rtol=0, atol=0, equal_nan=True)


def test_train_loss_reaches_the_logger_every_n_steps_and_the_summary_at_the_last_step(tmp_path):
    summary = fit(["configs/pretrain.yaml"], ["--trainer.max_steps=25", "--data.val_size=100"], root_dir=tmp_path)
    lines = (Path(summary["log_dir"]) / "metrics.csv").read_text().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]
    logged = [int(r["step"]) for r in rows if r["train/loss"]]
    assert logged == [9, 19, 24]  # Lightning writes at steps 10, 20 (0-based 9, 19) and when the run stops
    assert math.isclose(summary["train/loss"], float([r for r in rows if r["train/loss"]][-1]["train/loss"]))
