"""Pre-training objectives, chosen by class path in YAML (`model.objective.class_path`)."""

from minibert.objectives.base import Objective, Scored
from minibert.objectives.mlm import MaskedLM

__all__ = ["MaskedLM", "Objective", "Scored"]
