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
    r"^val/(?P<prefix>(?:[A-Za-z0-9_-]+/)*?)(?:(?P<role>ceiling|gap|bayes)/)?(?P<stat>acc|n)(?:_(?P<cat>.+))?$"
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


@dataclass(frozen=True)
class Measure:
    """What a head's accuracy measures (from the run's summary: minibert.objectives.Scoreboard), and how its
    categories read; accuracies of different measures never share an axis."""

    name: str  # file-name friendly
    title: str
    chance: float | None  # the accuracy of a guess that sees nothing but the position, where the task defines one
    chance_label: str = "chance"
    labels: tuple[tuple[str, str, str], ...] = ()  # (category, family, label) for categories of a plug-in's own

    def _own(self, category: str) -> tuple[str, str] | None:
        return next(((f, lab) for c, f, lab in self.labels if c == category), None)

    def family(self, category: str) -> str:
        if (own := self._own(category)) is not None:
            return own[0]
        if category in _CATEGORIES:
            return _CATEGORIES[category][0]
        m = _BIN.match(category)
        return {"dist": "distance", "depth": "depth"}[m["family"]] if m else "other"

    def label(self, category: str, short: bool = False) -> str:
        """A readable label: 'kind_kept' -> 'kept token', 'dist_2_3' -> 'distance 2–3' ('2–3' when `short`,
        for a panel already titled by its family), 'dist_8_plus' -> 'distance 8+'."""
        if (own := self._own(category)) is not None:
            return own[1]
        if category in _CATEGORIES:
            return _CATEGORIES[category][1]
        m = _BIN.match(category)
        if m is None:
            return category.replace("_", " ")
        span = m["lo"] if m["hi"] is None else f"{m['lo']}+" if m["hi"] == "plus" else f"{m['lo']}–{m['hi']}"
        return span if short else f"{'distance' if m['family'] == 'dist' else 'depth'} {span}"

    def sort_key(self, category: str) -> tuple:
        """Families in FAMILIES order (a plug-in's own before 'other'); inside one, the order above, bins by
        their lower edge."""
        fam = self.family(category)
        m = _BIN.match(category)
        order = list(_CATEGORIES).index(category) if category in _CATEGORIES else 0
        rank = FAMILIES.index(fam) if fam in FAMILIES else FAMILIES.index("other") - 0.5
        return rank, int(m["lo"]) if m else 0, order, category


_TITLES = {
    "cloze": "cloze accuracy (predicting the hidden token)",
    "next_token": "next-token accuracy (left context only)",
    "nsp": "next-sentence prediction accuracy (is B the sentence after A?)",
    "detection": "replaced-token detection accuracy (ELECTRA's discriminator)",
    "grammaticality": "grammaticality accuracy (fine-tuned [CLS] classifier)",
    "accuracy": "accuracy",
}


def measure(name: str, chance: float | None = None, labels: list | tuple = ()) -> Measure:
    """The Measure a summary's scoreboard describes: its title by name (a plug-in's own name is its title),
    and a chance line labelled with what it is."""
    label = "chance"
    if chance and name in ("cloze", "next_token") and abs(1 / chance - round(1 / chance)) < 1e-9:
        label = f"chance (1 of {round(1 / chance)} kinds)"
    title = _TITLES.get(name, name.replace("_", " "))
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)  # it names figure files
    return Measure(safe, title, chance, label, tuple(map(tuple, labels)))


HEAD_LABELS = {"": "", "mlm/": "MLM head", "nsp/": "NSP head", "generator/": "generator"}


def head_label(prefix: str) -> str:
    return HEAD_LABELS.get(prefix, prefix.strip("/"))
