"""The arm registry: how every page and dashboard names what it compares, read once from `configs/arms.yaml`.

Two sections, each keyed as a results table names things:

- `objectives`, by the objective class a run's config builds (the table's `objective` column). One the registry
  does not hold is named by its class and read on its own `val/acc`.
- `arms`, by the name an experiment gives its arm: `<grid>/pretrain/<arm>`, `<grid>/finetune/<arm>-<regime>`
  (`name_of`). Each has its label, its colour in every figure, and the roles pages read it in (the control, a
  left-to-right arm's own ceiling, a cloze read on its generator). One the registry does not hold is named by its
  own name, so an arm added to a grid reaches every page that lists the grid's arms without a line of Python.

Example:
    >>> objective("MaskedLM").label, objective("MyObjective").label, objective("MyObjective").own
    ('mlm', 'MyObjective', (('val/acc', 'val/acc', ''),))
    >>> name_of("dyck/finetune/mlm_causal-full"), arm("mlm_causal").label, arm("mlm_causal").causal
    ('mlm_causal', 'causal MLM', 'left-only ceiling')
    >>> names("dyck/finetune/mlm-full", "dyck/finetune/mlm-frozen")
    ('MLM, full', 'MLM, frozen ([CLS] + linear head)')
    >>> ordered(["d/finetune/no_pretrain", "d/finetune/mlm-frozen", "d/finetune/span-full", "d/finetune/mlm-full"])
    ['d/finetune/mlm-full', 'd/finetune/mlm-frozen', 'd/finetune/span-full', 'd/finetune/no_pretrain']
    >>> listed(["my_arm", "span", "mlm"])
    ['mlm', 'span', 'my_arm']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.colors
import yaml

from minibert.checkout import CHECKOUT
from minibert.tables.table import TableError

FILE = Path("configs/arms.yaml")
OBJECTIVE_KEYS = {"label", "description", "cloze", "own", "published"}
ARM_KEYS = {"label", "colour", "control", "causal", "cloze", "generator", "aliases"}
STAGES = ("pretrain", "finetune", "probe", "objectives")  # the path part an arm's name follows
REGIMES = {"full": "full", "frozen": "frozen ([CLS] + linear head)", "probe": "probe (linear, on frozen features)"}
REGIME = re.compile(rf"-({'|'.join(REGIMES)})$")  # a fine-tuning experiment's regime, after its arm's name
SCRATCH = "no_pretrain"  # the fine-tuning regime with no pre-training, which names its experiments' arm too
GENERATOR = "generator/"  # where an arm whose cloze is its generator's logs it: val/generator/...


@dataclass(frozen=True)
class Published:
    label: str  # how the paper's table names it
    figures: tuple[float, ...]


@dataclass(frozen=True)
class Objective:
    key: str  # the objective class
    label: str
    description: str = ""
    cloze: bool = True  # its pre-training answers the cloze (False: another question, and no cloze figure)
    own: tuple[tuple[str, str, str], ...] = (("val/acc", "val/acc", ""),)  # (name, metric, category), headline first
    published: Published | None = None


@dataclass(frozen=True)
class Arm:
    key: str  # the arm's name in its experiments
    label: str
    colour: str | None = None  # None: a colour no registered arm takes, by its place in the figure
    control: bool = False  # the arm every effect is measured against
    causal: str | None = None  # left context only: the name of the ceiling its figures are read against
    cloze: bool = True  # it has a cloze figure (its own, or its generator's)
    generator: bool = False  # its cloze is its generator's (GENERATOR), the arm answering another question
    aliases: tuple[str, ...] = ()  # the names other grids give it

    @property
    def prefix(self) -> str:
        """Where its cloze figures are logged under val/: its generator's, or its own."""
        return GENERATOR if self.generator else ""


@dataclass(frozen=True)
class Registry:
    objectives: dict[str, Objective] = field(default_factory=dict)
    arms: dict[str, Arm] = field(default_factory=dict)


def _objective(key: str, entry: dict) -> Objective:
    if not isinstance(entry, dict) or not {"label"} <= set(entry) <= OBJECTIVE_KEYS:
        raise ValueError(f"{key}: give label, with optional {', '.join(sorted(OBJECTIVE_KEYS - {'label'}))}")
    own = tuple(tuple(str(x) for x in figure) for figure in entry.get("own", [])) or Objective(key, key).own
    if any(len(figure) != 3 for figure in own):
        raise ValueError(f"{key}: each of `own` is [name, metric, category]")
    if not isinstance(cloze := entry.get("cloze", True), bool):
        raise ValueError(f"{key}: cloze is true or false")
    published = entry.get("published")
    return Objective(key, str(entry["label"]), str(entry.get("description", "")), cloze, own,
                     Published(str(published["label"]), tuple(map(float, published["figures"])))
                     if published else None)  # fmt: skip


def _arm(key: str, entry: dict) -> Arm:
    if not isinstance(entry, dict) or not {"label"} <= set(entry) <= ARM_KEYS:
        raise ValueError(f"{key}: give label, with optional {', '.join(sorted(ARM_KEYS - {'label'}))}")
    if (colour := entry.get("colour")) is not None and not matplotlib.colors.is_color_like(colour):
        raise ValueError(f"{key}: colour {colour!r} is not a Matplotlib colour")
    if not all(isinstance(entry.get(flag, flag == "cloze"), bool) for flag in ("control", "cloze", "generator")):
        raise ValueError(f"{key}: control, cloze and generator are true or false")
    causal = entry.get("causal")
    if not isinstance(aliases := entry.get("aliases", []), list):
        raise ValueError(f"{key}: aliases is a list of names")
    return Arm(key, str(entry["label"]), colour, entry.get("control", False), None if causal is None else str(causal),
               entry.get("cloze", True), entry.get("generator", False), tuple(map(str, aliases)))  # fmt: skip


@functools.cache
def registry(root: Path = CHECKOUT) -> Registry:
    """What `root/configs/arms.yaml` holds; TableError in one line for a file it cannot read."""
    path = Path(root) / FILE
    if not path.is_file():
        return Registry()
    try:
        found = yaml.safe_load(path.read_text()) or {}
        if not isinstance(found, dict) or not set(found) <= {"objectives", "arms"}:
            raise ValueError("give the sections objectives and arms")
        objectives = {str(k): _objective(str(k), v) for k, v in (found.get("objectives") or {}).items()}
        arms = {str(k): _arm(str(k), v) for k, v in (found.get("arms") or {}).items()}
        names = [n for a in arms.values() for n in (a.key, *a.aliases)]
        if len(set(names)) < len(names):
            raise ValueError("an arm's name or alias is another arm's too")
        if sum(a.control for a in arms.values()) > 1:
            raise ValueError("one arm at most is the control")
        return Registry(objectives, arms)
    except (yaml.YAMLError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise TableError(f"{path}: not an arm registry: {' '.join(str(err).split())}") from None


def objective(key: str, root: Path = CHECKOUT) -> Objective:
    """The registered objective class `key`, or one named by it."""
    return registry(Path(root)).objectives.get(key) or Objective(key, key)


def name_of(experiment: str) -> str:
    """The arm an experiment's name holds: the part after its stage (`pretrain`, `finetune`, ...) less a
    fine-tuning regime, else its last part: `dyck/finetune/mlm-full` -> `mlm`, `scaling/pretrain/mlm/x1` -> `mlm`."""
    parts = experiment.split("/")
    at = max((i + 1 for i, p in enumerate(parts[:-1]) if p in STAGES), default=len(parts) - 1)
    return REGIME.sub("", parts[at])


def arm(name: str, root: Path = CHECKOUT) -> Arm:
    """The registered arm `name` (an arm's name or alias, or an experiment that holds one), or one named by it."""
    return _known(name, Path(root)) or Arm(name_of(name), name_of(name))


def _known(name: str, root: Path) -> Arm | None:
    arms = registry(root).arms
    for key in (name, name_of(name)):
        if found := arms.get(key) or next((a for a in arms.values() if key in a.aliases), None):
            return found
    return None


def label(name: str, root: Path = CHECKOUT) -> str:
    return arm(name, root).label


def regime_of(experiment: str) -> str:
    """The fine-tuning regime an experiment's last part names after its arm ('' for none)."""
    return m.group(1) if (m := REGIME.search(experiment.rsplit("/", 1)[-1])) else ""


def named(experiment: str, root: Path = CHECKOUT) -> str:
    """An experiment as a page names it: its arm's label, with its fine-tuning regime where it has one."""
    return label(experiment, root) + (f", {REGIMES[r]}" if (r := regime_of(experiment)) else "")


def names(a: str, b: str, root: Path = CHECKOUT) -> tuple[str, str]:
    """Two experiments as a page names them in a comparison: by their arms' labels, each with its fine-tuning
    regime where both are one arm (`MLM, full` against `MLM, frozen (...)`)."""
    if name_of(a) != name_of(b):
        return label(a, root), label(b, root)
    return named(a, root), named(b, root)


def ordered(experiments: Iterable[str], root: Path = CHECKOUT) -> list[str]:
    """Experiments by their arms in the registry's order (`listed`), each arm's full fine-tuning before its other
    regimes."""
    experiments = list(dict.fromkeys(experiments))
    arms = listed((name_of(e) for e in experiments), root)
    regimes = list(REGIMES)
    return sorted(experiments, key=lambda e: (arms.index(name_of(e)), regimes.index(r) if (r := regime_of(e)) else -1))


def listed(names: Iterable[str], root: Path = CHECKOUT) -> list[str]:
    """Arms' names without repeats, the registry's in its order, then the others in the order given."""
    names, order = list(dict.fromkeys(names)), list(registry(Path(root)).arms)
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), names.index(n)))


def control(root: Path = CHECKOUT) -> str:
    """The name of the arm every effect is measured against; TableError where the registry names none."""
    return playing("control", registry(Path(root)).arms, root)


ROLES = {"control": lambda a: a.control, "causal": lambda a: bool(a.causal) and a.cloze}


def playing(role: str, names: Iterable[str], root: Path = CHECKOUT) -> str:
    """The first of `names` (arms or experiments) whose arm plays `role`: `control`, the arm every effect is
    measured against, or `causal`, the control's own objective under a causal mask (left-to-right, answering the
    cloze); TableError where none does."""
    found = next((n for n in names if ROLES[role](arm(n, root))), None)
    if found is None:
        raise TableError(f"no arm plays the {role} role (configs/arms.yaml)")
    return found


def drawn_as(name: str, root: Path = CHECKOUT) -> Arm | None:
    """The registered arm a figure's series stands for: one named by its arm's name or an experiment holding it, or
    by its label, alone or with what a page adds in brackets or after "'s" (`ELECTRA's generator`); the longest
    label that fits wins. None for a series no registered arm is (a position scheme, `MLM, control task`)."""
    if (found := _known(name, Path(root))) is not None:
        return found
    fits = [a for a in registry(Path(root)).arms.values()
            if name == a.label or name.startswith((f"{a.label} (", f"{a.label}'s"))]  # fmt: skip
    return max(fits, key=lambda a: len(a.label), default=None)


def colours(names: Iterable[str], root: Path = CHECKOUT) -> dict[str, object]:
    """A colour for each of a figure's series `names`: the first series of a registered arm (`drawn_as`) takes the
    arm's colour, so an arm keeps it from figure to figure; every other series the next of Matplotlib's tab10
    (tab20 past ten) that no series of the figure takes."""
    names = list(dict.fromkeys(names))
    own: dict[str, str] = {}
    for n in names:
        a = drawn_as(n, root)
        if a is not None and a.colour and a.colour not in own.values():
            own[n] = a.colour
    taken = {matplotlib.colors.to_rgba(c) for c in own.values()}
    palette = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"].colors
    free = iter([c for c in palette if matplotlib.colors.to_rgba(c) not in taken])
    return {n: own[n] if n in own else next(free, (0.5, 0.5, 0.5)) for n in names}
