"""Is my objective better, and by about how much? One command, seeds added until every verdict is decided.

    python scripts/compare.py docs/examples/mask_rate_30.py            # a plug-in file (or a class path)
    python scripts/compare.py docs/examples/mask_rate_30.py --languages dyck --minutes 15
    python scripts/compare.py --grid configs/ablations/dyck.yaml --out results/dyck \\
        --arms dyck/pretrain/mlm,dyck/pretrain/span --metric val/gap/acc

A command line over minibert.compare (what is judged and when a pair stops: there and docs/statistics.md).
A plug-in's comparison goes to runs/compare/<Class>-pairs[-<languages>] (outside the committed pages); with
--publish, to results/compare/, and every page that reads it is rendered again.
Exit codes: 0, 1 (a run failed; its seed counts as failed), 2 (bad input, a plug-in that crashes), 3 (the
machine).
"""

import argparse
import os
import shlex
import sys
from pathlib import Path

from minibert.ablation.lock import Busy, check_free
from minibert.commandline import ArgumentParser
from minibert.compare.errors import ComparisonError
from minibert.compare.request import Request  # light: bad input is answered before torch is imported

EXIT_ENVIRONMENT = 3  # minibert.sweep's status for a folder another runner holds (that module imports torch)


def parse_args(argv: list[str] | None = None) -> Request:
    p = ArgumentParser(prog="compare.py", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add = p.add_argument
    add("objective", nargs="?", help="a plug-in file (path.py, or path.py:Class) or a class path")
    add("--languages", default="", help="with a plug-in: comma-separated, of --yardsticks (default: all)")
    add(
        "--yardsticks",
        default="configs/compare.yaml",
        help="the languages and arms a plug-in meets, and the band of win rates read as alike",
    )
    add("--finetune", action="store_true", help="with a plug-in: judge full fine-tuning, not the declared figures")
    add(
        "--fresh-yardsticks",
        action="store_true",
        help="with a plug-in: train the shipped arms here too, not pair with results/yardsticks/",
    )
    add("--grid", help="instead of a plug-in: a grid file whose experiments are the arms")
    add("--arms", default="", help="with --grid: two or more experiments, comma-separated; the first is A")
    add("--metric", help="with --grid: the figure judged, e.g. val/acc or val/gap/acc")
    add("--all-pairs", action="store_true", help="with --grid: every pair of --arms, not the first against each")
    add("--fails-below", type=float, help="with --grid: a seed below this value did not learn")
    add("--bounds", type=float, nargs=2, metavar=("LO", "HI"), help="with --grid: one arm's range, if not [0, 1]")
    add("--out", type=Path, help="results folder (default runs/compare/<objective>-pairs[-<languages>])")
    add("--publish", action="store_true", help="with a plug-in: into results/compare/, rendering every page again")
    add("--max-seeds", type=int, default=40, help="cap on seeds per pair (default 40)")
    add(
        "--minutes",
        type=float,
        help="stop before a seed that would pass this many minutes; refused up front when the "
        "first look (the seeds before any verdict, run at once) would pass it",
    )
    add("--overrun", action="store_true", help="with --minutes: run the first look even where it would pass them")
    add(
        "--shrink",
        action="store_true",
        help="with --minutes: where the first look would pass them, judge fewer "
        "pairs (the arms that cost most a seed left out), declared before any run",
    )
    add("--first-seed", type=int, default=0, help="seeds are first-seed, first-seed + 1, ...")
    add("--name", help="file name of the record in <out>/comparisons/ (default: verdicts)")
    add("--workers", type=int, default=2, help="parallel runs (default 2)")
    add("--plugins", action="append", default=[], metavar="DIR", help="as ablate.py's (repeatable)")
    args = vars(p.parse_args(argv))
    args |= {k: [x.strip() for x in args[k].split(",") if x.strip()] for k in ("languages", "arms")}
    args["bounds"] = tuple(args["bounds"]) if args["bounds"] else None
    command = " ".join(["python scripts/compare.py", *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    request = Request(**args, command=command)
    try:
        request.check()
        folder = request.folder()
    except ComparisonError as err:
        p.error(str(err))
    try:  # before any estimate is printed; the sweep takes the lock itself when it runs
        if folder is not None:
            check_free(folder)
    except Busy as err:
        p.exit(EXIT_ENVIRONMENT, f"{p.prog}: error: {err}\n")
    return request


def main(argv: list[str] | None = None) -> int:
    request = parse_args(argv)
    from minibert.compare.session import compare
    from minibert.report.render import publish

    return compare(request, render=publish)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
