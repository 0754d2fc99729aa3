"""Length generalisation: at the end of training, grade the run's own objective again on its language at
other lengths (`Language.at_length`: Dyck keeps its bracket types and depth bound), with the exact oracle
of each length as the ceiling.

Configured as `length_eval` (`--length_eval.lengths [16,48,64]`; empty, the default, grades nothing):

    python -m minibert fit -c configs/pretrain.yaml -c configs/languages/dyck.yaml \\
        --model.init_args.encoder.max_len 65 --length_eval.lengths [16,48,64]

Each length logs what the run's own validation logs, under `val/length_<L>/`: `val/length_48/acc`,
`val/length_48/gap/acc`, `val/length_48/acc_depth_4_plus`, ... (and `val/length_48/loss`), so they reach
summary.json and the reports as any metric does. The training length itself is `val/acc`.

The encoder must have positions for the longest length (`EncoderConfig.max_len` >= 1 + L). With learned
positions the rows past the training length exist but were never trained: reading them is the question
length generalisation asks of that scheme.

Each length's questions are drawn once from `np.random.default_rng([val_seed, L])`: `val_size`
sentences, shared by every run of one validation seed (so runs are paired), never from the training stream.
"""

from __future__ import annotations

import lightning as L
import numpy as np
import torch

from minibert.training.metrics import CategoryAccuracy
from minibert.validation import POSITIVE_INT, check


class LengthEval(L.Callback):
    """lengths: tokens after [CLS] to grade at (besides the training length); val_size: sentences per length;
    batch_size: sentences per forward pass."""

    def __init__(self, lengths: list[int] | None = None, val_size: int = 2000, batch_size: int = 500) -> None:
        self.lengths = list(lengths or [])
        for length in self.lengths:
            check("LengthEval", "lengths", length, POSITIVE_INT)
        check("LengthEval", "val_size", val_size, POSITIVE_INT)
        check("LengthEval", "batch_size", batch_size, POSITIVE_INT)
        self.val_size, self.batch_size = val_size, batch_size

    def check_module(self, pl_module: L.LightningModule) -> None:
        """Refuse, in one line, a module these lengths cannot be graded on: one without a language, or whose
        encoder has too few positions. The CLI calls it once the model is built, before the run makes a folder."""
        if not self.lengths:
            return
        objective = pl_module.objective
        language = getattr(objective, "language", None)
        if language is None:
            raise ValueError(f"length_eval needs an objective with a language; {type(objective).__name__} has none")
        self.languages = {n: language.at_length(n) for n in self.lengths}  # a language without lengths refuses
        max_len = pl_module.encoder_config.max_len
        if (longest := max(lang.seq_len for lang in self.languages.values())) > max_len:
            raise ValueError(
                f"length_eval.lengths={self.lengths} needs {longest} positions, over EncoderConfig.max_len={max_len}: "
                f"set model.init_args.encoder.max_len to at least {longest}"
            )

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        self.check_module(pl_module)

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not self.lengths or trainer.sanity_checking or trainer.global_step < trainer.max_steps:
            return  # only the final weights are graded
        seed = getattr(trainer.datamodule, "val_seed", None) or 0
        for length, language in self.languages.items():
            metrics = grade(pl_module, language, self.val_size, self.batch_size, seed)
            pl_module.log_dict({f"val/length_{length}/{k}": v for k, v in metrics.items()})


def grade(module: L.LightningModule, language, size: int, batch_size: int, seed: int) -> dict[str, torch.Tensor]:
    """The module's objective on `size` sentences of `language` (swapped in for the objective's own while it
    draws and grades them): `loss`, and every scoreboard's figures (`acc`, `gap/acc`, ... with its prefix)."""
    objective = module.objective
    own = objective.language
    boards = module.scoreboards
    metrics = {p: CategoryAccuracy(b.categories, b.input_categories).to(module.device) for p, b in boards.items()}
    loss_sum, graded = 0.0, 0
    objective.language = language
    try:
        # the questions and the oracle's credit, drawn as the data pipeline draws them: outside inference
        # mode (the bidirectional oracle differentiates)
        with torch.inference_mode(False), torch.enable_grad():
            batch = objective.make_batch(np.random.default_rng([seed, language.seq_len - 1]), size, "val")
        with torch.no_grad():
            for start in range(0, size, batch_size):
                part = {k: v[start : start + batch_size].to(module.device) for k, v in batch.items()}
                out = objective(module.encoder, part)
                for prefix, scored in out.graded().items():
                    metrics[prefix].update(*scored.grades())
                n = max(len(out.target), 1)
                loss_sum, graded = loss_sum + float(out.loss) * n, graded + n
    finally:
        objective.language = own
    figures = {"loss": torch.tensor(loss_sum / max(graded, 1))}
    for prefix, metric in metrics.items():
        figures.update({f"{prefix}{k}": v for k, v in metric.compute().items()})
    return figures
