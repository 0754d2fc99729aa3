"""Time and peak memory of grading one validation set with Dyck's exact oracle, for a length and a form.

    python benchmarks/bench_oracle.py --length 128 --sentences 2000            # bidirectional
    python benchmarks/bench_oracle.py --length 128 --sentences 2000 --causal

Prints the measured wall time and the peak resident memory the grading added (sampled every millisecond),
next to the estimates `Dyck.oracle_cost` starts from (docs/languages.md, "Its cost").
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np

from minibert.commandline import ArgumentParser
from minibert.languages import Dyck
from minibert.masking import MaskingRecipe, mlm_categories
from minibert.oracle import mlm_grades

ROOT = Path(__file__).resolve().parent.parent


def resident() -> int:
    """This process's resident memory in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--length", type=int, default=32)
    p.add_argument("--max-depth", type=int, default=6)
    p.add_argument("--sentences", type=int, default=2000)
    p.add_argument("--causal", action="store_true")
    args = p.parse_args(argv)
    lang = Dyck(length=args.length, max_depth=args.max_depth)
    rng = np.random.default_rng(0)
    masked = MaskingRecipe().apply(lang.sample(rng, args.sentences), rng, lang)
    base, peak, done = resident(), [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], resident() - base)
            time.sleep(0.001)

    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.perf_counter()
    mlm_grades(lang, MaskingRecipe(), masked.inputs, masked.labels, args.causal, mlm_categories(lang))
    seconds = time.perf_counter() - start
    done.set()
    watcher.join()
    memory, estimate = lang.oracle_cost(args.sentences, args.causal)
    form = "causal" if args.causal else "bidirectional"
    print(f"{lang!r}, {args.sentences} sentences, {form}: {seconds:.1f} s, +{peak[0] / 1e6:.0f} MB resident "
          f"(estimates: {estimate:.1f} s, {memory / 1e6:.0f} MB for the cavity's pass)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
