"""Is my objective better, and by about how much? Comparisons that add seeds until every verdict is decided.

A comparison names its arms, either a plug-in objective judged against every shipped objective on the
languages of `configs/compare.yaml` (`minibert.compare.yardsticks`; the shipped arms' runs committed once,
`minibert.compare.committed`), or experiments of a grid; it then runs
seed after seed through `minibert.sweep.Sweep` and looks at each pair's confidence sequence after every seed
(`minibert.compare.comparison`, which keeps the design and the record), until each pair is decided, equivalent,
capped or out of time (`minibert.compare.session`). `scripts/compare.py` is its command line.

Example:
    >>> compare(Request(objective="docs/examples/mask_rate_30.py", languages=["dyck"], minutes=15))  # doctest: +SKIP
    0
"""

import importlib

_WHERE = {  # name -> module: imported when first asked for, so that a command line answers bad input before torch
    "ComparisonError": "minibert.compare.errors",
    "borrow": "minibert.compare.committed",
    "Pair": "minibert.compare.comparison",
    "Request": "minibert.compare.request",
    "compare": "minibert.compare.session",
    "find_objective": "minibert.compare.objective",
    "next_steps": "minibert.compare.reading",
    "probe_lines": "minibert.compare.reading",
    "judged_figures": "minibert.compare.yardsticks",
    "plugin_grid": "minibert.compare.yardsticks",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'minibert.compare' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
