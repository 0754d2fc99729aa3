"""The recipe and fine-tuning pages, once typed by hand, are declared: each renders from the committed tables as
committed, and its sentences follow the numbers (on a table changed so that the other arm wins, they say so)."""

from __future__ import annotations

import re
from pathlib import Path

from minibert.report.render import Renderer
from minibert.tables.query import Data

ROOT = Path(__file__).resolve().parents[2]


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


FULL_SOLVES = "pre-training + full fine-tuning solves it: full >= 0.95"
FROZEN_BELOW = "frozen [CLS] is near chance: frozen below full"


def test_the_fine_tuning_page_quotes_the_grids_claims_as_its_report_judges_them():
    """The page judges no claim of its own: it quotes the grid's claims on fine-tuning with the verdicts the
    grid's report gives them (one family), and its sentences follow the numbers."""
    renderer = Renderer(ROOT)
    _, text = renderer.render(Path("results/finetune.md.j2"))
    verdicts = {a.text: a.verdict for a in renderer.finetune().claims()}
    assert {FULL_SOLVES, FROZEN_BELOW} <= set(verdicts)
    assert all(f'- "{claim}": ' in text and f"; {v}." in text for claim, v in verdicts.items())
    assert "`full` against `frozen`: full better by" in text and "`full` is higher on 3 of 3 seeds" in text

    def worse(frame):  # full fine-tuning 10 points below the frozen regime on every seed
        full, frozen = values(frame, "finetune/full", "val/acc"), values(frame, "finetune/frozen", "val/acc")
        frame.loc[full, "value"] = frame.loc[frozen, "value"].to_numpy() - 0.1

    changed = Changed("default", worse)
    _, text = changed.render(Path("results/finetune.md.j2"))
    assert re.search(
        r"`full` against `frozen`: frozen better by 10\.0 \([^)]+\); `full` is higher on 0 of 3 seeds", text
    )
    verdicts = {a.text: a.verdict for a in changed.finetune().claims()}
    assert verdicts[FROZEN_BELOW] == "fails" and verdicts[FULL_SOLVES] == "fails"

    def solved(frame):  # every seed right on every question: the 95% claim holds
        frame.loc[values(frame, "finetune/full", "val/acc"), "value"] = 1.0

    changed = Changed("default", solved)
    _, text = changed.render(Path("results/finetune.md.j2"))
    assert {a.text: a.verdict for a in changed.finetune().claims()}[FULL_SOLVES] == "holds"
    assert f'- "{FULL_SOLVES}": ' in text and "(claimed ≥ 95.0); holds." in text
