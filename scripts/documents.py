"""How much do the validation documents move a figure on text? Finished runs graded again, document by document.

    python scripts/documents.py 'results/validity/runs/validity/text/pretrain/mlm/seed*' --reference left_right_trigram
    python scripts/documents.py 'runs/.../mlm/seed*' --b 'runs/.../rate30/seed*'

Runs made before runs on text kept their figures per validation document (`val/by_document/*`) can still be
judged with the documents resampled: each run's last checkpoint is validated again with this code (nothing is
written), its overall accuracy must come out as its summary.json logged it (else the run is refused: other
weights or other questions), and the per-seed, per-document sums go to `minibert.stats.bootstrap.clustered`.
It prints A (or A - B paired by seed, or A minus its own reference on the same questions) with the interval over
seeds and documents, the documents' share of it, and the binomial term a table without documents would use.
"""

# ruff: noqa: E402 (the heavy imports follow the argument check, so that a usage error answers before torch loads)
from __future__ import annotations

import argparse
import glob
import json
import logging
import math
import sys
import warnings
from pathlib import Path

from minibert.commandline import ArgumentParser

PROG = "documents.py"
RUN_FILES = ("**/summary.json", "**/config.yaml", "**/checkpoints/last.ckpt")  # what a run is graded again from


class RunError(ValueError):
    """A run that cannot be graded again; the message names it."""


def parser() -> ArgumentParser:
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("a", help="glob of arm A's run folders (one per seed), quoted")
    p.add_argument("--b", help="glob of arm B's run folders: judge A - B, paired by seed")
    p.add_argument("--reference", help="judge A minus this reference of its own runs (e.g. left_right_trigram)")
    return p


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, each refusal that needs only them and the folders they match said in one line (status 2)."""
    p = parser()
    args = p.parse_args(argv)
    if args.b and args.reference:
        p.error("give --b or --reference, not both")
    try:
        for pattern in filter(None, (args.a, args.b)):
            run_folders(pattern)
    except RunError as err:
        p.error(str(err))
    return args


def run_folders(pattern: str) -> list[Path]:
    """The run folders `pattern` matches, each holding what it is graded again from; RunError if fewer than two."""
    folders = sorted(Path(p) for p in glob.glob(pattern) if Path(p).is_dir())
    if len(folders) < 2:
        raise RunError(f"{pattern!r} matches {len(folders)} run folder(s): the spread over seeds needs at least 2")
    for folder in folders:
        for name in RUN_FILES:
            _one(name, folder)
    return folders


def _one(pattern: str, folder: Path) -> Path:
    found = sorted(folder.glob(pattern))
    if not found:
        raise RunError(f"{folder}: no {pattern} (a run folder holds its lightning_logs/version_*/ files)")
    return found[-1]


if __name__ == "__main__":  # a usage error is answered before torch and Lightning are imported
    parse()

import lightning as L
import numpy as np
import yaml

from minibert.stats.bootstrap import clustered
from minibert.training.data import StreamDataModule
from minibert.training.module import EncoderModule


def graded(folder: Path, reference: str | None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray | None]:
    """(seed, questions per document, right answers per document, the reference's credit per document or None)
    of one run, validated again from its last checkpoint; documents indexed as in the validation split."""
    summary = json.loads(_one("**/summary.json", folder).read_text())
    config = yaml.safe_load(_one("**/config.yaml", folder).read_text())
    model = EncoderModule.load_from_checkpoint(_one("**/checkpoints/last.ckpt", folder), map_location="cpu")
    data = config["data"]
    datamodule = StreamDataModule(val_size=data["val_size"], val_batch_size=data["val_batch_size"],
                                  val_seed=data["val_seed"], source=model.objective)  # fmt: skip
    trainer = L.Trainer(logger=False, enable_progress_bar=False, enable_model_summary=False, accelerator="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.validate(model, datamodule=datamodule, verbose=False)
    again, logged = float(trainer.callback_metrics["val/acc"]), summary["val/acc"]
    if abs(again - logged) > 1e-6:
        raise RunError(
            f"{folder}: val/acc {again:.6f} graded again, {logged:.6f} logged: not the same model or questions"
        )
    figures = model.by_document
    if not figures:
        raise RunError(f"{folder}: its language has no documents (real text has them): nothing to resample")
    size = 1 + max(int(k.rsplit("_d", 1)[1]) for k in figures if k.startswith("val/by_document/n_d"))
    n, right, credit = np.zeros(size), np.zeros(size), np.zeros(size)
    for d in range(size):
        if (count := figures.get(f"val/by_document/n_d{d}", 0.0)) > 0:
            n[d], right[d] = count, figures[f"val/by_document/acc_d{d}"] * count
            if reference is not None:
                key = f"val/by_document/reference/{reference}/acc_d{d}"
                if key not in figures:
                    raise RunError(f"{folder}: no reference {reference!r} (it logs {summary_references(summary)})")
                credit[d] = figures[key] * count
    return int(summary["seeds"]["seed_everything"]), n, right, (credit if reference is not None else None)


def summary_references(summary: dict) -> str:
    names = sorted({k.split("/")[2] for k in summary if k.startswith("val/reference/") and k.endswith("/acc")})
    return ", ".join(names) or "none"


def by_seed(pattern: str, reference: str | None) -> dict[int, tuple]:
    folders = run_folders(pattern)
    out = {}
    for i, folder in enumerate(folders, 1):
        print(f"  grading {folder} ({i}/{len(folders)})", file=sys.stderr)
        seed, *sums = graded(folder, reference)
        out[seed] = sums
    return out


def stack(runs: dict[int, tuple], seeds: list[int], index: int, size: int) -> np.ndarray:
    """(S, C) of one of the sums, documents padded to `size`."""
    return np.stack([np.pad(runs[s][index], (0, size - len(runs[s][index]))) for s in seeds])


def main(argv: list[str] | None = None) -> None:
    for name in ("lightning.pytorch", "lightning.fabric"):  # the trainer's notices about devices and tips
        logging.getLogger(name).setLevel(logging.WARNING)
    args = parse(argv)
    try:
        a = by_seed(args.a, args.reference)
        b = by_seed(args.b, None) if args.b else None
    except RunError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        sys.exit(2)
    seeds = sorted(set(a) & set(b)) if b is not None else sorted(a)
    if len(seeds) < 2:
        print(f"{PROG}: error: A and B share {len(seeds)} seed(s): pairing needs at least 2", file=sys.stderr)
        sys.exit(2)
    size = max(len(r[0]) for r in [*a.values(), *(b or {}).values()])
    n, right = stack(a, seeds, 0, size), stack(a, seeds, 1, size)
    if b is not None:
        other, what = (stack(b, seeds, 1, size), stack(b, seeds, 0, size)), "A - B"
    elif args.reference:
        other, what = (stack(a, seeds, 2, size), n), f"A - {args.reference}"
    else:
        other, what = None, "A"
    keep = n.sum(0) + (other[1].sum(0) if other else 0) > 0  # documents some run graded
    iv = clustered(right[:, keep], n[:, keep], *((other[0][:, keep], other[1][:, keep]) if other else ()))
    pa = right.sum() / n.sum()
    binomial = pa * (1 - pa) / (n.sum() / len(seeds))
    if other is not None:
        pb = other[0].sum() / other[1].sum()
        binomial += pb * (1 - pb) / (other[1].sum() / len(seeds))
    print(f"{what}: {100 * iv.mean:+.2f} points ({100 * iv.lo:+.2f} to {100 * iv.hi:+.2f}), {len(seeds)} seeds, "
          f"{iv.clusters} documents, {iv.questions:,} questions a seed (A's)")  # fmt: skip
    print(f"  the documents' standard error: {100 * math.sqrt(iv.question_variance):.2f} points; the binomial term of "
          f"questions taken as independent draws: {100 * math.sqrt(binomial):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
