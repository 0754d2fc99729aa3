"""Objectives (pre-training and the fine-tuning task), chosen by class path in YAML (`model.objective.class_path`)."""

from minibert.objectives.base import Objective, Scoreboard, Scored
from minibert.objectives.combined import Combined
from minibert.objectives.grammaticality import Grammaticality
from minibert.objectives.mlm import MaskedLM
from minibert.objectives.next_token import NextTokenLM
from minibert.objectives.nsp import NextSentence
from minibert.objectives.probe import Probe
from minibert.objectives.rtd import ReplacedTokenDetection
from minibert.objectives.segments import SegmentPairs
from minibert.objectives.span import SpanMaskedLM, SpanMasking
from minibert.objectives.structure import StructuralProbe
from minibert.objectives.whole_word import WholeWordMaskedLM, WholeWordMasking

__all__ = [
    "Scoreboard",
    "Combined",
    "Grammaticality",
    "MaskedLM",
    "NextSentence",
    "NextTokenLM",
    "Objective",
    "Probe",
    "ReplacedTokenDetection",
    "Scored",
    "SegmentPairs",
    "SpanMaskedLM",
    "SpanMasking",
    "StructuralProbe",
    "WholeWordMaskedLM",
    "WholeWordMasking",
]
