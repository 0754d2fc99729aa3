"""Read back what an offline wandb run stored, from its `run-<id>.wandb` file, with no server and no network.

The file is a LevelDB-style log: a 7-byte header, then 32 KiB blocks of chunks (4-byte checksum, 2-byte
length, 1-byte type: 1 full, 2 first, 3 middle, 4 last), each record a `wandb.proto` `Record` message.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from wandb.proto import wandb_internal_pb2

BLOCK, CHUNK_HEADER = 32 * 1024, 7


def records(path: Path) -> list:
    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a wandb transaction log"
    out, pending, pos = [], b"", 7
    while pos + CHUNK_HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        _checksum, length, kind = struct.unpack("<IHB", data[pos : pos + CHUNK_HEADER])
        if left < CHUNK_HEADER or (length == 0 and kind == 0):  # block padding
            pos += left
            continue
        pending += data[pos + CHUNK_HEADER : pos + CHUNK_HEADER + length]
        pos += CHUNK_HEADER + length
        if kind in (1, 4):  # a whole record, or the last chunk of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            out.append(record)
            pending = b""
    return out


def run_config(offline_run: Path) -> dict:
    """The run's config as wandb holds it (the last value of each key), from `offline-run-*/run-*.wandb`."""
    (log,) = Path(offline_run).glob("run-*.wandb")
    config = {}
    for record in records(log):
        kind = record.WhichOneof("record_type")
        updates = record.config.update if kind == "config" else record.run.config.update if kind == "run" else []
        config.update({item.key: json.loads(item.value_json) for item in updates})
    return config


def run_tags_and_group(offline_run: Path) -> tuple[list[str], str]:
    (log,) = Path(offline_run).glob("run-*.wandb")
    run = next(r.run for r in records(log) if r.WhichOneof("record_type") == "run")
    return list(run.tags), run.run_group
