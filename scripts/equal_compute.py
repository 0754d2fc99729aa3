"""Comparisons at equal compute, from finished grids: scaling curves and the masking-rate question.

Reads the tidy `ablation.csv` that `scripts/ablate.py` wrote into a grid's --out (so a fresh clone rebuilds
the pages from committed files alone) and writes its figures into that folder and its page beside it:

    python scripts/equal_compute.py scaling      --out results/scaling       # results/scaling.md
    python scripts/equal_compute.py masking_rate --out results/masking_rate  # results/masking_rate.md

Every figure is in points (100 x): the mean over seeds with the report's 95% interval, and every
comparison is paired by seed (`minibert.ablation.intervals`: the seeds' spread at Student's t; each seed
graded its own validation set, so the sampling of the questions is in that spread). "Detectable" is the
smallest true difference those seeds find with 80% power (`minibert.ablation.power.detectable`). A claim
holds where its paired interval excludes zero in its direction, fails where it excludes zero the other
way, and is undecided otherwise. The page starts with the grid run's command, wall time and machine
(copied from `<out>/ablation.md`); anything below `<!-- notes -->` of an existing page is kept.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from minibert.ablation.intervals import Interval, accuracy_interval  # noqa: E402
from minibert.ablation.power import detectable  # noqa: E402
from minibert.atomic_writes import write_atomic  # noqa: E402
from scripts.bert_tables import NOTES, Table, header_of, read_values  # noqa: E402

BUDGETS = ("x0.0625", "x0.125", "x0.25", "x0.5", "x1")
ARMS = {  # scaling arm -> label in figures and tables
    "mlm": "MLM",
    "mlm_causal": "causal MLM",
    "span": "span masking",
    "electra": "ELECTRA",
    "next_token": "next-token LM",
    "next_token-then-mlm": "next-token LM, then MLM",
    "mlm-w64": "MLM, width 64",
    "electra-w64": "ELECTRA, width 64",
}
CLOZE = ("mlm", "mlm_causal", "span", "next_token-then-mlm", "mlm-w64")  # arms graded on the cloze test
RATES = ("p05", "p15", "p25", "p40", "p60", "p80", "p15-mask_only", "p40-mask_only")
LANGUAGES = {"pairs": "bracket pairs (seed language)", "dyck": "Dyck (4 types, 32 tokens)"}


class Missing(ValueError):
    """The csv lacks an experiment or a metric the page reads."""


def points(iv: Interval, digits: int = 1) -> str:
    return iv.percent(digits) if not math.isnan(iv.mean) else "—"


def signed(iv: Interval, digits: int = 1) -> str:
    """'+1.2 (0.3 to 2.1)' in points."""
    if math.isnan(iv.mean):
        return "—"
    return f"{100 * iv.mean:+.{digits}f} ({100 * iv.lo:+.{digits}f} to {100 * iv.hi:+.{digits}f})"


def verdict(iv: Interval, claim_positive: bool = True) -> str:
    """'holds', 'does not hold' (the interval excludes zero the other way) or 'undecided'."""
    if math.isnan(iv.mean):
        return "no values"
    if (iv.lo > 0) if claim_positive else (iv.hi < 0):
        return "holds"
    if (iv.hi < 0) if claim_positive else (iv.lo > 0):
        return "does not hold"
    return "undecided"


class Values:
    """A grid's csv: accuracies with intervals, and paired differences, by experiment."""

    def __init__(self, out: Path) -> None:
        if not (out / "ablation.csv").is_file():
            raise Missing(
                f"{out / 'ablation.csv'} does not exist: run the grid first (its command is in the grid file)"
            )
        self.table = Table(read_values(out / "ablation.csv"))

    def by_seed(self, experiment: str, metric: str) -> dict[int, float]:
        found = self.table.get(experiment, metric)
        if not found:
            raise Missing(
                f"ablation.csv has no {metric} for {experiment}: finish the grid (ablate.py reuses what is done)"
            )
        return found

    def has(self, experiment: str, metric: str) -> bool:
        return bool(self.table.get(experiment, metric))

    def mean(self, experiment: str, metric: str) -> float:
        return statistics.fmean(self.by_seed(experiment, metric).values())

    def accuracy(self, experiment: str, metric: str = "val/acc") -> Interval:
        return accuracy_interval(list(self.by_seed(experiment, metric).values()), self.table.n(experiment))

    def paired(self, a: tuple[str, str], b: tuple[str, str]) -> Interval:
        """(experiment, metric) a minus b, paired by seed (bert_tables' interval); Missing if either is absent."""
        self.by_seed(*a), self.by_seed(*b)
        return self.table.difference(a, b)

    def gap(self, experiment: str) -> Interval:
        """Ceiling minus accuracy, paired by seed."""
        return self.paired((experiment, "val/ceiling/acc"), (experiment, "val/acc"))

    def difference(self, a: str, b: str, metric: str = "val/acc") -> Interval:
        """a - b on `metric`, paired by seed."""
        return self.paired((a, metric), (b, metric))

    def seeds(self) -> list[int]:
        return self.table.seeds()


# --- scaling ------------------------------------------------------------------------------------------------


def pre(arm: str, budget: str) -> str:
    return f"scaling/pretrain/{arm}/{budget}"


def fine(arm: str, budget: str) -> str:
    return f"scaling/finetune/{arm}/{budget}"


def flops_of(v: Values, arm: str, budget: str) -> float:
    return v.mean(pre(arm, budget), "pretrain_flops")


def budget_axis(ax, v: Values) -> None:
    """Ticks at the budgets (MLM's FLOPs at each), labelled with the FLOPs and the fraction of today's run."""
    ticks = [flops_of(v, "mlm", x) for x in BUDGETS]
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xticks(ticks, [f"{t:.2g}\n({x[1:]}x)" for t, x in zip(ticks, BUDGETS, strict=True)], fontsize=8)


def _curve(ax, xs, ivs, label, color, marker="o", linestyle="-") -> None:
    means = np.array([100 * iv.mean for iv in ivs])
    lo = means - np.array([100 * iv.lo for iv in ivs])
    hi = np.array([100 * iv.hi for iv in ivs]) - means
    ax.errorbar(xs, means, yerr=[lo, hi], label=label, color=color, marker=marker, linestyle=linestyle, capsize=3)


def ranking(v: Values, arms: list[str], budget: str, measure: Callable[[str, str], str], metric: str,
            higher_is_better: bool) -> str:  # fmt: skip
    """'A > B +1.2 (0.3 to 2.1) > C ...': arms best first, each step with its paired interval."""
    key = {a: v.mean(measure(a, budget), metric) for a in arms}
    order = sorted(arms, key=lambda a: -key[a] if higher_is_better else key[a])
    parts = [ARMS[order[0]]]
    for better, worse in itertools.pairwise(order):
        iv = v.difference(measure(better, budget), measure(worse, budget), metric)
        if not higher_is_better:
            iv = Interval(-iv.mean, -iv.hi, -iv.lo, iv.seeds, iv.df)
        parts.append(f"**{signed(iv)}** {ARMS[worse]}")
    return " > ".join(parts)


def crossovers(v: Values, arms: list[str], measure: Callable[[str, str], str], metric: str) -> list[str]:
    """Every pair of arms whose order (by mean) changes between two neighbouring budgets, with both paired
    differences; 'resolved' when both intervals exclude zero."""
    lines = []
    for a, b in itertools.combinations(arms, 2):
        diffs = [v.difference(measure(a, x), measure(b, x), metric) for x in BUDGETS]
        for (x0, d0), (x1, d1) in itertools.pairwise(zip(BUDGETS, diffs, strict=True)):
            if (d0.mean > 0) != (d1.mean > 0):
                sure = "resolved" if not d0.contains_zero and not d1.contains_zero else "within noise"
                lines.append(f"- {ARMS[a]} − {ARMS[b]}: {signed(d0)} at {x0}, {signed(d1)} at {x1} ({sure})")
    return lines


def scaling_page(v: Values, out: Path) -> list[str]:
    arms = [a for a in ARMS if v.has(pre(a, "x1"), "pretrain_flops")]
    tuned = [a for a in arms if v.has(fine(a, "x1"), "val/acc")]  # the arms that were fine-tuned
    cloze = [a for a in CLOZE if a in arms]
    colors = dict(zip(ARMS, plt.get_cmap("tab10").colors, strict=False))
    seeds = v.seeds()
    text = [f"Seeds {', '.join(map(str, seeds))}. Budgets are fractions of today's MLM run (3.655e11 FLOPs: "
            "1,000 steps of batch 64 at width 32); the x-axes show the FLOPs each run spent, as it counted "
            "them (`minibert.flops`: matmuls, a multiply-add 2 FLOPs, backward 2x forward), pre-training only.",
            ""]  # fmt: skip

    # figure 1: gap to the ceiling against FLOPs
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    for a in cloze:
        _curve(ax, [flops_of(v, a, x) for x in BUDGETS], [v.gap(pre(a, x)) for x in BUDGETS], ARMS[a], colors[a])
    ax.set(xscale="log", xlabel="pre-training FLOPs", ylabel="gap to the exact ceiling (points, 15% cloze)",
           title="Cloze test: gap to the ceiling (lower is better)")  # fmt: skip
    ax.legend(fontsize=8)
    if "next_token" in arms:
        a = "next_token"
        _curve(ax2, [flops_of(v, a, x) for x in BUDGETS], [v.gap(pre(a, x)) for x in BUDGETS], ARMS[a], colors[a])
    ax2.set(xscale="log", xlabel="pre-training FLOPs", ylabel="gap to the causal ceiling (points)",
            title="Next-token prediction: its own gap")  # fmt: skip
    for axis in (ax, ax2):
        axis.axhline(0, color="grey", linewidth=0.8)
        axis.grid(alpha=0.3)
        budget_axis(axis, v)
    fig.tight_layout()
    fig.savefig(out / "scaling_gap.png", dpi=100)
    plt.close(fig)

    # figure 2: fine-tuning accuracy against pre-training FLOPs
    fig, ax = plt.subplots(figsize=(9, 5))
    for a in tuned:
        _curve(ax, [flops_of(v, a, x) for x in BUDGETS], [v.accuracy(fine(a, x)) for x in BUDGETS], ARMS[a], colors[a])
    if v.has("scaling/finetune/no_pretrain", "val/acc"):
        iv = v.accuracy("scaling/finetune/no_pretrain")
        ax.axhspan(100 * iv.lo, 100 * iv.hi, color="grey", alpha=0.25, label=f"no pre-training ({points(iv)})")
    ax.axhline(100, color="black", linewidth=0.8, label="ceiling (the oracle is exact: 100%)")
    ax.set(xscale="log", xlabel="pre-training FLOPs of the encoder", ylabel="full fine-tuning accuracy (%)",
           title="Grammaticality after full fine-tuning, against pre-training compute")  # fmt: skip
    ax.grid(alpha=0.3)
    budget_axis(ax, v)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "scaling_finetune.png", dpi=100)
    plt.close(fig)

    text += [f"![gap to the ceiling against FLOPs]({out.name}/scaling_gap.png)", "", caption(v, out), "",
             f"![fine-tuning accuracy against pre-training FLOPs]({out.name}/scaling_finetune.png)", "",
             caption(v, out), ""]  # fmt: skip

    header = "| arm | " + " | ".join(BUDGETS) + " |"
    rule = "|---|" + "---|" * len(BUDGETS)
    text += ["## Pre-training: steps and gap to the ceiling", "",
             "Each cell: the steps its budget bought, then the gap to the exact ceiling in points (mean, 95% "
             "interval, paired by seed). MLM-type arms are graded on the 15% cloze test (the causal arm against the "
             "causal ceiling); next-token LM on its own next-token question. ELECTRA's discriminator has no ceiling: "
             "its cells give its detection accuracy instead (original or replaced, every bracket position), which "
             "compares its two widths with each other only, and against the guess that every token is original: "
             f"{100 * always_original(v):.1f}% on these questions.", "", header, rule]  # fmt: skip
    for a in arms:
        cells = []
        for x in BUDGETS:
            steps, e = v.mean(pre(a, x), "step"), pre(a, x)
            figure = points(v.gap(e)) if v.has(e, "val/ceiling/acc") else f"detection {points(v.accuracy(e))}"
            cells.append(f"{steps:,.0f} steps: {figure}")
        text.append(f"| {ARMS[a]} | " + " | ".join(cells) + " |")
    text += ["", "## Full fine-tuning accuracy", "", header, rule]
    for a in tuned:
        text.append(f"| {ARMS[a]} | " + " | ".join(points(v.accuracy(fine(a, x))) for x in BUDGETS) + " |")
    if v.has("scaling/finetune/no_pretrain", "val/acc"):
        text += ["", f"No pre-training (the same fine-tuning from random weights): "
                     f"{points(v.accuracy('scaling/finetune/no_pretrain'))}."]  # fmt: skip

    text += ["", "## Rankings at each budget", "",
             "Best first; between neighbours, the paired difference in points with its 95% interval.", "",
             "Fine-tuning accuracy (every arm):", ""]  # fmt: skip
    text += [f"- {x}: {ranking(v, tuned, x, fine, 'val/acc', True)}" for x in BUDGETS]
    text += ["", "Gap to the ceiling (the bidirectional cloze arms, graded on the same questions):", ""]
    bidirectional = [a for a in cloze if a != "mlm_causal"]
    text += [f"- {x}: {ranking(v, bidirectional, x, pre, 'val/gap/acc', False)}" for x in BUDGETS]
    text += ["", "## Crossovers", "",
             "Pairs of arms whose order changes between neighbouring budgets (A − B at each):", "",
             "Fine-tuning accuracy:", ""]  # fmt: skip
    text += crossovers(v, tuned, fine, "val/acc") or ["- none"]
    text += ["", "Cloze accuracy (bidirectional arms; higher accuracy is a smaller gap):", ""]
    text += crossovers(v, bidirectional, pre, "val/acc") or ["- none"]
    text += ["", "## What the next-token half buys", "",
             "Next-token LM then MLM spends half of its budget on each. Against MLM at half the budget (the same "
             "MLM steps, without the next-token half), on the cloze test, paired by seed (its accuracy minus "
             "MLM's, in points):", ""]  # fmt: skip
    for half, whole in itertools.pairwise(BUDGETS):
        iv = v.difference(pre("next_token-then-mlm", whole), pre("mlm", half))
        text.append(f"- at {whole}, against MLM at {half}: {signed(iv)}")
    text += ["", *scaling_claims(v)]
    return text


def always_original(v: Values) -> float:
    """The detection accuracy of calling every token original, on ELECTRA's validation questions."""
    e = pre("electra", "x1")
    return v.mean(e, "val/n_original") / v.mean(e, "val/n")


def _claim_row(claim: str, where: str, iv: Interval, positive: bool = True) -> str:
    return f"| {claim} | {where} | {signed(iv)} | {100 * detectable(iv):.1f} | {verdict(iv, positive)} |"


def scaling_claims(v: Values) -> list[str]:
    rows = ["## The published claims, read here", "",
            "Fine-tuning accuracy differences in points, paired by seed; detectable: the true difference these seeds "
            "would find with 80% power.", "",
            "| claim | where | A − B (95% interval) | detectable | verdict |", "|---|---|---|---|---|"]  # fmt: skip
    for x in BUDGETS:
        rows.append(_claim_row("ELECTRA beats MLM at equal compute (Clark et al. 2020)", f"width 32, {x}",
                               v.difference(fine("electra", x), fine("mlm", x))))  # fmt: skip
    for x in BUDGETS[:2]:
        rows.append(_claim_row("next-token LM is more data-efficient: better than MLM on little compute (2025)",
                               x, v.difference(fine("next_token", x), fine("mlm", x))))  # fmt: skip
    for x in BUDGETS[-2:]:
        rows.append(_claim_row("MLM gives the better encoder, given enough compute (2025)", x,
                               v.difference(fine("mlm", x), fine("next_token", x))))  # fmt: skip
    for x in BUDGETS:
        rows.append(_claim_row("next-token LM then MLM beats MLM at fixed compute (2025)", x,
                               v.difference(fine("next_token-then-mlm", x), fine("mlm", x))))  # fmt: skip
    # fine-tuning stability: the seeds' spread of fine-tuning accuracy, pooled over the budgets where both arms
    # learned something (the interval above that of no pre-training): at chance every seed agrees, which is
    # not stability
    floor = v.accuracy("scaling/finetune/no_pretrain").hi
    learned = [x for x in BUDGETS if all(v.accuracy(fine(a, x)).lo > floor for a in ("mlm", "next_token"))]
    if len(learned) == 0:
        return [*rows, "", "Fine-tuning stability (2025): no budget where both arms fine-tune above no pre-training."]
    sds = {a: [statistics.stdev(v.by_seed(fine(a, x), "val/acc").values()) for x in learned]
           for a in ("mlm", "next_token")}  # fmt: skip
    pooled = {a: math.sqrt(statistics.fmean(s * s for s in sd)) for a, sd in sds.items()}
    df = len(learned) * (len(v.seeds()) - 1)
    ratio = pooled["next_token"] ** 2 / pooled["mlm"] ** 2
    p = 2 * min(stats.f.cdf(ratio, df, df), 1 - stats.f.cdf(ratio, df, df))
    stable = "holds" if ratio < 1 and p < 0.05 else "does not hold" if ratio > 1 and p < 0.05 else "undecided"
    rows += ["", "Fine-tuning stability (2025: next-token LM fine-tunes more stably): the seeds' SD of fine-tuning "
             "accuracy, pooled over the budgets where both arms fine-tune above no pre-training "
             f"({', '.join(learned)}), "
             f"is {100 * pooled['next_token']:.2f} points after next-token LM and {100 * pooled['mlm']:.2f} after MLM "
             f"(variance ratio {ratio:.2f}, F-test on {df} and {df} degrees of freedom, p = {p:.2f}): "
             f"**{stable}**."]  # fmt: skip
    return rows


# --- masking rate ---------------------------------------------------------------------------------------------


def rate_of(tag: str) -> float:
    return int(tag[1:3]) / 100


def rate_cell(language: str, rate: str, job: str) -> str:
    return f"masking_rate/{language}/{rate}/{job}"


def rate_ceilings(language: str, sentences: int = 4000) -> dict[str, float]:
    """The exact Bayes ceiling of the cloze test at each training recipe's own rate: how much context a
    question at that rate has left (the oracle's mean credit on `sentences` fixed sentences)."""
    from minibert.languages import BracketPairs, Dyck
    from minibert.masking import IGNORE, MaskingRecipe
    from minibert.oracle import mlm_grades

    lang = BracketPairs() if language == "pairs" else Dyck(kinds=4, length=32, max_depth=6)
    out = {}
    for tag in RATES:
        mask_only = tag.endswith("mask_only")
        recipe = MaskingRecipe(
            p_pick=rate_of(tag), p_mask=1.0 if mask_only else 0.8, p_random=0.0 if mask_only else 0.1
        )
        rng = np.random.default_rng([2023, 0])
        ids = lang.sample(rng, sentences)
        masked = recipe.apply(ids, rng, lang)
        credit, _ = mlm_grades(lang, recipe, masked.inputs, masked.labels, causal=False)
        out[tag] = float(credit[masked.labels != IGNORE].mean())
    return out


def masking_rate_page(v: Values, out: Path) -> list[str]:
    langs = [lang for lang in LANGUAGES if v.has(f"masking_rate/{lang}/p15/pretrain", "val/acc")]
    seeds = v.seeds()
    text = [f"Seeds {', '.join(map(str, seeds))}. Every cell spends its language's budget (today's MLM run at 15%), "
            "is graded on the same 15% 80/10/10 questions of its seed against their exact ceiling, and is then fully "
            "fine-tuned. The ceiling at the training rate is the exact oracle's accuracy on questions posed at that "
            "rate (4,000 fixed sentences): it says how much context a training question has left.", ""]  # fmt: skip
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    colors = {"pairs": "tab:blue", "dyck": "tab:orange"}
    for lang in langs:
        ceilings = rate_ceilings(lang)
        plain = [t for t in RATES if not t.endswith("mask_only")]
        xs = [100 * rate_of(t) for t in plain]
        cell = functools.partial(rate_cell, lang)
        _curve(axes[0], xs, [v.gap(cell(t, "pretrain")) for t in plain], LANGUAGES[lang], colors[lang])
        _curve(axes[1], xs, [v.accuracy(cell(t, "full")) for t in plain], LANGUAGES[lang], colors[lang])
        axes[2].plot(xs, [100 * ceilings[t] for t in plain], marker="o", color=colors[lang], label=LANGUAGES[lang])
        for t in ("p15-mask_only", "p40-mask_only"):
            x = 100 * rate_of(t)
            only = dict(marker="s", color=colors[lang], linestyle="none", mfc="white")
            for ax, iv in ((axes[0], v.gap(cell(t, "pretrain"))), (axes[1], v.accuracy(cell(t, "full")))):
                ax.errorbar([x + 1.5], [100 * iv.mean], yerr=[[100 * (iv.mean - iv.lo)], [100 * (iv.hi - iv.mean)]],
                            capsize=3, **only)  # fmt: skip
        text += [f"## {LANGUAGES[lang]}", "",
                 "| training recipe | steps | accuracy at 15% | gap to the 15% ceiling | − 15%'s gap | fine-tuning "
                 "| − 15%'s fine-tuning | ceiling at the training rate |",
                 "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        base = cell("p15", "pretrain")
        for t in RATES:
            p, f = cell(t, "pretrain"), cell(t, "full")
            name = f"{t[1:3]}%, " + ("mask only (100/0/0)" if t.endswith("mask_only") else "80/10/10")
            gap_diff = v.difference(base, p) if t != "p15" else None  # base - p on accuracy = p's gap - base's
            ft_diff = v.difference(f, cell("p15", "full")) if t != "p15" else None
            text.append(
                f"| {name} | {v.mean(p, 'step'):,.0f} | {points(v.accuracy(p))} | {points(v.gap(p))} | "
                f"{signed(gap_diff) if gap_diff else '—'} | {points(v.accuracy(f))} | "
                f"{signed(ft_diff) if ft_diff else '—'} | {100 * ceilings[t]:.1f} |"
            )
        text += ["", "Gap differences are the cell's gap minus 15%'s (negative: better than 15%); fine-tuning "
                 "differences the cell's accuracy minus 15%'s. " + against_15(v, lang), "", *rate_claims(v, lang),
                 ""]  # fmt: skip
    axes[0].set(xlabel="training masking rate (%)", ylabel="gap to the ceiling at 15% (points)",
                title="Cloze test at 15% (lower is better)")  # fmt: skip
    axes[1].set(xlabel="training masking rate (%)", ylabel="full fine-tuning accuracy (%)",
                title="Grammaticality after fine-tuning")  # fmt: skip
    axes[2].set(xlabel="masking rate of the question (%)", ylabel="exact ceiling (%)",
                title="How much context is left: the ceiling at each rate")  # fmt: skip
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Masking rate at equal compute (squares: mask-only, 100/0/0)")
    fig.tight_layout()
    fig.savefig(out / "masking_rate.png", dpi=100)
    plt.close(fig)
    return [f"![masking rate at equal compute]({out.name}/masking_rate.png)", "", caption(v, out), "", *text]


def against_15(v: Values, lang: str) -> str:
    """Which training recipes differ from 15% beyond noise, on the cloze test at 15% and after fine-tuning."""
    cell = functools.partial(rate_cell, lang)
    parts = []
    for job, what in (("pretrain", "on the cloze test at 15%"), ("full", "after fine-tuning")):
        diffs = {t: v.difference(cell(t, job), cell("p15", job)) for t in RATES if t != "p15"}
        better = [t for t, iv in diffs.items() if iv.lo > 0]
        worse = [t for t, iv in diffs.items() if iv.hi < 0]
        parts.append(f"Beyond noise {what}, better than 15%: {', '.join(better) or 'none'}; "
                     f"worse: {', '.join(worse) or 'none'}.")  # fmt: skip
    return " ".join(parts)


def rate_claims(v: Values, lang: str) -> list[str]:
    cell = functools.partial(rate_cell, lang)
    rows = ["| claim (Wettig et al. 2023) | measured by | A − B (95% interval) | detectable | verdict |",
            "|---|---|---|---|---|"]  # fmt: skip
    for job, what in (("pretrain", "accuracy at 15%"), ("full", "fine-tuning")):
        rows.append(_claim_row("40% beats 15%", what, v.difference(cell("p40", job), cell("p15", job))))
    # "as good as": no worse than 1 point, to 95% (holds), worse beyond noise (does not hold), else undecided
    for rate in ("p15", "p40"):
        for job, metric, what in (("full", "val/acc", "fine-tuning"),
                                  ("pretrain", "val/acc_kind_mask", "cloze, [MASK] questions only")):  # fmt: skip
            iv = v.difference(cell(f"{rate}-mask_only", job), cell(rate, job), metric)
            word = "holds" if iv.lo > -0.01 else "does not hold" if iv.hi < 0 else "undecided"
            rows.append(f"| mask-only is as good as 80/10/10 (within 1 point), at {rate[1:]}% | {what} | "
                        f"{signed(iv)} | {100 * detectable(iv):.1f} | {word} |")  # fmt: skip
    return rows


def caption(v: Values, out: Path) -> str:
    """What made a figure: the grid's command and wall time on its machine (from `<out>/ablation.md`), and its
    seeds."""
    lines = header_of(out)
    command = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("- command:")), "unknown")
    machine = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("- machine:")), "unknown")
    wall = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("- wall time")), "unknown")
    return f"*Made by {command} (wall time {wall}; machine: {machine}); seeds {', '.join(map(str, v.seeds()))}.*"


PAGES = {
    "scaling": ("scaling.md", "Compute-matched scaling on Dyck", scaling_page),
    "masking_rate": ("masking_rate.md", "The masking rate at equal compute", masking_rate_page),
}


def write_page(name: str, out: Path) -> Path:
    filename, title, build = PAGES[name]
    values = Values(out)
    page = out.parent / filename  # results/scaling.md beside results/scaling/, as results/dyck.md is
    notes = page.read_text().split(NOTES, 1)[1] if page.is_file() and NOTES in page.read_text() else ""
    rel = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    command = f"python scripts/equal_compute.py {name} --out {rel}"
    text = [f"# {title}", "", f"Built by `{command}` from `{rel}/ablation.csv`,",
            "which this run of the grid wrote:", "", *header_of(out), ""]  # fmt: skip
    text += [*build(values, out), "", NOTES]
    write_atomic(page, "\n".join(text) + (notes if notes else "\n"))
    return page


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("page", choices=sorted(PAGES))
    p.add_argument("--out", required=True, help="the grid's --out folder (it holds ablation.csv)")
    args = p.parse_args(argv)
    try:
        page = write_page(args.page, Path(args.out).resolve())
    except Missing as err:
        print(f"equal_compute.py: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"equal_compute.py: error: cannot write into {args.out}: {err.strerror or err}", file=sys.stderr)
        return 3
    print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
