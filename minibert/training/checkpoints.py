"""Checkpoints, in one place: written atomically, read with errors that name the setting, found again,
and checked before a resume.

- `AtomicCheckpointIO` writes a checkpoint to a temporary file beside it, fsyncs and renames it over the
  old one, so a kill or a full disk leaves the previous checkpoint whole (Lightning's own writer goes
  through a temporary file in /tmp, which is a copy, not a rename, when /tmp is another file system).
- `TrainingConfig` stores the settings that decide what is trained in every checkpoint, so a resume can
  be compared with the run it continues (`config_differences`), and the hashes of the source files that
  trained it (`saved_code_files`), so that a resume by other code can name what changed.
- `resumable_checkpoint` picks the newest readable `checkpoints/*.ckpt` under a root, skipping (and
  naming) unreadable ones; `newest_last_checkpoint` and `last_checkpoint` find files without reading them,
  `last_checkpoint_path` is where a running trainer keeps its `last.ckpt`.
- `read_checkpoint` loads one (weights only) or says what is wrong with it; `load_encoder_weights` copies
  its encoder into another model strictly (fine-tuning takes nothing else).

Example:
    >>> training_settings({"trainer": {"max_steps": 5, "logger": None}, "ckpt_path": "last", "seed_everything": 0})
    {'seed_everything': 0, 'trainer.max_steps': 5}
    >>> config_differences({"trainer.max_steps": 5}, {"trainer.max_steps": 6})
    ['trainer.max_steps=5 there, 6 here']
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.plugins.io import TorchCheckpointIO

from minibert.atomic_writes import write_atomic
from minibert.model import Encoder

CONFIG_KEY = "minibert_training_config"  # where a checkpoint keeps its run's training settings (JSON text)
CODE_KEY = "minibert_code_files"  # and the hashes of the source files that trained it (JSON text)

# Settings that change where and how a run reports, never the weights it trains: a resume may change them.
NOT_TRAINING = (
    "ckpt_path",
    "allow_code_change",
    "config",
    "summary",
    "data.num_workers",
    "data.val_size",
    "data.val_batch_size",
    "data.val_seed",
    "data.source",
    "trainer.default_root_dir",
    "trainer.logger",
    "trainer.callbacks",
    "trainer.plugins",
    "trainer.enable_progress_bar",
    "trainer.enable_model_summary",
    "trainer.enable_checkpointing",
    "trainer.log_every_n_steps",
    "trainer.val_check_interval",
    "trainer.check_val_every_n_epoch",
    "trainer.num_sanity_val_steps",
    "trainer.limit_val_batches",
    "trainer.profiler",
    "trainer.barebones",
)


class AtomicCheckpointIO(TorchCheckpointIO):
    """TorchCheckpointIO whose writes are all-or-nothing: temporary file in the same folder, then rename."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path, storage_options: Any | None = None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__} takes no storage_options")
        buffer = io.BytesIO()
        torch.save(checkpoint, buffer)
        write_atomic(path, buffer.getvalue())


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: value}


def _plain(value: Any) -> Any:
    """JSON's view of a value (paths and other objects as text), so a saved and a fresh config compare equal."""
    return json.loads(json.dumps(value, default=str))


def training_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The dotted settings of a parsed CLI config (`Namespace.as_dict()`) that change what is trained."""
    flat = _flatten(config)
    ignored = tuple(NOT_TRAINING)
    return {k: _plain(v) for k, v in sorted(flat.items()) if not any(k == i or k.startswith(i + ".") for i in ignored)}


def config_differences(saved: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """`key=A there, B here` for every training setting that differs between a checkpoint and this run."""
    missing = object()
    keys = sorted(set(saved) | set(here))
    return [
        f"{k}={saved.get(k, '(unset)')!r} there, {here.get(k, '(unset)')!r} here"
        for k in keys
        if saved.get(k, missing) != here.get(k, missing)
    ]


def saved_code_files(checkpoint: Mapping[str, Any]) -> dict[str, str] | None:
    """{file: hash} of the sources that wrote a checkpoint, or None for a checkpoint that stored none."""
    text = checkpoint.get(CODE_KEY)
    return json.loads(text) if isinstance(text, str) and text != "{}" else None


def saved_settings(checkpoint: Mapping[str, Any]) -> dict[str, Any] | None:
    """The training settings a checkpoint was written with, or None for a checkpoint that has none."""
    text = checkpoint.get(CONFIG_KEY)
    return json.loads(text) if isinstance(text, str) else None


class TrainingConfig(L.Callback):
    """Puts the run's training settings into every checkpoint it writes (as JSON text, so that the
    checkpoint still loads with `torch.load(weights_only=True)`). Not the module's hparams: those are the
    model's arguments, and a resume must match the trainer's and the data's too (max_steps, batch size,
    seeds), which Lightning keeps nowhere in a checkpoint."""

    def __init__(self, settings: Mapping[str, Any], code: Mapping[str, str] | None = None) -> None:
        self.text = json.dumps(dict(settings), sort_keys=True)
        self.code = json.dumps(dict(code or {}), sort_keys=True)  # minibert.training.code_version.code_files

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict) -> None:
        checkpoint[CONFIG_KEY] = self.text
        checkpoint[CODE_KEY] = self.code


def resumable_checkpoint(root: str | Path) -> tuple[Path, dict] | None:
    """The newest readable `checkpoints/*.ckpt` anywhere under `root` and its contents, or None if there is
    none. An unreadable newer one (cut off, damaged) is named on stderr and the previous complete one is used.
    """
    found = sorted(
        (p for p in Path(root).glob("**/checkpoints/*.ckpt") if p.is_file()),
        key=lambda p: (p.stat().st_mtime, p.name.startswith("last")),
        reverse=True,
    )
    for path in found:
        try:
            return path, read_checkpoint(path, field="ckpt_path")
        except ValueError as err:
            print(f"warning: skipping {err}; trying the previous checkpoint", file=sys.stderr)
    return None


def check_same_module(checkpoint: dict, model: torch.nn.Module) -> None:
    """A checkpoint of another kind of module (a fine-tuning one given to pre-training) fails here, in one line,
    naming the weights whose names or shapes differ."""
    saved = {k: tuple(v.shape) for k, v in checkpoint["state_dict"].items()}
    here = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    differ = sorted(k for k in saved.keys() | here.keys() if saved.get(k) != here.get(k))
    if differ:
        shown = ", ".join(f"{k} {saved.get(k, 'absent')} there, {here.get(k, 'absent')} here" for k in differ[:3])
        raise ValueError(
            f"ckpt_path holds another kind of model than {type(model).__name__} ({shown}"
            f"{' ...' if len(differ) > 3 else ''}): resume a checkpoint of the same model, or give a pre-training "
            "checkpoint to fine-tuning as model.init_args.encoder_ckpt"
        )


# --- reading and finding checkpoints -------------------------------------------------------------------


def read_checkpoint(path: str | Path, field: str = "encoder_ckpt") -> dict:
    """Load a minibert checkpoint (weights only) with errors that name the setting `field` and say what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{field}={str(path)!r}: no such file. Pre-train first "
            "(python -m minibert fit -c configs/pretrain.yaml) and pass its checkpoints/*.ckpt"
        )
    if not zipfile.is_zipfile(path):  # torch.save writes a zip archive; a cut-off one loses its directory
        raise ValueError(
            f"{field}={str(path)!r} is not a readable PyTorch checkpoint: "
            "not a zip archive (cut off, or another kind of file)"
        )
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for truncated or foreign files
        raise ValueError(f"{field}={str(path)!r} is not a readable PyTorch checkpoint: {err}") from None
    if not isinstance(checkpoint, dict) or "state_dict" not in checkpoint or "encoder_config" not in checkpoint:
        raise ValueError(f"{field}={str(path)!r} is not a minibert checkpoint (no encoder_config)")
    return checkpoint


def load_encoder_weights(encoder: Encoder, checkpoint: dict) -> None:
    """Copy `encoder.*` weights from a checkpoint's state dict into `encoder`, strictly."""
    prefix = "encoder."
    state = {k[len(prefix) :]: v for k, v in checkpoint["state_dict"].items() if k.startswith(prefix)}
    try:
        encoder.load_state_dict(state, strict=True)
    except RuntimeError as err:
        raise ValueError(f"the checkpoint's encoder does not fit this encoder: {err}") from None


def last_checkpoint(log_dir: str | Path) -> Path:
    """The newest checkpoint file a run saved under `log_dir/checkpoints`."""
    found = sorted(Path(log_dir, "checkpoints").glob("*.ckpt"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise FileNotFoundError(f"no checkpoint under {Path(log_dir, 'checkpoints')}")
    return found[-1]


class FinalCheckpoint(L.Callback):
    """Write `last.ckpt` at the step training ended on, when a ModelCheckpoint that keeps a last one did not
    (it saves every N steps, and a budget's steps need not be a multiple of N): what a fine-tuning run loads
    is then the encoder as it finished, not one from up to N - 1 steps before."""

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        keeping = [c for c in trainer.checkpoint_callbacks if isinstance(c, ModelCheckpoint) and c.save_last]
        behind = [c for c in keeping if c._last_global_step_saved != trainer.global_step]
        if keeping and behind and trainer.global_step > 0:
            trainer.save_checkpoint(last_checkpoint_path(trainer))


def newest_last_checkpoint(root: str | Path) -> Path | None:
    """The most recently written `last*.ckpt` under `root` (any run, any logger layout), or None."""
    found = [p for p in Path(root).glob("**/checkpoints/last*.ckpt") if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def last_checkpoint_path(trainer: L.Trainer) -> Path:
    """Where `--ckpt_path last` looks: the `last.ckpt` of the run's first ModelCheckpoint, else
    `<log_dir>/checkpoints/last.ckpt`."""
    for callback in trainer.checkpoint_callbacks:
        if isinstance(callback, ModelCheckpoint) and callback.dirpath:
            return Path(callback.dirpath) / f"{callback.CHECKPOINT_NAME_LAST}{callback.FILE_EXTENSION}"
    return Path(trainer.log_dir or trainer.default_root_dir, "checkpoints", "last.ckpt")
