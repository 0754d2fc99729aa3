"""Learning curves: what each run logged step by step, kept beside its grid's table and drawn per arm.

A run's Lightning CSV log (`<run>/lightning_logs/version_*/metrics.csv`) holds its training loss every few
steps and its validation figures at each validation. `from_runs` keeps the figures in METRICS from it, in a
narrow table `<out>/curves.csv` beside `results.csv` (like `documents.csv`: only the columns that tell rows
apart), written with the table and read by the grid's report:

    experiment, seed, metric, step, value

A training figure is averaged over windows of consecutive logged steps (at most POINTS windows, each stored
at its last step): one logged batch's loss is noisy, and a table of every tenth step of a long grid would be megabytes.
Validation figures are kept at every validation. `band` gives an arm's curve as the mean over its seeds with
the lowest and the highest seed at each step, which the dashboard draws.

Example:
    >>> c = read("results")
    >>> sorted(c.metric.unique())  # doctest: +SKIP
    ['train/loss', 'val/acc', 'val/loss']
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from minibert.metrics_history import metric_history
from minibert.tables import sealed, table

FILE = "curves.csv"
METRICS = ("train/loss", "val/loss", "val/acc")  # what a dashboard draws: the objective's loss, its accuracy
COLUMNS = ["experiment", "seed", "metric", "step", "value"]
POINTS = 40  # windows a training figure is averaged over


def history(run_dir: Path, metric: str) -> list[tuple[int, float]]:
    """(step, value) of `metric` over every log of the run (a resumed run writes a new version: a later
    version's value replaces an earlier one's at the same step)."""
    found: dict[int, float] = {}
    logs = sorted(Path(run_dir).glob("lightning_logs/version_*"), key=lambda p: int(p.name.rsplit("_", 1)[1]))
    for log in logs:
        found.update(metric_history(log, metric))
    return sorted(found.items())


def windows(points: list[tuple[int, float]], count: int = POINTS) -> list[tuple[int, float]]:
    """`points` averaged over windows of the fewest consecutive logged points that leave at most `count`
    windows (the last may be shorter), each at its last step; NaN left out.

    >>> windows([(10, 1.0), (20, 3.0), (30, 5.0), (40, 7.0), (50, 9.0)], 2)
    [(30, 3.0), (50, 8.0)]
    """
    points = [(s, v) for s, v in points if np.isfinite(v)]
    size = -(-len(points) // count)  # ceil
    parts = [points[i : i + size] for i in range(0, len(points), size)]
    return [(int(part[-1][0]), float(np.mean([v for _, v in part]))) for part in parts]


def from_runs(runs) -> pd.DataFrame:
    """The curves of finished runs (minibert.ablation.runner.Run): METRICS each run logged at two steps or more."""
    rows = []
    for run in runs:
        for metric in METRICS:
            points = history(run.run_dir, metric)
            if len(points) < 2:  # a figure logged once is the table's, not a curve
                continue
            kept = windows(points) if metric.startswith("train/") else points
            rows += [(run.experiment.name, run.seed, metric, step, value) for step, value in kept]
    return pd.DataFrame(rows, columns=COLUMNS).sort_values(COLUMNS[:4], kind="stable", ignore_index=True)


def write(frame: pd.DataFrame, out: str | Path) -> list[Path]:
    """`<out>/curves.csv` atomically and sealed (minibert.tables.sealed), or no file where no run logged a curve
    (an older one is removed)."""
    path = Path(out) / FILE
    if frame.empty:
        sealed.remove(path)
        return []
    sealed.write(path, frame.to_csv(index=False, lineterminator="\n", float_format="%.6g"))
    return [path]


def read(out: str | Path) -> pd.DataFrame | None:
    """The curves beside the table in `out`, None where its runs left none; TableError (one line naming the file,
    line and column) for a damaged file, or one cut or edited since it was written."""
    path = Path(out) / FILE
    if not sealed.written(path):
        return None
    return table.read_beside(path, out, "a curves table", COLUMNS, ("seed", "step", "value"),
                             {"experiment": str, "metric": str})  # fmt: skip


def band(frame: pd.DataFrame, experiment: str, metric: str) -> tuple[np.ndarray, ...] | None:
    """(steps, mean, lowest, highest) over the experiment's seeds at the steps every seed logged, or None
    where it has no such curve."""
    rows = frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)]
    if rows.empty:
        return None
    wide = rows.pivot_table(index="step", columns="seed", values="value", aggfunc="last").dropna()
    if len(wide) < 2:
        return None
    values = wide.to_numpy()
    return wide.index.to_numpy(), values.mean(axis=1), values.min(axis=1), values.max(axis=1)
