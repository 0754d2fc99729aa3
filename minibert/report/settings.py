"""A run's settings as pages state them: read from its stack of configs, never typed in a template.

A page says "1,000 steps at peak lr 1e-2 (batch 64)" from the configs that run it, so that a recipe changed in
`configs/` changes every page that states it. `Run` reads one named stack as `python -m minibert fit -c A -c B`
does (the last config that sets a key wins); `language` gives a language config's own settings.

Example:
    >>> r = Run(".", "dyck-pretrain")
    >>> r.steps, r.lr, r.batch, r.val
    ('1,000', '1e-2', 64, '6,000')
"""

from __future__ import annotations

from pathlib import Path

from minibert.tables import axes
from minibert.tables.query import QueryError
from minibert.tables.stats import number, rate

STACKS = {  # name -> the configs a run of it stacks, in order
    "pretrain": ["configs/pretrain.yaml"],
    "finetune": ["configs/finetune.yaml"],
    "dyck-pretrain": ["configs/pretrain.yaml", "configs/recipes/dyck-pretrain.yaml"],
    "dyck-finetune": ["configs/finetune.yaml", "configs/recipes/dyck-finetune.yaml"],
    "text-pretrain": ["configs/pretrain.yaml", "configs/recipes/text-pretrain.yaml"],
    "text-finetune": ["configs/finetune.yaml", "configs/recipes/text-finetune.yaml"],
    "probe": ["configs/finetune.yaml", "configs/probe.yaml"],
    "structure": ["configs/finetune.yaml", "configs/structure.yaml"],
}
LANGUAGE = "model.init_args.objective.init_args.language.init_args"


def setting(root: str | Path, stack: str | list[str], key: str):
    """The setting `key` (dotted: `trainer.max_steps`; a list's item by its index: `trainer.callbacks.0`) of the
    config `stack` under `root` (a path, or several merged in order: minibert.tables.axes.merged)."""
    paths = (stack,) if isinstance(stack, str) else tuple(stack)
    if missing := [p for p in paths if not (Path(root) / p).is_file()]:
        raise QueryError(f"{Path(root) / missing[0]}: no such config")
    node = axes.merged(paths, Path(root))
    for part in key.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise QueryError(f"{', '.join(paths)}: no setting {key!r}")
    return node


class Run:
    """The settings of the run `name` of STACKS, formatted as pages say them."""

    def __init__(self, root: str | Path, name: str):
        if name not in STACKS:
            raise QueryError(f"no run {name!r}; known: {', '.join(STACKS)}")
        self.root, self.stack = Path(root), STACKS[name]

    def get(self, key: str):
        return setting(self.root, self.stack, key)

    @property
    def steps(self) -> str:
        return number(self.get("trainer.max_steps"), 1, 0)

    @property
    def lr(self) -> str:
        """The peak learning rate as configs are read aloud: '1e-2'."""
        return rate(self.get("model.init_args.lr"))

    @property
    def batch(self) -> int:
        return self.get("data.batch_size")

    @property
    def val(self) -> str:
        """The validation set's size."""
        return number(self.get("data.val_size"), 1, 0)

    @property
    def every(self) -> int:
        """How many steps apart `checkpoints/last.ckpt` is saved."""
        return self.get("trainer.callbacks.0.init_args.every_n_train_steps")

    @property
    def encoder(self) -> dict:
        return self.get("model.init_args.encoder")

    @property
    def layer_numbers(self) -> list[int]:
        """The encoder's layers, counted from 1 (the embeddings are layer 0)."""
        return list(range(1, self.encoder["layers"] + 1))

    @property
    def shape(self) -> str:
        """'2-layer, 32-wide, 2-head'."""
        e = self.encoder
        return f"{e['layers']}-layer, {e['width']}-wide, {e['heads']}-head"


def language(root: str | Path, name: str) -> dict:
    """The settings of `configs/languages/<name>.yaml`'s language: Dyck's kinds, length and max_depth, ..."""
    return setting(root, f"configs/languages/{name}.yaml", LANGUAGE)
