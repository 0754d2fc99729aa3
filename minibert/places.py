"""Where a command writes: one check of an output folder before any work, each problem said in one line.

Every command that writes (`scripts/ablate.py`, `scripts/compare.py`, `python -m minibert fit`, the export)
calls `check_out` on its output folder before it imports torch or trains: a path that is a file, a path under
a file, a folder this process cannot write (permissions, a read-only file system) and a full disk are each
refused with one sentence naming the path, and nothing is written (the probe file is removed again).

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_out(folder / "new" / "out") == folder / "new" / "out", (folder / "new").exists()
    (True, False)
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

MIN_FREE = 16 * 2**20  # bytes: below this a run's checkpoints and logs cannot be written whole


class PlaceError(OSError):
    """An output place no command can write to; the message is one line naming the option and the path."""


def shown(path: str | Path) -> str:
    """A path as a person reads it in a command's output: relative to the working folder where it lies inside
    it, else absolute (never `../../tmp/x` for a folder given as /tmp/x)."""
    path = Path(path).absolute()
    return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)


def check_out(path: str | Path, option: str = "--out", empty: bool = False) -> Path:
    """`path` resolved, or PlaceError in one line when it cannot hold a command's output: it is a file, lies
    under a file, sits in a folder this process cannot write, or on a disk with less than MIN_FREE free. With
    `empty`, an existing folder must be empty (an export's new folder). Creates nothing."""
    out = Path(path).expanduser().absolute()
    said = f"{option} {path}"
    if out.exists() and not out.is_dir():
        raise PlaceError(f"{said}: a file, not a folder; give a folder")
    if empty and out.is_dir() and any(out.iterdir()):
        raise PlaceError(f"{said}: already exists and is not empty; give a new folder")
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not existing.is_dir():
        raise PlaceError(f"{said}: {existing} is a file, so no folder can be made under it")
    try:  # the one reliable test of writing: os.access says yes to root on a read-only file system
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".minibert-probe-")
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as err:
        why = {errno.EROFS: "on a read-only file system", errno.ENOSPC: "on a full disk",
               errno.EDQUOT: "over the disk quota"}.get(err.errno, "not writable by this user")  # fmt: skip
        raise PlaceError(f"{said}: {existing} is {why} ({err.strerror}); give another folder") from None
    free = shutil.disk_usage(existing).free
    if free < MIN_FREE:
        raise PlaceError(f"{said}: the disk holding {existing} is full ({free / 2**20:.1f} MiB free); free space "
                         "or give another folder")  # fmt: skip
    return out
