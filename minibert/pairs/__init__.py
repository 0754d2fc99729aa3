"""Minimal pairs: every language's downstream measure with no fine-tuning (docs/pairs.md)."""

from minibert.pairs.draw import MinimalPairs, PairsUnavailable, draw_pairs, edits_of
from minibert.pairs.floors import NGramFloors, pair_credit
from minibert.pairs.grade import PairGrader, PairSettings
from minibert.pairs.keys import FLOORS, PROBE, ZERO_SHOT, floor_metric

__all__ = ["FLOORS", "PROBE", "ZERO_SHOT", "MinimalPairs", "NGramFloors", "PairGrader", "PairSettings",
           "PairsUnavailable", "draw_pairs", "edits_of", "floor_metric", "pair_credit"]  # fmt: skip
