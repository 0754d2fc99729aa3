"""What a rerun of a committed table calls reproduced: each figure against the tolerance of its kind."""

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from minibert.tables.reproduction import FINE_TUNED_WITHIN, REPRODUCED_WITHIN, compare_tables, tolerance

ROOT = Path(__file__).resolve().parents[2]


def frame(values: dict[str, float], seed: int = 0, stage: str = "pretrain") -> pd.DataFrame:
    return pd.DataFrame({"experiment": "e", "stage": stage, "seed": seed, "metric": list(values), "category": "",
                         "value": list(values.values())})  # fmt: skip


def test_a_loss_reproduces_when_the_geometric_mean_probability_of_its_answers_moves_by_at_most_one_percent():
    """A loss is a mean negative log-likelihood: a near-zero fine-tuned loss that moves by a third of its size
    (the model all but certain either way) reproduces; a pre-training loss that moves by 0.02 nats does not."""
    assert tolerance("train/loss", 0.01) == tolerance("val/loss", 3.0) == pytest.approx(math.log(1.01))
    near_zero = compare_tables(frame({"val/loss": 0.0101, "train/loss": 0.0208}),
                               frame({"val/loss": 0.0132, "train/loss": 0.0216}))  # fmt: skip
    assert near_zero.reproduced, near_zero.line()
    moved = compare_tables(frame({"val/loss": 0.50}), frame({"val/loss": 0.52}))
    assert not moved.reproduced and "e seed 0 val/loss: 0.5 committed, 0.52 now" in moved.line()


def test_shares_keep_half_a_point_and_other_figures_one_percent_of_their_size():
    assert tolerance("val/acc", 0.9) == REPRODUCED_WITHIN["share"] == 0.005
    assert tolerance("flops", 1e11) == pytest.approx(1e9)
    assert compare_tables(frame({"val/acc": 0.900}), frame({"val/acc": 0.9049})).reproduced
    assert not compare_tables(frame({"val/acc": 0.900}), frame({"val/acc": 0.906})).reproduced


def test_the_last_line_names_the_figures_furthest_outside_their_tolerance_first():
    committed = frame({f"m{i}": 100.0 for i in range(5)} | {"val/acc": 0.5})
    now = frame({"m0": 102.0, "m1": 150.0, "m2": 103.0, "m3": 100.0, "m4": 120.0, "val/acc": 0.9})
    line = compare_tables(committed, now).line()
    assert line.startswith("not reproduced: 5 of 6 figures of 1 run outside their tolerance, furthest first")
    shown = line[line.index("(") :]
    assert shown.index("val/acc") < shown.index("m1") < shown.index("m4") and "m2" not in shown
    assert line.endswith("and 2 more)")


def test_a_committed_figure_the_rerun_does_not_give_is_said():
    line = compare_tables(frame({"val/acc": 0.5, "flops": 1.0}), frame({"val/acc": 0.5})).line()
    assert line == "not reproduced: 1 committed figure not given"


def test_fine_tuned_figures_are_held_to_what_two_machines_were_measured_to_differ_by():
    """Fine-tuning carries the kernels' last bits further: its rows reproduce within the bounds measured across
    machines (and covering what was measured), a pre-training row of the same gap does not."""
    measured = yaml.safe_load((ROOT / "results/measurements.yaml").read_text())["default_across_machines"]
    assert (
        FINE_TUNED_WITHIN["share"] == measured["bounds"]["accuracy"] / 100 >= max(measured["values"]["accuracy"]) / 100
    )
    assert FINE_TUNED_WITHIN["loss"] == measured["bounds"]["loss"] >= max(measured["values"]["loss"])
    committed, now = {"val/acc": 0.900, "val/loss": 0.100}, {"val/acc": 0.906, "val/loss": 0.114}
    assert compare_tables(frame(committed, stage="finetune"), frame(now, stage="finetune")).reproduced
    moved = compare_tables(frame(committed), frame(now))
    assert len(moved.differ) == 2 and tolerance("val/acc", 0.9, "finetune") == 0.01
