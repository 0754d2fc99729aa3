"""A `transformers` BERT or RoFormer folder back into minibert: `load_hf(folder)`.

It reads `config.json`, `model.safetensors` and the tokenizer's vocabulary with `safetensors` and `tokenizers`
alone (no `transformers` needed), and builds the minibert encoder and head that compute the same logits. On a
folder `export` wrote, every tensor comes back bit for bit (a round trip is exact); a folder minibert has no
counterpart for (another activation, LayerNorm epsilon or position scheme) is refused in one line.

Example:
    >>> loaded = load_hf("hf/dyck")  # doctest: +SKIP
    >>> loaded.head(loaded.encoder(ids)).shape  # doctest: +SKIP
    torch.Size([4, 33, 10])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from tokenizers import Tokenizer
from torch import nn

from minibert.export.layouts import ExportError
from minibert.export.tokenizer import Vocabulary
from minibert.export.weights import from_hf
from minibert.model import Encoder


class Loaded(NamedTuple):
    encoder: Encoder
    head: nn.Module  # minibert.objectives.mlm.BertLMHead or minibert.objectives.grammaticality.BertClassifier
    vocab: Vocabulary


def load_hf(folder: str | Path) -> Loaded:
    """The minibert encoder, head and vocabulary of a `transformers` model folder (in eval mode)."""
    from safetensors.torch import load_file

    folder = Path(folder)
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (folder / name).is_file():
            raise ExportError(f"{str(folder / name)!r} does not exist: load_hf reads a folder `export` wrote")
    hf = json.loads((folder / "config.json").read_text())
    config, state, head = from_hf(load_file(folder / "model.safetensors"), hf)
    encoder = Encoder(config)
    encoder.load_state_dict(state, strict=True)
    text = (folder / "tokenizer.json").read_text()
    by_id = {i: t for t, i in Tokenizer.from_str(text).get_vocab(with_added_tokens=True).items()}
    tokens = tuple(by_id[i] for i in range(config.vocab_size))  # minibert's own: not the specials export appended
    wordpiece = text if json.loads(text)["model"]["type"] == "WordPiece" else None
    return Loaded(encoder.eval(), head.eval(), Vocabulary(tokens, wordpiece))
