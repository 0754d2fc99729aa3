"""Accuracy split by category, as a torchmetrics `Metric` with summed states (correct under DDP).

Categories are boolean masks computed next to the data that defines them (e.g. `masking.categories`);
the metric only counts. Given each prediction's ceiling credit (the exact oracle's score on the same
question, minibert.oracle), it also sums the ceiling and reports, per category, the ceiling and the gap.

Example:
    >>> import torch
    >>> metric = CategoryAccuracy(["opener", "closer"])
    >>> metric.update(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 0]),
    ...               torch.tensor([[True, False], [False, True], [False, True]]))
    >>> {k: round(v.item(), 3) for k, v in metric.compute().items()}
    {'acc': 0.667, 'acc_opener': 1.0, 'acc_closer': 0.5, 'n': 3.0, 'n_opener': 1.0, 'n_closer': 2.0}
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torchmetrics import Metric


class CategoryAccuracy(Metric):
    """Overall accuracy plus accuracy and target count per named category.

    `compute()` returns `acc`, `acc_<name>` (NaN for an empty category), `n` and `n_<name>`; when every
    update came with `credit`, also `ceiling/acc...` (the oracle's accuracy on the same predictions) and
    `gap/acc...` (ceiling minus accuracy).

    >>> metric = CategoryAccuracy(["hard"])
    >>> metric.update(torch.tensor([1, 2]), torch.tensor([1, 0]), torch.tensor([[False], [True]]),
    ...               credit=torch.tensor([1.0, 0.5]))
    >>> {k: round(v.item(), 3) for k, v in metric.compute().items() if "/" in k}
    {'ceiling/acc': 0.75, 'ceiling/acc_hard': 0.5, 'gap/acc': 0.25, 'gap/acc_hard': 0.5}
    """

    higher_is_better = True
    is_differentiable = False
    full_state_update = False

    def __init__(self, categories: Sequence[str], **kwargs) -> None:
        super().__init__(**kwargs)
        categories = tuple(categories)
        if len(set(categories)) != len(categories) or not all(isinstance(c, str) and c for c in categories):
            raise ValueError(f"categories={categories!r} is not allowed: use distinct, non-empty names")
        self.categories = categories
        self.add_state("correct", torch.zeros(len(categories) + 1, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("total", torch.zeros(len(categories) + 1, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("ceiling", torch.zeros(len(categories) + 1, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("credited", torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")  # predictions with credit

    def update(
        self, preds: torch.Tensor, target: torch.Tensor, categories: torch.Tensor, credit: torch.Tensor | None = None
    ) -> None:
        """preds, target: (N,) class ids of the graded positions; categories: (N, C) bool; credit: (N,) float
        in [0, 1], the oracle's score on each, if known."""
        if categories.shape != (*target.shape, len(self.categories)):
            raise ValueError(
                f"categories has shape {tuple(categories.shape)}, expected {(*target.shape, len(self.categories))}"
            )
        member = torch.cat([torch.ones_like(categories[..., :1]), categories], dim=-1).long()  # (N, 1 + C)
        hit = (preds == target).long().unsqueeze(-1)  # (N, 1)
        self.correct += (member * hit).sum(0)
        self.total += member.sum(0)
        if credit is not None:
            self.ceiling += (member.double() * credit.double().unsqueeze(-1)).sum(0)
            self.credited += len(target)

    def compute(self) -> dict[str, torch.Tensor]:
        acc = self.correct.double() / self.total.double()  # 0/0 -> NaN for an empty category
        names = ("",) + tuple(f"_{c}" for c in self.categories)
        out = {f"acc{n}": a.float() for n, a in zip(names, acc)}
        out.update({f"n{n}": t.float() for n, t in zip(names, self.total)})
        if self.credited > 0 and self.credited == self.total[0]:
            ceiling = self.ceiling / self.total.double()
            out.update({f"ceiling/acc{n}": c.float() for n, c in zip(names, ceiling)})
            out.update({f"gap/acc{n}": (c - a).float() for n, c, a in zip(names, ceiling, acc)})
        return out
