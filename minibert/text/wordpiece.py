"""A WordPiece vocabulary trained with Hugging Face `tokenizers` on a corpus's training split only.

BERT's uncased setup: lower-cased, accents stripped, split on whitespace and punctuation, then each word into
the longest pieces in the vocabulary, a word's later pieces marked `##` ("tokenizer" -> "token", "##izer").
The special tokens come first, in this order, so that `[CLS]` and `[MASK]` have minibert's ids 0 and 1:
`[CLS] [MASK] [SEP] [PAD] [UNK]`. A character the training split never showed becomes `[UNK]`.

Training is not fully reproducible: `tokenizers` numbers its `##` pieces in hash-map order and breaks ties
between merges of equal count by those numbers (huggingface/tokenizers issue #1794, open at 0.23), so two
trainings on one corpus can differ by a token where counts tie. On the standard library's docstrings at
2,048 pieces four trainings gave one vocabulary; on a small corpus with many ties they differ. So a
vocabulary is trained once and cached (minibert.text.prepared), every run saves the one it used and records
its hash, fine-tuning takes its pre-training run's, and `Text.tokenizer` pins one across machines.

Example:
    >>> tok = train(["the cat sat on the mat", "the dog sat"], vocab_size=40)
    >>> tok.token_to_id("[CLS]"), tok.token_to_id("[MASK]")
    (0, 1)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

SPECIAL_TOKENS = ("[CLS]", "[MASK]", "[SEP]", "[PAD]", "[UNK]")
SEP_ID, PAD_ID, UNK_ID = 2, 3, 4
FIRST_PIECE = len(SPECIAL_TOKENS)  # ids from here on are the vocabulary's own pieces
CONTINUATION = "##"


def train(texts: Iterable[str], vocab_size: int) -> Tokenizer:
    """A WordPiece tokenizer of at most `vocab_size` tokens (specials included) trained on `texts`."""
    if vocab_size <= FIRST_PIECE:
        raise ValueError(
            f"Text.vocab_size={vocab_size} is not allowed: it must exceed the {FIRST_PIECE} special tokens"
        )
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix=CONTINUATION))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True, clean_text=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix=CONTINUATION)
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), continuing_subword_prefix=CONTINUATION,
        show_progress=False,
    )  # fmt: skip
    tokenizer.train_from_iterator(texts, trainer=trainer)
    # the trainer's ids vary from run to run even where its tokens do not: number them in a fixed order (the
    # specials first, then words, then continuations, each alphabetically)
    pieces = sorted(set(tokenizer.get_vocab()) - set(SPECIAL_TOKENS), key=lambda t: (t.startswith(CONTINUATION), t))
    vocab = {t: i for i, t in enumerate([*SPECIAL_TOKENS, *pieces])}
    tokenizer.model = models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix=CONTINUATION)
    for i, token in enumerate(SPECIAL_TOKENS):  # what every id below FIRST_PIECE means to the rest of minibert
        if tokenizer.token_to_id(token) != i:
            raise RuntimeError(f"the trained tokenizer put {token} at id {tokenizer.token_to_id(token)}, not {i}")
    return tokenizer


def load(json_text: str) -> Tokenizer:
    """A tokenizer from its saved JSON (`Tokenizer.to_str()`), refused unless its specials sit where minibert
    needs them."""
    tokenizer = Tokenizer.from_str(json_text)
    for i, token in enumerate(SPECIAL_TOKENS):
        if tokenizer.token_to_id(token) != i:
            raise ValueError(
                f"the tokenizer has {token} at id {tokenizer.token_to_id(token)}, not {i}: minibert needs its "
                f"special tokens first, in the order {' '.join(SPECIAL_TOKENS)}"
            )
    return tokenizer


def sha256(tokenizer: Tokenizer) -> str:
    return hashlib.sha256(tokenizer.to_str().encode()).hexdigest()


def encode(tokenizer: Tokenizer, texts: list[str]) -> list[np.ndarray]:
    """Each text as its token ids (int64), no specials added."""
    encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
    return [np.asarray(e.ids, dtype=np.int64) for e in encodings]


def vocabulary(tokenizer: Tokenizer) -> list[str]:
    """The tokens in id order."""
    by_id = {i: t for t, i in tokenizer.get_vocab().items()}
    return [by_id[i] for i in range(len(by_id))]
