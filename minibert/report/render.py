"""Every page from the results tables, by one command:

    python -m minibert.report            # rebuild every grid's report and every page (seconds)
    python -m minibert.report --check    # exit 1 naming each page that its table would change

A page is a Jinja2 template under `configs/pages/`, at the path of the page it renders
(`configs/pages/results/dyck.md.j2` -> `results/dyck.md`): Markdown with the numbers left as queries of the
grids' tables, so none is typed. A template sees:
- `grid(name)`: that grid's `minibert.report.query.Data` (`grid("dyck")` reads `results/dyck/`; "default"
  reads `results/`), with `.stat(...)`, `.diff(...)`, `.total(...)`, `.seeds(...)`, `.made` (run.json);
- `table(header, rows)`: a Markdown table; `fmt(interval)`, `number(x, scale=100, digits=1)`, `verdict(...)`;
- `comparison(name, record)`: a comparison scripts/compare.py recorded in that grid's folder, judged on its table
  (minibert.ablation.comparison.Recorded);
- `forest(name, rows, title)` and `lines(name, series, xlabel, ylabel, title)`: a figure written beside the
  page (`name` relative to it), returning its Markdown.
Undefined names are errors (StrictUndefined), so a renamed column breaks the build, not the page.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import jinja2

from minibert.ablation import comparison
from minibert.atomic_writes import write_atomic
from minibert.report import figures, grid_report, stats
from minibert.report.query import Data, QueryError, markdown_table
from minibert.report.table import FILE, grid_of_table

PAGES = Path("configs/pages")


def grid_dir(name: str) -> str:
    return "results" if name == "default" else f"results/{name}"


class Renderer:
    def __init__(self, root: str | Path = "."):
        self.root = Path(root)
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(self.root / PAGES)),
                                      undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                      trim_blocks=True, lstrip_blocks=True, autoescape=False)  # fmt: skip
        self.env.globals.update(grid=self.grid, table=markdown_table, fmt=stats.fmt, number=stats.number,
                                verdict=stats.verdict, comparison=self.comparison, families=self.families)  # fmt: skip
        self.judged: dict[str, stats.Family] = {}

    @functools.cache  # noqa: B019 (one renderer per build; each table read once)
    def grid(self, name: str) -> Data:
        return Data.load(self.root / grid_dir(name))

    def comparison(self, name: str, record: str) -> comparison.Recorded:
        """The comparison `results/<name>/comparisons/<record>.json`, judged on that grid's table."""
        return comparison.recorded(self.root / grid_dir(name), record, self.grid(name))

    def templates(self) -> list[Path]:
        """Every page's template, the README last (it quotes what the other pages' corrections changed)."""
        found = [p.relative_to(self.root / PAGES) for p in (self.root / PAGES).rglob("*.j2")]
        return sorted(found, key=lambda p: (p.name == "README.md.j2", p))

    def families(self) -> list[tuple[str, stats.Family]]:
        """(page, its family of verdicts) of every page rendered so far, in order."""
        return list(self.judged.items())

    def render(self, template: Path) -> tuple[Path, str]:
        """(page path, its text); figures the page declares are written beside it as it renders.

        A page renders twice: once to collect every paired comparison it judges, once to write it with their
        verdicts held together by Holm's step-down (`stats.Family`); a page that judged any says so at its end."""
        page = self.root / template.with_suffix("")
        here = page.parent
        drawing = [False]

        def forest(name, rows, title):
            if drawing[0]:
                figures.forest(here / name, rows, title)
            return f"![{title}]({name})"

        def lines(name, series, xlabel, ylabel, title, logx=False):
            if drawing[0]:
                figures.lines(here / name, series, xlabel, ylabel, title, logx)
            return f"![{title}]({name})"

        source = self.env.get_template(template.as_posix())
        judged = stats.Family()
        with stats.family(judged):
            source.render(forest=forest, lines=lines)
        size = judged.freeze()
        self.judged[template.with_suffix("").as_posix()] = judged
        drawing[0] = True
        with stats.family(judged):
            text = source.render(forest=forest, lines=lines)
        if size and page.suffix == ".md":
            text = text.rstrip("\n") + "\n\n" + stats.family_note(judged) + "\n"
        return page, text


def build(root: str | Path = ".", check: bool = False) -> list[Path]:
    """Render every grid's own report and every declared page; returns the pages written, or with `check`
    those whose text would change."""
    renderer, changed = Renderer(root), []
    for table in sorted(Path(root).glob(f"results/**/{FILE}")):  # each table read once, for its report and pages
        name = grid_of_table(table.parent)
        out, grid = table.parent, grid_report.grid_of(table.parent, root)
        data = renderer.grid(name) if Path(root) / grid_dir(name) == out else Data.load(out)
        changed += grid_report.write(out, grid, check=check, data=data)
    for template in renderer.templates():
        try:
            page, text = renderer.render(template)
        except (QueryError, jinja2.TemplateError) as err:
            raise SystemExit(f"minibert.report: error: {PAGES / template}: {err}") from None
        old = page.read_text() if page.is_file() else None
        if old != text:
            changed.append(page)
            if not check:
                write_atomic(page, text)
    return changed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m minibert.report", description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page would change")
    p.add_argument("--root", default=".", help="the repository (default: here)")
    args = p.parse_args(argv)
    changed = build(args.root, check=args.check)
    for page in changed:
        print(f"{'would change' if args.check else 'wrote'}: {page}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
