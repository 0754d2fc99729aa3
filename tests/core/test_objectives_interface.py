"""The interface changes keep MLM as it was: the same categories and the same metric names."""

from __future__ import annotations

import numpy as np
import pytest

from minibert.languages import BracketPairs, Dyck
from minibert.masking import IGNORE, INPUT_CATEGORIES, KEPT, MLM_CATEGORIES, UNTOUCHED, MaskingRecipe, categories
from minibert.objectives import MaskedLM, NextSentence, Scoreboard
from minibert.objectives.next_token import NextTokenLM
from minibert.training.module import EncoderModule

LANG = BracketPairs()


def test_partner_categories_match_the_fixed_partner_index_on_plain_sentences():
    fixed = np.concatenate([[0], np.arange(1, LANG.seq_len).reshape(-1, 2)[:, ::-1].ravel()])  # [0, 2, 1, 4, 3, ...]
    rng = np.random.default_rng(0)
    ids = LANG.sample(rng, 300)
    masked = MaskingRecipe(p_pick=0.5).apply(ids, rng, LANG)
    ours = categories(LANG, ids, masked.labels, masked.kind)
    partner_kind = masked.kind[:, fixed]
    visible = (partner_kind == UNTOUCHED) | (partner_kind == KEPT)
    picked = masked.labels != IGNORE
    assert np.array_equal(ours[..., 2], visible & picked) and np.array_equal(ours[..., 3], ~visible & picked)


def test_mlm_keeps_its_single_unprefixed_scoreboard():
    module = EncoderModule(objective=MaskedLM())
    assert module.metric_prefixes == ("",)
    assert MaskedLM().scoreboards() == {"": Scoreboard(MLM_CATEGORIES, INPUT_CATEGORIES, "cloze", 1 / 8)}


@pytest.mark.parametrize(("kinds", "chance"), [(8, 1 / 8), (4, 1 / 4), (2, 1 / 2)])
def test_a_token_guess_that_sees_only_the_position_scores_one_in_the_language_kinds(kinds, chance):
    """Chance comes from the language, not a constant: checked against the guess itself, on samples."""
    lang = BracketPairs(kinds=kinds)
    ids = lang.sample(np.random.default_rng(0), 20000)[:, 1:]  # content positions
    best = [np.bincount(ids[:, t]).max() / len(ids) for t in range(ids.shape[1])]  # best fixed guess per position
    assert np.allclose(best, chance, atol=0.02)
    for objective in (MaskedLM(language=lang), NextTokenLM(language=lang)):
        assert objective.scoreboards()[""].chance == pytest.approx(chance)
    assert MaskedLM(language=Dyck()).scoreboards()[""].chance is None  # not stated: its exact ceiling says more


def test_sep_is_not_a_closer():
    sep_id = NextSentence().sep_id
    assert sep_id == 18  # one past the default vocabulary
    assert not LANG.is_closer(np.array([sep_id])).any()


def test_combined_refuses_objectives_on_different_languages():
    from minibert.objectives.combined import Combined

    same = Combined({"nsp": NextSentence(), "mlm": MaskedLM()})
    assert same.language == BracketPairs()
    with pytest.raises(ValueError, match="Combined.objectives are not allowed to differ in language"):
        Combined({"nsp": NextSentence(), "mlm": MaskedLM(language=Dyck())})
