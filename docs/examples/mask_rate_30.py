"""An objective to bring to scripts/compare.py: BERT's masked LM with 30% of the tokens picked instead of 15%
(Wettig et al., "Should You Mask 15% in Masked Language Modeling?", EACL 2023, find 40% better than 15% for
large models). Still graded on BERT's 15% questions, so its cloze accuracy reads like MLM's.

    python scripts/compare.py docs/examples/mask_rate_30.py --languages dyck --minutes 15
"""

from __future__ import annotations

from minibert.languages import Language
from minibert.masking import MaskingRecipe
from minibert.objectives import MaskedLM


class MaskRate30(MaskedLM):
    def __init__(self, language: Language | None = None) -> None:
        super().__init__(masking=MaskingRecipe(p_pick=0.3, p_mask=0.8, p_random=0.1), language=language)
