"""Whole-word masking: BERT's later release (Devlin et al., 2019 update of the repository) picks whole words,
so that every WordPiece of a picked word is hidden together.

Why it matters with WordPiece: when one piece of "token ##ize ##r ##s" is masked and its neighbours are shown,
the answer is mostly spelled out by them (between "token" and "##r ##s", "##ize" is nearly forced), so a
token-level cloze spends much of its budget on questions that are easy for the wrong reason. Hiding the word
whole makes the model predict it from its context.

A word is a content position that begins one (`Language.word_starts`: a piece not marked `##`) and the
continuation pieces after it; a word cut by the window's start begins at the window's first content
position. Each word is picked with probability `p_pick`, so the expected share of picked tokens is still
`p_pick`, and each picked word gets one fate: [MASK] for all of its pieces (`p_mask`), random tokens, or
kept (`MaskingRecipe.treat`). On a language whose every token is a word of its own (the bracket
languages) this picks exactly as BERT's token-level recipe does, in distribution.

Example:
    >>> import numpy as np
    >>> from minibert.languages import Text
    >>> text = Text()
    >>> ids = text.encode("Return the tokenizers of the tokenizers")[None]
    >>> masked = WholeWordMasking(p_pick=0.5, p_mask=1.0, p_random=0.0).apply(ids, np.random.default_rng(4), text)
    >>> text.decode(masked.inputs[0])
    '[CLS] return the token ##ize ##r ##s [MASK] the [MASK] [MASK] [MASK] [MASK]'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minibert.languages import Language
from minibert.masking import Masked, MaskingRecipe
from minibert.objectives.mlm import MaskedLM


@dataclass(frozen=True)
class WholeWordMasking(MaskingRecipe):
    """MaskingRecipe that picks words, all of a word's pieces together (see the module docstring)."""

    def words(self, ids: np.ndarray, language: Language) -> np.ndarray:
        """(B, T) -> (B, T) int64: the index of the word each content position belongs to (in reading order over
        the batch), -1 elsewhere."""
        content = language.is_content(ids)
        after_content = np.concatenate([np.zeros((len(ids), 1), dtype=bool), content[:, :-1]], axis=1)
        starts = language.word_starts(ids) | (content & ~after_content)  # a cut word begins where the row does
        index = np.cumsum(starts.ravel()).reshape(ids.shape) - 1
        return np.where(content, index, -1)

    def apply(self, ids: np.ndarray, rng: np.random.Generator, language: Language) -> Masked:
        word = self.words(ids, language)
        n = int(word.max()) + 1
        picked = np.append(rng.random(n) < self.p_pick, False)[word]  # index -1 reads the spare: not picked
        fate = np.append(rng.random(n), 0.0)[word]  # one fate per word
        return self.treat(ids, picked, fate, rng, language)


class WholeWordMaskedLM(MaskedLM):
    """MLM trained on whole-word-masked inputs; graded on BERT's token-level questions by default
    (`eval_masking`), so its val/acc compares with MaskedLM's."""

    def __init__(
        self,
        masking: WholeWordMasking = WholeWordMasking(),
        eval_masking: MaskingRecipe = MaskingRecipe(),
        language: Language | None = None,
    ):
        super().__init__(masking, eval_masking, language)
