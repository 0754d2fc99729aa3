"""Accuracy split by category, as a torchmetrics `Metric` with summed states (correct under DDP); and split by
the validation document each question comes from (`DocumentTally`), for intervals that resample documents.

Categories are boolean masks computed next to the data that defines them (e.g. `masking.categories`);
the metric only counts. Given each prediction's ceiling credit (the exact oracle's score on the same
question, minibert.oracle), it also reports the oracle's accuracy per category, under one of two names:

- `ceiling/acc_<c>` and `gap/acc_<c>` (ceiling minus accuracy) where it is a bound: overall, and on a
  category the model's input decides (`input_categories`: no predictor can do better there than the
  Bayes predictor, which is best on every question). Where the objective supplies `bounds` for another
  category (the credit of the predictor that is best on that category alone, from the oracle's joint
  posterior over the token and the category), that is the category's ceiling, and it gets a gap as well.
- `bayes/acc_<c>` on every category the input does not decide (beside its own ceiling, where it has one):
  the Bayes predictor's own accuracy there, a reference. When
  the category depends on what the model cannot see (the true token's class, a hidden partner), a
  predictor can beat it by trading accuracy across categories ("copy the shown token" scores 100% on kept
  tokens), so it is never called a ceiling.

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
from torchmetrics.utilities import dim_zero_cat


class CategoryAccuracy(Metric):
    """Overall accuracy plus accuracy and target count per named category.

    `compute()` returns `acc`, `acc_<name>` (NaN for an empty category), `n` and `n_<name>`; when every
    update came with `credit`, also the oracle's figures named as the module docstring says.

    >>> metric = CategoryAccuracy(["shown", "hidden"], input_categories=["shown"])
    >>> metric.update(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3]),
    ...               torch.tensor([[True, False], [False, True], [False, True]]),
    ...               credit=torch.tensor([1.0, 0.5, 1.0]))
    >>> {k: round(v.item(), 3) for k, v in metric.compute().items() if "/" in k}
    {'ceiling/acc': 0.833, 'ceiling/acc_shown': 1.0, 'gap/acc': 0.167, 'gap/acc_shown': 0.0, 'bayes/acc_hidden': 0.75}
    """

    higher_is_better = True
    is_differentiable = False
    full_state_update = False

    def __init__(
        self, categories: Sequence[str], input_categories: Sequence[str] = (), references: Sequence[str] = (), **kwargs
    ) -> None:
        super().__init__(**kwargs)
        categories = tuple(categories)
        if len(set(categories)) != len(categories) or not all(isinstance(c, str) and c for c in categories):
            raise ValueError(f"categories={categories!r} is not allowed: use distinct, non-empty names")
        if unknown := [c for c in input_categories if c not in categories]:
            raise ValueError(f"input_categories={tuple(input_categories)!r} names {unknown}, not among {categories}")
        self.categories = categories
        decided = torch.tensor([True] + [c in input_categories for c in categories])  # (1 + C,): overall first
        self.register_buffer("decided", decided, persistent=False)
        self.add_state("correct", torch.zeros(len(categories) + 1, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("total", torch.zeros(len(categories) + 1, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("ceiling", torch.zeros(len(categories) + 1, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("credited", torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")  # predictions with credit
        # per category, the summed credit of its own best predictor (Scored.bounds); NaN where not known
        self.add_state("bound", torch.zeros(len(categories), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("bounded", torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")  # predictions with bounds
        # per reference predictor (Scored.references) and category, its summed credit
        self.references = tuple(references)
        self.add_state("reference", torch.zeros(len(self.references), len(categories) + 1, dtype=torch.float64),
                       dist_reduce_fx="sum")  # fmt: skip
        self.add_state("referenced", torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")

    def update(
        self,
        preds: torch.Tensor,
        target: torch.Tensor,
        categories: torch.Tensor,
        credit: torch.Tensor | None = None,
        bounds: torch.Tensor | None = None,
        references: torch.Tensor | None = None,
    ) -> None:
        """preds, target: (N,) class ids of the graded positions; categories: (N, C) bool; credit: (N,) float
        in [0, 1], the oracle's score on each, if known; bounds: (N, C), see `Scored.bounds`; references:
        (N, R), each reference predictor's credit (`Scored.references`)."""
        if categories.shape != (*target.shape, len(self.categories)):
            raise ValueError(
                f"categories has shape {tuple(categories.shape)}, expected {(*target.shape, len(self.categories))}"
            )
        member = torch.cat([categories.new_ones((len(categories), 1)), categories], dim=-1).long()  # (N, 1 + C)
        hit = (preds == target).long().unsqueeze(-1)  # (N, 1)
        self.correct += (member * hit).sum(0)
        self.total += member.sum(0)
        if credit is not None:
            self.ceiling += (member.double() * credit.double().unsqueeze(-1)).sum(0)
            self.credited += len(target)
        if bounds is not None:
            # a category whose bound is not known is NaN in every row, so its sum stays NaN: unknown stays unknown
            self.bound += (categories.double() * bounds.double()).sum(0)
            self.bounded += len(target)
        if references is not None and self.references:
            self.reference += references.double().T @ member.double()  # (R, 1 + C)
            self.referenced += len(target)

    def compute(self) -> dict[str, torch.Tensor]:
        acc = self.correct.double() / self.total.double()  # 0/0 -> NaN for an empty category
        names = ("",) + tuple(f"_{c}" for c in self.categories)
        out = {f"acc{n}": a.float() for n, a in zip(names, acc)}
        out.update({f"n{n}": t.float() for n, t in zip(names, self.total)})
        if self.references and self.referenced == self.total[0] > 0:
            for name, credit in zip(self.references, self.reference / self.total.double()):
                out.update({f"reference/{name}/acc{n}": c.float() for n, c in zip(names, credit)})
        if not (self.credited > 0 and self.credited == self.total[0]):
            return out
        oracle = self.ceiling / self.total.double()  # the Bayes predictor's accuracy on each category
        ceiling, known = oracle, self.decided.clone()
        if self.bounded == self.total[0]:  # where a category's own best predictor is known, it is the ceiling
            own = torch.cat([oracle[:1], self.bound / self.total[1:].double()])  # 0/0 = NaN for an empty category
            ceiling = torch.where(self.decided, oracle, own)
            known |= torch.cat([known[:1], ~self.bound.isnan()])  # the bound's sum is NaN where it is not known
        bound = [(n, c, a) for n, c, a, k in zip(names, ceiling, acc, known) if k]
        out.update({f"ceiling/acc{n}": c.float() for n, c, _ in bound})
        out.update({f"gap/acc{n}": (c - a).float() for n, c, a in bound})
        out.update({f"bayes/acc{n}": o.float() for n, o, d in zip(names, oracle, self.decided) if not d})
        return out


class MeanValues(Metric):
    """The mean of each named per-example figure (`Scored.values`) over every update, NaNs left out; summed
    states, so correct under DDP. Every update gives every name.

    >>> metric = MeanValues(["uuas", "spearman"])
    >>> metric.update({"uuas": torch.tensor([1.0, 0.5]), "spearman": torch.tensor([0.2, float("nan")])})
    >>> metric.update({"uuas": torch.tensor([0.0]), "spearman": torch.tensor([0.4])})
    >>> {k: round(v.item(), 3) for k, v in metric.compute().items()}
    {'uuas': 0.5, 'spearman': 0.3}
    """

    higher_is_better = True
    is_differentiable = False
    full_state_update = False

    def __init__(self, names: Sequence[str] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.names = tuple(names)
        self.add_state("sums", torch.zeros(len(self.names), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("counts", torch.zeros(len(self.names), dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, values: dict[str, torch.Tensor]) -> None:
        if set(values) != set(self.names):
            raise ValueError(f"values name {sorted(values)}, expected {sorted(self.names)}")
        stacked = torch.stack([values[n].double().reshape(-1) for n in self.names])  # (K, N)
        known = ~stacked.isnan()
        self.sums += torch.where(known, stacked, 0.0).sum(-1)
        self.counts += known.sum(-1)

    def compute(self) -> dict[str, torch.Tensor]:
        return {n: (s / c).float() for n, s, c in zip(self.names, self.sums, self.counts)}  # 0/0: NaN


class DocumentTally(Metric):
    """Accuracy, question count and each reference's accuracy per validation document (`Scored.documents`):
    what an interval needs to resample whole documents (minibert.stats.bootstrap.clustered), since questions
    of one document share its difficulty. Documents are named `d<index>` (the index in the language's
    validation split); one with no question is left out. States are concatenated, so correct under DDP.

    >>> metric = DocumentTally(["trigram"])
    >>> metric.update(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 0]), torch.tensor([4, 0, 4]),
    ...               torch.tensor([[1.0], [0.0], [0.5]]))
    >>> {k: round(v.item(), 3) for k, v in metric.compute().items() if k.endswith("d4")}
    {'acc_d4': 0.5, 'n_d4': 2.0, 'reference/trigram/acc_d4': 0.75}
    """

    higher_is_better = True
    is_differentiable = False
    full_state_update = False

    def __init__(self, references: Sequence[str] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.references = tuple(references)
        self.add_state("document", [], dist_reduce_fx="cat")  # (N,) int64 per update
        self.add_state("hit", [], dist_reduce_fx="cat")  # (N,) float64: right (1) or wrong (0)
        self.add_state("credit", [], dist_reduce_fx="cat")  # (N, R) float64: each reference's credit

    def update(
        self, preds: torch.Tensor, target: torch.Tensor, documents: torch.Tensor, references: torch.Tensor | None
    ) -> None:
        """preds, target, documents: (N,); references: (N, R) for the metric's R references (None without)."""
        if documents.shape != target.shape:
            raise ValueError(f"documents has shape {tuple(documents.shape)}, expected {tuple(target.shape)}")
        self.document.append(documents.long())
        self.hit.append((preds == target).double())
        credit = references.double() if references is not None and self.references else None
        self.credit.append(credit if credit is not None else target.new_zeros((len(target), 0), dtype=torch.double))

    def compute(self) -> dict[str, torch.Tensor]:
        if not self.document:
            return {}
        document, hit, credit = (dim_zero_cat(x) for x in (self.document, self.hit, self.credit))
        n = torch.bincount(document).double()  # (D,) questions per document index
        right = torch.bincount(document, weights=hit)
        credited = credit.shape[-1] == len(self.references)
        refs = [torch.bincount(document, weights=credit[:, r], minlength=len(n)) for r in range(credit.shape[-1])]
        out = {}
        for d in torch.nonzero(n).flatten().tolist():
            out[f"acc_d{d}"] = (right[d] / n[d]).float()
            out[f"n_d{d}"] = n[d].float()
            if credited:
                out.update(
                    {f"reference/{name}/acc_d{d}": (ref[d] / n[d]).float() for name, ref in zip(self.references, refs)}
                )
        return out
