"""TinyBERT: a transformer encoder as a plain `nn.Module`, built from a dataclass config, free of Lightning.

Token embedding (+ optional segment embedding) and positions, then `layers` blocks of multi-head
self-attention and a 4x GELU MLP, post-norm as in BERT (or pre-norm). Heads live apart:
`nn.Linear(width, vocab_size)` for MLM, `nn.Linear(width, 2)` on [CLS] for classification.

`EncoderConfig.layout="bert"` is BERT's own layout (Devlin et al. 2018, as `transformers` builds it): a LayerNorm
over the summed embeddings here, and heads with BERT's transforms (minibert.objectives.mlm.BertLMHead,
minibert.objectives.grammaticality.BertClassifier). It is what `python -m minibert.export` writes as a
`transformers` model (docs/export.md); the default, "minibert", is the seed's TinyBERT.

Positions (`EncoderConfig.positions`), one of:

- `learned`: a learned absolute embedding per position, added to the tokens (BERT's; the default). Rows past
  the training length are never trained, so it cannot be read there;
- `sinusoidal`: the fixed sines and cosines of Vaswani et al. (2017), added to the tokens;
- `rotary`: RoPE (Su et al. 2021): each head's queries and keys rotated by an angle proportional to the
  position, so that a query-key score depends on the two positions only through their offset;
- `alibi`: ALiBi (Press et al. 2022): no embedding, a bias of -m_h |i - j| on head h's attention scores (the
  symmetric form encoders use; -m_h (i - j) on the left under a causal mask), slopes m_h = 2^(-8h/H);
- `none`: no positions at all. A bidirectional encoder is then blind to order (it is permutation
  equivariant); a causal one can still count, through the mask.

Example:
    >>> import torch
    >>> encoder = Encoder(EncoderConfig(vocab_size=18, max_len=17))
    >>> encoder(torch.zeros(3, 17, dtype=torch.long)).shape
    torch.Size([3, 17, 32])
    >>> count_parameters(encoder) + count_parameters(torch.nn.Linear(32, 18))
    27122
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from minibert.validation import NONNEGATIVE_INT, POSITIVE_INT, check


@dataclass(frozen=True)
class EncoderConfig:
    """Shape of the encoder. `causal=False` means no attention mask at all; `True`, each position sees
    itself and its left only. `vocab_size` and `max_len` left unset (None) are the language's: an
    objective's `configure_encoder` fills them in before the encoder is built."""

    vocab_size: int | None = None
    max_len: int | None = None
    width: int = 32
    heads: int = 2
    layers: int = 2
    causal: bool = False
    norm: Literal["post", "pre"] = "post"
    segments: int = 0  # > 0 adds a learned segment embedding (next sentence prediction uses 2)
    positions: Literal["learned", "sinusoidal", "rotary", "alibi", "none"] = "learned"
    # "bert" adds BERT's LayerNorm over the summed embeddings, and makes the heads BERT's (minibert.objectives:
    # a dense + GELU + LayerNorm transform before the MLM decoder, a dense + tanh pooler before the classifier),
    # so that `python -m minibert.export` can write the model as a `transformers` one
    layout: Literal["minibert", "bert"] = "minibert"

    def __post_init__(self) -> None:
        for name in ("vocab_size", "max_len", "width", "heads", "layers"):
            value = getattr(self, name)
            if value is not None or name not in ("vocab_size", "max_len"):  # None: the language's
                check("EncoderConfig", name, value, POSITIVE_INT)
        if self.width % self.heads:
            raise ValueError(
                f"EncoderConfig.width={self.width} is not allowed with heads={self.heads}: "
                "width must be divisible by heads"
            )
        if self.norm not in ("post", "pre"):
            raise ValueError(f"EncoderConfig.norm={self.norm!r} is not allowed: use 'post' or 'pre'")
        check("EncoderConfig", "segments", self.segments, NONNEGATIVE_INT)
        if self.positions not in POSITIONS:
            raise ValueError(
                f"EncoderConfig.positions={self.positions!r} is not allowed: choose one of {', '.join(POSITIONS)}"
            )
        if self.layout not in LAYOUTS:
            raise ValueError(f"EncoderConfig.layout={self.layout!r} is not allowed: choose one of {', '.join(LAYOUTS)}")
        if self.positions == "rotary" and (self.width // self.heads) % 2:
            raise ValueError(
                f"EncoderConfig.positions='rotary' is not allowed with width={self.width}, heads={self.heads}: "
                "rotary positions rotate pairs of a head's dimensions, so width / heads must be even"
            )


POSITIONS = ("learned", "sinusoidal", "rotary", "alibi", "none")
LAYOUTS = ("minibert", "bert")


def sinusoids(length: int, width: int) -> torch.Tensor:
    """(length, width) fixed position codes: sin(t w_i) in even columns, cos(t w_i) in odd ones, with
    w_i = 10000^(-2i / width) (Vaswani et al. 2017)."""
    t = torch.arange(length, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, width, 2, dtype=torch.float32) / width)
    table = torch.zeros(length, width)
    table[:, 0::2] = torch.sin(t * freq)
    table[:, 1::2] = torch.cos(t * freq[: width // 2])
    return table


def rotary_angles(T: int, D: int, base: float = 10000.0, device: torch.device | None = None) -> torch.Tensor:
    """(T, D / 2) float32 angles of RoPE: position t turns dimensions (2i, 2i + 1) of a head by t * base^(-2i / D)."""
    freq = base ** (-torch.arange(0, D, 2, dtype=torch.float32, device=device) / D)  # (D / 2,)
    return torch.arange(T, dtype=torch.float32, device=device)[:, None] * freq


def rotate(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE on (B, H, T, D) queries or keys: dimensions (2i, 2i + 1) at position t turn by the angle
    t * base^(-2i / D), so that rotate(q)_s . rotate(k)_t depends on s and t only through t - s."""
    angle = rotary_angles(x.shape[-2], x.shape[-1], base, x.device)  # (T, D / 2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]  # (B, H, T, D / 2) each
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def alibi_bias(heads: int, T: int, causal: bool, device: torch.device | None = None) -> torch.Tensor:
    """(H, T, T) additive attention bias: -m_h |s - t| with slopes m_h = 2^(-8h / H), h = 1..H (Press et al.
    2022); under a causal mask the future is -inf (so the bias left of the diagonal is -m_h (s - t))."""
    slopes = 2.0 ** (-8.0 * torch.arange(1, heads + 1, dtype=torch.float32, device=device) / heads)  # (H,)
    pos = torch.arange(T, device=device)
    offset = (pos[:, None] - pos[None, :]).abs().float()  # (T, T): query s, key t
    bias = -slopes[:, None, None] * offset
    if causal:
        bias = bias.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
    return bias


class SelfAttention(nn.Module):
    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.heads, self.causal, self.positions = config.heads, config.causal, config.positions
        self.qkv = nn.Linear(config.width, 3 * config.width)
        self.proj = nn.Linear(config.width, config.width)

    def heads_of(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(B, T, C) -> queries, keys and values (B, H, T, D), rotated where positions are rotary."""
        B, T, C = x.shape
        # split on dim 2, heads to the front after: the backward then stacks dq, dk, dv straight into the
        # (B, T, 3, H, D) layout of the qkv output, with no extra copy to make it contiguous
        q, k, v = (t.transpose(1, 2) for t in self.qkv(x).view(B, T, 3, self.heads, C // self.heads).unbind(2))
        if self.positions == "rotary":
            q, k = rotate(q), rotate(k)
        return q, k, v

    def bias(self, T: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor | None:
        """(H, T, T) additive score bias (ALiBi's, with the causal mask in it), or None."""
        if self.positions != "alibi":
            return None
        return alibi_bias(self.heads, T, self.causal, device).to(dtype)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, H, T, T) attention logits before the softmax, masks and biases included (the
        forward pass's, written out; for inspection and tests)."""
        q, k, _ = self.heads_of(x)
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        bias = self.bias(x.shape[1], x.device, s.dtype)
        if bias is not None:
            return s + bias
        if self.causal:
            T = x.shape[1]
            return s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        return s

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.heads_of(x)
        bias = self.bias(T, x.device, q.dtype)
        if bias is not None:  # it carries the causal mask, when there is one
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)  # (B, H, T, D) each
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.pre = config.norm == "pre"
        self.attn = SelfAttention(config)
        self.norm1 = nn.LayerNorm(config.width)
        self.mlp = nn.Sequential(
            nn.Linear(config.width, 4 * config.width), nn.GELU(), nn.Linear(4 * config.width, config.width)
        )
        self.norm2 = nn.LayerNorm(config.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.mlp(x))


class Encoder(nn.Module):
    """Ids (B, T) [and segment ids (B, T)] -> hidden states (B, T, width)."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        if config.vocab_size is None or config.max_len is None:
            raise ValueError(
                "EncoderConfig.vocab_size and max_len must be set to build an Encoder: "
                "size it with an objective's configure_encoder (they come from its language)"
            )
        self.config = config
        self.tok = nn.Embedding(config.vocab_size, config.width)
        # added to the tokens: a learned table, a fixed one, or none (rotary and ALiBi act inside attention)
        self.pos = nn.Embedding(config.max_len, config.width) if config.positions == "learned" else None
        if config.positions == "sinusoidal":
            self.register_buffer("sinusoids", sinusoids(config.max_len, config.width), persistent=False)
        self.seg = nn.Embedding(config.segments, config.width) if config.segments else None
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        # pre-norm leaves the residual stream unnormalised, so it ends with one more LayerNorm
        self.final_norm = nn.LayerNorm(config.width) if config.norm == "pre" else None
        # BERT's LayerNorm over the summed embeddings (created last, so the default layout's weights are as before)
        self.embed_norm = nn.LayerNorm(config.width) if config.layout == "bert" else None

    def forward(
        self, ids: torch.Tensor, segments: torch.Tensor | None = None, all_layers: bool = False
    ) -> torch.Tensor | list[torch.Tensor]:
        """The last layer's hidden states; with `all_layers`, the list [embeddings, block 1, ..., block L]
        (layers + 1 tensors, the last one the same as the default output, final norm included)."""
        T = ids.shape[1]
        if T > self.config.max_len:
            raise ValueError(f"sequence of {T} tokens is longer than EncoderConfig.max_len={self.config.max_len}")
        x = self.tok(ids)  # (B, T, C)
        if self.pos is not None:
            x = x + self.pos.weight[:T]
        elif self.config.positions == "sinusoidal":
            x = x + self.sinusoids[:T]
        if self.seg is not None:
            if segments is None:
                raise ValueError("this encoder has segment embeddings: pass segment ids")
            x = x + self.seg(segments)
        if self.embed_norm is not None:
            x = self.embed_norm(x)
        states = [x]  # (B, T, C) each: the embeddings, then every block's output
        for block in self.blocks:
            x = block(x)
            states.append(x)
        if self.final_norm is not None:
            states[-1] = x = self.final_norm(x)
        return states if all_layers else x


def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)
