"""python -m minibert.export CHECKPOINT OUT_DIR: a minibert checkpoint as a `transformers` model folder.

Prints the class written and the largest logit difference against minibert measured on the check; a model
no native class expresses, a folder that exists and is not empty, or one that cannot be written (under a file,
read-only, a full disk) is refused in one line (exit status 2) and nothing is written.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from minibert.commandline import ArgumentParser
from minibert.export.layouts import ExportError
from minibert.places import PlaceError, check_out

PROG = "python -m minibert.export"
EXIT_BAD_INPUT = 2


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="a pre-training or fine-tuning checkpoint (.ckpt)")
    parser.add_argument("out_dir", metavar="OUT_DIR", help="the folder to write (new, or empty)")
    args = parser.parse_args(argv)
    checkpoint = Path(args.checkpoint)
    if not checkpoint.is_file():  # answered before torch is imported
        what = "a folder" if checkpoint.is_dir() else "no such file"
        hint = " (its checkpoints/last.ckpt, say)" if checkpoint.is_dir() else ""
        print(f"{PROG}: error: CHECKPOINT {checkpoint}: {what}; give a .ckpt file{hint}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)
    try:  # a new or empty folder this process can write, also before torch is imported
        check_out(args.out_dir, "OUT_DIR", empty=True)
    except PlaceError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT) from None
    if not zipfile.is_zipfile(checkpoint):  # what torch.save writes; a cut-off one has lost its directory
        print(f"{PROG}: error: CHECKPOINT={str(checkpoint)!r} is not a readable PyTorch checkpoint: not a zip archive "
              "(cut off, or another kind of file)", file=sys.stderr)  # fmt: skip
        raise SystemExit(EXIT_BAD_INPUT)
    from minibert.export.checkpoint import read
    from minibert.export.write import export

    try:
        encoder, head, vocab = read(args.checkpoint)
        done = export(encoder, head, vocab, args.out_dir)
    except ExportError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT) from None
    print(f"wrote {done.path} ({done.hf_class}); max |logit difference| against minibert: {done.max_abs_diff:.2g}")


if __name__ == "__main__":
    main()
