"""Training compute, counted as it is spent: the FLOPs of every matmul a forward pass runs, and of the
backward pass that follows it.

Conventions (those of Kaplan et al. 2020 and the cramming papers, stated here so figures can be compared):
- A multiply-add is 2 FLOPs; only matmuls count. Bias adds, norms, softmax, GELU, the loss and the
  optimizer are left out (at width 32 they are a few percent of the time, and no paper counts them).
- A matmul's backward costs one forward's FLOPs per operand that needs a gradient: a layer that trains
  on an input that carries a gradient costs 2x its forward (grad of the input and of the weight), the
  first trained layer above a frozen one 1x, a frozen layer on a frozen input nothing. This is what
  autograd runs, and what `torch.utils.flop_counter` counts, so "backward is 2x forward" holds exactly
  whenever everything trains.
- Attention costs its scores (Q K^T) and its weighted sum (P V), 2 T^2 D FLOPs each per head, over the
  full T x T whether the mask is causal or not (a causal kernel may skip half; the count does not).
- Work done without gradients inside a training step (ELECTRA's generator sampling its proposals) counts
  its forward only.

What is counted: every `nn.Linear` (projections, MLP, every head, ELECTRA's generator) and every
`minibert.model.SelfAttention`. An objective that multiplies matrices some other way adds its own
count (`count_matmul`) from its forward.

`torch.utils.flop_counter.FlopCounterMode` is the independent check (tests/core/test_flops.py). On CPU it
misses attention: PyTorch runs `F.scaled_dot_product_attention` as
`aten._scaled_dot_product_flash_attention_for_cpu` (and its backward), which the counter has no formula
for, so it reports 4 B T^2 C fewer FLOPs per layer forward and 8 B T^2 C fewer backward.

Example:
    >>> import torch
    >>> from minibert.model import Encoder, EncoderConfig
    >>> encoder = Encoder(EncoderConfig(vocab_size=18, max_len=17))
    >>> counter = FlopCounter(encoder)
    >>> with counter:  # forward: 2 layers x (2 x 68 tokens x 12 x 32^2 + 4 x 4 x 17^2 x 32); everything trains
    ...     _ = encoder(torch.zeros(4, 17, dtype=torch.long))
    >>> counter.spent
    Spent(forward=3638272, backward=7276544)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from minibert.model import SelfAttention


@dataclass(eq=False)
class Spent:
    """FLOPs run so far: `forward` and `backward` (see the module's conventions)."""

    forward: int = 0
    backward: int = 0

    @property
    def total(self) -> int:
        return self.forward + self.backward


_active: list[Spent] = []  # the counts that matmuls add to now (innermost last); empty: not counting


def count_matmul(flops_forward: int, operands_with_grad: int) -> None:
    """Add a matmul of `flops_forward` FLOPs, of which `operands_with_grad` operands (0-2) need a gradient,
    to the count now open (none open: nothing)."""
    if _active and flops_forward:
        spent = _active[-1]
        spent.forward += flops_forward
        if torch.is_grad_enabled():
            spent.backward += flops_forward * operands_with_grad


def _linear(module: nn.Linear, inputs: tuple, output: torch.Tensor) -> None:
    if not _active:  # not counting (validation, inference): nothing to work out
        return
    (x,) = inputs[:1]
    rows = x.numel() // module.in_features
    count_matmul(
        2 * rows * module.in_features * module.out_features, int(x.requires_grad) + int(module.weight.requires_grad)
    )


def _attention(module: SelfAttention, inputs: tuple, output: torch.Tensor) -> None:
    if not _active:
        return
    (x,) = inputs[:1]
    B, T, C = x.shape
    # Q K^T and P V, each over (B, heads, T, T, C / heads); q, k, v carry a gradient if qkv's output does
    needs_grad = x.requires_grad or any(p.requires_grad for p in module.qkv.parameters())
    count_matmul(2 * 2 * B * T * T * C, 2 * int(needs_grad))


class FlopCounter:
    """Counts the FLOPs run while the counter is open (`with counter:`) into `counter.spent`.

    Hooks go on every `nn.Linear` and `SelfAttention` under `module` that has none yet; outside `with` they
    return at once. Counters may nest, and share hooks: matmuls add to the innermost one open."""

    def __init__(self, module: nn.Module) -> None:
        self.spent = Spent()
        self._hooked: list[tuple[nn.Module, torch.utils.hooks.RemovableHandle]] = []
        for sub in module.modules():
            hook = _linear if isinstance(sub, nn.Linear) else _attention if isinstance(sub, SelfAttention) else None
            if hook is not None and not getattr(sub, "_counts_flops", False):
                sub._counts_flops = True  # one hook per module, however many counters cover it
                self._hooked.append((sub, sub.register_forward_hook(hook)))

    def __enter__(self) -> FlopCounter:
        _active.append(self.spent)
        return self

    def __exit__(self, *exc) -> None:
        _active.remove(self.spent)  # by identity (eq=False): two equal counts are still two counters

    def remove(self) -> None:
        """Take off the hooks this counter put on."""
        for sub, handle in self._hooked:
            handle.remove()
            del sub._counts_flops
        self._hooked.clear()
