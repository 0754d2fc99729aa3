"""The exact Bayes ceiling of a cloze question: what the best possible predictor scores on the same examples.

A graded position's posterior is P(w_t | corrupted sentence, t picked) = cavity_t(w) x graded_t(w), where
the cavity is the language's (the evidence of the other positions: all of them, or only those on the left
for a causal encoder) and the emissions are the recipe's (`MaskingRecipe.likelihoods`). The ceiling of a
question is the chance that the posterior's most likely token is the true one; a tie among t tokens counts
1/t when the true token is among them, which is what a predictor that breaks ties at random scores.

Overall, and on a category the model's input decides (which position shows [MASK]), this is a bound: the
Bayes predictor is best on every question, so no predictor beats it there. On a category that depends on
what the model cannot see (the true token's class, whether a shown token was kept, a partner's fate) it is
only the Bayes predictor's own accuracy, a reference: a predictor can trade accuracy across categories and
beat it there. That category's own bound, where its joint posterior with the token is known, is
`mlm_grades`' second output.

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
from lightning.pytorch.utilities import rank_zero_warn

from minibert.languages.base import Language
from minibert.masking import IGNORE, MaskingRecipe
from minibert.references.credit import tie_credit

_TINY = np.finfo(np.float64).tiny
_CACHE: OrderedDict[str, object] = OrderedDict()
_CACHE_SIZE = 16


def posterior(language: Language, recipe: MaskingRecipe, inputs: np.ndarray, causal: bool) -> np.ndarray:
    """(B, T) corrupted sentences -> (B, T, V): P(true token | inputs, position picked) at every position."""
    cavity, _, emission = _parts(language, recipe, inputs, causal)
    weights = cavity * emission
    return weights / np.maximum(weights.sum(-1, keepdims=True), _TINY)


def _parts(language: Language, recipe: MaskingRecipe, inputs: np.ndarray, causal: bool):
    """(cavity, the graded emission by fate, the graded emission), (B, T, V) each: the posterior is the
    cavity times the emission, the joint with a fate the cavity times that fate's share."""
    context, by_kind = recipe.emissions(inputs, language)
    emission = by_kind["kind_mask"] + by_kind["kind_random"] + by_kind["kind_kept"]  # = likelihoods' graded
    return language.cavity(context, causal=causal), by_kind, emission


def _cached(key_parts: tuple, arrays: tuple[np.ndarray, ...], compute):
    """compute(), or its result for equal key parts and arrays (by shape, dtype and content) computed before."""
    digest = hashlib.sha256(repr(key_parts).encode())
    for a in arrays:
        digest.update(repr((a.shape, a.dtype.str)).encode())
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
    return mlm_grades(language, recipe, inputs, labels, causal)[0]


def mlm_grades(
    language: Language, recipe: MaskingRecipe, inputs: np.ndarray, labels: np.ndarray, causal: bool,
    categories: tuple[str, ...] = (),
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The oracle's credit of each graded position (`mlm_credit`, (B, T)) and, for each of `categories`, the
    credit of that category's own best predictor ((B, T, C) float64; zeros where not graded, NaN for a
    category whose joint posterior is not known here).

    A predictor's expected hits on a category are the sum over questions of P(its guess, in the category |
    inputs), so the best predictor for that category alone guesses the token maximising that joint. Its
    accuracy on the category's questions is the category's bound, which may exceed the Bayes predictor's
    accuracy there (on kept tokens it copies the shown token: 100%). The joint is known for a token class
    ("opener", "closer": the posterior on the class's tokens) and for what happened to the position
    ("kind_*": the cavity times that fate's share of the emission), not for a partner's fate nor for the
    language's own categories.
    """

    def compute() -> tuple[np.ndarray, np.ndarray]:
        announce(language, len(inputs), causal)
        credit = np.zeros(labels.shape, dtype=np.float64)
        best = np.zeros((*labels.shape, len(categories)), dtype=np.float64)
        rows = rows_per_pass(language, inputs.shape[1])
        for start in range(0, len(inputs), rows):  # a few (rows, T, V) arrays at a time, whatever the set's size
            part = slice(start, start + rows)
            credit[part], best[part] = _grade(language, recipe, inputs[part], labels[part], causal, categories)
        return credit, best

    return _cached((repr(language), recipe, causal, categories), (inputs, labels), compute)


def _grade(language, recipe, inputs, labels, causal, categories) -> tuple[np.ndarray, np.ndarray]:
    """`mlm_grades` on one pass of rows."""
    graded = labels != IGNORE
    credit = np.zeros(labels.shape, dtype=np.float64)
    best = np.zeros((*labels.shape, len(categories)), dtype=np.float64)
    if not graded.any():
        return credit, best
    cavity, by_kind, emission = _parts(language, recipe, inputs, causal)
    cavity = cavity[graded]  # (N, V)
    weights = cavity * emission[graded]  # (N, V): the unnormalised posterior
    truth = labels[graded]
    credit[graded] = tie_credit(weights / np.maximum(weights.sum(-1, keepdims=True), _TINY), truth)
    ids = np.arange(language.vocab_size)
    joint = {kind: cavity * e[graded] for kind, e in by_kind.items()}  # (N, V) each, same normaliser
    joint |= {"opener": weights * language.is_opener(ids), "closer": weights * language.is_closer(ids)}
    for i, name in enumerate(categories):
        if name not in joint:
            best[..., i] = np.nan
        else:  # a question outside the category (all-zero joint) gets credit; membership masks it out
            best[graded, i] = tie_credit(joint[name], truth)
    return credit, best


def rows_per_pass(language: Language, seq_len: int) -> int:
    """Sentences graded together, at least one: a pass holds about ten (rows, T, V) float64 arrays, and they
    get a tenth of the language's oracle budget (`oracle_memory_gb`; the cavity's passes take 80% of it)."""
    budget = getattr(language, "oracle_memory_gb", 2.0) * 1e9 / 10
    return max(1, int(budget // (seq_len * language.vocab_size * 8 * 10)))


def announce(language: Language, n: int, causal: bool, minutes: float = 1.0) -> None:
    """Say so, once, when the exact oracle will take more than `minutes` on these `n` sentences."""
    seconds = language.oracle_cost(n, causal)[1]
    if seconds > 60 * minutes:
        rank_zero_warn(
            f"grading {n} sentences of {language!r} with the exact oracle takes about {seconds / 60:.0f} min "
            "(estimated on a 2-core machine; it grows with the cube of the length): lower data.val_size or the "
            "length for a quicker run"
        )


def next_token_credit(language: Language, ids: np.ndarray) -> np.ndarray:
    """(B, T) clean sentences -> (B, T - 1) ceiling credit of predicting token t + 1 from tokens 0..t."""

    def compute() -> np.ndarray:
        announce(language, len(ids), causal=True)
        out = np.zeros(ids[:, 1:].shape, dtype=np.float64)
        rows = rows_per_pass(language, ids.shape[1])
        for start in range(0, len(ids), rows):
            part = ids[start : start + rows]
            seen = np.eye(language.vocab_size, dtype=np.float64)[part]  # (b, T, V): each token known exactly
            ahead = language.cavity(seen, causal=True)[:, 1:]  # P(w_{t+1} | w_0..w_t)
            out[start : start + rows] = tie_credit(ahead.reshape(-1, ahead.shape[-1]), part[:, 1:].ravel()).reshape(
                part[:, 1:].shape
            )
        return out

    return _cached((repr(language), "next_token"), (ids,), compute)
