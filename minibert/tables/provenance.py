"""Which code made a grid's table, read against the training code of this checkout.

Each run records the hash of the package's training code (`code`, a column of the table) and the hash of every
file behind it (minibert.training.code_version). The files are kept once per code hash in a narrow table
`<out>/code.csv` beside `results.csv` (code, file, hash), so a page can say of runs made by other code which
files differ from today's. Runs made before runs recorded their code, or their files, are said to be so.

Example:
    >>> print(Data.load("results/validity").provenance.sentence())  # doctest: +SKIP
    288 runs by code fab40e6f, which differs from today's in minibert/pairs/grade.py
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from minibert.ablation.grid import load_grid
from minibert.ablation.runner import plan
from minibert.tables import sealed, table
from minibert.tables.table import TableError
from minibert.training.code_version import NOT_HASHED, package_files, source_hash

FILE = "code.csv"
YARDSTICKS = "results/yardsticks"  # <language>/: the shipped arms' runs a plug-in's comparison pairs with
REFRESH = "python scripts/yardsticks.py --languages {language}"  # what makes or refreshes a language's table
COLUMNS = ["code", "file", "hash"]
SHOWN = 4  # files named before "and N more"


def from_summaries(summaries) -> pd.DataFrame:
    """(code, file, hash) for every code hash among the runs' summaries that recorded its files."""
    rows, seen = [], set()
    for summary in summaries:
        code = summary.get("code") or {}
        made_by, files = code.get("source_hash"), code.get("files")
        if made_by and isinstance(files, dict) and made_by not in seen:
            seen.add(made_by)
            rows += [(made_by, f, h) for f, h in sorted(files.items())]
    return pd.DataFrame(rows, columns=COLUMNS)


def write(frame: pd.DataFrame, out: str | Path) -> list[Path]:
    """`<out>/code.csv` atomically and sealed (minibert.tables.sealed), or no file where no run recorded its files
    (an older one is removed)."""
    path = Path(out) / FILE
    if frame.empty:
        sealed.remove(path)
        return []
    sealed.write(path, frame.to_csv(index=False, lineterminator="\n"))
    return [path]


def read(out: str | Path) -> dict[str, dict[str, str]]:
    """{code hash: {file: hash}} from `<out>/code.csv`, {} where there is none; TableError, in one line, for one that
    does not parse, lacks a column, or was cut or edited since it was written."""
    path = Path(out) / FILE
    fix = f"restore it (git checkout -- {path}) or rebuild it from its runs (python scripts/ablate.py --report-only)"
    if not sealed.written(path):
        return {}
    sealed.check(path, fix)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise TableError(f"{path}: not a code table ({type(err).__name__}): {fix}") from None
    if missing := [c for c in COLUMNS if c not in frame.columns]:
        raise TableError(f"{path}: lacks the column(s) {', '.join(missing)}: restore it (git checkout -- {path})")
    return {code: dict(zip(rows["file"], rows["hash"])) for code, rows in frame.groupby("code", sort=True)}


def differing(made_by: dict[str, str], today: dict[str, str]) -> list[str]:
    """The files whose hash differs, with those only one side has. A file today's hash leaves out (it reads
    results or orders runs: code_version.NOT_HASHED) is no difference, though older code hashed it.

    >>> differing({"a.py": "1", "b.py": "2"}, {"a.py": "1", "b.py": "3", "c.py": "4"})
    ['b.py', 'c.py (new)']
    >>> differing({"a.py": "1", "minibert/report/x.py": "2"}, {"a.py": "1"})
    []
    """
    made_by = {k: v for k, v in made_by.items() if not _left_out(k)}
    differ = sorted(k for k in made_by.keys() | today.keys() if made_by.get(k) != today.get(k))
    return [f + (" (new)" if f not in made_by else " (removed)" if f not in today else "") for f in differ]


def _left_out(file: str) -> bool:
    """Whether today's package hash leaves `file` (named `minibert/...`) out."""
    package, _, rel = file.partition("/")
    return package == "minibert" and rel.startswith(NOT_HASHED)


@dataclass(frozen=True)
class Made:
    """The runs one code made: its hash ('' where the runs recorded none; hashes joined by ',' for codes said
    together: every other code whose files the runs did not record, or codes that differ from today's in the same
    files), how many, and the files in which it differs from today's training code (None where the runs did not
    record their files)."""

    code: str
    runs: int
    differs: list[str] | None

    @property
    def current(self) -> bool:
        return self.differs == []

    def sentence(self, today: str) -> str:
        """What made these runs, against today's training code (`today`, its hash)."""
        runs = f"{self.runs} run{'s' if self.runs != 1 else ''}"
        if not self.code:
            return f"{runs}, code not recorded"
        if self.differs is None:
            codes = self.code.split(",")
            which = f"code {codes[0][:8]}" if len(codes) == 1 else f"{len(codes)} other codes"
            return f"{runs} by {which}, not today's; which files differ is not recorded"
        codes = self.code.split(",")
        by = f"code {codes[0][:8]}" if len(codes) == 1 else f"{len(codes)} other codes"
        if not self.differs:
            if self.code == today:
                return f"{runs} by today's code"
            return f"{runs} by {by}, whose training files are today's (it also hashed files no longer hashed)"
        more = len(self.differs) - SHOWN
        shown = ", ".join(self.differs[:SHOWN]) + (f" and {more} more" if more > 0 else "")
        return f"{runs} by {by}, which {'differs' if len(codes) == 1 else 'differ'} from today's in {shown}"


@dataclass(frozen=True)
class Provenance:
    """Which code made a table: one `Made` per code hash, the runs of today's code first."""

    made: list[Made]
    today: str

    @property
    def current(self) -> bool:
        return all(m.current for m in self.made)

    def sentence(self) -> str:
        return ", ".join(m.sentence(self.today) for m in self.made)


def of(frame: pd.DataFrame, out: str | Path) -> Provenance:
    """The provenance of the table `frame` read from `out` (its `code` column and `<out>/code.csv`)."""
    today, files, recorded = source_hash(), package_files(), read(out)
    runs = frame.drop_duplicates(["experiment", "seed"])
    codes = runs["code"].fillna("").astype(str) if "code" in runs.columns else pd.Series([""] * len(runs))
    made, unknown = [], {}  # unknown: other code whose files the runs did not record, said once
    for code, count in codes.value_counts(sort=False).items():
        if code and code != today and code not in recorded:
            unknown[code] = int(count)
            continue
        made.append(Made(code, int(count), [] if code == today else differing(recorded[code], files) if code else None))
    made = _together(made, today)
    if unknown:
        made.append(Made(",".join(sorted(unknown)), sum(unknown.values()), None))
    made.sort(key=lambda m: (not m.current, m.differs is None, -m.runs, m.code))
    return Provenance(made, today)


def _together(made: list[Made], today: str) -> list[Made]:
    """Other codes that differ from today's in the same files, said once: runs made while only files outside
    the training code changed carry many hashes and one difference."""
    kept, groups = [], {}
    for m in made:
        if not m.code or m.code == today or m.differs is None:
            kept.append(m)
        else:
            groups.setdefault(tuple(m.differs), []).append(m)
    for differs, ms in groups.items():
        codes = ",".join(m.code for m in sorted(ms, key=lambda m: (-m.runs, m.code)))
        kept.append(Made(codes, sum(m.runs for m in ms), list(differs)))
    return kept


def stale_yardsticks(root: str | Path) -> list[str]:
    """A line for each committed yardstick table under `root` (minibert.compare.committed) that a comparison could
    not pair with: runs by other training code than today's, or runs whose keys are not those its grid plans
    with today's configs (a config edited since), each naming the command that refreshes it."""
    root, lines, today = Path(root), [], source_hash()
    for folder in sorted(p.parent for p in (root / YARDSTICKS).glob(f"*/{table.FILE}")):
        committed, refresh = table.read(folder, borrowed=False), REFRESH.format(language=folder.name)
        codes = set(committed["code"].fillna("none"))
        if codes != {today}:
            lines.append(f"{YARDSTICKS}/{folder.name}: runs by code {', '.join(sorted(codes - {today}))}, not today's "
                         f"{today}: comparisons train these arms again; `{refresh}` refreshes it")  # fmt: skip
            continue
        grid = load_grid(folder / "grid.yaml", root=root)
        seeds = sorted({int(s) for s in committed["seed"]})
        planned = {(r.experiment.name, r.seed, r.key) for r in plan(list(grid.experiments), seeds, folder, root)}
        made = set(zip(committed["experiment"], committed["seed"].astype(int), committed["run"]))
        if made - planned:
            lines.append(f"{YARDSTICKS}/{folder.name}: {len(made - planned)} of its runs are not what its grid plans "
                         f"with today's configs (one edited since?): comparisons train these arms again; `{refresh}` "
                         "refreshes it")  # fmt: skip
    return lines
