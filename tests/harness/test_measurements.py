"""The figures measured outside any table (results/measurements.yaml) and the package constants a page states
(`code`): typed, each bad entry or name one line naming it, and a check's bound read from the same record as the
page's sentence."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from minibert.report import measurements
from minibert.report.render import code_constant
from minibert.tables.query import QueryError
from minibert.training.budget import SAMPLES

ENTRY = {"what": "a timing", "unit": "s", "values": {"wall": [2.0, 4.0]}, "command": "bash b.sh",
         "date": "2026-12-06", "machine": "2-core"}  # fmt: skip


def write(root: Path, **entries: dict) -> Path:
    (root / measurements.FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / measurements.FILE).write_text(yaml.safe_dump(entries))
    return root


def test_an_entry_carries_its_values_settings_and_the_bounds_its_check_holds_it_to(tmp_path):
    m = measurements.load(write(tmp_path, x={**ENTRY, "bounds": {"wall": 300, "tol": 1.0e-6}}))["x"]
    assert m.mean("wall") == 3.0 and m.bound("wall") == 300 and m.shown_bound("tol") == "1e-6"
    with pytest.raises(QueryError, match="entry 'x' records no bound 'loss'"):
        m.bound("loss")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"bounds": {"wall": "five minutes"}}, "entry 'x': bounds must map names to numbers"),
        ({"settings": [1, 2]}, "entry 'x': settings must map names to numbers"),
        ({"values": {"wall": []}}, "entry 'x': values must map names to lists of numbers"),
        ({"command": None}, None),
    ],
)
def test_a_bad_entry_is_one_line_naming_it(tmp_path, change, fragment):
    entry = {k: v for k, v in {**ENTRY, **change}.items() if v is not None}
    with pytest.raises(QueryError, match=fragment or "entry 'x' lacks command") as err:
        measurements.load(write(tmp_path, x=entry))
    assert "\n" not in str(err.value)


def test_every_committed_entry_loads_and_the_bounds_the_checks_read_exist():
    found = measurements.load(Path(__file__).resolve().parents[2])
    assert found["default_grid_fresh"].bound("wall") > found["default_grid_fresh"].mean("wall")
    across = found["default_across_machines"]
    assert across.bound("accuracy") > across.most("accuracy") and across.bound("loss") > across.most("loss")


def test_a_page_states_a_package_constant_and_nothing_else():
    assert code_constant("minibert.training.budget.SAMPLES") == SAMPLES
    for path, fragment in [("os.sep", "public constants only"),
                           ("minibert.training.budget.__file__", "public constants only"),
                           ("minibert.training.budget.NO_SUCH", "no such constant"),
                           ("minibert.training.budget.Budget", "not a number or a name")]:  # fmt: skip
        with pytest.raises(QueryError, match=fragment):
            code_constant(path)
