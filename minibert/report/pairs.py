"""The minimal-pairs page (results/pairs.md): what each arm's encoder tells apart with no fine-tuning, read from
the pairs grid's table (configs/ablations/pairs.yaml: `pairs/<language>/pretrain/<arm>`), and whether the toy
language's pairs rank arms as real text does (against the predictive-validity study's table).

The page model answers, in typed rows, what the template lays out:

- per language, each arm's judged zero-shot figure (`val/pairs/acc`) and its probe's (`val/pairs/probe/acc`),
  mean over seeds with the interval of `minibert.tables.stats`, and the seed SD; the floors on the same pairs;
  every cell's figure for the control arm (MLM);
- per phenomenon of a language without judged cells (text): its floors, the arms' means, the seed SD within an
  arm, the spread of the arms' means, and whether the ranking of arms reproduces across seeds (Spearman of the
  arms' means between the even and the odd seeds: the seeds are disjoint, so it is what a rerun would give);
- pairwise decision accuracy (DataDecide) and Spearman of the toy language's pairs against text's cloze, with
  intervals for exactly these arms over seeds and questions (minibert.stats.agreement).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import yaml
from scipy import stats as scipy_stats

from minibert.pairs.keys import FLOORS, MAX_ORDER, PROBE, ZERO_SHOT, floor_metric, floor_names
from minibert.report.validity import Study
from minibert.stats import agreement
from minibert.tables import arms, stats
from minibert.tables.query import Data, QueryError, Stat

PREFIX = "pairs"
TARGETS = {"text": "its recipe (21x)", "text1x": "Dyck's budget (1x)"}  # the validity study's text sources


@dataclass(frozen=True)
class Arm:
    """One arm's two readings on one language's judged cells."""

    name: str
    zero_shot: Stat | None  # None: its objective cannot score a sentence
    probe: Stat

    @property
    def sd(self) -> float:
        """The zero-shot figure's SD over seeds, in points (NaN with one seed or no zero-shot figure)."""
        return math.nan if self.zero_shot is None or self.zero_shot.seeds < 2 else 100 * self.zero_shot.sd


@dataclass(frozen=True)
class Rejudged:
    """One arm's zero-shot figure as its runs logged it, and averaged over the cells a language's declared floors
    now leave judged (each seed's own pairs, each cell weighted by its pairs)."""

    name: str
    logged: Stat
    now: Stat
    versus: tuple[float, float] = (math.nan, math.nan)  # minus the control arm's, in points: logged, now

    @property
    def sds(self) -> tuple[float, float]:
        """The two figures' SD over seeds, in points: logged, now."""
        return 100 * self.logged.sd, 100 * self.now.sd


@dataclass(frozen=True)
class Phenomenon:
    """One edit of a language, over its arms: floors, means, seed noise and the ranking's reproducibility."""

    name: str
    floors: dict[str, float]  # floor name -> its accuracy (every seed's pairs pooled)
    means: dict[str, float]  # arm -> mean zero-shot accuracy over seeds
    seed_sd: float  # pooled within-arm SD over seeds
    reproducibility: float  # Spearman of the arms' means, even seeds against odd seeds (NaN below 3 arms)

    @property
    def best_floor(self) -> float:
        return max(self.floors.values())

    @property
    def beyond_floor(self) -> list[str]:
        """The arms whose mean beats the phenomenon's best floor: those that learned more than counts there."""
        return [a for a, m in self.means.items() if m > self.best_floor]

    @property
    def lowest(self) -> float:
        """The lowest arm's mean."""
        return min(self.means.values())

    @property
    def highest(self) -> float:
        return max(self.means.values())

    @property
    def spread(self) -> float:
        """SD of the arms' means: how far apart the objectives sit, to read against `seed_sd`."""
        values = list(self.means.values())
        return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


@dataclass(frozen=True)
class Prediction:
    """Does the toy language's ranking on minimal pairs order the arms as text's cloze does?"""

    predictor: str  # which toy figure
    target: str  # which text source's cloze it is read against
    arms: list[str]

    @property
    def target_budget(self) -> str:
        """The text source's budget in words: its learning recipe, or Dyck's."""
        return TARGETS[self.target]

    decision: agreement.Coefficient  # share of arm pairs ordered alike
    spearman: agreement.Coefficient
    ceiling: agreement.Ceiling  # what a predictor that knew text's true ranking would score against it as measured


class PairsPage:
    """The pairs grid's table as the page reads it."""

    REPRODUCES = 0.8  # split-half Spearman at which a phenomenon's ranking of arms is said to reproduce

    def __init__(self, data: Data, validity: Study | None = None, declared: tuple[int, tuple[str, ...]] = (3, ())):
        self.data, self.validity = data, validity
        self.floor_order, self.declared = declared  # Dyck's floors' order and the cells judged under it
        names = [e.split("/") for e in data.experiments() if e.startswith(PREFIX + "/")]
        if not names:
            raise QueryError(f"{data.out}: no experiment named {PREFIX}/<language>/pretrain/<arm>")
        self.languages = list(dict.fromkeys(n[1] for n in names))
        # each language's arms in the table's order, the control first (a set's order would change with the
        # process's hash seed, and with it the colours of every figure drawn from them)
        self.control = arms.control()
        self._arms = {lang: sorted(dict.fromkeys(n[3] for n in names if n[1] == lang), key=lambda a: a != self.control)
                      for lang in self.languages}  # fmt: skip

    def experiment(self, language: str, arm: str) -> str:
        return f"{PREFIX}/{language}/pretrain/{arm}"

    def judged(self, language: str) -> bool:
        """Whether any cell of `language` lies beyond its floors (its runs log the judged figure)."""
        return any(self.data.find(PROBE, experiment=self.experiment(language, a)) for a in self._arms[language])

    def arms(self, language: str) -> list[Arm]:
        """Every arm with a judged figure, best zero-shot first (those that cannot score last, by probe)."""
        rows = [Arm(a, self.data.find(ZERO_SHOT, experiment=self.experiment(language, a)),
                    self.data.stat(PROBE, experiment=self.experiment(language, a)))
                for a in self._arms[language]]  # fmt: skip
        return sorted(rows, key=lambda r: (r.zero_shot is None, -(r.zero_shot or r.probe).mean))

    def arm(self, language: str, name: str) -> Arm:
        found = [r for r in self.arms(language) if r.name == name]
        if not found:
            raise QueryError(f"{self.data.out}: no judged figure of {self.experiment(language, name)}")
        return found[0]

    def floors(self, language: str) -> dict[str, Stat]:
        """Each floor the control arm's runs logged (through their `floor_order`) on its judged cells (every arm
        of a seed shares them)."""
        experiment = self.experiment(language, self.control)
        return {f: s for f in floor_names(MAX_ORDER) if (s := self.data.find(floor_metric(f), experiment=experiment))}

    def logged_floors(self, language: str) -> str:
        """The highest floor the control arm's runs logged: 'trigram', '6-gram'."""
        return list(self.floors(language))[-1]

    def best_floor(self, language: str) -> Stat:
        """The strongest floor on the judged pairs: what a model must beat to have learned more than counts."""
        return max(self.floors(language).values(), key=lambda s: s.mean)

    def rejudged(self, language: str, cells: tuple[str, ...]) -> list[Rejudged]:
        """Every arm that scores a sentence and logs `cells`, best now first: its logged zero-shot figure and the
        same pairs averaged over `cells` alone (the judged cells of today's declared floors, `declared_cells`)."""
        out = []
        if not cells:  # no cell left to judge (or none declared): nothing to average
            return out
        for arm in (a for a in self._arms[language] if a in {r.name for r in self.arms(language) if r.zero_shot}):
            found = [s for c in cells if (s := self.cell(language, arm, c)) is not None]
            if len(found) < len(cells):  # a table without the runs' cells (one made by hand) has nothing to say
                continue
            seeds = sorted(set.intersection(*(set(s.values) for s in found)))
            weights = [s.n or 1.0 for s in found]  # pairs a cell (mean over seeds: every seed draws as many)
            values = {seed: sum(w * s.values[seed] for w, s in zip(weights, found)) / sum(weights) for seed in seeds}
            logged = self.data.stat(ZERO_SHOT, experiment=self.experiment(language, arm))
            now = Stat(logged.experiment, ZERO_SHOT, "+".join(cells), values, sum(weights), False,
                       stats.summary(values, None, True))  # fmt: skip
            out.append(Rejudged(arm, logged, now))
        control = next((r for r in out if r.name == self.control), None)
        if control is not None:
            was, now = control.logged.mean, control.now.mean
            out = [replace(r, versus=(100 * (r.logged.mean - was), 100 * (r.now.mean - now))) for r in out]
        return sorted(out, key=lambda r: -r.now.mean)

    def categories(self, language: str) -> list[str]:
        """The categories the control arm's pairs are split by, as logged."""
        rows = self.data.rows(experiment=self.experiment(language, self.control), metric=ZERO_SHOT)
        return [c for c in dict.fromkeys(rows.category) if c]

    def cell(self, language: str, arm: str, category: str, metric: str = ZERO_SHOT) -> Stat | None:
        return self.data.find(metric, category, experiment=self.experiment(language, arm))

    def by_distance(self, language: str, metric: str = ZERO_SHOT) -> dict[str, list[tuple[float, Stat]]]:
        """Registered arm -> (distance, figure) over the distance strata its pairs are split by (a bucket's
        lower end), for those that log `metric`: how far left each encoder reads (a dozen lines would not read)."""
        buckets = [c for c in self.categories(language) if c.startswith("dist_")]
        out = {}
        for arm in (a for a in self._arms[language] if a in arms.registry().arms):
            points = [(float(c.split("_")[1]), s) for c in buckets if (s := self.cell(language, arm, c, metric))]
            if points:
                out[arm] = points
        return out

    def phenomena(self, language: str) -> list[Phenomenon]:
        """Every edit of `language` (its categories without a stratum), over the arms that score zero-shot; none
        for a language the grid has not run."""
        if language not in self.languages:
            return []
        edits = [c for c in self.categories(language) if "-" not in c and not c.startswith(("dist_", "depth_"))]
        edits = [c for c in edits if c != "all"]
        out = []
        for edit in edits:
            per_arm = {a: self.cell(language, a, edit) for a in self._arms[language]}
            per_arm = {a: s for a, s in per_arm.items() if s is not None}
            control = self.experiment(language, self.control)
            floors = {f: self.data.stat(floor_metric(f), edit, experiment=control).mean for f in FLOORS}
            out.append(Phenomenon(edit, floors, {a: s.mean for a, s in per_arm.items()}, _pooled_sd(per_arm),
                                  _split_half(per_arm)))  # fmt: skip
        return out

    def reproducing(self, language: str, at_least: float | None = None) -> list[Phenomenon]:
        """The phenomena whose ranking of arms reproduces across disjoint seeds (split-half Spearman of at least
        `at_least`, by default REPRODUCES)."""
        at_least = self.REPRODUCES if at_least is None else at_least
        return [p for p in self.phenomena(language) if p.reproducibility >= at_least]

    def predictions(self, toy: str = "dyck", only: str | None = None) -> list[Prediction]:
        """The toy language's pairs (and, for reading beside them, its cloze and fine-tuning as the validity
        study measured them) against each text source's cloze in the validity study, over the arms both have;
        `only`: the predictions of that toy figure alone ('minimal pairs')."""
        if self.validity is None or not self.judged(toy):
            return []
        study = self.validity
        pairs = agreement.Measured({a.name: a.zero_shot.values for a in self.arms(toy) if a.zero_shot is not None})
        deeper = agreement.Measured({r.name: r.now.values for r in self.rejudged(toy, self.declared)})
        deep = f"minimal pairs, through the {self.floor_order}-gram"
        figures = [("minimal pairs", None, pairs), (deep, None, deeper), ("cloze", "cloze", None),
                   ("fine-tuning", "finetune", None)]  # fmt: skip
        out = []
        for target in (t for t in TARGETS if t in study.settings):
            y_arms = study.arms_of("cloze", target)
            for label, measure, measured in figures:
                x = measured if measure is None else study.measured(toy, measure, study.arms_of(measure, toy))
                arms = [a for a in x.arms if a in y_arms]
                if len(arms) < 3:
                    continue
                y = study.measured(target, "cloze", arms)
                out.append((label, target, arms, x, y))
        # the page's verdicts on these coefficients hold together (Bonferroni over them all)
        return [Prediction(label, target, arms, agreement.decision_accuracy(x, y, arms, family=len(out)),
                           agreement.correlation(x, y, arms, family=len(out)).spearman,
                           study.ceiling(target, "cloze", arms))
                for label, target, arms, x, y in out if only in (None, label)]  # fmt: skip


def _pooled_sd(stats: dict[str, Stat]) -> float:
    """The within-arm SD over seeds, pooled over arms (points)."""
    ss, df = 0.0, 0
    for s in stats.values():
        v = np.array(list(s.values.values()))
        if len(v) > 1:
            ss, df = ss + float(((v - v.mean()) ** 2).sum()), df + len(v) - 1
    return 100 * math.sqrt(ss / df) if df else math.nan


def _split_half(stats: dict[str, Stat]) -> float:
    """Spearman of the arms' means over their even seeds against their odd seeds (NaN below 3 arms)."""
    halves = []
    for parity in (0, 1):
        halves.append([np.mean([v for seed, v in sorted(s.values.items())[parity::2]]) for s in stats.values()])
    if len(stats) < 3 or min(len(s.values) for s in stats.values()) < 2:
        return math.nan
    return float(scipy_stats.spearmanr(*halves).statistic)


def declared_cells(root: Path, language_config: str = "configs/languages/dyck.yaml") -> tuple[int, tuple[str, ...]]:
    """(the floors' order the language's config declares, the cells judged under it): the language built from
    the config's `language` init args, its judged cells found as every run finds them (minibert.pairs.grade)."""
    from minibert.pairs.grade import PairSettings, judged_design

    spec = yaml.safe_load((root / language_config).read_text())
    named = spec["model"]["init_args"]["objective"]["init_args"]["language"]
    module, _, name = named["class_path"].rpartition(".")
    language = getattr(importlib.import_module(module), name)(**named.get("init_args", {}))
    order = spec.get("pair_eval", {}).get("floor_order", PairSettings.floor_order)
    return order, judged_design(language, PairSettings(floor_order=order))
