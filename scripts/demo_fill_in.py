"""Demo: a pre-trained TinyBERT fills in the blanks of a held-out sentence.

Shows one sentence of the fixed validation set (never trained on) as original / input / predicted rows:
the predicted row holds the model's guess at every blank (picked position), '.' elsewhere. Then the same
model's accuracy over all blanks of the validation set.

Example:
    python scripts/demo_fill_in.py --ckpt runs/pretrain/lightning_logs/version_0/checkpoints/*.ckpt
    python scripts/demo_fill_in.py            # no checkpoint: pre-trains the default model first (~6 s)
"""

# ruff: noqa: E402 (the heavy imports follow the argument check, so that a usage error answers before torch loads)
from __future__ import annotations

import tempfile
from pathlib import Path

from minibert.commandline import ArgumentParser, nonnegative_int, readable_file


def parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ckpt", type=readable_file, help="an MLM pre-training checkpoint; none: pre-train one first")
    p.add_argument("--index", type=nonnegative_int, default=0, help="which validation sentence to show")
    return p


if __name__ == "__main__":  # a usage error is answered before torch is imported
    parser().parse_args()

import torch

from minibert.masking import IGNORE
from minibert.model import EncoderConfig
from minibert.objectives import MaskedLM
from minibert.token_rows import BLANK, token_rows
from minibert.training.checkpoints import last_checkpoint, read_checkpoint
from minibert.training.data import StreamDataModule
from minibert.training.fit import fit
from minibert.training.module import EncoderModule
from minibert.validation import Range

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs/pretrain.yaml"


def load_mlm(ckpt: str | Path) -> EncoderModule:
    """A pre-training checkpoint as the module that wrote it, in eval mode: Lightning's load_from_checkpoint
    rebuilds its objective (a plug-in too) from the hyper-parameters the CLI saved. A checkpoint that does not
    say its objective (written by older code, or by a module built in Python) is taken as the stock masked
    LM's, with the encoder shape it records. The objective must fill in blanks. ValueError, in one line naming
    --ckpt, for a file that is not such a checkpoint."""
    checkpoint = read_checkpoint(ckpt, field="--ckpt")  # a damaged or foreign file fails here, in one line
    given = {}
    if "_instantiator" not in checkpoint.get("hyper_parameters", {}):
        given = {"objective": MaskedLM(), "encoder": EncoderConfig(**checkpoint["encoder_config"])}
    try:
        module = EncoderModule.load_from_checkpoint(ckpt, map_location="cpu", **given)
    except Exception as err:  # a minibert checkpoint of another module (a fine-tuning run's): one line, no traceback
        raise ValueError(f"--ckpt {ckpt}: not a pre-training checkpoint ({type(err).__name__}): give a masked-LM "
                         "pre-training checkpoint") from None  # fmt: skip
    if not hasattr(module.objective, "predict"):
        raise ValueError(f"--ckpt {ckpt} trained {type(module.objective).__name__}, which does not fill in blanks: "
                         "give a masked-LM pre-training checkpoint")  # fmt: skip
    return module.eval()


def fill_in(module: EncoderModule, inputs: torch.Tensor, labels: torch.Tensor) -> tuple[str, int, int]:
    """Rows for one held-out sentence (T,) and how many of its blanks the model got right, of how many."""
    original = torch.where(labels != IGNORE, labels, inputs)  # unpicked positions are unchanged
    picked = labels != IGNORE
    with torch.no_grad():
        predicted = module.objective.predict(module.encoder, inputs[None])[0]
    language = module.objective.language
    rows = {
        "original": language.decode(original).split(),
        "input": language.decode(inputs).split(),
        "predicted": [language.vocab[int(p)] if g else BLANK for p, g in zip(predicted, picked, strict=True)],
    }
    right = int((predicted[picked] == labels[picked]).sum())
    return token_rows(rows), right, int(picked.sum())


def held_out_accuracy(module: EncoderModule, data: StreamDataModule) -> float:
    """Accuracy over every blank of the validation set."""
    batch = data.val_set.batch
    with torch.no_grad():
        out = module.objective(module.encoder, batch)
    return (out.preds == out.target).float().mean().item()


def main(argv: list[str] | None = None) -> None:
    p = parser()
    args = p.parse_args(argv)
    data = StreamDataModule()  # the fixed validation set every run is graded on: its size is known before any model
    if args.index >= data.val_size:  # refused before a model is trained or loaded
        allowed = Range(low=0, high=data.val_size - 1, integer=True)
        p.error(f"--index {args.index} is not allowed: the validation set holds {data.val_size} sentences, so it "
                f"must be {allowed}")  # fmt: skip

    with tempfile.TemporaryDirectory(prefix="minibert-fill-in-") as tmp:
        ckpt = args.ckpt
        if ckpt is None:
            print(f"Note: no --ckpt given, so pre-training the default model first ({DEFAULT_CONFIG.name}, seed 0) ")
            print(f"into a temporary folder that is deleted afterwards ({tmp}).\n")
            ckpt = last_checkpoint(fit([DEFAULT_CONFIG], root_dir=tmp)["log_dir"])
        try:
            module = load_mlm(ckpt)
        except ValueError as err:
            p.error(" ".join(str(err).split()))  # torch's own reasons may run over several lines

    data.source = module.objective  # its questions: the model's own language and objective
    data.setup("validate")
    example = data.val_set[args.index]
    rows, right, blanks = fill_in(module, example["inputs"], example["labels"])
    attention = "causal" if module.encoder_config.causal else "bidirectional"
    print(f"Held-out sentence {args.index} of {len(data.val_set)} (validation set), {attention} model:")
    print(rows)
    print(f"\n{right} of {blanks} blanks filled in correctly")
    print(f"accuracy over all blanks of the validation set: {100 * held_out_accuracy(module, data):.1f}%")


if __name__ == "__main__":
    main()
