"""What a run's summary keys mean: which accuracy, of which head, on which category, and how to label it.

Accuracy keys are `val/<prefix>acc[_<category>]`, with `<prefix>` empty or a head's name (`mlm/`, `nsp/`,
`generator/`). Each may come with its question count `val/<prefix>n[_<category>]` and the oracle's
figures on the same questions: where they bound the accuracy, the ceiling `val/<prefix>ceiling/acc[_<category>]`
and the gap `.../gap/acc...` (ceiling minus measured); on a category the model's input does not decide,
the Bayes predictor's own accuracy `.../bayes/acc_<category>`, a reference that a model may beat
(minibert.training.metrics). They belong to their accuracy; they are never metrics of their own.

Example:
    >>> k = parse("val/generator/ceiling/acc_partner_hidden")
    >>> k.prefix, k.role, k.category, k.accuracy
    ('generator/', 'ceiling', 'partner_hidden', 'val/generator/acc_partner_hidden')
    >>> parse("val/loss") is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY = re.compile(
    r"^val/(?P<prefix>(?:[A-Za-z0-9_]+/)*?)(?:(?P<role>ceiling|gap|bayes)/)?(?P<stat>acc|n)(?:_(?P<cat>.+))?$"
)


@dataclass(frozen=True)
class AccKey:
    prefix: str  # '' or 'mlm/', 'nsp/', 'generator/'
    role: str  # 'acc' | 'n' | 'ceiling' | 'gap' | 'bayes'
    category: str  # '' for all graded questions

    def key(self, role: str) -> str:
        """This accuracy's key for another role: key('n') -> 'val/n_opener'."""
        middle = {"acc": "acc", "n": "n", "ceiling": "ceiling/acc", "gap": "gap/acc", "bayes": "bayes/acc"}[role]
        return f"val/{self.prefix}{middle}" + (f"_{self.category}" if self.category else "")

    @property
    def accuracy(self) -> str:
        return self.key("acc")


def parse(metric: str) -> AccKey | None:
    """The accuracy a key belongs to, or None for keys that are not about an accuracy (losses, counts)."""
    m = _KEY.match(metric)
    if m is None:
        return None
    role = m["role"] or m["stat"]
    if m["role"] and m["stat"] != "acc":
        return None
    return AccKey(m["prefix"], role, m["cat"] or "")


# category -> (family, label); distance and depth bins are matched by pattern below
_CATEGORIES = {
    "": ("overall", "all"),
    "opener": ("position", "opener"),
    "closer": ("position", "closer"),
    "partner_visible": ("context", "partner visible"),
    "partner_hidden": ("context", "partner hidden"),
    "kind_mask": ("corruption", "[MASK]"),
    "kind_random": ("corruption", "random token"),
    "kind_kept": ("corruption", "kept token"),
    "is_next": ("pair", "is next"),
    "not_next": ("pair", "not next"),
    "original": ("token", "original"),
    "replaced": ("token", "replaced"),
    "grammatical": ("label", "grammatical"),
    "ungrammatical": ("label", "ungrammatical"),
}
FAMILIES = ("overall", "position", "context", "corruption", "distance", "depth", "pair", "token", "label", "other")
FAMILY_TITLES = {
    "overall": "all graded",
    "position": "position",
    "context": "context: partner",
    "corruption": "corruption of the position",
    "distance": "distance to the partner",
    "depth": "nesting depth",
    "pair": "sentence pair",
    "token": "token",
    "label": "sentence label",
    "other": "other",
}
_BIN = re.compile(r"^(?P<family>dist|depth)_(?P<lo>\d+)(?:_(?P<hi>\d+|plus))?$")


def family(category: str) -> str:
    if category in _CATEGORIES:
        return _CATEGORIES[category][0]
    m = _BIN.match(category)
    return {"dist": "distance", "depth": "depth"}[m["family"]] if m else "other"


def label(category: str, short: bool = False) -> str:
    """A readable label: 'kind_kept' -> 'kept token', 'dist_2_3' -> 'distance 2–3' ('2–3' when `short`, for
    a panel already titled by its family), 'dist_8_plus' -> 'distance 8+'."""
    if category in _CATEGORIES:
        return _CATEGORIES[category][1]
    m = _BIN.match(category)
    if m is None:
        return category.replace("_", " ")
    span = m["lo"] if m["hi"] is None else f"{m['lo']}+" if m["hi"] == "plus" else f"{m['lo']}–{m['hi']}"
    return span if short else f"{'distance' if m['family'] == 'dist' else 'depth'} {span}"


def sort_key(category: str) -> tuple:
    """Families in FAMILIES order; inside one, the order above, bins by their lower edge."""
    fam = family(category)
    m = _BIN.match(category)
    order = list(_CATEGORIES).index(category) if category in _CATEGORIES else 0
    return FAMILIES.index(fam), int(m["lo"]) if m else 0, order, category


@dataclass(frozen=True)
class Measure:
    """What a head's accuracy measures; accuracies of different measures never share an axis."""

    name: str  # file-name friendly
    title: str
    chance: float | None  # the accuracy of a guess that ignores the input, where the task defines one
    chance_label: str = "chance"


MEASURES = {
    "cloze": Measure("cloze", "cloze accuracy (predicting the hidden token)", 1 / 8, "chance (1 of 8 kinds)"),
    "next_token": Measure("next_token", "next-token accuracy (left context only)", 1 / 8, "chance (1 of 8 kinds)"),
    "nsp": Measure("nsp", "next-sentence prediction accuracy (is B the sentence after A?)", 0.5),
    "detection": Measure("detection", "replaced-token detection accuracy (ELECTRA's discriminator)", None),
    "grammaticality": Measure("grammaticality", "grammaticality accuracy (fine-tuned [CLS] classifier)", 0.5),
}


def measure_of(prefix: str, categories: set[str], objective: str = "", language: str = "") -> Measure:
    """The measure of one head's accuracies, from its categories, its prefix and the run's objective class.

    Chance for token prediction is a uniform guess among the bracket language's 8 kinds; for another
    language it is left out (its oracle ceiling says more)."""
    if categories & {"is_next", "not_next"} or prefix == "nsp/":
        m = MEASURES["nsp"]
    elif categories & {"original", "replaced"}:
        m = MEASURES["detection"]
    elif categories & {"grammatical", "ungrammatical"}:
        m = MEASURES["grammaticality"]
    elif prefix == "" and "NextToken" in objective:
        m = MEASURES["next_token"]
    else:
        m = MEASURES["cloze"]
    if m.name in ("cloze", "next_token") and language and "Bracket" not in language:
        m = Measure(m.name, m.title, None)
    return m


HEAD_LABELS = {"": "", "mlm/": "MLM head", "nsp/": "NSP head", "generator/": "generator"}


def head_label(prefix: str) -> str:
    return HEAD_LABELS.get(prefix, prefix.strip("/"))
