"""Minimal pairs: every language's downstream measure with no fine-tuning (docs/pairs.md).

`keys` (the names figures are logged under) is light; the rest imports torch and loads on first use, so that
the report engine, which reads only the names, starts without it.
"""

import importlib

from minibert.pairs.keys import FLOORS, PROBE, ZERO_SHOT, floor_metric

_LAZY = {"MinimalPairs": "draw", "PairsUnavailable": "draw", "draw_pairs": "draw", "edits_of": "draw",
         "NGramFloors": "floors", "pair_credit": "floors", "PairGrader": "grade", "PairSettings": "grade"}  # fmt: skip


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"minibert.pairs.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'minibert.pairs' has no attribute {name!r}")


__all__ = ["FLOORS", "PROBE", "ZERO_SHOT", "MinimalPairs", "NGramFloors", "PairGrader", "PairSettings",
           "PairsUnavailable", "draw_pairs", "edits_of", "floor_metric", "pair_credit"]  # fmt: skip
