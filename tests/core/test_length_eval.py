"""Length evaluation (minibert.training.length_eval): the final weights graded at other lengths against each
length's own exact oracle, the language restored after, and bad settings refused in one line."""

import numpy as np
import pytest
import torch

from minibert.languages import BracketPairs, Dyck
from minibert.masking import IGNORE
from minibert.objectives import MaskedLM
from minibert.training.cli import main
from minibert.training.fit import QUIET, fit
from minibert.training.length_eval import LengthEval, grade
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
    # refused once the model is built, before the run makes any folder
    with pytest.raises(
        ValueError, match=r"length_eval.lengths=\[32\] needs 33 positions, over EncoderConfig.max_len=9: set"
    ):
        fit(
            ["configs/pretrain.yaml"], [*DYCK, "--trainer.max_steps=2", "--length_eval.lengths=[32]"], root_dir=tmp_path
        )
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="even lengths"):
        BracketPairs().at_length(7)


def test_the_shipped_length_config_without_max_len_exits_2_in_one_line_leaving_nothing(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        configs = ["-c", "configs/pretrain.yaml", "-c", "configs/languages/dyck.yaml", "-c", "configs/length.yaml"]
        main(["fit", *QUIET, *configs, "--trainer.max_steps=2", f"--trainer.default_root_dir={tmp_path / 'runs'}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: length_eval.lengths=[16, 48, 64] needs 65 positions")
    assert "set model.init_args.encoder.max_len to at least 65" in last and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_a_setup_hook_that_refuses_removes_the_folder_it_made(tmp_path, monkeypatch):
    """Whatever refuses in a setup hook before the first step (here a callback's ValueError) leaves no folder."""

    def refuse(self, trainer, pl_module):  # after the run's folder and config exist, before the first step
        assert list((tmp_path / "root").rglob("config.yaml"))
        raise ValueError("Refuser.setting=1 is not allowed: set it to 2")

    monkeypatch.setattr(LengthEval, "on_train_start", refuse, raising=False)
    (tmp_path / "root").mkdir()
    with pytest.raises(ValueError, match="Refuser.setting=1 is not allowed"):
        fit(["configs/pretrain.yaml"], ["--trainer.max_steps=2"], root_dir=tmp_path / "root")
    assert list((tmp_path / "root").iterdir()) == []
