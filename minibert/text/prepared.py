"""A corpus made ready to train on: split, tokenized by a WordPiece vocabulary trained on its training split,
each side one token stream, cached in the user's cache directory.

The cache is `$MINIBERT_CACHE`, else `$XDG_CACHE_HOME/minibert`, else `~/.cache/minibert`, under `text/`:

- `stdlib-<key>.json`: the default corpus (its documents and their sides), keyed by the Python version, the
  standard library's path and the split's settings, so that a first run parses the sources (about 10 s on a
  2-core machine) and later runs read one file;
- `<corpus sha256>-<vocabulary>/`: `tokenizer.json` and the two streams, keyed by the corpus's content hash
  and the vocabulary (its size when trained here, or the hash of a tokenizer given).

Files are written atomically, so runs that prepare the same corpus at once cannot leave half a file behind.

A side's stream is its documents' tokens in corpus order with one [SEP] between documents: windows are
packed across documents (RoBERTa's FULL-SENTENCES), and `documents` says where each one lies.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from minibert.atomic_writes import write_atomic
from minibert.text import wordpiece
from minibert.text.corpus import Corpus, Document, stdlib_corpus, stdlib_root, user_corpus

_FORMAT = 1  # bump when what the cache holds changes meaning
_MEMO: dict[tuple, Prepared] = {}


def cache_dir() -> Path:
    if explicit := os.environ.get("MINIBERT_CACHE"):
        return Path(explicit) / "text"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "minibert" / "text"


@dataclass
class Prepared:
    corpus: dict  # Corpus.describe()
    tokenizer_json: str
    vocab: list[str]
    streams: dict[str, np.ndarray]  # side -> (N,) int64 token ids, documents joined by [SEP]
    documents: dict[str, np.ndarray]  # side -> (D, 2) int64 [start, end) of each document in the stream

    @property
    def tokenizer_sha256(self) -> str:
        return _digest(self.tokenizer_json)

    @cached_property
    def tokenizer(self):
        return wordpiece.load(self.tokenizer_json)


def prepare(corpus: str | None, val_share: float, vocab_size: int, tokenizer_json: str | None = None) -> Prepared:
    """The corpus (`None`: the standard library's) split at `val_share`, with a vocabulary of `vocab_size`
    trained on its training split, or the tokenizer `tokenizer_json` when given."""
    key = (corpus, val_share, vocab_size, tokenizer_json)
    if key not in _MEMO:
        loaded = _stdlib(val_share) if corpus is None else user_corpus(corpus, val_share)
        _MEMO[key] = _tokenized(loaded, vocab_size, tokenizer_json)
    return _MEMO[key]


def _stdlib(val_share: float) -> Corpus:
    identity = json.dumps([_FORMAT, sys.version, str(stdlib_root()), val_share])
    path = cache_dir() / f"stdlib-{_digest(identity)[:16]}.json"
    if path.exists():
        saved = json.loads(path.read_text())
        docs = tuple(Document(*d) for d in saved["documents"])
        return Corpus(docs, tuple(saved["sides"]), saved["source"], saved["python"])
    corpus = stdlib_corpus(val_share)
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = {"documents": [[d.name, d.unit, d.text] for d in corpus.documents], "sides": list(corpus.sides),
             "source": corpus.source, "python": corpus.python}  # fmt: skip
    write_atomic(path, json.dumps(saved))
    return corpus


def _tokenized(corpus: Corpus, vocab_size: int, tokenizer_json: str | None) -> Prepared:
    vocabulary = f"v{vocab_size}" if tokenizer_json is None else f"t{_digest(tokenizer_json)[:16]}"
    folder = cache_dir() / f"{corpus.sha256[:16]}-{vocabulary}"
    names = ["tokenizer.json"] + [f"{side}_{what}.npy" for side in ("train", "val") for what in ("stream", "docs")]
    if not all((folder / n).exists() for n in names):
        if tokenizer_json is None:
            tokenizer = wordpiece.train((d.text for d in corpus.split("train")), vocab_size)
        else:
            tokenizer = wordpiece.load(tokenizer_json)
        folder.mkdir(parents=True, exist_ok=True)
        for side in ("train", "val"):
            stream, docs = _stream(tokenizer, corpus.split(side))
            for what, array in (("stream", stream), ("docs", docs)):
                write_atomic(folder / f"{side}_{what}.npy", _npy(array))
        write_atomic(folder / "tokenizer.json", tokenizer.to_str())  # last: its presence says the rest is there
    text = (folder / "tokenizer.json").read_text()
    load = {side: {w: np.load(folder / f"{side}_{w}.npy") for w in ("stream", "docs")} for side in ("train", "val")}
    tokenizer = wordpiece.load(text)
    made = Prepared(
        corpus=corpus.describe(),
        tokenizer_json=text,
        vocab=wordpiece.vocabulary(tokenizer),
        streams={side: load[side]["stream"] for side in load},
        documents={side: load[side]["docs"] for side in load},
    )
    made.tokenizer = tokenizer  # the cached property, already at hand
    return made


def _stream(tokenizer, documents: list[Document]) -> tuple[np.ndarray, np.ndarray]:
    encoded = wordpiece.encode(tokenizer, [d.text for d in documents])
    pieces, spans, at = [], [], 0
    for ids in encoded:
        if pieces:
            pieces.append(np.array([wordpiece.SEP_ID]))
            at += 1
        pieces.append(ids)
        spans.append((at, at + len(ids)))
        at += len(ids)
    stream = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    return stream.astype(np.int64), np.array(spans, dtype=np.int64).reshape(-1, 2)


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
