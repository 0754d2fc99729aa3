"""One way to check a setting: `check(owner, name, value, allowed)` fails with one line that names the
setting, the value given and what is allowed.

Why not jsonargparse's restricted types (`PositiveInt`, `ClosedUnitInterval`, ...) in the signatures: the
languages, objectives and `EncoderConfig` are also built directly from Python (tests, plug-ins, notebooks),
where an annotation checks nothing, so the check must run in `__init__` anyway; and one check there gives
the same one-line message from the CLI and from Python.

Example:
    >>> check("EncoderConfig", "width", 32, POSITIVE_INT)
    >>> check("EncoderConfig", "width", 0, POSITIVE_INT)
    Traceback (most recent call last):
    ...
    ValueError: EncoderConfig.width=0 is not allowed: it must be a positive integer
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """Numbers (or integers) from `low` to `high`, both included unless `above` (low itself excluded).
    Booleans are never numbers here, and NaN or infinity never pass."""

    low: float | None = None
    high: float | None = None
    integer: bool = False
    above: bool = False

    def allows(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int if self.integer else (int, float)):
            return False
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            return False
        return self.high is None or value <= self.high

    def __str__(self) -> str:
        a_kind = "an integer" if self.integer else "a number"
        low, high = _number(self.low), _number(self.high)
        if self.low is not None and self.high is not None:
            return f"{a_kind} in [{low}, {high}]"
        if self.low == 0 and self.above or (self.integer and self.low == 1):
            return "a positive " + a_kind.split()[-1]
        if self.low is not None:
            return f"{a_kind} {'>' if self.above else '>='} {low}"
        return a_kind if self.high is None else f"{a_kind} <= {high}"


def _number(x: float | None) -> str:
    return str(int(x)) if x is not None and float(x).is_integer() else f"{x:g}" if x is not None else ""


POSITIVE_INT = Range(low=1, integer=True)
NONNEGATIVE_INT = Range(low=0, integer=True)
POSITIVE = Range(low=0, above=True)
NONNEGATIVE = Range(low=0)
UNIT_INTERVAL = Range(low=0, high=1)
SEED = Range(low=0, high=2**32 - 1, integer=True)  # numpy's seeds


def check(owner: str, name: str, value: object, allowed: Range) -> None:
    """Raise ValueError, in one line, unless `allowed` allows `value` (the setting `owner.name`)."""
    if not allowed.allows(value):
        raise ValueError(f"{owner}.{name}={value!r} is not allowed: it must be {allowed}")
