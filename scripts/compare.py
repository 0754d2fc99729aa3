"""Does B beat A, and by how much? Paired seeds, as many as a target precision needs, and a verdict.

    python scripts/compare.py --grid configs/ablations/dyck.yaml --out results/dyck \
        --arms dyck/pretrain/mlm,dyck/pretrain/span --metric val/gap/acc --half-width 0.01

Every arm runs on the same seeds through `scripts/ablate.py` (same --out, so runs are shared with the grid's
report and reused on a rerun). Seed s gives every arm the same training stream, validation questions and,
where shapes match, initial weights. Seeds 0..n0-1 are the pilot (--pilot); their spread of each pair's
difference sets how many seeds Stein's procedure needs for a 95% half-width of --half-width
(minibert.ablation.power), at most --max-seeds; the missing seeds are then run and every pair is judged on
all of them. For each pair A - B it prints and writes (`<out>/comparisons/<name>.md` and `.json`): the mean
difference and its 95% interval, the seeds used, P(A better) over seeds, the smallest difference those
seeds detect four times in five, and a verdict: A better, B better, equivalent within ±h, or undecided.

"Better" follows the metric: higher for accuracies, lower for gaps to the ceiling and losses (or say
--lower-is-better). Exit codes as ablate.py's: 0, 1 (a run failed), 2 (bad input), 3 (the machine).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path

from minibert.ablation import accuracies
from minibert.ablation.grid import Grid, GridError, load_grid
from minibert.ablation.power import Comparison, compare, half_width, seeds_needed
from minibert.ablation.runner import plan
from minibert.atomic_writes import write_atomic, write_json
from minibert.report.query import Data
from minibert.report.table import from_runs, split

try:  # imported from the checkout (tests), or run as `python scripts/compare.py` beside it
    from scripts import ablate
except ImportError:
    import ablate

ROOT = Path(__file__).resolve().parent.parent

EXIT_BAD_INPUT = 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--grid", required=True, help="grid file (relative to the repo)")
    p.add_argument("--out", required=True, help="the grid's results folder (runs are shared with its report)")
    p.add_argument("--arms", required=True, help="two or more experiment names, comma-separated; A is the first")
    p.add_argument("--metric", required=True, help="the metric compared, e.g. val/acc or val/gap/acc")
    p.add_argument("--half-width", type=float, required=True, help="target 95%% half-width, in the metric's units")
    p.add_argument("--pilot", type=int, default=10, help="pilot seeds n0 (default 10)")
    p.add_argument("--max-seeds", type=int, default=30, help="seed budget per arm (default 30)")
    p.add_argument("--first-seed", type=int, default=0, help="seeds are first-seed, first-seed + 1, ... (default 0)")
    p.add_argument("--lower-is-better", action="store_true", default=None, help="default: for gaps and losses")
    p.add_argument("--name", help="file name of the written comparison (default from the arms and metric)")
    p.add_argument("--workers", type=int, default=2, help="parallel runs (default 2)")
    p.add_argument("--replace-report", action="store_true", help="as ablate.py's: let the grid's report drop runs")
    args = p.parse_args(argv)
    args.arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if len(args.arms) < 2:
        p.error(f"--arms needs two or more experiments, got {args.arms}")
    if not args.half_width > 0:
        p.error(f"--half-width={args.half_width}: must be > 0")
    if args.pilot < 2:
        p.error(f"--pilot={args.pilot}: must be at least 2 (the spread needs two seeds)")
    if args.max_seeds < args.pilot:
        p.error(f"--max-seeds={args.max_seeds}: must be at least --pilot={args.pilot}")
    if args.lower_is_better is None:
        key = accuracies.parse(args.metric)
        args.lower_is_better = (key is not None and key.role == "gap") or args.metric.endswith("loss")
    return args


def run_seeds(args: argparse.Namespace, seeds: list[int]) -> int:
    """Train (or reuse) every arm on `seeds` through ablate.py, which also rebuilds the grid's report."""
    return ablate.main(
        ["--grid", args.grid, "--out", args.out, "--only", ",".join(args.arms),
         "--seed-list", ",".join(map(str, seeds)), "--workers", str(args.workers),
         *(["--replace-report"] if args.replace_report else [])]
    )  # fmt: skip


def differences(args: argparse.Namespace, grid: Grid, seeds: list[int]) -> dict[tuple[str, str], dict[int, float]]:
    """(A, B) -> {seed: A - B} for every pair of arms, in the direction where > 0 means A is better."""
    runs = [r for r in plan(grid.select(args.arms), seeds, Path(args.out).resolve(), ROOT) if r.done]
    data = Data(from_runs(grid, [(r, r.summary()) for r in runs], ROOT))
    metric, category = split(args.metric)
    values = {arm: data.stat(metric, category, experiment=arm).values for arm in args.arms}
    sign = -1.0 if args.lower_is_better else 1.0
    return {
        (a, b): {s: sign * (values[a][s] - values[b][s]) for s in seeds if s in values[a] and s in values[b]}
        for a, b in itertools.combinations(args.arms, 2)
    }


def _points(x: float) -> str:
    return f"{100 * x:+.2f}"


def table(args: argparse.Namespace, comparisons: dict[tuple[str, str], Comparison]) -> list[str]:
    unit = "points" if accuracies.parse(args.metric) is not None else "units"
    direction = "lower" if args.lower_is_better else "higher"
    lines = [
        f"Metric `{args.metric}` ({direction} is better); differences A − B signed so that > 0 means A is better, "
        f"in {unit}; target 95% half-width ±{100 * args.half_width:g}; Stein's two-stage procedure, pilot of "
        f"{args.pilot} seeds, at most {args.max_seeds}.",
        "",
        "| A | B | A − B (95% interval) | ± | seeds | P(A better) | detectable (80% power) | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (a, b), c in comparisons.items():
        iv = c.interval
        lines.append(
            f"| {a} | {b} | {_points(iv.mean)} ({_points(iv.lo)} to {_points(iv.hi)}) | {100 * half_width(iv):.2f} "
            f"| {len(c.diffs)} | {c.p_a_better:.2f} | {100 * c.detectable:.2f} | {c.verdict} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        grid = load_grid(ROOT / args.grid, root=ROOT)
        unknown = [arm for arm in args.arms if arm not in grid.names]
        if unknown:
            valid = ", ".join(grid.names)
            raise GridError(f"--arms: {unknown[0]!r} is not an experiment of {args.grid}; valid: {valid}")
    except GridError as err:
        print(f"compare.py: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    pilot = list(range(args.first_seed, args.first_seed + args.pilot))
    if (code := run_seeds(args, pilot)) != 0:
        return code
    diffs = differences(args, grid, pilot)
    for pair, d in diffs.items():
        if len(d) < len(pilot) or any(math.isnan(v) for v in d.values()):
            print(f"compare.py: error: {pair[0]} or {pair[1]} did not log {args.metric} on every pilot seed",
                  file=sys.stderr)  # fmt: skip
            return EXIT_BAD_INPUT
    needed = max(seeds_needed(list(d.values()), args.half_width, args.max_seeds) for d in diffs.values())
    seeds = list(range(args.first_seed, args.first_seed + needed))
    print(f"compare.py: the pilot's spread calls for {needed} seeds (at most {args.max_seeds})", file=sys.stderr)
    if needed > len(pilot) and (code := run_seeds(args, seeds)) != 0:
        return code
    comparisons = {}
    for pair, d in differences(args, grid, seeds).items():
        pilot_d = [d[s] for s in pilot]
        capped = seeds_needed(pilot_d, args.half_width, 10**9) > needed
        comparisons[pair] = compare(d, args.pilot, args.half_width, capped)
    name = args.name or f"{'_vs_'.join(a.replace('/', '.') for a in args.arms)}-{args.metric.replace('/', '.')}"
    command = "python scripts/compare.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"# {' vs '.join(args.arms)}", "", f"- command: `{command}`",
             f"- seeds: {seeds[0]}..{seeds[-1]}; wall time of this invocation: {time.perf_counter() - start:.0f} s",
             "", *table(args, comparisons)]  # fmt: skip
    folder = Path(args.out) / "comparisons"
    write_atomic(folder / f"{name}.md", "\n".join(lines) + "\n")
    write_json(
        folder / f"{name}.json",
        {"metric": args.metric, "lower_is_better": args.lower_is_better, "half_width": args.half_width,
         "pilot": args.pilot, "max_seeds": args.max_seeds, "seeds": seeds,
         "pairs": [{"a": a, "b": b, "diffs": c.diffs, "mean": c.interval.mean, "lo": c.interval.lo,
                    "hi": c.interval.hi, "df": c.interval.df, "p_a_better": c.p_a_better,
                    "detectable": c.detectable, "capped": c.capped, "verdict": c.verdict}
                   for (a, b), c in comparisons.items()]},
    )  # fmt: skip
    print("\n".join(table(args, comparisons)))
    print(f"wrote {folder / name}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
