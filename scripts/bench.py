"""Benchmark: minibert's pre-training step against a plain PyTorch loop, utilisation, data rate, scaling.

    python scripts/bench.py                      # CPU, one thread, default size; writes results/bench.md
    python scripts/bench.py --accelerator gpu --precision bf16-mixed --width 256 --batch-size 512

What is measured, all in one run (and written, with the machine's core count and this command, to `--out`):
1. Step time. A = the project exactly as users run it: `MiniBertCLI` on configs/pretrain.yaml (EncoderModule,
   StreamDataModule, CategoryAccuracy, CSV logging, progress bar, RunSummary). B = a plain loop written
   here with no Lightning: nn.MultiheadAttention blocks, AdamW with the same groups and schedule, numpy
   masking on the training thread. A and B alternate (A B A B ...); each run's step time is the median
   interval between consecutive step ends after `--warmup` steps; the table gives medians over repeats.
2. Utilisation: training FLOPs per step (forward + backward, `FlopCounterMode`, attention counted through
   its math decomposition because the fused CPU kernel is not counted) / step time / the matmul rate of
   one large float32 matmul measured here.
3. Data: freshly masked sentences per second from each pipeline alone.
4. Scaling: model step (data + forward + backward + optimizer, no Trainer) of both at longer sequences
   and wider models, next to the FLOPs, so one sees where arithmetic takes over from per-step overhead.
5. Compiled: the same model step with the encoder compiled by `torch.compile` (inductor: fused kernels),
   against it eager, and what the compilation costs (`--no-compile-probe` skips it; it needs a C++ compiler).
6. Floor: the kernels that one project model step runs (all of them, and the GEMMs and fused attention
   alone), recorded with their arguments and replayed back to back with nothing around them; set against
   the step time that twice the plain loop's utilisation needs, it shows what removing overhead can win.
Anything after the NOTES marker in an existing `--out` file is kept (the hand-written analysis).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map
from torch.utils.flop_counter import FlopCounterMode

from minibert.cli import MiniBertCLI
from minibert.data import StreamDataModule
from minibert.files import write_atomic
from minibert.languages import BracketPairs
from minibert.model import EncoderConfig
from minibert.module import EncoderModule
from minibert.objectives import MaskedLM

NOTES = "<!-- notes below are written by hand; scripts/bench.py keeps them -->"
VOCAB, CLS, MASK, FIRST_CONTENT, KINDS = 18, 0, 1, 2, 8  # the plain loop's own copy of the language's ids
Step = Callable[[], None]


# ---------------------------------------------------------------- B: the plain loop, one file's worth


class PlainBlock(nn.Module):
    """Post-norm transformer block, as one writes it with torch's own attention module."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.norm2 = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.mlp(x))


class PlainBert(nn.Module):
    def __init__(self, width: int, heads: int, layers: int, max_len: int) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, width), nn.Embedding(max_len, width)
        self.blocks = nn.Sequential(*(PlainBlock(width, heads) for _ in range(layers)))
        self.head = nn.Linear(width, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, V)
        return self.head(self.blocks(self.tok(ids) + self.pos.weight[: ids.shape[1]]))


def plain_batch(rng: np.random.Generator, batch: int, pairs: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sentences of `pairs` bracket pairs after [CLS], BERT-masked: 15% picked; 80% [MASK], 10% random, 10% kept."""
    kinds = rng.integers(0, KINDS, size=(batch, pairs))
    pairs_ids = np.stack([FIRST_CONTENT + kinds, FIRST_CONTENT + KINDS + kinds], axis=-1).reshape(batch, -1)
    ids = np.concatenate([np.full((batch, 1), CLS), pairs_ids], axis=1)
    picked = rng.random(ids.shape) < 0.15
    picked[:, 0] = False
    fate = rng.random(ids.shape)
    inputs = np.where(picked & (fate < 0.8), MASK, ids)
    random = picked & (fate >= 0.8) & (fate < 0.9)
    inputs[random] = rng.integers(FIRST_CONTENT, VOCAB, size=int(random.sum()))
    labels = np.where(picked, ids, -100)
    return torch.from_numpy(inputs), torch.from_numpy(labels)


def schedule(total: int, warmup: int = 30) -> Callable[[int], float]:
    return lambda step: (step + 1) / warmup if step < warmup else max(0.0, (total - step) / max(1, total - warmup))


class PlainLoop:
    """The whole training loop B; `step()` does one optimizer step and logs the loss every 10 steps."""

    def __init__(self, size: Size, steps: int, device: torch.device, bf16: bool) -> None:
        torch.manual_seed(0)
        self.size, self.device, self.bf16 = size, device, bf16
        self.model = PlainBert(size.width, size.heads, 2, 1 + 2 * size.pairs).to(device)
        decay = [p for p in self.model.parameters() if p.ndim >= 2]
        rest = [p for p in self.model.parameters() if p.ndim < 2]
        self.opt = torch.optim.AdamW(
            [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=3e-3, betas=(0.9, 0.98)
        )
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, schedule(steps))
        self.rng, self.count, self.log = np.random.default_rng(0), 0, []

    def loss(self, inputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        with torch.autocast(self.device.type, torch.bfloat16, enabled=self.bf16):
            logits = self.model(inputs.to(self.device))
        return F.cross_entropy(logits.flatten(0, 1).float(), labels.to(self.device).flatten())

    def step(self) -> None:
        loss = self.loss(*plain_batch(self.rng, self.size.batch, self.size.pairs))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.sched.step()
        if self.count % 10 == 0:
            self.log.append(loss.item())
        self.count += 1

    def flops(self) -> int:
        return count_flops(lambda: self.loss(*plain_batch(self.rng, self.size.batch, self.size.pairs)).backward())


# ---------------------------------------------------------------- A: the project


class Size:
    """One benchmark size: batch, bracket pairs per sentence, width (heads keep 16 dims each)."""

    def __init__(self, batch: int = 64, pairs: int = 8, width: int = 32) -> None:
        self.batch, self.pairs, self.width, self.heads = batch, pairs, width, max(1, width // 16)

    def __str__(self) -> str:
        T = 1 + 2 * self.pairs
        return f"batch {self.batch}, {self.pairs} pairs (T={T}), width {self.width}, {self.heads} heads"


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


def project_args(size: Size, accelerator: str, precision: str, config: str) -> list[str]:
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


class ProjectModelStep:
    """The project's model step without the Trainer: MaskedLM batch (numpy, this thread), EncoderModule
    forward through its objective, backward, and the module's own optimizer. Used for scaling."""

    def __init__(self, size: Size, device: torch.device, bf16: bool) -> None:
        torch.manual_seed(0)
        config = EncoderConfig(width=size.width, heads=size.heads)  # vocabulary and length: the language's
        self.module = EncoderModule(MaskedLM(language=BracketPairs(pairs=size.pairs)), encoder=config).to(device)
        self.opt = self.module.optimizer()
        self.size, self.device, self.bf16 = size, device, bf16
        self.rng = np.random.default_rng(0)

    def batch(self) -> dict[str, torch.Tensor]:  # MaskedLM.make_batch, at any sentence length
        batch = self.module.objective.make_batch(self.rng, self.size.batch, "train")
        return {k: v.to(self.device) for k, v in batch.items()}

    def loss(self) -> torch.Tensor:
        with torch.autocast(self.device.type, torch.bfloat16, enabled=self.bf16):
            return self.module.objective(self.module.encoder, self.batch()).loss

    def step(self) -> None:
        loss = self.loss()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()

    def flops(self) -> int:
        return count_flops(lambda: self.loss().backward())


# ---------------------------------------------------------------- measurements


def count_flops(train_step: Callable[[], None]) -> int:
    """FLOPs of forward + backward; attention through its math form, since the fused CPU kernel is uncounted."""
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        train_step()
    return counter.get_total_flops()


class StepKernels(TorchDispatchMode):
    """Records the kernels that run inside it (every ATen op that computes; views and profiler marks left
    out) with copies of their arguments, so that `replay()` runs exactly that work again with no Python
    module code, autograd engine, optimizer loop, data or Trainer around it. `replay(matrix_only=True)`
    runs only the matrix kernels: GEMMs and fused attention, forward and backward.

    Example:
        >>> a, b = torch.randn(4, 3, requires_grad=True), torch.randn(3, 2)
        >>> with StepKernels() as kernels:
        ...     (a @ b).relu().sum().backward()
        >>> [str(func) for func, _, _ in kernels.calls if StepKernels.is_matrix(func)]
        ['aten.mm.default', 'aten.mm.default']
    """

    GEMMS = {"mm", "addmm", "bmm", "baddbmm"}

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []  # (ATen op, args, kwargs)

    @classmethod
    def is_matrix(cls, func) -> bool:
        name = func.overloadpacket.__name__
        return name in cls.GEMMS or "attention" in name  # e.g. _scaled_dot_product_flash_attention_for_cpu

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace == "aten" and not func.is_view:
            copy = lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x  # noqa: E731
            self.calls.append((func, tree_map(copy, args), tree_map(copy, kwargs)))
        return func(*args, **kwargs)

    @torch.no_grad()
    def replay(self, matrix_only: bool = False) -> None:
        for func, args, kwargs in self.calls:
            if not matrix_only or self.is_matrix(func):
                func(*args, **kwargs)


def kernel_floor(size: Size, device: torch.device, bf16: bool, replays: int = 200) -> dict:
    """Median times of replaying the kernels of one project model step (recorded after a warm-up step), all
    of them and the matrix kernels alone; and each kernel type's calls and time per step, timed one by one."""
    step = ProjectModelStep(size, device, bf16)
    step.step()
    with StepKernels() as kernels:
        step.step()
    times = {
        name: statistics.median(timed_steps(lambda m=matrix_only: kernels.replay(m), replays, device)[1:])
        for name, matrix_only in (("all", False), ("matrix", True))
    }  # the first replay of each is dropped (warm-up)
    names = [func.overloadpacket.__name__ for func, _, _ in kernels.calls]
    seconds = dict.fromkeys(names, 0.0)  # per step, each kernel timed on its own
    rounds = replays // 10
    with torch.no_grad():
        for _ in range(rounds):
            for name, (func, args, kwargs) in zip(names, kernels.calls, strict=True):
                start = time.perf_counter()
                func(*args, **kwargs)
                sync(device)
                seconds[name] += (time.perf_counter() - start) / rounds
    calls = Counter(names)
    matrix = [n for n, (func, _, _) in zip(names, kernels.calls, strict=True) if StepKernels.is_matrix(func)]
    return {
        **times,
        "kernels": len(names),
        "matrix_calls": dict(Counter(matrix)),
        "per_kernel": {n: (calls[n], seconds[n]) for n in sorted(seconds, key=seconds.get, reverse=True)},
    }


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def matmul_rate(device: torch.device, bf16: bool, n: int = 1024, repeats: int = 7) -> float:
    """FLOP/s of one large n x n matmul (float32 on CPU; bf16 when asked), median of `repeats`."""
    n = 4096 if device.type == "cuda" else n
    dtype = torch.bfloat16 if bf16 else torch.float32
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    times = []
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        a @ b
        sync(device)
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times)


def timed_steps(step: Step, steps: int, device: torch.device) -> list[float]:
    stamps = [time.perf_counter()]
    for _ in range(steps):
        step()
        sync(device)
        stamps.append(time.perf_counter())
    return list(np.diff(stamps))


def data_rate(seconds: float) -> tuple[float, float]:
    """Masked sentences/s of the project's training DataLoader and of the plain loop's numpy batches."""
    data = StreamDataModule(source=MaskedLM())
    loader, rng = iter(data.train_dataloader()), np.random.default_rng(0)
    rates = []
    for make in (lambda: next(loader), lambda: plain_batch(rng, 64, 8)):
        start, n = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            make()
            n += 64
        rates.append(n / (time.perf_counter() - start))
    return rates[0], rates[1]


def head_to_head(size: Size, repeats: int, steps: int, warmup: int, device: torch.device, args, log) -> dict:
    """A B A B ...: user runs of the project against plain loops; per-run medians, then medians over runs."""
    bf16 = args.precision.startswith("bf16")
    cli_args = project_args(size, args.accelerator, args.precision, args.config)
    project, plain, ratios, rates = [], [], [], []
    for r in range(repeats):
        rates.append(matmul_rate(device, bf16))  # per repeat: the machine's speed drifts when it is shared
        a = statistics.median(project_run(cli_args, steps + warmup)[warmup:])
        loop = PlainLoop(size, steps + warmup, device, bf16)
        b = statistics.median(timed_steps(loop.step, steps + warmup, device)[warmup:])
        project.append(a)
        plain.append(b)
        ratios.append(a / b)
        log(f"  repeat {r}: project {a * 1e3:.2f} ms, plain {b * 1e3:.2f} ms, ratio {a / b:.3f}")
    return {
        "project": project,
        "plain": plain,
        "ratios": ratios,
        "rates": rates,
        "flops_project": ProjectModelStep(size, device, bf16).flops(),  # the same module and batch recipe
        "flops_plain": PlainLoop(size, 1, device, bf16).flops(),
    }


def compile_probe(size: Size, repeats: int, steps: int, device: torch.device, bf16: bool) -> dict:
    """Model step with the encoder compiled by torch.compile against the same step eager (A B A B ...); the
    first compiled step's time is the compilation (less when inductor's on-disk cache already holds it)."""
    eager, compiled = ProjectModelStep(size, device, bf16), ProjectModelStep(size, device, bf16)
    compiled.module.encoder.compile()
    compile_time = timed_steps(compiled.step, 1, device)[0]
    a_times, b_times = [], []
    for _ in range(repeats):  # the first step of each block dropped (warm-up)
        a_times.append(statistics.median(timed_steps(compiled.step, steps + 1, device)[1:]))
        b_times.append(statistics.median(timed_steps(eager.step, steps + 1, device)[1:]))
    return {"compile": compile_time, "compiled": statistics.median(a_times), "eager": statistics.median(b_times)}


def scaling(sizes: list[Size], repeats: int, steps: int, device: torch.device, bf16: bool, log) -> list[dict]:
    rows = []
    for size in sizes:
        project, plain = ProjectModelStep(size, device, bf16), PlainLoop(size, 10**6, device, bf16)
        a_times, b_times, rates = [], [], []
        for _ in range(repeats):  # A B A B, first step of each block dropped (warm-up)
            rates.append(matmul_rate(device, bf16))  # the row's own: a shared machine's speed drifts
            a_times += timed_steps(project.step, steps + 1, device)[1:]
            b_times += timed_steps(plain.step, steps + 1, device)[1:]
        row = {
            "size": size,
            "flops_project": project.flops(),
            "flops_plain": plain.flops(),
            "project": statistics.median(a_times),
            "plain": statistics.median(b_times),
            "rate": statistics.median(rates),
        }
        log(f"  {size}: project {row['project'] * 1e3:.1f} ms, plain {row['plain'] * 1e3:.1f} ms")
        rows.append(row)
    return rows


# ---------------------------------------------------------------- report


def spread(values: list[float]) -> str:
    """min-max as a percentage of the median: how noisy the repeats were."""
    return f"{(max(values) - min(values)) / statistics.median(values) * 100:.0f}%"


def report(
    args, command: str, rate: float, h2h: dict, data: tuple, rows: list, floor: dict, compiled: dict | None
) -> str:
    med = {k: statistics.median(h2h[k]) for k in ("project", "plain", "ratios")}
    # utilisation per repeat (that repeat's step times and matmul rate), then medians
    util = {
        k: statistics.median(h2h[f"flops_{k}"] / t / r for t, r in zip(h2h[k], h2h["rates"], strict=True))
        for k in ("project", "plain")
    }
    util_ratio = statistics.median(h2h["flops_project"] / h2h["flops_plain"] / r for r in h2h["ratios"])
    size = Size(args.batch_size, 8, args.width)
    lines = [
        "# Benchmark: minibert pre-training step vs a plain PyTorch loop",
        "",
        f"Command: `{command}`  ",
        f"Machine: {os.cpu_count()} CPU cores, torch {torch.__version__}, {args.accelerator}, "
        f"{torch.get_num_threads()} torch thread(s), precision {args.precision}  ",
        f"Matmul rate (one {'4096' if args.accelerator == 'gpu' else '1024'}^2 matmul) at the start: "
        f"{rate / 1e9:.1f} GFLOP/s (each table uses its own, measured between its runs)",
        "",
        f"## Step time at {size}",
        "",
        f"{args.repeats} alternating repeats (A B A B ...), each the median of {args.steps} steps after "
        f"{args.warmup} warm-up steps.",
        "",
        "| path | median step (ms) | sentences/s | spread over repeats | train FLOPs/step | utilisation |",
        "|---|---|---|---|---|---|",
    ]
    for name, label in (("project", "project (Trainer, configs/pretrain.yaml)"), ("plain", "plain PyTorch loop")):
        lines.append(
            f"| {label} | {med[name] * 1e3:.2f} | {size.batch / med[name]:,.0f} | {spread(h2h[name])} | "
            f"{h2h[f'flops_{name}'] / 1e6:.1f} M | {util[name] * 100:.2f}% |"
        )
    lines += [
        "",
        f"Median ratio project / plain: **{med['ratios']:.3f}** (per repeat: "
        f"{', '.join(f'{r:.3f}' for r in h2h['ratios'])}); "
        f"utilisation project / plain (median over repeats): **{util_ratio:.2f}x**. Matmul rate per repeat: "
        f"{', '.join(f'{r / 1e9:.0f}' for r in h2h['rates'])} GFLOP/s.",
        "",
        *floor_section(h2h, floor, compiled, med),
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


def floor_section(h2h: dict, floor: dict, compiled: dict | None, med: dict) -> list[str]:
    """The step time that doubles the plain loop's utilisation, against the project step's kernels alone."""
    # utilisation_project >= 2 x utilisation_plain  <=>  t_project <= t_plain * flops_project / (2 flops_plain)
    needed = med["plain"] * h2h["flops_project"] / (2 * h2h["flops_plain"])
    calls = ", ".join(f"{n} {name}" for name, n in floor["matrix_calls"].items())
    share = lambda t: f"{t * 1e3:.2f} ({t / needed * 100:.0f}% of the 2x budget)"  # noqa: E731
    top, rest = list(floor["per_kernel"].items())[:12], list(floor["per_kernel"].values())[12:]
    compiled_rows = []
    if compiled:
        compiled_rows = [
            f"| model step without the Trainer (data, forward, backward, AdamW) | {compiled['eager'] * 1e3:.2f} |",
            f"| the same with the encoder under torch.compile (inductor; {compiled['compile']:.1f} s to compile) "
            f"| {share(compiled['compiled'])} |",
        ]
    return [
        "## Floor: the step's kernels alone",
        "",
        "The forward, backward and AdamW update of one project model step are recorded at the ATen level and "
        "their kernels replayed back to back, with no Python module code, autograd engine, optimizer loop, data "
        "or Trainer around them (each replayed op still pays its own call into the dispatcher, a few us).",
        "",
        "| | ms per step |",
        "|---|---|",
        f"| project step (user run, above) | {med['project'] * 1e3:.2f} |",
        f"| plain loop step (above) | {med['plain'] * 1e3:.2f} |",
        f"| **step time that twice the plain loop's utilisation needs** | **{needed * 1e3:.2f}** |",
        f"| every kernel of the project step ({floor['kernels']} ATen ops) replayed | {share(floor['all'])} |",
        f"| its matrix kernels alone ({calls}) replayed | {share(floor['matrix'])} |",
        *compiled_rows,
        "",
        "Where the replayed time goes (each kernel timed on its own, summed per step):",
        "",
        "| ATen kernel | calls per step | ms per step |",
        "|---|---|---|",
        *(f"| {name} | {calls} | {t * 1e3:.2f} |" for name, (calls, t) in top),
        f"| the other {len(rest)} kinds | {sum(c for c, _ in rest)} | {sum(t for _, t in rest) * 1e3:.2f} |",
        "",
    ]


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/pretrain.yaml")
    parser.add_argument("--accelerator", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--precision", choices=("32-true", "bf16-mixed"), default="32-true")
    parser.add_argument("--width", type=int, default=32, help="encoder width (heads = width / 16)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=150, help="timed steps per run")
    parser.add_argument("--warmup", type=int, default=30, help="untimed steps at the start of each run")
    parser.add_argument("--scaling-pairs", type=int, nargs="*", default=[8, 32, 128, 256])
    parser.add_argument("--scaling-widths", type=int, nargs="*", default=[128, 256])
    parser.add_argument("--scaling-steps", type=int, default=5)
    parser.add_argument("--data-seconds", type=float, default=1.0)
    parser.add_argument(
        "--compile-probe",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time the model step with the encoder under torch.compile (tens of seconds; needs a C++ compiler)",
    )
    parser.add_argument("--out", default="results/bench.md")
    args = parser.parse_args(argv)
    if args.accelerator == "gpu" and not torch.cuda.is_available():
        parser.error("--accelerator gpu: no CUDA device is visible to torch here; use --accelerator cpu")
    torch.set_num_threads(1)
    device = torch.device("cuda" if args.accelerator == "gpu" else "cpu")
    bf16 = args.precision.startswith("bf16")
    command = shlex.join(["python", "scripts/bench.py", *(sys.argv[1:] if argv is None else argv)])
    log = lambda msg: print(msg, flush=True)  # noqa: E731

    rate = matmul_rate(device, bf16)
    log(f"matmul: {rate / 1e9:.1f} GFLOP/s")
    log("step time, A (project) vs B (plain):")
    size = Size(args.batch_size, 8, args.width)  # the default sentence; batch and width as asked
    h2h = head_to_head(size, args.repeats, args.steps, args.warmup, device, args, log)
    data = data_rate(args.data_seconds)
    log(f"data: project {data[0]:,.0f} sentences/s, plain {data[1]:,.0f} sentences/s")
    log("scaling:")
    sizes = [Size(args.batch_size, p, args.width) for p in args.scaling_pairs]
    sizes += [Size(args.batch_size, 8, w) for w in args.scaling_widths]
    rows = scaling(sizes, 3, args.scaling_steps, device, bf16, log)
    floor = kernel_floor(size, device, bf16)
    log(
        f"floor: kernels of one project step {floor['all'] * 1e3:.2f} ms, matrix kernels {floor['matrix'] * 1e3:.2f} ms"
    )

    compiled = None
    if args.compile_probe:
        compiled = compile_probe(size, 5, 100, device, bf16)
        log(f"compiled encoder: {compiled['compiled'] * 1e3:.2f} ms vs eager {compiled['eager'] * 1e3:.2f} ms")

    text = report(args, command, rate, h2h, data, rows, floor, compiled)
    out = Path(args.out)
    kept = out.read_text().split(NOTES, 1) if out.exists() else []
    write_atomic(out, text + "\n" + NOTES + (kept[1] if len(kept) == 2 else "\n"))
    print(text)
    return {"rate": rate, "h2h": h2h, "data": data, "scaling": rows, "floor": floor, "compiled": compiled}


if __name__ == "__main__":
    main()
