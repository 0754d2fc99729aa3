"""How far below the exact ceiling does each objective sit, by category, by partner distance, and over training?

Reads the finished runs of a grid (as `scripts/ablate.py` left them in --out) whose runs log
`val/gap/acc...` (ceiling minus measured accuracy on the same validation questions) and writes, into --out:
`gap.md` (gap per category, mean ± 95% t-interval over seeds; fine-tuning accuracy likewise),
`gap_by_distance.png` and `gap_curves.png`.

    python scripts/gap_report.py --grid configs/ablations/dyck.yaml --out results/dyck

A gap is paired by construction (the run and the oracle answer the same questions), so its interval is the
spread over seeds of a per-seed difference; it may be negative when a run beats the ceiling by chance.
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

from minibert.ablation.grid import load_grid  # noqa: E402
from minibert.ablation.intervals import seed_interval  # noqa: E402
from minibert.ablation.results import Results  # noqa: E402
from minibert.ablation.runner import plan  # noqa: E402
from minibert.metrics_history import metric_history  # noqa: E402

DISTANCES = ("dist_1", "dist_2_3", "dist_4_7", "dist_8_plus")
COLUMNS = ("", "_opener", "_closer", "_partner_visible", "_partner_hidden", *(f"_{d}" for d in DISTANCES))
COLUMNS += ("_depth_1", "_depth_2", "_depth_3", "_depth_4_plus")


def fmt(values: list[float]) -> str:
    if not values:
        return ""
    mean, half = seed_interval(values)
    return f"{100 * mean:.1f}" if math.isnan(half) else f"{100 * mean:.1f} ± {100 * half:.1f}"


def gap_prefix(summary: dict) -> str | None:
    """The metric prefix whose cloze questions have a ceiling: `val/` or, for ELECTRA, `val/generator/`."""
    for prefix in ("val/", "val/generator/"):
        if f"{prefix}gap/acc_dist_1" in summary or (f"{prefix}gap/acc" in summary and "val/acc_opener" in summary):
            return prefix
    return None


def collect(grid_path: str, out: Path, seeds: list[int]) -> dict[str, list[tuple[dict, Path]]]:
    """experiment -> [(summary, log_dir)] of its finished runs, in grid order."""
    grid = load_grid(ROOT / grid_path, root=ROOT)
    found: dict[str, list[tuple[dict, Path]]] = {}
    for run, summary in Results.collect(plan(list(grid.experiments), seeds, out, ROOT)).summaries:
        found.setdefault(run.experiment.name, []).append((summary, run.path(summary["log_dir"])))
    return {e.name: found[e.name] for e in grid.experiments if e.name in found}


def gap_table(runs: dict[str, list[tuple[dict, Path]]]) -> tuple[str, dict[str, dict[str, list[float]]]]:
    header = ["experiment", "ceiling", *(c.lstrip("_") or "all" for c in COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    gaps: dict[str, dict[str, list[float]]] = {}
    for name, found in runs.items():
        prefix = gap_prefix(found[0][0])
        if prefix is None:
            continue
        label = name + (" (generator)" if prefix.endswith("generator/") else "")
        gaps[label] = {c: [s[f"{prefix}gap/acc{c}"] for s, _ in found if s.get(f"{prefix}gap/acc{c}") is not None]
                       for c in COLUMNS}  # fmt: skip
        ceiling = [s[f"{prefix}ceiling/acc"] for s, _ in found]
        lines.append(f"| {label} | {fmt(ceiling)} | " + " | ".join(fmt(gaps[label][c]) for c in COLUMNS) + " |")
    return "\n".join(lines), gaps


def task_table(runs: dict[str, list[tuple[dict, Path]]]) -> str:
    keys = ("val/acc", "val/acc_grammatical", "val/acc_ungrammatical", "val/acc_spoil_swap", "val/acc_spoil_move")
    lines = ["| experiment | " + " | ".join(k.removeprefix("val/") for k in keys) + " |", "|" + "---|" * 6]
    for name, found in runs.items():
        if "val/acc_grammatical" in found[0][0]:
            lines.append(f"| {name} | " + " | ".join(fmt([s[k] for s, _ in found if k in s]) for k in keys) + " |")
    return "\n".join(lines)


def distance_figure(gaps: dict[str, dict[str, list[float]]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    x = range(len(DISTANCES))
    for i, (label, by_column) in enumerate(gaps.items()):
        values = [by_column[f"_{d}"] for d in DISTANCES]
        if not all(values):
            continue
        means, halves = zip(*(seed_interval(v) for v in values))
        offset = (i - len(gaps) / 2) * 0.04
        ax.errorbar([j + offset for j in x], [100 * m for m in means], yerr=[100 * h for h in halves],
                    marker="o", capsize=3, label=label)  # fmt: skip
    ax.set_xticks(list(x), ["1", "2-3", "4-7", "8+"])
    save(fig, ax, "distance to the partner bracket (tokens)", "by partner distance (mean ± 95% CI over seeds)", path)


def curves_figure(runs: dict[str, list[tuple[dict, Path]]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, found in runs.items():
        prefix = gap_prefix(found[0][0])
        if prefix is None:
            continue
        histories = [dict(metric_history(log_dir, f"{prefix}gap/acc")) for _, log_dir in found]
        steps = sorted(set.intersection(*(set(h) for h in histories)))
        if not steps:
            continue
        means, halves = zip(*(seed_interval([h[s] for h in histories]) for s in steps))
        lo = [100 * (m - (0 if math.isnan(h) else h)) for m, h in zip(means, halves)]
        hi = [100 * (m + (0 if math.isnan(h) else h)) for m, h in zip(means, halves)]
        (line,) = ax.plot(steps, [100 * m for m in means], label=name + (" (generator)" * ("generator" in prefix)))
        ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.2)
    save(fig, ax, "pre-training step", "over training (mean, band: 95% CI over seeds)", path)


def save(fig, ax, xlabel: str, title: str, path: Path) -> None:
    """Label a gap figure (zero marked: a run at its ceiling) and write it as a PNG."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("gap to the exact ceiling (points)")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_title(f"Ceiling minus accuracy, {title}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--grid", required=True, help="grid file (relative to the repo)")
    p.add_argument("--out", required=True, help="the --out that scripts/ablate.py wrote the grid's runs to")
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (default 3)")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    runs = collect(args.grid, out, list(range(args.seeds)))
    if not runs:
        print(f"gap_report.py: error: no finished runs of {args.grid} under {out}", file=sys.stderr)
        return 2
    table, gaps = gap_table(runs)
    distance_figure(gaps, out / "gap_by_distance.png")
    curves_figure(runs, out / "gap_curves.png")
    seeds = {len(found) for found in runs.values()}
    text = [
        f"# Gap to the exact ceiling: {args.grid}",
        "",
        f"`python scripts/gap_report.py --grid {args.grid} --out {args.out}`; seeds per experiment: "
        f"{', '.join(map(str, sorted(seeds)))}. Figures in points (100 x), mean ± 95% t-interval over seeds.",
        "",
        "## Cloze questions: ceiling minus accuracy, by category",
        "",
        table,
        "",
        "![gap by partner distance](gap_by_distance.png)",
        "",
        "![learning curves of the gap](gap_curves.png)",
        "",
        "## Fine-tuning accuracy (the language's grammaticality task; ceiling 100%)",
        "",
        task_table(runs),
        "",
    ]
    (out / "gap.md").write_text("\n".join(text))
    print(f"wrote {out / 'gap.md'}, {out / 'gap_by_distance.png'}, {out / 'gap_curves.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
