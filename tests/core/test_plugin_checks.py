"""The checks a plug-in author runs (minibert.testing): every shipped language and objective keeps every rule, and
each rule a plug-in breaks is said in one sentence that names it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minibert import objectives
from minibert.languages import BracketPairs, Dyck, Text
from minibert.objectives.structure import StructuralProbe
from minibert.objectives.whole_word import WholeWordMaskedLM
from minibert.testing import RuleBroken, check_language, check_objective
from tests.languages_plugin import Copy

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
]


@pytest.mark.parametrize(("cls", "args"), LANGUAGES, ids=lambda x: getattr(x, "__name__", str(x)))
def test_every_shipped_language_keeps_every_rule(cls, args):
    assert isinstance(check_language(cls, **args), cls)


@pytest.mark.parametrize(("cls", "language", "args"), OBJECTIVES, ids=lambda x: getattr(x, "__name__", repr(x)))
def test_every_shipped_objective_keeps_every_rule(cls, language, args):
    assert isinstance(check_objective(cls, language, **args), cls)


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
    ],
    ids=lambda x: getattr(x, "__name__", None),
)
def test_a_broken_rule_is_one_sentence_naming_it_and_the_plugin(check, plugin, rule):
    with pytest.raises(RuleBroken) as err:
        check(plugin)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{plugin.__name__}: ") and rule in message, message
