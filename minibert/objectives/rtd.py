"""Replaced-token detection (ELECTRA): a small generator fills masked positions, the encoder spots the fakes.

A generator (its own small encoder of `generator_shape`: width, layers and heads, with an MLM head; it shares
nothing with the encoder) is trained with MLM on the masked sentence. At the masked positions it proposes
replacements, sampled from its output over openers and closers (no gradient flows through the sample, as
in ELECTRA). The encoder, here the discriminator, reads the sentence with those proposals in place and
classifies every content position as original or replaced; a proposal that happens to equal the original
token counts as original. Loss: generator MLM + `discriminator_weight` x discriminator cross-entropy
(ELECTRA's lambda = 50). Only the encoder is kept for fine-tuning; the generator is discarded.

Metrics: `val/acc`, `val/acc_replaced`, `val/acc_original` (the discriminator) and `val/generator/acc...`
(the generator's MLM, with MLM's categories).

Example:
    >>> import numpy as np
    >>> from minibert.model import Encoder, EncoderConfig
    >>> rtd = ReplacedTokenDetection()
    >>> encoder = rtd.setup_encoder()  # the discriminator; the generator is the objective's own
    >>> sorted(rtd(encoder, rtd.make_batch(np.random.default_rng(0), 8, "train")).graded())
    ['', 'generator/']
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minibert.languages import Language
from minibert.masking import IGNORE, MaskingRecipe, check_gradable
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scoreboard, Scored, Split, encode, read_sentences
from minibert.objectives.mlm import MaskedLM
from minibert.validation import POSITIVE, check


class ReplacedTokenDetection(Objective):
    categories = ("replaced", "original")

    def __init__(
        self,
        masking: MaskingRecipe = MaskingRecipe(p_pick=0.15, p_mask=1.0, p_random=0.0),
        generator_shape: EncoderConfig = EncoderConfig(width=16, layers=1, heads=2),
        discriminator_weight: float = 50.0,
        language: Language | None = None,
    ) -> None:
        super().__init__()
        check("ReplacedTokenDetection", "discriminator_weight", discriminator_weight, POSITIVE)
        self.generator_shape, self.discriminator_weight = generator_shape, discriminator_weight
        check_gradable(masking, "ReplacedTokenDetection.masking", "the generator's questions (its own masking)",
                       "give the recipe its own `emissions`, or use a MaskingRecipe")  # fmt: skip
        self.mlm = MaskedLM(masking, eval_masking=masking, language=language)  # the generator's task and head
        self.language = self.mlm.language

    def scoreboards(self) -> dict[str, Scoreboard]:
        return {"": Scoreboard(self.categories, measure="detection"), "generator/": self.mlm.scoreboards()[""]}

    def build(self, config: EncoderConfig) -> None:
        shape = self.generator_shape  # its vocabulary and positions are the encoder's; it always sees both sides
        generator = replace(config, width=shape.width, heads=shape.heads, layers=shape.layers, causal=False)
        self.generator = Encoder(generator)
        self.mlm.build(generator)
        self.head = nn.Linear(config.width, 1)  # (C,) -> logit of "replaced"

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        return self.mlm.make_batch(rng, size, split)  # the generator's masked sentence

    @torch.no_grad()
    def propose(self, generator_hidden: torch.Tensor, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The discriminator's input and its labels, (B, T) each, from the generator's hidden states (B, T, C'):
        the original sentence with samples at the picked positions, and whether each position now differs."""
        picked = batch["labels"] != IGNORE  # (B, T)
        original = torch.where(picked, batch["labels"], batch["inputs"])  # (B, T)
        logits = self.mlm.head(generator_hidden[picked])  # (N, V)
        content = self.language.content_ids
        logits[:, : content[0]] = -torch.inf  # propose the language's own tokens only
        logits[:, content[-1] + 1 :] = -torch.inf
        proposals = original.clone()
        proposals[picked] = torch.multinomial(logits.softmax(-1), 1).squeeze(-1)
        return proposals, proposals != original

    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        generator_hidden = encode(self.generator, batch)  # (B, T, C')
        generated = self.mlm.score(generator_hidden, batch)
        inputs, replaced = self.propose(generator_hidden, batch)
        logits = self.head(encoder(inputs, batch.get("segments"))).squeeze(-1)  # (B, T)
        graded = self.language.is_content(inputs)  # every bracket position; [CLS] never changes
        target = replaced[graded].long()  # (N,)
        loss = F.binary_cross_entropy_with_logits(logits[graded], target.float())
        categories = torch.stack([target == 1, target == 0], dim=-1)
        documents = batch["document"][graded] if "document" in batch else None
        detected = Scored(loss, (logits[graded] > 0).long(), target, categories, documents=documents)
        total = generated.loss + self.discriminator_weight * loss
        return detected._replace(loss=total, parts={"": detected, "generator/": generated})

    scoring = "discriminator log-probability of 'original'"

    @torch.no_grad()
    def sentence_scores(self, encoder: Encoder, ids: torch.Tensor, batch_size: int = 8192) -> torch.Tensor:
        """The discriminator's verdict that nothing was replaced: the sum over content positions of
        log P(original), one pass per `batch_size` sentences. The discriminator is the encoder that is kept (the
        generator is thrown away after pre-training, and is a smaller model), and its head is the only one
        trained on it; a bad sentence should look replaced somewhere."""
        content = torch.from_numpy(self.language.is_content(ids.cpu().numpy())).to(ids.device)  # (B, T)
        scores = []
        for part, graded in zip(ids.split(batch_size), content.split(batch_size)):
            replaced = self.head(read_sentences(encoder, part)).squeeze(-1).float()  # (b, T) logit of "replaced"
            scores.append((F.logsigmoid(-replaced) * graded).double().sum(1))
        return torch.cat(scores)
