"""Ceilings that are bounds, against brute force on a language small enough to enumerate every question.

Every sentence of BracketPairs(kinds=2, pairs=2) and every corruption of it, each with its probability, is
one weighted question set, so each figure below is exact: no predictor, of the kind a model is (a token for
each input it sees and each position), scores more on a category than its `val/ceiling/...`, and a plain
predictor beats the Bayes predictor's own accuracy (`val/bayes/...`) on a category that hidden truth decides.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest

from minibert.languages import BracketPairs
from minibert.masking import (
    IGNORE,
    INPUT_CATEGORIES,
    KEPT,
    MASKED,
    RANDOM,
    UNTOUCHED,
    MaskingRecipe,
    categories,
    mlm_categories,
)
from minibert.oracle import mlm_grades

LANG = BracketPairs(kinds=2, pairs=2)
RECIPE = MaskingRecipe(p_pick=0.4, p_mask=0.5, p_random=0.3)  # every fate common, so every category is populated
NAMES = mlm_categories(LANG)


def every_question() -> tuple[np.ndarray, ...]:
    """(inputs, labels, kind, weight): every sentence and corruption, weighted by its probability."""
    content = list(LANG.content_ids)
    fates = [(UNTOUCHED, None, 1 - RECIPE.p_pick), (MASKED, None, RECIPE.p_pick * RECIPE.p_mask)]
    fates += [(RANDOM, r, RECIPE.p_pick * RECIPE.p_random / len(content)) for r in content]
    fates += [(KEPT, None, RECIPE.p_pick * RECIPE.p_kept)]
    rows = []
    for types in itertools.product(range(LANG.kinds), repeat=LANG.pairs):
        ids = LANG.encode("[CLS] " + " ".join(f"{'ab'[k]} {'AB'[k]}" for k in types))
        for outcome in itertools.product(fates, repeat=len(ids) - 1):
            inputs, labels, kind, weight = ids.copy(), np.full(len(ids), IGNORE), np.zeros(len(ids), int), 1.0
            for t, (fate, shown, p) in enumerate(outcome, start=1):
                weight *= p
                kind[t] = fate
                if fate != UNTOUCHED:
                    labels[t] = ids[t]
                inputs[t] = {MASKED: 1, RANDOM: shown}.get(fate, ids[t])
            rows.append((ids, inputs, labels, kind, weight))
    ids, inputs, labels, kind, weight = (np.array(c) for c in zip(*rows))
    return ids, inputs, labels, kind, weight


@pytest.fixture(scope="module")
def questions():
    return every_question()


class Positions:
    """Every (question, position) where `where` holds, with what a predictor sees there once worked out:
    `keys[i]` = (the input it sees, its position), `label[i]` and `weight[i]` (the question's probability)."""

    def __init__(self, inputs, labels, weight, where, causal: bool) -> None:
        self.q, self.t = np.nonzero(where)
        self.keys = [(tuple(inputs[q, : t + 1] if causal else inputs[q]), t) for q, t in zip(self.q, self.t)]
        self.label, self.weight = labels[self.q, self.t], weight[self.q]

    def members(self, members: np.ndarray) -> np.ndarray:
        """(N,) which of these positions are members of a (Q, T) category."""
        return members[self.q, self.t]


def brute_best(at: Positions, members: np.ndarray) -> float:
    """The best accuracy on the member questions of any predictor that maps what it sees to a token."""
    votes: dict[tuple, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for i in np.flatnonzero(at.members(members)):
        votes[at.keys[i]][int(at.label[i])] += at.weight[i]
    return sum(max(v.values()) for v in votes.values()) / at.weight[at.members(members)].sum()


def accuracy(predicted: np.ndarray, at: Positions, members: np.ndarray) -> float:
    """Exact accuracy on the member questions of a predictor's tokens at every position of `at`."""
    inside = at.members(members)
    return (at.weight * (predicted == at.label))[inside].sum() / at.weight[inside].sum()


@pytest.mark.parametrize("causal", [False, True])
def test_every_ceiling_is_exactly_the_best_any_predictor_reaches_and_references_can_be_beaten(questions, causal):
    ids, inputs, labels, kind, weight = questions
    cats = categories(LANG, ids, labels, kind)  # (Q, T, C)
    credit, own = mlm_grades(LANG, RECIPE, inputs, labels, causal, NAMES)
    graded = labels != IGNORE
    at = Positions(inputs, labels, weight, graded | cats.any(-1), causal)
    rng = np.random.default_rng(0)
    random_tables = [defaultdict(lambda: int(rng.choice(LANG.content_ids))) for _ in range(20)]
    predictors = [lambda seen, t, table=table: table[(seen, t)] for table in random_tables]
    predictors.append(lambda seen, t: seen[t] if seen[t] != 1 else LANG.content_ids[0])  # copy the shown token
    predicted = [np.array([predict(*key) for key in at.keys]) for predict in predictors]  # (N,) each
    for j, name in enumerate(("", *NAMES)):
        members = graded if not name else cats[..., j - 1]
        total = (weight[:, None] * members).sum()
        bayes = (weight[:, None] * members * credit).sum() / total
        best = brute_best(at, members)
        for tokens in predicted:  # random tables and copying the shown token never beat the best
            assert accuracy(tokens, at, members) <= best + 1e-12, name
        if not name or name in INPUT_CATEGORIES:  # decided by the input: the Bayes predictor is the best
            assert bayes == pytest.approx(best, abs=1e-12), name
        elif not np.isnan(own[..., j - 1]).any():  # the category's own best predictor is the bound
            ceiling = (weight[:, None] * members * own[..., j - 1]).sum() / total
            assert ceiling == pytest.approx(best, abs=1e-12), name
            assert ceiling >= bayes - 1e-12, name
        else:  # no bound known: the Bayes predictor's accuracy is only a reference, below the best
            assert best >= bayes - 1e-12, name
    # the reference is beaten where hidden truth decides: copying the shown token is right on every kept one
    kept = cats[..., NAMES.index("kind_kept")]
    copy = accuracy(predicted[-1], at, kept)
    bayes_kept = (weight[:, None] * kept * credit).sum() / (weight[:, None] * kept).sum()
    assert copy == pytest.approx(1.0) and bayes_kept < copy - 0.01, bayes_kept  # 97.0% both sides, 98.5% left
