"""The first-day guide (docs/first_day.md, linked first from the README) runs as written: each of its bash blocks,
in a fresh folder holding the repository's configs and tests, trains its plug-in by class path and prints the
three closing lines."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clirun import cli_env

ROOT = Path(__file__).resolve().parents[2]


def guide_blocks() -> list[str]:
    assert "docs/first_day.md" in (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.*?)```", (ROOT / "docs/first_day.md").read_text(), re.S)


def test_the_guide_has_an_objective_and_a_language_block():
    blocks = guide_blocks()
    assert len(blocks) == 2
    assert "model.init_args.objective=last_closer.LastCloser" in blocks[0]
    assert "objective.init_args.language=copy_language.Copy" in blocks[1]
    assert "check_objective(LastCloser)" in blocks[0] and "check_language(Copy)" in blocks[1]  # checked first


@pytest.mark.slow  # each trains the 200 steps the README gives it
@pytest.mark.parametrize("index, folder", [(0, "runs/last_closer"), (1, "runs/copy")])
def test_each_guide_block_runs_as_written(tmp_path, index, folder):
    for name in ("configs", "tests"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "expected"))
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", guide_blocks()[index]], cwd=tmp_path,
                          env=cli_env(PYTHONPATH=None), capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (summary,) = (tmp_path / folder).glob("lightning_logs/version_0/summary.json")
    metrics = json.loads(summary.read_text())
    assert metrics["step"] == 200
    assert "keeps every rule of minibert.testing.check_" in done.stdout  # checked before it trains
    lines = done.stderr.strip().splitlines()
    assert lines[-3].startswith(f"run: {folder}/lightning_logs/version_0")
    assert lines[-2].startswith(f"final: val/acc {metrics['val/acc']:.4f}")
    if index == 0:  # the answer is beside the blank
        assert metrics["val/acc_low"] > 0.9 and metrics["val/acc_high"] > 0.9
    else:  # the oracle's ceiling is logged beside the accuracy
        assert 0 < metrics["val/ceiling/acc"] <= 1 and metrics["val/acc"] <= metrics["val/ceiling/acc"] + 0.01
