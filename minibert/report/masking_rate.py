"""The masking-rate page's figures (results/masking_rate.md), read from the masking-rate grid's table.

The grid (configs/ablations/masking_rate.yaml) pre-trains MLM at each masking rate (`p_pick`) and corruption
(`p_mask`, `p_random`) in each language at equal FLOPs, grades every model on the same 15% 80/10/10 cloze
questions, then fully fine-tunes it. `MaskingRate` reads every recipe against BERT's (15%, 80/10/10), judges the
published claims, and finds fine-tuned encoders that carry less pre-training than their run spent; the page lays
them out.

Example:
    >>> page = MaskingRate(Data.load("results/masking_rate"))  # doctest: +SKIP
    >>> [r.label for r in page.recipes["dyck"]][:2]  # doctest: +SKIP
    ['5%, 80/10/10', '15%, 80/10/10']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from minibert.tables import stats
from minibert.tables.query import Data, Diff, Stat

LANGUAGES = {"pairs": "bracket pairs (seed language)", "dyck": "Dyck (4 types, 32 tokens)"}
BASE = {"p_pick": 0.15, "p_mask": 0.8}  # BERT's 15% 80/10/10, which every recipe is read against
MARGIN = 0.01  # "as good as": within ±1 point
# (what it measures, metric, category, stage)
GAP = ("gap to the 15% ceiling", "val/gap/acc", "", "pretrain")
FINETUNE = ("fine-tuning", "val/acc", "", "finetune")
MASK = ("cloze, [MASK] questions only", "val/acc", "kind_mask", "pretrain")
# (claim, A, B, measures, margin): A - B paired by seed, in each language; a margin asks "as good as"
CLAIMS = [
    ("40% beats 15% (Wettig et al. 2023: 84.5 against 84.2 on MNLI)", {"p_pick": 0.4, "p_mask": 0.8}, BASE,
     [GAP, FINETUNE], None),
    (f"at 15%, mask-only (100/0/0) is as good as 80/10/10, within ±{stats.number(MARGIN)}",
     {"p_pick": 0.15, "p_mask": 1.0}, BASE, [FINETUNE, MASK], MARGIN),
    (f"at 40%, mask-only (100/0/0) is as good as 80/10/10, within ±{stats.number(MARGIN)} (Wettig et al. 2023)",
     {"p_pick": 0.4, "p_mask": 1.0}, {"p_pick": 0.4, "p_mask": 0.8}, [FINETUNE, MASK], MARGIN),
]  # fmt: skip
READ_AGAINST_BASE = (("pretrain", "val/gap/acc"), ("finetune", "val/acc"))


@dataclass(frozen=True)
class Recipe:
    """One cell's masking recipe: the share of positions picked, and of those shown as [MASK] and as a random
    token (the rest are kept)."""

    p_pick: float
    p_mask: float
    p_random: float

    @property
    def label(self) -> str:
        """'15%, 80/10/10': the rate, then MASK/SAME/RND in percent."""
        shares = (self.p_mask, 1 - self.p_mask - self.p_random, self.p_random)
        return f"{stats.number(self.p_pick, 100, 0)}%, " + "/".join(stats.number(x, 100, 0) for x in shares)

    @property
    def is_base(self) -> bool:
        return self.p_pick == BASE["p_pick"] and self.p_mask == BASE["p_mask"]

    def cell(self, language: str, stage: str) -> dict:
        return {"language": language, "p_pick": self.p_pick, "p_mask": self.p_mask, "stage": stage}


@dataclass(frozen=True)
class Short:
    """A fine-tuned encoder that carries less pre-training than its pre-training run spent."""

    language: str
    recipe: str
    got: float  # FLOPs behind the checkpoint fine-tuning loaded
    ran: float  # FLOPs the pre-training run spent

    @property
    def share(self) -> float:
        """The share of its pre-training the fine-tuned encoder carries."""
        return self.got / self.ran


BASE_RECIPE = Recipe(BASE["p_pick"], BASE["p_mask"], 0.0)  # its cells are picked by p_pick and p_mask alone


class MaskingRate:
    languages, margin = LANGUAGES, MARGIN

    def __init__(self, data: Data):
        self.data = data

    @functools.cached_property
    def recipes(self) -> dict[str, list[Recipe]]:
        """{language: its pre-training recipes, by corruption then rate}."""
        found = {}
        for lang in LANGUAGES:
            rows = self.data.rows(stage="pretrain", language=lang, metric="step").drop_duplicates("experiment")
            rows = rows.sort_values(["p_mask", "p_pick"]).to_dict("records")
            found[lang] = [Recipe(r["p_pick"], r["p_mask"], r["p_random"]) for r in rows]
        return found

    def claim_rows(self) -> list[list]:
        """[language, claim, measured by, A − B, verdict, what it says of the claim] for each claim and measure."""
        rows = []
        for lang, name in LANGUAGES.items():
            for claim, a, b, measures, margin in CLAIMS:
                for what, metric, category, stage in measures:
                    c = self.data.diff(metric, dict(a, language=lang, stage=stage), dict(b, language=lang, stage=stage),
                                       category)  # fmt: skip
                    la, lb = ("mask only", "80/10/10") if margin else tuple(
                        f"{stats.number(x['p_pick'], 100, 0)}%" for x in (a, b))  # fmt: skip
                    v = c.verdict(la, lb, margin)
                    holds = ("holds" if v == f"{la} better" or v.startswith("equivalent")
                             else v if v in ("undecided", "no data") else "does not hold")  # fmt: skip
                    rows.append([name, claim, what, c, v, holds])
        return rows

    @property
    def compared_cells(self) -> int:
        """How many cells the per-language tables read against 15% 80/10/10 (every other recipe, twice)."""
        return sum(len(r) for r in self.recipes.values()) * 2 - len(LANGUAGES) * 2

    def short(self) -> list[Short]:
        """The fine-tuned encoders whose checkpoint carries more than one step less than their run spent."""
        found = []
        for lang, name in LANGUAGES.items():
            for r in self.recipes[lang]:
                pre, tuned = r.cell(lang, "pretrain"), r.cell(lang, "finetune")
                ran, got = self.data.stat("pretrain_flops", **pre).mean, self.data.stat("pretrain_flops", **tuned).mean
                if got < ran - self.data.stat("flops_per_step", **pre).mean:
                    found.append(Short(name, r.label, got, ran))
        return found

    def series(self) -> tuple[dict[str, list[tuple[float, Diff]]], dict[str, list[tuple[float, Stat]]]]:
        """({language and corruption: [(rate in %, gap to the 15% ceiling)]}, the same of fine-tuning accuracy)."""
        gaps, tuned = {}, {}
        for lang, name in LANGUAGES.items():
            for r in self.recipes[lang]:
                key = name + (", 100/0/0 (mask only)" if r.p_mask == 1 else ", 80/10/10")
                gap = self.data.between("val/ceiling/acc", "val/acc", **r.cell(lang, "pretrain"))
                accuracy = self.data.stat("val/acc", **r.cell(lang, "finetune"))
                gaps.setdefault(key, []).append((100 * r.p_pick, gap))
                tuned.setdefault(key, []).append((100 * r.p_pick, accuracy))
        return gaps, tuned

    def against_base(self, lang: str, recipe: Recipe, stage: str, metric: str) -> Diff:
        """The recipe's figure minus 15% 80/10/10's in one language at one stage, paired by seed."""
        return self.data.diff(metric, recipe.cell(lang, stage), BASE_RECIPE.cell(lang, stage))

    @functools.cache  # noqa: B019 (one page model per render)
    def language(self, lang: str) -> tuple[list[list], dict[str, dict[str, list[str]]]]:
        """(rows of the language's table, {stage: {"better" / "worse": recipes beyond noise against 15% 80/10/10}})."""
        rows, found = [], {"pretrain": {"better": [], "worse": []}, "finetune": {"better": [], "worse": []}}
        for r in self.recipes[lang]:
            pre, tuned = r.cell(lang, "pretrain"), r.cell(lang, "finetune")
            against = {"pretrain": "(the reference)", "finetune": "(the reference)"}
            if not r.is_base:
                for stage, metric in READ_AGAINST_BASE:
                    c = self.against_base(lang, r, stage, metric)
                    v = {"A better": "better", "B better": "worse"}.get(c.verdict())
                    against[stage] = f"{c}, **{v}**" if v else str(c)
                    if v:
                        found[stage][v].append(r.label)
            steps = stats.number(self.data.stat("step", **pre).mean, 1, 0)
            gap = stats.fmt(self.data.between("val/ceiling/acc", "val/acc", **pre).interval)
            cloze, accuracy = self.data.stat("val/acc", **pre), self.data.stat("val/acc", **tuned)
            rows.append([r.label, steps, cloze, gap, against["pretrain"], accuracy, against["finetune"]])
        return rows, found

    def beyond_noise(self, lang: str, stage: str, side: str) -> str:
        """The recipes better (or worse) than 15% 80/10/10 beyond noise at one stage, or 'none'."""
        return "; ".join(self.language(lang)[1][stage][side]) or "none"
