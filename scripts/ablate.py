"""Every comparison of the write-up in one command, over seeds, with tables and pictures.

    python scripts/ablate.py                              # default grid, 3 seeds, into results/
    python scripts/ablate.py --only 'finetune/*' --seeds 5
    python scripts/ablate.py --report-only                # rebuild csv/md/png/html from finished runs

Runs are resumable: a rerun skips runs whose summary.json exists and redoes any run killed mid-way.
Exit code 0 when every run succeeded, 1 when some failed (each is listed with its log), 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from tqdm import tqdm  # noqa: E402

from minibert.ablation.grid import GridError, load_grid  # noqa: E402
from minibert.ablation.report import write_report  # noqa: E402
from minibert.ablation.runner import plan, run_all  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--grid", default="configs/ablations/default.yaml", help="grid file (relative to the repo)")
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument("--seeds", type=int, default=3, help="run seeds 0..N-1 (default 3)")
    seeds.add_argument("--seed-list", help="comma-separated seeds, e.g. 0,1,7")
    p.add_argument("--only", help="comma-separated globs on experiment names, e.g. 'pretrain/*,finetune/full'")
    p.add_argument("--out", default="results", help="where results (and runs/) go (default results/)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel runs (default: CPU count)")
    p.add_argument("--logger", choices=("csv", "wandb"), default="csv", help="wandb runs offline without an API key")
    p.add_argument("--force", action="store_true", help="rerun runs that already finished")
    p.add_argument("--report-only", action="store_true", help="only rebuild the report from finished runs")
    args = p.parse_args(argv)
    if args.seed_list is not None:
        try:
            args.seed_list = [int(s) for s in args.seed_list.split(",") if s.strip()]
        except ValueError:
            p.error(f"--seed-list={args.seed_list!r}: give comma-separated integers, e.g. 0,1,2")
        if not args.seed_list:
            p.error("--seed-list is empty")
    elif args.seeds < 1:
        p.error(f"--seeds={args.seeds}: must be at least 1")
    if args.workers < 1:
        p.error(f"--workers={args.workers}: must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    seeds = args.seed_list or list(range(args.seeds))
    out = Path(args.out).resolve()
    try:
        grid = load_grid(ROOT / args.grid, root=ROOT)
        experiments = grid.select(args.only.split(",") if args.only else None)
    except GridError as err:
        print(f"ablate.py: error: {err}", file=sys.stderr)
        return 2
    everything = plan(list(grid.experiments), seeds, out, ROOT)
    runs = [r for r in everything if r.experiment in experiments]  # --only narrows what runs, not the report
    for stale in out.glob(".*.tmp"):  # a report file a killed invocation was writing (see files.write_atomic)
        stale.unlink()

    failed = []
    trained = 0
    if not args.report_only:
        bar = tqdm(total=len(runs), unit="run", desc="ablation", dynamic_ncols=True)

        def progress(run, status):
            bar.update(1)
            bar.set_postfix_str(f"{status}: {run.label}")
            if status == "failed":
                tqdm.write(f"FAILED {run.label}")

        try:
            outcome = run_all(runs, ROOT, args.workers, args.logger, args.force, progress, grid=Path(args.grid).stem)
        except KeyboardInterrupt:
            bar.close()
            print("\ninterrupted: finished runs are kept; run the same command again to continue", file=sys.stderr)
            os._exit(130)  # the workers die with us (see runner._init_worker)
        bar.close()
        failed, trained = outcome.failed, len(outcome.finished)
        for run, reason in failed:
            print(f"run failed: {run.label}: {reason}", file=sys.stderr)

    done = [r for r in runs if r.done]
    # the report covers every experiment of the grid with finished runs in --out
    reported = [e for e in grid.experiments if any(r.done for r in everything if r.experiment is e)]
    command = "python " + " ".join(shlex.quote(a) for a in [f"scripts/{Path(__file__).name}", *(argv or sys.argv[1:])])
    header = [
        f"date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"command: `{command}`",
        f"grid: {args.grid}; seeds: {', '.join(map(str, seeds))}; experiments run: {len(experiments)}, "
        f"reported: {len(reported)}",
        f"machine: {os.cpu_count()} CPU cores, {platform.processor() or platform.machine()}, workers: {args.workers}",
        f"wall time of this invocation: {time.perf_counter() - start:.1f} s "
        f"({trained} runs trained, {len(done) - trained} reused, {len(runs) - len(done)} missing)",
        f"sum of the runs' own wall times: {sum(r.summary()['wall_time_s'] for r in done):.1f} s",
    ]
    written = write_report(out, grid, reported, [r for r in everything if r.experiment in reported], header)
    print("wrote " + ", ".join(os.path.relpath(p) for p in written))
    if len(done) < len(runs):
        print(f"{len(runs) - len(done)} of {len(runs)} runs have no result", file=sys.stderr)
    return 1 if failed or len(done) < len(runs) else 0


if __name__ == "__main__":
    sys.exit(main())
