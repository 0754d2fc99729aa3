"""Paths of this checkout as pages and records name them: relative to the checkout, so that a page renders the
same in any clone and names no folder of the machine that made it. At the bottom of the house: the report and
the comparison records both use it."""

from __future__ import annotations

import re
from pathlib import Path

# an absolute path: quoted whole ('/a b/c'), or up to the next space, comma or semicolon; not `val/acc`
_ABSOLUTE = re.compile(r"'(/[^']+)'|(?<![\w.~/-])(/[^\s'\",;]+)")
CHECKOUT = Path(__file__).resolve().parents[1]


def without_absolute_paths(text: str, root: Path = CHECKOUT, elide: bool = True) -> str:
    """`text` with each absolute path made relative to the checkout `root`, and one outside it elided to its last
    part (kept whole if not `elide`), so a page names no folder of the machine that made it.

    >>> without_absolute_paths("--grid /r/configs/g.yaml --out '/tmp/a b/out', 1 s", Path("/r"))
    '--grid configs/g.yaml --out …/out, 1 s'
    >>> without_absolute_paths("--grid /r/configs/g.yaml --out /tmp/out", Path("/r"), elide=False)
    '--grid configs/g.yaml --out /tmp/out'
    """

    def relative(m: re.Match) -> str:
        path = Path(m[1] or m[2])
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
        return f"…/{path.name}" if elide else m[0]

    return _ABSOLUTE.sub(relative, text)
