"""The sign rule compare.py stops on (minibert.stats.sign), held to its promise: a wrong verdict at most alpha of
the time over every look, on nulls built from committed per-seed figures (skewed, tied at the top, bimodal),
its evidence exact against numerical integration, and the seeds it needs against the betting sequence's."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate

from minibert.stats import betting, sign
from minibert.tables import table

ROOT = Path(__file__).resolve().parents[2]
LOOKS, RUNS = 500, 2000


def figures(folder: str, experiment: str, metric: str) -> np.ndarray:
    """One arm's committed per-seed figures."""
    t = table.read(ROOT / "results" / folder)
    return t[(t.experiment == experiment) & (t.metric == metric) & (t.category == "")].value.to_numpy()


def null(kind: str, rng: np.random.Generator) -> np.ndarray:
    """(RUNS, LOOKS) differences A - B with P(A beats B) = P(B beats A), drawn from committed figures."""
    if kind == "A/A: MLM's minimal pairs":  # one arm split in two
        x = figures("compare/MaskRate30-pairs-dyck", "dyck/pretrain/mlm", "val/pairs/acc")
        return rng.choice(x, (RUNS, LOOKS)) - rng.choice(x, (RUNS, LOOKS))
    if kind == "ties: next-token's minimal pairs":  # most seeds at one value: ties everywhere
        x = figures("compare/MaskRate30-pairs-dyck", "dyck/pretrain/next_token", "val/pairs/acc")
        return rng.choice(x, (RUNS, LOOKS)) - rng.choice(x, (RUNS, LOOKS))
    # bimodal fine-tuning figures against a point between their two middle seeds: other shapes, a fair coin
    x = np.sort(figures("dyck", "dyck/finetune/span-full", "val/acc"))
    x = x[: len(x) // 2 * 2]
    middle = (x[len(x) // 2 - 1] + x[len(x) // 2]) / 2
    return rng.choice(x, (RUNS, LOOKS)) - middle


@pytest.mark.parametrize("kind", ["A/A: MLM's minimal pairs", "ties: next-token's minimal pairs",
                                  "bimodal fine-tuning against its median"])  # fmt: skip
@pytest.mark.parametrize("family", [1, 4])
def test_a_null_from_committed_figures_gets_a_winner_at_most_alpha_of_the_time_over_500_looks(kind, family):
    rng = np.random.default_rng(7)
    diffs = null(kind, rng)
    s = sign.signs(diffs)
    assert (s == 0).any() if kind.startswith("ties") else True
    a, b, _ = sign.stops(s, 0.05 / family)
    wrong = float((a[:, -1] | b[:, -1]).mean())
    print(f"\n{kind}, family of {family}: a winner called in {wrong:.4f} of {RUNS} nulls over {LOOKS} looks")
    assert wrong <= 0.05 / family


def test_alike_is_called_at_most_alpha_of_the_time_when_the_win_rate_lies_outside_the_band():
    rng = np.random.default_rng(3)
    for p in (0.2, 0.8):  # just outside the default band
        s = np.where(rng.random((RUNS, LOOKS)) < p, 1, -1)
        _, _, alike = sign.stops(s, 0.05, sign.BAND)
        assert alike[:, -1].mean() <= 0.05, p
    s = np.where(rng.random((RUNS, LOOKS)) < 0.5, 1, -1)  # inside it: alike, given seeds enough
    assert sign.stops(s, 0.05, sign.BAND)[2][:, -1].mean() > 0.9


def test_the_evidence_is_the_beta_mixture_integrated_and_the_interval_ends_where_it_reaches_one_over_alpha():
    for k, m in ((0, 0), (3, 3), (11, 12), (16, 19), (7, 20)):
        for q in (0.5, 0.25, 0.8):
            mixed = integrate.quad(lambda r, k=k, m=m: r**k * (1 - r) ** (m - k), 0, 1, epsabs=0, epsrel=1e-12)[0]
            assert float(sign.log_evidence(k, m, q)) == pytest.approx(math.log(mixed / (q**k * (1 - q) ** (m - k))))
        lo, hi = sign.interval(k, m, 0.05)
        assert lo <= (k / m if m else 0.5) <= hi
        for end in (lo, hi):
            if 0 < end < 1:
                assert float(sign.log_evidence(k, m, end)) == pytest.approx(math.log(20), abs=1e-6)
    assert sign.interval(0, 0) == (0.0, 1.0)


def test_a_verdict_reads_its_sign_its_band_its_ties_and_its_cap():
    win, lose, tie = 0.03, -0.02, 0.0
    assert sign.decide([win] * 8, cap=40).verdict == "A better"  # 2^8 / 9 = 28 >= 20
    assert sign.decide([win] * 7, cap=40).verdict == "undecided"  # 2^7 / 8 = 16 < 20
    assert sign.decide([lose] * 8, cap=40).verdict == "B better"
    assert sign.decide([win] * 8, cap=40, alpha=0.05 / 4).verdict == "undecided"  # a family of four: 10 seeds
    v = sign.decide([tie] * 12, cap=40)
    assert (v.verdict, v.look, v.reason) == ("tied", 8, "every seed tied")
    assert sign.decide([tie] * 5, cap=5).verdict == "undecided (cap)"  # tied, but capped before any verdict
    v = sign.decide([win, lose] * 100, cap=200)
    assert v.verdict == "alike" and v.reason == "alike within band"
    assert sign.BAND[0] < v.rate[0] < 0.5 < v.rate[1] < sign.BAND[1]
    ties = sign.decide([tie, win] * 8, cap=40)  # ties carry no sign: 8 wins in 16 seeds decide
    assert (ties.verdict, ties.look, ties.ties, ties.wins) == ("A better", 16, 8, 8)
    with pytest.raises(ValueError, match="needs 0 < lo < 0.5 < hi < 1"):
        sign.decide([win], cap=4, band=(0.6, 0.9))


def test_the_sign_rule_decides_mask_rate_30_against_mlm_in_a_fraction_of_the_betting_sequences_seeds():
    """The committed comparison MaskRate30 against MLM on Dyck's minimal pairs (a family of four): continued from
    its own per-seed differences, half of such comparisons stop by about 22 seeds on the sign rule; the betting
    sequence on the mean needs more than four times as many."""
    from minibert.compare.comparison import judge, load_record
    from minibert.tables.query import Data

    folder = ROOT / "results/compare/MaskRate30-pairs-dyck"
    body = load_record(folder / "comparisons" / "verdicts.json")
    design = body["design"]
    j = next(j for j in judge(Data.load(folder), design, body["looks"]) if j.pair.b.endswith("/mlm"))
    by_sign = sign.seeds_to_decide(j.diffs, j.alpha, design.band)
    by_mean = betting.seeds_to_decide(j.diffs, 0.01, j.alpha, design.range(j.pair), limit=400)
    print(f"\nMaskRate30 vs MLM: the sign rule about {by_sign} seeds, the betting sequence about {by_mean}")
    assert 18 <= by_sign <= 30 and (by_mean is None or by_mean > 4 * by_sign)
