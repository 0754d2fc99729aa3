"""The encoder: parameter count, config validation, causal blindness to the future, and agreement with a
straightforward reference implementation written here from the textbook definitions."""

import math
from dataclasses import replace

import pytest
import torch
from torch import nn

from minibert.languages import BracketPairs
from minibert.model import Encoder, EncoderConfig, count_parameters
from minibert.objectives import MaskedLM

LANG = BracketPairs()
VOCAB_SIZE, SEQ_LEN = LANG.vocab_size, LANG.seq_len  # 18 tokens, 17 positions
DEFAULT = MaskedLM().configure_encoder(EncoderConfig())  # the default encoder, sized for the default language
VARIANTS = [(norm, causal) for norm in ("post", "pre") for causal in (False, True)]


def random_ids(batch: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB_SIZE, (batch, SEQ_LEN), generator=torch.Generator().manual_seed(seed))


def make_encoder(norm: str = "post", causal: bool = False, seed: int = 0, **config) -> Encoder:
    torch.manual_seed(seed)
    return Encoder(EncoderConfig(vocab_size=VOCAB_SIZE, max_len=SEQ_LEN, norm=norm, causal=causal, **config)).eval()


def test_default_encoder_with_mlm_head_has_27122_parameters():
    config = DEFAULT
    assert (config.vocab_size, config.max_len, config.width, config.layers) == (18, 17, 32, 2)
    encoder, mlm_head = Encoder(config), nn.Linear(config.width, config.vocab_size)
    assert count_parameters(encoder) + count_parameters(mlm_head) == 27_122
    # by hand: embeddings (18 + 17) x 32; per layer qkv, proj, two LayerNorms, 4x MLP; head 32 -> 18
    C, V, T = 32, 18, 17
    layer = (C * 3 * C + 3 * C) + (C * C + C) + 2 * (2 * C) + (C * 4 * C + 4 * C) + (4 * C * C + C)
    assert count_parameters(encoder) == (V + T) * C + 2 * layer
    # the write-up's 27,188 "with a 2-way classifier head" is encoder + MLM head + classifier (32 * 2 + 2)
    assert count_parameters(encoder) + count_parameters(mlm_head) + count_parameters(nn.Linear(C, 2)) == 27_188


def test_pre_norm_adds_one_final_layernorm_and_segments_one_embedding():
    post = count_parameters(Encoder(DEFAULT))
    assert count_parameters(Encoder(replace(DEFAULT, norm="pre"))) == post + 2 * 32
    assert count_parameters(Encoder(replace(DEFAULT, segments=2))) == post + 2 * 32


@pytest.mark.parametrize("sized", [{}, {"vocab_size": 18}, {"max_len": 17}], ids=repr)
def test_an_encoder_needs_its_vocabulary_and_length_set(sized):
    """EncoderConfig leaves them to the language by default: building an Encoder before an objective sized
    the config is refused, naming what to do."""
    config = EncoderConfig(**sized)
    with pytest.raises(ValueError, match=r"vocab_size and max_len must be set .*configure_encoder"):
        Encoder(config)


def test_width_not_divisible_by_heads_raises_naming_both():
    with pytest.raises(ValueError, match=r"EncoderConfig\.width=30 is not allowed with heads=4: .*divisible"):
        EncoderConfig(width=30, heads=4)


@pytest.mark.parametrize("field", ["vocab_size", "max_len", "width", "heads", "layers"])
@pytest.mark.parametrize("value", [0, -2, 2.0, True])
def test_non_positive_or_non_integer_sizes_raise_naming_field_and_value(field, value):
    with pytest.raises(ValueError, match=rf"EncoderConfig\.{field}={value!r} is not allowed: .*positive integer"):
        EncoderConfig(**{field: value})


def test_unknown_norm_and_negative_segments_raise():
    with pytest.raises(ValueError, match=r"EncoderConfig\.norm='mid' is not allowed: use 'post' or 'pre'"):
        EncoderConfig(norm="mid")
    with pytest.raises(ValueError, match=r"EncoderConfig\.segments=-1 is not allowed"):
        EncoderConfig(segments=-1)


def test_sequence_longer_than_max_len_raises():
    with pytest.raises(ValueError, match=r"18 tokens is longer than EncoderConfig\.max_len=17"):
        Encoder(DEFAULT)(torch.zeros(1, 18, dtype=torch.long))


def one_token_changed(ids: torch.Tensor) -> torch.Tensor:
    """(T, T) ids: row j is `ids` (T,) with token j replaced by a different one."""
    T = ids.shape[0]
    variants = ids.repeat(T, 1)
    j = torch.arange(T)
    variants[j, j] = (ids + 1 + torch.randint(0, VOCAB_SIZE - 1, (T,))) % VOCAB_SIZE  # always a different token
    return variants


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_causal_output_at_i_ignores_every_token_after_i(norm):
    encoder = make_encoder(norm, causal=True)
    ids = random_ids(1)[0]
    with torch.no_grad():
        base = encoder(ids[None])[0]  # (T, C)
        changed = encoder(one_token_changed(ids))  # (T, T, C): row j had token j changed
        suffix_changed = ids.repeat(SEQ_LEN, 1)
        for i in range(SEQ_LEN):  # row i: every token after i replaced
            suffix_changed[i, i + 1 :] = (ids[i + 1 :] + 1) % VOCAB_SIZE
        suffix_out = encoder(suffix_changed)
    for j in range(SEQ_LEN):
        # equal up to float rounding (batches of different size may sum in a different order)
        assert torch.allclose(changed[j, :j], base[:j], rtol=0, atol=1e-6), f"a change at {j} reached the past"
        assert not torch.allclose(changed[j, j], base[j]), f"a change at {j} did not reach position {j} itself"
        assert torch.allclose(suffix_out[j, : j + 1], base[: j + 1], rtol=0, atol=1e-6)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_bidirectional_output_at_i_sees_tokens_after_i(norm):
    encoder = make_encoder(norm, causal=False)
    ids = random_ids(1)[0]
    with torch.no_grad():
        base = encoder(ids[None])[0]
        changed = encoder(one_token_changed(ids))
    for j in range(SEQ_LEN):
        moved = (changed[j] - base).abs().amax(-1)  # (T,): how far each position's output moved
        assert (moved > 1e-5).all(), f"a change at {j} did not reach positions {torch.nonzero(moved <= 1e-5)}"


def reference_encoder(encoder: Encoder, ids: torch.Tensor) -> torch.Tensor:
    """The encoder written out by hand from its weights: per-head softmax(q k^T / sqrt(d) + mask) v,
    LayerNorm as (x - mean) / sqrt(var + eps) * g + b, exact (erf) GELU."""
    config, w = encoder.config, {k: v.double() for k, v in encoder.state_dict().items()}
    B, T = ids.shape
    C, H = config.width, config.heads
    D = C // H

    def linear(x, name):
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    def layer_norm(x, name):
        mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-5) * w[f"{name}.weight"] + w[f"{name}.bias"]

    def gelu(x):
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))

    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # key after query
    mask = torch.where(future, -math.inf, 0.0) if config.causal else torch.zeros(T, T)

    def attention(x, prefix):
        qkv = linear(x, f"{prefix}.qkv")  # (B, T, 3C): q, k, v, each split into heads of D columns
        heads = []
        for h in range(H):
            q = qkv[..., h * D : (h + 1) * D]
            k = qkv[..., C + h * D : C + (h + 1) * D]
            v = qkv[..., 2 * C + h * D : 2 * C + (h + 1) * D]
            weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(D) + mask, dim=-1)  # (B, T, T)
            heads.append(weights @ v)
        return linear(torch.cat(heads, dim=-1), f"{prefix}.proj")

    def mlp(x, prefix):
        return linear(gelu(linear(x, f"{prefix}.mlp.0")), f"{prefix}.mlp.2")

    x = w["tok.weight"][ids] + w["pos.weight"][:T]
    for layer in range(config.layers):
        p = f"blocks.{layer}"
        if config.norm == "pre":
            x = x + attention(layer_norm(x, f"{p}.norm1"), f"{p}.attn")
            x = x + mlp(layer_norm(x, f"{p}.norm2"), p)
        else:
            x = layer_norm(x + attention(x, f"{p}.attn"), f"{p}.norm1")
            x = layer_norm(x + mlp(x, p), f"{p}.norm2")
    return layer_norm(x, "final_norm") if config.norm == "pre" else x


@pytest.mark.parametrize("norm, causal", VARIANTS)
def test_encoder_matches_the_reference_implementation(norm, causal):
    encoder = make_encoder(norm, causal, seed=3, layers=3, heads=4)
    ids = random_ids(4, seed=1)
    with torch.no_grad():
        for p in encoder.parameters():  # move LayerNorms and biases off their init (1 and 0), to exercise them
            if p.ndim == 1:
                p.add_(0.3 * torch.randn_like(p))
        got = encoder(ids).double()
    assert torch.allclose(got, reference_encoder(encoder, ids), atol=1e-5, rtol=1e-4)


def test_segment_embedding_is_added_and_required():
    encoder = make_encoder(segments=2)
    ids = random_ids(2)
    with pytest.raises(ValueError, match="pass segment ids"):
        encoder(ids)
    with torch.no_grad():
        zeros = encoder(ids, torch.zeros_like(ids))
        ones = encoder(ids, torch.ones_like(ids))
    assert not torch.allclose(zeros, ones)
