"""Plan and execute the runs of an ablation grid: one run per (experiment, seed), on an executor
(minibert.ablation.executors: local worker processes, or submitit jobs).

Each run's directory is keyed by its resolved inputs (the config files' contents, the overrides, the seed
and, for fine-tuning, the key of the pre-training run it loads), so editing a config reruns what it
touches and nothing else. A run is done when `<run_dir>/summary.json` exists and parses; it is written
last and atomically, so a run killed mid-way is simply redone (its directory is wiped first). A summary
that does not parse is named and its run redone. Each summary records the code that made it
(minibert.training.code_version); a run made by other code is stale and is redone unless stale runs are reused on
purpose. Paths in a summary (`log_dir`, `checkpoint`) are relative to the run's directory, so a results
folder can be moved.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import pickle
import shutil
import sys
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from minibert.ablation.crashes import PluginCrash, plugin_crash
from minibert.ablation.grid import Experiment
from minibert.atomic_writes import write_atomic, write_json
from minibert.training.code_version import stale_because

DONE = "summary.json"
SUMMARY_KEYS = ("step", "wall_time_s", "log_dir", "checkpoint")  # what the runner and the report read


class DamagedSummary(ValueError):
    """A run's summary.json exists but is not a complete JSON object."""


@dataclass(frozen=True)
class Run:
    experiment: Experiment
    seed: int
    key: str  # hash of everything that determines the run's result
    run_dir: Path
    upstream: Run | None = None  # the pre-training run whose checkpoint a fine-tuning run loads

    @property
    def depth(self) -> int:
        """0 for a run that loads nothing, else one more than its upstream's."""
        return 0 if self.upstream is None else 1 + self.upstream.depth

    @property
    def label(self) -> str:
        return f"{self.experiment.name} seed={self.seed}"

    def read(self) -> dict | None:
        """The run's summary, None when it has none; DamagedSummary (naming the file) when it does not parse."""
        path = self.run_dir / DONE
        try:
            summary = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (ValueError, UnicodeDecodeError, IsADirectoryError) as err:
            raise DamagedSummary(f"{path} is unreadable ({type(err).__name__}: {err})") from None
        if not isinstance(summary, dict):
            raise DamagedSummary(f"{path} is unreadable (a JSON {type(summary).__name__}, not an object)")
        if missing := [k for k in SUMMARY_KEYS if k not in summary]:
            raise DamagedSummary(f"{path} is unreadable (it lacks {', '.join(missing)})")
        return summary

    @property
    def done(self) -> bool:
        """Finished: its summary exists and parses."""
        try:
            return self.read() is not None
        except DamagedSummary:
            return False

    def summary(self) -> dict:
        summary = self.read()
        if summary is None:
            raise FileNotFoundError(f"{self.run_dir / DONE}: the run has not finished")
        return summary

    def path(self, recorded: str) -> Path:
        """A path from the summary (relative to the run's directory; older summaries hold absolute ones)."""
        return self.run_dir / recorded


def plan(experiments: list[Experiment], seeds: list[int], out: Path, root: Path) -> list[Run]:
    """Runs for every experiment and seed, upstream runs first (by depth, then name and seed). `experiments`
    come in dependency order, as a Grid and `Grid.select` give them: each after the one it loads from."""
    runs: dict[tuple[str, int], Run] = {}
    for e in experiments:
        for seed in seeds:
            if e.encoder_from and (e.encoder_from, seed) not in runs:
                raise ValueError(f"plan: {e.name} loads {e.encoder_from}, which is not planned before it")
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
    return sorted(runs.values(), key=lambda r: (r.depth, r.experiment.name, r.seed))


def cli_args(run: Run) -> list[str]:
    """The `fit` arguments of a run after its config files: seed, overrides, upstream checkpoint."""
    args = [f"--seed_everything={run.seed}", *run.experiment.cli_args()]
    if run.upstream is not None:
        args.append(f"--model.init_args.encoder_ckpt={run.upstream.path(run.upstream.summary()['checkpoint'])}")
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
                    "class_path": "minibert.training.loggers.SafeWandbLogger",
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

    from minibert.training.checkpoints import last_checkpoint
    from minibert.training.fit import fit

    torch.set_num_threads(1)
    shutil.rmtree(run.run_dir, ignore_errors=True)  # whatever a killed attempt left behind
    run.run_dir.mkdir(parents=True)
    with _output_to(run.run_dir / "run.log"):
        configs = [Path(root) / c for c in run.experiment.configs]
        if logger == "wandb":
            configs.append(run.run_dir / "wandb_logger.yaml")
            write_atomic(configs[-1], yaml.safe_dump(wandb_config(run, grid)))
        try:
            summary = fit(configs, cli_args(run), root_dir=run.run_dir)
        except Exception as err:
            traceback.print_exc()  # the whole story in the run's log; the runner says it in one line
            machine = isinstance(err, OSError) and err.errno in MACHINE_ERRNOS  # the machine's, wherever raised
            if not machine and (crash := plugin_crash(err)) is not None:
                raise crash from None
            if not _crosses(err):  # the runner could not rebuild it, and the pool would break under it
                raise RunFailed(f"{type(err).__name__}: {err}") from None
            raise
        if logger == "wandb":
            import wandb

            wandb.finish()  # one wandb run per training run
    summary["checkpoint"] = os.path.relpath(last_checkpoint(summary["log_dir"]), run.run_dir)
    summary["log_dir"] = os.path.relpath(summary["log_dir"], run.run_dir)
    write_json(run.run_dir / DONE, summary)  # last, atomically: its presence means the run finished
    return summary


class RunFailed(RuntimeError):
    """A run's error, as its text: what a worker raises in place of an exception its runner could not unpickle."""


def _crosses(err: BaseException) -> bool:
    """Whether `err` survives the trip from a worker to its runner (pickled, then rebuilt from its args): one that
    does not, such as an exception whose constructor takes other arguments than its message, breaks the whole
    process pool, and every other run with it."""
    try:
        pickle.loads(pickle.dumps(err))
    except Exception:
        return False
    return True


@dataclass
class Triage:
    """Which runs to train and which finished ones to reuse, with a note for each one that needs a word."""

    todo: list[Run] = field(default_factory=list)
    reused: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def triage(runs: list[Run], force: bool = False, reuse_stale: bool = False) -> Triage:
    """Reuse finished runs made by this code (the package and each plug-in the run named); redo the rest:
    missing, damaged (named), stale (made by other code, or a plug-in that cannot be located: named, unless
    `reuse_stale`), or everything with `force`."""
    out = Triage()
    plugins: dict[str, str | None] = {}  # each plug-in's hash on disk, read once for all the runs
    for r in runs:
        try:
            summary = r.read()
        except DamagedSummary as err:
            out.notes.append(f"{err}: training {r.label} again")
            out.todo.append(r)
            continue
        if summary is None or force:
            out.todo.append(r)
            continue
        why = stale_because(summary.get("code") or {}, plugins)
        if why is None:
            out.reused.append(r)
        elif reuse_stale:
            out.notes.append(f"warning: reusing {r.label}, made by other code: {why}")
            out.reused.append(r)
        else:
            out.notes.append(f"{r.label} was made by other code: {why}; training it again (--reuse-stale keeps it)")
            out.todo.append(r)
    return out


# what an OSError's errno says about the machine rather than the run: nothing a rerun of the same grid fixes
MACHINE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}


@dataclass
class Outcome:
    finished: list[Run]
    skipped: list[Run]  # reused: finished before this invocation
    failed: list[tuple[Run, str]]  # run and the reason (with its log path)
    machine: list[OSError] = field(default_factory=list)  # failures that were the machine's (MACHINE_ERRNOS)
    crashed: list[tuple[Run, str]] = field(default_factory=list)  # runs that crashed in plug-in code, and where
    broken: list[Run] = field(default_factory=list)  # runs going when the worker pool broke (a worker died abruptly)


BROKEN = "its worker pool broke"  # the reason of a run that was going when it did; "not tried: " + it, the rest


def run_all(
    plan: Triage,
    root: Path,
    executor,
    logger: str = "csv",
    on_progress: Callable[[Run, str], None] = lambda run, status: None,
    grid: str = "",
    stop_on_crash: bool = False,
) -> Outcome:
    """Train `plan.todo` on `executor` (minibert.ablation.executors), upstream before downstream.

    A failed run is reported with its log path; runs that depend on it are failed too; the rest go on. A run
    that crashed in plug-in code (minibert.ablation.crashes) is a bug, not an outcome: the other seeds of its
    experiment are not tried, and with `stop_on_crash` nothing more is started at all.
    """
    outcome = Outcome([], list(plan.reused), [])
    for r in plan.reused:
        on_progress(r, "skipped")
    todo = list(plan.todo)
    finished_keys = {r.key for r in plan.reused}
    failed_keys: set[str] = set()
    running: dict[object, Run] = {}
    while todo or running:
        for r in list(todo):
            up = r.upstream
            if up is not None and up.key in failed_keys:
                todo.remove(r)
                failed_keys.add(r.key)
                outcome.failed.append((r, f"its pre-training run {up.label} failed"))
                on_progress(r, "failed")
            elif (up is None or up.key in finished_keys) and len(running) < executor.max_running:
                todo.remove(r)
                try:
                    running[executor.submit(execute, r, str(root), logger, grid)] = r
                except Exception as err:  # e.g. no sbatch on this machine: every run says so, the runner goes on
                    failed_keys.add(r.key)
                    outcome.failed.append((r, f"could not submit it: {type(err).__name__}: {err}"))
                    on_progress(r, "failed")
        if not running:
            continue
        for job in executor.wait(list(running)):
            r = running.pop(job)
            try:
                executor.result(job)
            except PluginCrash as err:
                failed_keys.add(r.key)
                outcome.crashed.append((r, err.line(r.run_dir / "run.log")))
                on_progress(r, "failed")
                same = [x for x in todo if x.experiment.name == r.experiment.name or stop_on_crash]
                for x in same:  # not tried: the same code would crash the same way
                    todo.remove(x)
                    failed_keys.add(x.key)
                    outcome.failed.append((x, f"not tried: {r.label} crashed in plug-in code"))
                    on_progress(x, "not run")
                if stop_on_crash:  # leaving the executor cancels the runs still going
                    return outcome
            except BrokenProcessPool:  # a worker died without a word (killed for memory, native code): one story
                failed_keys.add(r.key)
                outcome.broken.append(r)
                outcome.failed.append((r, BROKEN))
                on_progress(r, "not run")
            except (Exception, SystemExit) as err:  # SystemExit: a worker stopped by SIGTERM (training.preemption)
                failed_keys.add(r.key)
                if isinstance(err, OSError) and err.errno in MACHINE_ERRNOS:
                    outcome.machine.append(err)
                reason = (
                    str(err)
                    if isinstance(err, RunFailed)
                    else "".join(traceback.format_exception_only(type(err), err)).strip()
                )
                outcome.failed.append((r, f"{reason} (log: {r.run_dir / 'run.log'})"))
                on_progress(r, "failed")
            else:
                finished_keys.add(r.key)
                outcome.finished.append(r)
                on_progress(r, "finished")
        if outcome.broken:  # nothing more can start on it: what is going fails with it, the rest is not tried
            for x in todo:
                failed_keys.add(x.key)
                outcome.failed.append((x, f"not tried: {BROKEN}"))
                on_progress(x, "not run")
            todo = []
    return outcome
