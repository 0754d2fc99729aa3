"""The one policy every entry point parses its options by: an option is spelled in full (a prefix such as
`--language` for `--languages` is refused, never taken for the longer option), and a usage error is one line,
`<prog>: error: <what>`, with exit status 2, answered before anything heavy (torch, Lightning) is imported.

A number an option takes is checked as it is parsed, by a `type=` below (`share`, `positive_int`,
`nonnegative_int`, or `number(range)` for another range), so a bad one is refused in that line, naming the option,
the value and the range allowed, rather than failing later, deep in the code, with a traceback. A value that is
wrong only beside another (two shares that add up to more than 1, an index past a set's end) is refused by the
entry point with `parser.error`, in the same form.

Example:
    >>> p = ArgumentParser(prog="demo")
    >>> _ = p.add_argument("--languages")
    >>> p.parse_args(["--languages", "dyck"]).languages
    'dyck'
    >>> share("0.15"), positive_int("8")
    (0.15, 8)
    >>> share("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 1.5 is not allowed: it must be a number in [0, 1]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from minibert.validation import NONNEGATIVE_INT, POSITIVE_INT, UNIT_INTERVAL, Range

EXIT_USAGE = 2


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with abbreviations off and a one-line error."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def number(allowed: Range) -> Callable[[str], float]:
    """An argparse `type` for a number in `allowed` (an integer where it asks for one): parsed as `float` or `int`
    would parse it, so every value accepted before is read the same; NaN, infinity, a value outside the range and
    a word are refused in one line, which argparse prefixes with the option (`argument --dim: -1 is not allowed:
    it must be a positive integer`)."""

    def parse(text: str) -> float:
        try:
            value = int(text) if allowed.integer else float(text)
        except ValueError:
            value = None
        if value is None or not allowed.allows(value):
            shown = repr(text) if not text or any(c.isspace() for c in text) else text  # '' or a line break: quoted
            raise argparse.ArgumentTypeError(f"{shown} is not allowed: it must be {allowed}")
        return value

    return parse


share = number(UNIT_INTERVAL)  # a share or a probability: [0, 1]
positive_int = number(POSITIVE_INT)  # a count or a width: 1 or more
nonnegative_int = number(NONNEGATIVE_INT)  # a seed (numpy takes any integer >= 0) or an index: 0 or more


def readable_file(text: str) -> Path:
    """An argparse `type` for a file to read: one that is missing, a folder, or not readable by this process is
    refused as the option is parsed, before anything is loaded."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: a folder, not a file")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text}: not readable (permission denied)")
    return path
