"""scripts/documents.py: finished text runs graded again from their last checkpoints, document by document. The
interval it prints is `bootstrap.clustered` on the runs' own per-document figures (which new runs log), and a
run whose checkpoint no longer gives the accuracy it logged is refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from minibert.stats.bootstrap import clustered
from minibert.training.fit import fit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two seeds of MLM on text, three steps each, graded on 100 validation windows."""
    root = tmp_path_factory.mktemp("documents")
    configs = [ROOT / c for c in ("configs/pretrain.yaml", "configs/languages/text.yaml")]
    summaries = []
    for seed in (0, 1):
        out = root / f"seed{seed}"
        summaries.append(fit(configs, [f"--seed_everything={seed}", "--trainer.max_steps=3", "--data.val_size=100",
                                       "--trainer.logger=false"], root_dir=out))  # fmt: skip
    return root, summaries


def per_document(summary: dict, figure: str) -> tuple[np.ndarray, np.ndarray]:
    size = 1 + max(int(k.rsplit("_d", 1)[1]) for k in summary if k.startswith("val/by_document/n_d"))
    n = np.array([summary.get(f"val/by_document/n_d{d}", 0.0) for d in range(size)])
    value = np.array([summary.get(f"val/by_document/{figure}_d{d}", 0.0) for d in range(size)])
    return n, value * n


def test_it_prints_the_interval_over_seeds_and_documents_of_the_runs_own_figures(runs, scripts, capsys):
    root, summaries = runs
    scripts("documents").main([str(root / "seed*"), "--reference", "left_right_trigram"])
    line = capsys.readouterr().out.splitlines()[0]
    size = max(len(per_document(s, "acc")[0]) for s in summaries)
    pad = lambda x: np.pad(x, (0, size - len(x)))  # noqa: E731
    n = np.stack([pad(per_document(s, "acc")[0]) for s in summaries])
    right = np.stack([pad(per_document(s, "acc")[1]) for s in summaries])
    credit = np.stack([pad(per_document(s, "reference/left_right_trigram/acc")[1]) for s in summaries])
    keep = n.sum(0) > 0
    iv = clustered(right[:, keep], n[:, keep], credit[:, keep], n[:, keep])
    m = re.match(
        r"A - left_right_trigram: ([+-][\d.]+) points \(([+-][\d.]+) to ([+-][\d.]+)\), 2 seeds, (\d+) doc", line
    )
    assert m, line
    assert [float(x) for x in m.groups()[:3]] == pytest.approx([100 * iv.mean, 100 * iv.lo, 100 * iv.hi], abs=0.006)
    assert int(m[4]) == iv.clusters > 1


def test_a_run_whose_checkpoint_no_longer_gives_its_logged_accuracy_is_refused(runs, scripts, capsys):
    root, summaries = runs
    path = Path(summaries[1]["log_dir"]) / "summary.json"
    saved = path.read_text()
    try:
        path.write_text(json.dumps({**json.loads(saved), "val/acc": 0.99}))
        with pytest.raises(SystemExit) as exit_:
            scripts("documents").main([str(root / "seed*")])
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert exit_.value.code == 2 and err.startswith("documents.py: error: ")
        assert "not the same model or questions" in err
    finally:
        path.write_text(saved)
