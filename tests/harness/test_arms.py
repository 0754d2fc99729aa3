"""The arm registry (configs/arms.yaml): an objective or an arm added to a grid alone reaches the grid's pages and
dashboard under its registered label (or its own name), in its registered colour, and no page model types an arm
of its own."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import matplotlib.colors
import pandas as pd
import pytest
import yaml

from minibert.report import asked, grid_report, verdicts
from minibert.report.dyck_gap import DyckGap
from minibert.report.dyck_page import DyckPage
from minibert.report.objectives import Objectives
from minibert.tables import arms, table
from minibert.tables.query import Data
from minibert.tables.record import grid_of

ROOT = Path(__file__).resolve().parents[2]
NEW, LABEL = "MaskRate30", "mask rate 30%"


def _with_new_objective(tmp_path: Path, registered: bool) -> Path:
    """A checkout whose objectives grid gains one objective (pre-trained, then fine-tuned frozen and full) in its
    config alone, its table holding MLM's rows under the new arm's names, and (if `registered`) a registry entry."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    shutil.copytree(ROOT / "results/objectives", tmp_path / "results/objectives", ignore=shutil.ignore_patterns("runs"))
    grid = tmp_path / "configs/ablations/objectives.yaml"
    config = yaml.safe_load(grid.read_text())
    config["experiments"] += [
        {"name": "objectives/pretrain/rate30", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"]},
        *({"name": f"objectives/finetune/rate30-{r}", "job_type": "finetune", "configs": ["configs/finetune.yaml"],
           "overrides": {"model.init_args.regime": r}, "encoder_from": "objectives/pretrain/rate30"}
          for r in ("frozen", "full")),
    ]  # fmt: skip
    grid.write_text(yaml.safe_dump(config, sort_keys=False))
    if registered:
        registry = yaml.safe_load((tmp_path / arms.FILE).read_text())
        registry["objectives"][NEW] = {"label": LABEL, "description": "MLM at a 30% rate"}
        (tmp_path / arms.FILE).write_text(yaml.safe_dump(registry, sort_keys=False))
    out = tmp_path / "results/objectives"
    frame = pd.read_csv(out / table.FILE, dtype={"category": str, "run": str, "code": str}, low_memory=False)
    mlm = frame[frame["experiment"].str.match(r"objectives/(pretrain/mlm|finetune/mlm-(frozen|full))$")].copy()
    mlm["experiment"] = mlm["experiment"].str.replace("mlm", "rate30")
    mlm["objective"] = NEW
    pd.concat([frame, mlm]).to_csv(out / table.FILE, index=False, lineterminator="\n")
    return tmp_path


@pytest.mark.parametrize("registered", [True, False])
def test_an_objective_added_to_the_grid_alone_reaches_its_page_and_dashboard_under_its_label(tmp_path, registered):
    root = _with_new_objective(tmp_path, registered)
    arms.registry.cache_clear()
    label = LABEL if registered else NEW  # unregistered: named by its class
    out = root / "results/objectives"
    data = Data.load(out)
    verdicts.decide(data, grid_of(out, root), root)
    page = Objectives(data, root)
    rows = {row[0]: row for row in page.objective_rows()}
    assert label in rows and page.objectives[-1] == NEW  # after the registry's own, in the table's order
    own, mlm = rows[label], rows["mlm"]
    assert own[2:] == mlm[2:] and own[1].split(" ", 1)[1] == mlm[1].split(" ", 2)[2]  # MLM's runs, read alike
    if not registered:  # its dashboard row: the overview's, under its class name
        row = next(r for r in grid_report.overview(data, root).rows if r[0] == "objectives/pretrain/rate30")
        assert row[1] == label
        return
    grid_report.write(out, grid_of(out, root), data=data, root=root)
    markdown = (out / "ablation.md").read_text().splitlines()
    assert next(x for x in markdown if x.startswith("| objectives/pretrain/rate30 |")).split(" | ")[1] == label
    html = re.findall(r"<tr>.*?</tr>", (out / "dashboard.html").read_text(), flags=re.S)
    row = next(r for r in html if "objectives/pretrain/rate30<" in r)
    assert f">{label}<" in row


@pytest.mark.parametrize("registered", [True, False])
def test_an_arm_added_to_the_dyck_grid_alone_reaches_its_pages_under_its_label(monkeypatch, registered):
    """The Dyck grid's table gains an arm (MLM's rows under its name, pre-trained and fully fine-tuned): the Dyck
    page's heads and encoders and the gap page list it, named by the registry or by its own name, after the
    registered arms; a figure draws it in its registered colour, or in one no registered arm of the figure takes."""
    if registered:
        found = arms.registry(ROOT)
        extra = arms.Arm("rate30", "MLM at 30%", colour="black")
        monkeypatch.setattr(
            arms, "registry", lambda root=ROOT: arms.Registry(found.objectives, {**found.arms, "rate30": extra})
        )
    label = "MLM at 30%" if registered else "rate30"
    data = Data.load(ROOT / "results/dyck")
    frame = data.frame
    mlm = frame[frame["experiment"].isin(["dyck/pretrain/mlm", "dyck/finetune/mlm-full"])].copy()
    mlm["experiment"] = mlm["experiment"].str.replace("mlm", "rate30")
    grown = Data(pd.concat([frame, mlm], ignore_index=True), data.out)
    page = DyckPage(grown, Data.load(ROOT / "results/dyck_variance"), Data.load(ROOT / "results/recipe"))
    heads = {row[0]: list(map(str, row)) for row in page.head_rows()}
    assert list(heads)[-1] == label and heads[label][2:] == heads["MLM"][2:]  # MLM's figures, after the registry's
    encoders = {row[0]: list(map(str, row)) for row in page.encoder_rows()}
    assert encoders[f"{label}, full"][1:] == encoders["MLM, full"][1:]
    assert DyckGap(grown).header()[-1] == label
    colours = arms.colours(["dyck/pretrain/mlm", "dyck/pretrain/rate30"])
    assert colours["dyck/pretrain/mlm"] == "tab:blue"
    assert (colours["dyck/pretrain/rate30"] == "black") == registered and colours["dyck/pretrain/rate30"] != "tab:blue"


def test_names_and_order_come_from_the_registry():
    assert arms.name_of("scaling/pretrain/mlm-w64/x1") == "mlm-w64"
    assert arms.name_of("objectives/finetune/rtd-frozen") == "rtd"
    assert arms.name_of("recipe/objectives/span") == "span"
    assert arms.arm("pretrain/causal").key == "mlm_causal"  # the default grid's name for it
    assert arms.names("d/finetune/span-full", "d/finetune/mlm-full") == ("span masking", "MLM")
    assert arms.names("d/finetune/mlm-full", "d/finetune/mlm-probe")[1] == "MLM, " + arms.REGIMES["probe"]
    found = arms.ordered(["d/pretrain/mine", "d/pretrain/span", "d/finetune/no_pretrain", "d/pretrain/mlm"])
    assert found == ["d/pretrain/mlm", "d/pretrain/span", "d/finetune/no_pretrain", "d/pretrain/mine"]
    assert arms.control() == "mlm"


def test_a_figure_gives_each_series_its_own_colour_and_each_arm_its_registered_one():
    names = ["MLM", "MLM, control task", "causal MLM (its left-only ceiling)", "learned", "ELECTRA's generator"]
    found = arms.colours(names)
    assert found["MLM"] == "tab:blue" and found["causal MLM (its left-only ceiling)"] == "tab:orange"
    assert found["ELECTRA's generator"] == "tab:red"
    rgba = [matplotlib.colors.to_rgba(c) for c in found.values()]
    assert len(set(rgba)) == len(names)  # a second series of MLM and an unregistered one: colours none other takes
    assert arms.colours(["learned"])["learned"] == arms.colours(["x"])["x"]  # by place, whatever the name


@pytest.mark.parametrize(
    "text, says",
    [("arms:\n  mlm: {label: MLM, colour: nocolour}\n", "not a Matplotlib colour"),
     ("arms:\n  a: {label: A, control: true}\n  b: {label: B, control: true}\n", "one arm at most is the control"),
     ("arms:\n  a: {label: A, aliases: [b]}\n  b: {label: B}\n", "another arm's too"),
     ("arms:\n  a: {label: A, cloze: maybe}\n", "true or false"),
     ("arm:\n  a: {label: A}\n", "give the sections")],
)  # fmt: skip
def test_a_damaged_arm_section_is_one_line(tmp_path, text, says):
    (tmp_path / "configs").mkdir()
    (tmp_path / arms.FILE).write_text(text)
    with pytest.raises(table.TableError, match=says) as err:
        arms.registry(tmp_path)
    assert "\n" not in str(err.value)


def test_the_pages_questions_are_read_once_and_a_damaged_file_is_one_line(tmp_path):
    found = asked.asked(ROOT)
    assert all(arms.name_of(q.a) in arms.registry(ROOT).arms for q in found.dyck)
    assert [c.budgets for c in found.claims] == [slice(None), slice(None, 2), slice(-2, None), slice(None)]
    assert found.runs["dyck-pretrain"] == ("results/dyck", "dyck/pretrain/mlm")
    (tmp_path / "configs/pages").mkdir(parents=True)
    written = yaml.safe_load((ROOT / asked.FILE).read_text())
    runs_damaged = yaml.safe_dump({**written, "runs": {"x": ["results"]}})
    pairs_damaged = "dyck: [[a]]\ntransfer: []\nscaling: {}\nstructure: {}\nruns: {}\n"
    for text, says in (("dyck: []\n", "give the sections"), (pairs_damaged, "is not \\[A, B\\]"),
                       (runs_damaged, "runs.x: .* is not \\[table folder, experiment\\]")):  # fmt: skip
        (tmp_path / asked.FILE).write_text(text)
        asked.asked.cache_clear()
        with pytest.raises(table.TableError, match=says) as err:
            asked.asked(tmp_path)
        assert "\n" not in str(err.value)
    asked.asked.cache_clear()


def test_a_damaged_registry_is_one_line(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / arms.FILE).write_text("objectives:\n  MaskedLM: {description: no label}\n")
    arms.registry.cache_clear()
    with pytest.raises(table.TableError, match="give label") as err:
        arms.registry(tmp_path)
    assert "\n" not in str(err.value)


def _literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module's code, docstrings aside (an f-string's typed parts included)."""
    tree = ast.parse(path.read_text())
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}  # fmt: skip
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def _typed(text: str, registry: arms.Registry) -> bool:
    """Whether a string names a registered arm or objective: its key, an alias, an experiment holding one, or its
    label (alone, or as a page would extend it)."""
    keys = {*registry.objectives, *registry.arms}
    aliases = {n for a in registry.arms.values() for n in a.aliases}  # alone, they are words ('causal', a column)
    labels = [x.label for x in (*registry.objectives.values(), *registry.arms.values())]
    experiment = "/" in text and " " not in text and arms.name_of(text) in keys | aliases
    extended = any(text == x or text.startswith((f"{x}, ", f"{x} (", f"{x}'s")) for x in labels)
    return text in keys or experiment or extended


@pytest.mark.parametrize("module", sorted(p.name for p in (ROOT / "minibert/report").glob("*.py")))
def test_no_page_model_types_an_arm(module):
    """Arms are named by the registry, listed from the tables, and the questions pages were written to answer come
    from configs/pages/questions.yaml: no page model holds a registered arm's name or label of its own."""
    registry = arms.registry(ROOT)
    typed = [(line, text) for line, text in _literals(ROOT / "minibert/report" / module) if _typed(text, registry)]
    assert not typed, f"{module} types registered arms: {typed}"


def test_the_typed_arm_check_finds_what_it_looks_for():
    registry = arms.registry(ROOT)
    for text in ("mlm", "MaskedLM", "dyck/finetune/mlm_causal-full", "pretrain/causal", "MLM", "MLM, full",
                 "span masking (x)", "ELECTRA's generator", "no_pretrain"):  # fmt: skip
        assert _typed(text, registry), text
    for text in ("recipe/mlm-before", "val/acc", "causal", "bidirectional MLM, all masked tokens", "MLMs", "learned"):
        assert not _typed(text, registry), text
