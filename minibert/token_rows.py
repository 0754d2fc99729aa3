"""Sentences as aligned rows of tokens, one column per position, the way the demos print them.

Example:
    >>> import numpy as np
    >>> from minibert.languages import BracketPairs
    >>> labels = np.array([-100, -100, 10])
    >>> print(token_rows({"original": "[CLS] a A".split(), "labels": label_tokens(labels, BracketPairs().vocab)}))
    original  [CLS]  a  A
    labels    .      .  A
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from minibert.masking import IGNORE, KEPT, MASKED, RANDOM, UNTOUCHED

BLANK = "."  # a position with nothing to show
KIND_NAMES = {UNTOUCHED: BLANK, MASKED: "mask", RANDOM: "random", KEPT: "kept"}


def label_tokens(labels: np.ndarray, vocab: Sequence[str]) -> list[str]:
    """(T,) labels -> the original token (from `vocab`) at graded positions, BLANK elsewhere."""
    return [BLANK if int(i) == IGNORE else vocab[int(i)] for i in labels]


def kind_names(kind: np.ndarray) -> list[str]:
    """(T,) masking kinds -> 'mask' / 'random' / 'kept', BLANK at untouched positions."""
    return [KIND_NAMES[int(k)] for k in kind]


def token_rows(rows: Mapping[str, Sequence[str]]) -> str:
    """Named rows of equally many tokens, each column as wide as its widest token."""
    lengths = {len(tokens) for tokens in rows.values()}
    if len(lengths) != 1:
        raise ValueError(f"rows must have equally many tokens, got lengths {sorted(lengths)}")
    widths = [max(len(column) for column in columns) for columns in zip(*rows.values(), strict=True)]
    name_width = max(len(name) for name in rows)
    lines = []
    for name, tokens in rows.items():
        cells = "  ".join(tok.ljust(w) for tok, w in zip(tokens, widths, strict=True))
        lines.append(f"{name.ljust(name_width)}  {cells}".rstrip())
    return "\n".join(lines)
