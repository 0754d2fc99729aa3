"""The fine-tuning page's figures (results/finetune.md): the default grid's three fine-tuning regimes, read
against the write-up's single runs as the grid's config quotes them (`reference:`), and the grid's own claims
on fine-tuning, each judged once, with the grid's others (minibert.report.grid_report.claim_answer).

Example:
    >>> from minibert.tables.record import grid_of  # doctest: +SKIP
    >>> page = Finetune(Data.load("results"), grid_of(Path("results"), Path(".")))  # doctest: +SKIP
    >>> page.rows()[1][:2]  # doctest: +SKIP
    ["everything, the paper's way (`full`)", '26,594']
"""

from __future__ import annotations

from pathlib import Path

from minibert.ablation.grid import Grid
from minibert.report.grid_report import Answer, claim_answer, claims_of
from minibert.tables import arms, stats
from minibert.tables.query import Data, Diff, Stat

REGIMES = {"frozen": "head only, encoder frozen", "full": "everything, the paper's way",
           arms.SCRATCH: "everything, no pre-training"}  # fmt: skip
AGAINST_FULL = ("frozen", arms.SCRATCH)


class Finetune:
    against_full = AGAINST_FULL

    def __init__(self, data: Data, grid: Grid):
        self.data = data
        self.reference = {e.name: e.reference for e in grid.experiments}
        self.grid = grid

    def accuracy(self, regime: str, category: str = "") -> Stat:
        return self.data.stat("val/acc", category, regime=regime, stage="finetune")

    def published(self, regime: str, key: str) -> float:
        """The write-up's single-run figure for the regime (its accuracy, or its trainable parameters)."""
        return self.reference[f"finetune/{regime}"][key]

    def rows(self) -> list[list]:
        """[regime, trainable params, accuracy and each seed's, on grammatical, on ungrammatical, the write-up's]."""
        rows = []
        for r, label in REGIMES.items():
            s = self.accuracy(r)
            params = f"{int(self.data.stat('trainable_params', regime=r).mean):,}"
            theirs = f"{int(self.published(r, 'trainable_params')):,}, {stats.number(self.published(r, 'val/acc'))}"
            kinds = [self.accuracy(r, c).each_seed() for c in ("grammatical", "ungrammatical")]
            rows.append([f"{label} (`{r}`)", params, s.with_seeds(), *kinds, theirs])
        return rows

    def claims(self) -> list[Answer]:
        """The grid's claims on fine-tuning, each as the grid's report judges it (its family held together)."""
        out = Path(self.data.out) if self.data.out else None  # where a recorded comparison would judge one
        return [claim_answer(c, self.data, out) for c in claims_of(self.grid, self.data)
                if all(e.startswith("finetune/") for e in c.experiments())]  # fmt: skip

    def full_against(self, regime: str) -> tuple[Diff, int, int]:
        """(full − the regime, paired by seed; the seeds on which full is higher; the regime's seeds)."""
        full, other = self.accuracy("full"), self.accuracy(regime)
        c = self.data.diff("val/acc", {"regime": "full", "stage": "finetune"}, {"regime": regime, "stage": "finetune"})
        higher = sum(s in full.values and full.values[s] > v for s, v in other.values.items())
        return c, higher, len(other.values)

    @property
    def kept_mlm_head(self) -> bool:
        """Whether the write-up's classifier is pre-training's model plus our head: it kept the MLM head."""
        n = self.parameters()
        return n["beyond_pretrained"] == n["head"]

    def parameters(self) -> dict[str, int]:
        """The classifier, its head, the encoder, the pre-training model and its MLM head, as the runs counted them,
        the write-up's classifier and what it has beyond pre-training's model (`beyond_pretrained`)."""
        classifier = int(self.data.stat("params", regime="full").mean)
        head = int(self.data.stat("trainable_params", regime="frozen").mean)
        control = arms.playing("control", self.data.experiments(stage="pretrain"))
        pretrained = int(self.data.stat("params", experiment=control).mean)
        published = int(self.published("full", "trainable_params"))
        return {"classifier": classifier, "head": head, "encoder": classifier - head, "pretrained": pretrained,
                "mlm_head": pretrained - classifier + head, "published": published,
                "beyond_pretrained": published - pretrained}  # fmt: skip
