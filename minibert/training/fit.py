"""Run the CLI in this process and read back what the run wrote; what scripts and tests build on.

Example:
    >>> summary = fit(["configs/pretrain.yaml"], ["--trainer.max_steps=2"], root_dir=tmp)  # doctest: +SKIP
    >>> summary["step"]  # doctest: +SKIP
    2
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path

from minibert.training.cli import MiniBertCLI
from minibert.training.loggers import run_log_dir

QUIET = ["--trainer.enable_progress_bar=false", "--trainer.enable_model_summary=false"]


def fit(configs: Sequence[str | Path], overrides: Sequence[str] = (), root_dir: str | Path | None = None) -> dict:
    """`python -m minibert fit -c C1 -c C2 ... OVERRIDES` in-process; returns the run's summary.json
    with `log_dir` added."""
    args = ["fit", *(f"--config={c}" for c in configs), *QUIET, *overrides]
    if root_dir is not None:
        args.append(f"--trainer.default_root_dir={root_dir}")
    with warnings.catch_warnings():  # the caller's own sys.argv is not meant for this run: that is the point
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter is intended")
        cli = MiniBertCLI(args=args)
    log_dir = Path(run_log_dir(cli.trainer))
    summary = json.loads((log_dir / "summary.json").read_text())
    return {**summary, "log_dir": str(log_dir)}
