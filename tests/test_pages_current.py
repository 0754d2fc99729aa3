"""Every committed page is what its table renders: a page cannot drift from the data, since a rerun of the
engine (`python -m minibert.report`) is the only way a number reaches it."""

import re
from pathlib import Path

from minibert.report.render import build

ROOT = Path(__file__).resolve().parents[1]


def test_every_committed_page_is_rendered_from_the_committed_tables():
    stale = build(ROOT, check=True)
    assert not stale, f"stale pages (run python -m minibert.report): {[str(p.relative_to(ROOT)) for p in stale]}"


ABSOLUTE = re.compile(r"(?<![\w.<~])/[\w.+-]+/")  # a path from the root: '/home/...', not 'val/acc'


def test_no_committed_record_names_a_folder_of_the_machine_that_made_it():
    """A page elides absolute paths against the checkout it is rendered in; a record holding the maker's checkout
    path would render differently in every other clone (and CI's check would call the page stale)."""
    records = [*ROOT.glob("results/**/run.json"), *ROOT.glob("results/**/comparisons/*.json")]
    assert records
    named = {str(p.relative_to(ROOT)): m[0] for p in records if (m := ABSOLUTE.search(p.read_text()))}
    assert not named, named
