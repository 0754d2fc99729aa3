"""Span masking (SpanBERT): pick contiguous spans instead of single tokens, with the same budget and the
same 80/10/10 treatment as BERT's recipe.

Span lengths are geometric with mean `mean_length` (p = 1 / mean_length) and capped at `max_span`
(min(length, max_span), so their mean is `expected_length()`: 2.83 for 3 and 8). Spans are placed until
exactly `round(p_pick * pickable tokens)` positions of the batch are picked, which keeps BERT's budget
(15%): each span goes to a random sentence with a free run long enough, at a random start within it
(only the batch's last span is cut to the budget left). Each span gets one fate, so a whole span becomes
[MASK], random tokens or stays as it is (`MaskingRecipe.treat`); SpanBERT's span-boundary objective is
left out. On the bracket language a span of 2+ usually hides an opener *and* its closer, so the share of
picked tokens whose partner is hidden rises from ~15% to most of them: the cloze gets harder.

Example:
    >>> import numpy as np
    >>> from minibert.languages import BracketPairs
    >>> rng, lang = np.random.default_rng(0), BracketPairs()
    >>> ids = lang.sample(rng, 100)
    >>> masked = SpanMasking(mean_length=3.0, max_span=8).apply(ids, rng, lang)
    >>> int((masked.labels != -100).sum()) == round(0.15 * 100 * 16)  # the budget, exactly
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minibert.languages import Language
from minibert.masking import Masked, MaskingRecipe
from minibert.objectives.mlm import MaskedLM
from minibert.validation import POSITIVE_INT, Range, check


def _longest_run(free: np.ndarray) -> int:
    """Length of the longest run of True in a 1-d bool array."""
    edges = np.diff(np.concatenate([[0], free.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max(initial=0))


@dataclass(frozen=True)
class SpanMasking(MaskingRecipe):
    """MaskingRecipe whose picks come in spans: `mean_length` (>= 1) of the uncapped geometric, `max_span` cap."""

    mean_length: float = 3.0
    max_span: int = 8

    def __post_init__(self) -> None:
        super().__post_init__()
        check("SpanMasking", "mean_length", self.mean_length, Range(low=1))
        check("SpanMasking", "max_span", self.max_span, POSITIVE_INT)

    def expected_length(self) -> float:
        """Mean of min(Geometric(1 / mean_length), max_span) = sum over k < max_span of P(length > k)."""
        q = 1.0 - 1.0 / self.mean_length
        return float(sum(q**k for k in range(self.max_span)))

    def spans(self, ids: np.ndarray, rng: np.random.Generator, pickable: np.ndarray) -> np.ndarray:
        """Span index of every position (B, T) int64, -1 where nothing is picked."""
        free = pickable.copy()
        span = np.full(ids.shape, -1, dtype=np.int64)
        longest = np.array([_longest_run(row) for row in free])  # (B,) room for the next span
        remaining, index = round(self.p_pick * int(pickable.sum())), 0
        while remaining > 0:
            length = min(int(rng.geometric(1.0 / self.mean_length)), self.max_span, remaining)
            fits = np.flatnonzero(longest >= length)
            if fits.size == 0:  # the batch is too full for this length: take the longest gap left
                length = int(longest.max())
                fits = np.flatnonzero(longest == length)
            row = fits[rng.integers(fits.size)]
            starts = np.flatnonzero(sliding_window_view(free[row], length).all(-1))
            start = starts[rng.integers(starts.size)]
            free[row, start : start + length] = False
            span[row, start : start + length] = index
            longest[row] = _longest_run(free[row])
            remaining, index = remaining - length, index + 1
        return span

    def apply(self, ids: np.ndarray, rng: np.random.Generator, language: Language) -> Masked:
        span = self.spans(ids, rng, language.is_content(ids))
        fate = rng.random(span.max() + 2)[span]  # one fate per span (index -1 reads a spare, never used)
        return self.treat(ids, span >= 0, fate, rng, language)


class SpanMaskedLM(MaskedLM):
    """MLM trained on span-masked inputs; graded on BERT's token-level questions by default (`eval_masking`),
    so its val/acc compares with MaskedLM's."""

    def __init__(
        self,
        masking: SpanMasking = SpanMasking(),
        eval_masking: MaskingRecipe = MaskingRecipe(),
        language: Language | None = None,
    ):
        super().__init__(masking, eval_masking, language)
