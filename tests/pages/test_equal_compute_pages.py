"""The equal-compute pages (results/scaling.md, results/masking_rate.md) are declared over their grids' tables: they
render from the committed tables as committed, a claim's verdict follows its paired interval (undecided where it
crosses zero, the arm it favours named where it does not, and the claim's sentence agrees), and the grids spend
the compute they say."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from minibert.ablation.grid import load_grid
from minibert.languages import BracketPairs, Dyck
from minibert.objectives import MaskedLM
from minibert.report.render import Renderer
from minibert.tables import saved, table
from minibert.tables.axes import grid_axes
from minibert.training.budget import step_cost
from minibert.training.module import EncoderModule
from tests.templates import copy_templates

ROOT = Path(__file__).resolve().parents[2]
DYCK = Dyck(kinds=4, length=32, max_depth=6)


def _renderer(root: Path, grid: str, frame: pd.DataFrame) -> Renderer:
    """A renderer of a repository under `root` that holds only the page of `grid`'s template and `frame`."""
    copy_templates(root, f"results/{grid}.md.j2")
    table.write(frame, root / "results" / grid)
    return Renderer(root)


def render(root: Path, grid: str, frame: pd.DataFrame) -> str:
    """The page of `grid` rendered from `frame` alone (see `_renderer`)."""
    return _renderer(root, grid, frame).render(Path(f"results/{grid}.md.j2"))[1]


def cell(frame: pd.DataFrame, metric: str, category: str = "", **axes) -> pd.Series:
    rows = (frame["metric"] == metric) & (frame["category"] == category)
    for column, value in axes.items():
        rows &= frame[column] == value
    assert rows.sum() == frame.loc[rows, "seed"].nunique() > 1, axes  # one experiment, several seeds
    return rows


def constructed(
    grid: str, metric: str, a: dict, b: dict, winner: str | None, category: str = "", spread: float = 1.0
) -> pd.DataFrame:
    """The committed table of `grid` with A's values on `metric` set to B's plus a difference per seed: about +5
    points on every seed (A wins), -5 (B wins), +-1 x `spread` around zero (undecided) or +-0.1 (equal, "E");
    seeds in the table's order."""
    frame = table.read(ROOT / "results" / grid).sort_values("seed", kind="stable")
    ra, rb = cell(frame, metric, category, **a), cell(frame, metric, category, **b)
    base = frame.loc[rb, "value"].to_numpy()
    n = len(base)
    noise = np.resize([0.01, -0.01, 0.001, -0.001, 0.0], n) * (0.1 if winner == "E" else spread)
    shift = {"A": 0.05, "B": -0.05}.get(winner, 0.0) + noise
    if winner in (None, "E"):
        shift -= shift.mean()  # mean exactly zero: the interval crosses it
    frame.loc[ra, "value"] = np.clip(base + shift, 0.0, 1.0)
    return frame


def row(text: str, *start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith("| " + " | ".join(start) + " |"))
    return [c.strip() for c in line.strip("|").split("|")]


ELECTRA = "ELECTRA beats MLM at equal compute (Clark et al. 2020)"


@pytest.mark.parametrize("winner", ["A", "B", None])
def test_a_scaling_claim_names_the_arm_its_interval_favours_or_says_undecided(tmp_path, winner):
    a, b = {"stage": "finetune", "arm": "electra", "budget": "x1"}, {"stage": "finetune", "arm": "mlm", "budget": "x1"}
    frame = constructed("scaling", "val/acc", a, b, winner, spread=0.1)  # 5 points, decisive beside the page's others
    text = render(tmp_path, "scaling", frame)
    cells = row(text, ELECTRA, "x1")
    verdict, claim = {"A": ("ELECTRA better", "holds"), "B": ("MLM better", "does not hold"),
                      None: ("undecided", "undecided")}[winner]  # fmt: skip
    assert cells[3:5] == [verdict, claim]
    assert cells[2].startswith({"A": "+", "B": "-", None: ("+", "-", "0")}[winner]), cells
    # the claim's sentence lists x1 under the same word as its row
    sentence = next(line for line in text.splitlines() if line.startswith(f"- **{ELECTRA}**"))
    said = {w: p.split(" at ", 1)[1].split(", ") for p in sentence.split(": ", 1)[1].rstrip(".").split("; ")
            for w in ("holds", "does not hold", "undecided") if p.startswith(w + " at ")}  # fmt: skip
    assert "x1" in said[claim], sentence


def test_a_difference_its_interval_alone_decides_is_undecided_when_the_page_holds_its_verdicts_together(tmp_path):
    """5 points on 3 seeds that disagree by 1 to 2 points: the interval alone excludes zero (p about 0.01), but the
    scaling page judges dozens of comparisons, and Holm's step-down over them leaves this one undecided; the
    page's family line counts it among those its intervals alone would decide."""
    a, b = {"stage": "finetune", "arm": "electra", "budget": "x1"}, {"stage": "finetune", "arm": "mlm", "budget": "x1"}
    frame = constructed("scaling", "val/acc", a, b, "A")
    renderer = _renderer(tmp_path, "scaling", frame)
    text = renderer.render(Path("results/scaling.md.j2"))[1]
    cells = row(text, ELECTRA, "x1")
    assert cells[2].startswith("+") and cells[3:5] == ["undecided", "undecided"]
    lo = float(cells[2].split("(")[1].split(" to ")[0])
    assert lo > 0  # its own interval excludes zero
    (family,) = [f for f in renderer.families() if f.name == "results/scaling"]
    held, alone = len(family.holds), sum(p < 0.05 for p in family.p.values())
    assert held < alone and family.size > 10
    note = next(line for line in text.splitlines() if line.startswith("<sub>Verdicts hold together"))
    assert f"results/scaling: {held} of {family.size} decided ({alone} one by one;" in note
    assert "declared in configs/ablations/scaling.yaml and configs/families/scaling.yaml" in note


@pytest.mark.parametrize("winner", ["A", "B", None])
def test_a_masking_rate_claim_names_the_arm_its_interval_favours_or_says_undecided(tmp_path, winner):
    claim = "40% beats 15% (Wettig et al. 2023: 84.5 against 84.2 on MNLI)"
    forty, fifteen = ({"stage": "finetune", "language": "dyck", "p_pick": p, "p_mask": 0.8} for p in (0.4, 0.15))
    text = render(tmp_path, "masking_rate", constructed("masking_rate", "val/acc", forty, fifteen, winner))
    cells = row(text, "Dyck (4 types, 32 tokens)", claim, "fine-tuning")
    verdict, said = {"A": ("40% better", "holds"), "B": ("15% better", "does not hold"),
                     None: ("undecided", "undecided")}[winner]  # fmt: skip
    assert cells[4:6] == [verdict, said]
    # and the recipe's own table marks it the same way against 15%
    recipe = row(text.split("## Dyck", 1)[1], "40%, 80/10/10")
    assert recipe[-1].endswith({"A": "**better**", "B": "**worse**", None: ")"}[winner]), recipe


@pytest.mark.parametrize(
    "winner,verdict,said",
    [
        ("A", "mask only better", "holds"),
        ("E", "equivalent within ±1.0", "holds"),
        ("B", "80/10/10 better", "does not hold"),
    ],
)
def test_an_as_good_as_claim_holds_where_equivalent_or_better_and_fails_where_worse(tmp_path, winner, verdict, said):
    claim = "at 40%, mask-only (100/0/0) is as good as 80/10/10, within ±1.0 (Wettig et al. 2023)"
    mask, mixed = ({"stage": "pretrain", "language": "pairs", "p_pick": 0.4, "p_mask": p} for p in (1.0, 0.8))
    text = render(tmp_path, "masking_rate", constructed("masking_rate", "val/acc", mask, mixed, winner, "kind_mask"))
    assert row(text, "bracket pairs (seed language)", claim, "cloze, [MASK] questions only")[4:6] == [verdict, said]


def todays_run(language, steps: int) -> float:
    """The training FLOPs of today's MLM run on `language`: `steps` steps of batch 64 at width 32."""
    flops, _ = step_cost(EncoderModule(objective=MaskedLM(language=language)), batch_size=64)
    return flops * steps


def test_scaling_budgets_are_the_fractions_of_todays_mlm_run_they_are_named_for():
    grid = load_grid(ROOT / "configs/ablations/scaling.yaml", root=ROOT)
    today = todays_run(DYCK, 1000)
    fractions = set()
    pretrain = [e for e in grid.experiments if e.job_type == "pretrain"]
    firsts = {e.encoder_from for e in pretrain if e.encoder_from}
    for e in pretrain:
        if e.name in firsts and not e.axes:  # a first half only, checked with its second
            continue
        given = float(e.overrides["budget.flops"])  # YAML reads 1e9 as text
        if e.encoder_from:  # next-token LM, then MLM: the two halves spend the budget together
            given += float(grid[e.encoder_from].overrides["budget.flops"])
            assert "configs/objectives/next_token.yaml" in grid[e.encoder_from].configs
        label = e.axes.get("budget") or e.name.rsplit("/", 1)[1]
        assert given == pytest.approx(float(label.removeprefix("x")) * today, rel=1e-3), e.name
        fractions.add(given / today)
    assert max(fractions) / min(fractions) >= 16 - 1e-6


def test_every_masking_rate_cell_spends_its_languages_run_at_15_percent_and_its_axes_are_its_settings():
    grid = load_grid(ROOT / "configs/ablations/masking_rate.yaml", root=ROOT)
    today = {"pairs": todays_run(BracketPairs(), 600), "dyck": todays_run(DYCK, 1000)}
    axes = grid_axes(grid, saved.of(ROOT / "results/masking_rate", grid))
    for e in grid.experiments:
        if e.job_type == "pretrain":
            assert float(e.overrides["budget.flops"]) == pytest.approx(today[axes[e.name]["language"]], rel=1e-3)
            masking = e.overrides["model.init_args.objective.init_args.masking"]
            assert (masking["p_mask"], masking["p_random"]) in ((0.8, 0.1), (1, 0))
        else:  # fine-tuning reads the recipe of the encoder it loads
            masking = grid[e.encoder_from].overrides["model.init_args.objective.init_args.masking"]
        assert {k: axes[e.name][k] for k in masking} == masking, e.name
