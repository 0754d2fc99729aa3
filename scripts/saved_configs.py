"""Write the saved config of every experiment of a table (`<out>/configs/<experiment>.yaml`, minibert.tables.saved)
from the runs' own `config.yaml` where `<out>/runs/` still holds them, else as LightningCLI resolves it (nothing
trains); with --relabel, then rewrite the table's axis columns from them (minibert.tables.table.relabel).
`python scripts/ablate.py` writes these itself; this is for a table recorded before tables kept them.

    python scripts/saved_configs.py results/dyck results/text     # or every table under results/: --all
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from minibert.commandline import ArgumentParser

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("out", nargs="*", help="folders holding a results table")
    p.add_argument("--all", action="store_true", help="every table under results/")
    p.add_argument("--plugins", action="append", default=[], help="a folder the grid's plug-ins are imported from")
    p.add_argument("--relabel", action="store_true", help="then rewrite each table's axis columns from them")
    args = p.parse_args(argv)
    if not args.out and not args.all:
        p.error("name a table's folder, or --all")
    sys.path[:0] = [str(Path(f).resolve()) for f in args.plugins]
    from minibert.tables import table  # no torch: a folder without a table is answered at once

    folders = table.tables_under(ROOT / "results") if args.all else [Path(f) for f in args.out]
    if missing := [str(out) for out in folders if not (out / table.FILE).is_file()]:
        p.error(f"{missing[0]}: no results table ({table.FILE}) there")

    from minibert.ablation.runner import plan
    from minibert.tables import saved
    from minibert.tables.record import grid_of

    for out in folders:
        grid = grid_of(out, ROOT)
        ran = table.read(out, borrowed=False)[["experiment", "seed"]].drop_duplicates()
        seeds = sorted({int(s) for s in ran["seed"]})
        kept = [r for r in plan(grid.experiments, seeds, out, ROOT) if r.done]
        configs = saved.of_folder(out, grid, set(ran["experiment"]), kept, ROOT)
        written = saved.write(out, configs)
        from_runs = len({r.experiment.name for r in kept} & set(configs))
        print(f"{out}: {len(written)} saved configs, {from_runs} of them from their runs' own")
        if args.relabel:
            table.relabel(out, grid, {name: saved.load(text) for name, text in configs.items()})
            print(f"{out}: axis columns rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
