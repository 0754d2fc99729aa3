"""BERT's masking recipe: pick 15% of content positions; of those, 80% -> [MASK], 10% -> random, 10% kept.

Example:
    >>> import numpy as np
    >>> from minibert.language import sample_sentences
    >>> rng = np.random.default_rng(0)
    >>> masked = MaskingRecipe().apply(sample_sentences(rng, 4), rng)
    >>> masked.inputs.shape, masked.labels.shape, masked.kind.shape
    ((4, 17), (4, 17), (4, 17))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert.language import CLS_ID, CONTENT_IDS, MASK_ID, is_closer, is_opener

IGNORE = -100  # label at positions that are not graded (torch's cross_entropy ignore_index)

# What happened to each position: the per-position `kind` returned by MaskingRecipe.apply.
UNTOUCHED, MASKED, RANDOM, KEPT = 0, 1, 2, 3

# The categories masked-token accuracy is split by, in the order `categories` returns them.
MLM_CATEGORIES = (
    "opener",
    "closer",
    "partner_visible",
    "partner_hidden",
    "kind_mask",
    "kind_random",
    "kind_kept",
)

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
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
                raise ValueError(f"MaskingRecipe.{name}={value!r} is not allowed: it must be a number in [0, 1]")
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

    def apply(self, ids: np.ndarray, rng: np.random.Generator, pickable: np.ndarray | None = None) -> Masked:
        """Corrupt a batch of sentences `ids` (B, T); `pickable` (B, T) bool defaults to every non-[CLS] token."""
        if pickable is None:
            pickable = ids != CLS_ID
        picked = pickable & (rng.random(ids.shape) < self.p_pick)
        fate = rng.random(ids.shape)  # one uniform per position decides mask / random / kept
        return self.treat(ids, picked, fate, rng)

    def treat(self, ids: np.ndarray, picked: np.ndarray, fate: np.ndarray, rng: np.random.Generator) -> Masked:
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
        inputs[to_random] = rng.choice(CONTENT_IDS, size=int(to_random.sum()))
        labels = np.where(picked, ids, IGNORE)
        return Masked(inputs, labels, kind)


def categories(labels: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Which MLM_CATEGORIES each position belongs to, shape (B, T, len(MLM_CATEGORIES)) bool.

    The partner is *visible* when it is untouched or kept, *hidden* when it became [MASK] or a random
    token. Only picked positions (label != IGNORE) belong to any category.
    """
    picked = labels != IGNORE
    opener = is_opener(labels)
    # an opener's partner is on its right, a closer's on its left, whatever the layout ([SEP]s included);
    # on the plain sentence this is partner_index (unpicked positions point at themselves and are dropped)
    partner = np.arange(labels.shape[1]) + opener - is_closer(labels)  # (B, T)
    partner_kind = np.take_along_axis(kind, partner, axis=1)  # (B, T): what happened to each partner
    partner_visible = (partner_kind == UNTOUCHED) | (partner_kind == KEPT)
    cats = [
        opener,
        ~opener,
        partner_visible,
        ~partner_visible,
        kind == MASKED,
        kind == RANDOM,
        kind == KEPT,
    ]
    return np.stack(cats, axis=-1) & picked[..., None]


def shares(masked: Masked) -> dict[str, float]:
    """Observed share of content tokens in each state, comparable with `expected_shares`."""
    content = masked.kind[:, 1:]  # [CLS] is never picked and not a content token
    n = content.size
    out = {name: float((content == k).sum()) / n for name, k in (("mask", MASKED), ("random", RANDOM), ("kept", KEPT))}
    out["picked"] = float((content != UNTOUCHED).sum()) / n
    return out

