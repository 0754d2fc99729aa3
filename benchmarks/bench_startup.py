"""What a run costs before and after its training steps, as an ablation worker pays it (run after run in one
process): the fixed cost of a one-step run, with the CLI's parser built anew for every run (as before) and
reused from the previous run (as now), alternating so that both see the same machine.

    python benchmarks/bench_startup.py --repeats 6

Prints a Markdown table: median seconds per one-step run (parse, build, validate twice, write), each way,
and their ratio. One torch thread, like the workers.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from minibert.commandline import ArgumentParser
from minibert.training import cli
from minibert.training.fit import fit

ROOT = Path(__file__).resolve().parent.parent


class _NeverCached(dict):
    def __contains__(self, key: object) -> bool:
        return False


def one_step(configs: list[str], root: Path, seed: int) -> float:
    start = time.perf_counter()
    fit(configs, ["--trainer.max_steps=1", "--trainer.val_check_interval=1", f"--seed_everything={seed}"], root)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=6)
    p.add_argument("--configs", default="configs/pretrain.yaml,configs/languages/dyck.yaml")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    configs = [str(ROOT / c) for c in args.configs.split(",")]
    cached = cli._PARSERS
    times: dict[str, list[float]] = {"parser built every run": [], "parser reused": []}
    with tempfile.TemporaryDirectory() as tmp:
        one_step(configs, Path(tmp) / "warm", 0)  # imports and first-use caches, paid once per worker
        for i in range(args.repeats):
            for way in times:
                cli._PARSERS = _NeverCached() if way == "parser built every run" else cached
                times[way].append(one_step(configs, Path(tmp) / f"{way[:6]}{i}", i))
    cli._PARSERS = cached
    before, after = (statistics.median(v) for v in times.values())
    print("| way | median s per one-step run | runs |\n|---|---|---|")
    for way, values in times.items():
        print(f"| {way} | {statistics.median(values):.2f} | {len(values)} |")
    print(f"\nreused / built: {after / before:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
