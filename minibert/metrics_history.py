"""Reading back a run's CSV log, without importing torch or Lightning (the ablation report runs in a light
parent process).

Example:
    >>> metric_history("runs/pretrain/lightning_logs/version_0", "val/acc")[-1]  # doctest: +SKIP
    (600, 0.9)
"""

from __future__ import annotations

import csv
from pathlib import Path


def metric_history(log_dir: str | Path, metric: str) -> list[tuple[int, float]]:
    """(step, value) for every logged value of `metric` in a run's metrics.csv, steps 1-based (CSVLogger
    writes the 0-based global step of the batch just done); empty when the run has no metrics.csv. Rows
    that do not parse (a file cut off mid-line) are left out."""
    path = Path(log_dir, "metrics.csv")
    if not path.is_file():
        return []
    history = []
    with open(path, newline="", errors="replace") as f:
        for row in csv.DictReader(f):
            try:
                if row.get(metric):
                    history.append((int(row["step"]) + 1, float(row[metric])))
            except (TypeError, ValueError, KeyError):
                continue
    return history
