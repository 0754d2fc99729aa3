"""The one policy every entry point parses its options by: an option is spelled in full (a prefix such as
`--language` for `--languages` is refused, never taken for the longer option), and a usage error is one line,
`<prog>: error: <what>`, with exit status 2, answered before anything heavy (torch, Lightning) is imported.

Example:
    >>> p = ArgumentParser(prog="demo")
    >>> _ = p.add_argument("--languages")
    >>> p.parse_args(["--languages", "dyck"]).languages
    'dyck'
"""

from __future__ import annotations

import argparse

EXIT_USAGE = 2


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with abbreviations off and a one-line error."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")
