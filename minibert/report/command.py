"""`python -m minibert.report`'s options and the refusals that need only them, apart from the report engine
(minibert.report.render, which imports pandas, matplotlib and Jinja2: seconds on a loaded machine), so that a
usage error is answered before any of it is imported."""

from __future__ import annotations

import argparse
from pathlib import Path

from minibert.commandline import ArgumentParser

PROG = "python -m minibert.report"


def parser(description: str = "", epilog: str = "") -> ArgumentParser:
    """The command's parser; the engine gives it its documentation (render's docstring) for --help."""
    p = ArgumentParser(prog=PROG, description=description, epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page would change")
    p.add_argument("--root", default=".", help="the repository (default: here)")
    return p


def problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the parsed arguments before any table is read, in one line, or None."""
    if not Path(args.root).is_dir():
        return f"--root {args.root}: no such folder"
    return None
