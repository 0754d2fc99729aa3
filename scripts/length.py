"""The length-generalisation page, from the finished grid of configs/ablations/length.yaml:

    python scripts/length.py --out results/length    # results/length.md, results/length/*.png

Reads the grid's tidy `ablation.csv`. Figures are in points: the mean over seeds with a 95% t-interval over
seeds (each seed graded validation sentences of its own at every length, so their sampling is in that
spread), and comparisons are paired by seed (the arms of one seed share their questions at each length).
Anything below `<!-- notes -->` of an existing page is kept.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minibert.ablation.intervals import Interval  # noqa: E402
from scripts.bert_tables import header_of  # noqa: E402
from scripts.structure import Grid, verdict, write_beside  # noqa: E402

TRAINED = 32
LENGTHS = (16, 32, 48, 64)
SCHEMES = {"learned": "learned absolute", "sinusoidal": "sinusoidal", "rotary": "rotary (RoPE)", "alibi": "ALiBi",
           "none": "no positions"}  # fmt: skip
OBJECTIVES = {"mlm": "MLM (cloze gap)", "next_token": "next-token LM (gap)"}
TOLERANCE = 0.02  # a scheme "holds its gap" at a length when the gap grows by less than 2 points there


def metric(length: int, name: str) -> str:
    return f"val/{name}" if length == TRAINED else f"val/length_{length}/{name}"


def pct(iv: Interval, signed: bool = False) -> str:
    """Points, with the interval."""
    if iv.mean != iv.mean:
        return "—"
    s = "+" if signed else ""
    return f"{100 * iv.mean:{s}.1f} ({100 * iv.lo:{s}.1f} to {100 * iv.hi:{s}.1f})"


def bounded(iv: Interval) -> Interval:
    """An accuracy's interval, stopped at 0 and 1."""
    return Interval(iv.mean, max(iv.lo, 0.0), min(iv.hi, 1.0), iv.seeds, iv.df)


class Lengths(Grid):
    def value(self, experiment: str, length: int, name: str) -> Interval:
        return self.mean(experiment, metric(length, name))

    def paired_lengths(self, experiment: str, a: int, b: int, name: str) -> Interval:
        return self.difference((experiment, metric(a, name)), (experiment, metric(b, name)))

    def paired_arms(self, a: str, b: str, length: int, name: str) -> Interval:
        return self.difference((a, metric(length, name)), (b, metric(length, name)))


def pre(objective: str, scheme: str) -> str:
    return f"length/pretrain/{objective}/{scheme}"


def fine(scheme: str) -> str:
    return f"length/finetune/mlm/{scheme}"


def figure_png(g: Lengths, out: Path) -> str:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    colors = dict(zip(SCHEMES, plt.get_cmap("tab10").colors, strict=False))
    panels = [(axes[0], "mlm", "gap/acc"), (axes[1], "next_token", "gap/acc"), (axes[2], None, "acc")]
    for ax, objective, name in panels:
        for scheme, label in SCHEMES.items():
            cell = fine(scheme) if objective is None else pre(objective, scheme)
            ivs = [g.value(cell, n, name) for n in LENGTHS]
            if objective is None:
                ivs = [bounded(iv) for iv in ivs]
            means = [100 * iv.mean for iv in ivs]
            err = [[m - 100 * iv.lo for m, iv in zip(means, ivs)], [100 * iv.hi - m for m, iv in zip(means, ivs)]]
            ax.errorbar(LENGTHS, means, yerr=err, label=label, color=colors[scheme], marker="o", capsize=3)
        ax.axvline(TRAINED, color="grey", linestyle=":", label="training length")
        ax.set_xticks(LENGTHS)
        ax.set_xlabel("tokens after [CLS]")
        if objective is None:
            ax.axhline(50, color="black", linestyle="--", linewidth=0.8, label="chance (balanced classes)")
            ax.set_title("grammaticality after MLM + full fine-tuning")
            ax.set_ylabel("accuracy (points; ceiling 100)")
        else:
            ax.set_title(f"{OBJECTIVES[objective]} by length")
            ax.set_ylabel("gap to the exact ceiling (points)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path = out / "length_by_scheme.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def page(g: Lengths, out: Path) -> list[str]:
    lines = [
        "# Length generalisation on Dyck, by position scheme",
        "",
        *header_of(out),
        "- page: `python scripts/length.py --out results/length`",
        f"- seeds: {', '.join(map(str, g.table.seeds()))}; figures in points, the mean over seeds with a 95% "
        "t-interval; comparisons paired by seed",
        "",
        f"Trained at {TRAINED} tokens (Dyck, 4 types, depth <= 6, Dyck's recipe); graded at 16, 48 and 64 with the "
        "same types and depth bound, against the exact oracle of each length (so the ceiling moves with the "
        "length, and the gap is read against it). Every encoder has 65 positions; learned positions past 33 "
        "exist but were never trained.",
        "",
        f"![gap and accuracy by length]({out.name}/{figure_png(g, out)})",
        "",
    ]
    for objective, label in OBJECTIVES.items():
        rows = ["| positions | " + " | ".join(f"{n}{' (trained)' if n == TRAINED else ''}" for n in LENGTHS)
                + " | ceiling at 16 / 32 / 48 / 64 |", "|---|" + "---|" * (len(LENGTHS) + 1)]  # fmt: skip
        for scheme, name in SCHEMES.items():
            cell = pre(objective, scheme)
            gaps = [pct(g.value(cell, n, "gap/acc")) for n in LENGTHS]
            ceil = " / ".join(f"{100 * g.value(cell, n, 'ceiling/acc').mean:.1f}" for n in LENGTHS)
            rows.append(f"| {name} | {' | '.join(gaps)} | {ceil} |")
        lines += [f"## {label}: gap to the ceiling by length", "", *rows, ""]
    rows = ["| positions | " + " | ".join(map(str, LENGTHS)) + " |", "|---|" + "---|" * len(LENGTHS)]
    for scheme, name in SCHEMES.items():
        rows.append(f"| {name} | {' | '.join(pct(bounded(g.value(fine(scheme), n, 'acc'))) for n in LENGTHS)} |")
    lines += ["## Grammaticality (full fine-tuning at 32), accuracy by length", "",
              "Ceiling 100 (spoiled sentences are never in the language), chance 50.", "", *rows, ""]  # fmt: skip
    lines += ["## Claims", "", *claims(g), ""]
    return lines


def claims(g: Lengths) -> list[str]:
    out = []
    for objective, label in OBJECTIVES.items():
        for scheme, name in SCHEMES.items():
            cell = pre(objective, scheme)
            grow = {n: g.paired_lengths(cell, n, TRAINED, "gap/acc") for n in (48, 64)}
            held = {n: ("holds" if iv.hi < TOLERANCE else "does not hold" if iv.lo > TOLERANCE else "undecided")
                    for n, iv in grow.items()}  # fmt: skip
            out.append(f"- {label}, {name}: the gap grows by {pct(grow[48], True)} at 48 and {pct(grow[64], True)} at "
                       f"64; within {100 * TOLERANCE:.0f} points at 48: {held[48]}; at 64: {held[64]}.")  # fmt: skip
    for objective, label in OBJECTIVES.items():
        for scheme in ("rotary", "alibi"):
            diffs = {
                n: g.paired_arms(pre(objective, "learned"), pre(objective, scheme), n, "gap/acc") for n in (48, 64)
            }
            text = "; ".join(f"at {n}: {pct(iv, True)} ({verdict(iv)})" for n, iv in diffs.items())
            out.append(f"- {label}: {SCHEMES[scheme]} beats learned positions past the training length (learned's gap "
                       f"minus {SCHEMES[scheme]}'s): {text}.")  # fmt: skip
    for scheme, name in SCHEMES.items():
        drop = g.paired_lengths(fine(scheme), TRAINED, 64, "acc")
        out.append(f"- grammaticality, {name}: accuracy at 32 minus at 64: {pct(drop, True)}.")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "length", help="the grid's --out")
    out = parser.parse_args(argv).out.resolve()
    write_beside(out, page(Lengths(out), out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
