"""Fine-tuning: a classification head on the pre-trained encoder, in three regimes.

- `frozen`: encoder weights loaded, `requires_grad_(False)` and eval mode; only the head trains;
- `full`: encoder weights loaded, every parameter trains (BERT's way);
- `no_pretrain`: a freshly initialised encoder, every parameter trains;
- `probe`: encoder frozen as in `frozen`; the objective must be a probe: a `Probe`, whose `layer`, `concat`
  and `pooling` choose the features its linear head reads (BERT's feature-based approach), or a
  `StructuralProbe` (minibert.objectives.structure);
- `random`: a freshly initialised encoder, frozen: the baseline a probe is read against (what the
  architecture alone gives, with nothing learned).

Only the encoder's weights are taken from the pre-training checkpoint (strict key match); its MLM head
is not. The encoder's shape comes from the checkpoint unless `encoder` is given, which must then agree.

Example:
    >>> module = FinetuneModule(regime="no_pretrain")
    >>> module.parameter_counts()["trainable_params"]
    26594
"""

from __future__ import annotations

from dataclasses import dataclass

from minibert.model import EncoderConfig
from minibert.objectives.base import Objective
from minibert.objectives.grammaticality import Grammaticality
from minibert.objectives.probe import Probe
from minibert.training.checkpoints import load_encoder_weights, read_checkpoint
from minibert.training.module import EncoderModule, pretrain_flops


@dataclass(frozen=True)
class Regime:
    load_encoder: bool  # take the encoder's weights from the pre-training checkpoint
    train_encoder: bool  # let the optimizer update them


REGIMES = {
    "frozen": Regime(load_encoder=True, train_encoder=False),
    "full": Regime(load_encoder=True, train_encoder=True),
    "no_pretrain": Regime(load_encoder=False, train_encoder=True),
    "probe": Regime(load_encoder=True, train_encoder=False),
    "random": Regime(load_encoder=False, train_encoder=False),
}


class FinetuneModule(EncoderModule):
    def __init__(
        self,
        regime: str = "full",
        encoder_ckpt: str | None = None,
        objective: Objective | None = None,
        encoder: EncoderConfig | None = None,
        lr: float = 1e-3,
        weight_decay: float = 0.01,
        warmup_steps: int = 30,
        init_seed: int | None = None,
    ) -> None:
        if encoder_ckpt is not None:  # text in the saved hyper-parameters: a Path would be pickled
            encoder_ckpt = str(encoder_ckpt)
        if regime not in REGIMES:
            raise ValueError(f"FinetuneModule.regime={regime!r} is not allowed: choose one of {sorted(REGIMES)}")
        if regime == "probe" and objective is not None and not getattr(objective, "is_probe", False):
            raise ValueError(
                f"FinetuneModule.objective={type(objective).__name__} is not allowed with regime='probe': "
                "use a probe, minibert.objectives.Probe (its layer, concat and pooling choose the features) "
                "or minibert.objectives.StructuralProbe"
            )
        self.regime = regime
        mode = REGIMES[regime]
        if mode.load_encoder and encoder_ckpt is None:
            raise ValueError(
                f"FinetuneModule.encoder_ckpt is required for regime={regime!r}: give a pre-training checkpoint"
            )
        checkpoint = read_checkpoint(encoder_ckpt) if encoder_ckpt is not None else None
        if checkpoint is not None:
            try:
                pretrained = EncoderConfig(**checkpoint["encoder_config"])
            except (TypeError, ValueError) as err:  # a field this code does not know, or a value it refuses
                raise ValueError(
                    f"FinetuneModule.encoder_ckpt={encoder_ckpt!r} holds an encoder_config this code cannot build: "
                    f"{err}"
                ) from None
            if encoder is not None and encoder != pretrained:
                raise ValueError(f"FinetuneModule.encoder={encoder} differs from the checkpoint's {pretrained}")
            encoder = pretrained
        objective = objective or (Probe() if regime == "probe" else Grammaticality())
        if checkpoint is not None:
            # the ids the encoder was trained on: a language that made its vocabulary (text) takes the checkpoint's
            if (artifacts := checkpoint.get("language_artifacts")) and getattr(objective, "language", None) is not None:
                objective.language.adopt(artifacts)
            _check_language_fits(encoder, objective, encoder_ckpt)
        super().__init__(objective, encoder, lr, weight_decay, warmup_steps, init_seed)
        if mode.load_encoder:
            load_encoder_weights(self.encoder, checkpoint)
            self.spent["inherited_flops"] = pretrain_flops(checkpoint)
        if not mode.train_encoder:
            self.encoder.requires_grad_(False)
            self.encoder.eval()  # Lightning restores each submodule's mode after validation, so it stays so

    pretrains = False


def _check_language_fits(pretrained: EncoderConfig, objective: Objective, path: str) -> None:
    """Refuse, naming the checkpoint, an encoder whose vocabulary or positions (set by its pre-training
    language) are smaller than the fine-tuning task's language needs."""
    language = getattr(objective, "language", None)
    if language is None:
        return  # the objective's own configure_encoder says what it lacks
    for name, need in (("vocab_size", language.vocab_size), ("max_len", language.seq_len)):
        if getattr(pretrained, name) < need:
            raise ValueError(
                f"FinetuneModule.encoder_ckpt={path!r} holds an encoder pre-trained with {name}="
                f"{getattr(pretrained, name)} (from its pre-training language), but the task's language {language!r} "
                f"needs at least {need}: fine-tune on the language it was pre-trained on (the task's "
                "`language` setting), or pre-train on this one"
            )
