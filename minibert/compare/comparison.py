"""A comparison that stops as soon as its verdicts are decided: the design fixed before the first seed, the
seeds judged look by look, and the record on disk (scripts/compare.py; the policy: docs/statistics.md).

A design is a family of pairs A - B (a new objective against every shipped one, or the arms a user names),
each judged on one metric, oriented so that > 0 favours A. Seeds s0, s0 + 1, ... run in that order; after
each, every pair still undecided looks at its sign rule (minibert.stats.sign.decide) at alpha / K, K the pairs
of its family (Bonferroni), and stops when A wins on most seeds ("A better"), B does ("B better"), A's win rate
lies inside the declared band ("alike"), every seed tied, or at the cap. The rule reads only which arm won each
seed, so it holds whatever the figures' shape; a run that gave no figure counts at the bottom of its arm's
range (a loss). By how much stays beside the verdict: the wins, the median difference, and the betting
confidence sequence on the mean difference (minibert.stats.betting), which decides nothing. Seeds below
`fails_below` are counted per arm, with exact intervals and an exact paired test of the two rates.

Everything here is recomputed from the grid's table, so a killed comparison resumes where its runs stopped,
and the dashboard (minibert.report.grid_report) judges a recorded comparison by the same function.

Example:
    >>> design = Design([Pair("p/new", "p/mlm", "val/acc")], cap=10)
    >>> design.alpha_for(design.pairs[0]), design.first_look(design.pairs), design.unit, design.range(design.pairs[0])
    (0.05, 8, 'points', (-1.0, 1.0))
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minibert.atomic_writes import write_atomic
from minibert.checkout import without_absolute_paths
from minibert.compare.errors import ComparisonError
from minibert.stats import accuracies, betting, intervals, scoreboard, sign
from minibert.stats.failures import ArmFailures, compare_failures
from minibert.stats.sign import ALPHA, BAND, SignVerdict
from minibert.tables.query import Data, Diff
from minibert.tables.table import TableError, read_json, split

RULE = "sign"  # minibert.stats.sign: the win rate's sequence, Beta(1, 1) mixture


def is_proportion(metric: str) -> bool:
    """An accuracy-like figure, printed in points (100 x)."""
    return accuracies.parse(metric) is not None


def value_range(metric: str) -> tuple[float, float] | None:
    """What one arm's figure can be, when the metric says: an accuracy (a share of questions) in [0, 1]; a gap,
    a ceiling's accuracy minus a model's on the same questions, in [-1, 1]; None for anything else (a loss, a
    time), whose range a design must state."""
    key = accuracies.parse(metric)
    if key is None:
        return None
    return (-1.0, 1.0) if key.role == "gap" else (0.0, 1.0)


@dataclass(frozen=True)
class Pair:
    """A - B on `metric` (split into metric and category as the table holds it: `val/acc_opener`)."""

    a: str  # experiment name of arm A
    b: str
    metric: str
    fails_below: float | None = None  # a seed whose A or B value is below this did not learn
    family: str = ""  # the pairs judged together (Bonferroni): one language of a plug-in's comparison

    @property
    def label(self) -> str:
        return f"{self.a} vs {self.b}: {self.metric}"


@dataclass(frozen=True)
class Design:
    """What a comparison promises before its first seed: the family of pairs, the cap on seeds, the band of win
    rates read as "alike" (configs/compare.yaml), the family's alpha and the first seed."""

    pairs: list[Pair]
    cap: int
    band: tuple[float, float] = BAND
    alpha: float = ALPHA
    first_seed: int = 0
    command: str = ""
    extended_from: list[int] = field(default_factory=list)  # earlier caps, when a comparison was extended
    bounds: tuple[float, float] | None = None  # what one arm's figure can be, for a metric that does not say
    rule: str = RULE  # the rule the verdicts stop on
    earlier: str = ""  # the rule a record was first judged by, when it was another (see `from_json`)
    same_questions: bool = False  # each seed's arms grade one set of questions, so two gaps share a ceiling (`range`)
    margin: float | None = None  # the equivalence margin of the rule a record was first judged by, if it had one

    def alpha_for(self, pair: Pair) -> float:
        """alpha / K, K the pairs of `pair`'s family."""
        return self.alpha / sum(p.family == pair.family for p in self.pairs)

    def values(self, pair: Pair) -> tuple[float, float]:
        """What one arm's figure can be: the metric's range where it has one (never narrowed: the sequence's
        promise rests on it), else the design's `bounds`."""
        lo, hi = value_range(pair.metric) or self.bounds or (math.nan, math.nan)
        if not lo < hi:
            raise ComparisonError(f"{pair.metric}: its range is not known; state what one arm's figure can be "
                                  "(--bounds LO HI) before the first seed")  # fmt: skip
        return lo, hi

    def range(self, pair: Pair) -> tuple[float, float]:
        """What A - B can be on one seed, for the betting sequence on the mean. Two gaps graded on the same
        questions share their ceiling, so A - B is B's accuracy minus A's, within [-1, 1] rather than the [-2, 2]
        of two gaps with ceilings of their own. A design says so before its first seed (`same_questions`), and
        `judge` checks the two ceilings on every seed."""
        if self.same_questions and is_gap(pair.metric):
            return (-1.0, 1.0)
        lo, hi = self.values(pair)
        return (lo - hi, hi - lo)

    def first_look(self, pairs: list[Pair]) -> int:
        """The fewest seeds at which any of `pairs` can be decided (minibert.stats.sign.first_bound)."""
        return min(sign.first_bound(self.alpha_for(p)) for p in pairs)

    @property
    def families(self) -> dict[str, int]:
        """Family -> its number of pairs."""
        out: dict[str, int] = {}
        for p in self.pairs:
            out[p.family] = out.get(p.family, 0) + 1
        return out

    @property
    def unit(self) -> str:
        return "points" if all(is_proportion(p.metric) for p in self.pairs) else "units"

    @property
    def arms(self) -> list[str]:
        """Every arm of the pairs, once, in the order the pairs name them."""
        return list(dict.fromkeys(arm for p in self.pairs for arm in (p.a, p.b)))

    @property
    def fails_below(self) -> dict[str, float | None]:
        """Family -> the figure below which one of its seeds did not learn (its first pair's)."""
        out: dict[str, float | None] = {}
        for p in self.pairs:
            out.setdefault(p.family, p.fails_below)
        return out

    def seeds(self, looks: int) -> list[int]:
        return list(range(self.first_seed, self.first_seed + looks))

    def same_question(self, other: Design) -> str | None:
        """Why `other` (a recorded design) is not this one asked again with a larger cap, or None."""
        for name in ("pairs", "band", "alpha", "first_seed", "bounds", "rule"):
            if getattr(self, name) != getattr(other, name):
                return f"its {name} was {getattr(other, name)!r}, now {getattr(self, name)!r}"
        ranges = [(other.range(p), self.range(p)) for p in self.pairs]  # `same_questions` matters on gaps only
        if before_now := next(((b, n) for b, n in ranges if b != n), None):
            return f"its range of a seed's difference was {list(before_now[0])}, now {list(before_now[1])}"
        if self.cap < other.cap:
            return f"its cap was {other.cap} seeds; a comparison may be extended, never cut (now {self.cap})"
        return None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Design:
        """A recorded design. Records made before the sign rule stopped on a confidence sequence for the mean
        difference (the betting one, or earlier the safe t-test) and carry its margin: they are judged again by
        the sign rule with the default band, which nothing in their data chose, and `earlier` says what they were
        first judged by."""
        pairs = [Pair(**p) for p in d["pairs"]]
        rule = d.get("rule")
        if rule not in (None, RULE):
            raise ComparisonError(f"a record judged by the rule {rule!r}, which this code does not know")
        earlier = d.get("earlier", "")
        if rule is None:
            first = d.get("sequence")
            earlier = earlier or (f"the betting sequence on the mean (margin {d['margin']:g})" if first
                                  else f"the safe t-test, g = {d.get('prior_variance', 2.0):g}")  # fmt: skip
        bounds = tuple(d["bounds"]) if d.get("bounds") is not None else None
        band = tuple(d.get("band", BAND))
        same = bool(d.get("same_questions", False))  # a record made before designs said so keeps the wider range
        return cls(pairs, d["cap"], band, d["alpha"], d["first_seed"], d.get("command", ""),
                   list(d.get("extended_from", [])), bounds, RULE, earlier, same, d.get("margin"))  # fmt: skip


@dataclass
class Judged:
    """One pair after `looks` seeds: its verdict on the sign rule, the betting sequence on the mean difference at
    every look (its history: by how much, deciding nothing), the per-seed differences (every seed at its value),
    and each arm's seeds that did not learn."""

    pair: Pair
    looks: int
    verdict: SignVerdict
    diffs: list[float]
    failures: ArmFailures | None  # None before the first seed
    alpha: float = ALPHA  # the sign rule's, after the family's split
    widen: float = 0.0  # a shared set's or the documents' half-width added to the mean's sequence
    mean_alpha: float = ALPHA  # the mean's sequence's, after a shared set's share
    means: tuple[float, float] | None = None  # each arm's own mean over the seeds judged (None: not in the table)
    history: tuple = ()  # the betting sequence on the mean at every look (minibert.stats.betting.sequence)

    def by_the_mean(self, design: Design) -> betting.SequentialVerdict | None:
        """The verdict the betting sequence on the mean gave on the same seeds, with the margin of a record first
        judged by it (None for a design that had none): what the sign rule replaced."""
        if design.margin is None:
            return None
        return betting.decide(self.diffs, design.margin, design.cap, self.mean_alpha, design.range(self.pair),
                              self.widen)  # fmt: skip

    @property
    def stopped(self) -> bool:
        """Decided, alike, tied or at the cap: no more seeds for this pair."""
        return self.verdict.reason != "below the cap"

    @property
    def decided(self) -> bool:
        """Stopped on a verdict: its sign decided or its win rate inside the band (not tied, not at the cap)."""
        return self.verdict.reason in ("sign decided", "alike within band")

    @property
    def sign_decided(self) -> bool:
        return self.verdict.reason == "sign decided"

    @property
    def interval(self):
        """The mean difference's sequence at the last look: valid with every earlier one at once."""
        return self.history[-1] if self.history else intervals.NAN

    @property
    def median(self) -> float:
        """The median per-seed difference A - B, as measured (math.nan before a seed)."""
        return float(statistics.median(self.diffs)) if self.diffs else math.nan

    def words(self, a: str = "A", b: str = "B") -> str:
        """The verdict with the arms named: 'A better', 'alike', 'tied on every seed', 'undecided (cap)'."""
        return sign.named(self.verdict.verdict, a, b)

    def meaning(self, a: str = "A", b: str = "B", scale: float = 100) -> str:
        """What the verdict rests on, in one clause: 'mlm wins 16 of 19 untied seeds (3 tied; win rate 0.55 to
        0.98), median A − B +4.1, mean +4.7 (+1.0 to +8.3)', in the printed unit (`scale` 100: points)."""
        v, iv = self.verdict, self.interval
        lo, hi = v.rate
        ties = f"{v.ties} tied; " if v.ties else ""
        return (f"{a} wins {v.wins} of {v.untied} untied seeds ({ties}win rate {lo:.2f} to {hi:.2f}), median "
                f"{a} − {b} {scale * self.median:+.2f}, mean {scale * iv.mean:+.2f} ({scale * iv.lo:+.2f} to "
                f"{scale * iv.hi:+.2f})")  # fmt: skip


def values(data: Data, experiment: str, metric: str) -> dict[int, float]:
    """{seed: value} of one experiment's metric in a grid's table (minibert.tables.query.Data)."""
    found = data.find(*split(metric), experiment=experiment)
    return {} if found is None else found.values


def judge(data, design: Design, looks: dict[str, int], kept: dict[str, list] | None = None) -> list[Judged]:
    """Every pair of `design` after the seeds it ran (`looks[pair.label]`, counted from the first seed), on the
    grid's table `data`, or on the per-seed differences a record `kept` (pair label -> A - B, oriented so
    that > 0 favours A) when its runs are not in the table."""
    judged = []
    for pair in design.pairs:
        n = looks.get(pair.label, 0)
        bounds = design.range(pair)
        if kept is not None:
            diffs = [bounds[0] if d is None else float(d) for d in kept[pair.label][:n]]
            failed = ([False] * len(diffs), [False] * len(diffs))
            means = None
        else:
            if design.same_questions and is_gap(pair.metric):
                _check_shared_ceiling(data, pair, design.seeds(n))
            diffs, failed, means = _differences(data, pair, design.seeds(n), design.values(pair))
            lo, hi = bounds  # a run with no figure counts at its arm's worst, which the narrowed range may pass
            diffs = [min(max(d, lo), hi) for d in diffs]
        own = set(design.seeds(n)) if kept is None else set()  # a record's kept runs are in no table
        verdict = sign.decide(diffs, design.cap, design.alpha_for(pair), design.band)
        alpha, widen = _shared_set(data, pair, design.alpha_for(pair), own)
        history = tuple(betting.sequence(diffs[: design.cap], alpha, bounds, widen))
        failures = compare_failures(*failed) if n else None
        judged.append(Judged(pair, n, verdict, diffs, failures, design.alpha_for(pair), widen, alpha, means, history))
    return judged


def seeds_needed(design: Design, judged: Judged) -> int | None:
    """The seeds at which half of comparisons drawn like this pair's seeds so far would stop on the sign rule
    (minibert.stats.sign.seeds_to_decide), at the pair's alpha; None below 2 seeds or beyond 500."""
    return sign.seeds_to_decide(judged.diffs, judged.alpha, design.band, limit=max(500, 2 * design.cap))


def is_gap(metric: str) -> bool:
    """A gap to the ceiling (`val/<prefix>gap/acc[_<category>]`)."""
    key = accuracies.parse(metric)
    return key is not None and key.role == "gap"


def unshared_ceiling(data, pair: Pair, seeds: list[int]) -> str | None:
    """Why A and B of a gap pair did not grade the same questions (a seed where both have a gap and their
    ceilings differ), or None when they logged one ceiling on every such seed."""
    ceiling = accuracies.parse(pair.metric).key("ceiling")
    gaps = [values(data, arm, pair.metric) for arm in (pair.a, pair.b)]
    ceilings = [values(data, arm, ceiling) for arm in (pair.a, pair.b)]
    for s in seeds:
        if s not in gaps[0] or s not in gaps[1]:
            continue
        a, b = (c.get(s, math.nan) for c in ceilings)
        if not abs(a - b) <= 1e-9:
            return f"at seed {s} the arms' ceilings ({ceiling}) are {a:g} and {b:g}"
    return None


def _check_shared_ceiling(data, pair: Pair, seeds: list[int]) -> None:
    """ComparisonError, in one line, unless A and B logged one ceiling on every seed where both have a gap: the
    condition under which a design that grades the same questions narrows A - B of two gaps to [-1, 1]."""
    if why := unshared_ceiling(data, pair, seeds):
        raise ComparisonError(f"{pair.label}: {why}, so they did not grade the same questions and the gap "
                              "difference is not bounded by [-1, 1]: compare their accuracies instead")  # fmt: skip


def _shared_set(data, pair: Pair, alpha: float, seeds: set[int]) -> tuple[float, float]:
    """(alpha for the sequence over seeds, half-width added to it) for a pair. When both arms graded one
    validation set that every seed shared, the per-seed differences all carry that set's draw of questions,
    which more seeds do not average away: the sequence then runs at alpha / 2, and the set's error is added at
    the other alpha / 2 (its binomial standard error of A - B, leaving out the two arms' positive covariance on
    shared questions, so it errs wide). When each seed drew its own questions, the seeds hold that error; but
    where the arms logged their figures per validation document (real text), every seed's questions come from
    the same documents, so the documents' term is the one added, shared set or not. It comes from the
    comparison's own `seeds` only (never from other runs that happen to share the experiments' names), as an
    upper confidence bound at alpha / 4, with the normal quantile at the remaining alpha / 4: a term estimated
    as 0 from a few seeds would add nothing where the documents' draw is real."""
    from scipy.stats import norm

    metric, category = split(pair.metric)
    own = seeds and category == ""
    docs = data.clustered((metric, pair.a), (metric, pair.b), seeds=seeds) if own else None
    if docs is not None:
        return alpha / 2, float(norm.ppf(1 - alpha / 8)) * math.sqrt(docs.question_variance_upper(alpha / 4))
    a, b = (data.find(metric, category, experiment=e) for e in (pair.a, pair.b))
    if a is None or b is None or not (a.shared and b.shared) or not a.n or not b.n or not is_proportion(pair.metric):
        return alpha, 0.0
    se = math.sqrt(intervals.binomial_variance(a.mean, a.n) + intervals.binomial_variance(b.mean, b.n))
    return alpha / 2, float(norm.ppf(1 - alpha / 4)) * se


def _differences(
    data, pair: Pair, seeds: list[int], bounds: tuple[float, float]
) -> tuple[list[float], tuple[list[bool], list[bool]], tuple[float, float] | None]:
    """A - B per seed, oriented so that > 0 favours A, every seed at its value; which seeds of A and of B did not
    learn (below `fails_below`, or no figure); and each arm's own mean over the seeds with a figure, as measured
    (None before both have one). A run that gave no figure counts at its arm's worst value in `bounds` (what one
    arm's figure can be): a recipe that crashes is judged by it, as one that stalls is."""
    va, vb = values(data, pair.a, pair.metric), values(data, pair.b, pair.metric)
    lower = scoreboard.lower_is_better(pair.metric)
    worst = bounds[1] if lower else bounds[0]
    diffs: list[float] = []
    failed: tuple[list[bool], list[bool]] = ([], [])
    for s in seeds:
        x, y = va.get(s, math.nan), vb.get(s, math.nan)
        for value, out in ((x, failed[0]), (y, failed[1])):
            if not math.isnan(value) and not bounds[0] <= value <= bounds[1]:
                raise ComparisonError(f"{pair.metric} = {value:g} at seed {s} lies outside [{bounds[0]:g}, "
                                      f"{bounds[1]:g}], the range the design's sequence needs")  # fmt: skip
            out.append(math.isnan(value) or (pair.fails_below is not None and value < pair.fails_below))
        x, y = (worst if math.isnan(v) else v for v in (x, y))
        diffs.append((y - x) if lower else (x - y))
    measured = [[v[s] for s in seeds if s in v] for v in (va, vb)]
    means = (sum(measured[0]) / len(measured[0]), sum(measured[1]) / len(measured[1])) if all(measured) else None
    return diffs, failed, means


def scaled(x: float, proportion: bool, signed: bool = False) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"{100 * x if proportion else x:{'+' if signed else ''}.2f}"


def stop_words(j: Judged, cap: int, clock: int | None = None) -> str:
    """Why and when the pair stopped, worded once for every page: 'sign decided after 12 seeds', 'alike after
    30 seeds', 'every seed tied after 8 seeds', 'stopped on the clock (--minutes) after 9 seeds', 'cap reached
    after 40 seeds' or 'open at 5 of 40 seeds'. `clock`: the look at which `--minutes` stopped the comparison."""
    v = j.verdict
    if v.reason == "cap reached":
        if on_clock(j, clock):
            return f"stopped on the clock (--minutes) after {clock} seeds"
        return f"cap reached after {v.look} seeds"
    if v.reason == "below the cap":
        return f"open at {j.looks} of {cap} seeds"
    return {"sign decided": "sign decided", "alike within band": "alike", "every seed tied": "every seed tied"}[
        v.reason] + f" after {v.look} seeds"  # fmt: skip


def on_clock(j: Judged, clock: int | None) -> bool:
    """Whether `--minutes` (which stopped the comparison at look `clock`) is what capped this pair."""
    return clock is not None and j.verdict.reason == "cap reached" and j.looks == clock


def verdict_words(j: Judged, a: str, b: str, clock: int | None = None) -> str:
    """The verdict with the arms named, 'undecided (clock)' where `--minutes` capped it: every page says it so."""
    return j.words(a, b).replace("(cap)", "(clock)" if on_clock(j, clock) else "(cap)")


def table(design: Design, judged: list[Judged], clock: int | None = None) -> list[str]:
    """The verdicts as a Markdown table, then each pair's history (its win rate's sequence and the mean's at every
    look); `clock`: the look at which `--minutes` stopped the comparison, if it did."""
    unit = design.unit
    proportion = unit == "points"
    families = "; ".join(f"{name or 'one family'}: {k} pair(s) at alpha {design.alpha / k:.4g} each"
                         for name, k in design.families.items())  # fmt: skip
    together = len(design.families)
    lo, hi = design.band
    lines = [
        f"Pairs judged together (Bonferroni, each family at {design.alpha:g}): {families}"
        + (
            f"; over all {together} families together, a wrong verdict anywhere with probability at most "
            f"{design.alpha * together:g}"
            if together > 1
            else ""
        )
        + f". A − B signed so that > 0 favours A, in {unit}; at most {design.cap} seeds per pair (first seed "
        f'{design.first_seed}). The verdict is the sign rule\'s: "A better" means A wins on more than half of the '
        f"seeds that are not ties (the win rate's 95% confidence sequence lies above one half), not that A's mean is "
        f'higher; "alike" means that sequence lies inside {lo:g} to {hi:g}; a tie carries no sign. The mean\'s '
        "interval is the betting confidence sequence at the last look, beside the verdict and deciding nothing; "
        "every seed counts at its value (docs/statistics.md)."
        + (f" First judged by {design.earlier}; judged again here by the sign rule." if design.earlier else ""),
        "",
        "| A | B | metric | A, B (means) | A wins (of untied; ties) | win rate (95% sequence) | median A − B "
        "| mean A − B (95% sequence) | seeds | seeds that did not learn: A, B (exact test) | verdict | stopped |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for j in judged:
        iv, v = j.interval, j.verdict
        a, b = (name.rsplit("/", 1)[-1] for name in (j.pair.a, j.pair.b))
        means = ", ".join(scaled(m, proportion) for m in j.means) if j.means else "–"
        rate = "{:.2f} to {:.2f}".format(*v.rate)
        lines.append(f"| {j.pair.a} | {j.pair.b} | {j.pair.metric} | {means} | {v.wins} of {v.untied}; {v.ties} | "
                     f"{rate} | {scaled(j.median, proportion, True)} | {scaled(iv.mean, proportion, True)} "
                     f"({scaled(iv.lo, proportion, True)} to {scaled(iv.hi, proportion, True)}) | {j.looks} | "
                     f"{failure_words(j.failures)} | {verdict_words(j, a, b, clock)} | "
                     f"{stop_words(j, design.cap, clock)} |")  # fmt: skip
    lines += ["", f"History: the win rate's sequence after each seed (no verdict is possible before "
              f"{design.first_look(design.pairs)}), then the mean's.", ""]  # fmt: skip
    for j in judged:
        rates = ", ".join(f"{k + 1}: {lo:.2f} to {hi:.2f}" for k, (lo, hi) in enumerate(j.verdict.history))
        steps = ", ".join(f"{k + 1}: {scaled(iv.lo, proportion, True)} to {scaled(iv.hi, proportion, True)}"
                          for k, iv in enumerate(j.history))  # fmt: skip
        lines.append(f"- {j.pair.label}: win rate {rates or 'no seed yet'}; mean {steps or 'no seed yet'}")
    return lines


def failure_words(f: ArmFailures | None) -> str:
    """'1 of 8 (1 to 53%), 0 of 8 (0 to 37%); p = 1': each arm's seeds below its `fails_below` (or with no
    figure) with exact 95% intervals, and McNemar's exact p for equal rates."""
    if f is None:
        return "–"
    if not f.any:
        return f"none of {f.seeds}"
    rates = ", ".join(f"{k} of {f.seeds} ({100 * lo:.0f} to {100 * hi:.0f}%)"
                      for k, (_, lo, hi) in ((f.a, f.rate("a")), (f.b, f.rate("b"))))  # fmt: skip
    return f"{rates}; p = {f.p:.2g}"


def as_diff(data: Data, j: Judged) -> Diff | None:
    """The pair as a report's `Diff` whose interval is the sequence at the last look (as measured, A - B), so
    that `say`, the figures and the pages read it as they read any paired difference; None when an arm is not
    in the table."""
    metric, category = split(j.pair.metric)
    a, b = (data.find(metric, category, experiment=e) for e in (j.pair.a, j.pair.b))
    if a is None or b is None:
        return None
    iv, lower = j.interval, scoreboard.lower_is_better(j.pair.metric)
    return Diff(a, b, -iv if lower else iv, lower, rule=j.verdict.verdict)


@dataclass
class Recorded:
    """A comparison as its record and the grid's table give it now: what a page quotes."""

    design: Design
    judged: list[Judged]
    wall_s: float | None  # the wall time of the invocation that wrote it, None for one that did not say
    clock: int | None = None  # the look at which `--minutes` stopped it, None where it did not

    def words(self, j: Judged, a: str, b: str) -> str:
        """`j`'s verdict as every page words it (minibert.compare.comparison.verdict_words)."""
        return verdict_words(j, a, b, self.clock)

    def stop(self, j: Judged) -> str:
        """Why and when `j` stopped, as every page words it."""
        return stop_words(j, self.design.cap, self.clock)

    def pair(self, b: str) -> Judged:
        """The pair whose B arm is `b` (or ends with `/b`)."""
        found = [j for j in self.judged if j.pair.b == b or j.pair.b.endswith("/" + b)]
        if len(found) != 1:
            raise KeyError(f"{len(found)} pairs with B = {b!r}; B arms: {[j.pair.b for j in self.judged]}")
        return found[0]

    @property
    def decided(self) -> int:
        return sum(j.decided for j in self.judged)

    @property
    def decided_pairs(self) -> list[Judged]:
        return [j for j in self.judged if j.decided]

    @property
    def decided_at_first_look(self) -> int:
        """The pairs decided at the seeds before which no verdict is possible (the first look)."""
        first = self.design.first_look(self.design.pairs)
        return sum(j.decided and j.verdict.look <= first for j in self.judged)

    @property
    def last_decision(self) -> int:
        """The seeds after which the last decided pair was decided (0 where none was)."""
        return max((j.verdict.look for j in self.judged if j.decided), default=0)

    @property
    def with_failures(self) -> list[Judged]:
        """The pairs where either arm had a seed that did not learn."""
        return [j for j in self.judged if j.failures and j.failures.any]

    @property
    def most_looks(self) -> int:
        """The most seeds any pair ran."""
        return max(j.looks for j in self.judged)

    def rejudged(self) -> list[list]:
        """Each pair as first judged (the betting sequence on the mean) and as judged now (the sign rule), on the
        same seeds: [A, B, metric, seeds, A's wins, before, after] for a page's table; [] for a record made by the
        sign rule."""
        rows = []
        for j in self.judged:
            if (before := j.by_the_mean(self.design)) is None:
                continue
            a, b = j.pair.a, j.pair.b
            was = sign.named(before.verdict, a, b)
            was += f" after {before.look}" if before.reason != "below the cap" else ""
            v = j.verdict
            now = self.words(j, a, b) + (f" after {v.look}" if j.stopped else "")
            rows.append([f"`{a}`", f"`{b}`", j.pair.metric, j.looks, f"{v.wins} of {v.untied} ({v.ties} tied)", was,
                         now])  # fmt: skip
        return rows


def recorded(folder: str | Path, name: str, data) -> Recorded:
    """The comparison `folder/comparisons/<name>.json` judged on `data`, the table of `folder`."""
    path = Path(folder) / "comparisons" / f"{name}.json"
    body = load_record(path)
    if body is None:
        raise TableError(f"{path}: no such record: give the name of a comparison recorded in {folder}/comparisons")
    judged = judge(data, body["design"], body["looks"], body.get("diffs"))
    return Recorded(body["design"], judged, body.get("wall_s"), body.get("clock"))


def load_record(path: Path) -> dict | None:
    """A comparison's record with its design read (`design`: a Design), None where there is none; TableError in
    one line for a record that is damaged."""
    if not path.is_file():
        return None
    body = read_json(path, ("design", "looks"))
    try:
        return body | {"design": Design.from_json(body["design"])}
    except (KeyError, TypeError, ValueError) as err:
        raise TableError(f"{path}: its design does not read ({type(err).__name__}: {err}): restore it "
                         f"(git checkout -- {path})") from None  # fmt: skip


def write_record(path: Path, design: Design, looks: dict[str, int], judged: list[Judged], text: list[str],
                 extra: dict) -> None:  # fmt: skip
    """The design, how many seeds each pair ran, and the verdicts as judged now (the dashboard judges again from
    the table); `.md` beside it for people."""
    pairs = [{"a": j.pair.a, "b": j.pair.b, "metric": j.pair.metric, "looks": j.looks, "verdict": j.verdict.verdict,
              "reason": j.verdict.reason, "decided_at": j.verdict.look, "wins": j.verdict.wins,
              "losses": j.verdict.losses, "ties": j.verdict.ties, "e_value": j.verdict.e_value,
              "rate": list(j.verdict.rate), "median": j.median, "mean": j.interval.mean, "lo": j.interval.lo,
              "hi": j.interval.hi, "failed": [j.failures.a, j.failures.b] if j.failures else [0, 0],
              "means": list(j.means) if j.means else None}
             for j in judged]  # fmt: skip
    body = {"design": design.to_json(), "looks": looks, "pairs": pairs, **extra}
    write_atomic(path, without_absolute_paths(json.dumps(body, indent=1, default=float)) + "\n")
    write_atomic(path.with_suffix(".md"), without_absolute_paths("\n".join(text)) + "\n")
