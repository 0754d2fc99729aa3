"""What each stopping rule costs on minibert's committed comparisons: for every pair of every record, the seeds at
which half of comparisons continued from its own per-seed differences would stop, on the sign rule that
compare.py stops on now (minibert.stats.sign) and on the betting sequence for the mean that it stopped on before
(minibert.stats.betting, at the record's margin), and the minutes those seeds take at the wall time the
record's own runs recorded (two runs at once, as compare.py's default --workers 2).

    python benchmarks/sequence_cost.py      # writes results/compare/sequence_cost.md
"""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from pathlib import Path

from minibert.atomic_writes import write_atomic
from minibert.compare.comparison import recorded
from minibert.stats import betting, sign
from minibert.tables.query import Data

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results/compare/sequence_cost.md"
LIMIT = 500


def cost(need: int | None, per_seed: float) -> str:
    return f"more than {LIMIT}" if need is None else f"{need} ({need * per_seed / 60:.0f} min)"


def main() -> None:
    rows = []
    for path in sorted((ROOT / "results").glob("**/comparisons/*.json")):
        folder = path.parent.parent
        data = Data.load(folder)
        r = recorded(folder, path.stem, data)
        wall = data.frame.query("metric == 'wall_time_s'")
        per_seed = wall[wall.experiment.isin(r.design.arms)].groupby("experiment").value.mean().sum() / 2
        for j in r.judged:
            v = j.verdict
            by_sign = sign.seeds_to_decide(j.diffs, j.alpha, r.design.band, limit=LIMIT)
            margin = r.design.margin or 0.01
            by_mean = betting.seeds_to_decide(j.diffs, margin, j.mean_alpha, r.design.range(j.pair), j.widen,
                                              limit=LIMIT)  # fmt: skip
            scale = 100 if r.design.unit == "points" else 1
            rows.append(f"| `{folder.relative_to(ROOT).as_posix()}/{path.stem}` | `{j.pair.a}` | `{j.pair.b}` | "
                        f"{j.pair.metric} | {len(j.diffs)} | {v.wins} of {v.untied} ({v.ties} tied) | "
                        f"{scale * j.median:+.1f} | {scale * sum(j.diffs) / len(j.diffs):+.1f} | "
                        f"{r.words(j, 'A', 'B')} ({r.stop(j)}) | {cost(by_sign, per_seed)} | "
                        f"{cost(by_mean, per_seed)} |")  # fmt: skip
    machine = f"{os.cpu_count()} CPU cores, {platform.processor() or platform.machine()}"
    made = datetime.now(UTC).strftime("%Y-%m-%d")
    text = [
        "# What each stopping rule costs on the committed comparisons", "",
        f"Made by `python benchmarks/sequence_cost.py` ({machine}, {made}). For every pair, the seeds at which half "
        "of 400 comparisons continued from its own seeds (drawn with replacement after them) would stop: on the sign "
        "rule compare.py stops on (does A beat B on most seeds?) and on the betting sequence for the mean it stopped "
        "on before (at the record's margin, or 1 point). Minutes are at the wall time each record's own runs took, "
        "two runs at once. The verdict is the sign rule's on the seeds the record ran.", "",
        "| record | A | B | metric | seeds | A's wins (untied) | median A − B | mean A − B | verdict now | "
        "seeds to decide: sign rule | betting on the mean |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows, "",
    ]  # fmt: skip
    write_atomic(OUT, "\n".join(text))
    print("\n".join(rows))
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
