"""The Dyck page's answer (results/dyck.md): the paired comparisons the Dyck grid was run for, each judged once
(by its recorded comparison's sequence where one holds it, else on the grid's seeds with its family:
`Renderer.answer`), as the rows of the page's first table and the forest figure beside it. The template lays
them out; which comparisons they are, and how each row reads, is decided here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minibert.report.asked import Pair, asked
from minibert.tables import arms, stats

GAP = ("val/gap/acc", "cloze gap to the ceiling (lower is better)")
FINETUNE = ("val/acc", "full fine-tuning accuracy")
TUNED = ("val/acc", "fine-tuning accuracy")  # where a side is not fully fine-tuned


HEADER = ["A", "B", "measure", "A − B, points (95% interval)", "±", "seeds", "verdict", "judged by"]


@dataclass(frozen=True)
class AnswerTable:
    header: list[str]
    rows: list[list]  # one per question, in HEADER's order
    drawn: list[tuple]  # (label, Diff) for the forest figure


def measure(q: Pair) -> tuple[str, str]:
    """(metric, what the page calls it) of a question: the cloze gap, or fine-tuning accuracy."""
    if q.gap:
        return GAP
    return FINETUNE if all(arms.regime_of(e) in ("full", "") for e in (q.a, q.b)) else TUNED  # no pre-training: full


def answer_table(answer: Callable, questions: tuple[Pair, ...] | None = None) -> AnswerTable:
    """The page's answer, `answer(metric, a, b)` judging each question (Renderer.answer on the Dyck grid); the
    questions are the pages' (configs/pages/questions.yaml) unless given."""
    rows, drawn = [], []
    for q in asked().dyck if questions is None else questions:
        (metric, what), (a, b) = measure(q), arms.names(q.a, q.b)
        found = answer(metric, q.a, q.b)
        c = found.diff
        half = stats.number((c.interval.hi - c.interval.lo) / 2)
        rows.append([a, b, what, c, half, found.seeds, c.verdict(a, b), found.judged_by])
        drawn.append((f"{a} vs {b}: {what}", c))
    return AnswerTable(HEADER, rows, drawn)
