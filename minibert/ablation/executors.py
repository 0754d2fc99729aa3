"""Where the runs of a grid train: worker processes on this machine, or jobs through submitit.

Both have the same three operations (`submit`, `wait`, and closing, which cancels what is unfinished),
so the runner's rules (upstream before downstream, resume, reuse) are the same whatever runs the jobs.

- `LocalPool(workers)`: a process pool whose workers die with the runner, one run each. On Linux they fork from a server
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

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from pathlib import Path
from typing import Any

EXECUTORS = ("local", "submitit-local", "slurm")


# What a worker needs before its first job; the fork server imports them once. The report is what the
# runner's script (scripts/ablate.py) imports too: multiprocessing runs that script again in every worker, as
# __mp_main__, which then costs nothing.
WORKER_IMPORTS = ("minibert.training.fit", "minibert.ablation.preflight")
# Workers fork from a server that imported the above and ran nothing, so that they inherit no locks held
# mid-computation (the reason not to fork the runner itself). Elsewhere than Linux they are spawned.
START_METHOD = "forkserver" if sys.platform.startswith("linux") else "spawn"
WATCH_S = 0.2  # how often a worker checks that its runner is alive


@contextlib.contextmanager
def _environ(**changes: str) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(changes)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def start_fork_server() -> None:
    """Start the server local workers fork from, now (LocalPool starts it at its first job otherwise).

    It starts from this process's environment, with three changes. PYTHONPATH is this sys.path, and
    PYTHONSAFEPATH leaves out its working directory: Python before 3.13 starts the server on the default path
    (CPython gh-117378), where it would preload another installed minibert, or none. OMP_NUM_THREADS is 1
    unless set: BLAS and OpenMP size their thread pools when they load, in the server, and workers train on
    one thread each. Ctrl-C is ignored there and in the workers: the runner handles it, and its workers
    follow it out."""
    if START_METHOD != "forkserver":
        return
    multiprocessing.set_forkserver_preload(list(WORKER_IMPORTS))
    path = os.pathsep.join(p for p in sys.path if p)
    threads = os.environ.get("OMP_NUM_THREADS", "1")
    main = threading.current_thread() is threading.main_thread()  # signal handlers are the main thread's
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        with _environ(PYTHONPATH=path, PYTHONSAFEPATH="1", OMP_NUM_THREADS=threads):
            multiprocessing.forkserver.ensure_running()
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


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


def _init_worker(runner: int, environ: dict[str, str]) -> None:
    # multiprocessing gives a worker the runner's sys.path as it is now (plug-in folders included), not its
    # environment: the fork server's is the runner's as it was when the server started
    os.environ.clear()
    os.environ.update(environ)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # Die with the runner, so that a killed runner leaves no orphan finishing a run behind its back. Not
    # PR_SET_PDEATHSIG: a worker's parent is the fork server, which outlives the runner while workers live.
    threading.Thread(target=_watch, args=(runner,), name="watch-runner", daemon=True).start()


class _OneRunPerWorker(ProcessPoolExecutor):
    """A pool whose workers each take one run (`max_tasks_per_child=1`). Shut down without waiting (the runner
    stops on an error), its manager thread may still hear of a worker that finished and replace it in a pool
    that is gone: Python 3.11 then raises TypeError there, in a thread of its own. Nothing needs replacing."""

    def _adjust_process_count(self) -> None:
        if self._processes is not None:
            super()._adjust_process_count()


class LocalPool:
    """Runs on this machine, `workers` at a time, each run in a fresh worker process (one torch thread) forked
    from the server: a plug-in's module-level state starts anew with every run, so each run's result is what it
    would be alone (tests/core/test_determinism.py)."""

    max_running = float("inf")  # the pool queues what it cannot start yet

    def __init__(self, workers: int) -> None:
        start_fork_server()
        self.pool = _OneRunPerWorker(
            max_workers=workers,
            mp_context=multiprocessing.get_context(START_METHOD),
            initializer=_init_worker,
            initargs=(os.getpid(), dict(os.environ)),
            max_tasks_per_child=1,
        )
        self.jobs: list[Future] = []

    def submit(self, fn: Callable, *args: Any) -> Future:
        job = self.pool.submit(fn, *args)
        self.jobs.append(job)
        return job

    def wait(self, jobs: Collection[Future]) -> set[Future]:
        return wait_futures(jobs, return_when=FIRST_COMPLETED)[0]

    @staticmethod
    def result(job: Future) -> Any:
        return job.result()

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc) -> None:
        left = [job for job in self.jobs if not job.done()]
        if left:  # the runner stopped early (a crash that ends a comparison, an error): nothing it left runs on
            for process in list((self.pool._processes or {}).values()):
                process.terminate()
        self.pool.shutdown(wait=exc[0] is None and not left, cancel_futures=True)


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
