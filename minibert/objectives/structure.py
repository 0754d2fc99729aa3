"""Structural probes (Hewitt & Manning 2019) on every layer of a frozen encoder, against exact bracket trees.

The tree. Its nodes are the sentence's positions: [CLS] is the root; an opener's parent is the opener of
the pair that encloses it ([CLS] for an outermost pair); a closer's parent is its own opener. So a pair is
two adjacent nodes (its opener and closer at distance 1), an opener's tree depth is its nesting depth
(1 = outermost) and its closer's is one more. On Dyck the tree is exact: no parser stands between the
sentence and its structure.

The probes, one of each per layer (0 = the embeddings, i = block i), each a linear map B of rank `rank`:
- distance: ||B(h_i - h_j)||^2 is trained to match the tree distance d(i, j), with the L1 loss over every
  pair divided by the squared sentence length;
- depth: ||B h_i||^2 is trained to match the tree depth, L1 over positions divided by the length.
The probes of different layers share nothing but the frozen encoder's forward pass, and AdamW updates
each parameter from its own gradient alone, so training them side by side in one run is training each
alone (tests/core/test_structure.py checks it).

Control task (Hewitt & Liang 2019). The same probes are trained on a control tree that depends on the
token identities alone: each token type is given one behaviour once, from `control_seed` (half attach to
the position on their left, half to [CLS]), and the control tree follows it. A probe that memorises token
types can learn it; one that reads structure gains nothing there. Selectivity is the task figure minus the
control figure, per sentence, averaged.

Metrics (the module's `values`, each averaged over validation sentences, logged as `val/<name>`):
- `probe/layer<l>/uuas`: the fraction of gold edges in the minimum spanning tree of the predicted
  distances (undirected, unlabelled; every edge counts, those to [CLS] included);
- `probe/layer<l>/dist_spearman`: for each bracket, the Spearman correlation of its predicted and true
  distances to every other bracket, averaged over brackets, then sentences ([CLS] left out: it is
  identifiable from its token alone); `dist_spearman_maxdepth_<k>` averages over sentences whose deepest
  pair is at depth k (`le3`, `4`, `5`, `6plus`);
- `probe/layer<l>/depth_spearman`: the Spearman correlation of predicted and true depths over brackets;
- root accuracy does not apply here: the root is [CLS], known from its token, and the first bracket is
  always an outermost opener, so "the shallowest bracket is outermost" is known from position alone;
- `control/layer<l>/...` the same on the control tree (UUAS and both Spearmans), and
  `selectivity/layer<l>/...` the task minus the control.

Trained with `FinetuneModule(regime="probe")` on a pre-trained encoder, or `regime="random"` for the
baseline of a randomly initialised encoder of the same shape (configs/structure.yaml).

Example:
    >>> import numpy as np
    >>> from minibert.languages import Dyck
    >>> dyck = Dyck(kinds=2, length=4, max_depth=2)
    >>> parents = bracket_tree(dyck, dyck.encode("[CLS] a b B A")[None])
    >>> parents.tolist()  # [CLS] is the root; b's parent is a; each closer's parent is its opener
    [[-1, 0, 1, 2, 1]]
    >>> tree_distances(parents)[1][0].tolist()  # depths
    [0, 1, 2, 3, 2]
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from minibert.languages import Dyck, Language
from minibert.model import Encoder, EncoderConfig
from minibert.objectives.base import Batch, Objective, Scored, Split
from minibert.validation import NONNEGATIVE_INT, POSITIVE_INT, check

_MAXDEPTH_BUCKETS = (("le3", 0, 3), ("4", 4, 4), ("5", 5, 5), ("6plus", 6, 10**9))  # a sentence's deepest pair


def bracket_tree(language: Language, ids: np.ndarray) -> np.ndarray:
    """(B, T) well-formed ids -> (B, T) int64 parent of every position (-1 for [CLS] at 0), as the module
    docstring defines the tree. Every parent lies on its child's left."""
    B, T = ids.shape
    rows = np.arange(B)
    parent = np.full((B, T), -1, dtype=np.int64)
    stack = np.zeros((B, T + 1), dtype=np.int64)  # open brackets' positions; stack[:, 0] = 0 is [CLS]
    top = np.zeros(B, dtype=np.int64)  # index of the innermost open bracket in `stack` (0: none, [CLS])
    for t in range(1, T):
        o, c = language.is_opener(ids[:, t]), language.is_closer(ids[:, t])
        parent[:, t] = stack[rows, top]  # an opener hangs from the innermost open one, a closer from its own
        top = top + o
        stack[rows[o], top[o]] = t
        top = top - (c & (top > 0))
    return parent


def control_tree(behaviour: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """(B, T) ids -> (B, T) parents of the control tree: position t > 0 attaches to t - 1 if its token's
    `behaviour` is 1, to [CLS] if 0 (a function of token identities alone)."""
    B, T = ids.shape
    parent = np.where(behaviour[ids] == 1, np.arange(T) - 1, 0)
    parent[:, 0] = -1
    return parent.astype(np.int64)


def tree_distances(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B, T) parents (each on its child's left, -1 at the root 0) -> (distances (B, T, T), depths (B, T))."""
    B, T = parent.shape
    rows = np.arange(B)
    depth = np.zeros((B, T), dtype=np.int64)
    ancestors = np.zeros((B, T, T), dtype=bool)  # [b, i, k]: k is i or one of its ancestors
    ancestors[:, 0, 0] = True
    for t in range(1, T):
        p = parent[:, t]
        depth[:, t] = depth[rows, p] + 1
        ancestors[:, t] = ancestors[rows, p]
        ancestors[:, t, t] = True
    common = ancestors[:, :, None, :] & ancestors[:, None, :, :]  # (B, T, T, T)
    lca_depth = np.where(common, depth[:, None, None, :], -1).max(-1)  # (B, T, T)
    return depth[:, :, None] + depth[:, None, :] - 2 * lca_depth, depth


def spanning_tree(distance: torch.Tensor) -> torch.Tensor:
    """(B, T, T) symmetric distances -> (B, T) parents of their minimum spanning tree grown from node 0
    (Prim's algorithm; -1 at node 0)."""
    B, T, _ = distance.shape
    rows = torch.arange(B, device=distance.device)
    joined = torch.zeros(B, T, dtype=torch.bool, device=distance.device)
    joined[:, 0] = True
    best, best_from = distance[:, 0].clone(), torch.zeros(B, T, dtype=torch.long, device=distance.device)
    parent = torch.full((B, T), -1, dtype=torch.long, device=distance.device)
    for _ in range(T - 1):
        j = best.masked_fill(joined, float("inf")).argmin(-1)  # (B,) the nearest node not yet in the tree
        parent[rows, j] = best_from[rows, j]
        joined[rows, j] = True
        row = distance[rows, j]  # (B, T)
        nearer = row < best
        best, best_from = torch.where(nearer, row, best), torch.where(nearer, j[:, None], best_from)
    return parent


def uuas(predicted: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """(B, T) parents of two trees on the same nodes -> (B,) fraction of gold edges (undirected) in the other."""
    B, T = gold.shape
    rows, child = torch.arange(B)[:, None], torch.arange(1, T)[None, :]
    edges = torch.zeros(B, T, T, dtype=torch.bool, device=gold.device)
    edges[rows, child, predicted[:, 1:]] = True
    edges = edges | edges.transpose(1, 2)
    return edges[rows, child, gold[:, 1:]].double().mean(-1)


def _ranks(x: torch.Tensor) -> torch.Tensor:
    """Ranks along the last dimension, ties given their average rank (as Spearman's rho needs)."""
    less = (x[..., None, :] < x[..., :, None]).sum(-1)
    equal = (x[..., None, :] == x[..., :, None]).sum(-1)
    return less + (equal + 1) / 2


def spearman(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Spearman's rho along the last dimension (NaN where either side is constant)."""
    rx, ry = _ranks(x.double()), _ranks(y.double())
    rx, ry = rx - rx.mean(-1, keepdim=True), ry - ry.mean(-1, keepdim=True)
    return (rx * ry).sum(-1) / (rx.square().sum(-1) * ry.square().sum(-1)).sqrt()


class StructuralProbe(Objective):
    """language: a bracket language (Dyck by default); rank: the rank of every probe's map; control_seed:
    draws the control task's token behaviours."""

    measure = "structure"
    is_probe = True  # reads a frozen encoder (FinetuneModule's probe regime)

    def __init__(self, language: Language | None = None, rank: int = 32, control_seed: int = 0) -> None:
        super().__init__()
        check("StructuralProbe", "rank", rank, POSITIVE_INT)
        check("StructuralProbe", "control_seed", control_seed, NONNEGATIVE_INT)
        self.language = language or Dyck()
        if not {"opener", "closer"} <= set(self.language.shared_categories):
            raise ValueError(
                f"StructuralProbe.language={self.language!r} is not allowed: its gold trees are bracket trees, so "
                "it needs a bracket language (Dyck); real text has no gold parse here"
            )
        self.rank, self.control_seed = rank, control_seed
        # per token id, the control behaviour: 1 attaches to the left neighbour, 0 to [CLS]
        self.behaviour = np.random.default_rng([control_seed]).integers(0, 2, size=self.language.vocab_size)

    def scoreboards(self) -> dict:
        return {}  # no accuracy: what it grades are the `values` below

    def value_names(self) -> tuple[str, ...]:
        both = ("uuas", "dist_spearman", "depth_spearman")
        task = both + tuple(f"dist_spearman_maxdepth_{name}" for name, _, _ in _MAXDEPTH_BUCKETS)
        return tuple(
            f"{kind}/layer{layer}/{figure}"
            for layer in range(self.states)
            for kind, figures in (("probe", task), ("control", both), ("selectivity", both))
            for figure in figures
        )

    def build(self, config: EncoderConfig) -> None:
        self.states = config.layers + 1  # the embeddings and every block

        def maps() -> nn.ModuleList:
            return nn.ModuleList(nn.Linear(config.width, self.rank, bias=False) for _ in range(self.states))

        self.distance, self.depth = maps(), maps()
        self.control_distance, self.control_depth = maps(), maps()
        self.segmented = config.segments > 0

    def make_batch(self, rng: np.random.Generator, size: int, split: Split) -> Batch:
        ids = self.language.draw(rng, size, split)
        gold = bracket_tree(self.language, ids)
        control = control_tree(self.behaviour, ids)
        (dist, depth), (cdist, cdepth) = tree_distances(gold), tree_distances(control)
        deepest = np.where(self.language.is_opener(ids), depth, 0).max(-1)  # the deepest pair's nesting depth
        return {
            "inputs": torch.from_numpy(ids),
            "parent": torch.from_numpy(gold),
            "distance": torch.from_numpy(dist).float(),
            "depth": torch.from_numpy(depth).float(),
            "control_parent": torch.from_numpy(control),
            "control_distance": torch.from_numpy(cdist).float(),
            "control_depth": torch.from_numpy(cdepth).float(),
            "deepest": torch.from_numpy(deepest),
        }

    def forward(self, encoder: Encoder, batch: Batch) -> Scored:
        ids = batch["inputs"]
        segments = torch.zeros_like(ids) if self.segmented else None
        states = encoder(ids, segments, all_layers=True)  # layers + 1 tensors (B, T, C)
        T = ids.shape[1]
        loss = 0.0
        values: dict[str, torch.Tensor] = {}
        for layer, h in enumerate(states):
            figures = {}
            for task, prefix, dist_map, depth_map in (
                ("probe", "", self.distance[layer], self.depth[layer]),
                ("control", "control_", self.control_distance[layer], self.control_depth[layer]),
            ):
                p = dist_map(h)  # (B, T, r)
                pred_dist = (p[:, :, None] - p[:, None, :]).square().sum(-1)  # (B, T, T)
                pred_depth = depth_map(h).square().sum(-1)  # (B, T)
                loss = loss + ((pred_dist - batch[f"{prefix}distance"]).abs().sum((1, 2)) / T**2).mean()
                loss = loss + ((pred_depth - batch[f"{prefix}depth"]).abs().sum(1) / T).mean()
                if not self.training:
                    figures[task] = self._figures(pred_dist, pred_depth, batch, prefix)
            if figures:
                task, control = figures["probe"], figures["control"]
                selectivity = {k: task[k] - control[k] for k in control}
                for kind, found in (("probe", task), ("control", control), ("selectivity", selectivity)):
                    values.update({f"{kind}/layer{layer}/{k}": v for k, v in found.items()})
        empty = torch.zeros(0, dtype=torch.long, device=ids.device)
        return Scored(loss, empty, empty, torch.zeros(0, 0, dtype=torch.bool, device=ids.device), values=values)

    def _figures(self, pred_dist: torch.Tensor, pred_depth: torch.Tensor, batch: Batch, prefix: str) -> dict:
        """Per-sentence figures (B,) of one probe pair against the gold (prefix "") or control tree."""
        gold_dist, gold_depth = batch[f"{prefix}distance"], batch[f"{prefix}depth"]
        out = {"uuas": uuas(spanning_tree(pred_dist.detach()), batch[f"{prefix}parent"])}
        # Spearman over brackets (positions 1..): each bracket's distances to every other one
        B, L = pred_dist.shape[0], pred_dist.shape[1] - 1
        others = ~torch.eye(L, dtype=torch.bool, device=pred_dist.device)  # each row without its own bracket
        pd, gd = (d[:, 1:, 1:][:, others].view(B, L, L - 1) for d in (pred_dist, gold_dist))  # (B, L, L - 1)
        out["dist_spearman"] = spearman(pd, gd).nanmean(-1)
        out["depth_spearman"] = spearman(pred_depth[:, 1:], gold_depth[:, 1:])
        if prefix:
            return out
        deepest = batch["deepest"]
        for name, low, high in _MAXDEPTH_BUCKETS:
            inside = (deepest >= low) & (deepest <= high)
            out[f"dist_spearman_maxdepth_{name}"] = torch.where(inside, out["dist_spearman"], torch.nan)
        return out
