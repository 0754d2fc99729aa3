"""BERT's feature-based page's figures (results/probes/probes.md), read from the probes grid's table.

The grid (configs/ablations/probes.yaml) pre-trains one MLM encoder per language, then fine-tunes it (`regime`
full or frozen) and trains a linear probe on its frozen features chosen by layer and pooling (axes `features`,
`pooling`). `Probes` lists the probes the grid ran, each cell's figure with every seed's, and the best probe by
mean on each language against the frozen regime, the [CLS] probe and full fine-tuning.

Example:
    >>> page = Probes(Data.load("results/probes"))  # doctest: +SKIP
    >>> page.best("dyck")[0]  # doctest: +SKIP
    'concat layers 1-2, mean'
"""

from __future__ import annotations

import functools

from minibert.tables import stats
from minibert.tables.query import Data, Diff, Stat

LANGUAGES = {"pairs": "bracket pairs (seed language)", "dyck": "Dyck (4 types, 32 tokens)"}
FEATURES = {"emb": "embeddings", "layer1": "layer 1", "layer2": "layer 2 (last)", "concat2": "concat layers 1-2"}
POOLINGS = {"cls": "[CLS]", "mean": "mean", "max": "max", "last": "last row"}
FULL, FROZEN = {"regime": "full"}, {"regime": "frozen"}
CLS_PROBE = {"features": "layer2", "pooling": "cls"}  # the frozen regime's own features at the probe's budget


def per_seed_diff(c: Diff) -> str:
    """A − B with its interval, then each seed's difference, over the seeds both ran."""
    return f"{c}: " + " / ".join(stats.number(c.a.values[s] - c.b.values[s]) for s in sorted(c.a.values)
                                 if s in c.b.values)  # fmt: skip


# BERT (Devlin et al., 2018, arXiv:1810.04805), Table 7: CoNLL-2003 NER dev F1 of BERT-base, fine-tuned and
# feature-based (the features feeding a two-layer BiLSTM)
TABLE_7 = {"fine-tuning": 96.4, "embeddings": 91.0, "second-to-last hidden": 95.6, "last hidden": 94.9,
           "weighted sum of the last four hidden": 95.9, "concat of the last four hidden": 96.1,
           "weighted sum of all 12 layers": 95.5}  # fmt: skip


class Probes:
    languages, full, frozen, cls_probe, table_7 = LANGUAGES, FULL, FROZEN, CLS_PROBE, TABLE_7

    def __init__(self, data: Data):
        self.data = data

    @property
    def table_7_best_behind(self) -> float:
        """How far BERT's best feature-based probe (concat of the last four hidden) stays below fine-tuning, F1."""
        return TABLE_7["fine-tuning"] - TABLE_7["concat of the last four hidden"]

    @functools.cached_property
    def probes(self) -> list[tuple[str, dict]]:
        """(label, selection) of every probe the grid ran, by features then pooling."""
        ran = [(f, p) for f in FEATURES for p in POOLINGS if self.data.experiments(features=f, pooling=p)]
        return [(f"{FEATURES[f]}, {POOLINGS[p]}" + (" (probe budget)" if (f, p) == ("layer2", "cls") else ""),
                 {"features": f, "pooling": p}) for f, p in ran]  # fmt: skip

    def cell(self, language: str, where: dict) -> str:
        if not self.data.experiments(language=language, metric="val/acc", **where):
            return "not run"
        return self.data.stat("val/acc", language=language, **where).with_seeds()

    def header(self) -> list[str]:
        return ["features", *(f"{name}: grammaticality acc" for name in LANGUAGES.values())]

    def rows(self) -> list[list]:
        """Full fine-tuning, the frozen regime, then every probe: one cell per language."""
        cells = [("**fine-tuning, every parameter** (the paper's way)", FULL),
                 ("layer 2 (last), [CLS]: the `frozen` regime (fine-tuning budget)", FROZEN), *self.probes]  # fmt: skip
        return [[label, *(self.cell(lang, where) for lang in LANGUAGES)] for label, where in cells]

    @functools.cache  # noqa: B019 (one page model per render)
    def ranked(self, language: str) -> list[tuple[str, dict, Stat]]:
        """(label, selection, accuracy) of the language's probes, by mean accuracy, lowest first."""
        found = [(label, dict(where, language=language), self.data.stat("val/acc", language=language, **where))
                 for label, where in self.probes if self.data.experiments(language=language, **where)]  # fmt: skip
        return sorted(found, key=lambda r: r[2].mean)

    def best(self, language: str) -> tuple[str, dict, Stat]:
        """The probe with the highest mean on `language` (chosen on the seeds it is then judged on)."""
        return self.ranked(language)[-1]

    def lowest(self, language: str) -> tuple[str, dict, Stat]:
        return self.ranked(language)[0]

    def best_against(self, language: str, other: dict) -> Diff:
        """The best probe minus `other` (the frozen regime, the [CLS] probe) on `language`, paired by seed."""
        return self.data.diff("val/acc", self.best(language)[1], dict(other, language=language))

    def tuning_over_best(self, language: str) -> Diff:
        """Full fine-tuning minus the best probe, paired by seed."""
        return self.data.diff("val/acc", dict(FULL, language=language), self.best(language)[1])

    def best_rows(self) -> list[list]:
        """[language, best probe, best − frozen regime, best − [CLS] probe, fine-tuning − best]."""
        return [[name, f"{self.best(lang)[0]}: {self.best(lang)[2]}", per_seed_diff(self.best_against(lang, FROZEN)),
                 per_seed_diff(self.best_against(lang, CLS_PROBE)), per_seed_diff(self.tuning_over_best(lang))]
                for lang, name in LANGUAGES.items()]  # fmt: skip
