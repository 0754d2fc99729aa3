"""Looking things up in a nested config (dicts and lists), without importing torch or Lightning."""

from __future__ import annotations

from typing import Any


def find(tree: Any, key: str) -> Any:
    """The first value stored under `key` anywhere in nested dicts and lists (depth first), or None.

    >>> find({"model": {"init_args": {"objective": {"class_path": "MaskedLM"}}}}, "class_path")
    'MaskedLM'
    """
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        tree = list(tree.values())
    if isinstance(tree, list):
        for item in tree:
            if (found := find(item, key)) is not None:
                return found
    return None
