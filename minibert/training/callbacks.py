"""RunSummary: validate at the last step and write `summary.json` next to the run's saved config;
SaveAndLogConfig: save that config (and what the language made, such as a trained tokenizer) in the run's own
folder and give it to every logger as hyperparameters."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.cli import SaveConfigCallback

from minibert.atomic_writes import write_atomic, write_json
from minibert.nested import find
from minibert.training.code_version import code_version
from minibert.training.loggers import run_log_dir


class RunSummary(L.Callback):
    """Writes `<log_dir>/summary.json` when fit ends: the final `val/*` metrics (with, on real text, each
    accuracy's figures per validation document, `val/by_document/...`: EncoderModule), the last `train/loss`,
    `step`, `wall_time_s` (setup to end of fit), the module's parameter counts, the training compute
    (`flops`, `flops_per_step`, `tokens`, summed over DDP ranks, and `pretrain_flops`, the pre-training
    FLOPs in the final encoder: minibert.flops has the conventions), `code`, the code that
    made it (minibert.training.code_version: the package's source hash, each plug-in's, git commit, dirty flag),
    `code_changed_on_resume`, the files that differ from the resumed checkpoint's code (only when a resume
    was allowed across a code change), `scoreboards`, what each accuracy metric means
    (minibert.objectives.Scoreboard: the reports read it), and for a language made from a corpus, `language`:
    the corpus's source, content hash and Python version, and the tokenizer's hash (`Language.provenance`).

    It also makes the last training step a validation step, so the summary's metrics are those of the
    final weights whatever `val_check_interval` is. The file is written atomically and only at the end,
    so its presence means the run finished.
    """

    def __init__(self, filename: str = "summary.json") -> None:
        self.filename = filename
        self._start = time.perf_counter()
        # {module: source hash} of the plug-ins the run's config names, as imported by this process: set by
        # the CLI once the config is parsed (minibert.training.code_version.running_plugin_hashes)
        self.plugins: dict[str, str | None] = {}
        # the source files changed since the checkpoint this run resumed, when the CLI was told to allow it
        self.code_change: list[str] = []
        self.written: Path | None = None  # the summary this process wrote (rank 0), once fit has ended

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        self._start = time.perf_counter()

    def on_train_batch_end(self, trainer: L.Trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        if trainer.max_steps > 0 and trainer.global_step >= trainer.max_steps:
            trainer.should_stop = True  # Lightning validates before stopping

    def summary(self, trainer: L.Trainer, pl_module: L.LightningModule, compute: dict | None = None) -> dict:
        metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith(("val/", "train/"))}
        metrics.update(getattr(pl_module, "by_document", {}))  # the last validation's figures per document
        out = {**metrics, "step": trainer.global_step, "wall_time_s": round(time.perf_counter() - self._start, 3)}
        counts = getattr(pl_module, "parameter_counts", None)
        code = code_version(self.plugins)
        boards = {prefix: board.describe() for prefix, board in getattr(pl_module, "scoreboards", {}).items()}
        if compute:
            out.update(compute, flops_per_step=compute["flops"] / max(1, trainer.global_step))
        language = getattr(getattr(pl_module, "objective", None), "language", None)
        source = {"language": provenance} if language is not None and (provenance := language.provenance()) else {}
        changed = {"code_changed_on_resume": self.code_change} if self.code_change else {}
        return {**out, **(counts() if counts else {}), "seeds": run_seeds(trainer, pl_module), "code": code,
                **changed, "scoreboards": boards, **source}  # fmt: skip

    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        log_dir = run_log_dir(trainer)  # a broadcast from rank 0 under DDP: every rank asks, or rank 0 waits forever
        compute = total_compute(trainer, pl_module)  # a reduction: every rank takes part
        if trainer.is_global_zero and log_dir is not None:
            self.written = Path(log_dir) / self.filename
            write_json(self.written, self.summary(trainer, pl_module, compute))


def total_compute(trainer: L.Trainer, pl_module: L.LightningModule) -> dict[str, int] | None:
    """This run's training FLOPs and tokens summed over ranks, and the pre-training FLOPs in its final encoder;
    None for a module that does not count them."""
    if not hasattr(pl_module, "spent"):
        return None
    summed = {}
    for name in ("flops", "tokens"):  # float64 holds integers exactly up to 2^53 (9e15 FLOPs)
        value = torch.tensor(float(pl_module.spent[name]), dtype=torch.float64, device=pl_module.device)
        summed[name] = int(trainer.strategy.reduce(value, reduce_op="sum").item())
    return {**summed, "pretrain_flops": pl_module.encoder_flops(summed["flops"])}


def run_seeds(trainer: L.Trainer, pl_module: L.LightningModule) -> dict[str, int | None]:
    """The seeds a run used: `seed_everything` (None if never called), `init` (the initial weights),
    `data` (the training stream) and `val` (the validation set)."""
    data = trainer.datamodule
    global_seed = os.environ.get("PL_GLOBAL_SEED")
    return {
        "seed_everything": None if global_seed is None else int(global_seed),
        "init": getattr(pl_module, "init_seed", None),
        "data": getattr(data, "seed", None),
        "val": getattr(data, "val_seed", None),
    }


def _rates(recipe: Any) -> Any:
    """A masking recipe's settings to filter by: its rates, with `recipe` naming a plug-in recipe's class
    (a recipe is saved as {class_path, init_args} since plug-in recipes are accepted)."""
    if not isinstance(recipe, dict) or "init_args" not in recipe:
        return recipe
    name = _short(recipe.get("class_path"))
    return {**recipe["init_args"], **({"recipe": name} if name != "MaskingRecipe" else {})}


def _short(class_path: Any) -> Any:
    return class_path.rsplit(".", 1)[-1] if isinstance(class_path, str) else class_path


def hyperparameters(config: dict) -> dict:
    """A run's resolved config as loggers take it: the whole tree (`model`, `data`, `trainer`, ...) plus
    top-level keys to filter runs by: `objective`, `language`, `masking`, `lr`, `seed`, `regime`.

    >>> hp = hyperparameters({"seed_everything": 1, "model": {"class_path": "minibert.training.module.EncoderModule",
    ...     "init_args": {"lr": 0.003, "objective": {"class_path": "minibert.objectives.MaskedLM",
    ...     "init_args": {"masking": {"p_pick": 0.15}}}}}})
    >>> hp["objective"], hp["lr"], hp["seed"], hp["masking"]
    ('MaskedLM', 0.003, 1, {'p_pick': 0.15})
    >>> hyperparameters({"model": {"init_args": {"objective": {"init_args": {"masking": {
    ...     "class_path": "whole_pair.WholePair", "init_args": {"p_pick": 0.15}}}}}}})["masking"]
    {'p_pick': 0.15, 'recipe': 'WholePair'}
    """
    config = json.loads(json.dumps(config, default=str))  # plain JSON types (paths become strings)
    config.pop("config", None)  # the -c file paths: not a setting
    model = config.get("model") or {}
    objective = find(model, "objective")
    language = find(objective, "language") if objective is not None else find(model, "language")
    filters = {
        "objective": _short(objective.get("class_path")) if isinstance(objective, dict) else objective,
        "language": _short(language.get("class_path")) if isinstance(language, dict) else language,
        "masking": _rates(find(objective, "masking")),
        "lr": find(model, "lr"),
        "seed": config.get("seed_everything"),
        "regime": find(model, "regime"),
    }
    return {**config, **{k: v for k, v in filters.items() if v is not None}}


class SaveAndLogConfig(SaveConfigCallback):
    """Lightning's SaveConfigCallback, writing `config.yaml` in the run's own folder (`run_log_dir`: never
    shared by two runs, wandb included) and logging the resolved config to every logger (`hyperparameters`)."""

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if self.already_saved:
            return
        log_dir = run_log_dir(trainer)  # a broadcast: every process asks
        if trainer.is_global_zero:
            os.makedirs(log_dir, exist_ok=True)
            path = os.path.join(log_dir, self.config_filename)
            self.parser.save(self.config, path, skip_none=False, overwrite=self.overwrite, multifile=self.multifile)
            language = getattr(getattr(pl_module, "objective", None), "language", None)
            for name, content in (language.artifacts() if language is not None else {}).items():
                write_atomic(Path(log_dir) / name, content)  # a trained tokenizer, beside the config it came from
            params = hyperparameters(self.config.as_dict())
            for logger in trainer.loggers:
                logger.log_hyperparams(params)
            self.already_saved = True
        self.already_saved = trainer.strategy.broadcast(self.already_saved)
