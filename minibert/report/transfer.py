"""Does Dyck's ranking hold on real text? The comparisons the Dyck grid was run for, each judged on Dyck and on
the text grid (once each: `Renderer.answer`), and whether the two name the same arm. `results/text.md` lays it
out as a table and the README as a sentence; the analysis is here, once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minibert.report.asked import asked
from minibert.tables import arms, stats

AGREEMENTS = ("holds", "reverses", "undecided on text", "undecided on Dyck")  # the order pages list them in


@dataclass(frozen=True)
class Question:
    """A - B, named by the arm registry, between two experiments' names below `dyck/` and `text/`; a pre-training
    pair is the cloze, which Dyck reads on its gap (text has no ceiling, and reads accuracy)."""

    a_experiment: str
    b_experiment: str

    @property
    def cloze(self) -> bool:
        return self.a_experiment.startswith("pretrain/")

    @property
    def dyck_metric(self) -> str:
        return "val/gap/acc" if self.cloze else "val/acc"

    @property
    def a(self) -> str:
        return arms.names(self.a_experiment, self.b_experiment)[0]

    @property
    def b(self) -> str:
        return arms.names(self.a_experiment, self.b_experiment)[1]

    @property
    def label(self) -> str:
        return f"{'cloze' if self.cloze else 'fine-tuning'}: {self.a} vs {self.b}"


@dataclass(frozen=True)
class Row:
    """One question judged on both grids: `dyck` and `text` are `Answer`s (minibert.report.render)."""

    question: Question
    dyck: object
    text: object

    @property
    def text_verdict(self) -> str:
        return self.text.diff.verdict(self.question.a, self.question.b)

    @property
    def agreement(self) -> str:
        """'holds' or 'reverses' when both grids name an arm; else which of them leaves it undecided."""
        on_dyck = self.dyck.diff.verdict(self.question.a, self.question.b)
        if self.text_verdict == "undecided":
            return "undecided on text"
        if on_dyck == "undecided":
            return "undecided on Dyck"
        return "holds" if on_dyck == self.text_verdict else "reverses"


@dataclass(frozen=True)
class Transfer:
    rows: list[Row]

    def table(self) -> list[list]:
        """The text page's answer: per question, Dyck's reading, text's A - B with its half-width and seeds, text's
        verdict and the agreement."""
        out = []
        for r in self.rows:
            q, d, t = r.question, r.dyck.diff, r.text.diff
            half = stats.number((t.interval.hi - t.interval.lo) / 2)
            out.append([q.label, d.say(q.a, q.b), t, half, t.seeds, r.text_verdict, r.agreement])
        return out

    @property
    def drawn(self) -> list[tuple]:
        """(label, text's Diff) per question, for the forest figure."""
        return [(r.question.label, r.text.diff) for r in self.rows]

    def by_agreement(self) -> dict[str, list[Row]]:
        """agreement -> its rows, in AGREEMENTS' order, only those that occur."""
        found = {k: [r for r in self.rows if r.agreement == k] for k in AGREEMENTS}
        return {k: rows for k, rows in found.items() if rows}


def transfer(answer: Callable, questions: tuple[Question, ...] | None = None) -> Transfer:
    """Every question judged on Dyck and on text, `answer(grid, metric, a, b)` judging each (Renderer.answer); the
    questions are the pages' (configs/pages/questions.yaml) unless given."""
    if questions is None:
        questions = tuple(Question(q.a, q.b) for q in asked().transfer)
    return Transfer([Row(q, answer("dyck", q.dyck_metric, f"dyck/{q.a_experiment}", f"dyck/{q.b_experiment}"),
                         answer("text", "val/acc", f"text/{q.a_experiment}", f"text/{q.b_experiment}"))
                     for q in questions])  # fmt: skip
