"""Every grid's committed dashboard, read as a researcher reads it, in a real browser (headless Chromium at
1280x800): it opens offline, asking for nothing beyond its own folder, every figure decodes, the first screen of
the Dyck grid holds its answer (the comparisons with their verdicts, and the top of their figure), nothing
scrolls sideways even with every toggle open, per-experiment detail is folded, and the "Other grids" line links
every other grid's report. Neither a dashboard nor an ablation.md names a folder of the machine that made it.
The browser tests are skipped only where Chromium is not installed; `.ci/run` installs it and sets
MINIBERT_REQUIRE_CHROMIUM=1, which turns the skip into a failure."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from minibert.tables import table
from tests.chromium import Browser, PageReport, chromium_binary, inspect_page

ROOT = Path(__file__).resolve().parents[2]
GRIDS = sorted(p.parent for p in (ROOT / "results").rglob("results.csv") if "runs" not in p.parts)
DASHBOARDS = [grid / "dashboard.html" for grid in GRIDS]
IDS = [p.relative_to(ROOT).as_posix() for p in DASHBOARDS]
DYCK = ROOT / "results/dyck/dashboard.html"
WHERE = ("#answer table", "#answer figure img")  # where the first screen's parts lie


def leaves(url: str, folder: Path) -> bool:
    """Whether a request asks for anything but a file in `folder`."""
    parts = urlsplit(url)
    return parts.scheme != "file" or Path(unquote(parts.path)).parent != folder.resolve()


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = chromium_binary()
    if binary is None:
        if os.environ.get("MINIBERT_REQUIRE_CHROMIUM") == "1":
            pytest.fail("MINIBERT_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install -y chromium)")
        pytest.skip("no chromium on PATH (apt-get install -y chromium); .ci/run installs it")
    return binary


@pytest.fixture(scope="module")
def opened(chromium) -> dict[Path, PageReport]:
    """Every dashboard, opened once in one browser."""
    with Browser(chromium, width=1280, height=800) as browser:
        return {page: browser.open(page, rects=WHERE) for page in DASHBOARDS if page.is_file()}


def test_every_grid_with_a_table_has_a_committed_report():
    assert ROOT / "results" in GRIDS and ROOT / "results/dyck" in GRIDS
    tracked = None
    if shutil.which("git") and (ROOT / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True, check=True)
        tracked = set(listed.stdout.split())
    for grid in GRIDS:
        for name in ("dashboard.html", "ablation.md"):
            path = (grid / name).relative_to(ROOT).as_posix()
            assert (grid / name).is_file(), f"{path} missing: python -m minibert.report"
            assert tracked is None or path in tracked, f"{path} is not committed"


@pytest.mark.parametrize("page", DASHBOARDS, ids=IDS)
def test_dashboard_loads_offline_with_every_image_decoded(opened, page):
    report = opened[page]
    assert report.title.startswith("minibert ablation: ") and " grid grid" not in report.title
    assert report.title.endswith(" grid") or report.title.startswith("minibert ablation: comparison compare/")
    assert len(report.images) == report.figures
    for image in report.images:
        assert image["complete"] and image["width"] > 0 and image["height"] > 0, image
        assert (page.parent / image["src"]).is_file() and "/" not in image["src"], image  # the PNG beside it
    assert page.resolve().as_uri() in report.requests
    assert not [url for url in report.requests if leaves(url, page.parent)], report.requests


def test_the_dyck_grids_first_screen_holds_its_answer_and_the_top_of_its_figure(opened):
    report = opened[DYCK]
    height = report.viewport["height"]
    assert report.viewport == {"width": 1280, "height": 800}
    table, figure = report.rects["#answer table"], report.rects["#answer figure img"]
    assert table is not None and 0 <= table["top"] and table["bottom"] <= height, table
    assert figure is not None and table["bottom"] <= figure["top"] <= height - 200, figure  # 200 px of it at least
    assert figure["right"] <= report.viewport["width"]


@pytest.mark.parametrize("page", DASHBOARDS, ids=IDS)
def test_nothing_scrolls_sideways_even_with_every_toggle_open(opened, page):
    report = opened[page]
    assert report.scroll_width <= report.client_width
    assert report.scroll_width_unfolded <= report.client_width


@pytest.mark.parametrize("page", DASHBOARDS, ids=IDS)
def test_per_experiment_detail_is_folded_by_default(opened, page):
    report = opened[page]
    experiments = set(table.read(page.parent)["experiment"])  # with the committed rows a comparison pairs with
    assert {d["summary"] for d in report.details} == experiments
    assert not any(d["open"] for d in report.details)


@pytest.mark.parametrize("page", DASHBOARDS, ids=IDS)
def test_other_grids_links_resolve_to_every_other_grids_report(opened, page):
    others = {grid.resolve() for grid in GRIDS if grid != page.parent}
    links = [link for link in opened[page].links if link["nav"]]
    targets = {Path(unquote(urlsplit(link["url"]).path)) for link in links}
    assert all(t.is_file() for t in targets), targets
    assert not any(link["href"].startswith(("/", "file:")) for link in links)  # relative: the folder can move
    assert {t for t in targets if t.name == "dashboard.html"} == {grid / "dashboard.html" for grid in others}
    line = re.search(r"^Other grids: (.+)$", (page.parent / "ablation.md").read_text(), re.M)
    assert line is not None
    written = re.findall(r"\]\(([^)]+)\)", line[1])
    assert {(page.parent / href).resolve() for href in written} == {grid / "ablation.md" for grid in others}
    assert all((page.parent / href).is_file() for href in written)


@pytest.mark.parametrize("name", ["dashboard.html", "ablation.md"])
@pytest.mark.parametrize("grid", GRIDS, ids=[g.relative_to(ROOT).as_posix() for g in GRIDS])
def test_no_report_names_a_folder_of_the_machine_that_made_it(grid, name):
    text = (grid / name).read_text()
    for folder in ("/work/", "/tmp/", "/home/"):
        assert folder not in text, (folder, text[max(0, text.index(folder) - 80) : text.index(folder) + 80])


def test_the_check_sees_a_request_that_leaves_the_file(chromium, tmp_path):
    """The negative control: an image on a (closed) loopback port, and one in the folder above, are requests the
    test catches; an image beside the page is not."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    png = (ROOT / "results/dyck/claims.png").read_bytes()
    (tmp_path / "up.png").write_bytes(png)
    (tmp_path / "page").mkdir()
    (tmp_path / "page/beside.png").write_bytes(png)
    page = tmp_path / "page/leaky.html"
    page.write_text(
        f"<!doctype html><title>t</title><figure><img alt='x' src='http://127.0.0.1:{port}/x.png'></figure>"
        "<figure><img alt='up' src='../up.png'></figure><figure><img alt='beside' src='beside.png'></figure>"
    )
    report = inspect_page(page, chromium)
    assert f"http://127.0.0.1:{port}/x.png" in report.requests
    assert report.images[0]["width"] == 0 and report.images[1]["width"] > 0 and report.images[2]["width"] > 0
    assert {url.rsplit("/", 1)[-1] for url in report.requests if leaves(url, page.parent)} == {"x.png", "up.png"}


def test_the_dyck_dashboard_links_the_pages_its_table_feeds(opened):
    links = [link for link in opened[DYCK].links if link["nav"]]
    targets = {Path(unquote(urlsplit(link["url"]).path)) for link in links}
    assert {ROOT / "results/dyck.md", ROOT / "results/dyck/gap.md"} <= targets


@pytest.mark.parametrize("page", DASHBOARDS, ids=IDS)
def test_a_dashboard_draws_the_curves_and_categories_its_table_holds(page):
    shown = set(re.findall(r'<img alt="[^"]+" src="([^"]+)">', page.read_text()))
    assert ("curves.png" in shown) == (page.parent / "curves.csv").is_file()
    frame = table.read(page.parent)
    has_categories = bool(((frame["metric"] == "val/acc") & (frame["category"] != "")).any())
    assert ("categories.png" in shown) == has_categories
