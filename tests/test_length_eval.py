"""Length evaluation (minibert.training.length_eval): the final weights graded at other lengths against each
length's own exact oracle, the language restored after, and bad settings refused in one line."""

import numpy as np
import pytest
import torch

from minibert.languages import BracketPairs, Dyck
from minibert.masking import IGNORE
from minibert.objectives import MaskedLM
from minibert.training.fit import fit
from minibert.training.length_eval import grade
from minibert.training.module import EncoderModule

DYCK = ["--model.init_args.objective.init_args.language.class_path=minibert.languages.Dyck",
        "--model.init_args.objective.init_args.language.init_args.length=8",
        "--model.init_args.objective.init_args.language.init_args.max_depth=3"]  # fmt: skip


def module(length: int = 8, max_len: int | None = 17) -> EncoderModule:
    torch.manual_seed(0)
    from minibert.model import EncoderConfig

    return EncoderModule(MaskedLM(language=Dyck(kinds=2, length=length, max_depth=3)), EncoderConfig(max_len=max_len))


def test_each_length_is_graded_against_its_own_exact_ceiling_on_its_own_questions():
    m = module().eval()
    longer = m.objective.language.at_length(16)
    figures = grade(m, longer, size=300, batch_size=128, seed=7)
    # the same questions, drawn and graded here by hand: the oracle's mean credit over the masked positions
    batch = MaskedLM(language=longer).make_batch(np.random.default_rng([7, 16]), 300, "val")
    picked = batch["labels"] != IGNORE
    assert figures["ceiling/acc"].item() == pytest.approx(batch["credit"][picked].double().mean().item(), abs=1e-6)
    assert figures["n"].item() == picked.sum().item()
    assert figures["gap/acc"].item() == pytest.approx((figures["ceiling/acc"] - figures["acc"]).item(), abs=1e-6)
    # a longer sentence is another question: its ceiling is not the training length's
    own = grade(m, m.objective.language, size=300, batch_size=128, seed=7)
    assert own["ceiling/acc"].item() != pytest.approx(figures["ceiling/acc"].item(), abs=1e-3)
    assert m.objective.language == Dyck(kinds=2, length=8, max_depth=3)  # put back


def test_a_run_logs_every_length_into_its_summary(tmp_path):
    summary = fit(["configs/pretrain.yaml"], [*DYCK, "--trainer.max_steps=3", "--trainer.val_check_interval=3",
                  "--data.val_size=64", "--model.init_args.encoder.max_len=21", "--length_eval.lengths=[4,20]",
                  "--length_eval.val_size=64"], root_dir=tmp_path)  # fmt: skip
    for n in (4, 20):
        assert 0 < summary[f"val/length_{n}/ceiling/acc"] <= 1
        assert summary[f"val/length_{n}/acc"] + summary[f"val/length_{n}/gap/acc"] == pytest.approx(
            summary[f"val/length_{n}/ceiling/acc"], abs=1e-6
        )
    assert "val/length_8/acc" not in summary  # the training length is val/acc itself


def test_lengths_past_the_positions_or_a_language_without_lengths_are_refused_in_one_line(tmp_path):
    # refused at setup, before the first training step
    with pytest.raises(
        ValueError, match=r"length_eval.lengths=\[32\] needs 33 positions, over EncoderConfig.max_len=9: set"
    ):
        fit(
            ["configs/pretrain.yaml"], [*DYCK, "--trainer.max_steps=2", "--length_eval.lengths=[32]"], root_dir=tmp_path
        )
    assert not list(tmp_path.rglob("*.ckpt"))
    with pytest.raises(ValueError, match="even lengths"):
        BracketPairs().at_length(7)
