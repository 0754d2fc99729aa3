"""The committed tables keep their word: every gap is its ceiling minus its accuracy on the same questions,
no model beats a ceiling beyond the interval the report gives, the categories the input does not decide carry
the Bayes predictor's reference and never a ceiling, and a language without an oracle reports references and
no ceiling."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest

from minibert.stats import accuracies
from minibert.tables.query import Data
from minibert.tables.table import FILE

ROOT = Path(__file__).resolve().parents[2]
GRIDS = sorted(p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob(f"results/**/{FILE}"))
WITHOUT_ORACLE = {"results/text", "results/text_recipe"}  # real text: references, never a ceiling
ORACLE_GRIDS = [g for g in GRIDS if g not in WITHOUT_ORACLE]
UNDECIDED = ("partner_visible", "partner_hidden", "dist_")  # the hidden partner decides these, not the input


@functools.cache
def data(grid: str) -> Data:
    return Data.load(ROOT / grid)


def gaps(grid: str) -> list[tuple[str, str, str]]:
    """(experiment, gap metric, category) of every gap the grid logs."""
    frame = data(grid).frame
    found = frame[frame["metric"].str.contains("/gap/acc", regex=False)]
    return list(found[["experiment", "metric", "category"]].drop_duplicates().itertuples(index=False, name=None))


def test_every_committed_grid_is_found():
    assert set(GRIDS) >= {"results", "results/masking", "results/probes", "results/objectives", "results/dyck",
                          "results/dyck_variance", "results/recipe", "results/text"}  # fmt: skip


@pytest.mark.parametrize("grid", ORACLE_GRIDS)
def test_every_gap_is_its_ceiling_minus_its_accuracy_seed_by_seed(grid):
    d = data(grid)
    checked = 0
    for experiment, metric, category in gaps(grid):
        key = accuracies.parse(metric)
        gap, ceiling, acc = (d.stat(m, category, experiment=experiment).values
                             for m in (metric, key.key("ceiling"), key.key("acc")))  # fmt: skip
        for seed, value in gap.items():
            if not math.isnan(value):
                assert value == pytest.approx(ceiling[seed] - acc[seed], abs=1e-6), (experiment, metric, seed)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("grid", ORACLE_GRIDS)
def test_no_model_beats_a_ceiling_beyond_the_reports_interval(grid):
    d = data(grid)
    checked = 0
    for experiment, metric, category in gaps(grid):
        gap = d.stat(metric, category, experiment=experiment)
        acc = d.stat(accuracies.parse(metric).key("acc"), category, experiment=experiment)
        assert gap.seeds == acc.seeds  # a gap for every seed that has the accuracy
        if gap.seeds == 0:  # a category with no question (ELECTRA's generator keeps no token)
            assert acc.n == 0, (experiment, metric, category)
            continue
        assert gap.interval.hi >= 0, (experiment, metric, category, str(gap))  # above a bound, beyond noise: a bug
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("grid", GRIDS)
def test_categories_the_input_does_not_decide_carry_a_bayes_reference_not_a_ceiling(grid):
    frame = data(grid).frame
    undecided = frame[frame["category"].str.startswith(UNDECIDED)]
    assert not undecided["metric"].str.contains("/(?:ceiling|gap)/", regex=True).any()
    bounded = frame["metric"].str.contains("/ceiling/acc", regex=False).any()
    if bounded and (frame["category"] == "partner_hidden").any():
        hidden = frame[frame["category"] == "partner_hidden"]
        assert hidden["metric"].str.contains("/bayes/acc", regex=False).any()


@pytest.mark.parametrize("grid", sorted(WITHOUT_ORACLE))
def test_a_grid_without_an_oracle_logs_references_and_its_report_shows_no_ceiling(grid):
    metrics = set(data(grid).frame["metric"])
    assert not [m for m in metrics if any(f"/{role}/" in m for role in ("ceiling", "gap", "bayes"))]
    references = {m.split("/reference/")[1].split("/")[0] for m in metrics if "/reference/" in m}
    assert {"unigram", "left_bigram", "left_right_trigram"} <= references
    md = (ROOT / grid / "ablation.md").read_text()
    overview = md.split("## Experiments\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("| ").split(" | ") for line in overview.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(data(grid).experiments()) and all(row[4:] == ["–", "–"] for row in rows)
