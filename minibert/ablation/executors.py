"""Where the runs of a grid train: worker processes on this machine, or jobs through submitit.

Both have the same three operations (`submit`, `wait`, and closing, which cancels what is unfinished),
so the runner's rules (upstream before downstream, resume, reuse) are the same whatever runs the jobs.

- `LocalPool(workers)`: a process pool whose workers die with the runner. On Linux they fork from a server
  that has imported torch, lightning and minibert's training code once (seconds on a small CPU);
  `start_fork_server()` starts it early, so that it imports while the runner does.
- `Submitit("slurm", folder, ...)`: one SLURM job per run, at most `max_running` queued or running at a
  time; the runner waits on the login node. `Submitit("local", ...)` is submitit's local backend (each
  job a subprocess of this machine), which runs the same code path without a cluster.

Example:
    >>> with LocalPool(workers=2) as pool:  # doctest: +SKIP
    ...     job = pool.submit(execute, run, root, "csv")
    ...     finished = pool.wait([job])
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import sys
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from pathlib import Path
from typing import Any

EXECUTORS = ("local", "submitit-local", "slurm")


# What a worker needs before its first job; the fork server imports them once. "__main__" is the runner's
# script, which a worker would otherwise run again (multiprocessing re-imports the main module).
WORKER_IMPORTS = ("__main__", "minibert.training.fit", "minibert.ablation.preflight")
# Workers fork from a server that imported the above and ran nothing, so they inherit no thread pools or
# locks (the reason not to fork the runner itself). Elsewhere than Linux they are spawned (no /proc below).
START_METHOD = "forkserver" if sys.platform.startswith("linux") else "spawn"
WATCH_S = 0.2  # how often a worker checks that its runner is alive


def start_fork_server() -> None:
    """Start the server local workers fork from, now (LocalPool starts it at its first job otherwise)."""
    if START_METHOD == "forkserver":
        multiprocessing.set_forkserver_preload(list(WORKER_IMPORTS))
        multiprocessing.forkserver.ensure_running()


def _parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])  # field 4, after (comm)
    except (FileNotFoundError, ProcessLookupError):
        return 0


def _runner_alive(runner: int) -> bool:
    """Whether `runner` is still this worker's parent (spawn) or its fork server's parent. The children of a
    process that dies are adopted at once, before anyone reaps it, so a killed runner fails this at once."""
    parent = os.getppid()
    return (parent if START_METHOD == "spawn" else _parent_of(parent)) == runner


def _watch(runner: int) -> None:
    while _runner_alive(runner):
        time.sleep(WATCH_S)
    os._exit(1)


def _init_worker(runner: int, path: list[str], environ: dict[str, str]) -> None:
    # the fork server's path and environment are the runner's as they were when it started; these are the
    # runner's now (plug-in folders, variables set since)
    sys.path[:] = path
    os.environ.clear()
    os.environ.update(environ)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # Die with the runner, so that a killed runner leaves no orphan finishing a run behind its back. Not
    # PR_SET_PDEATHSIG: a worker's parent is the fork server, which outlives the runner while workers live.
    threading.Thread(target=_watch, args=(runner,), name="watch-runner", daemon=True).start()


class LocalPool:
    """Runs on this machine, `workers` at a time, in worker processes (one torch thread each) that stay up for
    the whole grid (each run's result is what it would be alone: tests/test_determinism.py)."""

    max_running = float("inf")  # the pool queues what it cannot start yet

    def __init__(self, workers: int) -> None:
        start_fork_server()
        self.pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context(START_METHOD),
            initializer=_init_worker,
            initargs=(os.getpid(), list(sys.path), dict(os.environ)),
        )

    def submit(self, fn: Callable, *args: Any) -> Future:
        return self.pool.submit(fn, *args)

    def wait(self, jobs: Collection[Future]) -> set[Future]:
        return wait_futures(jobs, return_when=FIRST_COMPLETED)[0]

    @staticmethod
    def result(job: Future) -> Any:
        return job.result()

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc) -> None:
        self.pool.shutdown(wait=exc[0] is None, cancel_futures=True)


class JobFailed(RuntimeError):
    """A submitit job ended without a result; the message is the job's last error line and its log."""


class Submitit:
    """Runs as submitit jobs: `cluster="slurm"` on a SLURM cluster, `"local"` as subprocesses here.

    `slurm` holds SLURM options passed to submitit as `slurm_<key>` (e.g. {"partition": "cpu"}). Jobs get
    this process's environment, so the job imports the same minibert (the caller puts the checkout on
    PYTHONPATH). Leaving the `with` block cancels jobs that have not finished (Ctrl-C, errors)."""

    def __init__(
        self,
        cluster: str,
        folder: str | os.PathLike,
        max_running: int,
        timeout_min: int = 60,
        cpus_per_task: int = 1,
        slurm: dict[str, Any] | None = None,
        poll_s: float = 0.5,
    ) -> None:
        import submitit  # only when asked for: the local pool does not need it

        self.executor = submitit.AutoExecutor(folder=Path(folder) / "%j", cluster=cluster)
        params: dict[str, Any] = {"timeout_min": timeout_min, "cpus_per_task": cpus_per_task, "name": "minibert"}
        if cluster == "slurm":
            params.update({f"slurm_{k}": v for k, v in (slurm or {}).items()})
        self.executor.update_parameters(**params)
        self.max_running = max_running
        self.poll_s = poll_s if cluster == "local" else max(poll_s, 10.0)  # do not hammer the SLURM controller
        self.jobs: list = []

    def submit(self, fn: Callable, *args: Any):
        job = self.executor.submit(fn, *args)
        self.jobs.append(job)
        return job

    def wait(self, jobs: Collection) -> set:
        while True:
            done = {job for job in jobs if job.done()}
            if done:
                return done
            time.sleep(self.poll_s)

    @staticmethod
    def result(job) -> Any:
        try:
            return job.result()
        except Exception as err:  # submitit wraps the job's exception in its own, with the whole traceback
            lines = [line for line in str(err).splitlines() if line.strip()]
            errors = [line for line in lines if "Error" in line or "Exception" in line]
            cause = (errors or lines or [type(err).__name__])[-1].strip()
            raise JobFailed(f"{cause} (job {job.job_id}, log: {job.paths.stderr})") from None

    def __enter__(self) -> Submitit:
        return self

    def __exit__(self, *exc) -> None:
        for job in self.jobs:
            if not job.done():
                job.cancel(check=False)
