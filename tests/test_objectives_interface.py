"""The interface changes keep MLM as it was: the same categories and the same metric names."""

from __future__ import annotations

import numpy as np

from minibert.languages import BracketPairs
from minibert.masking import MLM_CATEGORIES, MaskingRecipe, categories
from minibert.objectives import MaskedLM, NextSentence, Scoreboard
from minibert.training.module import EncoderModule

LANG = BracketPairs()


def test_partner_categories_match_the_fixed_partner_index_on_plain_sentences():
    fixed = np.concatenate([[0], np.arange(1, LANG.seq_len).reshape(-1, 2)[:, ::-1].ravel()])  # [0, 2, 1, 4, 3, ...]
    rng = np.random.default_rng(0)
    ids = LANG.sample(rng, 300)
    masked = MaskingRecipe(p_pick=0.5).apply(ids, rng, LANG)
    ours = categories(LANG, ids, masked.labels, masked.kind)
    partner_kind = masked.kind[:, fixed]
    visible = (partner_kind == 0) | (partner_kind == 3)
    picked = masked.labels != -100
    assert np.array_equal(ours[..., 2], visible & picked) and np.array_equal(ours[..., 3], ~visible & picked)


def test_mlm_keeps_its_single_unprefixed_scoreboard():
    module = EncoderModule(objective=MaskedLM())
    assert module.metric_prefixes == ("",)
    assert MaskedLM().scoreboards() == {"": Scoreboard(MLM_CATEGORIES, ("kind_mask",))}


def test_sep_is_not_a_closer():
    sep_id = NextSentence().sep_id
    assert sep_id == 18  # one past the default vocabulary
    assert not LANG.is_closer(np.array([sep_id])).any()


def test_combined_refuses_objectives_on_different_languages():
    import pytest

    from minibert.languages import Dyck
    from minibert.objectives.combined import Combined

    same = Combined({"mlm": MaskedLM(), "nsp": NextSentence()})
    assert same.language == BracketPairs()
    with pytest.raises(ValueError, match="Combined.objectives are not allowed to differ in language"):
        Combined({"mlm": MaskedLM(language=Dyck()), "nsp": NextSentence()})
