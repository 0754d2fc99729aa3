"""A comparison that stops as soon as its verdicts are decided: the design fixed before the first seed, the
seeds judged look by look, and the record on disk (scripts/compare.py; the policy: docs/statistics.md).

A design is a family of pairs A - B (a new objective against every shipped one, or the arms a user names),
each judged on one metric, oriented so that > 0 favours A. Seeds s0, s0 + 1, ... run in that order; after
each, every pair still undecided looks at its confidence sequence (minibert.stats.betting.decide) at
alpha / K, K the pairs of its family (Bonferroni), and stops when the sequence excludes 0, when it lies
inside ±margin (equivalent), or at the cap. The sequence assumes nothing of the per-seed differences but their
range (a difference of two proportions lies in [-1, 1]; another metric's range is part of the design), so every
seed counts at its value: a seed that did not learn is part of what a recipe does. A run that gave no figure
counts at the bottom of its arm's range. Seeds below `fails_below` are counted per arm, with exact intervals
and an exact paired test of the two rates, beside the verdict.

Everything here is recomputed from the grid's table, so a killed comparison resumes where its runs stopped,
and the dashboard (minibert.report.grid_report) judges a recorded comparison by the same function.

Example:
    >>> design = Design([Pair("p/new", "p/mlm", "val/acc")], margin=0.01, cap=10)
    >>> design.alpha_for(design.pairs[0]), design.first_look(design.pairs), design.unit, design.range(design.pairs[0])
    (0.05, 7, 'points', (-1.0, 1.0))
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minibert.atomic_writes import write_atomic
from minibert.checkout import without_absolute_paths
from minibert.report.query import Data, Diff
from minibert.report.table import TableError, read_json, split
from minibert.stats import accuracies, betting, intervals, scoreboard
from minibert.stats.betting import ALPHA, SequentialVerdict
from minibert.stats.failures import ArmFailures, compare_failures

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
SEQUENCE = "betting"  # minibert.stats.betting, with its fixed grid of bets


class ComparisonError(ValueError):
    """A design that cannot be run or continued; the message says what to change."""


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
    """What a comparison promises before its first seed: the family of pairs, the equivalence margin (in the
    metric's units: 0.01 is one point of accuracy), the cap on seeds, the family's alpha and the first seed."""

    pairs: list[Pair]
    margin: float
    cap: int
    alpha: float = ALPHA
    first_seed: int = 0
    command: str = ""
    extended_from: list[int] = field(default_factory=list)  # earlier caps, when a comparison was extended
    bounds: tuple[float, float] | None = None  # what one arm's figure can be, for a metric that does not say
    sequence: str = SEQUENCE  # the confidence sequence the verdicts stop on
    earlier: str = ""  # the sequence a record was first judged by, when it was another (see `from_json`)
    same_questions: bool = False  # each seed's arms grade one set of questions, so two gaps share a ceiling (`range`)

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
        """What A - B can be on one seed. Two gaps graded on the same questions share their ceiling, so A - B is
        B's accuracy minus A's, within [-1, 1] rather than the [-2, 2] of two gaps with ceilings of their own:
        the sequence then bets twice the stake on each seed. A design says so before its first seed
        (`same_questions`), and `judge` checks the two ceilings on every seed."""
        if self.same_questions and is_gap(pair.metric):
            return (-1.0, 1.0)
        lo, hi = self.values(pair)
        return (lo - hi, hi - lo)

    def first_look(self, pairs: list[Pair]) -> int:
        """The fewest seeds at which any of `pairs` can be decided (minibert.stats.betting.first_bound)."""
        return min(betting.first_bound(self.alpha_for(p), self.range(p)) for p in pairs)

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

    def same_question(self, other: Design, scale: float = 1) -> str | None:
        """Why `other` (a recorded design) is not this one asked again with a larger cap, or None; a margin
        is said in the printed unit (`scale` 100 for points)."""
        if not math.isclose(self.margin, other.margin):
            return f"its margin was ±{other.margin * scale:g}, now ±{self.margin * scale:g}"
        for name in ("pairs", "alpha", "first_seed", "bounds", "sequence"):
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
        """A recorded design. Records made before the betting sequence name none (or a mixture variance g): their
        verdicts stopped on the safe t-test, whose promise needs normal per-seed differences, which minibert's
        figures are not (docs/statistics.md). They are judged again by the betting sequence, which has nothing
        to tune, so nothing in that choice looks at their data; `earlier` says what they were first judged by."""
        pairs = [Pair(**p) for p in d["pairs"]]
        sequence = d.get("sequence")
        if sequence not in (None, SEQUENCE):
            raise ComparisonError(f"a record judged by the sequence {sequence!r}, which this code does not know")
        earlier = d.get("earlier", "")
        if sequence is None:
            earlier = f"the safe t-test, g = {d.get('prior_variance', 2.0):g}"
        bounds = tuple(d["bounds"]) if d.get("bounds") is not None else None
        same = bool(d.get("same_questions", False))  # a record made before designs said so keeps the wider range
        return cls(pairs, d["margin"], d["cap"], d["alpha"], d["first_seed"], d.get("command", ""),
                   list(d.get("extended_from", [])), bounds, SEQUENCE, earlier, same)  # fmt: skip


@dataclass
class Judged:
    """One pair after `looks` seeds: its verdict, the sequence's interval at every look (its history), the
    per-seed differences (every seed at its value), and each arm's seeds that did not learn."""

    pair: Pair
    looks: int
    verdict: SequentialVerdict
    diffs: list[float]
    failures: ArmFailures | None  # None before the first seed
    alpha: float = ALPHA  # the sequence's, after the family's split and a shared set's share
    widen: float = 0.0  # a shared set's or the documents' half-width added to every look
    means: tuple[float, float] | None = None  # each arm's own mean over the seeds judged (None: not in the table)

    @property
    def history(self) -> tuple:
        """The sequence's interval at every look (minibert.stats.betting.sequence)."""
        return self.verdict.history

    @property
    def stopped(self) -> bool:
        """Decided, inside the margin, or at the cap: no more seeds for this pair."""
        return self.verdict.reason != "below the cap"

    @property
    def decided(self) -> bool:
        """Stopped on a verdict: its sign decided or its interval inside the margin (not at the cap)."""
        return self.verdict.reason in ("sign decided", "interval inside ±m")

    @property
    def sign_decided(self) -> bool:
        return self.verdict.reason == "sign decided"

    @property
    def interval(self):
        """The sequence at the last look: valid with every earlier one at once, so the narrowest to show."""
        return self.history[-1] if self.history else self.verdict.interval

    def words(self, margin: float, a: str = "A", b: str = "B") -> str:
        """The verdict with the arms named and the margin in the printed unit: 'A better', 'equivalent within
        ±1 points', 'undecided (cap)'."""
        v = self.verdict.verdict
        if v.startswith("equivalent"):
            proportion = is_proportion(self.pair.metric)
            return f"equivalent within ±{scaled(margin, proportion).rstrip('0').rstrip('.')} " + (
                "points" if proportion else "units"
            )
        return v.replace("A better", f"{a} better").replace("B better", f"{b} better")


def values(data: Data, experiment: str, metric: str) -> dict[int, float]:
    """{seed: value} of one experiment's metric in a grid's table (minibert.report.query.Data)."""
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
        alpha, widen = _shared_set(data, pair, design.alpha_for(pair), own)
        verdict = betting.decide(diffs, design.margin, design.cap, alpha, bounds, widen)
        failures = compare_failures(*failed) if n else None
        judged.append(Judged(pair, n, verdict, diffs, failures, alpha, widen, means))
    return judged


def seeds_needed(design: Design, judged: Judged) -> tuple[int, float, float, int | None] | None:
    """(seeds, their mean difference and SD so far, the seeds at which half of comparisons drawn like these
    would stop: minibert.stats.betting.seeds_to_decide), at the alpha and widening `judge` gave the pair; None
    below 2 seeds."""
    x = judged.diffs
    if len(x) < 2:
        return None
    mean = sum(x) / len(x)
    sd = math.sqrt(sum((d - mean) ** 2 for d in x) / (len(x) - 1))
    limit = max(200, 2 * design.cap)
    need = betting.seeds_to_decide(x, design.margin, judged.alpha, design.range(judged.pair), judged.widen, limit=limit)
    return len(x), mean, sd, need


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


def table(design: Design, judged: list[Judged], clock: int | None = None) -> list[str]:
    """The verdicts as a Markdown table, then each pair's history (its sequence at every look); `clock`: the look
    at which `--minutes` stopped the comparison, if it did."""
    unit = design.unit
    proportion = unit == "points"
    families = "; ".join(f"{name or 'one family'}: {k} pair(s) at alpha {design.alpha / k:.4g} each"
                         for name, k in design.families.items())  # fmt: skip
    lines = [
        f"Pairs judged together (Bonferroni, each family at {design.alpha:g}): {families}"
        + (
            f"; over all {len(design.families)} families together, a wrong verdict anywhere with probability at "
            f"most {design.alpha * len(design.families):g}"
            if len(design.families) > 1
            else ""
        )
        + f". A − B signed so that > 0 favours A, in {unit}; equivalence margin "
        f"±{scaled(design.margin, proportion).lstrip('+')} {unit}; at most {design.cap} seeds per pair "
        f"(first seed {design.first_seed}). The interval is the betting confidence sequence at the last look, "
        "valid at every look at once whatever the per-seed differences' shape; every seed counts at its value "
        "(docs/statistics.md)."
        + (
            f" First judged by {design.earlier}, which assumes normal differences; judged again here by the "
            "betting sequence."
            if design.earlier
            else ""
        ),
        "",
        "| A | B | metric | A, B (means) | A − B (95% sequence) | seeds | seeds that did not learn: A, B (exact test) "
        "| verdict | stopped |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for j in judged:
        iv, f = j.interval, j.failures
        on_clock = clock is not None and j.verdict.reason == "cap reached" and j.looks == clock
        stopped = {"sign decided": f"sign decided after {j.verdict.look} seeds",
                   "interval inside ±m": f"inside ±margin after {j.verdict.look} seeds",
                   "cap reached": f"stopped on the clock (--minutes) after {clock} seeds" if on_clock else
                   "cap reached", "below the cap": f"open at {j.looks} of {design.cap} seeds"}[
                       j.verdict.reason]  # fmt: skip
        a, b = (name.rsplit("/", 1)[-1] for name in (j.pair.a, j.pair.b))
        words = j.words(design.margin, a, b).replace("(cap)", "(clock)" if on_clock else "(cap)")
        means = ", ".join(scaled(m, proportion) for m in j.means) if j.means else "–"
        lines.append(f"| {j.pair.a} | {j.pair.b} | {j.pair.metric} | {means} | {scaled(iv.mean, proportion, True)} "
                     f"({scaled(iv.lo, proportion, True)} to {scaled(iv.hi, proportion, True)}) | {j.looks} | "
                     f"{failure_words(f)} | {words} | {stopped} |")  # fmt: skip
    lines += [
        "",
        f"History: the sequence after each seed (no verdict is possible before {design.first_look(design.pairs)}).",
        "",
    ]
    for j in judged:
        steps = ", ".join(f"{k + 1}: {scaled(iv.lo, proportion, True)} to {scaled(iv.hi, proportion, True)}"
                          for k, iv in enumerate(j.history))  # fmt: skip
        lines.append(f"- {j.pair.label}: {steps or 'no seed yet'}")
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
    return Diff(a, b, -iv if lower else iv, lower)


def record_path(folder: Path, name: str) -> Path:
    """`folder/comparisons/<name>.json`, refusing a name that would leave that folder."""
    if not NAME.fullmatch(name) or name.endswith(".json"):
        raise ComparisonError(
            f"--name={name!r}: give a plain file name (letters, digits, '._-'), not a path; it is written in "
            f"{folder / 'comparisons'}"
        )
    return folder / "comparisons" / f"{name}.json"


@dataclass
class Recorded:
    """A comparison as its record and the grid's table give it now: what a page quotes."""

    design: Design
    judged: list[Judged]
    wall_s: float | None  # the wall time of the invocation that wrote it, None for one that did not say

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
    def with_failures(self) -> list[Judged]:
        """The pairs where either arm had a seed that did not learn."""
        return [j for j in self.judged if j.failures and j.failures.any]

    @property
    def most_looks(self) -> int:
        """The most seeds any pair ran."""
        return max(j.looks for j in self.judged)


def recorded(folder: str | Path, name: str, data) -> Recorded:
    """The comparison `folder/comparisons/<name>.json` judged on `data`, the table of `folder`."""
    path = Path(folder) / "comparisons" / f"{name}.json"
    body = load_record(path)
    if body is None:
        raise TableError(f"{path}: no such record: give the name of a comparison recorded in {folder}/comparisons")
    return Recorded(body["design"], judge(data, body["design"], body["looks"], body.get("diffs")), body.get("wall_s"))


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
              "reason": j.verdict.reason, "decided_at": j.verdict.look, "mean": j.interval.mean, "lo": j.interval.lo,
              "hi": j.interval.hi, "failed": [j.failures.a, j.failures.b] if j.failures else [0, 0],
              "means": list(j.means) if j.means else None}
             for j in judged]  # fmt: skip
    body = {"design": design.to_json(), "looks": looks, "pairs": pairs, **extra}
    write_atomic(path, without_absolute_paths(json.dumps(body, indent=1, default=float)) + "\n")
    write_atomic(path.with_suffix(".md"), without_absolute_paths("\n".join(text)) + "\n")
