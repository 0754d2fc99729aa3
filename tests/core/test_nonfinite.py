"""A non-finite loss stops the run at once, with an error naming the step and the last finite loss."""

from __future__ import annotations

import math

import pytest
import torch

from minibert.model import Encoder
from minibert.objectives import MaskedLM, Scored
from minibert.objectives.base import Batch
from minibert.training.cli import main
from tests.clirun import QUIET, run_fit


class PoisonedMLM(MaskedLM):
    """MaskedLM whose training loss turns NaN at training call `poison_at` (0-based); records the losses.
    The newest instance is `PoisonedMLM.latest`, so a test can read what the run computed."""

    latest: PoisonedMLM | None = None

    def __init__(self, poison_at: int = 7) -> None:
        super().__init__()
        self.poison_at, self.losses = poison_at, []
        PoisonedMLM.latest = self

    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        out = super().forward(encoder, batch)
        if not encoder.training:
            return out
        if len(self.losses) == self.poison_at:
            out = out._replace(loss=out.loss * math.nan)
        self.losses.append(out.loss.item())
        return out


def test_nan_loss_stops_the_run_naming_step_and_last_finite_loss(tmp_path, capsys):
    poisoned = f"--model.init_args.objective.class_path={PoisonedMLM.__module__}.PoisonedMLM"  # this very class
    args = [
        "fit",
        *QUIET,
        "-c",
        "configs/pretrain.yaml",
        poisoned,
        "--model.init_args.objective.init_args.poison_at=7",
        "--trainer.max_steps=20",
        "--data.val_size=100",
        f"--trainer.default_root_dir={tmp_path}",
    ]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with pytest.raises(SystemExit) as raised:
            main(args)
    finally:
        torch.set_num_threads(threads)
    assert raised.value.code == 2  # bad input, said in one line, no traceback
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message.startswith("error: ") and "model.init_args.lr" in message
    losses = PoisonedMLM.latest.losses
    assert len(losses) == 8 and math.isnan(losses[7]), "the run stopped at the first NaN, not later"
    assert "non-finite training loss nan at step 7" in message
    assert f"last finite loss {losses[6]:.4f}" in message  # that of step 6, as the objective computed it
    assert not list(tmp_path.glob("**/summary.json")), "a run stopped by a NaN must not look finished"


@pytest.mark.slow  # a real process of its own: with the claims
def test_a_learning_rate_that_diverges_is_one_line_with_status_2_not_a_traceback(tmp_path):
    result = run_fit(*QUIET, "-c", "configs/pretrain.yaml", "--model.init_args.lr=1e12", "--trainer.max_steps=20",
                     "--data.val_size=100", f"--trainer.default_root_dir={tmp_path}")  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: non-finite training loss") and "model.init_args.lr" in line, line
