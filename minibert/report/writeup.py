"""The original write-up, reproduced figure by figure (docs/results.md): the default grid's figures beside their
ceilings or references and the write-up's single runs, which the grid quotes (`reference:` of each experiment in
configs/ablations/default.yaml), with whether the two differ by more than noise.

Example:
    >>> from minibert.ablation.grid import load_grid
    >>> grid = load_grid("configs/ablations/default.yaml")
    >>> w = WriteUp(Data.load("results"), lambda: Data.load("results/probes"), grid)
    >>> w.far.label  # doctest: +SKIP
    'never graded on a visible token (`p_mask=1`): kept positions'
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from minibert.ablation.grid import Grid
from minibert.tables import arms, stats, table
from minibert.tables.query import Data, Stat
from minibert.tables.stats import Interval

# the write-up's two pre-trainings, found in the default grid by the arm registry's roles: the control (its
# bidirectional MLM) and the left-to-right arm that answers the cloze (its causal MLM)
B, C = "{control}", "{causal}"
FEATURES = {"emb": "the embeddings", "layer1": "layer 1", "layer2": "layer 2", "concat2": "layers 1-2"}
PROBE = "probe"  # the row of the best linear probe, from the probes grid
AT_CEILING = 0.01  # the MLMs this close to their ceilings: a gap to the write-up is the validation set's make-up
SEEDS_DISAGREE = 0.05  # seeds whose figures spread wider than this SD disagree
# (label, [(experiment, metric as the grid quotes it, what the ceiling column shows: ceiling, bayes, both, none)])
ROWS = [
    ("bidirectional MLM, all masked tokens", [(B, "val/acc", "ceiling")]),
    ("... openers (clue on the right) / closers (clue on the left)",
     [(B, "val/acc_opener", "ceiling"), (B, "val/acc_closer", "ceiling")]),
    ("... partner visible / partner hidden",
     [(B, "val/acc_partner_visible", "bayes"), (B, "val/acc_partner_hidden", "bayes")]),
    ("{causal_label} (its ceiling: left context only), all / openers / closers",
     [(C, "val/acc", "ceiling"), (C, "val/acc_opener", "ceiling"), (C, "val/acc_closer", "ceiling")]),
    ("fine-tune, encoder frozen ({trainable} trainable)", [("finetune/frozen", "val/acc", "ceiling")]),
    (PROBE, []),
    ("fine-tune, everything (the paper's way)", [("finetune/full", "val/acc", "ceiling")]),
    ("fine-tune, everything, no pre-training", [(f"finetune/{arms.SCRATCH}", "val/acc", "ceiling")]),
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
    def part(self) -> str:
        """' (closers)' where the row's label names several figures, so the category says which one; else ''."""
        return f" ({self.category})" if self.category and "/" in self.label else ""

    @property
    def seeds_disagree(self) -> bool:
        """The seeds spread wider than SEEDS_DISAGREE (one seed has no spread: it disagrees with nothing)."""
        return self.ours.sd > SEEDS_DISAGREE

    @property
    def word(self) -> str:
        """Where the interval of ours minus theirs lies: equal, within noise, or above or below beyond it."""
        iv = self.against
        if iv.lo == iv.hi == 0:
            return "equal"
        return "within noise" if iv.lo <= 0 <= iv.hi else "above, beyond noise" if iv.lo > 0 else "below, beyond noise"


class WriteUp:
    """The default grid's table read against the write-up the grid quotes, and the probes grid's best probe (its
    table read only when the rows are: `probes` is called then)."""

    def __init__(self, data: Data, probes: Callable[[], Data], grid: Grid):
        self.data, self._probes = data, probes
        self.reference = {e.name: e.reference for e in grid.experiments}
        pretrained = data.experiments(stage="pretrain")
        self.b, self.c = (arms.playing(role, pretrained) for role in ("control", "causal"))
        self.roles = {B: self.b, C: self.c}

    @functools.cached_property
    def probes(self) -> Data:
        return self._probes()

    @functools.cached_property
    def best_probe(self) -> Stat | None:
        """The linear probe with the best mean on the bracket pairs (the first of equal means)."""
        found = [self.probes.stat("val/acc", experiment=e)
                 for e in self.probes.experiments(language="pairs", regime="probe")]  # fmt: skip
        return max(found, key=lambda s: s.mean) if found else None

    @functools.cached_property
    def _table(self) -> tuple[list[list[str]], list[Compared]]:
        compared: list[Compared] = []
        return [self._row(label, parts, compared) for label, parts in ROWS], compared

    @property
    def rows(self) -> list[list[str]]:
        """[row, measured, ceiling or reference, write-up, difference from the write-up], one per figure quoted."""
        return self._table[0]

    @property
    def compared(self) -> list[Compared]:
        """Every figure the write-up publishes, against ours."""
        return self._table[1]

    def _row(self, label: str, parts: list[tuple[str, str, str]], compared: list[Compared]) -> list[str]:
        d = self.data
        if label == PROBE:
            where = self.probes.rows(experiment=self.best_probe.experiment).iloc[0]
            ceiling = self.probes.stat("val/ceiling/acc", experiment=self.best_probe.experiment).mean
            features = f"{FEATURES[where['features']]}, {where['pooling']}"
            shown = f"best linear probe by mean on the frozen encoder ({features})"
            return [shown, str(self.best_probe), f"{stats.number(ceiling)}%", "", ""]
        trainable = d.stat("trainable_params", experiment="finetune/frozen").mean
        label = label.format(trainable=stats.number(trainable, 1, 0), causal_label=arms.label(self.c))
        got, bound, published, words = [], [], [], []
        for role, key, kind in parts:
            e = self.roles.get(role, role)
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
                compared.append(Compared(label, c, s, w, s.against(w)))
                published.append(stats.number(w, 100 if s.proportion else 1))
                words.append(compared[-1].word)
        return [label, " / ".join(got), " / ".join(bound), " / ".join(published), " / ".join(words)]

    @property
    def noisy(self) -> list[Compared]:
        """The differences from the write-up within noise."""
        return [c for c in self.compared if not c.against.lo > 0 and not c.against.hi < 0]

    @property
    def beyond_noise(self) -> int:
        return len(self.compared) - len(self.noisy)

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
                for e in (self.b, self.c) for c in ("", "opener", "closer")]  # fmt: skip
        gaps += [abs(d.stat("val/bayes/acc", c, experiment=self.b).mean - d.stat("val/acc", c, experiment=self.b).mean)
                 for c in ("partner_visible", "partner_hidden")]  # fmt: skip
        return max([0, *gaps])

    @property
    def saturated(self) -> bool:
        """Both MLMs' overall gaps to their ceilings reach zero within their intervals: on this language no
        objective can do better, so it cannot tell objectives apart."""
        return all(self.data.stat("val/gap/acc", experiment=e).interval.lo <= 0 for e in (self.b, self.c))

    @property
    def at_ceiling(self) -> bool:
        return self.near < AT_CEILING
