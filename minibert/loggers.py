"""A WandbLogger that never blocks: offline unless an API key is present, and never prompts."""

from __future__ import annotations

import netrc
import os

from lightning.pytorch.loggers import WandbLogger


def wandb_api_key_present() -> bool:
    """True when WANDB_API_KEY is set or ~/.netrc holds credentials for the wandb host."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        hosts = netrc.netrc().hosts
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False
    return any("wandb" in host for host in hosts)


class SafeWandbLogger(WandbLogger):
    """`WandbLogger` with `offline=None` meaning: offline when no API key is present.

    Example (YAML): `trainer.logger: {class_path: minibert.loggers.SafeWandbLogger, init_args: {project: minibert}}`
    """

    def __init__(self, *args, offline: bool | None = None, **kwargs) -> None:
        if offline is None:
            offline = not wandb_api_key_present()
        os.environ.setdefault("WANDB_SILENT", "true")  # no banners; with WANDB_MODE=offline no login prompt
        if offline:
            os.environ["WANDB_MODE"] = "offline"
        super().__init__(*args, offline=offline, **kwargs)
