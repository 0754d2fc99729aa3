"""Minimal pairs: every language's downstream measure with no fine-tuning (docs/pairs.md)."""

from minibert.pairs.draw import MinimalPairs, PairsUnavailable, draw_pairs, edits_of
from minibert.pairs.floors import FLOORS, NGramFloors, pair_credit
from minibert.pairs.grade import PairGrader, PairSettings

__all__ = ["FLOORS", "MinimalPairs", "NGramFloors", "PairGrader", "PairSettings", "PairsUnavailable", "draw_pairs",
           "edits_of", "pair_credit"]  # fmt: skip
