"""BERT's own ablation tables in miniature (Devlin et al., 2018, Tables 7, 8 and 5), from finished grids.

Reads the tidy `ablation.csv` that `scripts/ablate.py` wrote into a grid's --out (so a fresh clone rebuilds
these pages from committed files alone) and writes one Markdown page beside that folder:

    python scripts/bert_tables.py probes  --out results/probes      # results/probes.md   (Table 7: features)
    python scripts/bert_tables.py masking --out results/masking     # results/masking.md  (Table 8: MASK/SAME/RND)
    python scripts/bert_tables.py tasks   --out results/objectives  # results/pretraining_tasks.md (Table 5)

Figures are in points (100 x), mean ± 95% t-interval over seeds, then the seeds' own values. The page
starts with the command, wall time and machine of the grid's run (copied from `<out>/ablation.md`).
Anything below the line `<!-- notes -->` of an existing page is kept when it is rebuilt.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from minibert.ablation.intervals import seed_interval  # noqa: E402

NOTES = "<!-- notes -->"
LANGUAGES = {"pairs": "bracket pairs (seed language)", "dyck": "Dyck (4 types, 32 tokens)"}

# feature rows of the probes table: (experiment suffix, label); "frozen" is the frozen regime itself
PROBE_ROWS = (
    ("emb-mean", "embeddings, mean"),
    ("emb-max", "embeddings, max"),
    ("layer1-cls", "layer 1, [CLS]"),
    ("layer1-mean", "layer 1, mean"),
    ("layer1-max", "layer 1, max"),
    ("frozen", "layer 2 (last), [CLS]: the `frozen` regime (fine-tuning budget)"),
    ("layer2-cls", "layer 2 (last), [CLS] (probe budget)"),
    ("layer2-mean", "layer 2 (last), mean"),
    ("layer2-max", "layer 2 (last), max"),
    ("layer2-last", "layer 2 (last), last row"),
    ("concat2-cls", "concat layers 1-2, [CLS]"),
    ("concat2-mean", "concat layers 1-2, mean"),
    ("concat2-max", "concat layers 1-2, max"),
)
# (MASK, SAME, RND) in percent -> experiment tag, and BERT's Table 8 (MNLI fine-tune, NER fine-tune, NER feature-based)
STRATEGIES = {
    (80, 10, 10): (84.2, 95.4, 94.9),
    (100, 0, 0): (84.3, 94.9, 94.0),
    (80, 0, 20): (84.1, 95.2, 94.6),
    (80, 20, 0): (84.4, 95.2, 94.7),
    (0, 20, 80): (83.7, 94.8, 94.6),
    (0, 0, 100): (83.6, 94.9, 94.6),
}
Values = dict[tuple[str, str], dict[int, float]]  # (experiment, metric) -> {seed: value}


def strategy_tag(strategy: tuple[int, int, int]) -> str:
    """(80, 10, 10) -> '80-10-10', the experiment-name tag of a masking strategy."""
    return "-".join(map(str, strategy))


def read_values(csv_path: Path) -> Values:
    """The tidy csv of scripts/ablate.py as {(experiment, metric): {seed: value}}."""
    values: Values = defaultdict(dict)
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            if row["value"] not in ("", "nan"):  # a NaN (no graded position) is left out
                values[(row["experiment"], row["metric"])][int(row["seed"])] = float(row["value"])
    return dict(values)


def cell(by_seed: dict[int, float] | None, seeds: bool = True) -> str:
    """'90.0 ± 0.3 (89.9 / 90.0 / 90.2)' in points; '' when there is nothing."""
    if not by_seed:
        return ""
    values = [by_seed[s] for s in sorted(by_seed)]
    mean, half = seed_interval(values)
    text = f"{100 * mean:.1f}" if math.isnan(half) else f"{100 * mean:.1f} ± {100 * half:.1f}"
    return text + (" (" + " / ".join(f"{100 * v:.1f}" for v in values) + ")" if seeds else "")


def header_of(out: Path) -> list[str]:
    """The provenance lines (date, command, machine, wall time) of `<out>/ablation.md`, as Markdown bullets."""
    page = out / "ablation.md"
    if not page.is_file():
        return [f"- (no {page.name} in {out}: provenance unknown)"]
    keys = ("- date:", "- command:", "- grid:", "- machine:", "- wall time", "- sum of the runs")
    return [line for line in page.read_text().splitlines() if line.startswith(keys)]


def mean_of(by_seed: dict[int, float] | None) -> float:
    return statistics.fmean(by_seed.values()) if by_seed else -math.inf


def best_probe(values: Values, lang: str) -> str | None:
    """The probe cell (not the frozen regime) with the highest mean val/acc on `lang`, by experiment suffix."""
    found = {s: mean_of(values.get((f"probes/{lang}/{s}", "val/acc"))) for s, _ in PROBE_ROWS if s != "frozen"}
    found = {s: m for s, m in found.items() if m > -math.inf}
    return max(found, key=found.get) if found else None


def probes_page(values: Values) -> list[str]:
    langs = [lang for lang in LANGUAGES if (f"probes/{lang}/full", "val/acc") in values]
    head = "| features | " + " | ".join(f"{LANGUAGES[lang]}: grammaticality acc" for lang in langs) + " |"
    lines = [head, "|---|" + "---|" * len(langs)]
    rows = [("full", "**fine-tuning, every parameter** (the paper's way)"), *PROBE_ROWS]
    for suffix, label in rows:
        cells = [cell(values.get((f"probes/{lang}/{suffix}", "val/acc"))) for lang in langs]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "### The best frozen-encoder probe against the [CLS]-linear frozen regime, seed by seed", ""]
    lines += ["Differences in points, best probe minus the `frozen` regime, and minus the [CLS] probe (same features"]
    lines += ["as `frozen`, the probe's budget): the first is what the issue asks; the second is the part the features"]
    lines += ["account for, budget aside.", ""]
    lines += [
        "| language | best probe (by mean) | seed | probe | frozen regime | [CLS] probe | - frozen | - [CLS] probe |"
    ]
    lines += ["|---|---|---|---|---|---|---|---|"]
    for lang in langs:
        best = best_probe(values, lang)
        probe = values[(f"probes/{lang}/{best}", "val/acc")]
        frozen = values[(f"probes/{lang}/frozen", "val/acc")]
        cls_probe = values.get((f"probes/{lang}/layer2-cls", "val/acc"), {})
        label, name = dict(PROBE_ROWS)[best], LANGUAGES[lang]
        seeds = sorted(set(probe) & set(frozen) & set(cls_probe))
        for seed in seeds:
            p, f, c = (100 * v[seed] for v in (probe, frozen, cls_probe))
            lines.append(f"| {name} | {label} | {seed} | {p:.1f} | {f:.1f} | {c:.1f} | {p - f:+.1f} | {p - c:+.1f} |")
        diffs = [seed_interval([probe[s] - ref[s] for s in seeds]) for ref in (frozen, cls_probe)]
        lines.append(
            f"| {name} | {label} | mean ± CI | "
            + " | ".join(cell(v, False) for v in (probe, frozen, cls_probe))
            + " | "
            + " | ".join(f"{100 * m:+.1f} ± {100 * h:.1f}" for m, h in diffs)
            + " |"
        )
    return lines


def masking_page(values: Values, prefix: str = "masking") -> list[str]:
    langs = [lang for lang in LANGUAGES if (f"{prefix}/{lang}/80-10-10/pretrain", "val/acc") in values]
    lines = []
    for lang in langs:
        lines += [f"### {LANGUAGES[lang]}", ""]
        lines += [
            "| MASK | SAME | RND | MLM acc (default questions) | gap to the ceiling | fine-tune acc | probe acc |"
        ]
        lines += ["|---|---|---|---|---|---|---|"]
        for strategy in STRATEGIES:
            name = f"{prefix}/{lang}/{strategy_tag(strategy)}"
            cells = [cell(values.get((f"{name}/pretrain", m))) for m in ("val/acc", "val/gap/acc")]
            cells += [cell(values.get((f"{name}/{job}", "val/acc"))) for job in ("full", "probe")]
            lines.append("| " + " | ".join(f"{p}%" for p in strategy) + " | " + " | ".join(cells) + " |")
        ceiling = values.get((f"{prefix}/{lang}/80-10-10/pretrain", "val/ceiling/acc"))
        lines += ["", f"Ceiling of the default questions (the same for every strategy): {cell(ceiling, False)}.", ""]
    lines += ["### Verdicts against BERT's Table 8", ""]
    lines += ["| | BERT (NER, dev F1) | " + " | ".join(LANGUAGES[lang] for lang in langs) + " |"]
    lines += ["|---|---|" + "---|" * len(langs)]
    verdicts = {"best feature-based": (80, 10, 10), "worst feature-based": (100, 0, 0)}
    for what, bert in verdicts.items():
        row = [what, strategy_tag(bert)]
        for lang in langs:
            means = {
                s: mean_of(values.get((f"{prefix}/{lang}/{strategy_tag(s)}/probe", "val/acc"))) for s in STRATEGIES
            }
            pick = (max if what.startswith("best") else min)(means, key=means.get)
            row.append(
                f"{strategy_tag(pick)} ({100 * means[pick]:.1f}); BERT's holds: {'yes' if pick == bert else 'no'}"
            )
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "BERT's Table 8 (dev set; MNLI accuracy, CoNLL-2003 NER F1), for reference:", ""]
    lines += ["| MASK | SAME | RND | MNLI fine-tune | NER fine-tune | NER feature-based |", "|---|---|---|---|---|---|"]
    for strategy, bert in STRATEGIES.items():
        lines.append("| " + " | ".join(f"{p}%" for p in strategy) + " | " + " | ".join(map(str, bert)) + " |")
    return lines


def tasks_page(values: Values) -> list[str]:
    rows = (
        ("bert", "MLM + NSP (BERT)", "84.4 / 88.4 / 86.7 / 92.7 / 88.5"),
        ("mlm", "MLM alone (No NSP)", "83.9 / 84.9 / 86.5 / 92.6 / 87.9"),
        ("next_token", "next-token LM (LTR & No NSP)", "82.1 / 84.3 / 77.5 / 92.1 / 77.8"),
    )
    bert_columns = "MNLI-m / QNLI / MRPC / SST-2 / SQuAD F1"
    lines = [
        f"| pre-training | fine-tune acc (full) | frozen [CLS] acc | BERT-base: {bert_columns} |",
        "|---|---|---|---|",
    ]
    for name, label, bert in rows:
        full = values.get((f"objectives/finetune/{name}-full", "val/acc"))
        frozen = values.get((f"objectives/finetune/{name}-frozen", "val/acc"))
        lines.append(f"| {label} | {cell(full)} | {cell(frozen)} | {bert} |")
    lines.append(f"| no pre-training | {cell(values.get(('objectives/finetune/no_pretrain', 'val/acc')))} | | |")
    return lines


PAGES = {
    "probes": ("probes.md", "Feature-based probes against fine-tuning (BERT's Table 7 in miniature)", probes_page),
    "masking": ("masking.md", "Masking strategies (BERT's Table 8 in miniature)", masking_page),
    "tasks": ("pretraining_tasks.md", "Pre-training tasks (BERT's Table 5 in miniature)", tasks_page),
}


def write_page(table: str, out: Path) -> Path:
    """Build the `table` page from `<out>/ablation.csv` into `<out>/../<page>.md`, keeping its notes."""
    filename, title, build = PAGES[table]
    values = read_values(out / "ablation.csv")
    page = out.parent / filename
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
    text += ["Figures in points (100 x): mean ± 95% t-interval over seeds, then seeds 0 / 1 / 2.", ""]
    text += [*build(values), "", NOTES]
    page.write_text("\n".join(text) + (notes if notes else "\n"))
    return page


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("table", choices=sorted(PAGES), help="which table to build")
    p.add_argument("--out", required=True, help="the --out that scripts/ablate.py wrote the grid to")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    if not (out / "ablation.csv").is_file():
        print(
            f"bert_tables.py: error: --out={args.out!r} has no ablation.csv: run scripts/ablate.py first",
            file=sys.stderr,
        )
        return 2
    print(f"wrote {write_page(args.table, out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
