"""What a run's summary keys mean: which accuracy, of which head, on which category, and how a page names it.

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


# category -> its label; distance and depth bins are matched by pattern below
_LABELS = {
    "opener": "opener",
    "closer": "closer",
    "partner_visible": "partner visible",
    "partner_hidden": "partner hidden",
    "kind_mask": "[MASK]",
    "kind_random": "random token",
    "kind_kept": "kept token",
    "is_next": "is next",
    "not_next": "not next",
    "original": "original",
    "replaced": "replaced",
    "grammatical": "grammatical",
    "ungrammatical": "ungrammatical",
}
_BIN = re.compile(r"^(?P<family>dist|depth)_(?P<lo>\d+)(?:_(?P<hi>\d+|plus))?$")


def label(category: str) -> str:
    """A category as pages and dashboards name it: 'kind_kept' -> 'kept token', 'dist_2_3' -> 'distance 2–3',
    'dist_8_plus' -> 'distance 8+', a plug-in's own with its underscores as spaces."""
    if category in _LABELS:
        return _LABELS[category]
    m = _BIN.match(category)
    if m is None:
        return category.replace("_", " ")
    span = m["lo"] if m["hi"] is None else f"{m['lo']}+" if m["hi"] == "plus" else f"{m['lo']}–{m['hi']}"
    return f"{'distance' if m['family'] == 'dist' else 'depth'} {span}"
