"""The training steps that benchmarks/bench.py and benchmarks/bench_floor.py time, their clocks and their options.

- `ProjectModelStep`: minibert's step without the Trainer: a MaskedLM batch (numpy, on this thread), the
  EncoderModule's forward through its objective, backward, and the module's own optimizer.
- `PlainLoop`: the same model written plainly here, with no Lightning and none of minibert: nn.MultiheadAttention
  blocks, AdamW with the same groups and schedule, numpy masking on the training thread.
- `model_steps`: the two alternated (A B A B ...), with their FLOPs and the machine's matmul rate.

Not a script: the two benchmarks import it (each puts this folder on `sys.path`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from minibert.atomic_writes import write_atomic
from minibert.commandline import ArgumentParser
from minibert.languages import BracketPairs
from minibert.model import EncoderConfig
from minibert.objectives import MaskedLM
from minibert.training.module import EncoderModule

NOTES = "<!-- notes below are written by hand; the script that writes this file keeps them -->"
VOCAB, CLS, MASK, FIRST_CONTENT, KINDS = 18, 0, 1, 2, 8  # the plain loop's own copy of the language's ids
Step = Callable[[], None]


class Size:
    """One benchmark size: batch, bracket pairs per sentence, width (heads keep 16 dims each)."""

    def __init__(self, batch: int = 64, pairs: int = 8, width: int = 32) -> None:
        self.batch, self.pairs, self.width, self.heads = batch, pairs, width, max(1, width // 16)

    def __str__(self) -> str:
        T = 1 + 2 * self.pairs
        return f"batch {self.batch}, {self.pairs} pairs (T={T}), width {self.width}, {self.heads} heads"


# ---------------------------------------------------------------- the plain loop, one file's worth


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
    """The whole plain training loop; `step()` does one optimizer step and logs the loss every 10 steps."""

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


# ---------------------------------------------------------------- the project's model step


class ProjectModelStep:
    """The project's model step without the Trainer, at any size."""

    def __init__(self, size: Size, device: torch.device, bf16: bool) -> None:
        torch.manual_seed(0)
        config = EncoderConfig(width=size.width, heads=size.heads)  # vocabulary and length: the language's
        self.module = EncoderModule(MaskedLM(language=BracketPairs(pairs=size.pairs)), encoder=config).to(device)
        self.opt = self.module.optimizer()
        self.size, self.device, self.bf16 = size, device, bf16
        self.rng = np.random.default_rng(0)

    def batch(self) -> dict[str, torch.Tensor]:
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


# ---------------------------------------------------------------- clocks and counts


def count_flops(train_step: Step) -> int:
    """FLOPs of forward + backward; attention through its math form, since the fused CPU kernel is uncounted."""
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        train_step()
    return counter.get_total_flops()


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed_steps(step: Step, steps: int, device: torch.device) -> list[float]:
    """Seconds of each of `steps` calls, the device's queue drained after each."""
    stamps = [time.perf_counter()]
    for _ in range(steps):
        step()
        sync(device)
        stamps.append(time.perf_counter())
    return list(np.diff(stamps))


def matmul_rate(device: torch.device, bf16: bool, n: int = 1024, repeats: int = 7) -> float:
    """FLOP/s of one large n x n matmul (4096 on a GPU; float32, or bf16 when asked), median of `repeats`."""
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


def model_steps(size: Size, repeats: int, steps: int, device: torch.device, bf16: bool) -> dict:
    """The project's model step against the plain loop's, A B A B ..., the first step of each block dropped
    (warm-up): median seconds of each, their training FLOPs, and the median matmul rate between blocks."""
    project, plain = ProjectModelStep(size, device, bf16), PlainLoop(size, 10**6, device, bf16)
    a_times, b_times, rates = [], [], []
    for _ in range(repeats):
        rates.append(matmul_rate(device, bf16))  # between blocks: a shared machine's speed drifts
        a_times += timed_steps(project.step, steps + 1, device)[1:]
        b_times += timed_steps(plain.step, steps + 1, device)[1:]
    return {
        "size": size,
        "flops_project": project.flops(),
        "flops_plain": plain.flops(),
        "project": statistics.median(a_times),
        "plain": statistics.median(b_times),
        "rate": statistics.median(rates),
    }


# ---------------------------------------------------------------- options and the report file


def parser(script: str, doc: str, out: str) -> argparse.ArgumentParser:
    """The options both benchmarks take: where to run, at which precision and size, how often, where to write."""
    p = ArgumentParser(prog=script, description=doc.splitlines()[0])
    p.add_argument("--accelerator", choices=("cpu", "gpu"), default="cpu")
    p.add_argument("--precision", choices=("32-true", "bf16-mixed"), default="32-true")
    p.add_argument("--width", type=int, default=32, help="encoder width (heads = width / 16)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5, help="alternations of the compared steps")
    p.add_argument("--out", default=out)
    return p


def parse(p: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parsed options plus `device`, `bf16`, `size` (the default sentence at the asked batch and width) and
    `command` (the command line, for the report). Sets one torch thread, as the plain loop is timed on one."""
    args = p.parse_args(argv)
    if args.accelerator == "gpu" and not torch.cuda.is_available():
        p.error("--accelerator gpu: no CUDA device is visible to torch here; use --accelerator cpu")
    torch.set_num_threads(1)
    args.device = torch.device("cuda" if args.accelerator == "gpu" else "cpu")
    args.bf16 = args.precision.startswith("bf16")
    args.size = Size(args.batch_size, 8, args.width)
    args.command = shlex.join(["python", p.prog, *(sys.argv[1:] if argv is None else argv)])
    return args


def machine(args: argparse.Namespace) -> str:
    return (
        f"Machine: {os.cpu_count()} CPU cores, torch {torch.__version__}, {args.accelerator}, "
        f"{torch.get_num_threads()} torch thread(s), precision {args.precision}"
    )


def write_keeping_notes(out: str | Path, text: str) -> None:
    """Write `text` to `out`, keeping whatever an existing `out` holds after the NOTES marker."""
    out = Path(out)
    kept = out.read_text().split(NOTES, 1) if out.exists() else []
    write_atomic(out, text + "\n" + NOTES + (kept[1] if len(kept) == 2 else "\n"))
