"""The Dyck language: uniform sampling over all words (against exact enumeration), membership, structure,
categories and the grammaticality task's spoiled sentences."""

import collections

import numpy as np
import pytest

from minibert.languages import BracketPairs, Dyck


def reference_structure(row: list[int], kinds: int) -> tuple[list[int], list[int]]:
    """Partner and depth of every position, with a plain Python stack."""
    partner, depth, stack = list(range(len(row))), [0] * len(row), []
    for t, x in enumerate(row):
        if 2 <= x < 2 + kinds:
            stack.append(t)
            depth[t] = len(stack)
        elif x >= 2 + kinds:
            m = stack.pop()
            partner[t], partner[m], depth[t] = m, t, depth[m]
    return partner, depth


def reduces_to_nothing(row: list[int], kinds: int, max_depth: int) -> bool:
    """Membership by deleting matched adjacent pairs until nothing is left (independent of `contains`)."""
    text = [x for x in row[1:]]
    deepest, level = 0, 0
    for x in text:
        level += 1 if x < 2 + kinds else -1
        deepest = max(deepest, level)
    while True:
        for i in range(len(text) - 1):
            if text[i] < 2 + kinds and text[i + 1] == text[i] + kinds:
                del text[i : i + 2]
                break
        else:
            return not text and deepest <= max_depth and row[0] == 0


def test_sampler_is_uniform_over_all_words():
    lang = Dyck(kinds=2, length=6, max_depth=2)  # 4 shapes x 2^3 typings = 32 words
    n = 64_000
    counts = collections.Counter(map(tuple, lang.sample(np.random.default_rng(0), n).tolist()))
    assert len(counts) == 32 and all(lang.contains(np.array([w]))[0] for w in counts)
    expected = n / 32
    sigma = np.sqrt(n * (1 / 32) * (31 / 32))
    assert all(abs(c - expected) < 5 * sigma for c in counts.values())
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 83.6  # the 1 - 1e-6 quantile of chi-square with 31 degrees of freedom


def test_default_depth_profile_matches_exact_path_counts():
    """P(depth d after t tokens) = paths(0 -> d in t) x paths(d -> 0 in L - t) / paths(0 -> 0 in L)."""
    lang = Dyck()
    ids = lang.sample(np.random.default_rng(1), 20_000)
    level = np.cumsum(np.where(lang.is_opener(ids[:, 1:]), 1, -1), axis=1)  # (n, L)
    assert level.min() == 0 and level.max() == lang.max_depth and (level[:, -1] == 0).all()
    shapes = lang._completions / float(lang.kinds) ** np.clip(
        (np.arange(lang.length + 1)[None] - np.arange(lang.max_depth + 1)[:, None]) // 2, 0, None
    )  # back to plain path counts
    t = lang.length // 2
    exact = shapes[:, t] * shapes[:, lang.length - t] / shapes[0, lang.length]
    observed = np.bincount(level[:, t - 1], minlength=lang.max_depth + 1) / len(ids)
    assert exact.sum() == pytest.approx(1.0)
    assert np.all(np.abs(observed - exact) < 5 * np.sqrt(exact * (1 - exact) / len(ids)) + 1e-12)


def test_types_are_uniform_and_closers_match_their_openers():
    lang = Dyck()
    ids = lang.sample(np.random.default_rng(2), 5000)
    opener = lang.is_opener(ids)
    types = np.bincount(ids[opener] - 2, minlength=lang.kinds) / opener.sum()
    np.testing.assert_allclose(types, 1 / lang.kinds, atol=0.01)
    partner = lang.partner(ids)
    closers = lang.is_closer(ids)
    np.testing.assert_array_equal(np.take_along_axis(ids, partner, 1)[closers], ids[closers] - lang.kinds)


def test_partner_distances_span_one_to_at_least_fifteen():
    lang = Dyck()
    ids = lang.sample(np.random.default_rng(3), 2000)
    distance = np.abs(lang.partner(ids) - np.arange(lang.seq_len))[:, 1:]
    assert distance.min() == 1 and distance.max() >= 15 and (distance % 2 == 1).all()


def test_structure_matches_a_plain_stack():
    lang = Dyck(kinds=3, length=20, max_depth=4)
    ids = lang.sample(np.random.default_rng(4), 300)
    partner, depth = lang.structure(ids)
    for row, p, d in zip(ids.tolist(), partner.tolist(), depth.tolist()):
        assert (p, d) == reference_structure(row, lang.kinds)


def test_membership_agrees_with_pair_reduction_on_all_strings_and_near_misses():
    lang = Dyck(kinds=2, length=6, max_depth=2)
    rng = np.random.default_rng(5)
    strings = np.concatenate([np.zeros((4000, 1), np.int64), rng.integers(2, 6, size=(4000, 6))], axis=1)
    strings = np.concatenate([strings, lang.sample(rng, 500)])
    expected = [reduces_to_nothing(r, lang.kinds, lang.max_depth) for r in strings.tolist()]
    np.testing.assert_array_equal(lang.contains(strings), expected)
    assert [lang._member(r) for r in strings.tolist()] == expected
    assert sum(expected) > 500  # both kinds of rows were tried
    crossing, too_deep, closes_first = "[CLS] a b A B a A", "[CLS] a b b B B A", "[CLS] A a a A b B"
    assert not lang.contains(np.stack([lang.encode(t) for t in (crossing, too_deep, closes_first)])).any()
    assert not lang.contains(lang.encode("[CLS] a A b B a A a A")[None]).any()  # too long


@pytest.mark.parametrize("lang", [Dyck(), Dyck(kinds=2, length=12, max_depth=3), BracketPairs()], ids=repr)
def test_spoiled_sentences_are_never_in_the_language(lang):
    rng = np.random.default_rng(6)
    ids = lang.sample(rng, 2000)
    spoiled, first, how = lang.spoil(ids, rng)
    assert not lang.contains(spoiled).any()
    changed = spoiled != ids
    np.testing.assert_array_equal(changed.argmax(1), first)
    if lang.spoilings:
        assert set(np.unique(how)) == set(range(len(lang.spoilings)))
        share_swap = (how == 0).mean()
        assert 0.45 < share_swap < 0.56  # half swaps, half moves (a few swaps fall back on moves)
        # only the structure changes: every sentence keeps its bag of brackets
        np.testing.assert_array_equal(np.sort(spoiled, axis=1), np.sort(ids, axis=1))


def test_categories_put_each_bracket_in_one_distance_and_one_depth_bucket():
    lang = Dyck()
    ids = lang.sample(np.random.default_rng(7), 500)
    masks = lang.category_masks(ids, lang.partner(ids))
    assert masks.shape == (500, lang.seq_len, len(lang.categories))
    dist, depth = masks[..., :4], masks[..., 4:]
    np.testing.assert_array_equal(dist.sum(-1), lang.is_content(ids))
    np.testing.assert_array_equal(depth.sum(-1), lang.is_content(ids))
    partner, level = lang.structure(ids)
    far = np.abs(partner - np.arange(lang.seq_len)) >= 8
    np.testing.assert_array_equal(masks[..., lang.categories.index("dist_8_plus")], far & lang.is_content(ids))
    np.testing.assert_array_equal(masks[..., lang.categories.index("depth_1")], level == 1)


@pytest.mark.parametrize(
    "kwargs, field",
    [({"length": 31}, "length"), ({"kinds": 0}, "kinds"), ({"kinds": 27}, "kinds"), ({"max_depth": 0}, "max_depth")],
)
def test_bad_settings_fail_with_one_line_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"Dyck.{field}=") as err:
        Dyck(**kwargs)
    assert "\n" not in str(err.value)


def test_languages_compare_by_their_settings():
    assert Dyck() == Dyck(4, 32, 6) != Dyck(4, 32, 5)
    assert BracketPairs() != Dyck(8, 16, 1) and repr(BracketPairs()) == "BracketPairs(kinds=8, pairs=8)"
