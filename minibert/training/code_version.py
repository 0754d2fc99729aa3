"""Which code made a result: a hash of the package's sources, and the git commit with a dirty flag.

The source hash decides whether a finished ablation run can be reused: it works in a clean clone, in a
copy without git, and it changes with any uncommitted edit. The git fields are recorded for people.
The report's modules (`minibert/ablation/report.py` and what only it uses) are left out of the hash: they
only read results, so editing them reruns nothing.

Example:
    >>> version = code_version()
    >>> len(version["source_hash"]), sorted(version)
    (16, ['git_commit', 'git_dirty', 'source_hash'])
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # the minibert package
# they read results, never make them
NOT_HASHED = tuple(
    f"ablation/{name}.py" for name in ("report", "results", "figures", "accuracies", "intervals", "power")
)


@functools.cache
def source_hash(package: Path = PACKAGE) -> str:
    """sha256 (16 hex digits) over the relative path and bytes of every `.py` file of the package."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative in NOT_HASHED or "__pycache__" in path.parts:
            continue
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def git_state(folder: Path = PACKAGE) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout holding `folder`, or (None, None) without git or a checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "."],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit, bool(status.strip())


def code_version() -> dict:
    """What a run records: {'source_hash': ..., 'git_commit': ... or None, 'git_dirty': ... or None}."""
    commit, dirty = git_state()
    return {"source_hash": source_hash(), "git_commit": commit, "git_dirty": dirty}
