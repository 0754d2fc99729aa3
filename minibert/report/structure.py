"""The structural probes page's figures (results/structure.md), read from the structure grid's table.

The grid (configs/ablations/structure.yaml) trains a distance and a depth probe on every layer of each
pre-trained encoder (`regime=probe`, axis `arm`) and of a random encoder of each attention (`regime=random`),
logging `val/<kind>/layer<l>/<measure>` for the probe on the tree (`probe`), on the control task (`control`)
and their difference (`selectivity`). `Structure` picks each objective's best contextual layer, judges it
against the random encoder of its own attention and against its own embeddings, and bidirectional MLM against
the left-to-right models on depth; the page lays the rows and sentences out.

Example:
    >>> s = Structure(Data.load("results/structure"))  # doctest: +SKIP
    >>> s.answer_rows()[0][:3]  # doctest: +SKIP
    ['UUAS', 'MLM, layer 1', 'random encoder at layer 1']
"""

from __future__ import annotations

import functools

from minibert.tables import stats
from minibert.tables.query import Data, Diff, Stat

ARMS = {"mlm": "MLM", "mlm_causal": "causal MLM", "span": "span masking", "electra": "ELECTRA",
        "next_token": "next-token LM"}  # fmt: skip
CAUSAL = ("mlm_causal", "next_token")  # read against the random causal encoder
RANDOM = {"random": "random encoder", "random_causal": "random causal encoder"}
NAMES = {**ARMS, **RANDOM}
MEASURES = {"uuas": "UUAS", "dist_spearman": "distance Spearman", "depth_spearman": "depth Spearman"}
JUDGED = ("uuas", "depth_spearman")  # the measures the answer judges
LAYERS = {0: "embeddings", 1: "layer 1", 2: "layer 2"}
LEFT_TO_RIGHT = ("next_token", "mlm_causal")  # what bidirectional MLM is read against on depth


def metric(kind: str, layer: int, measure: str) -> str:
    """'val/probe/layer1/uuas': the logged key of a probe figure (kind: probe, control or selectivity)."""
    return f"val/{kind}/layer{layer}/{measure}"


def where(encoder: str) -> dict:
    """The table's selection of one encoder's probe rows (an objective's, or a random encoder's)."""
    if encoder in ARMS:
        return {"regime": "probe", "arm": encoder}
    return {"regime": "random", "attention": [None] if encoder == "random" else "_causal"}


def f3(x: Stat | Diff, signed: bool = False) -> str:
    """A correlation or UUAS to 3 decimals, with its 95% interval."""
    return stats.fmt(x.interval, 1, 3, signed)


# Hewitt & Manning (2019), Table 1, PTB: the structural probe's UUAS on BERT-large's best layer and on ELMo's
# context-free layer: (layer, UUAS)
HEWITT_MANNING = {"BERT-large": (16, 82.5), "ELMo": (0, 26.8)}


class Structure:
    measures, judged, hewitt_manning = MEASURES, JUDGED, HEWITT_MANNING

    def __init__(self, data: Data):
        self.data = data

    def stat(self, kind: str, layer: int, measure: str, encoder: str) -> Stat:
        return self.data.stat(metric(kind, layer, measure), **where(encoder))

    def best_layer(self, arm: str, measure: str) -> int:
        """The contextual layer (1 or 2) with the higher mean, on the seeds it is then judged on."""
        return 1 if self.stat("probe", 1, measure, arm).mean >= self.stat("probe", 2, measure, arm).mean else 2

    def over_embeddings(self, arm: str, layer: int, measure: str) -> Diff:
        """A contextual layer's probe figure minus the same encoder's embeddings', paired by seed."""
        return self.data.between(metric("probe", layer, measure), metric("probe", 0, measure), **where(arm))

    def depth_against(self, other: str, layer: int) -> Diff:
        """MLM − a left-to-right model on depth Spearman at one layer, paired by seed."""
        return self.data.diff(metric("probe", layer, "depth_spearman"), where("mlm"), where(other))

    @functools.cached_property
    def _judged(self) -> tuple[list[list], dict[tuple[str, str, str], list[str]]]:
        """The answer's rows and, per (measure, baseline, side), the objectives found on that side."""
        rows, groups = [], {}
        for m in JUDGED:
            for a, name in ARMS.items():
                base = "random_causal" if a in CAUSAL else "random"
                best = self.best_layer(a, m)
                at = f"{name}, {LAYERS[best]}"
                random = self.data.diff(metric("probe", best, m), where(a), where(base))
                own = self.over_embeddings(a, best, m)
                for baseline, c, against in (("random", random, f"{NAMES[base]} at {LAYERS[best]}"),
                                             ("embeddings", own, "its embeddings")):  # fmt: skip
                    v = c.verdict(at, against)
                    rows.append([MEASURES[m], at, against, f3(c, True), c.seeds, v])
                    side = "above" if v.startswith(at) else "undecided" if v == "undecided" else "below"
                    groups.setdefault((m, baseline, side), []).append(name)
        for other in LEFT_TO_RIGHT:
            for layer in (1, 2):
                c = self.depth_against(other, layer)
                rows.append(["depth Spearman", f"MLM, {LAYERS[layer]}", f"{ARMS[other]}, {LAYERS[layer]}",
                             f3(c, True), c.seeds, c.verdict("MLM", ARMS[other])])  # fmt: skip
        return rows, groups

    def answer_rows(self) -> list[list]:
        """[measure, A, B, A − B, seeds, verdict]: each objective's best layer against its random encoder and its
        embeddings, then MLM against the left-to-right models on depth."""
        return self._judged[0]

    def who(self, measure: str, baseline: str, side: str) -> str:
        """The objectives whose best layer lies on `side` (above, below, undecided) of `baseline`."""
        return ", ".join(self._judged[1].get((measure, baseline, side), [])) or "none"

    def encoder_rows(self) -> list[list]:
        """[pre-training, seeds, accuracy, gap]: the encoders the probes read (ELECTRA by its generator's cloze)."""
        rows = []
        for a, name in ARMS.items():
            prefix, here = ("val/generator/" if a == "electra" else "val/"), {"experiment": f"structure/pretrain/{a}"}
            gap = self.data.stat(prefix + "gap/acc", **here)
            label = name + (" (its generator's cloze)" if a == "electra" else "")
            rows.append([label, gap.seeds, self.data.stat(prefix + "acc", **here), gap])
        return rows

    def layer_header(self) -> list[str]:
        return ["encoder", "seeds", *LAYERS.values(), *(f"selectivity, {name}" for name in LAYERS.values())]

    def layer_rows(self, measure: str) -> list[list]:
        """[encoder, seeds, the probe at each layer..., its selectivity at each layer...] for one measure."""
        rows = []
        for e, name in NAMES.items():
            probe = [f3(self.stat("probe", layer, measure, e)) for layer in LAYERS]
            selectivity = [f3(self.stat("selectivity", layer, measure, e), True) for layer in LAYERS]
            rows.append([name, self.stat("probe", 0, measure, e).seeds, *probe, *selectivity])
        return rows

    def series(self, measure: str) -> dict[str, list[tuple[int, Stat]]]:
        """{encoder: [(layer, figure)]} of the by-layer figure, with MLM's control task last."""
        series = {name: [(layer, self.stat("probe", layer, measure, e)) for layer in LAYERS]
                  for e, name in NAMES.items()}  # fmt: skip
        series["MLM, control task"] = [(layer, self.stat("control", layer, measure, "mlm")) for layer in LAYERS]
        return series

    def depth_sentence(self) -> str:
        """MLM against each left-to-right model on depth, at each contextual layer, in words."""
        said = []
        for other in LEFT_TO_RIGHT:
            for layer in (1, 2):
                c = self.depth_against(other, layer)
                said.append(f"against {ARMS[other]} at {LAYERS[layer]}, {c.verdict('MLM', ARMS[other])} "
                            f"(MLM − {ARMS[other]} = {f3(c, True)})")  # fmt: skip
        return "; ".join(said)
