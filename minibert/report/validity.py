"""The predictive-validity study's figures (results/validity.md), read from its grid's table.

The grid (configs/ablations/validity.yaml) runs every arm in every setting: `validity/<setting>/pretrain/<arm>`
and `validity/<setting>/finetune/<arm>` (that pre-training, fully fine-tuned on the setting's task). A
setting's two measures, both read so that the ranking's first arm is the best:

- **cloze**: the gap to a reference on the arm's own questions, lower is better. Where the language has an
  exact oracle (Dyck, the bracket pairs) it is `val/gap/acc`, the Bayes ceiling minus the accuracy; on text it
  is one n-gram reference for every arm of the setting, the strongest that all of them log (`val/reference/*/acc`:
  the left bigram, since a model that reads no right context logs no other), minus the accuracy, on the same
  questions. One reference for all: an arm read against a weaker reference than the others would rank higher
  for it. Arms whose pre-training answers another question (their objective's `cloze: false` in the arm
  registry, configs/arms.yaml) have no cloze figure.
- **finetune**: the fine-tuned accuracy, `val/acc` (every arm).

`Study.measured(setting, measure)` is the `minibert.stats.agreement.Measured` the coefficients are drawn from.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from minibert.stats import agreement, intervals
from minibert.tables import arms as registry
from minibert.tables import axes, saved, stats
from minibert.tables.query import Data, QueryError, Stat
from minibert.tables.stats import Interval

LANGUAGE = "model.init_args.objective.init_args.language.class_path"  # a run's language, in its saved config

# ELECTRA is graded as a discriminator (its cloze is its 16-wide generator's) and next-token LM on the next
# token: neither answers BERT's cloze question, so they are ranked on fine-tuning only.
TARGET = "text"  # the setting the others are read against: real text at the recipe that learns, last
SMALL_TEXT = "text1x"  # text at Dyck's budget: a predictor, but no toy language
LEAVE_ONE_OUT_FROM = 4  # the fewest arms a coefficient is recomputed without each of
SHORT_LISTED = 6  # the short cells a partial table names before '...'
MEASURES = ("cloze", "finetune")
PREFIX = "validity"
NAMES = {"dyck": "Dyck", "brackets": "the bracket pairs", "text1x": "text at 1x", "text": "text"}
MEASURE_LABELS = {"cloze": "cloze (gap to one reference)", "finetune": "fine-tuning (accuracy)"}
CORRELATION_HEADER = [
    "predictor", "measure", "arms", "seeds (predictor, text)", "questions a seed (predictor, text)",
    "Spearman's rho (95%, these arms)", "Kendall's tau-b (95%, these arms)", "rho for arms like these (95%)",
    "ceiling: rho, tau", "predictor's own reliability: rho",
]  # fmt: skip
AGREEMENT_HEADER = [
    "predictor", "measure", "pairs", "decided by it", "text: same sign", "text: other sign", "text: undecided",
    "same sign, of those text decides (95%)", "text leans the same way (95%)",
]  # fmt: skip


def coefficient(c) -> str:
    """'+0.85 (+0.79 to +0.90)': a coefficient with its interval; undefined where every arm ties in a setting."""
    if c.value != c.value:
        return "undefined (every arm ties in one setting)"
    return f"{c.value:+.2f} ({c.lo:+.2f} to {c.hi:+.2f})"


def share(k: int, n: int, lo: float, hi: float) -> str:
    """'14/18 = 78% (52 to 94)': k of n with its interval, or 'none decided'."""
    if not n:
        return "none decided"
    return f"{k}/{n} = {stats.number(k / n, 100, 0)}% ({stats.number(lo, 100, 0)} to {stats.number(hi, 100, 0)})"


@dataclass(frozen=True)
class Figure:
    """One arm's figure in one setting: per-seed values, oriented as measured, and the variance a shared
    validation set adds to its mean (0 where each seed drew its own)."""

    values: dict[int, float]
    sampling: float
    questions: float | None  # validation questions per seed
    validation_set: str = ""  # the shared set it graded ('' where each seed drew its own)

    @property
    def mean(self) -> float:
        return sum(self.values.values()) / len(self.values)


class Study:
    """The study's table: which settings and arms it holds, and each arm's figure per setting and measure."""

    names, measure_labels = NAMES, MEASURE_LABELS
    owners = {"dyck": "Dyck's", "brackets": "the bracket pairs'", "text1x": "text at 1x's", "text": "text's"}
    coefficient, share = staticmethod(coefficient), staticmethod(share)

    def __init__(self, data: Data):
        self.data = data
        self._languages: dict[str, str] = {}  # experiment -> the language class its saved config names
        listed = [e for e in data.experiments() if e.startswith(PREFIX + "/")]
        self.experiments = set(listed)
        names = [e.split("/") for e in listed]
        if not names:
            raise QueryError(f"{data.out}: no experiment named {PREFIX}/<setting>/<stage>/<arm>")
        budget = {}
        for n in names:  # settings in order of their pre-training budget, the target last
            if n[2] == "pretrain" and (f := data.find("flops", experiment="/".join(n))) is not None:
                budget[n[1]] = max(budget.get(n[1], 0.0), f.mean)
        order = sorted(dict.fromkeys(n[1] for n in names), key=lambda s: (s == TARGET, budget.get(s, math.inf), s))
        self.settings = order
        arms = list(dict.fromkeys(n[3] for n in names if n[2] == "pretrain"))
        control = registry.control()  # the arm every effect is measured against
        self.arms = sorted(arms, key=lambda a: a != control)  # the control first, the rest as the table has them
        self._compared: dict[tuple, object] = {}  # pages ask again: each bootstrap runs once
        # arms whose pre-training answers another question (the registry's `cloze: false`): no cloze figure
        objectives = {a: next((o for s in order if (o := data.objective(self.experiment(s, "pretrain", a)))), None)
                      for a in self.arms}  # fmt: skip
        self.not_cloze = [a for a, o in objectives.items() if o is not None and not registry.objective(o).cloze]
        self.target, self.control = TARGET, control  # for the page

    def experiment(self, setting: str, stage: str, arm: str) -> str:
        return f"{PREFIX}/{setting}/{stage}/{arm}"

    def short(self) -> tuple[list[str], int]:
        """The cells (`<setting>/<stage>/<arm>`) with fewer seeds than the table's most, or none at all, and that
        most: what a partial table still lacks."""
        seeds = {e: len(self.data.seeds(experiment=e)) for e in self.experiments}
        most = max(seeds.values())
        cells = [f"{s}/{stage}/{a}" for s in self.settings for a in self.arms for stage in ("pretrain", "finetune")
                 if seeds.get(self.experiment(s, stage, a), 0) < most]  # fmt: skip
        return cells, most

    def lower_is_better(self, measure: str) -> bool:
        return measure == "cloze"

    @functools.cache  # noqa: B019 (a study is built once per table; its pages ask each figure many times)
    def figure(self, setting: str, measure: str, arm: str) -> Figure | None:
        """`arm`'s figure in `setting`, or None where it has none (not run yet, or not a cloze arm)."""
        if measure == "finetune":
            e = self.experiment(setting, "finetune", arm)
            s = self.data.find("val/acc", experiment=e)
            return None if s is None else Figure(s.values, _binomial(s), s.n, self._shared_set(s))
        if measure != "cloze":
            raise QueryError(f"no measure {measure!r}: the study's are {', '.join(MEASURES)}")
        if arm in self.not_cloze:
            return None
        # The sampling term is the accuracy's alone: on a shared set the ceiling (or reference) is one count on
        # the same questions for every arm read against it, so it cancels in every difference and moves no rank.
        e = self.experiment(setting, "pretrain", arm)
        acc = self.data.find("val/acc", experiment=e)
        gap = self.data.find("val/gap/acc", experiment=e)
        if gap is not None and acc is not None:  # an exact ceiling
            return Figure(gap.values, _binomial(acc), acc.n, self._shared_set(acc))
        common = self.common_reference(setting)
        if acc is None or common is None or self.data.find(common, experiment=e) is None:
            return None
        reference = self.data.stat(common, experiment=e)  # one count on the same questions for every seed
        values = {s: reference.values[s] - v for s, v in acc.values.items() if s in reference.values}
        return Figure(values, _binomial(acc), acc.n, self._shared_set(acc))

    @functools.cache  # noqa: B019
    def common_reference(self, setting: str) -> str | None:
        """The n-gram reference (`val/reference/<name>/acc`) every cloze arm of `setting` logs, the strongest on
        the control arm's questions where several are; None where they share none (or log none)."""
        logged = []
        for arm in (a for a in self.arms if a not in self.not_cloze):
            e = self.experiment(setting, "pretrain", arm)
            found = {m for m, c in self.data.figures(e)
                     if c == "" and m.startswith("val/reference/") and m.endswith("/acc")}  # fmt: skip
            if found:
                logged.append(found)
        shared = set.intersection(*logged) if logged else set()
        if not shared:
            return None
        control = self.experiment(setting, "pretrain", self.control)
        return max(sorted(shared), key=lambda m: s.mean if (s := self.data.find(m, experiment=control)) else -1.0)

    @property
    def predictors(self) -> list[str]:
        """Every setting but the target, in the study's order."""
        return [s for s in self.settings if s != self.target]

    @property
    def toys(self) -> list[str]:
        """The toy languages among the predictors (not text at Dyck's budget)."""
        return [s for s in self.predictors if s != SMALL_TEXT]

    @property
    def cells(self) -> int:
        """The table's cells when complete: every setting, arm and stage."""
        return len(self.settings) * len(self.arms) * 2

    def short_listed(self) -> str:
        """The first few short cells, '...' after them where there are more."""
        short, _ = self.short()
        return ", ".join(short[:SHORT_LISTED]) + (", ..." if len(short) > SHORT_LISTED else "")

    @property
    def each_level(self) -> str:
        """The confidence each coefficient's verdict is read at, in percent (Bonferroni over the family)."""
        return f"{100 - 5 / self.family:.2f}"

    def predicting(self, measure: str, settings: list[str]) -> list[Comparison]:
        """Those of `settings` whose ranking predicts the target's on `measure`, at the page's joint level."""
        return [c for c in self.against_target(measure, settings) if c.reading == "predicts"]

    def unpredicted_ceiling(self, measure: str) -> str:
        """Where no toy language predicts the target on `measure`: the target's own ceiling over the first
        predictor's arms ('+0.62'), how far any predictor could go; '' where one predicts or none compares."""
        first = next(iter(self.against_target(measure, self.predictors)), None)
        if self.predicting(measure, self.toys) or first is None:
            return ""
        return f"{self.ceiling(self.target, measure, first.arms).spearman:+.2f}"

    def small_text(self, measure: str) -> Comparison | None:
        """Text at Dyck's budget against the target, where the study ran it."""
        return self.compare(SMALL_TEXT, self.target, measure) if SMALL_TEXT in self.predictors else None

    def leave_one_out(self) -> list[tuple[str, str, float, str, float, str]]:
        """(predictor, measure label, lowest rho, the arm left out for it, highest, the arm left out for it) for
        every coefficient over enough arms to leave one out."""
        out = []
        for p in self.predictors:
            for m, label in self.measure_labels.items():
                c = self.compare(p, self.target, m)
                if c and len(c.arms) >= LEAVE_ONE_OUT_FROM:
                    out.append((p, label, *self.without_one(p, self.target, m, c.arms)))
        return out

    def versus_rows(self) -> list[list[str]]:
        """[toy, measure, arms, Spearman difference, Kendall difference, verdict]: does text at Dyck's budget
        predict the target better than each toy language, on each measure?"""
        if SMALL_TEXT not in self.predictors:
            return []
        rows = []
        for p in self.toys:
            for m, label in self.measure_labels.items():
                if v := self.versus(SMALL_TEXT, p, m):
                    sign = v.spearman.sign
                    verdict = (f"{self.names[SMALL_TEXT]} predicts better" if sign > 0
                               else f"{self.names[p]} predicts better" if sign < 0 else "undecided")  # fmt: skip
                    coefficients = [coefficient(v.spearman), coefficient(v.kendall)]
                    rows.append([self.names[p], label, v.arms, *coefficients, verdict])
        return rows

    def references(self) -> list[tuple[str, float, float]]:
        """(setting, left+right trigram, left bigram): text's n-gram references on the control arm's questions."""
        out = []
        for s in self.settings:
            e = self.experiment(s, "pretrain", self.control)
            if self.data.find("val/reference/left_right_trigram/acc", experiment=e):
                out.append((s, *(self.data.stat(f"val/reference/{r}/acc", experiment=e).mean
                                 for r in ("left_right_trigram", "left_bigram"))))  # fmt: skip
        return out

    def correlation_table(self) -> tuple[list[str], list[list[str]]]:
        """(header, rows): each predictor's rank correlation with the target on each measure, its ceiling and the
        predictor's own reliability."""
        rows = []
        for p in self.predictors:
            for m, label in MEASURE_LABELS.items():
                if not (c := self.compare(p, self.target, m)):
                    continue
                top, own = self.ceiling(self.target, m, c.arms), self.ceiling(p, m, c.arms)
                rows.append([NAMES[p], label, len(c.arms), f"{c.seeds_x}, {c.seeds_y}",
                             f"{c.questions_x:,.0f}, {c.questions_y:,.0f}", coefficient(c.correlation.spearman),
                             coefficient(c.correlation.kendall), coefficient(c.like_these.spearman),
                             f"{top.spearman:+.2f}, {top.kendall:+.2f}", f"{own.spearman:+.2f}"])  # fmt: skip
        return CORRELATION_HEADER, rows

    def agreement_table(self) -> tuple[list[str], list[list]]:
        """(header, rows): of the arm pairs each predictor decides, how the target judges them."""
        rows = []
        for p in self.predictors:
            for m, label in MEASURE_LABELS.items():
                if not (c := self.compare(p, self.target, m)):
                    continue
                a = c.pairs
                rows.append([NAMES[p], label, a.pairs, a.decided, a.same, a.other, a.undecided,
                             share(a.same, a.same + a.other, a.lo, a.hi),
                             share(a.leaning, a.decided, a.leaning_lo, a.leaning_hi)])  # fmt: skip
        return AGREEMENT_HEADER, rows

    def arm_table(self, names: dict[str, str]) -> tuple[list[str], list[list[str]]]:
        """(header, rows): every arm's figure in every setting as the study ranks it, in points, mean over seeds
        with its 95% interval (a shared validation set's sampling in it); one measure a column, named in its
        header: the cloze gap to the common reference (lower is better), then the fine-tuned accuracy. `names`:
        each setting's name on the page."""
        heads = {"cloze": "cloze gap to one reference", "finetune": "fine-tuned accuracy"}
        columns = [(s, m) for m in MEASURES for s in self.settings]
        header = ["arm", *(f"{names.get(s, s)}: {heads[m]}" for s, m in columns)]
        rows = []
        for arm in self.arms:
            cells = []
            for s, m in columns:
                f = self.figure(s, m, arm)
                cells.append("–" if f is None else stats.fmt(_interval(f, proportion=m == "finetune")))
            rows.append([arm, *cells])
        return header, rows

    def _shared_set(self, s: Stat) -> str:
        """A name for the validation set every seed of `s` graded: its language (the class its saved config names),
        stage and validation seed ('' where each seed drew its own). Two settings on one corpus that fine-tune on
        one set name the same one."""
        if not s.shared:
            return ""
        first = self.data.rows(experiment=s.experiment, metric=s.metric, category=s.category).iloc[0]
        return f"{self._language(s.experiment)}:{first['stage']}:{first['val_seed']}"

    def _language(self, experiment: str) -> str:
        if experiment not in self._languages:
            config = saved.read(self.data.out, [experiment])[experiment]
            self._languages[experiment] = str(axes.settings(config).get(LANGUAGE))
        return self._languages[experiment]

    def arms_of(self, measure: str, *settings: str) -> list[str]:
        """The arms with a figure on `measure` in every one of `settings`."""
        return [a for a in self.arms if all(self.figure(s, measure, a) is not None for s in settings)]

    def measured(self, setting: str, measure: str, arms: list[str] | None = None) -> agreement.Measured:
        arms = self.arms_of(measure, setting) if arms is None else arms
        figs = {a: self.figure(setting, measure, a) for a in arms}
        sets = {f.validation_set for f in figs.values()}
        return agreement.Measured({a: f.values for a, f in figs.items()}, {a: f.sampling for a, f in figs.items()},
                                  self.lower_is_better(measure), sets.pop() if len(sets) == 1 else "")  # fmt: skip

    def questions(self, setting: str, measure: str, arms: list[str]) -> float:
        """Validation questions behind one arm's figure on one seed (the mean over arms)."""
        ns = [f.questions for a in arms if (f := self.figure(setting, measure, a)) is not None and f.questions]
        return sum(ns) / len(ns) if ns else math.nan

    def comparable(self, *settings: str, measure: str) -> list[str]:
        """The arms `settings` all measured on `measure`, when there are enough for a coefficient (3 arms, 2
        seeds paired in each setting); [] otherwise."""
        arms = self.arms_of(measure, *settings)
        if len(arms) < 3 or any(len(self.measured(s, measure, arms).seeds(arms)) < 2 for s in settings):
            return []
        return arms

    @functools.cached_property
    def family(self) -> int:
        """How many predictor x measure coefficients the page judges: each verdict is read at 0.05 / this."""
        return max(1, sum(bool(self.comparable(p, self.target, measure=m)) for p in self.settings
                          if p != self.target for m in MEASURES))  # fmt: skip

    def compare(self, x: str, y: str, measure: str, replicates: int = 2000) -> Comparison | None:
        """Setting `x`'s ranking against setting `y`'s on `measure`, over the arms both have (None below 3 arms
        or 2 seeds); its signs are held together with the page's other coefficients (`family`)."""
        key = (x, y, measure, replicates)
        if key not in self._compared:
            self._compared[key] = self._compare(x, y, measure, replicates)
        return self._compared[key]

    def _compare(self, x: str, y: str, measure: str, replicates: int) -> Comparison | None:
        arms = self.comparable(x, y, measure=measure)
        if not arms:
            return None
        mx, my = self.measured(x, measure, arms), self.measured(y, measure, arms)
        return Comparison(
            x, y, measure, arms,
            agreement.correlation(mx, my, arms, replicates, family=self.family),
            agreement.correlation(mx, my, arms, replicates, over_arms=True, family=self.family),
            agreement.agreement(mx, my, arms),
            len(mx.seeds(arms)), len(my.seeds(arms)),
            self.questions(x, measure, arms), self.questions(y, measure, arms),
        )  # fmt: skip

    def against_target(self, measure: str, settings: list[str]) -> list[Comparison]:
        """Each of `settings` compared with the target on `measure`, where there is enough to compare."""
        return [c for x in settings if (c := self.compare(x, self.target, measure)) is not None]

    def versus(self, x1: str, x2: str, measure: str, replicates: int = 2000) -> agreement.Difference | None:
        """Does setting `x1` predict the target better than `x2` does, on `measure`? (None below 3 shared arms
        or 2 seeds.)"""
        key = ("versus", x1, x2, measure, replicates)
        if key not in self._compared:
            arms = self.comparable(x1, x2, self.target, measure=measure)
            found = [self.measured(s, measure, arms) for s in (x1, x2, self.target)]
            family = max(1, sum(bool(self.comparable(x1, p, self.target, measure=m)) for p in self.settings
                                if p not in (x1, self.target) for m in MEASURES))  # fmt: skip
            self._compared[key] = agreement.difference(*found, arms, replicates, family=family) if arms else None
        return self._compared[key]

    def without_one(self, x: str, y: str, measure: str, arms: list[str]) -> tuple[float, str, float, str]:
        """Spearman's rho of `x` against `y` with each arm left out in turn: (lowest, the arm whose absence gives
        it, highest, the arm whose absence gives that)."""
        mx, my = self.measured(x, measure, arms), self.measured(y, measure, arms)
        rhos = {a: rho for a, (rho, _) in agreement.leave_one_out(mx, my, arms).items()}
        low, high = min(rhos, key=rhos.get), max(rhos, key=rhos.get)
        return rhos[low], low, rhos[high], high

    def ceiling(self, setting: str, measure: str, arms: list[str], replicates: int = 2000) -> agreement.Ceiling:
        """What a perfect predictor of `setting`'s true ranking of `arms` would score against it as measured."""
        key = ("ceiling", setting, measure, tuple(arms), replicates)
        if key not in self._compared:
            self._compared[key] = agreement.ceiling(self.measured(setting, measure, arms), arms, replicates)
        return self._compared[key]

    def _control_flops(self, setting: str) -> Stat | None:
        return self.data.find("flops", experiment=self.experiment(setting, "pretrain", self.control))

    def flops(self, setting: str) -> str:
        """The control arm's counted pre-training FLOPs in `setting`, as '3.66e11' ('(not run yet)' without it)."""
        f = self._control_flops(setting)
        return stats.flops(f.mean) if f else "(not run yet)"

    @property
    def budget_ratio(self) -> str:
        """The target's pre-training budget as a multiple of Dyck's: '21x'."""
        target, dyck = self._control_flops(self.target), self._control_flops("dyck")
        return f"{target.mean / dyck.mean:.0f}x" if target and dyck else "(not run yet)"

    def effect_panels(self, setting: str) -> list[tuple]:
        """One scatter panel a measure: (measure, x label, y label, {arm: (its effect in `setting`, in the target)}),
        each arm against the control, where the control was measured with those arms in both."""
        panels = []
        for m, label in self.measure_labels.items():
            arms = self.comparable(setting, self.target, measure=m)
            if self.control not in arms:
                continue
            ex, ey = (self.effects(s, m, self.control, arms) for s in (setting, self.target))
            axis = "arm minus MLM, points (> 0: the arm is better)"
            panels.append((label, f"{self.names[setting]}: {axis}", f"text: {axis}", {a: (ex[a], ey[a]) for a in ex}))
        return panels

    def effects(self, setting: str, measure: str, control: str, arms: list[str]) -> dict[str, stats.Interval]:
        """Each arm minus `control`, paired by seed, oriented so that > 0 favours the arm, with the policy's
        interval (seeds, plus both arms' shared-set sampling)."""
        m = self.measured(setting, measure, [control, *[a for a in arms if a != control]])
        out = {}
        for arm in m.arms[1:]:
            (v,) = agreement.pair_verdicts(m, [arm, control])
            out[arm] = stats.Interval(v.mean, v.lo, v.hi, len(m.seeds([arm, control])))
        return out


@dataclass(frozen=True)
class Comparison:
    """Two settings' rankings of the same arms on one measure."""

    x: str
    y: str
    measure: str
    arms: list[str]
    correlation: agreement.Correlation  # these arms: seeds and questions drawn (agreement.correlation)
    like_these: agreement.Correlation  # arms like these: the arms drawn too (over_arms)
    pairs: agreement.Agreement
    seeds_x: int
    seeds_y: int
    questions_x: float
    questions_y: float

    @property
    def reading(self) -> str:
        """'predicts', 'is against' or 'undecided': the side of zero Spearman's interval for these arms lies on,
        at the page's joint level."""
        sign = self.correlation.spearman.sign
        return "predicts" if sign > 0 else "is against" if sign < 0 else "undecided"

    @property
    def said(self) -> str:
        """The reading as the page says it of the predictor's ranking."""
        return {"predicts": "predicts text's", "is against": "runs against text's"}.get(
            self.reading, "is not shown to predict text's at the page's joint level"
        )


def _interval(f: Figure, proportion: bool) -> Interval:
    """A figure's mean over seeds with its 95% interval: an accuracy's as the table gives it; a gap's over seeds,
    widened by the sampling of a validation set every seed shared."""
    if proportion:
        return stats.summary(f.values, f.questions if f.validation_set else None, proportion=True)
    iv = stats.summary(f.values, None, proportion=False)
    if not f.sampling:
        return iv
    half = math.sqrt((iv.hi - iv.mean) ** 2 + 1.96**2 * f.sampling)
    return Interval(iv.mean, iv.mean - half, iv.mean + half, iv.seeds, iv.df)


def _binomial(s: Stat) -> float:
    """The variance a shared validation set adds to an accuracy's mean (0 when each seed drew its own)."""
    return intervals.binomial_variance(s.mean, s.n) if s.shared else 0.0
