"""Mean and spread over seeds of one metric, per experiment of a grid, with each run's cost: how a recipe
is judged (a low mean gap with a low spread; a low spread alone can mean nothing was learned).

    python scripts/spread.py --grid configs/ablations/recipe.yaml --out results/recipe --metric val/gap/acc

Prints a Markdown table: experiment, seeds, mean, SD, min, max (in points for accuracies), the mean run time
and its ratio to the first experiment's (`--baseline` names another).
"""

from __future__ import annotations

import argparse
import fnmatch
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minibert.ablation import accuracies  # noqa: E402
from minibert.ablation.grid import GridError, MetricRef, load_grid  # noqa: E402
from minibert.ablation.results import Results  # noqa: E402
from minibert.ablation.runner import plan  # noqa: E402
from scripts.ablate import seeds_on_disk  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--grid", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--metric", default="val/gap/acc")
    p.add_argument("--only", help="comma-separated experiment names (default: all with runs)")
    p.add_argument("--baseline", help="the experiment whose run time is 1.0 (default: the first shown)")
    args = p.parse_args(argv)
    try:
        grid = load_grid(ROOT / args.grid, root=ROOT)
        selected = grid.select(args.only.split(",") if args.only else None)  # with what they load encoders from
        patterns = args.only.split(",") if args.only else ["*"]
        experiments = [e for e in selected if any(fnmatch.fnmatch(e.name, p) for p in patterns)]
    except GridError as err:
        print(f"spread.py: error: {err}", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    runs = plan(selected, sorted(seeds_on_disk(out, [e.name for e in selected])), out, ROOT)
    results = Results.collect(runs)
    times: dict[str, list[float]] = {}
    for run, summary in results.summaries:
        times.setdefault(run.experiment.name, []).append(summary["wall_time_s"])
    scale = 100 if accuracies.parse(args.metric) is not None else 1
    rows = []
    for e in experiments:
        values = list(results.get(MetricRef(e.name, args.metric)).values())
        if values:  # experiments that do not log the metric (fine-tuning has no gap) are left out
            sd = statistics.stdev(values) if len(values) > 1 else float("nan")
            t = statistics.fmean(times[e.name])
            rows.append((e.name, len(values), statistics.fmean(values), sd, min(values), max(values), t))
    if not rows:
        print(f"spread.py: error: no finished run in {args.out} logs {args.metric}", file=sys.stderr)
        return 2
    base = next((r[-1] for r in rows if r[0] == args.baseline), rows[0][-1])
    print(f"| experiment | seeds | mean {args.metric} | SD | min | max | run time (s) | cost |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, mean, sd, lo, hi, t in rows:
        print(f"| {name} | {n} | {scale * mean:.2f} | {scale * sd:.2f} | {scale * lo:.2f} | {scale * hi:.2f} "
              f"| {t:.1f} | {t / base:.2f}× |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
