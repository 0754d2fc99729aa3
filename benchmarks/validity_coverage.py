"""How often the rank-correlation interval of minibert.stats.agreement covers, for exactly the arms measured
(`over_arms=False`: the coefficient of their true figures) and for arms like these (`over_arms=True`: the
population coefficient), over simulated pairs of settings: arms' true figures from a bivariate normal
population with correlation rho, each seed's figure the truth plus normal noise of the given SD.

    python benchmarks/validity_coverage.py
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from minibert.stats.agreement import Measured, correlation

TRIALS, REPLICATES = 300, 600
CASES = [(3, 0.4, 0.7, 12), (3, 0.1, 0.9, 12), (10, 0.4, 0.7, 12)]  # (seeds, seed SD, rho, arms)


def main() -> None:
    rng = np.random.default_rng(7)

    def measured(true, sd, seeds):
        return Measured({f"a{i}": {s: float(t + sd * rng.normal()) for s in range(seeds)} for i, t in enumerate(true)})

    print("seeds  SD    rho   arms  these arms  arms like these")
    for seeds, sd, rho, arms in CASES:
        population = 6 / math.pi * math.asin(rho / 2)
        these = like = 0
        for t in range(TRIALS):
            tx = rng.normal(size=arms)
            ty = rho * tx + math.sqrt(1 - rho**2) * rng.normal(size=arms)
            x, y = measured(tx, sd, seeds), measured(ty, sd, seeds)
            own = stats.spearmanr(tx, ty).statistic
            r = correlation(x, y, replicates=REPLICATES, seed=t)
            these += r.spearman.lo <= own <= r.spearman.hi
            r = correlation(x, y, replicates=REPLICATES, over_arms=True, seed=t)
            like += r.spearman.lo <= population <= r.spearman.hi
        print(f"{seeds:5d}  {sd:.2f}  {rho:.2f}  {arms:4d}  {these / TRIALS:10.3f}  {like / TRIALS:15.3f}")


if __name__ == "__main__":
    main()
