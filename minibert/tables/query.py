"""What a page asks of a grid's table: one figure over seeds, a paired difference, a table of them.

`Data` wraps one grid's table (minibert.tables.table). Every selection names columns and values
(`d.stat("val/gap/acc", objective="SpanMaskedLM", stage="pretrain")`) and must pick exactly one experiment,
so a page never averages two arms by accident; `experiment=` picks one by name.

Example:
    >>> d = Data.load("results/dyck")
    >>> span = d.stat("val/gap/acc", experiment="dyck/pretrain/span")
    >>> span.seeds, span.proportion
    (30, True)
    >>> c = d.diff("val/gap/acc", {"experiment": "dyck/pretrain/mlm"}, {"experiment": "dyck/pretrain/span"})
    >>> c.say("MLM", "span masking")  # lower gap is better: MLM's gap is smaller
    'MLM better by 22.1 (21.2 to 23.0)'
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from minibert.stats import accuracies, bootstrap, scoreboard
from minibert.stats.sign import named
from minibert.tables import curves, provenance, questions, stats, table
from minibert.tables.stats import Interval

# an accuracy's figures per validation document (`val/by_document/<rest of its key>`, category `d<index>`), which
# real-text runs log: the parts an interval resamples documents from, never figures of their own
BY_DOCUMENT = table.BY_DOCUMENT


def by_document(metric: str) -> str | None:
    """The per-document rows' metric of an accuracy (`val/acc` -> `val/by_document/acc`); None for another."""
    if not metric.startswith("val/") or metric.startswith(BY_DOCUMENT) or accuracies.parse(metric) is None:
        return None
    return BY_DOCUMENT + metric[len("val/") :]


class QueryError(ValueError):
    """A page asks for something the table does not hold; the message names the page's selection."""


class _Interval:
    """What a figure reads of a Stat or a Diff (A - B, as measured): its mean and how many seeds are behind it."""

    interval: Interval

    @property
    def seeds(self) -> int:
        return self.interval.seeds

    @property
    def mean(self) -> float:
        return self.interval.mean


@dataclass(frozen=True)
class Stat(_Interval):
    """One figure of one experiment over its seeds."""

    experiment: str
    metric: str
    category: str
    values: dict[int, float]  # seed -> value
    n: float | None  # questions behind it (mean over seeds), for a proportion
    shared: bool  # every seed graded the same validation set
    interval: Interval

    @property
    def proportion(self) -> bool:
        """An accuracy-like figure (an accuracy, its ceiling, a reference or a gap between two): in points."""
        return self.n is not None or accuracies.parse(self.metric) is not None

    @property
    def sd(self) -> float:
        """The spread over seeds (`stats.sd`), in the figure's own units."""
        return stats.sd(self.values)

    def __str__(self) -> str:
        return stats.fmt(self.interval, scale=100 if self.proportion else 1)

    def shown_sd(self) -> str:
        """The SD over seeds as pages show it: 2 decimals, in points for a proportion."""
        return stats.number(self.sd, 100 if self.proportion else 1, 2)

    def each_seed(self) -> str:
        """'89.0 / 90.5 / 90.8': the figure on each seed, in seed order, in points."""
        return " / ".join(stats.number(v) for _, v in sorted(self.values.items()))

    def with_seeds(self) -> str:
        """'90.1 (88.2 to 92.0): 89.0 / 90.5 / 90.8': the figure, then each seed's in seed order."""
        return f"{self}: {self.each_seed()}"

    def lowest(self) -> str:
        """The lowest seed's figure, in points."""
        return stats.number(min(self.values.values()))

    def highest(self) -> str:
        """The highest seed's figure, in points."""
        return stats.number(max(self.values.values()))

    def against(self, published: float) -> Interval:
        """Our mean minus one published single run's figure (`stats.reference`), e.g. the write-up's."""
        return stats.reference(self.values, self.n if self.shared else None, published)


@dataclass(frozen=True)
class Diff(_Interval):
    """A - B paired by seed; `lower_is_better` orients the verdict (a gap or a loss)."""

    a: Stat
    b: Stat
    interval: Interval  # A - B, as measured
    lower_is_better: bool
    family: stats.Family | None = None  # its grid's verdicts, held together (stats.Family)
    question: str = ""  # as its family keys it (minibert.tables.questions)
    rule: str = ""  # a recorded comparison's verdict ("A better", "alike", ...): the interval does not change it
    record: str = ""  # that comparison ("comparisons/<name>"), whose row in verdicts.csv states the question
    decided_on: int = 0  # the seeds its verdict was reached on (the look it stopped at), where `record` is set

    @property
    def favour(self) -> Interval:
        """The interval oriented so that > 0 favours A."""
        iv = self.interval
        return -iv if self.lower_is_better else iv

    def verdict(self, a: str = "A", b: str = "B", margin: float | None = None) -> str:
        if self.rule:
            return named(self.rule, a, b)
        return stats.verdict(self.favour, margin, a, b, self.family, self.question)

    def sign(self) -> int:
        """+1 when the verdict favours A, -1 B, 0 undecided (after the family's adjustment)."""
        if self.rule:
            return {"A better": 1, "B better": -1}.get(self.rule, 0)
        return stats.sign(self.favour, self.family, self.question)

    def swapped(self) -> Diff:
        """B - A: the same comparison the other way round."""
        rule = {"A better": "B better", "B better": "A better"}.get(self.rule, self.rule)
        return dataclasses.replace(self, a=self.b, b=self.a, interval=-self.interval, rule=rule)

    def say(self, a: str = "A", b: str = "B") -> str:
        """'A better by 22.1 (21.1 to 23.1)' in points: the winner named by the interval's sign, or
        'undecided: A − B = +0.4 (−1.2 to 2.0)', with what holds it back where its interval alone is clear of zero
        (`stats.held_back`: its family's size and the p it needs). A recorded comparison's verdict is the sign
        rule's (A wins on most seeds), which the mean's interval does not decide: 'A better: A − B = +4.7 (−22.9 to
        29.8)'."""
        scale = 100 if self.a.proportion else 1
        iv = self.favour
        if self.rule:
            return f"{self.verdict(a, b)}: {a} − {b} = {stats.fmt(self.interval, scale, signed=True)}"
        if side := self.sign():
            better = iv if side > 0 else -iv
            return f"{a if side > 0 else b} better by {stats.fmt(better, scale)}"
        why = stats.held_back(self.family, self.question) if iv.lo > 0 or iv.hi < 0 else ""
        return f"undecided: {a} − {b} = {stats.fmt(self.interval, scale, signed=True)}" + (f"; {why}" if why else "")

    def __str__(self) -> str:
        return stats.fmt(self.interval, scale=100 if self.a.proportion else 1, signed=True)

    @property
    def proportion(self) -> bool:
        return self.a.proportion


class Data:
    """One grid's table, with how it was made (`<out>/run.json`: command, date, machine, wall time)."""

    def __init__(self, frame: pd.DataFrame, made: dict | None = None, out: str = "", family=None,
                 invocation: dict | None = None):  # fmt: skip
        self.frame, self.made, self.out = frame, made or {}, out
        self.invocation = invocation or {}  # run.json's typed figures (wall_time_s, runs_trained, ...), not listed
        self.family = family or stats.Family(Path(out).as_posix() if out else "")  # every Diff drawn from it

    @classmethod
    def load(cls, out: str | Path) -> Data:
        out = Path(out)
        made = table.read_json(out / "run.json") if (out / "run.json").is_file() else {}
        invocation = made.pop("figures", {})
        return cls(table.read(out), made, str(out), invocation=invocation if isinstance(invocation, dict) else {})

    @property
    def how_made(self) -> dict[str, str]:
        """run.json's fields as a page lists them: the command in backticks, the others as recorded."""
        return {k: f"`{v}`" if k == "command" else str(v) for k, v in self.made.items()}

    @property
    def wall_time_s(self) -> float:
        """The wall time of the invocation that wrote the table, as its run.json records it."""
        if not isinstance(self.invocation.get("wall_time_s"), int | float):
            raise QueryError(f"{self.out}/run.json records no figures.wall_time_s: rebuild it with scripts/ablate.py")
        return float(self.invocation["wall_time_s"])

    @property
    def invoked_runs(self) -> int:
        """The runs of the invocation that wrote the table (trained or reused), as its run.json records them."""
        counts = [self.invocation.get(k) for k in ("runs_trained", "runs_reused")]
        if not all(isinstance(c, int) for c in counts):
            raise QueryError(f"{self.out}/run.json records no figures.runs_trained: rebuild it with scripts/ablate.py")
        return sum(counts)

    @property
    def invoked_seeds(self) -> list[int]:
        """The seeds the invocation that wrote the table ran, as its run.json records them."""
        seeds = self.invocation.get("seeds")
        if not isinstance(seeds, list) or not all(isinstance(s, int) for s in seeds):
            raise QueryError(f"{self.out}/run.json records no figures.seeds: rebuild it with scripts/ablate.py")
        return seeds

    @functools.cached_property
    def curves(self) -> pd.DataFrame | None:
        """The runs' learning curves beside the table (minibert.tables.curves), None where they left none."""
        return curves.read(self.out)

    @functools.cached_property
    def provenance(self) -> provenance.Provenance:
        """Which code made the table's runs, against this checkout's (minibert.tables.provenance)."""
        return provenance.of(self.frame, self.out)

    @functools.cached_property
    def _by_metric(self) -> dict[tuple[str, str], pd.DataFrame]:
        return {key: rows for key, rows in self.frame.groupby(["metric", "category"], sort=False)}

    def rows(self, **where: Any) -> pd.DataFrame:
        """Rows whose columns equal the given values (a list: any of them); unknown columns are an error."""
        frame = self.frame
        if isinstance(where.get("metric"), str) and isinstance(where.get("category"), str):  # the common question
            frame = self._by_metric.get((where.pop("metric"), where.pop("category")), frame.iloc[:0])
        for column, value in where.items():
            if column not in frame.columns:
                raise QueryError(f"{self.out}: no column {column!r}; columns: {', '.join(frame.columns)}")
            frame = frame[frame[column].isin(value if isinstance(value, (list, tuple)) else [value])]
        return frame

    def experiments(self, **where: Any) -> list[str]:
        return list(dict.fromkeys(self.rows(**where)["experiment"]))

    @functools.cached_property
    def _cells(self) -> dict[tuple[str, str, str], tuple[dict[int, float], list[float], set]]:
        """(experiment, metric, category) -> ({seed: value}, its question counts, its validation seeds): one
        pass over the table, so a page's thousands of questions cost a dictionary lookup each."""
        cells: dict = {}
        f = self.frame
        for e, m, c, seed, v, n, vs in zip(f["experiment"], f["metric"], f["category"], f["seed"], f["value"],
                                           f["n"], f["val_seed"]):  # fmt: skip
            values, counts, val_seeds = cells.setdefault((e, m, c), ({}, [], set()))
            values[int(seed)] = float(v)
            if n == n:  # not NaN
                counts.append(float(n))
            val_seeds.add(None if vs != vs else vs)
        return cells

    @functools.cached_property
    def _keys_of(self) -> dict[str, list[tuple[str, str]]]:
        """experiment -> its (metric, category) pairs, in the table's order."""
        keys: dict[str, list[tuple[str, str]]] = {}
        for e, m, c in self._cells:
            keys.setdefault(e, []).append((m, c))
        return keys

    def figures(self, experiment: str) -> list[tuple[str, str]]:
        """Every (metric, category) the table holds for `experiment`, in its order (not the per-document parts
        of its accuracies)."""
        return [k for k in self._keys_of.get(experiment, []) if not k[0].startswith(BY_DOCUMENT)]

    @functools.cached_property
    def _documents(self) -> dict[tuple[str, str], dict[int, dict[str, list[float]]]]:
        """(experiment, per-document metric) -> {seed: {document: [value, questions]}}; a reference's questions
        are its accuracy's (it graded the same ones)."""
        out: dict = {}
        f = self.frame[self.frame["metric"].str.startswith(BY_DOCUMENT)]
        for e, m, c, seed, v, n in zip(f["experiment"], f["metric"], f["category"], f["seed"], f["value"], f["n"]):
            out.setdefault((e, m), {}).setdefault(int(seed), {})[c] = [float(v), float(n)]
        for (e, m), per_seed in out.items():
            if "reference/" in m:
                head = out.get((e, m.split("reference/")[0] + "acc"), {})
                for seed, docs in per_seed.items():
                    for c, vn in docs.items():
                        if vn[1] != vn[1]:  # NaN: logged without its count
                            vn[1] = head.get(seed, {}).get(c, [0.0, 0.0])[1]
        return out

    def clustered(self, a: tuple[str, str], b: tuple[str, str] | None = None,
                  seeds: set[int] | None = None) -> bootstrap.SharedInterval | None:  # fmt: skip
        """The interval of (metric, experiment) `a`, or of `a` - `b` paired by seed, that resamples the validation
        documents with the seeds (`minibert.stats.bootstrap.clustered`), over `seeds` (default: those both
        have); None where either lacks per-document figures, or they share fewer than 2 seeds or documents."""
        sides = []
        for metric, experiment in [a] + ([b] if b is not None else []):
            key = by_document(metric)
            found = self._documents.get((experiment, key)) if key else None
            if not found:
                return None
            sides.append(found)
        common = set.intersection(*(set(x) for x in sides)) & (seeds if seeds is not None else set(sides[0]))
        docs = sorted(set().union(*(x[s] for x in sides for s in common)), key=lambda d: (len(d), d))  # d2 < d10
        if len(common) < 2 or len(docs) < 2:
            return None
        order = sorted(common)
        arrays = []
        for (metric, experiment), side in zip([a] + ([b] if b is not None else []), sides):
            vn = np.array([[side[s].get(d, [0.0, 0.0]) for d in docs] for s in order])  # (S, C, 2)
            totals, counts = vn[..., 0] * vn[..., 1], vn[..., 1]
            if counts.sum() <= 0:  # a reference whose accuracy's parts are gone: no counts to weigh it by
                return None
            whole = self._cells.get((experiment, metric, ""), ({},))[0]
            for s, t, n in zip(order, totals.sum(1), counts.sum(1)):
                if s in whole and n > 0 and abs(t / n - whole[s]) > 1e-4:  # float32 figures: 1e-4 is far above
                    raise QueryError(f"{self.out}: {experiment} seed {s}: its {metric} per validation document "
                                     f"averages {t / n:.6f}, not the {whole[s]:.6f} it logged; the table is "
                                     "inconsistent")  # fmt: skip
            arrays += [totals, counts]
        return bootstrap.clustered(*arrays)

    @functools.cached_property
    def _columns_of(self) -> dict[str, dict[str, Any]]:
        """experiment -> the columns that are one value per experiment (grid, stage, axes)."""
        per = [c for c in self.frame.columns if c not in ("seed", "val_seed", "metric", "category", "value", "n",
                                                          "run", "code")]  # fmt: skip
        first = self.frame.drop_duplicates("experiment")[per]
        return {row["experiment"]: {k: None if v != v else v for k, v in row.items()}  # NaN: the axis does not apply
                for row in first.to_dict("records")}  # fmt: skip

    def objective(self, experiment: str) -> str | None:
        """The objective class `experiment`'s configs build (its `objective` column), None where the table has none."""
        found = self._columns_of.get(experiment, {}).get("objective")
        return str(found) if found is not None else None

    def _match(self, metric: str, category: str, where: dict) -> list[str]:
        if len(where) == 1 and isinstance(e := where.get("experiment"), str):  # the common question, answered directly
            return [e] if (e, metric, category) in self._cells else []
        if unknown := [k for k in where if k not in self.frame.columns]:
            raise QueryError(f"{self.out}: no column {unknown[0]!r}; columns: {', '.join(self.frame.columns)}")
        if any(k not in next(iter(self._columns_of.values()), {}) for k in where):  # e.g. seed: the rows decide
            return list(dict.fromkeys(self.rows(metric=metric, category=category, **where)["experiment"]))
        wanted = {k: [None if x != x else x for x in (v if isinstance(v, (list, tuple)) else [v])]
                  for k, v in where.items()}  # fmt: skip
        return [e for e, cols in self._columns_of.items() if (e, metric, category) in self._cells
                and all(cols[k] in values for k, values in wanted.items())]  # fmt: skip

    def find(self, metric: str, category: str = "", **where: Any) -> Stat | None:
        """`stat`, or None where no experiment logs `metric` (a figure a report shows only where it exists)."""
        return self.stat(metric, category, **where) if self._match(metric, category, where) else None

    def stat(self, metric: str, category: str = "", **where: Any) -> Stat:
        found = self._match(metric, category, where)
        if len(found) != 1:
            what = ", ".join(f"{k}={v!r}" for k, v in where.items())
            raise QueryError(f"{self.out}: {metric} {category!r} where {what} matches {len(found)} experiments "
                             f"({', '.join(found) or 'none'}); a figure is one experiment's")  # fmt: skip
        values, counts, val_seeds = self._cells[(found[0], metric, category)]
        if "seed" in where:
            seeds = set(where["seed"] if isinstance(where["seed"], (list, tuple)) else [where["seed"]])
            values = {s: v for s, v in values.items() if s in seeds}
        n = sum(counts) / len(counts) if counts else None
        shared = len(val_seeds) == 1
        key = accuracies.parse(metric)
        if key is not None and key.role == "gap" and (found[0], key.key("ceiling"), category) in self._cells:
            # a gap is ceiling minus accuracy on the same questions: paired, with both sampling terms
            ceiling = self.stat(key.key("ceiling"), category, experiment=found[0])
            acc = self.stat(key.key("acc"), category, experiment=found[0])
            iv = stats.gap(values, ceiling.mean, acc.mean, ceiling.n if shared else None)
        elif category == "" and (docs := self.clustered((metric, found[0]), seeds=set(values))) is not None:
            iv = docs  # seeds and validation documents resampled together
        else:
            iv = stats.summary(values, n if shared else None, key is not None and key.role != "gap")
        return Stat(found[0], metric, category, values, n, shared, iv)

    def diff(self, metric: str, a: dict, b: dict, category: str = "", lower_is_better: bool | None = None) -> Diff:
        """A - B on `metric`, paired by seed; `a`, `b`: selections as for `stat`."""
        sa, sb = self.stat(metric, category, **a), self.stat(metric, category, **b)
        na = sa.n if sa.shared and sb.shared else None
        nb = sb.n if sa.shared and sb.shared else None
        both = set(sa.values) & set(sb.values)
        docs = self.clustered((metric, sa.experiment), (metric, sb.experiment), both) if category == "" else None
        iv = docs if docs is not None else stats.paired(sa.values, sb.values, na, nb)
        lower = scoreboard.lower_is_better(metric) if lower_is_better is None else lower_is_better
        question = _question(sa, sb, a, b)
        if (row := self.family.stated.get(stats.canonical(question))) is not None:
            return _stated(row, sa, sb, lower, self.family, question)
        return Diff(sa, sb, iv, lower, self.family, question)

    def between(self, a: str, b: str, category: str = "", **where: Any) -> Diff:
        """Metric `a` - metric `b` of one experiment, paired by seed: e.g. the Bayes predictor's accuracy minus
        the run's on a category that has no bound (a reference gap, which a model may beat)."""
        sa, sb = self.stat(a, category, **where), self.stat(b, category, **where)
        shared = sa.shared and sb.shared
        # both figures grade the same questions: a reference logged without its count has the run's
        n_b = (sb.n or (sa.n if sb.proportion else None)) if shared else None
        both = set(sa.values) & set(sb.values)
        docs = self.clustered((a, sa.experiment), (b, sb.experiment), both) if category == "" else None
        iv = docs if docs is not None else stats.paired(sa.values, sb.values, sa.n if shared else None, n_b)
        return Diff(sa, sb, iv, False, self.family, _question(sa, sb, where, where))

    def cheapest(self, metric: str, reference: str, cost: str = "flops", limits: dict[str, float] | None = None,
                 seeds: int = 3) -> str | None:  # fmt: skip
        """The experiment of least mean `cost` whose `metric` beats its own `reference` figure (`between`, the
        page's verdict) on at least `seeds` seeds, among those whose mean of each `limits` metric is within its
        bound (e.g. {"wall_time_s": 600}); None when none does."""
        ranked = sorted((self.stat(cost, experiment=e).mean, e) for e in self.experiments()
                        if self.find(metric, experiment=e) and self.find(reference, experiment=e))  # fmt: skip
        within = [e for _, e in ranked if all(self.stat(k, experiment=e).mean <= v for k, v in (limits or {}).items())]
        # every candidate's question is asked, whatever the answers; one on fewer than `seeds` seeds is not asked,
        # and counts at p = 1 in its declared family (minibert.tables.questions)
        judged = {e: c for e in within if (c := self.between(metric, reference, experiment=e)).seeds >= seeds}
        verdicts = {e: c.verdict() for e, c in judged.items()}
        return next((e for e in judged if verdicts[e] == "A better"), None)

    def total(self, metric: str = "wall_time_s", **where: Any) -> float:
        """The sum of `metric` over the selected runs (e.g. their own wall time)."""
        return float(self.rows(metric=metric, category="", **where)["value"].sum())

    def seeds(self, **where: Any) -> list[int]:
        return sorted({int(s) for s in self.rows(**where)["seed"]})

    def runs(self, **where: Any) -> int:
        return len(self.rows(**where)[["experiment", "seed"]].drop_duplicates())


def _stated(row, a: Stat, b: Stat, lower_is_better: bool, family: stats.Family, question: str) -> Diff:
    """A - B as the recorded comparison that judged it states it (a row of minibert.report.verdicts): the mean's
    sequence at its last look, the seeds it stopped at, its sign rule's verdict."""
    first = row.first == questions.side(a.experiment, a.metric, a.category)
    rule = {"first better": "A better" if first else "B better", "second better": "B better" if first else "A better"}
    iv = row.interval if first else -row.interval
    return Diff(
        a, b, iv, lower_is_better, family, question, rule.get(row.verdict, row.verdict), row.record, row.decided_on
    )


def _question(a: Stat, b: Stat, where_a: dict, where_b: dict) -> str:
    """A paired difference's question (minibert.tables.questions), naming the seeds a side selects, as asked
    (not as found: a missing seed does not change the question)."""
    seeds = [_asked(w.get("seed")) for w in (where_a, where_b)]
    return questions.pair(*(questions.side(s.experiment, s.metric, s.category, k) for s, k in zip((a, b), seeds)))


def _asked(seed: Any) -> list[int] | None:
    return None if seed is None else [int(s) for s in (seed if isinstance(seed, list | tuple) else [seed])]


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; each cell is str()'d (a Stat or Diff prints its figure), an empty one left blank.

    >>> print(markdown_table(["", "a"], [["x", ""]]))
    | | a |
    |---|---|
    | x | |
    """

    def line(cells: list[Any]) -> str:
        return "|" + "|".join(f" {c} " if str(c) else " " for c in cells) + "|"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)])
