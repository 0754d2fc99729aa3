"""BLiMP (Warstadt et al. 2020; CC-BY; `alexwarstadt/blimp`): 67 paradigms of 1,000 English minimal pairs each,
read from the `data/*.jsonl` files a user downloaded (minibert.pairs.blimp_files), and graded zero-shot with an
encoder's own sentence score.

Each line of a paradigm's file holds `sentence_good` and `sentence_bad` (and `UID`, the paradigm's name, which
the file's stem gives too). A sentence is tokenized with the run's own tokenizer after a [CLS]; sentences of one
length are scored together (no padding: the encoder has no attention mask), and a pair either of whose
sentences is longer than the encoder's positions is skipped and counted.

Only a model trained on general English is worth grading here: a model trained on the docstring corpus knows
too few of BLiMP's words (docs/pairs.md).
"""

from __future__ import annotations

import numpy as np
import torch

from minibert.objectives.base import Objective
from minibert.pairs.floors import pair_credit


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
