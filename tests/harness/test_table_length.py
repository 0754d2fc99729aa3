"""Every CSV table minibert writes knows its length: written through its real writer it gets a seal (its row count
and digest), and its reader refuses it, in one line naming the file and the rows it lost, once it is cut at a row
boundary (it still parses), cut mid-row, edited with its row count kept, or deleted while its seal stays; a table
with no seal (written before seals, as the committed ones) is read as it always was."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from minibert.compare.committed import Borrowed
from minibert.report import verdicts
from minibert.report.render import main as report
from minibert.tables import curves, provenance, sealed, table
from minibert.tables.table import TableError

ROOT = Path(__file__).resolve().parents[2]
SEEDS = 12


def results(seeds: int = SEEDS) -> pd.DataFrame:
    """A table of one experiment: each seed's accuracy, and its openers' (rows that go to categories.csv)."""
    rows = [{"grid": "g", "experiment": "p/a", "stage": "pretrain", "arm": "a", "seed": s, "val_seed": 2018,
             "metric": "val/acc", "category": c, "value": v + s / 1000, "n": 100, "run": f"r{s}", "code": "4f1c"}
            for s in range(seeds) for c, v in (("", 0.6), ("opener", 0.5))]  # fmt: skip
    return pd.DataFrame(rows, columns=[*table.FIRST, "arm", *table.LAST]).sort_values(table.ORDER, ignore_index=True)


def verdict(i: int) -> verdicts.Row:
    return verdicts.Row(f"p/a val/acc vs p/b{i} val/acc", "holm", 1, 0.01, 0.0, 0.02, 4, 4, 0.04, 0.04, 1.0, "alike")


# each table minibert writes: (its file, a writer that writes it through the real code into `out`, its reader)
WRITERS: dict[str, tuple[str, Callable[[Path], object], Callable[[Path], object]]] = {
    "results": (table.FILE, lambda out: table.write(results(), out), table.read),
    "categories": (table.CATEGORIES, lambda out: table.write(results(), out), table.read),
    "categories gzipped": (f"{table.CATEGORIES}.gz", lambda out: table.write(results(), out), table.read),
    "curves": (curves.FILE, lambda out: curves.write(pd.DataFrame(
        [("p/a", s, "val/acc", step, 0.5) for s in range(3) for step in range(10, 50, 10)], columns=curves.COLUMNS),
        out), curves.read),
    "code": (provenance.FILE, lambda out: provenance.write(pd.DataFrame(
        [("4f1c", f"minibert/m{i}.py", f"h{i}") for i in range(8)], columns=provenance.COLUMNS), out), provenance.read),
    "verdicts": (verdicts.FILE, lambda out: verdicts.write(out, [verdict(i) for i in range(8)]), verdicts.read),
    "borrowed runs": (table.BORROWED, lambda out: Borrowed(rows=pd.DataFrame(
        [("p/b", s, f"r{s}", "results/yardsticks/dyck") for s in range(8)], columns=table.BORROWED_COLUMNS)).write(
        out, list(range(8))), table.borrowed_from),
}  # fmt: skip


@pytest.fixture
def written(request, tmp_path, monkeypatch) -> tuple[Path, Callable[[Path], object], str]:
    """(the table file, its reader, the folder) of one writer, written into tmp_path/out."""
    name, write, read = WRITERS[request.param]
    if name.endswith(".gz"):
        monkeypatch.setattr(table, "LARGE", 0)  # every narrow file gzipped, as a large one is
    out = tmp_path / "out"
    out.mkdir()
    write(out)
    return out / name, read, out


def text_of(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def put(path: Path, text: str) -> None:
    """`text` as the file's bytes, gzipped where its name says so: what a cut copy would hold."""
    path.write_bytes(gzip.compress(text.encode(), mtime=0) if path.suffix == ".gz" else text.encode())


def refusal(read: Callable[[Path], object], out: Path) -> str:
    with pytest.raises(TableError) as caught:
        read(out)
    message = str(caught.value)
    assert "\n" not in message, message  # one line
    return message


@pytest.mark.parametrize("written", list(WRITERS), indirect=True)
def test_a_table_as_written_is_sealed_and_reads(written):
    path, read, out = written
    header, *rows = text_of(path).splitlines()
    seal = json.loads(sealed.seal_of(path).read_text())
    assert seal["rows"] == len(rows) > 1
    assert read(out) is not None


@pytest.mark.parametrize("written", list(WRITERS), indirect=True)
@pytest.mark.parametrize("keep", [0, 1, -1])  # no row, the first, all but the last
def test_a_table_cut_at_a_row_boundary_is_refused_naming_the_rows_it_lost(written, keep):
    path, read, out = written
    header, *rows = text_of(path).splitlines(keepends=True)
    kept = rows[:keep]
    put(path, header + "".join(kept))
    said = refusal(read, out)
    assert said.startswith(f"{path} holds {len(kept)} rows of the {len(rows)} it was written with "
                           f"({len(rows) - len(kept)} missing): the file was cut"), said  # fmt: skip


@pytest.mark.parametrize("written", list(WRITERS), indirect=True)
def test_a_table_cut_mid_row_is_refused_naming_the_rows_it_lost(written):
    path, read, out = written
    header, *rows = text_of(path).splitlines(keepends=True)
    put(path, header + "".join(rows[:2]) + rows[2][: len(rows[2]) // 2])
    said = refusal(read, out)
    assert said.startswith(f"{path} holds 2 rows and part of another of the {len(rows)} it was written with "
                           f"({len(rows) - 2} missing)"), said  # fmt: skip


def test_a_gzipped_table_whose_bytes_are_cut_is_refused_naming_the_rows_it_lost(tmp_path, monkeypatch):
    monkeypatch.setattr(table, "LARGE", 0)
    table.write(results(), tmp_path)
    path = tmp_path / f"{table.CATEGORIES}.gz"
    path.write_bytes(path.read_bytes()[:-30])  # a copy interrupted: the archive's end is gone
    said = refusal(table.read, tmp_path)
    assert said.startswith(f"{path} holds ") and f"of the {SEEDS} it was written with" in said, said


@pytest.mark.parametrize("written", list(WRITERS), indirect=True)
def test_a_table_edited_by_hand_with_its_row_count_kept_is_refused(written):
    path, read, out = written
    text = text_of(path)
    header, first, *rest = text.splitlines(keepends=True)
    put(path, header + "".join(rest) + first)  # the same rows in another order
    said = refusal(read, out)
    assert said.startswith(f"{path} holds the {len(rest) + 1} rows it was written with, but not their bytes"), said
    assert "the file was edited" in said


@pytest.mark.parametrize("written", ["categories", "curves", "code", "borrowed runs"], indirect=True)
def test_a_table_beside_results_deleted_while_its_seal_stays_is_refused(written):
    path, read, out = written
    rows = len(text_of(path).splitlines()) - 1
    path.unlink()
    said = refusal(read, out)
    assert said.startswith(f"{path} is missing, though {path.name}.seal says it was written with {rows} rows"), said


@pytest.mark.parametrize("written", list(WRITERS), indirect=True)
def test_a_table_without_a_seal_is_read_as_before_unchecked(written):
    """As every table committed before seals: its cut is not seen, as it never was."""
    path, read, out = written
    header, *rows = text_of(path).splitlines(keepends=True)
    sealed.seal_of(path).unlink()
    put(path, header + "".join(rows[:-1]))
    assert read(out) is not None


def test_a_table_written_again_after_a_cut_reads_and_a_removed_narrow_file_takes_its_seal_along(tmp_path):
    frame = results()
    table.write(frame, tmp_path)
    put(tmp_path / table.FILE, text_of(tmp_path / table.FILE)[:-40])
    with pytest.raises(TableError):
        table.read(tmp_path)
    table.write(frame, tmp_path)
    pd.testing.assert_frame_equal(table.read(tmp_path), frame.reset_index(drop=True), check_dtype=False)
    table.write(frame[frame.category == ""], tmp_path)  # no category rows: no categories.csv, and no seal of one
    assert not (tmp_path / table.CATEGORIES).exists() and not sealed.seal_of(tmp_path / table.CATEGORIES).exists()
    assert len(table.read(tmp_path)) == SEEDS


def test_a_damaged_seal_is_one_line_naming_it(tmp_path):
    table.write(results(), tmp_path)
    sealed.seal_of(tmp_path / table.FILE).write_text("{")
    said = refusal(table.read, tmp_path)
    assert said.startswith(f"{tmp_path / table.FILE}.seal: not the seal of {table.FILE}"), said


def test_the_report_refuses_a_cut_table_in_one_line_with_status_2(tmp_path, capsys):
    """`python -m minibert.report` over a checkout whose table was cut at a row boundary: it still parses, and
    without its seal every page would quote the runs left as if they were all."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("pages"))
    (tmp_path / "configs/pages").mkdir()
    out = tmp_path / "results/pairs"
    table.write(table.read(ROOT / "results/pairs", borrowed=False), out)
    header, *rows = text_of(out / table.FILE).splitlines(keepends=True)
    put(out / table.FILE, header + "".join(rows[:-3]))
    for argv in ([], ["--check"]):
        assert report(["--root", str(tmp_path), *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"results/pairs/{table.FILE} holds {len(rows) - 3} rows of the {len(rows)}" in err[0]
        assert "(3 missing): the file was cut or edited; restore it" in err[0], err
