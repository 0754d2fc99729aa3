"""One sweep of a grid: plan its runs, train what is missing, record the table and publish the pages it feeds.

`scripts/ablate.py` is this with a command line; `minibert.compare` calls it directly, one seed at a time.
It sits above the runner (minibert.ablation: plan, triage, train) and the tables (minibert.tables), the one
place the two meet; the pages a table feeds are rendered by whatever the caller hands it as `render`
(scripts/ablate.py: minibert.report.render.publish), so the report engine sits above it.

Runs are resumable: a sweep reuses runs whose summary.json is complete and was made by the same code, and
redoes any run killed mid-way, damaged or stale. One sweep per `out` at a time (a second one says who holds
it). Before anything trains, every cell about to train is built and what it will log is checked against the
grid's claims and tables (minibert.ablation.preflight).

Example:
    >>> from minibert.report.render import publish  # doctest: +SKIP
    >>> Sweep("configs/ablations/dyck.yaml", Path("results/dyck"), seeds=[0, 1], render=publish).run()  # doctest: +SKIP
    0
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from minibert.ablation.executors import LocalPool, Submitit
from minibert.ablation.grid import Grid, GridError, check_metrics, load_grid
from minibert.ablation.lock import Busy, OutLock
from minibert.ablation.preflight import preflight
from minibert.ablation.runner import BROKEN, DamagedSummary, Outcome, Run, plan, run_all, triage
from minibert.checkout import CHECKOUT
from minibert.places import shown
from minibert.tables import questions, reproduction, sealed, table
from minibert.tables.record import RecordError, record
from minibert.tables.table import FILE, TableError, grid_of_table, read_json

ROOT = CHECKOUT  # grids, configs and plug-ins are named from the checkout
# multiprocessing's resource tracker frees the semaphores of workers a Ctrl-C ended, and warns that it did: noise
QUIET_TRACKER = "ignore:resource_tracker:UserWarning"
# exit codes: every run succeeded, some failed (each listed with its log), bad input (grid, options, a cell
# that cannot be built, a report that would drop results), the machine (a folder that cannot be written, a
# full disk, `out` held by another sweep, no SLURM); 130/143 when interrupted (Ctrl-C/SIGTERM)
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_ENVIRONMENT = 0, 1, 2, 3
DEFAULT_SEEDS = 3


@dataclass(frozen=True)
class Sweep:
    """What one sweep runs, and how. `grid` is relative to the checkout; `seeds` None means 0..2 (with
    `report_only`, the seeds of the runs already in `out`); `only` holds globs on experiment names."""

    grid: str = "configs/ablations/default.yaml"
    out: Path = Path("results")
    seeds: list[int] | None = None
    only: list[str] | None = None
    quick: bool = False  # every experiment at the grid's `quick` overrides; never into a folder of real runs
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    logger: str = "csv"
    force: bool = False  # rerun runs that already finished
    reuse_stale: bool = False  # reuse finished runs made by other code (warns)
    report_only: bool = False  # only rebuild the table and pages from finished runs
    replace_report: bool = False  # allow a table that drops runs of the old one
    # renders the pages the table feeds once it is written, (out, grid, root) -> files written: the report engine's
    # minibert.report.render.publish; None: the table alone (python -m minibert.report renders them later)
    render: Callable[[Path, Grid, Path], list[Path]] | None = None
    executor: str = "local"
    plugins: list[str] = field(default_factory=list)  # folders plug-ins named by class path are imported from
    slurm: dict[str, str] = field(default_factory=dict)  # partition, account
    timeout_min: int = 60
    cpus_per_task: int = 1
    command: str = ""  # what started it, as run.json records it
    stop_on_crash: bool = False  # a run that crashes in plug-in code stops the whole sweep, not only its cell
    quiet: bool = False  # no "wrote ..." line (scripts/compare.py runs a sweep for every look)
    prog: str = "ablate.py"  # the command a crash's line is said by
    publish: bool = False  # write this machine's table and pages even where they reproduce the committed ones

    def run(self) -> int:
        """Train what is missing and write the table (and pages); the exit code, errors said in one line."""
        if QUIET_TRACKER not in sys.warnoptions:  # before a pool starts the tracker, which copies these flags
            sys.warnoptions.append(QUIET_TRACKER)
        start = time.perf_counter()
        use_plugins(self.plugins)
        if self.executor == "slurm" and not self.report_only and shutil.which("sbatch") is None:
            return _error("--executor slurm needs SLURM, and this machine has none (no sbatch on PATH): run on the "
                          "cluster's login node, or use --executor local", EXIT_ENVIRONMENT, self.prog)  # fmt: skip
        out = Path(self.out).resolve()
        made = not out.exists()  # a folder this sweep creates: removed again if it is refused before any run
        try:
            grid = load_grid(ROOT / self.grid, root=ROOT)
            if self.quick:
                grid = grid.quickened()
            check_quick(out, self.quick)
            with OutLock(out):
                return self._run(grid, out, start)
        except (GridError, RecordError, TableError, questions.FamilyError) as err:
            if made and not any(out.glob("runs/**/summary.json")):  # nothing of value in it: no leftovers
                shutil.rmtree(out, ignore_errors=True)
            return _error(str(err), EXIT_BAD_INPUT, self.prog)
        except Busy as err:
            return _error(str(err), EXIT_ENVIRONMENT, self.prog)
        except ImportError as err:  # submitit missing
            return _error(
                f"--executor {self.executor} needs submitit ({err}); pip install submitit", EXIT_ENVIRONMENT, self.prog
            )
        except OSError as err:
            where = f" {err.filename!r}" if err.filename else ""
            return _error(f"cannot read or write{where}: {err.strerror or err}. Check the folder's permissions and "
                          "free space, or give another --out", EXIT_ENVIRONMENT, self.prog)  # fmt: skip

    def _seeds(self, out: Path, grid: Grid) -> list[int]:
        if self.seeds:
            return list(self.seeds)
        if self.report_only:  # the report of what is there, however many seeds that is
            return sorted(seeds_on_disk(out, [e.name for e in grid.select(self.only)])) or list(range(DEFAULT_SEEDS))
        return list(range(DEFAULT_SEEDS))

    def _run(self, grid: Grid, out: Path, start: float) -> int:
        experiments = grid.select(self.only)
        seeds = self._seeds(out, grid)
        # the table covers every finished run of the grid in `out`, whatever seeds this sweep runs
        everything = plan(list(grid.experiments), sorted(set(seeds) | seeds_on_disk(out, grid.names)), out, ROOT)
        runs = [r for r in everything if r.experiment in experiments and r.seed in seeds]  # what this sweep runs
        check_metrics(grid, logged_metrics(everything))  # names typed in the grid, against runs already there
        if not self.report_only:  # the questions its verdicts are held over: fixed before any run trains
            questions.record(out, grid, ROOT, started=any(r.done for r in everything))
        for stale in out.glob(".*.tmp"):  # a report file a killed sweep was writing (see files.write_atomic)
            stale.unlink()
        failed, machine, crashed, trained = [], [], [], 0
        if not self.report_only:
            failed, trained, machine, crashed = self._train(grid, runs, out)
        committed = self._committed(out)  # the table a rerun is read against
        draft = None if committed is None or self.publish else self._draft(out)  # where this machine's goes instead
        done = [r for r in runs if r.done]
        finished = [r for r in everything if r.done]
        if crashed and (self.stop_on_crash or not finished):  # nothing to record: the bug is the whole answer
            return _crashed(crashed, self.prog)
        check_metrics(grid, logged_metrics(finished))
        failed_all = not finished and bool(failed or machine)  # nothing to record: the failures are the whole story
        if failed_all:
            written = []
        elif self.report_only and not finished and grid_of_table(out) == Path(grid.path).stem:  # a clone's table
            written = []
        elif self.report_only and (out / "run.json").is_file():  # how the runs were made stays as the run said
            made = read_json(out / "run.json")
            written = record(out, grid, finished, {**made, "table rebuilt": f"{self.command}, {_now()}"},
                             self.replace_report, ROOT)  # fmt: skip
        else:
            made = self._made(seeds, experiments, finished, runs, done, trained, time.perf_counter() - start)
            written = record(draft or out, grid, finished, made, self.replace_report or draft is not None, ROOT)
        if self.render is not None and not failed_all:  # one writer: the pages this table feeds, as python -m
            written += self.render(draft or out, grid, ROOT)  # minibert.report renders them
        found = None
        if committed is not None and finished:
            found = reproduction.compare_tables(committed, table.read(draft or out))
        if not self.quiet and written:
            print("wrote " + ", ".join(shown(p) for p in written))
        if crashed:  # a bug in the user's code, not an outcome: said as bad input, once the other cells are kept
            return _crashed(crashed, self.prog)
        if len(done) < len(runs) and not self.report_only:
            print(f"{len(runs) - len(done)} of {len(runs)} runs have no result", file=sys.stderr)
        if machine:  # the machine's fault, not the runs': said last, in one line, with the environment's status
            first = machine[0]
            where = f" {first.filename!r}" if first.filename else ""
            return _error(f"{len(machine)} runs could not write{where}: {first.strerror or first}. Free space or fix "
                          "the folder's permissions, or give another --out; finished runs are kept, so the same "
                          "command continues", EXIT_ENVIRONMENT, self.prog)  # fmt: skip
        missing = len(done) < len(runs) and not self.report_only  # report_only asks nothing to run
        if found is not None:  # the last line: whether the committed figures reproduced, and where this run's went
            print(f"{found.line()}; " + (f"{shown(out)} and its pages now hold this machine's table" if draft is None
                  else f"this machine's table and report are in {shown(draft)}, the committed ones as they were "
                  "(--publish writes them into the checkout)"))  # fmt: skip
        return EXIT_FAILED if failed or missing else EXIT_OK

    def _committed(self, out: Path) -> pd.DataFrame | None:
        """The committed table a sweep that trains into a table of the checkout's results/ is read against (the
        README's first command on a fresh clone); None otherwise (a new folder, a user's own, report-only)."""
        if (
            self.report_only
            or self.render is None
            or not out.is_relative_to(ROOT / "results")
            or not (out / FILE).is_file()
        ):
            return None
        return table.read(out)

    @staticmethod
    def _draft(out: Path) -> Path:
        """Where a sweep into a committed table writes this machine's table and report unless asked to publish:
        the checkout is not an output, so `results/dyck` becomes `runs/results/dyck` (ignored by git), with the
        family and the borrowed runs the committed table is held to copied beside it."""
        draft = ROOT / "runs" / out.relative_to(ROOT)
        draft.mkdir(parents=True, exist_ok=True)
        for name in (questions.FILE, table.BORROWED):
            if (out / name).is_file():
                sealed.copy(out / name, draft / name)  # with its seal, where it has one
        return draft

    def _train(self, grid: Grid, runs: list[Run], out: Path) -> tuple[list, int, list[OSError], list]:
        """Train the runs not reusable, with a progress bar: (failed runs with reasons, runs trained, machine
        errors, runs that crashed in plug-in code). Interrupted, it keeps what finished and exits the process."""
        todo = triage(runs, force=self.force, reuse_stale=self.reuse_stale)
        for note in todo.notes:
            print(note, file=sys.stderr)
        progress = _Progress(len(runs))
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            with self._executor(out) as executor:  # leaving it cancels what has not finished
                if todo.todo:  # every cell about to train is built, and what it will log checked, before any run
                    check_metrics(grid, check_cells(executor, todo.todo), planned=True)
                progress.began()
                outcome = run_all(todo, ROOT, executor, self.logger, progress, grid=Path(self.grid).stem,
                                  stop_on_crash=self.stop_on_crash)  # fmt: skip
        except (KeyboardInterrupt, Interrupted) as err:
            progress.close()
            print("\ninterrupted: finished runs are kept; run the same command again to continue", file=sys.stderr)
            os._exit(128 + getattr(err, "signum", signal.SIGINT))  # local workers watch for our death and exit
        finally:
            signal.signal(signal.SIGTERM, previous)
        progress.close()
        for run, reason in outcome.failed:
            if not reason.startswith("not tried:") and reason != BROKEN:  # implied by the crash's or the pool's line
                print(f"run failed: {run.label}: {reason}", file=sys.stderr)
        if outcome.broken:
            print(_broken(outcome), file=sys.stderr)
        return outcome.failed, len(outcome.finished), outcome.machine, outcome.crashed

    def _executor(self, out: Path):
        if self.executor == "local":
            return LocalPool(self.workers)
        # jobs get this environment: the checkout first on the path, so they import this minibert
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        cluster = "slurm" if self.executor == "slurm" else "local"
        return Submitit(cluster, out / ".submitit", self.workers, self.timeout_min, self.cpus_per_task, self.slurm)

    def _made(self, seeds, experiments, finished, runs, done, trained: int, wall: float) -> dict:
        """run.json: how the table's runs were made, in sentences and, for pages to query, typed `figures`."""
        reported = {r.experiment.name for r in finished}
        own = sum(r.summary()["wall_time_s"] for r in done)
        return {
            "date": _now(),
            "command": self.command,
            "grid": f"{self.grid}; seeds: {', '.join(map(str, seeds))}; experiments run: {len(experiments)}, "
            f"reported: {len(reported)}",
            "machine": f"{os.cpu_count()} CPU cores, {platform.processor() or platform.machine()}, workers: "
            f"{self.workers}" + (f", executor: {self.executor}" if self.executor != "local" else ""),
            "wall time of this invocation": f"{wall:.1f} s ({trained} runs trained, {len(done) - trained} reused, "
            f"{len(runs) - len(done)} missing)",
            "sum of the runs' own wall times": f"{own:.1f} s",
            "figures": {  # minibert.tables.query.Data.invocation
                "wall_time_s": round(wall, 1),
                "runs_trained": trained,
                "runs_reused": len(done) - trained,
                "runs_missing": len(runs) - len(done),
                "runs_wall_time_s": round(own, 1),
                "workers": self.workers,
                "seeds": list(seeds),
            },
        } | ({"quick": True} if self.quick else {})


class _Progress:
    """The sweep's progress bar, drawn from the first run on (after the cells were checked), with the pace of
    the runs trained here: no tqdm rate, as runs reused at the start would read as thousands a second."""

    LAYOUT = "{l_bar}{bar}| {n_fmt}/{total_fmt} runs [{elapsed}<{remaining}{postfix}]"

    def __init__(self, total: int) -> None:
        self.total, self.bar, self.trained_at = total, None, []  # trained_at: when training began, then each finish

    def began(self) -> None:
        self.trained_at.append(time.perf_counter())

    def __call__(self, run: Run, status: str) -> None:
        if self.bar is None:
            self.bar = tqdm(total=self.total, desc="ablation", dynamic_ncols=True, bar_format=self.LAYOUT)
        self.bar.update(1)
        if status == "finished":
            self.trained_at.append(time.perf_counter())
        done = len(self.trained_at) - 1
        pace = f", {60 * done / (self.trained_at[-1] - self.trained_at[0]):.1f} runs/min" if done else ""
        self.bar.set_postfix_str(f"{status}: {run.label}{pace}")
        if status == "failed":
            tqdm.write(f"FAILED {run.label}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _broken(outcome: Outcome) -> str:
    """The one line for a worker pool that broke: which runs went with it, and where to look."""
    going, logs = outcome.broken, [r.run_dir / "run.log" for r in outcome.broken if (r.run_dir / "run.log").is_file()]
    untried = sum(reason == f"not tried: {BROKEN}" for _, reason in outcome.failed)
    return (f"runs failed: a worker process died without a word (killed for memory? a crash in native code?) and "
            f"broke the pool, with the {len(going)} runs going ({', '.join(r.label for r in going[:4])}"
            f"{' ...' if len(going) > 4 else ''}); {untried} more not tried; "
            + (f"logs: {', '.join(shown(p) for p in logs[:2])}" if logs else "none had written a log")
            + "; the finished runs are kept, so the same command continues")  # fmt: skip


def _crashed(crashed: list, prog: str) -> int:
    """Each cell whose runs crashed in plug-in code, in one line (minibert.ablation.crashes): bad input."""
    by_cell: dict[str, list] = {}
    for run, reason in crashed:
        by_cell.setdefault(run.experiment.name, []).append((run, reason))
    for (run, reason), *more in by_cell.values():  # its other seeds were already going: the same code, the same bug
        also = f" (and {len(more)} more seed{'s' * (len(more) > 1)} of it the same way)" if more else ""
        print(f"{prog}: error: {run.label} {reason}{also}", file=sys.stderr)
    return EXIT_BAD_INPUT


def seeds_on_disk(out: Path, names: list[str]) -> set[int]:
    """Seeds of the run folders `<out>/runs/<experiment>/seed<N>-<key>` of these experiments."""
    found = set()
    for name in names:
        for folder in (out / "runs" / name).glob("seed*-*"):
            if m := re.fullmatch(r"seed(\d+)-[0-9a-f]+", folder.name):
                found.add(int(m[1]))
    return found


def use_plugins(folders: list[str]) -> None:
    """Make plug-ins in `folders` importable here, in local workers (given this sys.path) and in submitit jobs
    (which get PYTHONPATH)."""
    resolved = [str(Path(f).resolve()) for f in folders]
    sys.path[:0] = [f for f in resolved if f not in sys.path]
    if resolved:
        os.environ["PYTHONPATH"] = os.pathsep.join([*resolved, *filter(None, [os.environ.get("PYTHONPATH")])])


def check_cells(executor, runs: list[Run]) -> dict[str, set[str]]:
    """minibert.ablation.preflight on the cells of `runs`: in a local worker, which then trains with its imports
    and parser already warm, or here for submitit (a cluster job would wait in the queue)."""
    print(f"checking the {len({r.experiment.name for r in runs})} cells to train...", file=sys.stderr)
    if not isinstance(executor, LocalPool):
        return preflight(runs, ROOT)
    job = executor.submit(preflight, runs, ROOT)
    executor.wait([job])
    return executor.result(job)


def check_quick(out: Path, quick: bool) -> None:
    """A folder holds runs of one kind: a table made at a grid's quick budget is never joined by real runs, nor
    the other way round (run.json records `quick`)."""
    made = out / "run.json"
    if made.is_file() and bool(read_json(made).get("quick")) != quick:
        kind = "with --quick (a tiny budget)" if not quick else "at the grid's real budgets"
        raise GridError(f"{out} holds a table made {kind}: give this run another --out")


def logged_metrics(runs: list[Run]) -> dict[str, set[str]]:
    """Experiment name -> the keys its finished runs' summaries hold."""
    logged: dict[str, set[str]] = {}
    for r in runs:
        try:
            summary = r.read()
        except DamagedSummary:
            continue
        if summary is not None:
            logged.setdefault(r.experiment.name, set()).update(summary)
    return logged


class Interrupted(BaseException):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _interrupt(signum, frame) -> None:
    raise Interrupted(signum)


def _error(message: str, code: int, prog: str = "ablate.py") -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
