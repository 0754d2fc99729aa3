"""What a minimal pair's floors score: n-gram language models counted on the language's training sentences,
each scoring a sentence by its left-to-right log-likelihood, graded on the same pairs as the model.

- `unigram`: the training frequencies alone. It scores a sentence by its bag of tokens, so it is the counting
  check: on an edit that keeps every token's count (the bracket languages' swaps) it ties on every pair and
  gets half credit.
- `bigram`, `trigram`, and through the language's `floor_order` (`4-gram`, ...): the previous n - 1 tokens,
  interpolated with the next lower order by Witten-Bell,
  P(w | h) = (c(h, w) + n(h) P_lower(w)) / (c(h) + n(h)), n(h) the distinct tokens seen after h: nothing to
  tune, and an unseen history falls back to the lower order whole. The unigram adds one to every count, so
  no token has probability zero.

A category whose best floor is high carries little signal at this scale: the pair can be told apart from
local statistics. `judged` names the cells whose every floor is at most a limit fixed before any run.

Example:
    >>> import numpy as np
    >>> from minibert.languages import Dyck
    >>> from minibert.pairs import draw_pairs
    >>> lang = Dyck()
    >>> floors = NGramFloors(lang, np.random.default_rng(1), sentences=2000)
    >>> pairs = draw_pairs(lang, np.random.default_rng(0), per_cell=50)
    >>> float(pair_credit(*floors.scores("unigram", pairs)).mean())  # counting ties on every pair
    0.5
"""

from __future__ import annotations

import numpy as np

from minibert.languages import Language
from minibert.pairs.draw import MinimalPairs
from minibert.pairs.keys import check_order, floor_names

VOCAB_ROOM = 8  # ids counted beyond the language's: room for an objective's extra ids (only the language's occur)
TIE = 1e-9  # scores closer than this (in nats) are a tie: half credit


def pair_credit(good: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """(N,) float: 1 where the good sentence scores higher, 0 where lower, 1/2 on a tie."""
    diff = np.asarray(good, dtype=np.float64) - np.asarray(bad, dtype=np.float64)
    return np.where(diff > TIE, 1.0, np.where(diff < -TIE, 0.0, 0.5))


class NGramFloors:
    """Counts of `sentences` training sentences of `language` (drawn with `rng`), orders 1 to `order`."""

    def __init__(self, language: Language, rng: np.random.Generator, sentences: int = 20_000, order: int = 3) -> None:
        ids = language.draw(rng, sentences, "train")
        self.V = language.vocab_size + VOCAB_ROOM
        check_order(order, self.V)
        self.names = floor_names(order)
        self.unigram = np.bincount(ids[:, 1:].ravel(), minlength=self.V).astype(np.float64) + 1.0
        self.unigram /= self.unigram.sum()
        self.tables = {n: self._count(ids, n) for n in range(2, order + 1)}

    def _count(self, ids: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
        """(n-gram keys, their counts, history keys, their counts, their distinct followers), keys sorted."""
        grams = self._keys(ids, n)
        keys, counts = np.unique(grams, return_counts=True)
        history_of = keys // self.V
        hist, first = np.unique(history_of, return_index=True)
        total = np.add.reduceat(counts, first)
        distinct = np.diff(np.append(first, len(keys)))
        return keys, counts, hist, total, distinct

    def _keys(self, ids: np.ndarray, n: int) -> np.ndarray:
        """(B, T - n + 1) int64 keys of the n-grams ending at positions n - 1 .. T - 1."""
        T = ids.shape[1]
        key = np.zeros((len(ids), T - n + 1), dtype=np.int64)
        for j in range(n):
            key = key * self.V + ids[:, j : T - n + 1 + j]
        return key

    @staticmethod
    def _lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
        at = np.clip(np.searchsorted(keys, query), 0, len(keys) - 1)
        return np.where(keys[at] == query, values[at], 0)

    def token_probs(self, order: str, ids: np.ndarray) -> np.ndarray:
        """(B, T - 1) P(w_t | its history) for t >= 1 under `order`."""
        probs = self.unigram[ids[:, 1:]]
        for n in range(2, self.names.index(order) + 2):
            keys, counts, hist, total, distinct = self.tables[n]
            gram = self._keys(ids, n)  # ends at positions n - 1 ..
            seen = self._lookup(keys, counts, gram).astype(np.float64)
            h_total = self._lookup(hist, total, gram // self.V).astype(np.float64)
            h_distinct = self._lookup(hist, distinct, gram // self.V).astype(np.float64)
            lower = probs[:, n - 2 :]
            mixed = np.where(h_total > 0, (seen + h_distinct * lower) / np.maximum(h_total + h_distinct, 1), lower)
            probs = np.concatenate([probs[:, : n - 2], mixed], axis=1)  # shorter histories at the start
        return probs

    def scores(self, order: str, pairs: MinimalPairs) -> tuple[np.ndarray, np.ndarray]:
        """(N,) log-likelihoods of the good and of the bad sentences under `order`."""
        if order not in self.names:
            raise ValueError(f"floor {order!r} is not one of {', '.join(self.names)}")
        return tuple(np.log(self.token_probs(order, ids)).sum(1) for ids in (pairs.good, pairs.bad))


def floor_accuracies(floors: NGramFloors, pairs: MinimalPairs) -> dict[str, np.ndarray]:
    """Floor name -> (C,) accuracy per category of `pairs` (NaN where a category is empty)."""
    return {name: pairs.by_category(pair_credit(*floors.scores(name, pairs))) for name in floors.names}


def judged_cells(pairs: MinimalPairs, accuracies: dict[str, np.ndarray], limit: float) -> tuple[str, ...]:
    """The cells whose every floor scores at most `limit`: those the judged figure averages."""
    column = {n: i for i, n in enumerate(pairs.names)}
    return tuple(c for c in pairs.cells if max(float(a[column[c]]) for a in accuracies.values()) <= limit)
