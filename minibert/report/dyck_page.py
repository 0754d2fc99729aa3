"""The Dyck page's tables and readings (results/dyck.md) beside its answer (minibert.report.dyck): each head's
gap to the exact ceiling, each encoder's fine-tuning with its failed runs, where the spread comes from
(configs/ablations/dyck_variance.yaml) and what the tables show, read from the Dyck, variance and recipe grids.

Example:
    >>> page = DyckPage(Data.load("results/dyck"), Data.load("results/dyck_variance"),
    ...                 Data.load("results/recipe"))  # doctest: +SKIP
    >>> page.failed_line()  # doctest: +SKIP
    ' MLM, full: 1 of 14 (58.7).'
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from minibert.stats.intervals import binomial_variance
from minibert.tables import arms, stats
from minibert.tables.query import Data, Stat

GENERATOR = "'s generator (16 wide, 1 layer)"  # how the page names a detector's generator, after the arm's label
FAILS_WITHIN = 0.05  # a full fine-tuning run "fails" if it ends at most 5 points above no pre-training's mean
SD_TARGET = 0.02  # full fine-tuning's SD over seeds aimed at
VALIDATION_TARGET = 0.003  # the validation set's own spread aimed at, on the gap and the ceiling
SATURATED_ABOVE = 0.03  # MLM's gap: its whole interval above 3 points is not saturated
# (what varies, its name in a sentence, the variance grid's experiment)
SOURCES = [("initial weights only", "the initial weights", "variance/init"),
           ("training data order only", "the data order", "variance/data"),
           ("validation set only, the same training", "the validation set", "variance/val")]  # fmt: skip


@dataclass(frozen=True)
class Spread:
    top: Stat  # the source with the largest gap SD
    top_name: str
    init: Stat  # the gap when only the initial weights vary
    val_gap: Stat  # the gap, the accuracy and the ceiling when only the validation set varies
    val_acc: Stat
    val_ceiling: Stat
    together: Stat  # the gap when all three vary with the seed (the Dyck grid's MLM)

    @property
    def init_alone_wider(self) -> bool:
        """Whether the initial weights alone spread the gap more than all three sources together do."""
        return self.init.sd > self.together.sd

    @property
    def validation_within_target(self) -> bool:
        return max(self.val_gap.sd, self.val_ceiling.sd) < VALIDATION_TARGET

    @property
    def binomial_se(self) -> float:
        """The validation set's binomial standard error at its accuracy and count."""
        return math.sqrt(binomial_variance(self.val_acc.mean, self.val_acc.n))


class DyckPage:
    sd_target, validation_target, saturated_above = SD_TARGET, VALIDATION_TARGET, SATURATED_ABOVE

    def __init__(self, data: Data, variance: Data, recipe: Data):
        self.data, self.variance, self.recipe = data, variance, recipe
        self.control = arms.control()

    @functools.cached_property
    def heads(self) -> list[tuple[str, str, str, str]]:
        """(label, arm, metric prefix, what its ceiling sees) of every arm the grid pre-trains."""
        found = arms.listed(arms.name_of(e) for e in self.data.experiments(stage="pretrain"))
        out = []
        for a in map(arms.arm, found):
            sees = ("both sides, its own masked positions" if a.generator else "both sides" if not a.causal
                    else "left context only" if a.cloze else "the next token, left context only")  # fmt: skip
            out.append((a.label + (GENERATOR if a.generator else ""), a.key, a.prefix, sees))
        return out

    @functools.cached_property
    def encoders(self) -> list[tuple[str, str]]:
        """(label, the experiment's last part) of every encoder the grid fine-tunes."""
        return [(arms.named(e), e.rsplit("/", 1)[-1]) for e in arms.ordered(self.data.experiments(stage="finetune"))]

    def pretrain(self, arm: str) -> dict:
        return {"experiment": f"dyck/pretrain/{arm}"}

    def tuned(self, arm: str) -> Stat:
        return self.data.stat("val/acc", experiment=f"dyck/finetune/{arm}")

    def gap(self, arm: str, prefix: str = "") -> Stat:
        return self.data.stat(f"val/{prefix}gap/acc", **self.pretrain(arm))

    def reference(self, arm: str, category: str, prefix: str = "") -> str:
        """The Bayes predictor's accuracy minus the head's on `category` (a reference, not a bound)."""
        behind = self.data.between(f"val/{prefix}bayes/acc", f"val/{prefix}acc", category, **self.pretrain(arm))
        return stats.fmt(behind.interval)

    def head_rows(self) -> list[list]:
        """[head, what its ceiling sees, seeds, ceiling, gap, SD, distance 1 †, distance 8+ †]."""
        rows = []
        for label, arm, p, sees in self.heads:
            s = self.gap(arm, p)
            logged = len(self.data.rows(metric=f"val/{p}bayes/acc", category="dist_1", **self.pretrain(arm))) > 0
            far = [self.reference(arm, c, p) if logged else "not logged" for c in ("dist_1", "dist_8_plus")]
            ceiling = stats.number(self.data.stat(f"val/{p}ceiling/acc", **self.pretrain(arm)).mean)
            rows.append([label, sees, s.seeds, ceiling, s, s.shown_sd(), *far])
        return rows

    @property
    def fails_within(self) -> float:
        return FAILS_WITHIN

    @functools.cached_property
    def fails_at(self) -> float:
        """No pre-training's mean plus 5 points: a full fine-tuning run ending at or below it failed."""
        return self.tuned(arms.SCRATCH).mean + FAILS_WITHIN

    def failed(self, s: Stat) -> list[float]:
        return sorted(x for x in s.values.values() if x <= self.fails_at)

    def encoder_rows(self) -> list[list]:
        """[encoder, seeds, accuracy, SD, lowest, highest, failed runs (full fine-tuning only)]."""
        rows = []
        for label, arm in self.encoders:
            s = self.tuned(arm)
            failed = len(self.failed(s)) if arm.endswith("-full") else ""
            rows.append([label, s.seeds, s, s.shown_sd(), s.lowest(), s.highest(), failed])
        return rows

    def failed_line(self) -> str:
        """' MLM, full: 1 of 14 (58.7).' for every full fine-tuning with a failed run."""
        said = ""
        for label, arm in self.encoders:
            s = self.tuned(arm)
            if arm.endswith("-full") and (bad := self.failed(s)):
                said += f" {label}: {len(bad)} of {s.seeds} ({', '.join(stats.number(x) for x in bad)})."
        return said

    @functools.cached_property
    def mlm_tuned(self) -> Stat:
        return self.tuned(f"{self.control}-full")

    @functools.cached_property
    def mlm_gap(self) -> Stat:
        return self.gap(self.control)

    @property
    def meets_sd_target(self) -> bool:
        """Whether full fine-tuning after MLM spreads over seeds by no more than the target SD."""
        return self.mlm_tuned.sd <= SD_TARGET

    @property
    def other_seeds_count(self) -> int:
        """How many seeds of full fine-tuning after MLM there are besides the lowest."""
        return self.mlm_tuned.seeds - 1

    @property
    def clear_of_ceiling(self) -> bool:
        """MLM's whole gap interval lies above SATURATED_ABOVE: the language is not saturated."""
        return self.mlm_gap.interval.lo > SATURATED_ABOVE

    @property
    def worst_seed(self) -> int:
        """The seed whose full fine-tuning after MLM ends lowest."""
        return min(self.mlm_tuned.values.items(), key=lambda item: item[1])[0]

    @property
    def worst_seed_rank(self) -> int:
        """That seed's encoder's rank by gap, largest first."""
        return sum(g >= self.mlm_gap.values[self.worst_seed] for g in self.mlm_gap.values.values())

    @property
    def other_seeds(self) -> tuple[float, float]:
        """The lowest and highest fine-tuned accuracy of the other seeds."""
        ranked = sorted(self.mlm_tuned.values.values())
        return ranked[1], ranked[-1]

    @functools.cached_property
    def spread(self) -> Spread:
        v = self.variance
        top, name = max(((v.stat("val/gap/acc", experiment=e), n) for _, n, e in SOURCES), key=lambda t: t[0].sd)
        return Spread(top, name, v.stat("val/gap/acc", experiment="variance/init"),
                      v.stat("val/gap/acc", experiment="variance/val"), v.stat("val/acc", experiment="variance/val"),
                      v.stat("val/ceiling/acc", experiment="variance/val"), self.mlm_gap)  # fmt: skip

    def spread_rows(self) -> list[list]:
        """[what varies, seeds, gap SD, accuracy SD, gap, lowest to highest gap], then the three together."""
        rows = []
        for label, _, e in SOURCES:
            s, accuracy = (self.variance.stat(m, experiment=e) for m in ("val/gap/acc", "val/acc"))
            rows.append([f"{label} (`{e}`)", s.seeds, s.shown_sd(), accuracy.shown_sd(), s,
                         f"{s.lowest()} to {s.highest()}"])  # fmt: skip
        g = self.mlm_gap
        cloze = self.data.stat("val/acc", **self.pretrain(self.control))
        together = ["all three together, seed s (the Dyck grid)", g.seeds, g.shown_sd(), cloze.shown_sd(), g,
                    f"{g.lowest()} to {g.highest()}"]  # fmt: skip
        return [*rows, together]

    @property
    def finetune_binomial_se(self) -> float:
        return math.sqrt(binomial_variance(self.mlm_tuned.mean, self.mlm_tuned.n))

    def trend(self, arm: str) -> str:
        """Whether the head's distance to the Bayes predictor differs between partner distance 1 and 8+."""
        n1, n8 = (self.data.between("val/bayes/acc", "val/acc", c, **self.pretrain(arm)).interval
                  for c in ("dist_1", "dist_8_plus"))  # fmt: skip
        said = ("larger at 8+ than at distance 1" if n8.lo > n1.hi else "smaller at 8+ than at distance 1"
                if n8.hi < n1.lo else "not told apart between distance 1 and 8+")  # fmt: skip
        overlap = "overlap" if n8.lo <= n1.hi and n1.lo <= n8.hi else "do not overlap"
        return f"{said} (the two intervals {overlap})"

    def causal_higher(self) -> tuple[int, int]:
        """(seeds on which full fine-tuning after the control under a causal mask beats the control's, its seeds):
        the first left-to-right arm that answers the cloze."""
        causal = self.tuned(f"{arms.playing('causal', (a for _, a, _, _ in self.heads))}-full").values
        mlm = self.mlm_tuned.values
        return sum(s in mlm and x > mlm[s] for s, x in causal.items()), len(causal)

    def below_oracle(self) -> list[str]:
        """The heads whose overall gap lies below zero beyond its interval (a bound forbids it: a bug)."""
        return [label for label, arm, p, _ in self.heads if self.gap(arm, p).interval.hi < 0]
