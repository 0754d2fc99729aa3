"""The exact Bayes ceiling of a cloze question: what the best possible predictor scores on the same examples.

A graded position's posterior is P(w_t | corrupted sentence, t picked) = cavity_t(w) x graded_t(w), where
the cavity is the language's (the evidence of the other positions: all of them, or only those on the left
for a causal encoder) and the emissions are the recipe's (`MaskingRecipe.likelihoods`). The ceiling of a
question is the chance that the posterior's most likely token is the true one; a tie among t tokens counts
1/t when the true token is among them, which is what a predictor that breaks ties at random scores.

Results are cached by content, so a validation set is graded once per process however many runs use it.

Example:
    >>> import numpy as np
    >>> from minibert.languages import BracketPairs
    >>> from minibert.masking import MaskingRecipe
    >>> lang, recipe, rng = BracketPairs(), MaskingRecipe(), np.random.default_rng(0)
    >>> masked = recipe.apply(lang.sample(rng, 500), rng, lang)
    >>> credit = mlm_credit(lang, recipe, masked.inputs, masked.labels, causal=False)
    >>> bool(0.85 < credit[masked.labels != -100].mean() < 0.95)  # BERT's recipe on the seed's language: ~90%
    True
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from minibert.languages.base import Language
from minibert.masking import IGNORE, MaskingRecipe

TIE_RTOL = 1e-9  # posteriors within this relative distance of the maximum count as tied with it
_CACHE: OrderedDict[str, np.ndarray] = OrderedDict()
_CACHE_SIZE = 16


def tie_credit(posterior: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(N, V) posteriors and (N,) true ids -> (N,) credit: 1/t if the target is among the t most likely tokens."""
    top = posterior.max(-1, keepdims=True)
    tied = posterior >= top * (1.0 - TIE_RTOL)  # (N, V)
    hit = np.take_along_axis(tied, target[:, None], axis=1)[:, 0]
    return hit / tied.sum(-1)


def posterior(language: Language, recipe: MaskingRecipe, inputs: np.ndarray, causal: bool) -> np.ndarray:
    """(B, T) corrupted sentences -> (B, T, V): P(true token | inputs, position picked) at every position."""
    context, graded = recipe.likelihoods(inputs, language)
    weights = language.cavity(context, causal=causal) * graded
    return weights / np.maximum(weights.sum(-1, keepdims=True), np.finfo(np.float64).tiny)


def _cached(key_parts: tuple, arrays: tuple[np.ndarray, ...], compute) -> np.ndarray:
    digest = hashlib.sha256(repr(key_parts).encode())
    for a in arrays:
        digest.update(np.ascontiguousarray(a).tobytes())
    key = digest.hexdigest()
    if key not in _CACHE:
        _CACHE[key] = compute()
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    _CACHE.move_to_end(key)
    return _CACHE[key]


def mlm_credit(
    language: Language, recipe: MaskingRecipe, inputs: np.ndarray, labels: np.ndarray, causal: bool
) -> np.ndarray:
    """(B, T) corrupted sentences and labels (IGNORE where not graded) -> (B, T) float64 ceiling credit of
    each graded position (0 elsewhere); `causal`: a position sees only itself and its left."""

    def compute() -> np.ndarray:
        graded = labels != IGNORE
        credit = np.zeros(labels.shape, dtype=np.float64)
        if graded.any():
            post = posterior(language, recipe, inputs, causal)
            credit[graded] = tie_credit(post[graded], labels[graded])
        return credit

    return _cached((repr(language), recipe, causal), (inputs, labels), compute)


def next_token_credit(language: Language, ids: np.ndarray) -> np.ndarray:
    """(B, T) clean sentences -> (B, T - 1) ceiling credit of predicting token t + 1 from tokens 0..t."""

    def compute() -> np.ndarray:
        seen = np.eye(language.vocab_size, dtype=np.float64)[ids]  # (B, T, V): each token known exactly
        ahead = language.cavity(seen, causal=True)[:, 1:]  # P(w_{t+1} | w_0..w_t)
        return tie_credit(ahead.reshape(-1, ahead.shape[-1]), ids[:, 1:].ravel()).reshape(ids[:, 1:].shape)

    return _cached((repr(language), "next_token"), (ids,), compute)
