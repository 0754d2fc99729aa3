"""What a comparison refuses, said in one line: the error every part of `minibert.compare` raises on bad input,
and the rule for a record's name. Imports nothing heavy, so a command line can answer before torch loads."""

from __future__ import annotations

import re
from pathlib import Path

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class ComparisonError(ValueError):
    """A design that cannot be run or continued; the message says what to change."""


def record_path(folder: Path, name: str) -> Path:
    """`folder/comparisons/<name>.json`, refusing a name that would leave that folder."""
    if not NAME.fullmatch(name) or name.endswith(".json"):
        raise ComparisonError(
            f"--name={name!r}: give a plain file name (letters, digits, '._-'), not a path; it is written in "
            f"{folder / 'comparisons'}"
        )
    return folder / "comparisons" / f"{name}.json"
