"""Dyck: well-nested brackets of `kinds` types, sentences of exactly `length` tokens after [CLS], nesting
depth at most `max_depth`, drawn uniformly over all such words.

A word is a shape (a path of opens and closes that never goes below 0 or above `max_depth` and ends at 0)
plus a type per pair; every shape has the same number of typings, so a uniform shape followed by i.i.d.
uniform types is uniform over words. A closer must match the most recent unclosed opener, which may sit
anywhere on its left: the answer to a blank is a matter of structure, not of the neighbouring token.

The exact oracle runs the inside algorithm over the bracket structure (first bracket of a span and its
partner, depth-bounded), with pair types summed out in each pair's weight. The partition function Z is
linear in each position's likelihood, so dZ/dlikelihood[t] is position t's unnormalised cavity:
autograd gives every bidirectional cavity in one backward pass. The causal form needs the left context
only and has a closed form over prefixes (see `_causal`).

Example:
    >>> import numpy as np
    >>> dyck = Dyck(kinds=2, length=6, max_depth=2)
    >>> ids = dyck.sample(np.random.default_rng(0), 3)
    >>> ids.shape, bool(dyck.contains(ids).all())
    ((3, 7), True)
    >>> dyck.decode(dyck.encode("[CLS] a b B A b B"))
    '[CLS] a b B A b B'
"""

from __future__ import annotations

import numpy as np
import torch

from minibert.languages.base import CLS_ID, SPECIALS, Language
from minibert.validation import POSITIVE, POSITIVE_INT, Range, check

_FIRST = len(SPECIALS)  # id of the first opener
_MAX_CHUNK = 500  # sentences per oracle pass at most; fewer when one sentence's pass is large (`_chunk`)
# The oracle's cost per sentence, fitted on a 2-core x86 machine (L = 32..256, D = 3..12; results/dyck.md):
# the bidirectional form keeps autograd's O(L^3 D) inside products, the causal one a (L + 1)^2 (D + 1) table.
_BYTES = {False: lambda L, D: (D + 1) * L**3 / 3, True: lambda L, D: 11 * (D + 1) * L**2}
_OVERHEAD = 64e6  # bytes a first pass takes whatever its size (torch's autograd and allocator)
_PASS_SHARE = 0.8  # of `oracle_memory_gb`, for the cavity's passes; the grader's arrays take a tenth
_SECONDS = {False: lambda L, D: 2.0e-9 * (D + 1) * L**3, True: lambda L, D: 0.5e-9 * (D + 1) * L**3}
_DISTANCES = ((1, 1), (2, 3), (4, 7), (8, None))  # partner-distance buckets, inclusive
_DEPTHS = ((1, 1), (2, 2), (3, 3), (4, None))  # nesting-depth buckets (1 = outermost)


def _bucket_name(prefix: str, low: int, high: int | None) -> str:
    if high is None:
        return f"{prefix}_{low}_plus"
    return f"{prefix}_{low}" if low == high else f"{prefix}_{low}_{high}"


class Dyck(Language):
    """`kinds` <= 26 bracket types (openers a.., closers A..), `length` (even) tokens, depth <= `max_depth`;
    `oracle_memory_gb`: the memory the exact oracle may take (its passes shrink to fit; a language whose
    single sentence would not fit is refused here, naming what to lower)."""

    categories = tuple(_bucket_name("dist", lo, hi) for lo, hi in _DISTANCES) + tuple(
        _bucket_name("depth", lo, hi) for lo, hi in _DEPTHS
    )
    spoilings = ("swap", "move")
    # Minimal pairs (minibert.pairs): swaps that keep every type's count of openers and closers (a count
    # cannot tell the pair apart) and the depth profile, so the only fault is a closer that faces an opener of
    # another type. Stratified by that opener's distance (the context a model must read) and its depth.
    pair_edits = ("swap_adjacent", "swap_closers")

    @property
    def pair_strata_names(self) -> tuple[tuple[str, ...], ...]:
        """The distance buckets a sentence of `length` tokens has room for, and the depth buckets `max_depth`
        allows."""
        return (
            tuple(_bucket_name("dist", lo, hi) for lo, hi in _DISTANCES if lo < self.length),
            tuple(_bucket_name("depth", lo, hi) for lo, hi in _DEPTHS if lo <= self.max_depth),
        )

    def __init__(self, kinds: int = 4, length: int = 32, max_depth: int = 6, oracle_memory_gb: float = 2.0) -> None:
        check("Dyck", "kinds", kinds, Range(low=1, high=26, integer=True))
        check("Dyck", "length", length, POSITIVE_INT)
        check("Dyck", "max_depth", max_depth, POSITIVE_INT)
        check("Dyck", "oracle_memory_gb", oracle_memory_gb, POSITIVE)
        if length % 2:
            raise ValueError(f"Dyck.length={length} is not allowed: a word of pairs has an even length")
        self.kinds, self.length, self.max_depth = kinds, length, max_depth
        self.oracle_memory_gb = oracle_memory_gb
        one = max(self.oracle_cost(1, causal)[0] for causal in (False, True))
        if one > _PASS_SHARE * oracle_memory_gb * 1e9:
            raise ValueError(
                f"Dyck(length={length}, max_depth={max_depth}): its exact oracle needs about {one / 1e9:.1f} GB "
                f"for one sentence, over the {_PASS_SHARE:.0%} of oracle_memory_gb={oracle_memory_gb:g} its passes "
                "may take; lower length (the cost grows with its cube) or max_depth, or raise oracle_memory_gb if "
                "the machine has the memory"
            )
        letters = "abcdefghijklmnopqrstuvwxyz"[:kinds]
        super().__init__(tuple(letters) + tuple(letters.upper()), 1 + length)
        self.first_closer = _FIRST + kinds
        # shapes[d][r]: paths of r steps from depth d down to 0 that stay within [0, max_depth] (exact ints)
        shapes = [[0] * (length + 1) for _ in range(max_depth + 2)]
        shapes[0][0] = 1
        for r in range(1, length + 1):
            for d in range(max_depth + 1):
                shapes[d][r] = shapes[d + 1][r - 1] * (d < max_depth) + (shapes[d - 1][r - 1] if d else 0)
        self.n_shapes = shapes[0][length]
        counts = np.array(shapes[: max_depth + 1], dtype=np.float64)  # (D + 1, L + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.vstack([counts[1:], np.zeros((1, length + 1))])[:, :-1] / counts[:, 1:]  # (D + 1, L)
        self._p_up = np.nan_to_num(np.hstack([np.zeros((max_depth + 1, 1)), up]))  # [d, r]: P(open | d, r left)
        # completions[d, r]: ways to finish from depth d in r tokens, the new pairs' types included
        steps = np.arange(length + 1)[None, :] - np.arange(max_depth + 1)[:, None]  # r - d
        self._completions = counts * float(kinds) ** np.clip(steps // 2, 0, None)

    def params(self) -> dict:
        return {"kinds": self.kinds, "length": self.length, "max_depth": self.max_depth}

    def at_length(self, length: int) -> Dyck:
        """Dyck of `length` tokens with the same types and depth bound (and oracle memory)."""
        return Dyck(self.kinds, length, self.max_depth, self.oracle_memory_gb)

    # --- sampling ------------------------------------------------------------------------------------------

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        L = self.length
        if self.n_shapes > 1:
            u = rng.random((n, L))
            opens = np.empty((n, L), dtype=bool)
            depth = np.zeros(n, dtype=np.int64)
            for t in range(L):
                opens[:, t] = u[:, t] < self._p_up[depth, L - t]
                depth += np.where(opens[:, t], 1, -1)
        else:  # a single shape (e.g. max_depth 1): nothing to draw
            opens = np.tile(np.arange(L) % 2 == 0, (n, 1))
        types = rng.integers(0, self.kinds, size=(n, L // 2))  # in the order the pairs open
        return self._typed(opens, types)

    def _typed(self, opens: np.ndarray, types: np.ndarray) -> np.ndarray:
        """Ids of the words with shapes `opens` (n, L) bool and pair types `types` (n, L / 2)."""
        n, L = opens.shape
        rows = np.arange(n)
        ids = np.empty((n, 1 + L), dtype=np.int64)
        ids[:, 0] = CLS_ID
        stack = np.zeros((n, self.max_depth + 1), dtype=np.int64)  # types of the open pairs
        depth = np.zeros(n, dtype=np.int64)
        opened = np.zeros(n, dtype=np.int64)
        for t in range(L):
            up = opens[:, t]
            new = types[rows, np.minimum(opened, types.shape[1] - 1)]
            top = stack[rows, np.maximum(depth - 1, 0)]
            ids[:, 1 + t] = np.where(up, _FIRST + new, self.first_closer + top)
            stack[rows[up], depth[up]] = new[up]
            depth += np.where(up, 1, -1)
            opened += up
        return ids

    # --- token classes and categories --------------------------------------------------------------------

    def is_opener(self, ids: np.ndarray) -> np.ndarray:
        return (ids >= _FIRST) & (ids < self.first_closer)

    def is_closer(self, ids: np.ndarray) -> np.ndarray:
        return (ids >= self.first_closer) & (ids < self.vocab_size)

    def partner(self, ids: np.ndarray) -> np.ndarray:
        """The matching bracket's position (self elsewhere), by one pass of a stack over the positions.
        Non-bracket tokens ([CLS], [SEP]) are skipped, so a layout of several sentences works too."""
        B, T = ids.shape
        rows = np.arange(B)
        partner = np.tile(np.arange(T), (B, 1))
        stack = np.zeros((B, T + 1), dtype=np.int64)  # positions of the open brackets
        top = np.zeros(B, dtype=np.int64)
        for t in range(T):
            o = self.is_opener(ids[:, t])
            c = self.is_closer(ids[:, t]) & (top > 0)
            stack[rows[o], top[o]] = t
            top += o
            m = stack[rows, np.maximum(top - 1, 0)]
            partner[c, t] = m[c]
            partner[rows[c], m[c]] = t
            top -= c
        return partner

    def depth(self, ids: np.ndarray) -> np.ndarray:
        """(B, T) well-formed ids -> (B, T) int64: each bracket's pair nesting depth (1 = outermost), 0 off
        brackets. An opener's depth is the count of open brackets just after it; its closer's, just before."""
        opener, closer = self.is_opener(ids), self.is_closer(ids)
        level = np.cumsum(opener.astype(np.int64) - closer, axis=1)  # open brackets after each position
        return np.where(opener, level, np.where(closer, level + 1, 0))

    def structure(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(partner, depth) of every position."""
        return self.partner(ids), self.depth(ids)

    def category_masks(self, ids: np.ndarray, partner: np.ndarray) -> np.ndarray:
        distance = np.abs(partner - np.arange(ids.shape[1]))
        buckets = [(distance, _DISTANCES), (self.depth(ids), _DEPTHS)]
        masks = [(v >= lo) & (v <= (np.inf if hi is None else hi)) for v, edges in buckets for lo, hi in edges]
        bracket = self.is_content(ids)
        return np.stack(masks, axis=-1) & bracket[..., None]

    # --- membership and the grammaticality task ---------------------------------------------------------

    def contains(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.ndim != 2 or ids.shape[1] != self.seq_len:
            return np.zeros(len(ids), dtype=bool)
        B = len(ids)
        rows = np.arange(B)
        ok = ids[:, 0] == CLS_ID
        stack = np.zeros((B, self.max_depth + 1), dtype=np.int64)
        top = np.zeros(B, dtype=np.int64)
        for t in range(1, self.seq_len):
            x = ids[:, t]
            o, c = self.is_opener(x), self.is_closer(x)
            ok &= (o | c) & ~(o & (top >= self.max_depth)) & ~(c & (top == 0))
            ok &= ~c | (stack[rows, np.clip(top - 1, 0, self.max_depth)] == x - self.first_closer)
            push = o & ok
            stack[rows[push], top[push]] = x[push] - _FIRST
            top += np.where(ok, o.astype(np.int64) - c, 0)
        return ok & (top == 0)

    def _member(self, row: list[int]) -> bool:
        """`contains` for one sentence as a list (fast in pure Python, for rejection sampling)."""
        stack: list[int] = []
        for x in row[1:]:
            if _FIRST <= x < self.first_closer:
                if len(stack) == self.max_depth:
                    return False
                stack.append(x + self.kinds)
            elif not stack or stack.pop() != x:
                return False
        return row[0] == CLS_ID and not stack

    def spoil(self, ids: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Half (in expectation) get two closers of different types swapped: counts stay balanced, but the
        earlier one no longer matches its opener, wherever that is. The rest get one bracket moved to another
        position, redrawn until the result is not a word of the language. The type and count of every
        bracket are kept either way, so only the structure gives the sentence away."""
        out = ids.copy()
        way = rng.integers(0, len(self.spoilings), size=len(ids))
        first = np.empty(len(ids), dtype=np.int64)
        for b, row in enumerate(ids.tolist()):
            spoiled = self._moved(row, rng) if way[b] == 1 else None
            if spoiled is None:
                way[b], spoiled = 0, self._swapped(row, rng)
            if spoiled is None:  # every closer has the same type: only a move can break it
                way[b], spoiled = 1, self._moved(row, rng, tries=10_000)
            out[b] = spoiled
            first[b] = int(np.flatnonzero(out[b] != ids[b])[0])
        return out, first, way

    def _swapped(self, row: list[int], rng: np.random.Generator) -> list[int] | None:
        closers = [t for t, x in enumerate(row) if x >= self.first_closer]
        a = closers[rng.integers(len(closers))]
        others = [t for t in closers if row[t] != row[a]]
        if not others:
            return None
        b = others[rng.integers(len(others))]
        row = list(row)
        row[a], row[b] = row[b], row[a]
        return row

    def _moved(self, row: list[int], rng: np.random.Generator, tries: int = 100) -> list[int] | None:
        for _ in range(tries):
            src, dst = rng.integers(1, self.seq_len, size=2)
            if src == dst:
                continue
            moved = row[:src] + row[src + 1 :]
            moved.insert(dst, row[src])
            if not self._member(moved):
                return moved
        return None

    # --- minimal pairs ---------------------------------------------------------------------------------------

    def edit(self, row: list[int], name: str, rng: np.random.Generator) -> list[int] | None:
        """`swap_adjacent`: two neighbouring brackets of one class (openers or closers) and different types
        swapped; `swap_closers`: two closers of different types, not neighbours, swapped. Either keeps every
        type's counts and the depth profile, and the result is never a word (a closer now faces another type)."""
        if name == "swap_adjacent":
            spots = [
                (t, t + 1)
                for t in range(1, len(row) - 1)
                if row[t] != row[t + 1] and (row[t] < self.first_closer) == (row[t + 1] < self.first_closer)
            ]
        elif name == "swap_closers":
            closers = [t for t, x in enumerate(row) if x >= self.first_closer]
            spots = [(a, b) for i, a in enumerate(closers) for b in closers[i + 1 :] if b > a + 1 and row[a] != row[b]]
        else:
            raise ValueError(f"{self!r} has no minimal-pair edit {name!r}; its edits are {', '.join(self.pair_edits)}")
        if not spots:
            return None
        a, b = spots[rng.integers(len(spots))]
        bad = list(row)
        bad[a], bad[b] = bad[b], bad[a]
        return bad

    def pair_strata(self, good: list[int], bad: list[int]) -> tuple[str, ...]:
        """(distance bucket, depth bucket) of the nearest fault in `bad`: of the closers that face an opener of
        another type, the one closest to that opener. Its distance is how far left a model must look to see
        that the sentence is broken; its depth, the nesting it sits at (1 = outermost). The swaps keep the
        shape, so each closer faces the opener it closes in `good`."""
        stack: list[int] = []  # positions of the open brackets
        faults = []  # (distance, depth) of every closer facing another type
        for t, x in enumerate(bad):
            if _FIRST <= x < self.first_closer:
                stack.append(t)
            elif x >= self.first_closer and stack:
                opener = stack.pop()
                if bad[opener] != x - self.kinds:
                    faults.append((t - opener, len(stack) + 1))
        if not faults:
            raise ValueError(f"{self.decode(bad)} has no closer facing an opener of another type")
        distance, depth = min(faults)
        return tuple(
            next(_bucket_name(prefix, lo, hi) for lo, hi in edges if lo <= value and (hi is None or value <= hi))
            for prefix, edges, value in (("dist", _DISTANCES, distance), ("depth", _DEPTHS, depth))
        )

    # --- the exact oracle ---------------------------------------------------------------------------------

    def oracle_cost(self, n: int, causal: bool) -> tuple[float, float]:
        """(peak bytes, seconds), estimated, of the exact oracle on `n` sentences: one pass of `_chunk`
        sentences at a time bounds the memory; the time adds up over all of them."""
        L, D = self.length, min(self.max_depth, self.length // 2)
        return _OVERHEAD + min(n, self._chunk(causal)) * _BYTES[causal](L, D), n * _SECONDS[causal](L, D)

    def _chunk(self, causal: bool) -> int:
        """Sentences per oracle pass: as many as fit in _PASS_SHARE of the memory budget (the grader's arrays
        take a tenth, minibert.oracle.rows_per_pass), at least one (the constructor refused a language whose
        one sentence would not fit) and at most _MAX_CHUNK."""
        L, D = self.length, min(self.max_depth, self.length // 2)
        room = _PASS_SHARE * self.oracle_memory_gb * 1e9 - _OVERHEAD
        return min(_MAX_CHUNK, max(1, int(room // max(_BYTES[causal](L, D), 1.0))))

    def cavity(self, likelihood: np.ndarray, causal: bool = False) -> np.ndarray:
        lik = np.asarray(likelihood, dtype=np.float64)
        if lik.ndim != 3 or lik.shape[1] != self.seq_len or lik.shape[2] < self.vocab_size:
            raise ValueError(
                f"likelihood has shape {lik.shape}: expected (B, {self.seq_len}, V >= {self.vocab_size}) for {self!r}"
            )
        brackets = lik[:, 1:, _FIRST : self.vocab_size]  # (B, L, 2k): only brackets occur after [CLS]
        scale = brackets.max(-1, keepdims=True)  # each position's scale cancels in its own cavity
        if not (scale > 0).all():
            raise ValueError("likelihood is zero for every bracket at some position: that evidence is impossible")
        out = np.zeros(lik.shape, dtype=np.float64)
        out[:, 0, CLS_ID] = 1.0
        form = self._causal if causal else self._bidirectional
        chunk = self._chunk(causal)
        for start in range(0, len(lik), chunk):
            x = torch.from_numpy(brackets[start : start + chunk] / scale[start : start + chunk])
            weights = form(x)  # (b, L, 2k) unnormalised
            total = weights.sum(-1, keepdim=True)
            if not (total > 0).all():
                raise ValueError("the evidence is impossible under the language (no word explains it)")
            out[start : start + chunk, 1:, _FIRST : self.vocab_size] = (weights / total).numpy()
        return out

    def _inside(self, lo: torch.Tensor, lc: torch.Tensor) -> dict[int, torch.Tensor]:
        """Inside weights: `N[l][:, i, d]` sums, over the well-nested words on content positions [i, i + l)
        of depth <= d, the product of their likelihoods. (b, L + 1 - l, D + 1) for every even l."""
        b, L, _ = lo.shape
        D = self.max_depth
        # pair[a][:, i]: opener at i and closer at i + a of the same type, summed over types; a is odd
        pair = {a: (lo[:, : L - a] * lc[:, a:]).sum(-1)[..., None] for a in range(1, L, 2)}  # (b, L - a, 1)
        N = {0: torch.ones(b, L + 1, D + 1, dtype=lo.dtype)}
        for span in range(2, L + 1, 2):
            n = L + 1 - span
            total = 0
            for a in range(1, span, 2):  # the span's first bracket closes at i + a
                w = pair[a][:, :n]  # (b, n, 1)
                inner = N[a - 1][:, 1 : 1 + n, :D]  # depth <= d - 1 inside the pair
                rest = N[span - a - 1][:, a + 1 : a + 1 + n, 1:]  # depth <= d after it
                total = total + w * inner * rest
            N[span] = torch.cat([torch.zeros(b, n, 1, dtype=lo.dtype), total], dim=-1)
        return N

    def _bidirectional(self, x: torch.Tensor) -> torch.Tensor:
        x = x.clone().requires_grad_(True)
        N = self._inside(x[..., : self.kinds], x[..., self.kinds :])
        Z = N[self.length][:, 0, self.max_depth]  # (b,)
        (grad,) = torch.autograd.grad(Z.sum(), x)  # Z is linear in each position's likelihood
        return grad.detach()

    @torch.no_grad()
    def _causal(self, x: torch.Tensor) -> torch.Tensor:
        """P(w_p | positions < p) from prefix weights F[j, d]: words on [0, j) ending at depth d, with every
        opener still open weighted by its likelihood summed over types (its closer lies in the unseen
        future). A prefix ends in its last open bracket m and a well-nested segment (m, j) of depth <= D - d.
        Position p then opens (any type, weight F[p, d] times the completions from d + 1) or closes the
        opener at some m < p (type t: lo[m, t] times the segment between, times completions from d - 1)."""
        b, L, _ = x.shape
        D, k = self.max_depth, self.kinds
        lo = x[..., :k]
        N = self._inside(lo, x[..., k:])
        seg = torch.zeros(b, L + 1, L + 1, D + 1, dtype=x.dtype)  # seg[:, i, j, e] = N[j - i][:, i, e]
        for span, weights in N.items():
            i = torch.arange(L + 1 - span)
            seg[:, i, i + span] = weights
        open_weight = lo.sum(-1)  # (b, L)
        F = torch.zeros(b, L + 1, D + 1, dtype=x.dtype)
        for j in range(L + 1):
            F[:, j, 0] = seg[:, 0, j, D]
            if j:  # last open bracket at m < j; depth d = 1..D indexes F[:, m, d - 1] and seg[..., D - d]
                F[:, j, 1:] = (F[:, :j, :D] * open_weight[:, :j, None] * seg[:, 1 : j + 1, j, :D].flip(-1)).sum(1)
        completions = torch.from_numpy(self._completions)  # (D + 1, L + 1)
        out = torch.zeros(b, L, 2 * k, dtype=x.dtype)
        for p in range(L):
            left = L - p - 1
            out[:, p, :k] = (F[:, p, :D] * completions[1:, left]).sum(-1, keepdim=True)
            if p:
                ways = F[:, :p, :D] * seg[:, 1 : p + 1, p, :D].flip(-1)  # (b, p, D): opener m at depth d
                out[:, p, k:] = torch.einsum("bmt,bmd,d->bt", lo[:, :p], ways, completions[:D, left])
        return out
