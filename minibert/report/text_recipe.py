"""The text recipe page (results/text_recipe.md): the cheapest arm of the sweep at which MLM beats the left+right
trigram on text's cloze beyond noise, by the page's rule (a run within `BUDGET_S` of its own wall time, judged on
`MIN_SEEDS` seeds or more), with every arm's row and the accuracy-against-compute curves.

Example:
    >>> page = TextRecipe(Data.load("results/text_recipe"))  # doctest: +SKIP
    >>> page.shape(page.chosen)  # doctest: +SKIP
    '64 wide, 2 layers, 5,400 steps at lr 0.003'
"""

from __future__ import annotations

import functools

from minibert.tables import arms, stats
from minibert.tables.query import Data, Diff

BUDGET_S = 600  # the rule: a run within 10 minutes of its own wall time ...
MIN_SEEDS = 3  # ... judged on 3 seeds or more
ACC, TRIGRAM = "val/acc", "val/reference/left_right_trigram/acc"


class TextRecipe:
    budget_s, min_seeds = BUDGET_S, MIN_SEEDS

    def __init__(self, data: Data):
        self.data = data
        self.model = arms.label(arms.control())  # the arm whose recipe the grid searches

    @property
    def header(self) -> list[str]:
        return ["arm", "width", "layers", "steps", "peak lr", "training FLOPs", "run time (min)", "seeds", self.model,
                "left+right trigram", f"{self.model} − trigram (95%)", "verdict"]  # fmt: skip

    @functools.cached_property
    def chosen(self) -> str | None:
        """The cheapest arm, by counted FLOPs, that the rule lets beat the trigram; None where none does."""
        return self.data.cheapest(ACC, TRIGRAM, limits={"wall_time_s": BUDGET_S}, seeds=MIN_SEEDS)

    def against(self, experiment: str, seeds: list[int] | None = None) -> Diff:
        """MLM's accuracy minus the trigram's on the same questions, paired by seed."""
        where = {"experiment": experiment} | ({"seed": seeds} if seeds is not None else {})
        return self.data.between(ACC, TRIGRAM, **where)

    @functools.cached_property
    def fresh(self) -> Diff:
        """MLM − trigram on the chosen arm's seeds after its first, which alone picked it for more seeds."""
        return self.against(self.chosen, self.data.seeds(experiment=self.chosen)[1:])

    def axis(self, experiment: str, column: str) -> str:
        """One setting of an arm as the grid's table holds it: '5,400', '0.003'."""
        return f"{self.data.rows(experiment=experiment)[column].iloc[0]:,g}"

    def shape(self, experiment: str) -> str:
        """'64 wide, 2 layers, 5,400 steps at lr 0.003'."""
        a = functools.partial(self.axis, experiment)
        return f"{a('width')} wide, {a('layers')} layers, {a('max_steps')} steps at lr {a('lr')}"

    def flops(self, experiment: str) -> float:
        return self.data.stat("flops", experiment=experiment).mean

    @functools.cached_property
    def by_flops(self) -> list[str]:
        """Every arm, cheapest first (by counted FLOPs, then name)."""
        return [e for _, e in sorted((self.flops(e), e) for e in self.data.experiments())]

    def rows(self) -> list[list]:
        """One row an arm, cheapest first: its settings, cost, seeds, both accuracies, MLM − trigram and verdict
        (one seed: shown, not judged)."""
        out = []
        for e in self.by_flops:
            c, a = self.against(e), functools.partial(self.axis, e)
            name = e.split("/")[-1] + (" (chosen)" if e == self.chosen else "")
            verdict = c.verdict(self.model, "trigram") if c.seeds > 1 else "not judged: one seed"
            out.append([name, a("width"), a("layers"), a("max_steps"), a("lr"), stats.flops(self.flops(e)),
                        stats.minutes(self.data.stat("wall_time_s", experiment=e).mean, 1), c.seeds,
                        self.data.stat(ACC, experiment=e), stats.number(self.data.stat(TRIGRAM, experiment=e).mean),
                        c, verdict])  # fmt: skip
        return out

    def series(self) -> dict[str, list]:
        """The curves of accuracy against FLOPs: one a width, depth and lr, and the trigram's over every arm."""
        out: dict[str, list] = {}
        for e in self.data.experiments():
            a = functools.partial(self.axis, e)
            f = self.flops(e)
            out.setdefault(f"{a('width')} wide, {a('layers')} layers, lr {a('lr')}", []).append(
                (f, self.data.stat(ACC, experiment=e))
            )
            out.setdefault("left+right trigram", []).append((f, self.data.stat(TRIGRAM, experiment=e)))
        return out

    @property
    def questions(self) -> float:
        """The cloze questions each run is graded on (the first arm's count)."""
        return self.data.stat(ACC, experiment=self.data.experiments()[0]).n
