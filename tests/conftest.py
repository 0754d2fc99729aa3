import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("WANDB_SILENT", "true")
# One thread: the models are tiny, and on a shared 2-core machine a second torch thread mostly spins
# (results/bench.md). Subprocesses inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
torch.set_num_threads(1)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository root (configs/, scripts/), whatever the working directory."""
    return ROOT


@pytest.fixture(scope="session")
def short_run(tmp_path_factory) -> dict:
    """One 60-step default pre-training run (every step logged), shared by the tests that need a trained model."""
    from minibert.training.fit import fit

    return fit(
        [ROOT / "configs/pretrain.yaml"],
        ["--trainer.max_steps=60", "--trainer.log_every_n_steps=1"],
        root_dir=tmp_path_factory.mktemp("short_run"),
    )


@pytest.fixture
def drawn(monkeypatch):
    """The figures minibert.report.figures drew in a test, kept open instead of saved, to be read as drawn."""
    import matplotlib.pyplot

    from minibert.report import figures

    kept = []
    monkeypatch.setattr(figures, "save", lambda fig, path: kept.append(fig))
    yield kept
    for fig in kept:
        matplotlib.pyplot.close(fig)


@pytest.fixture(scope="session")
def scripts():
    """scripts("demo_masking") -> that script imported as a module (scripts/ is not a package)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture(scope="session")
def default_grid(tmp_path_factory):
    """`python scripts/ablate.py` on the default grid with 3 seeds, run once per session (slow tests only):
    its return code, stderr, wall time and collected results."""
    import time

    from minibert.stats import accuracies
    from minibert.tables.table import read

    out = tmp_path_factory.mktemp("default_grid")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "scripts/ablate.py", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    wall_time_s = time.perf_counter() - start
    table = read(out) if (out / "results.csv").is_file() else None
    values: dict[tuple[str, str], dict[int, float]] = {}  # (experiment, logged key) -> {seed: value}
    for e, m, c, seed, v, n in [] if table is None else zip(*(table[k] for k in ("experiment", "metric", "category",
                                                                                  "seed", "value", "n"))):  # fmt: skip
        values.setdefault((e, f"{m}_{c}" if c else m), {})[int(seed)] = float(v)
        if (key := accuracies.parse(m)) is not None and key.role == "acc" and n == n:  # its count, as logged
            values.setdefault((e, accuracies.AccKey(key.prefix, "n", c).key("n")), {})[int(seed)] = float(n)
    results = SimpleNamespace(values=values, get=lambda ref: values.get((ref.experiment, ref.metric), {}))
    return SimpleNamespace(returncode=proc.returncode, stderr=proc.stderr, wall_time_s=wall_time_s, results=results)


def start_grid(grid: str, out: Path, *args: str) -> subprocess.Popen:
    """`python scripts/ablate.py --grid GRID --out OUT ARGS` with 3 seeds, started in its own process group at a
    lower priority (nice 10, its workers too), its stderr in OUT/stderr.txt. Trained beside the tests, it takes
    the cores they leave idle and yields the ones they use."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "stderr.txt", "w") as err:
        proc = subprocess.Popen([sys.executable, "scripts/ablate.py", "--grid", grid, "--out", str(out), *args],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)  # fmt: skip
    os.setpriority(os.PRIO_PGRP, proc.pid, 10)  # its process group: the workers it forks inherit it
    return proc


def finished_grid(grid: str, out: Path, proc: subprocess.Popen, timeout: float = 1800):
    """Wait for a grid `start_grid` started: the finished process (`returncode`, `stderr`), `out` and
    `summaries` {(experiment, seed): summary} read back from the runs it planned."""
    from minibert.ablation.grid import load_grid
    from minibert.ablation.runner import plan

    proc.wait(timeout=timeout)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, "", (out / "stderr.txt").read_text())
    runs = plan(list(load_grid(ROOT / grid, root=ROOT).experiments), [0, 1, 2], out, ROOT)
    summaries = {(r.experiment.name, r.seed): r.summary() for r in runs if r.done}
    return SimpleNamespace(proc=done, out=out, summaries=summaries)


DYCK_CLAIMS = ("configs/ablations/dyck.yaml", "--only",
               "dyck/pretrain/span,dyck/finetune/mlm-full,dyck/finetune/no_pretrain")  # fmt: skip
_BACKGROUND: dict[str, tuple[subprocess.Popen, Path]] = {}


def pytest_xdist_auto_num_workers(config) -> int | None:
    """`-n auto` (pyproject's addopts) is every core for the fast tier; the claim tests (`-m slow`) run in this one
    process, since their grids take every core themselves and their fixtures are trained once per session."""
    expression = config.getoption("markexpr") or ""
    return 0 if "slow" in expression and "not slow" not in expression else None


@pytest.hookimpl(trylast=True)  # after `-m` has deselected what will not run
def pytest_collection_modifyitems(session, config, items) -> None:
    """The Dyck claims' grid (the claim tier's longest item) trains in the background from the start, with two
    workers at a lower priority; the tests that keep one core busy run first, beside it, then those whose runs
    take every core, and the Dyck claims last."""
    items.sort(key=_phase)  # stable: within a phase, the collection's order
    if any(_phase(item) == 2 for item in items):
        _start_dyck_grid()


def _phase(item) -> int:
    """0: a test in this one process (or one more); 1: one whose runs take every core (marked `every_core`, or
    training the default grid); 2: the Dyck claims, which wait for their grid."""
    fixtures = getattr(item, "fixturenames", ())
    if "dyck_grid" in fixtures:
        return 2
    return int(item.get_closest_marker("every_core") is not None or "default_grid" in fixtures)


def _start_dyck_grid() -> None:
    if "dyck_grid" not in _BACKGROUND:
        out = Path(tempfile.mkdtemp(prefix="minibert-dyck-grid-"))
        _BACKGROUND["dyck_grid"] = (start_grid(DYCK_CLAIMS[0], out, *DYCK_CLAIMS[1:], "--workers", "2"), out)


def pytest_sessionfinish(session, exitstatus) -> None:
    for proc, out in _BACKGROUND.values():
        if proc.poll() is None:  # the session ended first (-x, Ctrl-C, a narrower selection)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="session")
def dyck_grid():
    """The Dyck grid's token and span MLM, and full and no-pre-training fine-tuning, 3 seeds (slow tests),
    trained in the background (pytest_collection_modifyitems)."""
    _start_dyck_grid()  # already started, unless no collected test needed it
    proc, out = _BACKGROUND["dyck_grid"]
    return finished_grid(DYCK_CLAIMS[0], out, proc)
