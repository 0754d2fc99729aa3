"""The LightningModule that trains an encoder on an objective; pre-training and fine-tuning share it.

The encoder is a plain `nn.Module` (minibert.model); the objective (minibert.objectives) owns data
corruption, heads, loss and graded predictions. This module adds optimisation, logging and metrics:
`train/loss` every step, and at each validation `val/loss` plus `val/acc` and `val/acc_<category>` from a
`CategoryAccuracy` metric (one per scoreboard of the objective: `val/<prefix>acc...` for a prefixed one),
with `val/ceiling/acc...` and `val/gap/acc...` beside them where the objective knows the exact ceiling.
Training compute is counted as it is spent (minibert.flops): `train/flops` and `train/tokens`, cumulative,
in the logs, and `flops`, `flops_per_step`, `tokens` and `pretrain_flops` in the run's summary.

Example:
    >>> from minibert.objectives import MaskedLM
    >>> module = EncoderModule(objective=MaskedLM())  # pre-training
    >>> module.parameter_counts()
    {'params': 27122, 'trainable_params': 27122}
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections import deque
from dataclasses import asdict
from pathlib import Path

import lightning as L
import torch
from torch import nn

from minibert.flops import FlopCounter
from minibert.model import EncoderConfig, count_parameters
from minibert.objectives.base import Batch, Objective
from minibert.training.checkpoints import load_encoder_weights, read_checkpoint
from minibert.training.metrics import CategoryAccuracy, DocumentTally, MeanValues
from minibert.validation import NONNEGATIVE, NONNEGATIVE_INT, POSITIVE, SEED, check

PACKAGE = Path(__file__).resolve().parents[1]  # minibert: a shipped objective's file lies under it


class NonFiniteLoss(FloatingPointError):
    """A training loss that is not finite, with what the losses before it say of the cause. Before any finite loss
    (`first`), the objective returned it from its first batch: its own code is at fault. After finite losses that
    rose (`rising`: the last above RISE times the lowest of the last RECENT), training diverged, which a learning
    rate too high does. After finite losses that did not rise, a shipped objective points to the settings too; a
    plug-in's own code is as likely (a division by zero, a log of zero), and the message names both causes.

    It crosses processes (a grid's worker sends it to its runner) by its fields, not its message."""

    RECENT, RISE = 20, 1.5

    def __init__(self, value: float, step: int, recent: tuple[float, ...], name: str, file: str, shipped: bool) -> None:
        self.value, self.step, self.recent, self.name, self.file = value, step, tuple(recent), name, file
        self.first, self.shipped = not self.recent, shipped
        self.rising = len(self.recent) > 1 and self.recent[-1] > self.RISE * min(self.recent)
        where = f"non-finite training loss {value} at step {step}"
        if self.first:
            why = (f"before any finite loss: {name}'s loss is not finite from its first batch, so the objective's "
                   "code is at fault, not the learning rate")  # fmt: skip
        elif self.rising:
            why = (f"after the loss rose from {min(self.recent):.4f} to {self.recent[-1]:.4f} over the last "
                   f"{len(self.recent)} steps (last finite loss {self.recent[-1]:.4f}): training diverged (learning "
                   "rate too high?)")  # fmt: skip
        elif shipped:
            why = (f"after finite losses (last finite loss {self.recent[-1]:.4f}) of the shipped objective {name}: "
                   "training diverged (learning rate too high?)")  # fmt: skip
        else:
            why = (f"after finite losses that were not rising (last finite loss {self.recent[-1]:.4f}): either "
                   f"{name}'s own code made it (a division by zero, a log of zero, an overflow) or training diverged "
                   "(a learning rate too high)")  # fmt: skip
        super().__init__(f"{where}, {why}; stopping instead of training on garbage")

    @classmethod
    def of(cls, value: float, step: int, recent, objective: type) -> NonFiniteLoss:
        """The error for `objective`'s loss `value` at `step`, after the finite losses `recent` (oldest first)."""
        file = inspect.getsourcefile(objective) or "<unknown>"
        shipped = Path(file).resolve().is_relative_to(PACKAGE)
        return cls(value, step, tuple(recent), objective.__name__, file, shipped)

    @property
    def objective_file(self) -> str:
        return self.file

    def __reduce__(self):
        return type(self), (self.value, self.step, self.recent, self.name, self.file, self.shipped)


class EncoderModule(L.LightningModule):
    """Encoder + objective, trained with AdamW and linear warm-up then linear decay to zero (BERT's schedule).

    `init_seed` draws the initial weights (the encoder's, then the heads'); the CLI sets it from
    `seed_everything` unless it is given, so that it can be varied apart from the data (`data.seed`).
    `encoder_ckpt` continues pre-training: the encoder's weights come from that pre-training checkpoint (of
    the same shape; its attention may differ, as when next-token LM is followed by MLM), the heads are new,
    and its pre-training compute is carried into this run's `pretrain_flops`."""

    def __init__(
        self,
        objective: Objective,
        encoder: EncoderConfig | None = None,
        lr: float = 3e-3,
        weight_decay: float = 0.01,
        warmup_steps: int = 30,
        init_seed: int | None = None,
        encoder_ckpt: str | None = None,
    ) -> None:
        super().__init__()
        # For load_from_checkpoint. Under LightningCLI (its "_instantiator" in hparams) they are the config the
        # module was built from, with the objective as class_path and init_args, plug-ins included. Built in
        # Python, the objective is a module and the encoder a dataclass, which a checkpoint could only pickle
        # (no torch.load(weights_only=True)): those two are left out, to be given to load_from_checkpoint.
        # Not logged: SaveAndLogConfig logs the whole run's config, with the keys reports filter on.
        self.save_hyperparameters(ignore=["objective", "encoder"], logger=False)
        if "_instantiator" in self.hparams:
            self.save_hyperparameters(logger=False)
        owner = type(self).__name__
        check(owner, "lr", lr, POSITIVE)
        check(owner, "weight_decay", weight_decay, NONNEGATIVE)
        check(owner, "warmup_steps", warmup_steps, NONNEGATIVE_INT)
        if init_seed is not None:
            check(owner, "init_seed", init_seed, SEED)
        self.lr, self.weight_decay, self.warmup_steps, self.init_seed = lr, weight_decay, warmup_steps, init_seed
        self.objective = objective
        # the initial weights are a function of init_seed alone (None: of the global RNG as it stands), so
        # encoders of one shape start equal across objectives. The global RNG goes on from there: what else
        # draws from it (ELECTRA's generator samples) follows the init seed, never the data's.
        if init_seed is not None:
            torch.manual_seed(init_seed)
        self.encoder = objective.setup_encoder(encoder)
        self.encoder_config = self.encoder.config
        # FLOPs and input tokens of this run's training steps (this process's share under DDP), and the
        # pre-training FLOPs already in the encoder's starting weights
        self.spent = {"flops": 0, "tokens": 0, "inherited_flops": 0}
        if encoder_ckpt is not None:
            self._continue_from(str(encoder_ckpt))
        self._counter = FlopCounter(self)
        self.scoreboards = boards = objective.boards()
        self.metric_prefixes = tuple(boards)
        self.val_metrics = nn.ModuleList(
            CategoryAccuracy(b.categories, b.input_categories, b.references) for b in boards.values()
        )
        self.val_values = MeanValues(objective.value_names())  # figures that are not accuracies (Scored.values)
        # each board's figures per validation document, where the language has documents (real text): not
        # logged (dozens of documents), but written into the run's summary as `val/by_document/<prefix>acc_d<k>`,
        # `.../n_d<k>` and `.../reference/<name>/acc_d<k>` by RunSummary, for intervals that resample documents
        self.document_tallies = nn.ModuleList(DocumentTally(b.references) for b in boards.values())
        self.by_document: dict[str, float] = {}
        self._recent_losses: deque[float] = deque(maxlen=NonFiniteLoss.RECENT)  # finite, for NonFiniteLoss

    def _continue_from(self, path: str) -> None:
        checkpoint = read_checkpoint(path)
        if differ := shape_differences(checkpoint["encoder_config"], self.encoder_config, ignore=("causal",)):
            raise ValueError(
                f"{type(self).__name__}.encoder_ckpt={path!r} holds an encoder of another shape ({differ}): "
                "continue pre-training with the encoder settings it was trained with"
            )
        load_encoder_weights(self.encoder, checkpoint)
        self.spent["inherited_flops"] = pretrain_flops(checkpoint)

    #: whether this module's training adds to its encoder's pre-training compute (fine-tuning's does not)
    pretrains = True

    def encoder_flops(self, trained: int) -> int:
        """The pre-training FLOPs in the encoder once this run has trained with `trained` FLOPs."""
        return self.spent["inherited_flops"] + (trained if self.pretrains else 0)

    def parameter_counts(self) -> dict[str, int]:
        """Parameters of the encoder and the objective's heads (all, and those that train)."""
        return {"params": count_parameters(self), "trainable_params": count_parameters(self, trainable_only=True)}

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        before = self._counter.spent.total
        with self._counter:  # the backward this forward's loss will run is counted here too (minibert.flops)
            out = self.objective(self.encoder, batch)
        self.spent["flops"] += self._counter.spent.total - before
        self.spent["tokens"] += batch["inputs"].numel()
        loss = out.loss.detach()
        value = loss.item()  # the step's one host read (a sync on GPU): it is logged anyway
        if not math.isfinite(value):
            raise NonFiniteLoss.of(value, self.global_step, self._recent_losses, type(self.objective))
        self._recent_losses.append(value)
        if self._writes_step_logs():
            self.log("train/loss", loss, prog_bar=True)
            # cumulative, summed over DDP ranks; float64 (but where the device has none), as float32 rounds
            # counts past 2^24
            dtype = torch.float32 if loss.device.type == "mps" else torch.float64
            for name in ("flops", "tokens"):
                value = torch.tensor(self.spent[name], dtype=dtype, device=loss.device)
                self.log(f"train/{name}", value, reduce_fx="sum", sync_dist=True)
        return out.loss

    def _writes_step_logs(self) -> bool:
        """True on the steps whose logged values reach the logger (every `log_every_n_steps`) and on the last
        step (for the run's summary). Values logged on other steps are overwritten unread, so logging only
        here writes the same files without paying for `self.log` on every step."""
        trainer = self._trainer  # None when a test calls training_step directly (self.trainer would raise)
        if trainer is None:
            return True
        step = self.global_step + 1
        return step % trainer.log_every_n_steps == 0 or step >= trainer.max_steps

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        out = self.objective(self.encoder, batch)
        graded = out.graded()
        for prefix, metric, tally in zip(self.metric_prefixes, self.val_metrics, self.document_tallies, strict=True):
            part = graded[prefix]
            metric.update(*part.grades())
            if part.documents is not None:
                tally.update(part.preds, part.target, part.documents, part.references)
        if out.values is not None:
            self.val_values.update(out.values)
        # weighting each batch by its graded count makes val/loss the mean over all graded predictions
        self.log("val/loss", out.loss, batch_size=max(len(out.target), 1), sync_dist=True)

    def on_validation_epoch_end(self) -> None:
        self.by_document = {}
        for prefix, metric, tally in zip(self.metric_prefixes, self.val_metrics, self.document_tallies, strict=True):
            self.log_dict({f"val/{prefix}{k}": v for k, v in metric.compute().items()})
            metric.reset()
            if tally.update_called:  # only where the language has documents
                self.by_document.update({f"val/by_document/{prefix}{k}": v.item() for k, v in tally.compute().items()})
                tally.reset()
        if self.val_values.names:
            self.log_dict({f"val/{k}": v for k, v in self.val_values.compute().items()})
            self.val_values.reset()

    def optimizer(self) -> torch.optim.AdamW:
        """AdamW over the trainable parameters; matrices decay, biases and norms do not."""
        params = [p for p in self.parameters() if p.requires_grad]  # a frozen encoder is not handed over
        decay = [p for p in params if p.ndim >= 2]
        rest = [p for p in params if p.ndim < 2]
        return torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.weight_decay}, {"params": rest, "weight_decay": 0.0}],
            lr=self.lr,
            betas=(0.9, 0.98),
            fused=True,  # one kernel for all tensors instead of a loop of small ones per parameter
        )

    def configure_optimizers(self):
        optimizer = self.optimizer()
        total, warmup = self.trainer.max_steps, self.warmup_steps

        def factor(step: int) -> float:  # linear warm-up, then linear decay to zero at max_steps
            if step < warmup:
                return (step + 1) / warmup
            return max(0.0, (total - step) / max(1, total - warmup))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        # The encoder's shape as built (hparams hold it as asked, with the vocabulary still to come from the
        # language), so that fine-tuning reads it without building the pre-training objective. Plain types,
        # so that a checkpoint loads with torch.load(weights_only=True).
        checkpoint["encoder_config"] = asdict(self.encoder_config)
        # what training has spent so far: restored on resume, and read by whatever starts from these weights
        checkpoint["compute"] = {**self.spent, "pretrain_flops": self.encoder_flops(self.spent["flops"])}
        # what the encoder's ids mean where the language made it here (a trained tokenizer), for fine-tuning
        if artifacts := self.objective.language.artifacts():
            checkpoint["language_artifacts"] = artifacts

    def check_checkpoint(self, checkpoint: dict, where: str = "ckpt_path") -> None:
        """Raise ValueError, naming `where` it came from and the fields, if `checkpoint` holds an encoder of
        another shape."""
        saved = checkpoint.get("encoder_config")
        if saved is not None and (differ := shape_differences(saved, self.encoder_config)):
            raise ValueError(
                f"{where} holds an encoder of another shape ({differ}): "
                "resume with the EncoderConfig it was trained with"
            )

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        self.check_checkpoint(checkpoint)  # before Lightning copies the weights and fails deep inside torch
        saved = checkpoint.get("compute", {})
        self.spent.update({k: int(saved[k]) for k in self.spent if k in saved})


def saved_shape(saved: dict) -> dict:
    """A checkpoint's `encoder_config` with the fields it predates at their defaults (a checkpoint written
    before `positions` existed has learned positions), so that it compares equal to the encoder it built."""
    return {**{f.name: f.default for f in dataclasses.fields(EncoderConfig)}, **saved}


def shape_differences(saved: dict, config: EncoderConfig, ignore: tuple[str, ...] = ()) -> str:
    """'name=<saved> there, <config's> here; ...' for every field (but `ignore`) where a checkpoint's
    `encoder_config` and `config` differ; '' when none does."""
    saved = saved_shape(saved)
    return "; ".join(
        f"{k}={saved[k]!r} there, {v!r} here" for k, v in asdict(config).items() if k not in ignore and saved[k] != v
    )


def pretrain_flops(checkpoint: dict) -> int:
    """The pre-training FLOPs behind a checkpoint's encoder (0 for one saved before compute was counted)."""
    return int(checkpoint.get("compute", {}).get("pretrain_flops", 0))
