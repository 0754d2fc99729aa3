"""The objectives grid's pages (results/objectives.md; BERT's Table 5 in miniature, pretraining_tasks.md), read
from its table: each objective's own pre-training figures, frozen and full fine-tuning on grammaticality, the paired
comparisons the pages judge, and BERT-base's own Table 5 figures beside them. Which objectives there are, how each
is named and which figures are its own come from the table and the arm registry (minibert.tables.arms).

Example:
    >>> page = Objectives(Data.load("results/objectives"))
    >>> # BERT-base: MLM alone (No NSP) above LTR & No NSP on every task, by this range
    >>> page.published_gap("MaskedLM", "NextTokenLM")
    (0.5, 10.1)
"""

from __future__ import annotations

from pathlib import Path

from minibert.checkout import CHECKOUT
from minibert.tables import arms
from minibert.tables.arms import Objective, objective, registry
from minibert.tables.query import Data, Diff, Stat
from minibert.tables.stats import number

SCRATCH = {"regime": arms.SCRATCH}
CHANCE = 0.5  # grammaticality: two balanced classes


def tuned(objective: str, regime: str = "full") -> dict:
    return {"objective": objective, "stage": "finetune", "regime": regime}


class Objectives:
    def __init__(self, data: Data, root: Path = CHECKOUT):
        self.data = data
        self.root = Path(root)  # the checkout whose arm registry names the objectives

    def arm(self, key: str) -> Objective:
        return objective(key, self.root)

    @property
    def objectives(self) -> list[str]:
        """The objective classes the grid pre-trains, the registry's first in its order, then the others."""
        pre = self.data.frame[self.data.frame["stage"] == "pretrain"]
        found = list(dict.fromkeys(pre["objective"].dropna()))
        order = list(registry(self.root).objectives)
        return sorted(found, key=lambda o: (order.index(o) if o in order else len(order), found.index(o)))

    @property
    def published(self) -> list[str]:
        """The objectives BERT's Table 5 ablates, as it lists them (its best first)."""
        listed = [o for o in self.objectives if self.arm(o).published]
        return sorted(listed, key=lambda o: -self.arm(o).published.figures[0])

    def pre(self, objective: str, metric: str = "val/acc", category: str = "") -> Stat:
        """The objective's own pre-training figure."""
        return self.data.stat(metric, category, objective=objective, stage="pretrain")

    def ft(self, objective: str, regime: str) -> Stat:
        """Its fine-tuned grammaticality accuracy in `regime` (frozen, full)."""
        return self.data.stat("val/acc", **tuned(objective, regime))

    def objective_rows(self) -> list[list[str]]:
        """[objective, its own pre-training figures, frozen, full] per objective, then no pre-training."""
        rows = []
        for o in self.objectives:
            label = self.arm(o).label
            figures = [(name, self.pre(o, metric, category)) for name, metric, category in self.arm(o).own]
            own = [
                f"{name} {s.with_seeds() if i == 0 else s}" for i, (name, s) in enumerate(figures)
            ]  # each seed's: first only
            rows.append([label, "; ".join(own), self.ft(o, "frozen").with_seeds(), self.ft(o, "full").with_seeds()])
        return [*rows, [arms.label(arms.SCRATCH), "", "", self.data.stat("val/acc", **SCRATCH).with_seeds()]]

    def chance(self, objective: str, regime: str) -> str:
        """Whether its fine-tuned accuracy's interval holds chance."""
        iv = self.ft(objective, regime).interval
        return f"its interval {'holds' if iv.lo <= CHANCE <= iv.hi else 'excludes'} chance ({number(CHANCE, 100, 0)}%)"

    def vs(self, a: str, b: str | None, regime: str, la: str, lb: str) -> str:
        """A's fine-tuning minus B's in one regime (B None: no pre-training), said."""
        return self.data.diff("val/acc", tuned(a, regime), tuned(b, regime) if b else SCRATCH).say(la, lb)

    def cloze(self, a: str, b: str) -> Diff:
        """A's pre-training accuracy minus B's, on the same token-level questions, paired by seed."""
        return self.data.diff("val/acc", {"objective": a, "stage": "pretrain"}, {"objective": b, "stage": "pretrain"})

    def regimes(self, objective: str) -> Diff:
        """Its full fine-tuning minus its frozen, paired by seed."""
        return self.data.diff("val/acc", tuned(objective), tuned(objective, "frozen"))

    def rows(self) -> list[list[str]]:
        """[pre-training, full fine-tuning, frozen [CLS], BERT-base's five figures] per objective, then no
        pre-training."""
        full, frozen = (
            {o: self.data.stat("val/acc", **tuned(o, r)).with_seeds() for o in self.published}
            for r in ("full", "frozen")
        )
        shown = {o: self.arm(o).published for o in self.published}
        rows = [[p.label, full[o], frozen[o], " / ".join(f"{x:.1f}" for x in p.figures)] for o, p in shown.items()]
        return [*rows, [arms.label(arms.SCRATCH), self.data.stat("val/acc", **SCRATCH).with_seeds(), "", ""]]

    def diff(self, a: str, b: str | None) -> Diff:
        """A's full fine-tuning minus B's (None: no pre-training), paired by seed."""
        return self.data.diff("val/acc", tuned(a), tuned(b) if b else SCRATCH)

    def holds(self, a: str, b: str) -> str:
        """Whether 'A above B' holds here, after the table's family: holds, does not hold, or undecided."""
        return {"A better": "holds", "B better": "does not hold"}.get(self.diff(a, b).verdict(), "undecided")

    def per_seed(self, a: str, b: str) -> str:
        """A's minus B's full fine-tuning on each seed, in seed order, in points."""
        c = self.diff(a, b)
        return " / ".join(number(c.a.values[s] - c.b.values[s]) for s in sorted(c.a.values))

    def published_gap(self, a: str, b: str) -> tuple[float, float]:
        """The smallest and largest amount by which BERT-base's A exceeds its B over the five tasks."""
        gaps = [
            round(x - y, 1) for x, y in zip(self.arm(a).published.figures, self.arm(b).published.figures, strict=True)
        ]
        return min(gaps), max(gaps)
