"""The learning-rate schedule: linear warm-up to the peak over `warmup_steps`, then linear decay that reaches
zero at the run's last step, whatever its budget (trainer.max_steps)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from minibert.objectives import MaskedLM
from minibert.training.module import EncoderModule


def lrs(max_steps: int, warmup: int, peak: float = 0.01) -> list[float]:
    module = EncoderModule(objective=MaskedLM(), lr=peak, warmup_steps=warmup)
    module._trainer = SimpleNamespace(max_steps=max_steps)
    config = module.configure_optimizers()
    optimizer, scheduler = config["optimizer"], config["lr_scheduler"]["scheduler"]
    assert config["lr_scheduler"]["interval"] == "step"  # never once an epoch: the stream is one endless epoch
    out = []
    for _ in range(max_steps):
        out.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return out


@pytest.mark.parametrize("max_steps", [250, 1000, 16000])
def test_warm_up_then_decay_to_zero_at_the_budget(max_steps):
    peak, warmup = 0.01, 30
    lr = lrs(max_steps, warmup, peak)
    assert lr[0] == pytest.approx(peak / warmup)
    assert max(lr) == pytest.approx(peak) and lr.index(max(lr)) == warmup - 1
    assert all(a <= b for a, b in zip(lr[:warmup], lr[1:warmup]))  # rises through the warm-up
    assert all(a >= b for a, b in zip(lr[warmup:], lr[warmup + 1 :]))  # then only falls
    middle = warmup + (max_steps - warmup) // 2
    assert lr[middle] == pytest.approx(peak / 2, rel=0.01)  # linear: half the peak half-way through the decay
    assert lr[-1] == pytest.approx(peak / (max_steps - warmup))  # the last step's lr; zero after it
