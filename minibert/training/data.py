"""Streaming data: fresh batches from an objective, each a pure function of (seed, rank, batch index).

Training batches come from an infinite `IterableDataset` that yields whole batches; the RNG of batch `i`
on global rank `r` is `np.random.default_rng([seed, r, i])`, so a run is reproducible, resumable at any
batch, different on every DDP rank, and the same whatever `num_workers` is (worker `w` of `W` makes
batches `w, w + W, ...`, and the DataLoader hands them out round-robin). Validation is a fixed, finite set
drawn once from `val_seed` (`np.random.default_rng([val_seed])`), never from the training stream.

Three seeds, each settable on its own: the model's `init_seed` (initial weights), `data.seed` (the training
stream) and `data.val_seed` (the validation set). The CLI sets `data.seed` and `init_seed` from
`seed_everything` unless given; `val_seed` is one fixed draw (2018) unless given, or `null` for
`seed_everything`'s value, so that each seed grades its own questions and the validation set's sampling
error shows in the spread over seeds instead of being one offset shared by every run.

Example:
    >>> from minibert.objectives import MaskedLM
    >>> batch = next(iter(BatchStream(MaskedLM(), batch_size=4, seed=0, rank=0)))
    >>> batch["inputs"].shape
    torch.Size([4, 17])
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

from minibert.objectives.base import Batch, Objective
from minibert.validation import NONNEGATIVE_INT, POSITIVE_INT, SEED, check


class BatchStream(IterableDataset):
    """Infinite stream of whole batches `source.make_batch(rng(seed, rank, i), batch_size, "train")`,
    starting at batch index `start`."""

    def __init__(self, source: Objective, batch_size: int, seed: int, rank: int, start: int = 0) -> None:
        self.source, self.batch_size, self.seed, self.rank, self.start = source, batch_size, seed, rank, start

    def __iter__(self) -> Iterator[Batch]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        for index in itertools.count(self.start + worker, workers):
            rng = np.random.default_rng([self.seed, self.rank, index])
            yield self.source.make_batch(rng, self.batch_size, "train")


class FixedSet(Dataset):
    """A finite set of examples made once; items are single examples, so a DistributedSampler can split it."""

    def __init__(self, source: Objective, size: int, seed: int) -> None:
        self.batch = source.make_batch(np.random.default_rng([seed]), size, "val")
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> Batch:
        return {k: v[i] for k, v in self.batch.items()}


class _FetchedInBatches(Dataset):
    """A FixedSet that a DataLoader fetches a batch at a time: one index per tensor instead of B examples
    collated one by one. Samplers, DDP's included, are unaffected: they still see single indices. Use with
    `collate_fn=_FetchedInBatches.collate`."""

    def __init__(self, examples: FixedSet) -> None:
        self.examples = examples

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> Batch:
        return self.examples[i]

    def __getitems__(self, indices: list[int]) -> Batch:
        rows = torch.as_tensor(indices)
        return {k: v[rows] for k, v in self.examples.batch.items()}

    @staticmethod
    def collate(batch: Batch) -> Batch:
        return batch  # already a batch


class StreamDataModule(L.LightningDataModule):
    """Training stream and validation set for whichever objective the model trains.

    `source` is the model's objective: LightningCLI links it in (`model.objective` -> `data.source`);
    outside the CLI, set it before `setup`. `seed` and `val_seed` left at None are Lightning's global seed
    (`seed_everything`, 0 if it was never called); the CLI writes the value it resolved into the config.
    """

    def __init__(
        self,
        batch_size: int = 64,
        val_size: int = 2000,
        val_batch_size: int = 1000,
        val_seed: int | None = 2018,
        num_workers: int = 0,
        seed: int | None = None,
        source: Objective | None = None,
    ) -> None:
        super().__init__()
        for name, value in (("batch_size", batch_size), ("val_size", val_size), ("val_batch_size", val_batch_size)):
            check("StreamDataModule", name, value, POSITIVE_INT)
        check("StreamDataModule", "num_workers", num_workers, NONNEGATIVE_INT)
        for name, value in (("seed", seed), ("val_seed", val_seed)):
            if value is not None:
                check("StreamDataModule", name, value, SEED)
        self.batch_size, self.val_size, self.val_batch_size = batch_size, val_size, val_batch_size
        global_seed = int(os.environ.get("PL_GLOBAL_SEED", 0))  # what seed_everything set
        self.seed = global_seed if seed is None else seed
        self.val_seed = global_seed if val_seed is None else val_seed
        self.num_workers = num_workers
        self.source = source
        self.val_set: FixedSet | None = None

    def setup(self, stage: str) -> None:
        if self.source is None:
            raise RuntimeError("StreamDataModule.source is not set: give it the objective the model trains")
        world = self.trainer.world_size if self.trainer is not None else 1
        if self.val_size % world:
            raise ValueError(
                f"StreamDataModule.val_size={self.val_size} is not allowed with {world} processes: "
                "it must divide evenly, so that every example is graded exactly once"
            )
        if self.val_set is None:
            self.val_set = FixedSet(self.source, self.val_size, self.val_seed)

    def _loader(self, dataset: Dataset, batch_size: int | None, **kwargs) -> DataLoader:
        return DataLoader(
            dataset,
            batch_size=batch_size,
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
            **kwargs,
        )

    def train_dataloader(self) -> DataLoader:
        trainer = self.trainer
        rank = trainer.global_rank if trainer is not None else 0
        # resume at the right batch: every optimizer step consumed `accumulate_grad_batches` batches
        start = trainer.global_step * trainer.accumulate_grad_batches if trainer is not None else 0
        stream = BatchStream(self.source, self.batch_size, self.seed, rank, start)
        return self._loader(stream, batch_size=None)  # the stream already yields whole batches

    def val_dataloader(self) -> DataLoader:
        batches = _FetchedInBatches(self.val_set)
        return self._loader(batches, batch_size=self.val_batch_size, collate_fn=_FetchedInBatches.collate)
