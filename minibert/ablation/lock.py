"""One runner per results folder: an exclusive lock on `<out>/.ablate.lock` that names its holder.

The lock is `fcntl.flock` on an open file, so the kernel drops it when the holder dies, however it dies
(SIGKILL included): a stale lock file never blocks anyone. The file's text says who holds it (pid, host,
start time, command), for the message a second runner prints.

Example:
    >>> with OutLock(out):  # doctest: +SKIP
    ...     run the grid
"""

from __future__ import annotations

import fcntl
import json
import os
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
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            for _ in range(40):  # the holder writes its name just after taking the lock
                f.seek(0)
                if text := f.read():
                    break
                time.sleep(0.05)
            holder = _describe(text)
            f.close()
            raise Busy(
                f"{self.path.parent} is in use by another ablate.py ({holder}); wait for it to finish, "
                "or give another --out"
            ) from None
        f.seek(0)
        f.truncate()
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S"),
                  "command": " ".join(sys.argv)}  # fmt: skip
        f.write(json.dumps(holder) + "\n")
        f.flush()
        self._file = f
        return self

    def __exit__(self, *exc) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


def _describe(text: str) -> str:
    try:
        h = json.loads(text)
        return f"pid {h['pid']} on {h['host']} since {h['since']}: {h['command']}"
    except (ValueError, KeyError, TypeError):
        return "holder unknown"
