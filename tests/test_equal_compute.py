"""The grids at equal compute spend what they say, and scripts/equal_compute.py reads rankings, crossovers and
verdicts off paired intervals the way its pages say."""

from __future__ import annotations

import math

import pytest

from minibert.ablation.grid import load_grid
from minibert.ablation.intervals import Interval
from minibert.languages import BracketPairs, Dyck
from minibert.objectives import MaskedLM
from minibert.training.budget import step_cost
from minibert.training.module import EncoderModule
from tests.test_bert_tables import write_csv as bert_tables_csv


@pytest.fixture(scope="module")
def ec(scripts):
    return scripts("equal_compute")


def todays_run(language, steps: int) -> float:
    """The training FLOPs of today's MLM run on `language`: `steps` steps of batch 64 at width 32."""
    flops, _ = step_cost(EncoderModule(objective=MaskedLM(language=language)), batch_size=64)
    return flops * steps


def test_scaling_budgets_are_the_fractions_of_todays_mlm_run_they_are_named_for(root, ec):
    grid = load_grid(root / "configs/ablations/scaling.yaml", root=root)
    today = todays_run(Dyck(kinds=4, length=32, max_depth=6), 1000)
    for budget in ec.BUDGETS:
        fraction = float(budget[1:])
        for arm in (a for a in ec.ARMS if a != "next_token-then-mlm"):  # that one: half each, below
            given = float(grid[f"scaling/pretrain/{arm}/{budget}"].overrides["budget.flops"])  # YAML reads 1e9 as text
            assert given == pytest.approx(fraction * today, rel=1e-3), (arm, budget)
        # next-token LM, then MLM: half each, the whole budget in all
        then = grid[f"scaling/pretrain/next_token-then-mlm/{budget}"]
        first = grid[then.encoder_from]
        assert "configs/objectives/next_token.yaml" in first.configs
        halves = float(first.overrides["budget.flops"]) + float(then.overrides["budget.flops"])
        assert halves == pytest.approx(fraction * today, rel=1e-3)
    assert float(ec.BUDGETS[-1][1:]) / float(ec.BUDGETS[0][1:]) >= 16


def test_every_masking_rate_cell_of_a_language_spends_that_languages_run_at_15_percent(root, ec):
    grid = load_grid(root / "configs/ablations/masking_rate.yaml", root=root)
    today = {"pairs": todays_run(BracketPairs(), 600), "dyck": todays_run(Dyck(kinds=4, length=32, max_depth=6), 1000)}
    for lang, flops in today.items():
        for rate in ec.RATES:
            e = grid[f"masking_rate/{lang}/{rate}/pretrain"]
            assert float(e.overrides["budget.flops"]) == pytest.approx(flops, rel=1e-3), (lang, rate)
            masking = e.overrides["model.init_args.objective.init_args.masking"]
            assert masking["p_pick"] == ec.rate_of(rate)
            assert (masking["p_mask"], masking["p_random"]) == ((1, 0) if rate.endswith("mask_only") else (0.8, 0.1))
            assert grid[f"masking_rate/{lang}/{rate}/full"].encoder_from == e.name


def write_csv(path, rows):
    """bert_tables' csv writer, each seed marked as grading its own validation set (as the grids' seeds do)."""
    seeds = range(len(rows[0][2]))
    bert_tables_csv(path, [*rows, *((e, "seeds/val", list(seeds)) for e in dict.fromkeys(r[0] for r in rows))])


def test_a_crossover_is_named_where_the_order_changes_and_resolved_only_beyond_noise(tmp_path, ec):
    # A beats B by about 2 points at the first two budgets, loses by about 2 at the rest; C never crosses A
    rows = []
    for i, budget in enumerate(ec.BUDGETS):
        sign = 1 if i < 2 else -1
        rows.append((ec.fine("mlm", budget), "val/acc", [0.80, 0.81, 0.82]))
        rows.append(
            (ec.fine("electra", budget), "val/acc", [0.80 - sign * 0.02, 0.81 - sign * 0.021, 0.82 - sign * 0.019])
        )
        rows.append((ec.fine("next_token", budget), "val/acc", [0.5, 0.52, 0.49]))
    write_csv(tmp_path / "ablation.csv", rows)
    v = ec.Values(tmp_path)
    lines = ec.crossovers(v, ["mlm", "electra", "next_token"], ec.fine, "val/acc")
    assert len(lines) == 1 and lines[0].startswith("- MLM − ELECTRA: +2.0") and "at x0.125" in lines[0]
    assert "at x0.25" in lines[0] and lines[0].endswith("(resolved)")
    order = ec.ranking(v, ["next_token", "electra", "mlm"], "x1", ec.fine, "val/acc", higher_is_better=True)
    assert order.startswith("ELECTRA > **+2.0") and order.index("MLM") < order.index("next-token")


@pytest.mark.parametrize(
    "iv,positive,expected",
    [
        (Interval(0.02, 0.01, 0.03, 3), True, "holds"),
        (Interval(-0.02, -0.03, -0.01, 3), True, "does not hold"),
        (Interval(0.02, -0.01, 0.05, 3), True, "undecided"),
        (Interval(-0.02, -0.03, -0.01, 3), False, "holds"),
        (Interval(math.nan, math.nan, math.nan, 0), True, "no values"),
    ],
)
def test_a_claim_holds_only_where_its_interval_excludes_zero_in_its_direction(ec, iv, positive, expected):
    assert ec.verdict(iv, positive) == expected


def test_a_missing_grid_is_one_line_naming_what_to_run(tmp_path, ec, capsys):
    assert ec.main(["scaling", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ablation.csv does not exist: run the grid first" in err
