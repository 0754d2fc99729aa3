"""BracketPairs, the seed's language: well-formed sentences, uniform openers, partner index, display round trip."""

import re

import numpy as np
import pytest

from minibert.languages import CLS_ID, MASK_ID, BracketPairs

LANG = BracketPairs()
FIRST_OPENER = int(LANG.content_ids[0])


def closer_of(openers: np.ndarray) -> np.ndarray:
    return openers + LANG.kinds


def test_vocabulary_is_cls_mask_eight_openers_eight_closers():
    vocab = LANG.vocab
    assert (LANG.kinds, LANG.pairs, LANG.vocab_size, LANG.seq_len) == (8, 8, 18, 17)
    assert vocab == ("[CLS]", "[MASK]", *"abcdefgh", *"ABCDEFGH")
    assert (vocab[CLS_ID], vocab[MASK_ID]) == ("[CLS]", "[MASK]")
    assert (FIRST_OPENER, LANG.first_closer) == (2, 10)
    assert np.array_equal(LANG.content_ids, np.arange(2, 18))
    assert [vocab[i] for i in range(FIRST_OPENER, LANG.first_closer)] == list("abcdefgh")
    assert [vocab[i] for i in range(LANG.first_closer, len(vocab))] == list("ABCDEFGH")
    assert [vocab[c] for c in closer_of(np.arange(FIRST_OPENER, LANG.first_closer))] == list("ABCDEFGH")


def test_every_sentence_is_cls_then_eight_pairs_of_opener_and_its_own_closer():
    ids = LANG.sample(np.random.default_rng(0), 5000)
    assert ids.shape == (5000, LANG.seq_len) and ids.dtype == np.int64
    assert (ids[:, 0] == CLS_ID).all()
    openers, closers = ids[:, 1::2], ids[:, 2::2]
    assert LANG.is_opener(openers).all() and LANG.is_closer(closers).all()
    assert (closers == closer_of(openers)).all()
    assert not (LANG.is_opener(ids[:, 0]) | LANG.is_closer(ids[:, 0])).any()


def test_sample_draws_exactly_the_seeds_sentences():
    """The seed drew `rng.integers(0, 8, (n, 8))` opener kinds, each followed by its closer: same rng state, same
    ids."""
    ids = LANG.sample(np.random.default_rng(4), 300)
    kinds = np.random.default_rng(4).integers(0, 8, size=(300, 8))
    pairs = np.stack([FIRST_OPENER + kinds, LANG.first_closer + kinds], axis=-1).reshape(300, -1)
    assert np.array_equal(ids, np.concatenate([np.full((300, 1), CLS_ID), pairs], axis=1))
    assert not np.array_equal(ids, LANG.sample(np.random.default_rng(5), 300))  # another state, other sentences


def test_openers_are_uniform_over_the_eight_kinds():
    ids = LANG.sample(np.random.default_rng(1), 20_000)
    counts = np.bincount(ids[:, 1::2].ravel() - FIRST_OPENER, minlength=LANG.kinds)
    n, p = counts.sum(), 1 / LANG.kinds
    assert np.all(np.abs(counts / n - p) <= 5 * np.sqrt(p * (1 - p) / n)), counts


@pytest.mark.parametrize("pairs", [0, 1, 2, 8, 20])  # sentences of 1, 3, 5, 17 and 41 tokens
def test_partner_index_is_an_involution_pairing_each_opener_with_the_next_position(pairs):
    lang = BracketPairs(pairs=max(pairs, 1))
    seq_len = 1 + 2 * pairs
    ids = lang.sample(np.random.default_rng(5), 50)[:, :seq_len]  # pairs 0: [CLS] alone
    partners = lang.partner(ids)
    assert partners.shape == ids.shape
    assert (partners == partners[0]).all()  # the same for every sentence
    partner = partners[0]
    assert np.array_equal(partner[partner], np.arange(seq_len))
    assert partner[0] == 0  # [CLS] is its own partner
    odd = np.arange(1, seq_len, 2)
    assert np.array_equal(partner[odd], odd + 1)
    assert (partner[1:] != np.arange(1, seq_len)).all()  # no content position is its own partner


@pytest.mark.parametrize("pairs", [0, -1, 1.5, True, "8"])
def test_a_sentence_is_one_plus_a_positive_number_of_pairs(pairs):
    """The sentence length is 1 + 2 * pairs (odd): a language with any other number of pairs is refused."""
    with pytest.raises(ValueError, match=f"BracketPairs.pairs={re.escape(repr(pairs))} .* positive integer"):
        BracketPairs(pairs=pairs)


def test_encode_decode_round_trip():
    ids = LANG.sample(np.random.default_rng(3), 50)
    for row in ids:
        text = LANG.decode(row)
        assert text.startswith("[CLS] ") and len(text.split()) == LANG.seq_len
        assert np.array_equal(LANG.encode(text), row)
        assert LANG.decode(LANG.encode(text)) == text
    assert LANG.decode(LANG.encode("[CLS] d D [MASK] E")) == "[CLS] d D [MASK] E"
    assert LANG.encode("[CLS] d D e E").tolist() == [CLS_ID, 5, 13, 6, 14]


@pytest.mark.parametrize("bad", ["x", "[SEP]", "dD", "I"])
def test_encode_names_the_unknown_token_and_the_vocabulary(bad):
    vocabulary = re.escape("vocabulary of BracketPairs(kinds=8, pairs=8) is [CLS] [MASK] a b")
    with pytest.raises(ValueError, match=f"unknown token '{re.escape(bad)}'.*{vocabulary}"):
        LANG.encode(f"[CLS] a A {bad}")
