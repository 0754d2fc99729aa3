"""Languages, chosen by class path in YAML (`objective.init_args.language`); BracketPairs is the default."""

from minibert.languages.base import CLS_ID, MASK_ID, Language
from minibert.languages.bracket_pairs import BracketPairs
from minibert.languages.dyck import Dyck
from minibert.languages.text import Text

__all__ = ["CLS_ID", "MASK_ID", "BracketPairs", "Dyck", "Language", "Text"]
