"""Tables that know their length: every CSV table minibert writes (results.csv and the narrow files beside it,
curves.csv, code.csv, verdicts.csv, yardsticks.csv) gets a seal, `<file>.seal`, saying how many rows it was
written with and the sha256 of its bytes, and a reader refuses a table that no longer matches its seal.

Why: a table cut at a row boundary (a copy interrupted, a disk that filled, a merge gone wrong) still parses, and
every page would quote figures of fewer runs without a word; a hand-edited one would quote figures no run made.
The row count says how much is missing; the digest catches an edit that keeps the count. A table written before
seals has none and is read as it always was, unchecked, so the committed results keep rendering.

The seal is a file of its own, not a line in the table, so that any CSV reader (pandas, a spreadsheet) still reads
the table. Its writer removes the old seal, writes the table atomically, then the new seal: a writer killed
between the two leaves a whole table without a seal (read unchecked), never a table beside the seal of another.

Example:
    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = Path(folder.name) / "t.csv"
    >>> write(path, "a,b\\n1,2\\n3,4\\n")
    >>> check(path, "write it again")
    >>> _ = path.write_text("a,b\\n1,2\\n")
    >>> check(path, "write it again")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    minibert.tables.sealed.TableError: .../t.csv holds 1 rows of the 2 it was written with (1 missing): ...
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import zlib
from pathlib import Path

from minibert.atomic_writes import write_atomic

SUFFIX = ".seal"  # results.csv -> results.csv.seal


class TableError(ValueError):
    """A results table that cannot be read as one; the message names the file (and the line and column, where one
    cell is wrong). Defined here, below minibert.tables.table (which every reader imports it from), so that a seal's
    refusal is the error each reader and script already answers in one line."""


def seal_of(path: str | os.PathLike) -> Path:
    """Where the seal of the table `path` is: beside it, its name plus SUFFIX."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write the table `path` (CSV text, or its gzip bytes where `path` ends in .gz) atomically, and its seal."""
    data = data.encode() if isinstance(data, str) else data
    seal = seal_of(path)
    seal.unlink(missing_ok=True)  # until the table is whole, no seal at all: never the seal of the last one
    write_atomic(path, data)
    rows, _ = count_rows(data, gzipped=str(path).endswith(".gz"))
    write_atomic(seal, json.dumps({"rows": rows, "sha256": hashlib.sha256(data).hexdigest()}) + "\n")


def remove(path: str | os.PathLike) -> None:
    """Remove the table `path` and its seal, where they are: the seal first, so that a remover killed between the
    two leaves a table without a seal (read as before), not a seal without its table (refused as missing)."""
    seal_of(path).unlink(missing_ok=True)
    Path(path).unlink(missing_ok=True)


def copy(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Copy the table `source` to `target` with its seal (a copy of an unsealed table has none either)."""
    seal_of(target).unlink(missing_ok=True)
    shutil.copyfile(source, target)
    if seal_of(source).is_file():
        shutil.copyfile(seal_of(source), seal_of(target))


def count_rows(data: bytes, gzipped: bool = False) -> tuple[int, bool]:
    """(the whole rows of the CSV `data` after its header, whether part of another follows them). A cut gzip
    archive gives what it holds up to the cut; bytes that do not decompress hold no rows.

    >>> count_rows(b"a,b\\n1,2\\n3,")
    (1, True)
    >>> count_rows(b'a,b\\n"two\\nlines",2\\n')  # a quoted line break is inside a row, not between two
    (1, False)
    """
    if gzipped:
        try:
            data = zlib.decompressobj(wbits=31).decompress(data)  # 31: gzip's header; no error at a cut
        except zlib.error:
            return 0, bool(data)
    text = data.decode("utf-8", errors="replace")
    whole, _, tail = text.rpartition("\n")  # every row the writer wrote ends with a line break
    try:
        records = sum(1 for _ in csv.reader(io.StringIO(whole)))
    except csv.Error:  # a cut inside a quoted cell
        records = whole.count("\n") + 1
    return max(records - 1, 0), bool(tail)


def written(path: str | os.PathLike) -> bool:
    """Whether the table `path` was written: it is there, or its seal is (then `check` refuses it as missing, as
    its rows would otherwise silently be left out)."""
    return Path(path).is_file() or seal_of(path).is_file()


def check(path: str | os.PathLike, fix: str) -> None:
    """TableError, in one line naming the file and ending with `fix` (what to do), where the table `path` no longer
    matches its seal: gone, fewer or more rows than it was written with, or the same number with other bytes. A
    table without a seal (written before seals) passes unchecked, as does a missing one (the reader says so)."""
    path = Path(path)
    for _ in range(2):  # once more after a mismatch: a writer may have replaced the table between two reads
        seal = _read_seal(path, fix)
        if seal is None:
            return
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise TableError(f"{path} is missing, though {seal_of(path).name} says it was written with "
                             f"{seal['rows']} rows: {fix}") from None  # fmt: skip
        if hashlib.sha256(data).hexdigest() == seal["sha256"]:
            return
    written = seal["rows"]
    rows, part = count_rows(data, gzipped=path.suffix == ".gz")
    held = f"{rows} rows" + (" and part of another" if part else "")
    if rows < written:
        raise TableError(f"{path} holds {held} of the {written} it was written with ({written - rows} missing): the "
                         f"file was cut or edited; {fix}")  # fmt: skip
    if rows > written or part:
        raise TableError(f"{path} holds {held} where it was written with {written}: the file was edited; {fix}")
    raise TableError(f"{path} holds the {written} rows it was written with, but not their bytes (its sha256 differs "
                     f"from the one {seal_of(path).name} records): the file was edited; {fix}")  # fmt: skip


def _read_seal(path: Path, fix: str) -> dict | None:
    """The seal of the table `path`, None where it has none; TableError for one that cannot be read as a seal."""
    seal = seal_of(path)
    try:
        found = json.loads(seal.read_text())
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        found = None
    rows, digest = (found.get("rows"), found.get("sha256")) if isinstance(found, dict) else (None, None)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0 or not isinstance(digest, str):
        raise TableError(f"{seal}: not the seal of {path.name} (its row count and sha256, as JSON): delete it to "
                         f"read the table unchecked, or {fix}")  # fmt: skip
    return found
