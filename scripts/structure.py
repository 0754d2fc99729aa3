"""The structural-probe page, from the finished grid of configs/ablations/structure.yaml:

    python scripts/structure.py --out results/structure    # results/structure.md, results/structure/*.png

Reads the grid's tidy `ablation.csv` (so a fresh clone rebuilds the page from committed files). Every
figure is the mean over seeds with a 95% t-interval over seeds, and every comparison is paired by seed
(`minibert.ablation.power.paired_interval`). Seed s of every cell drew the same probe-training stream and
validation sentences; the probes' UUAS and Spearman are not proportions, so the interval is the seeds'
spread alone. Anything below `<!-- notes -->` of an existing page is kept.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minibert.ablation.intervals import Interval  # noqa: E402
from minibert.ablation.power import paired_interval  # noqa: E402
from minibert.atomic_writes import write_atomic  # noqa: E402
from scripts.bert_tables import NOTES, Table, header_of, read_values  # noqa: E402

ARMS = {
    "mlm": "MLM",
    "mlm_causal": "causal MLM",
    "span": "span masking",
    "electra": "ELECTRA",
    "next_token": "next-token LM",
}
BASELINES = {"random": "random encoder", "random_causal": "random causal encoder"}
FIGURES = {"uuas": "UUAS", "dist_spearman": "distance Spearman", "depth_spearman": "depth Spearman"}
LAYERS = (0, 1, 2)
LAYER_NAMES = {0: "embeddings", 1: "layer 1", 2: "layer 2"}


def fmt(iv: Interval, signed: bool = False) -> str:
    if math.isnan(iv.mean):
        return "—"
    sign = "+" if signed else ""
    return f"{iv.mean:{sign}.3f} ({iv.lo:{sign}.3f} to {iv.hi:{sign}.3f})"


def verdict(iv: Interval) -> str:
    if math.isnan(iv.lo):
        return "undecided"
    return "holds" if iv.lo > 0 else "does not hold" if iv.hi < 0 else "undecided"


class Grid:
    def __init__(self, out: Path) -> None:
        csv = out / "ablation.csv"
        if not csv.is_file():
            raise SystemExit(f"error: {csv} does not exist: run the grid first (its command is in the grid file)")
        self.table = Table(read_values(csv))

    def by_seed(self, experiment: str, metric: str) -> dict[int, float]:
        found = self.table.get(experiment, metric)
        if not found:
            raise SystemExit(f"error: ablation.csv has no {metric} for {experiment}: finish the grid")
        return found

    def mean(self, experiment: str, metric: str) -> Interval:
        """The mean over seeds with its 95% t-interval."""
        by_seed = self.by_seed(experiment, metric)
        return paired_interval([by_seed[s] for s in sorted(by_seed)])

    def differences(self, a: tuple[str, str], b: tuple[str, str]) -> list[float]:
        """(experiment, metric) a minus b on each seed both have, in seed order."""
        x, y = self.by_seed(*a), self.by_seed(*b)
        return [x[s] - y[s] for s in sorted(set(x) & set(y))]

    def difference(self, a: tuple[str, str], b: tuple[str, str]) -> Interval:
        """(experiment, metric) a minus b, paired by seed, with its 95% t-interval."""
        return paired_interval(self.differences(a, b))

    def figure(self, cell: str, kind: str, layer: int, figure: str) -> Interval:
        return self.mean(f"structure/probe/{cell}", f"val/{kind}/layer{layer}/{figure}")

    def paired(self, a: tuple[str, int], b: tuple[str, int], figure: str, kind: str = "probe") -> Interval:
        """Cell a at layer a minus cell b at layer b, paired by seed."""
        return self.difference(*((f"structure/probe/{c}", f"val/{kind}/layer{x}/{figure}") for c, x in (a, b)))

    def best_layer(self, cell: str, figure: str) -> int:
        return max(LAYERS, key=lambda layer: self.figure(cell, "probe", layer, figure).mean)


def figure_png(g: Grid, out: Path) -> str:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    colors = dict(zip(ARMS, plt.get_cmap("tab10").colors, strict=False))
    for ax, (figure, label) in zip(axes, FIGURES.items(), strict=True):
        for cell, name in {**ARMS, **BASELINES}.items():
            ivs = [g.figure(cell, "probe", layer, figure) for layer in LAYERS]
            means = [iv.mean for iv in ivs]
            err = [[m - iv.lo for m, iv in zip(means, ivs)], [iv.hi - m for m, iv in zip(means, ivs)]]
            style = {"linestyle": "--", "color": "grey" if cell == "random" else "black", "marker": "s"}
            if cell in ARMS:
                style = {"linestyle": "-", "color": colors[cell], "marker": "o"}
            ax.errorbar(LAYERS, means, yerr=err, label=name, capsize=3, **style)
        control = [g.figure("mlm", "control", layer, figure).mean for layer in LAYERS]
        ax.plot(LAYERS, control, ":", color=colors["mlm"], label="MLM, control task")
        ax.set_xticks(LAYERS, [LAYER_NAMES[x] for x in LAYERS])
        ax.set_title(f"{label} by layer (Dyck, exact trees)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path = out / "structure_by_layer.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def page(g: Grid, out: Path) -> list[str]:
    seeds = g.table.seeds()
    lines = [
        "# Structural probes on exact Dyck trees",
        "",
        *header_of(out),
        "- page: `python scripts/structure.py --out results/structure`",
        f"- seeds: {', '.join(map(str, seeds))}; each figure is the mean over seeds with a 95% t-interval over "
        "seeds, and every comparison is paired by seed",
        "",
        "The tree: [CLS] is the root, an opener hangs from the opener of the pair around it, a closer from its own "
        "opener (`minibert/objectives/structure.py`). Probes of rank 32, one distance and one depth probe per "
        "layer, trained 600 steps on the frozen encoder (configs/structure.yaml). The baselines are the same "
        "probes on a randomly initialised encoder of the same shape (bidirectional and causal), the embeddings "
        "layer of every encoder, and a control task (Hewitt & Liang 2019): a tree that follows token identities "
        "alone. Selectivity is the task figure minus the control figure.",
        "",
        f"![UUAS, distance and depth Spearman by layer]({out.name}/{figure_png(g, out)})",
        "",
    ]
    pre = ["| pre-training | val/acc | gap to the ceiling |", "|---|---|---|"]
    for arm, name in ARMS.items():
        head = "val/generator/" if arm == "electra" else "val/"
        acc = g.mean(f"structure/pretrain/{arm}", f"{head}acc")
        gap = g.mean(f"structure/pretrain/{arm}", f"{head}gap/acc")
        which = " (its generator's cloze)" if arm == "electra" else ""
        gap_text = f"{100 * gap.mean:.1f} ({100 * gap.lo:.1f} to {100 * gap.hi:.1f})"
        pre.append(f"| {name}{which} | {100 * acc.mean:.1f} | {gap_text} |")
    lines += ["## The encoders", "", *pre, ""]
    for figure, label in FIGURES.items():
        rows = [f"| encoder | {' | '.join(LAYER_NAMES[x] for x in LAYERS)} | selectivity at the best layer |",
                "|---|" + "---|" * (len(LAYERS) + 1)]  # fmt: skip
        for cell, name in {**ARMS, **BASELINES}.items():
            best = g.best_layer(cell, figure)
            cells = [fmt(g.figure(cell, "probe", layer, figure)) for layer in LAYERS]
            sel = g.figure(cell, "selectivity", best, figure)
            rows.append(f"| {name} | {' | '.join(cells)} | {fmt(sel, signed=True)} ({LAYER_NAMES[best]}) |")
        sel = [f"| selectivity (minus the control task) | {' | '.join(LAYER_NAMES[x] for x in LAYERS)} |",
               "|---|" + "---|" * len(LAYERS)]  # fmt: skip
        for cell, name in {**ARMS, **BASELINES}.items():
            cells = [fmt(g.figure(cell, "selectivity", x, figure), True) for x in LAYERS]
            sel.append(f"| {name} | {' | '.join(cells)} |")
        lines += [f"## {label}", "", *rows, "", *sel, ""]
    lines += ["## Claims", "", *claims(g), ""]
    return lines


def claims(g: Grid) -> list[str]:
    """Per objective, its best contextual layer against the random encoder at that layer and against its own
    embeddings (UUAS and depth Spearman); then bidirectional against left-to-right on depth."""
    out = []
    for figure in ("uuas", "depth_spearman"):
        for arm, name in ARMS.items():
            base = "random_causal" if arm in ("mlm_causal", "next_token") else "random"
            best = max((1, 2), key=lambda layer: g.figure(arm, "probe", layer, figure).mean)
            over_random = g.paired((arm, best), (base, best), figure)
            over_emb = g.paired((arm, best), (arm, 0), figure)
            out.append(
                f"- {FIGURES[figure]}, {name}: best contextual layer {LAYER_NAMES[best]} "
                f"({fmt(g.figure(arm, 'probe', best, figure))}); minus the {BASELINES[base]} there "
                f"{fmt(over_random, True)} (above it: {verdict(over_random)}); minus its own embeddings "
                f"{fmt(over_emb, True)} (above them: {verdict(over_emb)})."
            )
    for other in ("next_token", "mlm_causal"):
        depth = {layer: g.paired(("mlm", layer), (other, layer), "depth_spearman") for layer in (1, 2)}
        text = "; ".join(f"{LAYER_NAMES[x]} {fmt(iv, True)} ({verdict(iv)})" for x, iv in depth.items())
        out.append(f"- Bidirectional MLM encodes depth better than {ARMS[other]} (depth Spearman, MLM minus "
                   f"{ARMS[other]}): {text}.")  # fmt: skip
    return out


def write_beside(out: Path, lines: list[str]) -> Path:
    """Write `<out>.md` (beside the grid's folder) from `lines`, keeping what an existing page has below
    `<!-- notes -->`."""
    target = out.parent / f"{out.name}.md"
    kept = ""
    if target.is_file() and NOTES in (old := target.read_text()):
        kept = old[old.index(NOTES) :]
    write_atomic(target, "\n".join(lines) + "\n\n" + (kept or NOTES + "\n"))
    print(f"wrote {target}")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "structure", help="the grid's --out")
    out = parser.parse_args(argv).out.resolve()
    write_beside(out, page(Grid(out), out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
