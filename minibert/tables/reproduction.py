"""Did a rerun reproduce the committed table? A sweep into a committed results folder (the README's first command
on a fresh clone) compares every figure its runs gave with the committed one and says so in its last line; where
all reproduce, the committed table and pages stay as they are, so `git status` tells a change from a
reproduction, and this machine's timings stay out of the tracked pages (`--publish` writes them anyway).

A figure reproduces when it lies within REPRODUCED_WITHIN of the committed one: half a point for a share of
questions (an accuracy, a gap, a ceiling), 1% of its size for anything else; timings (`wall_time_s`) are the
machine's, not the recipe's, and are not compared. Runs are deterministic on one machine (the same seed gives
the same figure through any driver); another CPU or BLAS build can round a few logits the other way, which moves
an accuracy on a few hundred questions by a fraction of a point.

Example:
    >>> import pandas as pd
    >>> old = pd.DataFrame({"experiment": ["e", "e"], "seed": [0, 0], "metric": ["val/acc", "wall_time_s"],
    ...                     "category": ["", ""], "value": [0.900, 10.0]})
    >>> compare_tables(old, old.assign(value=[0.902, 39.0])).line()
    'reproduced: 1 figure of 1 run, each within its tolerance of the committed table (largest gap 0.2 points)'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from minibert.stats import accuracies

REPRODUCED_WITHIN = {"share": 0.005, "relative": 0.01}
NOT_COMPARED = ("wall_time_s",)  # the machine's, not the recipe's
KEY = ["experiment", "seed", "metric", "category"]


@dataclass
class Reproduction:
    """What a rerun gave against the committed table: the figures compared, those outside their tolerance
    (`differ`: key, committed, now) and those only one of the two tables has."""

    compared: int
    runs: int
    differ: list[tuple[tuple, float, float]] = field(default_factory=list)
    missing: list[tuple] = field(default_factory=list)  # in the committed table, not given by the rerun
    largest: float = 0.0  # the largest gap among shares, in points

    @property
    def reproduced(self) -> bool:
        return not self.differ and not self.missing

    def line(self) -> str:
        """The sweep's last line: whether the figures reproduced, and if not, the first ones that did not."""
        what = f"{self.compared} figure{'s' * (self.compared != 1)} of {self.runs} run{'s' * (self.runs != 1)}"
        if self.reproduced:
            return (f"reproduced: {what}, each within its tolerance of the committed table (largest gap "
                    f"{100 * self.largest:.1f} points)")  # fmt: skip
        shown = "; ".join(f"{e} seed {s} {m}{'_' + c if c else ''}: {old:.4g} committed, {new:.4g} now"
                          for (e, s, m, c), old, new in self.differ[:3])  # fmt: skip
        more = f" and {len(self.differ) - 3} more" if len(self.differ) > 3 else ""
        gone = f"; {len(self.missing)} committed figures not given" if self.missing else ""
        return f"not reproduced: {len(self.differ)} of {what} outside their tolerance ({shown}{more}){gone}"


def tolerance(metric: str, committed: float) -> float:
    """How far a rerun's figure may lie from the committed one and still reproduce it."""
    if accuracies.parse(metric) is not None:
        return REPRODUCED_WITHIN["share"]
    return REPRODUCED_WITHIN["relative"] * abs(committed)


def compare_tables(committed: pd.DataFrame, now: pd.DataFrame) -> Reproduction:
    """Every figure of `committed` for the runs `now` holds (experiment and seed), against `now`'s."""
    runs = set(zip(now["experiment"], now["seed"]))
    old = committed[[pair in runs for pair in zip(committed["experiment"], committed["seed"])]]
    old, now = (t[~t["metric"].isin(NOT_COMPARED)].set_index(KEY)["value"] for t in (old, now))
    out = Reproduction(0, len(runs))
    for key, value in old.items():
        if key not in now.index:
            out.missing.append(key)
            continue
        new = float(now[key]) if not isinstance(now[key], pd.Series) else float(now[key].iloc[0])
        out.compared += 1
        if math.isnan(value) and math.isnan(new):
            continue
        gap = abs(new - value)
        if accuracies.parse(key[2]) is not None:
            out.largest = max(out.largest, gap)
        if not gap <= tolerance(key[2], value):
            out.differ.append((key, float(value), new))
    return out


def snapshot(root: Path) -> dict[Path, bytes]:
    """The bytes of every page and table a sweep into the checkout's results may rewrite: results/ (but runs),
    docs/ and the README."""
    files = [p for p in (root / "results").rglob("*") if p.is_file() and "runs" not in p.relative_to(root).parts]
    files += [*(root / "docs").rglob("*.md"), root / "README.md"]
    return {p: p.read_bytes() for p in files if p.is_file()}


def restore(saved: dict[Path, bytes], written: list[Path]) -> None:
    """Put every saved file back as it was, and remove what was written that did not exist before."""
    for path, data in saved.items():
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
    for path in written:
        if Path(path) not in saved and Path(path).is_file():
            Path(path).unlink()
