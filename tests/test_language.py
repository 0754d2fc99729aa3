"""The bracket language: well-formed sentences, uniform openers, partner index, display round trip."""

import re

import numpy as np
import pytest

from minibert.language import (
    CLOSERS,
    CLS_ID,
    FIRST_CLOSER,
    FIRST_OPENER,
    MASK_ID,
    N_KINDS,
    OPENERS,
    SEQ_LEN,
    VOCAB,
    closer_of,
    decode,
    encode,
    is_closer,
    is_opener,
    partner_index,
    sample_sentences,
)


def test_vocabulary_is_cls_mask_eight_openers_eight_closers():
    assert VOCAB == ("[CLS]", "[MASK]", *"abcdefgh", *"ABCDEFGH")
    assert (VOCAB[CLS_ID], VOCAB[MASK_ID]) == ("[CLS]", "[MASK]")
    assert [VOCAB[i] for i in range(FIRST_OPENER, FIRST_CLOSER)] == list(OPENERS)
    assert [VOCAB[i] for i in range(FIRST_CLOSER, len(VOCAB))] == list(CLOSERS)
    assert [VOCAB[c] for c in closer_of(np.arange(FIRST_OPENER, FIRST_CLOSER))] == list(CLOSERS)


def test_every_sentence_is_cls_then_eight_pairs_of_opener_and_its_own_closer():
    ids = sample_sentences(np.random.default_rng(0), 5000)
    assert ids.shape == (5000, SEQ_LEN) and ids.dtype == np.int64
    assert (ids[:, 0] == CLS_ID).all()
    openers, closers = ids[:, 1::2], ids[:, 2::2]
    assert is_opener(openers).all() and is_closer(closers).all()
    assert (closers == closer_of(openers)).all()
    assert not (is_opener(ids[:, 0]) | is_closer(ids[:, 0])).any()


def test_openers_are_uniform_over_the_eight_kinds():
    ids = sample_sentences(np.random.default_rng(1), 20_000)
    counts = np.bincount(ids[:, 1::2].ravel() - FIRST_OPENER, minlength=N_KINDS)
    n, p = counts.sum(), 1 / N_KINDS
    assert np.all(np.abs(counts / n - p) <= 5 * np.sqrt(p * (1 - p) / n)), counts


def test_same_generator_state_gives_the_same_sentences():
    a = sample_sentences(np.random.default_rng(7), 10)
    b = sample_sentences(np.random.default_rng(7), 10)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, sample_sentences(np.random.default_rng(8), 10))


@pytest.mark.parametrize("seq_len", [1, 3, 5, SEQ_LEN, 41])
def test_partner_index_is_an_involution_pairing_each_opener_with_the_next_position(seq_len):
    partner = partner_index(seq_len)
    assert np.array_equal(partner[partner], np.arange(seq_len))
    assert partner[0] == 0  # [CLS] is its own partner
    odd = np.arange(1, seq_len, 2)
    assert np.array_equal(partner[odd], odd + 1)
    assert (partner[1:] != np.arange(1, seq_len)).all()  # no content position is its own partner


def test_partner_of_every_opener_holds_its_closer():
    ids = sample_sentences(np.random.default_rng(2), 100)
    partner = partner_index()
    odd = np.arange(1, SEQ_LEN, 2)
    assert np.array_equal(ids[:, partner[odd]], closer_of(ids[:, odd]))


def test_partner_index_rejects_even_length():
    with pytest.raises(ValueError, match="seq_len must be 1 \\+ 2 \\* pairs .* got 4"):
        partner_index(4)


def test_encode_decode_round_trip():
    ids = sample_sentences(np.random.default_rng(3), 50)
    for row in ids:
        text = decode(row)
        assert text.startswith("[CLS] ") and len(text.split()) == SEQ_LEN
        assert np.array_equal(encode(text), row)
        assert decode(encode(text)) == text
    assert decode(encode("[CLS] d D [MASK] E")) == "[CLS] d D [MASK] E"
    assert encode("[CLS] d D e E").tolist() == [CLS_ID, 5, 13, 6, 14]


@pytest.mark.parametrize("bad", ["x", "[SEP]", "dD", "I"])
def test_encode_names_the_unknown_token_and_the_vocabulary(bad):
    with pytest.raises(ValueError, match=f"unknown token '{re.escape(bad)}'.*vocabulary is \\[CLS\\] \\[MASK\\] a b"):
        encode(f"[CLS] a A {bad}")
