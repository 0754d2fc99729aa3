"""A plug-in file's objectives read from its syntax tree (minibert.compare.plugin_source), so that compare.py
refuses a file with none, or several, before torch is imported: where the tree judges, it finds what the import
finds (minibert.compare.objective.find_objective, the authority), a refusal is worded as the import words it,
and where the tree cannot tell it leaves the file to the import instead of guessing."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from minibert.compare.errors import ComparisonError
from minibert.compare.objective import find_objective
from minibert.compare.plugin_source import objectives_in
from minibert.compare.request import Request

ROOT = Path(__file__).resolve().parents[2]
MLM = "from minibert.objectives import MaskedLM\n"
METHODS = "    def build(self, config):\n        pass\n\n    def make_batch(self, rng, size, split):\n        pass\n"
# case -> (the file's text, whether the tree can tell what it defines)
SOURCES = {
    "one": (MLM + "class Mine(MaskedLM):\n    pass\n", True),
    "a torch module only": ("from torch import nn\nclass Head(nn.Module):\n    pass\n", True),
    "functions only": ("def helper():\n    return 1\n", True),
    "an imported objective only": (MLM + "RATE = 0.3\n", True),
    "exceptions and tuples": ("import typing\nclass E(Exception):\n    pass\nclass N(typing.NamedTuple):\n"
                              "    a: int\n", True),
    "two": (MLM + "from minibert.objectives import SpanMaskedLM\nclass A(MaskedLM):\n    pass\n"
            "class B(SpanMaskedLM):\n    pass\n", True),
    "dotted bases": ("import minibert.objectives\nimport minibert.objectives as O\nfrom minibert import objectives\n"
                     "class A(minibert.objectives.MaskedLM):\n    pass\nclass B(O.NextTokenLM):\n    pass\n"
                     "class C(objectives.mlm.MaskedLM):\n    pass\n", True),
    "an abstract helper": ("from minibert.objectives import Objective\nclass Base(Objective):\n    pass\n"
                           "class Mine(Base):\n" + METHODS, True),
    "an objective short of a method": ("from minibert.objectives.base import Objective\nclass Half(Objective):\n"
                                       "    def build(self, config):\n        pass\n", True),
    "Objective directly": ("from minibert.objectives import Objective\nclass Mine(Objective):\n" + METHODS, True),
    "a new abstract method": ("from abc import abstractmethod\n" + MLM + "class Half(MaskedLM):\n"
                              "    @abstractmethod\n    def extra(self):\n        pass\nclass Full(Half):\n"
                              "    def extra(self):\n        return 1\n", True),
    "a mixin": (MLM + "class Mix:\n    pass\nclass A(Mix, MaskedLM):\n    pass\n", True),
    "a base from the user's module": ("from tree_helper import Thing\nclass A(Thing):\n    pass\n", False),
    "a second name": (MLM + "class A(MaskedLM):\n    pass\nB = A\n", False),
    "a class made in a function": (MLM + "def make():\n    class Inner(MaskedLM):\n        pass\n    return Inner\n"
                                   "X = make()\n", False),
    "a decorated class": (MLM + "def keep(c):\n    return c\n@keep\nclass A(MaskedLM):\n    pass\n", False),
    "a class under an if": (MLM + "if True:\n    class A(MaskedLM):\n        pass\n", False),
    "a star import": ("from minibert.objectives import *\nclass A(MaskedLM):\n    pass\n", False),
    "a generic base": ("from typing import Generic, TypeVar\n" + MLM + "T = TypeVar('T')\n"
                       "class A(MaskedLM, Generic[T]):\n    pass\n", False),
    "a name bound twice": (MLM + "class A(MaskedLM):\n    pass\nclass A(MaskedLM):\n    pass\n", False),
    "a raise at the top": ("if True:\n    raise RuntimeError('boom')\n", False),
}  # fmt: skip


@pytest.fixture
def plugin(tmp_path):
    """plugin(case) -> the case's file, named uniquely (the import caches modules by name), its modules unloaded
    and sys.path restored after."""
    path, before = list(sys.path), set(sys.modules)
    (tmp_path / "tree_helper.py").write_text(MLM + "class Thing(MaskedLM):\n    pass\n")

    def write(case: str) -> Path:
        file = tmp_path / f"tree_{'_'.join(case.split()).replace(chr(39), '')}.py"
        file.write_text(SOURCES[case][0])
        return file

    yield write
    sys.path[:] = path
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def imported(spec: str) -> str:
    """find_objective's answer: the class's name, or its refusal."""
    try:
        return find_objective(spec, [])[0].__name__
    except ComparisonError as err:
        return str(err)


def checked(spec: str) -> str | None:
    """Request.check's answer: None, or its refusal."""
    try:
        Request(objective=spec).check()
    except ComparisonError as err:
        return str(err)
    return None


@pytest.mark.parametrize("case", SOURCES)
def test_the_tree_finds_what_the_import_finds_or_leaves_the_file_to_it(case, plugin):
    file = plugin(case)
    read = objectives_in(file)  # before the import, as compare.py reads it
    refusal = imported(f"{file}:NoSuchClass")  # the import's refusal lists what it found: "it defines [...]"
    if SOURCES[case][1]:
        assert read == set(ast.literal_eval(refusal.rpartition("it defines ")[2]))
    else:
        assert read is None


@pytest.mark.parametrize("case", SOURCES)
def test_the_light_check_refuses_only_what_the_import_refuses_and_in_its_words(case, plugin):
    file = plugin(case)
    names = objectives_in(file) or set()
    specs = [str(file), *(f"{file}:{name}" for name in sorted(names)), f"{file}:Nope"]
    light = {spec: checked(spec) for spec in specs}  # all before the import, as compare.py asks
    for spec in specs:
        heavy = imported(spec)
        if light[spec] is not None or SOURCES[case][1]:  # a refusal, or a file the tree judges: the import's answer
            assert light[spec] == (None if heavy in names else heavy), spec


def test_a_file_that_does_not_parse_is_refused_with_its_line_as_the_import_refuses_it(tmp_path):
    (tmp_path / "broken_plugin.py").write_text(MLM + "\n\nclass A(MaskedLM)\n    pass\n")
    spec = str(tmp_path / "broken_plugin.py")
    light = checked(spec)
    assert light == imported(spec) and ", line 4: cannot import it (SyntaxError: " in light


@pytest.mark.parametrize("publish", [False, True])
def test_a_plugins_default_folder_is_told_from_its_tree_as_the_comparison_finds_it(publish):
    """The folder whose lock compare.py asks about before it imports anything is the one it writes to."""
    from minibert.compare.session import _out

    request = Request(objective="docs/examples/mask_rate_30.py", languages=["dyck"], publish=publish)
    assert request.folder() == _out(request) == ROOT / ("results" if publish else "runs") / "compare" / (
        "MaskRate30-pairs-dyck"
    )  # fmt: skip
    assert Request(objective="minibert.objectives.MaskedLM").folder() is None  # a class path: the import's to tell
