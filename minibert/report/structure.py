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

from minibert.tables import arms, stats
from minibert.tables.query import Data, Diff, Stat

RANDOM = {"random": "random encoder", "random_causal": "random causal encoder"}
MEASURES = {"uuas": "UUAS", "dist_spearman": "distance Spearman", "depth_spearman": "depth Spearman"}
JUDGED = ("uuas", "depth_spearman")  # the measures the answer judges
LAYERS = {0: "embeddings", 1: "layer 1", 2: "layer 2"}


def metric(kind: str, layer: int, measure: str) -> str:
    """'val/probe/layer1/uuas': the logged key of a probe figure (kind: probe, control or selectivity)."""
    return f"val/{kind}/layer{layer}/{measure}"


def where(encoder: str) -> dict:
    """The table's selection of one encoder's probe rows (a random encoder's, or a pre-trained arm's)."""
    if encoder in RANDOM:
        return {"regime": "random", "attention": [None] if encoder == "random" else "_causal"}
    return {"regime": "probe", "arm": encoder}


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
        self.arms = arms.listed(data.rows(regime="probe")["arm"].dropna())  # every pre-trained arm it probes
        self.control = arms.control()
        # what the control is read against on depth: the left-to-right arms (read against the random causal encoder)
        self.left_to_right = [a for a in self.arms if arms.arm(a).causal]
        self.names = {**{a: arms.label(a) for a in self.arms}, **RANDOM}

    def stat(self, kind: str, layer: int, measure: str, encoder: str) -> Stat:
        return self.data.stat(metric(kind, layer, measure), **where(encoder))

    def best_layer(self, arm: str, measure: str) -> int:
        """The contextual layer (1 or 2) with the higher mean, on the seeds it is then judged on."""
        return 1 if self.stat("probe", 1, measure, arm).mean >= self.stat("probe", 2, measure, arm).mean else 2

    def over_embeddings(self, arm: str, layer: int, measure: str) -> Diff:
        """A contextual layer's probe figure minus the same encoder's embeddings', paired by seed."""
        return self.data.between(metric("probe", layer, measure), metric("probe", 0, measure), **where(arm))

    def depth_against(self, other: str, layer: int) -> Diff:
        """The control − a left-to-right model on depth Spearman at one layer, paired by seed."""
        return self.data.diff(metric("probe", layer, "depth_spearman"), where(self.control), where(other))

    @functools.cached_property
    def _judged(self) -> tuple[list[list], dict[tuple[str, str, str], list[str]]]:
        """The answer's rows and, per (measure, baseline, side), the objectives found on that side."""
        rows, groups = [], {}
        for m in JUDGED:
            for a in self.arms:
                name, base = arms.label(a), "random_causal" if a in self.left_to_right else "random"
                best = self.best_layer(a, m)
                at = f"{name}, {LAYERS[best]}"
                random = self.data.diff(metric("probe", best, m), where(a), where(base))
                own = self.over_embeddings(a, best, m)
                for baseline, c, against in (("random", random, f"{RANDOM[base]} at {LAYERS[best]}"),
                                             ("embeddings", own, "its embeddings")):  # fmt: skip
                    v = c.verdict(at, against)
                    rows.append([MEASURES[m], at, against, f3(c, True), c.seeds, v])
                    side = "above" if v.startswith(at) else "undecided" if v == "undecided" else "below"
                    groups.setdefault((m, baseline, side), []).append(name)
        control = arms.label(self.control)
        for other in self.left_to_right:
            for layer in (1, 2):
                c = self.depth_against(other, layer)
                rows.append(["depth Spearman", f"{control}, {LAYERS[layer]}", f"{arms.label(other)}, {LAYERS[layer]}",
                             f3(c, True), c.seeds, c.verdict(control, arms.label(other))])  # fmt: skip
        return rows, groups

    def answer_rows(self) -> list[list]:
        """[measure, A, B, A − B, seeds, verdict]: each objective's best layer against its random encoder and its
        embeddings, then the control against the left-to-right models on depth."""
        return self._judged[0]

    def who(self, measure: str, baseline: str, side: str) -> str:
        """The objectives whose best layer lies on `side` (above, below, undecided) of `baseline`."""
        return ", ".join(self._judged[1].get((measure, baseline, side), [])) or "none"

    def encoder_rows(self) -> list[list]:
        """[pre-training, seeds, accuracy, gap]: the encoders the probes read (a detector by its generator's cloze)."""
        rows = []
        for a in self.arms:
            prefix, here = f"val/{arms.arm(a).prefix}", {"experiment": f"structure/pretrain/{a}"}
            gap = self.data.stat(prefix + "gap/acc", **here)
            label = arms.label(a) + (" (its generator's cloze)" if arms.arm(a).generator else "")
            rows.append([label, gap.seeds, self.data.stat(prefix + "acc", **here), gap])
        return rows

    def layer_header(self) -> list[str]:
        return ["encoder", "seeds", *LAYERS.values(), *(f"selectivity, {name}" for name in LAYERS.values())]

    def layer_rows(self, measure: str) -> list[list]:
        """[encoder, seeds, the probe at each layer..., its selectivity at each layer...] for one measure."""
        rows = []
        for e, name in self.names.items():
            probe = [f3(self.stat("probe", layer, measure, e)) for layer in LAYERS]
            selectivity = [f3(self.stat("selectivity", layer, measure, e), True) for layer in LAYERS]
            rows.append([name, self.stat("probe", 0, measure, e).seeds, *probe, *selectivity])
        return rows

    def series(self, measure: str) -> dict[str, list[tuple[int, Stat]]]:
        """{encoder: [(layer, figure)]} of the by-layer figure, with the control arm's control task last."""
        series = {name: [(layer, self.stat("probe", layer, measure, e)) for layer in LAYERS]
                  for e, name in self.names.items()}  # fmt: skip
        control = [(layer, self.stat("control", layer, measure, self.control)) for layer in LAYERS]
        series[f"{arms.label(self.control)}, control task"] = control
        return series

    def depth_sentence(self) -> str:
        """The control against each left-to-right model on depth, at each contextual layer, in words."""
        said, control = [], arms.label(self.control)
        for other in self.left_to_right:
            name = arms.label(other)
            for layer in (1, 2):
                c = self.depth_against(other, layer)
                said.append(f"against {name} at {LAYERS[layer]}, {c.verdict(control, name)} "
                            f"({control} − {name} = {f3(c, True)})")  # fmt: skip
        return "; ".join(said)
