"""The results digest's figures (docs/results.md): one paragraph per grid, each read from that grid's table.

`Digest` answers, for each grid, the few questions its paragraph states: where MLM leads at equal compute and
which published claims hold (scaling), which masking rates differ from 15% (masking rate), whether a layer beats
its embeddings and who encodes depth (structure), which position scheme keeps its gap past the training length
(length), how MLM stands against text's n-gram references (text) and the cheapest recipe that beats the trigram
(text recipe). The template words the answers; every verdict is the grid's own, held with its page's others.

Example:
    >>> from minibert.report.render import Renderer  # doctest: +SKIP
    >>> r = Renderer(".")  # doctest: +SKIP
    >>> Digest(r.grid, r.transfer).scaling().budgets  # doctest: +SKIP
    ['x0.0625', 'x0.125', 'x0.25', 'x0.5', 'x1']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from minibert.report.asked import asked
from minibert.report.length import HOLDS_WITHIN, PAST, Length
from minibert.report.masking_rate import BASE_RECIPE, MaskingRate
from minibert.report.scaling import Scaling
from minibert.report.structure import Structure
from minibert.report.text_recipe import TextRecipe
from minibert.report.transfer import Transfer
from minibert.tables import arms, stats
from minibert.tables.query import Data, Diff, Stat

NO_PRETRAIN = {"regime": arms.SCRATCH}
SCHEMES = {"learned": "learned", "sinusoidal": "sinusoidal", "rotary": "rotary", "alibi": "ALiBi", "none": "no"}
REFERENCES = {"unigram": ("the unigram", "unigram"), "left_bigram": ("the left bigram", "bigram"),
              "left_right_trigram": ("the left+right trigram", "trigram")}  # fmt: skip
AGREEMENT_WORDS = {"holds": "holds for", "reverses": "reverses for", "undecided on text": "is undecided on text for",
                   "undecided on Dyck": "is undecided on Dyck for"}  # fmt: skip


def _rates(ps: list[float], last: str = ", ") -> str:
    """'5%, 40%' (or '5% and 40%' with `last=" and "`): masking rates in percent."""
    shown = [f"{stats.number(p, 100, 0)}%" for p in ps]
    return last.join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else ", ".join(shown)


@dataclass(frozen=True)
class ScalingDigest:
    budgets: list[str]
    lead: str  # where MLM's cloze gap is smaller than every other cloze arm's beyond noise
    gaps: dict[str, str]  # arm -> its gap to the ceiling at the largest budget, in points
    tuned: str  # the fine-tuning sentence (MLM against chance, then against its rivals)
    claims: str  # the published claims and where each holds
    electra: Stat  # ELECTRA's discriminator accuracy at the largest budget
    all_original: float  # what calling every token original scores there
    today: float  # FLOPs of today's MLM run, the unit of the budgets


@dataclass(frozen=True)
class RateDigest:
    rates: tuple[float, float]  # the least and largest 80/10/10 rate, on both languages
    mask_only: str  # the mask-only rates: '15% and 40%'
    pairs_max_gap: float  # the largest 80/10/10 gap on bracket pairs
    pairs_against_15: str
    dyck_same: str
    dyck_plateau: tuple[float, float]  # the least and largest mean gap among the rates within noise of 15%
    dyck_worse: str
    dyck_better: str
    wettig: Diff  # Dyck's gap at 40% - at 15%


@dataclass(frozen=True)
class StructureDigest:
    beats: list[str]  # "MLM layer 1": contextual layers beating their embeddings' UUAS beyond noise
    embeddings: tuple[float, float]  # the least and largest embeddings' UUAS
    top: str  # the objective with the highest depth Spearman by mean
    top_depth: tuple[float, int]  # (its Spearman, its layer)
    mlm_depth: tuple[float, int]
    depth_claim: str  # "holds", "does not hold" or "is undecided"
    depth_by_layer: str  # MLM − next-token LM at each layer, with its verdict


@dataclass(frozen=True)
class LengthDigest:
    least: str  # the scheme whose MLM gap grows least by mean at 64
    growth: list[Diff]  # its growth at 48 and at 64
    learned: list[Diff]  # learned positions' growth at 48 and at 64
    rotary: str  # rotary against learned, per objective and length
    verdict: str  # the closing sentence


@dataclass(frozen=True)
class TextDigest:
    reference: str  # the strongest n-gram reference, named
    reference_stat: Stat
    mlm: Stat  # MLM's cloze accuracy
    against: str  # MLM against each reference
    ranking: str  # how Dyck's comparisons fare on text


@dataclass(frozen=True)
class TextRecipeDigest:
    experiment: str | None  # the cheapest arm that beats the trigram, None where none does
    width: int = 0
    layers: int = 0
    steps: int = 0
    wall_s: float = 0.0  # one run's mean wall time
    against: Diff | None = None  # its accuracy minus the trigram's


class Digest:
    budget_s = TextRecipe.budget_s

    def __init__(self, grid: Callable[[str], Data], transfer: Callable[[], Transfer]):
        self.grid, self.transfer = grid, transfer

    @functools.cache  # noqa: B019 (one digest per render)
    def scaling(self) -> ScalingDigest:
        page = Scaling(self.grid("scaling"))
        sc, budgets = page.data, page.budgets

        def cell(arm: str, budget: str) -> dict:
            return {"experiment": f"scaling/pretrain/{arm}/{budget}"}

        def tuned(arm: str, budget: str) -> dict:
            return {"stage": "finetune", "arm": arm, "budget": budget}

        control = page.control
        cloze = [a for a in page.cloze if a != control]  # the cloze arms the control's gap is read against
        rivals = [a for a in page.tuned if a != control]  # the fine-tuned arms it is read against
        lead = []
        for x in budgets:
            verdicts = [sc.diff("val/gap/acc", cell(control, x), cell(a, x)).verdict() for a in cloze]
            if all(v == "A better" for v in verdicts):
                lead.append(x)
        where = ("at every budget" if len(lead) == len(budgets)
                 else f"at {', '.join(lead) or 'no budget'} of {', '.join(budgets)}")  # fmt: skip
        last = budgets[-1]
        gaps = {a: stats.number(sc.between("val/ceiling/acc", "val/acc", **cell(a, last)).mean)
                for a in (control, *cloze)}  # fmt: skip

        chance = stats.number(sc.stat("val/acc", **NO_PRETRAIN).mean)
        above = []
        for x in budgets:
            if sc.diff("val/acc", tuned(control, x), NO_PRETRAIN).verdict() != "A better":
                continue
            lost, behind = [], []
            for a in rivals:
                v = sc.diff("val/acc", tuned(control, x), tuned(a, x)).verdict()
                if v == "undecided":
                    lost.append(arms.label(a))
                elif v == "B better":
                    behind.append(arms.label(a))
            standing = "better than each beyond noise" if not lost and not behind else ", ".join(
                [*([f"undecided against {' and '.join(lost)}"] if lost else []),
                 *([f"behind {' and '.join(behind)} beyond noise"] if behind else [])])  # fmt: skip
            above.append((x, f"at {x} ({stats.number(sc.stat('val/acc', **tuned(control, x)).mean)}%) "
                             f"{arms.label(control)} is {standing}"))  # fmt: skip
        names = [arms.label(a) for a in rivals]
        against = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        if above:
            sentence = (f"Full fine-tuning after {arms.label(control)} leaves chance (no pre-training: {chance}%) "
                        f"beyond noise at {', '.join(x for x, _ in above)}; there, against {against}, "
                        f"{'; '.join(s for _, s in above)}.")  # fmt: skip
        else:
            sentence = (f"Full fine-tuning after {arms.label(control)} leaves chance (no pre-training: {chance}%) "
                        "beyond noise at no budget, once its verdicts are held together with the table's "
                        "others.")  # fmt: skip

        claims = "; ".join(f'"{text}" {said}' for text, said in page.claim_outcomes()) + "."
        detector = next(a for a in page.pretrained if arms.arm(a).generator)  # the first arm read on its generator
        electra = {"experiment": f"scaling/pretrain/{detector}/{last}"}
        everything = sc.stat("val/acc", **electra)
        return ScalingDigest(budgets, where, gaps, sentence, claims, everything,
                             sc.stat("val/acc", "original", **electra).n / everything.n, page.today)  # fmt: skip

    @functools.cache  # noqa: B019
    def masking_rate(self) -> RateDigest:
        page = MaskingRate(self.grid("masking_rate"))
        found = {}
        for lang in page.languages:
            out = {"same": [], "better": [], "worse": [], "gaps": []}
            for r in (r for r in page.recipes[lang] if r.p_mask == BASE_RECIPE.p_mask):  # 80/10/10, by rate
                out["gaps"].append(page.data.stat("val/gap/acc", **r.cell(lang, "pretrain")).mean)
                if not r.is_base:
                    v = page.against_base(lang, r, "pretrain", "val/gap/acc").verdict()
                    out["same" if v == "undecided" else "better" if v == "A better" else "worse"].append(r.p_pick)
            found[lang] = out
        pairs, dyck = found["pairs"], found["dyck"]
        against = ("no other 80/10/10 rate differs beyond noise" if not pairs["better"] and not pairs["worse"]
                   else f"better beyond noise: {_rates(pairs['better']) or 'none'}; worse: "
                        f"{_rates(pairs['worse']) or 'none'}")  # fmt: skip
        at = {"p_mask": BASE_RECIPE.p_mask, "language": "dyck", "stage": "pretrain"}
        plateau = [page.data.stat("val/gap/acc", p_pick=p, **at).mean for p in [*dyck["same"], BASE_RECIPE.p_pick]]
        wettig = page.data.diff("val/gap/acc", dict(at, p_pick=0.4), dict(at, p_pick=BASE_RECIPE.p_pick))
        rates = sorted({r.p_pick for lang in page.languages for r in page.recipes[lang]
                        if r.p_mask == BASE_RECIPE.p_mask})  # fmt: skip
        mask_only = sorted({r.p_pick for lang in page.languages for r in page.recipes[lang] if r.p_mask == 1})
        return RateDigest((rates[0], rates[-1]), _rates(mask_only, " and "), max(pairs["gaps"]), against,
                          _rates(dyck["same"]), (min(plateau), max(plateau)), _rates(dyck["worse"]),
                          _rates(dyck["better"]), wettig)  # fmt: skip

    @functools.cache  # noqa: B019
    def structure(self) -> StructureDigest:
        page = Structure(self.grid("structure"))
        beats = [f"{arms.label(a)} layer {layer}" for a in page.arms for layer in (1, 2)
                 if page.over_embeddings(a, layer, "uuas").verdict() == "A better"]  # fmt: skip
        embeddings = [page.stat("probe", 0, "uuas", a).mean for a in page.arms]
        depth = {a: max((page.stat("probe", layer, "depth_spearman", a).mean, layer) for layer in (1, 2))
                 for a in page.arms}  # fmt: skip
        top = sorted(depth.items(), key=lambda item: item[1])[-1][0]
        against = [(layer, page.depth_against(asked().depth_against, layer)) for layer in (1, 2)]
        words = [c.verdict() for _, c in against]
        claim = ("holds" if words.count("A better") == 2 else "does not hold" if "B better" in words
                 else "is undecided")  # fmt: skip
        by_layer = ", ".join(f"at layer {layer} = {stats.fmt(c.interval, 1, 3, True)} "
                             f"({c.verdict(arms.label(page.control), arms.label(asked().depth_against))})"
                             for layer, c in against)  # fmt: skip
        return StructureDigest(beats, (min(embeddings), max(embeddings)), arms.label(top), depth[top],
                               depth[page.control], claim, by_layer)  # fmt: skip

    @functools.cache  # noqa: B019
    def length(self) -> LengthDigest:
        page = Length(self.grid("length"))
        grow = {p: [page.growth(arms.control(), p, n) for n in PAST] for p in SCHEMES}
        least = sorted((grow[p][1].mean, p) for p in SCHEMES)[0][1]
        held = {(o, p): page.growth(o, p, PAST[-1]).verdict(margin=HOLDS_WITHIN) for o in page.objectives
                for p in SCHEMES}  # fmt: skip
        kept = [f"{o} {p}" for (o, p), v in held.items() if v.startswith("equivalent")]
        rotary = [(name, n, page.against_learned(o, "rotary", n)) for o, name in page.objectives.items() for n in PAST]
        won = sum(c.verdict() == "A better" for _, _, c in rotary)
        said = "; ".join(f"{name} at {n}, {c.say('rotary', 'learned')}" for name, n, c in rotary) + "."
        verdict = ("So rotary beats learned past the training length (Allen-Zhu & Li's direction)" if won == len(rotary)
                   else "So rotary does not beat learned beyond noise at every length and objective")  # fmt: skip
        verdict += ", while " + ("no objective and scheme keeps its gap within 2 points at 64" if not kept
                                 else f"{', '.join(kept)} keep their gap within 2 points at 64")  # fmt: skip
        return LengthDigest(SCHEMES[least].capitalize(), grow[least], grow["learned"], said, verdict + ".")

    @functools.cache  # noqa: B019
    def text(self) -> TextDigest:
        """The strongest reference, the control's accuracy against each, and Dyck's ranking on text, in words."""
        tx, control = self.grid("text"), arms.control()
        named = arms.label(control)
        mlm = {"experiment": f"text/pretrain/{control}"}
        strongest, best = None, None
        for r in REFERENCES:
            s = tx.stat(f"val/reference/{r}/acc", **mlm)
            if best is None or s.mean > best.mean:
                strongest, best = r, s
        against = "; ".join(f"{name}, {tx.between('val/acc', f'val/reference/{r}/acc', **mlm).say(named, short)}"
                            for r, (name, short) in REFERENCES.items()) + "."  # fmt: skip
        agree = self.transfer().by_agreement()
        ranking = []
        for i, word in enumerate(w for w in AGREEMENT_WORDS if w in agree):
            who = f"Dyck's ranking, paired by seed on the text grid's {len(tx.seeds())} seeds," if i == 0 else " It"
            each = "; ".join(f"{'the cloze' if r.question.cloze else 'fine-tuning'}, {r.question.a} against "
                             f"{r.question.b} ({r.text.diff.say(r.question.a, r.question.b)})"
                             for r in agree[word])  # fmt: skip
            ranking.append(f"{who} {AGREEMENT_WORDS[word]} {each}.")
        return TextDigest(REFERENCES[strongest][0], best, tx.stat("val/acc", **mlm), against, "".join(ranking))

    @functools.cache  # noqa: B019
    def text_recipe(self) -> TextRecipeDigest:
        page = TextRecipe(self.grid("text_recipe"))
        e = page.chosen
        if e is None:
            return TextRecipeDigest(None)
        row = page.data.rows(experiment=e).iloc[0]
        return TextRecipeDigest(e, int(row["width"]), int(row["layers"]), int(row["max_steps"]),
                                page.data.stat("wall_time_s", experiment=e).mean, page.against(e))  # fmt: skip
