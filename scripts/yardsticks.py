"""Run the shipped objectives once, at each language's compare recipe: the committed yardsticks a plug-in's
comparison pairs its seeds with, so that `scripts/compare.py` trains only the plug-in.

    python scripts/yardsticks.py --languages dyck --seeds 40     # into results/yardsticks/dyck/

The arms and the recipe are those of --yardsticks (configs/compare.yaml). The table always takes this
machine's figures and today's code (a comparison pairs with the table only while its code is today's, and
`python -m minibert.report --check` fails when it is not). Runs are resumable, as ablate.py's.
Exit codes as ablate.py's: 0, 1 (a run failed), 2 (bad input), 3 (the machine).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from minibert.commandline import ArgumentParser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = ArgumentParser(prog="yardsticks.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--languages", default="dyck", help="comma-separated, of --yardsticks (default: dyck)")
    p.add_argument("--seeds", type=int, default=40, help="seeds 0 .. N-1 of every shipped arm (default 40)")
    p.add_argument("--yardsticks", default="configs/compare.yaml", help="the languages, arms and recipes")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel runs (default: the cores)")
    args = p.parse_args(argv)
    args.languages = [x.strip() for x in args.languages.split(",") if x.strip()]
    if args.seeds < 1 or args.workers < 1:
        p.error("--seeds and --workers must be at least 1")
    import yaml  # light; the languages are checked before anything heavy is imported

    from minibert.checkout import CHECKOUT

    try:
        known = yaml.safe_load((CHECKOUT / args.yardsticks).read_text())["languages"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        p.error(f"--yardsticks {args.yardsticks}: cannot read its languages ({type(err).__name__})")
    if not args.languages or (unknown := [x for x in args.languages if x not in known]):
        p.error(f"--languages: {(unknown or [''])[0]!r} is not in {args.yardsticks}; valid: {', '.join(known)}")
    args.command = " ".join(["python scripts/yardsticks.py", *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from minibert.compare.committed import committed_folder, yardstick_grid
    from minibert.compare.yardsticks import relative
    from minibert.report.render import publish
    from minibert.sweep import Sweep

    code = 0
    for language in args.languages:
        grid = yardstick_grid(args.yardsticks, language)
        status = Sweep(relative(grid), committed_folder(language), seeds=list(range(args.seeds)), workers=args.workers,
                       command=args.command, publish=True, prog="yardsticks.py", render=publish).run()  # fmt: skip
        code = max(code, status)
    return code


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
