"""What a logged figure is: which way is better, and its unit. Declared once, for every kind of figure the runs
log, from the metric that defines it, so that no page or comparison guesses a direction from a name.

- Accuracies and what comes with them (minibert.training.metrics.CategoryAccuracy, a torchmetrics `Metric`
  with `higher_is_better = True`): the accuracy, its ceiling and Bayes reference are shares where higher is
  better; the gap (ceiling minus accuracy) is a share where lower is better. Their keys are read by
  minibert.stats.accuracies, whatever head or category they belong to.
- The losses the modules log (`train/loss`, `val/loss`, per length `val/length_<n>/loss`): nats, lower is better.
- Structural probes (minibert.objectives.structure: UUAS, distance and depth Spearman, and their selectivity):
  higher is better.
- A run's cost (`wall_time_s`): seconds, lower is better. Counts a run records (`step`, `flops`, `params`,
  `tokens`, ...) and the questions an accuracy graded are not scores. A figure a plug-in logs that is declared
  nowhere here is read as higher-is-better (OTHER).

Example:
    >>> kind("val/generator/gap/acc_partner_hidden").higher_is_better, kind("val/length_48/loss").unit
    (False, 'nats')
    >>> kind("val/probe/layer1/uuas").name, kind("wall_time_s").higher_is_better
    ('structural probe', False)
"""

from __future__ import annotations

from dataclasses import dataclass

from minibert.stats import accuracies


@dataclass(frozen=True)
class Kind:
    name: str
    higher_is_better: bool
    unit: str


ACCURACY = Kind("accuracy", True, "share")
GAP = Kind("gap to the ceiling", False, "share")
QUESTIONS = Kind("questions graded", True, "questions")
LOSS = Kind("loss", False, "nats")
PROBE = Kind("structural probe", True, "")
COST = Kind("wall time", False, "s")
COUNT = Kind("count", True, "")  # what a run records of itself: not a score
OTHER = Kind("other", True, "")

# the last part of a key that is not an accuracy's -> its kind
NAMED = {"loss": LOSS, "wall_time_s": COST, "uuas": PROBE, "depth_spearman": PROBE, "dist_spearman": PROBE,
         **{k: COUNT for k in ("step", "flops", "flops_per_step", "pretrain_flops", "params", "trainable_params",
                               "tokens", "judged_cells")}}  # fmt: skip


def kind(metric: str) -> Kind:
    """The kind of figure `metric` names (OTHER for one nothing declares)."""
    if (key := accuracies.parse(metric)) is not None:
        return {"gap": GAP, "n": QUESTIONS}.get(key.role, ACCURACY)
    last = metric.rsplit("/", 1)[-1]
    return NAMED.get(last) or NAMED.get(last.split("_maxdepth")[0], OTHER)


def lower_is_better(metric: str) -> bool:
    return not kind(metric).higher_is_better
