"""Plan and execute the runs of an ablation grid: one run per (experiment, seed), in worker processes.

Each run's directory is keyed by its resolved inputs (the config files' contents, the overrides, the seed
and, for fine-tuning, the key of the pre-training run it loads), so editing a config reruns what it
touches and nothing else. A run is done when `<run_dir>/summary.json` exists; it is written last and
atomically, so a run killed mid-way is simply redone (its directory is wiped first).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import yaml

from minibert.ablation.grid import Experiment
from minibert.files import write_atomic, write_json

DONE = "summary.json"


@dataclass(frozen=True)
class Run:
    experiment: Experiment
    seed: int
    key: str  # hash of everything that determines the run's result
    run_dir: Path
    upstream: Run | None = None  # the pre-training run whose checkpoint a fine-tuning run loads

    @property
    def label(self) -> str:
        return f"{self.experiment.name} seed={self.seed}"

    @property
    def done(self) -> bool:
        return (self.run_dir / DONE).is_file()

    def summary(self) -> dict:
        return json.loads((self.run_dir / DONE).read_text())


def plan(experiments: list[Experiment], seeds: list[int], out: Path, root: Path) -> list[Run]:
    """Runs for every experiment and seed, upstream runs first (experiments come in grid order)."""
    runs: dict[tuple[str, int], Run] = {}
    for seed in seeds:
        for e in experiments:
            upstream = runs[(e.encoder_from, seed)] if e.encoder_from else None
            inputs = {
                "configs": [(root / c).read_text() for c in e.configs],
                "overrides": e.overrides,
                "seed": seed,
                "upstream": upstream.key if upstream else None,
            }
            key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:12]
            run_dir = out / "runs" / e.name / f"seed{seed}-{key}"
            runs[(e.name, seed)] = Run(e, seed, key, run_dir, upstream)
    return sorted(runs.values(), key=lambda r: (r.upstream is not None, r.experiment.name, r.seed))


def cli_args(run: Run) -> list[str]:
    """The `fit` arguments of a run after its config files: seed, overrides, upstream checkpoint."""
    args = [f"--seed_everything={run.seed}", *run.experiment.cli_args()]
    if run.upstream is not None:
        args.append(f"--model.init_args.encoder_ckpt={run.upstream.summary()['checkpoint']}")
    return args


def wandb_config(run: Run, grid: str = "") -> dict:
    """A config layer that logs to CSV (the report's learning curves read it) and to wandb: grouped by
    experiment, tagged by grid (`grid=default`), job type and the varied settings. The first logger is the
    CSVLogger, so the run's summary.json, config.yaml and checkpoints stay in its own version folder."""
    e = run.experiment
    tags = [e.job_type, *(f"{key.rsplit('.', 1)[-1]}={value}" for key, value in e.overrides.items())]
    if grid:
        tags.insert(0, f"grid={grid}")
    return {
        "trainer": {
            "logger": [
                {"class_path": "lightning.pytorch.loggers.CSVLogger", "init_args": {"save_dir": str(run.run_dir)}},
                {
                    "class_path": "minibert.loggers.SafeWandbLogger",
                    "init_args": {
                        "project": "minibert",
                        "save_dir": str(run.run_dir),
                        "group": e.name,
                        "job_type": e.job_type,
                        "name": f"{e.name}/seed{run.seed}",
                        "tags": [t[:64] for t in tags],  # wandb caps tag length at 64
                    },
                },
            ]
        }
    }


@contextlib.contextmanager
def _output_to(path: Path) -> Iterator[None]:
    """Send this process's stdout and stderr, file descriptors included, to `path` (logging handlers
    made at import time hold the old stream objects, so redirecting `sys.stdout` alone is not enough)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "w") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def execute(run: Run, root: str, logger: str, grid: str = "") -> dict:
    """Worker body: train one run with stdout/stderr in `<run_dir>/run.log`; returns its summary."""
    import torch  # imported in the worker: each worker is single-threaded so that runs share cores fairly

    from minibert.run import fit, last_checkpoint

    torch.set_num_threads(1)
    shutil.rmtree(run.run_dir, ignore_errors=True)  # whatever a killed attempt left behind
    run.run_dir.mkdir(parents=True)
    with _output_to(run.run_dir / "run.log"):
        configs = [Path(root) / c for c in run.experiment.configs]
        if logger == "wandb":
            configs.append(run.run_dir / "wandb_logger.yaml")
            write_atomic(configs[-1], yaml.safe_dump(wandb_config(run, grid)))
        summary = fit(configs, cli_args(run), root_dir=run.run_dir)
        if logger == "wandb":
            import wandb

            wandb.finish()  # one wandb run per training run
    summary["checkpoint"] = str(last_checkpoint(summary["log_dir"]))
    write_json(run.run_dir / DONE, summary)  # last, atomically: its presence means the run finished
    return summary


def _init_worker() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:  # Linux: die with the runner, so a killed runner leaves no orphan finishing a run behind its back
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass
class Outcome:
    finished: list[Run]
    skipped: list[Run]  # already done before this invocation
    failed: list[tuple[Run, str]]  # run and the reason (with its log path)


def run_all(
    runs: list[Run],
    root: Path,
    workers: int,
    logger: str = "csv",
    force: bool = False,
    on_progress: Callable[[Run, str], None] = lambda run, status: None,
    grid: str = "",
) -> Outcome:
    """Execute every run not done yet (all with `force`), `workers` at a time, upstream before downstream.

    A failed run is reported with its log path; runs that depend on it are failed too; the rest go on.
    """
    outcome = Outcome([], [], [])
    todo = [r for r in runs if force or not r.done]
    for r in runs:
        if r not in todo:
            outcome.skipped.append(r)
            on_progress(r, "skipped")
    finished_keys = {r.key for r in outcome.skipped}
    failed_keys: set[str] = set()
    context = multiprocessing.get_context("spawn")  # no inherited thread pools or locks from the parent
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker) as pool:
        running: dict[Future, Run] = {}
        while todo or running:
            for r in list(todo):
                up = r.upstream
                if up is not None and up.key in failed_keys:
                    todo.remove(r)
                    failed_keys.add(r.key)
                    outcome.failed.append((r, f"its pre-training run {up.label} failed"))
                    on_progress(r, "failed")
                elif up is None or up.key in finished_keys:
                    todo.remove(r)
                    running[pool.submit(execute, r, str(root), logger, grid)] = r
            if not running:
                continue
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                r = running.pop(future)
                try:
                    future.result()
                except Exception as err:
                    failed_keys.add(r.key)
                    reason = "".join(traceback.format_exception_only(type(err), err)).strip()
                    outcome.failed.append((r, f"{reason} (log: {r.run_dir / 'run.log'})"))
                    on_progress(r, "failed")
                else:
                    finished_keys.add(r.key)
                    outcome.finished.append(r)
                    on_progress(r, "finished")
    return outcome
