"""Which code made a result: a hash of the package's sources, one of each plug-in the run named, and the
git commit with a dirty flag.

The hashes decide whether a finished ablation run can be reused: they work in a clean clone, in a copy
without git, and change with any uncommitted edit. The git fields are recorded for people. What only reads
results or orders runs is left out of the package hash (`NOT_HASHED`: the report engine, the statistics, the
sequential comparisons, the sweep that drives a grid's runner, the export to `transformers`, the checks a plug-in
author runs), so editing it reruns nothing; no training code imports them (tests/harness/test_ablate_faults.py).

A plug-in is a module outside the package named by class path in the run's config (an objective, a
language, a masking recipe, a callback, ...). Its hash covers the sources of the folder it is imported from
as a package (`my_plugins.masks` -> every `.py` under `my_plugins/`), so a helper it imports from a
sibling module counts too; a single-file module is hashed alone. Installed libraries (under the
interpreter's own folders: lightning's loggers, torch) are the environment, not plug-ins, and are skipped.

Example:
    >>> version = code_version()
    >>> len(version["source_hash"]), sorted(version)
    (16, ['files', 'git_commit', 'git_dirty', 'plugins', 'source_hash'])
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import site
import subprocess
import sysconfig
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # the minibert package
# they read results or order runs, never make them: folders (ending in '/') and files, relative to the package
NOT_HASHED = ("report/", "tables/", "stats/", "compare/", "export/", "sweep.py", "testing.py")


@functools.cache
def source_hash(package: Path = PACKAGE) -> str:
    """sha256 (16 hex digits) over the relative path and bytes of every `.py` file of the package."""
    digest = hashlib.sha256()
    for relative, path in _package_files(package):
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _package_files(package: Path = PACKAGE) -> list[tuple[str, Path]]:
    """(path relative to the package, path) of every source file the package hash covers, in order."""
    found = ((path.relative_to(package).as_posix(), path) for path in sorted(package.rglob("*.py")))
    return [(rel, path) for rel, path in found if not rel.startswith(NOT_HASHED) and "__pycache__" not in path.parts]


def _installed(path: Path) -> bool:
    """Whether `path` lies in the interpreter's own folders: the standard library or a site-packages."""
    roots = {sysconfig.get_path(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {*site.getsitepackages(), site.getusersitepackages()}
    return any(path.is_relative_to(Path(r).resolve()) for r in roots if r)


def plugin_hash(module: str) -> str | None:
    """sha256 (16 hex digits) of a plug-in module's sources (see the module docstring), '' for a module that
    is not a plug-in (the package's own, or an installed library), None when it cannot be located."""
    files = _plugin_files(module)
    if files is None or not files:
        return None if files is None else ""
    digest = hashlib.sha256()
    for relative, path in files:
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _plugin_files(module: str) -> list[tuple[str, Path]] | None:
    """(path relative to the plug-in folder's parent, path) of every source file `plugin_hash` covers; [] for a
    module that is not a plug-in, None for one that cannot be located."""
    if module == PACKAGE.name or module.startswith(PACKAGE.name + "."):
        return []
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a parent package that does not import, or a malformed name
        return None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return None
    path = Path(spec.origin).resolve()
    if _installed(path):
        return []
    top = path.parent if path.name == "__init__.py" else path
    for _ in module.split(".")[1:]:  # `a.b.c` lives in a/b/c.py: walk up to the folder of `a`
        top = top.parent
    files = sorted(top.rglob("*.py")) if top.is_dir() else [top]
    return [(f.relative_to(top.parent).as_posix(), f) for f in files if "__pycache__" not in f.parts]


@functools.cache
def package_files() -> dict[str, str]:
    """{file: sha256 (16 hex digits)} of every package file `source_hash` covers, named as `minibert/...`."""
    files = _package_files()
    return {f"{PACKAGE.name}/{rel}": hashlib.sha256(path.read_bytes()).hexdigest()[:16] for rel, path in files}


def code_files(paths: Iterable[str]) -> dict[str, str]:
    """{file: sha256 (16 hex digits)} of every source file behind a run: the package's (as `minibert/...`) and
    those of the plug-ins among these class paths. Stored in checkpoints, so that a resume can name the files
    that changed since the checkpoint was written."""
    files = []
    for module in sorted({p.rsplit(".", 1)[0] for p in paths if "." in p}):
        files += _plugin_files(module) or []
    return {**package_files(), **{rel: hashlib.sha256(path.read_bytes()).hexdigest()[:16] for rel, path in files}}


def changed_files(saved: dict[str, str], now: dict[str, str]) -> list[str]:
    """The files whose hash differs between two `code_files`, with those only one side has.

    >>> changed_files({"a.py": "1", "b.py": "2"}, {"a.py": "1", "b.py": "3", "c.py": "4"})
    ['b.py', 'c.py (new)']
    """
    differ = sorted(k for k in saved.keys() | now.keys() if saved.get(k) != now.get(k))
    return [f + (" (new)" if f not in saved else " (removed)" if f not in now else "") for f in differ]


def class_paths(config) -> set[str]:
    """Every `class_path` value in a (nested) config."""
    if isinstance(config, dict):
        found = {config["class_path"]} if isinstance(config.get("class_path"), str) else set()
        return found.union(*(class_paths(v) for v in config.values()))
    if isinstance(config, list):
        return set().union(*(class_paths(v) for v in config))
    return set()


def git_state(folder: Path = PACKAGE) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout holding `folder`, or (None, None) without git or a checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "."],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit, bool(status.strip())


@functools.cache
def _hash_as_imported(module: str) -> str | None:
    return plugin_hash(module)


def running_plugin_hashes(paths: Iterable[str]) -> dict[str, str | None]:
    """Module -> `plugin_hash` for the plug-ins among these class paths (`pkg.mod.Class` -> `pkg.mod`), of the
    code this process runs: each module is hashed once, when first asked (right after its config imported it),
    so a plug-in edited later, which this process does not import again, keeps the hash of the code that ran."""
    modules = {p.rsplit(".", 1)[0] for p in paths if "." in p}
    hashes = {m: _hash_as_imported(m) for m in sorted(modules)}
    return {m: h for m, h in hashes.items() if h != ""}


def code_version(plugins: dict[str, str | None] | None = None) -> dict:
    """What a run records: {'source_hash': ..., 'files': {file: hash} of the package's files behind it (so a
    report can name the files in which a table's code differs from today's), 'plugins': {module: hash}
    (`running_plugin_hashes` of its config), 'git_commit': ... or None, 'git_dirty': ... or None}."""
    commit, dirty = git_state()
    return {"source_hash": source_hash(), "files": package_files(), "plugins": dict(plugins or {}),
            "git_commit": commit, "git_dirty": dirty}  # fmt: skip


def stale_because(code: dict, now_hashes: dict[str, str | None] | None = None) -> str | None:
    """Why a run that recorded `code` (its summary's "code") was made by other code than this, or None.
    `now_hashes`: the plug-ins' hashes on disk now, filled in as they are read (one dict for many runs reads
    each plug-in once)."""
    made_by, here = code.get("source_hash"), source_hash()
    if made_by != here:
        return f"the package changed (source {made_by}, now {here})"
    now_hashes = {} if now_hashes is None else now_hashes
    for module, recorded in (code.get("plugins") or {}).items():
        if module not in now_hashes:
            now_hashes[module] = plugin_hash(module)
        now = now_hashes[module]
        if now is None:
            return f"its plug-in {module} cannot be located now"
        if now != recorded:
            return f"its plug-in {module} changed ({recorded}, now {now})"
    return None
