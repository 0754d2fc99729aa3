"""Span masking: geometric lengths with the configured mean and cap, BERT's budget, one fate per span."""

from __future__ import annotations

import numpy as np
import pytest

from minibert.languages import CLS_ID, BracketPairs
from minibert.masking import IGNORE, KEPT, MASKED, RANDOM, UNTOUCHED, MaskingRecipe, shares
from minibert.objectives.span import SpanMasking

LANG = BracketPairs()


def lengths(span: np.ndarray) -> np.ndarray:
    return np.bincount(span[span >= 0])


@pytest.mark.parametrize("mean_length, max_span", [(3.0, 8), (2.0, 16), (1.5, 3)])
def test_span_lengths_follow_the_capped_geometric_and_the_budget_is_kept(mean_length, max_span):
    rng = np.random.default_rng(0)
    ids = LANG.sample(rng, 2000)
    recipe = SpanMasking(mean_length=mean_length, max_span=max_span)
    span = recipe.spans(ids, rng, ids != CLS_ID)
    observed = lengths(span)
    # ~1,500+ spans; the sd of a capped geometric is below 2.3, so 0.15 is > 4 standard errors
    assert abs(observed.mean() - recipe.expected_length()) < 0.15
    assert observed.max() <= max_span
    assert (span >= 0).sum() == round(0.15 * 2000 * 16)  # exactly BERT's budget
    assert not (span[:, 0] >= 0).any()  # [CLS] is never picked
    for s in np.unique(span[span >= 0])[:200]:  # every span is one contiguous run in one sentence
        rows, cols = np.nonzero(span == s)
        assert len(set(rows)) == 1 and np.array_equal(cols, np.arange(cols.min(), cols.max() + 1))


def test_a_large_cap_gives_the_configured_mean():
    recipe = SpanMasking(mean_length=3.0, max_span=200)
    assert recipe.expected_length() == pytest.approx(3.0, abs=1e-6)
    assert SpanMasking(mean_length=3.0, max_span=8).expected_length() == pytest.approx((1 - (2 / 3) ** 8) * 3)


def test_each_span_gets_one_fate_and_the_shares_match_bert():
    rng = np.random.default_rng(1)
    ids = LANG.sample(rng, 4000)
    masked = SpanMasking().apply(ids, rng, LANG)
    observed, expected = shares(masked), MaskingRecipe().expected_shares()
    assert observed["picked"] == pytest.approx(0.15, abs=1e-3)
    # spans carry 80/10/10 as units: ~3,400 spans, so the shares are looser than token-level ones
    for name in ("mask", "random", "kept"):
        assert observed[name] == pytest.approx(expected[name], abs=0.01)
    assert np.array_equal(masked.labels != IGNORE, masked.kind != UNTOUCHED)
    # whole spans share one kind: a run of picked positions never mixes kinds except where two spans touch
    rng = np.random.default_rng(1)
    ids = LANG.sample(rng, 4000)
    recipe = SpanMasking()
    span = recipe.spans(ids, rng, ids != CLS_ID)
    fate = rng.random(span.max() + 2)[span]
    treated = recipe.treat(ids, span >= 0, fate, rng, LANG)
    for s in range(0, span.max() + 1, 7):
        kinds = set(treated.kind[span == s].tolist())
        assert len(kinds) == 1 and kinds <= {MASKED, RANDOM, KEPT}


def test_span_masking_rejects_bad_settings_by_name():
    with pytest.raises(ValueError, match="mean_length=0.5"):
        SpanMasking(mean_length=0.5)
    with pytest.raises(ValueError, match="max_span=0"):
        SpanMasking(max_span=0)
    with pytest.raises(ValueError, match="p_pick=1.5"):
        SpanMasking(p_pick=1.5)
