"""A run's settings as pages state them: read from the config its runs saved, never typed in a template.

A page says "1,000 steps at peak lr 1e-2 (batch 64)" from the saved config (minibert.tables.saved) of the
experiment it reports, named in `configs/pages/questions.yaml` (`runs:`), so that a page states what its runs were
made with, and a recipe changed in `configs/` reaches the page with the runs made by it. `setting` reads one key of
one YAML file as it is written (a grid's reference, the comparison's settings).

Example:
    >>> r = Run(".", "dyck-pretrain")
    >>> r.steps, r.lr, r.batch, r.val
    ('1,000', '1e-2', 64, '6,000')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from minibert.report.asked import asked
from minibert.tables import saved
from minibert.tables.query import QueryError
from minibert.tables.stats import number, rate

LANGUAGE = "model.init_args.objective.init_args.language.init_args"


def _get(node: Any, key: str, where: str) -> Any:
    """The setting `key` (dotted: `trainer.max_steps`; a list's item by its index: `trainer.callbacks.0`) of
    `node`; QueryError naming `where` when it has none."""
    for part in key.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise QueryError(f"{where}: no setting {key!r}")
    return node


def setting(root: str | Path, path: str, key: str) -> Any:
    """The setting `key` of the YAML file `path` under `root`, as the file writes it."""
    file = Path(root) / path
    if not file.is_file():
        raise QueryError(f"{file}: no such config")
    return _get(yaml.safe_load(file.read_text()) or {}, key, path)


class Run:
    """The settings of the run `name` (questions.yaml's `runs:`), formatted as pages say them: its table's folder
    under `root`."""

    def __init__(self, root: str | Path, name: str):
        runs = asked().runs
        if name not in runs:
            raise QueryError(f"no run {name!r}; known: {', '.join(runs)}")
        table, self.experiment = runs[name]
        try:
            self.config = saved.read(Path(root) / table, [self.experiment])[self.experiment]
        except saved.SavedError as err:
            raise QueryError(str(err)) from None
        self.where = str(saved.path(table, self.experiment))

    def get(self, key: str) -> Any:
        return _get(self.config, key, self.where)

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
    def language(self) -> dict:
        """The language's settings: Dyck's kinds, length and max_depth, ..."""
        return self.get(LANGUAGE)

    @property
    def layer_numbers(self) -> list[int]:
        """The encoder's layers, counted from 1 (the embeddings are layer 0)."""
        return list(range(1, self.encoder["layers"] + 1))

    @property
    def shape(self) -> str:
        """'2-layer, 32-wide, 2-head'."""
        e = self.encoder
        return f"{e['layers']}-layer, {e['width']}-wide, {e['heads']}-head"
