"""The seed's language: `[CLS]` followed by `pairs` pairs, each an opener of one of `kinds` types and its
own closer right after it (`[CLS] g G f F e E ...`).

It is Dyck with nesting depth 1: one shape, `pairs` i.i.d. uniform types. A closer is predictable from its
left (its opener sits right before it), an opener only from its right, so half of the blanks need right
context. The oracle has a closed form (each pair is independent of the others), checked against Dyck's
general one in the tests; the sampler is Dyck's and draws exactly `rng.integers(0, kinds, (n, pairs))`.

Example:
    >>> import numpy as np
    >>> lang = BracketPairs()
    >>> ids = lang.sample(np.random.default_rng(0), 2)
    >>> ids.shape, lang.vocab_size
    ((2, 17), 18)
    >>> lang.decode(lang.encode("[CLS] d D e E"))
    '[CLS] d D e E'
"""

from __future__ import annotations

import numpy as np

from minibert.languages.base import CLS_ID, SPECIALS, Language
from minibert.languages.dyck import Dyck
from minibert.validation import POSITIVE_INT, check

_FIRST = len(SPECIALS)


class BracketPairs(Dyck):
    """`pairs` adjacent pairs over `kinds` bracket types (the defaults are the seed's: 8 and 8, 18 tokens)."""

    categories = ()  # every partner is adjacent and every depth is 1: Dyck's buckets would say nothing
    spoilings = ()  # one way only: a wrong closer
    # neighbours are always an opener and its closer, so the only count-keeping edit is two closers swapped,
    # and each then faces the opener just before it: every pair's fault is at distance 1 and depth 1
    pair_edits = ("swap_closers",)
    pair_strata_names = (("dist_1",), ("depth_1",))  # a plain attribute over Dyck's property

    def __init__(self, kinds: int = 8, pairs: int = 8) -> None:
        check("BracketPairs", "pairs", pairs, POSITIVE_INT)
        super().__init__(kinds=kinds, length=2 * pairs, max_depth=1)
        self.pairs = pairs

    @property
    def chance(self) -> float:
        """A position's parity says opener or closer, and each pair's type is uniform: 1 in `kinds`."""
        return 1 / self.kinds

    def params(self) -> dict:
        return {"kinds": self.kinds, "pairs": self.pairs}

    def at_length(self, length: int) -> BracketPairs:
        if length % 2:
            raise ValueError(f"BracketPairs cannot be graded at length {length}: its words are pairs, so even lengths")
        return BracketPairs(self.kinds, length // 2)

    def partner(self, ids: np.ndarray) -> np.ndarray:
        # an opener's partner is on its right, a closer's on its left, whatever the layout ([SEP]s included)
        return np.arange(ids.shape[1]) + self.is_opener(ids) - self.is_closer(ids)

    def category_masks(self, ids: np.ndarray, partner: np.ndarray) -> np.ndarray:
        return Language.category_masks(self, ids, partner)

    def oracle_cost(self, n: int, causal: bool) -> tuple[float, float]:
        return 0.0, 0.0  # a closed form, linear in the sentence

    def cavity(self, likelihood: np.ndarray, causal: bool = False) -> np.ndarray:
        lik = np.asarray(likelihood, dtype=np.float64)
        if lik.ndim != 3 or lik.shape[1] != self.seq_len or lik.shape[2] < self.vocab_size:
            raise ValueError(
                f"likelihood has shape {lik.shape}: expected (B, {self.seq_len}, V >= {self.vocab_size}) for {self!r}"
            )
        k = self.kinds
        opener = lik[:, 1::2, _FIRST : _FIRST + k]  # (B, P, k): evidence at each pair's opener, by type
        closer = lik[:, 2::2, _FIRST + k : _FIRST + 2 * k]
        out = np.zeros(lik.shape, dtype=np.float64)
        out[:, 0, CLS_ID] = 1.0
        # an opener's type is told by its closer (on the right: uniform when causal); a closer's by its opener
        out[:, 1::2, _FIRST : _FIRST + k] = np.ones_like(opener) if causal else closer
        out[:, 2::2, _FIRST + k : _FIRST + 2 * k] = opener
        total = out.sum(-1, keepdims=True)
        if not (total > 0).all():
            raise ValueError("the evidence is impossible under the language (no word explains it)")
        return out / total

    def spoil(self, ids: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One closer, at a uniformly chosen pair, replaced by any closer but the right one."""
        ids = ids.copy()
        rows = np.arange(len(ids))
        closer_at = 2 + 2 * rng.integers(0, self.pairs, size=len(ids))  # the closer of pair j sits at 2j + 2
        kind = ids[rows, closer_at] - self.first_closer
        wrong = (kind + rng.integers(1, self.kinds, size=len(ids))) % self.kinds
        ids[rows, closer_at] = self.first_closer + wrong
        return ids, closer_at, np.zeros(len(ids), dtype=np.int64)
