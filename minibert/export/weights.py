"""minibert's weights under `transformers`' names, and back: the two layouts' tensors one for one.

The only reshaping is the attention's input projection: minibert's fused `qkv` (3 * width, width) holds the
query, key and value rows in that order, each with the heads in order, which are `transformers`' separate
`query`, `key` and `value` layers. Every other tensor is copied as it is. Two tensors minibert does not hold
are written so that they change nothing: the token-type embedding of an encoder without segments (one row
of zeros; BERT adds it to every token) and RoFormer's table of sines and cosines (minibert's own float32
values, `minibert.model.rotary_angles`).

A vocabulary that lacks `[PAD]` or `[UNK]` (a bracket language's) gets them appended for `transformers`' tokenizer
(minibert.export.tokenizer.Vocabulary.with_specials): their input embeddings are zeros (an unknown word carries no
information of its own) and their output logits `NEVER`, so minibert's own logits are unchanged and neither is
ever predicted. config.json records minibert's own vocabulary size (`minibert_vocab_size`), which `from_hf`
reads back.

Example:
    >>> from minibert.model import Encoder, EncoderConfig
    >>> from minibert.objectives.mlm import BertLMHead
    >>> encoder = Encoder(EncoderConfig(vocab_size=18, max_len=17, layout="bert"))
    >>> state = to_hf(encoder, BertLMHead(32, 18), "bert")
    >>> state["bert.encoder.layer.0.attention.self.query.weight"].shape
    torch.Size([32, 32])
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import torch
from torch import nn

from minibert.export.layouts import ExportError
from minibert.model import Encoder, EncoderConfig, rotary_angles
from minibert.objectives.grammaticality import BertClassifier
from minibert.objectives.mlm import BertLMHead

Family = Literal["bert", "roformer"]
NEVER = -1e4  # the logit of an appended special: exp(NEVER - any real logit) is 0 in float32

# one block's tensors: minibert's name -> transformers' name under `encoder.layer.<i>.` (qkv is split apart)
BLOCK = {
    "attn.proj": "attention.output.dense",
    "norm1": "attention.output.LayerNorm",
    "mlp.0": "intermediate.dense",
    "mlp.2": "output.dense",
    "norm2": "output.LayerNorm",
}
QKV = ("query", "key", "value")
LM_HEAD = {"dense": "cls.predictions.transform.dense", "norm": "cls.predictions.transform.LayerNorm"}


def rotary_table(max_len: int, width: int, heads: int) -> torch.Tensor:
    """(max_len, width / heads) RoFormer's position table, [sin | cos] of minibert's RoPE angles."""
    angle = rotary_angles(max_len, width // heads)  # (T, D / 2)
    return torch.cat([angle.sin(), angle.cos()], dim=-1)


def to_hf(encoder: Encoder, head: nn.Module, family: Family, added: int = 0) -> dict[str, torch.Tensor]:
    """`transformers`' state dict of `family` (bert, roformer) for `encoder` and its BERT-layout `head`
    (BertLMHead: ...ForMaskedLM; BertClassifier: ...ForSequenceClassification), with `added` tokens appended
    to the vocabulary (see the module docstring)."""
    config, state = encoder.config, encoder.state_dict()
    out: dict[str, torch.Tensor] = {}
    base = f"{family}.embeddings."
    out[base + "word_embeddings.weight"] = _append(state["tok.weight"], added, 0.0)
    if config.positions == "learned":
        out[base + "position_embeddings.weight"] = state["pos.weight"]
    else:
        out[f"{family}.encoder.embed_positions.weight"] = rotary_table(config.max_len, config.width, config.heads)
    types = state["seg.weight"] if config.segments else torch.zeros(1, config.width)  # BERT adds row 0 to every token
    out[base + "token_type_embeddings.weight"] = types
    for p in ("weight", "bias"):
        out[base + f"LayerNorm.{p}"] = state[f"embed_norm.{p}"]
    for i in range(config.layers):
        layer = f"{family}.encoder.layer.{i}."
        for p in ("weight", "bias"):
            for name, part in zip(QKV, state[f"blocks.{i}.attn.qkv.{p}"].chunk(3), strict=True):
                out[layer + f"attention.self.{name}.{p}"] = part
            for ours, theirs in BLOCK.items():
                out[layer + f"{theirs}.{p}"] = state[f"blocks.{i}.{ours}.{p}"]
    heads = head.state_dict()
    if isinstance(head, BertLMHead):
        for p in ("weight", "bias"):
            for ours, theirs in LM_HEAD.items():
                out[f"{theirs}.{p}"] = heads[f"{ours}.{p}"]
        out["cls.predictions.decoder.weight"] = _append(heads["decoder.weight"], added, 0.0)
        out["cls.predictions.bias"] = out["cls.predictions.decoder.bias"] = _append(heads["decoder.bias"], added, NEVER)
    elif isinstance(head, BertClassifier):
        for p in ("weight", "bias"):
            out[f"{family}.pooler.dense.{p}"] = heads[f"pooler.{p}"]
            out[f"classifier.{p}"] = heads[f"classifier.{p}"]
    else:
        raise ExportError(f"a head of type {type(head).__name__} cannot be exported: give BertLMHead or BertClassifier")
    return {k: v.detach().clone().contiguous() for k, v in out.items()}


def _append(rows: torch.Tensor, added: int, value: float) -> torch.Tensor:
    """`rows` (V, ...) with `added` rows of `value` after them."""
    return torch.cat([rows, rows.new_full((added, *rows.shape[1:]), value)]) if added else rows


def encoder_config(hf: dict) -> EncoderConfig:
    """The minibert EncoderConfig of a `transformers` config.json (as a dict) of a BERT or RoFormer encoder,
    or ExportError naming the setting minibert has no counterpart for."""
    family = hf.get("model_type")
    if family not in ("bert", "roformer"):
        raise ExportError(f"config.json model_type={family!r} cannot be loaded: minibert reads bert and roformer")
    width, heads = hf["hidden_size"], hf["num_attention_heads"]
    expected = {
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-5,
        "intermediate_size": 4 * width,
        "is_decoder": False,
        "position_embedding_type": "absolute",
        "embedding_size": width,
        "rotary_value": False,
    }
    for key, value in expected.items():
        if key in hf and hf[key] is not None and hf[key] != value:
            raise ExportError(f"config.json {key}={hf[key]!r} cannot be loaded into minibert: it needs {key}={value!r}")
    return EncoderConfig(
        vocab_size=hf.get("minibert_vocab_size", hf["vocab_size"]), max_len=hf["max_position_embeddings"],
        width=width, heads=heads, layers=hf["num_hidden_layers"], segments=hf.get("type_vocab_size", 0), layout="bert",
        positions="learned" if family == "bert" else "rotary",
    )  # fmt: skip


def from_hf(state: dict[str, torch.Tensor], hf: dict) -> tuple[EncoderConfig, dict[str, torch.Tensor], nn.Module]:
    """The inverse of `to_hf`: (encoder config, encoder state dict, head with its weights loaded) from a
    `transformers` state dict and config.json. An all-zero single token-type row (what `to_hf` writes for an
    encoder without segments) becomes no segments; a RoFormer position table must be minibert's."""
    family = hf["model_type"]
    config = encoder_config(hf)
    base = f"{family}.embeddings."
    types = state[base + "token_type_embeddings.weight"]
    if types.shape[0] == 1 and not types.any():
        config = replace(config, segments=0)
    own = config.vocab_size  # the rows past it are specials `to_hf` appended
    out = {"tok.weight": state[base + "word_embeddings.weight"][:own]}
    if config.segments:
        out["seg.weight"] = types
    if family == "bert":
        out["pos.weight"] = state[base + "position_embeddings.weight"]
    else:
        table = state[f"{family}.encoder.embed_positions.weight"]
        if not torch.allclose(table, rotary_table(config.max_len, config.width, config.heads), atol=1e-6, rtol=0):
            raise ExportError(
                "roformer.encoder.embed_positions.weight is not RoPE of base 10000: minibert cannot load its positions"
            )
    for p in ("weight", "bias"):
        out[f"embed_norm.{p}"] = state[base + f"LayerNorm.{p}"]
    for i in range(config.layers):
        layer = f"{family}.encoder.layer.{i}."
        for p in ("weight", "bias"):
            out[f"blocks.{i}.attn.qkv.{p}"] = torch.cat([state[layer + f"attention.self.{n}.{p}"] for n in QKV])
            for ours, theirs in BLOCK.items():
                out[f"blocks.{i}.{ours}.{p}"] = state[layer + f"{theirs}.{p}"]
    if "cls.predictions.transform.dense.weight" in state:
        head: nn.Module = BertLMHead(config.width, config.vocab_size)
        heads = {f"{ours}.{p}": state[f"{theirs}.{p}"] for ours, theirs in LM_HEAD.items() for p in ("weight", "bias")}
        # a tied decoder is saved once, as the word embeddings; its bias under either name
        heads["decoder.weight"] = state.get("cls.predictions.decoder.weight", out["tok.weight"])[:own]
        heads["decoder.bias"] = state.get("cls.predictions.bias", state.get("cls.predictions.decoder.bias"))[:own]
    elif "classifier.weight" in state:
        head = BertClassifier(config.width, state["classifier.weight"].shape[0])
        names = {"pooler": f"{family}.pooler.dense", "classifier": "classifier"}
        heads = {f"{ours}.{p}": state[f"{theirs}.{p}"] for ours, theirs in names.items() for p in ("weight", "bias")}
    else:
        raise ExportError("the weights hold neither an MLM head (cls.predictions) nor a classifier: nothing to load")
    head.load_state_dict(heads, strict=True)
    return config, out, head
