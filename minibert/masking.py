"""BERT's masking recipe: pick 15% of content positions; of those, 80% -> [MASK], 10% -> random, 10% kept.

Example:
    >>> import numpy as np
    >>> from minibert.languages import BracketPairs
    >>> rng, lang = np.random.default_rng(0), BracketPairs()
    >>> masked = MaskingRecipe().apply(lang.sample(rng, 4), rng, lang)
    >>> masked.inputs.shape, masked.labels.shape, masked.kind.shape
    ((4, 17), (4, 17), (4, 17))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert.languages.base import MASK_ID, Language
from minibert.references.credit import IGNORE
from minibert.validation import UNIT_INTERVAL, check

# What happened to each position: the per-position `kind` returned by MaskingRecipe.apply.
UNTOUCHED, MASKED, RANDOM, KEPT = 0, 1, 2, 3

# The categories masked-token accuracy is split by: the shared ones a language takes
# (`Language.shared_categories`), then the recipe's own, then the language's own.
SHARED_CATEGORIES = ("opener", "closer", "partner_visible", "partner_hidden")
KIND_CATEGORIES = ("kind_mask", "kind_random", "kind_kept")
# Of these, only "kind_mask" is a function of what the model sees (a position shows [MASK] exactly when it
# was masked), so only it has a per-category Bayes bound; a kept and a replaced token look alike, and the
# true token's class or its partner's fate are hidden. See minibert.oracle.
INPUT_CATEGORIES = ("kind_mask",)
MLM_CATEGORIES = SHARED_CATEGORIES + KIND_CATEGORIES  # what a bracket language gets before its own

_TOLERANCE = 1e-9  # so that 0.7 + 0.2 + 0.1 counts as <= 1


class Masked(NamedTuple):
    inputs: np.ndarray  # (B, T) int64: corrupted ids the encoder sees
    labels: np.ndarray  # (B, T) int64: original id at picked positions, IGNORE elsewhere
    kind: np.ndarray  # (B, T) int64: UNTOUCHED / MASKED / RANDOM / KEPT


@dataclass(frozen=True)
class MaskingRecipe:
    """Rates of the cloze corruption; invalid rates fail here, naming the field.

    p_pick: chance that a content position is picked for grading.
    p_mask: share of picked positions replaced by [MASK]; p_random: by a random content token;
    the remaining 1 - p_mask - p_random are kept as they are.
    """

    p_pick: float = 0.15
    p_mask: float = 0.8
    p_random: float = 0.1

    def __post_init__(self) -> None:
        for name in ("p_pick", "p_mask", "p_random"):
            check("MaskingRecipe", name, getattr(self, name), UNIT_INTERVAL)
        if self.p_mask + self.p_random > 1.0 + _TOLERANCE:
            raise ValueError(
                f"MaskingRecipe.p_mask + p_random = {self.p_mask} + {self.p_random} = "
                f"{self.p_mask + self.p_random:g} is not allowed: it must be <= 1 (the rest are kept)"
            )

    @property
    def p_kept(self) -> float:
        return max(0.0, 1.0 - self.p_mask - self.p_random)

    def expected_shares(self) -> dict[str, float]:
        """Expected share of content tokens in each state: {'mask': 0.12, 'random': 0.015, ...}."""
        return {
            "mask": self.p_pick * self.p_mask,
            "random": self.p_pick * self.p_random,
            "kept": self.p_pick * self.p_kept,
            "picked": self.p_pick,
        }

    def apply(self, ids: np.ndarray, rng: np.random.Generator, language: Language) -> Masked:
        """Corrupt a batch `ids` (B, T) of the language's tokens: only its content tokens may be picked (not
        [CLS], nor an objective's [SEP]), and a random replacement is one of them."""
        picked = language.is_content(ids) & (rng.random(ids.shape) < self.p_pick)
        fate = rng.random(ids.shape)  # one uniform per position decides mask / random / kept
        return self.treat(ids, picked, fate, rng, language)

    def treat(
        self, ids: np.ndarray, picked: np.ndarray, fate: np.ndarray, rng: np.random.Generator, language: Language
    ) -> Masked:
        """The 80/10/10 treatment of the `picked` (B, T) positions: `fate` (B, T) uniforms below p_mask -> [MASK],
        below p_mask + p_random -> a random content token, the rest kept. Recipes that pick differently (spans)
        reuse it; giving a whole span one fate treats the span as a unit."""
        to_mask = picked & (fate < self.p_mask)
        to_random = picked & ~to_mask & (fate < self.p_mask + self.p_random)
        kind = np.full(ids.shape, UNTOUCHED, dtype=np.int64)
        kind[picked] = KEPT
        kind[to_mask] = MASKED
        kind[to_random] = RANDOM
        inputs = ids.copy()
        inputs[to_mask] = MASK_ID
        inputs[to_random] = rng.choice(language.content_ids, size=int(to_random.sum()))
        labels = np.where(picked, ids, IGNORE)
        return Masked(inputs, labels, kind)

    def likelihoods(self, inputs: np.ndarray, language: Language) -> tuple[np.ndarray, np.ndarray]:
        """How likely each corrupted input is under each true token: (context, graded), (B, T, V) float64 each.

        `graded[b, t, w]` = P(inputs[b, t] | true token w, position t picked), the emission of a graded
        position: p_mask if it shows [MASK], p_random / |content| if it shows a content token (any true token
        may be replaced by it), plus p_kept if it shows w itself. `context` is that of a position not known to
        be picked: (1 - p_pick) [shows w] + p_pick graded. Positions are corrupted independently, so the
        posterior of a graded position is its cavity (minibert.oracle) times its graded emission.
        """
        context, by_kind = self.emissions(inputs, language)
        return context, by_kind["kind_mask"] + by_kind["kind_random"] + by_kind["kind_kept"]

    def emissions(self, inputs: np.ndarray, language: Language) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """`likelihoods` with the graded emission split by what happened to the position: (context,
        {"kind_mask": ..., "kind_random": ..., "kind_kept": ...}), each (B, T, V), summing to `graded`."""
        V = language.vocab_size
        shown = np.eye(V, dtype=np.float64)[np.clip(inputs, 0, V - 1)]  # (B, T, V): [inputs == w]
        content = language.is_content(inputs)[..., None]
        by_kind = {
            "kind_mask": self.p_mask * (inputs == MASK_ID)[..., None] * np.ones(V),
            "kind_random": self.p_random / len(language.content_ids) * content * language.is_content(np.arange(V)),
            "kind_kept": self.p_kept * shown,
        }
        graded = by_kind["kind_mask"] + by_kind["kind_random"] + by_kind["kind_kept"]
        pickable = content | (inputs == MASK_ID)[..., None]
        context = np.where(pickable, (1.0 - self.p_pick) * shown + self.p_pick * graded, shown)
        return context, by_kind


def check_gradable(recipe: MaskingRecipe, where: str, what: str, instead: str) -> None:
    """Refuse, as `where`, a recipe whose questions the exact oracle cannot grade: one that picks positions its
    own way (`apply`) or states its emissions its own way (`likelihoods`) without giving `emissions`, the
    oracle's likelihoods, which otherwise assume BERT's independent positions. `what`: whose questions;
    `instead`: what to do."""
    cls = type(recipe)
    own_way = cls.apply is not MaskingRecipe.apply or cls.likelihoods is not MaskingRecipe.likelihoods
    if own_way and cls.emissions is MaskingRecipe.emissions:
        raise ValueError(
            f"{where}={cls.__name__} is not allowed: it picks positions its own way, and the exact oracle that "
            f"grades {what} assumes BERT's independent positions (MaskingRecipe.emissions); {instead}"
        )


def mlm_categories(language: Language) -> tuple[str, ...]:
    """The names `categories` returns columns for: the language's shared ones, the recipe's, its own."""
    if unknown := [c for c in language.shared_categories if c not in SHARED_CATEGORIES]:
        raise ValueError(f"{language!r}.shared_categories names {unknown}: choose among {SHARED_CATEGORIES}")
    if unknown := [c for c in language.input_categories if c not in language.categories]:
        raise ValueError(f"{language!r}.input_categories names {unknown}, not among its own {language.categories}")
    return tuple(language.shared_categories) + KIND_CATEGORIES + tuple(language.categories)


def categories(language: Language, ids: np.ndarray, labels: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Which categories each position of the clean `ids` (B, T) belongs to, columns in `mlm_categories(language)`
    order, shape (B, T, C) bool.

    The partner is *visible* when it is untouched or kept, *hidden* when it became [MASK] or a random
    token. Only picked positions (label != IGNORE) belong to any category.
    """
    picked = labels != IGNORE
    shared = {}
    if {"opener", "closer"} & set(language.shared_categories):
        opener = language.is_opener(ids)
        shared |= {"opener": opener, "closer": language.is_closer(ids)}
    partner = language.partner(ids)  # (B, T)
    if {"partner_visible", "partner_hidden"} & set(language.shared_categories):
        partner_kind = np.take_along_axis(kind, partner, axis=1)  # (B, T): what happened to each partner
        visible = (partner_kind == UNTOUCHED) | (partner_kind == KEPT)
        shared |= {"partner_visible": visible, "partner_hidden": ~visible}
    cats = [shared[name] for name in language.shared_categories]
    cats += [kind == MASKED, kind == RANDOM, kind == KEPT]
    return np.concatenate([np.stack(cats, axis=-1), language.category_masks(ids, partner)], axis=-1) & picked[..., None]


def shares(masked: Masked) -> dict[str, float]:
    """Observed share of content tokens in each state, comparable with `expected_shares`."""
    content = masked.kind[:, 1:]  # [CLS] is never picked and not a content token
    n = content.size
    out = {name: float((content == k).sum()) / n for name, k in (("mask", MASKED), ("random", RANDOM), ("kept", KEPT))}
    out["picked"] = float((content != UNTOUCHED).sum()) / n
    return out
