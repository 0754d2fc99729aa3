"""The default grid on a quiet machine and on one kept busy, side by side: does a sweep slow down by the load's
share of the cores, and no more?

    python benchmarks/load.py                  # writes results/load.md: both wall times, the expected slowdown
    python benchmarks/load.py --busy 2 --workers 2

Each sweep is the README's first command into a folder of its own (`scripts/ablate.py --out <tmp>`, every run
trained, nothing reused). The loaded one runs beside `--busy` processes that spin on the CPU, started by this
benchmark and stopped when it ends. With `workers` runs of one thread each and `busy` spinners on `cores`
cores, a fair scheduler gives each run min(1, cores / (workers + busy)) of a core, so the runs' own wall times
should grow by (workers + busy) / cores where that exceeds 1 (2.0 for 2 runs and 2 spinners on 2 cores); the
sweep's wall time by somewhat less (its serial parts, the cells' check and the report, compete with the
spinners alone). A slowdown well past that is a sweep that oversubscribes the cores: more threads than runs,
or threads that spin while they wait. Each worker's threads' CPU time is read from /proc while it trains.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPIN = "while True: pass"


def busy_threads(stop: threading.Event, ticks: dict[tuple[str, str], int]) -> None:
    """While `stop` is unset, the CPU time (clock ticks) of every thread of every process that trains a run (a
    child of the fork server, whose command line names it), read from /proc every half second."""
    while not stop.wait(0.5):
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if b"forkserver" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                    continue
                for tid in os.listdir(f"/proc/{pid}/task"):
                    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
                    ticks[(pid, tid)] = int(fields[11]) + int(fields[12])  # utime + stime
            except (OSError, IndexError, ValueError):  # a process that ended while read
                continue


def most_busy_threads(ticks: dict[tuple[str, str], int], least: int = 50) -> int:
    """The most threads one worker ran for `least` ticks or more (half a second): one where runs do not
    oversubscribe the cores."""
    busy: dict[str, int] = {}
    for (pid, _), t in ticks.items():
        busy[pid] = busy.get(pid, 0) + (t >= least)
    return max(busy.values(), default=0)


def sweep(out: Path, workers: int) -> dict:
    """One sweep of the default grid into `out`: its wall time, the runs' own, and the threads its workers ran."""
    ticks: dict[tuple[str, str], int] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=busy_threads, args=(stop, ticks), daemon=True)
    watcher.start()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "scripts/ablate.py", "--out", str(out), "--workers", str(workers)],
                          cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - start
    stop.set()
    watcher.join()
    if done.returncode != 0:
        raise SystemExit(f"load.py: the sweep into {out} failed ({done.returncode}): {done.stderr[-1000:]}")
    figures = json.loads((out / "run.json").read_text())["figures"]
    return {"wall": wall, "runs": figures["runs_wall_time_s"], "trained": figures["runs_trained"],
            "threads": most_busy_threads(ticks)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--busy", type=int, default=2, help="spinning processes beside the loaded sweep (default 2)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="the sweep's workers (default: cores)")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "load.md")
    args = p.parse_args(argv)
    cores = os.cpu_count() or 1
    folder = Path(tempfile.mkdtemp(prefix="minibert-load-"))
    quiet = sweep(folder / "quiet", args.workers)
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
    try:
        loaded = sweep(folder / "loaded", args.workers)
    finally:
        for s in spinners:
            s.kill()
    share = max(1.0, (args.workers + args.busy) / cores)
    command = " ".join(["python benchmarks/load.py", *(argv if argv is not None else sys.argv[1:])])
    rows = [("quiet", quiet), (f"{args.busy} spinning processes", loaded)]
    lines = [
        "# The default grid on a quiet machine and beside spinning processes",
        "",
        f"`{command}` on {cores} cores ({os.uname().machine}), {args.workers} workers, {quiet['trained']} runs a "
        f"sweep. Expected slowdown of a run beside {args.busy} spinners: ({args.workers} + {args.busy}) / {cores} = "
        f"{share:.2f}.",
        "",
        "| machine | sweep wall time (s) | runs' own wall times (s) | busy threads of a training worker (at most) |",
        "|---|---:|---:|---:|",
        *(f"| {name} | {r['wall']:.1f} | {r['runs']:.1f} | {r['threads']} |" for name, r in rows),
        "",
        f"Slowdown: the sweep {loaded['wall'] / quiet['wall']:.2f}x, its runs {loaded['runs'] / quiet['runs']:.2f}x, "
        f"against {share:.2f}x expected from the load's share of the cores.",
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
