"""wandb never blocks: with no API key, no netrc and no reachable server, `-c configs/wandb.yaml` logs the run
offline, under the run's root directory, and finishes as fast as a run without it (give or take wandb's
own start-up), instead of waiting on a login prompt or a network timeout."""

from __future__ import annotations

import time

from tests.clirun import cli_env, run_fit, summaries

SHORT = ["--trainer.max_steps=20", "--data.val_size=100"]
HANG = 60  # s: wandb waits 90 s for a server that does not answer; a run of 20 steps takes a few seconds


def test_wandb_without_key_or_network_finishes_offline(tmp_path):
    env = cli_env(
        WANDB_API_KEY=None, WANDB_MODE=None,  # SafeWandbLogger itself must choose offline
        HOME=str(tmp_path / "home"),  # no ~/.netrc, no cached credentials
        WANDB_BASE_URL="http://127.0.0.1:9",  # a server that refuses every connection
    )
    root = tmp_path / "run"
    start = time.monotonic()
    done = run_fit("-c", "configs/pretrain.yaml", "-c", "configs/wandb.yaml", *SHORT,
                   f"--trainer.default_root_dir={root}", env=env, timeout=HANG)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-3000:]
    assert seconds < HANG
    (summary,) = summaries(root)
    assert summary["step"] == 20 and "val/acc" in summary
    # setup to end of fit, wandb's start-up included, is a few seconds on an idle laptop; allow for a busy one
    assert summary["wall_time_s"] < 15
    (offline_run,) = (root / "wandb").glob("offline-run-*")  # offline, and under the run's root directory
    assert list(offline_run.glob("run-*.wandb"))
