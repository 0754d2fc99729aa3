"""Which `transformers` class expresses a minibert model exactly, or the one-line reason none does.

A model is exported as the native class whose forward pass is minibert's, operation for operation:

- `BertForMaskedLM` / `BertForSequenceClassification`: learned absolute positions, post-norm blocks, BERT's
  layout (`EncoderConfig.layout="bert"`: the embeddings' LayerNorm and BERT's heads), bidirectional attention;
- `RoFormerForMaskedLM`: the same with rotary positions. RoFormer rotates each head's dimension pairs
  (2i, 2i + 1) by t * 10000^(-2i / D), minibert's RoPE exactly, from a table of sines and cosines that the
  export writes with minibert's own float32 values. RoFormer's classifier is dense + GELU, not BERT's
  pooler, so a rotary classifier is refused.

Everything else is refused before anything is written, in one line that names the option and the change
that makes the model exportable.

Example:
    >>> from minibert.model import EncoderConfig
    >>> hf_class(EncoderConfig(vocab_size=18, max_len=17, layout="bert"), "masked_lm")
    'BertForMaskedLM'
    >>> hf_class(EncoderConfig(vocab_size=18, max_len=17, layout="bert", norm="pre"), "masked_lm")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    minibert.export.layouts.ExportError: EncoderConfig.norm='pre' cannot be exported: ...; pre-train with norm: post
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # an annotation only: this module is what `python -m minibert.export` imports before torch
    from minibert.model import EncoderConfig

Task = Literal["masked_lm", "classifier"]

#: (positions, task) -> the `transformers` class that computes that model exactly
CLASSES = {
    ("learned", "masked_lm"): "BertForMaskedLM",
    ("learned", "classifier"): "BertForSequenceClassification",
    ("rotary", "masked_lm"): "RoFormerForMaskedLM",
}


class ExportError(ValueError):
    """A model, checkpoint or folder that cannot be exported or loaded back; the message is one line."""


def hf_class(config: EncoderConfig, task: Task) -> str:
    """The name of the `transformers` class that computes an encoder of `config` with a `task` head exactly;
    ExportError, naming the option and the fix, for a configuration no native class expresses."""
    if config.layout != "bert":
        raise ExportError(
            f"EncoderConfig.layout={config.layout!r} cannot be exported: BERT normalises the embeddings and "
            "transforms before its heads; pre-train with layout: bert (-c configs/bert_layout.yaml)"
        )
    if config.norm != "post":
        raise ExportError(
            f"EncoderConfig.norm={config.norm!r} cannot be exported: BERT and RoFormer are post-norm; "
            "pre-train with norm: post"
        )
    if config.causal:
        raise ExportError(
            "EncoderConfig.causal=True cannot be exported: BERT and RoFormer attend both ways; "
            "pre-train with causal: false"
        )
    if config.positions not in ("learned", "rotary"):
        raise ExportError(
            f"EncoderConfig.positions={config.positions!r} cannot be exported: no transformers encoder has it "
            "with BERT's layout; pre-train with positions: learned (BertForMaskedLM) or rotary (RoFormerForMaskedLM)"
        )
    if (config.positions, task) not in CLASSES:
        raise ExportError(
            "EncoderConfig.positions='rotary' cannot be exported with a classifier: the head of "
            "RoFormerForSequenceClassification is dense + GELU, not BERT's pooler; fine-tune an encoder pre-trained "
            "with positions: learned"
        )
    return CLASSES[(config.positions, task)]


def family(name: str) -> str:
    """The model type of a `transformers` class name: 'BertForMaskedLM' -> 'bert', 'RoFormerForMaskedLM' ->
    'roformer' (the prefix of its weights' names)."""
    return name.rsplit("For", 1)[0].lower()
