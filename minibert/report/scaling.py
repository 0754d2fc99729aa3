"""The compute-matched scaling page's figures (results/scaling.md), read from the scaling grid's table.

The grid (configs/ablations/scaling.yaml) pre-trains every arm at each FLOP budget, experiment
`scaling/pretrain/<arm>/<budget>` (a two-stage arm's rows carry its first stage's axes, so a pre-training cell is
picked by its name), and fully fine-tunes some arms at each budget (a fine-tuning cell is picked by its axes:
stage, arm, budget). `Scaling` says which arms and budgets the table holds, the compute behind each encoder as
its runs recorded it, the published claims judged on fine-tuning accuracy, the leader at each budget, where two
arms' order crosses between budgets, and what the next-token half of the two-stage arm buys; the page lays them
out.

Example:
    >>> s = Scaling(Data.load("results/scaling"))  # doctest: +SKIP
    >>> s.budgets[-1], [c.verdict for c in s.claims][:1]  # doctest: +SKIP
    ('x1', ['undecided'])
"""

from __future__ import annotations

from dataclasses import dataclass

from minibert.report.asked import asked
from minibert.stats import scoreboard
from minibert.tables import arms, stats
from minibert.tables.query import Data, Diff, Stat

MEASURES = [("full fine-tuning accuracy", "val/acc", "finetune"),
            ("cloze gap to the ceiling (lower is better)", "val/gap/acc", "pretrain")]  # fmt: skip


@dataclass(frozen=True)
class Claim:
    """One published claim at one budget: A - B on fine-tuning accuracy and what it says of the claim."""

    text: str
    budget: str
    diff: Diff
    verdict: str
    holds: str  # "holds", "does not hold", "undecided" or "no data"
    behind: str  # the pre-training compute behind A and B, as a share of the budget
    named: str  # "A vs B", by the arms' labels


@dataclass(frozen=True)
class Lead:
    """The arm with the best mean at one budget on one measure, against every other arm."""

    measure: str
    budget: str
    top: str  # the arm's name
    figure: Stat | Diff
    against: list[tuple[str, Diff]]

    @property
    def line(self) -> str:
        lost = [b for b, c in self.against if c.verdict(self.top, b) != f"{self.top} better"]
        standing = "best beyond noise" if not lost else "first by mean, not beyond noise against " + ", ".join(lost)
        each = "; ".join(f"{'Against' if i == 0 else 'against'} {b}: {c.say(self.top, b)}"
                         for i, (b, c) in enumerate(self.against))  # fmt: skip
        return f"{self.budget}: **{self.top}** ({stats.fmt(self.figure.interval)}) is {standing}. {each}."


@dataclass(frozen=True)
class Crossing:
    """Two arms whose order by mean changes between neighbouring budgets, A - B at each."""

    measure: str
    a: str
    b: str
    before: str
    was: Diff
    after: str
    now: Diff

    @property
    def line(self) -> str:
        beyond = all(c.verdict(self.a, self.b) not in ("undecided", "no data") for c in (self.was, self.now))
        return (f"{self.measure}: {self.a} − {self.b}: {self.was} at {self.before}, {self.now} at {self.after}: "
                f"{'beyond noise' if beyond else 'not beyond noise'}.")  # fmt: skip


class Scaling:
    """The scaling grid's table, read as the page reads it."""

    def __init__(self, data: Data):
        self.data = d = data
        self.control = arms.control()
        ref = d.rows(stage="pretrain", arm=self.control, metric="step").sort_values("flops")
        self.budgets: list[str] = list(dict.fromkeys(ref["budget"]))
        self.budget_flops = dict(zip(ref["budget"], ref["flops"]))
        self.today = self.budget_flops[self.budgets[-1]]  # today's run of the control
        self.tuned = arms.listed(d.rows(stage="finetune")["arm"].dropna())
        found = (arms.name_of(e) for e in d.experiments(stage="pretrain"))  # two-stage arms: by name, not axes
        last = self.budgets[-1]
        self.pretrained = [a for a in arms.listed(found) if d.experiments(experiment=self.experiment(a, last))]
        # graded on the same 15% cloze questions: neither left-to-right (its own ceiling) nor read on a generator
        self.cloze = [a for a in self.pretrained if not arms.arm(a).causal and not arms.arm(a).generator]
        self.no_pretrain = d.stat("val/acc", regime=arms.SCRATCH)
        # the pre-training compute behind each encoder, as its runs recorded it (a fine-tuning run: that of the
        # checkpoint it loaded); short: more than one of its pre-training steps below the budget
        self.spent: dict[tuple[str, str, str], float] = {}
        self.short: list[tuple[str, str, str, float, float]] = []  # (done, arm, budget, spent, its share of it)
        for stage, among in (("pretrain", self.pretrained), ("finetune", self.tuned)):
            for a in among:
                for x in self.budgets:
                    f = d.stat("pretrain_flops", **self.where(stage, a, x)).mean
                    self.spent[(stage, a, x)] = f
                    if f < self.budget_flops[x] - d.stat("flops_per_step", **self.where("pretrain", a, x)).mean:
                        done = "fine-tuned" if stage == "finetune" else "pre-trained"
                        self.short.append((done, arms.label(a), x, f, f / self.budget_flops[x]))
        self.published = asked().claims  # the published claims: each "A beats B" on full fine-tuning accuracy
        self.claims = [self._claim(p.claim, p.a, p.b, x) for p in self.published for x in self.budgets[p.budgets]]
        self.leads, self.crossings = self._leads_and_crossings()
        self.halves = [(x0, x, d.diff("val/gap/acc", self.where("pretrain", asked().two_stage, x),
                                      self.where("pretrain", self.control, x0)))
                       for x0, x in zip(self.budgets, self.budgets[1:])]  # fmt: skip

    @property
    def header(self) -> list[str]:
        """A table over the budgets: the arm, then one column a budget."""
        return ["arm", *map(str, self.budgets)]

    @property
    def leads_by_measure(self) -> dict[str, list]:
        """The leaders at each budget, grouped by the measure they lead on, in order."""
        out: dict[str, list] = {}
        for lead in self.leads:
            out.setdefault(lead.measure, []).append(lead)
        return out

    @staticmethod
    def experiment(arm: str, budget: str) -> str:
        return f"scaling/pretrain/{arm}/{budget}"

    def where(self, stage: str, arm: str, budget: str) -> dict:
        """The selection of one cell: a pre-training cell by its name, a fine-tuning cell by its axes."""
        if stage == "pretrain":
            return {"experiment": self.experiment(arm, budget)}
        return {"stage": "finetune", "arm": arm, "budget": budget}

    def share(self, arm: str, budget: str) -> str:
        """The pre-training compute behind a fine-tuned encoder, as a share of its budget."""
        return f"{stats.number(self.spent[('finetune', arm, budget)] / self.budget_flops[budget], 100, 0)}%"

    def _claim(self, text: str, a: str, b: str, x: str) -> Claim:
        c = self.data.diff("val/acc", self.where("finetune", a, x), self.where("finetune", b, x))
        la, lb = arms.label(a), arms.label(b)
        v = c.verdict(la, lb)
        holds = "holds" if v == f"{la} better" else v if v in ("undecided", "no data") else "does not hold"
        return Claim(text, x, c, v, holds, f"{self.share(a, x)}, {self.share(b, x)}", f"{la} vs {lb}")

    def claim_rows(self) -> list[list]:
        return [[c.text, c.budget, c.diff, c.verdict, c.holds, c.behind] for c in self.claims]

    def claim_outcomes(self) -> list[tuple[str, str]]:
        """(claim, where it holds, fails and is undecided) for each published claim."""
        out = []
        for text in (p.claim for p in self.published):
            mine = [c for c in self.claims if c.text == text]
            words = [w for w in ("holds", "does not hold", "undecided") if any(c.holds == w for c in mine)]
            said = [f"{w} at {', '.join(c.budget for c in mine if c.holds == w)}" for w in words]
            out.append((text, "; ".join(said)))
        return out

    def drawn(self) -> list[tuple[str, Diff]]:
        """The claims as the forest figure draws them."""
        return [(f"{c.named}, {c.budget}", c.diff) for c in self.claims]

    def _leads_and_crossings(self) -> tuple[list[Lead], list[Crossing]]:
        d, leads, crossings = self.data, [], []
        for what, metric, stage in MEASURES:
            among = self.tuned if stage == "finetune" else self.cloze
            lower = scoreboard.lower_is_better(metric)
            for x in self.budgets:
                means = [(d.stat(metric, **self.where(stage, a, x)).mean, a) for a in among]
                top = sorted((m if lower else -m, a) for m, a in means)[0][1]
                against = [(arms.label(a), d.diff(metric, self.where(stage, top, x), self.where(stage, a, x)))
                           for a in among if a != top]  # fmt: skip
                w = self.where(stage, top, x)
                figure = d.between("val/ceiling/acc", "val/acc", **w) if lower else d.stat(metric, **w)
                leads.append(Lead(what, x, arms.label(top), figure, against))
            for i, a in enumerate(among):
                for b in among[i + 1 :]:
                    for x0, x in zip(self.budgets, self.budgets[1:]):
                        c0 = d.diff(metric, self.where(stage, a, x0), self.where(stage, b, x0))
                        c1 = d.diff(metric, self.where(stage, a, x), self.where(stage, b, x))
                        if (c0.mean > 0) != (c1.mean > 0):
                            crossings.append(Crossing(what, arms.label(a), arms.label(b), x0, c0, x, c1))
        return leads, crossings

    def further(self) -> int:
        """The paired comparisons the page shows besides the claims."""
        return sum(len(lead.against) for lead in self.leads) + 2 * len(self.crossings) + len(self.halves)

    def label(self, arm: str, within: str = " ({})") -> str:
        causal = arms.arm(arm).causal
        return arms.label(arm) + (within.format(causal) if causal else "")

    def gap_series(self) -> dict[str, list]:
        """Each cloze arm's gap to the ceiling against the pre-training FLOPs it spent (1 = today's MLM run)."""

        def point(a: str, x: str) -> tuple[float, Diff]:
            gap = self.data.between("val/ceiling/acc", "val/acc", **self.where("pretrain", a, x))
            return self.spent[("pretrain", a, x)] / self.today, gap

        return {self.label(a, " (its {})"): [point(a, x) for x in self.budgets]
                for a in self.pretrained if not arms.arm(a).generator}  # fmt: skip

    def gap_rows(self) -> list[list[str]]:
        """Per pre-trained arm and budget: the steps its budget bought, then its gap (ELECTRA: its detection
        accuracy beside calling every token original)."""
        rows = []
        for a in self.pretrained:
            cells = [self.label(a)]
            for x in self.budgets:
                w = self.where("pretrain", a, x)
                steps = f"{stats.number(self.data.stat('step', **w).mean, 1, 0)} steps: "
                if arms.arm(a).generator:  # a detector: its own accuracy, against calling every token original
                    every = self.data.stat("val/acc", **w)
                    original = stats.number(self.data.stat("val/acc", "original", **w).n / every.n)
                    cells.append(f"{steps}detection {every}; all-original {original}")
                else:
                    cells.append(steps + stats.fmt(self.data.between("val/ceiling/acc", "val/acc", **w).interval))
            rows.append(cells)
        return rows

    def finetune_series(self) -> dict[str, list]:
        """Each fine-tuned arm's accuracy against the pre-training FLOPs behind it, and no pre-training across."""
        series = {arms.label(a): [(self.spent[("finetune", a, x)] / self.today,
                              self.data.stat("val/acc", **self.where("finetune", a, x))) for x in self.budgets]
                  for a in self.tuned}  # fmt: skip
        xs = [x for points in series.values() for x, _ in points]
        across = [(min(xs), self.no_pretrain), (max(xs), self.no_pretrain)]
        series[f"{arms.label(arms.SCRATCH)} (0 FLOPs, drawn across)"] = across
        return series

    def finetune_rows(self) -> tuple[list[list], list[list[str]]]:
        """(accuracy, SD over seeds) per fine-tuned arm and budget."""
        rows, sds = [], []
        for a in self.tuned:
            found = [self.data.stat("val/acc", **self.where("finetune", a, x)) for x in self.budgets]
            rows.append([arms.label(a), *found])
            sds.append([arms.label(a), *(stats.number(s.sd, 100, 2) for s in found)])
        return rows, sds
