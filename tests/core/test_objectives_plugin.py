"""A new objective defined here, outside the package, trains through the CLI from YAML by class path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import yaml
from torch import nn

from minibert.languages import MASK_ID, BracketPairs, Language
from minibert.masking import MaskingRecipe
from minibert.model import EncoderConfig
from minibert.objectives import MaskedLM, Objective, Scored
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


@dataclass(frozen=True)
class WholePair(MaskingRecipe):
    """A recipe outside the package: a picked bracket takes its partner with it."""

    def apply(self, ids, rng, language):
        picked = language.is_content(ids) & (rng.random(ids.shape) < self.p_pick)
        picked |= np.take_along_axis(picked, language.partner(ids), axis=1)
        return self.treat(ids, picked, rng.random(ids.shape), rng, language)


def test_a_masking_recipe_plugged_into_the_stock_mlm_trains_and_is_kept_in_the_saved_config(tmp_path):
    path = f"{WholePair.__module__}.WholePair"
    summary = fit(["configs/pretrain.yaml"], [f"--model.init_args.objective.init_args.masking.class_path={path}",
                  "--trainer.max_steps=2", "--data.val_size=100"], root_dir=tmp_path)  # fmt: skip
    saved = yaml.safe_load((Path(summary["log_dir"]) / "config.yaml").read_text())
    assert saved["model"]["init_args"]["objective"]["init_args"]["masking"]["class_path"] == path
    mlm = MaskedLM(masking=WholePair())
    batch = mlm.make_batch(np.random.default_rng(0), 64, "train")
    picked = (batch["labels"] != -100).numpy()
    partner = mlm.language.partner(batch["labels"].where(batch["labels"] != -100, batch["inputs"]).numpy())
    assert picked.any() and (picked == np.take_along_axis(picked, partner, axis=1)).all()  # whole pairs only


def test_a_recipe_that_picks_its_own_way_cannot_grade_the_oracle_questions():
    with pytest.raises(ValueError, match=r"^MaskedLM\.eval_masking=WholePair is not allowed: it picks positions"):
        MaskedLM(eval_masking=WholePair())


def test_electra_on_a_recipe_the_oracle_cannot_grade_says_so_in_its_own_terms():
    from minibert.objectives import ReplacedTokenDetection

    with pytest.raises(ValueError, match=r"^ReplacedTokenDetection\.masking=WholePair is not allowed"):
        ReplacedTokenDetection(masking=WholePair())

    @dataclass(frozen=True)
    class OwnLikelihoods(MaskingRecipe):  # states its emissions through the old hook only
        def likelihoods(self, inputs, language):
            return super().likelihoods(inputs, language)

    with pytest.raises(ValueError, match=r"^MaskedLM\.eval_masking=OwnLikelihoods is not allowed"):
        MaskedLM(eval_masking=OwnLikelihoods())


def test_a_checkpoint_rebuilds_its_plugin_objective_through_load_from_checkpoint(tmp_path):
    """Under LightningCLI, save_hyperparameters records the objective by class path and init args, so that
    Lightning's load_from_checkpoint rebuilds a plug-in objective around the saved weights, from a checkpoint
    that still loads with weights_only=True. A module built in Python records its plain arguments only (a
    module and a dataclass could only be pickled) and is given its objective back."""
    import lightning as L

    from minibert.training.checkpoints import last_checkpoint
    from minibert.training.data import StreamDataModule
    from minibert.training.module import EncoderModule

    config = tmp_path / "last_closer.yaml"
    config.write_text(
        "model:\n  init_args:\n    objective:\n"
        f"      class_path: {LastCloser.__module__}.LastCloser\n      init_args: {{hide: 0}}\n"
    )
    overrides = [
        "--trainer.max_steps=3",
        "--trainer.val_check_interval=3",
        "--data.val_size=64",
        "--model.init_args.lr=0.01",
    ]
    ckpt = last_checkpoint(fit(["configs/pretrain.yaml", config], overrides, root_dir=tmp_path / "cli")["log_dir"])
    saved = torch.load(ckpt, weights_only=True)
    assert saved["hyper_parameters"]["objective"]["class_path"] == f"{LastCloser.__module__}.LastCloser"
    module = EncoderModule.load_from_checkpoint(ckpt)
    assert type(module.objective).__name__ == "LastCloser" and module.objective.hide == 0 and module.lr == 0.01
    assert module.state_dict().keys() == saved["state_dict"].keys()
    assert all(torch.equal(module.state_dict()[k], v) for k, v in saved["state_dict"].items())

    built = EncoderModule(objective=MaskedLM(), lr=0.02)
    assert dict(built.hparams) == {
        "lr": 0.02,
        "weight_decay": 0.01,
        "warmup_steps": 30,
        "init_seed": None,
        "encoder_ckpt": None,
    }
    trainer = L.Trainer(max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, limit_val_batches=0, default_root_dir=tmp_path)  # fmt: skip
    trainer.fit(built, datamodule=StreamDataModule(source=built.objective, batch_size=8, val_size=8))
    trainer.save_checkpoint(tmp_path / "python.ckpt")
    torch.load(tmp_path / "python.ckpt", weights_only=True)  # nothing pickled
    with pytest.raises(TypeError, match="objective"):
        EncoderModule.load_from_checkpoint(tmp_path / "python.ckpt")
    again = EncoderModule.load_from_checkpoint(tmp_path / "python.ckpt", objective=MaskedLM())
    assert again.lr == 0.02 and all(torch.equal(again.state_dict()[k], v) for k, v in built.state_dict().items())
