"""The checks a plug-in author runs (minibert.testing): every shipped language and objective keeps every rule, and
each rule a plug-in breaks is said in one sentence that names it."""

from __future__ import annotations

import importlib.util
import inspect
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from minibert import objectives
from minibert.languages import BracketPairs, Dyck, Text
from minibert.masking import IGNORE
from minibert.objectives.base import Objective
from minibert.objectives.structure import StructuralProbe
from minibert.objectives.whole_word import WholeWordMaskedLM
from minibert.testing import STEPS, RuleBroken, check_language, check_objective
from tests.languages_plugin import Copy

ROOT = Path(__file__).resolve().parents[2]


def documented_objectives() -> list[type[Objective]]:
    """The objectives docs/examples/*.py define, each file imported from its path as a user's plug-in is."""
    found = []
    for path in sorted((ROOT / "docs/examples").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"docs_example_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found += [c for _, c in inspect.getmembers(module, inspect.isclass)
                  if issubclass(c, Objective) and c.__module__ == module.__name__]  # fmt: skip
    return found


LANGUAGES = [(BracketPairs, {}), (Dyck, {}), (Dyck, {"kinds": 2, "length": 16}), (Text, {}), (Copy, {})]
OBJECTIVES = [
    (objectives.MaskedLM, None, {}),
    (objectives.MaskedLM, Dyck(), {}),
    (objectives.MaskedLM, Text(), {}),
    (objectives.SpanMaskedLM, Dyck(), {}),
    (WholeWordMaskedLM, Text(), {}),
    (objectives.NextTokenLM, Dyck(), {}),
    (objectives.ReplacedTokenDetection, Dyck(), {}),
    (objectives.NextSentence, None, {}),
    (objectives.Combined, None, {"objectives": {"nsp": objectives.NextSentence(), "mlm": objectives.MaskedLM()}}),
    (objectives.SegmentPairs, None, {}),
    (objectives.Grammaticality, None, {}),
    (objectives.Probe, None, {}),
    (StructuralProbe, None, {}),
    (objectives.MaskedLM, Copy(), {}),
    # a language that repeats its tokens often: answers it shows at other positions are its own, not a leak
    (objectives.MaskedLM, Dyck(kinds=1), {}),
    (objectives.NextTokenLM, Dyck(kinds=1), {}),
    *[(cls, None, {}) for cls in documented_objectives()],
]


@pytest.mark.parametrize(("cls", "args"), LANGUAGES, ids=lambda x: getattr(x, "__name__", str(x)))
def test_every_shipped_language_keeps_every_rule(cls, args):
    assert isinstance(check_language(cls, **args), cls)


@pytest.mark.parametrize(("cls", "language", "args"), OBJECTIVES, ids=lambda x: getattr(x, "__name__", repr(x)))
def test_every_shipped_objective_keeps_every_rule(cls, language, args):
    assert isinstance(check_objective(cls, language, **args), cls)


def test_the_documented_examples_are_among_the_objectives_checked():
    assert "MaskRate30" in {cls.__name__ for cls, _, _ in OBJECTIVES}


class Unseeded(Copy):  # draws from numpy's global generator, not the one it is given
    def sample(self, rng, n):
        return super().sample(np.random.default_rng(np.random.randint(1 << 30)), n)


class LenientMembers(Copy):  # its grammaticality task cannot tell a spoiled sentence from a member
    def contains(self, ids):
        return np.ones(len(ids), bool)


class NoTruth(Copy):  # an oracle that gives every position to one token
    def cavity(self, likelihood, causal=False):
        out = np.zeros_like(likelihood)
        out[..., 2] = 1.0
        return out


class GradesCls(objectives.MaskedLM):  # a label at [CLS]
    def corrupt(self, batch, rng, split):
        out = super().corrupt(batch, rng, split)
        out["labels"][:, 0] = 2
        return out


class NanLoss(objectives.MaskedLM):
    def score(self, hidden, batch):
        scored = super().score(hidden, batch)
        return scored._replace(loss=scored.loss * float("nan"))


class WideScores(objectives.MaskedLM):  # one score per token, not per sentence
    def sentence_scores(self, encoder, ids, batch_size=8192):
        return torch.zeros(ids.shape, dtype=torch.float64)


class Detached(objectives.MaskedLM):  # a loss that does not reach the weights
    def score(self, hidden, batch):
        scored = super().score(hidden, batch)
        return scored._replace(loss=scored.loss.detach() * 0 + torch.ones((), requires_grad=True))


class NoGradient(objectives.MaskedLM):  # a loss computed with gradients off
    def score(self, hidden, batch):
        with torch.no_grad():
            return super().score(hidden, batch)


class Unscored(objectives.MaskedLM):  # names a scoring rule it does not implement
    def sentence_scores(self, encoder, ids, batch_size=8192):
        raise NotImplementedError


class Scalar(objectives.MaskedLM):  # a batch entry that is not one row per example
    def make_batch(self, rng, size, split):
        return {**super().make_batch(rng, size, split), "rate": torch.tensor(0.15)}


class ShowsAnswers(objectives.MaskedLM):  # its masking leaves every graded token in place
    def corrupt(self, batch, rng, split):
        out = super().corrupt(batch, rng, split)
        graded = out["labels"] != IGNORE
        return {**out, "inputs": torch.where(graded, out["labels"], out["inputs"])}


class AnswerNextDoor(objectives.MaskedLM):  # writes each graded answer over the position on its right
    def corrupt(self, batch, rng, split):
        out = super().corrupt(batch, rng, split)
        inputs, labels = out["inputs"].clone(), out["labels"]
        graded = labels[:, :-1] != IGNORE  # (B, T - 1): a graded position with a neighbour on its right
        inputs[:, 1:] = torch.where(graded, labels[:, :-1], inputs[:, 1:])
        return {**out, "inputs": inputs}


class AnswerInSegments(objectives.MaskedLM):  # hands each graded answer to the encoder as its segment id
    def configure_encoder(self, config):
        return replace(super().configure_encoder(config), segments=self.language.vocab_size)

    def make_batch(self, rng, size, split):
        batch = super().make_batch(rng, size, split)
        return {**batch, "segments": batch["labels"].clamp(min=0)}


class PeekingNextToken(objectives.NextTokenLM):  # next-token prediction on an encoder that reads both sides
    def configure_encoder(self, config):
        return Objective.configure_encoder(self, config)


class WornOut(objectives.MaskedLM):  # divides its loss by a count of training calls left, which reaches zero
    def __init__(self, calls: int = 10) -> None:
        super().__init__()
        self.left = calls

    def score(self, hidden, batch):
        scored = super().score(hidden, batch)
        self.left -= self.training
        return scored._replace(loss=scored.loss / self.left)


class ShrinkingTemperature(objectives.MaskedLM):  # a log-temperature penalty training drives below zero
    def build(self, config):
        super().build(config)
        self.temperature = nn.Parameter(torch.tensor(0.05))

    def score(self, hidden, batch):
        scored = super().score(hidden, batch)
        return scored._replace(loss=scored.loss + self.temperature.log())


@pytest.mark.parametrize(
    ("check", "plugin", "rule"),
    [
        (check_language, Unseeded, "sample draws with its rng alone"),
        (check_language, LenientMembers, "every sentence spoil makes is out of the language"),
        (check_language, NoTruth, "gives the true token weight at every position"),
        (check_objective, GradesCls, "[CLS] is never picked for grading"),
        (check_objective, NanLoss, "the loss is a finite scalar"),
        (check_objective, WideScores, "returns one score per sentence, (B,)"),
        (check_objective, Detached, "the loss reaches the weights"),
        (check_objective, NoGradient, "the loss reaches the weights"),
        (check_objective, Unscored, "implements sentence_scores"),
        (check_objective, Scalar, "every tensor of a batch has one row per example"),
        (check_objective, ShowsAnswers, "a graded answer is hidden from the encoder's input"),
        (check_objective, AnswerNextDoor, "a graded answer is hidden from the encoder's input"),
        (check_objective, AnswerInSegments, "a graded answer is hidden from the encoder's input"),
        (check_objective, PeekingNextToken, "a graded answer is hidden from the encoder's input"),
        (check_objective, WornOut, f"the loss and its gradient stay finite through {STEPS} training steps"),
        (check_objective, ShrinkingTemperature, f"the loss and its gradient stay finite through {STEPS} training"),
    ],
    ids=lambda x: getattr(x, "__name__", None),
)
def test_a_broken_rule_is_one_sentence_naming_it_and_the_plugin(check, plugin, rule):
    with pytest.raises(RuleBroken) as err:
        check(plugin)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{plugin.__name__}: ") and rule in message, message


@pytest.mark.parametrize(
    ("plugin", "found"),
    [
        (ShowsAnswers, r"100% of \d+ graded positions show their answer in place in `inputs`"),
        (AnswerNextDoor, r"100% of \d+ graded positions show their answer 1 position to its right in `inputs`"),
        (AnswerInSegments, r"100% of \d+ graded positions show their answer in place in `segments`"),
        (PeekingNextToken, r"100% of \d+ graded positions show their answer 1 position to its right in `inputs`"),
        (WornOut, r"at step 9 the loss is inf$"),
    ],
    ids=lambda x: getattr(x, "__name__", None),
)
def test_a_leaked_answer_says_where_it_shows_and_a_late_non_finite_loss_says_when(plugin, found):
    with pytest.raises(RuleBroken, match=found):
        check_objective(plugin)


def test_a_loss_that_turns_non_finite_after_some_training_is_refused_at_the_step_it_does():
    with pytest.raises(RuleBroken, match=r"at step (\d+) the loss is nan$") as err:
        check_objective(ShrinkingTemperature)
    step = int(re.search(r"at step (\d+)", str(err.value)).group(1))
    assert 1 < step <= STEPS  # finite on the first batches, refused within the steps the check takes
