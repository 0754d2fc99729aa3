"""A run that crashes in a plug-in's own code is a bug to fix, not an outcome to count: the worker names the
exception, the plug-in's file and line, and the runner stops trying that cell (`scripts/ablate.py`) or the whole
comparison (`scripts/compare.py`) at once.

Plug-in code is any file outside the minibert package, the standard library and the installed packages: an
objective or language a user wrote, wherever it lies. A plug-in objective's loss that is not finite, at any step,
stops its cell the same way, in one line naming the objective's file and the step: before any finite loss it comes
from the objective's code; after finite ones, from its code or the learning rate, as the losses before it tell
(`minibert.training.module.NonFiniteLoss`).
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
    """A run stopped by plug-in code; the message names what happened and where, `what` how the run ended and
    `fix` what to do (`line`: all of it in one line)."""

    def __init__(self, message: str, what: str = "crashed in plug-in code", fix: str = "fix the plug-in") -> None:
        super().__init__(message)
        self.what, self.fix = what, fix

    def __reduce__(self):  # it crosses from a worker to its runner whole
        return type(self), (str(self), self.what, self.fix)

    def line(self, log: Path) -> str:
        return f"{self.what}: {self} (log: {log}); {self.fix} and run again"


def is_plugin_file(filename: str) -> bool:
    """Whether `filename` is a user's plug-in: a real file outside minibert and the installed libraries."""
    if filename.startswith("<"):  # <frozen ...>, <string>
        return False
    path = Path(filename).resolve()
    return not (path.is_relative_to(PACKAGE) or any(path.is_relative_to(p) for p in INSTALLED))


def plugin_crash(err: BaseException) -> PluginCrash | None:
    """`err`, or the innermost error of its chain (a wrapper such as jsonargparse's keeps the original as its
    cause), as a PluginCrash when it was raised in plug-in code (its innermost such frame), or is a non-finite
    loss of a plug-in objective (`minibert.training.module.NonFiniteLoss`); else None."""
    chain, seen = [], set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        chain.append(err)
        err = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    for e in reversed(chain):  # the original error first
        if (where := getattr(e, "objective_file", None)) is not None and is_plugin_file(where):  # a NonFiniteLoss
            fix = "fix the plug-in" if e.first else "fix the plug-in (or, if it diverged, lower model.init_args.lr)"
            return PluginCrash(f"{e} ({where})", what=f"stopped at step {e.step}", fix=fix)
        frames = [f for f in traceback.extract_tb(e.__traceback__) if is_plugin_file(f.filename)]
        if frames:
            said = " ".join(str(e).split()) or "(no message)"
            return PluginCrash(f"{type(e).__name__}: {said}, raised at {frames[-1].filename}, line {frames[-1].lineno}")
    return None
