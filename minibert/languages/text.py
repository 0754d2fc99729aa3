"""Real text: windows of a WordPiece-tokenized corpus, English docstrings of the standard library by default.

Stack `configs/languages/text.yaml` on a pre-training config to train on it. The corpus (minibert.text.corpus)
is split by module, a WordPiece vocabulary of `vocab_size` is trained on the training split only
(minibert.text.wordpiece), and both are cached in the user's cache directory (minibert.text.prepared): nothing
is downloaded. A sentence is `[CLS]` and `length` consecutive tokens of one side's stream, packed across
documents with [SEP] between them; training windows start anywhere, validation windows are distinct
non-overlapping stretches of the validation stream, so no validation token is graded twice.

Real text has no exact oracle (`has_oracle` is False): its cloze is read against n-gram references counted
on the training split (minibert.references.ngrams), graded on the same questions. Its categories:

- `whole_word` / `subword`: the graded token is a word of one piece, or a piece of a word of several (the
  last position of a window is judged by the pieces inside the window);
- `frequent` / `rare`: by training count, the types that make up the most common half of the training
  tokens, and those that make up the least common tenth.

Which of them a position belongs to depends on its true token, so none is decided by the input.

Its minimal pairs (minibert.pairs) are made from windows of the held-out documents, in the corpus's own words,
one edit each (docs/pairs.md says why these three):

- `word_swap`: two neighbouring words of letters swapped (every piece of each kept together);
- `agreement`: a verb's number flipped where the vocabulary holds both forms as whole words (is/are,
  was/were, has/have, does/do), or a demonstrative's (this/these);
- `article`: a/an swapped.

A corpus has no grammar to check them against: the edited window is taken to be worse English, which holds
for nearly every such edit of edited prose but not for all (the ceiling is not an exact 100%).

Example:
    >>> import numpy as np
    >>> text = Text()  # the standard library's docstrings, 2,048 pieces, 63 tokens after [CLS]
    >>> ids = text.draw(np.random.default_rng(0), 2, "train")
    >>> ids.shape, text.decode(text.encode("Return the tokenizers"))
    ((2, 64), '[CLS] return the token ##ize ##r ##s')
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from minibert.languages.base import CLS_ID, MASK_ID, Language
from minibert.references.ngrams import NGramCounts
from minibert.text import prepared, wordpiece
from minibert.validation import POSITIVE_INT, UNIT_INTERVAL, check

FREQUENT_SHARE, RARE_SHARE = 0.5, 0.1  # of the training tokens: the most common types, the least common
FLIPS = (("is", "are"), ("was", "were"), ("has", "have"), ("does", "do"), ("this", "these"), ("a", "an"))


class Text(Language):
    """corpus: a path to the user's corpus (None: the standard library's docstrings); vocab_size: the WordPiece
    vocabulary's size, specials included; length: tokens per window after [CLS]; val_share: the share of
    the corpus's characters held out for validation; tokenizer: a saved tokenizer.json to use instead of
    training one (a fine-tuning run takes its pre-training run's from the checkpoint)."""

    categories = ("whole_word", "subword", "frequent", "rare")
    pair_edits = ("word_swap", "agreement", "article")
    shared_categories = ()
    has_oracle = False
    has_grammar = False

    def __init__(
        self, corpus: str | None = None, vocab_size: int = 2048, length: int = 63, val_share: float = 0.1,
        tokenizer: str | None = None,
    ) -> None:  # fmt: skip
        check("Text", "vocab_size", vocab_size, POSITIVE_INT)
        check("Text", "length", length, POSITIVE_INT)
        check("Text", "val_share", val_share, UNIT_INTERVAL)
        self.corpus, self.vocab_size_asked, self.length, self.val_share = corpus, vocab_size, length, val_share
        self.tokenizer = None if tokenizer is None else str(tokenizer)
        given = None
        if self.tokenizer is not None:
            try:
                with open(self.tokenizer) as f:
                    given = f.read()
            except OSError as err:
                raise ValueError(f"Text.tokenizer={self.tokenizer!r} cannot be read: {err.strerror}") from None
        self._load(given)

    def _load(self, tokenizer_json: str | None) -> None:
        """Build (or read from the cache) the corpus, vocabulary, streams and references."""
        data = prepared.prepare(self.corpus, self.val_share, self.vocab_size_asked, tokenizer_json)
        if tokenizer_json is None and len(data.vocab) < self.vocab_size_asked:
            warnings.warn(
                f"Text.vocab_size={self.vocab_size_asked}: the training split yields only {len(data.vocab)} pieces, so "
                f"the vocabulary has {len(data.vocab)}; ask for at most that, or give a larger corpus",
                stacklevel=2,
            )
        self.data = data
        super().__init__(tuple(data.vocab[len(("[CLS]", "[MASK]")) :]), 1 + self.length)
        self.content_ids = np.arange(wordpiece.FIRST_PIECE, len(self.vocab))
        self.sep_id = wordpiece.SEP_ID
        V = len(self.vocab)
        self.continuation = np.array([t.startswith(wordpiece.CONTINUATION) for t in self.vocab] + [False])  # (V + 1,)
        train = data.streams["train"]
        if len(train) <= self.length:
            raise ValueError(
                f"the corpus's training split has {len(train)} tokens, too few for one window of Text.length="
                f"{self.length}: give it more text or lower length"
            )
        self.counts = _counts(self.corpus, self.val_share, self.vocab_size_asked, tokenizer_json)
        self.letters = np.array([t.removeprefix(wordpiece.CONTINUATION).isalpha() for t in self.vocab] + [False])
        self.flips = {self.token_id[a]: self.token_id[b] for pair in FLIPS for a, b in (pair, pair[::-1])
                      if a in self.token_id and b in self.token_id}  # fmt: skip
        order = np.argsort(-self.counts.unigram[wordpiece.FIRST_PIECE :], kind="stable") + wordpiece.FIRST_PIECE
        before = np.cumsum(self.counts.unigram[order]) - self.counts.unigram[order]  # tokens of commoner types
        total = self.counts.unigram[wordpiece.FIRST_PIECE :].sum()
        self.frequent = np.zeros(V + 1, dtype=bool)
        self.rare = np.zeros(V + 1, dtype=bool)
        self.frequent[order[before < FREQUENT_SHARE * total]] = True
        self.rare[order[before >= (1 - RARE_SHARE) * total]] = True
        val = data.streams["val"]
        self.val_windows = len(val) // self.length
        if self.val_windows == 0:
            raise ValueError(
                f"the corpus's validation split has {len(val)} tokens, too few for one window of Text.length="
                f"{self.length}: raise val_share or lower length"
            )

    def params(self) -> dict:
        return {"corpus": self.corpus, "vocab_size": self.vocab_size_asked, "length": self.length,
                "val_share": self.val_share, "tokenizer": self.tokenizer}  # fmt: skip

    def __eq__(self, other: object) -> bool:  # the same windows and the same vocabulary
        return type(other) is type(self) and other.params() == self.params() and other.vocab == self.vocab

    __hash__ = Language.__hash__

    def at_length(self, length: int) -> Text:
        """Windows of `length` tokens of the same corpus, with the same vocabulary."""
        other = Text(self.corpus, self.vocab_size_asked, length, self.val_share, self.tokenizer)
        other.adopt(self.artifacts())  # a tokenizer taken from a checkpoint stays
        return other

    # --- what a run records and carries over to fine-tuning ----------------------------------------------

    def provenance(self) -> dict:
        """The corpus and vocabulary a run trained on (summary.json's `language`)."""
        return {**self.data.corpus, "tokenizer_sha256": self.data.tokenizer_sha256, "vocab_size": len(self.vocab),
                "tokens": {s: int(len(v)) for s, v in self.data.streams.items()}}  # fmt: skip

    def artifacts(self) -> dict[str, str]:
        """Files saved with the run, and in its checkpoints: the trained tokenizer."""
        return {"tokenizer.json": self.data.tokenizer_json}

    def adopt(self, artifacts: dict[str, str]) -> None:
        """Use a pre-training run's tokenizer (from its checkpoint's `artifacts()`), so that a fine-tuning run
        reads the ids its encoder was trained on. A tokenizer given by path must be that one."""
        theirs = artifacts.get("tokenizer.json")
        if theirs is None or theirs == self.data.tokenizer_json:
            return
        if self.tokenizer is not None:
            raise ValueError(
                f"Text.tokenizer={self.tokenizer!r} is not the tokenizer the encoder was pre-trained with: leave "
                "it unset to take the checkpoint's"
            )
        self._load(theirs)

    # --- sentences ---------------------------------------------------------------------------------------

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.draw(rng, n, "train")

    def draw(self, rng: np.random.Generator, n: int, split: str) -> np.ndarray:
        """`n` windows of the `split` side, (n, 1 + length) int64, each after a [CLS]."""
        at = self._places(rng, n, split)
        return np.concatenate([np.full((n, 1), CLS_ID), self.data.streams[split][at]], axis=1)

    def distinct(self, split: str) -> int | None:
        """The validation split's windows (they never overlap); training windows start anywhere."""
        return self.val_windows if split == "val" else None

    def draw_with_documents(self, rng: np.random.Generator, n: int, split: str) -> tuple[np.ndarray, np.ndarray]:
        """`draw`'s windows and, per token, the index of its document in `data.documents[split]`, (n, 1 + length)
        int64 each: the [SEP] after a document counts with the next one, and [CLS] with the window's first token."""
        at = self._places(rng, n, split)
        ends = self.data.documents[split][:, 1]  # (D,) where each document ends (exclusive)
        documents = np.minimum(np.searchsorted(ends, at, side="right"), len(ends) - 1)
        ids = np.concatenate([np.full((n, 1), CLS_ID), self.data.streams[split][at]], axis=1)
        return ids, np.concatenate([documents[:, :1], documents], axis=1)

    def _places(self, rng: np.random.Generator, n: int, split: str) -> np.ndarray:
        """(n, length) places in the `split` stream of `n` windows drawn with `rng` (what `draw` reads)."""
        stream, L = self.data.streams[split], self.length
        if split == "train":
            starts = rng.integers(0, len(stream) - L + 1, size=n)
        else:
            if n > self.val_windows:
                raise ValueError(
                    f"the validation split holds {self.val_windows} windows of {L} tokens, fewer than the "
                    f"{n} asked for: lower data.val_size to at most {self.val_windows}, or raise Text.val_share"
                )
            starts = rng.choice(self.val_windows, size=n, replace=False) * L
        return starts[:, None] + np.arange(L)

    def segment_pairs(self, rng: np.random.Generator, n: int, split: str, length: int) -> np.ndarray:
        """`n` pairs of consecutive stretches of `length` tokens from one document each: (n, 2, length) int64,
        drawn uniformly over the documents' places that fit two (those of documents of 2 * length or more)."""
        return self.segment_pairs_with_documents(rng, n, split, length)[0]

    def segment_pairs_with_documents(
        self, rng: np.random.Generator, n: int, split: str, length: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """`segment_pairs` and each pair's document, (n,) int64 (its index in `data.documents[split]`)."""
        spans = self.data.documents[split]
        room = np.maximum(spans[:, 1] - spans[:, 0] - 2 * length + 1, 0)  # starts that fit, per document
        if room.sum() == 0:
            raise ValueError(
                f"no document of the {split} split holds two stretches of {length} tokens: use shorter segments"
            )
        doc = rng.choice(len(spans), size=n, p=room / room.sum())
        start = spans[doc, 0] + (rng.random(n) * room[doc]).astype(np.int64)
        at = start[:, None] + np.arange(2 * length)
        return self.data.streams[split][at].reshape(n, 2, length), doc.astype(np.int64)

    # --- token classes and categories --------------------------------------------------------------------

    def is_content(self, ids: np.ndarray) -> np.ndarray:
        return (ids >= wordpiece.FIRST_PIECE) & (ids < self.vocab_size)

    def is_opener(self, ids: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(ids), dtype=bool)

    is_closer = is_opener

    def partner(self, ids: np.ndarray) -> np.ndarray:
        return np.tile(np.arange(ids.shape[1]), (ids.shape[0], 1))

    def word_starts(self, ids: np.ndarray) -> np.ndarray:
        """(B, T) -> (B, T) bool: content positions that begin a word (a piece not marked ##)."""
        return self.is_content(ids) & ~self.continuation[np.clip(ids, 0, self.vocab_size)]

    def category_masks(self, ids: np.ndarray, partner: np.ndarray) -> np.ndarray:
        piece = np.clip(ids, 0, self.vocab_size)  # an id past the vocabulary (none here) reads the False row
        cont = self.continuation[piece]
        continued = np.concatenate([cont[:, 1:], np.zeros((len(ids), 1), dtype=bool)], axis=1)  # next is ##
        content = self.is_content(ids)
        whole = content & ~cont & ~continued
        masks = [whole, content & ~whole, content & self.frequent[piece], content & self.rare[piece]]
        return np.stack(masks, axis=-1)

    # --- minimal pairs ---------------------------------------------------------------------------------------

    def _words(self, row: list[int]) -> list[tuple[int, int]]:
        """[start, end) of every whole word of the window: a start piece and its ## pieces, ending before the
        window's last position (a word there may go on past the window)."""
        words, T = [], len(row)
        for t in range(1, T):
            if not (wordpiece.FIRST_PIECE <= row[t] < self.vocab_size) or self.continuation[row[t]]:
                continue
            end = t + 1
            while end < T and self.continuation[row[end]]:
                end += 1
            if end < T:
                words.append((t, end))
        return words

    def edit(self, row: list[int], name: str, rng: np.random.Generator) -> list[int] | None:
        words = self._words(row)
        if name == "word_swap":
            spots = [(a, b) for a, b in zip(words, words[1:]) if a[1] == b[0] and row[a[0] : a[1]] != row[b[0] : b[1]]
                     and self.letters[row[a[0] : b[1]]].all()]  # fmt: skip
            if not spots:
                return None
            (s, m), (_, e) = spots[rng.integers(len(spots))]
            return row[:s] + row[m:e] + row[s:m] + row[e:]
        if name in ("agreement", "article"):
            articles = {self.token_id.get("a"), self.token_id.get("an")}
            spots = [
                s
                for s, e in words
                if e == s + 1 and row[s] in self.flips and (row[s] in articles) == (name == "article")
            ]
            if not spots:
                return None
            at = spots[rng.integers(len(spots))]
            return row[:at] + [self.flips[row[at]]] + row[at + 1 :]
        raise ValueError(f"{self!r} has no minimal-pair edit {name!r}; its edits are {', '.join(self.pair_edits)}")

    # --- references instead of an oracle -------------------------------------------------------------------

    def references(self, recipe, inputs: np.ndarray, labels: np.ndarray, causal: bool) -> dict[str, np.ndarray]:
        """Reference name -> (B, T) credit of the n-gram references on these cloze questions (those that read
        only the left, for a causal encoder)."""
        hidden = (MASK_ID, CLS_ID)
        return {n: self.counts.cloze_credit(n, recipe, inputs, labels, hidden) for n in self.reference_names(causal)}

    def reference_names(self, causal: bool) -> tuple[str, ...]:
        return self.counts.causal_names if causal else self.counts.names

    def next_token_references(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """Reference name -> (B, T - 1) credit on predicting each next token of the clean windows `ids`."""
        return {name: self.counts.next_token_credit(name, ids, (CLS_ID,)) for name in self.counts.causal_names}

    # --- what text does not have ---------------------------------------------------------------------------

    def cavity(self, likelihood: np.ndarray, causal: bool = False) -> np.ndarray:
        raise ValueError("real text has no exact oracle: its cloze is read against n-gram references instead")

    def spoil(self, ids, rng):
        raise ValueError("real text has no grammar to break: its fine-tuning task is SegmentPairs")

    def contains(self, ids: np.ndarray) -> np.ndarray:
        raise ValueError("real text has no grammar to decide membership by")

    def encode(self, text: str) -> np.ndarray:
        """Plain text to ids, after a [CLS]: `"Return the tokenizers"` -> [CLS] return the token ##ize ##r ##s."""
        ids = wordpiece.encode(self.data.tokenizer, [text])[0]
        return np.concatenate([[CLS_ID], ids]).astype(np.int64)


@functools.cache
def _counts(corpus: str | None, val_share: float, vocab_size: int, tokenizer_json: str | None) -> NGramCounts:
    """The training stream's n-gram counts of a prepared corpus (minibert.text.prepared), made once however many
    languages read it."""
    data = prepared.prepare(corpus, val_share, vocab_size, tokenizer_json)
    return NGramCounts(data.streams["train"], len(data.vocab), wordpiece.FIRST_PIECE)
