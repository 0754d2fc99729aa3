"""Minimal pairs: two sentences that differ by one edit, one in the language and one not (BLiMP's design,
Warstadt et al. 2020), drawn from a language's own sentences with exact labels.

A pair's categories are its edit (`Language.pair_edits`) and its strata (`Language.pair_strata`: for the
bracket languages, how far left the fault's evidence sits and at what depth). Pairs are drawn in equal numbers
per cell, an edit crossed with the first stratum, so rare strata (long distances) are oversampled against
their share of the language, and every cell's accuracy has the same sampling error. A cell the language never
makes (none in UNSEEN_DRAWS draws while every other cell is full: an edit that cannot reach a stratum) is left
out; one it makes too rarely to fill is an error.

A language that names no edits but can tell members apart (`has_grammar`) gets the default edit, `swap`:
two positions holding different tokens are swapped (every token's count kept), and the pair is kept where
`contains` says the result is out of the language. A language with neither is refused in one line.

Example:
    >>> import numpy as np
    >>> from minibert.languages import Dyck
    >>> pairs = draw_pairs(Dyck(), np.random.default_rng(0), per_cell=5)
    >>> len(pairs), pairs.cells[:2]
    (40, ('swap_adjacent-dist_1', 'swap_adjacent-dist_2_3'))
    >>> bool(Dyck().contains(pairs.good).all()), bool(Dyck().contains(pairs.bad).any())
    (True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minibert.languages import Language
from minibert.validation import POSITIVE_INT, check

DEFAULT_EDIT = "swap"
SENTENCES_PER_DRAW = 256  # good sentences drawn at a time while cells fill
MAX_DRAWS = 400  # draws before a cell that is still short is reported as one the language rarely makes
UNSEEN_DRAWS = 20  # a cell still empty after this many draws, when every other is full, is one it never makes


CELL = "-"  # between an edit and a stratum in a cell's name: swap_adjacent-dist_8_plus


def cell_name(edit: str, stratum: str) -> str:
    return f"{edit}{CELL}{stratum}"


class PairsUnavailable(ValueError):
    """The language cannot make minimal pairs (no edits and no membership test), or not in these cells."""


@dataclass(frozen=True)
class MinimalPairs:
    """N pairs of one language: `good` and `bad` (N, T) int64 ids, `categories` (N, C) bool over `names`
    (edits, then every stratum, then the cells `edit/stratum`), and `cell` (N,) int64 into `cells`."""

    good: np.ndarray
    bad: np.ndarray
    names: tuple[str, ...]
    categories: np.ndarray
    cells: tuple[str, ...]
    cell: np.ndarray

    def __len__(self) -> int:
        return len(self.good)

    def by_category(self, credit: np.ndarray) -> np.ndarray:
        """(N,) credit per pair -> (C,) its mean over each category's pairs (NaN for a category with none)."""
        with np.errstate(invalid="ignore"):
            return (credit[:, None] * self.categories).sum(0) / self.categories.sum(0)

    def subset(self, rows: np.ndarray) -> MinimalPairs:
        return MinimalPairs(self.good[rows], self.bad[rows], self.names, self.categories[rows], self.cells,
                            self.cell[rows])  # fmt: skip


def edits_of(language: Language) -> tuple[str, ...]:
    """The edits `language` makes pairs with: its own, or the default swap where it can tell members apart.
    Raises PairsUnavailable, in one line, for a language that can do neither."""
    if language.pair_edits:
        return tuple(language.pair_edits)
    if language.has_grammar:
        return (DEFAULT_EDIT,)
    raise PairsUnavailable(
        f"{type(language).__name__} cannot make minimal pairs: it names no `pair_edits` and has no membership "
        "test (`has_grammar` is False); give it edits (`pair_edits` and `edit`, docs/languages.md) or a `contains`"
    )


def _default_swap(language: Language, row: list[int], rng: np.random.Generator) -> list[int] | None:
    """Two content positions holding different tokens swapped, if the result is out of the language (a few
    tries; None where none of them breaks the sentence)."""
    content = [t for t, x in enumerate(row) if language.is_content(np.array([x]))[0]]
    for _ in range(20):
        a, b = rng.choice(content, size=2, replace=False) if len(content) > 1 else (0, 0)
        if row[a] == row[b]:
            continue
        bad = list(row)
        bad[a], bad[b] = bad[b], bad[a]
        if not language.contains(np.array([bad]))[0]:
            return bad
    return None


def draw_pairs(language: Language, rng: np.random.Generator, per_cell: int, split: str = "val") -> MinimalPairs:
    """`per_cell` pairs for every (edit, first stratum) cell, from good sentences `language.draw(rng, ..., split)`
    (a corpus keeps its training and validation documents apart; a generated language draws both alike).
    Raises PairsUnavailable naming the cells the language could not fill within the draws allowed."""
    check("draw_pairs", "per_cell", per_cell, POSITIVE_INT)
    edits = edits_of(language)
    strata = language.pair_strata_names
    cells = tuple(cell_name(e, s) for e in edits for s in strata[0])
    index = {c: i for i, c in enumerate(cells)}
    found: dict[str, list[tuple[list[int], list[int], tuple[str, ...]]]] = {c: [] for c in cells}
    for draws in range(1, MAX_DRAWS + 1):
        for row in language.draw(
            rng, min(SENTENCES_PER_DRAW, language.distinct(split) or SENTENCES_PER_DRAW), split
        ).tolist():
            for name in edits:
                bad = _default_swap(language, row, rng) if name == DEFAULT_EDIT else language.edit(row, name, rng)
                if bad is None:
                    continue
                where = language.pair_strata(row, bad)
                cell = cell_name(name, where[0])
                if cell not in index:
                    raise ValueError(f"{language!r}.pair_strata gave {where[0]!r}, not one of {strata[0]}: make "
                                     "`pair_strata_names` list every stratum `pair_strata` returns")  # fmt: skip
                if len(found[cell]) < per_cell:
                    found[cell].append((row, bad, where))
        if all(len(v) in ((0, per_cell) if draws >= UNSEEN_DRAWS else (per_cell,)) for v in found.values()):
            break
    found = {c: v for c, v in found.items() if v}  # a cell the language never made is not one of its cells
    if short := [f"{c} ({len(v)})" for c, v in found.items() if len(v) < per_cell]:
        raise PairsUnavailable(
            f"{language!r} made fewer than {per_cell} pairs in {', '.join(short)} from "
            f"{MAX_DRAWS * SENTENCES_PER_DRAW} sentences; ask for fewer pairs per cell, or narrow its "
            "`pair_strata_names` to the strata it makes often"
        )
    if not found:
        raise PairsUnavailable(f"{language!r} made no minimal pair from {MAX_DRAWS * SENTENCES_PER_DRAW} sentences")
    cells = tuple(found)
    index = {c: i for i, c in enumerate(cells)}
    names = (*edits, *dict.fromkeys(s for axis in strata for s in axis), *cells)
    column = {n: i for i, n in enumerate(names)}
    rows = [(good, bad, name, where) for cell, items in found.items() for good, bad, where in items
            for name in [cell.split(CELL)[0]]]  # fmt: skip
    categories = np.zeros((len(rows), len(names)), dtype=bool)
    for i, (_, _, name, where) in enumerate(rows):
        for n in (name, *where, cell_name(name, where[0])):
            categories[i, column[n]] = True
    return MinimalPairs(
        good=np.array([r[0] for r in rows], dtype=np.int64),
        bad=np.array([r[1] for r in rows], dtype=np.int64),
        names=names,
        categories=categories,
        cells=cells,
        cell=np.array([index[cell_name(r[2], r[3][0])] for r in rows], dtype=np.int64),
    )
