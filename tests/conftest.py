import importlib.util
import os
from pathlib import Path

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
    import subprocess
    import sys
    import time
    from types import SimpleNamespace

    from minibert.ablation.grid import load_grid
    from minibert.ablation.report import Results
    from minibert.ablation.runner import plan

    out = tmp_path_factory.mktemp("default_grid")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "scripts/ablate.py", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    wall_time_s = time.perf_counter() - start
    grid = load_grid(ROOT / "configs/ablations/default.yaml", root=ROOT)
    results = Results.collect(plan(list(grid.experiments), [0, 1, 2], out, ROOT))
    return SimpleNamespace(returncode=proc.returncode, stderr=proc.stderr, wall_time_s=wall_time_s, results=results)


def run_grid(grid: str, out: Path, *args: str):
    """`python scripts/ablate.py --grid GRID --out OUT ARGS` with 3 seeds: the finished process, `out` and
    `summaries` {(experiment, seed): summary} read back from the runs it planned."""
    import subprocess
    import sys
    from types import SimpleNamespace

    from minibert.ablation.grid import load_grid
    from minibert.ablation.runner import plan

    command = [sys.executable, "scripts/ablate.py", "--grid", grid, "--out", str(out), *args]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    runs = plan(list(load_grid(ROOT / grid, root=ROOT).experiments), [0, 1, 2], out, ROOT)
    summaries = {(r.experiment.name, r.seed): r.summary() for r in runs if r.done}
    return SimpleNamespace(proc=proc, out=out, summaries=summaries)


@pytest.fixture(scope="session")
def dyck_grid(tmp_path_factory):
    """The Dyck grid's token and span MLM, and full and no-pre-training fine-tuning, 3 seeds (slow tests)."""
    return run_grid(
        "configs/ablations/dyck.yaml",
        tmp_path_factory.mktemp("dyck_grid"),
        "--workers",
        "2",
        "--only",
        "dyck/pretrain/span,dyck/finetune/mlm-full,dyck/finetune/no_pretrain",
    )
