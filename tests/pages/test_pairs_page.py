"""The minimal-pairs page (configs/pages/results/pairs.md.j2, minibert.report.pairs) on constructed tables: arms
ranked by their judged figure, a text phenomenon whose arm order holds across seeds said to reproduce and one of
pure noise not, and Dyck's pairs said to order arms as text's cloze does exactly when they do."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from minibert.report.pairs import TARGETS
from minibert.report.render import Renderer
from minibert.tables import table
from tests.templates import copy_templates
from tests.validity_tables import ARMS, QUALITY, with_saved_configs
from tests.validity_tables import rows as validity_rows

ROOT = Path(__file__).resolve().parents[2]
TEXT_ARMS = ["mlm", "span", "electra", "next_token"]


def pair_rows(order: float, seeds=range(6)) -> list[dict]:
    rng = np.random.default_rng(1)
    out = []

    def row(experiment, metric, s, value, category=""):
        out.append(
            {
                "grid": "pairs",
                "experiment": experiment,
                "stage": "pretrain",
                "seed": s,
                "val_seed": s,
                "metric": metric,
                "category": category,
                "value": value,
                "n": 600,
                "run": f"r{s}",
                "code": "",
            }
        )

    for arm in ARMS:
        experiment = f"pairs/dyck/pretrain/{arm}"
        for s in seeds[:3]:
            q = 0.5 + 0.4 * order * (QUALITY[arm] - 0.5) + 0.003 * rng.normal()
            row(experiment, "val/pairs/acc", s, q)
            row(experiment, "val/pairs/acc", s, q - 0.05, "dist_8_plus")
            row(experiment, "val/pairs/acc", s, q + 0.05, "dist_2_3")
            row(experiment, "val/pairs/probe/acc", s, 0.6 + 0.1 * QUALITY[arm])
            for floor, value in (("unigram", 0.5), ("bigram", 0.49), ("trigram", 0.51)):
                row(experiment, f"val/pairs/floor/{floor}/acc", s, value)
    for i, arm in enumerate(TEXT_ARMS):
        experiment = f"pairs/text/pretrain/{arm}"
        for s in seeds:
            row(experiment, "val/pairs/acc", s, 0.9 + 0.01 * i + 0.001 * rng.normal(), "word_swap")  # ordered
            row(experiment, "val/pairs/acc", s, 0.9 + 0.02 * rng.normal(), "agreement")  # noise alone
            row(experiment, "val/pairs/probe/acc", s, 0.7, "word_swap")
            for name in ("word_swap", "agreement"):
                for floor, value in (("unigram", 0.5), ("bigram", 0.9), ("trigram", 0.92)):
                    row(experiment, f"val/pairs/floor/{floor}/acc", s, value, name)
    return out


def render(tmp_path: Path, order: float):
    validity = [r for s, o in (("dyck", 1), ("text", 1)) for r in validity_rows(s, o)]
    for name, frame in (("pairs", pair_rows(order)), ("validity", validity)):
        out = tmp_path / "results" / name
        axes = ["objective"] if name == "validity" else []  # which arms answer the cloze: the arm registry's
        table.write(pd.DataFrame(frame, columns=[*table.FIRST, *axes, *table.LAST]), out)
        if name == "validity":
            with_saved_configs(out)
        (out / "run.json").write_text(json.dumps({"command": f"python scripts/ablate.py --grid {name}"}))
    template = Path("results/pairs.md.j2")
    copy_templates(tmp_path, template)
    shutil.copy(ROOT / "results/measurements.yaml", tmp_path / "results/measurements.yaml")
    renderer = Renderer(tmp_path)
    _, text = renderer.render(template)
    return text, renderer.pairs("pairs", "validity")


@pytest.mark.parametrize("order", [1, -1], ids=["as text", "reversed"])
def test_dyck_pairs_are_said_to_order_arms_as_text_exactly_when_they_do(tmp_path, order):
    text, page = render(tmp_path, order)
    arms = page.arms("dyck")
    assert [a.name for a in arms] == sorted(ARMS, key=lambda a: -order * QUALITY[a])  # best first
    (pred, *_) = page.predictions()
    assert (pred.predictor, pred.target) == ("minimal pairs", "text")
    assert pred.decision.value == (1.0 if order > 0 else 0.0)
    c = pred.decision
    figure = f"{100 * c.value:.1f} ({100 * c.lo:.1f} to {100 * c.hi:.1f})"
    assert f"| minimal pairs | {TARGETS['text']} | {len(pred.arms)} | {figure} |" in text
    for a in arms:  # every arm's row is the model's
        assert f"| {a.name} | {a.zero_shot.interval.mean * 100:.1f} (" in text


def test_a_phenomenon_reproduces_when_its_arm_order_holds_over_disjoint_seeds(tmp_path):
    _, page = render(tmp_path, 1)
    found = {p.name: p for p in page.phenomena("text")}
    assert found["word_swap"].reproducibility == pytest.approx(1.0)
    assert found["agreement"].reproducibility < 0.8
    assert found["word_swap"].floors == {"unigram": 0.5, "bigram": 0.9, "trigram": 0.92}
    assert found["agreement"].seed_sd > found["word_swap"].seed_sd and not math.isnan(found["word_swap"].spread)
    assert not page.judged("text") and page.judged("dyck")


def test_a_grid_that_graded_pairs_shows_them_first_with_their_floor_and_one_that_did_not_is_unchanged(tmp_path):
    from minibert.report import grid_report
    from minibert.tables.query import Data

    with_pairs = Data(pd.DataFrame(pair_rows(1), columns=[*table.FIRST, *table.LAST]))
    section = grid_report.overview(with_pairs)
    assert section.header[3:6] == ["minimal pairs, zero-shot", "minimal pairs, probe", "best n-gram floor"]
    row = next(r for r in section.rows if r[0] == "pairs/dyck/pretrain/mlm")
    assert row[3] == str(with_pairs.stat("val/pairs/acc", experiment="pairs/dyck/pretrain/mlm"))
    assert row[5] == str(with_pairs.stat("val/pairs/floor/trigram/acc", experiment="pairs/dyck/pretrain/mlm"))
    without = Data(pd.DataFrame([r for r in validity_rows("dyck", 1)], columns=[*table.FIRST, *table.LAST]))
    assert grid_report.overview(without).header == ["experiment", "objective", "seeds", "accuracy", "ceiling", "gap"]


def test_the_distance_figure_draws_its_arms_in_one_order_whatever_the_hash_seed():
    """A set's order changes with PYTHONHASHSEED; the arms of a figure must not, or every build redraws the
    committed picture with other colours. Here, under this process's hash seed, and in a process under another."""
    import os
    import subprocess
    import sys

    from minibert.report.render import Renderer

    here = list(Renderer(ROOT).pairs("pairs").by_distance("dyck"))
    other = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    probe = ("from minibert.report.render import Renderer; "
             f"print(list(Renderer({str(ROOT)!r}).pairs('pairs').by_distance('dyck')))")  # fmt: skip
    there = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True,
                           env=os.environ | {"PYTHONHASHSEED": other}).stdout  # fmt: skip
    assert there.strip() == str(here), (here, there)
