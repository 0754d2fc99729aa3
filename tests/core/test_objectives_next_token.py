"""Next-token LM: labels are the inputs shifted by one, attention is forced causal, the future never leaks."""

from __future__ import annotations

import numpy as np
import torch

from minibert.languages import BracketPairs
from minibert.model import Encoder, EncoderConfig
from minibert.objectives import NextTokenLM


def test_labels_are_the_inputs_shifted_by_one_and_every_position_is_graded():
    rng = np.random.default_rng(0)
    assert NextTokenLM().language == BracketPairs()  # the seed's language by default
    batch = NextTokenLM().make_batch(rng, 32, "train")
    ids = torch.from_numpy(BracketPairs().sample(np.random.default_rng(0), 32))  # the same draw
    assert torch.equal(batch["inputs"], ids[:, :-1]) and torch.equal(batch["labels"], ids[:, 1:])
    lm = NextTokenLM()
    config = lm.configure_encoder(EncoderConfig())
    lm.build(config)
    out = lm(Encoder(config), batch)
    assert out.target.numel() == 32 * (BracketPairs().seq_len - 1)  # no position left out
    assert out.categories.sum(0).tolist() == [32 * 8, 32 * 8]  # openers and closers, half each


def test_attention_is_forced_causal_and_nothing_leaks_from_the_future():
    lm = NextTokenLM()
    config = lm.configure_encoder(EncoderConfig(causal=False))
    assert config.causal
    lm.build(config)
    torch.manual_seed(0)
    encoder = Encoder(config).eval()
    inputs = NextTokenLM().make_batch(np.random.default_rng(1), 8, "train")["inputs"]
    logits = lm.head(encoder(inputs))  # (B, T, V)
    for t in range(inputs.shape[1] - 1):
        changed = inputs.clone()
        changed[:, t + 1 :] = torch.randint(2, 18, changed[:, t + 1 :].shape)
        again = lm.head(encoder(changed))
        assert torch.allclose(logits[:, : t + 1], again[:, : t + 1], atol=1e-6)  # past and present unchanged
        assert not torch.allclose(logits[:, t + 1 :], again[:, t + 1 :])  # the change does reach the future
