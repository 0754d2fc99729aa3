"""Give runs finished before ceilings became bounds the names the metric code uses now, without retraining.

Those runs logged `val/<head>ceiling/acc_<c>` and `val/<head>gap/acc_<c>` for every category. On a category
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

from minibert.atomic_writes import write_json  # noqa: E402
from minibert.masking import INPUT_CATEGORIES  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the --out that scripts/ablate.py wrote the grid's runs to")
    args = p.parse_args(argv)
    paths = sorted(Path(args.out).glob("runs/**/summary.json"))
    if not paths:
        print(f"relabel_references.py: error: no run summaries under {args.out}/runs", file=sys.stderr)
        return 2
    changed = 0
    for path in paths:
        summary = json.loads(path.read_text())
        if "relabelled" not in summary and not any("/bayes/" in k for k in summary):  # made by older code
            write_json(path, relabel(summary))
            changed += 1
    print(f"relabelled {changed} of {len(paths)} run summaries under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
