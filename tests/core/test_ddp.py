"""DDP through Lightning on CPU (gloo): `--trainer.strategy ddp --trainer.devices 2` runs the same config;
each rank trains on its own batches, the validation set is split between the ranks (graded once, not
twice) and its metrics are reduced across them; quality matches a single process with the same global batch.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch

from minibert.objectives import MaskedLM
from minibert.training.fit import fit
from tests.clirun import run_fit, summaries

STEPS = ["--trainer.max_steps=200", "--trainer.val_check_interval=100"]
FIRST = 5  # batches each rank records


def fingerprint(inputs: torch.Tensor) -> str:
    return hashlib.sha1(inputs.numpy().tobytes()).hexdigest()


class BatchLog(L.Callback):
    """Writes the fingerprints of this rank's first training batches to `<root>/batches_rank<r>.json`."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx: int) -> None:
        if len(self.seen) < FIRST:
            self.seen.append(fingerprint(batch["inputs"]))

    def on_train_end(self, trainer, pl_module) -> None:
        path = Path(trainer.default_root_dir, f"batches_rank{trainer.global_rank}.json")
        path.write_text(json.dumps(self.seen))


@pytest.mark.slow
@pytest.mark.every_core
def test_ddp_two_ranks_matches_single_process(tmp_path):
    root = tmp_path / "ddp"
    done = run_fit(
        "-c",
        "configs/pretrain.yaml",
        *STEPS,
        "--trainer.strategy=ddp",
        "--trainer.devices=2",
        "--data.batch_size=32",
        "--trainer.callbacks+=tests.core.test_ddp.BatchLog",
        f"--trainer.default_root_dir={root}",
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (ddp,) = summaries(root)  # written once, by rank 0

    # each rank drew its own stream: batch i on rank r comes from default_rng([seed, r, i])
    seen = [json.loads((root / f"batches_rank{r}.json").read_text()) for r in (0, 1)]
    assert not set(seen[0]) & set(seen[1])
    for rank in (0, 1):
        expected = [
            MaskedLM().make_batch(np.random.default_rng([0, rank, i]), 32, "train")["inputs"] for i in range(FIRST)
        ]
        assert seen[rank] == [fingerprint(x) for x in expected]

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:  # one process, the same global batch of 64
        single = fit(["configs/pretrain.yaml"], STEPS, root_dir=tmp_path / "single")
    finally:
        torch.set_num_threads(threads)
    # the 2000 validation sentences were graded exactly once between the two ranks
    assert ddp["val/n"] == single["val/n"] and ddp["val/n_closer"] == single["val/n_closer"]
    assert abs(ddp["val/acc"] - single["val/acc"]) < 0.05
    assert abs(ddp["val/loss"] - single["val/loss"]) < 0.15
    assert ddp["step"] == single["step"] == 200
    # compute is summed over the ranks: the same global batch reads the same tokens and spends the same FLOPs
    # (to within the masks' sizes, which differ between the streams)
    assert ddp["tokens"] == single["tokens"] == 200 * 64 * 17
    assert ddp["train/tokens"] == single["train/tokens"] == ddp["tokens"]
    assert abs(ddp["flops"] / single["flops"] - 1) < 0.01 and abs(ddp["train/flops"] / ddp["flops"] - 1) < 1e-6
