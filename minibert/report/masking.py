"""BERT's masking-strategy page's figures (results/masking/masking.md), read from the masking grid's table.

The grid (configs/ablations/masking.yaml) pre-trains MLM under each of BERT's Table 8 strategies (axis `split`:
MASK-SAME-RND, the shares of the picked positions shown as [MASK], kept, and replaced by a random token) in each
language, then fine-tunes and probes every encoder. `Masking` gives each strategy's row, its paired difference
from 80-10-10, which strategies are better or worse, and BERT's own figures beside them.

Example:
    >>> page = Masking(Data.load("results/masking"))  # doctest: +SKIP
    >>> page.sides("dyck", "full")  # doctest: +SKIP
    'better than 80-10-10: none; worse: none; not told apart: 100-0-0, 80-0-20, 80-20-0, 0-20-80, 0-0-100'
"""

from __future__ import annotations

from minibert.tables import stats
from minibert.tables.query import Data, Diff

LANGUAGES = {"pairs": "bracket pairs (seed language)", "dyck": "Dyck (4 types, 32 tokens)"}
# BERT (Devlin et al., 2018, arXiv:1810.04805), Table 8, dev set: MNLI fine-tune acc, NER fine-tune F1, NER
# feature-based F1
BERT = {"80-10-10": [84.2, 95.4, 94.9], "100-0-0": [84.3, 94.9, 94.0], "80-0-20": [84.1, 95.2, 94.6],
        "80-20-0": [84.4, 95.2, 94.7], "0-20-80": [83.7, 94.8, 94.6], "0-0-100": [83.6, 94.9, 94.6]}  # fmt: skip
BASE = "80-10-10"
STAGES = {"pretrain": {"stage": "pretrain"}, "full": {"regime": "full"}, "probe": {"regime": "probe"}}
KINDS = ("kind_mask", "kind_random", "kind_kept")  # the cloze on each kind of picked position
# the default grid's `break/pick_50` cells (trained with 50% picked) and the default training, by what they grade
PICK_50 = {"`pick_50` on its own 50%-picked test": {"masking.p_pick": 0.5, "eval_masking.p_pick": 0.5},
           "`pick_50` on the default questions": {"masking.p_pick": 0.5, "eval_masking.p_pick": 0.15},
           "the default 15% training, default questions": {"stage": "pretrain", "masking.p_pick": 0.15, "causal": False,
                                                           "p_mask": 0.8}}  # fmt: skip


class Masking:
    languages, bert, base = LANGUAGES, BERT, BASE

    def __init__(self, data: Data):
        self.data = data

    def where(self, job: str, language: str, split: str) -> dict:
        return dict(STAGES[job], language=language, split=split)

    def against_base(self, language: str, split: str, job: str) -> Diff:
        """The strategy's accuracy minus 80-10-10's at one stage, paired by seed."""
        return self.data.diff("val/acc", self.where(job, language, split), self.where(job, language, BASE))

    def rates(self, language: str, split: str) -> list[str]:
        """[MASK, SAME, RND] in percent, as the grid's runs recorded them."""
        r = self.data.rows(language=language, split=split, stage="pretrain").iloc[0]
        return [f"{stats.number(x, 100, 0)}%" for x in (r.p_mask, abs(1 - r.p_mask - r.p_random), r.p_random)]

    def strategy_rows(self, language: str) -> list[list]:
        """[MASK, SAME, RND, MLM accuracy, gap to the ceiling, fine-tuned accuracy, probe accuracy]."""
        rows = []
        for split in BERT:
            stat = [self.data.stat("val/acc", **self.where("pretrain", language, split)),
                    self.data.stat("val/gap/acc", **self.where("pretrain", language, split)),
                    self.data.stat("val/acc", **self.where("full", language, split)),
                    self.data.stat("val/acc", **self.where("probe", language, split))]  # fmt: skip
            rows.append([*self.rates(language, split), *(s.with_seeds() for s in stat)])
        return rows

    def ceilings(self, language: str) -> str:
        """The exact ceiling of the default questions, once if every strategy shares it."""
        found = [str(self.data.stat("val/ceiling/acc", **self.where("pretrain", language, s))) for s in BERT]
        unique = list(dict.fromkeys(found))
        return (" (the same for every strategy)" if len(unique) == 1 else "") + ": " + ", ".join(unique)

    def against_rows(self, language: str) -> list[list]:
        """[strategy, MLM acc − 80-10-10's, fine-tune −, probe −, BERT's differences, cloze on each kind]."""
        rows = []
        for split in BERT:
            kinds = [self.data.stat("val/acc", k, **self.where("pretrain", language, split)) for k in KINDS]
            if split == BASE:
                rows.append([split, "(the reference)", "", "", " / ".join(map(str, BERT[BASE])) + " (its own)", *kinds])
                continue
            theirs = " / ".join(stats.number(x - BERT[BASE][i], 1) for i, x in enumerate(BERT[split]))
            rows.append([split, *(self.against_base(language, split, job) for job in STAGES), theirs, *kinds])
        return rows

    @staticmethod
    def published(split: str, column: int) -> float:
        """BERT's Table 8 figure of `split` in `column` (0 MNLI fine-tune, 1 NER fine-tune, 2 NER feature-based)."""
        return BERT[split][column]

    @staticmethod
    def published_spread(column: int) -> float:
        """How far apart BERT's six strategies lie in `column`: the largest figure minus the smallest."""
        return max(v[column] for v in BERT.values()) - min(v[column] for v in BERT.values())

    def bert_rows(self) -> list[list]:
        return [[split, *figures] for split, figures in BERT.items()]

    def sides(self, language: str, job: str) -> str:
        """Which strategies are better, worse, or not told apart from 80-10-10 at one stage."""
        found = {"better": [], "worse": [], "undecided": []}
        for split in BERT:
            if split != BASE:
                found[self.against_base(language, split, job).verdict("better", "worse").split()[0]].append(split)
        named = {k: ", ".join(v) or "none" for k, v in found.items()}
        return f"better than {BASE}: {named['better']}; worse: {named['worse']}; not told apart: {named['undecided']}"

    @staticmethod
    def pick_50_rows(default: Data) -> list[list]:
        """[cell, MLM accuracy, the exact ceiling of its questions, gap] of the default grid's 50% cells."""
        return [[label, default.stat("val/acc", **where).with_seeds(), default.stat("val/ceiling/acc", **where),
                 default.stat("val/gap/acc", **where).with_seeds()] for label, where in PICK_50.items()]  # fmt: skip

    @staticmethod
    def pick_50_against_15(default: Data) -> Diff:
        """Training at 50% against the default 15%, both graded on the default questions."""
        a, b = PICK_50["`pick_50` on the default questions"], PICK_50["the default 15% training, default questions"]
        return default.diff("val/acc", a, b)
