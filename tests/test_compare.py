"""scripts/compare.py on a tiny grid: paired seeds (one data stream and one starting encoder per seed), the
pilot sizing the rest, a verdict from the paired interval, runs shared with the grid's table, and the
comparison on the first screen of the grid's report; bad input in one line with status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from minibert.ablation.grid import load_grid
from minibert.report import grid_report, table

ROOT = Path(__file__).resolve().parent.parent
TINY = {"trainer.max_steps": 6, "trainer.val_check_interval": 6, "data.val_size": 64, "data.val_batch_size": 64,
        "data.val_seed": None}  # fmt: skip


def grid_file(tmp_path: Path) -> Path:
    experiments = [
        {"name": "p/mlm", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"], "overrides": TINY},
        {"name": "p/span", "job_type": "pretrain", "overrides": TINY,
         "configs": ["configs/pretrain.yaml", "configs/objectives/span.yaml"]},
    ]  # fmt: skip
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump({"experiments": experiments}))
    return path


@pytest.fixture(scope="module")
def compared(tmp_path_factory, scripts):
    tmp = tmp_path_factory.mktemp("compare")
    grid, out = grid_file(tmp), tmp / "out"
    argv = ["--grid", str(grid), "--out", str(out), "--arms", "p/mlm,p/span", "--metric", "val/acc",
            "--half-width", "0.5", "--pilot", "3", "--max-seeds", "4", "--workers", "2", "--name", "c"]  # fmt: skip
    code = scripts("compare").main(argv)
    return code, out, json.loads((out / "comparisons" / "c.json").read_text())


def test_compare_runs_paired_seeds_and_gives_a_verdict(compared):
    code, out, result = compared
    assert code == 0
    assert result["seeds"] == [0, 1, 2]  # a half-width of 50 points needs no more than the pilot
    (pair,) = result["pairs"]
    assert (pair["a"], pair["b"]) == ("p/mlm", "p/span")
    assert pair["lo"] <= pair["mean"] <= pair["hi"] and pair["hi"] - pair["lo"] <= 2 * 0.5
    assert pair["verdict"] in ("A better", "B better", "equivalent within ±0.5", "undecided")
    assert (out / "comparisons" / "c.md").read_text().count("| p/mlm | p/span |") == 1
    accuracy = table.read(out).query("metric == 'val/acc' and category == ''")  # the runs are the grid's
    assert sorted(zip(accuracy["experiment"], accuracy["seed"])) == [(a, s) for a in ("p/mlm", "p/span")
                                                                     for s in (0, 1, 2)]  # fmt: skip
    grid_report.write(out, load_grid(out.parent / "grid.yaml", ROOT))  # its report, once the comparison is recorded
    answer = (out / "ablation.md").read_text().split("## How it was run", 1)[0]
    (row,) = [line.split(" | ") for line in answer.splitlines() if line.startswith("| mlm vs span: val/acc")]
    assert row[2] == "3" and row[3].removesuffix(" |") in ("mlm better", "span better", "undecided")


def test_seed_s_gives_both_arms_one_data_stream_and_one_starting_encoder(compared):
    _, out, _ = compared
    for seed in (0, 1, 2):
        summaries = [json.loads(p.read_text()) for p in sorted(out.glob(f"runs/p/*/seed{seed}-*/summary.json"))]
        assert len(summaries) == 2
        assert summaries[0]["seeds"] == summaries[1]["seeds"] == {"seed_everything": seed, "init": seed,
                                                                  "data": seed, "val": seed}  # fmt: skip


def test_more_seeds_when_the_pilot_spread_calls_for_them(compared, scripts):
    _, out, _ = compared
    argv = ["--grid", str(out.parent / "grid.yaml"), "--out", str(out), "--arms", "p/mlm,p/span",
            "--metric", "val/acc", "--half-width", "0.0001", "--pilot", "3", "--max-seeds", "4",
            "--workers", "2", "--name", "d"]  # fmt: skip
    assert scripts("compare").main(argv) == 0
    result = json.loads((out / "comparisons" / "d.json").read_text())
    assert result["seeds"] == [0, 1, 2, 3]  # capped
    assert result["pairs"][0]["capped"] is True
    assert result["pairs"][0]["verdict"] in ("A better", "B better", "undecided at the cap")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"--arms": "p/mlm,p/nope"}, "'p/nope' is not an experiment"),
        ({"--arms": "p/mlm"}, "two or more"),
        ({"--half-width": "0"}, "--half-width=0.0: must be > 0"),
        ({"--pilot": "1"}, "at least 2"),
        ({"--max-seeds": "2"}, "at least --pilot"),
    ],
)
def test_bad_input_is_one_line_with_status_2(tmp_path, scripts, capsys, change, fragment):
    args = {"--grid": str(grid_file(tmp_path)), "--out": str(tmp_path / "out"), "--arms": "p/mlm,p/span",
            "--metric": "val/acc", "--half-width": "0.01", "--pilot": "3", "--max-seeds": "4", **change}  # fmt: skip
    try:
        code = scripts("compare").main([x for kv in args.items() for x in kv])
    except SystemExit as exited:  # argparse's own errors
        code = exited.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and fragment in err[-1] and "Traceback" not in "\n".join(err)
    assert not (tmp_path / "out").exists()  # nothing trained
