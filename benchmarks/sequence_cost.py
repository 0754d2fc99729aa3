"""What the betting sequence costs on minibert's committed comparisons: for each pair, the seeds at which half of
comparisons resampled from its own per-seed differences would stop, and the minutes that many seeds take at the
wall time the grid's own runs recorded (two runs at once, as compare.py's default --workers 2).

    python benchmarks/sequence_cost.py      # writes results/compare/sequence_cost.md
"""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from pathlib import Path

from minibert.atomic_writes import write_atomic
from minibert.report.comparison import judge, load_record
from minibert.report.query import Data
from minibert.stats import betting

ROOT = Path(__file__).resolve().parent.parent

RECORDS = [("results/dyck", "pretrain-gap"), ("results/compare/mlm-vs-span", "mlm-vs-span"),
           ("results/compare/MaskRate30-pairs-dyck", "verdicts")]  # fmt: skip


OUT = ROOT / "results/compare/sequence_cost.md"


def main() -> None:
    lines = []
    for folder, name in RECORDS:
        body = load_record(ROOT / folder / "comparisons" / f"{name}.json")
        design, data = body["design"], Data.load(ROOT / folder)
        wall = data.frame.query("metric == 'wall_time_s'")
        arms = {a for p in design.pairs for a in (p.a, p.b)}
        per_seed = wall[wall.experiment.isin(arms)].groupby("experiment").value.mean().sum() / 2  # 2 workers
        lines.append(
            f"{folder}/comparisons/{name}: {len(design.pairs)} pair(s); a seed of every arm takes "
            f"{per_seed / 60:.1f} min here; no verdict before {design.first_look(design.pairs)} seeds"
        )
        for j in judge(data, design, body["looks"]):
            need = betting.seeds_to_decide(j.diffs, design.margin, j.alpha, design.range(j.pair), j.widen, limit=400)
            cost = "more than 400 seeds" if need is None else f"{need} seeds, about {need * per_seed / 60:.0f} min"
            mean = 100 * sum(j.diffs) / len(j.diffs)
            lines.append(
                f"  {j.pair.label}: {j.looks} seeds, mean {mean:+.1f} points, range "
                f"{design.range(j.pair)}: {j.verdict.verdict}; half of comparisons like it stop by {cost}"
            )
    print("\n".join(lines))
    machine = f"{os.cpu_count()} CPU cores, {platform.processor() or platform.machine()}"
    made = datetime.now(UTC).strftime("%Y-%m-%d")
    write_atomic(OUT, "\n".join([
        "# What the betting sequence costs on the committed comparisons", "",
        f"Made by `python benchmarks/sequence_cost.py` ({machine}, {made}). Minutes are at the wall time each "
        "folder's own runs recorded, two runs at once.", "", "```", *lines, "```", ""]))  # fmt: skip
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
