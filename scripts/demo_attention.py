"""Demo: scaled dot-product attention in NumPy over five tokens, with no mask and with a causal mask.

Each row is one token (the query) and holds its attention weights over the five tokens (the keys); a
weight of exactly zero means the token cannot see that position. Without a mask every token sees all five
(BERT); with a causal mask token i sees itself and its left only (GPT), so an opener cannot see its closer.

Example:
    python scripts/demo_attention.py
    python scripts/demo_attention.py --seed 3 --dim 8
"""

from __future__ import annotations

import numpy as np

from minibert.commandline import ArgumentParser, nonnegative_int, positive_int

TOKENS = ["[CLS]", "a", "A", "b", "B"]


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q k^T / sqrt(d)) v for q, k, v of shape (T, d); returns (output (T, d), weights (T, T)).

    causal=True sets the score of every key after the query to -inf, so its weight is exactly zero.
    """
    T, d = q.shape
    scores = q @ k.T / np.sqrt(d)  # (T, T): row = query, column = key
    if causal:
        scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable softmax; exp(-inf) = 0
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights


def weight_table(weights: np.ndarray, tokens: list[str]) -> str:
    """One row per token: its weights over the keys and how many positions it sees (non-zero weight)."""
    T = len(tokens)
    lines = [" " * 7 + "".join(f"{tok:>7}" for tok in tokens)]
    for tok, row in zip(tokens, weights, strict=True):
        cells = "".join(f"{w:>7.2f}" if w > 0 else f"{'-':>7}" for w in row)  # '-': exactly zero, masked
        lines.append(f"{tok:<7}{cells}   sees {int((row > 0).sum())} of {T}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    parser.add_argument("--dim", type=positive_int, default=4, help="width of queries, keys and values")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    q, k, v = rng.normal(size=(3, len(TOKENS), args.dim))  # random projections of the five tokens

    print(f"Scaled dot-product attention over {len(TOKENS)} tokens: weights = softmax(q k^T / sqrt({args.dim}))")
    print("rows: the token that looks (query); columns: the token it looks at (key); each row sums to 1;")
    print("'-': a weight of exactly 0, a position the token cannot see\n")
    for title, causal in (("No mask (bidirectional, BERT)", False), ("Causal mask (left-to-right, GPT)", True)):
        _, weights = attention(q, k, v, causal=causal)
        print(f"{title}:")
        print(weight_table(weights, TOKENS) + "\n")
    print("With the causal mask the opener 'a' cannot see its closer 'A', its only clue: a blanked opener is a guess.")


if __name__ == "__main__":
    main()
