"""Holm's step-down over a family of verdicts, on p-values or e-values."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ALPHA = 0.05


def holm(values: Sequence[float], alpha: float = ALPHA, e_values: bool = False) -> list[bool]:
    """Holm's step-down (Scand. J. Stat. 1979): which hypotheses to reject, family-wise at `alpha` under any
    dependence. p-values: the i-th smallest (i = 0, 1, ...) is rejected while p <= alpha / (K - i).
    e-values (Vovk & Wang, Ann. Statist. 2021): the i-th largest while e >= (K - i) / alpha; with e-processes
    read at any looks (each frozen once rejected) it holds under continuous monitoring, since
    every intersection test is Markov's or Ville's inequality plus a union bound.

    >>> holm([0.01, 0.04, 0.03]), holm([0.01, 0.02, 0.03]), holm([100.0, 30.0, 5.0], e_values=True)
    ([True, False, False], [True, True, True], [True, False, False])
    """
    v = np.asarray(values, float)
    if e_values:  # e >= (K - i) / alpha is 1 / e <= alpha / (K - i): the same step-down on 1 / e
        with np.errstate(divide="ignore"):
            v = 1.0 / v
    return [a <= alpha for a in adjusted(v)]


def adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values: the i-th smallest becomes max over j <= i of min(1, (K - j) p_(j)), so that a
    hypothesis is rejected by `holm` at alpha exactly when its adjusted p-value is at most alpha.

    >>> [round(x, 3) for x in adjusted([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, float)
    out, running = [1.0] * len(p), 0.0
    for i, j in enumerate(np.argsort(p, kind="stable")):
        running = max(running, min(1.0, (len(p) - i) * float(p[j])))
        out[j] = running
    return out
