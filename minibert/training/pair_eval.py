"""Minimal pairs at the end of pre-training: the final weights graded on the language's minimal pairs
(minibert.pairs), zero-shot by the objective's own sentence score and by the convex probe, beside the n-gram
floors, with no fine-tuning.

Configured as `pair_eval` (on by default for every pre-training run whose language makes pairs):

    python -m minibert fit -c configs/pretrain.yaml -c configs/languages/dyck.yaml --pair_eval.per_cell 250

It logs `val/pairs/acc` (the judged figure), `val/pairs/acc_<category>`, `val/pairs/probe/...` and
`val/pairs/floor/<name>/...` (minibert.pairs.grade names them all), so they reach summary.json and the results
table as any metric does. A fine-tuning run grades nothing here (its encoder is read by its own task), and
neither does a run whose language makes no pairs (`minibert.pairs.edits_of` says why), unless
`pair_eval.required` is set, which makes that a one-line error before training.

The pairs are drawn from the run's validation seed, so runs that share it are graded on the same pairs.
"""

from __future__ import annotations

import lightning as L

from minibert.pairs import PairGrader, PairSettings, PairsUnavailable, edits_of
from minibert.pairs.floors import VOCAB_ROOM
from minibert.pairs.grade import logged_names
from minibert.pairs.keys import check_order


class PairEval(L.Callback):
    """enabled: grade at all; required: refuse a language that makes no pairs instead of skipping it; the
    rest are `PairSettings` (pairs per cell, the probe's training pairs per cell, the floors' limit for a judged
    cell, rows per forward pass, the highest n-gram order of the floors)."""

    def __init__(self, enabled: bool = True, required: bool = False, per_cell: int = 100, probe_per_cell: int = 500,
                 floor_limit: float = 0.7, batch_size: int = 256, floor_order: int = 3) -> None:  # fmt: skip
        self.enabled, self.required = enabled, required
        self.settings = PairSettings(per_cell, probe_per_cell, floor_limit, batch_size, floor_order, owner="pair_eval")

    def applies(self, pl_module: L.LightningModule) -> bool:
        """Whether this run is graded: enabled, a pre-training run, and a language that makes pairs."""
        language = getattr(pl_module.objective, "language", None)
        if not (self.enabled and getattr(pl_module, "pretrains", False) and language is not None):
            return False
        try:
            edits_of(language)
        except PairsUnavailable:
            if self.required:
                raise
            return False
        return True

    def check_module(self, pl_module: L.LightningModule) -> None:
        """Refuse, in one line, a required grading that cannot happen, or floors the language's vocabulary cannot
        count to `floor_order` (the CLI calls it before any folder)."""
        if self.applies(pl_module):
            try:
                check_order(self.settings.floor_order, pl_module.objective.language.vocab_size + VOCAB_ROOM)
            except ValueError as err:
                raise ValueError(f"pair_eval: {err}") from None

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking or trainer.global_step < trainer.max_steps or not self.applies(pl_module):
            return  # only the final weights are graded
        language = pl_module.objective.language
        seed = getattr(trainer.datamodule, "val_seed", None) or 0
        figures = PairGrader(language, seed, self.settings).grade(pl_module.objective, pl_module.encoder)
        pl_module.log_dict({f"val/pairs/{k}": v for k, v in figures.items()})

    def logged_keys(self, pl_module: L.LightningModule) -> set[str]:
        """The summary keys this callback adds to a run of `pl_module` (none where it does not apply)."""
        if not self.applies(pl_module):
            return set()
        names = logged_names(pl_module.objective.language, pl_module.objective, self.settings)
        return {f"val/pairs/{k}" for k in names}
