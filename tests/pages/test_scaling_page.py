"""The scaling page's model (minibert.report.scaling) against brute force on the committed table: every published
claim is read at the budgets it names, the leader at each budget has the best mean, and a crossing is listed
exactly where two arms' order by mean changes between neighbouring budgets."""

from __future__ import annotations

import functools
from itertools import combinations
from pathlib import Path

from minibert.report.scaling import MEASURES, Scaling
from minibert.tables.arms import label
from minibert.tables.query import Data

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def page() -> Scaling:
    return Scaling(Data.load(ROOT / "results/scaling"))


def test_every_claim_is_read_at_its_budgets_and_says_what_its_verdict_says():
    s = page()
    assert len(s.claims) == sum(len(s.budgets[p.budgets]) for p in s.published)
    for c in s.claims:
        a = next(label(p.a) for p in s.published if p.claim == c.text)
        assert (c.holds == "holds") == (c.verdict == f"{a} better")


def test_the_leader_has_the_best_mean_and_crossings_are_exactly_the_order_changes():
    s, d = page(), page().data
    for what, metric, stage in MEASURES:
        arms = s.tuned if stage == "finetune" else s.cloze
        sign = -1 if "gap" in metric else 1

        def mean(a, x):
            return d.stat(metric, **s.where(stage, a, x)).mean  # noqa: B023 (used within the loop)

        for lead in (lead for lead in s.leads if lead.measure == what):
            best = max(arms, key=lambda a: sign * mean(a, lead.budget))
            assert lead.top == label(best) and len(lead.against) == len(arms) - 1
        expected = {(label(a), label(b), x) for a, b in combinations(arms, 2) for x0, x in zip(s.budgets, s.budgets[1:])
                    if (mean(a, x0) - mean(b, x0) > 0) != (mean(a, x) - mean(b, x) > 0)}  # fmt: skip
        assert {(c.a, c.b, c.after) for c in s.crossings if c.measure == what} == expected
