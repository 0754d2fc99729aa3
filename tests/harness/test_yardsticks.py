"""The committed yardsticks a plug-in's comparison pairs with (minibert.compare.committed): a committed run stands
in for the comparison's own only where its key is the same and today's code made it; a table that is stale or
damaged is said in one line; the rows borrowed are read as the folder's own by every reader of its table. And
the figure each pair is judged on (minibert.compare.yardsticks.judged_figures)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from minibert.ablation.grid import load_grid
from minibert.ablation.runner import plan
from minibert.compare import committed
from minibert.compare.comparison import Pair
from minibert.compare.yardsticks import PluginGrid, judged_figures
from minibert.tables import provenance, table
from minibert.tables.table import TableError
from minibert.training.code_version import source_hash

ROOT = Path(__file__).resolve().parents[2]
GAP, ZERO, PROBE = "val/gap/acc", "val/pairs/acc", "val/pairs/probe/acc"


def _made(pairs: list[Pair], measures: dict[str, str], judged=(GAP, ZERO)) -> PluginGrid:
    return PluginGrid(Path("grid.yaml"), pairs, {}, {"d": list(judged)}, {"d": "why first"}, measures)


def test_each_pair_is_judged_on_the_first_declared_figure_both_arms_have_and_says_why():
    arms = {"new": "cloze", "mlm": "cloze", "next_token": "next_token", "electra": "", "blind": "cloze"}
    keys = {f"d/pretrain/{a}": {GAP, ZERO, PROBE} for a in arms}
    keys["d/pretrain/electra"] = {ZERO, PROBE}  # its own task is no cloze: it logs no gap of the masked tokens
    keys["d/pretrain/blind"] = {GAP, PROBE}  # grades cloze, scores no sentence
    pairs = [Pair("d/pretrain/new", f"d/pretrain/{b}", GAP, None, "d") for b in arms if b != "new"]
    kept, notes = judged_figures(_made(pairs, {f"d/pretrain/{a}": m for a, m in arms.items()}), keys)
    assert [p.metric for p in kept] == [GAP, ZERO, ZERO, GAP]
    assert "judged on val/gap/acc: why first, and both grade cloze" in notes[0]
    assert "val/gap/acc grades each arm's own task (new: cloze, next_token: next_token)" in notes[1]
    assert "new or electra does not log val/gap/acc" in notes[2]
    # with the gap ruled out, an arm that scores no sentence is read by the probe
    blind = [Pair("d/pretrain/new", "d/pretrain/blind", ZERO, None, "d")]
    kept, notes = judged_figures(_made(blind, {"d/pretrain/new": "cloze", "d/pretrain/blind": "cloze"}, (ZERO,)),
                                 keys)  # fmt: skip
    assert kept[0].metric == PROBE and "blind cannot score a sentence" in notes[0]


def test_a_language_where_no_declared_figure_serves_a_pair_is_left_out_in_one_line():
    floor = "val/pairs/floor/bigram/acc_dist_1"  # pairs graded, but no cell beyond the floors: no probe figure
    keys = {"d/pretrain/new": {floor}, "d/pretrain/mlm": {floor}}
    pairs = [Pair("d/pretrain/new", "d/pretrain/mlm", ZERO, None, "d")]
    kept, notes = judged_figures(_made(pairs, {"d/pretrain/new": "cloze", "d/pretrain/mlm": "cloze"}), keys)
    assert kept == [] and notes[0].startswith("d: left out:") and "judge it with --finetune" in notes[0]


def _committed(tmp_path: Path, monkeypatch, code: str | None, seeds=(0, 1, 2)):
    """A grid of two shipped arms, and a committed table of `seeds` of each with their keys, made by `code`."""
    grid_path = tmp_path / "grid.yaml"
    grid_path.write_text(yaml.safe_dump({"experiments": [
        {"name": f"d/pretrain/{a}", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"],
         "overrides": {"budget.flops": 1e9, "data.val_seed": None, "pair_eval.required": True}}
        for a in ("mlm", "span")]}))  # fmt: skip
    grid = load_grid(grid_path, root=ROOT)
    folder = tmp_path / "results/yardsticks/d"
    folder.mkdir(parents=True)
    rows = [{"grid": "grid", "experiment": r.experiment.name, "stage": "pretrain", "seed": r.seed, "val_seed": r.seed,
             "metric": GAP, "category": "", "value": 0.1 + r.seed / 100, "n": 100, "run": r.key, "code": code}
            for r in plan(grid.select(["d/pretrain/*"]), list(seeds), tmp_path / "out", ROOT)]  # fmt: skip
    pd.DataFrame(rows).to_csv(folder / table.FILE, index=False)
    monkeypatch.setattr(committed, "committed_folder", lambda language: tmp_path / "results/yardsticks" / language)
    return grid, folder


def _own_table(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"grid": "grid", "experiment": "d/pretrain/new", "stage": "pretrain", "seed": s, "val_seed": s,
                   "metric": GAP, "category": "", "value": 0.05, "n": 100, "run": "abc", "code": source_hash()}
                  for s in range(4)]).to_csv(out / table.FILE, index=False)  # fmt: skip


def test_committed_runs_of_todays_code_stand_in_for_the_shipped_arms_and_every_reader_of_the_table_sees_them(
    tmp_path, monkeypatch
):
    grid, _ = _committed(tmp_path, monkeypatch, source_hash())
    out = tmp_path / "out"
    _own_table(out)
    found = committed.borrow(grid, ["d/pretrain/mlm", "d/pretrain/span"], [0, 1, 2, 3], out)
    assert found.covered == {(a, s) for a in ("d/pretrain/mlm", "d/pretrain/span") for s in (0, 1, 2)}
    assert not found.trains("d/pretrain/mlm", [0, 1, 2]) and found.trains("d/pretrain/mlm", [2, 3])  # 3 is not held
    assert "paired with the committed runs of mlm (seeds 0-2), span (seeds 0-2)" in found.notes[0]
    found.write(out, [0, 1])  # the rows of the seeds looked at: the folder's pages show what the verdicts read
    assert set(table.read(out).query("experiment == 'd/pretrain/mlm'").seed) == {0, 1}
    found.write(out, [0, 1, 2, 3])
    t = table.read(out)
    assert set(t.experiment) == {"d/pretrain/new", "d/pretrain/mlm", "d/pretrain/span"}
    assert set(table.read(out, borrowed=False).experiment) == {"d/pretrain/new"}  # what the folder made itself
    # a run the folder made itself wins over the committed one of the same arm and seed
    own = pd.read_csv(out / table.FILE)
    mine = own.iloc[[0]].assign(experiment="d/pretrain/mlm", seed=0, value=0.9)
    pd.concat([own, mine]).to_csv(out / table.FILE, index=False)
    t = table.read(out)
    assert t[(t.experiment == "d/pretrain/mlm") & (t.seed == 0)].value.tolist() == [0.9]
    fresh = committed.borrow(grid, ["d/pretrain/mlm"], [0, 1], out, fresh=True)
    fresh.write(out, [0, 1])
    assert fresh.covered == set() and not (out / table.BORROWED).exists()  # --fresh-yardsticks: nothing borrowed


def test_a_stale_committed_table_is_said_in_one_line_and_trains_the_arms(tmp_path, monkeypatch):
    grid, _ = _committed(tmp_path, monkeypatch, "0123456789abcdef")
    out = tmp_path / "out"
    _own_table(out)
    found = committed.borrow(grid, ["d/pretrain/mlm", "d/pretrain/span"], [0, 1], out)
    assert found.covered == set()
    (note,) = found.notes
    assert "yardsticks of mlm, span in" in note and "stale (made by code 0123456789abcdef, not today's" in note
    assert note.endswith(f"`{provenance.REFRESH.format(language='d')}` refreshes them")
    (line,) = provenance.stale_yardsticks(tmp_path)  # and python -m minibert.report --check fails on it
    assert "results/yardsticks/d: runs by code 0123456789abcdef" in line
    assert f"{provenance.REFRESH.format(language='d')}` refreshes it" in line


def test_a_committed_table_of_todays_code_but_other_configs_is_stale_too(tmp_path):
    folder = tmp_path / "results/yardsticks/dyck"
    folder.mkdir(parents=True)
    pd.DataFrame([{"grid": "grid", "experiment": "dyck/pretrain/mlm", "stage": "pretrain", "seed": 0, "val_seed": 0,
                   "metric": GAP, "category": "", "value": 0.1, "n": 100, "run": "0123456789ab",
                   "code": source_hash()}]).to_csv(folder / table.FILE, index=False)  # fmt: skip
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    committed.yardstick_grid("configs/compare.yaml", "dyck", folder)
    (line,) = provenance.stale_yardsticks(tmp_path)
    assert "1 of its runs are not what its grid plans with today's configs" in line


def test_a_resumed_comparison_whose_committed_runs_no_longer_stand_in_is_refused_in_one_line(tmp_path, monkeypatch):
    """Its looks rested on committed runs; with them stale (or --fresh-yardsticks) they would count as missing, at
    their arm's worst, and the verdict would lean on that: refused, not continued."""
    from minibert.compare.comparison import ComparisonError, Design
    from minibert.compare.session import _still_paired

    grid, _ = _committed(tmp_path, monkeypatch, source_hash())
    out = tmp_path / "out"
    _own_table(out)
    pairs = [Pair("d/pretrain/new", "d/pretrain/mlm", GAP)]
    design = Design(pairs, 10)
    paired = committed.borrow(grid, ["d/pretrain/mlm"], [0, 1, 2], out)
    paired.write(out, [0, 1, 2])
    looks = {pairs[0].label: 3}
    _still_paired(out, design, looks, paired, out / "comparisons/verdicts.json")  # still standing in: continues
    gone = committed.borrow(grid, ["d/pretrain/mlm"], [0, 1, 2], out, fresh=True)
    with pytest.raises(ComparisonError, match=r"paired d/pretrain/mlm's seeds 0, 1, 2 with committed runs that no"):
        _still_paired(out, design, looks, gone, out / "comparisons/verdicts.json")


def test_a_damaged_committed_table_is_one_line_naming_the_file(tmp_path, monkeypatch):
    grid, folder = _committed(tmp_path, monkeypatch, source_hash())
    (folder / table.FILE).write_text("grid,experiment\n")
    with pytest.raises(TableError, match=f"{folder / table.FILE}: lacks the column"):
        committed.borrow(grid, ["d/pretrain/mlm"], [0], tmp_path / "out")


def test_the_committed_yardsticks_are_todays_and_pair_with_a_plugin_comparisons_runs():
    """The shipped table: every run by today's training code (else `python -m minibert.report --check` fails),
    the seeds compare's cap reaches for every arm configs/compare.yaml lists, and the keys a plug-in's grid
    plans for them (so its seed s pairs with the committed seed s)."""
    assert provenance.stale_yardsticks(ROOT) == []
    spec = yaml.safe_load((ROOT / "configs/compare.yaml").read_text())["languages"]
    for folder in sorted((ROOT / provenance.YARDSTICKS).glob("*/")):
        t = table.read(folder)
        arms = {f"{folder.name}/pretrain/{a}" for a in spec[folder.name]["arms"]}
        assert set(t.experiment) == arms
        assert all(set(t[t.experiment == a].seed) == set(range(40)) for a in arms)
        grid = load_grid(committed.yardstick_grid("configs/compare.yaml", folder.name), root=ROOT)
        keys = {r.key for r in plan(list(grid.experiments), list(range(40)), folder, ROOT)}
        assert set(t.run) == keys


def test_the_yardsticks_command_refuses_a_language_it_does_not_know_before_importing_torch():
    import subprocess

    done = subprocess.run([sys.executable, "scripts/yardsticks.py", "--languages", "klingon"], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "'klingon' is not in configs/compare.yaml" in done.stderr.strip().splitlines()[-1]


def test_a_large_narrow_file_is_written_gzipped_read_back_alike_and_replaced_by_a_small_one(tmp_path, monkeypatch):
    rows = [{"grid": "g", "experiment": "e", "stage": "pretrain", "seed": s, "val_seed": s, "metric": GAP,
             "category": c, "value": 0.1 * s, "n": 10, "run": f"r{s}", "code": "x"}
            for s in range(3) for c in ("", "opener", "closer")]  # fmt: skip
    frame = pd.DataFrame(rows)
    monkeypatch.setattr(table, "LARGE", 100)  # bytes: these category rows are over it
    written = table.write(frame, tmp_path)
    assert [p.name for p in written] == ["results.csv", "categories.csv.gz"]
    back = table.read(tmp_path)
    assert len(back) == len(frame) and set(back.category) == {"", "opener", "closer"}
    monkeypatch.setattr(table, "LARGE", 1 << 20)
    assert [p.name for p in table.write(frame, tmp_path)] == ["results.csv", "categories.csv"]
    assert not (tmp_path / "categories.csv.gz").exists() and len(table.read(tmp_path)) == len(frame)


def test_borrowed_runs_are_read_from_their_committed_table_and_a_missing_one_is_one_line(tmp_path, monkeypatch):
    grid, folder = _committed(tmp_path, monkeypatch, source_hash())
    out = tmp_path / "out"
    _own_table(out)
    found = committed.borrow(grid, ["d/pretrain/mlm"], [0, 1], out)
    found.write(out, [0, 1])
    assert (out / table.BORROWED).stat().st_size < 1000  # the runs named, not their rows copied
    assert set(table.read(out).query("experiment == 'd/pretrain/mlm'").seed) == {0, 1}
    shutil.rmtree(folder)
    with pytest.raises(TableError, match="borrows runs of .*, which holds no table"):
        table.read(out)
