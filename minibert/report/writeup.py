"""The original write-up, reproduced figure by figure (docs/results.md): the default grid's figures beside their
ceilings or references and the write-up's single runs, which the grid quotes (`reference:` of each experiment in
configs/ablations/default.yaml), with whether the two differ by more than noise.

Example:
    >>> from minibert.ablation.grid import load_grid
    >>> w = WriteUp(Data.load("results"), Data.load("results/probes"), load_grid("configs/ablations/default.yaml"))
    >>> w.far.label  # doctest: +SKIP
    'never graded on a visible token (`p_mask=1`): kept positions'
"""

from __future__ import annotations

from dataclasses import dataclass

from minibert.ablation.grid import Grid
from minibert.report import stats, table
from minibert.report.query import Data, Stat
from minibert.report.stats import Interval

B, C = "pretrain/bidirectional", "pretrain/causal"
FEATURES = {"emb": "the embeddings", "layer1": "layer 1", "layer2": "layer 2", "concat2": "layers 1-2"}
PROBE = "probe"  # the row of the best linear probe, from the probes grid
# (label, [(experiment, metric as the grid quotes it, what the ceiling column shows: ceiling, bayes, both, none)])
ROWS = [
    ("bidirectional MLM, all masked tokens", [(B, "val/acc", "ceiling")]),
    ("... openers (clue on the right) / closers (clue on the left)",
     [(B, "val/acc_opener", "ceiling"), (B, "val/acc_closer", "ceiling")]),
    ("... partner visible / partner hidden",
     [(B, "val/acc_partner_visible", "bayes"), (B, "val/acc_partner_hidden", "bayes")]),
    ("causal MLM (its ceiling: left context only), all / openers / closers",
     [(C, "val/acc", "ceiling"), (C, "val/acc_opener", "ceiling"), (C, "val/acc_closer", "ceiling")]),
    ("fine-tune, encoder frozen ({trainable} trainable)", [("finetune/frozen", "val/acc", "ceiling")]),
    (PROBE, []),
    ("fine-tune, everything (the paper's way)", [("finetune/full", "val/acc", "ceiling")]),
    ("fine-tune, everything, no pre-training", [("finetune/no_pretrain", "val/acc", "ceiling")]),
    ("never graded on a visible token (`p_mask=1`): kept positions",
     [("break/mask_only", "val/acc_kind_kept", "both")]),
    ("`p_pick=0.5`, on its own 50%-masked questions", [("break/pick_50", "val/acc", "ceiling")]),
    ("`p_pick=0.5`, graded on the default questions", [("break/pick_50-default_eval", "val/acc", "ceiling")]),
    ("`p_pick=0`: training loss / accuracy",
     [("break/pick_0", "train/loss", "none"), ("break/pick_0", "val/acc", "ceiling")]),
]  # fmt: skip


@dataclass(frozen=True)
class Compared:
    """One of our figures against the write-up's single run: `against` is ours minus theirs (minibert.report
    stats' interval against a published figure)."""

    label: str
    category: str
    ours: Stat
    published: float
    against: Interval

    @property
    def word(self) -> str:
        """Where the interval of ours minus theirs lies: equal, within noise, or above or below beyond it."""
        iv = self.against
        if iv.lo == iv.hi == 0:
            return "equal"
        return "within noise" if iv.lo <= 0 <= iv.hi else "above, beyond noise" if iv.lo > 0 else "below, beyond noise"


class WriteUp:
    """The default grid's table read against the write-up the grid quotes, and the probes grid's best probe."""

    def __init__(self, data: Data, probes: Data, grid: Grid):
        self.data, self.probes = data, probes
        self.reference = {e.name: e.reference for e in grid.experiments}
        found = [probes.stat("val/acc", experiment=e) for e in probes.experiments(language="pairs", regime="probe")]
        self.best_probe = max(found, key=lambda s: s.mean) if found else None  # the first of equal means
        self.compared: list[Compared] = []
        self.rows = [self._row(label, parts) for label, parts in ROWS]

    def _row(self, label: str, parts: list[tuple[str, str, str]]) -> list[str]:
        d = self.data
        if label == PROBE:
            where = self.probes.rows(experiment=self.best_probe.experiment).iloc[0]
            ceiling = self.probes.stat("val/ceiling/acc", experiment=self.best_probe.experiment).mean
            features = f"{FEATURES[where['features']]}, {where['pooling']}"
            shown = f"best linear probe by mean on the frozen encoder ({features})"
            return [shown, str(self.best_probe), f"{stats.number(ceiling)}%", "", ""]
        trainable = d.stat("trainable_params", experiment="finetune/frozen").mean
        label = label.format(trainable=stats.number(trainable, 1, 0))
        got, bound, published, words = [], [], [], []
        for e, key, kind in parts:
            metric, c = table.split(key)
            s = d.stat(metric, c, experiment=e)
            got.append(str(s))
            if kind == "none":
                bound.append("–")
            else:
                ref = d.stat("val/bayes/acc" if kind == "bayes" else "val/ceiling/acc", c, experiment=e).mean
                bound.append(f"{stats.number(ref)}%" + ("†" if kind == "bayes" else ""))
                if kind == "both":
                    bound[-1] += f" ({stats.number(d.stat('val/bayes/acc', c, experiment=e).mean)}%†)"
            w = self.reference.get(e, {}).get(key)
            if w is not None:
                compared = Compared(label, c, s, w, s.against(w))
                self.compared.append(compared)
                published.append(stats.number(w, 100 if s.proportion else 1))
                words.append(compared.word)
        return [label, " / ".join(got), " / ".join(bound), " / ".join(published), " / ".join(words)]

    @property
    def noisy(self) -> list[Compared]:
        """The differences from the write-up within noise."""
        return [c for c in self.compared if not c.against.lo > 0 and not c.against.hi < 0]

    @property
    def far(self) -> Compared:
        """The accuracy furthest from its published figure (the first of equal distances)."""
        found = None
        for c in (c for c in self.compared if c.ours.proportion):
            if found is None or abs(c.ours.mean - c.published) > abs(found.ours.mean - found.published):
                found = c
        return found

    @property
    def near(self) -> float:
        """How far, at most, the two MLMs' pre-training figures sit from their ceilings (overall, openers,
        closers) and the bidirectional one's from its references (partner visible, hidden)."""
        d = self.data
        gaps = [abs(d.stat("val/ceiling/acc", c, experiment=e).mean - d.stat("val/acc", c, experiment=e).mean)
                for e in (B, C) for c in ("", "opener", "closer")]  # fmt: skip
        gaps += [abs(d.stat("val/bayes/acc", c, experiment=B).mean - d.stat("val/acc", c, experiment=B).mean)
                 for c in ("partner_visible", "partner_hidden")]  # fmt: skip
        return max([0, *gaps])
