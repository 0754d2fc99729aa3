"""wandb never blocks and keeps every run apart: with no API key, or with a key but no reachable server,
`-c configs/wandb.yaml` logs the run offline under the run's root directory, says where it went, logs the
resolved config as hyperparameters, and two runs into one root keep their own summary.json and config.yaml.
No test contacts a host outside the machine: "no network" is a closed port on 127.0.0.1."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
import yaml

from minibert.training.loggers import PROBE_TIMEOUT_S
from tests.clirun import cli_env, run_fit, summaries
from tests.wandb_records import run_config

pytestmark = pytest.mark.slow  # real wandb processes against a closed port, timed: the README's claims

HANG = 60  # s: wandb waits 90 s for a server that does not answer; a run of 5 steps takes a few seconds
# With a key and no network a run may cost the probe beyond the same run offline without a key, and no more.
# Timed against that run on the same machine (first, so that cold caches burden the reference), because
# absolute seconds vary twofold between machines and with load.
SLACK = 1.25  # x the offline run: timing noise between two identical processes on a loaded machine


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fit_with_wandb(root, env: dict, *args: str):
    """The default pre-training with configs/wandb.yaml stacked, into `root`, as a subprocess: (the finished
    process, its seconds from start to exit)."""
    configs = ["-c", "configs/pretrain.yaml", "-c", "configs/wandb.yaml"]
    start = time.monotonic()
    done = run_fit(*configs, *args, f"--trainer.default_root_dir={root}", env=env, timeout=HANG)
    return done, time.monotonic() - start


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two wandb runs into one root, both timed: one with no key (SafeWandbLogger itself must choose offline:
    no WANDB_MODE) and no server, seed 7 and another lr; then one with an API key and no reachable server.
    Returns (root, keyed run, its seconds, keyless run, its seconds)."""
    tmp = tmp_path_factory.mktemp("wandb_two_runs")
    root = tmp / "run"
    no_key = cli_env(WANDB_API_KEY=None, WANDB_MODE=None, HOME=str(tmp / "home"), WANDB_BASE_URL="http://127.0.0.1:9")
    keyless, keyless_seconds = fit_with_wandb(
        root, no_key, "--trainer.max_steps=5", "--data.val_size=64", "--seed_everything=7", "--model.init_args.lr=0.001"
    )
    no_network = cli_env(
        WANDB_API_KEY="0" * 40,
        WANDB_MODE=None,
        HOME=str(tmp / "home"),
        WANDB_BASE_URL=f"http://127.0.0.1:{closed_port()}",
    )
    keyed, keyed_seconds = fit_with_wandb(root, no_network, "--trainer.max_steps=5", "--data.val_size=64")
    return root, keyed, keyed_seconds, keyless, keyless_seconds


def test_api_key_without_network_falls_back_offline_within_budget(two_runs):
    root, first, seconds, _, offline_seconds = two_runs
    assert first.returncode == 0, first.stderr[-3000:]
    budget = SLACK * offline_seconds + PROBE_TIMEOUT_S
    assert seconds < budget, f"{seconds:.1f} s with an API key and no network, {offline_seconds:.1f} s offline"
    assert "is not reachable" in first.stdout and "logging offline" in first.stdout
    assert len(list((root / "wandb").glob("offline-run-*"))) == 2


def test_wandb_without_key_or_network_finishes_offline(two_runs):
    root, _, _, second, _ = two_runs
    assert second.returncode == 0, second.stderr[-3000:]
    done = [s for s in summaries(root) if s["seeds"]["seed_everything"] == 7]
    assert len(done) == 1 and done[0]["step"] == 5 and "val/acc" in done[0]
    offline = [r for r in (root / "wandb").glob("offline-run-*") if run_config(r)["seed"] == 7]
    assert len(offline) == 1 and list(offline[0].glob("run-*.wandb"))  # offline, under the run's root directory


def test_offline_run_says_where_it_went_and_how_to_upload_it(two_runs):
    root, first, _, second, _ = two_runs
    for done in (first, second):
        line = next(line for line in done.stdout.splitlines() if "wandb sync" in line)
        path = Path(line.rsplit("wandb sync ", 1)[1].strip())
        assert path.parent == root / "wandb" and path.name.startswith("offline-run-") and path.is_dir()


def test_two_runs_into_one_root_keep_both_summaries_and_configs(two_runs):
    root, first, _, second, _ = two_runs
    assert second.returncode == 0, second.stderr[-3000:]
    found = sorted(root.glob("**/summary.json"))
    assert len(found) == 2 and len({p.parent for p in found}) == 2
    assert all((p.parent / "config.yaml").is_file() for p in found)
    seeds = sorted(yaml.safe_load((p.parent / "config.yaml").read_text())["seed_everything"] for p in found)
    assert seeds == [0, 7]  # each folder holds its own run's config
    assert not (root / "summary.json").exists() and not (root / "config.yaml").exists()


def test_offline_run_config_holds_the_resolved_config_and_filter_keys(two_runs):
    root, *_ = two_runs
    configs = [run_config(r) for r in sorted((root / "wandb").glob("offline-run-*"))]
    assert len(configs) == 2
    for config in configs:
        assert {"model", "data", "trainer"} <= set(config)
        assert config["model"]["init_args"]["objective"]["class_path"].endswith("MaskedLM")
        assert config["data"]["val_size"] == 64 and config["trainer"]["max_steps"] == 5
        assert config["objective"] == "MaskedLM" and config["masking"]["p_pick"] == 0.15
    assert sorted((c["seed"], c["lr"]) for c in configs) == [(0, 0.003), (7, 0.001)]
