"""The Dyck page's answer (results/dyck.md): the paired comparisons the Dyck grid was run for, each judged once
(by its recorded comparison's sequence where one holds it, else on the grid's seeds with its family:
`Renderer.answer`), as the rows of the page's first table and the forest figure beside it. The template lays
them out; which comparisons they are, and how each row reads, is decided here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minibert.tables import stats

GAP = ("val/gap/acc", "cloze gap to the ceiling (lower is better)")
FINETUNE = ("val/acc", "full fine-tuning accuracy")


@dataclass(frozen=True)
class Question:
    """A - B on one measure: the arms' names as the page says them and their experiments under `dyck/`."""

    a: str
    a_experiment: str
    b: str
    b_experiment: str
    measure: tuple[str, str] = FINETUNE  # (metric, what the page calls it)


QUESTIONS = (
    Question("MLM", "pretrain/mlm", "span masking", "pretrain/span", GAP),
    Question("MLM", "finetune/mlm-full", "causal MLM", "finetune/mlm_causal-full"),
    Question("MLM", "finetune/mlm-full", "no pre-training", "finetune/no_pretrain"),
    Question("causal MLM", "finetune/mlm_causal-full", "no pre-training", "finetune/no_pretrain"),
    Question("MLM", "finetune/mlm-full", "span masking", "finetune/span-full"),
    Question("MLM", "finetune/mlm-full", "ELECTRA", "finetune/electra-full"),
    Question("MLM", "finetune/mlm-full", "next-token LM", "finetune/next_token-full"),
    Question("MLM, full", "finetune/mlm-full", "MLM, frozen [CLS] + linear head", "finetune/mlm-frozen",
             ("val/acc", "fine-tuning accuracy")),
)  # fmt: skip
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
