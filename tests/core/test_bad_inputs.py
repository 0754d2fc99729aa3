"""Bad input fails before any training, with one last line that names the setting, the value given and what
is allowed, never a traceback from inside torch or jsonargparse alone.

Every case runs `minibert.training.cli.main` (what `python -m minibert` runs) in this process, which is cheap; a few
representative ones also run as a real `python -m minibert fit` subprocess, which must print the same last
line, exit with status 2 and print no traceback.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import torch
import yaml

from minibert.training.cli import main
from tests.clirun import QUIET, run_fit

PRETRAIN = ["-c", "configs/pretrain.yaml"]
FINETUNE = ["-c", "configs/finetune.yaml"]
TINY = ["--trainer.max_steps=2", "--data.val_size=100"]
MASKING = "--model.init_args.objective.init_args.masking"
ENCODER = "--model.init_args.encoder"
LANGUAGE = "--model.init_args.objective.init_args.language.init_args"
DYCK = "configs/languages/dyck.yaml"

# (case id, arguments after `fit`, fragments the last line must contain: the field, the value, what is allowed)
CASES = [
    ("p_pick>1", [*PRETRAIN, f"{MASKING}.p_pick=1.5"], ["MaskingRecipe.p_pick", "1.5", "in [0, 1]"]),
    (
        "p_random<0",
        [*PRETRAIN, "--model.init_args.objective.init_args.eval_masking.p_random=-0.1"],
        ["MaskingRecipe.p_random", "-0.1", "in [0, 1]"],
    ),
    ("mask+random>1", [*PRETRAIN, f"{MASKING}.p_random=0.3"], ["p_mask + p_random", "0.8 + 0.3", "<= 1"]),
    ("width%heads", [*PRETRAIN, f"{ENCODER}.heads=3"], ["EncoderConfig.width=32", "heads=3", "divisible by heads"]),
    ("width=0", [*PRETRAIN, f"{ENCODER}.width=0"], ["EncoderConfig.width", "0", "positive integer"]),
    ("layers<0", [*PRETRAIN, f"{ENCODER}.layers=-1"], ["EncoderConfig.layers", "-1", "positive integer"]),
    ("width=abc", [*PRETRAIN, f"{ENCODER}.width=abc"], ["width", "abc", "Expected a <class 'int'>"]),
    ("norm", [*PRETRAIN, f"{ENCODER}.norm=middle"], ["norm", "middle", "post", "pre"]),
    ("max_steps=0", [*PRETRAIN, "--trainer.max_steps=0"], ["trainer.max_steps", "0", "positive integer"]),
    ("max_steps<0", [*PRETRAIN, "--trainer.max_steps=-5"], ["trainer.max_steps", "-5", "positive integer"]),
    ("batch_size=0", [*PRETRAIN, "--data.batch_size=0"], ["StreamDataModule.batch_size", "0", "positive integer"]),
    ("val_size<0", [*PRETRAIN, "--data.val_size=-1"], ["StreamDataModule.val_size", "-1", "positive integer"]),
    ("num_workers<0", [*PRETRAIN, "--data.num_workers=-1"], ["StreamDataModule.num_workers", "-1", ">= 0"]),
    ("lr<0", [*PRETRAIN, "--model.init_args.lr=-0.001"], ["EncoderModule.lr", "-0.001", "positive number"]),
    ("warmup<0", [*PRETRAIN, "--model.init_args.warmup_steps=-3"], ["warmup_steps", "-3", "integer >= 0"]),
    ("regime", [*FINETUNE, "--model.init_args.regime=half"], ["FinetuneModule.regime", "half", "frozen", "full"]),
    ("regime needs ckpt", [*FINETUNE, "--model.init_args.regime=frozen"], ["encoder_ckpt", "frozen", "required"]),
    (
        "objective class",
        [*PRETRAIN, "--model.init_args.objective.class_path=minibert.objectives.Nope"],
        ["objective", "minibert.objectives.Nope", "has no attribute"],
    ),
    (
        "unknown model key",
        [*PRETRAIN, "--model.init_args.bogus=1"],
        ["EncoderModule", "'bogus' is not accepted", "accepts: objective, encoder, lr"],
    ),
    ("unknown encoder key", [*PRETRAIN, f"{ENCODER}.depth=4"], ["'depth' is not accepted", "layers"]),
    ("unknown trainer arg", [*PRETRAIN, "--trainer.max_step=10"], ["unrecognized arguments", "--trainer.max_step"]),
    ("strategy", [*PRETRAIN, "--trainer.strategy=nonsense"], ["strategy='nonsense'", "auto, ddp"]),
    # Lightning accepts these, then fails (or validates nothing) after start-up
    (
        "log_every_n_steps=0",
        [*PRETRAIN, "--trainer.log_every_n_steps=0"],
        ["trainer.log_every_n_steps=0", "positive integer"],
    ),
    (
        "val_check_interval=0",
        [*PRETRAIN, "--trainer.val_check_interval=0"],
        ["trainer.val_check_interval=0", "positive number of steps"],
    ),
    (
        "accumulate_grad_batches=0",
        [*PRETRAIN, "--trainer.accumulate_grad_batches=0"],
        ["trainer.accumulate_grad_batches=0", "positive integer"],
    ),
    ("gradient_clip_val<0", [*PRETRAIN, "--trainer.gradient_clip_val=-1"], ["trainer.gradient_clip_val=-1", ">= 0"]),
    (
        "limit_val_batches=0",
        [*PRETRAIN, "--trainer.limit_val_batches=0"],
        ["trainer.limit_val_batches=0", "positive number"],
    ),
    (
        "check_val_every_n_epoch=0",
        [*PRETRAIN, "--trainer.check_val_every_n_epoch=0"],
        ["trainer.check_val_every_n_epoch=0", "positive integer"],
    ),
    ("max_epochs=0", [*PRETRAIN, "--trainer.max_epochs=0"], ["trainer.max_epochs=0", "max_steps is the budget"]),
    ("val_seed<0", [*PRETRAIN, "--data.val_seed=-1"], ["data.val_seed=-1", ">= 0"]),
    ("data.seed<0", [*PRETRAIN, "--data.seed=-1"], ["StreamDataModule.seed=-1", "[0, 4294967295]"]),
    ("init_seed>2**32-1", [*PRETRAIN, "--model.init_seed=4294967296"], ["init_seed=4294967296", "[0, 4294967295]"]),
    ("lr_scheduler", [*PRETRAIN, "--lr_scheduler=StepLR"], ["lr_scheduler is not supported", "warmup_steps"]),
    ("optimizer", [*PRETRAIN, "--optimizer", "SGD"], ["optimizer is not supported", "model.init_args.lr"]),
    ("seed<0", [*PRETRAIN, "--seed_everything=-1"], ["seed_everything=-1", "[0, 4294967295]"]),
    ("seed>2**32-1", [*PRETRAIN, "--seed_everything=4294967296"], ["seed_everything=4294967296", "[0, 4294967295]"]),
    (
        "oracle over its memory budget",
        [*PRETRAIN, "-c", "configs/languages/dyck.yaml", f"{LANGUAGE}.length=512", f"{LANGUAGE}.oracle_memory_gb=0.2"],
        ["Dyck(length=512", "about 0.4 GB for one sentence", "oracle_memory_gb=0.2", "lower length"],
    ),
    # languages: an objective without a corpus for the language, an encoder shorter than its sentences
    (
        "nsp on dyck",
        [*PRETRAIN, "-c", "configs/objectives/nsp.yaml", "-c", DYCK],
        ["NextSentence.language=Dyck(kinds=4, length=32, max_depth=6)", "needs a"],
    ),
    ("bert on dyck", [*PRETRAIN, "-c", "configs/objectives/bert.yaml", "-c", DYCK], ["language"]),
    ("max_len<dyck", [*PRETRAIN, "-c", DYCK, f"{ENCODER}.max_len=17"], ["EncoderConfig.max_len=17", "at least 33"]),
]


def with_tiny(args: list, root: Path) -> list:
    """The case's first config, a tiny budget, then the case's own settings (which win)."""
    return [*args[:2], *TINY, *args[2:], f"--trainer.default_root_dir={root}"]


def last_stderr_line(capsys, args: list) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["fit", *QUIET, *map(str, args)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("args, fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_setting_is_named_before_training(capsys, tmp_path, args, fragments):
    line = last_stderr_line(capsys, with_tiny(args, tmp_path))
    assert line.startswith("error: ")
    assert all(f in line for f in fragments), line
    assert not any(tmp_path.iterdir()), "nothing may be written before the configuration is known to be good"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    """A real last.ckpt of a 2-step pre-training run (the default shape: width 32, 2 heads)."""
    root = tmp_path_factory.mktemp("pretrained")
    main(["fit", *QUIET, *PRETRAIN, *TINY, f"--trainer.default_root_dir={root}"])
    (found,) = root.glob("**/checkpoints/last.ckpt")
    return found


def file_cases(tmp_path: Path, checkpoint: Path) -> dict[str, tuple[list, list[str]]]:
    """Bad files, made in `tmp_path`: (arguments, fragments of the last line) by case id."""
    malformed = tmp_path / "malformed.yaml"
    malformed.write_text("trainer:\n  max_steps: [10,\n")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("trainer:\n  max_step: 10\n")
    garbage = tmp_path / "garbage.ckpt"
    garbage.write_text("not a checkpoint")
    truncated = tmp_path / "truncated.ckpt"
    truncated.write_bytes(checkpoint.read_bytes()[: checkpoint.stat().st_size // 2])
    foreign = tmp_path / "foreign.ckpt"
    torch.save({"state_dict": {}}, foreign)
    missing = tmp_path / "missing.ckpt"
    saved = torch.load(checkpoint, weights_only=True)
    unknown_field, bad_norm = tmp_path / "unknown_field.ckpt", tmp_path / "bad_norm.ckpt"
    torch.save({**saved, "encoder_config": {**saved["encoder_config"], "depth": 4}}, unknown_field)
    torch.save({**saved, "encoder_config": {**saved["encoder_config"], "norm": "middle"}}, bad_norm)
    return {
        "encoder_ckpt with an unknown encoder_config field": (
            [*FINETUNE, f"--model.init_args.encoder_ckpt={unknown_field}"],
            ["encoder_ckpt", str(unknown_field), "encoder_config this code cannot build", "depth"],
        ),
        "encoder_ckpt with a bad norm": (
            [*FINETUNE, f"--model.init_args.encoder_ckpt={bad_norm}"],
            ["encoder_ckpt", str(bad_norm), "encoder_config this code cannot build", "middle"],
        ),
        "malformed yaml": ([*PRETRAIN, "-c", malformed], [str(malformed), "not valid YAML", "line 3"]),
        "unknown yaml key": ([*PRETRAIN, "-c", unknown], ["trainer.max_step", "does not accept"]),
        "missing config": ([*PRETRAIN, "-c", tmp_path / "nope.yaml"], ["config", "nope.yaml", "does not exist"]),
        "missing ckpt": ([*PRETRAIN, f"--ckpt_path={missing}"], ["ckpt_path", str(missing), "no such file"]),
        "garbage ckpt": ([*PRETRAIN, f"--ckpt_path={garbage}"], ["ckpt_path", str(garbage), "not a zip archive"]),
        "truncated ckpt": ([*PRETRAIN, f"--ckpt_path={truncated}"], ["ckpt_path", str(truncated), "not a zip archive"]),
        "foreign ckpt": ([*PRETRAIN, f"--ckpt_path={foreign}"], ["ckpt_path", "not a minibert checkpoint"]),
        "ckpt of another shape": (
            [*PRETRAIN, f"--ckpt_path={checkpoint}", f"{ENCODER}.width=64", f"{ENCODER}.heads=4"],
            ["ckpt_path", "another shape", "width=32 there, 64 here", "heads=2 there, 4 here"],
        ),
        "encoder_ckpt missing": (
            [*FINETUNE, f"--model.init_args.encoder_ckpt={missing}"],
            ["encoder_ckpt", str(missing), "no such file"],
        ),
        "encoder_ckpt truncated": (
            [*FINETUNE, f"--model.init_args.encoder_ckpt={truncated}"],
            ["encoder_ckpt", str(truncated), "not a zip archive"],
        ),
        "encoder_ckpt of another shape": (
            [*FINETUNE, f"--model.init_args.encoder_ckpt={checkpoint}", f"{ENCODER}.width=64", f"{ENCODER}.heads=4"],
            ["FinetuneModule.encoder", "width=64", "differs from the checkpoint", "width=32"],
        ),
    }


FILE_CASES = [
    "malformed yaml",
    "unknown yaml key",
    "missing config",
    "missing ckpt",
    "garbage ckpt",
    "truncated ckpt",
    "foreign ckpt",
    "ckpt of another shape",
    "encoder_ckpt missing",
    "encoder_ckpt truncated",
    "encoder_ckpt of another shape",
    "encoder_ckpt with an unknown encoder_config field",
    "encoder_ckpt with a bad norm",
]


@pytest.mark.parametrize("case", FILE_CASES)
def test_bad_file_is_named_before_training(capsys, tmp_path, checkpoint, case):
    args, fragments = file_cases(tmp_path, checkpoint)[case]
    root = tmp_path / "run"
    line = last_stderr_line(capsys, with_tiny(args, root))
    assert line.startswith("error: ")
    assert all(f in line for f in fragments), line
    assert not root.exists(), "nothing may be written before the configuration is known to be good"


def test_unwritable_root_is_one_line_with_status_3(capsys, tmp_path):
    """A root the run cannot create (under a file here; a read-only folder when not running as root) ends in
    one line naming the path and what to do, with status 3 (the machine, not the settings)."""
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    roots = [blocker / "run"]
    if os.geteuid() != 0:  # root ignores permission bits
        readonly = tmp_path / "readonly"
        readonly.mkdir(mode=0o555)
        roots.append(readonly / "run")
    for root in roots:
        with pytest.raises(SystemExit) as exited:
            main(["fit", *QUIET, *PRETRAIN, *TINY, f"--trainer.default_root_dir={root}"])
        assert exited.value.code == 3
        err = capsys.readouterr().err
        line = err.strip().splitlines()[-1]
        assert "Traceback" not in err and line.startswith("error: cannot read or write")
        assert str(blocker if root.parent == blocker else root.parent) in line and "trainer.default_root_dir" in line


def test_full_disk_mid_run_is_one_line_with_status_3(capsys, tmp_path, monkeypatch):
    import minibert.training.checkpoints

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(minibert.training.checkpoints, "write_atomic", full)  # every checkpoint write hits a full disk
    with pytest.raises(SystemExit) as exited:
        main(["fit", *QUIET, *PRETRAIN, *TINY, f"--trainer.default_root_dir={tmp_path}"])
    assert exited.value.code == 3
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1]
    assert "Traceback" not in err and "No space left on device" in line and "last.ckpt" in line


def test_enough_distinct_bad_inputs():
    assert len(CASES) + len(FILE_CASES) >= 15


@pytest.mark.slow  # a real process of its own: with the claims
def test_real_cli_prints_one_clear_line(tmp_path):
    """The same as a user sees it: `python -m minibert fit ...` exits with status 2, no traceback, and the
    last line of stderr names the setting (one case: the others take the same path through `main`)."""
    args, fragments = next(c[1:] for c in CASES if c[0] == "width%heads")
    done = run_fit(*with_tiny(args, tmp_path))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and all(f in last for f in fragments), last


def test_a_number_given_as_quoted_text_in_yaml_is_named_as_text(tmp_path, capsys):
    layer = tmp_path / "quoted.yaml"
    language = {"class_path": "minibert.languages.Dyck", "init_args": {"kinds": '"4"'}}
    layer.write_text(yaml.safe_dump({"model": {"init_args": {"objective": {"init_args": {"language": language}}}}}))
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", *PRETRAIN, "-c", str(layer), *TINY, f"--trainer.default_root_dir={tmp_path}"])
    assert exit_info.value.code == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "kinds: Expected a <class 'int'>. Got the text \"4\" (quoted, so a string)" in line
