"""How long every entry point takes to answer a usage error, against a bare interpreter (`python -c pass`): each
case of tests/harness/test_usage_errors.py run as a user types it, three times, the median kept; then the
refusals that still need torch, once each, with why.

    python benchmarks/usage_errors.py      # prints a Markdown table: command, exit status, lines, seconds

The acceptance is at most 2 s on the 2-core machine for every refusal that needs only the arguments and files
(status 2; 3 for a folder another runner holds); a fast-tier test checks the cause (no torch or Lightning in
sys.modules when the error is answered), this measures the effect.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]  # the cases are the fast tier's: tests/harness/test_usage_errors.py

from tests.harness.test_usage_errors import CASES, HELD, HOLDER, scratch  # noqa: E402

# refusals that need what only importing torch gives, each with why: (command, why)
HEAVY = [
    (["scripts/compare.py", "minibert.objectives.Nope"], "a class path: its module is imported to find the class"),
    (["scripts/compare.py", "{user_base}"], "a base from the user's own module: the plug-in is imported to judge it"),
    (["-m", "minibert", "fit", "-c", "configs/pretrain.yaml", "--model.init_args.objective.class_path", "nope.Nope"],
     "a class path in a config: LightningCLI imports the classes"),
    (["-m", "minibert.export", "{zip}", "{out}"], "a zip archive that is no minibert checkpoint: torch.load reads it"),
]  # fmt: skip


def timed(command: list[str], runs: int = 3) -> tuple[float, subprocess.CompletedProcess]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), done


def row(command: list[str], expected: int, runs: int = 3, needs: str = "") -> tuple[str, int, int, int, float, str]:
    """(the command as typed, the status it should give, the status it gave, stderr's lines, seconds, what it needs
    torch for: "" for a refusal from the arguments and files alone)."""
    seconds, done = timed(command, runs)
    shown = " ".join(["python", *map(shlex.quote, command[1:])])
    return shown, expected, done.returncode, len(done.stderr.strip().splitlines()), seconds, needs


def main(heavy: bool = True) -> list[tuple[str, int, int, int, float, str]]:
    folder = Path(tempfile.mkdtemp(prefix="minibert-usage-"))
    made = scratch(folder)
    bare, _ = timed([sys.executable, "-c", "pass"])
    rows = []
    for target, argv, _ in CASES.values():
        rows.append(row([sys.executable, *target.split(), *(a.format(**made) for a in argv)], 2))
    (folder / "holder.py").write_text(HOLDER)
    held = folder / "held"
    holder = subprocess.Popen([sys.executable, str(folder / "holder.py"), str(held)], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    try:
        holder.stdout.readline()  # "held"
        for target, argv in HELD.values():
            rows.append(row([sys.executable, target, *(a.format(held=held) for a in argv)], 3))
    finally:
        holder.kill()
        holder.wait()
    if heavy:
        (folder / "user_base.py").write_text("from user_module import Thing\n\n\nclass A(Thing):\n    pass\n")
        (folder / "user_module.py").write_text("class Thing:\n    pass\n")
        with zipfile.ZipFile(folder / "other.zip", "w") as archive:
            archive.writestr("x", "not a checkpoint")
        paths = {"user_base": folder / "user_base.py", "zip": folder / "other.zip", "out": folder / "export"}
        for argv, why in HEAVY:
            rows.append(row([sys.executable, *(a.format(**paths) for a in argv)], 2, runs=1, needs=why))
    print(f"`python -c pass`: {bare:.2f} s\n")
    print("| command | status | lines | seconds | needs torch |\n|---|---|---|---|---|")
    for shown, _, code, lines, seconds, needs in rows:
        print(f"| `{shown}` | {code} | {lines} | {seconds:.2f} | {needs or 'no'} |")
    return rows


if __name__ == "__main__":
    main()
