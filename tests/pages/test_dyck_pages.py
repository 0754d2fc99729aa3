"""The Dyck pages (results/dyck.md, results/dyck/gap.md) are declared over the Dyck tables: they render from the
committed tables as committed, and a comparison's sign label names the arm that the table favours, whichever arm
is given first (the hand-typed page once labelled span - MLM as "MLM - span")."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from minibert.report.render import Renderer
from minibert.tables import table
from minibert.tables.query import Data
from tests.templates import copy_templates

ROOT = Path(__file__).resolve().parents[2]
GAP, MLM, SPAN = "val/gap/acc", "dyck/pretrain/mlm", "dyck/pretrain/span"


def constructed(root: Path, gaps: dict[str, np.ndarray]) -> Data:
    """A repository under `root`: the Dyck page's template and a small Dyck table (seeds 0-2 of every experiment,
    the committed rows) whose overall gaps of the experiments in `gaps` are the given ones, seed by seed; the other
    grids as committed."""
    copy_templates(root, "results/dyck.md.j2")
    frame = table.read(ROOT / "results/dyck")
    frame = frame[frame["seed"] < 3].sort_values("seed", kind="stable").copy()
    for experiment, values in gaps.items():
        rows = (frame["experiment"] == experiment) & (frame["metric"] == GAP) & (frame["category"] == "")
        frame.loc[rows, "value"] = values  # seeds 0, 1, 2 in order
    table.write(frame, root / "results/dyck")
    shutil.copy(ROOT / "results/dyck/run.json", root / "results/dyck/run.json")  # how the runs were made
    shutil.copytree(ROOT / "results/dyck/comparisons", root / "results/dyck/comparisons")  # records the page quotes
    for record in (root / "results/dyck/comparisons").glob("*.json"):  # as if they had run these three seeds only
        body = json.loads(record.read_text())
        body["looks"] = {pair: min(n, 3) for pair, n in body["looks"].items()}
        record.write_text(json.dumps(body))
    for grid in ("dyck_variance", "recipe"):
        (root / "results" / grid).mkdir(parents=True)
        shutil.copy(ROOT / "results" / grid / table.FILE, root / "results" / grid / table.FILE)
    return Data.load(root / "results/dyck")


@pytest.mark.parametrize("smaller", ["MLM", "span masking", None])
def test_the_sign_label_names_the_arm_with_the_smaller_gap_whichever_arm_comes_first(tmp_path, smaller):
    rng = np.random.default_rng(len(str(smaller)))
    low, high = sorted(rng.uniform(0.05, 0.45, 2))
    base = low + rng.normal(0, 0.002, 3)  # one gap per seed
    other = base + (high - low) + rng.normal(0, 0.002, 3) if smaller else base + [0.01, -0.01, 0.0]  # mean 0: undecided
    mlm, span = (base, other) if smaller in ("MLM", None) else (other, base)
    data = constructed(tmp_path, {MLM: mlm, SPAN: span})
    want = f"{smaller} better" if smaller else "undecided"

    # the comparison either way round names the same arm, and A - B keeps the sign of the table's means
    forward = data.diff(GAP, {"experiment": MLM}, {"experiment": SPAN})
    backward = data.diff(GAP, {"experiment": SPAN}, {"experiment": MLM})
    assert forward.verdict("MLM", "span masking") == backward.verdict("span masking", "MLM") == want
    assert forward.say("MLM", "span masking").startswith(want)
    assert backward.say("span masking", "MLM").startswith(want)
    means = {e: data.stat(GAP, experiment=e).mean for e in (MLM, SPAN)}
    assert means[MLM] == pytest.approx(mlm.mean()) and means[SPAN] == pytest.approx(span.mean())
    assert forward.interval.mean == pytest.approx(means[MLM] - means[SPAN])

    # and so does the page, where the recorded comparison judges the pair: A - B with its sign, and the record's
    # verdict, which three seeds cannot decide (minibert.stats.sign.first_bound)
    _, text = Renderer(tmp_path).render(Path("results/dyck.md.j2"))
    row = next(line for line in text.splitlines() if line.startswith("| MLM | span masking | cloze gap"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[-2:] == ["undecided", "the sign rule of comparisons/pretrain-gap"]
    if smaller:
        assert cells[3].startswith("-" if smaller == "MLM" else "+"), cells
    assert re.search(r"Token against span masking\*\*, on the gap: undecided", text)  # the same record's verdict
