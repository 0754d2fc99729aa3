"""Bring the summaries of runs made by older code up to what the reports read now, without retraining.

1. Runs finished before each summary said what its accuracies mean get `scoreboards` (measure, chance,
   categories: minibert.objectives.Scoreboard), from the objective their saved config.yaml names, built
   again as the run built it.
2. Runs finished before ceilings became bounds get the names the metric code uses now.

For 2: those runs logged `val/<head>ceiling/acc_<c>` and `val/<head>gap/acc_<c>` for every category. On a category
the model's input does not decide, that figure is the Bayes predictor's own accuracy (the same number the
code now logs as `val/<head>bayes/acc_<c>`), not a bound, and the gap to it is no gap. This renames the
first and drops the second in each run's summary.json, marks the summary `relabelled`, and leaves every other
figure as it is; the bounds the code now adds on such categories (a token class, a position's fate) are
not computed for these runs. Then rebuild the report with `scripts/ablate.py --report-only`.

    python scripts/relabel_references.py --out results/dyck
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import yaml  # noqa: E402
from jsonargparse import ArgumentParser  # noqa: E402

from minibert.atomic_writes import write_json  # noqa: E402
from minibert.masking import INPUT_CATEGORIES  # noqa: E402
from minibert.objectives.base import Objective  # noqa: E402
from minibert.training import cli  # noqa: E402, F401  (its parsing settings: plug-in masking recipes)

NOTE = "val/.../ceiling/acc_<c> -> val/.../bayes/acc_<c> on categories the input does not decide (gap dropped)"
_CEILING = re.compile(r"^(?P<head>val/(?:[A-Za-z0-9_]+/)*?)ceiling/acc_(?P<cat>.+)$")


def relabel(summary: dict) -> dict:
    """The summary with its references renamed; a grammaticality head keeps its ceilings (all are 100%)."""
    out = dict(summary)
    for key in list(summary):
        m = _CEILING.match(key)
        if m is None:
            continue
        head, category = m["head"], m["cat"]
        task = f"{head}acc_grammatical" in summary  # the oracle scores 100% on every sentence: a bound on each
        if category in INPUT_CATEGORIES or task:
            continue
        out[f"{head}bayes/acc_{category}"] = out.pop(key)
        out.pop(f"{head}gap/acc_{category}", None)
    out["relabelled"] = NOTE
    return out


def scoreboards(config_path: Path, cache: dict) -> dict:
    """What a run's accuracies mean, from the objective in its saved config.yaml (built once per config)."""
    objective = yaml.safe_load(config_path.read_text())["model"]["init_args"]["objective"]
    key = json.dumps(objective, sort_keys=True)
    if key not in cache:
        parser = ArgumentParser(exit_on_error=False)
        parser.add_argument("--objective", type=Objective)
        built = parser.instantiate(parser.parse_object({"objective": objective})).objective
        cache[key] = {prefix: board.describe() for prefix, board in built.boards().items()}
    return cache[key]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the --out that scripts/ablate.py wrote the grid's runs to")
    args = p.parse_args(argv)
    paths = sorted(Path(args.out).glob("runs/**/summary.json"))
    if not paths:
        print(f"relabel_references.py: error: no run summaries under {args.out}/runs", file=sys.stderr)
        return 2
    relabelled, described, cache = 0, 0, {}
    for path in paths:
        summary = json.loads(path.read_text())
        before = dict(summary)
        if "scoreboards" not in summary:
            log_dir = path.parent / summary.get("log_dir", ".")  # the runner's copy names the run's log folder
            summary["scoreboards"] = scoreboards(log_dir / "config.yaml", cache)
            described += 1
        if "relabelled" not in summary and not any("/bayes/" in k for k in summary):  # made by older code
            renamed = relabel(summary)
            if set(renamed) - {"relabelled"} != set(summary):  # a task's ceilings are bounds: nothing to rename
                summary, relabelled = renamed, relabelled + 1
        if summary != before:
            write_json(path, summary)
    print(f"described {described} and relabelled {relabelled} of {len(paths)} run summaries under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
