"""The command line: a config runs end to end in a fresh process and writes what later tools read;
stacked configs and overrides work as in any LightningCLI; bad settings fail with a clear message."""

import json
import math
import os
import subprocess
import sys

import pytest
import yaml

from minibert.training.cli import MiniBertCLI

# the names the report, the runner and other tools read from summary.json
ACCURACIES = {
    "val/acc",
    "val/acc_opener",
    "val/acc_closer",
    "val/acc_partner_visible",
    "val/acc_partner_hidden",
    "val/acc_kind_mask",
    "val/acc_kind_random",
    "val/acc_kind_kept",
}
SUMMARY_NAMES = ACCURACIES | {"val/loss", "train/loss", "step", "wall_time_s"}


def test_pretrain_config_runs_end_to_end_in_a_subprocess(root, tmp_path):
    paths = [str(root), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}  # this checkout's minibert, not an installed one
    command = [sys.executable, "-m", "minibert", "fit", "-c", "configs/pretrain.yaml", "--trainer.max_steps=3"]
    command += [f"--trainer.default_root_dir={tmp_path}", "--trainer.enable_progress_bar=false"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]

    (log_dir,) = (tmp_path / "lightning_logs").iterdir()
    config = yaml.safe_load((log_dir / "config.yaml").read_text())
    assert config["seed_everything"] == 0 and config["trainer"]["max_steps"] == 3
    assert config["model"]["init_args"]["encoder"]["causal"] is False
    assert config["data"]["batch_size"] == 64

    summary = json.loads((log_dir / "summary.json").read_text())
    assert SUMMARY_NAMES <= summary.keys()
    assert {k for k in summary if k.startswith("val/acc")} == ACCURACIES
    assert summary["step"] == 3 and summary["wall_time_s"] > 0
    assert all(0 <= summary[k] <= 1 for k in ACCURACIES)
    assert math.isfinite(summary["train/loss"]) and math.isfinite(summary["val/loss"])
    assert (log_dir / "metrics.csv").is_file() and list((log_dir / "checkpoints").glob("*.ckpt"))

    # it ends with three lines: where the run is, its final metrics, its time
    run, final, took = done.stderr.strip().splitlines()[-3:]
    assert run.startswith("run: ") and os.path.samefile(root / run.split()[1], log_dir)
    assert final == f"final: val/acc {summary['val/acc']:.4f}, val/gap/acc {summary['val/gap/acc']:.4f}, " \
        f"val/loss {summary['val/loss']:.4f}, train/loss {summary['train/loss']:.4f}"  # fmt: skip
    assert took == f"time: {summary['wall_time_s']:.1f} s for 3 steps"


def build(root, *args: str) -> MiniBertCLI:
    """Parse and instantiate without training."""
    return MiniBertCLI(args=["-c", str(root / "configs/pretrain.yaml"), *args], run=False)


def test_stacking_causal_config_makes_the_model_causal(root):
    assert build(root).model.encoder.config.causal is False
    cli = build(root, "-c", str(root / "configs/causal.yaml"))
    assert cli.model.encoder.config.causal is True
    assert cli.model.encoder.blocks[0].attn.causal is True
    assert cli.config.trainer.default_root_dir == "runs/causal"


def test_overrides_reach_the_model_data_and_seed(root):
    cli = build(root, "--seed_everything=7", "--data.batch_size=8", "--model.init_args.encoder.norm=pre")
    assert cli.datamodule.seed == 7 and cli.datamodule.batch_size == 8
    assert cli.model.encoder.config.norm == "pre"
    assert cli.datamodule.source is cli.model.objective  # the data streams the model's own objective


@pytest.mark.parametrize("steps", [0, -1])
def test_a_bad_setting_raises_from_the_cli_class_itself(root, steps):
    """preflight builds every cell with MiniBertCLI directly (not through main): the error is a ValueError
    there, with the line main prints."""
    with pytest.raises(ValueError, match=rf"trainer\.max_steps={steps} is not allowed: it must be a positive integer"):
        MiniBertCLI(args=["fit", "-c", str(root / "configs/pretrain.yaml"), f"--trainer.max_steps={steps}"])


def test_a_config_stacked_after_a_flag_never_drops_the_flag_and_says_so(root, capsys):
    """A language config sets trainer.default_root_dir and data.val_size: flags given before it still win."""
    cli = MiniBertCLI(args=["-c", str(root / "configs/pretrain.yaml"), "--trainer.default_root_dir=mine",
                            "--data.val_size=70", "--trainer.max_steps", "5",
                            "-c", str(root / "configs/languages/dyck.yaml")], run=False)  # fmt: skip
    assert cli.config.trainer.default_root_dir == "mine" and cli.config.data.val_size == 70
    assert cli.config.trainer.max_steps == 5  # a flag with its value as the next word
    assert type(cli.model.objective.language).__name__ == "Dyck"  # and the file still applies
    notes = capsys.readouterr().err
    assert "--trainer.default_root_dir is kept over" in notes and "dyck.yaml" in notes
    assert "--trainer.max_steps" not in notes  # dyck.yaml does not set it
    # a file before the flag is plain stacking: nothing to say
    MiniBertCLI(args=["-c", str(root / "configs/pretrain.yaml"), "--data.val_size=70"], run=False)
    assert "kept over" not in capsys.readouterr().err
