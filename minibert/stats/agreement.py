"""Does one setting's ranking of arms predict another's? Rank correlations and sign agreement, with intervals.

A setting (Dyck at its budget, text at ten times it, ...) measures one figure per arm over seeds that are
paired across arms (seed s of every arm shares its data order and initialisation draw). `Measured` holds it;
`correlation` compares the rankings of two settings, `agreement` their pairwise verdicts, and `ceiling` says what
a perfect predictor would score against one setting's noise.

Where the uncertainty comes from, and what the interval of `correlation` draws:
- **Seeds.** Each arm's mean over its S seeds moves by the seeds' noise: its variance is pooled over arms from
  the arm x seed table's residuals (a seed's luck shared by every arm is taken out, as it moves no rank), and
  drawn afresh in each replicate from its scaled chi-square, so that the uncertainty of a variance estimated on
  a few seeds carries over. Resampling three seeds directly is too coarse (one draw in nine repeats one seed).
- **Validation questions.** Where every seed graded one shared set, each arm's mean also moves by its binomial
  sampling error, drawn independently per arm. Arms answer the same questions, so their errors are in truth
  positively correlated and their differences vary less: the independent draw errs on the wide side. Two
  settings that graded the same set (`Measured.validation_set`: text and text at 1x fine-tune on one set)
  get the same draw of it, arm by arm: drawn apart, they would disagree by the set's error twice over.
- **Arms** (`over_arms=True`): the arms are drawn with replacement, for the question "would arms of these kinds
  rank alike?", the one a proxy task is used for. A repeated arm ties with itself in both settings; Kendall's
  tau-b and Spearman's average ranks take the ties as they come.

A replicate's arm means are centred on the observed means shrunk towards their grand mean, to the spread the
true figures are estimated to have (`_truth`): centred on the observed means, a replicate would add noise to
figures already spread by it. Two settings are separate experiments, so their replicates are independent.
The point estimate is the coefficient of the arms' means; noise pulls it towards 0. The interval is the
replicates' 2.5 and 97.5 percentiles, moved by the distance of their median from the estimate.

Coverage of the population coefficient (arms from a bivariate normal population, 2-10 seeds, 8-12 arms; the
simulation in docs/statistics.md): 96-98%, a little conservative. For exactly the arms measured (no arms drawn)
the same construction covers 91.7-92.7% (`python benchmarks/validity_coverage.py`): rank coefficients of noisy
means are biased in a way a few seeds cannot fully correct. Pages show it as the primary interval, for these
arms, with the one over arms beside it, labelled "arms like these".

Example:
    >>> x = Measured({"a": {0: 0.9, 1: 0.8}, "b": {0: 0.5, 1: 0.6}, "c": {0: 0.1, 1: 0.2}})
    >>> y = Measured({"a": {0: 0.7, 1: 0.7}, "b": {0: 0.4, 1: 0.5}, "c": {0: 0.3, 1: 0.2}})
    >>> r = correlation(x, y)
    >>> r.spearman.value, r.kendall.value, r.arms
    (1.0, 1.0, 3)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as scipy_stats

from minibert.stats import intervals
from minibert.stats.failures import clopper_pearson
from minibert.stats.holm import holm

ALPHA = 0.05


@dataclass(frozen=True)
class Measured:
    """One setting's figure per arm: `values[arm][seed]`, the seeds paired across arms; `sampling[arm]`, the
    variance that the sampling of a validation set every seed shared adds to the arm's mean (for an accuracy
    p on n shared questions, p(1 - p) / n; for a gap, both proportions' terms; absent or 0 when each seed drew
    its own set, whose error the spread over seeds then holds); `lower_is_better` for a gap or a loss (ranks
    are read so that rank 1 is the best arm either way)."""

    values: Mapping[str, Mapping[int, float]]
    sampling: Mapping[str, float] = field(default_factory=dict)
    lower_is_better: bool = False
    validation_set: str = ""  # names the shared set: settings that name the same one are drawn on it together

    def __post_init__(self) -> None:
        for arm, seeds in self.values.items():
            if not seeds:
                raise ValueError(f"arm {arm!r} has no seeds")
            if any(math.isnan(v) for v in seeds.values()):
                raise ValueError(f"arm {arm!r} has a NaN value: leave a failed run out, and say so")
        if unknown := sorted(set(self.sampling) - set(self.values)):
            raise ValueError(f"sampling names arms that have no values: {unknown}")

    @property
    def arms(self) -> list[str]:
        return list(self.values)

    def seeds(self, arms: Sequence[str]) -> list[int]:
        """The seeds every one of `arms` has (the pairing); an error when they share none."""
        common = sorted(set.intersection(*(set(self.values[a]) for a in arms)))
        if not common:
            raise ValueError(f"arms {list(arms)} share no seed, so nothing pairs them")
        return common

    def matrix(self, arms: Sequence[str]) -> np.ndarray:
        """(S, A) figures, read so that higher is better, over the seeds all `arms` share."""
        m = np.array([[self.values[a][s] for a in arms] for s in self.seeds(arms)], dtype=float)
        return -m if self.lower_is_better else m

    def sampling_sd(self, arms: Sequence[str]) -> np.ndarray:
        """(A,) each arm's standard error from its shared validation set (0 without one)."""
        return np.sqrt([self.sampling.get(a, 0.0) for a in arms])


@dataclass(frozen=True)
class Coefficient:
    """A coefficient with its 95% percentile interval; `sign`: the side of zero the interval at the family's
    level (1 - 0.05 / family, Bonferroni) excludes, 0 when it holds zero, so that the verdicts drawn from one
    page's coefficients hold together; `dropped`: replicates where it was undefined (every arm tied in one
    setting), left out of the percentiles."""

    value: float
    lo: float
    hi: float
    dropped: int = 0
    sign: int = 0

    def __str__(self) -> str:
        return f"{self.value:+.2f} ({self.lo:+.2f} to {self.hi:+.2f})"


@dataclass(frozen=True)
class Correlation:
    """Spearman's rho and Kendall's tau-b between two settings' rankings of the same arms."""

    spearman: Coefficient
    kendall: Coefficient
    arms: int
    seed_counts: tuple[int, int]  # how many seeds each setting's figures pair
    over_arms: bool
    replicates: int


def _coefficients(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and Kendall's tau-b of each row of x against the same row of y, (B, A) -> (B,), (B,):
    rho is Pearson's r of the average ranks, tau-b counts concordant pairs with ties left out of both sides.
    NaN where a row has every arm tied."""
    rx, ry = scipy_stats.rankdata(x, axis=1), scipy_stats.rankdata(y, axis=1)
    rx, ry = rx - rx.mean(1, keepdims=True), ry - ry.mean(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(1) / np.sqrt((rx**2).sum(1) * (ry**2).sum(1))
        i, j = np.triu_indices(x.shape[1], 1)
        sx, sy = np.sign(x[:, j] - x[:, i]), np.sign(y[:, j] - y[:, i])  # (B, pairs)
        tau = (sx * sy).sum(1) / np.sqrt((sx != 0).sum(1) * (sy != 0).sum(1))
    return rho, tau


def _seed_noise(m: np.ndarray) -> tuple[float, int]:
    """(sigma^2, df): the seeds' variance of one run's figure, pooled over arms from the arm x seed table's
    residuals (two-way: a seed's shift of every arm moves no rank, so it is taken out); (0, 0) for one seed."""
    s, a = m.shape
    if s < 2:
        return 0.0, 0
    resid = m - m.mean(0, keepdims=True) - m.mean(1, keepdims=True) + m.mean()
    df = (s - 1) * (a - 1)
    return float((resid**2).sum() / df), df


def _replicates(
    m: np.ndarray, sd: np.ndarray, count: int, rng: np.random.Generator, questions: np.ndarray | None = None
) -> np.ndarray:
    """(count, A) replicates of the arms' means: the means moved by the seeds' noise (its pooled variance drawn
    from its scaled chi-square each time, so that a few seeds' uncertainty about it carries over) and by each
    arm's question sampling, `sd` times the standard normal draws `questions` (count, A) (fresh ones if None;
    another setting's where both graded one set)."""
    var, df = _seed_noise(m)
    scale = var * df / rng.chisquare(df, count) if df else np.zeros(count)  # (count,)
    seeds = rng.standard_normal((count, len(sd))) * np.sqrt(scale[:, None] / len(m))  # (count, A)
    z = rng.standard_normal((count, len(sd))) if questions is None else questions
    return _truth(m, sd)[None] + seeds + z * sd[None]


def _truth(m: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """(A,) the replicates' centre: the arms' means shrunk towards their grand mean until their spread is the
    spread the true figures are estimated to have (the means' variance less the noise they carry). Centred on
    the means themselves, replicates would add noise to figures already spread by it, and rank less noisily
    than the experiment did. Ranks are unchanged by the shrinkage, so the estimate is the replicates' truth."""
    means = m.mean(0)
    var, _ = _seed_noise(m)
    noise = var / len(m) + float(np.mean(sd**2))
    total = float(np.var(means, ddof=1)) if len(means) > 1 else 0.0
    if total <= 0:
        return means
    shrink = math.sqrt(max(total - noise, 0.0) / total)
    return means.mean() + shrink * (means - means.mean())


def _matrices(settings: Sequence[Measured], arms: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each setting's (S, A) figures (higher is better) and (A,) sampling SDs, checked for what an interval needs."""
    if len(arms) < 3:
        raise ValueError(f"a rank correlation needs at least 3 arms, got {len(arms)}: {arms}")
    out = [(m.matrix(arms), m.sampling_sd(arms)) for m in settings]
    if min(len(m) for m, _ in out) < 2:
        counts = [len(m) for m, _ in out]
        raise ValueError(f"a rank correlation's interval needs 2 seeds in each setting, got {counts}: one seed says "
                         "nothing of the seeds' noise")  # fmt: skip
    return out


def _draws(settings: Sequence[Measured], arms: list[str], replicates: int, over_arms: bool, seed: int) -> list:
    """Each setting's (B, A) replicates of its arms' means, the arms drawn alike for all when `over_arms`."""
    rng = np.random.default_rng(seed)
    sets: dict[str, np.ndarray] = {}  # a shared set's draw, arm by arm, for every setting that graded it
    draws = []
    for setting, (m, sd) in zip(settings, _matrices(settings, arms)):
        z = rng.standard_normal((replicates, len(arms)))
        if setting.validation_set:
            z = sets.setdefault(setting.validation_set, z)
        draws.append(_replicates(m, sd, replicates, rng, z))
    if over_arms:
        pick = rng.integers(0, len(arms), (replicates, len(arms)))
        draws = [np.take_along_axis(r, pick, 1) for r in draws]
    return draws


def _summarise(value: float, col: np.ndarray, bound: float = 1.0, family: int = 1) -> Coefficient:
    """The estimate with its replicates' 95% percentiles, moved by their median bias and kept in +-`bound`: a
    replicate ranks noisy means again, so the replicates sit below the estimate as the estimate sits below the
    truth. Efron's bias-corrected percentiles would say the same away from the bounds, but at an estimate of
    exactly 1 (every arm in the same order) they collapse onto [1, 1]; a shift cannot. The sign is read from
    the same replicates at 1 - 0.05 / `family`."""
    ok = col[~np.isnan(col)]
    if not len(ok) or math.isnan(value):
        return Coefficient(value, math.nan, math.nan, int(len(col) - len(ok)))
    shift = value - np.median(ok)
    lo, hi = np.quantile(ok, [0.025, 0.975]) + shift
    jlo, jhi = np.quantile(ok, [0.025 / family, 1 - 0.025 / family]) + shift
    sign = 1 if jlo > 0 else -1 if jhi < 0 else 0
    return Coefficient(value, float(max(lo, -bound)), float(min(hi, bound)), int(len(col) - len(ok)), sign)


def _of_means(x: Measured, y: Measured, arms: list[str]) -> tuple[float, float]:
    rho, tau = _coefficients(x.matrix(arms).mean(0)[None], y.matrix(arms).mean(0)[None])
    return float(rho[0]), float(tau[0])


def correlation(
    x: Measured,
    y: Measured,
    arms: Sequence[str] | None = None,
    replicates: int = 2000,
    over_arms: bool = False,
    seed: int = 0,
    family: int = 1,
) -> Correlation:
    """The rank correlation of `x`'s and `y`'s arms (those both measured, or `arms`), with 95% intervals from
    the bootstrap the module docstring describes, and signs held together with `family` - 1 other verdicts."""
    arms = list(arms) if arms is not None else [a for a in x.arms if a in y.values]
    rx, ry = _draws([x, y], arms, replicates, over_arms, seed)
    rho, tau = _of_means(x, y, arms)
    d = np.stack(_coefficients(rx, ry), axis=1)  # (B, 2)
    return Correlation(_summarise(rho, d[:, 0], family=family), _summarise(tau, d[:, 1], family=family), len(arms),
                       (len(x.seeds(arms)), len(y.seeds(arms))), over_arms, replicates)  # fmt: skip


def _alike(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(B, A), (B, A) -> (B,): the share of arm pairs both rows order alike, a tie in either counting half."""
    i, j = np.triu_indices(x.shape[1], 1)
    sx, sy = np.sign(x[:, j] - x[:, i]), np.sign(y[:, j] - y[:, i])  # (B, pairs)
    return np.where((sx == 0) | (sy == 0), 0.5, (sx == sy).astype(float)).mean(1)


def decision_accuracy(
    x: Measured,
    y: Measured,
    arms: Sequence[str] | None = None,
    replicates: int = 2000,
    seed: int = 0,
    family: int = 1,
) -> Coefficient:
    """Pairwise decision accuracy (DataDecide, Magnusson et al. 2025): the share of the pairs of arms that `x`
    and `y` order alike by their means, with a 95% interval for exactly these arms, over the seeds' noise and the
    questions' sampling (the replicates of `correlation`, no arm drawn). 0.5 is a coin; 1 is every decision
    carried over. Its `sign` says whether the interval at 1 - 0.05 / `family` excludes a coin."""
    arms = list(arms) if arms is not None else [a for a in x.arms if a in y.values]
    rx, ry = _draws([x, y], arms, replicates, False, seed)
    value = float(_alike(x.matrix(arms).mean(0)[None], y.matrix(arms).mean(0)[None])[0])
    c = _summarise(value - 0.5, _alike(rx, ry) - 0.5, bound=0.5, family=family)  # centred: its sign is against a coin
    return Coefficient(c.value + 0.5, c.lo + 0.5, c.hi + 0.5, c.dropped, c.sign)


@dataclass(frozen=True)
class Ceiling:
    """What a perfect predictor (one that knows `y`'s true figures) would score against `y` as measured: the
    median of its coefficients over replicates of `y`'s experiment, with their 2.5 and 97.5 percentiles (the
    range one experiment's luck spans, not an interval for a parameter)."""

    spearman: float
    spearman_range: tuple[float, float]
    kendall: float
    kendall_range: tuple[float, float]
    arms: int
    decision: float = math.nan  # the share of pairs of arms ordered as the truth orders them
    decision_range: tuple[float, float] = (math.nan, math.nan)


def ceiling(y: Measured, arms: Sequence[str] | None = None, replicates: int = 2000, seed: int = 0) -> Ceiling:
    """The noise ceiling of any correlation with `y`: `y`'s seeds' noise keeps a predictor's coefficient below 1
    however good the predictor is, so a toy setting's coefficient is read against this, not against 1. Each
    replicate draws `y`'s arm means around the truth the bootstrap of `correlation` centres on (the means shrunk
    to their estimated true spread) and ranks them against it. A validation set every arm shared is left out:
    the arms answer the same questions, so most of its draw moves every arm alike and no rank. Drawn as an
    independent error per arm it would lower the ceiling by noise the experiment does not have (on text at
    this scale, from +0.84 to +0.50). Calibrated in tests/harness/test_agreement.py: over simulated experiments it
    averages what the true figures score."""
    arms = list(arms) if arms is not None else y.arms
    rng = np.random.default_rng(seed)
    ((m, sd),) = _matrices([y], arms)
    sd = np.zeros_like(sd)  # the shared set: drawn together, it moves no rank
    draws = _replicates(m, sd, replicates, rng)  # (B, A)
    truth = np.broadcast_to(_truth(m, sd), draws.shape)
    rho, tau = _coefficients(truth, draws)
    alike = _alike(truth, draws)
    if np.ptp(truth[0]) == 0:  # the arms' means spread no more than their noise: nothing to rank, any predictor's
        rho, tau, alike = np.zeros(1), np.zeros(1), np.full(1, 0.5)  # expected coefficient is 0, a coin's 1/2
    (rlo, rmid, rhi), (tlo, tmid, thi), (dlo, dmid, dhi) = (np.nanquantile(c, [0.025, 0.5, 0.975])
                                                           for c in (rho, tau, alike))  # fmt: skip
    return Ceiling(float(rmid), (float(rlo), float(rhi)), float(tmid), (float(tlo), float(thi)), len(arms),
                   float(dmid), (float(dlo), float(dhi)))  # fmt: skip


def leave_one_out(x: Measured, y: Measured, arms: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Spearman's rho and Kendall's tau of the arms' means with each arm left out in turn: arm -> (rho, tau). A
    coefficient that one arm makes (a broken arm last in both settings) falls far when that arm is dropped."""
    arms = list(arms)
    if len(arms) < 4:
        raise ValueError(f"leaving one arm out needs at least 4 arms, got {len(arms)}")
    return {a: _of_means(x, y, [b for b in arms if b != a]) for a in arms}


@dataclass(frozen=True)
class Difference:
    """rho(x1, y) - rho(x2, y) and tau's: how much better `x1`'s ranking predicts `y`'s than `x2`'s does."""

    spearman: Coefficient
    kendall: Coefficient
    arms: int


def difference(x1: Measured, x2: Measured, y: Measured, arms: Sequence[str] | None = None,
               replicates: int = 2000, seed: int = 0, family: int = 1) -> Difference:  # fmt: skip
    """Does `x1` predict `y` better than `x2` does? The two coefficients' difference over the arms all three
    measured, with the over-arms bootstrap of `correlation`: each replicate draws all three settings and one draw
    of arms for both coefficients, so `y`'s noise and the arms' luck, which the two share, largely cancel."""
    arms = list(arms) if arms is not None else [a for a in x1.arms if a in x2.values and a in y.values]
    r1, r2, ry = _draws([x1, x2, y], arms, replicates, True, seed)
    (rho1, tau1), (rho2, tau2) = _of_means(x1, y, arms), _of_means(x2, y, arms)
    c1, c2 = np.stack(_coefficients(r1, ry), axis=1), np.stack(_coefficients(r2, ry), axis=1)
    d = c1 - c2
    return Difference(_summarise(rho1 - rho2, d[:, 0], 2.0, family), _summarise(tau1 - tau2, d[:, 1], 2.0, family),
                      len(arms))  # fmt: skip


@dataclass(frozen=True)
class PairVerdict:
    """One arm pair (a, b) in one setting: the paired difference a - b (higher is better) with its interval,
    and its sign after Holm's step-down over the setting's pairs (0: undecided)."""

    a: str
    b: str
    mean: float
    lo: float
    hi: float
    p: float
    sign: int


def pair_verdicts(m: Measured, arms: Sequence[str], alpha: float = ALPHA) -> list[PairVerdict]:
    """Every pair of `arms`, a - b read so that positive favours a, by the statistics policy's paired interval
    (`intervals.with_sampling`: the per-seed differences' spread plus both arms' shared-set sampling), the
    pairs held together by Holm's step-down. On one seed, or when every seed gave the same difference on sets
    of its own, nothing says how far the mean may be off: no p, no verdict."""
    out = []
    for a, b in itertools.combinations(arms, 2):
        mat = m.matrix([a, b])
        iv = intervals.with_sampling(mat[:, 0] - mat[:, 1], m.sampling.get(a, 0.0) + m.sampling.get(b, 0.0))
        p = intervals.p_value(iv) if len(mat) > 1 and iv.hi > iv.lo else math.nan
        out.append((a, b, iv, p))
    keep = holm([1.0 if math.isnan(p) else p for *_, p in out], alpha)  # an unknown p decides nothing
    return [PairVerdict(a, b, iv.mean, iv.lo, iv.hi, p, int(np.sign(iv.mean)) if k else 0)
            for (a, b, iv, p), k in zip(out, keep)]  # fmt: skip


@dataclass(frozen=True)
class Agreement:
    """Of the arm pairs `x` decides, how `y` judges them: the same sign decided, the other sign decided, or
    undecided; `fraction` = same / (same + other) with its Clopper-Pearson interval, and `leaning`: of all the
    pairs `x` decides, those whose difference in `y` has the same sign, decided or not. The pairs share arms,
    so they are not independent draws: the binomial interval takes them as such and is optimistic."""

    pairs: int
    decided: int
    same: int
    other: int
    undecided: int
    leaning: int
    fraction: float
    lo: float
    hi: float
    leaning_lo: float
    leaning_hi: float


def agreement(x: Measured, y: Measured, arms: Sequence[str] | None = None, alpha: float = ALPHA) -> Agreement:
    arms = list(arms) if arms is not None else [a for a in x.arms if a in y.values]
    vx = {(v.a, v.b): v for v in pair_verdicts(x, arms, alpha)}
    vy = {(v.a, v.b): v for v in pair_verdicts(y, arms, alpha)}
    decided = [k for k, v in vx.items() if v.sign]
    same = sum(vy[k].sign == vx[k].sign for k in decided)
    other = sum(vy[k].sign == -vx[k].sign for k in decided)
    leaning = int(sum(np.sign(vy[k].mean) == vx[k].sign for k in decided))
    lo, hi = clopper_pearson(same, same + other, alpha) if same + other else (math.nan, math.nan)
    llo, lhi = clopper_pearson(leaning, len(decided), alpha) if decided else (math.nan, math.nan)
    fraction = same / (same + other) if same + other else math.nan
    return Agreement(len(vx), len(decided), same, other, len(decided) - same - other, leaning, fraction, lo, hi,
                     llo, lhi)  # fmt: skip
