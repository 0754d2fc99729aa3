"""The real-text page's figures (results/text.md), read from the text grid's table and its corpus record.

The grid (configs/ablations/text.yaml) pre-trains every shipped objective on the standard library's
docstrings and fine-tunes the encoders on next segment. There is no ceiling on text: each cloze arm is read
against the strongest n-gram reference its questions have (the left+right trigram, or the left bigram for a
model that reads no right context), and each fine-tuned encoder against no pre-training. `TextPage` gives the
rows of both tables, the differences the page draws, and the corpus as `corpus.json` records it.

Example:
    >>> page = TextPage(Data.load("results/text"))  # doctest: +SKIP
    >>> page.corpus["documents"]["train"]  # doctest: +SKIP
    676
"""

from __future__ import annotations

import functools
import types
from pathlib import Path

from minibert.tables import arms, stats, table
from minibert.tables.query import Data, Diff, Stat

REFERENCES = {"unigram": "unigram", "left_bigram": "left bigram", "left_right_trigram": "left+right trigram"}
REGIMES = {**arms.REGIMES, "probe": "probe (mean of the last layer, linear)"}  # the text grid's probe pools by mean
GENERATOR = "'s generator (16 wide, 1 layer)"  # how the page names a detector's generator, after the arm's label
NO_PRETRAIN = {"regime": arms.SCRATCH}
NOT_GRADED = "not graded (reads the right)"


class TextPage:
    references = REFERENCES

    def __init__(self, data: Data):
        self.data = data

    @functools.cached_property
    def cloze(self) -> list[tuple[str, str, str]]:
        """(label, experiment, metric prefix) of every arm graded on BERT's token-level questions: those that see
        both sides first, then the left-to-right, then those read on their generator."""
        found = arms.listed(arms.name_of(e) for e in self.data.experiments(stage="pretrain"))
        graded = sorted((a for a in map(arms.arm, found) if a.cloze), key=lambda a: (a.generator, bool(a.causal)))
        return [(a.label + (GENERATOR if a.generator else " (left context only)" if a.causal else ""),
                 f"text/pretrain/{a.key}", f"val/{a.prefix}") for a in graded]  # fmt: skip

    @functools.cached_property
    def encoders(self) -> list[tuple[str, dict]]:
        """(label, selection) of every pre-trained encoder fine-tuned: each arm fully, its other regimes after."""
        found = arms.ordered(self.data.experiments(stage="finetune"))
        return [(f"{arms.label(e)}, {REGIMES[arms.regime_of(e)]}", {"experiment": e})
                for e in found if arms.regime_of(e)]  # fmt: skip

    @staticmethod
    def segment_length(window: int) -> int:
        """Tokens per stretch of the next-segment task on text of `window` tokens after [CLS]: SegmentPairs'
        own default (minibert.objectives.segments), read from the objective with a stand-in for the language."""
        from minibert.objectives.segments import SegmentPairs  # torch, only for the page that states it

        return SegmentPairs(language=types.SimpleNamespace(seq_len=window + 1, segment_pairs=None)).segment_length

    @functools.cached_property
    def corpus(self) -> dict:
        """The corpus record the grid's runs wrote (`corpus.json`: source, documents, tokens, vocabulary, ...)."""
        return table.read_json(Path(self.data.out) / "corpus.json", ("source", "documents", "tokens", "vocab_size"))

    @functools.cached_property
    def _cloze(self) -> tuple[list[list], dict[str, list[str]], list[tuple[str, Diff]]]:
        rows, against_bigram, drawn = [], {}, []
        for label, experiment, p in self.cloze:
            where = {"experiment": experiment}
            short = label.split(" (")[0]
            has = [r for r in REFERENCES if len(self.data.rows(metric=f"{p}reference/{r}/acc", **where))]
            strongest = has[-1]
            c = self.data.between(f"{p}acc", f"{p}reference/{strongest}/acc", **where)
            bigram = self.data.between(f"{p}acc", f"{p}reference/left_bigram/acc", **where)
            bigram = bigram.verdict(short, "left bigram")
            side = ("above it" if bigram == f"{short} better" else "below it" if bigram == "left bigram better"
                    else "undecided")  # fmt: skip
            against_bigram.setdefault(side, []).append(short)
            drawn.append((f"{short} − {REFERENCES[strongest]}", c))
            s = self.data.stat(f"{p}acc", **where)
            references = [stats.number(self.data.stat(f"{p}reference/{r}/acc", **where).mean) if r in has
                          else NOT_GRADED for r in REFERENCES]  # fmt: skip
            rows.append([label, s.seeds, s, *references, stats.fmt(c.interval, signed=True),
                         c.verdict(short, REFERENCES[strongest])])  # fmt: skip
        return rows, against_bigram, drawn

    def cloze_header(self) -> list[str]:
        return ["pre-training", "seeds", "accuracy", *REFERENCES.values(), "minus its baseline", "verdict"]

    def cloze_rows(self) -> list[list]:
        """[arm, seeds, accuracy, each reference's accuracy, minus its strongest reference, verdict]."""
        return self._cloze[0]

    def against_bigram(self) -> str:
        """'above it: MLM, span masking; undecided: ...': each cloze arm against the left bigram."""
        return "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(self._cloze[1].items())) + "."

    @functools.cached_property
    def _tuned(self) -> tuple[list[list], list[tuple[str, Diff]]]:
        rows, drawn, scratch = [], [], arms.label(arms.SCRATCH)
        for label, where in self.encoders:
            c = self.data.diff("val/acc", where, NO_PRETRAIN)
            drawn.append((f"{label} − {scratch}", c))
            rows.append([label, c.a.seeds, c.a, c, c.verdict(label, scratch)])
        none = self.no_pretrain()
        return [*rows, [scratch, none.seeds, none, "", ""]], drawn

    def tuned_rows(self) -> list[list]:
        """[encoder, seeds, accuracy, minus no pre-training, verdict], then no pre-training's own row."""
        return self._tuned[0]

    def no_pretrain(self) -> Stat:
        return self.data.stat("val/acc", **NO_PRETRAIN)

    def drawn(self) -> list[tuple[str, Diff]]:
        """Each cloze arm against its baseline, then each encoder against no pre-training."""
        return [*self._cloze[2], *self._tuned[1]]
