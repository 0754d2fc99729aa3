"""BERT's own ablation tables in miniature (Devlin et al., 2018, Tables 7, 8 and 5), from finished grids.

Reads the tidy `ablation.csv` that `scripts/ablate.py` wrote into a grid's --out (so a fresh clone rebuilds
these pages from committed files alone) and writes one Markdown page into that folder, never outside it.
What a table reads (its cells, languages and rows, with BERT's published figures) is declared in its grid's
`tables:` (configs/ablations/probes.yaml, masking.yaml, objectives.yaml); the page layouts are here:

    python scripts/bert_tables.py probes  --out results/probes      # results/probes/probes.md (Table 7: features)
    python scripts/bert_tables.py masking --out results/masking     # results/masking/masking.md (Table 8)
    python scripts/bert_tables.py tasks   --out results/objectives  # results/objectives/pretraining_tasks.md (Table 5)

Figures are in points (100 x): the mean over seeds with the report's 95% interval (`ablation.md`'s: seed
spread plus the validation set's sampling error; differences paired by seed), then the seeds' own values.
The page starts with the command, wall time and machine of the grid's run (copied from `<out>/ablation.md`).
Anything below the line `<!-- notes -->` of an existing page is kept when it is rebuilt. A csv that lacks
an experiment a table reads is refused (exit 2, naming it), rather than turned into empty cells.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from minibert.ablation.grid import Table as GridTable  # noqa: E402
from minibert.ablation.grid import load_grid  # noqa: E402
from minibert.ablation.intervals import Interval, accuracy_interval, difference_interval  # noqa: E402
from minibert.atomic_writes import write_atomic  # noqa: E402

NOTES = "<!-- notes -->"
Values = dict[tuple[str, str], dict[int, float]]  # (experiment, metric) -> {seed: value}
# table -> (page, title); what each reads (cells, languages, rows and BERT's figures) is declared in its grid
PAGES = {
    "probes": ("probes.md", "Feature-based probes against fine-tuning (BERT's Table 7 in miniature)"),
    "masking": ("masking.md", "Masking strategies (BERT's Table 8 in miniature)"),
    "tasks": ("pretraining_tasks.md", "Pre-training tasks (BERT's Table 5 in miniature)"),
}


class BadTable(ValueError):
    """A grid's `tables:` entry that its page cannot be built from."""


def declared(table: str) -> GridTable:
    """The `tables:` entry of the committed grid that declares `table` (configs/ablations/*.yaml), checked
    against what its page reads."""
    for path in sorted((ROOT / "configs/ablations").glob("*.yaml")):
        if table in (grid := load_grid(path, ROOT)).tables:
            spec = grid.tables[table]
            _check(table, spec, f"{path.relative_to(ROOT)}: tables.{table}")
            return spec
    raise BadTable(f"no grid under configs/ablations declares the {table} table")


def _check(table: str, spec: GridTable, where: str) -> None:
    """BadTable unless every row holds what the page shows beside it."""
    if table == "probes":
        if missing := [r for r in ("full", "frozen", "layer2-cls") if r not in spec.rows]:
            raise BadTable(f"{where}.rows lacks {missing}: the page compares the best probe with them")
        bad = [r for r, label in spec.rows.items() if not isinstance(label, str)]
    elif table == "masking":
        bad = [
            r
            for r, bert in spec.rows.items()
            if not re.fullmatch(r"\d+-\d+-\d+", r)
            or sum(strategy(r)) != 100
            or not (isinstance(bert, list) and len(bert) == 3 and all(isinstance(x, (int, float)) for x in bert))
        ]
    else:  # tasks
        if len(spec.languages) != 1:
            raise BadTable(f"{where}.languages must name one language, got {list(spec.languages)}")
        bad = [r for r, v in spec.rows.items() if not (isinstance(v, list) and len(v) == 2)]
    if bad:
        shape = {"probes": "a label", "masking": "MASK-SAME-RND summing to 100 -> [MNLI, NER fine-tune, NER "
                 "feature-based]", "tasks": "[label, BERT's figures]"}[table]  # fmt: skip
        raise BadTable(f"{where}.rows[{bad[0]!r}] is not {shape}")


def strategy(tag: str) -> tuple[int, ...]:
    """'80-10-10' -> (80, 10, 10): a masking row's (MASK, SAME, RND) in percent."""
    return tuple(int(p) for p in tag.split("-"))


def read_values(csv_path: Path) -> Values:
    """The tidy csv of scripts/ablate.py as {(experiment, metric): {seed: value}}."""
    values: Values = defaultdict(dict)
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            if row["value"] not in ("", "nan"):  # a NaN (no graded position) is left out
                values[(row["experiment"], row["metric"])][int(row["seed"])] = float(row["value"])
    return dict(values)


class Table:
    """One csv's values, with the question count each experiment's intervals use (None when every seed drew
    a validation set of its own: the sampling error is then in the seeds' spread already)."""

    def __init__(self, values: Values) -> None:
        self.values = values

    def get(self, experiment: str, metric: str) -> dict[int, float] | None:
        return self.values.get((experiment, metric))

    def n(self, experiment: str) -> float | None:
        if len(set((self.get(experiment, "seeds/val") or {}).values())) > 1:
            return None
        counts = self.get(experiment, "val/n")
        return statistics.fmean(counts.values()) if counts else None

    def cell(self, experiment: str, metric: str = "val/acc", seeds: bool = True) -> str:
        """'90.0 (89.1–90.9) (89.9 / 90.0 / 90.2)' in points; '' when there is nothing."""
        by_seed = self.get(experiment, metric)
        if not by_seed:
            return ""
        values = [by_seed[s] for s in sorted(by_seed)]
        text = accuracy_interval(values, self.n(experiment)).percent()
        return text + (" (" + " / ".join(f"{100 * v:.1f}" for v in values) + ")" if seeds else "")

    def difference(self, a: tuple[str, str], b: tuple[str, str]) -> Interval:
        """Paired a - b over the seeds both have, with the report's interval."""
        return difference_interval(self.get(*a) or {}, self.get(*b) or {}, self.n(a[0]), self.n(b[0]))

    def seeds(self) -> list[int]:
        return sorted({s for by_seed in self.values.values() for s in by_seed})


def header_of(out: Path) -> list[str]:
    """The provenance lines (date, command, machine, wall time) of `<out>/ablation.md`, as Markdown bullets."""
    page = out / "ablation.md"
    if not page.is_file():
        return [f"- (no {page.name} in {out}: provenance unknown)"]
    keys = ("- date:", "- command:", "- grid:", "- machine:", "- wall time", "- sum of the runs")
    return [line for line in page.read_text().splitlines() if line.startswith(keys)]


def mean_of(by_seed: dict[int, float] | None) -> float:
    return statistics.fmean(by_seed.values()) if by_seed else -math.inf


def best_probe(values: Values, spec: GridTable, lang: str) -> str | None:
    """The probe row (not fine-tuning nor the frozen regime) with the highest mean val/acc on `lang`."""
    found = {r: mean_of(values.get((spec.cell(lang, r), "val/acc"))) for r in spec.rows if r not in ("full", "frozen")}
    found = {r: m for r, m in found.items() if m > -math.inf}
    return max(found, key=found.get) if found else None


def probes_needs(spec: GridTable, lang: str) -> list[tuple[str, str]]:
    return [(spec.cell(lang, row), "val/acc") for row in spec.rows]


def probes_page(table: Table, spec: GridTable, langs: list[str]) -> list[str]:
    head = "| features | " + " | ".join(f"{spec.languages[lang]}: grammaticality acc" for lang in langs) + " |"
    lines = [head, "|---|" + "---|" * len(langs)]
    for row, label in spec.rows.items():
        lines.append(f"| {label} | " + " | ".join(table.cell(spec.cell(lang, row)) for lang in langs) + " |")
    lines += ["", "### The best frozen-encoder probe against the [CLS]-linear frozen regime, seed by seed", ""]
    lines += ["Differences in points, best probe minus the `frozen` regime, and minus the [CLS] probe (same features"]
    lines += ["as `frozen`, the probe's budget): the first is what the issue asks; the second is the part the features"]
    lines += ["account for, budget aside. Both are paired by seed on the same validation questions.", ""]
    lines += [
        "| language | best probe (by mean) | seed | probe | frozen regime | [CLS] probe | - frozen | - [CLS] probe |"
    ]
    lines += ["|---|---|---|---|---|---|---|---|"]
    for lang in langs:
        best = best_probe(table.values, spec, lang)
        names = [spec.cell(lang, x) for x in (best, "frozen", "layer2-cls")]
        probe, frozen, cls_probe = (table.get(name, "val/acc") for name in names)
        label, name = spec.rows[best], spec.languages[lang]
        for seed in sorted(set(probe) & set(frozen) & set(cls_probe)):
            p, f, c = (100 * v[seed] for v in (probe, frozen, cls_probe))
            lines.append(f"| {name} | {label} | {seed} | {p:.1f} | {f:.1f} | {c:.1f} | {p - f:+.1f} | {p - c:+.1f} |")
        diffs = [table.difference((names[0], "val/acc"), (ref, "val/acc")).percent() for ref in names[1:]]
        means = " | ".join(table.cell(n, seeds=False) for n in names)
        lines.append(f"| {name} | {label} | mean (95% interval) | {means} | " + " | ".join(diffs) + " |")
    return lines


def masking_needs(spec: GridTable, lang: str) -> list[tuple[str, str]]:
    needs = []
    for row in spec.rows:
        name = spec.cell(lang, row)
        needs += [(f"{name}/pretrain", "val/acc"), (f"{name}/pretrain", "val/ceiling/acc")]
        needs += [(f"{name}/{job}", "val/acc") for job in ("full", "probe")]
    return needs


def masking_page(table: Table, spec: GridTable, langs: list[str]) -> list[str]:
    lines = []
    for lang in langs:
        lines += [f"### {spec.languages[lang]}", ""]
        lines += [
            "| MASK | SAME | RND | MLM acc (default questions) | gap to the ceiling | fine-tune acc | probe acc |"
        ]
        lines += ["|---|---|---|---|---|---|---|"]
        for row in spec.rows:
            name = spec.cell(lang, row)
            gap = table.difference((f"{name}/pretrain", "val/ceiling/acc"), (f"{name}/pretrain", "val/acc"))
            cells = [table.cell(f"{name}/pretrain"), gap.percent()]
            cells += [table.cell(f"{name}/{job}") for job in ("full", "probe")]
            lines.append("| " + " | ".join(f"{p}%" for p in strategy(row)) + " | " + " | ".join(cells) + " |")
        ceiling = table.get(f"{spec.cell(lang, next(iter(spec.rows)))}/pretrain", "val/ceiling/acc")
        same = f"{100 * mean_of(ceiling):.1f}"
        lines += ["", f"Ceiling of the default questions (the same for every strategy): {same}.", ""]
    lines += ["### Verdicts against BERT's Table 8", ""]
    lines += ["| | BERT (NER, dev F1) | " + " | ".join(spec.languages[lang] for lang in langs) + " |"]
    lines += ["|---|---|" + "---|" * len(langs)]
    ner = {row: figures[2] for row, figures in spec.rows.items()}  # BERT's NER feature-based F1
    verdicts = {"best feature-based": max(ner, key=ner.get), "worst feature-based": min(ner, key=ner.get)}
    for what, bert in verdicts.items():
        cells = [what, bert]
        for lang in langs:
            means = {r: mean_of(table.get(f"{spec.cell(lang, r)}/probe", "val/acc")) for r in spec.rows}
            pick = (max if what.startswith("best") else min)(means, key=means.get)
            cells.append(f"{pick} ({100 * means[pick]:.1f}); BERT's holds: {'yes' if pick == bert else 'no'}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "BERT's Table 8 (dev set; MNLI accuracy, CoNLL-2003 NER F1), for reference:", ""]
    lines += ["| MASK | SAME | RND | MNLI fine-tune | NER fine-tune | NER feature-based |", "|---|---|---|---|---|---|"]
    for row, bert in spec.rows.items():
        lines.append("| " + " | ".join(f"{p}%" for p in strategy(row)) + " | " + " | ".join(map(str, bert)) + " |")
    return lines


def tasks_needs(spec: GridTable, lang: str) -> list[tuple[str, str]]:
    jobs = [f"{spec.cell(lang, row)}-{regime}" for row in spec.rows for regime in ("full", "frozen")]
    return [(job, "val/acc") for job in (*jobs, spec.cell(lang, "no_pretrain"))]


def tasks_page(table: Table, spec: GridTable, langs: list[str]) -> list[str]:
    bert_columns = "MNLI-m / QNLI / MRPC / SST-2 / SQuAD F1"
    lines = [
        f"| pre-training | fine-tune acc (full) | frozen [CLS] acc | BERT-base: {bert_columns} |",
        "|---|---|---|---|",
    ]
    (lang,) = langs
    for row, (label, bert) in spec.rows.items():
        full, frozen = (table.cell(f"{spec.cell(lang, row)}-{regime}") for regime in ("full", "frozen"))
        lines.append(f"| {label} | {full} | {frozen} | {bert} |")
    lines.append(f"| no pre-training | {table.cell(spec.cell(lang, 'no_pretrain'))} | | |")
    return lines


BUILDERS = {"probes": (probes_page, probes_needs), "masking": (masking_page, masking_needs),
            "tasks": (tasks_page, tasks_needs)}  # fmt: skip


class MissingResults(ValueError):
    """The csv lacks experiments or metrics the table reads."""


def languages_of(table: str, spec: GridTable, values: Values) -> list[str]:
    """The languages the csv holds the table's experiments for; MissingResults naming what a present language
    lacks (or that none is there)."""
    needs = BUILDERS[table][1]
    present = [lang for lang in spec.languages if any(need in values for need in needs(spec, lang))]
    if not present:
        first = needs(spec, next(iter(spec.languages)))[0][0]
        raise MissingResults(f"it holds none of the {table} table's experiments (e.g. {first})")
    for lang in present:
        if missing := [f"{e} {m}" for e, m in needs(spec, lang) if (e, m) not in values]:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            raise MissingResults(f"it lacks {', '.join(missing[:3])}{more}")
    return present


def write_page(table: str, out: Path, spec: GridTable | None = None) -> Path:
    """Build the `table` page from `<out>/ablation.csv` into `<out>/<page>.md`, keeping its notes; `spec`:
    what it reads (by default, as its committed grid declares it)."""
    (filename, title), build = PAGES[table], BUILDERS[table][0]
    spec = spec or declared(table)
    values = read_values(out / "ablation.csv")
    langs = languages_of(table, spec, values)
    results = Table(values)
    page = out / filename
    notes = ""
    if page.is_file() and NOTES in page.read_text():
        notes = page.read_text().split(NOTES, 1)[1]
    rel = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    text = [
        f"# {title}",
        "",
        f"Built by `python scripts/bert_tables.py {table} --out {rel}` from `{rel}/ablation.csv`,",
    ]
    text += ["which this run of the grid wrote:", "", *header_of(out), ""]
    seeds = " / ".join(map(str, results.seeds()))
    text += ["Figures in points (100 x): mean over seeds with its 95% interval (as in `ablation.md`: seed spread plus "
             f"the validation set's sampling error; differences paired by seed), then seeds {seeds}.", ""]  # fmt: skip
    text += [*build(results, spec, langs), "", NOTES]
    write_atomic(page, "\n".join(text) + (notes if notes else "\n"))
    return page


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("table", choices=sorted(PAGES), help="which table to build")
    p.add_argument("--out", required=True, help="the --out that scripts/ablate.py wrote the grid to")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    csv_path = out / "ablation.csv"
    if not csv_path.is_file():
        print(f"bert_tables.py: error: --out={args.out!r} has no ablation.csv: run scripts/ablate.py first",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        page = write_page(args.table, out)
    except BadTable as err:
        print(f"bert_tables.py: error: {err}", file=sys.stderr)
        return 2
    except MissingResults as err:
        print(f"bert_tables.py: error: {csv_path} is not a finished run of the {args.table} grid: {err}; run "
              f"its grid into --out first", file=sys.stderr)  # fmt: skip
        return 2
    except OSError as err:
        print(f"bert_tables.py: error: cannot write into {out}: {err.strerror or err}", file=sys.stderr)
        return 3
    print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
