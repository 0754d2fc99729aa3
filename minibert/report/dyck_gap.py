"""The Dyck gap page's figures (results/dyck/gap.md): each pre-training head against the exact ceiling of its
own questions, by category and by the distance to the partner bracket.

A cell is the ceiling minus the accuracy where the category has a ceiling (a bound), else the Bayes predictor's
accuracy minus the run's, marked † (a reference a model may beat), else '–' where the head does not log the
category.

Example:
    >>> page = DyckGap(Data.load("results/dyck"))  # doctest: +SKIP
    >>> page.rows()[0][:2]  # doctest: +SKIP
    ['seeds', 30]
"""

from __future__ import annotations

from minibert.stats import accuracies
from minibert.tables import arms, stats
from minibert.tables.query import Data, Diff

CATEGORIES = (
    "",
    "opener",
    "closer",
    "partner_visible",
    "partner_hidden",
    "kind_mask",
    "kind_random",
    "kind_kept",
    "dist_1",
    "dist_2_3",
    "dist_4_7",
    "dist_8_plus",
    "depth_1",
    "depth_2",
    "depth_3",
    "depth_4_plus",
)  # fmt: skip  (the rows, in order; each labelled by minibert.stats.accuracies.label)
BINS = [(1, "dist_1"), (2, "dist_2_3"), (4, "dist_4_7"), (8, "dist_8_plus")]  # (lower edge, category)


class DyckGap:
    def __init__(self, data: Data):
        self.data = data
        # (label, experiment, metric prefix): every head graded on the cloze or the next token, a detector's by its
        # generator
        found = arms.ordered(self.data.experiments(stage="pretrain"))
        self.heads = [(a.label + ("'s generator" if a.generator else ""), e, a.prefix)
                      for e, a in zip(found, map(arms.arm, found), strict=True)]  # fmt: skip

    def logs(self, experiment: str, metric: str, category: str) -> bool:
        return len(self.data.rows(experiment=experiment, metric=metric, category=category)) > 0

    def behind(self, experiment: str, prefix: str, category: str) -> str:
        """The head's gap to its ceiling on `category`, or its distance to the Bayes predictor (†), or '–'."""
        if self.logs(experiment, f"val/{prefix}gap/acc", category):
            return str(self.data.stat(f"val/{prefix}gap/acc", category, experiment=experiment))
        if self.logs(experiment, f"val/{prefix}bayes/acc", category):
            bayes = self.data.between(f"val/{prefix}bayes/acc", f"val/{prefix}acc", category, experiment=experiment)
            said = stats.fmt(bayes.interval)
            return said + (" †" if said != "n/a" else "")
        return "–"

    def header(self) -> list[str]:
        return ["category", *(label for label, _, _ in self.heads)]

    def rows(self) -> list[list]:
        """The seeds and ceiling of each head, then a row per category."""
        rows = [["seeds", *(self.data.stat(f"val/{p}gap/acc", experiment=e).seeds for _, e, p in self.heads)],
                ["its ceiling", *(stats.number(self.data.stat(f"val/{p}ceiling/acc", experiment=e).mean)
                                  for _, e, p in self.heads)]]  # fmt: skip
        rows += [
            [label, *(self.behind(e, p, c) for _, e, p in self.heads)]
            for c, label in ((c, accuracies.label(c) if c else "all") for c in CATEGORIES)
        ]
        return rows

    def by_distance(self) -> dict[str, list[tuple[int, Diff]]]:
        """{head: [(the bin's lower edge, Bayes predictor minus accuracy)]}, for the heads that log distances."""
        return {label: [(x, self.data.between(f"val/{p}bayes/acc", f"val/{p}acc", c, experiment=e)) for x, c in BINS]
                for label, e, p in self.heads if self.logs(e, f"val/{p}bayes/acc", "dist_1")}  # fmt: skip
