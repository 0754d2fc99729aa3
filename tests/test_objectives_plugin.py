"""A new objective defined here, outside the package, trains through the CLI from YAML by class path."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minibert.languages import MASK_ID, BracketPairs, Language
from minibert.model import EncoderConfig
from minibert.objectives import Objective, Scored
from minibert.training.fit import fit


class LastCloser(Objective):
    """Toy objective: hide the last closer behind [MASK]; [CLS] must name it (its opener is visible)."""

    categories = ("low", "high")  # kinds a-d, e-h

    def __init__(self, hide: int = MASK_ID, language: Language | None = None) -> None:
        super().__init__()
        self.hide = hide
        self.language = language or BracketPairs()  # the encoder is sized for it (configure_encoder)

    def build(self, config: EncoderConfig) -> None:
        self.head = nn.Linear(config.width, 8)

    def make_batch(self, rng: np.random.Generator, size: int, split: str) -> dict[str, torch.Tensor]:
        ids = self.language.sample(rng, size)
        target = ids[:, -1] - self.language.first_closer
        ids[:, -1] = self.hide
        return {"inputs": torch.from_numpy(ids), "kind": torch.from_numpy(target)}

    def score(self, hidden: torch.Tensor, batch: dict[str, torch.Tensor]) -> Scored:
        logits = self.head(hidden[:, 0])  # (B, 8) from [CLS]
        target = batch["kind"]
        halves = torch.stack([target < 4, target >= 4], -1)
        return Scored(F.cross_entropy(logits, target), logits.argmax(-1), target, halves)


def test_an_objective_defined_outside_the_package_trains_from_yaml(tmp_path):
    config = tmp_path / "last_closer.yaml"
    config.write_text(
        "model:\n  init_args:\n    objective:\n"
        f"      class_path: {LastCloser.__module__}.LastCloser\n      init_args: {{hide: {MASK_ID}}}\n"
    )
    overrides = ["--trainer.max_steps=150", "--trainer.val_check_interval=150", "--data.val_size=500"]
    summary = fit(["configs/pretrain.yaml", config], overrides, root_dir=tmp_path)
    assert summary["step"] == 150
    # its own categories become metrics, and its head (32 * 8 + 8) is counted next to the encoder
    assert {"val/acc_low", "val/acc_high", "val/n_low", "val/n_high"} <= set(summary)
    assert summary["val/n_low"] + summary["val/n_high"] == summary["val/n"] == 500
    assert summary["params"] == 27122 - (32 * 18 + 18) + (32 * 8 + 8)
    # and it learned: chance is 1/8, the answer is one attention hop away
    assert summary["val/acc"] > 0.5
