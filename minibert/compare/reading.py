"""What a comparison says beside its verdicts: what is judged, the design and its cost, the probe's reading of
the same encoders, and for each open pair the seeds its spread would need."""

from __future__ import annotations

import math
import re

from minibert.compare.comparison import Design, Pair, is_gap, is_proportion, seeds_needed
from minibert.pairs.keys import PROBE, ZERO_SHOT
from minibert.tables.query import Data


def measure_line(finetune: bool, metrics: list[str]) -> str:
    """The figures a plug-in comparison judges (`metrics`, one a pair), in one sentence."""
    if finetune:
        return ("the fully fine-tuned accuracy (--finetune): a seed below the language's `fails_below` did not "
                "learn, and its failure rate is reported apart.")  # fmt: skip
    said = []
    if any(is_gap(m) for m in metrics):
        said.append("the cloze gap, val/gap/acc: the exact oracle's accuracy minus the model's on the masked tokens "
                    "of the seed's own validation draw, which both arms grade (lower is better)")  # fmt: skip
    if ZERO_SHOT in metrics or PROBE in metrics:
        said.append(f"the minimal pairs, {ZERO_SHOT}: the share of pairs (one edit apart, one sentence in the "
                    "language) whose good sentence the encoder's own objective scores higher, zero-shot, over the "
                    "cells no n-gram floor solves (docs/pairs.md)")  # fmt: skip
    said += [m for m in dict.fromkeys(metrics) if not (is_gap(m) or m in (ZERO_SHOT, PROBE))]
    return "; ".join(said) + ". Nothing is fine-tuned, so no fine-tuning lottery; --finetune judges that."


def design_lines(design: Design, unit: str) -> list[str]:
    """The families, the error each is held at, the band and the seeds: said before the first seed runs."""
    families = ", ".join(f"{k} ({name})" if name else str(k) for name, k in design.families.items())
    together = len(design.families)
    overall = f", so a wrong verdict anywhere with probability at most {design.alpha * together:g}"
    lo, hi = design.band
    return [f"{len(design.pairs)} pair(s) in families of {families}, each family held at {design.alpha:g} (Bonferroni)"
            f"{overall if together > 1 else ''}; a pair stops when one arm wins on most seeds (the sign rule: exact "
            f"whatever the figures' shape, docs/statistics.md) or when A's win rate lies inside {lo:g} to {hi:g} "
            f"(alike); at most {design.cap} seeds per pair, no verdict before {design.first_look(design.pairs)}; "
            f"the mean difference in {unit} is reported beside it."]  # fmt: skip


def cost_lines(
    design: Design, per_seed: float | None, workers: int, minutes: float | None, left: int, looked: int
) -> list[str]:
    """What is left at the recorded pace (`left`: seeds of the first look not yet run; `looked`: seeds every pair
    has looked at already), and where `minutes` stops it. The first runs measure this machine's own pace, which
    is said once they finish."""
    first, cap = design.first_look(design.pairs), design.cap
    resumed = f"resumed after {looked} seeds: " if looked else ""
    if per_seed is None:
        lines = [f"{resumed}no time estimate until the first runs finish: no table in --out or results/ holds these "
                 "arms' wall times."]  # fmt: skip
    else:
        rest = f"the first look about {left * per_seed / 60:.0f} min" if left else "the first look done"
        lines = [f"{resumed}about {per_seed / 60:.1f} min a seed with {workers} workers at the recorded pace (runs' "
                 f"wall times from the machine that made them; the first runs here measure this one's): {rest}, "
                 f"the cap about {(cap - max(looked, first - left)) * per_seed / 60:.0f} min more."]  # fmt: skip
    if minutes is not None:  # the clock, not the estimate, stops it: the pace is re-measured on every seed
        fits = "" if per_seed is None else f" (about {max(first, math.floor(minutes * 60 / per_seed))} seeds)"
        lines.append(f"--minutes {minutes:g}: stops before a seed that would pass it{fits}, at the pace this machine "
                     "shows.")  # fmt: skip
    return lines


def probe_lines(data: Data | None, pairs: list[Pair]) -> list[str]:
    """For every pair judged zero-shot on minimal pairs, the probe's reading of the same seeds beside it: a
    fixed-sample 95% interval of A - B, printed for reading and not a verdict (the probe is not what is judged)."""
    if data is None:
        return []
    lines = []
    for p in pairs:
        if p.metric != ZERO_SHOT or any(data.find(PROBE, experiment=arm) is None for arm in (p.a, p.b)):
            continue
        iv = data.diff(PROBE, {"experiment": p.a}, {"experiment": p.b}).interval
        lines.append(f"- {p.a} − {p.b}, probe ({PROBE}): {100 * iv.mean:+.1f} ({100 * iv.lo:+.1f} to "
                     f"{100 * iv.hi:+.1f}) points over {iv.seeds} seeds")  # fmt: skip
    if lines:
        lines = ["", "The rule-free reading of the same encoders (docs/pairs.md), a fixed-sample 95% interval for "
                 "reading beside the verdicts, not a verdict:", "", *lines]  # fmt: skip
    return lines


def next_steps(data: Data, design: Design, judged: list, command: str, pace: float | None = None) -> list[str]:
    """For every pair still open or capped, what it rests on, why it is open, the seeds the sign rule would need
    at the wins seen so far (with minutes at `pace`, seconds a seed of every arm), and the command that continues
    the comparison to that many seeds (the sequence goes on; nothing is re-run)."""
    lines, most = [], 0
    for j in judged:
        if j.decided or j.verdict.reason == "every seed tied" or len(j.diffs) < 2:
            continue
        need = seeds_needed(design, j)
        a, b = j.pair.a.rsplit("/", 1)[-1], j.pair.b.rsplit("/", 1)[-1]
        v = j.verdict
        why = (
            f"{a} and {b} split their untied seeds near one half, too few yet to say they are alike"
            if v.wins and v.losses and abs(v.wins - v.losses) <= max(1, v.untied // 5)
            else f"{v.wins} wins of {v.untied} untied seeds are too few yet for the sign rule at alpha {j.alpha:.3g}"
        )
        when = "more than 500 seeds" if need is None else f"about {need} seeds" + (
            f" (about {need * pace / 60:.0f} min at this pace)" if pace else "")  # fmt: skip
        scale = 100 if is_proportion(j.pair.metric) else 1
        lines.append(f"- {j.pair.a} vs {j.pair.b}: {j.meaning(a, b, scale)}; open because {why}: a decision "
                     f"would take {when}")  # fmt: skip
        most = max(most, need or 0)
    if not lines:
        return []
    rerun = re.sub(r"\s--(max-seeds|minutes)[ =]\S+", "", command) + f" --max-seeds {max(most, design.cap + 1)}"
    return ["", "Open pairs, at the wins seen so far (a planning figure, not a promise):", "", *lines, "",
            f"Continue (every seed run so far is reused): `{rerun}`"]  # fmt: skip
