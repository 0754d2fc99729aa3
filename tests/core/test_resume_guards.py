"""`--ckpt_path` is checked before anything runs: a finished run is left alone (status 0, nothing written), a
checkpoint trained with other settings or of another kind of model is refused naming what differs, a
damaged newest checkpoint is skipped for the previous complete one, and fine-tuning keeps `last.ckpt`."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import torch

from minibert.training.checkpoints import CONFIG_KEY
from minibert.training.cli import main
from tests.clirun import QUIET

PRETRAIN = ["-c", "configs/pretrain.yaml"]
FINETUNE = ["-c", "configs/finetune.yaml"]
TINY = ["--trainer.max_steps=4", "--data.val_size=50"]


def cli(capsys, *args) -> tuple[int, str]:
    """`python -m minibert fit ARGS` in this process: (exit status, stderr)."""
    try:
        main(["fit", *QUIET, *map(str, args)])
        status = 0
    except SystemExit as exit_:
        status = exit_.code or 0
    return status, capsys.readouterr().err


def snapshot(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished 4-step pre-training run's root."""
    root = tmp_path_factory.mktemp("finished")
    main(["fit", *QUIET, *PRETRAIN, *TINY, f"--trainer.default_root_dir={root}"])
    return root


def test_finished_run_is_not_resumed(capsys, finished):
    before = snapshot(finished)
    status, err = cli(capsys, *PRETRAIN, *TINY, f"--trainer.default_root_dir={finished}", "--ckpt_path=last")
    assert status == 0
    assert "already finished (step 4 of trainer.max_steps=4)" in err
    assert snapshot(finished) == before, "outputs must be left untouched: no new version, no new summary"


def test_checkpoint_of_other_settings_is_refused_naming_them(capsys, finished, tmp_path):
    status, err = cli(
        capsys,
        *PRETRAIN,
        *TINY,
        "--model.init_args.lr=0.01",
        f"{'--seed_everything'}=3",
        f"--trainer.default_root_dir={finished}",
        "--ckpt_path=last",
    )
    line = err.strip().splitlines()[-1]
    assert status == 2 and line.startswith("error: ckpt_path=")
    assert "model.init_args.lr=0.003 there, 0.01 here" in line and "seed_everything=0 there, 3 here" in line
    # what only changes reporting may differ: a larger validation set resumes (here: finished, so status 0)
    status, err = cli(
        capsys,
        *PRETRAIN,
        *TINY,
        "--data.val_size=100",
        "--trainer.log_every_n_steps=1",
        f"--trainer.default_root_dir={finished}",
        "--ckpt_path=last",
    )
    assert status == 0 and "already finished" in err


def test_damaged_newest_checkpoint_falls_back_to_the_previous_one(capsys, finished, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(finished, root)
    (good,) = root.glob("**/checkpoints/last.ckpt")
    damaged = root / "lightning_logs/version_1/checkpoints/last.ckpt"
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    later = time.time() + 5
    os.utime(damaged, (later, later))  # the newest
    status, err = cli(capsys, *PRETRAIN, *TINY, f"--trainer.default_root_dir={root}", "--ckpt_path=last")
    assert status == 0
    assert f"skipping ckpt_path={str(damaged)!r} is not a readable PyTorch checkpoint" in err
    assert f"{good} is already finished" in err  # it went on with the complete one


def test_finetune_checkpoint_as_pretraining_resume_is_one_line(capsys, tmp_path):
    root = tmp_path / "ft"
    main(
        ["fit", *QUIET, *FINETUNE, *TINY, "--model.init_args.regime=no_pretrain", f"--trainer.default_root_dir={root}"]
    )
    (last,) = root.glob("**/checkpoints/last.ckpt")  # fine-tuning keeps last.ckpt too
    status, err = cli(capsys, *PRETRAIN, *TINY, f"--ckpt_path={last}", f"--trainer.default_root_dir={tmp_path / 'x'}")
    line = err.strip().splitlines()[-1]
    assert status == 2 and "model.class_path='minibert.training.finetune.FinetuneModule' there" in line
    # a checkpoint from before settings were recorded: the weights tell
    old = torch.load(last, map_location="cpu", weights_only=True)
    del old[CONFIG_KEY]
    torch.save(old, tmp_path / "old.ckpt")
    status, err = cli(
        capsys,
        *PRETRAIN,
        "--trainer.max_steps=8",
        f"--ckpt_path={tmp_path / 'old.ckpt'}",
        f"--trainer.default_root_dir={tmp_path / 'x'}",
    )
    line = err.strip().splitlines()[-1]
    assert status == 2 and "another kind of model than EncoderModule" in line and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_finetune_resumes_from_its_own_last_checkpoint(capsys, tmp_path):
    args = [
        *FINETUNE,
        "--trainer.max_steps=6",
        "--data.val_size=50",
        "--model.init_args.regime=no_pretrain",
        f"--trainer.default_root_dir={tmp_path}",
    ]
    main(["fit", *QUIET, *args])
    status, err = cli(capsys, *args, "--ckpt_path=last")
    assert status == 0 and "already finished (step 6" in err  # found and read, not a silent restart at step 0


def test_checkpoints_are_written_atomically(tmp_path, monkeypatch):
    """A write that fails at the last moment (here the rename; a kill or a full disk in life) leaves the
    previous checkpoint whole and no temporary file; the CLI's trainers write through this plugin."""
    import errno

    import minibert.atomic_writes
    from minibert.training.checkpoints import AtomicCheckpointIO
    from minibert.training.cli import MiniBertCLI

    writer, path = AtomicCheckpointIO(), tmp_path / "last.ckpt"
    writer.save_checkpoint({"w": torch.ones(3)}, path)

    def interrupted(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))

    monkeypatch.setattr(minibert.atomic_writes.os, "replace", interrupted)
    with pytest.raises(OSError):
        writer.save_checkpoint({"w": torch.zeros(3)}, path)
    monkeypatch.undo()
    assert torch.equal(torch.load(path, weights_only=True)["w"], torch.ones(3))
    assert [p.name for p in tmp_path.iterdir()] == ["last.ckpt"]
    cli = MiniBertCLI(args=["--config=configs/pretrain.yaml", *QUIET, f"--trainer.default_root_dir={tmp_path}"],
                      run=False)  # fmt: skip
    assert isinstance(cli.trainer.strategy.checkpoint_io, AtomicCheckpointIO)


STEP_FILES = """\
trainer:
  callbacks:
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {save_top_k: -1, every_n_train_steps: 2, filename: "at-{step}"}
"""


def test_a_resume_by_other_code_is_refused_naming_the_files_unless_allowed_and_recorded(capsys, tmp_path, monkeypatch):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    source = "from minibert.objectives import MaskedLM\n\n\nclass Mine(MaskedLM):\n    pass\n"
    (plugins / "my_objective.py").write_text(source)
    monkeypatch.syspath_prepend(str(plugins))
    (tmp_path / "steps.yaml").write_text(STEP_FILES)
    root = tmp_path / "runs"
    run = [*PRETRAIN, "-c", tmp_path / "steps.yaml", *TINY, f"--trainer.default_root_dir={root}",
           "--model.init_args.objective.class_path=my_objective.Mine"]  # fmt: skip
    assert cli(capsys, *run)[0] == 0
    (halfway,) = root.glob("**/checkpoints/at-step=2.ckpt")  # a run stopped at step 2 of 4

    assert cli(capsys, *run, f"--ckpt_path={halfway}")[0] == 0  # the same code resumes
    with open(plugins / "my_objective.py", "a") as f:
        f.write("# edited after the checkpoint was written\n")
    before = snapshot(root)
    status, err = cli(capsys, *run, f"--ckpt_path={halfway}")
    assert status == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"error: ckpt_path={str(halfway)!r} was written by other code (1 file(s) changed: ")
    assert "my_objective.py" in line and "--allow-code-change" in line
    assert snapshot(root) == before  # nothing written

    assert cli(capsys, *run, f"--ckpt_path={halfway}", "--allow-code-change")[0] == 0
    newest = max(root.glob("**/summary.json"), key=lambda p: p.stat().st_mtime)
    assert json.loads(newest.read_text())["code_changed_on_resume"] == ["my_objective.py"]
