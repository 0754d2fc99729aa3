"""Running `scripts/ablate.py` from a test: a tiny grid, the script called in this warm process as a fresh one would
run it, and reading what it wrote. Shared by the tests of the runner, its faults, FLOP budgets and the oracle's
cost."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import yaml

from minibert.tables import table

ROOT = Path(__file__).resolve().parent.parent
RUN_SUMMARIES = "runs/*/*/*/summary.json"  # <out>/runs/<group>/<name>/<seed-key>/summary.json
TINY = {"trainer.max_steps": 4, "trainer.val_check_interval": 2, "data.val_size": 64, "data.val_batch_size": 64}


def tiny_grid(path: Path, extra: list | None = None) -> Path:
    grid = {
        "experiments": [
            {
                "name": "pretrain/bidirectional",
                "job_type": "pretrain",
                "configs": ["configs/pretrain.yaml"],
                "overrides": TINY,
                "metrics": ["val/acc", "val/acc_opener"],
                "reference": {"val/acc": 0.894},
            },
            {
                "name": "pretrain/causal",
                "job_type": "pretrain",
                "configs": ["configs/pretrain.yaml", "configs/causal.yaml"],
                "overrides": TINY,
            },
            {
                "name": "finetune/full",
                "job_type": "finetune",
                "configs": ["configs/finetune.yaml"],
                "overrides": {**TINY, "model.init_args.regime": "full"},
                "encoder_from": "pretrain/bidirectional",
                "metrics": ["val/acc", "trainable_params"],
            },
            *(extra or []),
        ],
        "claims": [
            {
                "text": "causal openers below bidirectional openers",
                "lower": {"experiment": "pretrain/causal", "metric": "val/acc_opener"},
                "higher": {"experiment": "pretrain/bidirectional", "metric": "val/acc_opener"},
            }
        ],
    }
    path.write_text(yaml.safe_dump(grid))
    return path


@functools.cache
def _ablate_module():
    spec = importlib.util.spec_from_file_location("ablate", ROOT / "scripts" / "ablate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(warnings.formatwarning(message, category, filename, lineno, line), end="", file=sys.stderr)


def ablate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python scripts/ablate.py ARGS`, run from the repository: its exit status, stdout and stderr.

    In this process, whose imports and worker fork server are warm (about 8 s saved per call on the 2-core
    machine), with what a fresh process has: its own stdout, stderr and warnings (Python's default filters),
    and sys.path, the environment, the working directory and the modules put back after. What its local
    workers print outside a run's log is not in `stderr`. With `env`, in a subprocess with that environment.
    What needs a process of its own (signals, kills, two runners) uses one directly."""
    if env is not None:
        return subprocess.run([sys.executable, "scripts/ablate.py", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=300, env=env)  # fmt: skip
    stdout, stderr = io.StringIO(), io.StringIO()
    path, environ, cwd, modules = list(sys.path), dict(os.environ), os.getcwd(), set(sys.modules)
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), warnings.catch_warnings():
            warnings.resetwarnings()
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                warnings.simplefilter("ignore", category)
            warnings.showwarning = _show_warning
            try:
                status = _ablate_module().main(list(args))
            except SystemExit as exit:  # argparse's errors
                status = exit.code if isinstance(exit.code, int) else 1
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        os.environ.clear()
        os.environ.update(environ)
        for name in set(sys.modules) - modules:  # plug-ins the call imported, from the tests' tmp folders
            file = getattr(sys.modules[name], "__file__", None) or ""
            if file.startswith(tempfile.gettempdir()) and not file.startswith(str(ROOT)):  # a checkout may be in /tmp
                del sys.modules[name]
    return subprocess.CompletedProcess(["scripts/ablate.py", *args], status, stdout.getvalue(), stderr.getvalue())


def csv_runs(out: Path) -> Counter:
    """(experiment, seed) -> how many rows of the grid's table hold that run's accuracy on all questions."""
    rows = table.read(out).query("metric == 'val/acc' and category == ''")
    return Counter((e, str(s)) for e, s in zip(rows["experiment"], rows["seed"]))


def made(out: Path) -> dict:
    """How the table was made (<out>/run.json)."""
    return json.loads((out / "run.json").read_text())
