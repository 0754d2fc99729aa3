"""A made-up validity study's table rows, arms of known quality whose ranking a setting keeps or reverses: shared by
the validity page's tests and the pairs page's."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from minibert.tables import saved

ROOT = Path(__file__).resolve().parents[1]

ARMS = ["mlm", "span", "rate30", "alibi", "mask100", "electra", "next_token"]
QUALITY = {a: q for a, q in zip(ARMS, [0.9, 0.3, 0.7, 0.5, 0.6, 0.4, 0.2])}  # the arms' true order
# each arm's objective class, as a table's `objective` column holds it (configs/arms.yaml names them)
OBJECTIVE = {"span": "SpanMaskedLM", "electra": "ReplacedTokenDetection", "next_token": "NextTokenLM"}


def rows(setting: str, order: float, seeds=(0, 1, 2), seed: int = 0) -> list[dict]:
    """One setting's table rows: each arm's quality (times `order`: 1 keeps the ranking, -1 reverses it) plus
    seed noise, as a cloze figure (a gap to an exact ceiling on toys, an accuracy beside n-gram references on
    text) and a fine-tuned accuracy."""
    rng = np.random.default_rng(seed)
    text = setting.startswith("text")
    out = []

    def row(experiment, metric, s, value, n=None):
        out.append({"grid": "validity", "experiment": experiment, "stage": experiment.split("/")[2], "seed": s,
                    "val_seed": 7 if text else s, "metric": metric, "category": "", "value": value, "n": n,
                    "run": f"r{s}", "code": "",
                    "objective": OBJECTIVE.get(experiment.rsplit("/", 1)[-1], "MaskedLM")})  # fmt: skip

    for arm in ARMS:
        q = 0.5 + 0.3 * order * (QUALITY[arm] - 0.5)
        pre, fine = f"validity/{setting}/pretrain/{arm}", f"validity/{setting}/finetune/{arm}"
        for s in seeds:
            acc = q + 0.005 * rng.normal()
            if text:
                row(pre, "val/acc", s, acc, 9000)
                row(pre, "val/reference/left_right_trigram/acc", s, 0.55)  # logged without a count, as runs log it
                row(pre, "val/reference/left_bigram/acc", s, 0.40)
            else:
                row(pre, "val/acc", s, acc, 9000)
                row(pre, "val/ceiling/acc", s, 0.95, 9000)
                row(pre, "val/gap/acc", s, 0.95 - acc, 9000)
            row(pre, "flops", s, 3.6554e11 * (21 if setting == "text" else 1))
            row(pre, "wall_time_s", s, 30.0)
            row(fine, "val/acc", s, q + 0.005 * rng.normal(), 2000)
            row(fine, "wall_time_s", s, 10.0)
    return out


def with_saved_configs(out: Path) -> None:
    """The committed study's saved configs beside a made-up table of it (its experiments keep their names): the
    language each setting ran on, which tells the settings that graded one validation set."""
    shutil.copytree(ROOT / "results/validity" / saved.FOLDER, Path(out) / saved.FOLDER, dirs_exist_ok=True)
