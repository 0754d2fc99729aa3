"""A comparison that stops as soon as its verdicts are decided: the design fixed before the first seed, the
seeds judged look by look, and the record on disk (scripts/compare.py; the policy: docs/statistics.md).

A design is a family of pairs A - B (a new objective against every shipped one, or the arms a user names),
each judged on one metric, oriented so that > 0 favours A. Seeds s0, s0 + 1, ... run in that order; after
each, every pair still undecided looks at its confidence sequence (minibert.stats.sequential.decide) at
alpha / K, K the pairs of the family (Bonferroni), and stops when the sequence excludes 0, when it lies
inside ±margin (equivalent), or at the cap. A seed at which either arm did not learn (its value below
`fails_below`, a rule fixed in the design, or no value: the run failed) counts towards the look and the cap
but not the interval; the failure rate is reported apart with its exact binomial interval.

Everything here is recomputed from the grid's table, so a killed comparison resumes where its runs stopped,
and the dashboard (minibert.report.grid_report) judges a recorded comparison by the same function.

Example:
    >>> design = Design([Pair("p/new", "p/mlm", "val/acc")], margin=0.01, cap=10)
    >>> design.alpha_for(design.pairs[0]), design.first_look(design.pairs), design.unit
    (0.05, 3, 'points')
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minibert.ablation import accuracies
from minibert.atomic_writes import write_atomic
from minibert.checkout import without_absolute_paths
from minibert.report.query import LOWER_IS_BETTER, Data, Diff
from minibert.report.stats import Interval
from minibert.report.table import split
from minibert.stats.sequential import (
    ALPHA,
    EARLIER_PRIOR_VARIANCE,
    PRIOR_VARIANCE,
    FailureSplit,
    RobustCheck,
    SequentialVerdict,
    decide,
    first_bound,
    robust_check,
    seeds_to_decide,
    sequence,
    split_failures,
)

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class ComparisonError(ValueError):
    """A design that cannot be run or continued; the message says what to change."""


def lower_is_better(metric: str) -> bool:
    """Gaps to a ceiling and losses are better low; accuracies and everything else high."""
    return bool(LOWER_IS_BETTER.search(metric))


def is_proportion(metric: str) -> bool:
    """An accuracy-like figure, printed in points (100 x)."""
    return accuracies.parse(metric) is not None


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
    prior_variance: float = PRIOR_VARIANCE  # the sequence's mixture variance g (minibert.stats.sequential)

    def alpha_for(self, pair: Pair) -> float:
        """alpha / K, K the pairs of `pair`'s family."""
        return self.alpha / sum(p.family == pair.family for p in self.pairs)

    def first_look(self, pairs: list[Pair]) -> int:
        """The fewest seeds at which any of `pairs` can be decided (minibert.stats.sequential.first_bound)."""
        return min(first_bound(self.alpha_for(p), self.prior_variance) for p in pairs)

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

    def seeds(self, looks: int) -> list[int]:
        return list(range(self.first_seed, self.first_seed + looks))

    def same_question(self, other: Design, scale: float = 1) -> str | None:
        """Why `other` (a recorded design) is not this one asked again with a larger cap, or None; a margin
        is said in the printed unit (`scale` 100 for points)."""
        if not math.isclose(self.margin, other.margin):
            return f"its margin was ±{other.margin * scale:g}, now ±{self.margin * scale:g}"
        for name in ("pairs", "alpha", "first_seed", "prior_variance"):
            if getattr(self, name) != getattr(other, name):
                return f"its {name} was {getattr(other, name)!r}, now {getattr(self, name)!r}"
        if self.cap < other.cap:
            return f"its cap was {other.cap} seeds; a comparison may be extended, never cut (now {self.cap})"
        return None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Design:
        pairs = [Pair(**p) for p in d["pairs"]]
        return cls(pairs, d["margin"], d["cap"], d["alpha"], d["first_seed"], d.get("command", ""),
                   list(d.get("extended_from", [])), d.get("prior_variance", EARLIER_PRIOR_VARIANCE))  # fmt: skip


@dataclass
class Judged:
    """One pair after `looks` seeds: its verdict, the sequence's interval at every look (its history), the
    per-seed differences (NaN where a seed failed), failures, and a robust second opinion."""

    pair: Pair
    looks: int
    verdict: SequentialVerdict
    history: list  # Interval per look of the learning seeds (minibert.stats.sequential.sequence)
    diffs: list[float]
    failures: FailureSplit
    robust: RobustCheck | None

    @property
    def stopped(self) -> bool:
        """Decided, inside the margin, or at the cap: no more seeds for this pair."""
        return self.verdict.reason != "below the cap"

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
    that > 0 favours A, None where a seed failed) when its runs are not in the table."""
    judged = []
    for pair in design.pairs:
        n = looks.get(pair.label, 0)
        if kept is not None:
            diffs = [math.nan if d is None else float(d) for d in kept[pair.label][:n]]
            failed = [math.isnan(d) for d in diffs]
        else:
            diffs, failed = _differences(data, pair, design.seeds(n))
        alpha, widen = _shared_set(data, pair, design.alpha_for(pair))
        g = design.prior_variance
        verdict = decide([0.0 if f else d for d, f in zip(diffs, failed)], design.margin, design.cap, alpha,
                         failed, widen, g) if n else _nothing()  # fmt: skip
        learning = [d for d in diffs if not math.isnan(d)]
        history = sequence(learning, alpha, widen, g) if learning else []
        failures = split_failures([0.0 if math.isnan(d) else d for d in diffs], failed) if n else None
        robust = robust_check(learning) if len(learning) >= 5 else None
        judged.append(Judged(pair, n, verdict, history, diffs, failures, robust))
    return judged


def seeds_needed(data, design: Design, judged: Judged) -> tuple[int, float, float, int | None] | None:
    """(learning seeds, their mean and SD so far, the seeds the pair's sequence would need at that spread to
    stop: minibert.stats.sequential.seeds_to_decide), at the alpha and widening `judge` gave it; None below 2
    learning seeds, which give no spread."""
    learning = [d for d in judged.diffs if not math.isnan(d)]
    if len(learning) < 2:
        return None
    mean = sum(learning) / len(learning)
    sd = math.sqrt(sum((d - mean) ** 2 for d in learning) / (len(learning) - 1))
    alpha, widen = _shared_set(data, judged.pair, design.alpha_for(judged.pair))
    return len(learning), mean, sd, seeds_to_decide(mean, sd, design.margin, alpha, design.prior_variance, widen)


def _shared_set(data, pair: Pair, alpha: float) -> tuple[float, float]:
    """(alpha for the sequence over seeds, half-width added to it) for a pair. When both arms graded one
    validation set that every seed shared, the per-seed differences all carry that set's draw of questions,
    which more seeds do not average away: the sequence then runs at alpha / 2, and the set's error is added at
    the other alpha / 2 (its binomial standard error of A - B, leaving out the two arms' positive covariance on
    shared questions, so it errs wide). When each seed drew its own questions, the seeds hold that error; but
    where the arms logged their figures per validation document (real text), every seed's questions come from
    the same documents, so the documents' term (`sequential.clustered`'s, from the seeds so far) is the one
    added, shared set or not."""
    from scipy.stats import norm

    metric, category = split(pair.metric)
    docs = data.clustered((metric, pair.a), (metric, pair.b)) if category == "" else None
    if docs is not None:
        return alpha / 2, float(norm.ppf(1 - alpha / 4)) * math.sqrt(docs.question_variance)
    a, b = (data.find(metric, category, experiment=e) for e in (pair.a, pair.b))
    if a is None or b is None or not (a.shared and b.shared) or not a.n or not b.n or not is_proportion(pair.metric):
        return alpha, 0.0
    se = math.sqrt(a.mean * (1 - a.mean) / a.n + b.mean * (1 - b.mean) / b.n)
    return alpha / 2, float(norm.ppf(1 - alpha / 4)) * se


def _differences(data, pair: Pair, seeds: list[int]) -> tuple[list[float], list[bool]]:
    """A - B per seed (oriented so that > 0 favours A; NaN where a seed failed) and which seeds failed."""
    va, vb = values(data, pair.a, pair.metric), values(data, pair.b, pair.metric)
    sign = -1.0 if lower_is_better(pair.metric) else 1.0
    diffs, failed = [], []
    for s in seeds:
        x, y = va.get(s, math.nan), vb.get(s, math.nan)
        bad = math.isnan(x) or math.isnan(y)
        if pair.fails_below is not None and not bad:
            bad = x < pair.fails_below or y < pair.fails_below
        failed.append(bad)
        diffs.append(math.nan if bad else sign * (x - y))
    return diffs, failed


def _nothing() -> SequentialVerdict:
    from minibert.ablation.intervals import NAN

    return SequentialVerdict("undecided", 0, NAN, "below the cap")


def scaled(x: float, proportion: bool, signed: bool = False) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"{100 * x if proportion else x:{'+' if signed else ''}.2f}"


def table(design: Design, judged: list[Judged]) -> list[str]:
    """The verdicts as a Markdown table, then each pair's history (its sequence at every look)."""
    unit = design.unit
    proportion = unit == "points"
    families = "; ".join(f"{name or 'one family'}: {k} pair(s) at alpha {design.alpha / k:.4g} each"
                         for name, k in design.families.items())  # fmt: skip
    lines = [
        f"Pairs judged together (Bonferroni, each family at {design.alpha:g}): {families}. A − B signed so that "
        f"> 0 favours A, in {unit}; equivalence margin "
        f"±{scaled(design.margin, proportion).lstrip('+')} {unit}; at most {design.cap} seeds per pair "
        f"(first seed {design.first_seed}). The interval is the confidence sequence at the last look, valid at "
        "every look at once (docs/statistics.md).",
        "",
        "| A | B | metric | A − B (95% sequence) | seeds | failed seeds (rate, 95%) | verdict | stopped |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for j in judged:
        iv, f = j.interval, j.failures
        failed = "–" if f is None else f"{f.failed} ({100 * f.rate:.0f}%, {100 * f.lo:.0f} to {100 * f.hi:.0f})"
        stopped = {"sign decided": f"sign decided after {j.verdict.look} seeds",
                   "interval inside ±m": f"inside ±margin after {j.verdict.look} seeds",
                   "cap reached": "cap reached", "below the cap": f"open at {j.looks} of {design.cap} seeds"}[
                       j.verdict.reason]  # fmt: skip
        note = ""
        if j.robust is not None and j.robust.doubts_normality:
            r = j.robust
            note = (
                f"; not normal (Shapiro p = {r.shapiro_p:.3f}): Wilcoxon p = {r.wilcoxon_p:.3f}, bootstrap "
                f"{scaled(r.bootstrap.lo, proportion, True)} to {scaled(r.bootstrap.hi, proportion, True)}"
            )
        lines.append(f"| {j.pair.a} | {j.pair.b} | {j.pair.metric} | {scaled(iv.mean, proportion, True)} "
                     f"({scaled(iv.lo, proportion, True)} to {scaled(iv.hi, proportion, True)}) | {j.looks} | "
                     f"{failed} | {j.words(design.margin)}{note} | {stopped} |")  # fmt: skip
    lines += [
        "",
        f"History: the sequence after each seed (learning seeds only; the first bound after "
        f"{design.first_look(design.pairs)}).",
        "",
    ]
    for j in judged:
        steps = ", ".join(f"{k + 1}: {scaled(iv.lo, proportion, True)} to {scaled(iv.hi, proportion, True)}"
                          for k, iv in enumerate(j.history) if not math.isinf(iv.lo))  # fmt: skip
        lines.append(f"- {j.pair.label}: {steps or 'no bound yet'}")
    return lines


def as_diff(data: Data, j: Judged) -> Diff | None:
    """The pair as a report's `Diff` whose interval is the sequence at the last look (as measured, A - B), so
    that `say`, the figures and the pages read it as they read any paired difference; None when an arm is not
    in the table."""
    metric, category = split(j.pair.metric)
    a, b = (data.find(metric, category, experiment=e) for e in (j.pair.a, j.pair.b))
    if a is None or b is None:
        return None
    iv, lower = j.interval, lower_is_better(j.pair.metric)
    return Diff(a, b, Interval(-iv.mean, -iv.hi, -iv.lo, iv.seeds, iv.df) if lower else iv, lower)


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
        return sum(j.verdict.reason in ("sign decided", "interval inside ±m") for j in self.judged)


def recorded(folder: str | Path, name: str, data) -> Recorded:
    """The comparison `folder/comparisons/<name>.json` judged on `data`, the table of `folder`."""
    body = json.loads((Path(folder) / "comparisons" / f"{name}.json").read_text())
    design = Design.from_json(body["design"])
    return Recorded(design, judge(data, design, body["looks"], body.get("diffs")), body.get("wall_s"))


def load_record(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def write_record(path: Path, design: Design, looks: dict[str, int], judged: list[Judged], text: list[str],
                 extra: dict) -> None:  # fmt: skip
    """The design, how many seeds each pair ran, and the verdicts as judged now (the dashboard judges again from
    the table); `.md` beside it for people."""
    pairs = [{"a": j.pair.a, "b": j.pair.b, "metric": j.pair.metric, "looks": j.looks, "verdict": j.verdict.verdict,
              "reason": j.verdict.reason, "decided_at": j.verdict.look, "mean": j.interval.mean, "lo": j.interval.lo,
              "hi": j.interval.hi, "failed": j.failures.failed if j.failures else 0} for j in judged]  # fmt: skip
    body = {"design": design.to_json(), "looks": looks, "pairs": pairs, **extra}
    write_atomic(path, without_absolute_paths(json.dumps(body, indent=1, default=float)) + "\n")
    write_atomic(path.with_suffix(".md"), without_absolute_paths("\n".join(text)) + "\n")
