"""How every committed table's axes would read if they came from the config LightningCLI resolves for each run
(what the run's saved `config.yaml` holds) instead of from minibert.tables.axes' own merge of the configs and
overrides that an experiment gives.

For each table, each experiment's config files and overrides are parsed by the `fit` parser a run uses (its
defaults, plug-in classes and subclass rules), and dumped as Lightning saves it. Two things are counted:

- the axes that reading gives (minibert.tables.axes.grid_axes with each experiment's resolved settings) against
  the table's axes today: columns each reading has that the other lacks, and experiments whose values differ;
- the settings an experiment gives that its run does not have: a setting of an earlier config that a later one
  made meaningless by replacing the plug-in class it belongs to (LightningCLI drops it; the merge keeps it).

Two differences from a run's own saved file are left out on purpose: seeds set to null stay null here (a run's
file holds the seed it used), and a budgeted run's steps are the configured ones (a run's file holds the steps
its budget planned). Both would only add differences.

    python benchmarks/axes_readings.py      # writes results/axes_readings.md
"""

from __future__ import annotations

import platform
import re
import shlex
import sys
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results/axes_readings.md"


def fit_parser():
    """The `fit` parser a run parses its config with, built by minibert's own LightningCLI (nothing runs)."""
    from minibert.training.cli import MiniBertCLI

    class Parsed(MiniBertCLI):
        def instantiate_classes(self) -> None:
            pass

        def _run_subcommand(self, subcommand: str) -> None:
            pass

    return Parsed(args=["fit", f"--config={ROOT / 'configs/pretrain.yaml'}"])._parser("fit")


def resolved(parser, experiment) -> dict:
    """The experiment's config as Lightning saves it (before seeds and budgets are filled in)."""
    args = [*(f"--config={ROOT / c}" for c in experiment.configs), *experiment.cli_args()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jsonargparse's note on skip_none, which Lightning's own save passes
        return yaml.safe_load(parser.dump(parser.parse_args(args), skip_none=False))


def plain(key: str) -> str:
    """A dotted key without its `init_args` parts: the same setting whether a config writes them or not."""
    return ".".join(p for p in key.split(".") if p != "init_args")


def plugins(out: Path) -> list[str]:
    """The folders the table's runs imported plug-ins from (`--plugins` of its run.json command)."""
    import json

    command = json.loads((out / "run.json").read_text()).get("command", "") if (out / "run.json").is_file() else ""
    words = shlex.split(command)
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--plugins"]


def reading(out: Path, parser) -> dict:
    from minibert.tables import axes
    from minibert.tables.record import grid_of

    for folder in plugins(out):
        sys.path.insert(0, str(ROOT / folder))
    grid = grid_of(out, ROOT)
    started = time.perf_counter()
    trees = {e.name: resolved(parser, e) for e in grid.experiments}
    seconds = time.perf_counter() - started

    def from_saved(e) -> dict:
        flat = {k.removesuffix("."): v for k, v in axes._flat(trees[e.name]).items()}
        return {k: v for k, v in flat.items() if not k.startswith(axes._IGNORED)}

    today, saved = axes.grid_axes(grid, ROOT), axes.grid_axes(grid, ROOT, read=from_saved)
    columns_today, columns_saved = list(next(iter(today.values()))), list(next(iter(saved.values())))
    differ = [e for e in today if any(today[e].get(c) != saved[e].get(c) for c in {*today[e], *saved[e]})]
    stale = {}
    for e in grid.experiments:
        has = {plain(k.removesuffix(".")) for k in axes._flat(trees[e.name])}
        if lacks := sorted(k for k in axes.settings(e.configs, e.overrides, ROOT) if plain(k) not in has):
            stale[e.name] = lacks
    return {"experiments": len(grid.experiments), "seconds": seconds, "today": columns_today,
            "saved": columns_saved, "differ": differ, "stale": stale}  # fmt: skip


def short(keys: list[str]) -> str:
    return ", ".join(f"`{k}`" for k in keys) or "none"


def main() -> None:
    from minibert.tables.table import tables_under

    parser = fit_parser()
    rows, stale_rows, experiments, seconds = [], [], 0, 0.0
    for out in tables_under(ROOT / "results"):
        r = reading(out, parser)
        name = out.relative_to(ROOT).as_posix()
        experiments, seconds = experiments + r["experiments"], seconds + r["seconds"]
        lost = [c for c in r["today"] if c not in r["saved"]]
        gained = [c for c in r["saved"] if c not in r["today"]]
        rows.append(f"| {name} | {r['experiments']} | {len(r['today'])} | {len(r['saved'])} | {short(lost)} | "
                    f"{short(gained)} | {len(r['differ'])} |")  # fmt: skip
        for e, keys in r["stale"].items():
            kept = sorted({re.sub(r"^model\.objective\.", "", plain(k)) for k in keys})
            stale_rows.append(f"| {name} | {e} | {short(kept)} |")
    changed = sum(1 for row in rows if not row.endswith("| none | none | 0 |"))
    lines = [
        "# Axes read from the configs runs save, against the axes tables have today",
        "",
        "Command: `python benchmarks/axes_readings.py`  ",
        f"Machine: {platform.machine()}, {platform.system()}, Python {platform.python_version()}; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        "Each experiment of each committed table is parsed by the `fit` parser a run uses and read as its saved "
        "config (seeds left as configured, budgets not planned). The table's axes are then derived from those "
        "settings by the rule that derives them today (a setting is an axis when the experiments do not all "
        "agree on it).",
        "",
        f"- Tables whose axes would change: {changed} of {len(rows)}.",
        f"- Parsing: {experiments} experiments in {seconds:.1f} s ({1000 * seconds / experiments:.0f} ms each).",
        f"- Experiments whose axes state a setting their run does not have: {len(stale_rows)}.",
        "",
        "| table | experiments | axes today | axes from saved configs | only today | only from saved configs | "
        "experiments whose axes differ |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "## Settings an experiment's configs give that its run does not have",
        "",
        "A later config replaced the plug-in class these settings belong to, so the run never had them; the "
        "merge of configs keeps them, and the table states them (model.objective's keys shown without that "
        "prefix).",
        "",
        "| table | experiment | settings |",
        "|---|---|---|",
        *stale_rows,
        "",
    ]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT.relative_to(ROOT)}: {changed} of {len(rows)} tables change; {len(stale_rows)} stale")


if __name__ == "__main__":
    main()
