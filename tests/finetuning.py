"""Fine-tuning a module for a few steps while recording the encoder's mode, and a checksum of its weights: shared
by the fine-tuning and probe tests."""

from __future__ import annotations

import hashlib

import lightning as L
import torch

from minibert.training.data import StreamDataModule
from minibert.training.finetune import FinetuneModule


def checksum(module: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().numpy().tobytes())
    return h.hexdigest()


class AssertEncoderMode(L.Callback):
    """Records the encoder's training flag at every training step."""

    def __init__(self):
        self.modes = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.modes.append(pl_module.encoder.training)


def train(module: FinetuneModule, steps: int = 8) -> AssertEncoderMode:
    data = StreamDataModule(batch_size=32, val_size=64, val_batch_size=64, source=module.objective)
    probe = AssertEncoderMode()
    trainer = L.Trainer(
        max_steps=steps,
        val_check_interval=4,
        check_val_every_n_epoch=None,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[probe],
    )
    trainer.fit(module, data)
    return probe
