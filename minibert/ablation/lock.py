"""One runner per results folder: an exclusive lock on `<out>/.ablate.lock` that names its holder.

The lock is `fcntl.flock` on an open file, so the kernel drops it when the holder dies, however it dies
(SIGKILL included): a stale lock file never blocks anyone. The file's text says who holds it (pid, host,
start time, and the command as it was typed), for the message a second runner prints. `check_free` asks the
same question without taking the lock, so a command can answer it with its other usage errors, before it
imports torch; the lock itself is taken when the runs start.

Example:
    >>> with OutLock(out):  # doctest: +SKIP
    ...     run the grid
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import sys
import time
from pathlib import Path

LOCK_NAME = ".ablate.lock"


class Busy(RuntimeError):
    """Another runner holds the folder; the message says who and what to do."""


class OutLock:
    """Hold `<out>/.ablate.lock` for the duration of a `with` block; raise Busy if another process holds it."""

    def __init__(self, out: str | os.PathLike) -> None:
        self.path = Path(out) / LOCK_NAME
        self._file = None

    def __enter__(self) -> OutLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = open(self.path, "a+")
        for wait in (0.02, 0.05, 0.1, None):  # a `check_free` elsewhere holds it for a moment only
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if wait is None:
                    message = _busy(self.path.parent, f)
                    f.close()
                    raise Busy(message) from None
                time.sleep(wait)
        f.seek(0)
        f.truncate()
        command = shlex.join(["python", *sys.orig_argv[1:]])  # as typed, `python -m ...` included
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S"),
                  "command": command}  # fmt: skip
        f.write(json.dumps(holder) + "\n")
        f.flush()
        self._file = f
        return self

    def __exit__(self, *exc) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


def check_free(out: str | os.PathLike) -> None:
    """Raise Busy, as OutLock would, when another process holds `out`'s lock now. Takes nothing and makes
    nothing: the lock is tried without waiting and let go at once (where no lock file exists, nobody holds it)."""
    try:
        f = open(Path(out) / LOCK_NAME)
    except OSError:  # no lock file, or none this user can read: OutLock says what is wrong when it takes it
        return
    with f:
        try:  # shared: a reader may ask, and only a holder's exclusive lock refuses it
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(_busy(Path(out), f)) from None
        fcntl.flock(f, fcntl.LOCK_UN)


def _busy(folder: Path, f) -> str:
    """The message for `folder` held by the process whose name the open lock file `f` holds."""
    text = ""
    for _ in range(40):  # the holder writes its name just after taking the lock
        f.seek(0)
        if text := f.read():
            break
        time.sleep(0.05)
    try:
        h = json.loads(text)
        command = str(h["command"]).replace("\n", "\\n")  # one line, whatever `python -c` was given
        holder = f"`{command}` (pid {h['pid']} on {h['host']} since {h['since']})"
    except (ValueError, KeyError, TypeError):
        holder = "another runner (its lock file names no holder)"
    return f"{folder} is in use by {holder}; wait for it to finish, or give another --out"
