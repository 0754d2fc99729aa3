"""N-gram references for a cloze on real text, where no exact ceiling exists: what counting alone scores on
the very questions the model answers.

Counts come from the training split's token stream (documents joined by [SEP]). Each reference is a
distribution over the token at a position given some of what the model's input shows around it:

- `unigram`: nothing but the training counts;
- `left_bigram`: the token on the left;
- `left_right_trigram`: the tokens on both sides (for a cloze; it needs right context, so a causal encoder is
  read against the other two).

Higher orders are interpolated with the next lower one by Witten-Bell,
P(w | h) = (c(h, w) + n(h) P_lower(w)) / (c(h) + n(h)), with n(h) the number of distinct tokens seen after h:
no setting to tune, and an unseen history falls back to the lower order whole. The trigram's lower order is
the left bigram, or the right bigram (P(w | the token on the right)) when the left token is not shown. A
context token that is [MASK] or [CLS] (a window's start is no document's start) is not shown; the model's
input may hold random replacements, and so does the references' (they see what the model sees).

A graded position is answered as the Bayes rule answers it under the corruption (as minibert.oracle does
with the exact cavity): the reference's distribution times the recipe's emission of what the position shows
([MASK]: every token alike; a shown token: itself by p_kept + p_random / |content|, any other by p_random /
|content|), ties shared (`tie_credit`).

Example:
    >>> import numpy as np
    >>> stream = np.array([5, 6, 7, 5, 6, 7, 5, 6, 8])
    >>> counts = NGramCounts(stream, vocab_size=9, first_content=5)
    >>> counts.distribution("left_bigram", left=np.array([5]), right=np.array([-1])).argmax(-1)  # after 5: 6
    array([6])
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from minibert.references.credit import IGNORE, Emission, tie_credit

REFERENCES = ("unigram", "left_bigram", "left_right_trigram")
CAUSAL_REFERENCES = ("unigram", "left_bigram")  # those a left-only model can be read against
_CHUNK = 1024  # questions per dense (chunk, V) pass


class NGramCounts:
    """Unigram, bigram and (left, right) -> middle counts of a token stream (int ids < `vocab_size`); tokens
    below `first_content` are never predicted by the cloze (they are not content)."""

    names, causal_names = REFERENCES, CAUSAL_REFERENCES

    def __init__(self, stream: np.ndarray, vocab_size: int, first_content: int) -> None:
        V = self.vocab_size = vocab_size
        self.first_content = first_content
        stream = np.asarray(stream, dtype=np.int64)
        self.unigram = np.bincount(stream, minlength=V).astype(np.float64)
        ones = np.ones(len(stream) - 1)
        self.bigram = sparse.csr_matrix((ones, (stream[:-1], stream[1:])), shape=(V, V))  # [left, next]
        self.bigram.sum_duplicates()
        self.right = self.bigram.T.tocsr()  # [right, previous]
        keys = stream[:-2] * V + stream[2:]  # (left, right) around each middle token
        self.trigram_keys, rows = np.unique(keys, return_inverse=True)
        middles = stream[1:-1]
        self.trigram = sparse.csr_matrix((np.ones(len(middles)), (rows, middles)), shape=(len(self.trigram_keys), V))
        self.trigram.sum_duplicates()

    def distribution(self, name: str, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """(n,) left and right context ids (-1: not shown) -> (n, V) float64, reference `name`'s P(w | context)."""
        n, V = len(left), self.vocab_size
        p = np.broadcast_to(self.unigram / self.unigram.sum(), (n, V)).copy()
        if name == "unigram":
            return p
        if name not in REFERENCES:
            raise ValueError(f"unknown reference {name!r}: choose among {', '.join(REFERENCES)}")
        shown_left, shown_right = left >= 0, right >= 0
        left_p = _witten_bell(self.bigram, np.where(shown_left, left, 0), p, shown_left)
        if name == "left_bigram":
            return left_p
        lower = np.where(shown_left[:, None], left_p, _witten_bell(self.right, np.where(shown_right, right, 0), p,
                                                                   shown_right))  # fmt: skip
        both = shown_left & shown_right
        key = np.where(both, left, 0) * V + np.where(both, right, 0)
        at = np.clip(np.searchsorted(self.trigram_keys, key), 0, len(self.trigram_keys) - 1)
        seen = both & (self.trigram_keys[at] == key)
        return _witten_bell(self.trigram, at, lower, seen)

    def cloze_credit(
        self, name: str, recipe: Emission, inputs: np.ndarray, labels: np.ndarray, hidden: tuple[int, ...]
    ) -> np.ndarray:
        """(B, T) corrupted inputs and labels (IGNORE where not graded) -> (B, T) float64: reference `name`'s
        credit on each graded question (0 elsewhere). `hidden`: ids a context position shows that say nothing
        ([MASK], [CLS])."""
        credit = np.zeros(labels.shape, dtype=np.float64)
        rows, cols = np.nonzero(labels != IGNORE)
        padded = np.pad(inputs, ((0, 0), (1, 1)), constant_values=-1)  # -1: off the window
        context = np.where(np.isin(padded, hidden), -1, padded)
        content = np.arange(self.vocab_size) >= self.first_content
        n_content = int(content.sum())
        for start in range(0, len(rows), _CHUNK):
            r, c = rows[start : start + _CHUNK], cols[start : start + _CHUNK]
            p = self.distribution(name, context[r, c], context[r, c + 2]) * content  # only content is asked
            shown = inputs[r, c]
            shows = shown >= self.first_content  # a content token is shown (kept or replaced), else [MASK]
            emission = np.where(shows[:, None], recipe.p_random / n_content * content, recipe.p_mask)  # (n, V)
            emission[np.flatnonzero(shows), shown[shows]] += recipe.p_kept
            credit[r, c] = tie_credit(p * emission, labels[r, c])
        return credit

    def next_token_credit(self, name: str, ids: np.ndarray, hidden: tuple[int, ...]) -> np.ndarray:
        """(B, T) clean windows -> (B, T - 1) float64: reference `name`'s credit on predicting token t + 1 from
        tokens 0..t (`unigram` or `left_bigram`)."""
        if name not in CAUSAL_REFERENCES:
            raise ValueError(f"{name!r} needs the right context: a next-token reference is one of {CAUSAL_REFERENCES}")
        left = np.where(np.isin(ids[:, :-1], hidden), -1, ids[:, :-1]).ravel()
        target = ids[:, 1:].ravel()
        credit = np.empty(len(target), dtype=np.float64)
        for start in range(0, len(target), _CHUNK):
            part = slice(start, start + _CHUNK)
            p = self.distribution(name, left[part], np.full(len(left[part]), -1))
            credit[part] = tie_credit(p, target[part])
        return credit.reshape(ids[:, 1:].shape)


def _witten_bell(counts: sparse.csr_matrix, rows: np.ndarray, lower: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Witten-Bell interpolation of `counts[rows]` with the `lower` (n, V) distributions, where `seen` (n,) and the
    history was seen in training; `lower` itself elsewhere."""
    c = counts[rows].toarray()  # (n, V)
    total = c.sum(-1, keepdims=True)
    types = (c > 0).sum(-1, keepdims=True)
    mixed = (c + types * lower) / np.maximum(total + types, 1)
    return np.where((seen[:, None]) & (total > 0), mixed, lower)
