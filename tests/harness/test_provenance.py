"""Every page says which code made its tables: runs of today's training code say so, runs of other code name the
files that differ (from the per-file hashes the runs recorded), and runs that recorded no code or no files say
that, never passing for current."""

from __future__ import annotations

import pandas as pd

from minibert.tables import provenance
from minibert.training.code_version import package_files, source_hash


def frame(codes: dict[str, str]) -> pd.DataFrame:
    """A table of one row per run (experiment e, seed s) made by the given code."""
    return pd.DataFrame([{"experiment": "e", "seed": s, "metric": "val/acc", "code": c} for s, c in codes.items()])


def test_runs_of_todays_code_are_current(tmp_path):
    made = provenance.of(frame({0: source_hash(), 1: source_hash()}), tmp_path)
    assert made.current and made.sentence() == "2 runs by today's code"


def test_runs_of_other_code_name_the_files_that_differ(tmp_path):
    files = dict(package_files())
    changed = sorted(files)[3]
    older = {**files, changed: "0" * 16}
    del older[sorted(files)[5]]  # a file added since
    provenance.write(pd.DataFrame([("abc123", f, h) for f, h in older.items()], columns=provenance.COLUMNS), tmp_path)
    made = provenance.of(frame({0: source_hash(), 1: "abc123", 2: "abc123"}), tmp_path)
    assert not made.current
    differ = f"{changed}, {sorted(files)[5]} (new)"
    assert made.sentence() == f"1 run by today's code, 2 runs by code abc123, which differs from today's in {differ}"


def test_runs_without_a_record_of_their_code_or_files_are_never_current(tmp_path):
    made = provenance.of(frame({0: "", 1: "aaaa", 2: "bbbb"}), tmp_path)
    assert not made.current
    unknown = "2 runs by 2 other codes, not today's; which files differ is not recorded"
    assert made.sentence() == f"{unknown}, 1 run, code not recorded"


def test_the_file_table_round_trips_from_run_summaries(tmp_path):
    summaries = [{"code": {"source_hash": "x", "files": {"a.py": "1", "b.py": "2"}}},
                 {"code": {"source_hash": "x", "files": {"a.py": "1", "b.py": "2"}}},
                 {"code": {"source_hash": "y"}}]  # fmt: skip
    provenance.write(provenance.from_summaries(summaries), tmp_path)
    assert provenance.read(tmp_path) == {"x": {"a.py": "1", "b.py": "2"}}
