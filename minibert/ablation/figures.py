"""The report's pictures: per-category accuracy bars and learning curves, one PNG each, for papers.

Bars: one figure per experiment group and measure (cloze, NSP, detection, ... never on one axis), one
panel per family of categories (all, position, context, corruption, distance, depth), one bar per
experiment head: the mean over seeds, whiskers at the 95% interval (seeds and validation sampling, see
minibert.ablation.intervals), seeds as dots, the oracle ceiling as a black tick over its bar, the write-up's
figure as a red diamond and chance as a dashed line. Curves: per group, training loss (log scale when the
experiments' losses differ by more than 10x) and each head's validation accuracy, mean over seeds with
the min-max band of the seeds.

Each figure records the (experiment, metric) pairs it drew (`Figure.drawn`, `Figure.ceilings`), so a test
can check that nothing logged is left out.
"""

from __future__ import annotations

import io
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from minibert.ablation import accuracies  # noqa: E402
from minibert.ablation.results import Board, Results  # noqa: E402
from minibert.metrics_history import metric_history  # noqa: E402


@dataclass
class Figure:
    name: str  # file name
    caption: str
    png: bytes
    drawn: set[tuple[str, str]] = field(default_factory=set)  # (experiment, metric) of every bar or line
    ceilings: set[tuple[str, str]] = field(default_factory=set)  # (experiment, metric) with a ceiling tick


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()


def _colors(n: int) -> tuple:
    """Distinct colours for n series (matplotlib's 10-colour cycle would repeat past 10)."""
    return plt.get_cmap("tab20" if n > 10 else "tab10").colors


def group_of(name: str) -> str:
    """Experiments pictured together, by their name less its last part: 'objectives/pretrain/mlm' ->
    'objectives/pretrain'."""
    return name.rsplit("/", 1)[0]


def _stem(group: str) -> str:
    return group.replace("/", "_")


def bar_figures(boards: list[Board], baselines: dict[str, list[Board]], seeds_text: str) -> list[Figure]:
    """One figure per (group, measure). `baselines[group]`: boards of other groups drawn first in that
    group's figures (the default run every break cell is compared with)."""
    by_group: dict[str, dict[str, list[Board]]] = defaultdict(lambda: defaultdict(list))
    for b in boards:
        by_group[group_of(b.experiment.name)][b.measure.name].append(b)
    figures = []
    for group, measures in by_group.items():
        for i, (measure_name, members) in enumerate(measures.items()):
            extra = [b for b in baselines.get(group, []) if b.measure.name == measure_name]
            name = f"{_stem(group)}_metrics.png" if i == 0 else f"{_stem(group)}_{measure_name}_metrics.png"
            figures.append(_bars(group, extra + members, len(extra), name, seeds_text))
    return figures


def _bars(group: str, members: list[Board], n_baselines: int, name: str, seeds_text: str) -> Figure:
    measure = members[0].measure
    cats = sorted({c for b in members for c in b.categories}, key=measure.sort_key)
    panels: dict[str, list[str]] = defaultdict(list)
    for c in cats:
        panels[measure.family(c)].append(c)
    widths = [len(v) * len(members) + 1.5 for v in panels.values()]
    legend_in = 2.4  # inches at the right for the legend
    fig_w = min(18, max(6.5, 1.6 + 0.22 * sum(widths))) + legend_in
    fig, axes = plt.subplots(
        1, len(panels), figsize=(fig_w, 4.4), squeeze=False,
        gridspec_kw={"width_ratios": widths}, sharey=True,
    )  # fmt: skip
    colors = _colors(len(members))
    width = 0.8 / len(members)
    figure = Figure(name, "", b"")
    has = {"ceiling": False, "bayes": False, "reference": False}
    for ax, (fam, fam_cats) in zip(axes[0], panels.items()):
        for i, b in enumerate(members):
            for j, c in enumerate(fam_cats):
                cat = b.categories.get(c)
                if cat is None:
                    continue
                x = j + (i - (len(members) - 1) / 2) * width
                iv = cat.interval()
                if math.isnan(iv.mean):  # logged, but no question of this category (n=0): said, not drawn
                    ax.text(x, 0.02, "n=0", rotation=90, ha="center", va="bottom", fontsize=7, color="#555")
                    figure.drawn.add((b.experiment.name, cat.metric))
                    continue
                hatch = "//" if i < n_baselines else None
                ax.bar(x, iv.mean, width, color=colors[i], hatch=hatch, edgecolor="white", lw=0)
                ax.errorbar(x, iv.mean, yerr=[[iv.mean - iv.lo], [iv.hi - iv.mean]], fmt="none", ecolor="#333",
                            capsize=2, lw=1)  # fmt: skip
                vals = list(cat.values.values())
                ax.scatter([x] * len(vals), vals, s=7, color="black", zorder=3, lw=0)
                figure.drawn.add((b.experiment.name, cat.metric))
                if (ceiling := cat.ceiling_mean()) is not None:
                    ax.hlines(ceiling, x - width / 2, x + width / 2, color="black", lw=2.2, zorder=4)
                    figure.ceilings.add((b.experiment.name, cat.metric))
                    has["ceiling"] = True
                elif (bayes := cat.bayes_mean()) is not None:  # not a bound: a dotted grey tick
                    ax.hlines(bayes, x - width / 2, x + width / 2, color="#555", lw=1.6, ls=":", zorder=4)
                    has["bayes"] = True
                if (ref := b.experiment.reference.get(cat.metric)) is not None:
                    ax.scatter([x], [ref], marker="D", s=22, color="#d62728", edgecolor="white", zorder=5)
                    has["reference"] = True
        if measure.chance is not None:
            ax.axhline(measure.chance, color="#777", ls="--", lw=1, zorder=1)
        ticks = [measure.label(c, short=True).replace(" ", "\n", 1) for c in fam_cats]  # two lines, no overlap
        ax.set_xticks(range(len(fam_cats)), ticks, fontsize=9)
        ax.set_xlim(-0.6, len(fam_cats) - 0.4)
        ax.set_title(accuracies.FAMILY_TITLES.get(fam, fam), fontsize=10)
        ax.set_ylim(0, 1.04)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("accuracy")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=colors[i], hatch="//" if i < n_baselines else None, ec="white")
        for i in range(len(members))
    ]
    labels = [b.short + (" (baseline)" if i < n_baselines else "") for i, b in enumerate(members)]
    if has["ceiling"]:
        handles.append(Line2D([], [], color="black", lw=2.2))
        labels.append("oracle ceiling (a bound)")
    if has["bayes"]:
        handles.append(Line2D([], [], color="#555", lw=1.6, ls=":"))
        labels.append("Bayes predictor (reference)")
    if has["reference"]:
        handles.append(Line2D([], [], marker="D", color="#d62728", ls="none"))
        labels.append("write-up")
    if measure.chance is not None:
        handles.append(Line2D([], [], color="#777", ls="--"))
        labels.append(measure.chance_label)
    right = 1 - legend_in / fig_w
    fig.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(right, 0.9), frameon=False)
    fig.suptitle(f"{group}: {measure.title}", fontsize=11)
    fig.tight_layout(rect=(0, 0, right, 0.97))
    figure.png = _png(fig)
    notes = [f"Bars: mean over {seeds_text}; whiskers: 95% interval covering seed spread and validation sampling; "
             "dots: single seeds"]  # fmt: skip
    if has["ceiling"]:
        notes.append(
            "black tick: the ceiling, the best accuracy any predictor can reach on the same validation questions"
        )
    if has["bayes"]:
        notes.append(
            "dotted tick: the Bayes predictor's own accuracy on a category the model's input does not "
            "decide, a reference that a model can beat by trading accuracy across categories"
        )
    if has["reference"]:
        notes.append("red diamond: the original write-up's single run")
    if measure.chance is not None:
        notes.append(f"dashed line: {measure.chance_label}")
    if n_baselines:
        notes.append("hatched: " + ", ".join(b.experiment.name for b in members[:n_baselines]) + ", the run the "
                     "group's claims compare against")  # fmt: skip
    what = f"{group}: {measure.title} per category ({', '.join(accuracies.FAMILY_TITLES.get(f, f) for f in panels)})."
    figure.caption = what + " " + "; ".join(notes) + "."
    return figure


def _mean_band(histories: list[list[tuple[int, float]]]) -> tuple[list[int], list[float], list[float], list[float]]:
    """Steps every seed logged, with the mean, min and max over seeds at each."""
    common = sorted(set.intersection(*(set(s for s, _ in h) for h in histories)))
    tables = [dict(h) for h in histories]
    at = [[t[s] for t in tables] for s in common]
    return common, [statistics.fmean(v) for v in at], [min(v) for v in at], [max(v) for v in at]


def curve_figures(boards: list[Board], results: Results) -> list[Figure]:
    """Per group: a training-loss panel and one validation-accuracy panel per measure."""
    log_dirs: dict[str, list[str]] = defaultdict(list)
    for run, summary in results.summaries:
        if "log_dir" in summary:
            log_dirs[run.experiment.name].append(run.path(summary["log_dir"]))
    by_group: dict[str, list[Board]] = defaultdict(list)
    for b in boards:
        by_group[group_of(b.experiment.name)].append(b)
    figures = []
    for group, members in by_group.items():
        experiments = list({b.experiment.name: b.experiment for b in members}.values())
        measures = list(dict.fromkeys(b.measure.name for b in members))
        n_panels = 1 + len(measures)
        cols = min(n_panels, 3)
        rows = math.ceil(n_panels / cols)
        fig, grid = plt.subplots(rows, cols, figsize=(4.4 * cols + 2.0, 3.6 * rows), squeeze=False)
        axes = list(grid.flat)
        for ax in axes[n_panels:]:
            ax.set_visible(False)
        axes = axes[:n_panels]
        colors = dict(zip([e.name for e in experiments], _colors(len(experiments))))
        figure = Figure(f"{_stem(group)}_curves.png", "", b"")
        finals = []
        for e in experiments:
            hist = [h for d in log_dirs[e.name] if (h := metric_history(d, "train/loss"))]
            if hist:
                steps, mean, lo, hi = _mean_band(hist)
                axes[0].plot(steps, mean, color=colors[e.name], lw=1.4)
                axes[0].fill_between(steps, lo, hi, color=colors[e.name], alpha=0.2, lw=0)
                figure.drawn.add((e.name, "train/loss"))
                finals += [v for v in mean[len(mean) // 2 :] if v > 0]
        if finals and max(finals) / min(finals) > 10:
            axes[0].set_yscale("log")
            axes[0].set_title("training loss (log scale)", fontsize=10)
        else:
            axes[0].set_title("training loss", fontsize=10)
        for ax, measure_name in zip(axes[1:], measures):
            for b in (b for b in members if b.measure.name == measure_name):
                metric = f"val/{b.prefix}acc"
                hist = [h for d in log_dirs[b.experiment.name] if (h := metric_history(d, metric))]
                if not hist:
                    continue
                steps, mean, lo, hi = _mean_band(hist)
                ls = "--" if b.prefix else "-"
                ax.plot(steps, mean, color=colors[b.experiment.name], lw=1.4, ls=ls, marker=".", ms=4)
                ax.fill_between(steps, lo, hi, color=colors[b.experiment.name], alpha=0.2, lw=0)
                figure.drawn.add((b.experiment.name, metric))
            measure = next(b.measure for b in members if b.measure.name == measure_name)
            ax.set_title(f"validation: {measure.title.split(' (')[0]}", fontsize=10)
            ax.set_ylim(0, 1.02)
        for ax in axes:
            ax.set_xlabel("step")
            ax.grid(alpha=0.3)
        handles = [Line2D([], [], color=colors[e.name], lw=2) for e in experiments]
        right = 1 - 2.0 / (4.4 * cols + 2.0)
        fig.legend(handles, [e.name.rsplit("/", 1)[-1] for e in experiments], fontsize=8, loc="upper left",
                   bbox_to_anchor=(right, 0.92), frameon=False)  # fmt: skip
        fig.suptitle(f"{group}: learning curves", fontsize=11)
        fig.tight_layout(rect=(0, 0, right, 0.98))
        figure.png = _png(fig)
        figure.caption = (
            f"{group}: training loss and validation accuracy over steps, one panel per measure; line: mean over "
            "seeds, band: lowest to highest seed; dashed: a second head of the same run (e.g. BERT's NSP head, "
            "ELECTRA's generator). Losses of different objectives are on different scales, so "
            "they are drawn apart from accuracies (log scale when they differ by more than 10x)."
        )
        figures.append(figure)
    return figures


def comparison_figure(rows: list[tuple[str, float, float, float]], name: str = "claims.png") -> Figure:
    """The grid's answer in one picture: each paired comparison's mean difference (points, on the claimed
    side when > 0) with its 95% interval, against zero. `rows`: (label, mean, lo, hi) as fractions."""
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    for i, (_, mean, lo, hi) in enumerate(rows):
        beyond = lo > 0
        ax.errorbar(100 * mean, i, xerr=[[100 * (mean - lo)], [100 * (hi - mean)]], fmt="o", capsize=3,
                    color="tab:green" if beyond else "tab:gray")  # fmt: skip
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(rows)), [r[0] if len(r[0]) <= 70 else r[0][:67] + "..." for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("paired difference on the claimed side (points), 95% interval; green: beyond noise")
    fig.tight_layout()
    caption = "Each claim's paired difference with its 95% interval: right of zero holds, crossing zero is noise."
    return Figure(name, caption, _png(fig))
