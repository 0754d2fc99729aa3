"""CategoryAccuracy against a plain numpy count, and the MLM categories against a per-position loop."""

import math

import numpy as np
import pytest
import torch

from minibert.languages import BracketPairs
from minibert.masking import IGNORE, KEPT, MASKED, MLM_CATEGORIES, RANDOM, UNTOUCHED, MaskingRecipe, categories
from minibert.training.metrics import CategoryAccuracy

NAMES = ("red", "green", "blue", "never")
LANG = BracketPairs()
FIRST_OPENER, FIRST_CLOSER = LANG.content_ids[0], LANG.first_closer


def numpy_count(preds: np.ndarray, target: np.ndarray, cats: np.ndarray) -> dict[str, float]:
    """Accuracy and count overall and per category, by plain counting (NaN for an empty category)."""
    hit = preds == target
    out = {"acc": hit.mean() if len(hit) else math.nan, "n": float(len(hit))}
    for c, name in enumerate(NAMES):
        member = cats[:, c]
        out[f"acc_{name}"] = hit[member].sum() / member.sum() if member.any() else math.nan
        out[f"n_{name}"] = float(member.sum())
    return out


@pytest.mark.parametrize("seed", range(5))
def test_category_accuracy_equals_a_numpy_count_over_several_updates(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    preds, target = rng.integers(0, 4, n), rng.integers(0, 4, n)  # 4 classes: accuracies far from 0 and 1
    cats = rng.random((n, len(NAMES))) < rng.uniform(0.1, 0.9, len(NAMES))
    cats[:, NAMES.index("never")] = False  # an empty category
    metric = CategoryAccuracy(NAMES)
    cuts = np.sort(rng.integers(0, n, 3))  # four updates, possibly one of them empty
    for part in np.split(np.arange(n), cuts):
        metric.update(torch.from_numpy(preds[part]), torch.from_numpy(target[part]), torch.from_numpy(cats[part]))
    got = {k: v.item() for k, v in metric.compute().items()}
    expected = numpy_count(preds, target, cats)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if math.isnan(value):
            assert math.isnan(got[key]), key
        else:
            assert got[key] == pytest.approx(value, abs=1e-6), key


def test_states_merged_from_two_processes_equal_one_metric_over_all_data():
    rng = np.random.default_rng(0)
    preds, target = torch.from_numpy(rng.integers(0, 3, 300)), torch.from_numpy(rng.integers(0, 3, 300))
    cats = torch.from_numpy(rng.random((300, len(NAMES))) < 0.5)
    whole, first, second = CategoryAccuracy(NAMES), CategoryAccuracy(NAMES), CategoryAccuracy(NAMES)
    whole.update(preds, target, cats)
    first.update(preds[:120], target[:120], cats[:120])
    second.update(preds[120:], target[120:], cats[120:])
    first.merge_state(second)  # what the summed states do under DDP
    merged, expected = first.compute(), whole.compute()
    assert all(torch.equal(merged[k], expected[k]) for k in expected)


def test_reset_forgets_earlier_updates():
    metric = CategoryAccuracy(["x"])
    metric.update(torch.tensor([1, 1]), torch.tensor([0, 0]), torch.tensor([[True], [True]]))
    metric.reset()
    metric.update(torch.tensor([1]), torch.tensor([1]), torch.tensor([[True]]))
    assert metric.compute()["acc_x"].item() == 1.0 and metric.compute()["n"].item() == 1


def test_duplicate_or_empty_category_names_raise():
    with pytest.raises(ValueError, match=r"categories=\('a', 'a'\) is not allowed: use distinct, non-empty names"):
        CategoryAccuracy(["a", "a"])
    with pytest.raises(ValueError, match="distinct, non-empty names"):
        CategoryAccuracy(["a", ""])


def test_categories_of_the_wrong_shape_raise():
    metric = CategoryAccuracy(["a", "b"])
    with pytest.raises(ValueError, match=r"categories has shape \(3, 3\), expected \(3, 2\)"):
        metric.update(torch.zeros(3), torch.zeros(3), torch.zeros(3, 3, dtype=torch.bool))


def categories_by_loop(labels: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """MLM categories position by position, from the definitions in words."""
    B, T = labels.shape
    out = np.zeros((B, T, len(MLM_CATEGORIES)), dtype=bool)
    for b in range(B):
        for t in range(T):
            if labels[b, t] == IGNORE:
                continue  # only graded positions belong to a category
            role = "opener" if FIRST_OPENER <= labels[b, t] < FIRST_CLOSER else "closer"
            partner = t + 1 if t % 2 == 1 else t - 1  # opener at odd t, its closer right after it
            seen = "visible" if kind[b, partner] in (UNTOUCHED, KEPT) else "hidden"
            how = {MASKED: "mask", RANDOM: "random", KEPT: "kept"}[int(kind[b, t])]
            for name in (role, f"partner_{seen}", f"kind_{how}"):
                out[b, t, MLM_CATEGORIES.index(name)] = True
    return out


@pytest.mark.parametrize(
    "recipe", [MaskingRecipe(), MaskingRecipe(p_pick=0.6, p_mask=0.5, p_random=0.3)], ids=["default", "dense"]
)
def test_mlm_categories_match_a_per_position_loop(recipe):
    rng = np.random.default_rng(4)
    ids = LANG.sample(rng, 300)
    masked = recipe.apply(ids, rng, LANG)
    got = categories(LANG, ids, masked.labels, masked.kind)
    assert got.shape == (300, 17, len(MLM_CATEGORIES))
    assert np.array_equal(got, categories_by_loop(masked.labels, masked.kind))
    # every graded position has exactly one role, one partner state and one kind
    picked = masked.labels != IGNORE
    assert (got[picked].sum(-1) == 3).all() and not got[~picked].any()
