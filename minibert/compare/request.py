"""What a comparison is asked: its arms (a plug-in objective, or a grid's experiments), the figure judged, and
the design's settings, each checked in one line before anything is built."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from minibert.report.comparison import ComparisonError
from minibert.stats.betting import first_bound


@dataclass(frozen=True)
class Request:
    """A comparison, as `scripts/compare.py` takes it. Either `objective` (a plug-in file, `path.py:Class`, or
    a class path) judged on `yardsticks` (`languages`: some of them, default all), or `grid` with `arms` (the
    first against each of the others, or `all_pairs`) on `metric`. `margin` is in the printed unit: points for
    accuracies and gaps, the metric's own otherwise."""

    objective: str | None = None
    grid: str | None = None
    arms: list[str] = field(default_factory=list)
    metric: str | None = None
    all_pairs: bool = False
    finetune: bool = False  # with a plug-in: judge the fully fine-tuned accuracy, not the minimal pairs
    languages: list[str] = field(default_factory=list)
    yardsticks: str = "configs/compare.yaml"
    out: Path | None = None  # default results/compare/<objective>-pairs[-<languages>]; with a grid, required
    margin: float = 1.0
    max_seeds: int = 40
    minutes: float | None = None  # stop before a seed that would pass this many minutes, at this machine's pace
    first_seed: int = 0
    fails_below: float | None = None  # with a grid: a seed below this value did not learn
    bounds: tuple[float, float] | None = None  # with a grid and a metric of no known range: one arm's range
    name: str | None = None  # the record's file name in <out>/comparisons/ (default: verdicts)
    workers: int = 2
    plugins: list[str] = field(default_factory=list)  # folders plug-ins named by class path are imported from
    command: str = ""  # what started it, for the record and the command that continues it

    def check(self) -> None:
        """Raise ComparisonError, in one line naming the option, on a request no comparison can answer."""
        if (self.objective is None) == (self.grid is None):
            raise ComparisonError("give a plug-in objective, or --grid with --arms and --metric (not both)")
        if self.grid is not None:
            if not (self.arms and self.metric and self.out):
                raise ComparisonError("--grid needs --arms, --metric and --out")
            if self.finetune:
                raise ComparisonError("--finetune goes with a plug-in objective; with --grid, name the figure with "
                                      "--metric")  # fmt: skip
            if self.languages:
                raise ComparisonError("--languages goes with a plug-in objective, not --grid")
            if len(self.arms) < 2 or len(set(self.arms)) < len(self.arms):
                raise ComparisonError(f"--arms={','.join(self.arms)}: give two or more different experiments")
        elif self.arms or self.metric or self.fails_below is not None or self.all_pairs or self.bounds:
            raise ComparisonError("--arms, --metric, --all-pairs, --fails-below and --bounds go with --grid; a plug-in "
                                  "is judged on its --yardsticks")  # fmt: skip
        if self.bounds is not None and not self.bounds[0] < self.bounds[1]:
            raise ComparisonError(f"--bounds {self.bounds[0]:g} {self.bounds[1]:g}: LO must be below HI")
        if not self.margin > 0:
            raise ComparisonError(f"--margin={self.margin}: must be > 0")
        if self.max_seeds < (fewest := first_bound()):  # a pair alone on [-1, 1]; a family needs more (later)
            raise ComparisonError(f"--max-seeds={self.max_seeds}: must be at least {fewest} (no verdict is possible "
                                  "before)")  # fmt: skip
        if self.minutes is not None and not self.minutes > 0:
            raise ComparisonError(f"--minutes={self.minutes}: must be > 0")
        if self.workers < 1:
            raise ComparisonError(f"--workers={self.workers}: must be at least 1")
        for folder in self.plugins:
            if not Path(folder).is_dir():
                raise ComparisonError(f"--plugins={folder}: not a folder")
