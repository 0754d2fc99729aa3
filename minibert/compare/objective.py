"""The objective a comparison judges: a plug-in file (`path.py`, or `path.py:Class`) or a class path."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

from minibert.compare.errors import ComparisonError


def find_objective(spec: str, plugins: list[str]) -> tuple[type, str, list[str]]:
    """(the class, its class path as a run's config names it, plug-in folders to import it from) for
    `path.py`, `path.py:Class` or `package.module.Class`."""
    from minibert.objectives import Objective

    file, _, cls_name = spec.partition(":") if spec.split(":")[0].endswith(".py") else (spec, "", "")
    if not file.endswith(".py"):
        return _by_class_path(spec, plugins, Objective)
    path = Path(file).resolve()
    if not path.is_file():
        raise ComparisonError(f"{file}: no such file")
    folder = str(path.parent)
    sys.path[:0] = [folder] if folder not in sys.path else []
    try:
        module = importlib.import_module(path.stem)
    except Exception as err:  # the plug-in's own code fails to import: one line, as `python -m minibert fit`
        where = f", line {err.lineno}" if isinstance(err, SyntaxError) and err.lineno else ""
        what = f"{type(err).__name__}: {getattr(err, 'msg', None) or err}"
        raise ComparisonError(f"{file}{where}: cannot import it ({what}); fix the plug-in and run again") from None
    found = {n: c for n, c in inspect.getmembers(module, inspect.isclass) if issubclass(c, Objective)
             and c.__module__ == module.__name__ and not inspect.isabstract(c)}  # fmt: skip
    if cls_name:
        if cls_name not in found:
            raise ComparisonError(f"{spec}: no objective {cls_name!r} in {file}; it defines {sorted(found)}")
        found = {cls_name: found[cls_name]}
    if len(found) != 1:
        what = "no Objective subclass" if not found else f"{len(found)} objectives ({', '.join(sorted(found))})"
        raise ComparisonError(f"{file} defines {what}: name one as {file}:ClassName")
    ((name, cls),) = found.items()
    return cls, f"{path.stem}.{name}", [*plugins, folder]


def _by_class_path(spec: str, plugins: list[str], base: type) -> tuple[type, str, list[str]]:
    module_name, _, name = spec.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError, ValueError) as err:
        raise ComparisonError(f"{spec}: cannot import it ({err}); give a file path, or --plugins DIR") from None
    if not (inspect.isclass(cls) and issubclass(cls, base)):
        raise ComparisonError(f"{spec} is not an Objective subclass")
    return cls, spec, plugins
