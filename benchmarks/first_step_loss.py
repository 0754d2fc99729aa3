"""The default pre-training's loss at its first step, seeds 0-2, bidirectional and causal: the start of the curve
the write-up quotes (its single run: 3.083), which the grids' tables miss since runs log every 10 steps
(results/measurements.yaml, `first_step_loss`). One step each, logged; nothing else is trained.

    python benchmarks/first_step_loss.py
"""

from __future__ import annotations

import json
import math
import tempfile

from minibert.metrics_history import metric_history
from minibert.training.fit import fit

MODELS = {"bidirectional": ["configs/pretrain.yaml"], "causal": ["configs/pretrain.yaml", "configs/causal.yaml"]}


def main() -> None:
    found = {}
    for name, configs in MODELS.items():
        found[name] = []
        for seed in (0, 1, 2):
            with tempfile.TemporaryDirectory() as root:
                one_step = [f"--seed_everything={seed}", "--trainer.max_steps=1", "--trainer.log_every_n_steps=1",
                            "--pair_eval.enabled=false"]  # fmt: skip
                summary = fit(configs, one_step, root_dir=root)
                ((_, loss),) = metric_history(summary["log_dir"], "train/loss")
                found[name].append(round(loss, 4))
    print(json.dumps({**found, "chance (ln of the 18-token vocabulary)": round(math.log(18), 4)}))


if __name__ == "__main__":
    main()
