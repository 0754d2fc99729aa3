"""Where the runs of a grid train: worker processes on this machine, or jobs through submitit.

Both have the same three operations (`submit`, `wait`, and closing, which cancels what is unfinished),
so the runner's rules (upstream before downstream, resume, reuse) are the same whatever runs the jobs.

- `LocalPool(workers)`: a process pool; workers die with the runner (PR_SET_PDEATHSIG on Linux).
- `Submitit("slurm", folder, ...)`: one SLURM job per run, at most `max_running` queued or running at a
  time; the runner waits on the login node. `Submitit("local", ...)` is submitit's local backend (each
  job a subprocess of this machine), which runs the same code path without a cluster.

Example:
    >>> with LocalPool(workers=2) as pool:  # doctest: +SKIP
    ...     job = pool.submit(execute, run, root, "csv")
    ...     finished = pool.wait([job])
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Collection
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from pathlib import Path
from typing import Any

EXECUTORS = ("local", "submitit-local", "slurm")


def _init_worker(runner: int) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:  # Linux: die with the runner, so a killed runner leaves no orphan finishing a run behind its back
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != runner:  # the runner died while this worker was starting, before the line above
        os._exit(1)


class LocalPool:
    """Runs on this machine, `workers` at a time, in spawned single-threaded processes."""

    max_running = float("inf")  # the pool queues what it cannot start yet

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("spawn")  # no inherited thread pools or locks from the parent
        self.pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),)
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
