"""Every grid's own report, `<out>/ablation.md` and `<out>/dashboard.html`, from its table alone.

The first screen answers the grid's question: its claims and the comparisons `scripts/compare.py` recorded in
`<out>/comparisons/`, each a paired difference with its 95% interval, the seeds behind it and a verdict, and
the same as one figure (`claims.png`). How the grid was run follows (`run.json`), then one narrow overview row
per experiment, then each experiment's categories behind a toggle (in Markdown: under its own heading).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import jinja2

from minibert.ablation.grid import Claim, Grid
from minibert.atomic_writes import write_atomic
from minibert.checkout import CHECKOUT, without_absolute_paths
from minibert.compare import comparison
from minibert.pairs import keys
from minibert.report import figures, verdicts
from minibert.stats import accuracies
from minibert.tables import curves, questions, stats, table
from minibert.tables.arms import objective as registered
from minibert.tables.query import Data, Diff

TEMPLATES = jinja2.Environment(loader=jinja2.PackageLoader("minibert.report", "templates"), trim_blocks=True,
                               lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                               autoescape=jinja2.select_autoescape(["html"]))  # fmt: skip


@dataclass
class Section:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""
    folded: bool = False  # behind a toggle on the dashboard
    first_folded: bool = False  # the first folded section after an open one: "Per experiment" heads it


@dataclass
class Answer:
    """One row of the first screen: a claim or a recorded comparison."""

    text: str
    figure: str  # the difference or value, with its interval
    seeds: str
    verdict: str
    diff: Diff | None = None  # for the figure
    decided: bool | None = None  # for the figure, where the verdict is not the page's (a sequential comparison)

    @property
    def tone(self) -> str:
        """The dashboard's colour class of the verdict: the claimed side or a named arm, the other side, neither."""
        if self.verdict == "holds" or self.verdict.endswith(" better"):
            return "holds"
        return "fails" if self.verdict == "fails" else "undecided"

    @property
    def html(self) -> str:
        """The text as the dashboard shows it: each `code` span (Markdown's backticks) in <code>."""
        return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(self.text.split("`")))


def claim_answer(claim: Claim, data: Data, out: Path | None = None) -> Answer:
    """A pair claim ('lower' below 'higher') as the paired difference higher − lower; a threshold claim as the
    value's interval against its bounds, each bound a test of value - bound (or bound - value) in the table's
    family. Holds when the whole interval is on the claimed side, after the family's adjustment (stats.Family);
    a claim left undecided although its interval alone is clear of zero says why on its line (`undecided`).
    A pair claim whose two experiments a comparison recorded in `out/comparisons/` holds (`recorded_claim`) is
    judged by that record's sequence instead, over the seeds it ran: never a second, fixed-sample verdict on
    the same seeds."""
    if claim.value is None and out is not None and (found := recorded_claim(claim, data, out)):
        return found
    if claim.value is not None:
        metric, category = table.split(claim.value.metric)
        s = data.stat(metric, category, experiment=claim.value.experiment)
        scale = 100 if s.proportion else 1
        iv, figure = s.interval, questions.side(claim.value.experiment, metric, category)
        checks = []  # (the interval oriented so that > 0 is the claimed side, its question)
        if (b := claim.at_least) is not None:
            checks.append((iv.minus(b), questions.bound(figure, at_least=b)))
        if (b := claim.at_most) is not None:
            checks.append((-iv.minus(b), questions.bound(figure, at_most=b)))
        if iv.lo == iv.hi == iv.mean:  # every seed the same figure, with no sampling error: met or not, exactly
            met = all(d.mean >= 0 for d, _ in checks)
            sides = [1 if met else -1]
        else:
            sides = [stats.sign(d, data.family, q) for d, q in checks]
        holds, fails = all(x > 0 for x in sides), any(x < 0 for x in sides)
        bound = " and ".join(f"{w} {stats.number(b, scale)}" for w, b in (("≥", claim.at_least), ("≤", claim.at_most))
                             if b is not None)  # fmt: skip
        verdict = "holds" if holds else "fails" if fails else "undecided"
        if verdict == "undecided":
            verdict = undecided([q for (d, q), x in zip(checks, sides) if x == 0 and (d.lo > 0 or d.hi < 0)], data)
        return Answer(claim.text, f"{stats.fmt(s.interval, scale)} (claimed {bound})", str(s.seeds), verdict)
    d = pair_claim(claim, data)
    verdict = {"A better": "holds", "B better": "fails"}.get(d.verdict(), "undecided")
    decided = verdict != "undecided"
    if not decided and not d.rule and (d.favour.lo > 0 or d.favour.hi < 0):  # Holm's, not a record's sign rule
        verdict = undecided([d.question], data)
    return Answer(claim.text, f"{d} (claimed > 0)", str(d.interval.seeds), verdict, d, decided)


def undecided(held: list[str], data: Data) -> str:
    """'undecided', and for each question in `held` (its own interval excludes zero, its family's verdict does
    not) why, on the same line: the interval beside it reads decided on its own, so the verdict says what holds it
    back (`stats.held_back`: the family's size, and the p Holm's step-down needs at its rank)."""
    why = [w for q in held if (w := stats.held_back(data.family, q))]
    return "undecided" + (f": {'; '.join(why)}" if why else "")


def pair_claim(claim: Claim, data: Data) -> Diff:
    """higher − lower, computed as a page computes the same question (`Data.diff` on one figure of two
    experiments, `Data.between` on two figures of one), so that the family holds one interval per question; each
    side its own metric and category otherwise (one category of an experiment below another of it)."""
    (hm, hc), (lm, lc) = table.split(claim.higher.metric), table.split(claim.lower.metric)
    high, low = {"experiment": claim.higher.experiment}, {"experiment": claim.lower.experiment}
    if (hm, hc) == (lm, lc):
        return data.diff(hm, high, low, hc, lower_is_better=False)
    if high == low and hc == lc:
        return data.between(hm, lm, hc, **high)
    a, b = data.stat(hm, hc, **high), data.stat(lm, lc, **low)
    shared = a.shared and b.shared
    iv = stats.paired(a.values, b.values, *((a.n, b.n) if shared else (None, None)))
    return Diff(a, b, iv, False, data.family, questions.of_claim(claim)[0])


def recorded_claim(claim: Claim, data: Data, out: Path) -> Answer | None:
    """The pair claim judged by the comparison recorded in `out/comparisons/` that holds its two experiments on
    its metric, or on that accuracy's gap where the two graded the same questions on every seed (their ceilings
    equal, so one gap minus the other is minus the accuracies' difference), either way round; None where no
    record holds it. Holds when the record's sign rule names the higher arm (it wins on most seeds), fails when it
    names the lower one; the figure is the mean's sequence at the last look, higher − lower."""
    metric, key = claim.higher.metric, accuracies.parse(claim.higher.metric)
    if claim.lower.metric != metric:
        return None
    gap = key.key("gap") if key is not None and key.role == "acc" else None
    arms = {claim.higher.experiment, claim.lower.experiment}
    for name, record in verdicts.records(data).items():
        for j in record.judged:
            if {j.pair.a, j.pair.b} != arms or j.pair.metric not in (metric, gap):
                continue
            via_gap = j.pair.metric != metric
            if via_gap and comparison.unshared_ceiling(data, j.pair, data.seeds(experiment=j.pair.a)):
                continue
            d = comparison.as_diff(data, j)  # A - B as measured, its interval the sequence's
            if d is None:
                continue
            iv = d.interval
            if (j.pair.a != claim.higher.experiment) != via_gap:  # to higher − lower, on the claim's metric
                iv = -iv
            high, low = (data.stat(*table.split(metric), experiment=r.experiment) for r in (claim.higher, claim.lower))
            d = Diff(high, low, iv, False)  # > 0: the claim's side, as a fixed-sample claim reads
            winner = {"A better": j.pair.a, "B better": j.pair.b}.get(j.verdict.verdict)  # the record's own verdict
            verdict = {claim.higher.experiment: "holds", claim.lower.experiment: "fails"}.get(winner, "undecided")
            on = f"; sequential{', on the gap' if via_gap else ''}"
            return Answer(f"{claim.text} (`comparisons/{name}`{on})", f"{d} (claimed > 0)", str(j.looks), verdict,
                          d, verdict != "undecided")  # fmt: skip
    return None


def compare_answers(out: Path, data: Data) -> list[Answer]:
    """The pairs of every comparison `scripts/compare.py` recorded in `out/comparisons/`, judged again on the
    table by its own sign rule (minibert.compare.comparison.judge) over the seeds it ran: the verdict is that rule's,
    worded as the record words it (its clock included), and the figure the mean's sequence at the last look."""
    answers = []
    for name, r in verdicts.records(data).items():
        for j in r.judged:
            a, b = j.pair.a.rsplit("/", 1)[-1], j.pair.b.rsplit("/", 1)[-1]
            d = comparison.as_diff(data, j)
            if d is None:
                continue
            won = f"{a} won {j.verdict.wins} of {j.verdict.untied} seeds"
            label = f"{a} vs {b}: {j.pair.metric} (`comparisons/{name}`: {r.stop(j)}; {won})"
            answers.append(Answer(label, d.say(a, b), str(j.looks), r.words(j, a, b), d, j.sign_decided))
    return answers


PAIRS = (keys.ZERO_SHOT, keys.PROBE)  # minimal pairs: zero-shot, and the probe (minibert.pairs)
FLOORS = tuple(keys.floor_metric(f) for f in keys.floor_names(keys.MAX_ORDER))  # every order a run may log


def overview(data: Data, root: str | Path = CHECKOUT) -> Section:
    """One row per experiment: seeds, its minimal pairs where any run graded them (the downstream measure read
    first: zero-shot, the probe, the best n-gram floor on the same pairs), then its headline accuracy, ceiling
    and gap."""
    experiments = data.experiments()
    found = {e: [data.find(m, experiment=e) for m in PAIRS] for e in experiments}
    pairs = any(s for stats in found.values() for s in stats)
    rows = []
    for e in experiments:
        acc, ceiling, gap = (data.find(m, experiment=e) for m in ("val/acc", "val/ceiling/acc", "val/gap/acc"))
        seeds = len(data.seeds(experiment=e))
        shown = (*found[e], _best_floor(data, e)) if pairs else ()
        cells = [str(s) if s else "–" for s in (*shown, acc, ceiling, gap)]
        if acc is not None and ceiling is None:  # its own task's accuracy (a detector's, say): not the others'
            cells[len(shown)] += " (own task)"
        objective = data.objective(e)
        rows.append([e, registered(objective, Path(root)).label if objective else "–", str(seeds), *cells])
    note = ("Points, mean over seeds with its 95% interval (minibert.tables.stats). Gap: the exact ceiling minus "
            "the accuracy on the same questions, paired by seed. –: the experiment logs no such figure (no exact "
            "ceiling, or not a cloze test). (own task): an accuracy with no exact ceiling beside it measures the "
            "objective's own task (ELECTRA-style detection, say), not the cloze the other rows grade. Objective: "
            "its label in configs/arms.yaml, or its class where the registry holds none.")  # fmt: skip
    header = ["experiment", "objective", "seeds", "accuracy", "ceiling", "gap"]
    if pairs:
        header[3:3] = ["minimal pairs, zero-shot", "minimal pairs, probe", "best n-gram floor"]
        note += (" Minimal pairs (docs/pairs.md): the judged cells' share of pairs told apart, zero-shot by the "
                 "objective's own head and by a convex probe; the floor is the best n-gram model's on the same "
                 "pairs; the ceiling is 100 on the bracket languages (the bad sentence is never a word).")  # fmt: skip
    return Section("Experiments", header, rows, note)


def _best_floor(data: Data, experiment: str):
    """The highest of the n-gram floors on the experiment's judged pairs, or None."""
    found = [s for m in FLOORS if (s := data.find(m, experiment=experiment)) is not None]
    return max(found, key=lambda s: s.mean) if found else None


def against_reference(grid: Grid, data: Data) -> Section | None:
    """Each figure the grid quotes from the write-up it reproduces (an experiment's `reference:`), beside ours."""
    rows = []
    for e in grid.experiments:
        for name, published in e.reference.items():
            ours = data.find(*table.split(name), experiment=e.name)
            if ours is not None:
                scale = 100 if ours.proportion else 1
                rows.append([e.name, name, str(ours), stats.number(published, scale, 2 if scale == 1 else 1)])
    if not rows:
        return None
    note = f"Write-up figures: {grid.reference_source}. Ours: mean over seeds with its 95% interval, in points."
    return Section("Against the write-up", ["experiment", "metric", "ours", "write-up"], rows, note)


def details(data: Data, experiment: str) -> Section:
    """Every accuracy and category of one experiment, with its question count."""
    rows = []
    for metric, category in data.figures(experiment):
        s = data.stat(metric, category, experiment=experiment)
        accuracy = accuracies.parse(metric) is not None
        label = accuracies.label(category) if category else "all" if accuracy else ""
        rows.append([metric, label, "–" if s.n is None else f"{s.n:,.0f}", str(s)])
    rows.sort(key=lambda r: (accuracies.parse(r[0]) is None, r[0]))
    note = "Accuracies in points with their 95% interval; other figures as logged (mean, 95% t-interval)."
    return Section(experiment, ["metric", "category", "n", "mean (95% interval)"], rows, note, folded=True)


def other_grids(out: Path) -> list[dict[str, str]]:
    """Every other grid whose table lies in the same `results/` tree as `out`: its name and its report's
    `ablation.md` and `dashboard.html` relative to `out` (a grid outside any `results/` folder: those below it)."""
    out = out.resolve()
    root = next((p for p in (out, *out.parents) if p.name == "results"), out)
    grids = []
    for folder in sorted(table.tables_under(root), key=lambda p: (p != root, p)):  # the default first
        if folder != out:
            name = "default" if folder == root else folder.relative_to(root).as_posix()
            to = Path(os.path.relpath(folder, out))
            grids.append({"name": name, "md": (to / "ablation.md").as_posix(),
                          "html": (to / "dashboard.html").as_posix()})  # fmt: skip
    return grids


def claims_of(grid: Grid, data: Data) -> list[Claim]:
    """The grid's claims whose experiments its table holds."""
    return [c for c in grid.claims if c.experiments() <= set(data.experiments())]


def title(out: Path, grid: Grid) -> str:
    """'dyck grid' for a grid file of the configs; a grid written into its own folder (`<out>/grid.yaml`) is named
    by its folder: 'comparison compare/MaskRate30-pairs-dyck' for one compare.py wrote, 'yardsticks/dyck grid'
    for one scripts/yardsticks.py wrote."""
    path = Path(grid.path)
    if path.name == "grid.yaml" and path.resolve().parent == out.resolve():
        where = f"{out.parent.name}/{out.name}"
        return f"{where} grid" if out.parent.name == "yardsticks" else f"comparison {where}"
    return f"{path.stem} grid"


def write(out: str | Path, grid: Grid, check: bool = False, data: Data | None = None, pages: list[Path] = (),
          outputs: list[Path] | None = None, root: str | Path = ".") -> list[Path]:  # fmt: skip
    """Render `out/ablation.md`, `out/dashboard.html` and their figures (`claims.png`, `curves.png`,
    `categories.png`) from `out/results.csv` (or `data`, that table already read); `pages`: the pages that read
    this table, linked from both; `root`: the repository whose configs declare its family. Returns the files whose
    text changed (with `check`, none is written and no
    figure drawn); `outputs`, if given, receives every file it writes or would write."""
    out = Path(out)
    data = Data.load(out) if data is None else data
    if not data.family.frozen:  # alone (not in a build of every page): its family judged here
        verdicts.decide(data, grid, root)
    answers = [claim_answer(c, data, out) for c in claims_of(grid, data)] + compare_answers(out, data)
    drawn = {}
    if shown := [(a.text.replace("`", ""), a.diff, a.decided) for a in answers if a.diff is not None]:  # as prose
        drawn["claims.png"] = (figures.forest, shown, "the grid's comparisons, paired by seed")
    if panels := learning_curves(data, data.curves):
        drawn["curves.png"] = (figures.curves, panels, "learning curves: mean over seeds, band from the lowest to "
                               "the highest seed")  # fmt: skip
    if found := by_category(data):
        metric, panels = found
        drawn["categories.png"] = (figures.categories, panels, f"{metric}, points", f"{metric} by category: mean "
                                   "over seeds with its 95% interval")  # fmt: skip
    for name, (draw, *args) in drawn.items():
        if not check:
            draw(out / name, *args)
    reference = against_reference(grid, data)
    sections = [
        overview(data, root),
        *([reference] if reference else []),
        *(details(data, e) for e in data.experiments()),
    ]
    for before, s in zip(sections, sections[1:]):
        s.first_folded = s.folded and not before.folded
    made = {k: without_absolute_paths(str(v)) for k, v in data.made.items()
            if k != "seeds (each run's summary.json `seeds`)"}  # fmt: skip
    made["code"] = f"{data.provenance.sentence()} (today's training code: {data.provenance.today[:8]})"
    claims_png, curves_png, categories_png = ("claims.png" in drawn, "curves.png" in drawn, "categories.png" in drawn)
    curves_below = curves_png and not answers  # no answer to sit beside
    context = {"title": f"minibert ablation: {title(out, grid)}", "answers": answers,
               "claims_png": claims_png, "categories_png": categories_png, "curves_png": curves_png,
               "curves_below": curves_below, "curves_or_categories": curves_png or categories_png,
               "lower_section": curves_below or categories_png,
               "bound_only": claims_png and any(a.diff is None for a in answers),  # claims the figure leaves out
               "made": made, "sections": sections, "source": grid.reference_source,
               "seeds": data.seeds(), "runs": data.runs(), "grids": other_grids(out),
               "pages": [os.path.relpath(p, out.resolve()) for p in pages],
               "family": data.family.summary()}  # fmt: skip
    written = verdicts.write(out, data.family.rows, check)
    for name in ("ablation.md", "dashboard.html"):
        text = TEMPLATES.get_template(f"grid.{name.rsplit('.', 1)[1]}.j2").render(**context)
        if not (out / name).is_file() or (out / name).read_text() != text:
            written.append(out / name)
            if not check:
                write_atomic(out / name, text)
    if outputs is not None:
        outputs += [out / name for name in (*drawn, verdicts.FILE, "ablation.md", "dashboard.html")]
    return written


CURVE_ARMS = 8  # arms one panel draws


def learning_curves(data: Data, frame) -> list[tuple[str, str, dict]]:
    """Panels of `figures.curves`: per stage and logged metric (minibert.tables.curves.METRICS), each arm's
    curve, at most CURVE_ARMS arms a panel; [] without a curves table."""
    if frame is None:
        return []
    panels = []
    stages = data.frame.drop_duplicates("experiment").set_index("experiment")["stage"]
    for stage in dict.fromkeys(stages):
        for metric in curves.METRICS:
            arms = {e: b for e in stages.index[stages == stage] if (b := curves.band(frame, e, metric)) is not None}
            groups = {"": list(arms)}
            if "acc" in metric:  # an accuracy with no exact ceiling is the objective's own task's: a panel apart
                own = [e for e in arms if data.find("val/ceiling/acc", experiment=e) is None]
                groups = {"": [e for e in arms if e not in own], ", own task (no cloze ceiling)": own}
            for kind, names in groups.items():
                chunks = [names[i : i + CURVE_ARMS] for i in range(0, len(names), CURVE_ARMS)]
                for k, chunk in enumerate(chunks):
                    part = f" ({k + 1} of {len(chunks)})" if len(chunks) > 1 else ""
                    unit = ", points" if "acc" in metric else ""
                    panels.append((f"{stage}: {metric}{kind}{part}", f"{metric}{unit}", {e: arms[e] for e in chunk}))
    return panels


CATEGORY_ARMS = 8  # arms one panel of the per-category figure draws


def by_category(data: Data, metric: str = "val/acc") -> tuple[str, list] | None:
    """(metric, panels of `figures.categories`): per stage, each arm's headline accuracy in every category it
    logs (the questions by distance, depth, kind, ...), the categories grouped by the part of their name before
    the first '_' (dist_1, dist_2_3: distance), with each arm's own exact ceiling where it logs one for a category
    (arms' ceilings differ: a causal arm's sees only the left context), at most CATEGORY_ARMS arms a panel; None
    where no arm logs categories."""
    ceiling = accuracies.parse(metric).key("ceiling") if accuracies.parse(metric) else None
    stages = data.frame.drop_duplicates("experiment").set_index("experiment")["stage"]
    panels = []
    for stage in dict.fromkeys(stages):
        found = {e: cats for e in stages.index[stages == stage]
                 if (cats := [c for m, c in data.figures(e) if m == metric and c])}  # fmt: skip
        categories = sorted(dict.fromkeys(c for cats in found.values() for c in cats), key=_group_of)
        groups = [_group_of(c)[1] for c in categories]
        names = list(found)
        chunks = [names[i : i + CATEGORY_ARMS] for i in range(0, len(names), CATEGORY_ARMS)]
        for k, chunk in enumerate(chunks):
            part = f" ({k + 1} of {len(chunks)})" if len(chunks) > 1 else ""
            arms = {e: [data.find(metric, c, experiment=e) if c in found[e] else None for c in categories]
                    for e in chunk}  # fmt: skip
            bounds = {e: [_ceiling(data, ceiling, c, e) if c in found[e] else None for c in categories] for e in chunk}
            panels.append((f"{stage}: {metric} by category{part}", [accuracies.label(c) for c in categories], arms,
                           groups, bounds))  # fmt: skip
    return (metric, panels) if panels else None


def _group_of(category: str) -> tuple[int, str, str]:
    """(order, group, name) of a category: grouped by the part of its name before the first '_' (kind_mask,
    kind_kept: kind); a category alone in its kind (opener, closer) goes with the other single ones, last."""
    head = category.split("_", 1)[0]
    return (0, head, category) if "_" in category else (1, "", category)


def _ceiling(data: Data, ceiling: str | None, category: str, experiment: str) -> float | None:
    """The exact ceiling `experiment` logs for `category` (its mean over seeds), or None where it logs none: never
    pooled with another arm's, which may bound other questions or see other context."""
    if ceiling is None:
        return None
    s = data.find(ceiling, category, experiment=experiment)
    return None if s is None or math.isnan(s.mean) else s.mean  # NaN: a category with no question
