"""A WandbLogger that never blocks, and the one folder each run's own files go in, whatever the logger.

- Offline unless an API key is present; with a key but no reachable server, offline after a short probe
  (a few seconds) instead of wandb's own minutes of retries. It never prompts.
- An offline run says, when it ends, where it went and the `wandb sync` command that uploads it.
- `run_log_dir(trainer)` is a run's own folder (summary.json, config.yaml): the CSV logger's version folder,
  or `<save_dir>/<project>/<run id>` for wandb, the folder Lightning already puts its checkpoints in.
  (Lightning's `trainer.log_dir` is the shared `save_dir` for wandb, so two runs overwrote each other.)
"""

from __future__ import annotations

import netrc
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

import lightning as L
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger, WandbLogger
from lightning.pytorch.utilities import rank_zero_only

DEFAULT_BASE_URL = "https://api.wandb.ai"
PROBE_TIMEOUT_S = 3.0  # a reachable server answers a TCP connect in well under a second


def wandb_api_key_present() -> bool:
    """True when WANDB_API_KEY is set or ~/.netrc holds credentials for the wandb host."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        hosts = netrc.netrc().hosts
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False
    return any("wandb" in host for host in hosts)


def server_reachable(base_url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the host and port of `base_url` opens within `timeout` seconds.

    >>> server_reachable("http://127.0.0.1:9", timeout=1.0)  # the discard port: closed on a normal machine
    False
    """
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


class SafeWandbLogger(WandbLogger):
    """`WandbLogger` with `offline=None` meaning: offline when no API key is present, or when the server
    (`WANDB_BASE_URL`, default api.wandb.ai) does not accept a connection within a few seconds.

    Example (YAML):
    `trainer.logger: {class_path: minibert.training.loggers.SafeWandbLogger, init_args: {project: minibert}}`
    """

    def __init__(self, *args, offline: bool | None = None, **kwargs) -> None:
        os.environ.setdefault("WANDB_SILENT", "true")  # no banners; with WANDB_MODE=offline no login prompt
        if offline is None:
            offline = os.environ.get("WANDB_MODE") in ("offline", "dryrun") or not wandb_api_key_present()
            if not offline:
                base_url = os.environ.get("WANDB_BASE_URL", DEFAULT_BASE_URL)
                if not server_reachable(base_url):
                    print(f"wandb: {base_url} is not reachable within {PROBE_TIMEOUT_S:.0f} s; logging offline")
                    offline = True
        if offline:
            os.environ["WANDB_MODE"] = "offline"
        super().__init__(*args, offline=offline, **kwargs)

    @rank_zero_only
    def finalize(self, status: str) -> None:
        super().finalize(status)
        if self._offline and self._experiment is not None:
            run_dir = Path(self._experiment.dir).parent  # <save_dir>/wandb/offline-run-<time>-<id>
            print(f"wandb: offline run saved in {run_dir}; upload it with: wandb sync {run_dir}")


def run_log_dir(trainer: L.Trainer) -> str:
    """The folder of this run's own files; like `trainer.log_dir`, every process must call it (a broadcast)."""
    logger = trainer.loggers[0] if trainer.loggers else None
    if logger is None or isinstance(logger, (CSVLogger, TensorBoardLogger)):
        return trainer.log_dir
    version = logger.version if isinstance(logger.version, str) else f"version_{logger.version}"
    # where Lightning's ModelCheckpoint puts this run's checkpoints: <save_dir>/<name>/<version>
    path = os.path.join(logger.save_dir or trainer.default_root_dir, str(logger.name), version)
    return trainer.strategy.broadcast(path)
