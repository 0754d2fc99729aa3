"""Demo: BERT's masking recipe on the bracket language.

Shows one sentence as original / corrupted / labels / kind rows, then the shares of content tokens that
became [MASK], a random token, or were kept as they are, over many sentences, next to the recipe's
expectation (by default [MASK] 12.0%, random 1.5%, kept 1.5%, picked 15.0%).

Example:
    python scripts/demo_masking.py
    python scripts/demo_masking.py --p-pick 0.5 --p-mask 1.0 --p-random 0.0 --seed 3
"""

# ruff: noqa: E402 (the heavy imports follow the argument check, so that a usage error answers before torch loads)
from __future__ import annotations

from minibert.commandline import ArgumentParser, nonnegative_int, positive_int, share


def parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    # left out: MaskingRecipe's own rate (BERT's), which this parser does not import torch to read
    p.add_argument("--p-pick", type=share, help="share of content positions picked (default: BERT's 15%%)")
    p.add_argument("--p-mask", type=share, help="share of picked -> [MASK] (default: BERT's 80%%)")
    p.add_argument("--p-random", type=share, help="share of picked -> random, at most 1 - p-mask (default: 10%%)")
    p.add_argument("--sentences", type=positive_int, default=10_000)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    return p


if __name__ == "__main__":  # a usage error is answered before torch (which the languages import) loads
    parser().parse_args()

import numpy as np

from minibert.languages import BracketPairs
from minibert.masking import KEPT, MASKED, RANDOM, Masked, MaskingRecipe, shares
from minibert.token_rows import kind_names, label_tokens, token_rows

SHARE_NAMES = {"mask": "[MASK]", "random": "random", "kept": "kept", "picked": "picked"}


def example_index(ids: np.ndarray, masked: Masked, recipe: MaskingRecipe) -> int:
    """The first sentence that shows every kind of corruption the recipe can produce (else the first); its
    random replacement must differ from the original (by chance it is the same token one time in 16)."""
    shown = {
        MASKED: masked.kind == MASKED,
        RANDOM: (masked.kind == RANDOM) & (masked.inputs != ids),
        KEPT: masked.kind == KEPT,
    }
    rates = {MASKED: recipe.p_mask, RANDOM: recipe.p_random, KEPT: recipe.p_kept}
    shows_all = np.all([shown[k].any(axis=1) for k, p in rates.items() if p > 0], axis=0)
    return int(np.argmax(shows_all)) if shows_all.any() else 0


LANGUAGE = BracketPairs()


def sentence_rows(ids: np.ndarray, masked: Masked, i: int) -> str:
    return token_rows(
        {
            "original": LANGUAGE.decode(ids[i]).split(),
            "corrupted": LANGUAGE.decode(masked.inputs[i]).split(),
            "labels": label_tokens(masked.labels[i], LANGUAGE.vocab),
            "kind": kind_names(masked.kind[i]),
        }
    )


def share_table(masked: Masked, recipe: MaskingRecipe) -> str:
    """Observed and expected share per state, with the 5-sigma binomial tolerance of the observation."""
    n = masked.kind[:, 1:].size  # content tokens ([CLS] is never picked)
    observed, expected = shares(masked), recipe.expected_shares()
    lines = [f"{'':8}{'observed':>10}{'recipe':>9}{'5 sigma':>10}"]
    for key, name in SHARE_NAMES.items():
        tolerance = 5 * np.sqrt(expected[key] * (1 - expected[key]) / n)
        lines.append(f"{name:8}{100 * observed[key]:>9.2f}%{100 * expected[key]:>8.1f}%{100 * tolerance:>9.2f}%")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = parser()
    args = p.parse_args(argv)
    given = {name: getattr(args, name) for name in ("p_pick", "p_mask", "p_random") if getattr(args, name) is not None}
    try:
        recipe = MaskingRecipe(**given)
    except ValueError:  # each share is in [0, 1] already, so only their sum can be refused (the recipe's rule)
        mask, random = (given.get(k, getattr(MaskingRecipe, k)) for k in ("p_mask", "p_random"))
        p.error(
            f"--p-mask {mask} with --p-random {random} is not allowed: their sum, {mask + random:g}, must be "
            "at most 1 (the rest of the picked positions are kept)"
        )

    rng = np.random.default_rng(args.seed)
    ids = LANGUAGE.sample(rng, args.sentences)
    masked = recipe.apply(ids, rng, LANGUAGE)
    i = example_index(ids, masked, recipe)
    print(
        f"Masking recipe: p_pick={recipe.p_pick}, p_mask={recipe.p_mask}, p_random={recipe.p_random} (seed {args.seed})"
    )
    print(f"vocabulary ({LANGUAGE.vocab_size} tokens): {' '.join(LANGUAGE.vocab)}\n")
    print(f"Sentence {i} of the sample (the first that shows every kind of corruption):")
    print(sentence_rows(ids, masked, i))
    print(f"\nShares over {args.sentences:,} sentences ({args.sentences * (LANGUAGE.seq_len - 1):,} content tokens):")
    print(share_table(masked, recipe))


if __name__ == "__main__":
    main()
