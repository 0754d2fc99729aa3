"""The names minimal-pair figures are logged under (minibert.training.pair_eval), in one place for the code that
reads them (compare, the pages, the dashboards)."""

FLOORS = ("unigram", "bigram", "trigram")  # the floors every language logs, weakest first (minibert.pairs.floors)
MAX_ORDER = 8
ZERO_SHOT = "val/pairs/acc"  # the judged figure: the objective's own head, zero-shot
PROBE = "val/pairs/probe/acc"  # the same pairs read by the convex probe


def floor_metric(name: str) -> str:
    """`val/pairs/floor/<name>/acc`: a floor's figure on the same judged pairs."""
    return f"val/pairs/floor/{name}/acc"


def floor_names(order: int) -> tuple[str, ...]:
    """The floors through the `order`-gram, weakest first: unigram, bigram, trigram, 4-gram, ..."""
    return FLOORS[:order] + tuple(f"{n}-gram" for n in range(len(FLOORS) + 1, order + 1))


def check_order(order: int, vocab: int) -> None:
    """ValueError, in one line, for an n-gram order the floors cannot count: below 1, above MAX_ORDER, or one
    whose n-grams over `vocab` ids do not fit a 64-bit key."""
    if not (isinstance(order, int) and 1 <= order <= MAX_ORDER):
        raise ValueError(f"floor_order={order!r}: must be an integer from 1 to {MAX_ORDER}")
    if vocab**order >= 2**63:
        most = max(n for n in range(1, MAX_ORDER + 1) if vocab**n < 2**63)
        raise ValueError(f"floor_order={order}: {order}-grams of {vocab} ids do not fit a 64-bit key; at most {most}")
