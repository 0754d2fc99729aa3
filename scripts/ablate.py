"""Every comparison of the write-up in one command, over seeds, with tables and pictures.

    python scripts/ablate.py                              # default grid, 3 seeds: the committed results/ again
    python scripts/ablate.py --only 'finetune/*' --seeds 5
    python scripts/ablate.py --report-only                # rebuild the table and report from finished runs
    python scripts/ablate.py --executor slurm --slurm-partition cpu --workers 64   # one SLURM job per run

A command line over minibert.sweep.Sweep, which holds the rules. A sweep into a committed table (results/...)
reads this machine's figures against it and writes its own table and report to runs/<out>, leaving the checkout
as it was; --publish writes them into the checkout. Runs are resumable: a rerun reuses runs whose summary.json is
complete and was made by the same code, and redoes any run killed mid-way, damaged or stale. One runner per --out
(a second one says who holds it). Before anything trains, every cell about to train is built (config, plug-ins,
model, data) and what it will log is checked against the grid's claims and
tables (minibert.ablation.preflight).

Exit code 0 when every run succeeded, 1 when some failed (each is listed with its log), 2 on bad input
(grid, options, a cell that cannot be built, a report that would drop results), 3 when the machine fails us
(a folder that cannot be written, a full disk, --out held by another runner, no SLURM for --executor slurm),
130/143 when interrupted (Ctrl-C/SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from minibert.ablation.executors import EXECUTORS, start_fork_server
from minibert.ablation.grid import GridError, load_grid
from minibert.ablation.lock import Busy, check_free
from minibert.checkout import CHECKOUT
from minibert.commandline import ArgumentParser
from minibert.places import PlaceError, check_out

EXIT_ENVIRONMENT = 3  # minibert.sweep's status for a folder another runner holds (that module imports torch)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = ArgumentParser(
        prog="ablate.py", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
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
    p.add_argument(
        "--publish",
        action="store_true",
        help="into a committed table (results/...): write this machine's table and every page that reads it into "
        "the checkout (without it they go to runs/<out>, and the committed files stay as they are)",
    )
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
    if not (CHECKOUT / args.grid).is_file():
        p.error(f"--grid {args.grid}: no such file (grids are named from the checkout: configs/ablations/*.yaml)")
    try:  # the sweep reads it again; read here, a typo in it is answered before torch is imported
        grid = load_grid(CHECKOUT / args.grid, root=CHECKOUT)
        (grid.quickened() if args.quick else grid).select(args.only.split(",") if args.only else None)
    except GridError as err:
        p.error(str(err))
    if args.quick and args.out is None:
        p.error("--quick needs its own --out, so that its tiny runs never join a grid's committed results")
    args.out = args.out or "results"
    try:
        check_out(args.out)
    except PlaceError as err:
        p.error(str(err))
    out = Path(args.out)
    if args.report_only and not ((out / "results.csv").is_file() or any(out.glob("runs/**/summary.json"))):
        p.error(f"--report-only: {args.out} holds no finished run (no runs/**/summary.json) and no results.csv to "
                "rebuild the report from; run the grid first, or give the --out its runs went to")  # fmt: skip
    if args.workers < 1:
        p.error(f"--workers={args.workers}: must be at least 1")
    for folder in args.plugins:
        if not Path(folder).is_dir():
            p.error(f"--plugins={folder}: not a folder")
    for name in ("timeout_min", "cpus_per_task"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')}={getattr(args, name)}: must be at least 1")
    try:  # last, after the usage errors (status 2); the sweep takes the lock itself when it starts
        check_free(args.out)
    except Busy as err:
        p.exit(EXIT_ENVIRONMENT, f"{p.prog}: error: {err}\n")
    return args


def trains_locally(args: argparse.Namespace) -> bool:
    return args.executor == "local" and not args.report_only


# Local workers fork from a server that imports torch and lightning (seconds): started before the sweep's own
# imports below, the two import side by side.
if __name__ == "__main__" and trains_locally(parse_args()):
    sys.warnoptions.append("ignore:resource_tracker:UserWarning")  # minibert.sweep.QUIET_TRACKER, before the fork
    start_fork_server()  # server starts the resource tracker (which copies these flags); the sweep is imported below
from minibert.report.render import publish  # noqa: E402
from minibert.sweep import Sweep  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    return Sweep(
        grid=args.grid,
        out=Path(args.out),
        seeds=args.seed_list or (list(range(args.seeds)) if args.seeds else None),
        only=args.only.split(",") if args.only else None,
        quick=args.quick,
        workers=args.workers,
        logger=args.logger,
        force=args.force,
        reuse_stale=args.reuse_stale,
        report_only=args.report_only,
        replace_report=args.replace_report,
        publish=args.publish,
        render=None if args.no_report else publish,
        executor=args.executor,
        plugins=args.plugins,
        slurm={k: v for k, v in (("partition", args.slurm_partition), ("account", args.slurm_account)) if v},
        timeout_min=args.timeout_min,
        cpus_per_task=args.cpus_per_task,
        command=" ".join(["python", f"scripts/{Path(__file__).name}", *map(shlex.quote, given)]),
    ).run()


if __name__ == "__main__":
    sys.exit(main())
