"""Is my objective better, and by about how much? Comparisons that add seeds until every verdict is decided.

A comparison names its arms, either a plug-in objective judged against every shipped objective on the
languages of `configs/compare.yaml` (`minibert.compare.yardsticks`), or experiments of a grid; it then runs
seed after seed through `minibert.sweep.Sweep` and looks at each pair's confidence sequence after every seed
(`minibert.report.comparison`, which keeps the design and the record), until each pair is decided, equivalent,
capped or out of time (`minibert.compare.session`). `scripts/compare.py` is its command line.

Example:
    >>> compare(Request(objective="docs/examples/mask_rate_30.py", languages=["dyck"], minutes=15))  # doctest: +SKIP
    0
"""

from minibert.compare.objective import find_objective
from minibert.compare.reading import next_steps, probe_lines
from minibert.compare.request import Request
from minibert.compare.session import compare
from minibert.compare.yardsticks import pair_figures, plugin_grid
from minibert.report.comparison import ComparisonError, Pair

__all__ = [
    "ComparisonError",
    "Pair",
    "Request",
    "compare",
    "find_objective",
    "next_steps",
    "pair_figures",
    "plugin_grid",
    "probe_lines",
]
