"""How long a seed of a comparison will take, from the wall times of runs already recorded."""

from __future__ import annotations

from pathlib import Path

from minibert.sweep import ROOT
from minibert.tables.query import Data
from minibert.tables.table import FILE


def estimate(timing: dict, arms: list[str], workers: int, tables: list[Path]) -> float | None:
    """Seconds one seed of `arms` takes with `workers` runs at a time: each arm's wall time in the first of
    `tables` (grid results folders: this comparison's, then the grid's committed one) that ran it, or for a
    plug-in's language its `timing` grid's arm of that name (the new arm priced as MLM, run at the same FLOP
    budget). None where some arm has no recorded time."""
    read: dict[Path, Data | None] = {}  # each table read once

    def times(folder: Path, arm: str) -> float | None:
        if folder not in read:
            read[folder] = Data.load(folder) if (folder / FILE).is_file() else None
        return None if read[folder] is None else run_time(read[folder], arm)

    total = 0.0
    for arm in sorted(set(arms)):
        seconds = next((t for t in (times(folder, arm) for folder in tables) if t is not None), None)
        stage = "finetune" if "/finetune/" in arm else "pretrain"
        language, _, name = arm.partition(f"/{stage}/")
        if seconds is None and (t := timing.get(language)) is not None:
            shipped = "mlm" if name.removesuffix("-full") == t["new"] else name.removesuffix("-full")
            seconds = times(ROOT / "results" / t["grid"], t[stage].format(arm=shipped))
        if seconds is None:
            return None
        total += seconds
    return total / workers


def run_time(data: Data, arm: str) -> float | None:
    """Mean wall time of `arm` in a grid's table (with its pre-training run's, for a fine-tuning arm named
    `<x>/finetune/<y>-full` after `<x>/pretrain/<y>`), or None where it never ran."""
    found = data.find("wall_time_s", experiment=arm)
    if found is None:
        return None
    upstream = arm.replace("/finetune/", "/pretrain/").removesuffix("-full")
    before = data.find("wall_time_s", experiment=upstream) if upstream != arm else None
    return found.mean + (before.mean if before is not None else 0.0)
