"""Intervals over seeds and the questions they share: the multi-bootstrap (numpy and scipy only).

A comparison A - B runs both arms on seeds s = 1, 2, ...; every seed grades one validation set, or, on real text,
questions drawn from the same few documents. More seeds do not average that draw away, so an interval for "these
two recipes" covers both:

- `paired_differences_with_questions`: the mean paired difference over S seeds and Q shared validation
  questions, with an interval that covers seed spread and the sampling of the questions (MultiBERTs'
  multi-bootstrap with an unbiased variance and a Student-t seed part; see its docstring);
- `clustered`: the same from per-seed, per-document sums (what runs on real text keep), for arms that answer
  different questions of the same documents.

The simulations that hold these claims are in tests/harness/test_bootstrap.py; the policy is docs/statistics.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from minibert.stats.intervals import Interval


@dataclass(frozen=True)
class SharedInterval(Interval):
    """A paired difference over `seeds` seeds graded on the same `questions` questions (in `clusters`
    documents; one per question without clusters); `df` is its Welch-Satterthwaite degrees of freedom;
    `question_variance`, the part of the mean's variance that the sampling of questions (documents) adds, which
    more seeds do not shrink, estimated without bias (and so 0 whenever the documents vary less than the seeds'
    own answers do); `ms_question`, the mean square it is estimated from, which `question_variance_upper`
    bounds."""

    questions: int = 0
    clusters: int = 0
    question_variance: float = 0.0
    ms_question: float = math.nan

    def question_variance_upper(self, error: float) -> float:
        """An upper confidence bound, wrong with probability at most `error`, on the part of the mean's variance
        the documents (questions) add. With C documents, (C - 1) MS_documents / E[MS_documents] is chi-square on
        C - 1 df (document effects near normal: each is a sum over many questions), and E[MS_documents] / (S C)
        is that part plus the seeds' own share of the per-document noise, so bounding it errs wide. The point
        estimate, max(MS_documents - MS_residual, 0) / (S C), is 0 in a third of comparisons with 3 seeds and 40
        documents and then misses the documents' draw far more often than its nominal rate
        (tests/harness/test_compare.py)."""
        from scipy.stats import chi2

        if not self.clusters >= 2 or math.isnan(self.ms_question):
            return math.inf
        df = self.clusters - 1
        return self.ms_question * df / float(chi2.ppf(error, df)) / (self.seeds * self.clusters)


def paired_differences_with_questions(
    a: np.ndarray,
    b: np.ndarray,
    clusters: Sequence[int] | np.ndarray | None = None,
    replicates: int = 2000,
    seed: int = 0,
) -> SharedInterval:
    """Mean of A - B over S seeds and Q shared questions, with a 95% interval for the difference the two
    recipes make on new seeds and new questions (documents) of the same kind.

    `a`, `b`: (S, Q) correctness (1 right, 0 wrong) per seed and question; `clusters`: (Q,) document id per
    question, resampled whole (questions of one document share its difficulty).

    The multi-bootstrap of MultiBERTs (Sellam et al., ICLR 2022) draws seeds and questions (clusters) with
    replacement in the same replicate and reads the percentile interval of the replicated means. Split the
    linearised per-(seed, cluster) difference as in a two-way ANOVA, z = r_s + c_j + e_sj (seed effect,
    question effect, seed x question residual: here each seed's own right or wrong answer). A joint replicate
    is then exactly mean + r* + c* + e* with variance sum(r^2)/S^2 + sum(c^2)/C^2 + sum(e^2)/(SC)^2, while the
    mean squares estimate the true variance without bias as v_seed + v_question = MS_seed/(SC) +
    (MS_question - MS_residual)/(SC) (v_seed is the variance of the per-seed means over S). So the plain
    percentile interval counts the residual three times (Owen, "The pigeonhole bootstrap", Ann. Appl. Stat.
    2007) and over-covers when they weigh (97-98% at 10 seeds in the simulation of tests/harness/test_bootstrap.py),
    while a handful of resampled seeds gives normal tails where Student's t on S - 1 df is due (it
    under-covers when seeds dominate). Here a replicate is

        mean + sqrt(v_seed) * T_(S-1) + k * c*,    k^2 = v_question / (sum(c^2) / C^2),

    the multi-bootstrap's draw of clusters, rescaled to the unbiased question variance, plus the seed part
    drawn from its small-sample law (Student's t, as for the seeds alone; studentising resampled seeds
    instead is unstable at a few seeds: at 3, one draw in nine repeats a single seed), and the interval is
    its 2.5 and 97.5 percentiles. `df` is Welch-Satterthwaite's for v_seed + v_question.

    Coverage (tests/harness/test_bootstrap.py): 94-96% at 10 seeds and 200 questions, where the seed-only
    t-interval on per-seed means (which takes the validation set as fixed) covers 80%. Measured once at
    other seed counts in the same model (docs/statistics.md): 96.9% at 3 seeds, 95.8% at 5, 94.9% at 20.

    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.random((5, 400)) < 0.8, rng.random((5, 400)) < 0.7
    >>> iv = paired_differences_with_questions(a, b)
    >>> iv.seeds, iv.questions, bool(iv.lo < 0.1 < iv.hi)
    (5, 400, True)
    """
    d = np.asarray(a, float) - np.asarray(b, float)  # (S, Q)
    if d.ndim != 2 or d.shape != np.shape(b):
        raise ValueError(f"a and b must both be (seeds, questions) arrays, got {np.shape(a)} and {np.shape(b)}")
    S, Q = d.shape
    ids = np.arange(Q) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    if len(ids) != Q:
        raise ValueError(f"clusters has {len(ids)} entries for {Q} questions")
    C = int(ids.max()) + 1
    n = np.broadcast_to(np.bincount(ids, minlength=C).astype(float), (S, C))  # questions per seed and cluster
    totals = np.stack([np.bincount(ids, weights=row, minlength=C) for row in d])  # (S, C)
    return clustered(totals, n, replicates=replicates, seed=seed)


def clustered(
    totals: np.ndarray,
    counts: np.ndarray,
    totals_b: np.ndarray | None = None,
    counts_b: np.ndarray | None = None,
    replicates: int = 2000,
    seed: int = 0,
) -> SharedInterval:
    """The mean of A (or of A - B) over S seeds whose graded questions fall in C clusters (documents), from
    per seed and cluster sums: `totals` (S, C), A's summed score (right answers), and `counts` (S, C), its
    questions; B's the same where A - B is asked (paired by seed; its questions may differ from A's, as two
    objectives' cloze questions do, but come from the same clusters). The interval is that of
    `paired_differences_with_questions`: a figure is a ratio (sum over sum), linearised per (seed, cluster) as
    z = (t - m n) / (N / (S C)) for each side and differenced, then split into seed and cluster effects."""

    def linear(t, n):
        t, n = np.asarray(t, float), np.asarray(n, float)
        if t.ndim != 2 or t.shape != n.shape:
            raise ValueError(f"totals and counts must be (seeds, clusters) arrays alike, got {t.shape} and {n.shape}")
        N = n.sum()
        if N <= 0:
            raise ValueError("no question is counted: nothing to average")
        m = t.sum() / N
        return m, (t - m * n) / (N / n.size)

    mean, z = linear(totals, counts)
    if totals_b is not None:
        mean_b, z_b = linear(totals_b, counts_b)
        if z_b.shape != z.shape:
            raise ValueError(f"A's and B's sums must cover the same seeds and clusters, got {z.shape} and {z_b.shape}")
        mean, z = mean - mean_b, z - z_b
    S, C = z.shape
    Q = int(round(float(np.asarray(counts).sum()) / S))  # questions a seed (A's)
    if S < 2 or C < 2:
        raise ValueError(f"{S} seeds and {C} clusters: the spread of each needs at least 2")
    r, c = z.mean(1), z.mean(0)  # (S,) seed effects (per-seed mean - mean), (C,) question effects
    e = z - r[:, None] - c[None, :]
    ms_seed = C * (r @ r) / (S - 1)
    ms_question = S * (c @ c) / (C - 1)
    ms_residual = (e * e).sum() / ((S - 1) * (C - 1))
    v_seed = ms_seed / (S * C)  # = variance of the per-seed means / S
    v_question = max(ms_question - ms_residual, 0.0) / (S * C)
    total = v_seed + v_question
    if total <= 0:
        return SharedInterval(float(mean), float(mean), float(mean), S, math.inf, Q, C, 0.0, float(ms_question))
    df = total**2 / (v_seed**2 / (S - 1) + v_question**2 / (C - 1))
    rng = np.random.default_rng(seed)
    k = math.sqrt(v_question / (c @ c / C**2)) if c @ c > 0 else 0.0
    clusters_part = k * c[rng.integers(0, C, (replicates, C), dtype=np.int32)].mean(1)  # (B,) the clusters' draw
    seed_part = math.sqrt(v_seed) * rng.standard_t(S - 1, replicates)  # (B,)
    # each part with its mirror image (both are symmetric about 0), so that A - B is exactly -(B - A)
    draws = np.concatenate([seed_part + clusters_part, seed_part - clusters_part])
    lo, hi = np.quantile(np.concatenate([draws, -draws]), [0.025, 0.975])
    return SharedInterval(float(mean), float(mean + lo), float(mean + hi), S, float(df), Q, C, float(v_question),
                          float(ms_question))  # fmt: skip
