"""The recipe and fine-tuning pages, once typed by hand, are declared: each renders from the committed tables as
committed, and its sentences follow the numbers (on a table changed so that the other arm wins, they say so)."""

from __future__ import annotations

import re
from pathlib import Path

from minibert.report.query import Data
from minibert.report.render import Renderer

ROOT = Path(__file__).resolve().parents[1]


class Changed(Renderer):
    """A renderer whose grid `name` is the committed table with `change` applied to its frame."""

    def __init__(self, name: str, change):
        super().__init__(ROOT)
        self.name, self.change = name, change

    def grid(self, name: str) -> Data:
        data = super().grid(name)
        if name != self.name:
            return data
        frame = data.frame.copy()
        self.change(frame)
        return Data(frame, data.made, data.out)


def values(frame, experiment: str, metric: str, category: str = ""):
    return (frame["experiment"] == experiment) & (frame["metric"] == metric) & (frame["category"] == category)


def test_the_recipe_page_names_the_arm_the_interval_favours():
    lr01, lr02 = "recipe/mlm/lr0.01-max_steps1000", "recipe/mlm/lr0.02-max_steps1000"
    _, text = Renderer(ROOT).render(Path("results/recipe.md.j2"))
    assert re.search(r"lr 0\.02 against 0\.01, at 1,000 steps: lr 0\.01 better by", text)
    assert "lr 0.01 for 1,000 steps\n  has the lowest mean gap" in text

    def swap(frame):  # the two cells' gaps exchanged, seed by seed: now lr 0.02 has the smaller gap
        a, b = values(frame, lr01, "val/gap/acc"), values(frame, lr02, "val/gap/acc")
        va, vb = frame.loc[a, "value"].to_numpy(), frame.loc[b, "value"].to_numpy()
        frame.loc[a, "value"], frame.loc[b, "value"] = vb, va

    _, text = Changed("recipe", swap).render(Path("results/recipe.md.j2"))
    assert re.search(r"lr 0\.02 against 0\.01, at 1,000 steps: lr 0\.02 better by", text)
    assert "lr 0.02 for 1,000 steps\n  has the lowest mean gap" in text  # its cost is within the budget


def test_the_fine_tuning_page_reads_its_claims_from_the_intervals():
    _, text = Renderer(ROOT).render(Path("results/finetune.md.j2"))
    assert "`full` against `frozen`: full better by" in text and "`full` is higher on 3 of 3 seeds" in text

    def worse(frame):  # full fine-tuning 10 points below the frozen regime on every seed
        full, frozen = values(frame, "finetune/full", "val/acc"), values(frame, "finetune/frozen", "val/acc")
        frame.loc[full, "value"] = frame.loc[frozen, "value"].to_numpy() - 0.1

    _, text = Changed("default", worse).render(Path("results/finetune.md.j2"))
    assert re.search(
        r"`full` against `frozen`: frozen better by 10\.0 \([^)]+\); `full` is higher on 0 of 3 seeds", text
    )
    assert "is below 95: not shown" in text

    def solved(frame):  # every seed right on every question: the 95% claim is shown
        frame.loc[values(frame, "finetune/full", "val/acc"), "value"] = 1.0

    _, text = Changed("default", solved).render(Path("results/finetune.md.j2"))
    assert "clears 95: shown" in text
