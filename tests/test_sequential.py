"""Verdicts that stop as soon as the data allow, and hold (minibert.stats.sequential), checked by simulation:
the interval over seeds and shared questions covers 95%; the sequential verdict keeps its error rates while
looking after every seed; Holm and Bonferroni hold family-wise; the audited mistakes fail the same checks.
Each simulation prints what it measured (`pytest -o addopts="" tests/test_sequential.py -q -s`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from minibert.ablation.intervals import difference_interval, t95
from minibert.ablation.power import paired_interval, seeds_needed
from minibert.stats.sequential import (
    bounds,
    clopper_pearson,
    clustered,
    decide,
    decide_many,
    e_process,
    holm,
    paired_differences_with_questions,
    robust_check,
    sequence,
    split_failures,
    tost,
)

# simulations of thousands of experiments: claim tests, with the other claims (`pytest -m slow`)
pytestmark = pytest.mark.slow

CAP = 30  # seeds per comparison at most (scripts/compare.py's default budget)

# --- Seeds x shared validation questions ----------------------------------------------------------------------


def seeds_by_questions(rng, experiments: int, seeds: int, questions: int):
    """Correctness (E, S, Q) of arms A and B and the true mean difference, from a seed x question model:
    logit P(right) = arm intercept + seed effect (per arm, SD 0.1) + question difficulty (SD 1.5, shared) +/-
    half an arm x question effect (SD 1.5: each arm finds other questions hard), then a Bernoulli draw per
    seed and question. A new validation set is a new draw of questions, so its sampling is an error that the
    seeds share and more seeds do not shrink."""
    shift, sd_seed, sd_question, sd_arm_question = 0.2, 0.1, 1.5, 1.5
    logit_a, logit_b = 1.0 + shift / 2, 1.0 - shift / 2
    x, w = np.polynomial.hermite_e.hermegauss(60)  # E over seeds and questions: one normal on the logit scale
    sd = math.sqrt(sd_seed**2 + sd_question**2 + sd_arm_question**2 / 4)
    truth = float(w @ (special.expit(logit_a + sd * x) - special.expit(logit_b + sd * x)) / w.sum())
    seed_a, seed_b = rng.normal(0, sd_seed, (2, experiments, seeds, 1))
    difficulty = rng.normal(0, sd_question, (experiments, 1, questions))
    arm = rng.normal(0, sd_arm_question, (experiments, 1, questions)) / 2
    a = rng.random((experiments, seeds, questions)) < special.expit(logit_a + seed_a + difficulty + arm)
    b = rng.random((experiments, seeds, questions)) < special.expit(logit_b + seed_b + difficulty - arm)
    return a, b, truth


def counts(rng, k: int, replicates: int) -> np.ndarray:
    """(replicates, k): how often each of k items is drawn in k draws with replacement."""
    draws = rng.integers(0, k, (replicates, k)) + k * np.arange(replicates)[:, None]
    return np.bincount(draws.ravel(), minlength=replicates * k).reshape(replicates, k).astype(float)


def multibootstrap_percentile(a, b, rng, replicates: int) -> tuple[float, float]:
    """The published multi-bootstrap (Sellam et al. 2022), for comparison: seeds and questions drawn with
    replacement together, the percentile interval of the replicated mean differences."""
    d = a.astype(float) - b  # (S, Q)
    (S, Q), B = d.shape, replicates
    w = counts(rng, S, B) @ d  # (B, Q): each replicate's seeds' sum per question
    means = (w * counts(rng, Q, B)).sum(1) / (S * Q)  # (B,)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return lo, hi


def test_interval_over_seeds_and_questions_covers_95_and_seed_only_interval_does_not():
    """10 seeds (compare.py's pilot) on one set of 200 questions: the interval covers the difference the
    recipes make on new seeds and new questions 94-96% of the time; the t-interval on the per-seed mean
    differences, which takes the validation set as fixed, covers far less (the audited mistake). The published
    percentile multi-bootstrap over-covers here (it counts each seed's own answers three times)."""
    rng = np.random.default_rng(34)
    experiments, seeds, published_runs = 2000, 10, 800
    a, b, truth = seeds_by_questions(rng, experiments, seeds, 200)
    covered = seed_only = binomial = published = 0
    for e in range(experiments):
        iv = paired_differences_with_questions(a[e], b[e], replicates=1000, seed=e)
        covered += iv.lo <= truth <= iv.hi
        plain = paired_interval(list(a[e].mean(1) - b[e].mean(1)))
        seed_only += plain.lo <= truth <= plain.hi
        old = difference_interval(dict(enumerate(a[e].mean(1))), dict(enumerate(b[e].mean(1))), 200, 200)
        binomial += old.lo <= truth <= old.hi
        if e < published_runs:
            lo, hi = multibootstrap_percentile(a[e], b[e], rng, 500)
            published += lo <= truth <= hi
    coverage, seed_coverage = covered / experiments, seed_only / experiments
    print(
        f"\nseeds x questions, {experiments} experiments: interval covers {coverage:.3f}, seed-only t-interval "
        f"{seed_coverage:.3f}, intervals.difference_interval {binomial / experiments:.3f}; published "
        f"multi-bootstrap {published / published_runs:.3f} (first {published_runs})"
    )
    # 2000 experiments: the binomial SE of a 95% coverage is 0.5 points, so the band is two SEs either side
    assert 0.94 <= coverage <= 0.96
    assert seed_coverage < 0.90
    assert published / published_runs > 0.965


def test_whole_documents_are_resampled_when_questions_cluster():
    """Questions of one document share its difficulty: resampling documents widens the interval; documents
    of one question each give the unclustered interval exactly."""
    rng = np.random.default_rng(3)
    docs = np.repeat(np.arange(40), 10)  # 400 questions in 40 documents
    shared = rng.normal(0, 1.5, 40)[docs]  # per-document effect on A - B
    a = rng.random((8, 400)) < special.expit(1.0 + shared / 2)
    b = rng.random((8, 400)) < special.expit(1.0 - shared / 2)
    flat = paired_differences_with_questions(a, b)
    clustered = paired_differences_with_questions(a, b, clusters=docs)
    assert clustered.clusters == 40 and flat.clusters == 400 and clustered.questions == 400
    assert clustered.mean == pytest.approx(flat.mean)
    assert clustered.hi - clustered.lo > 1.5 * (flat.hi - flat.lo)
    singletons = paired_differences_with_questions(a, b, clusters=7 * np.arange(400))  # relabelled
    assert (singletons.lo, singletons.hi) == pytest.approx((flat.lo, flat.hi))
    with pytest.raises(ValueError, match="at least 2"):
        paired_differences_with_questions(a[:1], b[:1])


def test_document_sums_cover_95_when_two_arms_answer_their_own_questions_from_shared_documents():
    """What runs on real text keep: per seed and document, each arm's right answers and questions (two
    objectives mask other positions of the same documents, so their questions differ in number and place).
    30 documents sharing a difficulty (SD 1 on the logit) and an arm x document effect (SD 0.8), 5 seeds: the
    document-resampling interval covers the difference on new seeds and new documents 94-96% of the time;
    the interval that takes every question as an independent draw (the binomial term) covers 87%."""
    rng = np.random.default_rng(5)
    experiments, S, C = 2000, 5, 30
    la, lb, sd_seed, sd_doc, sd_q, sd_ad = 1.1, 0.9, 0.1, 1.0, 1.0, 0.8
    x, w = np.polynomial.hermite_e.hermegauss(60)
    s = math.sqrt(sd_seed**2 + sd_doc**2 + sd_q**2 + sd_ad**2 / 4)
    truth = float(w @ (special.expit(la + s * x) - special.expit(lb + s * x)) / w.sum())
    covered = flat = 0
    for e in range(experiments):
        doc, ad = rng.normal(0, sd_doc, C), rng.normal(0, sd_ad, C) / 2
        seed_a, seed_b = rng.normal(0, sd_seed, (2, S))
        size_a, size_b = rng.integers(5, 60, C), rng.integers(5, 60, C)  # each arm's own questions per document
        ta, tb = np.zeros((S, C)), np.zeros((S, C))
        for c in range(C):
            qa, qb = rng.normal(0, sd_q, size_a[c]), rng.normal(0, sd_q, size_b[c])
            ta[:, c] = (rng.random((S, size_a[c])) < special.expit(la + seed_a[:, None] + doc[c] + ad[c] + qa)).sum(1)
            tb[:, c] = (rng.random((S, size_b[c])) < special.expit(lb + seed_b[:, None] + doc[c] - ad[c] + qb)).sum(1)
        na, nb = (np.broadcast_to(n, (S, C)).astype(float) for n in (size_a, size_b))
        iv = clustered(ta, na, tb, nb, replicates=1000, seed=e)
        covered += iv.lo <= truth <= iv.hi
        pa, pb = dict(enumerate(ta.sum(1) / size_a.sum())), dict(enumerate(tb.sum(1) / size_b.sum()))
        plain = difference_interval(pa, pb, size_a.sum(), size_b.sum())
        flat += plain.lo <= truth <= plain.hi
    print(f"\ndocuments: clustered interval covers {covered / experiments:.3f}, binomial {flat / experiments:.3f}")
    assert 0.94 <= covered / experiments <= 0.96
    assert flat / experiments < 0.90


# --- The sequential verdict under continuous monitoring -------------------------------------------------------


# null per-seed differences (mean exactly 0): normal; skewed as a recipe that trains gives them (lognormal,
# skewness 0.8, the skewed case of tests/test_power.py); 10% of seeds failing (flagged, left out of the test)
NULLS = {
    "normal": lambda rng, k: rng.normal(0.0, 0.02, k),
    "skewed": lambda rng, k: 0.02 * (rng.lognormal(0.0, 0.25, k) - math.exp(0.25**2 / 2)),
}


def failing(rng, k):
    """Normal null differences on learning seeds; each seed fails with probability 0.1 and then has a
    difference of +-0.4 (one arm did not learn), flagged as failed."""
    failed = rng.random(k) < 0.1
    return np.where(failed, rng.choice([-0.4, 0.4], k), rng.normal(0.0, 0.02, k)), failed


def wrong_signs(rng, draw, runs: int) -> tuple[float, float]:
    """Share of null runs that end in 'A better' and in 'B better', looking after every seed up to CAP (the
    margin is so small that no run stops early for equivalence: the worst case for the sign)."""
    verdicts = []
    for _ in range(runs):
        diffs, failed = draw(rng, CAP)
        verdicts.append(decide(diffs, margin=1e-9, cap=CAP, failed=failed).verdict)
    return verdicts.count("A better") / runs, verdicts.count("B better") / runs


@pytest.mark.parametrize("name", ["normal", "skewed", "failing seeds"])
def test_sequential_verdict_keeps_type_one_error_while_looking_after_every_seed(name):
    rng = np.random.default_rng([34, len(name)])
    draw = failing if name == "failing seeds" else lambda r, k: (NULLS[name](r, k), None)
    runs = 4000
    up, down = wrong_signs(rng, draw, runs)
    print(f"\n{name} null, {runs} runs, looks 2..{CAP}: 'A better' {up:.4f}, 'B better' {down:.4f}")
    assert up + down <= 0.05
    if name != "skewed":  # symmetric differences: half of it per side
        assert max(up, down) <= 0.025


def test_strong_skew_is_outside_the_normal_assumption():
    """The sequence assumes normal differences: with exponential ones (skewness 2) the side opposite the
    long tail errs more than 5% of the time (a few seeds below the mean with little spread look decisive).
    The limit of the promise, stated in docs/statistics.md."""
    rng = np.random.default_rng(2)
    up, down = wrong_signs(rng, lambda r, k: (r.exponential(0.02, k) - 0.02, None), 2000)
    print(f"\nexponential null: 'A better' {up:.4f}, 'B better' {down:.4f}")
    assert down > 0.05 and up < 0.01


def test_naive_repeated_t_tests_declare_a_difference_far_too_often():
    """The audited mistake, in the same simulation: the fixed-sample 95% t-interval read after every seed."""
    rng = np.random.default_rng(5)
    runs = 4000
    d = rng.normal(0.0, 0.02, (runs, CAP))
    n = np.arange(3, CAP + 1)
    mean = np.cumsum(d, 1)[:, 2:] / n
    sd = np.array([d[:, :k].std(1, ddof=1) for k in n]).T  # (runs, looks)
    excludes_zero = np.abs(mean) > stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
    assert excludes_zero[0].tolist() == [not paired_interval(list(d[0, :k])).contains_zero for k in n]
    false = excludes_zero.any(1).mean()
    print(f"\nrepeated t-intervals, looks 3..{CAP}: a difference declared in {false:.3f} of {runs} null runs")
    assert false > 0.15


def test_stein_second_stage_read_with_the_final_sd_undercovers():
    """Stein's procedure covers at 95% when its interval uses the pilot's SD (power.paired_interval with
    `pilot`); read with the SD of all seeds it covers less: the second stage is long exactly when the pilot's
    SD was large, so the seeds' SD and their number are not independent."""
    rng = np.random.default_rng(9)
    trials, pilot, sd = 6000, 3, 0.015
    h = t95(pilot - 1) * sd / math.sqrt(4 * pilot)  # the second stage then needs about four pilots
    stein = final = 0
    for _ in range(trials):
        d = list(rng.normal(0.0, sd, pilot))
        d += list(rng.normal(0.0, sd, seeds_needed(d, h, cap=10**6) - pilot))
        stein += paired_interval(d, pilot=pilot).contains_zero
        final += paired_interval(d).contains_zero
    print(
        f"\nStein, pilot {pilot}, {trials} trials: covers {stein / trials:.3f}; with the final SD {final / trials:.3f}"
    )
    assert stein / trials >= 0.94
    assert final / trials < 0.93


def test_re_piloting_an_undecided_comparison_inflates_its_error_and_continuing_the_sequence_does_not():
    """A two-stage comparison run again on fresh seeds after each undecided verdict (up to three times) says
    "better" with no true difference far above its 5%; the sequential rule, continued over all those seeds
    instead of starting over (what scripts/compare.py does when run again with a larger cap), stays below."""
    rng = np.random.default_rng(12)
    trials, pilot, sd, tries = 3000, 5, 0.02, 3
    h = t95(pilot - 1) * sd / math.sqrt(2 * pilot)
    re_piloted = continued = 0
    for _ in range(trials):
        every = []
        for _ in range(tries):  # each try a fresh pilot and its second stage
            d = list(rng.normal(0.0, sd, pilot))
            d += list(rng.normal(0.0, sd, seeds_needed(d, h, cap=10**6) - pilot))
            every += d
            if not paired_interval(d, pilot=pilot).contains_zero:
                re_piloted += 1
                break
        continued += decide(every, margin=1e-6, cap=len(every)).reason == "sign decided"
    print(
        f"\nre-piloting up to {tries} times: 'better' {re_piloted / trials:.3f}; the sequence continued over the "
        f"same seeds: {continued / trials:.3f}"
    )
    assert re_piloted / trials > 0.08
    assert continued / trials <= 0.05


def test_family_wise_error_with_three_null_arms_against_one_control():
    """Three arms, no real difference, all compared with one control (their differences share its seeds)
    and each stopping on its own: a wrong sign on any arm in at most 5% of runs, by Bonferroni-split sequences
    (decide_many) and by Holm on the e-processes read after every seed."""
    rng = np.random.default_rng(7)
    runs, bonferroni, holm_errors, uncorrected = 2000, 0, 0, 0
    for _ in range(runs):
        control = rng.normal(0.8, 0.02, CAP)
        diffs = {f"arm{i}": rng.normal(0.8, 0.02, CAP) - control for i in range(3)}
        verdicts = decide_many(diffs, margin=1e-9, cap=CAP)
        bonferroni += any(v.reason == "sign decided" for v in verdicts.values())
        uncorrected += any(decide(d, 1e-9, CAP).reason == "sign decided" for d in diffs.values())
        e = np.stack([e_process(d) for d in diffs.values()])  # (arms, looks)
        looks = np.flatnonzero(e.max(0) >= 20)  # Holm rejects nothing at a look where no e reaches 1/alpha
        holm_errors += any(any(holm(e[:, n], e_values=True)) for n in looks)
    print(
        f"\n3 null arms, {runs} runs: family-wise error {bonferroni / runs:.4f} (Bonferroni sequences), "
        f"{holm_errors / runs:.4f} (Holm on e-values), {uncorrected / runs:.4f} (each arm at 5%)"
    )
    assert bonferroni / runs <= 0.05 and holm_errors / runs <= 0.05


def test_a_large_effect_is_decided_within_four_seeds_and_mostly_after_three():
    """22 points with a seed SD of 2.3 points (the masking grid's largest gap): a difference obvious after
    three seeds is decided there (g = 20); the earlier design (g = 2) could not decide before four."""
    rng = np.random.default_rng(11)
    looks, earlier = [], []
    for _ in range(1000):
        d = rng.normal(0.22, 0.023, CAP)
        v = decide(d, margin=0.01, cap=CAP)
        assert v.verdict == "A better" and v.reason == "sign decided"
        looks.append(v.look)
        earlier.append(decide(d, margin=0.01, cap=CAP, prior_variance=2.0).look)
    print(f"\n22 +- 2.3 points, 1000 runs: decided after 3, 4 seeds {np.bincount(looks, minlength=5)[3:5]}; "
          f"with g = 2 after 4, 5 seeds {np.bincount(earlier, minlength=6)[4:6]}")  # fmt: skip
    assert max(looks) <= 4 and looks.count(3) >= 900
    assert min(earlier) == 4


def test_an_exact_zero_difference_reaches_equivalence_and_a_margin_difference_rarely_does():
    """A true difference of 0 with a seed SD of 0.3 points reaches 'equivalent within ±1 point' (unless the
    sequence errs on the sign, at most 5%); a true difference of exactly the margin is declared equivalent in
    at most 2.5% of runs (the sequence must miss the mean on that side). TOST on 10 fixed seeds errs at its
    nominal 5% there."""
    rng = np.random.default_rng(13)
    runs, looks, equivalent = 1000, [], "equivalent within ±0.01"
    for _ in range(runs):
        v = decide(rng.normal(0.0, 0.003, CAP), margin=0.01, cap=CAP)
        if v.verdict == equivalent:
            assert v.reason == "interval inside ±m" and -0.01 < v.interval.lo and v.interval.hi < 0.01
            looks.append(v.look)
    runs_m = 2000
    at_margin = [decide(rng.normal(0.01, 0.003, CAP), 0.01, CAP).verdict for _ in range(runs_m)]
    fixed = sum(tost(rng.normal(0.01, 0.003, 10), 0.01).equivalent for _ in range(runs_m))
    print(
        f"\nzero difference, SD 0.3 points: equivalent in {len(looks) / runs:.3f} of runs, median look "
        f"{np.median(looks):g}, max {max(looks)}; at the margin: equivalent {at_margin.count(equivalent) / runs_m:.4f} "
        f"('A better' {at_margin.count('A better') / runs_m:.3f}), TOST on 10 fixed seeds {fixed / runs_m:.4f}"
    )
    assert len(looks) / runs >= 0.95
    assert at_margin.count(equivalent) / runs_m <= 0.025
    assert 0.04 <= fixed / runs_m <= 0.06


# --- The pieces, against references --------------------------------------------------------------------------


def test_the_sequence_is_where_the_e_process_reaches_one_over_alpha():
    d = np.random.default_rng(1).normal(0.01, 0.02, 20)
    lo, hi = bounds(d)
    for n in (4, 8, 20):
        for edge in (lo[n - 1], hi[n - 1]):
            assert e_process(d[:n], mu0=edge)[-1] == pytest.approx(20.0, rel=1e-6)
    assert np.isinf(hi[:2]).all() and np.isfinite(hi[2:]).all()  # no bound before 3 seeds at g = 20
    lo2, hi2 = bounds(d, prior_variance=2.0)
    assert np.isinf(hi2[:3]).all() and np.isfinite(hi2[3:]).all()  # nor before 4 at g = 2
    assert e_process(d[:8], mu0=hi2[7], prior_variance=2.0)[-1] == pytest.approx(20.0, rel=1e-6)
    ivs = sequence(list(d))
    assert [iv.seeds for iv in ivs] == list(range(1, 21)) and ivs[-1].mean == pytest.approx(d.mean())
    assert e_process([0.1, 0.1, 0.1, 0.1])[-1] > 20  # equal values: the limit t -> inf, not NaN


def test_decide_reports_where_and_why_it_stopped():
    assert decide([0.01, -0.02, 0.03], 0.01, cap=30).verdict == "undecided"
    capped = decide([0.01, -0.02, 0.03, 0.0, 0.02], 0.001, cap=5)
    assert (capped.verdict, capped.look, capped.reason) == ("undecided (cap)", 5, "cap reached")
    diffs = [0.22, -0.4, 0.25, 0.21, 0.23, 0.20]
    v = decide(diffs, 0.01, cap=30, failed=[False, True, False, False, False, False])
    assert (v.verdict, v.look, v.failed, v.interval.seeds) == ("A better", 4, 1, 3)
    assert decide([-x for x in diffs[2:]], 0.01, cap=30).verdict == "B better"
    with pytest.raises(ValueError, match="margin"):
        decide(diffs, 0.0, cap=30)
    none_learned = decide([0.0, 0.0, 0.0], 0.01, cap=3, failed=[True, True, True])  # every seed failed
    assert (none_learned.verdict, none_learned.failed, none_learned.interval.seeds) == ("undecided (cap)", 3, 0)
    assert decide([0.0, 0.0], 0.01, cap=3, failed=[True, True]).verdict == "undecided"


def test_holm_steps_down_and_decide_many_splits_alpha():
    assert holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]  # .005 <= .05/4, .01 <= .05/3, .03 > .05/2
    assert holm([0.04, 0.04]) == [False, False]  # the smallest needs <= .05/2
    assert holm([0.001, 0.02, 0.04]) == [True, True, True]
    assert holm([61.0, 40.0, 19.0], e_values=True) == [True, True, False]  # e >= 3/.05, 2/.05, 1/.05
    diffs = {"x": [0.02, 0.03, 0.025, 0.028, 0.022, 0.024], "y": [0.0, 0.01, -0.01, 0.005, -0.002, 0.003]}
    many, alone = decide_many(diffs, 0.01, cap=30)["x"], decide(diffs["x"], 0.01, cap=30)
    assert many.interval == sequence(diffs["x"][: many.look], alpha=0.025)[-1]  # each arm at alpha / 2
    assert many.interval.hi - many.interval.lo > alone.interval.hi - alone.interval.lo


def test_failures_apart_with_an_exact_binomial_interval():
    for k, n in [(0, 10), (1, 10), (3, 20), (20, 20)]:
        ci = stats.binomtest(k, n).proportion_ci(method="exact")
        assert clopper_pearson(k, n) == pytest.approx((ci.low, ci.high))
    # exact coverage of the failure rate at 20 seeds, by enumerating the failures: never below 95%
    for p in (0.02, 0.1, 0.3):
        pmf = stats.binom.pmf(np.arange(21), 20, p)
        covered = [lo <= p <= hi for lo, hi in (clopper_pearson(k, 20) for k in range(21))]
        assert pmf @ covered >= 0.95
    s = split_failures([0.02, 0.03, -0.4, 0.025, 0.02], [False, False, True, False, False])
    assert (s.failed, s.seeds, s.rate) == (1, 5, 0.2)
    assert s.learning.mean == pytest.approx(0.02375) and s.learning.seeds == 4


def test_robust_check_speaks_up_when_normality_is_doubtful():
    rng = np.random.default_rng(4)
    calm = robust_check(rng.normal(0.02, 0.01, 12))
    assert not calm.doubts_normality and calm.note() == ""
    assert calm.bootstrap.lo < 0.02 < calm.bootstrap.hi and calm.wilcoxon_p < 0.01
    bimodal = robust_check([0.02, 0.021, 0.019, 0.022, 0.02, 0.018, 0.021, -0.3, 0.02, 0.019])
    assert bimodal.doubts_normality and bimodal.shapiro_p < 0.05
    assert "Wilcoxon p" in bimodal.note() and "bootstrap" in bimodal.note()
    assert math.isnan(robust_check([0.01, 0.01, 0.01]).shapiro_p)


def test_tost_is_two_one_sided_t_tests():
    d = np.random.default_rng(6).normal(0.002, 0.004, 8)
    r = tost(d, margin=0.006)
    lower = stats.ttest_1samp(d, -0.006, alternative="greater").pvalue
    upper = stats.ttest_1samp(d, 0.006, alternative="less").pvalue
    assert r.p == pytest.approx(max(lower, upper))
    assert r.equivalent == (-0.006 < r.interval.lo and r.interval.hi < 0.006) == (r.p < 0.05)
