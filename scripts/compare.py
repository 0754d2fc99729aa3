"""Is my objective better, and by about how much? One command, seeds added until every verdict is decided.

    python scripts/compare.py docs/examples/mask_rate_30.py            # a plug-in file (or a class path)
    python scripts/compare.py docs/examples/mask_rate_30.py --languages dyck --minutes 15
    python scripts/compare.py --grid configs/ablations/dyck.yaml --out results/dyck \
        --arms dyck/pretrain/mlm,dyck/pretrain/span --metric val/gap/acc

With a plug-in, the objective runs against every shipped objective on every language of configs/compare.yaml
that it builds on, each arm at the same budget of counted pre-training FLOPs, and the figure judged is the
encoder's zero-shot accuracy on the language's minimal pairs, `val/pairs/acc` (minibert.pairs: no fine-tuning,
so no fine-tuning lottery). An objective that cannot score a sentence is judged, with every arm it meets, by the
pairs' probe, `val/pairs/probe/acc`; a language none of whose pairs lies beyond its n-gram floors is left out.
`--finetune` judges the fully fine-tuned accuracy instead, with failed seeds as before. With --grid, the first
of --arms runs against each of the others on --metric. Either way seed s gives every arm the same training
stream and, where shapes match, initial weights; after each seed every pair still undecided looks at its
confidence sequence (anytime-valid, so looking after every seed costs nothing), Bonferroni across the pairs, and
stops when the sign is decided, when the interval lies inside ±--margin (equivalent), at the cap, or before a
seed that would pass --minutes (a stop at any look keeps the sequence's promise; minibert.report.comparison,
docs/statistics.md). Runs go through scripts/ablate.py into --out, so a killed comparison resumes where it
stopped when the same command is run again, and a larger --max-seeds extends it (the sequence continues; it
never starts over). The verdicts are printed and written to <out>/comparisons/<name>.md and .json.

--margin is in the printed unit: points for accuracies and gaps (1 = one point), the metric's own otherwise.
Exit codes as ablate.py's: 0, 1 (a run failed; its seed counts as failed), 2 (bad input), 3 (the machine).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import itertools
import math
import os
import re
import shlex
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import yaml

from minibert.ablation.grid import GridError, load_grid
from minibert.atomic_writes import write_atomic
from minibert.pairs.keys import PROBE, ZERO_SHOT
from minibert.report import render
from minibert.report.comparison import (
    ComparisonError,
    Design,
    Pair,
    is_proportion,
    judge,
    load_record,
    record_path,
    seeds_needed,
    table,
    value_range,
    write_record,
)
from minibert.report.query import Data
from minibert.report.table import FILE, TableError
from minibert.stats.betting import first_bound

try:  # imported from the checkout (tests), or run as `python scripts/compare.py` beside it
    from scripts import ablate
except ImportError:
    import ablate

ROOT = Path(__file__).resolve().parent.parent
EXIT_BAD_INPUT = 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="compare.py", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("objective", nargs="?", help="a plug-in file (path.py, or path.py:Class) or a class path")
    p.add_argument("--languages", help="with a plug-in: comma-separated, of --yardsticks (default: all)")
    p.add_argument(
        "--yardsticks",
        default="configs/compare.yaml",
        help="with a plug-in: languages, recipes and shipped arms to run against (default configs/compare.yaml)",
    )
    p.add_argument("--grid", help="instead of a plug-in: a grid file whose experiments are the arms")
    p.add_argument("--arms", help="with --grid: two or more experiments, comma-separated; the first is A")
    p.add_argument("--metric", help="with --grid: the figure judged, e.g. val/acc or val/gap/acc")
    p.add_argument("--all-pairs", action="store_true", help="with --grid: judge every pair of --arms, not the "
                   "first against each of the others")  # fmt: skip
    p.add_argument("--finetune", action="store_true", help="with a plug-in: judge the fine-tuned accuracy "
                   "(every arm fully fine-tuned) instead of the minimal pairs")  # fmt: skip
    p.add_argument("--out", help="results folder (default results/compare/<objective>-pairs[-<languages>], or "
                   "-finetune; with --grid required)")  # fmt: skip
    p.add_argument("--margin", type=float, default=1.0, help="equivalence margin in the printed unit (default 1)")
    p.add_argument("--max-seeds", type=int, default=40, help="cap on seeds per pair (default 40)")
    p.add_argument("--minutes", type=float, help="stop before a seed that would pass this many minutes, at this "
                   "machine's measured pace (the first look always runs)")  # fmt: skip
    p.add_argument("--first-seed", type=int, default=0, help="seeds are first-seed, first-seed + 1, ...")
    p.add_argument("--fails-below", type=float, help="with --grid: a seed below this value did not learn")
    p.add_argument(
        "--bounds",
        type=float,
        nargs=2,
        metavar=("LO", "HI"),
        help="with --grid and a metric that is "
        "not an accuracy or a gap: what one arm's figure can be, fixed before the first seed",
    )
    p.add_argument("--name", default=None, help="file name of the record in <out>/comparisons/ (default: verdicts)")
    p.add_argument("--workers", type=int, default=2, help="parallel runs (default 2)")
    p.add_argument("--plugins", action="append", default=[], metavar="DIR", help="as ablate.py's (repeatable)")
    args = p.parse_args(argv)
    if (args.objective is None) == (args.grid is None):
        p.error("give a plug-in objective, or --grid with --arms and --metric (not both)")
    if args.grid is not None and not (args.arms and args.metric and args.out):
        p.error("--grid needs --arms, --metric and --out")
    if args.grid is not None and args.finetune:
        p.error("--finetune goes with a plug-in objective; with --grid, name the figure with --metric")
    if args.objective is not None and (args.arms or args.metric or args.fails_below is not None or args.all_pairs
                                       or args.bounds):  # fmt: skip
        p.error("--arms, --metric, --all-pairs, --fails-below and --bounds go with --grid; a plug-in is judged on "
                "its --yardsticks")  # fmt: skip
    if args.bounds is not None and not args.bounds[0] < args.bounds[1]:
        p.error(f"--bounds {args.bounds[0]:g} {args.bounds[1]:g}: LO must be below HI")
    if args.grid is not None and args.languages:
        p.error("--languages goes with a plug-in objective, not --grid")
    if not args.margin > 0:
        p.error(f"--margin={args.margin}: must be > 0")
    if args.max_seeds < (fewest := first_bound()):  # a pair alone on [-1, 1]; a family needs more (checked later)
        p.error(f"--max-seeds={args.max_seeds}: must be at least {fewest} (no verdict is possible before)")
    if args.minutes is not None and not args.minutes > 0:
        p.error(f"--minutes={args.minutes}: must be > 0")
    if args.workers < 1:
        p.error(f"--workers={args.workers}: must be at least 1")
    for folder in args.plugins:
        if not Path(folder).is_dir():
            p.error(f"--plugins={folder}: not a folder")
    return args


# --- what is compared -------------------------------------------------------------------------------------


def find_objective(spec: str, plugins: list[str]) -> tuple[type, str, list[str]]:
    """(the class, its class path as a run's config names it, plug-in folders to import it from) for
    `path.py`, `path.py:Class` or `package.module.Class`."""
    from minibert.objectives import Objective

    file, _, cls_name = spec.partition(":") if spec.split(":")[0].endswith(".py") else (spec, "", "")
    if file.endswith(".py"):
        path = Path(file).resolve()
        if not path.is_file():
            raise ComparisonError(f"{file}: no such file")
        folder = str(path.parent)
        sys.path[:0] = [folder] if folder not in sys.path else []
        try:
            module = importlib.import_module(path.stem)
        except Exception as err:  # the plug-in's own code fails to import: one line, as `python -m minibert fit`
            where = f", line {err.lineno}" if isinstance(err, SyntaxError) and err.lineno else ""
            what = f"{type(err).__name__}: {getattr(err, 'msg', None) or err}"
            raise ComparisonError(f"{file}{where}: cannot import it ({what}); fix the plug-in and run again") from None
        found = {n: c for n, c in inspect.getmembers(module, inspect.isclass) if issubclass(c, Objective)
                 and c.__module__ == module.__name__ and not inspect.isabstract(c)}  # fmt: skip
        if cls_name:
            if cls_name not in found:
                raise ComparisonError(f"{spec}: no objective {cls_name!r} in {file}; it defines {sorted(found)}")
            found = {cls_name: found[cls_name]}
        if len(found) != 1:
            what = "no Objective subclass" if not found else f"{len(found)} objectives ({', '.join(sorted(found))})"
            raise ComparisonError(f"{file} defines {what}: name one as {file}:ClassName")
        ((name, cls),) = found.items()
        return cls, f"{path.stem}.{name}", [*plugins, folder]
    module_name, _, name = spec.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError, ValueError) as err:
        raise ComparisonError(f"{spec}: cannot import it ({err}); give a file path, or --plugins DIR") from None
    if not (inspect.isclass(cls) and issubclass(cls, Objective)):
        raise ComparisonError(f"{spec} is not an Objective subclass")
    return cls, spec, plugins


def check_out(out: Path, name: str | None) -> None:
    """Refuse, before anything is written, an --out that is a file and a --name that is not a plain file name."""
    if out.exists() and not out.is_dir():
        raise ComparisonError(f"--out {out}: a file, not a folder; give a folder for the runs and the record")
    record_path(out, name or "verdicts")


def default_folder(arm: str, args) -> str:
    """`<Class>-pairs` (or `-finetune`), and the languages asked for where not all: one folder per question, so
    that a comparison on other languages or another measure never meets another's record."""
    languages = [x.strip() for x in args.languages.split(",")] if args.languages else []
    return "-".join([arm, "finetune" if args.finetune else "pairs", *languages])


def plugin_grid(args, cls: type, class_path: str, out: Path) -> tuple[Path, list[Pair], dict]:
    """Write `<out>/grid.yaml` (the new objective and the shipped ones on each asked language, at one FLOP
    budget; with --finetune, each then fully fine-tuned) and return it, the pairs, and each language's timing
    source. Pairs judge `val/pairs/acc` until `pair_figures` has seen what each arm logs."""
    spec = yaml.safe_load((ROOT / args.yardsticks).read_text())["languages"]
    asked = [x.strip() for x in args.languages.split(",")] if args.languages else list(spec)
    if unknown := [x for x in asked if x not in spec]:
        raise ComparisonError(f"--languages: {unknown[0]!r} is not in {args.yardsticks}; valid: {', '.join(spec)}")
    arm = cls.__name__
    objective = out / "objective.yaml"
    write_atomic(objective, yaml.safe_dump({"model": {"init_args": {"objective": {"class_path": class_path}}}}))
    experiments, pairs, timing = [], [], {}
    for language in asked:
        lang = spec[language]
        arms = {**{k: v for k, v in lang["arms"].items() if k != arm}, arm: [_rel(objective)]}
        for name, extra in arms.items():
            pre = [lang["pretrain"][0], *extra, *lang["pretrain"][1:]]
            budget = {"budget.flops": float(lang["flops"]), "data.val_seed": None}
            if args.finetune:
                experiments.append({"name": f"{language}/pretrain/{name}", "job_type": "pretrain", "configs": pre,
                                    "overrides": budget | {"pair_eval.enabled": False}})  # fmt: skip
                experiments.append({"name": f"{language}/finetune/{name}-full", "job_type": "finetune",
                                    "configs": lang["finetune"], "encoder_from": f"{language}/pretrain/{name}",
                                    "overrides": {"model.init_args.regime": "full", "data.val_seed": None},
                                    "metrics": [lang["metric"]]})  # fmt: skip
            else:  # a language that makes no pairs is refused while the cell is built, in one line
                experiments.append({"name": f"{language}/pretrain/{name}", "job_type": "pretrain", "configs": pre,
                                    "overrides": budget | {"pair_eval.required": True}})  # fmt: skip
        if args.finetune:
            pairs += [Pair(f"{language}/finetune/{arm}-full", f"{language}/finetune/{name}-full", lang["metric"],
                           lang["fails_below"], language) for name in arms if name != arm]  # fmt: skip
        else:
            pairs += [Pair(f"{language}/pretrain/{arm}", f"{language}/pretrain/{name}", ZERO_SHOT, None, language)
                      for name in arms if name != arm]  # fmt: skip
        timing[language] = {**lang["timing"], "new": arm}
    grid = out / "grid.yaml"
    header = f"# Made by scripts/compare.py for {class_path}: the arms of configs/compare.yaml. Regenerated each run.\n"
    write_atomic(grid, header + yaml.safe_dump({"experiments": experiments}, sort_keys=False))
    return grid, pairs, timing


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


def _rel(path: Path) -> str:
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def estimate(timing: dict, pairs: list[Pair], workers: int, tables: list[Path]) -> float | None:
    """Seconds one seed of every arm takes with `workers` runs at a time: each arm's wall time in the first of
    `tables` (grid results folders: this --out, then the grid's committed one) that ran it, or for a plug-in's
    language its `timing` grid's arm of that name (the new arm priced as MLM, run at the same FLOP budget)."""
    read: dict[Path, Data | None] = {}  # each table read once

    def times(folder: Path, arm: str) -> float | None:
        if folder not in read:
            read[folder] = Data.load(folder) if (folder / FILE).is_file() else None
        return None if read[folder] is None else _run_time(read[folder], arm)

    total = 0.0
    for arm in sorted({p.a for p in pairs} | {p.b for p in pairs}):
        seconds = next((t for t in (times(folder, arm) for folder in tables) if t is not None), None)
        stage = "finetune" if "/finetune/" in arm else "pretrain"
        language, _, name = arm.partition(f"/{stage}/")
        if seconds is None and (t := timing.get(language)) is not None:
            shipped = "mlm" if name.removesuffix("-full") == t["new"] else name.removesuffix("-full")
            seconds = times(ROOT / "results" / t["grid"], t[stage].format(arm=shipped))
        if seconds is None:
            return None
        total += seconds
    return total / workers


def _run_time(data: Data, arm: str) -> float | None:
    """Mean wall time of `arm` in a grid's table (with its pre-training run's, for a fine-tuning arm named
    `<x>/finetune/<y>-full` after `<x>/pretrain/<y>`), or None where it never ran."""
    found = data.find("wall_time_s", experiment=arm)
    if found is None:
        return None
    upstream = arm.replace("/finetune/", "/pretrain/").removesuffix("-full")
    before = data.find("wall_time_s", experiment=upstream) if upstream != arm else None
    return found.mean + (before.mean if before is not None else 0.0)


# --- the run ----------------------------------------------------------------------------------------------


def built_keys(grid_path: Path, arms: list[str], out: Path, seed: int, plugins: list[str]) -> dict[str, set[str]]:
    """Every arm exists and is built (before any run trains); returns what each one logs."""
    from minibert.ablation.preflight import preflight
    from minibert.ablation.runner import plan

    grid = load_grid(grid_path, root=ROOT)
    if unknown := [a for a in arms if a not in grid.names]:
        raise GridError(f"--arms: {unknown[0]!r} is not an experiment of {_rel(grid_path)}; valid: "
                        f"{', '.join(grid.names)}")  # fmt: skip
    ablate.use_plugins(plugins)
    runs = [r for r in plan(grid.select(arms), [seed], out, ROOT) if r.experiment.name in arms]
    return preflight(runs, ROOT)


def check_metrics(pairs: list[Pair], keys: dict[str, set[str]]) -> None:
    """Both arms of every pair log the metric it judges."""
    for pair in pairs:
        for arm in (pair.a, pair.b):
            if pair.metric not in keys[arm]:
                logged = ", ".join(sorted(k for k in keys[arm] if k.startswith("val/"))[:12])
                raise GridError(f"--metric {pair.metric}: {arm} does not log it; it logs {logged}, ...")


def probe_lines(data: Data | None, pairs: list[Pair]) -> list[str]:
    """For every pair judged zero-shot on minimal pairs, the probe's reading of the same seeds beside it: a
    fixed-sample 95% interval of A - B, printed for reading and not a verdict (the probe is not what is judged)."""
    if data is None:
        return []
    lines = []
    for p in pairs:
        if (
            p.metric != ZERO_SHOT
            or data.find(PROBE, experiment=p.a) is None
            or data.find(PROBE, experiment=p.b) is None
        ):
            continue
        iv = data.diff(PROBE, {"experiment": p.a}, {"experiment": p.b}).interval
        lines.append(f"- {p.a} − {p.b}, probe ({PROBE}): {100 * iv.mean:+.1f} ({100 * iv.lo:+.1f} to "
                     f"{100 * iv.hi:+.1f}) points over {iv.seeds} seeds")  # fmt: skip
    if lines:
        lines = ["", "The rule-free reading of the same encoders (docs/pairs.md), a fixed-sample 95% interval for "
                 "reading beside the verdicts, not a verdict:", "", *lines]  # fmt: skip
    return lines


def next_steps(data: Data, design: Design, judged: list, command: str) -> list[str]:
    """For every pair still open or capped, the seeds its sequence would need at the spread observed so far, and
    the command that continues the comparison to that many seeds (the sequence goes on; nothing is re-run)."""
    lines, most = [], 0
    for j in judged:
        if j.verdict.reason in ("sign decided", "interval inside ±m") or (found := seeds_needed(design, j)) is None:
            continue
        seeds, mean, sd, need = found
        scale = 100 if is_proportion(j.pair.metric) else 1
        said = f"about {need} seeds" if need else "more seeds than any budget holds (its spread is wide for its mean)"
        lines.append(f"- {j.pair.a} vs {j.pair.b}: mean {scale * mean:+.2f}, SD {scale * sd:.2f} over {seeds} "
                     f"seeds: a decision at this spread would take {said}")  # fmt: skip
        most = max(most, need or 0)
    if not lines:
        return []
    rerun = re.sub(r"\s--(max-seeds|minutes)[ =]\S+", "", command) + f" --max-seeds {max(most, design.cap + 1)}"
    return ["", "Open pairs, at the spread seen so far (a planning figure, not a promise):", "", *lines, "",
            f"Continue (every seed run so far is reused): `{rerun}`"]  # fmt: skip


def _measure_line(finetune: bool) -> str:
    if finetune:
        return ("the fully fine-tuned accuracy (--finetune): a seed below the language's `fails_below` did not "
                "learn, and its failure rate is reported apart.")  # fmt: skip
    return (
        f"the minimal pairs, {ZERO_SHOT}: the share of pairs (one edit apart, one sentence in the language) "
        "whose good sentence the encoder's own objective scores higher, zero-shot, over the cells no n-gram "
        "floor solves (docs/pairs.md). No fine-tuning, so no fine-tuning lottery; --finetune judges that."
    )


def run_seeds(args, grid: Path, out: Path, arms: list[str], seeds: list[int], plugins: list[str]) -> int:
    argv = ["--grid", _rel(grid), "--out", str(out), "--only", ",".join(arms), "--seed-list",
            ",".join(map(str, seeds)), "--workers", str(args.workers), "--no-report"]  # fmt: skip
    for folder in plugins:
        argv += ["--plugins", folder]
    return ablate.main(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    command = "python scripts/compare.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])
    )
    made = None  # a folder this invocation created: removed again if the comparison is refused before training
    try:
        if args.objective is not None:
            cls, class_path, plugins = find_objective(args.objective, args.plugins)
            out = Path(args.out or ROOT / "results" / "compare" / default_folder(cls.__name__, args)).resolve()
            check_out(out, args.name)
            made = None if out.exists() else out
            grid, pairs, timing = plugin_grid(args, cls, class_path, out)
        else:
            out, grid, plugins, timing = Path(args.out).resolve(), (ROOT / args.grid).resolve(), args.plugins, {}
            check_out(out, args.name)
            arms = [a.strip() for a in args.arms.split(",") if a.strip()]
            if len(arms) < 2 or len(set(arms)) < len(arms):
                raise ComparisonError(f"--arms={args.arms}: give two or more different experiments")
            firsts = itertools.combinations(arms, 2) if args.all_pairs else ((arms[0], b) for b in arms[1:])
            pairs = [Pair(a, b, args.metric, args.fails_below) for a, b in firsts]
        arms = list(dict.fromkeys([p.a for p in pairs] + [p.b for p in pairs]))
        keys = built_keys(grid, arms, out, args.first_seed, plugins)
        notes = []
        if args.objective is not None and not args.finetune:
            pairs, notes = pair_figures(pairs, keys)
            if not pairs:
                raise ComparisonError("no language left to judge on minimal pairs: " + "; ".join(notes))
        check_metrics(pairs, keys)
        scale = 100 if all(is_proportion(p.metric) for p in pairs) else 1
        path = record_path(out, args.name or "verdicts")
        recorded = load_record(path)
        committed = [] if args.grid is None else [ROOT / "results" / Path(args.grid).stem]
        per_seed = estimate(timing, pairs, args.workers, [out, *committed])
        cap = args.max_seeds
        bounds = tuple(args.bounds) if args.bounds else None
        if bounds is not None and (known := [p.metric for p in pairs if value_range(p.metric)]):
            raise ComparisonError(f"--bounds: {known[0]} has its own range {list(value_range(known[0]))}, which a "
                                  "design does not narrow")  # fmt: skip
        design = Design(pairs, args.margin / scale, cap, first_seed=args.first_seed, command=command, bounds=bounds)
        first = design.first_look(pairs)
        if cap < first:
            raise ComparisonError(f"--max-seeds={cap}: these {len(pairs)} pair(s) can be decided no sooner than "
                                  f"after {first} seeds; give at least that")  # fmt: skip
        looks: dict[str, int] = {}
        if recorded is not None:
            before = recorded["design"]
            design = replace(design, earlier=before.earlier)  # what it was first judged by, if not this sequence
            if why := design.same_question(before, scale):
                raise ComparisonError(f"{_rel(path)} records another comparison ({why}): give another --name, "
                                      "or the settings it was made with to continue it")  # fmt: skip
            looks = {k: int(v) for k, v in recorded["looks"].items()}
            extended = before.extended_from + ([before.cap] if design.cap > before.cap else [])
            design = replace(design, extended_from=extended)
    except (ComparisonError, GridError, TableError) as err:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        print(f"compare.py: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT

    cap = design.cap
    unit = "points" if scale == 100 else "units"
    if args.objective is not None:
        print(f"compare.py: judged on {_measure_line(args.finetune)}", file=sys.stderr)
    for note in notes:
        print(f"compare.py: {note}", file=sys.stderr)
    families = ", ".join(f"{k} ({name})" if name else str(k) for name, k in design.families.items())
    together = len(design.families)
    overall = (
        f", so a wrong verdict anywhere with probability at most {design.alpha * together:g}" if together > 1 else ""
    )
    print(f"compare.py: {len(pairs)} pair(s) in families of {families}, each family held at {design.alpha:g} "
          f"(Bonferroni){overall}; margin ±{args.margin:g} {unit}; at most {cap} seeds per pair, no verdict before "
          f"{design.first_look(pairs)} (the betting sequence: valid on any per-seed figures, docs/statistics.md).",
          file=sys.stderr)  # fmt: skip
    if per_seed is None:
        print(
            "compare.py: no time estimate: no table in --out or results/ holds these arms' wall times.", file=sys.stderr
        )
    else:
        print(f"compare.py: about {per_seed / 60:.1f} min a seed with {args.workers} workers (from recorded "
              f"runs' wall times, which may come from a slower or faster machine): the first look about "
              f"{first * per_seed / 60:.0f} min, the cap about {cap * per_seed / 60:.0f} min.",
              file=sys.stderr)  # fmt: skip
    if args.minutes is not None:  # the clock, not the estimate, stops it: the pace is re-measured on every seed
        fits = "" if per_seed is None else f" (about {max(first, math.floor(args.minutes * 60 / per_seed))} seeds)"
        print(f"compare.py: --minutes {args.minutes:g}: after the first look, stops before a seed that would pass "
              f"it{fits}, at the pace this machine shows.", file=sys.stderr)  # fmt: skip

    code, seed_time, clock = 0, per_seed or 0.0, None  # clock: the look --minutes stopped at
    while True:
        data = Data.load(out) if (out / FILE).is_file() else None
        judged = judge(data, design, looks) if data is not None else []
        open_pairs = [p for p in pairs if looks.get(p.label, 0) < cap and not any(
            j.pair == p and j.stopped and j.looks > 0 for j in judged)]  # fmt: skip
        if judged:
            write_record(path, design, looks, judged, [f"# {len(pairs)} pair(s) in {_rel(out)}", "",
                         f"- command: `{command}`", f"- wall time of this invocation: "
                         f"{time.perf_counter() - start:.0f} s", "", *table(design, judged, clock),
                         *probe_lines(data, pairs), *next_steps(data, design, judged, command)],
                         {"wall_s": round(time.perf_counter() - start, 1), "clock": clock})  # fmt: skip
        if not open_pairs:
            break
        look = min(looks.get(p.label, 0) for p in open_pairs)
        first = design.first_look(open_pairs)
        batch = design.seeds(max(look + 1, min(first, cap)))[look:]  # seeds before the first bound, at once
        arms = list(dict.fromkeys(a for p in open_pairs for a in (p.a, p.b)))
        spent = time.perf_counter() - start
        if args.minutes is not None and look >= first and spent + seed_time * len(batch) > args.minutes * 60:
            # a stop on the clock is a stop like any other for a confidence sequence: the open pairs end capped
            print(f"compare.py: the next seed would pass --minutes {args.minutes:g} (a seed takes about "
                  f"{seed_time / 60:.1f} min here): stopping at {look} seeds", file=sys.stderr)  # fmt: skip
            cap = clock = look
            design = replace(design, cap=cap)
            continue
        print(f"compare.py: seed(s) {', '.join(map(str, batch))} of {len(arms)} arm(s); {len(open_pairs)} of "
              f"{len(pairs)} pair(s) open", file=sys.stderr)  # fmt: skip
        began = time.perf_counter()
        status = run_seeds(args, grid, out, arms, batch, plugins)
        seed_time = (time.perf_counter() - began) / len(batch)  # this machine's own pace, for the clock
        if status in (ablate.EXIT_BAD_INPUT, ablate.EXIT_ENVIRONMENT):
            return status
        code = max(code, status)  # a failed run: its seed counts as failed for the pairs that need it
        for p in open_pairs:
            looks[p.label] = looks.get(p.label, 0) + len(batch)
    render.publish(out, load_grid(grid, root=ROOT), ROOT)  # every page this table feeds, with the record as it stands
    print(
        "\n".join(
            [*table(design, judged, clock), *probe_lines(data, pairs), *next_steps(data, design, judged, command)]
        )
    )
    print(f"wrote {_rel(path)} and {_rel(path.with_suffix('.md'))}; {time.perf_counter() - start:.0f} s")
    return code


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
