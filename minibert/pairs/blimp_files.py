"""BLiMP's files as a user downloaded them (`data/*.jsonl`, one paradigm a file): read and checked here, apart
from the grading (minibert.pairs.blimp, which imports torch), so that scripts/blimp.py refuses a folder that is
not BLiMP's before anything heavy is imported."""

from __future__ import annotations

import json
from pathlib import Path

FIELDS = ("sentence_good", "sentence_bad")


class BlimpError(ValueError):
    """A BLiMP folder or file that cannot be read as BLiMP; the message names the file and line."""


def read_blimp(folder: str | Path) -> dict[str, list[tuple[str, str]]]:
    """Paradigm (the file's stem) -> its (good, bad) sentence pairs, from every `*.jsonl` in `folder`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BlimpError(f"{folder}: no such folder (give BLiMP's data/ folder, which holds one .jsonl a paradigm)")
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise BlimpError(f"{folder}: no *.jsonl file in it (give BLiMP's data/ folder)")
    paradigms = {}
    for path in files:
        pairs = []
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                pairs.append((str(row[FIELDS[0]]), str(row[FIELDS[1]])))
            except (json.JSONDecodeError, KeyError, TypeError):
                raise BlimpError(f"{path}:{number}: not a BLiMP line (a JSON object with {' and '.join(FIELDS)})"
                                 ) from None  # fmt: skip
        if not pairs:
            raise BlimpError(f"{path}: holds no pair (an empty file: download it again, or leave it out)")
        paradigms[path.stem] = pairs
    return paradigms
