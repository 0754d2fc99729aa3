"""scripts/ablate.py on a tiny grid: outputs (the grid's table, how it was run, its report), resumption,
kills, failures and bad input."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import lightning as L
import pandas as pd
import pytest
import yaml

from minibert.ablation.grid import load_grid
from minibert.report.render import publish
from minibert.tables import saved, table
from minibert.tables.query import Data
from minibert.training import code_version
from tests.ablating import ROOT, RUN_SUMMARIES, TINY, ablate, csv_runs, made, tiny_grid


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ablate")
    grid, out = tiny_grid(tmp / "grid.yaml"), tmp / "out"
    result = ablate("--grid", str(grid), "--out", str(out), "--seeds", "2", "--workers", "2")
    return grid, out, result


def test_tiny_grid_writes_its_table_how_it_ran_and_its_report(finished):
    grid, out, result = finished
    assert result.returncode == 0, result.stderr
    assert csv_runs(out) == Counter(
        {(e, s): 1 for e in ("pretrain/bidirectional", "pretrain/causal", "finetune/full") for s in ("0", "1")}
    )
    assert {p.name for p in out.glob("[!.]*") if p.is_file()} == {
        "results.csv", "categories.csv", "curves.csv", "code.csv", "run.json", "family.json", "verdicts.csv",
        "ablation.md", "dashboard.html", "claims.png", "curves.png", "categories.png", "results.csv.seal",
        "categories.csv.seal", "curves.csv.seal", "code.csv.seal", "verdicts.csv.seal"}  # fmt: skip
    assert "6 runs trained, 0 reused" in made(out)["wall time of this invocation"]
    # the family its verdicts are held over, recorded before the first run trained: a grid outside the configs has
    # its claims
    family = json.loads((out / "family.json").read_text())["declared"]
    assert family == ["pretrain/bidirectional val/acc[opener] vs pretrain/causal val/acc[opener]"]
    typed = made(out)["figures"]  # the same, typed, for pages: not listed among how the grid was run
    assert (typed["runs_trained"], typed["runs_reused"], typed["runs_missing"]) == (6, 0, 0)
    assert made(out)["wall time of this invocation"].startswith(f"{typed['wall_time_s']:.1f} s")
    assert Data.load(out).wall_time_s == typed["wall_time_s"] and "figures" not in Data.load(out).made
    md = (out / "ablation.md").read_text()
    answer = md.split("## The answer", 1)[1].split("## How it was run", 1)[0]
    assert "| causal openers below bidirectional openers |" in answer  # the grid's claim, on the first screen
    for name in ("pretrain/bidirectional", "pretrain/causal", "finetune/full"):
        assert re.search(rf"^\| {name} \| [^|]+ \| 2 \|", md, re.M)  # each experiment's row with its seeds
    assert re.search(r"^\| pretrain/bidirectional \| val/acc \| .+ \| 89\.4 \|$", md, re.M)  # beside the write-up
    assert (out / "claims.png").read_bytes().startswith(b"\x89PNG")
    page = (out / "dashboard.html").read_text()
    assert re.findall(r'<img alt="[^"]+" src="([^"]+)">', page) == ["claims.png", "curves.png", "categories.png"]
    assert "http://" not in page and "https://" not in page  # opens offline
    for text in (md, page):  # the command held the tmp folders' absolute paths: no page names them
        assert str(out.parent) not in text and "--out …/out" in text
    assert not list(out.rglob("*.tmp"))  # atomic writes leave no temporaries


def test_the_table_keeps_every_runs_learning_curve_and_the_files_of_its_code(finished):
    _, out, _ = finished
    curves = pd.read_csv(out / "curves.csv")
    per_run = curves[curves.metric == "val/loss"].groupby(["experiment", "seed"])["step"].agg(list)
    assert len(per_run) == 6 and all(steps == [2, 4] for steps in per_run)  # every run, validated at 2 and 4
    assert set(curves.metric) == {"val/loss", "val/acc"}  # a loss logged every 10 steps is no curve in 4
    code = pd.read_csv(out / "code.csv")
    assert set(code.code) == set(table.read(out).code)  # the one code that made every run, file by file
    assert dict(zip(code.file, code.hash)) == code_version.package_files()
    assert "6 runs by today's code" in (out / "ablation.md").read_text()


def test_the_table_keeps_the_config_each_experiments_runs_saved_and_reads_its_axes_from_them(finished):
    """What the runs saved alike is what LightningCLI resolves for the experiment without training, key for key."""
    grid, out, _ = finished
    for e in load_grid(grid, ROOT).experiments:
        text = saved.path(out, e.name).read_text()
        assert text.startswith(saved.FROM_RUNS)  # the runs' own config.yaml, not one resolved again
        config = yaml.safe_load(text)
        assert config == saved.resolve(e, ROOT)
        assert config["seed_everything"] is None and config["data"]["seed"] is None  # the two seeds differ
        assert config["trainer"]["max_steps"] == TINY["trainer.max_steps"]
        assert str(out) not in text  # the runs' folders, which differ, are null; no path of this machine
    causal = table.read(out).groupby("experiment")["causal"].first()
    assert not causal["pretrain/bidirectional"] and causal["pretrain/causal"]  # configs/causal.yaml's one setting


def test_second_invocation_skips_everything(finished):
    grid, out, _ = finished
    summaries = sorted(out.glob(RUN_SUMMARIES))
    stamps = [p.stat().st_mtime_ns for p in summaries]
    result = ablate("--grid", str(grid), "--out", str(out), "--seeds", "2", "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert "0 runs trained, 6 reused" in made(out)["wall time of this invocation"]
    assert [p.stat().st_mtime_ns for p in summaries] == stamps
    assert csv_runs(out) == Counter({k: 1 for k in csv_runs(out)})


def test_report_only_rebuilds_without_training_and_keeps_how_the_runs_were_made(finished):
    grid, out, _ = finished
    before, summaries = made(out), sorted(out.glob(RUN_SUMMARIES))
    stamps = [p.stat().st_mtime_ns for p in summaries]
    (out / "ablation.md").unlink()
    result = ablate("--grid", str(grid), "--out", str(out), "--seeds", "2", "--report-only")
    assert result.returncode == 0, result.stderr
    after = made(out)
    rebuilt = after.pop("table rebuilt")
    assert after == before  # the date, command, machine and wall time of the invocation that trained
    assert rebuilt.startswith("python scripts/ablate.py --grid ") and "--report-only" in rebuilt
    md = (out / "ablation.md").read_text()
    assert "0 runs trained, 6 reused" in md and "- table rebuilt: python scripts/ablate.py" in md
    assert [p.stat().st_mtime_ns for p in summaries] == stamps and len(csv_runs(out)) == 6


def test_more_runs_for_a_table_whose_family_changed_are_refused(finished, tmp_path):
    """A table's verdicts are held over the family its runs recorded as they started: adding runs under a grid
    whose claims changed since is an error naming the change, and nothing is trained or written."""
    grid, out, _ = finished
    shutil.copytree(out, tmp_path / "out")
    changed = yaml.safe_load(grid.read_text())
    changed["claims"][0]["higher"]["metric"] = "val/acc"
    changed["claims"][0]["lower"]["metric"] = "val/acc"
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(changed))
    before = (tmp_path / "out/run.json").read_bytes()
    result = ablate("--grid", str(tmp_path / "grid.yaml"), "--out", str(tmp_path / "out"), "--seeds", "3")
    assert result.returncode == 2, result.stderr
    assert "(1 question(s) added, 1 removed; added 'pretrain/bidirectional val/acc vs" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "family.json" in result.stderr
    assert (tmp_path / "out/run.json").read_bytes() == before
    assert len(list((tmp_path / "out").glob(RUN_SUMMARIES))) == 6  # seed 2 never trained


def clone(out: Path, to: Path) -> Path:
    """What a clone of the repository holds of a grid's results: its table and run.json, no runs/."""
    for name in ("results.csv", "categories.csv", "curves.csv", "code.csv", "run.json", "family.json"):
        (to / name).write_bytes((out / name).read_bytes())
    return to


def test_report_only_on_a_clone_renders_the_committed_table_and_changes_no_record(finished, tmp_path):
    grid, out, _ = finished
    result = ablate("--grid", str(grid), "--out", str(clone(out, tmp_path)), "--report-only")
    assert "Traceback" not in result.stderr and "error" not in result.stderr, result.stderr
    for name in ("results.csv", "categories.csv", "run.json"):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes()
    assert "| causal openers below bidirectional openers |" in (tmp_path / "ablation.md").read_text()
    assert (tmp_path / "dashboard.html").is_file() and not (tmp_path / "runs").exists()


def test_report_only_on_a_clone_exits_0(finished, tmp_path):
    grid, out, _ = finished
    result = ablate("--grid", str(grid), "--out", str(clone(out, tmp_path)), "--report-only")
    assert result.returncode == 0, result.stderr


def test_only_narrows_what_runs_not_what_is_reported(finished):
    grid, out, _ = finished
    result = ablate("--grid", str(grid), "--out", str(out), "--seeds", "2", "--only", "pretrain/causal")
    assert result.returncode == 0, result.stderr
    assert "0 runs trained, 2 reused" in made(out)["wall time of this invocation"]
    assert len(csv_runs(out)) == 6  # the other experiments' finished runs stay in the table


def test_only_pulls_in_the_pretraining_run_a_finetune_cell_needs(finished, tmp_path):
    grid, _, _ = finished
    result = ablate("--grid", str(grid), "--out", str(tmp_path), "--seeds", "1", "--only", "finetune/*")
    assert result.returncode == 0, result.stderr
    assert set(csv_runs(tmp_path)) == {("pretrain/bidirectional", "0"), ("finetune/full", "0")}


class Explode(L.Callback):
    """A run that builds (so the grid's checks pass) but fails once it trains."""

    def on_train_start(self, trainer, pl_module):
        raise RuntimeError("exploded on purpose at the first step")


def test_a_run_that_crashes_in_plugin_code_is_reported_as_a_bug_and_the_rest_continue(tmp_path):
    layer = tmp_path / "explode.yaml"
    layer.write_text("trainer:\n  callbacks:\n    - class_path: tests.harness.test_ablate.Explode\n")
    broken = {
        "name": "pretrain/broken",
        "job_type": "pretrain",
        "configs": ["configs/pretrain.yaml", str(layer)],
        "overrides": TINY,
    }
    grid = tiny_grid(tmp_path / "grid.yaml", extra=[broken])
    result = ablate(
        "--grid", str(grid), "--out", str(tmp_path / "out"), "--seeds", "1", "--only", "pretrain/*", "--workers", "2"
    )
    assert result.returncode == 2, result.stderr[-2000:]  # a bug in the user's code (here a callback), not an outcome
    (line,) = [x for x in result.stderr.splitlines() if "error" in x]
    assert line.startswith("ablate.py: error: pretrain/broken seed=0 crashed in plug-in code: RuntimeError: exploded")
    assert "tests/harness/test_ablate.py, line" in line and "run.log" in line
    assert set(csv_runs(tmp_path / "out")) == {("pretrain/bidirectional", "0"), ("pretrain/causal", "0")}


def test_a_setting_that_fails_at_start_up_stops_the_grid_before_any_run(tmp_path):
    broken = {"name": "pretrain/broken", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"],
              "overrides": {**TINY, "model.init_args.lr": -1.0}}  # fmt: skip
    grid = tiny_grid(tmp_path / "grid.yaml", extra=[broken])
    result = ablate("--grid", str(grid), "--out", str(tmp_path / "out"), "--seeds", "1", "--only", "pretrain/*")
    assert result.returncode == 2
    line = result.stderr.strip().splitlines()[-1]
    assert "cell pretrain/broken" in line and "lr=-1.0" in line, line
    assert not list((tmp_path / "out").glob("runs/*/*/*/run.log"))


def test_unknown_only_pattern_lists_valid_names(finished):
    grid, out, _ = finished
    result = ablate("--grid", str(grid), "--out", str(out), "--only", "pretrain/nope")
    assert result.returncode == 2
    assert "matches no experiment" in result.stderr
    assert "valid names: pretrain/bidirectional, pretrain/causal, finetune/full" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("experiments: [unclosed", "not valid YAML"),
        ("experiments: []", "non-empty list"),
        ("experimants: []", "unknown keys ['experimants']"),
        (
            "experiments:\n  - {name: a, job_type: pretrain, configs: [configs/pretrain.yaml], colour: red}",
            "unknown keys ['colour']",
        ),
        ("experiments:\n  - {name: a, job_type: train, configs: [configs/pretrain.yaml]}", "job_type='train'"),
        (
            "experiments:\n  - {name: a, job_type: pretrain, configs: [configs/nope.yaml]}",
            "'configs/nope.yaml' does not exist",
        ),
        (
            "experiments:\n  - {name: a, job_type: finetune, configs: [configs/finetune.yaml], encoder_from: b}",
            "encoder_from='b' is not an experiment",
        ),
    ],
)
def test_malformed_grid_is_a_clear_error(tmp_path, content, message, scripts, capsys):
    """In-process (the grid is read with the arguments, before anything starts); the CLI's own exit path is the
    other tests'."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(content)
    with pytest.raises(SystemExit) as exit_:
        scripts("ablate").main(["--grid", str(grid), "--out", str(tmp_path / "out"), "--report-only"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.every_core
def test_wandb_logger_runs_offline_one_wandb_run_per_training_run(tmp_path):
    grid, out = tiny_grid(tmp_path / "grid.yaml"), tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}  # no API key, no mode preset
    result = ablate(
        "--grid",
        str(grid),
        "--out",
        str(out),
        "--seeds",
        "1",
        "--only",
        "finetune/full",
        "--logger",
        "wandb",
        "--workers",
        "2",
        env={**env, "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    offline = list(out.glob("runs/*/*/*/wandb/offline-run-*"))
    assert len(offline) == 2  # pretrain/bidirectional and finetune/full, one wandb run each
    assert set(csv_runs(out)) == {("pretrain/bidirectional", "0"), ("finetune/full", "0")}
    assert len(list((out / "runs").rglob("metrics.csv"))) == 2  # the CSV log is kept beside wandb


@pytest.mark.slow
@pytest.mark.every_core
def test_runner_survives_repeated_sigkills_at_random_points(tmp_path):
    """SIGKILL the runner (and its workers) at random moments, several times; the final rerun
    completes, trains only what no killed invocation finished and reuses the rest, every run is in results.csv
    exactly once, and nothing on disk is half-written.

    Each kill lands a random 0-0.5 s after the invocation finished one more run, so every invocation makes
    progress and is interrupted somewhere among training, the next run's start and report writing."""
    import random

    grid, out = tiny_grid(tmp_path / "grid.yaml"), tmp_path / "out"
    args = [
        sys.executable,
        "scripts/ablate.py",
        "--grid",
        str(grid),
        "--out",
        str(out),
        "--seeds",
        "3",
        "--workers",
        "2",
    ]
    rng = random.Random(0)
    kills = 0
    while kills < 3:
        before = len(list(out.glob(RUN_SUMMARIES)))
        proc = subprocess.Popen(
            args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.time() + 180
        while len(list(out.glob(RUN_SUMMARIES))) == before and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 0.5))
        if proc.poll() is not None:
            break  # it finished everything before the kill: nothing left to interrupt
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        for summary in out.glob(RUN_SUMMARIES):
            json.loads(summary.read_text())  # complete JSON or absent, never half a file
    assert kills >= 2
    kept = len(list(out.glob(RUN_SUMMARIES)))
    result = ablate(*args[2:])
    assert result.returncode == 0, result.stderr
    assert f"{9 - kept} runs trained, {kept} reused" in made(out)["wall time of this invocation"]
    assert csv_runs(out) == Counter(
        {(e, s): 1 for e in ("pretrain/bidirectional", "pretrain/causal", "finetune/full") for s in ("0", "1", "2")}
    )
    assert not list(out.rglob("*.tmp"))
    assert len(list(out.glob(RUN_SUMMARIES))) == 9


COUNTED = """\
import os

from minibert.objectives import MaskedLM

BUILT = []  # module-level state: grows with every objective this process builds


class Counted(MaskedLM):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        BUILT.append(None)
        with open(os.environ["COUNTED_LOG"], "a") as f:
            f.write(f"{os.getpid()} {len(BUILT)}\\n")
"""


def test_each_run_starts_with_fresh_plugin_module_state(tmp_path, monkeypatch):
    """One worker, three runs: a plug-in's module-level state never carries from one run into the next."""
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "counted.py").write_text(COUNTED)
    monkeypatch.setenv("COUNTED_LOG", str(tmp_path / "built.txt"))
    counted = {**TINY, "model.init_args.objective.class_path": "counted.Counted"}
    grid = {"experiments": [{"name": "pretrain/counted", "job_type": "pretrain",
                             "configs": ["configs/pretrain.yaml"], "overrides": counted}]}  # fmt: skip
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    done = ablate("--grid", str(tmp_path / "grid.yaml"), "--out", str(tmp_path / "out"), "--seeds", "3",
                  "--workers", "1", "--plugins", str(tmp_path / "plugins"))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    built: dict[int, list[int]] = {}
    for line in (tmp_path / "built.txt").read_text().split("\n")[:-1]:
        pid, count = map(int, line.split())
        if pid != os.getpid():  # the runner's own checks before training
            built.setdefault(pid, []).append(count)
    assert len(built) >= 3, built  # a process per run (and one for the checks before them)
    assert len({tuple(counts) for counts in built.values()}) == 1 and min(built.values())[0] == 1, built


@pytest.mark.parametrize("bad", ["only", "override"])
def test_input_refused_before_any_run_leaves_no_folder_behind(tmp_path, bad):
    """An --only that matches nothing, or a cell that cannot be built (an override no class takes), is one line
    with status 2, and the --out this command would have made is not left behind (no family.json, no lock)."""
    extra = [{"name": "pretrain/bad", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"],
              "overrides": {**TINY, "model.init_args.no_such_setting": 1}}] if bad == "override" else None  # fmt: skip
    grid = tiny_grid(tmp_path / "grid.yaml", extra=extra)
    only = "pretrain/typo*" if bad == "only" else "pretrain/*"
    result = ablate("--grid", str(grid), "--out", str(tmp_path / "out"), "--seeds", "1", "--only", only)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1].startswith("ablate.py: error:")
    assert not (tmp_path / "out").exists()


def test_a_rerun_into_a_committed_table_leaves_it_as_it_was_and_says_whether_it_reproduced(tmp_path, monkeypatch,
                                                                                         capsys):  # fmt: skip
    """The README's first command on a fresh clone: the runs are trained again into a table committed under
    results/. Reproduced or not, every committed file stays as it was; this machine's table and report go to
    runs/<the table's folder>, and the last line says which figures moved and where the table went. With
    --publish, the committed table holds this machine's figures."""
    import minibert.sweep
    from minibert.sweep import Sweep

    root = tmp_path / "checkout"  # a checkout with the configs a run reads, and no pages of its own
    (root / "configs").mkdir(parents=True)
    (root / "configs" / "pretrain.yaml").symlink_to(ROOT / "configs" / "pretrain.yaml")
    (root / "grid.yaml").write_text(
        yaml.safe_dump(
            {
                "experiments": [
                    {
                        "name": "pretrain/mlm",
                        "job_type": "pretrain",
                        "configs": ["configs/pretrain.yaml"],
                        "overrides": TINY,
                    }
                ]
            }
        )
    )
    monkeypatch.setattr(minibert.sweep, "ROOT", root)
    out, draft = root / "results" / "tiny", root / "runs" / "results" / "tiny"

    def rerun(into_checkout: bool = False) -> tuple[int, str]:
        shutil.rmtree(out / "runs")  # a fresh clone: the committed table without its runs
        code = Sweep(grid="grid.yaml", out=out, seeds=[0], workers=1, render=publish, publish=into_checkout).run()
        return code, capsys.readouterr().out.strip().splitlines()[-1]

    assert Sweep(grid="grid.yaml", out=out, seeds=[0], workers=1, render=publish).run() == 0  # the table as committed

    def files() -> dict:  # what git tracks: not the runner's lock, nor the runs
        return {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and "runs" not in p.relative_to(out).parts
                and p.name != ".ablate.lock"}  # fmt: skip

    committed = files()
    code, last = rerun()
    assert code == 0 and last.startswith("reproduced: ") and "within its tolerance of the committed table" in last
    assert f"this machine's table and report are in {draft}" in last and "--publish" in last
    assert files() == committed  # nothing rewritten
    assert (draft / "results.csv").is_file() and (draft / "dashboard.html").is_file()
    frame = table.read(out)
    moved = (frame.metric == "val/acc") & (frame.category == "")
    frame.loc[moved, "value"] += 0.1  # a committed figure that this code no longer gives
    table.write(frame, out)  # as older code wrote it: a table whose seal says so, not one edited since
    committed = files()
    code, last = rerun()
    assert code == 0 and last.startswith("not reproduced: 1 of ") and "pretrain/mlm seed 0 val/acc" in last
    assert files() == committed  # the committed table keeps its figure, this machine's is in the draft
    now = table.read(draft).set_index(["metric", "category"]).loc[("val/acc", ""), "value"]
    assert float(now) == pytest.approx(float(frame.loc[moved, "value"].iloc[0]) - 0.1)
    code, last = rerun(into_checkout=True)
    assert code == 0 and last.startswith("not reproduced: 1 of ") and "now hold this machine's table" in last
    assert table.read(out).loc[moved, "value"].tolist() == pytest.approx((frame.loc[moved, "value"] - 0.1).tolist())
