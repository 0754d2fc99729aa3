"""Figures a page declares, drawn from the table: each returns the Markdown that shows it, and writes its PNG
beside the page. Labels are whole (wrapped, never cut); every figure states what its bars or bands are.

- `forest`: paired differences with their 95% intervals against zero (a page's answer in one picture);
- `lines`: one figure per selection over an axis (a budget, a rate, a length), mean and 95% band per arm;
- `scatter`: each arm's effect in one setting against its effect in another, both intervals drawn;
- `curves`: learning curves, each arm's mean over seeds with its band from the lowest to the highest seed;
- `categories`: each arm's figure per category (distance, depth, ...), its 95% interval, its own exact ceiling.
"""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen before pyplot is imported)

from minibert.atomic_writes import write_atomic  # noqa: E402
from minibert.tables.arms import colours as arm_colours  # noqa: E402
from minibert.tables.query import Stat  # noqa: E402
from minibert.tables.stats import Interval  # noqa: E402


def save(fig, path: Path) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})  # same data, same bytes
    plt.close(fig)
    write_atomic(path, buffer.getvalue())


def _wrap(label: str, width: int = 38) -> str:
    return "\n".join(textwrap.wrap(label, width)) or label


def forest(path: Path, rows: list[tuple], title: str) -> None:
    """One row per (label, Diff) or (label, Diff, decided): the difference oriented so that > 0 favours the first
    arm, in points; grey where undecided (by `decided` when given and not None, else by the page's verdict)."""
    fig, ax = plt.subplots(figsize=(8.5, 0.62 * len(rows) + 1.3))
    for i, (_, d, *given) in enumerate(rows):
        iv, scale = d.favour, 100 if d.a.proportion else 1
        decided = given[0] if given and given[0] is not None else d.sign() != 0  # its grid's Holm
        ax.errorbar(scale * iv.mean, i, xerr=[[scale * (iv.mean - iv.lo)], [scale * (iv.hi - iv.mean)]], fmt="o",
                    capsize=3, color="tab:blue" if decided else "tab:gray")  # fmt: skip
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(rows)), [_wrap(row[0]) for row in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(
        "paired difference, points (> 0: the claim holds, or the first-named arm is better);\n"
        "95% interval; grey: undecided"
    )
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save(fig, path)


def lines(path: Path, series: dict[str, list[tuple[float, Stat]]], xlabel: str, ylabel: str, title: str,
          logx: bool = False) -> None:  # fmt: skip
    """One line per series name: (x, Stat) points, mean and 95% band (points for proportions)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    colours = arm_colours(series)
    for name, points in series.items():
        points = sorted(((x, s) for x, s in points if s.seeds), key=lambda p: p[0])
        if not points:
            continue
        scale = 100 if points[0][1].proportion else 1
        xs = [x for x, _ in points]
        ax.plot(xs, [scale * s.mean for _, s in points], marker="o", ms=4, lw=1.4, label=name, color=colours[name])
        ax.fill_between(xs, [scale * s.interval.lo for _, s in points], [scale * s.interval.hi for _, s in points],
                        alpha=0.2, lw=0, color=colours[name])  # fmt: skip
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    save(fig, path)


MARKERS = "osD^vPX*<>ph"
REGIME_FULL = re.compile(r"-full(?=/|$)")  # `<arm>-full`: full fine-tuning of the pre-training arm `<arm>`


def scatter(path: Path, panels: list[tuple[str, str, str, dict[str, tuple[Interval, Interval]]]], title: str) -> None:
    """One panel per (panel title, x label, y label, {arm: (x effect, y effect)}): each arm's effect in two
    settings with both 95% intervals as crosses, in points, and the axes through zero drawn (an arm in the
    top-right or bottom-left quadrant moves both settings the same way). Arms are told apart by colour and marker,
    named in one legend: labels beside the points would overlap where arms agree."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels) + 2.6, 4.6), squeeze=False)
    names = list(dict.fromkeys(arm for *_, points in panels for arm in points))
    colours = arm_colours(names)
    style = {arm: (colours[arm], MARKERS[i % len(MARKERS)]) for i, arm in enumerate(names)}
    for ax, (name, xlabel, ylabel, points) in zip(axes[0], panels):
        for arm, (x, y) in points.items():
            colour, marker = style[arm]
            ax.errorbar(100 * x.mean, 100 * y.mean, xerr=[[100 * (x.mean - x.lo)], [100 * (x.hi - x.mean)]],
                        yerr=[[100 * (y.mean - y.lo)], [100 * (y.hi - y.mean)]], fmt=marker, ms=5, capsize=2,
                        lw=0.8, color=colour, label=arm)  # fmt: skip
        ax.axhline(0, color="black", lw=0.7)
        ax.axvline(0, color="black", lw=0.7)
        ax.set_xlabel(_wrap(xlabel, 50), fontsize=8)
        ax.set_ylabel(_wrap(ylabel, 50), fontsize=8)
        ax.set_title(_wrap(name, 55), fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    handles = {}
    for ax in axes[0]:
        handles.update(zip(*reversed(ax.get_legend_handles_labels())))
    fig.legend(handles.values(), [_wrap(a, 30) for a in handles], fontsize=7, frameon=False, loc="center right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 2.4 / fig.get_figwidth(), 1))
    save(fig, path)


def _colours(panels: list, arms_at: int) -> dict[str, object]:
    """One colour per experiment across every panel of a figure: its arm's (minibert.tables.arms.colours), so a
    fine-tuning arm `<x>/finetune/<y>-full` takes that of the pre-training arm `<x>/pretrain/<y>` and an arm
    keeps its colour from figure to figure."""
    names = list(dict.fromkeys(arm for panel in panels for arm in panel[arms_at]))
    keys = {name: REGIME_FULL.sub("", name.replace("/finetune/", "/pretrain/")) for name in names}
    found = arm_colours(keys.values())
    return {name: found[keys[name]] for name in names}


def log_scale(ylabel: str, arms: dict[str, tuple]) -> bool:
    """Whether a panel of losses spans more than five-fold, so that one arm's scale (ELECTRA's summed losses, say)
    would flatten every other curve on a linear axis."""
    lows = [float(np.nanmin(lo)) for _, _, lo, _ in arms.values()]
    highs = [float(np.nanmax(hi)) for _, _, _, hi in arms.values()]
    return "loss" in ylabel and bool(arms) and min(lows) > 0 and max(highs) > 5 * min(lows)


def curves(path: Path, panels: list[tuple[str, str, dict[str, tuple]]], title: str) -> None:
    """One panel per (panel title, y label, {arm: (steps, mean, lowest, highest)}): each arm's mean over seeds
    against the training step, its band from the lowest to the highest seed (accuracies in points)."""
    columns = min(2, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(6.2 * columns, 3.4 * rows + 0.5), squeeze=False)
    colour = _colours(panels, 2)
    for ax, (name, ylabel, arms) in zip(axes.flat, panels):
        scale = 100 if "acc" in ylabel else 1
        for arm, (steps, mean, lo, hi) in arms.items():
            (line,) = ax.plot(steps, scale * mean, lw=1.3, label=_wrap(arm, 34), color=colour[arm])
            ax.fill_between(steps, scale * lo, scale * hi, color=line.get_color(), alpha=0.18, lw=0)
        if log_scale(ylabel, arms):
            ax.set_yscale("log")
            ylabel += " (log scale)"
        ax.set_title(_wrap(name, 60), fontsize=9)
        ax.set_xlabel("training step", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, path)


def categories(path: Path, panels: list[tuple], ylabel: str, title: str) -> None:
    """One panel per (panel title, category labels, {arm: a Stat per category or None}, each category's group,
    {arm: its exact ceiling per category or None}): each arm's mean with its 95% interval at every category, arms
    side by side (points for proportions), groups apart and named. An arm's ceiling is a black bar over its own
    slot only, one bar spanning neighbours whose ceilings are equal: arms bounded differently (a left-only ceiling
    beside a bidirectional one) never share a line that bounds neither, and an arm with no ceiling gets none."""
    widest = max(len(panel[1]) for panel in panels)  # an inch a category, so their names stay apart
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(9.5, 1.0 * widest + 3), 3.5 * len(panels) + 0.6),
                             squeeze=False)  # fmt: skip
    colour = _colours(panels, 2)
    for ax, (name, labels, arms, groups, ceilings) in zip(axes[:, 0], panels):
        width = 0.8 / max(1, len(arms))  # each arm's slot within a category, in category units
        scale = 1
        for k, (arm, found) in enumerate(arms.items()):
            xs = [i - 0.4 + width * (k + 0.5) for i, s in enumerate(found) if s is not None]
            shown = [s for s in found if s is not None]
            if not shown:
                continue
            scale = 100 if shown[0].proportion else 1
            mean = [scale * s.mean for s in shown]
            err = [[scale * (s.mean - s.interval.lo) for s in shown], [scale * (s.interval.hi - s.mean) for s in shown]]
            ax.errorbar(xs, mean, yerr=err, fmt="o", ms=3.5, capsize=2, lw=0.9, label=_wrap(arm, 34), color=colour[arm])
        marked = False
        for i in range(len(labels)):  # each arm's ceiling only over a point of it that the ceiling bounds
            over = [ceilings.get(arm, [None] * len(labels))[i] if found[i] is not None else None
                    for arm, found in arms.items()]  # fmt: skip
            for first, end, bound in _runs(over):
                ax.hlines(scale * bound, i - 0.4 + width * first, i - 0.4 + width * end, colors="black", lw=1.6,
                          label=None if marked else "exact ceiling of the arm(s) under it")  # fmt: skip
                marked = True
        starts = [i for i, g in enumerate(groups) if i == 0 or g != groups[i - 1]]
        for i in starts[1:]:
            ax.axvline(i - 0.5, color="0.6", lw=0.8)
        for i, end in zip(starts, [*starts[1:], len(groups)]):
            if groups[i]:
                ax.text((i + end - 1) / 2, 1.01, groups[i], transform=ax.get_xaxis_transform(), ha="center",
                        va="bottom", fontsize=8, color="0.3")  # fmt: skip
        ax.set_xticks(range(len(labels)), [_wrap(label, 12) for label in labels], fontsize=7)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_title(_wrap(name, 80), fontsize=9, pad=14)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=6.5, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, path)


def _runs(values: list) -> list[tuple[int, int, float]]:
    """(first, end, value) of each run of equal values that are not None, end exclusive: equal means equal, so
    a bar spans only arms whose ceilings are the same figure.

    >>> _runs([0.9, 0.9, None, 0.6, 0.9])
    [(0, 2, 0.9), (3, 4, 0.6), (4, 5, 0.9)]
    """
    runs = []
    for k, v in enumerate(values):
        if v is None:
            continue
        if runs and runs[-1][1] == k and runs[-1][2] == v:
            runs[-1] = (runs[-1][0], k + 1, v)
        else:
            runs.append((k, k + 1, v))
    return runs
