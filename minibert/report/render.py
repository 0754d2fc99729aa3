"""Every page from the results tables, by one command:

    python -m minibert.report            # rebuild every grid's report and every page (seconds)
    python -m minibert.report --check    # exit 1 naming each page that its table would change, and each
                                         # committed yardstick table today's training code did not make

Exit statuses: 0 done (with --check: every page is current); 1 with --check only: a page would change (each is
named); 2 an error, in one line, before anything is written: a --root that is not a minibert checkout, a damaged
table (named with its line and column), a grid or page that asks for what the tables do not hold.

A page is a Jinja2 template under `configs/pages/`, at the path of the page it renders
(`configs/pages/results/dyck.md.j2` -> `results/dyck.md`): Markdown with the numbers left as queries of the
grids' tables, so none is typed. A template sees:
- `grid(name)`: that grid's `minibert.tables.query.Data` (`grid("dyck")` reads `results/dyck/`; "default"
  reads `results/`), with `.stat(...)`, `.diff(...)`, `.total(...)`, `.seeds(...)`, `.made` (run.json);
- `table(header, rows)`: a Markdown table; `fmt(interval)`, `number(x, scale=100, digits=1)`; a figure's
  `sd(stat)`, and its `lo(stat)` and `hi(stat)` seed; a difference's verdict is its own (`Diff.verdict`);
- formatters (minibert.tables.stats): `minutes(s)`, `hours(s, workers=)`, `percent(share)`, `span(seeds)`,
  `multiple(budget)`, `flops(x)`, `rate(lr)`, `verb(stem, subjects)`; a template computes nothing itself
  (tests/pages/test_template_logic.py): what it compares, adds or picks, its model does;
- `pace(name, record, first)`: how fast a recorded comparison ran against the first one (minibert.report.pace);
- `comparison(name, record)`: a comparison scripts/compare.py recorded in that grid's folder, judged on its table
  (minibert.compare.comparison.Recorded);
- `study(name)`: the predictive-validity study in that grid (minibert.report.validity.Study); `has_grid(name)`;
- `measured(name)`: a figure measured outside any table (minibert.report.measurements, results/measurements.yaml);
- `answer(name, metric, a, b)`: A - B judged once (a recorded comparison's sequence where one holds the pair);
  `dyck_answer()`: the Dyck page's answer table (minibert.report.dyck), `dyck_page()` its other tables
  (minibert.report.dyck_page); `transfer()`: Dyck's comparisons judged on Dyck and on text, and whether they
  agree (minibert.report.transfer);
- `pairs(name, validity)`: the minimal-pairs page model of that grid, read against the validity study's grid
  where it exists (minibert.report.pairs.PairsPage); `digest()`: docs/results.md's answers, one per grid
  (minibert.report.digest); `writeup()`: the write-up reproduced figure by figure (minibert.report.writeup.WriteUp,
  its published figures from configs/ablations/default.yaml); `finetune()`: the fine-tuning page's
  (minibert.report.finetune);
- a page's model of one grid, by the page's name (`GRID_MODELS`: `scaling(name)`, `structure(name)`, ...): the
  model class of `minibert.report.<that name>` over the grid;
- `forest(name, rows, title)`, `lines(name, series, xlabel, ylabel, title)` and `scatter(name, panels, title)`:
  a figure written beside the page (`name` relative to it), returning its Markdown.
Undefined names are errors (StrictUndefined), so a renamed column breaks the build, not the page. A template named
`_*.j2` (configs/pages/_shared.j2) is imported by pages, never rendered as one. Every page that reads a table ends
with its families' line and a line saying which code made each table (minibert.tables.provenance).
"""

from __future__ import annotations

import functools
import importlib
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import jinja2

from minibert.ablation.grid import Grid, GridError
from minibert.atomic_writes import write_atomic
from minibert.compare import comparison
from minibert.report import (
    command,
    digest,
    dyck,
    dyck_gap,
    dyck_page,
    figures,
    finetune,
    grid_report,
    length,
    masking,
    masking_rate,
    measurements,
    objectives,
    pace,
    pairs,
    probes,
    recipe,
    scaling,
    settings,
    structure,
    text,
    text_recipe,
    transfer,
    validity,
    verdicts,
    writeup,
)
from minibert.tables import provenance, questions, stats
from minibert.tables.query import Data, QueryError, Stat, markdown_table
from minibert.tables.record import grid_of
from minibert.tables.table import FILE, TableError, tables_under

PAGES = Path("configs/pages")
EXIT_CHANGED, EXIT_BAD_INPUT = 1, 2


class ReportError(TableError):
    """The pages cannot be built from the tables as asked; the message says what and where, in one line."""


# the page models of one grid, by the name a template calls them with
GRID_MODELS = {"scaling": scaling.Scaling, "structure": structure.Structure, "masking_rate": masking_rate.MaskingRate,
               "length": length.Length, "dyck_gap": dyck_gap.DyckGap, "recipe": recipe.Recipe,
               "text_page": text.TextPage, "masking": masking.Masking, "probes": probes.Probes,
               "objectives": objectives.Objectives, "text_recipe": text_recipe.TextRecipe}  # fmt: skip


def code_constant(path: str):
    """The module-level constant `path` of the minibert package (`minibert.training.budget.SAMPLES`): a setting
    the code fixes, stated by a page from where it is defined."""
    module, _, name = path.rpartition(".")
    if not module.startswith("minibert.") or name.startswith("_"):
        raise QueryError(f"{path}: a page quotes the minibert package's public constants only")
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise QueryError(f"{path}: no such constant in the minibert package") from None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise QueryError(f"{path}: a {type(value).__name__}, not a number or a name a page can state")
    return value


def grid_dir(name: str) -> str:
    return "results" if name == "default" else f"results/{name}"


@dataclass(frozen=True)
class Answer:
    """A paired difference as a page quotes it: `diff` (its interval and verdict), the record whose sequence
    judged it ('' for the grid's own seeds, held with its family) and the seeds it was judged on."""

    diff: object  # minibert.tables.query.Diff
    record: str
    seeds: int

    @property
    def judged_by(self) -> str:
        return f"the sign rule of {self.record}" if self.record else "the grid's seeds (Holm)"


class Renderer:
    """Renders pages over the grids' tables, each table read once and its verdicts judged once, as it is read
    (minibert.report.verdicts): a page quotes their rows, in one pass with nothing asked first."""

    def __init__(self, root: str | Path = "."):
        self.root = Path(root)
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(self.root / PAGES)),
                                      undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                      trim_blocks=True, lstrip_blocks=True, autoescape=False)  # fmt: skip
        self.env.globals.update(grid=self.grid, table=markdown_table, fmt=stats.fmt, number=stats.number,
                                minutes=stats.minutes, percent=stats.percent, span=stats.span,
                                hours=stats.hours, verb=stats.verb, multiple=stats.multiple, flops=stats.flops,
                                pace=self.pace,
                                rate=stats.rate, ln=math.log, sd=Stat.shown_sd, lo=Stat.lowest, hi=Stat.highest,
                                comparison=self.comparison, families=self.families,
                                study=self.study, has_grid=self.has_grid, pairs=self.pairs,
                                measured=self.measured, config=self.config, run=self.run,
                                config_lines=self.config_lines, code=code_constant, answer=self.answer,
                                dyck_answer=self.dyck_answer, dyck_page=self.dyck_page, transfer=self.transfer,
                                digest=self.digest,
                                writeup=self.writeup, finetune=self.finetune, rejudged=self.recorded())  # fmt: skip
        for key, model in GRID_MODELS.items():  # each takes one grid's Data, read through self.grid
            self.env.globals[key] = functools.partial(self._model, model)
        self.tables: dict[Path, Data] = {}
        self.grids: dict[Path, Grid] = {}  # table folder -> its grid, loaded once
        self.studies: dict[Path, validity.Study] = {}
        self.runs: dict[str, settings.Run] = {}  # each named run's saved config, read once
        self.touched: set[Path] = set()  # the tables the page being rendered reads
        self.readers: dict[Path, list[Path]] = {}  # table folder -> the pages that read it
        self.outputs: list[Path] = []  # every page and figure rendering writes (or, checking, would write)
        self.drawing = True  # False: figures are named, not drawn (--check changes nothing)

    def data(self, folder: Path) -> Data:
        """The table in `folder`, read once; its family is named by the folder, relative to the repository,
        declared by its grid and judged whole (minibert.report.verdicts) before any page asks it anything."""
        folder = Path(folder).resolve()
        if folder not in self.tables:
            data = Data.load(folder)
            data.family.name = os.path.relpath(folder, self.root.resolve())
            verdicts.decide(data, self.grid_of(folder), self.root)
            self.tables[folder] = data
        self.touched.add(folder)
        return self.tables[folder]

    def grid_of(self, folder: Path) -> Grid:
        """The grid whose table is in `folder` (minibert.tables.record.grid_of), loaded once a render."""
        folder = Path(folder).resolve()
        if folder not in self.grids:
            self.grids[folder] = grid_of(folder, self.root)
        return self.grids[folder]

    def grid(self, name: str) -> Data:
        return self.data(self.root / grid_dir(name))

    def has_grid(self, name: str) -> bool:
        """Whether grid `name` has a table yet (a page may say that a study has not been run)."""
        return (self.root / grid_dir(name) / FILE).is_file()

    def study(self, name: str) -> validity.Study:
        """The predictive-validity study in grid `name` (minibert.report.validity), built once."""
        folder = (self.root / grid_dir(name)).resolve()
        if folder not in self.studies:
            self.studies[folder] = validity.Study(self.data(folder))
        self.touched.add(folder)
        return self.studies[folder]

    def config(self, path: str, key: str):
        """The setting `key` of the YAML file `path` under the root, as written (minibert.report.settings.setting)."""
        return settings.setting(self.root, path, key)

    def run(self, name: str) -> settings.Run:
        """The settings of a named run (`dyck-pretrain`, `finetune`, ...) as its saved config holds them."""
        if name not in self.runs:
            self.runs[name] = settings.Run(self.root, name)
        return self.runs[name]

    def config_lines(self, path: str) -> int:
        """How many lines the file `path` under the root has (a config's length, as a page states it)."""
        if not (self.root / path).is_file():
            raise QueryError(f"{path}: no such file")
        return len((self.root / path).read_text().splitlines())

    @functools.cached_property
    def _measured(self) -> dict[str, measurements.Measurement]:
        """results/measurements.yaml, read once a render."""
        return measurements.load(self.root)

    def measured(self, name: str) -> measurements.Measurement:
        """The entry `name` of results/measurements.yaml."""
        found = self._measured
        if name not in found:
            raise QueryError(f"{measurements.FILE}: no entry {name!r}")
        return found[name]

    def pairs(self, name: str, validity_grid: str | None = None) -> pairs.PairsPage:
        """The minimal-pairs page model of grid `name`, its predictions read against `validity_grid`'s study."""
        study = self.study(validity_grid) if validity_grid and self.has_grid(validity_grid) else None
        return pairs.PairsPage(self.grid(name), study, pairs.declared_cells(self.root))

    def comparison(self, name: str, record: str) -> comparison.Recorded:
        """The comparison `results/<name>/comparisons/<record>.json`, judged on that grid's table."""
        found = verdicts.records(self.grid(name))  # judged once, with the grid's verdicts
        if record not in found:
            raise QueryError(f"no comparison {record!r} recorded in {grid_dir(name)}/comparisons/")
        return found[record]

    def answer(self, name: str, metric: str, a: str, b: str) -> Answer:
        """A - B on `metric` in grid `name`, as its row in the grid's verdicts states it (minibert.report.verdicts):
        a comparison recorded in the grid's `comparisons/` folder that judged the pair, else the grid's family."""
        diff = self.grid(name).diff(metric, {"experiment": a}, {"experiment": b})
        return Answer(diff, diff.record, diff.decided_on if diff.record else diff.seeds)

    def recorded(self) -> list[tuple[str, str]]:
        """(grid name, record name) of every comparison recorded under `results/`, in path order."""
        found = sorted((self.root / "results").glob("**/comparisons/*.json"))
        return [(p.parent.parent.relative_to(self.root / "results").as_posix(), p.stem) for p in found]

    def pace(self, name: str, record: comparison.Recorded, first: str) -> pace.Pace:
        """How fast the machine ran grid `name`'s `record` against grid `first`'s (minibert.report.pace)."""
        return pace.Pace.of(self.grid(name), self.grid(first), record.wall_s)

    def dyck_page(self) -> dyck_page.DyckPage:
        """The Dyck page's tables and readings (minibert.report.dyck_page), over the Dyck, variance and recipe grids."""
        return dyck_page.DyckPage(self.grid("dyck"), self.grid("dyck_variance"), self.grid("recipe"))

    def dyck_answer(self) -> dyck.AnswerTable:
        """The Dyck page's answer table (minibert.report.dyck), each comparison judged by `answer`."""
        return dyck.answer_table(lambda metric, a, b: self.answer("dyck", metric, a, b))

    def _model(self, model: type, name: str):
        return model(self.grid(name))

    def digest(self) -> digest.Digest:
        """docs/results.md's paragraph answers, one per grid (minibert.report.digest)."""
        return digest.Digest(self.grid, self.transfer)

    def finetune(self) -> finetune.Finetune:
        """The fine-tuning page's model: the default grid's regimes, its config's write-up figures and claims."""
        return finetune.Finetune(self.grid("default"), self.grid_of(self.root / grid_dir("default")))

    def writeup(self) -> writeup.WriteUp:
        """The original write-up reproduced figure by figure, from the default grid and the quotes in its config."""
        grid = self.grid_of(self.root / grid_dir("default"))
        return writeup.WriteUp(self.grid("default"), lambda: self.grid("probes"), grid)

    def transfer(self) -> transfer.Transfer:
        """Dyck's comparisons judged on Dyck and on text, and whether they agree (minibert.report.transfer)."""
        return transfer.transfer(self.answer)

    def templates(self) -> list[Path]:
        """Every page's template, the README last; a template named `_*.j2` is imported by pages, not one."""
        found = [p.relative_to(self.root / PAGES) for p in (self.root / PAGES).rglob("*.j2")]
        found = [p for p in found if not p.name.startswith("_")]
        return sorted(found, key=lambda p: (p.name == "README.md.j2", p))

    def families(self) -> list[stats.Family]:
        """The family of every table read that judged a paired comparison, by folder."""
        return sorted((d.family for d in self.tables.values() if d.family.p), key=lambda f: f.name)

    def _render(self, template: Path) -> tuple[Path, str]:
        page = self.root / template.with_suffix("")
        here = page.parent

        def drawn(title, name, draw, *args):
            self.outputs.append(here / name)
            if self.drawing:
                draw(here / name, *args)
            return f"![{title}]({name})"

        def forest(name, rows, title):
            return drawn(title, name, figures.forest, rows, title)

        def lines(name, series, xlabel, ylabel, title, logx=False):
            return drawn(title, name, figures.lines, series, xlabel, ylabel, title, logx)

        def scatter(name, panels, title):
            return drawn(title, name, figures.scatter, panels, title)

        self.touched = set()
        return page, self.env.get_template(template.as_posix()).render(forest=forest, lines=lines, scatter=scatter)

    def render(self, template: Path) -> tuple[Path, str]:
        """(page path, its text); figures the page declares are written beside it as it renders. A page that
        reads a grid judged by its family ends with a line naming the families its verdicts are held in."""
        page, text = self._render(template)
        for folder in self.touched:  # each table knows the pages that read it
            self.readers.setdefault(folder, []).append(page)
        families = [self.tables[f].family for f in sorted(self.touched) if self.tables[f].family.p]
        if families and page.suffix == ".md":
            text = text.rstrip("\n") + "\n\n" + stats.family_note(families) + "\n"
        if self.touched and page.suffix == ".md":
            text = text.rstrip("\n") + "\n\n" + self.code_note(sorted(self.touched)) + "\n"
        self.outputs.append(page)
        return page, text

    def code_note(self, folders: list[Path]) -> str:
        """The line a page ends with: which code made each table it reads, against this checkout's."""
        each = "; ".join(f"{self.tables[f].family.name}: {self.tables[f].provenance.sentence()}" for f in folders)
        today = provenance.source_hash()[:8]
        return f"<sub>Code behind the tables, against today's training code ({today}): {each}.</sub>"


# what a page's question may meet: a table without the figure, or a family that does not hold the question
ASKING = (QueryError, TableError, stats.LateQuestion, stats.UndeclaredQuestion, stats.NotItsRow,
          questions.FamilyError)  # fmt: skip


def build(root: str | Path = ".", check: bool = False, outputs: list[Path] | None = None) -> list[Path]:
    """Render every grid's own report and verdicts table and every declared page; returns the files written, or
    with `check` those whose text would change (drawing nothing). Each table's verdicts are judged once, as it is
    read (minibert.report.verdicts), so every dashboard and page quotes the same rows. `outputs`, if given,
    receives every file the build writes, or would write: pages, verdicts tables and figures."""
    if not (Path(root) / PAGES).is_dir():
        raise ReportError(f"--root {root}: not a minibert checkout (no {PAGES}/ in it): run it in the repository, or "
                          "give --root the repository's folder")  # fmt: skip
    renderer, changed = Renderer(root), []
    renderer.drawing = not check
    outs = tables_under(Path(root) / "results")
    try:
        for out in outs:  # every table read, checked and judged before any page quotes it
            data = renderer.data(out)
            _ = data.curves, data.provenance  # and the narrow tables beside it, read (once) and checked here
        grids = [(out, renderer.grid_of(out)) for out in outs]
    except (GridError, *ASKING) as err:
        raise ReportError(str(err)) from None
    rendered = []
    for template in renderer.templates():
        try:
            rendered.append(renderer.render(template))
        except (jinja2.TemplateError, *ASKING) as err:
            raise ReportError(f"{PAGES / template}: {err}") from None
    for out, grid in grids:
        pages = renderer.readers.get(out.resolve(), [])
        try:
            changed += grid_report.write(out, grid, check, renderer.data(out), pages, renderer.outputs, root)
        except ASKING as err:
            raise ReportError(str(err)) from None
    for page, body in rendered:
        old = page.read_text() if page.is_file() else None
        if old != body:
            changed.append(page)
            if not check:
                write_atomic(page, body)
    if outputs is not None:
        outputs += renderer.outputs
    return changed


def publish(out: str | Path, grid, root: str | Path = ".") -> list[Path]:
    """How a runner (scripts/ablate.py, scripts/compare.py) renders after writing a table: a table inside the
    checkout's `results/` is read by pages besides its own report, and their verdicts share its family, so every
    page is built again (`build`), as `python -m minibert.report` does, and the two never disagree; a table
    elsewhere gets its own report. Returns the files written."""
    out, root = Path(out).resolve(), Path(root).resolve()
    if (root / PAGES).is_dir() and out.is_relative_to(root / "results"):
        return build(root)
    return grid_report.write(out, grid, root=root)


def main(argv: list[str] | None = None) -> int:
    parts = __doc__.split("\n\n")
    args = command.parser(parts[0], "\n\n".join(parts[1:3])).parse_args(argv)
    if (said := command.problem(args)) is not None:
        print(f"{command.PROG}: error: {said}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        changed = build(args.root, check=args.check)
        stale = provenance.stale_yardsticks(args.root) if args.check else []
    except (ReportError, TableError) as err:
        print(f"python -m minibert.report: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for page in changed:
        print(f"{'would change' if args.check else 'wrote'}: {page}")
    for line in stale:
        print(f"stale: {line}")
    return EXIT_CHANGED if args.check and (changed or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
