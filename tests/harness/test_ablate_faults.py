"""scripts/ablate.py against concurrency, damaged and stale results, moved folders, reports that would lose
results, mistyped grids, unwritable folders, and submitit's local backend."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from minibert.ablation.grid import load_grid
from minibert.ablation.runner import plan
from minibert.metrics_history import metric_history
from minibert.training.code_version import source_hash
from tests.ablating import ROOT, RUN_SUMMARIES, TINY, ablate, csv_runs, tiny_grid

PRETRAIN = ["--only", "pretrain/*", "--seeds", "2"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The tiny grid's two pre-training experiments, seeds 0 and 1, finished: (grid file, --out)."""
    tmp = tmp_path_factory.mktemp("faults")
    grid, out = tiny_grid(tmp / "grid.yaml"), tmp / "out"
    result = ablate("--grid", str(grid), "--out", str(out), *PRETRAIN, "--workers", "2")
    assert result.returncode == 0, result.stderr
    return grid, out


def copy_of(out: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    return copy


def summaries(out: Path) -> dict[Path, dict]:
    return {p: json.loads(p.read_text()) for p in sorted(out.glob(RUN_SUMMARIES))}


@pytest.mark.slow
@pytest.mark.every_core
def test_second_runner_on_one_out_says_who_holds_it_and_the_grid_completes_once(tmp_path):
    grid, out = tiny_grid(tmp_path / "grid.yaml"), tmp_path / "out"
    args = [sys.executable, "scripts/ablate.py", "--grid", str(grid), "--out", str(out), "--only",
            "pretrain/bidirectional", "--seeds", "2", "--workers", "2"]  # fmt: skip
    procs = [subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]  # fmt: skip
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [0, 3], [err[-1500:] for _, _, err in results]
    winner = next(p for p, (status, _, _) in zip(procs, results) if status == 0)
    loser_err = next(err for status, _, err in results if status == 3)
    assert f"is in use by `python scripts/ablate.py --grid {grid} " in loser_err  # the holder, by its command
    assert f"(pid {winner.pid} on " in loser_err
    assert "Traceback" not in loser_err
    assert csv_runs(out) == Counter({("pretrain/bidirectional", "0"): 1, ("pretrain/bidirectional", "1"): 1})
    assert len(list(out.glob(RUN_SUMMARIES))) == 2
    assert "2 runs trained, 0 reused" in (out / "ablation.md").read_text()


def stat(pid: int | str) -> tuple[str, int, int] | None:
    """(state, parent, process group) of a process from /proc, or None when there is no such process."""
    try:
        state, parent, group = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[:3]
    except OSError:
        return None
    return state, int(parent), int(group)


def gone(found: tuple[str, int, int] | None) -> bool:
    """Whether a process of that `stat` has exited (no such process, or a zombie)."""
    return found is None or found[0] in ("Z", "X")


def exited(pid: int | str) -> bool:
    return gone(stat(pid))


def live_members(group: int) -> list[int]:
    """The processes of process group `group` that have not exited."""
    stats = {int(p.name): stat(p.name) for p in Path("/proc").glob("[0-9]*")}  # one read of each
    return [pid for pid, found in stats.items() if not gone(found) and found[2] == group]


@pytest.mark.slow
@pytest.mark.every_core
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_signal_ends_the_runner_in_one_message_and_the_rerun_completes_the_grid(tmp_path, signum, status):
    """SIGTERM to the runner (a scheduler) or SIGINT to its whole process group (Ctrl-C in a terminal): one
    message, no traceback from the runner, its workers or their fork server, and nothing of theirs left."""
    grid, out = tiny_grid(tmp_path / "grid.yaml"), tmp_path / "out"
    # the first run (of two, one at a time) long enough, a few seconds even on a fast machine, that the signal
    # sent once it has started lands mid-grid: at 120 steps, under half a second there, both could finish first.
    # A new dict: the grid file writes the two cells' overrides as one YAML anchor, which loads as one object
    spec = yaml.safe_load(grid.read_text())
    first = spec["experiments"][0]
    first["overrides"] = {**first["overrides"], "trainer.max_steps": 600, "trainer.val_check_interval": 600}
    grid.write_text(yaml.safe_dump(spec, sort_keys=False))
    args = ["--grid", str(grid), "--out", str(out), "--only", "pretrain/*", "--seeds", "1", "--workers", "1"]
    # SIGINT as a terminal delivers it, even when pytest itself was started in the background (where a shell
    # leaves SIGINT ignored, and a child inherits that)
    proc = subprocess.Popen([sys.executable, "scripts/ablate.py", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 120
    while not list(out.glob("runs/*/*/*/run.log")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)  # mid-grid: a run has started
    else:
        proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)  # stderr closes when the last process holding it is gone
    assert proc.returncode == status, stderr[-1500:]
    assert stderr.count("interrupted: finished runs are kept") == 1 and "Traceback" not in stderr, stderr[-1500:]
    assert "leaked semaphore" not in stderr, stderr[-1500:]  # the resource tracker frees them: no note of it
    # stderr closes as the last holder starts to exit; one still on its way out (seen once under load) is not left
    # behind, so it gets a few seconds, while an orphan would live on indefinitely
    grace = time.monotonic() + 5
    while live_members(proc.pid) and time.monotonic() < grace:
        time.sleep(0.05)
    assert not live_members(proc.pid), "a worker or the fork server outlived the runner"
    result = ablate(*args)
    assert result.returncode == 0, result.stderr
    assert csv_runs(out) == Counter({("pretrain/bidirectional", "0"): 1, ("pretrain/causal", "0"): 1})


def test_damaged_summaries_are_named_and_their_runs_redone(finished, tmp_path):
    grid, out = finished
    out = copy_of(out, tmp_path)
    cut, emptied = sorted(out.glob(RUN_SUMMARIES))[:2]
    cut.write_text(cut.read_text()[:40])  # cut off mid-file
    emptied.write_text("{}")  # JSON, but not a run's summary
    result = ablate("--grid", str(grid), "--out", str(out), *PRETRAIN, "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert f"{cut} is unreadable (JSONDecodeError" in result.stderr
    assert f"{emptied} is unreadable (it lacks step, wall_time_s, log_dir, checkpoint)" in result.stderr
    assert "2 runs trained, 2 reused" in (out / "ablation.md").read_text()
    assert all(json.loads(p.read_text())["step"] == TINY["trainer.max_steps"] for p in (cut, emptied))


def test_run_made_by_other_code_is_redone_unless_reuse_stale(finished, tmp_path):
    grid, out = finished
    out = copy_of(out, tmp_path)
    stale = sorted(out.glob(RUN_SUMMARIES))[-1]
    summary = json.loads(stale.read_text())
    assert summary["code"]["source_hash"] == source_hash() and "git_commit" in summary["code"]
    summary["code"]["source_hash"] = "0" * 16
    stale.write_text(json.dumps(summary))

    reused = ablate("--grid", str(grid), "--out", str(out), *PRETRAIN, "--reuse-stale")
    assert reused.returncode == 0, reused.stderr
    assert (
        "warning: reusing" in reused.stderr
        and "made by other code: the package changed (source 0000000000000000" in reused.stderr
    )
    assert "0 runs trained, 4 reused" in (out / "ablation.md").read_text()

    redone = ablate("--grid", str(grid), "--out", str(out), *PRETRAIN, "--workers", "1")
    assert redone.returncode == 0, redone.stderr
    assert "was made by other code" in redone.stderr and "--reuse-stale keeps it" in redone.stderr
    assert "1 runs trained, 3 reused" in (out / "ablation.md").read_text()
    assert json.loads(stale.read_text())["code"]["source_hash"] == source_hash()


def test_report_only_with_fewer_seeds_keeps_every_finished_run(finished):
    grid, out = finished
    result = ablate("--grid", str(grid), "--out", str(out), "--only", "pretrain/*", "--seeds", "1", "--report-only")
    assert result.returncode == 0, result.stderr
    assert set(csv_runs(out)) == {(e, s) for e in ("pretrain/bidirectional", "pretrain/causal") for s in ("0", "1")}


def test_report_that_would_lose_results_is_refused(finished, tmp_path):
    grid, out = finished
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}
    other = tmp_path / "other.yaml"
    other.write_text(
        yaml.safe_dump(
            {
                "experiments": [
                    {
                        "name": "other/run",
                        "job_type": "pretrain",
                        "configs": ["configs/pretrain.yaml"],
                        "overrides": TINY,
                    }
                ]
            }
        )
    )
    subset = yaml.safe_load(grid.read_text())
    subset["experiments"], subset["claims"] = subset["experiments"][:1], []  # pretrain/bidirectional alone
    (tmp_path / "subset.yaml").write_text(yaml.safe_dump(subset))

    empty = ablate("--grid", str(other), "--out", str(out), "--report-only")
    assert empty.returncode == 2 and "no finished run of this grid" in empty.stderr
    smaller = ablate("--grid", str(tmp_path / "subset.yaml"), "--out", str(out), "--seeds", "2", "--report-only")
    assert smaller.returncode == 2
    assert "holds 2 run(s) this one would drop (pretrain/causal seed 0, pretrain/causal seed 1)" in smaller.stderr
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert after == before, "a refused report leaves every file as it was"


def test_moved_results_keep_their_curves_and_fine_tuning_loads_the_moved_checkpoint(finished, tmp_path):
    grid, out = finished
    moved = tmp_path / "moved"
    out.rename(moved)  # the original location is gone while the moved copy is used
    try:
        for run_summary in summaries(moved).values():
            assert not Path(run_summary["log_dir"]).is_absolute() and not Path(run_summary["checkpoint"]).is_absolute()
        runs = [r for r in plan(list(load_grid(grid, ROOT).experiments), [0], moved, ROOT) if r.done]
        assert runs and all(metric_history(r.path(r.summary()["log_dir"]), "val/acc") for r in runs)
        result = ablate("--grid", str(grid), "--out", str(moved), "--only", "finetune/full", "--seeds", "1")
        assert result.returncode == 0, result.stderr
        (config,) = moved.glob("runs/finetune/full/seed0-*/lightning_logs/version_0/config.yaml")
        encoder_ckpt = Path(yaml.safe_load(config.read_text())["model"]["init_args"]["encoder_ckpt"])
        assert encoder_ckpt.is_file() and moved in encoder_ckpt.parents
    finally:
        for finetune in moved.glob("runs/finetune"):
            shutil.rmtree(finetune)  # leave the fixture as it was for the other tests
        moved.rename(out)


def test_metric_name_typo_is_named_with_what_the_runs_log(finished, tmp_path):
    grid, out = finished
    typo = yaml.safe_load(grid.read_text())
    typo["claims"][0]["lower"]["metric"] = "val/acc_openr"
    (tmp_path / "typo.yaml").write_text(yaml.safe_dump(typo))
    result = ablate("--grid", str(tmp_path / "typo.yaml"), "--out", str(out), "--seeds", "2", "--report-only")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert "claims[0] names metric 'val/acc_openr'" in line and "did you mean 'val/acc_opener'?" in line


def test_an_out_under_a_file_is_one_line_with_status_2_before_anything_runs(finished, tmp_path):
    grid, _ = finished
    (tmp_path / "a_file").write_text("")
    result = ablate("--grid", str(grid), "--out", str(tmp_path / "a_file" / "out"), "--report-only")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("ablate.py: error: --out") and "a_file is a file, so no folder can be made under it" in line


@pytest.mark.slow
@pytest.mark.every_core
def test_submitit_local_backend_gives_the_same_metrics_as_local_workers(finished, tmp_path):
    grid, out = finished
    result = ablate("--grid", str(grid), "--out", str(tmp_path / "submitit"), "--only", "pretrain/bidirectional",
                    "--seeds", "1", "--executor", "submitit-local")  # fmt: skip
    assert result.returncode == 0, result.stderr
    ((path, got),) = summaries(tmp_path / "submitit").items()
    want = json.loads((out / path.relative_to(tmp_path / "submitit")).read_text())  # same key, same folder name
    metrics = [k for k in want if k.startswith(("val/", "train/"))] + ["step"]
    assert {k: got[k] for k in metrics} == {k: want[k] for k in metrics}
    assert list((tmp_path / "submitit" / ".submitit").glob("*/*_result.pkl")), "it really went through submitit"


def test_source_hash_follows_the_training_code_not_the_report(tmp_path):
    package = tmp_path / "minibert"
    shutil.copytree(ROOT / "minibert", package, ignore=shutil.ignore_patterns("__pycache__"))
    first = source_hash.__wrapped__(package)
    assert first == source_hash()
    for reader in (
        "report/render.py",
        "tables/stats.py",
        "stats/agreement.py",
        "export/write.py",
        "stats/intervals.py",
    ):
        (package / reader).write_text((package / reader).read_text() + "\n# reads results only\n")
    assert source_hash.__wrapped__(package) == first
    (package / "model.py").write_text((package / "model.py").read_text() + "\n# an edit\n")
    assert source_hash.__wrapped__(package) != first


@pytest.mark.slow  # a fresh interpreter importing lightning: 10-30 s
def test_no_training_code_imports_what_the_source_hash_leaves_out():
    """The training entry point and the runner's run-side modules import none of NOT_HASHED: an edit there cannot
    change a result (minibert.sweep, which drives the runner, reads tables to write its report, after the runs)."""
    from minibert.training.code_version import NOT_HASHED

    left_out = [f"minibert.{p.removesuffix('/').removesuffix('.py').replace('/', '.')}" for p in NOT_HASHED]
    probe = ("import sys, minibert.training.cli, minibert.objectives, minibert.languages, minibert.ablation.runner, "
             "minibert.ablation.preflight, minibert.ablation.executors; print(' '.join(sys.modules))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    imported = loaded.stdout.split()
    assert "minibert.training.cli" in imported
    assert [m for m in imported if m.startswith(tuple(left_out))] == []


def test_cut_off_metrics_csv_keeps_the_rows_that_parse(tmp_path):
    (tmp_path / "metrics.csv").write_text("epoch,step,train/loss,val/acc\n0,9,2.5,\n0,1\x00\x00,2.1,0.4\n0,29,1.9\n0,3")
    assert metric_history(tmp_path, "train/loss") == [(10, 2.5), (30, 1.9)]  # the garbled and cut-off rows left out
    assert metric_history(tmp_path, "val/acc") == []


def test_lock_of_a_killed_runner_does_not_block_the_next(tmp_path):
    from minibert.ablation.lock import LOCK_NAME, Busy, OutLock, check_free

    holder = subprocess.Popen(
        [sys.executable, "-c", f"from minibert.ablation.lock import OutLock\nwith OutLock({str(tmp_path)!r}):\n"
         "    print('held', flush=True)\n    import time; time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(Busy, match=f"in use by `python -c [^`\\n]*` \\(pid {holder.pid} on "):
        OutLock(tmp_path).__enter__()
    with pytest.raises(Busy, match=f"in use by `python -c [^`\\n]*` \\(pid {holder.pid} on "):
        check_free(tmp_path)  # the same answer without taking the lock
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    check_free(tmp_path)
    with OutLock(tmp_path):  # the kernel dropped the dead holder's lock; the file left behind is harmless
        assert (tmp_path / LOCK_NAME).is_file()


PLUGIN = '''"""A plug-in objective outside the package: BERT's MLM under another name."""
from minibert.objectives import MaskedLM


class PluggedMLM(MaskedLM):
    pass
'''


def test_editing_a_plugin_retrains_the_runs_that_use_it_and_reuses_the_others(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "plugged_mlm.py").write_text(PLUGIN)
    objective = tmp_path / "plugged.yaml"
    objective.write_text("model:\n  init_args:\n    objective:\n      class_path: plugged_mlm.PluggedMLM\n")
    grid = tmp_path / "grid.yaml"
    cell = {"job_type": "pretrain", "overrides": TINY}
    grid.write_text(yaml.safe_dump({"experiments": [
        {"name": "pretrain/plain", "configs": ["configs/pretrain.yaml"], **cell},
        {"name": "pretrain/plugged", "configs": ["configs/pretrain.yaml", str(objective)], **cell},
    ]}))  # fmt: skip
    args = ["--grid", str(grid), "--out", str(tmp_path / "out"), "--seeds", "1", "--workers", "2"]
    first = ablate(*args, "--plugins", str(plugins))
    assert first.returncode == 0, first.stderr
    (run,) = (tmp_path / "out/runs/pretrain/plugged").glob("seed0-*")
    assert set(json.loads((run / "summary.json").read_text())["code"]["plugins"]) == {"plugged_mlm"}

    unchanged = ablate(*args, "--plugins", str(plugins))
    assert "0 runs trained, 2 reused" in (tmp_path / "out/ablation.md").read_text(), unchanged.stderr

    (plugins / "plugged_mlm.py").write_text(PLUGIN + "# edited\n")
    edited = ablate(*args, "--plugins", str(plugins))
    assert edited.returncode == 0, edited.stderr
    assert "pretrain/plugged seed=0 was made by other code: its plug-in plugged_mlm changed" in edited.stderr
    assert "pretrain/plain seed=0 was made" not in edited.stderr
    assert "1 runs trained, 1 reused" in (tmp_path / "out/ablation.md").read_text()


def test_a_run_whose_plugin_cannot_be_located_is_stale(tmp_path):
    from minibert.ablation.runner import triage

    grid = load_grid(tiny_grid(tmp_path / "grid.yaml"), root=ROOT)
    (run,) = plan([grid["pretrain/causal"]], [0], tmp_path / "out", ROOT)
    run.run_dir.mkdir(parents=True)
    code = {"source_hash": source_hash(), "plugins": {"nowhere_to_be_found": "0" * 16}}
    summary = {"step": 1, "wall_time_s": 1.0, "log_dir": ".", "checkpoint": "x", "code": code}
    (run.run_dir / "summary.json").write_text(json.dumps(summary))
    plan_ = triage([run])
    assert plan_.todo == [run] and "its plug-in nowhere_to_be_found cannot be located now" in plan_.notes[0]


CELL = {"job_type": "pretrain", "configs": ["configs/pretrain.yaml"], "overrides": TINY}
BAD_CELLS = {
    "override typo": ({**CELL, "name": "pretrain/typo", "overrides": {**TINY, "trainer.max_stepz": 2}}, None,
                      ["cell pretrain/typo", "max_stepz"]),
    "missing plug-in": ({**CELL, "name": "pretrain/plug", "overrides": {
        **TINY, "model.init_args.objective.class_path": "not_installed_anywhere.Objective"}}, None,
        ["cell pretrain/plug", "No module named 'not_installed_anywhere'", "--plugins"]),
    "claim on a metric no cell logs": (None, {"text": "x", "value": {"experiment": "pretrain/bidirectional",
                                                                     "metric": "val/acc_kind_maskk"}, "at_least": 0.5},
                                       ["claims[1]", "val/acc_kind_maskk", "will not log", "val/acc_kind_mask"]),
    "fine-tuning an encoder of another language": ({
        "name": "finetune/dyck_encoder", "job_type": "finetune", "configs": ["configs/finetune.yaml"],
        "overrides": {**TINY, "model.init_args.regime": "full"}, "encoder_from": "pretrain/dyck"}, None,
        ["cell finetune/dyck_encoder", "encoder_ckpt=", "pre-trained with vocab_size=10", "fine-tune on the language"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_CELLS))
def test_a_cell_that_cannot_be_built_stops_the_grid_before_anything_trains(tmp_path, case):
    cell, claim, fragments = BAD_CELLS[case]
    extra = [cell] if cell else []
    if case.startswith("fine-tuning"):
        extra.insert(
            0, {**CELL, "name": "pretrain/dyck", "configs": ["configs/pretrain.yaml", "configs/languages/dyck.yaml"]}
        )
    grid = tiny_grid(tmp_path / "grid.yaml", extra)
    if claim:
        data = yaml.safe_load(grid.read_text())
        data["claims"].append(claim)
        grid.write_text(yaml.safe_dump(data))
    result = ablate("--grid", str(grid), "--out", str(tmp_path / "out"), "--seeds", "2")
    assert result.returncode == 2, result.stderr[-2000:]
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("ablate.py: error: ") and all(f in line for f in fragments), line
    assert not list((tmp_path / "out").glob("runs/*/*/run.log"))  # nothing was launched


def test_report_only_without_seeds_reports_the_seeds_in_out(finished, tmp_path):
    grid, out = finished
    out = copy_of(out, tmp_path)
    for report in [*out.glob("ablation.*"), out / "results.csv", out / "run.json"]:  # this one starts from the runs
        report.unlink(missing_ok=True)
    result = ablate("--grid", str(grid), "--out", str(out), "--only", "pretrain/*", "--report-only")
    assert result.returncode == 0, result.stderr
    assert "have no result" not in result.stderr, result.stderr
    assert {("pretrain/bidirectional", "0"), ("pretrain/bidirectional", "1")} <= set(csv_runs(out))


FULL_DISK = '''import errno

import lightning as L


class FullDisk(L.Callback):
    """Fails the run as a full disk would, when training starts."""

    def on_train_start(self, trainer, pl_module):
        raise OSError(errno.ENOSPC, "No space left on device", "/the/full/disk/last.ckpt")
'''


def test_a_run_the_machine_cannot_write_ends_the_grid_with_status_3_naming_the_file(tmp_path):
    (tmp_path / "full_disk.py").write_text(FULL_DISK)
    layer = tmp_path / "full.yaml"
    layer.write_text("trainer:\n  callbacks:\n    - class_path: full_disk.FullDisk\n")
    grid = tmp_path / "grid.yaml"
    cells = [{"name": "pretrain/ok", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"], "overrides": TINY},
             {"name": "pretrain/full", "job_type": "pretrain", "configs": ["configs/pretrain.yaml", str(layer)],
              "overrides": TINY}]  # fmt: skip
    grid.write_text(yaml.safe_dump({"experiments": cells}))
    out = tmp_path / "out"
    result = ablate("--grid", str(grid), "--out", str(out), "--seeds", "1", "--plugins", str(tmp_path))
    assert result.returncode == 3, result.stderr[-2000:]
    line = result.stderr.strip().splitlines()[-1]
    assert "1 runs could not write '/the/full/disk/last.ckpt': No space left on device" in line, line
    assert (out / "ablation.md").is_file() and len(list(out.glob(RUN_SUMMARIES))) == 1  # the rest is kept


@pytest.mark.slow  # a real process of its own: with the claims
def test_executor_slurm_without_slurm_is_one_line_with_status_3_before_anything_starts(tmp_path):
    grid, out = tiny_grid(tmp_path / "grid.yaml"), tmp_path / "out"
    env = {**os.environ, "PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                                 if not (Path(p) / "sbatch").exists())}  # fmt: skip
    result = ablate("--grid", str(grid), "--out", str(out), "--executor", "slurm", env=env)
    assert result.returncode == 3, result.stderr[-2000:]
    line = result.stderr.strip()
    assert "\n" not in line and "needs SLURM" in line and "no sbatch on PATH" in line, line
    assert not out.exists()


@pytest.mark.slow
def test_local_workers_die_with_a_runner_killed_alone(tmp_path):
    """SIGKILL on the runner process only (not its group) still ends its workers, so no orphan finishes a run
    behind a killed runner's back; nor does the fork server they came from stay behind."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the test reads /proc")
    script = (
        "import os, time\n"
        "from minibert.ablation.executors import LocalPool\n"
        "pool = LocalPool(2)\n"
        "jobs = [pool.submit(time.sleep, 600) for _ in range(2)]\n"
        "while len(pool.pool._processes) < 2: time.sleep(0.05)\n"
        "print(*pool.pool._processes, flush=True)\n"
        "time.sleep(600)\n"
    )
    runner = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)  # fmt: skip
    workers = [int(p) for p in runner.stdout.readline().split()]
    workers += {stat(p)[1] for p in workers}  # and their fork server
    try:
        assert len(workers) == 3 and not any(exited(p) for p in workers)  # two workers and the fork server
        os.kill(runner.pid, signal.SIGKILL)  # the runner alone: its workers get no signal from us
        runner.wait(timeout=30)
        deadline = time.monotonic() + 20
        while not all(exited(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(exited(p) for p in workers), "a worker or the fork server outlived the runner"
    finally:
        for p in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


@pytest.mark.slow
def test_local_workers_run_this_checkout_preloaded_on_one_thread_from_any_directory(tmp_path):
    """The fork server imports this checkout's minibert and lightning before any job, whatever directory the
    runner started in and whatever else is installed, and loads BLAS and OpenMP for one thread, as the
    workers train; a worker's environment is the runner's."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the test reads /proc")
    probe = ("(__import__('minibert').__file__, 'lightning' in __import__('sys').modules, "
             "__import__('os').environ.get('ASKED'), len(__import__('os').listdir('/proc/self/task')))")  # fmt: skip
    script = (
        "from minibert.ablation.executors import LocalPool, start_fork_server\n"
        "start_fork_server()\n"
        "import os; os.environ['ASKED'] = 'yes'  # set after the server started\n"
        "with LocalPool(1) as pool:\n"
        f"    print(pool.submit(eval, {probe!r}).result())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "PYTHONPATH")}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    module, preloaded, asked, threads = eval(done.stdout.strip().splitlines()[-1])
    assert Path(module) == ROOT / "minibert" / "__init__.py" and preloaded
    assert asked == "yes"
    assert threads == 2  # the worker's own and its watch on the runner: no BLAS or OpenMP pool
