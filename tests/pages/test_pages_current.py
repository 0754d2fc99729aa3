"""Every committed page is what its table renders: a page cannot drift from the data, since a rerun of the
engine (`python -m minibert.report`) is the only way a number reaches it. Every other file under `results/` is a
table, a record or a benchmark's report that named code writes, so no picture or page lies there that nothing
makes."""

import re
from pathlib import Path

import pytest

from minibert.report import measurements
from minibert.report.render import build
from minibert.tables import curves, provenance, questions, saved, sealed, table

ROOT = Path(__file__).resolve().parents[2]
# what the runners write beside a table (minibert.tables.table, curves, provenance; scripts/ablate.py's run.json and
# family.json; scripts/compare.py's grid.yaml and objective.yaml for a plug-in; a text language's corpus record and
# tokenizer)
TABLES = {*table.READ, curves.FILE, provenance.FILE, questions.FILE, measurements.FILE.name, "run.json", "grid.yaml",
          "objective.yaml", "corpus.json", "tokenizer.json"}  # fmt: skip
RECORD = re.compile(r"/comparisons/[^/]+\.(json|md)$")  # scripts/compare.py's record and its text
SAVED = re.compile(rf"/{saved.FOLDER}/.+\.yaml$")  # each experiment's saved config (minibert.tables.saved)
# files a named command writes, each named in its source: benchmarks' reports, the Dyck dashboard's screenshot
MADE_BY = {"results/bench.md": "benchmarks/bench.py", "results/bench_floor.md": "benchmarks/bench_floor.py",
           "results/load.md": "benchmarks/load.py",
           "results/compare/sequence_cost.md": "benchmarks/sequence_cost.py",
           "results/dyck/dashboard.png": "tests/chromium.py"}  # fmt: skip


@pytest.fixture(scope="module")
def built() -> tuple[list[Path], set[Path]]:
    """(the pages that would change, every file the engine writes), from one checking build."""
    outputs: list[Path] = []
    stale = build(ROOT, check=True, outputs=outputs)
    return stale, {p.resolve() for p in outputs}


def test_every_committed_page_is_rendered_from_the_committed_tables(built):
    stale, _ = built
    assert not stale, f"stale pages (run python -m minibert.report): {[str(p.relative_to(ROOT)) for p in stale]}"


def files_under_results() -> list[Path]:
    """Every file under results/, leaving out the runs (ignored by git) and hidden files (locks, temporaries)."""
    return [p for p in (ROOT / "results").rglob("*") if p.is_file() and "runs" not in p.relative_to(ROOT).parts
            and not p.name.startswith(".")]  # fmt: skip


def test_no_file_under_results_is_an_orphan(built):
    _, outputs = built

    def written(path: Path) -> bool:
        name = path.relative_to(ROOT).as_posix()
        return (
            path.resolve() in outputs
            or path.name in TABLES
            or RECORD.search(name) is not None
            or SAVED.search(name) is not None
            or name in MADE_BY
        )

    orphans = []
    for path in files_under_results():
        sealing = path.with_name(path.name.removesuffix(sealed.SUFFIX))  # a seal is written with the table it seals
        if written(path) or (path.name.endswith(sealed.SUFFIX) and written(sealing)):
            continue
        orphans.append(path.relative_to(ROOT).as_posix())
    assert not orphans, f"files nothing writes (delete them, or render them from a table): {orphans}"
    for made, script in MADE_BY.items():
        assert made.removeprefix("results/") in (ROOT / script).read_text(), (made, script)


def test_every_picture_the_engine_draws_is_shown_by_a_page(built):
    _, outputs = built
    pages = [p for p in outputs if p.suffix in (".md", ".html")]
    shown = set()
    for page in pages:
        for link in re.findall(r"(?:\]\(|src=\")([^)\"]+\.png)", page.read_text()):
            shown.add((page.parent / link).resolve())
    pictures = {p for p in outputs if p.suffix == ".png"}
    assert pictures and not pictures - shown, sorted(str(p.relative_to(ROOT)) for p in pictures - shown)


ABSOLUTE = re.compile(r"(?<![\w.<~])/[\w.+-]+/")  # a path from the root: '/home/...', not 'val/acc'


def test_no_committed_record_names_a_folder_of_the_machine_that_made_it():
    """A page elides absolute paths against the checkout it is rendered in; a record holding the maker's checkout
    path would render differently in every other clone (and CI's check would call the page stale)."""
    records = [*ROOT.glob("results/**/run.json"), *ROOT.glob("results/**/comparisons/*.json")]
    assert records
    named = {str(p.relative_to(ROOT)): m[0] for p in records if (m := ABSOLUTE.search(p.read_text()))}
    assert not named, named


def test_every_picture_a_page_shows_is_drawn_by_the_engine_from_the_tables(built):
    _, outputs = built
    pages = [p for p in outputs if p.suffix in (".md", ".html")]
    made_by = {(ROOT / name).resolve() for name in MADE_BY}
    missing = {}
    for page in pages:
        for link in re.findall(r"(?:\]\(|src=\")([^)\"]+\.png)", page.read_text()):
            if (page.parent / link).resolve() not in outputs | made_by:
                missing.setdefault(page.relative_to(ROOT).as_posix(), []).append(link)
    assert not missing, missing


def test_every_relative_link_of_every_page_resolves(built):
    """README, docs/ and every page under results/: each Markdown link to a file of the repository points at one."""
    results = [p for p in (ROOT / "results").rglob("*.md") if "runs" not in p.relative_to(ROOT).parts]
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *results]
    broken = []
    for page in pages:
        for link in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not link.startswith(("http://", "https://", "mailto:")) and not (page.parent / link).exists():
                broken.append(f"{page.relative_to(ROOT)}: {link}")
    assert len(pages) > 30 and not broken, broken
