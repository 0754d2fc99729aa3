"""What a grid says when a run cannot finish: a plug-in objective whose loss turns non-finite after finite steps is
one line naming its file, the step and the run's log (which exists), with the cause the losses before it point to;
a worker that dies without a word is one line for the whole pool, not one per run it took with it."""

from __future__ import annotations

import math
import os
import pickle
import signal

import lightning as L
import pytest

from minibert.objectives import MaskedLM
from minibert.training.module import NonFiniteLoss
from tests.ablating import TINY, ablate, tiny_grid


class LateNaN(MaskedLM):
    """MLM whose training loss turns NaN at its fourth training batch: a bug of its own, after finite steps."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    def forward(self, encoder, batch):
        out = super().forward(encoder, batch)
        if encoder.training:
            self.batches += 1
            if self.batches >= 4:
                out = out._replace(loss=out.loss * math.nan)
        return out


class DieWithoutAWord(L.Callback):
    """A worker killed outright once its run trains (as the kernel kills one for memory)."""

    def on_train_start(self, trainer, pl_module):
        os.kill(os.getpid(), signal.SIGKILL)


def said(stderr: str) -> list[str]:
    """The lines a person reads, less the progress bar's (which redraws on one line)."""
    return [x for x in stderr.splitlines() if x.startswith(("ablate.py:", "run failed", "runs failed", "FAILED"))]


def test_a_plugins_late_non_finite_loss_is_one_line_naming_its_file_the_step_and_an_existing_log(tmp_path):
    late = {"name": "pretrain/late", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"],
            "overrides": {**TINY, "trainer.max_steps": 8,
                          "model.init_args.objective.class_path": f"{__name__}.LateNaN"}}  # fmt: skip
    grid = tiny_grid(tmp_path / "grid.yaml", extra=[late])
    out = tmp_path / "out"
    result = ablate("--grid", str(grid), "--out", str(out), "--seeds", "2", "--only", "pretrain/late", "--workers", "1")
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "BrokenProcessPool" not in result.stderr
    (line,) = said(result.stderr)
    assert line.startswith("ablate.py: error: pretrain/late seed=0 stopped at step 3: non-finite training loss nan")
    assert "not rising" in line and "LateNaN's own code" in line and "learning rate" in line, line
    assert f"({__file__})" in line
    log = line.split("(log: ")[1].split(")")[0]
    assert os.path.isfile(log) and "non-finite training loss" in open(log).read()


def test_a_worker_that_dies_without_a_word_is_one_line_for_the_pool(tmp_path):
    layer = tmp_path / "die.yaml"
    layer.write_text(f"trainer:\n  callbacks:\n    - class_path: {__name__}.DieWithoutAWord\n")
    dies = {"name": "pretrain/dies", "job_type": "pretrain", "configs": ["configs/pretrain.yaml", str(layer)],
            "overrides": TINY}  # fmt: skip
    grid = tiny_grid(tmp_path / "grid.yaml", extra=[dies])
    result = ablate("--grid", str(grid), "--out", str(tmp_path / "out"), "--seeds", "3", "--only", "pretrain/dies",
                    "--workers", "2")  # fmt: skip
    assert result.returncode == 1, result.stderr[-2000:]
    (line,) = said(result.stderr)
    assert line.startswith("runs failed: a worker process died without a word"), line
    assert "Traceback" not in result.stderr and "BrokenProcessPool" not in result.stderr
    assert "the 3 runs going" in line and "logs: " in line
    assert all(os.path.isfile(log) for log in line.split("logs: ")[1].split("; ")[0].split(", "))  # each named exists


@pytest.mark.parametrize(("recent", "shipped", "blames"), [
    ((), False, "the objective's code is at fault, not the learning rate"),
    ((2.0, 1.9, 1.8, 1.7), False, "either LateNaN's own code made it"),
    ((2.0, 1.9, 1.8, 1.7), True, "training diverged (learning rate too high?)"),
    ((1.8, 1.7, 2.5, 6.0), False, "after the loss rose from 1.7000 to 6.0000 over the last 4 steps"),
])  # fmt: skip
def test_the_cause_a_non_finite_loss_names_is_the_one_the_losses_before_it_point_to(recent, shipped, blames):
    err = NonFiniteLoss(math.nan, 12, recent, "LateNaN", "/x/late.py", shipped)
    assert blames in str(err) and "at step 12" in str(err)
    assert ("learning rate too high?" in str(err)) == (shipped or err.rising)  # the question only with evidence
    again = pickle.loads(pickle.dumps(err))  # a worker sends it to its runner whole
    assert str(again) == str(err) and again.objective_file == "/x/late.py" and again.step == 12
