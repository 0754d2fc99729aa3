"""A run that crashes in a plug-in's own code is a bug to fix, not an outcome to count: the worker names the
exception, the plug-in's file and line, and the runner stops trying that cell (`scripts/ablate.py`) or the whole
comparison (`scripts/compare.py`) at once.

Plug-in code is any file outside the minibert package, the standard library and the installed packages: an
objective or language a user wrote, wherever it lies. A loss that is not finite before any finite one (the first
training step) comes from the objective, not from a learning rate: when that objective is a plug-in, it is a
crash of the plug-in too.
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

import minibert

PACKAGE = Path(minibert.__file__).resolve().parent
INSTALLED = {Path(p).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")
             if (p := sysconfig.get_paths().get(key))}  # fmt: skip


class PluginCrash(RuntimeError):
    """A run stopped by an exception raised in plug-in code; the message names it and where (one line)."""


def is_plugin_file(filename: str) -> bool:
    """Whether `filename` is a user's plug-in: a real file outside minibert and the installed libraries."""
    if filename.startswith("<"):  # <frozen ...>, <string>
        return False
    path = Path(filename).resolve()
    return not (path.is_relative_to(PACKAGE) or any(path.is_relative_to(p) for p in INSTALLED))


def plugin_crash(err: BaseException) -> PluginCrash | None:
    """`err`, or the innermost error of its chain (a wrapper such as jsonargparse's keeps the original as its
    cause), as a PluginCrash when it was raised in plug-in code (its innermost such frame), or is a first-step
    non-finite loss of a plug-in objective (`minibert.training.module.NonFiniteLoss`); else None."""
    chain, seen = [], set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        chain.append(err)
        err = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    for e in reversed(chain):  # the original error first
        where = getattr(e, "objective_file", None) if getattr(e, "first", False) else None
        if where is not None and is_plugin_file(where):
            return PluginCrash(f"{e} ({where})")
        frames = [f for f in traceback.extract_tb(e.__traceback__) if is_plugin_file(f.filename)]
        if frames:
            said = " ".join(str(e).split()) or "(no message)"
            return PluginCrash(f"{type(e).__name__}: {said}, raised at {frames[-1].filename}, line {frames[-1].lineno}")
    return None
