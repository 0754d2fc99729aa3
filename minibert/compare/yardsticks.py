"""A plug-in objective against every shipped one: the grid `configs/compare.yaml` describes (each language's
shipped arms and the new one, pre-trained at one budget of counted FLOPs) and the pairs it judges."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from minibert.atomic_writes import write_atomic
from minibert.compare.comparison import Pair
from minibert.compare.errors import ComparisonError
from minibert.compare.request import default_folder  # noqa: F401 (session.py imports it from here)
from minibert.pairs.keys import PROBE, ZERO_SHOT
from minibert.sweep import ROOT


def spec_of(yardsticks: str) -> dict:
    """`yardsticks`' languages (configs/compare.yaml's `languages:`)."""
    return yaml.safe_load((ROOT / yardsticks).read_text())["languages"]


@dataclass(frozen=True)
class PluginGrid:
    """What `plugin_grid` made: the grid file, the pairs (each on its language's first declared figure until
    `judged_figures` has seen what the arms log), each language's timing source and declared figures, and each
    arm's task (`Objective.measure`: "cloze" for MLM and its kin)."""

    path: Path
    pairs: list[Pair]
    timing: dict[str, dict]
    judged: dict[str, list[str]]
    why: dict[str, str]  # language -> why its first declared figure is first (configs/compare.yaml `judged_why`)
    measures: dict[str, str]


def plugin_grid(request, cls: type, class_path: str, out: Path) -> PluginGrid:
    """Write `<out>/grid.yaml` (the new objective and the shipped ones on each asked language of
    `request.yardsticks`, at one FLOP budget; with `request.finetune`, each then fully fine-tuned) and return
    what `PluginGrid` holds."""
    spec = spec_of(request.yardsticks)
    asked = list(request.languages) or list(spec)
    if unknown := [x for x in asked if x not in spec]:
        raise ComparisonError(f"--languages: {unknown[0]!r} is not in {request.yardsticks}; valid: {', '.join(spec)}")
    arm = cls.__name__
    objective = out / "objective.yaml"
    write_atomic(objective, yaml.safe_dump({"model": {"init_args": {"objective": {"class_path": class_path}}}}))
    experiments, pairs, timing, judged, why, measures = [], [], {}, {}, {}, {}
    for language in asked:
        lang = spec[language]
        arms = {**{k: v for k, v in lang["arms"].items() if k != arm}, arm: [relative(objective)]}
        for name, extra in arms.items():
            configs = [lang["pretrain"][0], *extra, *lang["pretrain"][1:]]
            experiments += experiments_of(language, name, lang, configs, request.finetune)
            measures[f"{language}/pretrain/{name}"] = getattr(cls, "measure", "") if name == arm else _measure(configs)
        if request.finetune:
            pairs += [Pair(f"{language}/finetune/{arm}-full", f"{language}/finetune/{name}-full", lang["metric"],
                           lang["fails_below"], language) for name in arms if name != arm]  # fmt: skip
        else:
            judged[language] = list(lang.get("judged", [ZERO_SHOT]))
            why[language] = lang.get("judged_why", f"the figure {request.yardsticks} declares first for {language}")
            pairs += [Pair(f"{language}/pretrain/{arm}", f"{language}/pretrain/{name}", judged[language][0], None,
                           language) for name in arms if name != arm]  # fmt: skip
        timing[language] = {**lang["timing"], "new": arm}
    grid = out / "grid.yaml"
    header = f"# Made by scripts/compare.py for {class_path}: the arms of {request.yardsticks}. Regenerated each run.\n"
    write_atomic(grid, header + yaml.safe_dump({"experiments": experiments}, sort_keys=False))
    return PluginGrid(grid, pairs, timing, judged, why, measures)


def _measure(configs: list[str]) -> str:
    """The task an arm's objective grades (`Objective.measure`), from the last of `configs` that names one."""
    found = ""
    for config in configs:
        named = ((yaml.safe_load((ROOT / config).read_text()) or {}).get("model") or {}).get("init_args") or {}
        found = (named.get("objective") or {}).get("class_path", found)
    module, _, name = found.rpartition(".")
    return getattr(getattr(importlib.import_module(module), name), "measure", "") if module else ""


def experiments_of(language: str, name: str, lang: dict, pretrain: list[str], finetune: bool) -> list[dict]:
    """One arm's experiments: pre-training at the language's budget, and with `finetune` its full fine-tuning."""
    budget = {"budget.flops": float(lang["flops"]), "data.val_seed": None}
    # without fine-tuning, a language that makes no pairs is refused while the cell is built, in one line
    pairs = {"pair_eval.enabled": False} if finetune else {"pair_eval.required": True}
    made = [{"name": f"{language}/pretrain/{name}", "job_type": "pretrain", "configs": pretrain,
             "overrides": budget | pairs}]  # fmt: skip
    if finetune:
        made.append({"name": f"{language}/finetune/{name}-full", "job_type": "finetune", "configs": lang["finetune"],
                     "encoder_from": f"{language}/pretrain/{name}",
                     "overrides": {"model.init_args.regime": "full", "data.val_seed": None},
                     "metrics": [lang["metric"]]})  # fmt: skip
    return made


def judged_figures(made: PluginGrid, keys: dict[str, set[str]]) -> tuple[list[Pair], list[str]]:
    """Each pair on the first of its language's declared figures both arms have, and a line for each pair saying
    which and why. A figure of the objective's own task (`val/acc`, `val/gap/acc`) is had by both only where both
    grade the same task (next-token's left-to-right guess is no cloze); the minimal pairs zero-shot only where
    both score a sentence (else the probe reads them), and only on a language with a cell beyond its n-gram
    floors. A language where no declared figure is had by some pair is left out, said in one line."""
    kept, notes = [], []
    for family in dict.fromkeys(p.family for p in made.pairs):
        members = [p for p in made.pairs if p.family == family]
        chosen = [_figure(p, made.judged[family], made.why[family], keys, made.measures) for p in members]
        if any(metric is None for metric, _ in chosen):
            notes.append(f"{family}: left out: " + next(why for metric, why in chosen if metric is None))
            continue
        for p, (metric, why) in zip(members, chosen):
            kept.append(replace(p, metric=metric))
            notes.append(f"{p.a} vs {p.b}: judged on {metric}: {why}")
    return kept, notes


def _figure(p: Pair, declared: list[str], first: str, keys: dict[str, set[str]], measures: dict[str, str]):
    """(the figure `p` is judged on, why), or (None, why none of `declared` serves)."""
    a, b = (arm.rsplit("/", 1)[-1] for arm in (p.a, p.b))
    passed = []
    for rank, metric in enumerate(declared):
        if metric == ZERO_SHOT:
            if not any(PROBE in keys[arm] for arm in (p.a, p.b)):
                passed.append("none of its minimal-pair cells lies beyond the n-gram floors, so its pairs cannot tell "
                              "objectives apart; judge it with --finetune")  # fmt: skip
                continue
            blind = [arm.rsplit("/", 1)[-1] for arm in (p.a, p.b) if ZERO_SHOT not in keys[arm]]
            if blind:
                return PROBE, f"the minimal pairs read by the probe: {', '.join(blind)} cannot score a sentence"
            return metric, _because(rank, declared, passed, first, "both score a sentence")
        if not all(metric in keys[arm] for arm in (p.a, p.b)):
            passed.append(f"{a} or {b} does not log {metric}")
            continue
        if metric.startswith("val/pairs/") or measures[p.a] == measures[p.b]:
            return metric, _because(rank, declared, passed, first, f"both grade {measures[p.a] or 'the same task'}")
        grades = {arm.rsplit("/", 1)[-1]: measures[arm] or "its own task" for arm in (p.a, p.b)}
        passed.append(f"{metric} grades each arm's own task ({', '.join(f'{k}: {v}' for k, v in grades.items())})")
    return None, "; ".join(passed) or "no figure declared"


def _because(rank: int, declared: list[str], passed: list[str], first: str, fits: str) -> str:
    """Why a pair is judged on the `rank`-th declared figure: `first` (why the first is first) where it is that,
    else what ruled the first out."""
    if rank == 0:
        return f"{first}, and {fits}"
    return f"{fits}; not {declared[0]}: {passed[0]}"


def relative(path: Path) -> str:
    """`path` relative to the checkout where it lies inside it, as grids name their configs."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
