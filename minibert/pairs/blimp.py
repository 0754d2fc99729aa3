"""BLiMP (Warstadt et al. 2020; CC-BY; `alexwarstadt/blimp`): 67 paradigms of 1,000 English minimal pairs each,
read from the `data/*.jsonl` files a user downloaded, and graded zero-shot with an encoder's own sentence score.

Each line of a paradigm's file holds `sentence_good` and `sentence_bad` (and `UID`, the paradigm's name, which
the file's stem gives too). A sentence is tokenized with the run's own tokenizer after a [CLS]; sentences of one
length are scored together (no padding: the encoder has no attention mask), and a pair either of whose
sentences is longer than the encoder's positions is skipped and counted.

Only a model trained on general English is worth grading here: a model trained on the docstring corpus knows
too few of BLiMP's words (docs/pairs.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from minibert.objectives.base import Objective
from minibert.pairs.floors import pair_credit

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


@torch.no_grad()
def grade(objective: Objective, encoder, pairs: list[tuple[str, str]], max_len: int) -> tuple[float, int, int]:
    """(accuracy, pairs graded, pairs skipped as too long) of one paradigm under `objective`'s sentence score,
    read in eval mode on the encoder's device (the modes are restored)."""
    modes = encoder.training, objective.training
    encoder.eval(), objective.eval()
    try:
        return _grade(objective, encoder, pairs, max_len)
    finally:
        encoder.train(modes[0]), objective.train(modes[1])


def _grade(objective: Objective, encoder, pairs: list[tuple[str, str]], max_len: int) -> tuple[float, int, int]:
    device = next(encoder.parameters()).device
    language = objective.language
    ids = [(language.encode(good), language.encode(bad)) for good, bad in pairs]
    kept = [(g, b) for g, b in ids if max(len(g), len(b)) <= max_len]
    if not kept:
        return float("nan"), 0, len(pairs)
    sentences = [s for pair in kept for s in pair]  # good, bad, good, bad, ...
    scores = np.empty(len(sentences))
    for length in sorted({len(s) for s in sentences}):
        at = [i for i, s in enumerate(sentences) if len(s) == length]
        batch = torch.from_numpy(np.stack([sentences[i] for i in at])).to(device)
        scores[at] = objective.sentence_scores(encoder, batch).cpu().numpy()
    credit = pair_credit(scores[0::2], scores[1::2])
    return float(credit.mean()), len(kept), len(pairs) - len(kept)
