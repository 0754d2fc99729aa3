"""Which objectives a plug-in file defines, read from its syntax tree without importing it.

Importing a plug-in imports torch (a minute on a loaded 2-core machine), so a file that defines no objective,
or several, is answered from its source instead, in the second a usage error should take. The import
(`minibert.compare.objective.find_objective`) stays the authority: this reading gives the exact set of names
the import would find, or None wherever the tree cannot tell (a base imported from the user's own module, a class
made by a call or by a decorator, a name bound twice, a top level that raises), and then the import decides. A
base is followed through the imports it plainly names (`MaskedLM`, `objectives.MaskedLM`,
`minibert.objectives.MaskedLM`) into minibert's own sources, which are read, never imported.

Example:
    >>> objectives_in(SOURCES / "docs/examples/mask_rate_30.py")
    {'MaskRate30'}
"""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import dataclass
from pathlib import Path

SOURCES = Path(__file__).resolve().parents[2]  # the folder minibert/ lies in: its modules are read as text
OBJECTIVE = ("minibert.objectives.base", "Objective")  # (module, class) every objective derives from
# packages that never import minibert, so no class of theirs is an objective; the first three's classes (nn.Module,
# LightningModule) declare no abstract method, so an objective mixing one in keeps the abstract methods it had
PLAIN = {"torch", "lightning", "numpy"}
FOREIGN = PLAIN | {"abc", "typing", "dataclasses", "enum", "collections", "functools", "types", "math", "re"}
ABSTRACT = {"abstractmethod", "abstractproperty", "abstractclassmethod", "abstractstaticmethod"}
DYNAMIC = {"exec", "eval", "globals", "__import__"}  # builtins that can make or bind classes unseen (and new_class)


@dataclass(frozen=True)
class Class:
    """A class as the tree gives it: whether it derives from Objective (None: cannot tell), and the abstract
    methods it leaves unimplemented (None: cannot tell)."""

    objective: bool | None
    abstract: frozenset[str] | None


@dataclass(frozen=True)
class Module:
    """A module a dotted name passes through (`minibert.objectives`, `torch.nn`)."""

    name: str


def objectives_in(path: Path) -> set[str] | None:
    """The names of the concrete Objective subclasses `path` defines, as `find_objective` finds them once it has
    imported the file, or None where its syntax tree cannot tell. SyntaxError (with its line) for a file Python
    cannot parse; OSError for one it cannot read."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    loaded = getattr(sys.modules.get(path.stem), "__file__", None)
    if path.stem in sys.modules and (loaded is None or Path(loaded).resolve() != path.resolve()):
        return None  # the import would find that module, not this file
    source = _Source(tree, path.stem)
    if any(isinstance(stmt, (ast.Raise, ast.Assert)) for stmt in _statements(tree.body)):
        return None  # its import may stop there, and the import says why in its own words
    for node in ast.walk(tree):
        if isinstance(node, ast.Global) or (isinstance(node, ast.Call) and _dynamic(node)):
            return None
        if isinstance(node, ast.ClassDef) and node not in tree.body and source.klass(node).objective is not False:
            return None  # made in a function or under an `if`: a module attribute only perhaps, and perhaps twice
    found, objectives = set(), set()
    for node in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        kind = source.klass(node)
        if kind.objective is None or (kind.objective and (kind.abstract is None or node.decorator_list)):
            return None
        if kind.objective:
            if len(source.bindings[node.name]) != 1 or "__module__" in _bound(node.body):
                return None  # rebound, deleted, or said to come from another module
            objectives.add(node.name)
            found |= {node.name} if not kind.abstract else set()
    for node in tree.body:  # an objective under a second name is a second member of the module
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)):
            mentioned = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            if _bound([node]) and mentioned & objectives:
                return None
    return found


class _Source:
    """One module's tree: its module-level names, and the classes it defines as far as its imports can be followed."""

    def __init__(self, tree: ast.Module, name: str, package: bool = False) -> None:
        self.tree, self.name, self.package = tree, name, package
        self.bindings = _bindings(tree.body)
        self._classes: dict[int, Class] = {}

    def klass(self, node: ast.ClassDef) -> Class:
        if id(node) not in self._classes:
            self._classes[id(node)] = Class(None, None)  # a class met again while being judged: cannot tell
            self._classes[id(node)] = self._judge(node)
        return self._classes[id(node)]

    def _judge(self, node: ast.ClassDef) -> Class:
        bases = [_as_base(self.resolve(b)) for b in node.bases]
        if (self.name, node.name) == OBJECTIVE or any(b is not None and b.objective for b in bases):
            objective = True
        else:
            objective = False if all(b is not None and b.objective is False for b in bases) else None
        own = {
            f.name
            for f in node.body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(_called(d) in ABSTRACT for d in f.decorator_list)
        }
        if any(b is None or b.abstract is None for b in bases) or node.keywords:
            return Class(objective, None)  # a base or a metaclass the tree cannot see into
        left = set().union(*(b.abstract for b in bases)) - _bound(node.body)
        if left and len(bases) > 1:  # which base implements a method first depends on the method resolution order
            return Class(objective, None)
        return Class(objective, frozenset(own | left))

    def resolve(self, expr: ast.expr, depth: int = 0) -> Class | Module | None:
        """What a name or dotted name means at this module's top level; None where the tree cannot tell."""
        if depth > 20:
            return None
        if isinstance(expr, ast.Attribute):
            outer = self.resolve(expr.value, depth + 1)
            return _member(outer.name, expr.attr, depth + 1) if isinstance(outer, Module) else None
        if not isinstance(expr, ast.Name):
            return None
        return self.name_of(expr.id, depth)

    def name_of(self, name: str, depth: int = 0) -> Class | Module | None:
        bound = self.bindings.get(name, [])
        if depth > 20:  # imports that go round in a circle
            return None
        if not bound:
            if "*" in self.bindings or not isinstance(getattr(builtins, name, None), type):
                return None
            return Class(False, frozenset())  # object, Exception, dict: no objective, nothing abstract
        if len(bound) != 1:
            return None
        node, alias = bound[0]
        if isinstance(node, ast.ClassDef):
            return self.klass(node)
        if isinstance(node, ast.Import):
            return Module(alias.name if alias.asname else alias.name.split(".")[0])
        if isinstance(node, ast.ImportFrom):
            module = self._absolute(node)
            return _member(module, alias.name, depth + 1) if module else None
        return None

    def _absolute(self, node: ast.ImportFrom) -> str | None:
        if not node.level:
            return node.module
        parts = self.name.split(".")
        keep = len(parts) - node.level + (1 if self.package else 0)
        if keep < 1:
            return None  # a plug-in file is imported as a top-level module: a relative import fails there
        return ".".join(parts[:keep] + ([node.module] if node.module else []))


def _member(module: str, name: str, depth: int) -> Class | Module | None:
    """`module.name`: a class or submodule of minibert, read from its source; anything of a FOREIGN package."""
    top = module.split(".")[0]
    if top in FOREIGN:
        return Module(f"{module}.{name}")
    if top != "minibert":
        return None
    source = _source(module)
    if source is not None and name in source.bindings:
        return source.name_of(name, depth)
    if _file(f"{module}.{name}") is not None:
        return Module(f"{module}.{name}")
    return None


def _as_base(found: Class | Module | None) -> Class | None:
    """A resolved base as a class: a FOREIGN package's is no objective (abstract methods known for PLAIN's)."""
    if isinstance(found, Class) or found is None:
        return found
    top = found.name.split(".")[0]
    if top not in FOREIGN:
        return None
    return Class(False, frozenset() if top in PLAIN or found.name == "abc.ABC" else None)


_SOURCES: dict[str, _Source | None] = {}


def _source(module: str) -> _Source | None:
    if module not in _SOURCES:
        file = _file(module)
        try:
            tree = ast.parse(file.read_bytes(), filename=str(file)) if file is not None else None
        except (OSError, SyntaxError, ValueError):
            tree = None
        _SOURCES[module] = _Source(tree, module, file.name == "__init__.py") if tree is not None else None
    return _SOURCES[module]


def _file(module: str) -> Path | None:
    base = SOURCES.joinpath(*module.split("."))
    return next((f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()), None)


def _dynamic(call: ast.Call) -> bool:
    """A call that can make a class, or bind a module's name, where the tree does not show it."""
    name = call.func.id if isinstance(call.func, ast.Name) else ""
    return name in DYNAMIC or (name == "type" and len(call.args) == 3) or _called(call.func) == "new_class"


def _called(func: ast.expr) -> str:
    """The last part of a called or decorating name: `abstractmethod` of `abc.abstractmethod`."""
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _bindings(body: list[ast.stmt]) -> dict[str, list[tuple[ast.stmt, ast.alias | None]]]:
    """Every name the statements bind at their own level (under `if`, `try`, `for` and `with` too, not inside a
    function or class), each with the statements that bind it; "*" where a star import binds names unseen."""
    found: dict[str, list] = {}
    for stmt in _statements(body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                name = "*" if alias.name == "*" else alias.asname or alias.name.split(".")[0]
                found.setdefault(name, []).append((stmt, alias))
        elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(stmt.name, []).append((stmt, None))
        else:
            for name in _stored(stmt):
                found.setdefault(name, []).append((stmt, None))
    return found


def _bound(body: list[ast.stmt]) -> set[str]:
    return set(_bindings(body))


def _statements(body: list[ast.stmt]):
    """The statements of `body` and of the blocks nested in it, short of a function's or class's body."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for field in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(stmt, field, []))
            for handler in getattr(stmt, "handlers", []):
                yield from _statements(handler.body)
            for case in getattr(stmt, "cases", []):
                yield from _statements(case.body)


def _stored(stmt: ast.stmt) -> set[str]:
    """Names one simple statement (or a block's header) binds: assigned, deleted, a loop or `with` target, an
    exception's or a match's name, a walrus."""
    names: set[str] = set()
    todo: list[ast.AST] = []
    for field, value in ast.iter_fields(stmt):  # a block's own statements are `_statements`'
        if field not in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, ast.AST)]
    todo += [*getattr(stmt, "handlers", []), *(c.pattern for c in getattr(stmt, "cases", []))]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue  # a scope of its own
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        if not isinstance(node, ast.ExceptHandler):
            todo += list(ast.iter_child_nodes(node))
    return names
