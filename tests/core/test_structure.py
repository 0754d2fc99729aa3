"""Structural probes: the trees against brute force, the spanning tree against enumeration, Spearman against
scipy, and the probe itself on features whose answer is known in advance (an exact linear encoding of the
tree, and token plus position alone), through the probe regime of FinetuneModule."""

import itertools

import numpy as np
import pytest
import scipy.stats
import torch
from torch import nn

from minibert.languages import Dyck
from minibert.model import EncoderConfig
from minibert.objectives import StructuralProbe
from minibert.objectives.structure import bracket_tree, control_tree, spanning_tree, spearman, tree_distances, uuas
from minibert.training.finetune import FinetuneModule

DYCK = Dyck(kinds=3, length=12, max_depth=4)


def bfs_distances(parent: list[int]) -> np.ndarray:
    """All-pairs distances of the tree with these parents, by breadth-first search from every node."""
    T = len(parent)
    neighbours = [[] for _ in range(T)]
    for child, p in enumerate(parent):
        if p >= 0:
            neighbours[child].append(p)
            neighbours[p].append(child)
    out = np.full((T, T), -1)
    for source in range(T):
        out[source, source], frontier = 0, [source]
        while frontier:
            nxt = []
            for node in frontier:
                for other in neighbours[node]:
                    if out[source, other] < 0:
                        out[source, other] = out[source, node] + 1
                        nxt.append(other)
            frontier = nxt
    return out


def test_the_bracket_tree_is_the_nesting_and_its_distances_are_breadth_first_search():
    ids = DYCK.sample(np.random.default_rng(0), 200)
    parent = bracket_tree(DYCK, ids)
    partner, nesting = DYCK.partner(ids), DYCK.depth(ids)
    distance, depth = tree_distances(parent)
    closer = DYCK.is_closer(ids)
    T = ids.shape[1]
    for b in range(len(ids)):
        for t in range(1, T):
            if closer[b, t]:  # a closer hangs from its own opener
                assert parent[b, t] == partner[b, t]
            else:  # an opener from the innermost pair that encloses it, or [CLS]
                enclosing = [s for s in range(1, t) if DYCK.is_opener(ids[b, s]) and partner[b, s] > t]
                assert parent[b, t] == (max(enclosing) if enclosing else 0)
        np.testing.assert_array_equal(distance[b], bfs_distances(parent[b].tolist()))
    # an opener's tree depth is its nesting depth, its closer's one more; [CLS] is the root
    assert (depth[:, 0] == 0).all() and (parent[:, 0] == -1).all()
    np.testing.assert_array_equal(depth[:, 1:], nesting[:, 1:] + closer[:, 1:])


def test_the_control_tree_depends_on_token_identities_alone():
    behaviour = np.random.default_rng(0).integers(0, 2, DYCK.vocab_size)
    ids = DYCK.sample(np.random.default_rng(1), 100)
    parent = control_tree(behaviour, ids)
    np.testing.assert_array_equal(parent[:, 1:], np.where(behaviour[ids[:, 1:]] == 1, np.arange(1, 13) - 1, 0))
    distance, _ = tree_distances(parent)
    for b in range(20):
        np.testing.assert_array_equal(distance[b], bfs_distances(parent[b].tolist()))
    # two sentences with the same tokens in the same places have the same control tree, whatever the nesting
    assert (parent < np.arange(13)).all()


def all_trees(T: int):
    """Every tree on T labelled nodes, as parent arrays rooted at 0 (by Pruefer sequences)."""
    for code in itertools.product(range(T), repeat=T - 2):
        degree = [1] * T
        for x in code:
            degree[x] += 1
        edges, code = [], list(code)
        for x in code:
            leaf = min(i for i in range(T) if degree[i] == 1)
            edges.append((leaf, x))
            degree[leaf] -= 1
            degree[x] -= 1
        u, v = [i for i in range(T) if degree[i] == 1]
        edges.append((u, v))
        yield edges


@pytest.mark.parametrize("seed", range(5))
def test_the_spanning_tree_is_the_minimum_over_every_tree(seed):
    T = 6
    x = torch.rand(3, T, T, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    distance = x + x.transpose(1, 2)
    parent = spanning_tree(distance)
    for b in range(3):
        weight = sum(distance[b, t, parent[b, t]].item() for t in range(1, T))
        best = min(sum(distance[b, u, v].item() for u, v in edges) for edges in all_trees(T))
        assert weight == pytest.approx(best)
        assert sorted(parent[b].tolist()).count(-1) == 1 and parent[b, 0] == -1


def test_uuas_counts_shared_undirected_edges():
    gold = torch.tensor([[-1, 0, 1, 1, 0]])
    assert uuas(gold, gold).item() == 1.0
    flipped = torch.tensor([[-1, 0, 1, 2, 3]])  # edges 1-0, 2-1 shared; 3-2, 4-3 not gold
    assert uuas(flipped, gold).item() == pytest.approx(2 / 4)


def test_spearman_with_ties_is_scipys():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, (20, 15)), rng.normal(size=(20, 15))
    ours = spearman(torch.tensor(x), torch.tensor(y)).numpy()
    theirs = [scipy.stats.spearmanr(a, b).statistic for a, b in zip(x, y)]
    np.testing.assert_allclose(ours, theirs, atol=1e-10)


class Features(nn.Module):
    """An 'encoder' whose layers are given features: layer 0 is token and position one-hot side by side,
    layer 1 the tree's ancestor indicators (h_i[k] = 1 when node k != root is i or one of its ancestors), so
    that ||h_i - h_j||^2 is exactly the tree distance (the symmetric difference of two root paths) and
    ||h_i||^2 exactly the depth: a rank-T map reads the tree perfectly. Layer 2 is a random encoder's
    embeddings (a fixed random linear map of the same token and position one-hots), layer 3 noise."""

    def __init__(self, language: Dyck) -> None:
        super().__init__()
        self.language = language
        T = language.seq_len
        self.config = EncoderConfig(
            vocab_size=language.vocab_size, max_len=T, width=max(2 * T, language.vocab_size + T)
        )

    def forward(self, ids, segments=None, all_layers=False):
        B, T = ids.shape
        C = self.config.width
        tokens = nn.functional.one_hot(ids, C).float()
        positions = torch.eye(T, C, dtype=torch.float32)[None].roll(self.language.vocab_size, -1).expand(B, T, C)
        parent = bracket_tree(self.language, ids.numpy())
        ancestors = np.zeros((B, T, C), dtype=np.float32)
        for t in range(1, T):
            ancestors[:, t] = ancestors[np.arange(B), parent[:, t]]
            ancestors[:, t, t] = 1.0
        noise = torch.randn(B, T, C, generator=torch.Generator().manual_seed(int(ids.sum())))
        mixing = torch.randn(C, C, generator=torch.Generator().manual_seed(0)) / C**0.5
        states = [tokens + positions, torch.from_numpy(ancestors), (tokens + positions) @ mixing, noise]
        return states if all_layers else states[-1]


def trained_figures(steps: int = 300) -> dict[str, float]:
    language = Dyck(kinds=3, length=16, max_depth=4)
    probe = StructuralProbe(language, rank=34, control_seed=0)
    encoder = Features(language)
    probe.build(EncoderConfig(**{**encoder.config.__dict__, "layers": 3}))
    optimizer = torch.optim.Adam(probe.parameters(), lr=0.02)
    for step in range(steps):
        batch = probe.make_batch(np.random.default_rng([1, step]), 32, "train")
        loss = probe(encoder, batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    probe.eval()
    with torch.no_grad():
        out = probe(encoder, probe.make_batch(np.random.default_rng([2]), 200, "val"))
    return {k: float(v.nanmean()) for k, v in out.values.items()}


@pytest.fixture(scope="module")
def figures():
    torch.manual_seed(0)
    return trained_figures()


def test_a_probe_reads_a_linearly_encoded_tree_almost_perfectly(figures):
    assert figures["probe/layer1/uuas"] > 0.95
    # Spearman against tied gold ranks reaches 1 only if the probe ties them exactly too
    assert figures["probe/layer1/depth_spearman"] > 0.9 and figures["probe/layer1/dist_spearman"] > 0.9
    # the ancestor features say nothing of the token types the control tree follows
    assert figures["selectivity/layer1/uuas"] > 0.4


def test_token_and_position_alone_give_far_less_as_a_random_encoders_embeddings_do_and_noise_least(figures):
    """Without context, a position's features cannot say which bracket encloses it: the embeddings-like layer
    reads the tree far worse than the tree's own encoding; a random encoder's embeddings hold the same
    information (an invertible random map of it), so they read it as well; noise reads nothing of it."""
    assert figures["probe/layer0/uuas"] < figures["probe/layer1/uuas"] - 0.25
    assert abs(figures["probe/layer2/uuas"] - figures["probe/layer0/uuas"]) < 0.08
    assert figures["probe/layer3/uuas"] < figures["probe/layer0/uuas"] - 0.2
    assert figures["probe/layer3/depth_spearman"] < 0.2
    # the control tree is a function of the token identities, which the embeddings-like layer holds
    assert figures["control/layer0/uuas"] > figures["control/layer3/uuas"] + 0.3


def test_the_probe_regime_takes_a_structural_probe_and_the_random_regime_freezes_a_fresh_encoder():
    module = FinetuneModule(regime="random", objective=StructuralProbe(Dyck(kinds=2, length=8, max_depth=3)))
    assert not any(p.requires_grad for p in module.encoder.parameters())
    assert all(p.requires_grad for p in module.objective.parameters())
    assert module.val_values.names == module.objective.value_names()
    assert "selectivity/layer2/uuas" in module.objective.value_names()
