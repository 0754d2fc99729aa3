"""TinyBERT: a transformer encoder as a plain `nn.Module`, built from a dataclass config, free of Lightning.

Token embedding + learned position embedding (+ optional segment embedding), then `layers` blocks of
multi-head self-attention and a 4x GELU MLP, post-norm as in BERT (or pre-norm). Heads live apart:
`nn.Linear(width, vocab_size)` for MLM, `nn.Linear(width, 2)` on [CLS] for classification.

Example:
    >>> import torch
    >>> encoder = Encoder(EncoderConfig(vocab_size=18, max_len=17))
    >>> encoder(torch.zeros(3, 17, dtype=torch.long)).shape
    torch.Size([3, 17, 32])
    >>> count_parameters(encoder) + count_parameters(torch.nn.Linear(32, 18))
    27122
"""

from __future__ import annotations

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


class SelfAttention(nn.Module):
    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.heads, self.causal = config.heads, config.causal
        self.qkv = nn.Linear(config.width, 3 * config.width)
        self.proj = nn.Linear(config.width, config.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        # split on dim 2, heads to the front after: the backward then stacks dq, dk, dv straight into the
        # (B, T, 3, H, D) layout of the qkv output, with no extra copy to make it contiguous
        q, k, v = (t.transpose(1, 2) for t in self.qkv(x).view(B, T, 3, self.heads, C // self.heads).unbind(2))
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
        self.pos = nn.Embedding(config.max_len, config.width)
        self.seg = nn.Embedding(config.segments, config.width) if config.segments else None
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        # pre-norm leaves the residual stream unnormalised, so it ends with one more LayerNorm
        self.final_norm = nn.LayerNorm(config.width) if config.norm == "pre" else None

    def forward(
        self, ids: torch.Tensor, segments: torch.Tensor | None = None, all_layers: bool = False
    ) -> torch.Tensor | list[torch.Tensor]:
        """The last layer's hidden states; with `all_layers`, the list [embeddings, block 1, ..., block L]
        (layers + 1 tensors, the last one the same as the default output, final norm included)."""
        T = ids.shape[1]
        if T > self.config.max_len:
            raise ValueError(f"sequence of {T} tokens is longer than EncoderConfig.max_len={self.config.max_len}")
        x = self.tok(ids) + self.pos.weight[:T]  # (B, T, C)
        if self.seg is not None:
            if segments is None:
                raise ValueError("this encoder has segment embeddings: pass segment ids")
            x = x + self.seg(segments)
        states = [x]  # (B, T, C) each: the embeddings, then every block's output
        for block in self.blocks:
            x = block(x)
            states.append(x)
        if self.final_norm is not None:
            states[-1] = x = self.final_norm(x)
        return states if all_layers else x


def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)
