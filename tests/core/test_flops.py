"""The FLOPs every shipped objective counts for a training step, against a formula written out here and
against torch.utils.flop_counter; and budgets in FLOPs or tokens that give each objective its steps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from minibert.flops import FlopCounter
from minibert.languages import BracketPairs, Dyck
from minibert.model import EncoderConfig
from minibert.objectives import (
    Combined,
    Grammaticality,
    MaskedLM,
    NextSentence,
    NextTokenLM,
    Probe,
    ReplacedTokenDetection,
    SpanMaskedLM,
)
from minibert.training.cli import AlreadyFinished
from minibert.training.finetune import FinetuneModule
from minibert.training.module import EncoderModule
from tests.ablating import ablate

ROOT = Path(__file__).resolve().parents[2]
B = 8  # batch size of every counted step


def encoder(C: int, L: int, B: int, T: int) -> int:
    """Forward FLOPs of L post-norm blocks of width C on (B, T): qkv 3C², output C², MLP 4C² and 4C² (a
    multiply-add is 2 FLOPs), and attention's scores and weighted sum, T² C each per sequence."""
    return L * (2 * B * T * (3 * C * C + C * C + 8 * C * C) + 2 * 2 * B * T * T * C)


def head(rows: int, C: int, out: int) -> int:
    return 2 * rows * C * out


def picked(batch) -> int:
    return int((batch["labels"] != -100).sum())


# objective builder, and the training step's FLOPs by formula: (module, batch) -> FLOPs. Everything trains,
# so a step is 3x its forward (backward = 2x), except the generator head's second, gradient-free pass
# (ELECTRA samples its proposals without a gradient) and what fine-tuning freezes.
def mlm_step(m, batch):
    c, (b, t) = m.encoder.config, batch["inputs"].shape
    return 3 * (encoder(c.width, c.layers, b, t) + head(picked(batch), c.width, c.vocab_size))


def next_token_step(m, batch):
    c, (b, t) = m.encoder.config, batch["inputs"].shape
    return 3 * (encoder(c.width, c.layers, b, t) + head(b * t, c.width, c.vocab_size))


def electra_step(m, batch):
    c, g, (b, t) = m.encoder.config, m.objective.generator.config, batch["inputs"].shape
    n = picked(batch)
    generator = 3 * (encoder(g.width, g.layers, b, t) + head(n, g.width, g.vocab_size)) + head(n, g.width, g.vocab_size)
    return generator + 3 * (encoder(c.width, c.layers, b, t) + head(b * t, c.width, 1))


def bert_step(m, batch):  # next sentence prediction + MLM on one encoder pass
    c, (b, t) = m.encoder.config, batch["inputs"].shape
    return 3 * (encoder(c.width, c.layers, b, t) + head(b, c.width, 2) + head(picked(batch), c.width, c.vocab_size))


def finetune_step(regime):
    def step(m, batch):
        c, (b, t) = m.encoder.config, batch["inputs"].shape
        features = m.objective.head.in_features
        if regime == "full":
            return 3 * (encoder(c.width, c.layers, b, t) + head(b, features, 2))
        # a frozen encoder runs forward only; its head trains on features that carry no gradient: 2x
        return encoder(c.width, c.layers, b, t) + 2 * head(b, features, 2)

    return step


def nsp(language):  # its documents are of bracket pairs: as many as the length asks for
    return NextSentence(language=BracketPairs(pairs=language.seq_len // 2), n_pairs=4)


OBJECTIVES = {
    "mlm": (lambda lang: MaskedLM(language=lang), {}, mlm_step),
    "mlm_causal": (lambda lang: MaskedLM(language=lang), {"causal": True}, mlm_step),
    "span": (lambda lang: SpanMaskedLM(language=lang), {}, mlm_step),
    "electra": (lambda lang: ReplacedTokenDetection(language=lang), {}, electra_step),
    "next_token": (lambda lang: NextTokenLM(language=lang), {}, next_token_step),
    "nsp+mlm": (lambda lang: Combined({"nsp": (n := nsp(lang)), "mlm": MaskedLM(language=n.language)}), {}, bert_step),
}
FINETUNE = {
    "full": (lambda lang: Grammaticality(language=lang), finetune_step("full")),
    "frozen": (lambda lang: Grammaticality(language=lang), finetune_step("frozen")),
    "probe": (lambda lang: Probe(language=lang, layer=1, concat=2, pooling="mean"), finetune_step("probe")),
}
LANGUAGES = {17: lambda: BracketPairs(), 33: lambda: Dyck(kinds=4, length=32, max_depth=6)}
SHAPES = [(32, 17), (64, 17), (32, 33), (64, 33)]  # (width, length of the encoder's input)


def counted(module, batch) -> tuple[int, int, int]:
    """(minibert's count, flop_counter's with PyTorch's own attention kernel, flop_counter's with attention
    as plain matmuls) for one training step: forward and backward."""
    counter = FlopCounter(module)
    with counter:
        module.objective(module.encoder, batch)
    counts = []
    for backend in (None, SDPBackend.MATH):
        with FlopCounterMode(display=False) as torch_count:
            if backend is None:
                module.objective(module.encoder, batch).loss.backward()
            else:
                with sdpa_kernel(backend):
                    module.objective(module.encoder, batch).loss.backward()
        counts.append(torch_count.get_total_flops())
    module.zero_grad()
    return counter.spent.total, *counts


def attention_flops(module, batch) -> int:
    """Attention's FLOPs in one training step, forward and backward (scores and weighted sum: 3 x 4 B T² C a
    layer), over every encoder the step runs (ELECTRA's generator too)."""
    encoders = [module.encoder] + ([module.objective.generator] if hasattr(module.objective, "generator") else [])
    if not any(p.requires_grad for p in module.encoder.parameters()):  # frozen: forward only
        encoders, times = [module.encoder], 1
    else:
        times = 3
    b, t = batch["inputs"].shape
    return sum(times * e.config.layers * 4 * b * t * t * e.config.width for e in encoders)


def check(module, batch, formula):
    ours, fast_kernel, plain_matmuls = counted(module, batch)
    expected = formula(module, batch)
    assert abs(ours - expected) <= 0.02 * expected, (ours, expected)
    assert ours == expected  # exactly, in fact: the formula counts the same matmuls
    assert ours == plain_matmuls  # flop_counter agrees once attention runs as matmuls it knows
    # ... and on CPU misses PyTorch's fused attention kernel entirely, forward and backward
    assert ours - fast_kernel == attention_flops(module, batch)


@pytest.mark.parametrize("width,length", SHAPES)
@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_a_pretraining_step_counts_the_flops_of_the_formula_and_of_torchs_counter(name, width, length):
    build, shape, formula = OBJECTIVES[name]
    language = LANGUAGES[length]()
    objective = build(language)
    torch.manual_seed(0)
    module = EncoderModule(objective=objective, encoder=EncoderConfig(width=width, **shape))
    batch = objective.make_batch(np.random.default_rng(0), B, "train")
    if name != "nsp+mlm":  # a pair of sentences is longer than one
        assert batch["inputs"].shape[1] == length - (name == "next_token")
    check(module, batch, formula)


@pytest.mark.parametrize("width,length", SHAPES)
@pytest.mark.parametrize("regime", sorted(FINETUNE))
def test_a_finetuning_step_counts_what_its_regime_trains(regime, width, length, tmp_path):
    build, formula = FINETUNE[regime]
    language = LANGUAGES[length]()
    pretrained = EncoderModule(objective=MaskedLM(language=language), encoder=EncoderConfig(width=width))
    ckpt = tmp_path / "pretrained.ckpt"
    torch.save({"state_dict": pretrained.state_dict(), "encoder_config": vars(pretrained.encoder_config),
                "compute": {"pretrain_flops": 123}}, ckpt)  # fmt: skip
    module = FinetuneModule(regime=regime, encoder_ckpt=str(ckpt), objective=build(language))
    assert module.encoder_flops(trained=10**6) == 123  # the encoder's pre-training, carried; its own not added
    batch = module.objective.make_batch(np.random.default_rng(0), B, "train")
    check(module, batch, formula)


def test_counters_nest_and_share_one_hook_per_layer():
    module = EncoderModule(objective=MaskedLM())
    batch = module.objective.make_batch(np.random.default_rng(0), B, "train")
    outer, inner = FlopCounter(module), FlopCounter(module)
    with outer:
        module.objective(module.encoder, batch)
        with inner:
            module.objective(module.encoder, batch)
    assert inner.spent.total == mlm_step(module, batch)  # once, though three counters cover the module
    assert outer.spent.total == mlm_step(module, batch)  # the inner one took the second pass
    forward = mlm_step(module, batch) // 3
    with torch.no_grad(), outer:  # no gradient: a second forward, and no backward to come
        module.objective(module.encoder, batch)
    assert (outer.spent.forward, outer.spent.backward) == (2 * forward, 2 * forward)


def run_summaries(out: Path) -> dict[str, dict]:
    found = {}
    for path in (out / "runs").glob("**/seed*/summary.json"):  # the runner's copy, beside the run's folder
        name = str(path.parent.parent.relative_to(out / "runs"))
        found[name] = {**json.loads(path.read_text()), "config": next(path.parent.glob("**/config.yaml")).read_text()}
    return found


@pytest.mark.slow
def test_a_flop_budget_in_a_grid_gives_each_objective_the_steps_that_spend_it(tmp_path):
    budget = 1.5e9  # about 9 MLM steps of batch 64 on the seed's language; fewer of ELECTRA's dearer ones
    grid = tmp_path / "budget.yaml"
    grid.write_text(
        "experiments:\n"
        "  - name: budget/{objective}\n"
        "    job_type: pretrain\n"
        f"    configs: [{ROOT}/configs/pretrain.yaml]\n"
        f"    overrides: {{budget.flops: {budget}, trainer.val_check_interval: 1000, data.val_size: 64}}\n"
        "    sweep:\n"
        "      objective:\n"
        "        mlm: {}\n"
        f"        electra: {{configs: [{ROOT}/configs/objectives/rtd.yaml]}}\n"
        f"        wide: {{overrides: {{model.init_args.encoder.width: 64}}}}\n"
    )
    result = ablate("--grid", str(grid), "--out", str(tmp_path / "out"), "--seeds", "1", "--workers", "1")
    assert result.returncode == 0, result.stderr
    summaries = run_summaries(tmp_path / "out")
    assert set(summaries) == {"budget/mlm", "budget/electra", "budget/wide"}
    for name, s in summaries.items():
        assert abs(s["flops"] - budget) <= s["flops_per_step"], name  # spent to within one step
        assert s["tokens"] == s["step"] * 64 * 17
        assert s["pretrain_flops"] == s["flops"]
        # the schedule follows: warm-up keeps the configured 30 / 600 of training, and decays at the last step
        assert f"max_steps: {s['step']}\n" in s["config"]
        assert f"warmup_steps: {round(30 * s['step'] / 600)}\n" in s["config"]
    steps = {name: s["step"] for name, s in summaries.items()}
    assert steps["budget/electra"] < steps["budget/mlm"] and steps["budget/wide"] < steps["budget/mlm"]
    report = (tmp_path / "out" / "ablation.md").read_text()
    assert "pretrain_flops" in report  # every run's compute is in the report, beside its figures


@pytest.mark.slow
def test_a_token_budget_reads_that_many_tokens_and_a_resume_counts_on(tmp_path):
    from minibert.training.fit import fit

    keep_all = tmp_path / "keep_all.yaml"
    keep_all.write_text(
        "trainer:\n  callbacks:\n    - class_path: lightning.pytorch.callbacks.ModelCheckpoint\n"
        "      init_args: {save_top_k: -1, every_n_train_steps: 10, filename: '{step}'}\n"
    )
    configs = [ROOT / "configs/pretrain.yaml", keep_all]
    tokens = 16 * 17 * 20  # 20 steps of 16 sentences of 17 tokens
    args = [
        "--trainer.val_check_interval=1000",
        "--data.val_size=64",
        "--data.batch_size=16",
        f"--budget.tokens={tokens}",
    ]
    whole = fit(configs, args, root_dir=tmp_path / "whole")
    assert whole["step"] == 20 and whole["tokens"] == tokens
    (at_10,) = Path(whole["log_dir"]).rglob("step=10.ckpt")
    assert torch.load(at_10, weights_only=True)["compute"]["tokens"] == tokens // 2
    resumed = fit(configs, [*args, f"--ckpt_path={at_10}"], root_dir=tmp_path / "resumed")
    assert (resumed["step"], resumed["tokens"], resumed["flops"]) == (whole["step"], whole["tokens"], whole["flops"])
    (at_20,) = Path(whole["log_dir"]).rglob("step=20.ckpt")
    # a finished run is known to be finished once the budget has given its steps
    with pytest.raises(AlreadyFinished, match=r"already finished \(step 20 of trainer.max_steps=20\)"):
        fit(configs, [*args, f"--ckpt_path={at_20}"], root_dir=tmp_path / "again")


def test_continued_pretraining_takes_the_encoder_and_adds_its_compute(tmp_path):
    language = BracketPairs()
    first = EncoderModule(objective=NextTokenLM(language=language))  # causal
    ckpt = tmp_path / "next_token.ckpt"
    torch.save({"state_dict": first.state_dict(), "encoder_config": vars(first.encoder_config),
                "compute": {"pretrain_flops": 10**9}}, ckpt)  # fmt: skip
    then = EncoderModule(objective=MaskedLM(language=language), encoder_ckpt=str(ckpt), init_seed=1)
    assert not then.encoder_config.causal  # MLM reads both sides of the weights next-token LM trained
    for (name, a), b in zip(first.encoder.state_dict().items(), then.encoder.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert then.encoder_flops(trained=5) == 10**9 + 5
    with pytest.raises(ValueError, match=r"encoder_ckpt=.* another shape \(width=32 there, 64 here\)"):
        EncoderModule(objective=MaskedLM(language=language), encoder=EncoderConfig(width=64), encoder_ckpt=str(ckpt))


@pytest.mark.parametrize(
    "args,message",
    [
        (["--budget.flops=-1"], r"budget\.flops=-1.0 is not allowed"),
        (["--budget.flops=1e9", "--budget.tokens=1e6"], r"budget\.flops and budget\.tokens are not allowed together"),
    ],
)
def test_a_bad_budget_is_one_line(args, message, tmp_path, capsys):
    from minibert.training.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["fit", f"--config={ROOT}/configs/pretrain.yaml", *args, f"--trainer.default_root_dir={tmp_path}"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and re.search(message, err), err
