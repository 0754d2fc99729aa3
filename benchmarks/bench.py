"""Benchmark: minibert's pre-training step against a plain PyTorch loop, utilisation, data rate, scaling.

    python benchmarks/bench.py                      # CPU, one thread, default size; writes results/bench.md
    python benchmarks/bench.py --accelerator gpu --precision bf16-mixed --width 256 --batch-size 512

What is measured, all in one run (and written, with the machine's core count and this command, to `--out`):
1. Step time. A = the project exactly as users run it: `MiniBertCLI` on configs/pretrain.yaml (EncoderModule,
   StreamDataModule, CategoryAccuracy, CSV logging, progress bar, RunSummary). B = `PlainLoop`, the same model
   written plainly in benchmarks/bench_steps.py. A and B alternate (A B A B ...); each run's step time is the
   median interval between consecutive step ends after `--warmup` steps; the table gives medians over repeats.
2. Utilisation: training FLOPs per step (forward + backward, `FlopCounterMode`, attention counted through
   its math decomposition because the fused CPU kernel is not counted) / step time / the matmul rate of
   one large matmul measured here.
3. Data: freshly masked sentences per second from each pipeline alone.
4. Scaling: model step (data + forward + backward + optimizer, no Trainer) of both at longer sequences
   and wider models, next to the FLOPs, so one sees where arithmetic takes over from per-step overhead.
The kernel floor and the torch.compile probe are benchmarks/bench_floor.py.
Anything after the NOTES marker in an existing `--out` file is kept (the hand-written analysis).
"""

from __future__ import annotations

import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import lightning as L
import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]  # run from a checkout without installing; bench_steps is here

import bench_steps  # noqa: E402

from minibert.objectives import MaskedLM  # noqa: E402
from minibert.training.cli import MiniBertCLI  # noqa: E402
from minibert.training.data import StreamDataModule  # noqa: E402


class StepTimer(L.Callback):
    """Clock at the start of training and at the end of every training step."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def on_train_start(self, trainer, pl_module) -> None:
        self.stamps.append(time.perf_counter())

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        if pl_module.device.type == "cuda":
            torch.cuda.synchronize()
        self.stamps.append(time.perf_counter())


def project_args(size: bench_steps.Size, accelerator: str, precision: str, config: str) -> list[str]:
    """CLI arguments for configs/pretrain.yaml at `size` (nothing added at the default size and accelerator)."""
    args = [f"--config={config}"]
    if size.width != 32:
        args += [f"--model.init_args.encoder.width={size.width}", f"--model.init_args.encoder.heads={size.heads}"]
    if size.batch != 64:
        args.append(f"--data.batch_size={size.batch}")
    if accelerator != "cpu":
        args.append(f"--trainer.accelerator={accelerator}")
    if precision != "32-true":
        args.append(f"--trainer.precision={precision}")
    return args


def project_run(args: list[str], steps: int) -> list[float]:
    """One user run of `python -m minibert fit ARGS --trainer.max_steps=STEPS`; returns its step intervals."""
    timer = StepTimer()
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())  # bar, tips
    with tempfile.TemporaryDirectory() as root, quiet[0], quiet[1]:
        cli = MiniBertCLI(args=[*args, f"--trainer.max_steps={steps}", f"--trainer.default_root_dir={root}"], run=False)
        cli.trainer.callbacks.append(timer)
        cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    return list(np.diff(timer.stamps))


def head_to_head(args, log) -> dict:
    """A B A B ...: user runs of the project against plain loops; per-run medians, then medians over runs."""
    cli_args = project_args(args.size, args.accelerator, args.precision, args.config)
    project, plain, ratios, rates, n = [], [], [], [], args.steps + args.warmup
    for r in range(args.repeats):
        rates.append(bench_steps.matmul_rate(args.device, args.bf16))  # per repeat: a shared machine's speed drifts
        a = statistics.median(project_run(cli_args, n)[args.warmup :])
        loop = bench_steps.PlainLoop(args.size, n, args.device, args.bf16)
        b = statistics.median(bench_steps.timed_steps(loop.step, n, args.device)[args.warmup :])
        project.append(a)
        plain.append(b)
        ratios.append(a / b)
        log(f"  repeat {r}: project {a * 1e3:.2f} ms, plain {b * 1e3:.2f} ms, ratio {a / b:.3f}")
    return {
        "project": project,
        "plain": plain,
        "ratios": ratios,
        "rates": rates,
        "flops_project": bench_steps.ProjectModelStep(args.size, args.device, args.bf16).flops(),  # same recipe
        "flops_plain": bench_steps.PlainLoop(args.size, 1, args.device, args.bf16).flops(),
    }


def data_rate(seconds: float) -> tuple[float, float]:
    """Masked sentences/s of the project's training DataLoader and of the plain loop's numpy batches."""
    data = StreamDataModule(source=MaskedLM())
    loader, rng = iter(data.train_dataloader()), np.random.default_rng(0)
    rates = []
    for make in (lambda: next(loader), lambda: bench_steps.plain_batch(rng, 64, 8)):
        start, n = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            make()
            n += 64
        rates.append(n / (time.perf_counter() - start))
    return rates[0], rates[1]


def spread(values: list[float]) -> str:
    """min-max as a percentage of the median: how noisy the repeats were."""
    return f"{(max(values) - min(values)) / statistics.median(values) * 100:.0f}%"


def report(args, rate: float, h2h: dict, data: tuple, rows: list) -> str:
    med = {k: statistics.median(h2h[k]) for k in ("project", "plain", "ratios")}
    # utilisation per repeat (that repeat's step times and matmul rate), then medians
    util = {
        k: statistics.median(h2h[f"flops_{k}"] / t / r for t, r in zip(h2h[k], h2h["rates"], strict=True))
        for k in ("project", "plain")
    }
    util_ratio = statistics.median(h2h["flops_project"] / h2h["flops_plain"] / r for r in h2h["ratios"])
    lines = [
        "# Benchmark: minibert pre-training step vs a plain PyTorch loop",
        "",
        f"Command: `{args.command}`  ",
        f"{bench_steps.machine(args)}  ",
        f"Matmul rate (one {'4096' if args.accelerator == 'gpu' else '1024'}^2 matmul) at the start: "
        f"{rate / 1e9:.1f} GFLOP/s (each table uses its own, measured between its runs)",
        "",
        f"## Step time at {args.size}",
        "",
        f"{args.repeats} alternating repeats (A B A B ...), each the median of {args.steps} steps after "
        f"{args.warmup} warm-up steps.",
        "",
        "| path | median step (ms) | sentences/s | spread over repeats | train FLOPs/step | utilisation |",
        "|---|---|---|---|---|---|",
    ]
    for name, label in (("project", "project (Trainer, configs/pretrain.yaml)"), ("plain", "plain PyTorch loop")):
        lines.append(
            f"| {label} | {med[name] * 1e3:.2f} | {args.size.batch / med[name]:,.0f} | {spread(h2h[name])} | "
            f"{h2h[f'flops_{name}'] / 1e6:.1f} M | {util[name] * 100:.2f}% |"
        )
    lines += [
        "",
        f"Median ratio project / plain: **{med['ratios']:.3f}** (per repeat: "
        f"{', '.join(f'{r:.3f}' for r in h2h['ratios'])}); "
        f"utilisation project / plain (median over repeats): **{util_ratio:.2f}x**. Matmul rate per repeat: "
        f"{', '.join(f'{r / 1e9:.0f}' for r in h2h['rates'])} GFLOP/s.",
        "",
        "The kernels of this step alone, and the step under torch.compile: `python benchmarks/bench_floor.py` "
        "([`bench_floor.md`](bench_floor.md)).",
        "",
        "## Data pipeline alone (batch 64)",
        "",
        "| pipeline | fresh masked sentences/s |",
        "|---|---|",
        f"| project (StreamDataModule train loader: MaskedLM batch + categories) | {data[0]:,.0f} |",
        f"| plain loop (numpy masking only) | {data[1]:,.0f} |",
        "",
        "## Scaling: model step (data + forward + backward + AdamW, no Trainer)",
        "",
        "| size | train GFLOPs/step (project / plain) | project ms | plain ms | project GFLOP/s | utilisation |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        achieved = row["flops_project"] / row["project"]
        lines.append(
            f"| {row['size']} | {row['flops_project'] / 1e9:.3f} / {row['flops_plain'] / 1e9:.3f} | "
            f"{row['project'] * 1e3:.1f} | {row['plain'] * 1e3:.1f} | {achieved / 1e9:.2f} | "
            f"{achieved / row['rate'] * 100:.1f}% |"
        )
    lines += ["", "## Default ablation grid (3 seeds)", "", ablation_wall_time(Path("results/ablation.md")), ""]
    return "\n".join(lines)


def ablation_wall_time(report: Path) -> str:
    """The default grid's wall time as the ablation runner reported it in its own header."""
    if not report.is_file():
        return f"No {report} yet: run `python scripts/ablate.py` first."
    header = {}
    for line in report.read_text().splitlines():
        for key in ("command", "machine", "wall time of this invocation", "date"):
            if line.startswith(f"- {key}: "):
                header[key] = line.split(": ", 1)[1]
    if "wall time of this invocation" not in header:
        return f"{report} has no wall-time line."
    return (
        f"From {report} ({header.get('date', '?')}): `{header.get('command', '?').strip('`')}` took "
        f"{header['wall time of this invocation']} on {header.get('machine', '?')}."
    )


def main(argv: list[str] | None = None) -> dict:
    p = bench_steps.parser("benchmarks/bench.py", __doc__, out="results/bench.md")
    p.add_argument("--config", default="configs/pretrain.yaml")
    p.add_argument("--steps", type=int, default=150, help="timed steps per run")
    p.add_argument("--warmup", type=int, default=30, help="untimed steps at the start of each run")
    p.add_argument("--scaling-pairs", type=int, nargs="*", default=[8, 32, 128, 256])
    p.add_argument("--scaling-widths", type=int, nargs="*", default=[128, 256])
    p.add_argument("--scaling-steps", type=int, default=5)
    p.add_argument("--data-seconds", type=float, default=1.0)
    args = bench_steps.parse(p, argv)
    log = lambda msg: print(msg, flush=True)  # noqa: E731

    rate = bench_steps.matmul_rate(args.device, args.bf16)
    log(f"matmul: {rate / 1e9:.1f} GFLOP/s")
    log("step time, A (project) vs B (plain):")
    h2h = head_to_head(args, log)
    data = data_rate(args.data_seconds)
    log(f"data: project {data[0]:,.0f} sentences/s, plain {data[1]:,.0f} sentences/s")
    log("scaling:")
    sizes = [bench_steps.Size(args.batch_size, p, args.width) for p in args.scaling_pairs]
    sizes += [bench_steps.Size(args.batch_size, 8, w) for w in args.scaling_widths]
    rows = []
    for size in sizes:
        rows.append(bench_steps.model_steps(size, 3, args.scaling_steps, args.device, args.bf16))
        log(f"  {size}: project {rows[-1]['project'] * 1e3:.1f} ms, plain {rows[-1]['plain'] * 1e3:.1f} ms")

    text = report(args, rate, h2h, data, rows)
    bench_steps.write_keeping_notes(args.out, text)
    print(text)
    return {"rate": rate, "h2h": h2h, "data": data, "scaling": rows}


if __name__ == "__main__":
    main()
