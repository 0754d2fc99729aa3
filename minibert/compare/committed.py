"""The committed yardsticks: each language's shipped arms run once at its compare recipe
(`results/yardsticks/<language>/`, made by `scripts/yardsticks.py`), so that a plug-in's comparison trains the
plug-in alone and pairs its seed s with the committed run of seed s: the same data stream and validation draw,
since the two runs have one key (minibert.ablation.runner.plan: the same configs, overrides and seed).

A committed run stands in for a comparison's own only while its key is the comparison's and today's training
code made it (minibert.training.code_version); otherwise the comparison trains the arm and says why in one line.
The rows it borrows go to `<out>/yardsticks.csv`, which that folder's table reads as its own
(minibert.tables.table.BORROWED), so its pages and its record see the same rows the verdicts were judged on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from minibert.atomic_writes import write_atomic
from minibert.compare.yardsticks import experiments_of, relative, spec_of
from minibert.places import shown
from minibert.sweep import ROOT
from minibert.tables.provenance import REFRESH, YARDSTICKS


def committed_folder(language: str) -> Path:
    """The committed table of `language`'s yardsticks (it may not exist)."""
    return ROOT / YARDSTICKS / language


def yardstick_experiments(yardsticks: str, language: str) -> list[dict]:
    """The experiments of `language`'s shipped arms at its compare recipe, as `yardsticks` describes them today:
    those a plug-in's grid holds for them, named and configured alike, so that a run of one has the key of the
    other and its row can stand in for it."""
    lang = spec_of(yardsticks)[language]
    experiments = []
    for name, extra in lang["arms"].items():
        experiments += experiments_of(language, name, lang, [lang["pretrain"][0], *extra, *lang["pretrain"][1:]],
                                      False)  # fmt: skip
    return experiments


def yardstick_grid(yardsticks: str, language: str, folder: Path | None = None) -> Path:
    """Write `yardstick_experiments` as a grid into `folder` (the language's committed folder by default) and
    return it."""
    folder = committed_folder(language) if folder is None else folder
    folder.mkdir(parents=True, exist_ok=True)
    grid = folder / "grid.yaml"
    header = (f"# Made by scripts/yardsticks.py from {yardsticks}: {language}'s shipped arms at its compare recipe, "
              "the runs a plug-in's comparison pairs with. Regenerated each run.\n")  # fmt: skip
    experiments = yardstick_experiments(yardsticks, language)
    write_atomic(grid, header + yaml.safe_dump({"experiments": experiments}, sort_keys=False))
    return grid


@dataclass
class Borrowed:
    """The (arm, seed) runs a comparison pairs with instead of training, their rows, and a line for each language."""

    covered: set[tuple[str, int]] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    rows: pd.DataFrame | None = None  # the borrowed runs: experiment, seed, run, the table they are read from

    def trains(self, arm: str, seeds: list[int]) -> bool:
        """Whether `arm` must train some of `seeds` here."""
        return any((arm, s) not in self.covered for s in seeds)

    def write(self, out: Path, seeds: list[int]) -> None:
        """`<out>/yardsticks.csv`: the borrowed runs of `seeds` (those the comparison has looked at), each with the
        committed table it is read from, so that the folder's table, pages and dashboard hold the seeds its
        verdicts rest on; removed where there are none."""
        from minibert.tables import sealed, table

        path = out / table.BORROWED
        rows = None if self.rows is None else self.rows[self.rows["seed"].isin(seeds)]
        if rows is not None and len(rows):
            sealed.write(path, rows.to_csv(index=False))
        else:
            sealed.remove(path)


def borrow(grid, arms: list[str], seeds: list[int], out: Path, fresh: bool = False) -> Borrowed:
    """Pair the shipped `arms` of `grid` (minibert.ablation.grid.Grid) with the committed runs of `seeds` where
    their keys match and today's code made them (`Borrowed.write` puts their rows beside the folder's table).
    TableError, in one line, for a committed table that cannot be read."""
    from minibert.ablation.runner import plan
    from minibert.tables import table
    from minibert.training.code_version import source_hash

    found, rows = Borrowed(), []
    if fresh:
        found.notes.append("--fresh-yardsticks: the shipped arms train here beside the plug-in, whatever is committed")
        return found
    by_language: dict[str, list[str]] = {}
    for arm in arms:
        by_language.setdefault(arm.split("/", 1)[0], []).append(arm)
    today = source_hash()
    for language, names in by_language.items():
        folder, refresh = committed_folder(language), REFRESH.format(language=language)
        if not (folder / table.FILE).is_file():
            found.notes.append(f"{language}: no committed yardsticks in {shown(folder)}: its shipped arms train here "
                               f"(`{refresh}` commits them)")  # fmt: skip
            continue
        committed = table.read(folder, borrowed=False)
        planned = {(r.experiment.name, r.seed, r.key) for r in plan(grid.select(names), seeds, out, ROOT)}
        mine = committed[[k in planned for k in zip(committed["experiment"], committed["seed"], committed["run"])]]
        current = mine[mine["code"] == today]
        rows.append(current[["experiment", "seed", "run"]].drop_duplicates().assign(table=relative(folder)))
        found.covered |= set(zip(current["experiment"], current["seed"].astype(int)))
        paired, alone = [], []
        for arm in names:
            held = sorted(s for a, s in found.covered if a == arm)
            (paired if held else alone).append((arm.rsplit("/", 1)[-1], held))
        if paired:
            said = ", ".join(f"{name} (seeds {_span(held)})" for name, held in paired)
            found.notes.append(f"{language}: paired with the committed runs of {said} in {shown(folder)}, made by "
                               "today's code: those arms train only a seed beyond them")  # fmt: skip
        if alone:
            why = (f"made by code {', '.join(sorted(set(mine['code'].dropna()) - {today}))}, not today's {today}"
                   if len(mine) > len(current) else "no run there has these arms' configs and seeds (a config edited "
                   "since?)")  # fmt: skip
            stale = ", ".join(n for n, _ in alone)
            found.notes.append(f"{language}: the committed yardsticks of {stale} in {shown(folder)} are stale ({why}): "
                               f"they train here; `{refresh}` refreshes them")  # fmt: skip
    found.rows = pd.concat(rows, ignore_index=True) if rows else None
    return found


def _span(seeds: list[int]) -> str:
    """'0-39', or the seeds listed where they are not one run of numbers."""
    return f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds))
