"""Rank correlation and sign agreement between two settings' rankings (minibert.stats.agreement): the coefficients
match scipy's, the interval covers the population coefficient at its nominal level when arms are drawn from a
population, shared seed luck moves nothing, more noise widens it, and the pairwise agreement counts what each
setting decides with Holm's step-down."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from minibert.stats import agreement
from minibert.stats.agreement import Measured, correlation


def measured(true: np.ndarray, noise: float, seeds: int, rng: np.random.Generator, shift: float = 0.0, **kw):
    """Arms a0..aK with per-seed values true + noise, plus `shift` times a seed effect shared by every arm."""
    common = rng.normal(size=seeds) * shift
    return Measured({f"a{i}": {s: float(t + common[s] + noise * rng.normal()) for s in range(seeds)}
                     for i, t in enumerate(true)}, **kw)  # fmt: skip


def test_the_coefficients_of_the_means_are_scipys_with_ties_and_direction():
    rng = np.random.default_rng(0)
    x = Measured({f"a{i}": {0: v, 1: v} for i, v in enumerate(rng.normal(size=9))})
    y_vals = rng.normal(size=9)
    y_vals[3] = y_vals[4]  # a tie
    y = Measured({f"a{i}": {0: v, 1: v} for i, v in enumerate(y_vals)})
    r = correlation(x, y, replicates=50)
    xs = [x.values[f"a{i}"][0] for i in range(9)]
    assert r.spearman.value == pytest.approx(scipy_stats.spearmanr(xs, y_vals).statistic)
    assert r.kendall.value == pytest.approx(scipy_stats.kendalltau(xs, y_vals).statistic)
    # a gap read as lower-is-better ranks the other way round
    flipped = Measured({a: {s: -v for s, v in seeds.items()} for a, seeds in y.values.items()}, lower_is_better=True)
    assert correlation(x, flipped, replicates=50).spearman.value == pytest.approx(r.spearman.value)


def test_the_interval_covers_the_population_coefficient_at_its_nominal_level():
    """Arms drawn from a bivariate normal population with correlation 0.7 (Spearman's (6/pi) asin(rho/2)), three
    noisy seeds each: the interval over seeds, questions and arms covers it at least 95% of the time, and not so
    much more that it is useless (it is a little conservative: 96-98% in the simulations of docs/statistics.md;
    400 trials here, SE 1.1 points)."""
    rng = np.random.default_rng(1)
    rho = 0.7
    population = 6 / math.pi * math.asin(rho / 2)
    hits = 0
    for trial in range(400):
        tx = rng.normal(size=12)
        ty = rho * tx + math.sqrt(1 - rho**2) * rng.normal(size=12)
        r = correlation(measured(tx, 0.4, 3, rng), measured(ty, 0.4, 3, rng), replicates=600, over_arms=True,
                        seed=trial)  # fmt: skip
        hits += r.spearman.lo <= population <= r.spearman.hi
    assert 0.93 <= hits / 400 <= 0.99, hits / 400


def test_a_seeds_luck_shared_by_every_arm_moves_no_rank_so_it_leaves_the_interval_alone():
    true = np.linspace(0, 3, 10)
    a = measured(true, 0.3, 4, np.random.default_rng(2))
    b = measured(true, 0.3, 4, np.random.default_rng(2), shift=5.0)  # the same draws plus a large common shift
    same_noise = measured(true[::-1], 0.3, 4, np.random.default_rng(3))
    ra, rb = correlation(a, same_noise, replicates=300), correlation(b, same_noise, replicates=300)
    assert (ra.spearman.lo, ra.spearman.hi) == pytest.approx((rb.spearman.lo, rb.spearman.hi), abs=0.02)


def test_more_noise_widens_the_interval_and_identical_rankings_sit_near_one():
    rng = np.random.default_rng(4)
    true = rng.normal(size=12)

    def width(noise):
        r = correlation(measured(true, noise, 3, rng), measured(true, noise, 3, rng), replicates=800, over_arms=True)
        return r.spearman.hi - r.spearman.lo, r

    quiet, r = width(0.01)
    assert r.spearman.value > 0.99 and r.spearman.lo > 0.9
    noisy, r = width(0.5)
    assert noisy > quiet + 0.2 and r.spearman.lo < 0.9


def test_shared_question_sampling_widens_the_interval():
    rng = np.random.default_rng(5)
    true = np.linspace(0.30, 0.40, 10)  # accuracies 1 point apart
    x, y = measured(true, 0.002, 3, rng), measured(true, 0.002, 3, rng)
    free = correlation(x, y, replicates=800, over_arms=True)
    graded = correlation(x, Measured(y.values, {a: 0.35 * 0.65 / 2000 for a in y.values}), replicates=800,
                         over_arms=True)  # fmt: skip
    assert graded.spearman.lo < free.spearman.lo - 0.1


def test_the_ceiling_is_what_the_true_ranking_scores_against_the_measured_one():
    """A perfect predictor (the true figures) against a noisy experiment: averaged over simulated experiments,
    the ceiling each estimates from its own data matches the coefficient the truth really scores against that
    experiment's means; it is near 1 without noise and falls as noise grows. (At noise twice the true spread
    it errs low, 0.50 against 0.60: the truth's spread is then estimated from little.)"""
    rng = np.random.default_rng(8)
    falls = []
    for noise, near in ((0.05, 0.99), (0.6, None), (1.2, None)):
        estimated, actual = [], []
        for trial in range(120):
            true = rng.normal(size=12)
            m = measured(true, noise, 3, rng)
            means = [np.mean(list(m.values[f"a{i}"].values())) for i in range(12)]
            actual.append(scipy_stats.spearmanr(true, means).statistic)
            estimated.append(agreement.ceiling(m, replicates=300, seed=trial).spearman)
        if near is not None:
            assert np.mean(estimated) > near and np.mean(actual) > near
        falls.append(np.mean(estimated))
        assert np.mean(estimated) == pytest.approx(np.mean(actual), abs=0.04), (np.mean(estimated), np.mean(actual))
    assert falls[0] > falls[1] + 0.05 > falls[2] + 0.15


@pytest.mark.slow
def test_the_ceiling_on_a_shared_validation_set_leaves_out_what_moves_every_arm_alike():
    """Every arm graded one set of 2,000 questions: the set's draw is mostly a shift every arm shares (questions
    that are hard for one arm are hard for all), which moves no rank. Over simulated experiments the ceiling
    each estimates matches what the true figures score; drawing the set's binomial error independently per arm,
    as the audited ceiling did, puts it far below."""
    rng = np.random.default_rng(21)
    n, estimated, actual, independent = 2000, [], [], []
    for trial in range(150):
        true = 0.6 + 0.01 * rng.normal(size=10)  # arms a point apart, about the binomial error of one set
        shift = rng.normal(0, np.sqrt(0.24 / n))  # the set's draw, shared by every arm
        own = rng.normal(0, 0.1 * np.sqrt(0.24 / n), 10)  # each arm's own luck on these questions: small
        values = {f"a{i}": {s: float(true[i] + shift + own[i] + rng.normal(0, 0.004)) for s in range(3)}
                  for i in range(10)}  # fmt: skip
        sampling = {a: 0.24 / n for a in values}
        m = Measured(values, sampling)
        means = [np.mean(list(values[f"a{i}"].values())) for i in range(10)]
        actual.append(scipy_stats.spearmanr(true, means).statistic)
        estimated.append(agreement.ceiling(m, replicates=300, seed=trial).spearman)
        rngi = np.random.default_rng(trial)  # the audited construction: independent binomial terms in the draws
        draws = agreement._replicates(m.matrix(m.arms), m.sampling_sd(m.arms), 300, rngi)
        truth = agreement._truth(m.matrix(m.arms), m.sampling_sd(m.arms))
        flat = np.ptp(truth) == 0  # the means spread no more than that noise: nothing to rank (as `ceiling` says)
        independent.append(0.0 if flat else np.median([scipy_stats.spearmanr(truth, d).statistic for d in draws]))
    print(f"\nshared set: ceiling {np.mean(estimated):.3f}, truth scores {np.mean(actual):.3f}, "
          f"independent binomial terms {np.mean(independent):.3f}")  # fmt: skip
    assert np.mean(estimated) == pytest.approx(np.mean(actual), abs=0.06)
    assert np.mean(independent) < np.mean(actual) - 0.15


def test_two_settings_that_graded_one_set_are_drawn_on_it_together():
    """Text and text at 1x fine-tune on one set: the bootstrap gives both the same draw of its error, arm by arm,
    so the set's luck, shared by both, does not count as disagreement between them."""
    rng = np.random.default_rng(3)
    arms = [f"a{i}" for i in range(8)]
    base = {a: 0.55 + 0.002 * i for i, a in enumerate(arms)}  # arms closer than the set's error
    sampling = dict.fromkeys(arms, 0.24 / 500)

    def setting(name):
        return Measured({a: {s: base[a] + float(rng.normal(0, 0.0005)) for s in range(3)} for a in arms}, sampling,
                        validation_set=name)  # fmt: skip

    apart = agreement.correlation(setting(""), setting(""), arms, replicates=500)
    together = agreement.correlation(setting("text:finetune:2018"), setting("text:finetune:2018"), arms,
                                     replicates=500)  # fmt: skip
    assert together.spearman.lo > apart.spearman.lo + 0.3


def test_pairwise_agreement_counts_each_settings_decided_pairs_and_holds_them_together():
    # x: three arms far apart on five seeds; y: agrees on a > b, reverses b vs c, and cannot tell a from c
    noise = np.random.default_rng(8).normal(0, 0.002, (6, 5))
    x = Measured({"a": {s: 0.9 + noise[0, s] for s in range(5)}, "b": {s: 0.5 + noise[1, s] for s in range(5)},
                  "c": {s: 0.1 + noise[2, s] for s in range(5)}})  # fmt: skip
    y = Measured({"a": {s: 0.50 + 0.1 * (-1) ** s for s in range(5)}, "b": {s: 0.2 + noise[4, s] for s in range(5)},
                  "c": {s: 0.55 + noise[5, s] for s in range(5)}})  # fmt: skip
    a = agreement.agreement(x, y)
    assert (a.pairs, a.decided, a.same, a.other, a.undecided) == (3, 3, 1, 1, 1)
    assert a.fraction == 0.5 and 0 < a.lo < 0.5 < a.hi < 1
    verdicts = {(v.a, v.b): v for v in agreement.pair_verdicts(y, ["a", "b", "c"])}
    assert verdicts[("a", "c")].sign == 0 and verdicts[("b", "c")].sign == -1


def test_a_gap_is_read_lower_is_better_and_one_seed_decides_nothing():
    gaps = Measured({"small": {0: 0.10, 1: 0.11, 2: 0.12}, "large": {0: 0.30, 1: 0.32, 2: 0.29}},
                    lower_is_better=True)  # fmt: skip
    (v,) = agreement.pair_verdicts(gaps, ["small", "large"])
    assert v.sign == 1 and v.mean == pytest.approx(0.19333, abs=1e-4) and 0 < v.lo < v.hi  # > 0 favours "small"
    one = Measured({"a": {0: 0.9}, "b": {0: 0.1}, "c": {0: 0.5}})
    assert all(v.sign == 0 and math.isnan(v.p) for v in agreement.pair_verdicts(one, one.arms))
    with pytest.raises(ValueError, match="2 seeds"):
        correlation(one, one)
    with pytest.raises(ValueError, match="share no seed"):
        Measured({"a": {0: 0.9}, "b": {1: 0.1}}).seeds(["a", "b"])


def test_holm_leaves_undecided_a_pair_that_its_own_test_alone_would_decide():
    """Twenty-eight pairs of arms that differ by noise alone: the smallest p is under 0.05 on its own, yet the
    family (Holm's first step asks p <= 0.05 / 28) leaves it undecided, and with it every other pair."""
    rng = np.random.default_rng(0)
    m = Measured({f"a{i}": {s: float(rng.normal(0, 0.01)) for s in range(6)} for i in range(8)})
    verdicts = agreement.pair_verdicts(m, m.arms)
    smallest = min(verdicts, key=lambda v: v.p)
    assert len(verdicts) == 28 and agreement.ALPHA / 28 < smallest.p < agreement.ALPHA
    assert all(v.sign == 0 for v in verdicts)


def test_a_coefficient_decided_alone_can_be_undecided_held_together_with_many():
    rng = np.random.default_rng(12)
    tx = rng.normal(size=12)
    ty = 0.6 * tx + 0.8 * rng.normal(size=12)
    x, y = measured(tx, 0.3, 3, rng), measured(ty, 0.3, 3, rng)
    alone, held = (correlation(x, y, replicates=2000, over_arms=True, family=k).spearman for k in (1, 200))
    assert (alone.lo, alone.hi) == (held.lo, held.hi)  # the same 95% interval is shown
    assert alone.lo > 0 and alone.sign == 1 and held.sign == 0


def test_a_better_predictor_is_told_apart_and_two_alike_are_not():
    rng = np.random.default_rng(9)
    truth = rng.normal(size=12)
    target, good = measured(truth, 0.2, 3, rng), measured(truth, 0.2, 3, rng)
    bad, twin = measured(rng.normal(size=12), 0.2, 3, rng), measured(truth, 0.2, 3, rng)
    better = agreement.difference(good, bad, target, replicates=800)
    assert better.spearman.lo > 0 and better.spearman.value == pytest.approx(
        correlation(good, target, replicates=10).spearman.value - correlation(bad, target, replicates=10).spearman.value
    )
    alike = agreement.difference(good, twin, target, replicates=800)
    assert alike.spearman.lo < 0 < alike.spearman.hi and agreement.difference(bad, good, target).spearman.hi < 0


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(ValueError, match="NaN"):
        Measured({"a": {0: math.nan}})
    with pytest.raises(ValueError, match="at least 3 arms"):
        correlation(Measured({"a": {0: 1.0}, "b": {0: 2.0}}), Measured({"a": {0: 1.0}, "b": {0: 2.0}}))
    with pytest.raises(ValueError, match="no values"):
        Measured({"a": {0: 1.0}}, sampling={"b": 0.1})


def test_leaving_one_arm_out_shows_a_coefficient_that_one_arm_makes():
    """Eight arms in unrelated orders in two settings but one far below in both: each leave-one-out coefficient is
    scipy's on the other arms' means, and leaving out the broken arm lowers rho more than leaving out any other."""
    rng = np.random.default_rng(9)
    x_true, y_true = rng.normal(0, 0.01, 8), rng.normal(0, 0.01, 8)
    x_true[0] = y_true[0] = -5.0  # a broken arm, last everywhere
    x, y = measured(x_true, 0.001, 2, rng), measured(y_true, 0.001, 2, rng)
    mx, my = (np.array([np.mean(list(m.values[a].values())) for a in m.arms]) for m in (x, y))
    out = agreement.leave_one_out(x, y, x.arms)
    for i, arm in enumerate(x.arms):
        keep = np.arange(8) != i
        assert out[arm][0] == pytest.approx(scipy_stats.spearmanr(mx[keep], my[keep]).statistic)
        assert out[arm][1] == pytest.approx(scipy_stats.kendalltau(mx[keep], my[keep]).statistic)
    assert min(out, key=lambda a: out[a][0]) == "a0"
    with pytest.raises(ValueError, match="at least 4"):
        agreement.leave_one_out(x, y, x.arms[:3])


def test_decision_accuracy_is_the_share_of_arm_pairs_ordered_alike_counted_by_brute_force():
    from itertools import combinations

    from minibert.stats.agreement import decision_accuracy

    rng = np.random.default_rng(3)
    arms = [f"a{i}" for i in range(6)]
    x = Measured({a: {s: float(v) for s, v in enumerate(rng.normal(i, 1.0, 4))} for i, a in enumerate(arms)})
    y = Measured({a: {s: float(v) for s, v in enumerate(rng.normal(i % 3, 1.0, 4))} for i, a in enumerate(arms)})
    mx = {a: np.mean(list(x.values[a].values())) for a in arms}
    my = {a: np.mean(list(y.values[a].values())) for a in arms}
    alike = [(mx[a] - mx[b]) * (my[a] - my[b]) > 0 for a, b in combinations(arms, 2)]
    got = decision_accuracy(x, y, replicates=400)
    assert got.value == pytest.approx(np.mean(alike))
    assert decision_accuracy(x, x, replicates=400).value == 1.0
    flipped = Measured({a: {s: -v for s, v in x.values[a].items()} for a in arms})
    assert decision_accuracy(x, flipped, replicates=400).value == 0.0


def test_decision_accuracy_covers_the_true_share_for_these_arms_over_seeds_noise():
    """Eight arms with fixed true figures in two settings, 3 noisy seeds each: the interval holds the share of
    arm pairs the true figures order alike in at least 90% of the experiments (nominal 95%)."""
    from itertools import combinations

    from minibert.stats.agreement import decision_accuracy

    rng = np.random.default_rng(0)
    tx = np.linspace(0, 1, 8)
    ty = tx + rng.normal(0, 0.3, 8)  # a related but imperfect target
    truth = np.mean([(tx[i] - tx[j]) * (ty[i] - ty[j]) > 0 for i, j in combinations(range(8), 2)])
    covered = 0
    for k in range(60):
        x = Measured({f"a{i}": {s: float(tx[i] + rng.normal(0, 0.15)) for s in range(3)} for i in range(8)})
        y = Measured({f"a{i}": {s: float(ty[i] + rng.normal(0, 0.15)) for s in range(3)} for i in range(8)})
        c = decision_accuracy(x, y, replicates=300, seed=k)
        covered += c.lo <= truth <= c.hi
    assert covered >= 54
