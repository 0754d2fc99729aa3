"""Turn a grid's finished runs into results a person can read, or put in a paper, without running anything.

Writes into `out`, atomically: `ablation.csv` (tidy: experiment, seed, metric, value, run_dir; every logged
number), `ablation.md` and `dashboard.html` (the same tables and figures; the page is self-contained,
works offline and links to the other grids' pages), and one PNG per figure (minibert.ablation.figures).

Tables are wide: one row per experiment head, one column per category with its question count n; each
accuracy is the mean over seeds with its 95% interval (minibert.ablation.intervals: seed spread plus
validation sampling, always inside [0, 1]); a run that logged oracle ceilings gets a ceiling row and a
paired gap row, and one that logged the Bayes predictor's accuracy on categories without a bound gets a
reference row. Claims and the write-up comparison are paired differences with their intervals.
"""

from __future__ import annotations

import csv
import html
import io
import math
import os
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from minibert.ablation import accuracies
from minibert.ablation.figures import Figure, bar_figures, comparison_figure, curve_figures, group_of
from minibert.ablation.grid import Claim, Experiment, Grid
from minibert.ablation.intervals import (
    NAN,
    Interval,
    accuracy_interval,
    difference_interval,
    reference_difference,
)
from minibert.ablation.power import detectable, half_width
from minibert.ablation.results import Board, Results
from minibert.ablation.runner import Run
from minibert.atomic_writes import write_atomic

__all__ = ["Results", "claim_by_seed", "write_report", "sibling_dashboards"]

INTERVALS = (
    "Intervals are 95%: each accuracy's mean over seeds, with a Wilson-type interval whose variance adds the "
    "seeds' spread (s²/S) and the validation set's binomial sampling error (p(1-p)/n), the seeds' part "
    "taken at Student's t on S-1 degrees of freedom and the sampling part at 1.96; it never leaves [0, 1]. "
    "Where every seed graded a validation "
    "set of its own (`data.val_seed: null`), that error is already in the seeds' spread and is not added "
    "again. Differences (claims, gaps to the ceiling, the write-up) are paired by seed on the same validation "
    "questions. A ceiling is a bound: the best accuracy any predictor can reach on those questions (overall, on "
    "a category the model's input decides, or from the category's own best predictor). Where the model's "
    "input does not decide a category (the true token's class, a hidden partner), the oracle's figure is the "
    "Bayes predictor's own accuracy there, a reference that a model may beat by trading accuracy across "
    "categories."
)


_REFERENCE = re.compile(r"val/(?P<head>(?:[A-Za-z0-9_]+/)*?)reference/(?P<name>[A-Za-z0-9_]+)/acc")


def no_ceiling_note(experiments: list[Experiment], results: Results) -> str:
    """For experiments graded against references and no ceiling (a language without an exact oracle, such as
    real text): say that no exact ceiling exists there, and which reference is strongest on their questions."""
    strongest: dict[tuple[str, float], list[str]] = {}
    for e in experiments:
        metrics = results.metrics_of(e.name)
        if any((key := accuracies.parse(m)) is not None and key.role == "ceiling" for m in metrics):
            continue
        refs = {}
        for m in metrics:
            values = [v for v in results.values[(e.name, m)].values() if not math.isnan(v)]
            if (match := _REFERENCE.fullmatch(m)) and values:
                refs[match["head"] + match["name"]] = statistics.fmean(values)
        if refs:
            best = max(refs, key=refs.__getitem__)
            strongest.setdefault((best, 100 * refs[best]), []).append(e.name)
    if not strongest:
        return ""
    which = "; ".join(f"{name}, {value:.1f}% on the questions of {', '.join(names)}"
                      for (name, value), names in strongest.items())  # fmt: skip
    return (
        "No exact ceiling exists for these experiments' language: their accuracies are read against references "
        "graded on the same questions (`val/reference/<name>/acc`), which a model may beat and which bound "
        f"nothing. The strongest reference: {which}."
    )


def claim_by_seed(claim: Claim, results: Results) -> dict[int, bool]:
    """Whether the claim holds on each seed that has all the values it needs."""
    if claim.value is not None:
        lo = -math.inf if claim.at_least is None else claim.at_least
        hi = math.inf if claim.at_most is None else claim.at_most
        return {s: lo <= v <= hi for s, v in results.get(claim.value).items()}
    lower, higher = results.get(claim.lower), results.get(claim.higher)
    return {s: lower[s] < higher[s] for s in sorted(set(lower) & set(higher))}


@dataclass
class Cell:
    text: str
    attrs: dict[str, str] = field(default_factory=dict)  # data-* attributes of the HTML cell


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[Cell]]
    note: str = ""

    def markdown(self) -> str:
        lines = [f"### {self.title}", "", "| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(c.text for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + ("\n\n" + self.note if self.note else "") + "\n"

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td{_attrs(c.attrs)}>{html.escape(c.text)}</td>" for c in row) + "</tr>"
            for row in self.rows
        )
        note = f"<p class='note'>{inline_markdown(self.note)}</p>" if self.note else ""
        return f"<h3>{html.escape(self.title)}</h3><table><tr>{head}</tr>{body}</table>{note}"


def _attrs(attrs: dict[str, str]) -> str:
    return "".join(f' data-{k}="{html.escape(v)}"' for k, v in attrs.items())


def inline_markdown(text: str) -> str:
    """Escape `text` for HTML and render its inline markdown: `code`, **bold**, [text](href).

    >>> inline_markdown("run `ablate.py` **now** <b>")
    'run <code>ablate.py</code> <b>now</b> &lt;b&gt;'
    """
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', out)


def _acc_cell(board: Board, category: str) -> Cell:
    cat = board.categories.get(category)
    if cat is None:
        return Cell("")
    iv = cat.interval()
    if math.isnan(iv.mean):
        return Cell("no questions" if cat.n == 0 else "n/a", {"experiment": board.experiment.name,
                                                             "metric": cat.metric, "role": "acc"})  # fmt: skip
    attrs = {"experiment": board.experiment.name, "metric": cat.metric, "role": "acc",
             "lo": f"{iv.lo:.6f}", "hi": f"{iv.hi:.6f}", "mean": f"{iv.mean:.6f}"}  # fmt: skip
    return Cell(iv.percent(), attrs)


def accuracy_tables(boards: list[Board]) -> list[Table]:
    """Wide tables: per job type and measure, a row per experiment head and a column per category."""
    tables = []
    keys = list(dict.fromkeys((b.experiment.job_type, b.measure.name) for b in boards))
    for job_type, measure_name in keys:
        rows_of = [b for b in boards if (b.experiment.job_type, b.measure.name) == (job_type, measure_name)]
        measure = rows_of[0].measure
        cats = sorted({c for b in rows_of for c in b.categories}, key=measure.sort_key)
        header = ["experiment"]
        usual_n = {}  # the question count most rows of a column share: in its header; others in their cells
        for c in cats:
            ns = [round(b.categories[c].n) for b in rows_of if c in b.categories and b.categories[c].n is not None]
            usual_n[c] = Counter(ns).most_common(1)[0][0] if ns else None
            label = measure.label(c)
            header.append(label if usual_n[c] is None else f"{label} (n={usual_n[c]:,})")
        rows = []
        for b in rows_of:
            row = [Cell(b.title)]
            for c in cats:
                cell = _acc_cell(b, c)
                n = b.categories[c].n if c in b.categories else None
                if cell.text and n is not None and round(n) != usual_n[c]:
                    cell.text += f" n={n:,.0f}"
                row.append(cell)
            rows.append(row)
            if any(cat.ceiling for cat in b.categories.values()):
                rows.append([Cell("↳ oracle ceiling")] + [_oracle_cell(b, c, "ceiling") for c in cats])
                rows.append([Cell("↳ gap to ceiling (paired)")] + [_gap_cell(b, c) for c in cats])
            if any(cat.bayes for cat in b.categories.values()):
                rows.append(
                    [Cell("↳ Bayes predictor (reference, not a bound)")] + [_oracle_cell(b, c, "bayes") for c in cats]
                )
        measure = rows_of[0].measure
        note = "Mean over seeds (95% interval), in %; n: validation questions graded (a cell names its own n "
        note += "when it differs from its column's)."
        if measure.chance is not None:
            note += f" {measure.chance_label[0].upper() + measure.chance_label[1:]}: {100 * measure.chance:.1f}%."
        tables.append(Table(f"{job_type}: {measure.title}", header, rows, note))
    return tables


def _oracle_cell(b: Board, c: str, role: str) -> Cell:
    """The mean over seeds of the oracle's figure on category `c` (`role`: 'ceiling' or 'bayes'), or empty."""
    cat = b.categories.get(c)
    values = getattr(cat, role) if cat is not None else None
    if not values:
        return Cell("")
    return Cell(f"{100 * statistics.fmean(values.values()):.1f}",
                {"experiment": b.experiment.name, "metric": cat.metric, "role": role})  # fmt: skip


def _gap_cell(b: Board, c: str) -> Cell:
    cat = b.categories.get(c)
    if cat is None or not cat.ceiling:
        return Cell("")
    return Cell(cat.gap_interval().percent(), {"experiment": b.experiment.name, "metric": cat.metric, "role": "gap"})


def other_tables(experiments: list[Experiment], results: Results) -> list[Table]:
    """Losses, parameter counts, steps and time: mean over seeds (lowest–highest seed)."""
    tables = []
    for job_type in dict.fromkeys(e.job_type for e in experiments):
        members = [e for e in experiments if e.job_type == job_type]
        metrics = list(dict.fromkeys(m for e in members for m in sorted(results.others(e))))
        if not metrics:
            continue
        rows = []
        for e in members:
            row = [Cell(e.name)]
            for m in metrics:
                vals = [v for v in results.values.get((e.name, m), {}).values() if not math.isnan(v)]
                row.append(Cell(_plain(vals), {"experiment": e.name, "metric": m, "role": "other"}))
            rows.append(row)
        note = "Mean over seeds (lowest–highest seed); counts shown once when every seed agrees."
        tables.append(Table(f"{job_type}: losses, sizes and time", ["experiment", *metrics], rows, note))
    return tables


def _plain(vals: list[float]) -> str:
    if not vals:
        return ""
    mean = statistics.fmean(vals)
    if len(set(vals)) == 1:
        return f"{vals[0]:,.0f}" if vals[0] == int(vals[0]) and abs(vals[0]) >= 10 else f"{vals[0]:.4g}"
    return f"{mean:.4g} ({min(vals):.3g}–{max(vals):.3g})"


def _n_for(results: Results, experiment: str, metric: str) -> float | None:
    key = accuracies.parse(metric)
    return results.sampling_n(experiment, key) if key is not None and key.role == "acc" else None


def writeup_table(experiments: list[Experiment], results: Results) -> Table | None:
    """Each write-up figure next to ours, with the difference's interval and whether it is within noise."""
    rows = []
    for e in experiments:
        for metric, ref in e.reference.items():
            vals = results.values.get((e.name, metric), {})
            key = accuracies.parse(metric)
            attrs = {"experiment": e.name, "metric": metric, "role": "writeup"}
            if key is None:  # a count or a loss: compared exactly
                mean = statistics.fmean(vals.values()) if vals else math.nan
                verdict = "equal" if mean == ref else "differs"
                rows.append([Cell(e.name), Cell(metric), Cell(_plain(list(vals.values())), attrs),
                             Cell(_plain([ref])), Cell(""), Cell(""), Cell(""), Cell(verdict)])  # fmt: skip
                continue
            n = _n_for(results, e.name, metric)
            iv = accuracy_interval(list(vals.values()), n)
            diff = reference_difference(list(vals.values()), n, ref)
            verdict = "n/a" if math.isnan(diff.mean) else "within noise" if diff.contains_zero else "differs"
            attrs.update({"lo": f"{iv.lo:.6f}", "hi": f"{iv.hi:.6f}"})
            half = "" if math.isnan(diff.mean) else f"{100 * half_width(diff):.1f}"
            mde = detectable(diff)
            label = _metric_label(key, results.measure(e.name, key.prefix))
            rows.append([Cell(e.name), Cell(label), Cell(iv.percent(), attrs), Cell(f"{100 * ref:.1f}%"),
                         Cell(_signed(diff)), Cell(half), Cell("" if math.isnan(mde) else f"{100 * mde:.1f}"),
                         Cell(verdict)])  # fmt: skip
    if not rows:
        return None
    note = ("Difference: ours minus the write-up's single run, in percentage points, with its 95% interval "
            "(our seeds' spread counted for the single run too, and both validation sets' sampling error); "
            "**within noise** when the interval contains 0. **±**: its half-width; **detectable**: the smallest "
            "true difference these seeds find beyond noise four times in five.")  # fmt: skip
    header = ["experiment", "metric", "measured (95% interval)", "write-up", "difference", "±", "detectable",
              "verdict"]  # fmt: skip
    return Table("side by side with the write-up", header, rows, note)


def _metric_label(key: accuracies.AccKey, measure: accuracies.Measure) -> str:
    head = accuracies.head_label(key.prefix)
    return (f"{head}: " if head else "") + measure.label(key.category)


def _signed(iv: Interval) -> str:
    if math.isnan(iv.mean):
        return "n/a"
    return f"{100 * iv.mean:+.1f} ({100 * iv.lo:+.1f} to {100 * iv.hi:+.1f})"


def claims_table(grid: Grid, experiments: list[Experiment], results: Results) -> Table | None:
    names = {e.name for e in experiments}
    rows = []
    for claim in grid.claims:
        if not claim.experiments() <= names:
            continue
        by_seed = claim_by_seed(claim, results)
        seeds = ", ".join(f"{s}:{'✓' if ok else '✗'}" for s, ok in sorted(by_seed.items())) or "no runs"
        iv, text, beyond = claim_interval(claim, results)
        if beyond:
            verdict = "holds" if all(by_seed.values()) else "holds beyond noise, not on every seed"
        else:
            verdict = "within noise" if by_seed and all(by_seed.values()) else "does not hold"
        paired = claim.value is None or accuracies.parse(claim.value.metric) is not None
        half = f"{100 * half_width(iv):.1f}" if paired and not math.isnan(iv.mean) else ""
        mde = detectable(iv) if claim.value is None else math.nan
        rows.append([Cell(claim.text), Cell(text), Cell(half), Cell("" if math.isnan(mde) else f"{100 * mde:.1f}"),
                     Cell(seeds), Cell(verdict)])  # fmt: skip
    if not rows:
        return None
    note = ("Paired: for 'A below B' the interval is of B − A per seed on the same validation questions (in "
            "points); for a threshold, of the value itself. **±**: the interval's half-width. **detectable**: "
            "the smallest true difference these seeds find beyond noise four times in five (80% power). A "
            "claim **holds** only when its whole interval is on the claimed side and every seed agrees; "
            "**within noise** when every seed agrees but the interval reaches the other side.")  # fmt: skip
    header = ["claim", "95% interval", "±", "detectable", "per seed", "verdict"]
    return Table("claims", header, rows, note)


def claim_interval(claim: Claim, results: Results) -> tuple[Interval, str, bool]:
    """(interval, its text, whether it lies wholly on the claimed side) of a claim: of B − A for 'A below B',
    of the value for a threshold."""
    if claim.value is not None:
        vals = results.get(claim.value)
        n = _n_for(results, claim.value.experiment, claim.value.metric)
        if accuracies.parse(claim.value.metric) is None:
            values = list(vals.values())
            iv = Interval(statistics.fmean(values), min(values), max(values), len(values)) if values else NAN
            text = _plain(values)
        else:
            iv = accuracy_interval(list(vals.values()), n)
            text = iv.percent()
        lo = -math.inf if claim.at_least is None else claim.at_least
        hi = math.inf if claim.at_most is None else claim.at_most
        return iv, text, lo <= iv.lo and iv.hi <= hi
    higher, lower = results.get(claim.higher), results.get(claim.lower)
    n_h = _n_for(results, claim.higher.experiment, claim.higher.metric)
    n_l = _n_for(results, claim.lower.experiment, claim.lower.metric)
    iv = difference_interval(higher, lower, n_h, n_l)
    return iv, _signed(iv), iv.lo > 0


def _mean_lo_hi(iv: Interval) -> tuple[float, float, float]:
    return iv.mean, iv.lo, iv.hi


def baselines_of(grid: Grid, boards: list[Board]) -> dict[str, list[Board]]:
    """For each group: the boards of experiments from earlier groups that its claims compare against (the
    default run beside the break cells; never the other way round)."""
    order = list(dict.fromkeys(group_of(b.experiment.name) for b in boards))
    out: dict[str, list[Board]] = {}
    for group in order:
        others: list[str] = []
        for claim in grid.claims:
            names = claim.experiments()
            if any(group_of(n) == group for n in names):
                earlier = [n for n in sorted(names) if group_of(n) in order[: order.index(group)]]
                others += [n for n in earlier if n not in others]
        out[group] = [b for b in boards if b.experiment.name in others]
    return out


def sibling_dashboards(out: Path) -> dict[str, str]:
    """Other grids' dashboards near `out` (in its sub-folders, its parent, and the parent's sub-folders):
    page title -> path relative to `out`."""
    out = Path(out).resolve()
    found = {*out.glob("*/dashboard.html"), out.parent / "dashboard.html", *out.parent.glob("*/dashboard.html")}
    links = {}
    for page in sorted(p for p in found if p.is_file() and p.parent != out):
        title = re.search(r"<title>(.*?)</title>", page.read_text(errors="replace"))
        links[html.unescape(title[1]) if title else str(page.parent.name)] = os.path.relpath(page, out)
    return links


def grid_title(grid: Grid) -> str:
    """'minibert ablation: default grid' for configs/ablations/default.yaml."""
    stem = Path(grid.path).stem if grid.path else ""
    return f"minibert ablation: {stem}{'' if stem.endswith('grid') else ' grid'}" if stem else "minibert ablation"


class ReportError(ValueError):
    """A report that would cover nothing or less than the one it replaces; the message says what is missing."""


SEEDS_LINE = "seeds (each run's summary.json `seeds`)"


def seeds_line(results: Results) -> str:
    """How the runs' three seeds (summary.json `seeds`) relate to seed_everything, in one line."""
    kinds: Counter = Counter()
    for _, summary in results.summaries:
        seeds = summary.get("seeds") or {}
        base = seeds.get("seed_everything")
        kinds["init " + ("= seed" if seeds.get("init") == base else "set apart")] += 1
        kinds["data " + ("= seed" if seeds.get("data") == base else "set apart")] += 1
    own = len(results.own_val_sets)
    experiments = len({r.experiment.name for r, _ in results.summaries})
    parts = ", ".join(f"{k} in {n} runs" for k, n in sorted(kinds.items()))
    return (f"{SEEDS_LINE}: {parts or 'not recorded'}; validation set drawn per seed "
            f"in {own} of {experiments} experiments, one fixed draw in the rest")  # fmt: skip


def check_not_shrinking(out: Path, results: Results) -> None:
    """Raise ReportError if `results` has no run, or lacks an (experiment, seed) of `out/ablation.csv`."""
    if not results.summaries:
        raise ReportError(f"no finished run of this grid in {out}: nothing to report (existing files are kept)")
    try:
        with open(out / "ablation.csv", newline="") as f:
            before = {(row["experiment"], str(row["seed"])) for row in csv.DictReader(f)}
    except (OSError, KeyError, csv.Error):
        return  # no previous report, or one that cannot be read: nothing to protect
    lost = sorted(before - {(run.experiment.name, str(run.seed)) for run, _ in results.summaries})
    if lost:
        shown = ", ".join(f"{e} seed {s}" for e, s in lost[:4]) + (" ..." if len(lost) > 4 else "")
        raise ReportError(
            f"the report in {out} covers {len(lost)} run(s) this one would drop ({shown}): kept as it is. "
            "Give the grid and seeds that made it, another --out, or --replace-report"
        )


def write_report(
    out: Path,
    grid: Grid,
    experiments: list[Experiment],
    runs: list[Run],
    header: list[str],
    links: dict[str, str] | None = None,
    replace: bool = False,
) -> list[Path]:
    """Write csv, md, png and html into `out`; returns the paths written. `links`: other pages, title ->
    href relative to `out` (default: `sibling_dashboards(out)`). Refuses (ReportError) to write a report of
    no run, or one that drops runs of the existing report, unless `replace`."""
    out = Path(out)
    results = Results.collect(runs)
    if not replace:
        check_not_shrinking(out, results)
    links = sibling_dashboards(out) if links is None else links
    written = []

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, ["experiment", "seed", "metric", "value", "run_dir"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(results.rows(out))
    write_atomic(out / "ablation.csv", buffer.getvalue())
    written.append(out / "ablation.csv")

    boards = results.boards(experiments)
    seeds = sorted({r.seed for r, _ in results.summaries})
    seeds_text = f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
    figures: list[Figure] = bar_figures(boards, baselines_of(grid, boards), seeds_text) + curve_figures(boards, results)
    names = {e.name for e in experiments}
    compared = [(c.text, *_mean_lo_hi(claim_interval(c, results)[0])) for c in grid.claims
                if c.value is None and c.experiments() <= names]  # fmt: skip
    if compared:
        figures.insert(0, comparison_figure(compared))
    for f in figures:
        write_atomic(out / f.name, f.png)
        written.append(out / f.name)

    # the answer first: the claims (paired comparisons and their verdicts), then the full tables
    tables = [t for t in (claims_table(grid, experiments, results), writeup_table(experiments, results)) if t]
    tables += accuracy_tables(boards)
    tables += other_tables(experiments, results)
    title = grid_title(grid)
    source = f"Write-up figures: {grid.reference_source}" if grid.reference_source else ""
    no_ceiling = no_ceiling_note(experiments, results)

    header = [*(h for h in header if not h.startswith(SEEDS_LINE)), seeds_line(results)]  # a rebuilt report's anew
    md = [f"# {title}", "", *[f"- {h}" for h in header], ""]
    if links:
        md += [_nav_markdown(links), ""]
    md += [x for x in (source, INTERVALS) if x] + [""]
    md += [no_ceiling, ""] if no_ceiling else []
    paragraphs = [x for x in (source, INTERVALS, no_ceiling) if x]
    md += [t.markdown() for t in tables]
    md += [f"![{f.name}]({f.name})\n\n{f.caption}\n" for f in figures]
    write_atomic(out / "ablation.md", "\n".join(md) + "\n")
    written.append(out / "ablation.md")

    write_atomic(out / "dashboard.html", dashboard(title, header, links, paragraphs, tables, figures))
    written.append(out / "dashboard.html")
    for href in links.values():  # a new grid's page: the pages it links to link back to it
        relink(out / Path(href).parent)
    return written


def _nav_html(links: dict[str, str]) -> str:
    items = " · ".join(f'<a href="{html.escape(h)}">{html.escape(t)}</a>' for t, h in links.items())
    return f"<nav>Other grids: {items}</nav>"


def _nav_markdown(links: dict[str, str]) -> str:
    return "Other grids: " + ", ".join(f"[{t}]({h.replace('dashboard.html', 'ablation.md')})" for t, h in links.items())


def relink(out: Path) -> None:
    """Bring the 'Other grids' links of the report in `out` up to date with the dashboards now beside it,
    without its runs (a grid whose runs are gone keeps its page and gains links to newer grids)."""
    links = sibling_dashboards(out)
    page, md = Path(out) / "dashboard.html", Path(out) / "ablation.md"
    if page.is_file():
        text = page.read_text()
        _write_if_changed(page, text, re.sub(r"<nav>.*?</nav>", lambda _: _nav_html(links), text, count=1, flags=re.S))
    if md.is_file():
        text = md.read_text()
        lines = [_nav_markdown(links) if line.startswith("Other grids: ") else line for line in text.split("\n")]
        _write_if_changed(md, text, "\n".join(lines))


def _write_if_changed(path: Path, old: str, new: str) -> None:
    if new != old:
        write_atomic(path, new)


_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 0.3em;font-size:0.9em}td,th{border:1px solid #ccc;"
    "padding:3px 7px;text-align:left}th{background:#f3f3f3}td:first-child{white-space:nowrap}"
    "img{max-width:100%}figure{margin:1.5em 0}figcaption{color:#444;font-size:0.9em}"
    "nav{background:#f6f6f6;padding:0.5em 1em;border-radius:4px}.note{color:#555;font-size:0.85em;margin:0 0 1.4em}"
    "code{background:#f1f1f1;padding:0 3px;border-radius:3px}"
)


def dashboard(
    title: str,
    header: list[str],
    links: dict[str, str],
    paragraphs: list[str],
    tables: list[Table],
    figures: list[Figure],
) -> str:
    """One offline page: no script, no request beyond the file itself and the figures' PNGs beside it (written
    with it, so the folder is the dashboard)."""
    nav = _nav_html(links) if links else ""
    images = "".join(
        f'<figure id="{html.escape(f.name)}" data-metrics="{html.escape(_pairs(f.drawn))}" '
        f'data-ceilings="{html.escape(_pairs(f.ceilings))}">'
        f'<img alt="{html.escape(f.name)}" src="{html.escape(f.name)}">'
        f"<figcaption><b>{html.escape(f.name)}</b>: {html.escape(f.caption)}</figcaption></figure>"
        for f in figures
    )
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{nav}<ul>"
        + "".join(f"<li>{inline_markdown(h)}</li>" for h in header)
        + "</ul>"
        + "".join(f"<p>{inline_markdown(p)}</p>" for p in paragraphs)
        + "<h2>Tables</h2>"
        + "".join(t.html() for t in tables)
        + "<h2>Figures</h2>"
        + images
        + "</body></html>"
    )


def _pairs(pairs: set[tuple[str, str]]) -> str:
    return ";".join(f"{e}|{m}" for e, m in sorted(pairs))
