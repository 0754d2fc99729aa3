"""The statistics every page uses: one interval per kind of quantity, one verdict, one formatter.

- An accuracy over seeds: `minibert.stats.intervals.accuracy_interval`, seed spread plus the sampling of
  the validation questions when every seed graded the same set (when each seed drew its own, the spread over
  seeds holds that error already).
- Any other figure over seeds (a loss, a probe's UUAS, a count): the t-interval over seeds.
- A paired difference A - B: per-seed differences, plus both accuracies' sampling terms on a shared set.
- A verdict: the interval's side of zero, or equivalence when it lies inside a stated margin.

Figures are shown in points (100 x) for accuracies, as they are measured otherwise.

Example:
    >>> iv = Interval(0.2212, 0.2112, 0.2312, 30)
    >>> fmt(iv), verdict(iv), verdict(Interval(0.001, -0.004, 0.006, 10), margin=0.01)
    ('22.1 (21.1 to 23.1)', 'A better', 'equivalent within ±1.0')
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping

from minibert.stats.holm import ALPHA, adjusted
from minibert.stats.intervals import (
    NAN,
    Interval,
    accuracy_interval,
    difference_interval,
    p_value,
    reference_difference,
    t95,
    variance,
    with_sampling,
)

__all__ = ["NAN", "Interval", "Family", "canonical", "summary", "paired", "reference", "sign", "verdict", "fmt",
           "number", "sd"]  # fmt: skip


def summary(values: Mapping[int, float], n: float | None, proportion: bool) -> Interval:
    """Mean over seeds of one figure with its 95% interval; `n`: questions of a validation set every seed
    shared (None when each seed drew its own, or for a figure that is not a proportion)."""
    clean = [v for v in values.values() if not math.isnan(v)]
    if proportion:
        return accuracy_interval(clean, n)
    if not clean:
        return NAN
    mean = statistics.fmean(clean)
    if len(clean) < 2:
        return Interval(mean, mean, mean, 1)
    half = t95(len(clean) - 1) * math.sqrt(variance(clean)) / math.sqrt(len(clean))
    return Interval(mean, mean - half, mean + half, len(clean), len(clean) - 1)


def paired(a: Mapping[int, float], b: Mapping[int, float], n_a: float | None, n_b: float | None) -> Interval:
    """A - B over the seeds both have: the seeds' spread of the differences, plus the validation sampling
    of each proportion where `n_a`, `n_b` are given (a shared set; see `summary`)."""
    return difference_interval(dict(a), dict(b), n_a, n_b)


def reference(values: Mapping[int, float], n: float | None, published: float) -> Interval:
    """Our mean over seeds minus one published single run's figure (a write-up's): that run carries one seed's
    spread and, on `n` questions of its own, its own sampling error as well as ours. Within noise when the
    interval covers zero.

    >>> iv = reference({0: 0.90, 1: 0.91, 2: 0.89}, 2000, 0.895)
    >>> iv.lo < 0 < iv.hi, reference({0: 0.90, 1: 0.91, 2: 0.89}, 2000, 0.80).lo > 0
    (True, True)
    """
    return reference_difference(list(values.values()), n, published)


def sd(values: Mapping[int, float]) -> float:
    """The spread over seeds (sample standard deviation, NaN values left out; NaN below two seeds): how far
    one seed's figure strays, shown beside the interval of the mean when a recipe is judged on its spread.

    >>> round(sd({0: 0.1, 1: 0.2, 2: 0.3}), 6), sd({0: 0.5})
    (0.1, nan)
    """
    clean = [v for v in values.values() if not math.isnan(v)]
    return math.sqrt(variance(clean)) if len(clean) > 1 else math.nan


def gap(values: Mapping[int, float], ceiling: float, accuracy: float, n: float | None) -> Interval:
    """A logged gap (ceiling minus accuracy on the same questions, per seed) over seeds: the seeds' spread of
    the gaps plus, on a shared set of `n` questions, both proportions' sampling terms (as `paired`)."""
    clean = [v for v in values.values() if not math.isnan(v)]
    if not clean:
        return NAN
    sampling = (ceiling * (1 - ceiling) + accuracy * (1 - accuracy)) / n if n else 0.0
    return with_sampling(clean, sampling)


class Family:
    """The paired comparisons drawn from one grid's table, held together by Holm's step-down (Holm, Scand. J.
    Statist. 1979). Its questions are declared before the data (`declare`: the grid's claims and its family file,
    minibert.tables.questions), and every one of them is judged once from the table (`decide`, called by
    minibert.report.verdicts with the rows it writes to verdicts.csv), so what the pages go on to ask cannot
    choose them, and a declared question no page reads spends its share of alpha all the same. A page's verdict
    is its question's row: `sign` refuses a question the declaration does not hold (UndeclaredQuestion) and an
    interval other than the row's (NotItsRow). So the "A better" verdicts drawn from one table hold together at
    95% however many pages show them, and two pages that quote one comparison say the same of it. The p-value of
    an interval is its t-test's: |mean| over the standard error its half-width implies, on its degrees of
    freedom. Intervals are shown as they are (each 95%); only the verdicts are adjusted. A table read outside
    any grid declares no family: each of its verdicts stands alone.

    >>> f = Family("g")  # two intervals that each exclude 0 (p = 0.03 and 0.04), but not both at 95% together
    >>> f.declare(["a vs b", "c vs d"], "their grid")
    >>> ivs = [Interval(0.03, 0.003, 0.057, 30, 29.0), Interval(0.02, 0.001, 0.039, 30, 29.0)]
    >>> f.decide({"a vs b": p_value(ivs[0]), "c vs d": p_value(ivs[1])})
    >>> [f.sign(iv, q) for iv, q in zip(ivs, ["a vs b", "d vs c"])], f.size
    ([0, 0], 2)
    """

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.declared: frozenset[str] | None = None  # canonical questions; None: no family (each verdict alone)
        self.source = ""  # where they were declared
        self.p: dict[str, float] = {}  # canonical question -> its row's p-value (absent: not in the table)
        self.holds: set[str] | None = None  # the questions Holm decides; None until `decide`
        self.adjusted: dict[str, float] = {}  # canonical question -> Holm's adjusted p-value
        self.stated: dict[str, object] = {}  # canonical question -> the recorded comparison's row pages quote
        self.rows: list = []  # every verdict, as verdicts.csv holds them (minibert.report.verdicts.Row)

    @property
    def frozen(self) -> bool:
        return self.holds is not None

    def declare(self, questions: Iterable[str], source: str) -> None:
        """Fix the family before any question is judged: `questions` as minibert.tables.questions writes them."""
        self.declared, self.source = frozenset(map(canonical, questions)), source
        self.p, self.holds, self.stated = {}, None, {}

    def decide(self, p: Mapping[str, float], alpha: float = 0.05) -> None:
        """Holm's step-down over every declared question at once, from each one's p-value read off the table
        (`p`; a question it lacks, one the table does not hold, counts at p = 1)."""
        names = sorted(self.declared or ())
        self.adjusted = dict(zip(names, adjusted([p.get(q, 1.0) for q in names])))
        self.p = {q: p[q] for q in names if q in p}
        self.holds = {q for q in names if self.adjusted[q] <= alpha}

    def sign(self, iv: Interval, question: str) -> int:
        """+1 / -1 when the interval's sign is decided (in a declared family: after Holm), else 0."""
        side = 1 if iv.lo > 0 else -1 if iv.hi < 0 else 0
        key = canonical(question)
        if not key:
            raise ValueError(f"{self.name or 'a table'}: a verdict held in a family names its question")
        if self.declared is None:
            return side
        if key not in self.declared:
            raise UndeclaredQuestion(f"{self.name or 'a table'}: {question!r} is not in the family declared in "
                                     f"{self.source}: a family is fixed before the runs, so a page may judge only "
                                     "what was declared (or declare it in its grid's family file, "
                                     "configs/families/<grid>.yaml, and run the grid again)")  # fmt: skip
        if self.holds is None:
            raise LateQuestion(f"{self.name or 'a table'}: {question!r} asked before its family was judged "
                               "(minibert.report.verdicts.decide)")  # fmt: skip
        p, row = p_value(iv), self.p.get(key, 1.0)
        if not math.isclose(row, p, rel_tol=1e-9, abs_tol=1e-12):
            raise NotItsRow(f"{self.name or 'a table'}: {question!r} asked with an interval (p = {p:.4g}) other than "
                            f"its row's in verdicts.csv (p = {row:.4g}): one question, one interval")  # fmt: skip
        return side if key in self.holds else 0

    @property
    def size(self) -> int:
        return len(self.declared) if self.declared is not None else 0

    def summary(self) -> str:
        """'3 of 54 decided (27 one by one; declared in ...)': what Holm decided, and what each interval alone
        would have; how many declared questions the table does not hold."""
        alone = sum(p < 0.05 for p in self.p.values())
        said = f"{len(self.holds or ())} of {self.size} decided ({alone} one by one"
        missing = self.size - len(self.p)
        return (
            said
            + (f"; {missing} not in the table, counted at p = 1" if missing else "")
            + f"; declared in {self.source})"
        )


def held_back(family: Family | None, question: str, alpha: float = ALPHA) -> str:
    """Why `question` is undecided in its family although its own 95% interval excludes zero, in the words its
    verdict carries beside that interval: the family's size, and the threshold Holm's step-down gives the
    question at its rank by p (alpha / (K - rank + 1)), against its own p. Where its p meets that threshold, the
    step-down stopped at a smaller p before reaching it, and the line names where. '' outside a judged family, and
    for a question its family decides (the interval alone says why it is undecided otherwise).

    >>> f = Family("g")
    >>> f.declare(["a vs b", "c vs d", "e vs f"], "here")
    >>> f.decide({"a vs b": 0.001, "c vs d": 0.03, "e vs f": 0.2})
    >>> held_back(f, "d vs c").split(": ", 1)[1], held_back(f, "a vs b")
    ('at rank 2 of 3 by p it needs p ≤ 0.05 / 2 = 0.025 (its p is 0.03)', '')
    """
    key = canonical(question)
    if family is None or not family.frozen or family.declared is None or key not in family.declared:
        return ""
    if key in family.holds:
        return ""
    names = sorted(family.declared)  # ranked as Family.decide ranks them: a question the table lacks at p = 1
    p = [family.p.get(q, 1.0) for q in names]
    order = sorted(range(len(names)), key=lambda j: p[j])  # stable, as minibert.stats.holm.adjusted
    size, rank, own = len(names), order.index(names.index(key)), p[names.index(key)]
    need = alpha / (size - rank)
    others = f"{size - 1} other question{'' if size == 2 else 's'}"
    said = (f"held with {others} at the family's {100 * (1 - alpha):g}% (Holm's step-down): at rank {rank + 1} of "
            f"{size} by p it needs p ≤ {_threshold(alpha, size - rank, own)}")  # fmt: skip
    if (size - rank) * own > alpha:
        return f"{said} (its p is {_apart(own, need)})"
    stop = next(i for i in range(rank) if (size - i) * p[order[i]] > alpha)  # the first rank Holm does not reject
    first = p[order[stop]]
    return (f"{said}, which its p ({_apart(own, need)}) meets, but the step-down stops before it, at rank {stop + 1} "
            f"(p {_apart(first, alpha / (size - stop))} > {_threshold(alpha, size - stop, first)})")  # fmt: skip


def _threshold(alpha: float, left: int, p: float) -> str:
    """Holm's threshold with `left` questions still in the step-down, as its rule and its figure: '0.05 / 4 =
    0.0125'; three significant digits at least, more where `p` would print the same."""
    return f"{alpha:g} / {left} = {_apart(alpha / left, p, 3)}"


def _apart(x: float, other: float, least: int = 2) -> str:
    """`x` to the fewest significant digits (`least` at least, six at most) that tell it from `other`, so that a
    threshold and the p it is read against never print as one figure: (0.0125, 0.0126) -> '0.0125'."""
    digits = next((d for d in range(least, 6) if f"{x:.{d}g}" != f"{other:.{d}g}"), 6)
    return f"{x:.{digits}g}"


def canonical(question: str) -> str:
    """A question as a family keys it: 'A vs B' and 'B vs A' ask the same (one p-value, either orientation)."""
    if " vs " not in question:
        return question.strip()
    a, b = (part.strip() for part in question.split(" vs ", 1))
    return " vs ".join(sorted((a, b)))


class LateQuestion(ValueError):
    """A verdict asked of a declared family before its questions were judged."""


class UndeclaredQuestion(ValueError):
    """A verdict asked of a declared family that does not hold its question."""


class NotItsRow(ValueError):
    """A question asked with an interval other than the one its row holds: which verdict it states is ambiguous."""


def family_note(families: list[Family]) -> str:
    """The line a page ends with: for each grid it quotes, the family its verdicts are held in."""
    each = "; ".join(f"{f.name}: {f.summary()}" for f in families)
    return (f"<sub>Verdicts hold together at 95% with every other verdict drawn from the same grid's table (Holm's "
            f"step-down over the family of questions each grid declared before its runs, on every page): {each}. "
            "Each interval is shown at 95% on its own (docs/statistics.md).</sub>")  # fmt: skip


def sign(iv: Interval, family: Family | None = None, question: str = "") -> int:
    """+1 when the interval of A - B (oriented so that > 0 favours A) decides for A, -1 for B, 0 undecided; in a
    grid's `family`, as its `question`, after Holm's adjustment over it."""
    if family is None or math.isnan(iv.mean):
        return 1 if iv.lo > 0 else -1 if iv.hi < 0 else 0
    return family.sign(iv, question)


def verdict(iv: Interval, margin: float | None = None, a: str = "A", b: str = "B", family: Family | None = None,
            question: str = "") -> str:  # fmt: skip
    """'A better' / 'B better' when the interval of A - B (oriented so that > 0 favours A) excludes zero (in a
    grid's `family`, as its `question`, after Holm's adjustment), 'equivalent within ±m' when it lies inside
    (-margin, margin), else 'undecided'."""
    if math.isnan(iv.mean):
        return "no data"
    side = sign(iv, family, question)
    if side > 0:
        return f"{a} better"
    if side < 0:
        return f"{b} better"
    if margin is not None and -margin < iv.lo and iv.hi < margin:
        return f"equivalent within ±{number(margin)}"
    return "undecided"


def number(x: float, scale: float = 100, digits: int = 1) -> str:
    """One figure: `x * scale` to `digits` decimals, thousands separated; 'n/a' for NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x * scale:,.{digits}f}"


def minutes(seconds: float, digits: int = 1) -> str:
    """A duration in seconds, in minutes to `digits` decimals: 1,758 -> '29.3'."""
    return number(seconds / 60, 1, digits)


def hours(seconds: float, digits: int = 1, workers: int = 1) -> str:
    """Seconds of runs as hours of wall clock, with `workers` running side by side: 7,200 s on 2 -> '1.0'."""
    return f"{seconds / workers / 3600:.{digits}f}"


def verb(stem: str, subjects: int) -> str:
    """A verb in the present agreeing with its subjects: ('predict', 1) -> 'predicts'; none reads as one ('no
    toy language predicts'), two or more as many."""
    return stem + "s" if subjects < 2 else stem


def multiple(x: float) -> str:
    """A budget as a multiple of the base (1x) one: 0.0625 -> '1/16x', 1 -> '1x', 2.5 -> '2.5x'."""
    return f"1/{1 / x:.3g}x" if x < 1 else f"{x:g}x"


def flops(x: float) -> str:
    """Counted FLOPs as pages show them: 365540000000.0 -> '3.66e11'."""
    return f"{x:.3g}".replace("e+", "e")


def percent(x: float) -> str:
    """A share as a percentage in its shortest form: 0.6 -> '60', 0.125 -> '12.5'."""
    return f"{x * 100:g}"


def span(seeds: Iterable[int]) -> str:
    """The lowest to the highest of some seeds: [3, 0, 4] -> '0-4'."""
    seeds = list(seeds)
    return f"{min(seeds)}-{max(seeds)}"


def rate(x: float) -> str:
    """A learning rate as configs are read aloud: 0.01 -> '1e-2', 0.003 -> '3e-3'."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def fmt(iv: Interval, scale: float = 100, digits: int = 1, signed: bool = False) -> str:
    """'22.1 (21.1 to 23.1)': mean and 95% interval; one seed: the mean alone; no seeds: 'n/a'."""
    if math.isnan(iv.mean):
        return "n/a"
    sign = "+" if signed and iv.mean > 0 else ""
    mean = f"{sign}{number(iv.mean, scale, digits)}"
    if iv.seeds < 2 and iv.lo == iv.hi:
        return mean
    return f"{mean} ({number(iv.lo, scale, digits)} to {number(iv.hi, scale, digits)})"
