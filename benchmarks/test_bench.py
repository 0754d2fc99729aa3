"""The benchmarks measure what they say: the plain loop of the head-to-head is the project's architecture,
small runs of benchmarks/bench.py count the arithmetic's FLOPs, and benchmarks/bench_floor.py replays the
step's work. Run with `pytest benchmarks` (not part of the default `pytest`)."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from minibert.objectives import MaskedLM
from minibert.training.module import EncoderModule


@pytest.fixture(scope="module")
def bench(benches):
    return benches("bench")


@pytest.fixture(scope="module")
def floor(benches):
    return benches("bench_floor")


@pytest.fixture(scope="module")
def steps(benches):
    return benches("bench_steps")


def test_the_plain_loop_is_the_project_architecture(steps):
    """Same weights in the benchmark's nn.MultiheadAttention model give the project's logits: the head-to-head
    compares implementations, not models."""
    torch.manual_seed(0)
    module = EncoderModule(MaskedLM())
    plain = steps.PlainBert(width=32, heads=2, layers=2, max_len=17)
    with torch.no_grad():
        plain.tok.weight.copy_(module.encoder.tok.weight)
        plain.pos.weight.copy_(module.encoder.pos.weight)
        plain.head.load_state_dict(module.objective.head.state_dict())
        for ours, theirs in zip(module.encoder.blocks, plain.blocks, strict=True):
            theirs.attn.in_proj_weight.copy_(ours.attn.qkv.weight)
            theirs.attn.in_proj_bias.copy_(ours.attn.qkv.bias)
            theirs.attn.out_proj.load_state_dict(ours.attn.proj.state_dict())
            for name in ("norm1", "mlp", "norm2"):
                getattr(theirs, name).load_state_dict(getattr(ours, name).state_dict())
        ids = torch.randint(0, 18, (6, 17))
        torch.testing.assert_close(plain(ids), module.objective.head(module.encoder(ids)), rtol=1e-5, atol=1e-5)


def _plain_forward_flops(batch: int, pairs: int, width: int, layers: int = 2, vocab: int = 18) -> int:
    T = 1 + 2 * pairs
    tokens = batch * T
    per_layer = 2 * tokens * width * (3 * width + width + 8 * width) + 2 * 2 * batch * T * T * width
    return layers * per_layer + 2 * tokens * width * vocab


def test_bench_runs_small_and_its_figures_add_up(bench, steps, tmp_path):
    out = tmp_path / "bench.md"
    out.write_text(f"old tables\n{steps.NOTES}\nhand-written notes\n")
    result = bench.main(
        ["--repeats", "2", "--steps", "3", "--warmup", "1", "--batch-size", "8", "--scaling-pairs", "2", "4",
         "--scaling-widths", "64", "--scaling-steps", "1", "--data-seconds", "0.05", "--out", str(out)]
    )  # fmt: skip
    text = out.read_text()
    assert "old tables" not in text and text.endswith("hand-written notes\n")
    assert f"{__import__('os').cpu_count()} CPU cores" in text and "--batch-size 8" in text
    h2h = result["h2h"]
    assert len(h2h["ratios"]) == len(h2h["rates"]) == 2 and all(r > 0 for r in h2h["ratios"] + h2h["rates"])
    # counted FLOPs are the arithmetic's: 3 x forward (backward costs two forward's), attention included
    assert h2h["flops_plain"] == 3 * _plain_forward_flops(8, 8, 32)
    # the project grades only the picked positions, so its head does less work; the rest is identical
    assert 0.9 * h2h["flops_plain"] < h2h["flops_project"] < h2h["flops_plain"]
    rows = {(r["size"].pairs, r["size"].width): r for r in result["scaling"]}
    assert rows[(2, 32)]["flops_plain"] == 3 * _plain_forward_flops(8, 2, 32)
    assert rows[(4, 32)]["flops_plain"] == 3 * _plain_forward_flops(8, 4, 32)
    assert rows[(8, 64)]["flops_plain"] == 3 * _plain_forward_flops(8, 8, 64)
    assert all(r > 0 for r in result["data"]) and result["rate"] > 0


def test_bench_floor_runs_small_and_its_figures_add_up(floor, steps, tmp_path):
    out = tmp_path / "bench_floor.md"
    out.write_text(f"old tables\n{steps.NOTES}\nhand-written notes\n")
    result = floor.main(
        ["--repeats", "1", "--steps", "2", "--replays", "3", "--batch-size", "8", "--no-compile-probe",
         "--out", str(out)]
    )  # fmt: skip
    text = out.read_text()
    assert "old tables" not in text and text.endswith("hand-written notes\n") and "--batch-size 8" in text
    assert result["steps"]["flops_plain"] == 3 * _plain_forward_flops(8, 8, 32)
    kernels = result["floor"]
    assert 0 < kernels["matrix"] < kernels["all"] and "# Floor: the step's kernels alone" in text
    assert sum(calls for calls, _ in kernels["per_kernel"].values()) == kernels["kernels"]


def test_the_floor_replays_the_kernels_of_a_training_step(floor, steps):
    """Every FLOP of the step is replayed. Its matrix kernels: one forward GEMM per linear (8 in the encoder,
    1 head), two backward GEMMs each (input and weight gradients), one attention kernel forward and one
    backward per layer; the optimizer's fused AdamW is among the other kernels."""
    torch.manual_seed(0)
    step = steps.ProjectModelStep(steps.Size(batch=8), torch.device("cpu"), bf16=False)
    batch_state = step.rng.bit_generator.state  # the same batch (and picked count) for both counts below
    with floor.StepKernels() as kernels:
        step.step()
    names = [func.overloadpacket.__name__ for func, _, _ in kernels.calls]
    matrix = [
        name for (func, _, _), name in zip(kernels.calls, names, strict=True) if floor.StepKernels.is_matrix(func)
    ]
    attention = [n for n in matrix if "attention" in n]
    assert (matrix.count("addmm"), matrix.count("mm"), len(attention)) == (9, 18, 4) and len(matrix) == 31
    assert sorted(attention) == sorted(2 * [attention[0], f"{attention[0]}_backward"])
    assert names.count("_fused_adamw_") == 2 and "gelu_backward" in names and "view" not in names

    def flops(run) -> dict[str, int]:
        with FlopCounterMode(display=False) as counter:
            run()
        return {op.__name__: n for op, n in counter.get_flop_counts()["Global"].items()}

    replayed, matrix_only = flops(kernels.replay), flops(lambda: kernels.replay(matrix_only=True))
    step.rng.bit_generator.state = batch_state
    counted = flops(step.step)
    assert replayed == matrix_only == counted and counted["mm"] > 0 and counted["addmm"] > 0


@pytest.mark.slow
def test_the_compile_probe_times_an_encoder_that_computes_what_the_eager_one_does(floor, steps, tmp_path):
    out = tmp_path / "bench_floor.md"
    result = floor.main(["--repeats", "1", "--steps", "2", "--replays", "3", "--batch-size", "8", "--out", str(out)])
    compiled = result["compiled"]
    assert compiled["compile"] > compiled["compiled"] > 0 and compiled["eager"] > 0  # the first step compiled
    assert "encoder under torch.compile" in out.read_text()
    torch.manual_seed(0)
    encoder = steps.ProjectModelStep(steps.Size(batch=8), torch.device("cpu"), bf16=False).module.encoder
    ids = torch.randint(0, 18, (8, 17))
    eager = encoder(ids)
    encoder.compile()
    torch.testing.assert_close(encoder(ids), eager)


def test_bench_bf16_option_runs_unchanged_on_cpu(bench, tmp_path):
    result = bench.main(
        ["--precision", "bf16-mixed", "--repeats", "1", "--steps", "2", "--warmup", "1", "--batch-size", "8",
         "--width", "64", "--scaling-pairs", "2", "--scaling-widths", "--scaling-steps", "1",
         "--data-seconds", "0.05", "--out", str(tmp_path / "bench.md")]
    )  # fmt: skip
    assert result["h2h"]["flops_plain"] == 3 * _plain_forward_flops(8, 8, 64)
    assert "precision bf16-mixed" in (tmp_path / "bench.md").read_text()


@pytest.mark.parametrize("script", ["bench", "bench_floor"])
def test_bench_refuses_a_gpu_it_cannot_see(script, benches, capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible here")
    with pytest.raises(SystemExit):
        benches(script).main(["--accelerator", "gpu"])
    assert "--accelerator gpu" in capsys.readouterr().err
