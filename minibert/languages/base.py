"""The language interface: what a toy language owns, so that objectives, tasks and metrics work on any of them.

A language is a set of sentences `[CLS] w_1 ... w_L` over its own tokens. It owns:

- its vocabulary (ids 0 and 1 are always `[CLS]` and `[MASK]`; its own tokens follow) and `seq_len`;
- `sample(rng, n)`: sentences drawn with `rng` alone;
- the token classes that metric categories use: `is_opener`/`is_closer`, `partner` (the position of the
  bracket that answers each one), which of the shared categories apply (`shared_categories`) and any
  categories of its own (`categories`, `category_masks`, and which of them the model's input decides:
  `input_categories`);
- an exact Bayes oracle, `cavity(likelihood, causal)`: the distribution of the true token at every
  position given what the *other* positions show (all of them, or only those on the left), where
  `likelihood[b, t, w]` is the chance of what position t shows if its true token is w. minibert.oracle
  turns it into the posterior and the ceiling of any corruption whose positions are corrupted
  independently (BERT's recipe);
- its grammaticality task: `spoil(ids, rng)` makes sentences that are not in the language, `contains`
  tells members apart;
- its minimal pairs (minibert.pairs): the edits that make a bad sentence from a good one (`pair_edits`,
  `edit`) and the strata a pair falls in (`pair_strata`). A language that names no edits but has
  `contains` gets the default: two positions of different tokens swapped (every token's count kept), kept
  where `contains` says the result is out of the language.

Adding a language is one file that subclasses `Language` (docs/languages.md walks through one), named by
class path in YAML under `objective.init_args.language`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

SPECIALS = ("[CLS]", "[MASK]")
CLS_ID, MASK_ID = 0, 1


class Language(ABC):
    """Base class of every language. Subclasses call `super().__init__(tokens, seq_len)`."""

    #: names of the language's own categories, in the column order of `category_masks`
    categories: tuple[str, ...] = ()
    #: those of its own categories that are a function of what the model sees (which position, which tokens
    #: are shown). Only they, and the overall accuracy, have a per-category Bayes bound; on a category that
    #: depends on hidden truth (the true token, its partner) a predictor may beat the Bayes predictor.
    input_categories: tuple[str, ...] = ()
    #: which of the shared categories (minibert.masking.SHARED_CATEGORIES) apply: "opener"/"closer" need
    #: `is_opener`/`is_closer` to mean something, "partner_visible"/"partner_hidden" need `partner`
    shared_categories: tuple[str, ...] = ("opener", "closer", "partner_visible", "partner_hidden")
    #: names of the ways `spoil` breaks a sentence, one category each in the grammaticality task
    spoilings: tuple[str, ...] = ()
    #: the accuracy of a token guess that sees nothing but the position, where it is simple to state (None:
    #: left out; the exact ceiling says more)
    chance: float | None = None
    #: whether `cavity` gives the exact oracle (real text has none: its cloze is read against references)
    has_oracle: bool = True
    #: whether `spoil` and `contains` define a grammaticality task
    has_grammar: bool = True
    #: the edits `edit` knows, one category each in the minimal pairs (empty: the default swap, where
    #: `has_grammar` gives `contains` to tell which swaps break a sentence)
    pair_edits: tuple[str, ...] = ()
    #: the strata a pair can fall in, in the order `pair_strata` reports them: the pairs are drawn in equal
    #: numbers per (edit, first stratum) cell; a language without strata has one, "all"
    pair_strata_names: tuple[tuple[str, ...], ...] = (("all",),)

    def __init__(self, tokens: Sequence[str], seq_len: int) -> None:
        self.vocab = SPECIALS + tuple(tokens)
        self.seq_len = seq_len
        self.token_id = {tok: i for i, tok in enumerate(self.vocab)}
        self.content_ids = np.arange(len(SPECIALS), len(self.vocab))  # what a random replacement may be

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def params(self) -> dict:
        """The constructor arguments that define this language (for equality, repr and caches)."""
        return {}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.params() == self.params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.params().items()))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.params().items())})"

    def at_length(self, length: int) -> Language:
        """The same language with sentences of `length` tokens after [CLS] (for length generalisation); a
        language without a length setting refuses."""
        raise ValueError(f"{self!r} has no length setting, so it cannot be graded at length {length}")

    @abstractmethod
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` sentences as token ids, (n, seq_len) int64, each starting with [CLS]."""

    def draw(self, rng: np.random.Generator, n: int, split: str) -> np.ndarray:
        """`sample` for the `split` ("train" or "val") an objective makes a batch of. A generated language
        draws both from one distribution (the validation set has its own seed); a corpus keeps them apart."""
        return self.sample(rng, n)

    def distinct(self, split: str) -> int | None:
        """How many distinct sentences one `draw` of `split` can give at most (a corpus's held-out windows); None
        where there is no limit (a generated language)."""
        return None

    def draw_with_documents(self, rng: np.random.Generator, n: int, split: str) -> tuple[np.ndarray, np.ndarray | None]:
        """`draw` (the same sentences from the same `rng`), and per token the document it was taken from, (n,
        seq_len) int64, where sentences of one document share its quirks and its questions' sampling error
        clusters by document (a corpus); None where every sentence is its own independent draw (a generated
        language)."""
        return self.draw(rng, n, split), None

    def provenance(self) -> dict:
        """What a run records about where its sentences came from (summary.json's `language`): a corpus's hash
        and source; nothing for a generated language, which its parameters define."""
        return {}

    def artifacts(self) -> dict[str, str]:
        """File name -> content of what a run saves beside its config and in its checkpoints, for the runs that
        start from its weights (a trained tokenizer); none by default."""
        return {}

    def adopt(self, artifacts: dict[str, str]) -> None:
        """Take a pre-training run's `artifacts()` (a fine-tuning run reads its checkpoint's); nothing to take
        by default."""
        return None

    def reference_names(self, causal: bool) -> tuple[str, ...]:
        """The reference predictors a language without an exact oracle grades its cloze with (`references`),
        those that read the left only for a `causal` encoder; none for a language with an oracle."""
        return ()

    def word_starts(self, ids: np.ndarray) -> np.ndarray:
        """(B, T) -> (B, T) bool: the content positions that begin a word (whole-word masking picks words).
        Every token is a word of its own unless a language says otherwise (text's WordPiece pieces)."""
        return self.is_content(ids)

    @abstractmethod
    def is_opener(self, ids: np.ndarray) -> np.ndarray:
        """Elementwise: is this id an opener?"""

    @abstractmethod
    def is_closer(self, ids: np.ndarray) -> np.ndarray:
        """Elementwise: is this id a closer? (ids past the vocabulary, such as an objective's [SEP], are not)"""

    def is_content(self, ids: np.ndarray) -> np.ndarray:
        """The language's own tokens: what masking may pick (not [CLS], [MASK] or an objective's [SEP])."""
        return (ids >= len(SPECIALS)) & (ids < self.vocab_size)

    @abstractmethod
    def partner(self, ids: np.ndarray) -> np.ndarray:
        """(B, T) -> (B, T) int64: the position of the bracket that answers each one in well-formed `ids`
        (other tokens, such as [CLS] or [SEP], point at themselves)."""

    def category_masks(self, ids: np.ndarray, partner: np.ndarray) -> np.ndarray:
        """(B, T) well-formed ids and their `partner(ids)` -> (B, T, len(categories)) bool: the language's
        own categories (the partner is passed in, so that it is worked out once per batch)."""
        return np.zeros((*ids.shape, 0), dtype=bool)

    @abstractmethod
    def cavity(self, likelihood: np.ndarray, causal: bool = False) -> np.ndarray:
        """The exact distribution of each position's true token given the evidence of the other positions.

        likelihood: (B, seq_len, V) float, `likelihood[b, t, w]` = P(what position t shows | its token is w).
        Returns (B, seq_len, V) float64 whose rows sum to 1: row t is P(w_t | positions s != t) when
        `causal` is False, and P(w_t | positions s < t) when True. Sentences are drawn by `sample`.
        """

    def oracle_cost(self, n: int, causal: bool) -> tuple[float, float]:
        """(peak bytes, seconds), estimated, of `cavity` on `n` sentences; (0, 0) when it is negligible."""
        return 0.0, 0.0

    @abstractmethod
    def spoil(self, ids: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Break each of the (B, T) sentences once: returns (spoiled ids, the first position that changed,
        the index into `spoilings` of how it was broken), every spoiled sentence outside the language."""

    @abstractmethod
    def contains(self, ids: np.ndarray) -> np.ndarray:
        """(B, T) -> (B,) bool: which rows are sentences of the language."""

    def edit(self, row: list[int], name: str, rng: np.random.Generator) -> list[int] | None:
        """A bad sentence made from the good one `row` by the edit `name` of `pair_edits`, or None where that
        edit does not apply to it. The default has no edits of its own (see `pair_edits`)."""
        raise NotImplementedError(f"{self!r} names no minimal-pair edits")

    def pair_strata(self, good: list[int], bad: list[int]) -> tuple[str, ...]:
        """The stratum of a pair along each axis of `pair_strata_names` (one name per axis); "all" by default."""
        return ("all",)

    def encode(self, text: str) -> np.ndarray:
        """Display form to ids: `"[CLS] d D e E"` -> array([0, 5, 13, 6, 14]) in the bracket languages."""
        try:
            return np.array([self.token_id[tok] for tok in text.split()], dtype=np.int64)
        except KeyError as err:
            raise ValueError(
                f"unknown token {err.args[0]!r}; the vocabulary of {self!r} is {' '.join(self.vocab)}"
            ) from None

    def decode(self, ids) -> str:
        """Ids to display form, e.g. `[CLS] d D e E g G ...`."""
        return " ".join(self.vocab[int(i)] for i in np.asarray(ids).ravel())
