"""Every committed dashboard opens in a real browser (headless Chromium): each figure decodes, and the page
asks for nothing beyond its own file and the committed PNGs beside it (linked, not inlined). Skipped only
where Chromium is not installed;
`.ci/run` installs it and sets MINIBERT_REQUIRE_CHROMIUM=1, which turns the skip into a failure."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.chromium import chromium_binary, inspect_page

ROOT = Path(__file__).resolve().parents[1]
DASHBOARDS = sorted(p for p in (ROOT / "results").rglob("dashboard.html") if "runs" not in p.parts)


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = chromium_binary()
    if binary is None:
        if os.environ.get("MINIBERT_REQUIRE_CHROMIUM") == "1":
            pytest.fail("MINIBERT_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install -y chromium)")
        pytest.skip("no chromium on PATH (apt-get install -y chromium); .ci/run installs it")
    return binary


def test_every_grid_has_a_committed_dashboard():
    assert {p.relative_to(ROOT).as_posix() for p in DASHBOARDS} >= {
        "results/dashboard.html",
        "results/objectives/dashboard.html",
    }


@pytest.mark.parametrize("page", DASHBOARDS, ids=[p.relative_to(ROOT).as_posix() for p in DASHBOARDS])
def test_dashboard_renders_every_figure_offline(chromium, page):
    report = inspect_page(page, chromium)
    assert report.title.startswith("minibert ablation: ") and report.title.endswith(" grid")
    assert report.figures >= 2 and len(report.images) == report.figures
    for image in report.images:
        assert image["complete"] and image["width"] > 100 and image["height"] > 100, image["alt"]
    schemes = {urlsplit(url).scheme for url in report.requests}
    assert schemes <= {"file"}, report.requests
    figures = {(page.parent / image["alt"]).resolve().as_uri() for image in report.images}
    assert page.resolve().as_uri() in report.requests
    assert set(report.requests) <= {page.resolve().as_uri()} | figures, report.requests
    assert all((page.parent / image["alt"]).is_file() for image in report.images)


@pytest.mark.parametrize("page", DASHBOARDS, ids=[p.relative_to(ROOT).as_posix() for p in DASHBOARDS])
def test_dashboards_link_to_each_other(page):
    html = page.read_text()
    targets = {(page.parent / href).resolve() for href in re.findall(r'<a href="([^"#:]+\.html)"', html)}
    assert targets == {p.resolve() for p in DASHBOARDS if p != page}


def test_the_check_sees_a_request_that_leaves_the_file(chromium, tmp_path):
    """The negative control: an image on a (closed) loopback port is a request the test catches."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    page = tmp_path / "leaky.html"
    page.write_text(
        f"<!doctype html><title>t</title><figure><img alt='x' src='http://127.0.0.1:{port}/x.png'></figure>"
    )
    report = inspect_page(page, chromium)
    assert f"http://127.0.0.1:{port}/x.png" in report.requests
    assert report.images[0]["width"] == 0
