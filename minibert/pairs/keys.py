"""The names minimal-pair figures are logged under (minibert.training.pair_eval), in one place for the code that
reads them (compare, the pages, the dashboards)."""

FLOORS = ("unigram", "bigram", "trigram")  # the n-gram floors, weakest first (minibert.pairs.floors)
ZERO_SHOT = "val/pairs/acc"  # the judged figure: the objective's own head, zero-shot
PROBE = "val/pairs/probe/acc"  # the same pairs read by the convex probe


def floor_metric(name: str) -> str:
    """`val/pairs/floor/<name>/acc`: a floor's figure on the same judged pairs."""
    return f"val/pairs/floor/{name}/acc"
