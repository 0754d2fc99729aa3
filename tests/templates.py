"""Page templates copied into a scratch repository, for tests that render a page over constructed tables."""

from __future__ import annotations

import shutil
from pathlib import Path

from minibert.report.asked import asked
from minibert.report.measurements import FILE as MEASUREMENTS
from minibert.report.render import PAGES
from minibert.tables import saved

ROOT = Path(__file__).resolve().parents[1]


def copy_templates(root: Path, *names: str | Path) -> None:
    """Copy the templates `names` (relative to configs/pages) under `root`, with the shared files any page may
    import (`_*.j2`, never pages themselves), the figures measured outside any table it may quote and the configs
    it states settings from: config files, and the saved configs of the runs it states the settings of (a file
    already under `root` is kept)."""
    shutil.copytree(ROOT / "configs", root / "configs", ignore=shutil.ignore_patterns("pages"), dirs_exist_ok=True,
                    copy_function=lambda src, dst: None if Path(dst).exists() else shutil.copy2(src, dst))  # fmt: skip
    (root / PAGES).mkdir(parents=True, exist_ok=True)
    (root / MEASUREMENTS).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / MEASUREMENTS, root / MEASUREMENTS)
    for folder, experiment in asked().runs.values():
        if not (kept := saved.path(root / folder, experiment)).is_file():
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(saved.path(ROOT / folder, experiment), kept)
    for shared in (ROOT / PAGES).glob("_*.j2"):
        shutil.copy(shared, root / PAGES / shared.name)
    for name in names:
        (root / PAGES / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / PAGES / name, root / PAGES / name)
