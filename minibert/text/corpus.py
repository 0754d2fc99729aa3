"""Corpora of real text, split into training and validation documents so that no near-duplicate straddles.

Two sources:

- `stdlib_corpus()`, the embedded default: the docstrings of the installed Python's standard library (module,
  class and function docstrings, read by parsing each source file with `ast`, never importing it: importing
  every module has side effects) plus the topics of `pydoc_data.topics`. One document per source file (its
  docstrings in source order) and one per topic; files in sorted order, then topics in sorted order, so the
  corpus is a function of the Python installation alone. The test suites (`test`, `idlelib.idle_test`, ...)
  are left out. Nothing is downloaded.
- `user_corpus(path)`: a folder of `.txt` files (one document each) or `.jsonl` files (one document per line,
  its `text` field), or a Hugging Face `datasets` dataset saved with `save_to_disk` (one document per row,
  its `text` column; needs the `datasets` package, which minibert does not install).

The split is by unit, never by sentence. Documents that share a paragraph (40 characters or more, whitespace
normalised) are one unit, found by union-find, and so are the files of one top-level package (`email.*`,
`asyncio.*`): the copies of a docstring (`_pyio` and `io`, a package and its `__init__`) land on one side.
Units are taken in a pseudo-random order fixed by a hash of their names, each going to validation while
it fits in `val_share` of the corpus's characters.

`Corpus.sha256` hashes every document's name, side and text: it is what a run records (with the Python
version the default came from), and what the caches below are keyed by.

Example:
    >>> corpus = Corpus.from_documents([("a", "One text."), ("b", "Another text.")], source="example", val_share=0.5)
    >>> corpus.sides  # each unit goes to validation while it fits in half of the characters
    ('val', 'train')
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from minibert.validation import UNIT_INTERVAL, check

_PARAGRAPH_MIN = 40  # characters: shorter shared paragraphs ("Return self.", "See above.") join nothing
_SKIPPED = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__", "lib2to3/tests"}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Document:
    name: str  # unique within the corpus: "email/message.py", "topic:assignment", "notes.txt:3"
    unit: str  # the package, file or record it belongs to, before near-duplicates are joined
    text: str


@dataclass(frozen=True)
class Corpus:
    """Documents in a fixed order, each on one side: `sides[i]` is "train" or "val" for `documents[i]`."""

    documents: tuple[Document, ...]
    sides: tuple[str, ...]
    source: str  # "stdlib" or the user corpus's path
    python: str | None  # the Python version the default corpus came from (None for a user corpus)

    @classmethod
    def from_documents(
        cls, named: list[tuple[str, str]] | list[Document], source: str, val_share: float = 0.1,
        python: str | None = None,
    ) -> Corpus:  # fmt: skip
        """Split `named` documents ((name, text) pairs, each its own unit, or `Document`s)."""
        check("Corpus", "val_share", val_share, UNIT_INTERVAL)
        docs = tuple(d if isinstance(d, Document) else Document(d[0], d[0], d[1]) for d in named)
        docs = tuple(d for d in docs if d.text.strip())
        if not docs:
            raise ValueError(f"the corpus {source} has no text: give it documents with words in them")
        names = [d.name for d in docs]
        if len(set(names)) != len(names):
            raise ValueError(f"the corpus {source} names a document twice: document names must be unique")
        group = _units(docs)
        chars: dict[str, int] = {}
        for doc, unit in zip(docs, group):
            chars[unit] = chars.get(unit, 0) + len(doc.text)
        held, room = set(), val_share * sum(chars.values())
        for unit in sorted(chars, key=_hash_share):  # a fixed pseudo-random order of the units
            if chars[unit] <= room:
                held.add(unit)
                room -= chars[unit]
        sides = tuple("val" if unit in held else "train" for unit in group)
        if "train" not in sides:
            raise ValueError(
                f"the corpus {source} has no training document at val_share={val_share}: give it more documents "
                "or lower val_share"
            )
        return cls(docs, sides, source, python)

    def split(self, side: str) -> list[Document]:
        return [d for d, s in zip(self.documents, self.sides) if s == side]

    @property
    def sha256(self) -> str:
        digest = hashlib.sha256()
        for doc, side in zip(self.documents, self.sides):
            digest.update(json.dumps([doc.name, side, doc.text]).encode())
        return digest.hexdigest()

    def describe(self) -> dict:
        """What a run records about its corpus (summary.json's `corpus`)."""
        chars = {s: sum(len(d.text) for d in self.split(s)) for s in ("train", "val")}
        return {
            "source": self.source,
            "sha256": self.sha256,
            "python": self.python,
            "documents": {s: len(self.split(s)) for s in ("train", "val")},
            "characters": chars,
        }


def _hash_share(name: str) -> float:
    """A uniform number in [0, 1) that is a function of `name` alone."""
    return int(hashlib.sha256(name.encode()).hexdigest()[:12], 16) / 16**12


def _units(docs: tuple[Document, ...]) -> list[str]:
    """For each document, the name of its final unit: its own unit joined (union-find) with every unit it
    shares a paragraph with; a joined unit is named after its first document's unit in corpus order."""
    parent = list(range(len(docs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)  # the earlier document stays the root

    first: dict[str, int] = {}
    for i, doc in enumerate(docs):
        for key in [f"unit:{doc.unit}"] + [f"para:{p}" for p in _paragraphs(doc.text)]:
            if key in first:
                join(first[key], i)
            else:
                first[key] = i
    return [docs[root(i)].unit for i in range(len(docs))]


def _paragraphs(text: str) -> set[str]:
    """A text's paragraphs of at least _PARAGRAPH_MIN characters, whitespace normalised."""
    paragraphs = (_SPACE.sub(" ", p).strip() for p in re.split(r"\n\s*\n", text))
    return {p for p in paragraphs if len(p) >= _PARAGRAPH_MIN}


# --- the embedded default ------------------------------------------------------------------------------------


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_documents(root: Path | None = None) -> list[Document]:
    """The standard library's docstrings, one document per source file, then pydoc_data's topics."""
    root = root or stdlib_root()
    docs = []
    for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        rel = path.relative_to(root).as_posix()
        if _skipped(rel):
            continue
        try:
            tree = ast.parse(path.read_bytes(), filename=rel)
        except (SyntaxError, ValueError):  # a few files are test data, not Python 3
            continue
        text = "\n\n".join(_docstrings(tree))
        if text.strip():
            docs.append(Document(rel, rel.split("/")[0].removesuffix(".py"), text))
    from pydoc_data.topics import topics

    docs += [Document(f"topic:{key}", f"topic:{key}", topics[key]) for key in sorted(topics)]
    return docs


def _skipped(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in _SKIPPED for p in parts) or any(f"{a}/{b}" in _SKIPPED for a, b in zip(parts, parts[1:]))


def _docstrings(node: ast.AST) -> list[str]:
    """The docstrings of a module and of every class and function in it, in source order."""
    doc = ast.get_docstring(node, clean=True)
    return ([doc] if doc else []) + _defined(node.body)


def _defined(body: list[ast.stmt]) -> list[str]:
    """The docstrings of the classes and functions defined in `body`, in order, those under `if` and `try`
    included (`if sys.platform == ...:` definitions)."""
    out = []
    for child in body:
        if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            out += _docstrings(child)
        elif isinstance(child, ast.If | ast.Try):
            for block in (child.body, child.orelse, *(h.body for h in getattr(child, "handlers", []))):
                out += _defined(block)
    return out


def stdlib_corpus(val_share: float = 0.1) -> Corpus:
    python = ".".join(map(str, sys.version_info[:3]))
    return Corpus.from_documents(stdlib_documents(), source="stdlib", val_share=val_share, python=python)


# --- a corpus the user brings --------------------------------------------------------------------------------


def user_corpus(path: str | os.PathLike, val_share: float = 0.1) -> Corpus:
    """The documents under `path` (see the module docstring), split as the default is."""
    root = Path(path).expanduser()
    if not root.exists():
        raise ValueError(f"the corpus path {str(root)!r} does not exist: give a folder of .txt or .jsonl files")
    if root.is_dir() and ((root / "dataset_info.json").exists() or (root / "state.json").exists()):
        docs = _saved_dataset(root)
    else:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in (".txt", ".jsonl"))
        if not files:
            raise ValueError(f"the corpus folder {str(root)!r} holds no .txt or .jsonl file")
        docs = []
        for file in files:
            rel = file.name if file == root else file.relative_to(root).as_posix()
            docs += _jsonl(file, rel) if file.suffix == ".jsonl" else [Document(rel, rel, _read(file, rel))]
    if not any(d.text.strip() for d in docs):
        raise ValueError(f"the corpus {str(root)!r} is empty: its documents hold no text")
    return Corpus.from_documents(docs, source=str(root), val_share=val_share)


def _read(file: Path, rel: str) -> str:
    """A corpus file's text, or one line naming the file when it is not UTF-8."""
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"the corpus file {rel!r} is not UTF-8 text (byte {err.start}: {err.object[err.start : err.start + 1]!r}):"
            " convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8) or remove it from the corpus"
        ) from None


def _jsonl(file: Path, rel: str) -> list[Document]:
    docs = []
    for n, line in enumerate(_read(file, rel).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = record["text"] if isinstance(record, dict) else None
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{rel}, line {n}, is not JSON ({err.msg}): a .jsonl corpus has one object per line"
            ) from None
        except KeyError:
            text = None
        if not isinstance(text, str):
            raise ValueError(f"{rel}, line {n}, has no text: each line of a .jsonl corpus is an object with 'text'")
        docs.append(Document(f"{rel}:{n}", f"{rel}:{n}", text))
    return docs


def _saved_dataset(root: Path) -> list[Document]:
    try:
        import datasets
    except ImportError:
        raise ValueError(
            f"{str(root)!r} is a Hugging Face dataset saved to disk: reading it needs the datasets package "
            '(pip install -e ".[datasets]")'
        ) from None
    data = datasets.load_from_disk(str(root))
    if isinstance(data, datasets.DatasetDict):
        data = datasets.concatenate_datasets([data[k] for k in sorted(data)])
    if "text" not in data.column_names:
        raise ValueError(f"the dataset at {str(root)!r} has no 'text' column (it has {data.column_names})")
    return [Document(f"row:{i}", f"row:{i}", t or "") for i, t in enumerate(data["text"])]
