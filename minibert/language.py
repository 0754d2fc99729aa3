"""The bracket language: `[CLS]` followed by eight pairs, each an opener `a`-`h` and its own closer `A`-`H`.

A closer is predictable from its left (its opener sits right before it), an opener only from its right,
so half of all blanks need right context. Everything here is numpy and vectorised over a batch.

Example:
    >>> import numpy as np
    >>> ids = sample_sentences(np.random.default_rng(0), 2)
    >>> ids.shape
    (2, 17)
    >>> decode(encode(decode(ids[0]))) == decode(ids[0])
    True
"""

from __future__ import annotations

import numpy as np

N_KINDS = 8  # bracket kinds a..h
N_PAIRS = 8  # pairs per sentence
SPECIALS = ("[CLS]", "[MASK]")
OPENERS = tuple("abcdefgh"[:N_KINDS])
CLOSERS = tuple("ABCDEFGH"[:N_KINDS])
VOCAB = SPECIALS + OPENERS + CLOSERS  # 18 tokens
TOKEN_ID = {tok: i for i, tok in enumerate(VOCAB)}

CLS_ID = TOKEN_ID["[CLS]"]
MASK_ID = TOKEN_ID["[MASK]"]
FIRST_OPENER = len(SPECIALS)  # ids [2, 10) are openers
FIRST_CLOSER = FIRST_OPENER + N_KINDS  # ids [10, 18) are closers
CONTENT_IDS = np.arange(FIRST_OPENER, len(VOCAB))  # what a random replacement may be
SEQ_LEN = 1 + 2 * N_PAIRS  # 17


def sample_sentences(rng: np.random.Generator, n: int, n_pairs: int = N_PAIRS) -> np.ndarray:
    """Draw `n` well-formed sentences as token ids, shape (n, 1 + 2 * n_pairs), dtype int64.

    Each opener is uniform over the kinds; its closer follows it.
    """
    kinds = rng.integers(0, N_KINDS, size=(n, n_pairs))  # (n, P)
    pairs = np.stack([FIRST_OPENER + kinds, FIRST_CLOSER + kinds], axis=-1)  # (n, P, 2)
    cls = np.full((n, 1), CLS_ID)
    return np.concatenate([cls, pairs.reshape(n, -1)], axis=1).astype(np.int64)


def partner_index(seq_len: int = SEQ_LEN) -> np.ndarray:
    """The partner of every position: opener at 2k+1 <-> closer at 2k+2; [CLS] (0) is its own partner.

    >>> partner_index(5).tolist()
    [0, 2, 1, 4, 3]
    """
    if seq_len % 2 != 1:
        raise ValueError(f"seq_len must be 1 + 2 * pairs (odd), got {seq_len}")
    return np.concatenate([[0], np.arange(1, seq_len).reshape(-1, 2)[:, ::-1].ravel()])


def is_opener(ids: np.ndarray) -> np.ndarray:
    return (ids >= FIRST_OPENER) & (ids < FIRST_CLOSER)


def is_closer(ids: np.ndarray) -> np.ndarray:
    return (ids >= FIRST_CLOSER) & (ids < len(VOCAB))  # bounded: objectives may add tokens after the closers


def is_content(ids: np.ndarray) -> np.ndarray:
    """Openers and closers: what masking may pick (not [CLS], [MASK] or an objective's own [SEP])."""
    return is_opener(ids) | is_closer(ids)


def closer_of(opener_ids: np.ndarray) -> np.ndarray:
    """The closer id that matches each opener id."""
    return opener_ids + N_KINDS


def encode(text: str) -> np.ndarray:
    """Display form to ids: `"[CLS] d D e E"` -> array([0, 5, 13, 6, 14])."""
    try:
        return np.array([TOKEN_ID[tok] for tok in text.split()], dtype=np.int64)
    except KeyError as err:
        raise ValueError(f"unknown token {err.args[0]!r}; the vocabulary is {' '.join(VOCAB)}") from None


def decode(ids) -> str:
    """Ids to display form, e.g. `[CLS] d D e E g G ...`."""
    return " ".join(VOCAB[int(i)] for i in np.asarray(ids).ravel())
