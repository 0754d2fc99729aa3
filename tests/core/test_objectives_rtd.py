"""Replaced-token detection: labels mark exactly the positions whose token differs from the original."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minibert.masking import IGNORE
from minibert.model import Encoder, EncoderConfig
from minibert.objectives import ReplacedTokenDetection
from minibert.training.module import EncoderModule


def built(**kwargs) -> ReplacedTokenDetection:
    rtd = ReplacedTokenDetection(**kwargs)
    rtd.build(rtd.configure_encoder(EncoderConfig()))
    return rtd


def test_labels_mark_exactly_the_positions_that_differ_from_the_original():
    torch.manual_seed(0)
    rtd = built()
    batch = rtd.make_batch(np.random.default_rng(0), 500, "train")
    picked = batch["labels"] != IGNORE
    original = torch.where(picked, batch["labels"], batch["inputs"])
    inputs, replaced = rtd.propose(rtd.generator(batch["inputs"]), batch)
    assert torch.equal(replaced, inputs != original)
    assert torch.equal(inputs[~picked], original[~picked])  # only picked positions can change
    first_opener, vocab_size = rtd.language.content_ids[0], rtd.language.vocab_size
    assert (first_opener, vocab_size) == (2, 18)  # the seed's language by default
    assert ((inputs[picked] >= first_opener) & (inputs[picked] < vocab_size)).all()  # proposals are content
    # an untrained generator proposes the original now and then: those positions count as original
    assert 0 < replaced.sum() < picked.sum()


def test_a_generator_that_proposes_the_original_leaves_nothing_replaced():
    rtd = built()
    batch = rtd.make_batch(np.random.default_rng(1), 64, "train")
    picked = batch["labels"] != IGNORE
    with torch.no_grad():  # make the generator's head point straight at the true token
        rtd.mlm.head.weight.zero_()
        rtd.mlm.head.bias.fill_(-1e4)
    hidden = torch.zeros(*batch["inputs"].shape, rtd.generator_shape.width)
    rtd.mlm.head.bias.data[batch["labels"][picked][0]] = 1e4  # every proposal: that one token
    inputs, replaced = rtd.propose(hidden, batch)
    target = batch["labels"][picked][0]
    assert torch.equal(replaced[picked], batch["labels"][picked] != target)


def test_discriminator_accuracy_is_split_by_replaced_and_original_and_the_generator_reports_its_mlm():
    torch.manual_seed(0)
    rtd = ReplacedTokenDetection(discriminator_weight=10.0)
    module = EncoderModule(objective=rtd)
    boards = dict(zip(module.metric_prefixes, rtd.scoreboards().values(), strict=True))
    assert boards[""].categories == ("replaced", "original")
    batch = rtd.make_batch(np.random.default_rng(2), 200, "val")
    out = module.objective(module.encoder, batch)
    parts = out.graded()
    detected, generated = parts[""], parts["generator/"]
    assert out.loss.item() == pytest.approx(generated.loss.item() + 10.0 * detected.loss.item(), rel=1e-5)
    assert len(detected.target) == 200 * 16  # every content position is graded
    assert torch.equal(detected.categories[:, 0], detected.target == 1)
    assert torch.equal(detected.categories[:, 1], detected.target == 0)
    assert len(generated.target) == int((batch["labels"] != IGNORE).sum())
    # only the discriminator is the encoder: the generator is the objective's and is not fine-tuned
    assert not any(k.startswith("encoder.") for k, _ in rtd.named_parameters())
    assert isinstance(module.encoder, Encoder)
    assert module.encoder.config.width == 32 and rtd.generator.config.width == 16


def test_rtd_rejects_bad_settings_by_name():
    with pytest.raises(ValueError, match="EncoderConfig.width=0"):
        ReplacedTokenDetection(generator_shape=EncoderConfig(width=0))
    with pytest.raises(ValueError, match="discriminator_weight=0"):
        ReplacedTokenDetection(discriminator_weight=0)
