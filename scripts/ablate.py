"""Every comparison of the write-up in one command, over seeds, with tables and pictures.

    python scripts/ablate.py                              # default grid, 3 seeds, into results/
    python scripts/ablate.py --only 'finetune/*' --seeds 5
    python scripts/ablate.py --report-only                # rebuild the table and report from finished runs
    python scripts/ablate.py --executor slurm --slurm-partition cpu --workers 64   # one SLURM job per run

Runs are resumable: a rerun reuses runs whose summary.json is complete and was made by the same code, and
redoes any run killed mid-way, damaged or stale. One runner per --out (a second one says who holds it).
Before anything trains, every cell about to train is built (config, plug-ins, model, data) and what it will
log is checked against the grid's claims and tables (minibert.ablation.preflight).

Exit code 0 when every run succeeded, 1 when some failed (each is listed with its log), 2 on bad input
(grid, options, a cell that cannot be built, a report that would drop results), 3 when the machine fails us
(a folder that cannot be written, a full disk, --out held by another runner, no SLURM for --executor slurm),
130/143 when interrupted (Ctrl-C/SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import shutil
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tqdm import tqdm  # noqa: E402

from minibert.ablation.executors import EXECUTORS, LocalPool, Submitit, start_fork_server  # noqa: E402

EXIT_BAD_INPUT, EXIT_ENVIRONMENT = 2, 3


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--grid", default="configs/ablations/default.yaml", help="grid file (relative to the repo)")
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seeds", type=int, help="run seeds 0..N-1 (default 3; with --report-only, the seeds of the runs in --out)"
    )
    seeds.add_argument("--seed-list", help="comma-separated seeds, e.g. 0,1,7")
    p.add_argument("--only", help="comma-separated globs on experiment names, e.g. 'pretrain/*,finetune/full'")
    p.add_argument("--out", help="where results (and runs/) go (default results/)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="every experiment at the grid's `quick` overrides (a tiny budget: the same code in seconds); needs --out",
    )
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel runs (default: CPU count)")
    p.add_argument("--logger", choices=("csv", "wandb"), default="csv", help="wandb runs offline without an API key")
    p.add_argument("--force", action="store_true", help="rerun runs that already finished")
    p.add_argument("--reuse-stale", action="store_true", help="reuse finished runs made by other code (warns)")
    p.add_argument("--report-only", action="store_true", help="only rebuild the report from finished runs")
    p.add_argument("--replace-report", action="store_true", help="allow a report that drops runs of the old one")
    p.add_argument("--no-report", action="store_true", help="write the table only, not the pages that read it "
                   "(scripts/compare.py renders them once it stops; or run python -m minibert.report)")  # fmt: skip
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: worker processes here (default); slurm: one SLURM job per run through submitit "
        "(--workers jobs at a time); submitit-local: submitit's local backend, for testing",
    )
    p.add_argument(
        "--plugins",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder that plug-ins named by class path are imported from (put on the path of every run and "
        "job; repeatable). Without it they must be importable already, e.g. through PYTHONPATH",
    )
    p.add_argument("--slurm-partition", help="SLURM partition for --executor slurm")
    p.add_argument("--slurm-account", help="SLURM account for --executor slurm")
    p.add_argument("--timeout-min", type=int, default=60, help="time limit of one submitit job (default 60)")
    p.add_argument("--cpus-per-task", type=int, default=1, help="CPUs of one submitit job (default 1)")
    args = p.parse_args(argv)
    if args.seed_list is not None:
        try:
            args.seed_list = [int(s) for s in args.seed_list.split(",") if s.strip()]
        except ValueError:
            p.error(f"--seed-list={args.seed_list!r}: give comma-separated integers, e.g. 0,1,2")
        if not args.seed_list:
            p.error("--seed-list is empty")
    elif args.seeds is not None and args.seeds < 1:
        p.error(f"--seeds={args.seeds}: must be at least 1")
    if args.seed_list is not None and any(s < 0 or s > 2**32 - 1 for s in args.seed_list):
        p.error(f"--seed-list={','.join(map(str, args.seed_list))}: seeds must be in [0, {2**32 - 1}]")
    if args.quick and args.out is None:
        p.error("--quick needs its own --out, so that its tiny runs never join a grid's committed results")
    args.out = args.out or "results"
    if args.workers < 1:
        p.error(f"--workers={args.workers}: must be at least 1")
    for folder in args.plugins:
        if not Path(folder).is_dir():
            p.error(f"--plugins={folder}: not a folder")
    for name in ("timeout_min", "cpus_per_task"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')}={getattr(args, name)}: must be at least 1")
    return args


def trains_locally(args: argparse.Namespace) -> bool:
    return args.executor == "local" and not args.report_only


# Local workers fork from a server that imports torch and lightning (seconds): started before this script's
# own imports below, the two import side by side.
if __name__ == "__main__" and trains_locally(parse_args()):
    start_fork_server()
from minibert.ablation.grid import GridError, check_metrics, load_grid  # noqa: E402
from minibert.ablation.lock import Busy, OutLock  # noqa: E402
from minibert.ablation.preflight import preflight  # noqa: E402
from minibert.ablation.runner import DamagedSummary, plan, run_all, triage  # noqa: E402
from minibert.report import render  # noqa: E402
from minibert.report.grid_report import ReportError, record  # noqa: E402
from minibert.report.table import TableError, grid_of_table, read_json  # noqa: E402


def seeds_on_disk(out: Path, names: list[str]) -> set[int]:
    """Seeds of the run folders `<out>/runs/<experiment>/seed<N>-<key>` of these experiments."""
    found = set()
    for name in names:
        for folder in (out / "runs" / name).glob("seed*-*"):
            if m := re.fullmatch(r"seed(\d+)-[0-9a-f]+", folder.name):
                found.add(int(m[1]))
    return found


def use_plugins(folders: list[str]) -> None:
    """Make plug-ins in `folders` importable here, in local workers (given this sys.path) and in
    submitit jobs (which get PYTHONPATH)."""
    resolved = [str(Path(f).resolve()) for f in folders]
    sys.path[:0] = [f for f in resolved if f not in sys.path]
    if resolved:
        os.environ["PYTHONPATH"] = os.pathsep.join([*resolved, *filter(None, [os.environ.get("PYTHONPATH")])])


def check_cells(executor, runs) -> dict[str, set[str]]:
    """minibert.ablation.preflight on the cells of `runs`: in a local worker, which then trains with its
    imports and parser already warm, or here for submitit (a cluster job would wait in the queue)."""
    print(f"checking the {len({r.experiment.name for r in runs})} cells to train...", file=sys.stderr)
    if not isinstance(executor, LocalPool):
        return preflight(runs, ROOT)
    job = executor.submit(preflight, runs, ROOT)
    executor.wait([job])
    return executor.result(job)


def make_executor(args: argparse.Namespace, out: Path):
    if args.executor == "local":
        return LocalPool(args.workers)
    # jobs get this environment: the checkout first on the path, so they import this minibert
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    slurm = {k: v for k, v in (("partition", args.slurm_partition), ("account", args.slurm_account)) if v}
    cluster = "slurm" if args.executor == "slurm" else "local"
    return Submitit(cluster, out / ".submitit", args.workers, args.timeout_min, args.cpus_per_task, slurm)


class Interrupted(BaseException):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _interrupt(signum, frame) -> None:
    raise Interrupted(signum)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    use_plugins(args.plugins)
    if args.executor == "slurm" and not args.report_only and shutil.which("sbatch") is None:
        print("ablate.py: error: --executor slurm needs SLURM, and this machine has none (no sbatch on PATH): run "
              "on the cluster's login node, or use --executor local", file=sys.stderr)  # fmt: skip
        return EXIT_ENVIRONMENT
    out = Path(args.out).resolve()
    try:
        grid = load_grid(ROOT / args.grid, root=ROOT)
        if args.quick:
            grid = grid.quickened()
        check_quick(out, args.quick)
        experiments = grid.select(args.only.split(",") if args.only else None)
        with OutLock(out):
            return run_grid(args, argv, grid, experiments, out, start)
    except (GridError, ReportError, render.ReportError, TableError) as err:
        print(f"ablate.py: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Busy as err:
        print(f"ablate.py: error: {err}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    except ImportError as err:  # submitit missing
        print(f"ablate.py: error: --executor {args.executor} needs submitit ({err}); pip install submitit",
              file=sys.stderr)  # fmt: skip
        return EXIT_ENVIRONMENT
    except OSError as err:
        where = f" {err.filename!r}" if err.filename else ""
        print(
            f"ablate.py: error: cannot read or write{where}: {err.strerror or err}. Check the folder's permissions "
            "and free space, or give another --out",
            file=sys.stderr,
        )
        return EXIT_ENVIRONMENT


def check_quick(out: Path, quick: bool) -> None:
    """A folder holds runs of one kind: a table made at a grid's quick budget is never joined by real runs, nor
    the other way round (run.json records `quick`)."""
    made = out / "run.json"
    if made.is_file() and bool(read_json(made).get("quick")) != quick:
        kind = "with --quick (a tiny budget)" if not quick else "at the grid's real budgets"
        raise GridError(f"{out} holds a table made {kind}: give this run another --out")


def logged_metrics(runs) -> dict[str, set[str]]:
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


def run_grid(args, argv, grid, experiments, out: Path, start: float) -> int:
    if args.seed_list:
        seeds = args.seed_list
    elif args.seeds is None and args.report_only:  # the report of what is there, however many seeds that is
        seeds = sorted(seeds_on_disk(out, [e.name for e in experiments])) or list(range(3))
    else:
        seeds = list(range(args.seeds or 3))
    # the report covers every finished run of the grid in --out, whatever seeds this invocation runs
    everything = plan(list(grid.experiments), sorted(set(seeds) | seeds_on_disk(out, grid.names)), out, ROOT)
    runs = [r for r in everything if r.experiment in experiments and r.seed in seeds]  # --only, --seeds: what runs
    check_metrics(grid, logged_metrics(everything))  # names typed in the grid, against runs already there
    for stale in out.glob(".*.tmp"):  # a report file a killed invocation was writing (see files.write_atomic)
        stale.unlink()

    failed, machine = [], []
    trained = 0
    if not args.report_only:
        todo = triage(runs, force=args.force, reuse_stale=args.reuse_stale)
        for note in todo.notes:
            print(note, file=sys.stderr)
        bars: list[tqdm] = []  # drawn from the first run on, after the cells were checked
        trained_at: list[float] = []  # when training began, then when each run trained here finished: the pace
        layout = "{l_bar}{bar}| {n_fmt}/{total_fmt} runs [{elapsed}<{remaining}{postfix}]"  # no tqdm rate: runs
        # reused at the start would read as thousands a second

        def progress(run, status):
            if not bars:
                bars.append(tqdm(total=len(runs), desc="ablation", dynamic_ncols=True, bar_format=layout))
            bar = bars[0]
            bar.update(1)
            if status == "finished":
                trained_at.append(time.perf_counter())
            done = len(trained_at) - 1  # the first entry is when training began
            pace = f", {60 * done / (trained_at[-1] - trained_at[0]):.1f} runs/min" if done else ""
            bar.set_postfix_str(f"{status}: {run.label}{pace}")
            if status == "failed":
                tqdm.write(f"FAILED {run.label}")

        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            with make_executor(args, out) as executor:  # leaving it cancels what has not finished
                if todo.todo:  # every cell about to train is built, and what it will log checked, before any run
                    check_metrics(grid, check_cells(executor, todo.todo), planned=True)
                trained_at.append(time.perf_counter())
                outcome = run_all(todo, ROOT, executor, args.logger, progress, grid=Path(args.grid).stem)
        except (KeyboardInterrupt, Interrupted) as err:
            for bar in bars:
                bar.close()
            print("\ninterrupted: finished runs are kept; run the same command again to continue", file=sys.stderr)
            os._exit(128 + getattr(err, "signum", signal.SIGINT))  # local workers watch for our death and exit
        finally:
            signal.signal(signal.SIGTERM, previous)
        for bar in bars:
            bar.close()
        failed, trained = outcome.failed, len(outcome.finished)
        for run, reason in failed:
            print(f"run failed: {run.label}: {reason}", file=sys.stderr)
        machine = outcome.machine

    done = [r for r in runs if r.done]
    finished = [r for r in everything if r.done]
    check_metrics(grid, logged_metrics(finished))
    reported = [e for e in grid.experiments if any(r.experiment is e for r in finished)]
    command = "python " + " ".join(shlex.quote(a) for a in [f"scripts/{Path(__file__).name}", *(argv or sys.argv[1:])])
    if args.report_only and not finished and grid_of_table(out) == Path(grid.path).stem:  # a clone's table
        written = []
    elif args.report_only and (out / "run.json").is_file():  # how the runs were made stays as the run said
        made = read_json(out / "run.json")
        written = record(
            out, grid, finished, {**made, "table rebuilt": f"{command}, {_now()}"}, args.replace_report, ROOT
        )
    else:
        wall, own = time.perf_counter() - start, sum(r.summary()["wall_time_s"] for r in done)
        made = {
            "date": _now(),
            "command": command,
            "grid": f"{args.grid}; seeds: {', '.join(map(str, seeds))}; experiments run: {len(experiments)}, "
            f"reported: {len(reported)}",
            "machine": f"{os.cpu_count()} CPU cores, {platform.processor() or platform.machine()}, workers: "
            f"{args.workers}" + (f", executor: {args.executor}" if args.executor != "local" else ""),
            "wall time of this invocation": f"{wall:.1f} s ({trained} runs trained, "
            f"{len(done) - trained} reused, {len(runs) - len(done)} missing)",
            "sum of the runs' own wall times": f"{own:.1f} s",
            # the same, typed, for pages to query (minibert.report.query.Data.invocation)
            "figures": {
                "wall_time_s": round(wall, 1),
                "runs_trained": trained,
                "runs_reused": len(done) - trained,
                "runs_missing": len(runs) - len(done),
                "runs_wall_time_s": round(own, 1),
                "workers": args.workers,
            },
        } | ({"quick": True} if args.quick else {})
        written = record(out, grid, finished, made, args.replace_report, ROOT)
    if not args.no_report:  # one writer: the pages this table feeds, as python -m minibert.report renders them
        written += render.publish(out, grid, ROOT)
    print("wrote " + ", ".join(os.path.relpath(p) for p in written))
    if len(done) < len(runs) and not args.report_only:
        print(f"{len(runs) - len(done)} of {len(runs)} runs have no result", file=sys.stderr)
    if machine:  # the machine's fault, not the runs': say so last, in one line, with the environment's status
        first = machine[0]
        where = f" {first.filename!r}" if first.filename else ""
        print(f"ablate.py: error: {len(machine)} runs could not write{where}: {first.strerror or first}. Free space "
              "or fix the folder's permissions, or give another --out; finished runs are kept, so the same "
              "command continues", file=sys.stderr)  # fmt: skip
        return EXIT_ENVIRONMENT
    missing = len(done) < len(runs) and not args.report_only  # --report-only asks nothing to run
    return 1 if failed or missing else 0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


if __name__ == "__main__":
    sys.exit(main())
