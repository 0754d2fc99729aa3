"""Floor: the kernels of one project model step replayed alone, against the step that twice the plain loop's
utilisation needs; where that time goes, kernel by kernel; and the step with the encoder under torch.compile.

    python benchmarks/bench_floor.py                # CPU, one thread, default size; writes results/bench_floor.md
    python benchmarks/bench_floor.py --accelerator gpu --precision bf16-mixed --width 256 --batch-size 512

1. Budget: the project's model step and the plain loop's alternate (A B A B ..., benchmarks/bench_steps.py);
   utilisation_project >= 2 x utilisation_plain  <=>  t_project <= t_plain x flops_project / (2 flops_plain).
2. Floor: the ATen kernels of one project model step (forward, backward, AdamW) are recorded with their
   arguments and replayed back to back (all of them, then the GEMMs and fused attention alone) with no Python
   module code, autograd engine, optimizer loop, data or Trainer around them.
3. Per kernel: each recorded kernel timed on its own, summed per step by kernel type.
4. Compiled: the model step with the encoder compiled by `torch.compile` (inductor: fused kernels) against
   it eager, and what the compilation costs (`--no-compile-probe` skips it; it needs a C++ compiler).
Anything after the NOTES marker in an existing `--out` file is kept (the hand-written analysis).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]  # run from a checkout without installing; bench_steps is here

import bench_steps  # noqa: E402


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


def kernel_floor(size: bench_steps.Size, device: torch.device, bf16: bool, replays: int) -> dict:
    """Median times of replaying the kernels of one project model step (recorded after a warm-up step), all
    of them and the matrix kernels alone; and each kernel type's calls and time per step, timed one by one."""
    step = bench_steps.ProjectModelStep(size, device, bf16)
    step.step()  # warm-up
    with StepKernels() as kernels:
        step.step()
    times = {
        name: statistics.median(bench_steps.timed_steps(lambda m=matrix_only: kernels.replay(m), replays, device)[1:])
        for name, matrix_only in (("all", False), ("matrix", True))
    }  # the first replay of each is dropped (warm-up)
    names = [func.overloadpacket.__name__ for func, _, _ in kernels.calls]
    seconds = dict.fromkeys(names, 0.0)  # per step, each kernel timed on its own
    rounds = max(1, replays // 10)
    with torch.no_grad():
        for _ in range(rounds):
            for name, (func, args, kwargs) in zip(names, kernels.calls, strict=True):
                start = time.perf_counter()
                func(*args, **kwargs)
                bench_steps.sync(device)
                seconds[name] += (time.perf_counter() - start) / rounds
    calls = Counter(names)
    matrix = [n for n, (func, _, _) in zip(names, kernels.calls, strict=True) if StepKernels.is_matrix(func)]
    return {
        **times,
        "kernels": len(names),
        "matrix_calls": dict(Counter(matrix)),
        "per_kernel": {n: (calls[n], seconds[n]) for n in sorted(seconds, key=seconds.get, reverse=True)},
    }


def compile_probe(size: bench_steps.Size, repeats: int, steps: int, device: torch.device, bf16: bool) -> dict:
    """Model step with the encoder compiled by torch.compile against the same step eager (A B A B ...); the
    first compiled step's time is the compilation (less when inductor's on-disk cache already holds it)."""
    eager, compiled = (bench_steps.ProjectModelStep(size, device, bf16) for _ in range(2))
    compiled.module.encoder.compile()
    compile_time = bench_steps.timed_steps(compiled.step, 1, device)[0]
    a_times, b_times = [], []
    for _ in range(repeats):  # the first step of each block dropped (warm-up)
        a_times.append(statistics.median(bench_steps.timed_steps(compiled.step, steps + 1, device)[1:]))
        b_times.append(statistics.median(bench_steps.timed_steps(eager.step, steps + 1, device)[1:]))
    return {"compile": compile_time, "compiled": statistics.median(a_times), "eager": statistics.median(b_times)}


def report(args, alternated: dict, floor: dict, compiled: dict | None) -> str:
    needed = alternated["plain"] * alternated["flops_project"] / (2 * alternated["flops_plain"])
    calls = ", ".join(f"{n} {name}" for name, n in floor["matrix_calls"].items())
    share = lambda t: f"{t * 1e3:.2f} ({t / needed * 100:.0f}% of the 2x budget)"  # noqa: E731
    top, rest = list(floor["per_kernel"].items())[:12], list(floor["per_kernel"].values())[12:]
    compiled_rows = []
    if compiled:
        compiled_rows = [
            f"| the project model step, eager, alternated with the compiled one | {compiled['eager'] * 1e3:.2f} |",
            f"| the same with the encoder under torch.compile (inductor; {compiled['compile']:.1f} s to compile) "
            f"| {share(compiled['compiled'])} |",
        ]
    return "\n".join(
        [
            "# Floor: the step's kernels alone",
            "",
            f"Command: `{args.command}`  ",
            f"{bench_steps.machine(args)}",
            "",
            f"At {args.size}. The forward, backward and AdamW update of one project model step are recorded at the "
            "ATen level and their kernels replayed back to back, with no Python module code, autograd engine, "
            "optimizer loop, data or Trainer around them (each replayed op still pays its own call into the "
            "dispatcher, a few us). The user run's step, with the Trainer, is in [`bench.md`](bench.md).",
            "",
            "| | ms per step |",
            "|---|---|",
            f"| plain loop step (data, forward, backward, AdamW) | {alternated['plain'] * 1e3:.2f} |",
            f"| **step time that twice the plain loop's utilisation needs** | **{needed * 1e3:.2f}** |",
            f"| project model step (data, forward, backward, AdamW; no Trainer) | {alternated['project'] * 1e3:.2f} |",
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
    )


def main(argv: list[str] | None = None) -> dict:
    p = bench_steps.parser("benchmarks/bench_floor.py", __doc__, out="results/bench_floor.md")
    p.add_argument("--steps", type=int, default=100, help="timed steps per block of each alternation")
    p.add_argument("--replays", type=int, default=200, help="replays of the recorded step")
    p.add_argument(
        "--compile-probe",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time the model step with the encoder under torch.compile (compiles first; needs a C++ compiler)",
    )
    args = bench_steps.parse(p, argv)
    log = lambda msg: print(msg, flush=True)  # noqa: E731

    alternated = bench_steps.model_steps(args.size, args.repeats, args.steps, args.device, args.bf16)
    log(f"model step: project {alternated['project'] * 1e3:.2f} ms, plain {alternated['plain'] * 1e3:.2f} ms")
    floor = kernel_floor(args.size, args.device, args.bf16, args.replays)
    log(f"floor: every kernel {floor['all'] * 1e3:.2f} ms, matrix kernels {floor['matrix'] * 1e3:.2f} ms")
    compiled = None
    if args.compile_probe:
        compiled = compile_probe(args.size, args.repeats, args.steps, args.device, args.bf16)
        log(f"compiled encoder: {compiled['compiled'] * 1e3:.2f} ms vs eager {compiled['eager'] * 1e3:.2f} ms")

    text = report(args, alternated, floor, compiled)
    bench_steps.write_keeping_notes(args.out, text)
    print(text)
    return {"steps": alternated, "floor": floor, "compiled": compiled}


if __name__ == "__main__":
    main()
