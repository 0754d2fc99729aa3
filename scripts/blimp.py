"""Grade a model trained on general English on BLiMP's minimal pairs, zero-shot (docs/pairs.md).

    python scripts/blimp.py --checkpoint runs/text/.../checkpoints/last.ckpt --blimp PATH/blimp/data

Prints each paradigm's accuracy, the pairs it graded and those skipped as longer than the encoder's positions,
and the mean over paradigms. Status 2, one line, for a checkpoint or folder that cannot be read, or a model
whose objective cannot score a sentence; nothing is written.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from minibert.commandline import ArgumentParser
from minibert.pairs.blimp_files import BlimpError, read_blimp

EXIT_BAD_INPUT = 2


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="blimp.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True, help="a pre-training run's checkpoint (last.ckpt)")
    p.add_argument("--blimp", required=True, help="BLiMP's data/ folder: one .jsonl a paradigm")
    args = p.parse_args(argv)
    if not Path(args.checkpoint).is_file():
        print(f"blimp.py: error: {args.checkpoint}: no such file (give a run's checkpoints/last.ckpt)", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:  # the files first: each refusal they give is answered before torch is imported
        paradigms = read_blimp(args.blimp)
        if not zipfile.is_zipfile(args.checkpoint):  # what torch.save writes; a cut-off one has lost its directory
            raise ValueError(f"{args.checkpoint}: not a minibert pre-training checkpoint (not a zip archive: cut off, "
                             "or another kind of file)")  # fmt: skip
        from minibert.pairs.blimp import grade  # heavy imports after the cheap checks

        objective, encoder = _load(args.checkpoint)
    except (BlimpError, ValueError) as err:
        print(f"blimp.py: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"scoring rule: {objective.scoring}")
    accuracies = []
    for name, pairs in paradigms.items():
        acc, graded, skipped = grade(objective, encoder, pairs, encoder.config.max_len)
        accuracies += [acc] if graded else []
        print(f"{name}: {100 * acc:.1f}% of {graded} pairs" + (f" ({skipped} too long, skipped)" if skipped else ""))
    if accuracies:
        print(f"mean over {len(accuracies)} paradigms: {100 * sum(accuracies) / len(accuracies):.1f}%")
    return 0


def _load(path: str):
    """(objective, encoder) of a pre-training checkpoint, with the run's own tokenizer; ValueError, one line,
    for a checkpoint that is not a readable pre-training run on text or whose objective cannot score."""
    import torch

    from minibert.training.module import EncoderModule

    try:
        module = EncoderModule.load_from_checkpoint(path, map_location="cpu")
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # any unreadable or foreign file: one line, not torch's traceback
        raise ValueError(f"{path}: not a minibert pre-training checkpoint ({type(err).__name__})") from None
    language = module.objective.language
    if not hasattr(language, "data"):
        raise ValueError(f"{path}: its language is {language!r}; BLiMP is English, so grade a model trained on text")
    language.adopt(saved.get("language_artifacts", {}))
    if module.objective.scoring is None:
        raise ValueError(f"{path}: {type(module.objective).__name__} cannot score a sentence zero-shot")
    return module.objective.eval(), module.encoder.eval()


if __name__ == "__main__":
    sys.exit(main())
