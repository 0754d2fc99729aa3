"""The masking recipe: shares within binomial tolerance of the rates, what each kind of position holds,
labels, and validation of the rates."""

import re

import numpy as np
import pytest

from minibert.languages import CLS_ID, MASK_ID, BracketPairs
from minibert.masking import IGNORE, KEPT, MASKED, RANDOM, UNTOUCHED, MaskingRecipe, shares

LANG = BracketPairs()
CONTENT_IDS, SEQ_LEN = LANG.content_ids, LANG.seq_len

N_SENTENCES = 20_000  # 320,000 content tokens: one binomial sigma of a 15% share is 0.06 points

RECIPES = [
    MaskingRecipe(),
    MaskingRecipe(p_pick=0.5),
    MaskingRecipe(p_mask=1.0, p_random=0.0),
    MaskingRecipe(p_mask=0.7, p_random=0.2),
    MaskingRecipe(p_pick=1.0, p_mask=0.0, p_random=1.0),
]


def corrupt(recipe: MaskingRecipe, n: int = N_SENTENCES, seed: int = 0):
    rng = np.random.default_rng(seed)
    ids = LANG.sample(rng, n)
    return ids, recipe.apply(ids, rng, LANG)


@pytest.mark.parametrize("recipe", RECIPES, ids=repr)
def test_shares_are_within_five_binomial_sigmas_of_the_rates(recipe):
    ids, masked = corrupt(recipe)
    n = ids[:, 1:].size  # content tokens
    observed, expected = shares(masked), recipe.expected_shares()
    assert observed.keys() == expected.keys() == {"mask", "random", "kept", "picked"}
    for name, p in expected.items():
        sigma = np.sqrt(p * (1 - p) / n)
        assert abs(observed[name] - p) <= 5 * sigma + 1e-12, (name, observed[name], p)


def test_default_recipe_is_berts():
    expected = MaskingRecipe().expected_shares()
    assert expected == pytest.approx({"mask": 0.12, "random": 0.015, "kept": 0.015, "picked": 0.15})


@pytest.mark.parametrize("recipe", RECIPES, ids=repr)
def test_each_kind_of_position_holds_what_the_recipe_says_and_labels_exactly_the_picked_ones(recipe):
    ids, masked = corrupt(recipe, n=2000)
    kind, inputs = masked.kind, masked.inputs
    assert set(np.unique(kind)) <= {UNTOUCHED, MASKED, RANDOM, KEPT}
    assert (inputs[kind == MASKED] == MASK_ID).all()
    assert np.isin(inputs[kind == RANDOM], CONTENT_IDS).all()  # never [CLS] or [MASK]
    same = (kind == UNTOUCHED) | (kind == KEPT)
    assert np.array_equal(inputs[same], ids[same])
    picked = kind != UNTOUCHED  # the label is the original token, exactly at the picked positions
    assert np.array_equal(masked.labels != IGNORE, picked)
    assert np.array_equal(masked.labels[picked], ids[picked])


def test_cls_is_never_picked_even_when_every_position_is():
    ids, masked = corrupt(MaskingRecipe(p_pick=1.0), n=1000)
    assert (masked.kind[:, 0] == UNTOUCHED).all()
    assert (masked.inputs[:, 0] == CLS_ID).all()
    assert (masked.labels[:, 0] == IGNORE).all()
    assert (masked.kind[:, 1:] != UNTOUCHED).all()  # every content position is picked


def test_random_replacements_are_uniform_over_the_sixteen_content_tokens():
    _, masked = corrupt(MaskingRecipe(p_pick=1.0, p_mask=0.0, p_random=1.0), n=5000)
    replaced = masked.inputs[masked.kind == RANDOM]
    counts = np.array([(replaced == t).sum() for t in CONTENT_IDS])
    n, p = len(replaced), 1 / len(CONTENT_IDS)
    assert counts.sum() == n == 5000 * (SEQ_LEN - 1)
    assert np.all(np.abs(counts / n - p) <= 5 * np.sqrt(p * (1 - p) / n)), counts


class ClosersOnly(BracketPairs):
    """A language whose content (what masking may pick) is its closers only."""

    def is_content(self, ids):
        return self.is_closer(ids)


def test_the_languages_content_restricts_which_positions_may_be_picked():
    rng = np.random.default_rng(0)
    ids = LANG.sample(rng, 500)
    pickable = np.zeros(ids.shape, dtype=bool)
    pickable[:, 2::2] = True  # closers only
    masked = MaskingRecipe(p_pick=1.0).apply(ids, rng, ClosersOnly())
    assert np.array_equal(masked.kind != UNTOUCHED, pickable)


def test_tokens_past_the_vocabulary_are_never_picked():
    """An objective's own token after the language's vocabulary (NSP's [SEP]) is not content."""
    rng = np.random.default_rng(0)
    sep = np.full((500, 1), LANG.vocab_size)
    ids = np.concatenate([LANG.sample(rng, 500), sep, LANG.sample(rng, 500)[:, 1:], sep], axis=1)
    masked = MaskingRecipe(p_pick=1.0).apply(ids, rng, LANG)
    assert np.array_equal(masked.kind != UNTOUCHED, (ids != CLS_ID) & (ids != LANG.vocab_size))
    assert (masked.inputs[:, [SEQ_LEN, -1]] == LANG.vocab_size).all()


def test_same_rng_state_gives_the_same_corruption():
    _, a = corrupt(MaskingRecipe(), n=100, seed=5)
    _, b = corrupt(MaskingRecipe(), n=100, seed=5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize(
    "field, value",
    [
        ("p_pick", -0.1),
        ("p_pick", 1.5),
        ("p_mask", 1.2),
        ("p_mask", -1),
        ("p_random", -0.01),
        ("p_random", 2.0),
        ("p_pick", "0.15"),
        ("p_mask", True),
        ("p_random", float("nan")),
    ],
)
def test_rates_outside_zero_one_raise_naming_field_and_value(field, value):
    with pytest.raises(
        ValueError, match=rf"MaskingRecipe\.{field}={re.escape(repr(value))} is not allowed: .*\[0, 1\]"
    ):
        MaskingRecipe(**{field: value})


def test_mask_plus_random_above_one_raises_naming_both_values():
    with pytest.raises(ValueError, match=r"p_mask \+ p_random = 0\.8 \+ 0\.3 = 1\.1 is not allowed: it must be <= 1"):
        MaskingRecipe(p_mask=0.8, p_random=0.3)


@pytest.mark.parametrize("p_mask, p_random", [(0.7, 0.2), (0.34 + 0.56, 0.1), (1.0, 0.0), (0.0, 1.0), (0.9, 0.1)])
def test_rates_summing_to_one_up_to_rounding_are_valid(p_mask, p_random):
    recipe = MaskingRecipe(p_mask=p_mask, p_random=p_random)
    assert recipe.p_kept == pytest.approx(1 - p_mask - p_random, abs=1e-12)
    assert recipe.p_kept >= 0.0
