"""Write a minibert model as a `transformers` model folder, checked before it is put in place.

The folder is what `save_pretrained` writes: `config.json` (sizes, `gelu`, LayerNorm epsilon 1e-5, no dropout,
since minibert trains without), `model.safetensors`, and the tokenizer's files (minibert.export.tokenizer).
It is built in a hidden folder beside the destination, loaded back from there with `transformers`'
`from_pretrained` (offline: a local folder), and compared with minibert on random sentences with `[MASK]`
in them; only a folder that loads with no weight missing or unused and gives minibert's logits to within
`TOLERANCE` is renamed into place. Any refusal or failure leaves nothing behind.

Example:
    >>> from minibert.model import Encoder, EncoderConfig
    >>> from minibert.objectives.mlm import BertLMHead
    >>> from minibert.languages import BracketPairs
    >>> encoder = Encoder(EncoderConfig(vocab_size=18, max_len=17, layout="bert"))
    >>> done = export(encoder, BertLMHead(32, 18), Vocabulary.of(BracketPairs()), tmp / "hf")  # doctest: +SKIP
    >>> done.hf_class, done.max_abs_diff < 1e-5  # doctest: +SKIP
    ('BertForMaskedLM', True)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from minibert.export.layouts import ExportError, Task, family, hf_class
from minibert.export.tokenizer import Vocabulary, hf_tokenizer
from minibert.export.weights import to_hf
from minibert.languages.base import MASK_ID
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.grammaticality import BertClassifier
from minibert.objectives.mlm import BertLMHead

TOLERANCE = 1e-5  # max |logit difference| allowed between minibert and the exported model (float32)
LABELS = {0: "ungrammatical", 1: "grammatical"}  # minibert.objectives.grammaticality's classes


class Exported(NamedTuple):
    path: Path
    hf_class: str
    max_abs_diff: float  # max |logit difference| against minibert on the check's random sentences


def task_of(encoder: Encoder, head: nn.Module) -> Task:
    """What the head does, as `hf_class` names it; a head of minibert's own layout fails on the layout."""
    if isinstance(head, BertLMHead):
        return "masked_lm"
    if isinstance(head, BertClassifier):
        return "classifier"
    hf_class(encoder.config, "masked_lm")  # an encoder of minibert's layout fails here, naming the option
    raise ExportError(
        f"a head of type {type(head).__name__} cannot be exported: export a MaskedLM's or a Grammaticality's head"
    )


def check_exportable(encoder: Encoder, head: nn.Module, vocab: Vocabulary, out_dir: str | Path) -> str:
    """The `transformers` class to write, or ExportError for a model, vocabulary or destination that cannot be
    written. Everything `export` refuses is refused here, before anything is written."""
    name = hf_class(encoder.config, task_of(encoder, head))
    if len(vocab.tokens) != encoder.config.vocab_size:
        raise ExportError(
            f"the vocabulary has {len(vocab.tokens)} tokens but EncoderConfig.vocab_size={encoder.config.vocab_size}: "
            "export with the language the model was trained on"
        )
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"OUT_DIR={str(out)!r} already exists and is not an empty folder: give a new folder")
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise ExportError('transformers is not installed: pip install -e ".[hf]"') from None
    return name


def hf_config(name: str, config: EncoderConfig, vocab: Vocabulary, classes: int = 2):
    """The `transformers` config (BertConfig or RoFormerConfig) of an encoder of `config` in class `name`."""
    import transformers

    pad = vocab.tokens.index("[PAD]") if "[PAD]" in vocab.tokens else None
    kwargs = dict(
        vocab_size=len(vocab.tokens), minibert_vocab_size=config.vocab_size, hidden_size=config.width,
        num_hidden_layers=config.layers, num_attention_heads=config.heads, intermediate_size=4 * config.width,
        hidden_act="gelu",
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=config.max_len,
        type_vocab_size=max(config.segments, 1), layer_norm_eps=1e-5, pad_token_id=pad, tie_word_embeddings=False,
        architectures=[name],
    )  # fmt: skip
    if name.startswith("RoFormer"):
        kwargs |= {"embedding_size": config.width, "rotary_value": False}
    if name.endswith("SequenceClassification"):
        labels = LABELS if classes == 2 else {i: f"LABEL_{i}" for i in range(classes)}
        kwargs |= {"id2label": labels, "label2id": {v: k for k, v in labels.items()}}
    return getattr(transformers, f"{name.rsplit('For', 1)[0]}Config")(**kwargs)


def minibert_logits(encoder: Encoder, head: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """What minibert computes on (B, T) ids: (B, T, V) token logits, or (B, classes) from the [CLS] row."""
    hidden = encoder(ids, torch.zeros_like(ids) if encoder.config.segments else None)
    return head(hidden[:, 0] if isinstance(head, BertClassifier) else hidden)


def sample_ids(config: EncoderConfig, n: int = 8, seed: int = 0) -> torch.Tensor:
    """(n, max_len) random ids over the whole vocabulary, about a quarter of them [MASK], [CLS] first."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, config.vocab_size, (n, config.max_len), generator=g)
    ids[torch.rand(ids.shape, generator=g) < 0.25] = MASK_ID
    ids[:, 0] = 0
    return ids


@torch.no_grad()
def compare(folder: str | Path, encoder: Encoder, head: nn.Module, ids: torch.Tensor) -> float:
    """Max |logit difference| between minibert and the model `transformers` loads from `folder` on `ids`;
    ExportError if any weight was missing, unused or of another shape."""
    import transformers

    name = transformers.AutoConfig.from_pretrained(folder).architectures[0]
    model, info = getattr(transformers, name).from_pretrained(folder, output_loading_info=True)
    if problems := {k: v for k, v in info.items() if v}:
        raise ExportError(f"transformers loaded {folder} with {problems}: the export is wrong, please report it")
    theirs = model.eval()(input_ids=ids, token_type_ids=torch.zeros_like(ids)).logits
    if not isinstance(head, BertClassifier):  # the specials appended for transformers' tokenizer: never predicted
        theirs, never = theirs[..., : encoder.config.vocab_size], theirs[..., encoder.config.vocab_size :]
        if never.numel() and torch.softmax(torch.cat([theirs, never], -1), -1)[..., theirs.shape[-1] :].max() > 0:
            raise ExportError("an appended special token would be predicted: the export is wrong, please report it")
    was = encoder.training, head.training
    encoder.eval(), head.eval()
    try:
        ours = minibert_logits(encoder, head, ids)
    finally:
        encoder.train(was[0]), head.train(was[1])
    return (theirs - ours).abs().max().item()


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """`transformers`' progress bars off (a tiny model's one shard is written and read in an instant), then as
    they were."""
    from transformers.utils import logging

    was = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            logging.enable_progress_bar()


def _readable(folder: Path) -> None:
    """The modes a plain `mkdir` and file write would give under this process's umask (0755 and 0644 under the
    usual 022): the temporary folder it was written in is private (0700) until it is put in place."""
    umask = os.umask(0)
    os.umask(umask)
    for path in [folder, *folder.rglob("*")]:
        path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


def export(encoder: Encoder, head: nn.Module, vocab: Vocabulary, out_dir: str | Path) -> Exported:
    """Write `encoder` and its `head` (BertLMHead or BertClassifier) with the tokenizer of `vocab` as a
    `transformers` model folder at `out_dir` (new, or empty), checked as the module docstring says."""
    name = check_exportable(encoder, head, vocab, out_dir)
    import transformers

    config, full = encoder.config, vocab.with_specials()
    classes = head.classifier.out_features if isinstance(head, BertClassifier) else 2
    out = Path(out_dir).absolute()
    missing = [p for p in out.parents if not p.exists()]  # folders this export creates, removed if it fails
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        with no_progress_bars():
            model = getattr(transformers, name)(hf_config(name, config, full, classes))
            added = len(full.tokens) - len(vocab.tokens)
            model.load_state_dict(to_hf(encoder, head, family(name), added), strict=True)
            model.save_pretrained(tmp)
            hf_tokenizer(full, config.max_len, config.segments).save_pretrained(tmp)
            diff = compare(tmp, encoder, head, sample_ids(config))
        if not diff <= TOLERANCE:
            raise ExportError(f"the exported model's logits differ from minibert's by {diff:.3g} > {TOLERANCE:g}")
        _readable(tmp)
        if out.exists():
            out.rmdir()  # empty (check_exportable)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(missing[-1] if missing else tmp, ignore_errors=True)
        raise
    return Exported(Path(out_dir), name, diff)
