"""Feature-based probes: every layer's hidden states, pooled features against a brute-force reading, the
`probe` regime against the `frozen` one, and the claims the probe tables rest on."""

import numpy as np
import pytest
import torch

from minibert.languages import Dyck
from minibert.model import Encoder, EncoderConfig
from minibert.objectives import Grammaticality, Probe
from minibert.training.checkpoints import last_checkpoint
from minibert.training.finetune import FinetuneModule
from tests.finetuning import checksum, train


@pytest.fixture(scope="module")
def checkpoint(short_run):
    """A briefly pre-trained default encoder (the session's shared 60-step run)."""
    return last_checkpoint(short_run["log_dir"])


def small_encoder(norm: str = "post", layers: int = 3, causal: bool = False) -> Encoder:
    torch.manual_seed(0)
    config = EncoderConfig(vocab_size=18, max_len=17, layers=layers, norm=norm, causal=causal)
    return Encoder(config).eval()


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_all_layers_ends_with_the_default_output_and_starts_with_the_embeddings(norm):
    encoder = small_encoder(norm)
    ids = torch.randint(0, 18, (5, 17), generator=torch.Generator().manual_seed(1))
    states = encoder(ids, all_layers=True)
    assert len(states) == encoder.config.layers + 1
    assert torch.equal(states[-1], encoder(ids))  # bit for bit: the default path is untouched
    assert torch.equal(states[0], encoder.tok(ids) + encoder.pos.weight[:17])
    x = states[0]  # each state is its block applied to the one before (the last one also final-normed)
    for i, block in enumerate(encoder.blocks[:-1]):
        x = block(x)
        assert torch.equal(states[i + 1], x)


@pytest.mark.parametrize("pooling", ["cls", "mean", "max", "last"])
@pytest.mark.parametrize(("layer", "concat"), [(0, 1), (1, 1), (-1, 1), (-1, 2), (3, 4)])
def test_features_equal_a_brute_force_reading_of_the_hidden_states(layer, concat, pooling):
    encoder = small_encoder()
    probe = Probe(layer=layer, concat=concat, pooling=pooling)
    if pooling == "cls" and layer % 4 == 0:  # a constant row: refused (next test)
        with pytest.raises(ValueError, match="same for every sentence"):
            probe.build(encoder.config)
        return
    probe.build(encoder.config)
    ids = torch.from_numpy(probe.language.sample(np.random.default_rng(0), 6))
    states = [s.detach().numpy() for s in encoder(ids, all_layers=True)]
    top = layer % 4
    rows = np.concatenate(states[top - concat + 1 : top + 1], axis=-1)  # (B, T, concat * width)
    expected = {"cls": rows[:, 0], "last": rows[:, -1], "mean": rows.mean(1), "max": rows.max(1)}[pooling]
    got = probe.features(encoder, ids).detach().numpy()
    assert got.shape == (6, concat * 32) and probe.head.in_features == concat * 32
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_a_cls_row_that_is_one_constant_is_refused_rather_than_probed_at_chance(causal):
    encoder = small_encoder(causal=causal)
    ids = torch.from_numpy(Probe().language.sample(np.random.default_rng(0), 64))
    states = encoder(ids, all_layers=True)
    constant = [i for i, s in enumerate(states) if torch.equal(s[:, 0], s[:1, 0].expand_as(s[:, 0]))]
    assert constant == (list(range(len(states))) if causal else [0])  # the embeddings always; every layer if causal
    for layer in constant:
        with pytest.raises(ValueError, match=r"^Probe\.pooling='cls' is not allowed at layer=.*use '(last|mean)'"):
            Probe(layer=layer, pooling="cls").build(encoder.config)
    Probe(layer=-1, pooling="last").build(encoder.config)  # the row a causal encoder lets see the sentence


def test_mean_of_the_embeddings_is_blind_to_every_dyck_spoil():
    """Dyck's spoils keep every bracket's type and count, and the mean of (token + position) embeddings only
    sees that multiset: a spoiled sentence has its original's features, so that probe sits at 50%."""
    language = Dyck()
    probe = Probe(language=language, layer=0, pooling="mean")
    config = probe.configure_encoder(EncoderConfig())
    probe.build(config)
    torch.manual_seed(0)
    encoder = Encoder(config).eval()
    rng = np.random.default_rng(0)
    ids = language.sample(rng, 200)
    spoiled, _, how = language.spoil(ids, rng)
    assert set(how.tolist()) == {0, 1} and not language.contains(spoiled).any()
    before = probe.features(encoder, torch.from_numpy(ids))
    after = probe.features(encoder, torch.from_numpy(spoiled))
    torch.testing.assert_close(after, before, rtol=0, atol=1e-6)


def test_probe_on_the_last_cls_row_is_the_frozen_regime_bit_for_bit(checkpoint):
    torch.manual_seed(0)
    frozen = FinetuneModule(regime="frozen", encoder_ckpt=str(checkpoint))
    torch.manual_seed(0)
    probe = FinetuneModule(regime="probe", encoder_ckpt=str(checkpoint), objective=Probe(pooling="cls"))
    encoder_before = checksum(probe.encoder)
    assert checksum(frozen.objective) == checksum(probe.objective)  # the same initial head
    torch.manual_seed(0)
    train(frozen)
    torch.manual_seed(0)
    train(probe)
    assert checksum(frozen.objective) == checksum(probe.objective)  # and the same head after training
    assert checksum(probe.encoder) == encoder_before and not probe.encoder.training
    assert probe.parameter_counts()["trainable_params"] == 66


def test_probe_regime_trains_only_its_head(checkpoint):
    module = FinetuneModule(regime="probe", encoder_ckpt=str(checkpoint), objective=Probe(concat=3, pooling="max"))
    before = checksum(module.encoder)
    modes = train(module, steps=4).modes
    assert checksum(module.encoder) == before and not any(modes)
    assert module.parameter_counts()["trainable_params"] == 3 * 32 * 2 + 2


def test_bad_probe_settings_fail_with_one_line_naming_the_field(checkpoint):
    with pytest.raises(ValueError, match=r"^Probe\.pooling='sum' is not allowed: choose one of cls, mean, max, last$"):
        Probe(pooling="sum")
    with pytest.raises(ValueError, match=r"^Probe\.concat=0 is not allowed"):
        Probe(concat=0)
    with pytest.raises(ValueError, match=r"^Probe\.layer=3 is not allowed with a 2-layer encoder: use 0\.\.2"):
        Probe(layer=3).build(EncoderConfig(vocab_size=18, max_len=17))
    with pytest.raises(ValueError, match=r"^Probe\.concat=3 is not allowed with layer=1: only 2 layers end there"):
        Probe(layer=1, concat=3).build(EncoderConfig(vocab_size=18, max_len=17))
    with pytest.raises(ValueError, match=r"objective=Grammaticality is not allowed with regime='probe'"):
        FinetuneModule(regime="probe", encoder_ckpt=str(checkpoint), objective=Grammaticality())
    assert isinstance(FinetuneModule(regime="probe", encoder_ckpt=str(checkpoint)).objective, Probe)
