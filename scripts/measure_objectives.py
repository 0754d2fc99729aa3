"""Run configs/ablations/objectives.yaml for some seeds and write one JSON line per run (interim runner).

Stands in for the lead's scripts/ablate.py until it lands on main; it reads the same grid format (a cell's
`encoder_from` names the pre-training cell whose last checkpoint, same seed, becomes encoder_ckpt) and
`--table` turns the lines into results/objectives.md's table (mean and spread over seeds).

    python scripts/measure_objectives.py --seeds 0 --out runs/objectives/seed0.jsonl
    python scripts/measure_objectives.py --table runs/objectives/seed*.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import yaml

from minibert.run import fit, last_checkpoint


def run_grid(grid: Path, seeds: list[int], out: Path, root: Path) -> None:
    experiments = yaml.safe_load(grid.read_text())["experiments"]
    for seed in seeds:
        log_dirs: dict[str, str] = {}
        for cell in experiments:
            overrides = [f"--{k}={v}" for k, v in cell.get("overrides", {}).items()]
            overrides.append(f"--seed_everything={seed}")
            if "encoder_from" in cell:
                overrides.append(f"--model.init_args.encoder_ckpt={last_checkpoint(log_dirs[cell['encoder_from']])}")
            summary = fit(cell["configs"], overrides, root_dir=root / f"seed{seed}" / cell["name"])
            log_dirs[cell["name"]] = summary["log_dir"]
            with out.open("a") as f:
                f.write(json.dumps({"name": cell["name"], "seed": seed, **summary}) + "\n")


def table(paths: list[Path]) -> str:
    rows: dict[str, list[dict]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            rows.setdefault(row["name"], []).append(row)

    def cell(runs: list[dict], key: str) -> str:
        values = [r[key] for r in runs if r.get(key) is not None]
        if not values:
            return "-"
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.3f} ± {spread:.3f}"

    pretrain_keys = [
        "val/acc",
        "val/acc_opener",
        "val/acc_closer",
        "val/acc_partner_hidden",
        "val/nsp/acc",
        "val/mlm/acc",
        "val/acc_replaced",
        "val/acc_original",
        "val/generator/acc",
    ]
    lines = ["| pre-training | seeds | " + " | ".join(pretrain_keys) + " |", "|" + "---|" * (len(pretrain_keys) + 2)]
    for name, runs in rows.items():
        if "/pretrain/" in name:
            lines.append(f"| {name} | {len(runs)} | " + " | ".join(cell(runs, k) for k in pretrain_keys) + " |")
    lines += ["", "| fine-tuning (grammaticality) | seeds | val/acc | per seed |", "|---|---|---|---|"]
    for name, runs in rows.items():
        if "/finetune/" in name:
            each = ", ".join(f"{r['val/acc']:.3f}" for r in sorted(runs, key=lambda r: r["seed"]))
            lines.append(f"| {name} | {len(runs)} | {cell(runs, 'val/acc')} | {each} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=Path, default=Path("configs/ablations/objectives.yaml"))
    parser.add_argument("--seeds", type=int, nargs="*", default=[0])
    parser.add_argument("--out", type=Path, default=Path("runs/objectives/runs.jsonl"))
    parser.add_argument("--root", type=Path, default=Path("runs/objectives"))
    parser.add_argument("--table", type=Path, nargs="*", help="print the table of these JSON-lines files instead")
    args = parser.parse_args()
    if args.table:
        print(table(args.table))
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    run_grid(args.grid, args.seeds, args.out, args.root)


if __name__ == "__main__":
    main()
