"""Budgets in compute: a run given FLOPs (or input tokens) instead of steps trains for the steps that spend them.

    python -m minibert fit -c configs/pretrain.yaml --budget.flops 3.6e11

The steps are the budget over the FLOPs of one optimizer step (minibert.flops), rounded to the nearest
step, so a run spends its budget to within half a step: what a step costs is measured, before training,
on `SAMPLES` batches of the run's own objective, batch size, gradient accumulation and ranks. Objectives
that cost more per step (ELECTRA's generator, a larger encoder) get fewer steps of the same budget.

The schedule follows the steps: warm-up keeps the configured fraction of training
(`warmup_steps / max_steps`, rounded), and the decay ends at the last step. The saved config holds the
budget and the steps and warm-up it gave.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from minibert.flops import FlopCounter
from minibert.validation import POSITIVE, check

SAMPLES = 16  # batches the cost of a step is averaged over (masks differ in size from batch to batch)


@dataclass(frozen=True)
class Budget:
    """`flops`: training FLOPs to spend (all ranks together); `tokens`: input tokens to read. At most one;
    neither: the run trains for `trainer.max_steps`."""

    flops: float | None = None
    tokens: float | None = None

    def __post_init__(self) -> None:
        for name in ("flops", "tokens"):
            if getattr(self, name) is not None:
                check("budget", name, getattr(self, name), POSITIVE)
        if self.flops is not None and self.tokens is not None:
            raise ValueError("budget.flops and budget.tokens are not allowed together: give one")

    @property
    def given(self) -> bool:
        return self.flops is not None or self.tokens is not None


@dataclass(frozen=True)
class StepPlan:
    steps: int
    warmup_steps: int
    flops_per_step: float  # expected, over SAMPLES batches
    tokens_per_step: int


def step_cost(module, batch_size: int, micro_batches: int = 1) -> tuple[float, int]:
    """(FLOPs, input tokens) of one optimizer step of `module` (an EncoderModule) on `micro_batches` batches
    of `batch_size` from its objective's training stream: FLOPs averaged over SAMPLES batches. The global
    torch RNG is left as it was (an objective may sample in its forward, as ELECTRA's generator does)."""
    objective, counter = module.objective, FlopCounter(module)
    rng = np.random.default_rng([2018, 0])  # not the run's stream: the plan is the same for every seed
    tokens = 0
    try:
        with torch.random.fork_rng(devices=[]):
            for _ in range(SAMPLES):
                batch = objective.make_batch(rng, batch_size, "train")
                with counter:
                    objective(module.encoder, batch)
                tokens = batch["inputs"].numel()
    finally:
        counter.remove()
    return counter.spent.total / SAMPLES * micro_batches, tokens * micro_batches


def plan_steps(budget: Budget, module, batch_size: int, micro_batches: int, ranks: int,
               max_steps: int, warmup_steps: int) -> StepPlan:  # fmt: skip
    """The steps that spend `budget`, on `ranks` processes each running `micro_batches` batches of `batch_size`
    a step, and the warm-up that keeps the configured fraction `warmup_steps / max_steps`."""
    flops, tokens = step_cost(module, batch_size, micro_batches)
    flops, tokens = flops * ranks, tokens * ranks
    wanted = budget.flops / flops if budget.flops is not None else budget.tokens / tokens
    steps = max(1, round(wanted))
    return StepPlan(steps, round(warmup_steps * steps / max_steps), flops, tokens)
