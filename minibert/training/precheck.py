"""What `python -m minibert` can refuse before it imports torch and Lightning (seconds on a small machine): an
unknown subcommand, an abbreviated option (jsonargparse would take `--trainer.max_step` for nothing), a config
file that is missing or is not YAML, a checkpoint file that is not there, and an output folder that cannot be
written (minibert.places). Each is one line, `python -m minibert: error: ...`, with status 2; what needs the
classes themselves (a setting's type, an unknown class path) is LightningCLI's, after the imports
(minibert.training.cli).

Example:
    >>> problems(["fit", "-c", "no/such.yaml"])
    '-c no/such.yaml: no such file'
    >>> problems(["fti"])
    "unknown subcommand 'fti': give one of fit, validate, test, predict"
"""

from __future__ import annotations

from pathlib import Path

import yaml

from minibert.places import PlaceError, check_out

SUBCOMMANDS = ("fit", "validate", "test", "predict")
CKPT_KEYWORDS = ("last", "best", "hpc")  # values Lightning resolves itself


def _values(argv: list[str], *names: str) -> list[str]:
    """Every value given to one of `names`, as `--name value` or `--name=value`."""
    found = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in names:
            found.append(value if eq else argv[i + 1] if i + 1 < len(argv) else "")
    return found


def problems(argv: list[str]) -> str | None:
    """The first problem with `argv` seen without importing torch, or None."""
    if not argv or argv[0] in ("-h", "--help", "--print_config") or argv[0].startswith("--print_config"):
        return None
    command = next((a for a in argv if not a.startswith("-")), None)
    if argv[0] in ("-c", "--config"):
        command = argv[2] if len(argv) > 2 else None
    if command not in SUBCOMMANDS:
        return f"unknown subcommand {command!r}: give one of {', '.join(SUBCOMMANDS)}"
    for config in _values(argv, "-c", "--config"):
        path = Path(config)
        if not path.is_file():
            return f"-c {config}: no such file"
        try:
            yaml.safe_load(path.read_text())
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            return f"-c {config}: not YAML{where}: fix the file"
        except OSError as err:
            return f"-c {config}: cannot read it ({err.strerror})"
    for ckpt in _values(argv, "--ckpt_path"):
        if ckpt and ckpt not in CKPT_KEYWORDS and ckpt != "null" and not Path(ckpt).is_file():
            return f"--ckpt_path {ckpt}: no such file; give a .ckpt file, or `last` to resume the newest run"
    for root in _values(argv, "--trainer.default_root_dir"):
        try:
            check_out(root, "--trainer.default_root_dir")
        except PlaceError as err:
            return str(err)
    return None
