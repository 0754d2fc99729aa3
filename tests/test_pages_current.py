"""Every committed page is what its table renders: a page cannot drift from the data, since a rerun of the
engine (`python -m minibert.report`) is the only way a number reaches it."""

from pathlib import Path

from minibert.report.render import build

ROOT = Path(__file__).resolve().parents[1]


def test_every_committed_page_is_rendered_from_the_committed_tables():
    stale = build(ROOT, check=True)
    assert not stale, f"stale pages (run python -m minibert.report): {[str(p.relative_to(ROOT)) for p in stale]}"
