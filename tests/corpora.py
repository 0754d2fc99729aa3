"""A small made-up corpus for the text tests: WordPiece, the text language, BLiMP-style pairs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

WORDS = "alpha beta gamma delta epsilon zeta theta iota kappa lambda omicron sigma upsilon omega".split()


def write_corpus(folder: Path, n_files: int = 12, seed: int = 0, lines: int = 40) -> Path:
    """A small corpus of .txt files of made-up sentences (its words repeat, so WordPiece splits the rare ones)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_files):
        sentences = [" ".join(rng.choice(WORDS, size=rng.integers(4, 12))) + "." for _ in range(lines)]
        (folder / f"doc{i:02d}.txt").write_text(f"Document {i} on tokenizers.\n\n" + " ".join(sentences))
    return folder
