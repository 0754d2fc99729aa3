"""The tokenizer that turns text into exactly the ids a minibert model reads: `[CLS]` then the tokens.

- Real text (a language that saved a trained WordPiece, `tokenizer.json`, minibert.text.wordpiece): that
  tokenizer as it is (BERT's uncased normaliser and pre-tokenizer, `##` pieces), with the specials
  `[CLS] [MASK] [SEP] [PAD] [UNK]` at minibert's ids;
- a bracket language (any language without one): a word-level tokenizer over its vocabulary, one token per
  whitespace-separated word, case kept (`a` opens, `A` closes), with `[PAD]` and `[UNK]` appended after
  minibert's ids (`Vocabulary.with_specials`; the language has neither), so that `transformers` can pad a
  batch and read a word outside the vocabulary (minibert.export.weights gives them weights that change no
  logit of minibert's own tokens).

A sentence is `[CLS] w_1 ... w_L`, with no trailing `[SEP]`: minibert's sentences end without one, and a
token the model never saw at the end would change its answers. A pair, where the vocabulary has `[SEP]`,
is BERT's `[CLS] A [SEP] B [SEP]` (token types 0 then 1 for an encoder with segments, else all 0).

Example:
    >>> tok = hf_tokenizer(Vocabulary(("[CLS]", "[MASK]", "a", "b", "A", "B")), max_len=5)  # doctest: +SKIP
    >>> tok("a [MASK] b B")["input_ids"]  # doctest: +SKIP
    [0, 2, 1, 3, 5]
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenizers import Tokenizer, models, pre_tokenizers, processors

from minibert.languages.base import Language
from minibert.text import wordpiece

EXPORTED_SPECIALS = ("[PAD]", "[UNK]")  # what a tokenizer needs to pad a batch and read any word


@dataclass(frozen=True)
class Vocabulary:
    """What a model's ids mean: its tokens in id order, and the trained WordPiece (tokenizer.json) when the
    language has one."""

    tokens: tuple[str, ...]
    wordpiece_json: str | None = None

    @classmethod
    def of(cls, language: Language) -> Vocabulary:
        return cls(tuple(language.vocab), language.artifacts().get("tokenizer.json"))

    @classmethod
    def from_wordpiece(cls, json_text: str) -> Vocabulary:
        return cls(tuple(wordpiece.vocabulary(wordpiece.load(json_text))), json_text)

    def with_specials(self) -> Vocabulary:
        """The vocabulary `transformers` gets: these tokens, then `[PAD]` and `[UNK]` where they lack them."""
        return Vocabulary(
            self.tokens + tuple(t for t in EXPORTED_SPECIALS if t not in self.tokens), self.wordpiece_json
        )


def backend(vocab: Vocabulary, segments: int) -> Tokenizer:
    """The `tokenizers` Tokenizer of `vocab`, with minibert's sentence layout as its post-processor."""
    if vocab.wordpiece_json is not None:
        tokenizer = wordpiece.load(vocab.wordpiece_json)
    else:
        tokenizer = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab.tokens)}, unk_token="[UNK]"))
        tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    specials = [t for t in wordpiece.SPECIAL_TOKENS if t in vocab.tokens]
    tokenizer.add_special_tokens(specials)  # never split or normalised: "[MASK]" stays one token
    ids = [(t, vocab.tokens.index(t)) for t in ("[CLS]", "[SEP]") if t in vocab.tokens]
    b = 1 if segments >= 2 else 0
    pair = f"[CLS]:0 $A:0 [SEP]:0 $B:{b} [SEP]:{b}" if "[SEP]" in vocab.tokens else None
    tokenizer.post_processor = processors.TemplateProcessing(single="[CLS]:0 $A:0", pair=pair, special_tokens=ids)
    return tokenizer


def hf_tokenizer(vocab: Vocabulary, max_len: int, segments: int = 0):
    """A `transformers` fast tokenizer (PreTrainedTokenizerFast) for `vocab`, its special tokens named, that
    refuses sentences past `max_len` tokens unless asked to truncate."""
    from transformers import PreTrainedTokenizerFast

    present = set(vocab.tokens)
    names = {f"{t[1:-1].lower()}_token": t for t in wordpiece.SPECIAL_TOKENS}  # cls_token: "[CLS]", ...
    return PreTrainedTokenizerFast(
        tokenizer_object=backend(vocab, segments),
        model_max_length=max_len,
        **{k: v for k, v in names.items() if v in present},
    )
