"""Export to Hugging Face `transformers`, and back (docs/export.md).

    python -m minibert.export CHECKPOINT OUT_DIR

writes a pre-training (masked LM) or fine-tuning (grammaticality) checkpoint of BERT's layout as a folder that
`transformers` loads offline, `AutoModelForMaskedLM.from_pretrained(OUT_DIR)` and
`AutoTokenizer.from_pretrained(OUT_DIR)`, with minibert's logits to within 1e-5. `load_hf(OUT_DIR)` reads it
back into minibert, bit for bit. One file per concept:

- `layouts`: which native class computes a configuration exactly, or the one-line refusal;
- `weights`: the tensors under `transformers`' names, and back;
- `tokenizer`: the text's WordPiece or a bracket language's word-level tokenizer, minibert's sentence layout;
- `write`: `export`, checked against minibert before the folder is put in place;
- `read`: `load_hf`;
- `checkpoint`: a minibert checkpoint's encoder, head and vocabulary; `__main__`: the command.

`transformers` is an optional extra (`pip install -e ".[hf]"`), imported only here and only when needed.
"""

import importlib

from minibert.export.layouts import ExportError, hf_class

# the rest imports torch: loaded on first use, so that `python -m minibert.export` answers a usage error at once
_LAZY = {"Loaded": "read", "load_hf": "read", "Vocabulary": "tokenizer", "Exported": "write", "export": "write"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"minibert.export.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'minibert.export' has no attribute {name!r}")


__all__ = ["ExportError", "Exported", "Loaded", "Vocabulary", "export", "hf_class", "load_hf"]
