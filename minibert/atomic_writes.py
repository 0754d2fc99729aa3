"""Writing files so that a killed process never leaves half of one behind, with the permissions that
`open()` would give them (0666 less the process's umask)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path


def current_umask() -> int:
    """The process's umask, read without changing it where Linux allows (/proc), else set and restored."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write to a temporary file in the same folder, then rename it over `path` (atomic on POSIX).

    The file gets mode 0666 less the umask, as `open(path, "w")` would (mkstemp alone makes it 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:  # a full disk says "No space left on device" without a file: name the one it was
        Path(tmp).unlink(missing_ok=True)
        if err.filename is None:
            raise type(err)(err.errno, err.strerror or str(err), str(path)) from err
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: str | os.PathLike, obj: dict) -> None:
    """Atomic JSON with NaN written as null (JSON has no NaN)."""

    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v

    write_atomic(path, json.dumps(clean(obj), indent=2, sort_keys=True) + "\n")
