"""How far below the exact ceiling does each objective sit, by category, by partner distance, and over training?

Reads the finished runs of a grid (as `scripts/ablate.py` left them in --out) and writes, into --out:
`gap.md`, `gap_by_distance.png` and `gap_curves.png`.

    python scripts/gap_report.py --grid configs/ablations/dyck.yaml --out results/dyck

Columns are exactly the categories the runs logged. A category with a ceiling (a bound: overall, one the
model's input decides, or one whose own best predictor the oracle knows) shows the gap, ceiling minus
accuracy; any other shows the Bayes predictor's accuracy minus the run's, marked †: a reference, not a
bound, which a model may beat. Every interval is the report's (`minibert.ablation.intervals`: paired by
seed, seed spread plus the validation set's sampling error), as in `ablation.md`.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minibert.ablation.grid import GridError, load_grid  # noqa: E402
from minibert.ablation.intervals import difference_interval  # noqa: E402
from minibert.ablation.results import Board, Results  # noqa: E402
from minibert.ablation.runner import plan  # noqa: E402
from minibert.metrics_history import metric_history  # noqa: E402
from scripts.ablate import seeds_on_disk  # noqa: E402

EXIT_BAD_INPUT = 2


def cloze_boards(results: Results, experiments) -> list[Board]:
    """The heads whose cloze questions have an oracle (a ceiling on all graded questions), pre-training only."""
    return [b for b in results.boards(experiments) if b.measure.name in ("cloze", "next_token") and "" in b.categories
            and b.categories[""].ceiling]  # fmt: skip


def gap_tables(boards: list[Board]) -> list[str]:
    """One table per measure: a row per head, a column per logged category."""
    lines: list[str] = []
    for measure in dict.fromkeys(b.measure.name for b in boards):
        rows = [b for b in boards if b.measure.name == measure]
        m = rows[0].measure
        cats = sorted({c for b in rows for c in b.categories}, key=m.sort_key)
        lines += [f"### {m.title}", ""]
        lines += ["| experiment | seeds | ceiling | " + " | ".join(m.label(c) for c in cats) + " |"]
        lines += ["|" + "---|" * (len(cats) + 3)]
        for b in rows:
            cells = []
            for c in cats:
                cat = b.categories.get(c)
                if cat is None:
                    cells.append("")
                elif cat.ceiling:
                    cells.append(cat.gap_interval().percent())
                elif cat.bayes:
                    cells.append(cat.reference_interval().percent() + " †")
                else:
                    cells.append("")
            overall = b.categories[""]
            head = f"| {b.title} | {len(overall.values)} | {100 * overall.ceiling_mean():.1f} | "
            lines.append(head + " | ".join(cells) + " |")
        lines.append("")
    return lines


def distance_figure(boards: list[Board], path: Path) -> bool:
    """Gap (or reference difference) by partner-distance bucket, where the runs logged those buckets."""
    fig, ax = plt.subplots(figsize=(7, 4))
    drawn, bounded = False, False
    for b in boards:
        bins = sorted((c for c in b.categories if b.measure.family(c) == "distance"), key=b.measure.sort_key)
        if not bins:
            continue
        ivs = [b.categories[c].gap_interval() if b.categories[c].ceiling else b.categories[c].reference_interval()
               for c in bins]  # fmt: skip
        bounded |= any(b.categories[c].ceiling for c in bins)
        means = [100 * iv.mean for iv in ivs]
        err = [[100 * (iv.mean - iv.lo) for iv in ivs], [100 * (iv.hi - iv.mean) for iv in ivs]]
        ax.errorbar([b.measure.label(c, short=True) for c in bins], means, yerr=err, marker="o", capsize=3,
                    label=b.short)  # fmt: skip
        drawn = True
    if drawn:
        what = ("ceiling (or, where none is known, the Bayes predictor) minus accuracy" if bounded else
                "Bayes predictor minus accuracy (a reference, not a bound)")  # fmt: skip
        save(fig, ax, "distance to the partner bracket (tokens)", f"{what}, by partner distance", path)
    plt.close(fig)
    return drawn


def curves_figure(results: Results, boards: list[Board], path: Path) -> None:
    """The overall gap over pre-training, mean over seeds, band: the plain t-interval of the seeds."""
    fig, ax = plt.subplots(figsize=(7, 4))
    runs = {(r.experiment.name, r.seed): (r, s) for r, s in results.summaries}
    for b in boards:
        key = f"val/{b.prefix}gap/acc"
        histories = {}
        for seed in b.categories[""].values:
            run, summary = runs[(b.experiment.name, seed)]
            histories[seed] = dict(metric_history(run.path(summary["log_dir"]), key))
        steps = sorted(set.intersection(*(set(h) for h in histories.values()))) if histories else []
        if not steps:
            continue
        zero = {seed: 0.0 for seed in histories}
        ivs = [difference_interval({s: h[step] for s, h in histories.items()}, zero, None, None) for step in steps]
        (line,) = ax.plot(steps, [100 * iv.mean for iv in ivs], label=b.short)
        lo = [100 * (iv.lo if not math.isnan(iv.lo) else iv.mean) for iv in ivs]
        hi = [100 * (iv.hi if not math.isnan(iv.hi) else iv.mean) for iv in ivs]
        ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.2)
    save(fig, ax, "pre-training step", "ceiling minus accuracy over training (band: 95% over seeds)", path)


def save(fig, ax, xlabel: str, title: str, path: Path) -> None:
    """Label a figure (zero marked) and write it as a PNG."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("points")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_title(title, fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--grid", required=True, help="grid file (relative to the repo)")
    p.add_argument("--out", required=True, help="the --out that scripts/ablate.py wrote the grid's runs to")
    p.add_argument("--seeds", type=int, help="seeds 0..N-1 (default: every seed with runs in --out)")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    try:
        grid = load_grid(ROOT / args.grid, root=ROOT)
    except GridError as err:
        print(f"gap_report.py: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    seeds = list(range(args.seeds)) if args.seeds else sorted(seeds_on_disk(out, grid.names))
    results = Results.collect(plan(list(grid.experiments), seeds, out, ROOT))
    boards = cloze_boards(results, list(grid.experiments))
    if not boards:
        print(f"gap_report.py: error: no finished run of {args.grid} with an oracle under {out}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.seeds and (short := [b.title for b in boards if len(b.categories[""].values) < args.seeds]):
        print(f"gap_report.py: warning: fewer than {args.seeds} finished seeds for {', '.join(short)}", file=sys.stderr)
    written = [out / "gap.md", out / "gap_curves.png"]
    curves_figure(results, boards, out / "gap_curves.png")
    if distance_figure(boards, out / "gap_by_distance.png"):
        written.insert(1, out / "gap_by_distance.png")
    text = [
        f"# Gap to the exact ceiling: {args.grid}",
        "",
        f"`python scripts/gap_report.py --grid {args.grid} --out {args.out}`. In points (100 x), mean over seeds "
        "with the report's 95% interval (paired by seed; seed spread plus the validation set's sampling error).",
        "",
        "A plain cell is ceiling minus accuracy: the ceiling is a bound, so a cell below zero beyond its "
        "interval would be a bug. A cell marked † is the Bayes predictor's accuracy minus the run's on a "
        "category the model's input does not decide: a reference, which a model may beat.",
        "",
        *gap_tables(boards),
    ]
    if out.joinpath("gap_by_distance.png") in written:
        text += ["![by partner distance](gap_by_distance.png)", ""]
    text += ["![learning curves of the gap](gap_curves.png)", ""]
    (out / "gap.md").write_text("\n".join(text))
    print("wrote " + ", ".join(map(str, written)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
