"""Turn finished runs into results a person can read without running anything.

`ablation.csv` (tidy: experiment, seed, metric, value, run_dir), `ablation.md` (mean +/- 95% confidence
interval over seeds next to the write-up's figures, and whether each claim holds on every seed), PNG
pictures (per-category bars with error bars, learning curves) and `dashboard.html` (all of it in one
self-contained page). Every file is written atomically.

A report never destroys results: `write_report` refuses to write one that would cover no run, or that
would drop an (experiment, seed) the existing `ablation.csv` in the same folder holds (a grid or seed
list other than the one that made it); `replace=True` overrides.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import html
import io
import math
import os
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from minibert.ablation.grid import Claim, Experiment, Grid, MetricRef  # noqa: E402
from minibert.ablation.runner import DamagedSummary, Run  # noqa: E402
from minibert.files import write_atomic  # noqa: E402
from minibert.logs import metric_history  # noqa: E402

# two-sided 95% Student t quantiles by degrees of freedom (larger df fall back to the nearest smaller key)
_T95 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    15: 2.131,
    20: 2.086,
    30: 2.042,
    60: 2.000,
    120: 1.980,
}


def ci95(values: list[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% confidence interval of the mean (NaN half-width for one value)."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return math.nan, math.nan
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan
    df = len(values) - 1
    t = _T95[max(k for k in _T95 if k <= df)]
    return mean, t * statistics.stdev(values) / math.sqrt(len(values))


def _metrics(summary: dict) -> dict[str, float | None]:
    """The numeric entries of a run's summary (None is a NaN that JSON could not hold)."""
    return {k: v for k, v in summary.items() if isinstance(v, (int, float)) or v is None}


@dataclass
class Results:
    """Metric values by (experiment, metric) -> {seed: value}, and the finished runs with their summaries."""

    values: dict[tuple[str, str], dict[int, float]]
    summaries: list[tuple[Run, dict]]

    @classmethod
    def collect(cls, runs: list[Run]) -> Results:
        values: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
        summaries = []
        for run in runs:  # each summary.json read once; a damaged one is the runner's to redo, not ours
            with contextlib.suppress(DamagedSummary):
                if (summary := run.read()) is not None:
                    summaries.append((run, summary))
        for run, summary in summaries:
            for metric, value in _metrics(summary).items():
                values[(run.experiment.name, metric)][run.seed] = math.nan if value is None else float(value)
        return cls(dict(values), summaries)

    def get(self, ref: MetricRef) -> dict[int, float]:
        return self.values.get((ref.experiment, ref.metric), {})

    def rows(self, out: Path) -> list[dict]:
        """Tidy rows; `run_dir` is relative to `out`, so the table stays valid wherever `out` is moved."""
        return [
            {"experiment": r.experiment.name, "seed": r.seed, "metric": m, "value": v,
             "run_dir": os.path.relpath(r.run_dir, out)}
            for r, summary in self.summaries
            for m, v in sorted(_metrics(summary).items())
        ]  # fmt: skip


def claim_by_seed(claim: Claim, results: Results) -> dict[int, bool]:
    """Whether the claim holds on each seed that has all the values it needs."""
    if claim.value is not None:
        lo = -math.inf if claim.at_least is None else claim.at_least
        hi = math.inf if claim.at_most is None else claim.at_most
        return {s: lo <= v <= hi for s, v in results.get(claim.value).items()}
    lower, higher = results.get(claim.lower), results.get(claim.higher)
    return {s: lower[s] < higher[s] for s in sorted(set(lower) & set(higher))}


def _fmt(mean: float, half: float, percent: bool) -> str:
    if math.isnan(mean):
        return "n/a"
    scale, unit = (100, "%") if percent else (1, "")
    if not percent and mean == int(mean) and (math.isnan(half) or half == 0):
        return f"{int(mean):,}"  # counts: parameters, steps
    if math.isnan(half):
        return f"{mean * scale:.1f}{unit}" if percent else f"{mean:.4g}"
    return f"{mean * scale:.1f} ± {half * scale:.1f}{unit}" if percent else f"{mean:.4g} ± {half:.2g}"


def _is_rate(metric: str) -> bool:
    return "/acc" in metric


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]

    def markdown(self) -> str:
        lines = [f"### {self.title}", "", "| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.rows)
        return f"<h3>{html.escape(self.title)}</h3><table><tr>{head}</tr>{body}</table>"


def tables(grid: Grid, experiments: list[Experiment], results: Results) -> list[Table]:
    out = []
    for job_type in ("pretrain", "finetune"):
        rows = []
        for e in (e for e in experiments if e.job_type == job_type):
            for metric in e.metrics:
                by_seed = results.values.get((e.name, metric), {})
                mean, half = ci95(list(by_seed.values()))
                ref = e.reference.get(metric)
                ref_text = "" if ref is None else _fmt(ref, math.nan, _is_rate(metric))
                rows.append([e.name, metric, _fmt(mean, half, _is_rate(metric)), ref_text, str(len(by_seed))])
        if rows:
            title = f"{job_type} runs: mean ± 95% CI over seeds"
            out.append(Table(title, ["experiment", "metric", "measured", "write-up", "seeds"], rows))
    names = {e.name for e in experiments}
    claim_rows = []
    for claim in grid.claims:
        if not claim.experiments() <= names:
            continue
        by_seed = claim_by_seed(claim, results)
        verdict = "yes" if by_seed and all(by_seed.values()) else "NO"
        seeds = ", ".join(f"{s}:{'✓' if ok else '✗'}" for s, ok in sorted(by_seed.items())) or "no runs"
        claim_rows.append([claim.text, seeds, verdict])
    if claim_rows:
        out.append(Table("claims (direction on every seed)", ["claim", "per seed", "holds on every seed"], claim_rows))
    return out


def _groups(experiments: list[Experiment]) -> dict[str, list[Experiment]]:
    """Experiments pictured together, by their name less its last part: 'objectives/pretrain/mlm' ->
    'objectives/pretrain'."""
    groups: dict[str, list[Experiment]] = defaultdict(list)
    for e in experiments:
        groups[e.name.rsplit("/", 1)[0]].append(e)
    return groups


def _colors(n: int) -> tuple:
    """Distinct colours for n experiments (matplotlib's 10-colour cycle would repeat past 10)."""
    return plt.get_cmap("tab20" if n > 10 else "tab10").colors


def _file_stem(group: str) -> str:
    return group.replace("/", "_")


def bar_figures(experiments: list[Experiment], results: Results) -> dict[str, bytes]:
    """One PNG per experiment group (the name before '/'): bars per metric, one colour per experiment,
    mean with 95% CI error bars and each seed as a dot."""
    figures = {}
    for group, members in _groups(experiments).items():
        metrics = [m for m in dict.fromkeys(m for e in members for m in e.metrics) if _is_rate(m)]
        if not metrics:
            continue
        n_bars = len(metrics) * len(members)
        fig, ax = plt.subplots(figsize=(min(16, max(6, 2 + 0.3 * n_bars)), 4))
        colors = _colors(len(members))
        width = 0.8 / len(members)
        for i, e in enumerate(members):
            xs, means, halves = [], [], []
            for j, m in enumerate(metrics):
                seeds = results.values.get((e.name, m), {})
                mean, half = ci95(list(seeds.values()))
                x = j + (i - (len(members) - 1) / 2) * width
                xs.append(x)
                means.append(mean)
                halves.append(0 if math.isnan(half) else half)
                ax.scatter([x] * len(seeds), list(seeds.values()), s=8, color="black", zorder=3)
            ax.bar(xs, means, width, yerr=halves, capsize=3, color=colors[i], label=e.name.rsplit("/", 1)[-1])
        ax.set_xticks(range(len(metrics)), [m.replace("val/", "") for m in metrics], rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.set_title(f"{group}: mean over seeds, 95% CI, dots = seeds")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars, never over them
        fig.tight_layout()
        figures[f"{_file_stem(group)}_metrics.png"] = _png(fig)
    return figures


def curve_figures(experiments: list[Experiment], results: Results) -> dict[str, bytes]:
    """Per group: training loss and validation accuracy over steps, one line per experiment and seed."""
    figures = {}
    for group, members in _groups(experiments).items():
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
        for i, e in enumerate(members):
            color = _colors(len(members))[i]
            for k, (run, summary) in enumerate((r, s) for r, s in results.summaries if r.experiment.name == e.name):
                for ax, metric in zip(axes, ("train/loss", "val/acc")):
                    if history := metric_history(run.path(summary["log_dir"]), metric):
                        steps, values = zip(*history)
                        label = e.name.rsplit("/", 1)[-1] if k == 0 else None
                        ax.plot(steps, values, color=color, alpha=0.8, lw=1.2, label=label)
        for ax, metric in zip(axes, ("train/loss", "val/acc")):
            ax.set_xlabel("step")
            ax.set_title(f"{group}: {metric} (one line per seed)")
            ax.grid(alpha=0.3)
        axes[1].legend(fontsize=8)
        fig.tight_layout()
        figures[f"{_file_stem(group)}_curves.png"] = _png(fig)
    return figures


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


class ReportError(ValueError):
    """A report that would cover nothing or less than the one it replaces; the message says what is missing."""


def check_not_shrinking(out: Path, results: Results) -> None:
    """Raise ReportError if `results` has no run, or lacks an (experiment, seed) of `out/ablation.csv`."""
    if not results.summaries:
        raise ReportError(f"no finished run of this grid in {out}: nothing to report (existing files are kept)")
    try:
        with open(out / "ablation.csv", newline="") as f:
            before = {(row["experiment"], str(row["seed"])) for row in csv.DictReader(f)}
    except (OSError, KeyError, csv.Error):
        return  # no previous report, or one that cannot be read: nothing to protect
    lost = sorted(before - {(run.experiment.name, str(run.seed)) for run, _ in results.summaries})
    if lost:
        shown = ", ".join(f"{e} seed {s}" for e, s in lost[:4]) + (" ..." if len(lost) > 4 else "")
        raise ReportError(
            f"the report in {out} covers {len(lost)} run(s) this one would drop ({shown}): kept as it is. "
            "Give the grid and seeds that made it, another --out, or --replace-report"
        )


def write_report(
    out: Path, grid: Grid, experiments: list[Experiment], runs: list[Run], header: list[str], replace: bool = False
) -> list[Path]:
    """Write csv, md, png and html into `out`; returns the paths written. Refuses (ReportError) to write a
    report of no run or one that drops runs of the existing report, unless `replace`."""
    results = Results.collect(runs)
    if not replace:
        check_not_shrinking(out, results)
    written = []

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, ["experiment", "seed", "metric", "value", "run_dir"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(results.rows(out))
    write_atomic(out / "ablation.csv", buffer.getvalue())
    written.append(out / "ablation.csv")

    parts = tables(grid, experiments, results)
    figures = {**bar_figures(experiments, results), **curve_figures(experiments, results)}
    for name, data in figures.items():
        write_atomic(out / name, data)
        written.append(out / name)

    source = f"\nWrite-up figures: {grid.reference_source}\n" if grid.reference_source else ""
    md = ["# Ablation results", "", *[f"- {h}" for h in header], source]
    md += [t.markdown() for t in parts]
    md += [f"![{name}]({name})" for name in figures]
    write_atomic(out / "ablation.md", "\n".join(md) + "\n")
    written.append(out / "ablation.md")

    images = "".join(
        f'<figure><img alt="{name}" src="data:image/png;base64,{base64.b64encode(data).decode()}">'
        f"<figcaption>{name}</figcaption></figure>"
        for name, data in figures.items()
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>minibert ablation</title><style>"
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
        "table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:3px 8px}"
        "th{background:#f3f3f3}img{max-width:100%}figure{margin:1em 0}</style></head><body>"
        "<h1>minibert ablation</h1><ul>"
        + "".join(f"<li>{html.escape(h)}</li>" for h in header)
        + "</ul>"
        + (f"<p>Write-up figures: {html.escape(grid.reference_source)}</p>" if grid.reference_source else "")
        + "".join(t.html() for t in parts)
        + images
        + "</body></html>"
    )
    write_atomic(out / "dashboard.html", page)
    written.append(out / "dashboard.html")
    return written
