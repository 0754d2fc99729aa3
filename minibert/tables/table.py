"""One tidy results table: a row per run, metric and category, a column per variable.

Columns, in order:
- `grid`, `experiment`, `stage` (pretrain | finetune), then the grid's axes (minibert.tables.axes: objective,
  language, budget, regime, ..., read from each experiment's saved config beside the table, `configs/`:
  minibert.tables.saved), so a query never parses a name;
- `seed`, `val_seed` (the validation set the run graded: one value for every seed of an experiment means
  the sampling of its questions is an error every seed shares, see minibert.tables.stats);
- `metric` (`val/acc`, `val/gap/acc`, `val/mlm/acc`, `train/loss`, `wall_time_s`, ...), `category` ('' for
  all questions, `opener`, `dist_2_3`, ...), `value`, `n` (the questions behind an accuracy; empty for
  other metrics);
- `run` (the run's config hash: its folder `seed<s>-<run>`) and `code` (the source hash of the code that
  made it; empty for runs made before summaries recorded it).

An accuracy key `val/<head>[ceiling/|gap/|bayes/]acc[_<category>]` becomes metric `val/<head>[...]acc` and
its category; its count `val/<head>n[_<category>]` becomes the `n` of those rows. Each grid's table is
`<out>/results.csv`, written by the runner and read by every page.

Rows of a category are rows of the same table stored apart, with only the columns that tell them apart
(experiment, seed, run, metric, category, value, n): a run has dozens to hundreds of them, and repeating every
axis column on each made a grid's file several megabytes. Figures per validation document (metrics
`val/by_document/...`, category `d<index>`: text runs keep them for the document-clustered validation error)
go to `<out>/documents.csv`, every other category's rows to `<out>/categories.csv`. `read` joins both back to
their run's columns, so a reader sees one table.

Each file is written with its seal (`results.csv.seal`: its row count and digest, minibert.tables.sealed), and read
only while it matches it: a table cut or edited since is refused in one line, naming the rows it lost.

Example:
    >>> import pandas as pd
    >>> t = read("results/dyck")
    >>> mlm = t.query("objective == 'MaskedLM' and stage == 'pretrain' and metric == 'val/gap/acc' and category == ''")
    >>> sorted(mlm.experiment.unique())
    ['dyck/pretrain/mlm', 'dyck/pretrain/mlm_causal']
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from minibert.ablation.grid import Grid
from minibert.checkout import CHECKOUT
from minibert.stats import accuracies
from minibert.tables import sealed
from minibert.tables.axes import grid_axes
from minibert.tables.sealed import TableError

FILE = "results.csv"
CATEGORIES = "categories.csv"
DOCUMENTS = "documents.csv"
BORROWED = "yardsticks.csv"  # the committed runs made elsewhere that this folder pairs with (minibert.compare)
BORROWED_COLUMNS = ["experiment", "seed", "run", "table"]  # a run, and the committed table it is read from
FILES = (FILE, CATEGORIES, DOCUMENTS)  # what `write` writes: the narrow ones only where rows go to them
LARGE = 1 << 20  # bytes beyond which a narrow file is written gzipped (`<name>.gz`)
READ = (*FILES, f"{CATEGORIES}.gz", f"{DOCUMENTS}.gz", BORROWED)  # what `read` reads: a table on disk
BY_DOCUMENT = "val/by_document/"  # the metrics stored in DOCUMENTS
RUN_KEY = ["experiment", "seed", "run"]
DOCUMENT_COLUMNS = [*RUN_KEY, "metric", "category", "value", "n"]
ORDER = ["experiment", "seed", "metric", "category"]  # the table's row order (unique per row)
FIRST = ["grid", "experiment", "stage"]
LAST = ["seed", "val_seed", "metric", "category", "value", "n", "run", "code"]
_RUN = re.compile(r"seed\d+-(?P<run>[0-9a-f]+)$")


def grid_name(grid: Grid) -> str:
    return Path(grid.path).stem


def split(key: str) -> tuple[str, str]:
    """A logged key as the table's (metric, category): `val/gap/acc_opener` -> ('val/gap/acc', 'opener');
    a key that is not an accuracy (a loss, a count) -> (key, '')."""
    parsed = accuracies.parse(key)
    if parsed is None or parsed.role == "n":
        return key, ""
    return accuracies.AccKey(parsed.prefix, parsed.role, "").key(parsed.role), parsed.category


def tables_under(root: str | Path) -> list[Path]:
    """Every folder under `root` (itself included) that holds a results table, in path order. A grid's `runs/`
    folders are not walked: a sweep writes there while a report reads the tables, and a folder it removes
    mid-walk is skipped (os.walk's default), not an error."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "runs"]
        if FILE in files:
            found.append(Path(folder))
    return sorted(found)


def grid_of_table(out: str | Path) -> str | None:
    """The grid whose table is in `out` (the `grid` column of its first row), None without one: read from the
    file's first two lines, not the whole table."""
    try:
        with open(Path(out) / FILE, newline="") as f:
            rows = csv.reader(f)
            return dict(zip(next(rows), next(rows))).get("grid")
    except (OSError, StopIteration):
        return None


def _columns(grid: Grid, saved: Mapping[str, dict]) -> dict[str, dict]:
    """experiment -> its axis columns (minibert.tables.axes), a setting named like a table column (`seed` in
    data.seed) renamed `setting <name>`."""
    reserved = {*FIRST, *LAST}
    return {e: {(f"setting {k}" if k in reserved else k): v for k, v in a.items()}
            for e, a in grid_axes(grid, saved).items()}  # fmt: skip


def tidy(grid: Grid, runs: Iterable[tuple[str, int, str, dict, str]], saved: Mapping[str, dict]) -> pd.DataFrame:
    """The table of `grid` from its runs, each (experiment, seed, run, metrics, code): `metrics` the numeric
    entries of the run's summary (None for a NaN) plus its `seeds/val`; its axes from `saved`, each experiment's
    saved config (minibert.tables.saved)."""
    axes = _columns(grid, saved)
    names = list(next(iter(axes.values())))
    stages = {e.name: e.job_type for e in grid.experiments}
    rows = []
    for experiment, seed, run, metrics, code in runs:
        if experiment not in axes:
            raise ValueError(f"{experiment} is not an experiment of {grid.path}")
        counts = {}
        for key, value in metrics.items():
            parsed = accuracies.parse(key)
            if parsed is not None and parsed.role == "n":
                counts[(parsed.prefix, parsed.category)] = value
        val_seed = metrics.get("seeds/val")
        for key, value in metrics.items():
            parsed = accuracies.parse(key)
            if key.startswith("seeds/") or (parsed is not None and parsed.role == "n"):  # counts: the rows' `n`
                continue
            metric, category = split(key)
            n = counts.get((parsed.prefix, parsed.category)) if parsed else None
            rows.append({"grid": grid_name(grid), "experiment": experiment, "stage": stages[experiment],
                         **axes[experiment], "seed": seed, "val_seed": val_seed, "metric": metric,
                         "category": category, "value": math.nan if value is None else float(value),
                         "n": n, "run": run, "code": code})  # fmt: skip
    columns = [*FIRST, *names, *LAST]
    return pd.DataFrame(rows, columns=columns).sort_values(ORDER, kind="stable")


def from_runs(grid: Grid, runs, saved: Mapping[str, dict]) -> pd.DataFrame:
    """The table of the finished `runs` (minibert.ablation.runner.Run with their summaries), its axes from
    `saved` (experiment -> its saved config)."""

    def entries():
        for run, summary in runs:
            metrics = {k: v for k, v in summary.items() if isinstance(v, (int, float)) or v is None}
            if isinstance(val := (summary.get("seeds") or {}).get("val"), int):
                metrics["seeds/val"] = val
            code = (summary.get("code") or {}).get("source_hash")
            yield run.experiment.name, run.seed, run.key, metrics, code

    return tidy(grid, entries(), saved)


def relabel(out: str | Path, grid: Grid, saved: Mapping[str, dict]) -> list[Path]:
    """Rewrite the axis columns of the table in `out` from `saved` (experiment -> its saved config), every other
    column as it is: a table's axes follow how they are derived without its runs trained again."""
    frame = read(out, borrowed=False)
    axes = _columns(grid, saved)
    names = list(next(iter(axes.values())))
    columns = pd.DataFrame([{"experiment": e, **a} for e, a in axes.items()], columns=["experiment", *names])
    kept = frame[[c for c in frame.columns if c in (*FIRST, *LAST)]]
    frame = kept.merge(columns, on="experiment", how="left")[[*FIRST, *names, *LAST]]
    return write(frame.sort_values(ORDER, kind="stable"), out)


def write(table: pd.DataFrame, out: str | Path) -> list[Path]:
    """`<out>/results.csv`, and the narrow `<out>/categories.csv` and `<out>/documents.csv` where rows go to them,
    each atomically and sealed (a killed writer leaves the old file; `read` joins only the rows of runs in
    results.csv). Returns the files written (their seals beside them)."""
    out = Path(out)
    per_document = table["metric"].str.startswith(BY_DOCUMENT)
    per_category = ~per_document & (table["category"].fillna("") != "")
    # a run's columns come from its rows in results.csv: a run with no row of its own there keeps its categories
    run = pd.MultiIndex.from_frame(table[RUN_KEY].astype(str))
    per_category &= run.isin(run[~per_document & ~per_category])
    sealed.write(out / FILE, _csv(table[~per_document & ~per_category]))
    written = [out / FILE]
    for name, rows in ((CATEGORIES, per_category), (DOCUMENTS, per_document)):
        for stale in (out / name, out / f"{name}.gz"):  # a narrow file of an earlier table would be joined in
            sealed.remove(stale)
        if rows.any():
            text = _csv(table.loc[rows, DOCUMENT_COLUMNS])
            if len(text) > LARGE:  # kept small in the repository; the bytes are the same for the same rows
                written.append(out / f"{name}.gz")
                sealed.write(written[-1], gzip.compress(text.encode(), mtime=0))
            else:
                written.append(out / name)
                sealed.write(written[-1], text)
    return written


def narrow_file(out: str | Path, name: str) -> Path | None:
    """The narrow file `name` beside the table in `out`, as written (plain, or gzipped where large), or None; one
    gone since it was written (its seal is there) is named, for its reader to refuse it."""
    found = [p for p in (Path(out) / name, Path(out) / f"{name}.gz") if sealed.written(p)]
    return found[0] if found else None


def _csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n", float_format="%.10g")


REQUIRED = ["grid", "experiment", "stage", "seed", "metric", "category", "value", "n"]  # what every reader needs
NUMERIC = ("seed", "value", "n")  # columns that hold numbers (a value or an n may be empty; a seed may not)


def read(out: str | Path, borrowed: bool = True) -> pd.DataFrame:
    """The table in `out`; an empty cell is NaN (an axis that does not apply), except `category` ('').
    With `borrowed`, the rows of `BORROWED` beside it join it, those of runs the folder did not make itself.
    TableError, in one line naming the file (and the line and column), for a table that is empty, lacks a
    column every reader needs, holds a value that is not a number where one must be, or no longer matches its seal
    (cut or edited since it was written: minibert.tables.sealed)."""
    path = Path(out) / FILE
    # low_memory=False: each column's type is inferred from the whole file, not chunk by chunk (a large table
    # whose axis columns hold numbers in one arm's rows and text in another's would otherwise mix types).
    types = {"category": str, "run": str, "code": str}
    table = _read_wide(path, out, types)
    narrow = [_narrow(found, out) for name in (CATEGORIES, DOCUMENTS) if (found := narrow_file(out, name))]
    if narrow:
        runs = table.drop(columns=DOCUMENT_COLUMNS[len(RUN_KEY) :]).drop_duplicates(RUN_KEY)
        joined = [rows.merge(runs, on=RUN_KEY, how="inner")[table.columns] for rows in narrow]
        table = pd.concat([table, *joined], ignore_index=True)
        table = table.sort_values(ORDER, kind="stable", ignore_index=True)
    if borrowed and sealed.written(Path(out) / BORROWED):
        own = set(zip(table["experiment"], table["seed"]))
        rows = [r for r in _borrowed(Path(out) / BORROWED, out) if len(r)]
        rows = [r[[k not in own for k in zip(r["experiment"], r["seed"])]][[c for c in r.columns if c in table.columns]]
                for r in rows]  # fmt: skip
        table = pd.concat([table, *rows], ignore_index=True).sort_values(ORDER, kind="stable", ignore_index=True)
    return table


def experiments_in(out: str | Path) -> set[str]:
    """The experiments with runs in the table in `out`, and those it borrows: read from one column of each file."""
    sealed.check(Path(out) / FILE, _restore(out))
    own = set(pd.read_csv(Path(out) / FILE, usecols=["experiment"], dtype=str)["experiment"])
    return own | set(borrowed_from(out))


def borrowed_from(out: str | Path) -> dict[str, str]:
    """experiment -> the committed table (relative to the checkout) whose runs of it the folder `out` borrows
    (`BORROWED`); empty without the file."""
    path = Path(out) / BORROWED
    if not sealed.written(path):
        return {}
    refs = _borrowed_refs(path, out)
    return dict(zip(refs["experiment"], refs["table"]))


def _borrowed_refs(path: Path, out: str | Path) -> pd.DataFrame:
    return read_beside(path, out, "a list of borrowed runs", BORROWED_COLUMNS, ("seed",), {"run": str, "table": str})


def _borrowed(path: Path, out: str | Path) -> list[pd.DataFrame]:
    """The rows `path` names (its runs: experiment, seed, run, and the committed table each is read from,
    relative to the checkout), read from those tables rather than copied beside this one."""
    refs = _borrowed_refs(path, out)
    found = []
    for folder, wanted in refs.groupby("table"):
        if not (CHECKOUT / folder / FILE).is_file():
            raise TableError(f"{path}: borrows runs of {folder}, which holds no table: run the comparison again")
        source, keys = (
            read(CHECKOUT / folder, borrowed=False),
            set(zip(wanted["experiment"], wanted["seed"], wanted["run"])),
        )
        found.append(source[[k in keys for k in zip(source["experiment"], source["seed"], source["run"])]])
    return found


def _read_wide(path: Path, out: str | Path, types: dict) -> pd.DataFrame:
    """One wide table file, checked (TableError in one line), its `category` '' where empty."""
    sealed.check(path, _restore(out))
    try:
        table = pd.read_csv(path, dtype=types, low_memory=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise TableError(f"{path}: not a results table ({type(err).__name__}): {_restore(out)}") from None
    _check(table, path, out)
    table["category"] = table["category"].fillna("")  # before sorting: '' (all questions) sorts first
    return table


def _narrow(path: Path, out: str | Path) -> pd.DataFrame:
    """A narrow file of category or document rows, checked as the main table is (TableError in one line)."""
    rows = read_beside(path, out, "a table of rows", DOCUMENT_COLUMNS, NUMERIC, {"category": str, "run": str})
    rows["category"] = rows["category"].fillna("")
    return rows


def read_beside(path: Path, out: str | Path, what: str, columns: Sequence[str], numeric: Sequence[str],
                types: dict) -> pd.DataFrame:  # fmt: skip
    """A CSV file beside the table in `out` (`what` it is, the `columns` it must have, those that hold numbers),
    checked as the table is: TableError in one line naming the file for one that does not parse, lacks a column
    or holds a value that is not a number where one must be, or that no longer matches its seal; the numeric
    columns are numbers afterwards."""
    sealed.check(path, _restore(out, path))
    try:
        rows = pd.read_csv(path, dtype=types)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise TableError(f"{path}: not {what} ({type(err).__name__}): {_restore(out, path)}") from None
    if missing := [c for c in columns if c not in rows.columns]:
        raise TableError(f"{path}: lacks the column(s) {', '.join(missing)}: {_restore(out, path)}")
    _numbers(rows, path, out, numeric)
    return rows


def read_json(path: str | Path, keys: tuple[str, ...] = ()) -> dict:
    """A JSON record beside a table (`run.json`, a comparison's record); TableError, in one line naming the file
    (and the line and column), for one that is missing, does not parse, is not an object, or lacks one of `keys`."""
    path = Path(path)
    restore = f"restore it (git checkout -- {path}) or make it again with the command that wrote it"
    try:
        body = json.loads(path.read_text())
    except FileNotFoundError:
        raise TableError(f"{path}: missing: {restore}") from None
    except json.JSONDecodeError as err:
        raise TableError(f"{path}: not JSON (line {err.lineno}, column {err.colno}: {err.msg}): {restore}") from None
    except UnicodeDecodeError:
        raise TableError(f"{path}: not text: {restore}") from None
    if not isinstance(body, dict):
        raise TableError(f"{path}: a JSON {type(body).__name__}, not an object: {restore}")
    if missing := [k for k in keys if k not in body]:
        raise TableError(f"{path}: lacks {', '.join(missing)}: {restore}")
    return body


def _restore(out: str | Path, path: Path | None = None) -> str:
    """The fix a TableError names: the committed file (`path`, the table by default) again, or the table rebuilt
    from the finished runs."""
    return (f"restore it (git checkout -- {path or Path(out) / FILE}) or rebuild it from its runs (python "
            f"scripts/ablate.py --report-only --grid <its grid> --out {out})")  # fmt: skip


def _check(table: pd.DataFrame, path: Path, out: str | Path) -> None:
    """TableError for a missing column, an empty table, or a cell that must be a number and is not (named by its
    CSV line: the header is line 1); the numeric columns are numbers afterwards."""
    if missing := [c for c in REQUIRED if c not in table.columns]:
        raise TableError(f"{path}: lacks the column(s) {', '.join(missing)}: {_restore(out)}")
    if table.empty:
        raise TableError(f"{path}: holds no rows (a header alone): {_restore(out)}")
    _numbers(table, path, out)


def _numbers(table: pd.DataFrame, path: Path, out: str | Path, numeric: Sequence[str] = NUMERIC) -> None:
    """TableError for a cell of a `numeric` column that is not a number (named by its CSV line; an empty seed is
    not one either); numbers after."""
    for column in numeric:
        values = table[column]
        wrong = pd.to_numeric(values, errors="coerce").isna() & (values.notna() | (column == "seed"))
        if wrong.any():
            row = int(wrong.to_numpy().argmax())
            raise TableError(f"{path}: line {row + 2}, column {column}: {values.iloc[row]!r} is not a number: "
                             f"{_restore(out)}")  # fmt: skip
        table[column] = pd.to_numeric(values)
