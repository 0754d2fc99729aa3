"""The committed yardsticks: each language's shipped arms run once at its compare recipe
(`results/yardsticks/<language>/`, made by `scripts/yardsticks.py`), so that a plug-in's comparison trains the
plug-in alone and pairs its seed s with the committed run of seed s: the same data stream and validation draw,
since the two runs have one key (minibert.ablation.runner.plan: the same configs, overrides and seed).

A committed run stands in for a comparison's own only while its key is the comparison's and today's training
code made it (minibert.training.code_version); otherwise the comparison trains the arm and says why in one line.
The rows it borrows go to `<out>/yardsticks.csv`, which that folder's table reads as its own
(minibert.report.table.BORROWED), so its pages and its record see the same rows the verdicts were judged on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from minibert.atomic_writes import write_atomic
from minibert.compare.yardsticks import experiments_of, spec_of
from minibert.places import shown
from minibert.report.provenance import REFRESH, YARDSTICKS
from minibert.sweep import ROOT


def committed_folder(language: str) -> Path:
    """The committed table of `language`'s yardsticks (it may not exist)."""
    return ROOT / YARDSTICKS / language


def yardstick_grid(yardsticks: str, language: str) -> Path:
    """Write the grid of `language`'s shipped arms at its compare recipe into its committed folder and return it:
    the experiments a plug-in's grid holds for them, named and configured alike, so that a run of one has the
    key of the other and its row can stand in for it."""
    lang = spec_of(yardsticks)[language]
    experiments = []
    for name, extra in lang["arms"].items():
        experiments += experiments_of(language, name, lang, [lang["pretrain"][0], *extra, *lang["pretrain"][1:]],
                                      False)  # fmt: skip
    folder = committed_folder(language)
    folder.mkdir(parents=True, exist_ok=True)
    grid = folder / "grid.yaml"
    header = (f"# Made by scripts/yardsticks.py from {yardsticks}: {language}'s shipped arms at its compare recipe, "
              "the runs a plug-in's comparison pairs with. Regenerated each run.\n")  # fmt: skip
    write_atomic(grid, header + yaml.safe_dump({"experiments": experiments}, sort_keys=False))
    return grid


@dataclass
class Borrowed:
    """The (arm, seed) runs a comparison pairs with instead of training, and a line for each language."""

    covered: set[tuple[str, int]] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def trains(self, arm: str, seeds: list[int]) -> bool:
        """Whether `arm` must train some of `seeds` here."""
        return any((arm, s) not in self.covered for s in seeds)


def borrow(grid, arms: list[str], seeds: list[int], out: Path, fresh: bool = False) -> Borrowed:
    """Pair the shipped `arms` of `grid` (minibert.ablation.grid.Grid) with the committed runs of `seeds` where
    their keys match and today's code made them, writing their rows to `<out>/yardsticks.csv` (removed where none
    is borrowed, or with `fresh`). TableError, in one line, for a committed table that cannot be read."""
    from minibert.ablation.runner import plan
    from minibert.report import table
    from minibert.training.code_version import source_hash

    found, rows = Borrowed(), []
    if fresh:
        found.notes.append("--fresh-yardsticks: the shipped arms train here beside the plug-in, whatever is committed")
    by_language: dict[str, list[str]] = {}
    for arm in arms:
        by_language.setdefault(arm.split("/", 1)[0], []).append(arm)
    today = source_hash()
    for language, names in by_language.items() if not fresh else ():
        folder, refresh = committed_folder(language), REFRESH.format(language=language)
        if not (folder / table.FILE).is_file():
            found.notes.append(f"{language}: no committed yardsticks in {shown(folder)}: its shipped arms train here "
                               f"(`{refresh}` commits them)")  # fmt: skip
            continue
        committed = table.read(folder, borrowed=False)
        planned = {(r.experiment.name, r.seed, r.key) for r in plan(grid.select(names), seeds, out, ROOT)}
        mine = committed[[k in planned for k in zip(committed["experiment"], committed["seed"], committed["run"])]]
        current = mine[mine["code"] == today]
        covered = set(zip(current["experiment"], current["seed"].astype(int)))
        held = sorted({s for _, s in covered})
        if not covered:
            why = (f"made by code {', '.join(sorted(set(mine['code'].dropna())))}, not today's {today}" if len(mine)
                   else "no run there has these arms' configs and seeds (a config edited since?)")  # fmt: skip
            found.notes.append(f"{language}: the committed yardsticks in {shown(folder)} are stale ({why}): its "
                               f"shipped arms train here; `{refresh}` refreshes them")  # fmt: skip
            continue
        rows.append(current)
        found.covered |= covered
        span = f"{held[0]}-{held[-1]}" if held == list(range(held[0], held[-1] + 1)) else ", ".join(map(str, held))
        found.notes.append(f"{language}: {len(names)} shipped arm(s) paired with their committed runs of seeds {span} "
                           f"({shown(folder)}, today's code): there only the plug-in trains; a seed beyond them "
                           "trains its shipped arms here")  # fmt: skip
    path = out / table.BORROWED
    if rows:
        write_atomic(path, pd.concat(rows, ignore_index=True).to_csv(index=False))
    else:
        path.unlink(missing_ok=True)
    return found
