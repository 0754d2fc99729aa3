"""The Dyck page's answer (results/dyck.md): the paired comparisons the Dyck grid was run for, each judged once
(by its recorded comparison's sequence where one holds it, else on the grid's seeds with its family:
`Renderer.answer`), as the rows of the page's first table and the forest figure beside it. The template lays
them out; which comparisons they are, and how each row reads, is decided here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minibert.tables import arms, stats

GAP = ("val/gap/acc", "cloze gap to the ceiling (lower is better)")
FINETUNE = ("val/acc", "full fine-tuning accuracy")


@dataclass(frozen=True)
class Question:
    """A - B on one measure, between two experiments under `dyck/`; the page names them by the arm registry."""

    a_experiment: str
    b_experiment: str
    measure: tuple[str, str] = FINETUNE  # (metric, what the page calls it)

    @property
    def a(self) -> str:
        return arms.names(self.a_experiment, self.b_experiment)[0]

    @property
    def b(self) -> str:
        return arms.names(self.a_experiment, self.b_experiment)[1]


QUESTIONS = (
    Question("pretrain/mlm", "pretrain/span", GAP),
    Question("finetune/mlm-full", "finetune/mlm_causal-full"),
    Question("finetune/mlm-full", "finetune/no_pretrain"),
    Question("finetune/mlm_causal-full", "finetune/no_pretrain"),
    Question("finetune/mlm-full", "finetune/span-full"),
    Question("finetune/mlm-full", "finetune/electra-full"),
    Question("finetune/mlm-full", "finetune/next_token-full"),
    Question("finetune/mlm-full", "finetune/mlm-frozen", ("val/acc", "fine-tuning accuracy")),
)
HEADER = ["A", "B", "measure", "A − B, points (95% interval)", "±", "seeds", "verdict", "judged by"]


@dataclass(frozen=True)
class AnswerTable:
    header: list[str]
    rows: list[list]  # one per question, in HEADER's order
    drawn: list[tuple]  # (label, Diff) for the forest figure


def answer_table(answer: Callable, questions: tuple[Question, ...] = QUESTIONS) -> AnswerTable:
    """The page's answer, `answer(metric, a, b)` judging each question (Renderer.answer on the Dyck grid)."""
    rows, drawn = [], []
    for q in questions:
        metric, what = q.measure
        found = answer(metric, f"dyck/{q.a_experiment}", f"dyck/{q.b_experiment}")
        c = found.diff
        half = stats.number((c.interval.hi - c.interval.lo) / 2)
        rows.append([q.a, q.b, what, c, half, found.seeds, c.verdict(q.a, q.b), found.judged_by])
        drawn.append((f"{q.a} vs {q.b}: {what}", c))
    return AnswerTable(HEADER, rows, drawn)
