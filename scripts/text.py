"""The real-text page, from the finished grid of configs/ablations/text.yaml:

    python scripts/text.py --out results/text    # results/text.md, results/text/text_by_objective.png

Reads the grid's tidy `ablation.csv` and `corpus.json` (the corpus and vocabulary the runs recorded in their
summary.json, copied beside the grid with `--record`, so that a fresh clone rebuilds the page from committed
files). Figures are in points: the mean over seeds with a 95% t-interval over seeds, and every comparison is
paired by seed (`minibert.ablation.power.paired_interval`): seed s of every cell drew the same training
windows and graded the same validation windows, and the references are graded on exactly the questions each
run answered. Anything below `<!-- notes -->` of an existing page is kept.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minibert.ablation import accuracies  # noqa: E402
from minibert.ablation.intervals import Interval  # noqa: E402
from minibert.ablation.power import detectable, seeds_needed  # noqa: E402
from minibert.atomic_writes import write_atomic  # noqa: E402
from scripts.bert_tables import header_of  # noqa: E402
from scripts.length import bounded, pct  # noqa: E402
from scripts.structure import Grid, verdict, write_beside  # noqa: E402

# cloze arms graded on BERT's token-level questions: cell -> (label, metric prefix, references it has)
CLOZE = {
    "mlm": ("MLM", "val/", ("unigram", "left_bigram", "left_right_trigram")),
    "span": ("span masking", "val/", ("unigram", "left_bigram", "left_right_trigram")),
    "whole_word": ("whole-word masking", "val/", ("unigram", "left_bigram", "left_right_trigram")),
    "mlm_causal": ("causal MLM (left context only)", "val/", ("unigram", "left_bigram")),
    "electra": ("ELECTRA's generator (16 wide, 1 layer)", "val/generator/", ("unigram", "left_bigram",
                                                                            "left_right_trigram")),
}  # fmt: skip
REFERENCES = {"unigram": "unigram", "left_bigram": "left bigram", "left_right_trigram": "left+right trigram"}
FINETUNE = {
    "mlm-full": "MLM, full",
    "mlm-frozen": "MLM, frozen ([CLS] + linear head)",
    "mlm-probe": "MLM, probe (mean of the last layer, linear)",
    "mlm_causal-full": "causal MLM, full",
    "span-full": "span masking, full",
    "whole_word-full": "whole-word masking, full",
    "electra-full": "ELECTRA, full",
    "next_token-full": "next-token LM, full",
    "no_pretrain": "no pre-training",
}
MAJORITY = 0.5  # the next-segment task is balanced by construction
H_CLOZE, H_FINETUNE, SEED_CAP = 1.0, 2.0, 100  # target half-widths in points (Dyck's), and the seed budget
# Dyck's verdicts (results/dyck.md, the precise grid at Dyck's recipe): (what, cell a, cell b, Dyck's verdict)
DYCK = [
    ("cloze: MLM vs span masking", "pretrain/mlm", "pretrain/span", "MLM better by 22.1 points of gap (21.1 to 23.1)"),
    ("fine-tuning: MLM vs causal MLM", "finetune/mlm-full", "finetune/mlm_causal-full",
     "causal MLM better by 2.7 (0.7 to 4.7)"),
    ("fine-tuning: MLM vs span masking", "finetune/mlm-full", "finetune/span-full", "MLM better (88.1 against 58.1)"),
    ("fine-tuning: MLM vs ELECTRA", "finetune/mlm-full", "finetune/electra-full", "MLM better (88.1 against 80.2)"),
    ("fine-tuning: MLM vs next-token LM", "finetune/mlm-full", "finetune/next_token-full",
     "MLM better (88.1 against 80.4)"),
    ("fine-tuning: full vs frozen", "finetune/mlm-full", "finetune/mlm-frozen", "full better (88.1 against 54.1)"),
    ("fine-tuning: MLM full vs no pre-training", "finetune/mlm-full", "finetune/no_pretrain",
     "MLM better (88.1 against 50.3)"),
]  # fmt: skip


def cell(name: str) -> str:
    return f"text/{name}"


class Text(Grid):
    def acc(self, experiment: str, prefix: str = "val/") -> Interval:
        return bounded(self.mean(cell(experiment), f"{prefix}acc"))

    def reference(self, experiment: str, prefix: str, name: str) -> Interval:
        return bounded(self.mean(cell(experiment), f"{prefix}reference/{name}/acc"))

    def over(self, experiment: str, prefix: str, name: str) -> tuple[Interval, tuple[int, int]]:
        """Accuracy minus reference `name`, paired by seed, and on how many of how many seeds it is above."""
        e = cell(experiment)
        diff = self.difference((e, f"{prefix}acc"), (e, f"{prefix}reference/{name}/acc"))
        own, ref = self.by_seed(e, f"{prefix}acc"), self.by_seed(e, f"{prefix}reference/{name}/acc")
        return diff, (sum(own[s] > ref[s] for s in own), len(own))

    def paired(self, a: str, b: str) -> Interval:
        return self.difference((cell(a), "val/acc"), (cell(b), "val/acc"))


def figure_png(g: Text, out: Path) -> str:
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 4.8))
    names = list(CLOZE)
    ivs = [g.acc(f"pretrain/{n}", CLOZE[n][1]) for n in names]
    means = [100 * iv.mean for iv in ivs]
    err = [[m - 100 * iv.lo for m, iv in zip(means, ivs)], [100 * iv.hi - m for m, iv in zip(means, ivs)]]
    left.bar(range(len(names)), means, yerr=err, capsize=4, color="tab:blue", alpha=0.8)
    styles = {"unigram": ":", "left_bigram": "--", "left_right_trigram": "-"}
    for ref, style in styles.items():
        level = 100 * g.reference("pretrain/mlm", "val/", ref).mean
        left.axhline(level, color="black", linestyle=style, linewidth=1, label=f"{REFERENCES[ref]} reference")
    level = 100 * g.reference("pretrain/mlm_causal", "val/", "left_bigram").mean
    left.axhline(level, color="tab:red", linestyle="--", linewidth=1, label="left bigram, the causal MLM's questions")
    left.set_xticks(range(len(names)), [CLOZE[n][0].split(" (")[0] for n in names], rotation=15, fontsize=8)
    left.set_ylabel("cloze accuracy (points; no exact ceiling on text)")
    left.set_title("cloze on BERT's questions, against n-gram references")
    left.legend(fontsize=8)
    left.grid(alpha=0.3, axis="y")
    cells = list(FINETUNE)
    ivs = [g.acc(f"finetune/{c}") for c in cells]
    means = [100 * iv.mean for iv in ivs]
    err = [[m - 100 * iv.lo for m, iv in zip(means, ivs)], [100 * iv.hi - m for m, iv in zip(means, ivs)]]
    right.barh(range(len(cells)), means, xerr=err, capsize=3, color="tab:green", alpha=0.8)
    right.axvline(100 * MAJORITY, color="black", linestyle="--", linewidth=1, label="majority class (50%)")
    right.set_yticks(range(len(cells)), [FINETUNE[c] for c in cells], fontsize=8)
    right.invert_yaxis()
    right.set_xlabel("next-segment accuracy (points)")
    right.set_xlim(40, max(70, max(m + e for m, e in zip(means, err[1])) + 2))
    right.set_title("fine-tuning: does the second stretch continue the first?")
    right.legend(fontsize=8)
    right.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    path = out / "text_by_objective.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def corpus_lines(out: Path) -> list[str]:
    path = out / "corpus.json"
    if not path.is_file():
        raise SystemExit(f"error: {path} does not exist: record it from a finished run (--record)")
    c = json.loads(path.read_text())
    tokens = c["tokens"]
    return [
        f"- corpus: `{c['source']}` (the docstrings of Python {c['python']}'s standard library, parsed with `ast`, "
        "and `pydoc_data.topics`), sha256 `" + c["sha256"] + "`",
        f"- split by module (near-duplicates joined): {c['documents']['train']} training documents "
        f"({c['characters']['train']:,} characters, {tokens['train']:,} tokens), {c['documents']['val']} validation "
        f"documents ({c['characters']['val']:,} characters, {tokens['val']:,} tokens)",
        f"- vocabulary: WordPiece, {c['vocab_size']:,} pieces trained on the training split, tokenizer sha256 "
        f"`{c['tokenizer_sha256']}` (`{out.name}/tokenizer.json`)",
    ]


def page(g: Text, out: Path) -> list[str]:
    seeds = g.table.seeds()
    trigram = g.reference("pretrain/mlm", "val/", "left_right_trigram")
    lines = [
        "# Real text: the shipped objectives on the standard library's docstrings",
        "",
        *header_of(out),
        "- page: `python scripts/text.py --out results/text`",
        *corpus_lines(out),
        f"- seeds: {', '.join(map(str, seeds))}; figures in points, the mean over seeds with a 95% t-interval; "
        "comparisons paired by seed",
        "",
        "**There is no exact ceiling on real text.** Every cloze figure is read against n-gram references counted "
        "on the training split and graded on exactly the validation questions the model answered "
        "(`minibert/text/ngrams.py`: Witten-Bell interpolated, answering by the Bayes rule under BERT's "
        f"corruption). The strongest is the left+right trigram, at {pct(trigram)} on MLM's questions. Windows are "
        "31 tokens after [CLS], packed across documents; validation windows are 2,000 distinct stretches of the "
        "validation modules. Pre-training: `configs/recipes/text-pretrain.yaml` (64 wide, 2 layers, pre-norm, "
        "rotary, 900 steps of 64 windows at peak lr 6e-3); fine-tuning: next segment (is the second 14-token "
        "stretch the first's continuation, or another document's?), `configs/recipes/text-finetune.yaml`, 300 "
        "steps at lr 3e-3, 2,000 validation pairs, majority class 50%.",
        "",
        f"![cloze accuracy against the references, and fine-tuning]({out.name}/{figure_png(g, out)})",
        "",
        "## Pre-training: cloze accuracy against the references",
        "",
        "| pre-training | val/acc | minus unigram | minus left bigram | minus left+right trigram | above the bigram "
        "on every seed |",
        "|---|---|---|---|---|---|",
    ]
    for name, (label, prefix, refs) in CLOZE.items():
        acc = g.acc(f"pretrain/{name}", prefix)
        cols, every = [], "—"
        for ref in REFERENCES:
            if ref not in refs:
                cols.append("— (reads the right)")
                continue
            diff, above = g.over(f"pretrain/{name}", prefix, ref)
            cols.append(pct(diff, True))
            if ref == "left_bigram":
                every = "yes" if above[0] == above[1] else f"no ({above[0]} of {above[1]})"
        lines.append(f"| {label} | {pct(acc)} | {' | '.join(cols)} | {every} |")
    nt = g.acc("pretrain/next_token")
    nt_cols = [pct(g.over("pretrain/next_token", "val/", r)[0], True) for r in ("unigram", "left_bigram")]
    lines += [
        "",
        f"Next-token LM answers its own question (every next token): {pct(nt)}, minus the unigram "
        f"{nt_cols[0]}, minus the left bigram {nt_cols[1]} (the references of that question). ELECTRA's "
        f"discriminator spots replaced tokens at {pct(g.acc('pretrain/electra'))}.",
        "",
        "## Fine-tuning: next segment (majority class 50%)",
        "",
        "| encoder | val/acc | minus no pre-training | minus majority |",
        "|---|---|---|---|",
    ]
    for c, label in FINETUNE.items():
        acc = g.acc(f"finetune/{c}")
        base = "—" if c == "no_pretrain" else pct(g.paired(f"finetune/{c}", "finetune/no_pretrain"), True)
        lines.append(f"| {label} | {pct(acc)} | {base} | {100 * (acc.mean - MAJORITY):+.1f} |")
    found = comparisons(out)
    lines += ["", "## Claims", "", *claims(g, sized_pairs(found, out)), "", *sized(found)]
    return lines


def comparisons(out: Path) -> list[dict]:
    """What `scripts/compare.py` wrote beside the grid (`<out>/comparisons/*.json`), by file name."""
    return [json.loads(path.read_text()) for path in sorted((out / "comparisons").glob("*.json"))]


def sized_pairs(found: list[dict], out: Path) -> dict[tuple[str, str], tuple[Interval, float]]:
    """(a, b) -> (a minus b on val/acc, the target half-width) for every pair compare.py sized, in both orders."""
    pairs: dict[tuple[str, str], tuple[Interval, float]] = {}
    for c in found:
        if c["metric"] != "val/acc":
            continue
        sign = -1.0 if c["lower_is_better"] else 1.0  # compare.py signs A - B so that > 0 means A is better
        for p in c["pairs"]:
            if (p["a"], p["b"]) in pairs:
                raise SystemExit(f"error: {out / 'comparisons'} compares {p['a']} with {p['b']} twice: keep one")
            n = len(p["diffs"])
            lo, hi = sorted((sign * p["lo"], sign * p["hi"]))
            pairs[(p["a"], p["b"])] = Interval(sign * p["mean"], lo, hi, n, p["df"]), c["half_width"]
            pairs[(p["b"], p["a"])] = Interval(-sign * p["mean"], -hi, -lo, n, p["df"]), c["half_width"]
    return pairs


def sized(found: list[dict]) -> list[str]:
    """The comparisons `scripts/compare.py` sized by power."""
    if not found:
        return []
    lines = ["## Comparisons sized by power", "",
             "Each row is one `scripts/compare.py` run (its command and time are in `comparisons/<name>.md`): "
             "Stein's two-stage procedure, whose pilot's spread sets the seeds for the target 95% half-width.", "",
             "| A | B | metric | difference (> 0: A better) | target | seeds | P(A better) | detectable | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in found:
        points = accuracies.parse(c["metric"]) is not None  # accuracies in points, other metrics as logged
        scale, form = (100, "+.1f") if points else (1, "+.3g")
        for p in c["pairs"]:
            a, b = (x.removeprefix("text/") for x in (p["a"], p["b"]))
            diff = f"{scale * p['mean']:{form}} ({scale * p['lo']:{form}} to {scale * p['hi']:{form}})"
            lines.append(f"| {a} | {b} | `{c['metric']}` | {diff} | ±{scale * c['half_width']:g} "
                         f"(pilot {c['pilot']}) | {len(p['diffs'])} | {p['p_a_better']:.2f} | "
                         f"{scale * p['detectable']:.2g} | {p['verdict']} |")  # fmt: skip
    return [*lines, ""]


def claims(g: Text, done: dict[tuple[str, str], tuple[Interval, float]]) -> list[str]:
    lines = []
    for ref in ("unigram", "left_bigram", "left_right_trigram"):
        diff, (above, seeds) = g.over("pretrain/mlm", "val/", ref)
        lines.append(f"- MLM beats the {REFERENCES[ref]} reference: {pct(diff, True)} ({verdict(diff)}; above it on "
                     f"{above} of the {seeds} seeds).")  # fmt: skip
    lines += ["", "Does Dyck's ranking hold on text? Row by row (text: a minus b, paired by seed). A row that "
              "`scripts/compare.py` sized (next section) reads its comparison; the others read the grid's seeds, "
              "which then serve as a pilot for Stein's procedure (`minibert.ablation.power`): the last columns give "
              "the smallest difference those seeds detect four times in five, and the seeds a 95% half-width of "
              f"{H_CLOZE:.0f} point (cloze) or {H_FINETUNE:.0f} points (fine-tuning) would need, at most {SEED_CAP}.",
              "",
              "| comparison | Dyck (results/dyck.md) | text | seeds | on text | detectable at these seeds | "
              "seeds for the target |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for what, a, b, dyck in DYCK:
        if (cell(a), cell(b)) in done:
            diff, h = done[(cell(a), cell(b))]
            more = f"sized by compare.py (±{100 * h:g})"
        else:
            diff = g.paired(a, b)
            target = (H_CLOZE if what.startswith("cloze") else H_FINETUNE) / 100
            diffs = g.differences((cell(a), "val/acc"), (cell(b), "val/acc"))
            needed = seeds_needed(diffs, target, SEED_CAP) if len(diffs) > 1 else None
            more = "—" if needed is None else f"{needed}" if needed < SEED_CAP else f"{SEED_CAP} or more"
        word = "a better" if diff.lo > 0 else "b better" if diff.hi < 0 else "undecided"
        side = {"a better": what.split(": ")[1].split(" vs ")[0], "b better": what.split(" vs ")[1]}.get(word, word)
        text_word = f"{side} better" if word != "undecided" else "undecided"
        lines.append(f"| {what} | {dyck} | {pct(diff, True)} | {diff.seeds} | {text_word} | "
                     f"{100 * detectable(diff):.1f} | {more} |")  # fmt: skip
    ww = g.paired("pretrain/whole_word", "pretrain/mlm")
    lines += ["", f"- Whole-word masking's cloze on BERT's token-level questions minus MLM's: {pct(ww, True)} "
              f"({verdict(ww)}). On Dyck every token is a word, so there it is token masking."]  # fmt: skip
    return lines


def record(out: Path) -> None:
    """Copy a finished run's corpus record and tokenizer beside the grid (`corpus.json`, `tokenizer.json`)."""
    summaries = sorted((out / "runs").rglob("summary.json"))
    for path in summaries:
        summary = json.loads(path.read_text())
        if "language" in summary and (path.parent / "tokenizer.json").is_file():
            write_atomic(out / "corpus.json", json.dumps(summary["language"], indent=2, sort_keys=True) + "\n")
            write_atomic(out / "tokenizer.json", (path.parent / "tokenizer.json").read_text())
            return
    raise SystemExit(f"error: no finished run under {out / 'runs'} recorded its corpus")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "text", help="the grid's --out")
    parser.add_argument("--record", action="store_true", help="first copy the corpus record from a finished run")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if args.record:
        record(out)
    write_beside(out, page(Text(out), out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
