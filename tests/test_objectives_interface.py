"""The interface changes keep MLM as it was: the same categories and the same metric names."""

from __future__ import annotations

import numpy as np

from minibert.language import is_closer, sample_sentences
from minibert.masking import MaskingRecipe, categories
from minibert.module import EncoderModule
from minibert.objectives import MaskedLM
from minibert.objectives.nsp import SEP_ID


def test_partner_categories_from_labels_match_the_fixed_partner_index_on_plain_sentences():
    from minibert.language import partner_index

    rng = np.random.default_rng(0)
    masked = MaskingRecipe(p_pick=0.5).apply(sample_sentences(rng, 300), rng)
    ours = categories(masked.labels, masked.kind)
    partner_kind = masked.kind[:, partner_index()]
    visible = (partner_kind == 0) | (partner_kind == 3)
    picked = masked.labels != -100
    assert np.array_equal(ours[..., 2], visible & picked) and np.array_equal(ours[..., 3], ~visible & picked)


def test_mlm_keeps_its_single_unprefixed_scoreboard():
    module = EncoderModule(objective=MaskedLM())
    assert module.metric_prefixes == ("",)
    assert MaskedLM().scoreboards() == {"": MaskedLM.categories}


def test_sep_is_not_a_closer():
    assert not is_closer(np.array([SEP_ID])).any()
