"""A comparison from its request to its record: build the pairs and the design, then run seed after seed
through `minibert.sweep.Sweep` and look at every open pair after each, until none is open.

Seed s gives every arm the same training stream and, where shapes match, initial weights. After each seed,
every pair still open looks at its confidence sequence (anytime-valid, so looking after every seed costs
nothing; Bonferroni across a family's pairs) and stops when its sign is decided, when its interval lies inside
±margin (equivalent), at the cap, or before a seed that would pass the request's minutes (a stop at any look
keeps the sequence's promise; minibert.compare.comparison, docs/statistics.md). The runs go into the request's
folder, so a killed comparison resumes where it stopped when asked again, and a larger cap extends it (the
sequence continues; it never starts over).
"""

from __future__ import annotations

import itertools
import math
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from minibert.ablation.grid import Grid, GridError, load_grid
from minibert.compare.committed import Borrowed, borrow
from minibert.compare.comparison import (
    Design,
    Pair,
    is_gap,
    is_proportion,
    judge,
    load_record,
    table,
    value_range,
    write_record,
)
from minibert.compare.errors import ComparisonError, record_path
from minibert.compare.objective import find_objective
from minibert.compare.reading import cost_lines, design_lines, measure_line, next_steps, probe_lines
from minibert.compare.request import DEFAULT_OUT, PUBLISHED_OUT, Request
from minibert.compare.timing import estimate
from minibert.compare.yardsticks import default_folder, judged_figures, plugin_grid, relative
from minibert.places import shown
from minibert.sweep import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, ROOT, Sweep, use_plugins
from minibert.tables import sealed
from minibert.tables import table as table_file
from minibert.tables.query import Data
from minibert.tables.table import FILE, TableError


@dataclass
class _Comparison:
    """What a request became: where its runs go, its grid and pairs, the design and the looks already made."""

    request: Request
    out: Path
    grid: Path
    plugins: list[str]
    pairs: list[Pair]
    design: Design
    looks: dict[str, int]  # pair label -> seeds it has looked at
    record: Path
    notes: list[str]
    per_seed: float | None  # seconds a seed of the arms that train takes, from recorded wall times
    borrowed: Borrowed  # the committed yardstick runs paired with instead of trained

    def training(self, arms: list[str], seeds: list[int]) -> list[str]:
        """Those of `arms` that train some of `seeds` here (the rest are committed yardsticks)."""
        return [a for a in arms if self.borrowed.trains(a, seeds)]

    @property
    def scale(self) -> int:
        return _scale(self.pairs)


def compare(request: Request, render: Callable[[Path, Grid, Path], list[Path]] | None = None) -> int:
    """Run the comparison `request` asks for to its end; the exit code as a Sweep's (a failed run counts as a
    failed seed of the pairs that need it), errors said in one line. `render`, where given, renders every page
    the comparison's table feeds once it stops (scripts/compare.py: minibert.report.render.publish)."""
    start = time.perf_counter()
    made = None  # a folder this comparison created: removed again if it is refused before training
    try:
        request.check()
        out = _out(request)
        made = None if out.exists() else out
        comparison = _prepare(request, out)
        _fits_the_clock(comparison)
    except (ComparisonError, GridError, TableError) as err:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        print(f"compare.py: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _say(comparison)
    return _loop(comparison, start, render)


def _fits_the_clock(c: _Comparison) -> None:
    """ComparisonError, before anything trains, when `--minutes` cannot hold the seeds the first look still needs
    (those every arm has not run in the folder yet), at the recorded pace: the clock is honoured from the first
    seed, unless `--overrun` accepts it."""
    minutes = c.request.minutes
    if minutes is None or c.per_seed is None or c.request.overrun:
        return
    if (cost := (todo := _first_look_left(c)) * c.per_seed) > minutes * 60:
        raise ComparisonError(f"--minutes {minutes:g}: the first look runs {todo} seeds at once (no verdict comes "
                              f"sooner), about {cost / 60:.0f} min at the recorded pace; give more --minutes, fewer "
                              "--languages, --shrink to judge fewer pairs, or --overrun to run it "
                              "regardless")  # fmt: skip


def _first_look_left(c: _Comparison) -> int:
    """Seeds of the first look that some arm has not run yet (in the folder, or as a committed yardstick)."""
    data = Data.load(c.out) if (c.out / FILE).is_file() else None  # runs already in the folder are reused
    covered = [{s for a, s in c.borrowed.covered if a == arm} for arm in c.design.arms]
    return len(_unrun(data, c.design.arms, c.design.seeds(c.design.first_look(c.pairs)), covered))


def _unrun(data: Data | None, arms: list[str], seeds: list[int], covered: list[set] | None = None) -> list[int]:
    """Those of `seeds` that some of `arms` has not run in the folder's table `data` (nor, where given, in the
    seeds `covered` for it)."""
    ran = [set(data.seeds(experiment=arm)) if data is not None else set() for arm in arms]
    ran = [r | more for r, more in zip(ran, covered or [set()] * len(arms))]
    return [s for s in seeds if not all(s in r for r in ran)]


def _out(request: Request) -> Path:
    """The comparison's folder (`Request.check` has checked that it can be written)."""
    if request.out is not None:
        out = Path(request.out).resolve()
    else:
        arm = find_objective(request.objective, request.plugins)[0].__name__
        parent = PUBLISHED_OUT if request.publish else DEFAULT_OUT
        out = (ROOT / parent / default_folder(arm, request.finetune, request.languages)).resolve()
    return out


def _prepare(request: Request, out: Path) -> _Comparison:
    """The grid, the pairs (as the arms' logged figures allow), and the design, continued from the record where
    one exists and asks the same question."""
    timing, notes, made = {}, [], None
    if request.objective is not None:
        cls, class_path, plugins = find_objective(request.objective, request.plugins)
        made = plugin_grid(request, cls, class_path, out)
        grid, pairs, timing = made.path, made.pairs, made.timing
    else:
        grid, plugins = (ROOT / request.grid).resolve(), list(request.plugins)
        arms = request.arms
        firsts = itertools.combinations(arms, 2) if request.all_pairs else ((arms[0], b) for b in arms[1:])
        pairs = [Pair(a, b, request.metric, request.fails_below) for a, b in firsts]
    keys = _built_keys(grid, list(dict.fromkeys([p.a for p in pairs] + [p.b for p in pairs])), out, request, plugins)
    if made is not None and not request.finetune:
        pairs, notes = judged_figures(made, keys)
        if not pairs:
            raise ComparisonError("no language left to judge on its declared figures: " + "; ".join(notes))
    _check_metrics(pairs, keys)
    if request.bounds is not None and (known := [p.metric for p in pairs if value_range(p.metric)]):
        raise ComparisonError(f"--bounds: {known[0]} has its own range {list(value_range(known[0]))}, which a design "
                              "does not narrow")  # fmt: skip
    # seed s gives every arm the validation set of seed s, so two gaps share its ceiling (checked on every seed)
    design = Design(pairs, request.max_seeds, request.band(), first_seed=request.first_seed,
                    command=request.command, bounds=tuple(request.bounds) if request.bounds else None,
                    same_questions=any(is_gap(p.metric) for p in pairs))  # fmt: skip
    for pair in pairs:  # the mean's sequence, and a run with no figure, need one arm's range
        design.range(pair)
    if request.max_seeds < (first := design.first_look(pairs)):
        raise ComparisonError(f"--max-seeds={request.max_seeds}: these {len(pairs)} pair(s) can be decided no sooner "
                              f"than after {first} seeds; give at least that")  # fmt: skip
    path = record_path(out, request.name or "verdicts")
    looks: dict[str, int] = {}
    if (recorded := load_record(path)) is not None:
        before = recorded["design"]
        design = replace(design, earlier=before.earlier)  # what it was first judged by, if not this sequence
        if why := design.same_question(before):
            raise ComparisonError(f"{relative(path)} records another comparison ({why}): give another --name, or the "
                                  "settings it was made with to continue it")  # fmt: skip
        looks = {k: int(v) for k, v in recorded["looks"].items()}
        design = replace(design, extended_from=before.extended_from + ([before.cap] if design.cap > before.cap else []))
    borrowed = Borrowed()
    if made is not None and not request.finetune:  # the shipped arms pair with today's committed yardsticks
        shipped = list(dict.fromkeys(p.b for p in pairs))
        borrowed = borrow(load_grid(grid, root=ROOT), shipped, design.seeds(design.cap), out, request.fresh_yardsticks)
        notes += borrowed.notes
    committed = [] if request.grid is None else [ROOT / "results" / Path(request.grid).stem]
    first_seeds = design.seeds(design.first_look(pairs))

    def pace(kept: list[Pair]) -> float | None:  # seconds a seed of the arms of `kept` that train here takes
        arms = [a for p in kept for a in (p.a, p.b) if borrowed.trains(a, first_seeds)]
        return estimate(timing, arms, request.workers, [out, *committed])

    if looks:
        _still_paired(out, design, looks, borrowed, path)
    comparison = _Comparison(request, out, grid, plugins, pairs, design, looks, path, notes, pace(pairs), borrowed)
    if request.shrink and recorded is None:
        comparison = _shrunk(comparison, pace)
    return comparison


def _still_paired(out: Path, design: Design, looks: dict[str, int], borrowed: Borrowed, record: Path) -> None:
    """ComparisonError where a resumed comparison looked at committed runs that no longer stand in (stale since,
    or --fresh-yardsticks) and did not run here: they would count as missing, at the arm's worst, and the verdict
    would lean on that."""
    before = out / table_file.BORROWED  # what the last invocation paired with, until this one writes its own
    if not before.is_file():
        return
    looked = set(design.seeds(max(looks.values())))
    sealed.check(before, "give another --out to start again")  # a list cut since would hide runs it paired with
    paired = pd.read_csv(before, usecols=["experiment", "seed"]).drop_duplicates()
    own = table_file.read(out, borrowed=False)[["experiment", "seed"]].drop_duplicates() if (out / FILE).is_file() \
        else paired.iloc[:0]  # fmt: skip
    ran = set(zip(own["experiment"], own["seed"].astype(int)))
    lost = sorted({(a, int(x)) for a, x in zip(paired["experiment"], paired["seed"]) if int(x) in looked}
                  - ran - borrowed.covered)  # fmt: skip
    if lost:
        arm, seeds = lost[0][0], [x for a, x in lost if a == lost[0][0]]
        listed = ", ".join(map(str, seeds[:5])) + (", ..." if len(seeds) > 5 else "")
        raise ComparisonError(f"{relative(record)} paired {arm}'s seeds {listed} with committed runs that no longer "
                              "stand in (stale, or --fresh-yardsticks): continue with the yardsticks it paired with, "
                              "or give another --out to start again")  # fmt: skip


def _shrunk(c: _Comparison, pace) -> _Comparison:
    """With `--shrink`, where `--minutes` cannot hold the first look: the design with its last pairs left out, one
    at a time (the yardsticks file lists MLM first), until the first look fits; declared before any run, from the
    recorded pace alone (never from a figure), so the smaller family holds as any other. Said in one line."""
    minutes, pairs = c.request.minutes, list(c.pairs)
    if minutes is None or c.per_seed is None:
        return c

    def cost(kept: list[Pair]) -> float:  # seconds of the first look of a family of `kept`
        return replace(c.design, pairs=kept).first_look(kept) * pace(kept)

    while len(pairs) > 1 and cost(pairs) > minutes * 60:  # the yardsticks listed last go first
        pairs.pop()
    if len(pairs) == len(c.pairs):
        return c
    left = [p.b.rsplit("/", 1)[-1] for p in c.pairs if p not in pairs]
    print(f"compare.py: --shrink: the first look of every pair would pass --minutes {minutes:g}; judging "
          f"{len(pairs)} of {len(c.pairs)} pair(s), leaving out {', '.join(left)} (the last listed)",
          file=sys.stderr)  # fmt: skip
    return replace(c, pairs=pairs, design=replace(c.design, pairs=pairs), per_seed=pace(pairs))


def _built_keys(grid_path: Path, arms: list[str], out: Path, request: Request, plugins: list[str]) -> dict[str, set]:
    """Every arm exists and is built (before any run trains); returns what each one logs."""
    from minibert.ablation.preflight import preflight
    from minibert.ablation.runner import plan

    grid = load_grid(grid_path, root=ROOT)
    if unknown := [a for a in arms if a not in grid.names]:
        raise GridError(f"--arms: {unknown[0]!r} is not an experiment of {relative(grid_path)}; valid: "
                        f"{', '.join(grid.names)}")  # fmt: skip
    use_plugins(plugins)
    runs = [r for r in plan(grid.select(arms), [request.first_seed], out, ROOT) if r.experiment.name in arms]
    return preflight(runs, ROOT)


def _check_metrics(pairs: list[Pair], keys: dict[str, set[str]]) -> None:
    """Both arms of every pair log the metric it judges."""
    for pair in pairs:
        for arm in (pair.a, pair.b):
            if pair.metric not in keys[arm]:
                logged = ", ".join(sorted(k for k in keys[arm] if k.startswith("val/"))[:12])
                raise GridError(f"--metric {pair.metric}: {arm} does not log it; it logs {logged}, ...")


def _say(c: _Comparison) -> None:
    """What is judged, the design and what it will cost, before the first seed."""
    unit = "points" if c.scale == 100 else "units"
    metrics = [p.metric for p in c.pairs]
    lines = [f"judged on {measure_line(c.request.finetune, metrics)}"] if c.request.objective is not None else []
    lines += [*c.notes, *design_lines(c.design, unit)]
    lines += cost_lines(c.design, c.per_seed, c.request.workers, c.request.minutes, _first_look_left(c),
                        min(c.looks.values(), default=0))  # fmt: skip
    for line in lines:
        print(f"compare.py: {line}", file=sys.stderr)


def _loop(c: _Comparison, start: float, render: Callable | None) -> int:
    """Seeds until no pair is open; the record is rewritten after every look, so a killed comparison loses
    nothing but the seed it was running."""
    request, design, looks = c.request, c.design, c.looks
    code, seed_time, clock, wall = 0, c.per_seed or 0.0, None, 0.0  # clock: the look the minutes stopped at
    first_train = c.training(c.design.arms, c.design.seeds(c.design.first_look(c.pairs)))
    round_time = seed_time * request.workers / max(1, len(first_train))  # seconds one run takes on a worker
    measured = False  # whether round_time is this machine's, from runs of this command, or still the recorded one
    while True:
        c.borrowed.write(c.out, design.seeds(max(looks.values(), default=0)))  # the committed rows looked at
        data = Data.load(c.out) if (c.out / FILE).is_file() else None
        judged = judge(data, design, looks) if data is not None else []
        open_pairs = [p for p in c.pairs if looks.get(p.label, 0) < design.cap and not any(
            j.pair == p and j.stopped and j.looks > 0 for j in judged)]  # fmt: skip
        if judged:
            body = _verdicts(c, data, design, judged, clock, seed_time or None)
            wall = round(time.perf_counter() - start, 1)  # one figure: the record's, its page's and the last line's
            write_record(c.record, design, looks, judged, [f"# {len(c.pairs)} pair(s) in {relative(c.out)}", "",
                         f"- command: `{request.command}`", f"- wall time of this invocation: {wall:.0f} s", "",
                         *body], {"wall_s": wall, "clock": clock})  # fmt: skip
        if not open_pairs:
            break
        look = min(looks.get(p.label, 0) for p in open_pairs)
        first = design.first_look(open_pairs)
        arms = list(dict.fromkeys(a for p in open_pairs for a in (p.a, p.b)))
        # the seeds before the first bound at once; after it, enough seeds to keep every worker busy when few
        # arms train a seed (the others committed yardsticks): a look after two seeds is as valid as after one
        alone = c.training(arms, design.seeds(look + 1)[look:])  # the arms the next seed trains here
        batch = design.seeds(min(design.cap, max(look + max(1, request.workers // max(1, len(alone))), first)))[look:]
        while look >= first and len(batch) > 1 and len(c.training(arms, batch)) > len(alone):
            batch = batch[:-1]  # past the committed seeds more arms train: one seed at a time from there
        wave = [] if measured or look >= first else _unrun(data, c.training(arms, batch), batch)
        if len(wave) * max(1, len(alone)) > request.workers:
            # a first wave, one run a worker, measures this machine's pace as it is now (its load included)
            # before the rest of the first look is priced and run; the seeds before it are in the folder already
            wave = wave[: max(1, request.workers // max(1, len(alone)))]
            batch = batch[: batch.index(wave[-1]) + 1]
        else:
            wave = []
        train = c.training(arms, batch)
        rounds = math.ceil(len(train) * len(wave or batch) / request.workers)  # runs one after another on a worker
        spent = time.perf_counter() - start
        if request.minutes is not None and look >= first and spent + round_time * rounds > request.minutes * 60:
            # a stop on the clock is a stop like any other for a confidence sequence: the open pairs end capped
            print(f"compare.py: the next seed would pass --minutes {request.minutes:g} (it takes about "
                  f"{round_time * rounds / len(batch) / 60:.1f} min here): stopping at {look} seeds",
                  file=sys.stderr)  # fmt: skip
            design = replace(design, cap=look)
            clock = look
            continue
        print(f"compare.py: seed(s) {', '.join(map(str, batch))} of {len(train)} arm(s) trained here"
              f"{f' and {len(arms) - len(train)} committed' if len(train) < len(arms) else ''}; {len(open_pairs)} "
              f"of {len(c.pairs)} pair(s) open", file=sys.stderr)  # fmt: skip
        began = time.perf_counter()
        status = Sweep(relative(c.grid), c.out, seeds=batch, only=train, workers=request.workers,
                       plugins=c.plugins, command=request.command, stop_on_crash=True, quiet=True,
                       prog="compare.py").run()  # fmt: skip
        took = time.perf_counter() - began
        seed_time, round_time = took / len(batch), took / max(1, rounds)  # this machine's own pace, for the clock
        if status in (EXIT_BAD_INPUT, EXIT_ENVIRONMENT):
            return status
        code = max(code, status)  # a failed run: its seed counts as failed for the pairs that need it
        for p in open_pairs:
            looks[p.label] = looks.get(p.label, 0) + len(batch)
        if wave:
            measured = True
            if (said := _paced(c, arms, look + len(batch), first, round_time, time.perf_counter() - start)) is not None:
                print(f"compare.py: error: {said}", file=sys.stderr)
                return EXIT_BAD_INPUT
    if render is not None:  # every page this table feeds, the record as it is
        render(c.out, load_grid(c.grid, root=ROOT), ROOT)
    print("\n".join(_verdicts(c, data, design, judged, clock, seed_time or None)))
    print(f"wrote {shown(c.record)} and {shown(c.record.with_suffix('.md'))}; {wall:.0f} s (the record's wall time)")
    return code


def _paced(c: _Comparison, arms: list[str], looked: int, first: int, run_s: float, spent: float) -> str | None:
    """Say what is left at this machine's pace (`run_s`: seconds a run took on a worker in this command's first
    wave); where the rest of the first look would pass --minutes (and --overrun does not accept it), the refusal."""
    seeds = c.design.seeds(max(first, looked))[looked:]
    left = math.ceil(len(c.training(arms, seeds)) * len(seeds) / c.request.workers) * run_s
    per_seed = run_s * len(c.training(arms, c.design.seeds(looked + 1)[looked:])) / c.request.workers
    cap = left + (c.design.cap - max(first, looked)) * per_seed
    print(f"compare.py: this machine's pace, measured on its first runs: about {run_s / 60:.1f} min a run with "
          f"{c.request.workers} workers; the first look about {left / 60:.0f} min more, the cap about "
          f"{cap / 60:.0f} min more", file=sys.stderr)  # fmt: skip
    minutes = c.request.minutes
    if minutes is None or c.request.overrun or not seeds or spent + left <= minutes * 60:
        return None
    return (
        f"--minutes {minutes:g}: the rest of the first look ({len(seeds)} seeds, no verdict comes sooner) would "
        f"take about {left / 60:.0f} min more at this machine's pace, past the {minutes:g} min; the runs made are "
        "kept, so the same command with more --minutes (or --overrun) continues"
    )


def _verdicts(
    c: _Comparison, data: Data | None, design: Design, judged: list, clock: int | None, pace: float | None
) -> list[str]:
    """The verdicts' table, the probe's reading beside it and what would decide the open pairs (`pace`: seconds a
    seed of every arm takes here)."""
    return [
        *table(design, judged, clock),
        *probe_lines(data, c.pairs),
        *next_steps(data, design, judged, c.request.command, pace),
    ]


def _scale(pairs: list[Pair]) -> int:
    """The printed unit: points (100) when every pair judges a proportion, the metric's own (1) otherwise."""
    return 100 if all(is_proportion(p.metric) for p in pairs) else 1
