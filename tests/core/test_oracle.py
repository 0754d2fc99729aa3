"""The exact Bayes oracle: cavities and posteriors against brute-force enumeration, ties, speed, and the
ceilings of the seed's validation set."""

import itertools
import time

import numpy as np
import pytest

from minibert.languages import BracketPairs, Dyck
from minibert.masking import IGNORE, MLM_CATEGORIES, MaskingRecipe
from minibert.objectives import MaskedLM
from minibert.oracle import mlm_credit, next_token_credit, posterior
from minibert.references.credit import tie_credit

SMALL = [Dyck(2, 6, 2), Dyck(3, 4, 2), Dyck(2, 8, 3), Dyck(1, 8, 2), Dyck(3, 6, 3), BracketPairs(kinds=3, pairs=3)]


def all_words(lang) -> np.ndarray:
    """Every sentence of the language, by enumerating all bracket strings and reducing matched pairs."""
    k = lang.kinds
    words = []
    for seq in itertools.product(range(2, 2 + 2 * k), repeat=lang.length):
        stack, depth_ok = [], True
        for x in seq:
            if x < 2 + k:
                stack.append(x)
                depth_ok &= len(stack) <= lang.max_depth
            elif not stack or stack.pop() != x - k:
                break
        else:
            if not stack and depth_ok:
                words.append((0, *seq))
    return np.array(words)


def emission(x: int, w: int, recipe: MaskingRecipe, content: set[int], picked: bool) -> float:
    """P(position shows x | its true token is w), picked or not known to be (written apart from masking.py)."""
    if w not in content:  # [CLS] is never picked
        return float(x == w)
    if_picked = recipe.p_mask * (x == 1) + recipe.p_random * (x in content) / len(content) + recipe.p_kept * (x == w)
    return if_picked if picked else (1 - recipe.p_pick) * (x == w) + recipe.p_pick * if_picked


@pytest.mark.parametrize("lang", SMALL, ids=repr)
@pytest.mark.parametrize("causal", [False, True])
def test_cavity_matches_brute_force_enumeration(lang, causal):
    words = all_words(lang)
    assert len(words) == lang.n_shapes * lang.kinds ** (lang.length // 2)
    lik = np.random.default_rng(1).random((3, lang.seq_len, lang.vocab_size)) ** 3
    cavity = lang.cavity(lik, causal=causal)
    for b, t in itertools.product(range(3), range(1, lang.seq_len)):
        seen = [s for s in range(1, lang.seq_len) if s != t and (s < t or not causal)]
        weight = np.prod([lik[b, s, words[:, s]] for s in seen] or [np.ones(len(words))], axis=0)
        expected = np.bincount(words[:, t], weights=weight, minlength=lang.vocab_size)
        np.testing.assert_allclose(cavity[b, t], expected / expected.sum(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("lang", SMALL[:4], ids=repr)
@pytest.mark.parametrize(
    "recipe", [MaskingRecipe(), MaskingRecipe(0.5, 0.3, 0.3), MaskingRecipe(0.3, 1.0, 0.0)], ids=repr
)
@pytest.mark.parametrize("causal", [False, True])
def test_posterior_is_every_word_times_the_corruptions_emission_probabilities(lang, recipe, causal):
    words = all_words(lang)
    content = set(lang.content_ids.tolist())
    rng = np.random.default_rng(7)
    masked = recipe.apply(lang.sample(rng, 6), rng, lang)
    post = posterior(lang, recipe, masked.inputs, causal=causal)
    for b, t in zip(*np.nonzero(masked.labels != IGNORE)):
        x = masked.inputs[b]
        weight = np.ones(len(words))
        for i, word in enumerate(words):  # P(word) is uniform; P(x | word, t picked), positions independent
            for s in range(lang.seq_len):
                if s == t:
                    weight[i] *= emission(x[s], word[s], recipe, content, picked=True)
                elif s < t or not causal:
                    weight[i] *= emission(x[s], word[s], recipe, content, picked=False)
        expected = np.bincount(words[:, t], weights=weight, minlength=lang.vocab_size)
        np.testing.assert_allclose(post[b, t], expected / expected.sum(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_bracket_pairs_closed_form_is_dyck_of_depth_one(causal):
    lik = np.random.default_rng(0).random((40, 17, 18))
    general = Dyck(kinds=8, length=16, max_depth=1).cavity(lik, causal=causal)
    np.testing.assert_allclose(BracketPairs().cavity(lik, causal=causal), general, rtol=1e-9, atol=1e-12)


def test_a_tie_among_t_tokens_earns_one_over_t_when_the_truth_is_among_them():
    post = np.array([[0.25, 0.25, 0.25, 0.25], [0.5, 0.5 - 1e-13, 0.0, 0.0], [0.6, 0.4, 0.0, 0.0], [0.6, 0.4, 0, 0]])
    np.testing.assert_allclose(tie_credit(post, np.array([2, 1, 0, 1])), [0.25, 0.5, 1.0, 0.0])


def test_impossible_evidence_is_refused_with_one_line():
    lik = np.ones((1, 7, 6))
    lik[0, 1, 2:] = 0.0  # the first bracket can be nothing
    with pytest.raises(ValueError, match="impossible"):
        Dyck(2, 6, 2).cavity(lik)


def test_seed_language_validation_set_ceilings_are_the_independent_checks_figures():
    """90.1% bidirectional, 54.4% causal, 22.0% partner hidden on the default validation set (val_seed 2018)."""
    found = {}
    for causal in (False, True):
        mlm = MaskedLM()
        mlm.causal = causal
        batch = mlm.make_batch(np.random.default_rng([2018]), 2000, "val")
        picked = batch["labels"] != IGNORE
        credit, cats = batch["credit"][picked].numpy(), batch["categories"][picked].numpy()
        found[causal] = credit.mean(), credit[cats[:, MLM_CATEGORIES.index("partner_hidden")]].mean()
    # the check quotes one decimal of a percent: within 0.1 point
    assert found[False][0] == pytest.approx(0.901, abs=1e-3) and found[True][0] == pytest.approx(0.544, abs=1e-3)
    assert found[False][1] == pytest.approx(0.220, abs=1e-3)


def test_next_token_ceiling_on_the_seed_language_is_exact():
    """Openers are fresh uniform draws (1/8), closers are certain: (8 / 8 + 8) / 16 = 0.5625 per sentence."""
    lang = BracketPairs()
    credit = next_token_credit(lang, lang.sample(np.random.default_rng(0), 100))
    assert credit.shape == (100, 16)
    np.testing.assert_allclose(credit.mean(1), 0.5625)


def test_one_blank_in_an_otherwise_clean_dyck_word_is_certain_bidirectionally_but_not_causally():
    """With a single [MASK] and nothing else corrupted, balance decides opener or closer and the partner
    decides the type: the bidirectional ceiling is 1. Left context alone cannot name an opener's type."""
    lang = Dyck()
    rng = np.random.default_rng(3)
    ids = lang.sample(rng, 300)
    recipe = MaskingRecipe(p_pick=0.03, p_mask=1.0, p_random=0.0)
    masked = recipe.apply(ids, rng, lang)
    single = (masked.labels != IGNORE).sum(1) == 1
    assert single.sum() > 50
    graded = (masked.labels != IGNORE) & single[:, None]
    both = mlm_credit(lang, recipe, masked.inputs, masked.labels, causal=False)
    left = mlm_credit(lang, recipe, masked.inputs, masked.labels, causal=True)
    np.testing.assert_allclose(both[graded], 1.0)
    opener = graded & lang.is_opener(ids)
    assert opener.any() and (left[opener] <= 1 / lang.kinds + 1e-12).all()


@pytest.mark.parametrize("causal", [False, True])
def test_the_cache_answers_the_same_questions_and_only_those(causal):
    """Keyed by content: equal arrays (new objects) hit; another language, recipe, form, or one changed
    token or label miss."""
    lang, recipe = Dyck(length=12), MaskingRecipe()
    rng = np.random.default_rng(11)
    masked = recipe.apply(lang.sample(rng, 40), rng, lang)
    inputs, labels = masked.inputs, masked.labels
    credit = mlm_credit(lang, recipe, inputs, labels, causal=causal)
    assert mlm_credit(lang, recipe, inputs.copy(), labels.copy(), causal=causal) is credit
    graded = np.argwhere((labels >= 0) & (inputs != labels))[0]  # a hidden or replaced token
    other_label = labels.copy()
    other_label[tuple(graded)] = (labels[tuple(graded)] % (lang.vocab_size - 2)) + 1
    changed_input = inputs.copy()
    changed_input[tuple(graded)] = labels[tuple(graded)]  # the graded token shown
    misses = [
        (Dyck(length=12, max_depth=8), recipe, inputs, labels, causal),  # a deeper bound explains them too
        (lang, MaskingRecipe(p_mask=0.7, p_random=0.2), inputs, labels, causal),
        (lang, recipe, inputs, labels, not causal),
        (lang, recipe, changed_input, labels, causal),
        (lang, recipe, inputs, other_label, causal),
    ]
    for args in misses:
        again = mlm_credit(*args[:4], causal=args[4])
        assert again is not credit
    np.testing.assert_array_equal(mlm_credit(lang, recipe, inputs, labels, causal=causal), credit)


def test_the_cache_key_holds_the_arrays_shapes_and_dtypes_not_only_their_bytes():
    from minibert.oracle import _cached

    calls, key = [], ("shape test", time.perf_counter_ns())  # one key for the three, new in every process run
    for a in (np.zeros((2, 3), np.int64), np.zeros((3, 2), np.int64), np.zeros((2, 6), np.int32)):  # same bytes
        _cached(key, (a,), lambda a=a: calls.append(a.shape) or a.shape)
    assert calls == [(2, 3), (3, 2), (2, 6)]
