"""A grid's table written from its finished runs: `record`, and `grid_of`, the grid a table in a folder holds.

`record` writes `<out>/results.csv` (minibert.tables.table) with the narrow tables beside it: the learning curves
(minibert.tables.curves), the files behind each run's code (minibert.tables.provenance), the config each
experiment's runs were made with (minibert.tables.saved: `<out>/configs/`, which the table's axes are read from)
and how the runs were made (`run.json`). The pages and dashboards that read it are the report engine's
(minibert.report.render).
"""

from __future__ import annotations

import json
from pathlib import Path

from minibert.ablation.grid import Grid, load_grid
from minibert.atomic_writes import write_atomic
from minibert.checkout import without_absolute_paths
from minibert.tables import curves, provenance, saved, table


class RecordError(ValueError):
    """A table that would cover nothing, or fewer runs than the table it replaces; the message says which."""


def record(
    out: str | Path, grid: Grid, finished: list, made: dict, replace: bool = False, root: str | Path = "."
) -> list[Path]:
    """Write the table of the `finished` runs (minibert.ablation.runner.Run) to `out/results.csv` (its figures
    per document to `out/documents.csv`: minibert.tables.table), their learning curves to `out/curves.csv`
    (minibert.tables.curves), the files behind their code to `out/code.csv` (minibert.tables.provenance), each
    experiment's saved config to `out/configs/` (minibert.tables.saved) and how they were made to
    `out/run.json`; refuses (RecordError) a table of no run, or one that drops runs of the table already there,
    unless `replace`. Pages are rendered from it by minibert.report.render.publish."""
    out = Path(out)
    if not finished:
        raise RecordError(f"no finished run of this grid in {out}: nothing to report (existing files are kept)")
    configs = saved.of_folder(out, grid, {r.experiment.name for r in finished}, finished, root)
    trees = {name: saved.load(text) for name, text in configs.items()}
    frame = table.from_runs(grid, [(r, r.summary()) for r in finished], trees)
    if (out / table.FILE).is_file() and not replace:
        before = table.read(out, borrowed=False)[["experiment", "seed"]].drop_duplicates()
        now = set(zip(frame["experiment"], frame["seed"]))
        if lost := sorted((e, int(s)) for e, s in zip(before["experiment"], before["seed"]) if (e, s) not in now):
            shown = ", ".join(f"{e} seed {s}" for e, s in lost[:4]) + (" ..." if len(lost) > 4 else "")
            raise RecordError(
                f"the table in {out} holds {len(lost)} run(s) this one would drop ({shown}): kept as it is. Give "
                "the grid and seeds that made it, another --out, or --replace-report"
            )
    written = table.write(frame, out)
    written += saved.write(out, configs)
    written += curves.write(curves.from_runs(finished), out)
    written += provenance.write(provenance.from_summaries(r.summary() for r in finished), out)
    # paths inside the checkout are stored relative to it: a page rendered from this record in another clone
    # (CI's, a colleague's) reads the same as here; paths outside it are kept for whoever made the run
    text = without_absolute_paths(json.dumps(made, indent=1), Path(root).resolve(), elide=False)
    write_atomic(out / "run.json", text + "\n")
    return [*written, out / "run.json"]


def grid_of(out: str | Path, root: str | Path = ".") -> Grid:
    """The grid whose table is in `out`: the `grid.yaml` written beside it (scripts/compare.py writes one for a
    plug-in), else the one its `grid` column names, `configs/ablations/<grid>.yaml`."""
    own = Path(out) / "grid.yaml"
    if own.is_file():
        return load_grid(own, root)
    return load_grid(Path(root) / "configs/ablations" / f"{table.grid_of_table(out)}.yaml", root)
