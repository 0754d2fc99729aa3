"""A plug-in objective against every shipped one: the grid `configs/compare.yaml` describes (each language's
shipped arms and the new one, pre-trained at one budget of counted FLOPs) and the pairs it judges."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from minibert.atomic_writes import write_atomic
from minibert.compare.errors import ComparisonError
from minibert.pairs.keys import PROBE, ZERO_SHOT
from minibert.report.comparison import Pair
from minibert.sweep import ROOT


def default_folder(arm: str, finetune: bool, languages: list[str]) -> str:
    """`<Class>-pairs` (or `-finetune`), and the languages asked for where not all: one folder per question, so
    that a comparison on other languages or another measure never meets another's record."""
    return "-".join([arm, "finetune" if finetune else "pairs", *languages])


def plugin_grid(request, cls: type, class_path: str, out: Path) -> tuple[Path, list[Pair], dict]:
    """Write `<out>/grid.yaml` (the new objective and the shipped ones on each asked language of
    `request.yardsticks`, at one FLOP budget; with `request.finetune`, each then fully fine-tuned) and return
    it, the pairs, and each language's timing source. Pairs judge `val/pairs/acc` until `pair_figures` has seen
    what each arm logs."""
    spec = yaml.safe_load((ROOT / request.yardsticks).read_text())["languages"]
    asked = list(request.languages) or list(spec)
    if unknown := [x for x in asked if x not in spec]:
        raise ComparisonError(f"--languages: {unknown[0]!r} is not in {request.yardsticks}; valid: {', '.join(spec)}")
    arm = cls.__name__
    objective = out / "objective.yaml"
    write_atomic(objective, yaml.safe_dump({"model": {"init_args": {"objective": {"class_path": class_path}}}}))
    experiments, pairs, timing = [], [], {}
    for language in asked:
        lang = spec[language]
        arms = {**{k: v for k, v in lang["arms"].items() if k != arm}, arm: [relative(objective)]}
        for name, extra in arms.items():
            experiments += _experiments(language, name, lang, [lang["pretrain"][0], *extra, *lang["pretrain"][1:]],
                                        request.finetune)  # fmt: skip
        if request.finetune:
            pairs += [Pair(f"{language}/finetune/{arm}-full", f"{language}/finetune/{name}-full", lang["metric"],
                           lang["fails_below"], language) for name in arms if name != arm]  # fmt: skip
        else:
            pairs += [Pair(f"{language}/pretrain/{arm}", f"{language}/pretrain/{name}", ZERO_SHOT, None, language)
                      for name in arms if name != arm]  # fmt: skip
        timing[language] = {**lang["timing"], "new": arm}
    grid = out / "grid.yaml"
    header = f"# Made by scripts/compare.py for {class_path}: the arms of {request.yardsticks}. Regenerated each run.\n"
    write_atomic(grid, header + yaml.safe_dump({"experiments": experiments}, sort_keys=False))
    return grid, pairs, timing


def _experiments(language: str, name: str, lang: dict, pretrain: list[str], finetune: bool) -> list[dict]:
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


def pair_figures(pairs: list[Pair], keys: dict[str, set[str]]) -> tuple[list[Pair], list[str]]:
    """The minimal-pair comparisons as the arms allow, and a line for each change: a pair whose arm cannot score
    a sentence zero-shot (it logs no `val/pairs/acc_...`) is judged by the probe; a language with no cell beyond
    its n-gram floors (its arms log no `val/pairs/acc` or probe figure) is left out."""
    kept, notes = [], []
    for family in dict.fromkeys(p.family for p in pairs):
        members = [p for p in pairs if p.family == family]
        if not any(PROBE in keys[p.a] for p in members):
            notes.append(f"{family}: left out: none of its minimal-pair cells lies beyond the n-gram floors (a bigram "
                         "or trigram solves them), so its pairs cannot tell objectives apart; judge it with "
                         "--finetune")  # fmt: skip
            continue
        for p in members:
            blind = [arm for arm in (p.a, p.b) if ZERO_SHOT not in keys[arm]]
            if blind:
                notes.append(f"{p.label}: judged on {PROBE}: {', '.join(blind)} cannot score a sentence zero-shot")
                p = replace(p, metric=PROBE)
            kept.append(p)
    return kept, notes


def relative(path: Path) -> str:
    """`path` relative to the checkout where it lies inside it, as grids name their configs."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
