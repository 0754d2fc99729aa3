"""The objectives grid's pages (results/objectives.md; BERT's Table 5 in miniature, pretraining_tasks.md), read
from its table: each objective's own pre-training figures, frozen and full fine-tuning on grammaticality, the paired
comparisons the pages judge, and BERT-base's own Table 5 figures beside them.

Example:
    >>> Objectives.published_gap("MaskedLM", "NextTokenLM")  # BERT-base: No NSP above LTR & No NSP, by this range
    (0.5, 10.1)
"""

from __future__ import annotations

from minibert.tables.query import Data, Diff, Stat
from minibert.tables.stats import number

# BERT-base (Devlin et al., 2018, arXiv:1810.04805), Table 5, dev set: MNLI-m / QNLI / MRPC / SST-2 / SQuAD F1
TABLE_5 = {"Combined": [84.4, 88.4, 86.7, 92.7, 88.5], "MaskedLM": [83.9, 84.9, 86.5, 92.6, 87.9],
           "NextTokenLM": [82.1, 84.3, 77.5, 92.1, 77.8]}  # fmt: skip
LABELS = {"Combined": "MLM + NSP (BERT)", "MaskedLM": "MLM alone (No NSP)",
          "NextTokenLM": "next-token LM (LTR & No NSP)"}  # fmt: skip
SCRATCH = {"regime": "no_pretrain"}
NAMES = {"mlm": "MaskedLM", "span": "SpanMaskedLM", "nsp": "NextSentence", "bert (MLM + NSP)": "Combined",
         "rtd (ELECTRA)": "ReplacedTokenDetection", "next_token (GPT)": "NextTokenLM"}  # fmt: skip
OWN = {  # each objective's own pre-training figures: (label, metric, category)
    "MaskedLM": [("MLM acc", "val/acc", "")],
    "SpanMaskedLM": [("MLM acc", "val/acc", "")],
    "NextSentence": [("NSP acc", "val/acc", "")],
    "Combined": [("NSP acc", "val/nsp/acc", ""), ("MLM acc (pair corpus)", "val/mlm/acc", "")],
    "ReplacedTokenDetection": [("discriminator acc", "val/acc", ""), ("on replaced tokens", "val/acc", "replaced")],
    "NextTokenLM": [
        ("next-token acc", "val/acc", ""),
        ("closers", "val/acc", "closer"),
        ("openers", "val/acc", "opener"),
    ],
}
CHANCE = 0.5  # grammaticality: two balanced classes


def tuned(objective: str, regime: str = "full") -> dict:
    return {"objective": objective, "stage": "finetune", "regime": regime}


class Objectives:
    def __init__(self, data: Data):
        self.data = data

    def pre(self, objective: str, metric: str = "val/acc", category: str = "") -> Stat:
        """The objective's own pre-training figure."""
        return self.data.stat(metric, category, objective=objective, stage="pretrain")

    def ft(self, objective: str, regime: str) -> Stat:
        """Its fine-tuned grammaticality accuracy in `regime` (frozen, full)."""
        return self.data.stat("val/acc", **tuned(objective, regime))

    def objective_rows(self) -> list[list[str]]:
        """[objective, its own pre-training figures, frozen, full] per objective, then no pre-training."""
        rows = []
        for label, o in NAMES.items():
            figures = [(name, self.pre(o, metric, category)) for name, metric, category in OWN[o]]
            own = [
                f"{name} {s.with_seeds() if i == 0 else s}" for i, (name, s) in enumerate(figures)
            ]  # each seed's: first only
            rows.append([label, "; ".join(own), self.ft(o, "frozen").with_seeds(), self.ft(o, "full").with_seeds()])
        return [*rows, ["no pre-training", "", "", self.data.stat("val/acc", **SCRATCH).with_seeds()]]

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
            {o: self.data.stat("val/acc", **tuned(o, r)).with_seeds() for o in LABELS} for r in ("full", "frozen")
        )
        rows = [[label, full[o], frozen[o], " / ".join(f"{x:.1f}" for x in TABLE_5[o])] for o, label in LABELS.items()]
        return [*rows, ["no pre-training", self.data.stat("val/acc", **SCRATCH).with_seeds(), "", ""]]

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

    @staticmethod
    def published_gap(a: str, b: str) -> tuple[float, float]:
        """The smallest and largest amount by which BERT-base's A exceeds its B over the five tasks."""
        gaps = [round(x - y, 1) for x, y in zip(TABLE_5[a], TABLE_5[b], strict=True)]
        return min(gaps), max(gaps)
