"""How a reference is credited on a cloze question, shared by the exact oracle (minibert.oracle) and the n-gram
references (minibert.references.ngrams): the positions a batch grades, and a tie shared among the tokens a
posterior ranks first.

Example:
    >>> import numpy as np
    >>> tie_credit(np.array([[0.4, 0.4, 0.2], [0.1, 0.2, 0.7]]), np.array([0, 1]))  # two tied for first; a miss
    array([0.5, 0. ])
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

IGNORE = -100  # label at positions that are not graded (torch's cross_entropy ignore_index)
TIE_RTOL = 1e-9  # posteriors within this relative distance of the maximum count as tied with it


class Emission(Protocol):
    """What a position shows once picked, as a masking recipe (minibert.masking.MaskingRecipe) draws it."""

    p_mask: float  # [MASK]
    p_random: float  # a content token drawn uniformly
    p_kept: float  # the token itself


def tie_credit(posterior: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(N, V) posteriors and (N,) true ids -> (N,) credit: 1/t if the target is among the t most likely tokens."""
    top = posterior.max(-1, keepdims=True)
    tied = posterior >= top * (1.0 - TIE_RTOL)  # (N, V)
    hit = np.take_along_axis(tied, target[:, None], axis=1)[:, 0]
    return hit / tied.sum(-1)
