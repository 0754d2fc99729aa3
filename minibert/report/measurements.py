"""Figures measured outside any grid's table (a timing, a one-off check), kept typed and dated in
`results/measurements.yaml` so that pages query them instead of typing them.

Each entry: `what` was measured, its `unit`, `values` (name -> list of numbers, one per repetition), the
`command` that measured it, the `date` and the `machine`; optionally the `settings` (name -> number) of the runs
it measured where they varied, so that a page says them from the same record; and `bounds` (name -> number,
in the entry's unit), the most a test or benchmark that checks the figure allows, so that the page and the
check state one promise from one place.

Example:
    >>> m = Measurement("x", "a timing", "s", {"on": [2.0, 4.0]}, "bash b.sh", "2026-12-06", "2-core")
    >>> m.mean("on")
    3.0
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

import yaml

from minibert.tables.query import QueryError
from minibert.tables.stats import number

FILE = Path("results/measurements.yaml")
FIELDS = ("what", "unit", "values", "command", "date", "machine")


@dataclass(frozen=True)
class Measurement:
    name: str
    what: str
    unit: str
    values: dict[str, list[float]]
    command: str
    date: str
    machine: str
    settings: dict[str, float] | None = None
    bounds: dict[str, float] | None = None  # the most the test or benchmark that checks it allows

    def setting(self, key: str) -> float:
        if not self.settings or key not in self.settings:
            raise QueryError(f"{FILE}: entry {self.name!r} records no setting {key!r}")
        return self.settings[key]

    def bound(self, key: str) -> float:
        """The most the check of `key` allows (a benchmark's wall-clock limit, a claim test's tolerance)."""
        if not self.bounds or key not in self.bounds:
            raise QueryError(f"{FILE}: entry {self.name!r} records no bound {key!r}")
        return self.bounds[key]

    def shown_bound(self, key: str) -> str:
        """The bound `key` as a page shows it: '300', '0.02', '1e-6'."""
        return format(self.bound(key), "g").replace("e-0", "e-")

    def mean(self, key: str) -> float:
        if key not in self.values:
            raise QueryError(f"{FILE}: entry {self.name!r} has no values {key!r}")
        return sum(self.values[key]) / len(self.values[key])

    def shown(self, key: str, digits: int = 1) -> str:
        """The mean of the values `key` as a page shows it: `digits` decimals, thousands separated."""
        return number(self.mean(key), 1, digits)

    def listed(self, key: str, digits: int = 0) -> str:
        """Every value of `key` as a sentence lists them: '187, 182 and 176'."""
        self.mean(key)  # one line naming the entry, where it has no such values
        shown = [number(v, 1, digits) for v in self.values[key]]
        return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]

    def shown_setting(self, key: str) -> str:
        """The setting `key` as a page shows a whole number: thousands separated."""
        return number(self.setting(key), 1, 0)

    def least(self, key: str) -> float:
        """The smallest of the values `key`."""
        self.mean(key)
        return min(self.values[key])

    def most(self, key: str) -> float:
        """The largest of the values `key` (a bound over repetitions: the widest difference seen)."""
        self.mean(key)
        return max(self.values[key])

    def seeds(self, key: str) -> list[int]:
        """The seeds of an entry whose values `key` are one a seed, from seed 0 on."""
        self.mean(key)
        return list(range(len(self.values[key])))

    def excess(self, key: str, over: str) -> float:
        """How much larger the mean of `key` is than that of `over`, as a share of it: 1.17 over 1.0 -> 0.17."""
        return self.mean(key) / self.mean(over) - 1


def load(root: str | Path = ".") -> dict[str, Measurement]:
    """Every entry of the file under `root`; QueryError naming the entry and field that is missing or wrong."""
    path = Path(root) / FILE
    if not path.is_file():
        return {}
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise QueryError(f"{path}: not YAML ({err.__class__.__name__})") from None
    if not isinstance(raw, dict):
        raise QueryError(f"{path}: not a mapping of entry names to entries")
    out = {}
    for name, entry in raw.items():
        missing = [f for f in FIELDS if not isinstance(entry, dict) or f not in entry]
        if missing:
            raise QueryError(f"{path}: entry {name!r} lacks {', '.join(missing)}")
        values = entry["values"]
        if not isinstance(values, dict) or not all(
            isinstance(v, list) and v and all(isinstance(x, int | float) for x in v) for v in values.values()
        ):
            raise QueryError(f"{path}: entry {name!r}: values must map names to lists of numbers")
        settings, bounds = entry.get("settings"), entry.get("bounds")
        for field, given in (("settings", settings), ("bounds", bounds)):
            if given is not None and not (isinstance(given, dict) and all(
                    isinstance(v, int | float) for v in given.values())):  # fmt: skip
                raise QueryError(f"{path}: entry {name!r}: {field} must map names to numbers")
        date = entry["date"]
        out[name] = Measurement(name, str(entry["what"]).strip(), str(entry["unit"]), values, str(entry["command"]),
                                date.isoformat() if isinstance(date, datetime.date) else str(date),
                                str(entry["machine"]), settings, bounds)  # fmt: skip
    return out
