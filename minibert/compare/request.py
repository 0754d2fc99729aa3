"""What a comparison is asked: its arms (a plug-in objective, or a grid's experiments), the figure judged, and
the design's settings, each checked in one line before anything is built."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from minibert.checkout import CHECKOUT
from minibert.compare.errors import ComparisonError, record_path
from minibert.compare.plugin_source import objectives_in
from minibert.places import PlaceError, check_out
from minibert.stats import sign

DEFAULT_OUT = "runs/compare"  # a plug-in's comparison, outside the committed pages unless --publish
PUBLISHED_OUT = "results/compare"


@dataclass(frozen=True)
class Request:
    """A comparison, as `scripts/compare.py` takes it. Either `objective` (a plug-in file, `path.py:Class`, or
    a class path) judged on `yardsticks` (`languages`: some of them, default all), or `grid` with `arms` (the
    first against each of the others, or `all_pairs`) on `metric`. Either way the band of win rates read as
    "alike" is the one `yardsticks` declares (`alike:`), fixed before any run."""

    objective: str | None = None
    grid: str | None = None
    arms: list[str] = field(default_factory=list)
    metric: str | None = None
    all_pairs: bool = False
    finetune: bool = False  # with a plug-in: judge the fully fine-tuned accuracy, not the declared figures
    fresh_yardsticks: bool = False  # with a plug-in: train the shipped arms too, whatever results/yardsticks/ holds
    languages: list[str] = field(default_factory=list)
    yardsticks: str = "configs/compare.yaml"
    out: Path | None = None  # default runs/compare/<objective>-pairs[-<languages>]; with a grid, required
    max_seeds: int = 40
    minutes: float | None = None  # stop before a seed that would pass this many minutes, at this machine's pace
    overrun: bool = False  # run the first look's seeds even where they would pass `minutes`
    shrink: bool = False  # where they would, judge fewer pairs (the last listed left out) before any run
    first_seed: int = 0
    fails_below: float | None = None  # with a grid: a seed below this value did not learn
    bounds: tuple[float, float] | None = None  # with a grid and a metric of no known range: one arm's range
    name: str | None = None  # the record's file name in <out>/comparisons/ (default: verdicts)
    publish: bool = False  # with a plug-in: its default folder under results/compare/, and every page rendered
    workers: int = 2
    plugins: list[str] = field(default_factory=list)  # folders plug-ins named by class path are imported from
    command: str = ""  # what started it, for the record and the command that continues it

    def check(self) -> None:
        """Raise ComparisonError, in one line naming the option, on a request no comparison can answer: every
        check here reads only the files named, so it answers before torch is imported."""
        if (self.objective is None) == (self.grid is None):
            raise ComparisonError("give a plug-in objective, or --grid with --arms and --metric (not both)")
        if self.objective is not None and (file := self.objective.partition(":")[0]).endswith(".py"):
            if not Path(file).is_file():
                raise ComparisonError(f"{file}: no such file")
            self._plugin_class()
        if self.grid is not None and not (CHECKOUT / self.grid).is_file():
            raise ComparisonError(f"--grid {self.grid}: no such file")
        if self.publish and (self.grid is not None or self.out is not None):
            raise ComparisonError("--publish goes with a plug-in and its default folder under results/compare/")
        try:
            check_out(self.out if self.out is not None else CHECKOUT / (PUBLISHED_OUT if self.publish else DEFAULT_OUT))
        except PlaceError as err:
            raise ComparisonError(str(err)) from None
        record_path(Path(self.out or "."), self.name or "verdicts")
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
            if self.fresh_yardsticks:
                raise ComparisonError("--fresh-yardsticks goes with a plug-in objective; a grid's arms all train")
        elif self.arms or self.metric or self.fails_below is not None or self.all_pairs or self.bounds:
            raise ComparisonError("--arms, --metric, --all-pairs, --fails-below and --bounds go with --grid; a plug-in "
                                  "is judged on its --yardsticks")  # fmt: skip
        if self.bounds is not None and not self.bounds[0] < self.bounds[1]:
            raise ComparisonError(f"--bounds {self.bounds[0]:g} {self.bounds[1]:g}: LO must be below HI")
        self.band()
        if self.objective is not None and self.languages:  # worded as minibert.compare.yardsticks.plugin_grid
            known = self.yardstick_languages()
            if unknown := [x for x in self.languages if x not in known]:
                raise ComparisonError(
                    f"--languages: {unknown[0]!r} is not in {self.yardsticks}; valid: {', '.join(known)}"
                )
        if self.max_seeds < (fewest := sign.first_bound()):  # a pair alone; a family needs more (checked later)
            raise ComparisonError(f"--max-seeds={self.max_seeds}: must be at least {fewest} (no verdict is possible "
                                  "before)")  # fmt: skip
        if self.minutes is not None and not self.minutes > 0:
            raise ComparisonError(f"--minutes={self.minutes}: must be > 0")
        if self.fresh_yardsticks and self.finetune:
            raise ComparisonError("--fresh-yardsticks goes with the pre-training figures; with --finetune every arm "
                                  "trains already")  # fmt: skip
        if (self.shrink or self.overrun) and self.minutes is None:
            raise ComparisonError("--shrink and --overrun say what --minutes does with a first look it cannot hold: "
                                  "give --minutes")  # fmt: skip
        if self.shrink and self.overrun:
            raise ComparisonError("--shrink or --overrun, not both")
        if self.workers < 1:
            raise ComparisonError(f"--workers={self.workers}: must be at least 1")
        for folder in self.plugins:
            if not Path(folder).is_dir():
                raise ComparisonError(f"--plugins={folder}: not a folder")

    def band(self) -> tuple[float, float]:
        """The "alike" band `yardsticks` declares (`alike:`; minibert.stats.sign.BAND where it declares none),
        ComparisonError in one line if the file cannot be read or the band is not around one half inside (0, 1)."""
        try:
            return sign.check_band(self._yardsticks().get("alike", sign.BAND))
        except ValueError as err:
            raise ComparisonError(f"--yardsticks {self.yardsticks}: {err}") from None

    def yardstick_languages(self) -> dict:
        """`yardsticks`' languages (its `languages:`, each a mapping of its recipe and arms)."""
        languages = self._yardsticks().get("languages")
        if not isinstance(languages, dict) or not languages:
            raise ComparisonError(f"--yardsticks {self.yardsticks}: no `languages:` mapping")
        return languages

    def folder(self) -> Path | None:
        """The folder the comparison writes to where it can be told before the plug-in is imported: `out`, or a
        plug-in file's default folder when its syntax tree names the objective; None otherwise (a class path, or
        a file the tree cannot judge: `minibert.compare.session` finds it once it has imported the plug-in)."""
        if self.out is not None:
            return Path(self.out)
        name = self._plugin_class() if self.objective is not None else None
        if name is None:
            return None
        parent = CHECKOUT / (PUBLISHED_OUT if self.publish else DEFAULT_OUT)
        return parent / default_folder(name, self.finetune, self.languages)

    def _plugin_class(self) -> str | None:
        """The class a plug-in file's objective is, read from the file's syntax tree; ComparisonError, worded as
        `find_objective` words it once the file is imported, for a file that defines none, several (and no
        `:Class` is given) or not the `:Class` named, or that is not Python. None for a class path, and wherever
        the tree cannot tell: the import decides then."""
        file, _, cls_name = self.objective.partition(":")
        if not file.endswith(".py"):
            return None
        try:
            found = objectives_in(Path(file))
        except SyntaxError as err:
            where = f", line {err.lineno}" if err.lineno else ""
            raise ComparisonError(f"{file}{where}: cannot import it ({type(err).__name__}: {err.msg}); fix the plug-in "
                                  "and run again") from None  # fmt: skip
        except (OSError, ValueError):  # unreadable, or a null byte: the import says what it makes of it
            return None
        if found is None:
            return None
        if cls_name:
            if cls_name not in found:
                raise ComparisonError(
                    f"{self.objective}: no objective {cls_name!r} in {file}; it defines {sorted(found)}"
                )
            found = {cls_name}
        if len(found) != 1:
            what = "no Objective subclass" if not found else f"{len(found)} objectives ({', '.join(sorted(found))})"
            raise ComparisonError(f"{file} defines {what}: name one as {file}:ClassName")
        return next(iter(found))

    def _yardsticks(self) -> dict:
        path = CHECKOUT / self.yardsticks
        try:
            spec = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as err:
            raise ComparisonError(f"--yardsticks {self.yardsticks}: cannot read it ({type(err).__name__})") from None
        if not isinstance(spec, dict):
            raise ComparisonError(f"--yardsticks {self.yardsticks}: not a mapping of languages and settings")
        return spec


def default_folder(arm: str, finetune: bool, languages: list[str]) -> str:
    """`<Class>-pairs` (or `-finetune`), and the languages asked for where not all: one folder per question, so
    that a comparison on other languages or another measure never meets another's record."""
    return "-".join([arm, "finetune" if finetune else "pairs", *languages])
