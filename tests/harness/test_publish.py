"""One writer per page: a runner that writes a table inside the checkout's `results/` renders every page through
the report engine (minibert.report.render.publish), so after any command `python -m minibert.report --check` is
clean. A grid's own report written alone would hold its verdicts in a smaller family than the pages that read
the same table, and the two would say different things."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from minibert.ablation.grid import load_grid
from minibert.report import grid_report
from minibert.report.render import build, publish
from minibert.tables import table

ROOT = Path(__file__).resolve().parents[2]
PAGE = """# A page reading the default grid

Full against frozen fine-tuning: {{ grid("default").diff("val/acc", {"experiment": "finetune/full"},
{"experiment": "finetune/frozen"}).say("full", "frozen") }}.
"""


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A checkout with the committed default table, its grid and one page that asks a question of it."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("pages"))
    (tmp_path / "configs/pages/results").mkdir(parents=True)
    (tmp_path / "configs/pages/results/page.md.j2").write_text(PAGE)
    (tmp_path / "results").mkdir()
    for name in (*table.READ, "run.json", "grid.yaml"):
        if (ROOT / "results" / name).is_file():
            shutil.copy(ROOT / "results" / name, tmp_path / "results" / name)
    return tmp_path


def test_a_grid_report_written_alone_disagrees_with_the_engine(checkout):
    """The class of fault: the grid's report alone counts its own family; the engine's counts the page's question
    too, so the engine would rewrite what the runner wrote."""
    grid = load_grid(checkout / "configs/ablations/default.yaml", checkout)
    grid_report.write(checkout / "results", grid)
    assert checkout / "results/ablation.md" in build(checkout, check=True)


def test_publish_leaves_the_engine_nothing_to_change(checkout):
    grid = load_grid(checkout / "configs/ablations/default.yaml", checkout)
    written = publish(checkout / "results", grid, checkout)
    assert {p.relative_to(checkout).as_posix() for p in written} >= {"results/ablation.md", "results/page.md"}
    assert build(checkout, check=True) == []
    assert "Full against frozen fine-tuning: full better by" in (checkout / "results/page.md").read_text()


def test_a_table_outside_the_results_tree_gets_its_own_report_only(checkout, tmp_path_factory):
    out = tmp_path_factory.mktemp("elsewhere")
    for name in (*table.READ, "run.json", "grid.yaml"):
        if (checkout / "results" / name).is_file():
            shutil.copy(checkout / "results" / name, out / name)
    grid = load_grid(checkout / "configs/ablations/default.yaml", checkout)
    written = publish(out, grid, checkout)
    assert {p.name for p in written} == {"ablation.md", "dashboard.html", "verdicts.csv"}
    assert not (checkout / "results/page.md").exists()
