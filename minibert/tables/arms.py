"""The arm registry: how every page and dashboard names an objective, read once from `configs/arms.yaml`.

An arm is keyed by the objective class its runs' configs build (the `objective` column of a results table). One
the registry does not hold is named by its class and read on its own `val/acc`, so an objective added to a grid
reaches every page that lists the grid's objectives without a line of Python.

Example:
    >>> arm("MaskedLM").label, arm("MyObjective").label, arm("MyObjective").own
    ('mlm', 'MyObjective', (('val/acc', 'val/acc', ''),))
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from minibert.checkout import CHECKOUT
from minibert.tables.table import TableError

FILE = Path("configs/arms.yaml")
KEYS = {"label", "description", "cloze", "own", "published"}


@dataclass(frozen=True)
class Published:
    label: str  # how the paper's table names it
    figures: tuple[float, ...]


@dataclass(frozen=True)
class Arm:
    key: str  # the objective class
    label: str
    description: str = ""
    cloze: bool = True  # its pre-training answers the cloze (False: another question, and no cloze figure)
    own: tuple[tuple[str, str, str], ...] = (("val/acc", "val/acc", ""),)  # (name, metric, category), headline first
    published: Published | None = None


@functools.cache
def registry(root: Path = CHECKOUT) -> dict[str, Arm]:
    """Every arm `root/configs/arms.yaml` holds; TableError in one line for one it cannot read."""
    path = Path(root) / FILE
    if not path.is_file():
        return {}
    try:
        found = yaml.safe_load(path.read_text()) or {}
        arms = {}
        for key, entry in found.items():
            if not isinstance(entry, dict) or not {"label"} <= set(entry) <= KEYS:
                raise ValueError(f"{key}: give label, with optional {', '.join(sorted(KEYS - {'label'}))}")
            own = tuple(tuple(str(x) for x in figure) for figure in entry.get("own", [])) or Arm(key, key).own
            if any(len(figure) != 3 for figure in own):
                raise ValueError(f"{key}: each of `own` is [name, metric, category]")
            published = entry.get("published")
            if not isinstance(cloze := entry.get("cloze", True), bool):
                raise ValueError(f"{key}: cloze is true or false")
            arms[str(key)] = Arm(str(key), str(entry["label"]), str(entry.get("description", "")), cloze, own,
                                 Published(str(published["label"]), tuple(map(float, published["figures"])))
                                 if published else None)  # fmt: skip
        return arms
    except (yaml.YAMLError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise TableError(f"{path}: not an arm registry: {' '.join(str(err).split())}") from None


def arm(key: str, root: Path = CHECKOUT) -> Arm:
    """The registered arm `key`, or one named by it (an objective the registry does not hold)."""
    return registry(Path(root)).get(key) or Arm(key, key)
