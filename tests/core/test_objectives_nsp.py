"""Next sentence prediction and BERT's combination with MLM: layout, balance, negatives from elsewhere."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minibert.languages import CLS_ID, BracketPairs
from minibert.masking import IGNORE, MLM_CATEGORIES
from minibert.model import Encoder, EncoderConfig
from minibert.objectives import Combined, Grammaticality, MaskedLM, NextSentence, ReplacedTokenDetection
from minibert.objectives.documents import MarkovDocuments
from minibert.training.module import EncoderModule

LANG = BracketPairs()
SEP_ID = NextSentence().sep_id


def test_pairs_are_balanced_and_negatives_come_from_another_document():
    nsp = NextSentence(n_pairs=8)
    batch = nsp.make_batch(np.random.default_rng(0), 501, "train")
    same_draw = np.random.default_rng(0)
    docs = nsp.documents.sample(same_draw, 501, n_segments=2, n_pairs=8, language=LANG)
    is_next, b_from = batch["is_next"].numpy(), batch["b_from"].numpy()
    assert abs(int(is_next.sum()) - 501 / 2) <= 0.5
    own = np.arange(501)
    assert (b_from[is_next == 1] == own[is_next == 1]).all()
    assert (b_from[is_next == 0] != own[is_next == 0]).all()
    inputs = batch["inputs"].numpy()
    assert (inputs[:, 0] == CLS_ID).all() and (inputs[:, [17, 34]] == SEP_ID).all()
    assert np.array_equal(inputs[:, 1:17], docs[:, 0])  # A: the document's first segment
    assert np.array_equal(inputs[:, 18:34], docs[b_from, 1])  # B: the next segment of document b_from
    assert not np.array_equal(inputs[is_next == 0, 18:34], docs[is_next == 0, 1])
    assert (batch["segments"].numpy() == (np.arange(35) >= 18)).all()


def test_true_continuations_share_their_document_s_transitions():
    # the corpus claim that makes NSP learnable: B's opener bigrams occur in A far more often for true pairs
    batch = NextSentence().make_batch(np.random.default_rng(2), 2000, "train")
    a, b = batch["inputs"].numpy()[:, 1:17:2], batch["inputs"].numpy()[:, 18:34:2]  # openers of A and of B
    assert LANG.is_opener(a).all() and LANG.is_opener(b).all()

    def shared(row_a, row_b):
        bigrams = set(zip(row_a[:-1], row_a[1:], strict=True))
        return np.mean([pair in bigrams for pair in zip(row_b[:-1], row_b[1:], strict=True)])

    overlap = np.array([shared(x, y) for x, y in zip(a, b, strict=True)])
    is_next = batch["is_next"].numpy() == 1
    assert overlap[is_next].mean() > 2 * overlap[~is_next].mean()
    # and with near-uniform chains the relation fades
    uniform = NextSentence(documents=MarkovDocuments(concentration=1000.0))
    flat = uniform.make_batch(np.random.default_rng(2), 2000, "val")
    a, b = flat["inputs"].numpy()[:, 1:17:2], flat["inputs"].numpy()[:, 18:34:2]
    overlap = np.array([shared(x, y) for x, y in zip(a, b, strict=True)])
    is_next = flat["is_next"].numpy() == 1
    assert abs(overlap[is_next].mean() - overlap[~is_next].mean()) < 0.03


def test_nsp_widens_the_encoder_only_for_itself():
    config = NextSentence().configure_encoder(EncoderConfig())
    assert (config.vocab_size, config.max_len, config.segments) == (19, 35, 2)
    assert SEP_ID == 18 and LANG.vocab_size == 18 and EncoderConfig().segments == 0
    plain = MaskedLM().configure_encoder(EncoderConfig())
    assert (plain.vocab_size, plain.max_len, plain.segments) == (18, 17, 0)


def test_bert_masks_the_pair_but_never_cls_or_sep_and_reports_each_part_with_a_prefix():
    bert = Combined({"nsp": NextSentence(), "mlm": MaskedLM()}, {"nsp": 1.0, "mlm": 0.5})
    batch = bert.make_batch(np.random.default_rng(0), 400, "train")
    picked = batch["labels"] != IGNORE
    assert not picked[:, [0, 17, 34]].any()
    assert picked.float().mean().item() == pytest.approx(0.15 * 32 / 35, abs=0.01)
    assert (batch["inputs"][:, [17, 34]] == SEP_ID).all() and "segments" in batch and "is_next" in batch
    # the partner categories follow the pair layout: B's first opener (18) pairs with 19, not with the [SEP]
    module = EncoderModule(objective=bert)
    prefixes = dict(zip(module.metric_prefixes, bert.scoreboards().values(), strict=True))
    assert {k: b.categories for k, b in prefixes.items()} == {"nsp/": NextSentence.categories, "mlm/": MLM_CATEGORIES}
    out = bert(module.encoder, batch)
    parts = out.graded()
    assert out.loss.item() == pytest.approx(parts["nsp/"].loss.item() + 0.5 * parts["mlm/"].loss.item(), rel=1e-5)
    assert len(parts["nsp/"].target) == 400 and len(parts["mlm/"].target) == int(picked.sum())


def test_combined_rejects_bad_configurations_by_name():
    with pytest.raises(ValueError, match="weights"):
        Combined({"nsp": NextSentence(), "mlm": MaskedLM()}, {"nsp": 1.0})
    with pytest.raises(ValueError, match=r"weights\['mlm'\]=-1"):
        Combined({"mlm": MaskedLM()}, {"mlm": -1})
    with pytest.raises(ValueError, match=r"objectives\['nsp'\].*cannot corrupt"):
        Combined({"mlm": MaskedLM(), "nsp": NextSentence()})
    with pytest.raises(ValueError, match=r"objectives\['rtd'\].*runs the encoder"):
        Combined({"rtd": ReplacedTokenDetection()})
    with pytest.raises(ValueError, match="objectives={}"):
        Combined({})
    both = Combined({"a": MaskedLM(), "b": MaskedLM()})
    with pytest.raises(ValueError, match="overwrites batch keys"):
        both.make_batch(np.random.default_rng(0), 4, "train")


def test_a_sentence_pair_encoder_fine_tunes_on_single_sentences_as_segment_0():
    config = NextSentence().configure_encoder(EncoderConfig())
    task = Grammaticality()
    task.build(config)
    batch = task.make_batch(np.random.default_rng(0), 4, "train")
    encoder = Encoder(config).eval()
    out = task(encoder, batch)
    expected = task.head(encoder(batch["inputs"], torch.zeros_like(batch["inputs"]))[:, 0])
    assert torch.equal(out.preds, expected.argmax(-1))
