"""How long every entry point takes to answer a usage error, against a bare interpreter (`python -c pass`): each
case of tests/harness/test_usage_errors.py run as a user types it, three times, the median kept.

    python benchmarks/usage_errors.py      # prints a Markdown table: command, exit status, lines, seconds

The acceptance is at most 2 s on the 2-core machine; a fast-tier test checks the cause (no torch or Lightning in
sys.modules when the error is answered), this measures the effect.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]  # the cases are the fast tier's: tests/harness/test_usage_errors.py

from tests.harness.test_usage_errors import CASES  # noqa: E402


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), done


def main() -> list[tuple[str, int, int, float]]:
    scratch = Path(tempfile.mkdtemp(prefix="minibert-usage-"))
    (scratch / "band.yaml").write_text("alike: [0.6, 0.9]\n")
    (scratch / "fake.ckpt").write_bytes(b"not a checkpoint")
    bare, _ = timed([sys.executable, "-c", "pass"])
    rows = []
    for target, argv, _ in CASES.values():
        argv = [a.format(band=scratch / "band.yaml", ckpt=scratch / "fake.ckpt") for a in argv]
        command = [sys.executable, *target.split(), *argv]
        seconds, done = timed(command)
        shown = " ".join(["python", *map(shlex.quote, command[1:])])
        rows.append((shown, done.returncode, len(done.stderr.strip().splitlines()), seconds))
    print(f"`python -c pass`: {bare:.2f} s\n")
    print("| command | status | lines | seconds |\n|---|---|---|---|")
    for shown, code, lines, seconds in rows:
        print(f"| `{shown}` | {code} | {lines} | {seconds:.2f} |")
    return rows


if __name__ == "__main__":
    main()
