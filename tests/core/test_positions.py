"""Position schemes (EncoderConfig.positions): shapes, what each adds, that rotary attention is relative
(shift-invariant scores), that ALiBi's bias depends on the offset alone, that every scheme keeps the causal
mask, and that an encoder without positions is blind to order."""

import math
from dataclasses import replace

import pytest
import torch

from minibert.model import (
    POSITIONS,
    Encoder,
    EncoderConfig,
    SelfAttention,
    alibi_bias,
    count_parameters,
    rotate,
    sinusoids,
)

V, T = 18, 17
BASE = EncoderConfig(vocab_size=V, max_len=T)


def make(positions: str, causal: bool = False, seed: int = 0, **config) -> Encoder:
    torch.manual_seed(seed)
    return Encoder(replace(BASE, positions=positions, causal=causal, **config)).eval()


def ids(batch: int = 4, length: int = T, seed: int = 0) -> torch.Tensor:
    return torch.randint(2, V, (batch, length), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("positions", POSITIONS)
@pytest.mark.parametrize("causal", [False, True], ids=["bidirectional", "causal"])
def test_every_scheme_gives_one_state_per_token_and_only_learned_adds_parameters(positions, causal):
    encoder = make(positions, causal)
    out = encoder(ids(), all_layers=True)
    assert [tuple(s.shape) for s in out] == [(4, T, 32)] * 3
    assert all(torch.isfinite(s).all() for s in out)
    table = T * 32 if positions == "learned" else 0
    assert count_parameters(encoder) == count_parameters(make("none", causal)) + table
    assert ("pos.weight" in encoder.state_dict()) == (positions == "learned")


def test_sinusoids_are_the_formula_and_the_embeddings_add_them():
    table = sinusoids(T, 32)
    t, i = 5, 3  # column 2i holds sin(t / 10000^(2i / C)), column 2i + 1 its cosine
    angle = t / 10000 ** (2 * i / 32)
    assert table[t, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
    assert table[t, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)
    encoder, x = make("sinusoidal"), ids()
    assert torch.equal(encoder(x, all_layers=True)[0], encoder.tok(x) + table)


@pytest.mark.parametrize("positions", POSITIONS)
@pytest.mark.parametrize("causal", [False, True], ids=["bidirectional", "causal"])
def test_scores_written_out_are_what_attention_computes(positions, causal):
    """SelfAttention.scores (logits with masks and biases) is the forward pass's own: softmax(scores) V through
    the output projection gives the module's output."""
    torch.manual_seed(0)
    attn = SelfAttention(replace(BASE, positions=positions, causal=causal))
    x = torch.randn(3, T, 32)
    _, _, v = attn.heads_of(x)
    y = torch.softmax(attn.scores(x), dim=-1) @ v  # (B, H, T, D)
    expected = attn.proj(y.transpose(1, 2).reshape(3, T, 32))
    torch.testing.assert_close(attn(x), expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("positions", ["rotary", "alibi"])
@pytest.mark.parametrize("shift", [1, 5, 11])
def test_rotary_and_alibi_scores_depend_on_the_offset_not_the_position(positions, shift):
    """Shift a sequence right by `shift` places (anything in front): the scores among its own tokens do not
    change. This is relative attention; learned and sinusoidal positions fail it (checked below)."""
    torch.manual_seed(0)
    attn = SelfAttention(replace(BASE, positions=positions, max_len=T + shift))
    x = torch.randn(2, T, 32)
    shifted = torch.cat([torch.randn(2, shift, 32), x], dim=1)
    torch.testing.assert_close(attn.scores(shifted)[..., shift:, shift:], attn.scores(x), atol=1e-4, rtol=1e-4)


def test_absolute_positions_are_not_shift_invariant():
    """The property above has power: with the position added to the input, the same shift changes the scores."""
    encoder = make("learned")
    x = torch.randn(1, T - 3, 32)
    plain = encoder.blocks[0].attn.scores(x + encoder.pos.weight[: T - 3])
    moved = encoder.blocks[0].attn.scores(x + encoder.pos.weight[3:])
    assert (plain - moved).abs().max() > 1e-2


def test_rotation_keeps_norms_and_turns_by_the_offset():
    q = torch.randn(1, 1, 1, 16).expand(1, 1, 9, 16)  # the same vector at 9 positions
    turned = rotate(q)
    torch.testing.assert_close(turned.norm(dim=-1), q.norm(dim=-1))
    # the score of a vector with itself k positions away is the same from any starting position
    dots = (turned[0, 0, :, None] * turned[0, 0, None, :]).sum(-1)  # (9, 9)
    for k in range(1, 4):
        torch.testing.assert_close(dots.diagonal(k), dots.diagonal(k)[:1].expand(9 - k))


def test_alibi_slopes_are_press_et_als_and_the_bias_is_symmetric_when_bidirectional():
    bias = alibi_bias(heads=2, T=5, causal=False)
    assert bias[0, 0, 3].item() == pytest.approx(-3 * 2**-4) and bias[1, 0, 3].item() == pytest.approx(-3 * 2**-8)
    assert torch.equal(bias, bias.transpose(-1, -2)) and (bias.diagonal(dim1=-2, dim2=-1) == 0).all()
    causal = alibi_bias(heads=2, T=5, causal=True)
    assert torch.isinf(causal.triu(1)[causal.triu(1) != 0]).all() and torch.equal(causal.tril(), bias.tril())


@pytest.mark.parametrize("positions", POSITIONS)
def test_every_scheme_keeps_the_causal_mask(positions):
    """A causal encoder's state at position t does not move when tokens after t change, whatever the scheme."""
    encoder, x = make(positions, causal=True), ids()
    for t in (0, 5, T - 2):
        changed = x.clone()
        changed[:, t + 1 :] = ids(seed=1)[:, t + 1 :]
        assert not torch.equal(changed, x)
        for before, after in zip(encoder(x, all_layers=True), encoder(changed, all_layers=True)):
            torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1], atol=1e-5, rtol=0)


@pytest.mark.parametrize("positions", POSITIONS)
def test_only_an_encoder_without_positions_is_blind_to_order(positions):
    """Permute the tokens: an encoder with no positions permutes its states the same way (it cannot tell the
    orders apart); every other scheme does not."""
    encoder, x = make(positions), ids()
    perm = torch.randperm(T, generator=torch.Generator().manual_seed(3))
    equivariant = torch.allclose(encoder(x[:, perm]), encoder(x)[:, perm], atol=1e-5)
    assert equivariant == (positions == "none")


def test_the_default_is_learned_and_other_values_are_refused_in_one_line():
    assert EncoderConfig().positions == "learned"
    with pytest.raises(ValueError, match=r"EncoderConfig\.positions='relative' is not allowed: choose one of learned"):
        EncoderConfig(positions="relative")
    with pytest.raises(ValueError, match=r"positions='rotary' is not allowed with width=30, heads=2: .*even"):
        EncoderConfig(width=30, heads=2, positions="rotary")


def test_a_checkpoint_saved_before_positions_existed_is_an_encoder_with_learned_positions():
    """Its `encoder_config` lacks the field: resuming or continuing from it compares it at the default."""
    from dataclasses import asdict

    from minibert.objectives import MaskedLM
    from minibert.training.module import EncoderModule, saved_shape

    module = EncoderModule(MaskedLM())
    old = {k: v for k, v in asdict(module.encoder_config).items() if k != "positions"}
    assert saved_shape(old) == asdict(module.encoder_config)
    module.check_checkpoint({"encoder_config": old})  # no error
    with pytest.raises(ValueError, match=r"positions='rotary' there, 'learned' here"):
        module.check_checkpoint({"encoder_config": {**old, "positions": "rotary"}})
