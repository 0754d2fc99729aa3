"""A language written outside the package, as docs/languages.md walks through it: `[CLS]`, then `half`
lowercase tokens, then the same tokens in uppercase, in the same order (`[CLS] c a b C A B`). Each
uppercase token copies the lowercase one `half` positions to its left: crossing dependencies, which no
bracket language has."""

from __future__ import annotations

import numpy as np

from minibert.languages import CLS_ID, Language


class Copy(Language):
    def __init__(self, kinds: int = 4, half: int = 6) -> None:
        self.kinds, self.half = kinds, half
        letters = "abcdefghijklmnopqrstuvwxyz"[:kinds]
        super().__init__(tuple(letters) + tuple(letters.upper()), seq_len=1 + 2 * half)

    def params(self) -> dict:
        return {"kinds": self.kinds, "half": self.half}

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        first = 2 + rng.integers(0, self.kinds, size=(n, self.half))  # (n, half) lowercase ids
        return np.concatenate([np.full((n, 1), CLS_ID), first, first + self.kinds], axis=1)

    def is_opener(self, ids):
        return (ids >= 2) & (ids < 2 + self.kinds)

    def is_closer(self, ids):
        return (ids >= 2 + self.kinds) & (ids < self.vocab_size)

    def partner(self, ids: np.ndarray) -> np.ndarray:
        shift = self.half * (self.is_opener(ids).astype(np.int64) - self.is_closer(ids))
        return np.arange(ids.shape[1]) + shift

    def cavity(self, likelihood: np.ndarray, causal: bool = False) -> np.ndarray:
        k, h = self.kinds, self.half
        lower = likelihood[:, 1 : 1 + h, 2 : 2 + k]  # (B, half, k): evidence for each copied type
        upper = likelihood[:, 1 + h :, 2 + k : 2 + 2 * k]
        out = np.zeros(likelihood.shape)
        out[:, 0, CLS_ID] = 1.0
        out[:, 1 : 1 + h, 2 : 2 + k] = np.ones_like(lower) if causal else upper  # the copy is on the right
        out[:, 1 + h :, 2 + k : 2 + 2 * k] = lower
        return out / out.sum(-1, keepdims=True)

    def spoil(self, ids: np.ndarray, rng: np.random.Generator):
        out = ids.copy()
        rows = np.arange(len(ids))
        at = 1 + self.half + rng.integers(0, self.half, size=len(ids))  # one copy gets another type
        out[rows, at] = (
            2 + self.kinds + (ids[rows, at] - 2 - self.kinds + rng.integers(1, self.kinds, len(ids))) % self.kinds
        )
        return out, at, np.zeros(len(ids), dtype=np.int64)

    def contains(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.shape[1] != self.seq_len:
            return np.zeros(len(ids), dtype=bool)
        first, second = ids[:, 1 : 1 + self.half], ids[:, 1 + self.half :]
        return (ids[:, 0] == CLS_ID) & self.is_opener(first).all(1) & (second == first + self.kinds).all(1)
