"""The Dyck recipe page's figures (results/recipe.md), read from the recipe grid's table.

The grid (configs/ablations/recipe.yaml) sweeps MLM pre-training's peak lr and steps on Dyck (`recipe/mlm/...`,
against the recipe before, `recipe/mlm-before`), fine-tunes the chosen encoders at several lr
(`recipe/finetune/...`), runs every other shipped objective at the chosen recipe (`recipe/objectives/...`) and
times the recipes before and after. `Recipe` picks the cheapest-enough cell with the lowest gap, the steadiest
cell, and the rows of each table; the page words them.

Example:
    >>> page = Recipe(Data.load("results/recipe"))  # doctest: +SKIP
    >>> page.cell(page.best.experiment)  # doctest: +SKIP
    'lr 0.01 for 1,000 steps'
"""

from __future__ import annotations

import functools

from minibert.tables import arms, stats
from minibert.tables.query import Data, Stat

BEFORE, CHOSEN, FINETUNE = "recipe/mlm-before", "recipe/mlm/lr0.01-max_steps1000", "recipe/finetune/lr0.003"
NO_PRETRAIN = "recipe/finetune-no_pretrain"
BUDGET = 1.5  # the cost target per run, against a run of the recipe before
# (label, experiment, the run its cost is read against)
COSTS = [("pre-training before (lr 0.003, 2,000 val sentences, validated every 100 steps)", BEFORE, BEFORE),
         ("pre-training chosen (lr 0.01, 6,000 val sentences per seed, validated every 250 steps)", "recipe/mlm-chosen",
          BEFORE),
         ("fine-tuning before (300 steps, 2,000 val sentences, validated every 50 steps)", "recipe/finetune-before",
          "recipe/finetune-before"),
         ("fine-tuning chosen (300 steps, 12,000 val sentences per seed, validated at the end)",
          "recipe/finetune-chosen", "recipe/finetune-before"),
         ("fine-tuning for 600 steps (12,000 val sentences, validated at 300 and 600)", "recipe/finetune-600",
          "recipe/finetune-before")]  # fmt: skip


def spread(s: Stat) -> list[str]:
    """[the mean with its interval, the SD, 'lowest to highest seed']: three cells of a table."""
    return [str(s), s.shown_sd(), f"{s.lowest()} to {s.highest()}"]


class Recipe:
    before, chosen, finetune, budget = BEFORE, CHOSEN, FINETUNE, BUDGET

    def __init__(self, data: Data):
        self.data = data

    @functools.cached_property
    def others(self) -> list[tuple[str, str, str, str]]:
        """(label, experiment, metric, what it is): every other objective the grid runs at the chosen recipe, by
        its gap to its ceiling; a detector by its own accuracy and its generator's gap."""
        out = []
        for e in arms.ordered(e for e in self.data.experiments() if e.startswith("recipe/objectives/")):
            a = arms.arm(e)
            if a.generator:
                out += [(f"{a.label}, discriminator", e, "val/acc", "accuracy"),
                        (f"{a.label}, generator", e, f"val/{a.prefix}gap/acc", "gap to its ceiling")]  # fmt: skip
            else:
                out.append((a.label, e, "val/gap/acc", f"gap to the {a.causal or 'ceiling'}"))
        return out

    def stat(self, metric: str, experiment: str, category: str = "") -> Stat:
        return self.data.stat(metric, category, experiment=experiment)

    def vs(self, metric: str, a: str, b: str, la: str, lb: str) -> str:
        """A against B in words, with the seeds it is paired over."""
        c = self.data.diff(metric, {"experiment": a}, {"experiment": b})
        return f"{c.say(la, lb)}, paired over {c.interval.seeds} seeds"

    def axis(self, experiment: str, column: str) -> str:
        return f"{self.data.rows(experiment=experiment)[column].iloc[0]:,g}"

    def cell(self, experiment: str) -> str:
        """'lr 0.01 for 1,000 steps'."""
        return f"lr {self.axis(experiment, 'lr')} for {self.axis(experiment, 'max_steps')} steps"

    @functools.cached_property
    def sweep(self) -> list[str]:
        """The recipe before, then every cell of the pre-training sweep."""
        return [BEFORE, *(e for e in self.data.experiments() if e.startswith("recipe/mlm/"))]

    @functools.cached_property
    def tuned(self) -> list[str]:
        return [e for e in self.data.experiments() if e.startswith("recipe/finetune/")]

    @functools.cached_property
    def base_time(self) -> float:
        """A run of the recipe before, in seconds: what the sweep's costs are read against."""
        return self.stat("wall_time_s", BEFORE).mean

    @functools.cached_property
    def best(self) -> Stat:
        """The gap of the sweep cell with the lowest mean gap among those within the cost budget."""
        within = [self.stat("val/gap/acc", e) for e in self.sweep
                  if self.stat("wall_time_s", e).mean <= BUDGET * self.base_time]  # fmt: skip
        return min(within, key=lambda s: s.mean)

    @staticmethod
    def over_budget(cost: float) -> bool:
        """Whether a run costing `cost` times the recipe before exceeds the budget the sweep was held to."""
        return cost > BUDGET

    @property
    def steadiest_is_chosen(self) -> bool:
        return self.steadiest.experiment == CHOSEN

    @functools.cached_property
    def steadiest(self) -> Stat:
        """The gap of the sweep cell with the smallest SD over seeds."""
        return min((self.stat("val/gap/acc", e) for e in self.sweep), key=lambda s: s.sd)

    def sweep_rows(self) -> list[list]:
        """[peak lr, steps, val sentences, gap, SD, range, distance-1 accuracy and SD, run time, cost]."""
        rows = []
        for e in self.sweep:
            near, t = self.stat("val/acc", e, "dist_1"), self.stat("wall_time_s", e).mean
            lr = self.axis(e, "lr") + (" (before)" if e == BEFORE else "") + (" (chosen)" if e == CHOSEN else "")
            rows.append([lr, self.axis(e, "max_steps"), self.axis(e, "val_size"), *spread(self.stat("val/gap/acc", e)),
                         f"{stats.number(near.mean)}, {near.shown_sd()}", stats.number(t, 1),
                         f"{stats.number(t / self.base_time, 1, 2)}×"])  # fmt: skip
        return rows

    def tuned_rows(self) -> list[list]:
        """[lr, accuracy, SD, range] of each fine-tuning lr, then of fine-tuning without pre-training."""
        rows = [[self.axis(e, "finetune lr") + (" (chosen)" if e == FINETUNE else ""), *spread(self.stat("val/acc", e))]
                for e in self.tuned]  # fmt: skip
        return [*rows, [f"{arms.label(arms.SCRATCH)} (0.003)", *spread(self.stat("val/acc", NO_PRETRAIN))]]

    def tuned_lines(self) -> list[str]:
        """The chosen fine-tuning lr against each other, in words."""
        chosen = self.stat("val/acc", FINETUNE).shown_sd()
        lines = []
        for e in (e for e in self.tuned if e != FINETUNE):
            lr = self.axis(e, "finetune lr")
            against = self.vs("val/acc", FINETUNE, e, "0.003", lr)
            theirs = self.stat("val/acc", e).shown_sd()
            lines.append(f"lr 0.003 against {lr}: {against}; SD {chosen} against {theirs}.")
        return lines

    def other_rows(self) -> list[list]:
        """[objective, its figure, mean, SD, range, seeds] of every other objective at the chosen recipe."""
        return [[label, what, *spread(s := self.stat(metric, e)), s.seeds] for label, e, metric, what in self.others]

    @property
    def largest_other_sd(self) -> float:
        return max(self.stat(metric, e).sd for _, e, metric, _ in self.others)

    @functools.cached_property
    def timed_seeds(self) -> list[int]:
        """The seeds every timed row ran."""
        return self.data.seeds(experiment="recipe/mlm-chosen")

    def cost(self, experiment: str, base: str) -> float:
        """A run's mean wall time against `base`'s, on the seeds every timed row ran."""
        seeds = self.timed_seeds
        return (self.data.stat("wall_time_s", experiment=experiment, seed=seeds).mean
                / self.data.stat("wall_time_s", experiment=base, seed=seeds).mean)  # fmt: skip

    def cost_rows(self) -> list[list]:
        """[recipe, run time, cost against the recipe before]."""
        return [[label, self.data.stat("wall_time_s", experiment=e, seed=self.timed_seeds),
                 f"{stats.number(self.cost(e, base), 1, 2)}×"] for label, e, base in COSTS]  # fmt: skip
