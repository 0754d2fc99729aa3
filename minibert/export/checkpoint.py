"""A minibert checkpoint as what `export` takes: its encoder, its BERT-layout head and its vocabulary.

The objective comes from the checkpoint's hyper-parameters (the CLI saves its class path and arguments): a
masked LM (MaskedLM and its kin: whole-word, span) gives `BertForMaskedLM`'s head, a Grammaticality
fine-tuning `BertForSequenceClassification`'s; a checkpoint built in Python records none, and its head says
which. The vocabulary is the trained WordPiece the checkpoint carries (real text), or else the language's,
rebuilt from its class path and arguments (a bracket language: no corpus is read). Nothing is trained or
drawn: only the weights are read.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from torch import nn

from minibert.export.layouts import ExportError, Task, hf_class
from minibert.export.tokenizer import Vocabulary
from minibert.languages import BracketPairs, Language
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.grammaticality import BertClassifier, Grammaticality
from minibert.objectives.mlm import BertLMHead, MaskedLM
from minibert.training.checkpoints import load_encoder_weights, read_checkpoint
from minibert.training.module import saved_shape


def _class(path: str) -> type:
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        raise ExportError(f"the checkpoint's class {path!r} cannot be imported here: install what trained it") from None


def _task(objective: dict | None, state: dict) -> Task:
    """What the checkpoint's objective predicts: its class path's, or for one built in Python, its head's."""
    if objective is None:
        return "classifier" if any(k.startswith("objective.head.classifier") for k in state) or (
            state.get("objective.head.weight") is not None and state["objective.head.weight"].shape[0] == 2
        ) else "masked_lm"  # fmt: skip
    cls = _class(objective["class_path"])
    if issubclass(cls, MaskedLM):
        return "masked_lm"
    if issubclass(cls, Grammaticality):
        return "classifier"
    raise ExportError(
        f"the checkpoint trained {cls.__name__}, which has no transformers head: export a MaskedLM pre-training "
        "or a Grammaticality fine-tuning checkpoint"
    )


def _language(objective: dict | None) -> Language:
    spec = (objective or {}).get("init_args", {}).get("language")
    if spec is None:
        return BracketPairs()
    try:
        return _class(spec["class_path"])(**spec.get("init_args", {}))
    except (TypeError, ValueError) as err:
        raise ExportError(f"the checkpoint's language {spec['class_path']} cannot be rebuilt: {err}") from None


def read(path: str | Path) -> tuple[Encoder, nn.Module, Vocabulary]:
    """The encoder and BERT-layout head of a minibert checkpoint (eval mode) and its vocabulary; ExportError
    for a checkpoint no `transformers` class expresses, before any language or head is built."""
    try:
        checkpoint = read_checkpoint(path, field="CHECKPOINT")
        config = EncoderConfig(**saved_shape(checkpoint["encoder_config"]))
    except (FileNotFoundError, ValueError, TypeError) as err:
        raise ExportError(str(err).replace(" Pre-train first", " pre-train first")) from None
    objective = checkpoint.get("hyper_parameters", {}).get("objective")
    objective = objective if isinstance(objective, dict) else None
    state = checkpoint["state_dict"]
    task = _task(objective, state)
    hf_class(config, task)  # refuse an inexpressible layout before reading anything else
    encoder = Encoder(config)
    load_encoder_weights(encoder, checkpoint)
    head = BertLMHead(config.width, config.vocab_size) if task == "masked_lm" else BertClassifier(config.width)
    prefix = "objective.head."
    try:
        head.load_state_dict({k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}, strict=True)
    except RuntimeError as err:
        raise ExportError(f"the checkpoint's head is not BERT's: {str(err).splitlines()[0]}") from None
    if wordpiece := checkpoint.get("language_artifacts", {}).get("tokenizer.json"):
        vocab = Vocabulary.from_wordpiece(wordpiece)
    else:
        vocab = Vocabulary.of(_language(objective))
    return encoder.eval(), head.eval(), vocab
