"""The ablation report on synthetic runs (every kind of key a run may log: prefixed heads, NSP, detection,
distance and depth bins, oracle ceilings and gaps) and on the committed reports: nothing logged is left out
of the csv, the tables or the figures; ceilings and gaps belong to their accuracy; measures never share an
axis; intervals stay inside [0, 1]."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from minibert.ablation import accuracies
from minibert.ablation.grid import Claim, Experiment, Grid, MetricRef
from minibert.ablation.report import no_ceiling_note, write_report
from minibert.ablation.results import Results
from minibert.ablation.runner import Run
from minibert.languages import BracketPairs, Dyck
from minibert.objectives import MaskedLM, NextSentence
from minibert.objectives.combined import Combined
from minibert.objectives.grammaticality import Grammaticality
from minibert.objectives.next_token import NextTokenLM
from minibert.objectives.rtd import ReplacedTokenDetection

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (0, 1, 2)
DYCK_CATS = ("opener", "closer", "partner_visible", "partner_hidden", "kind_mask", "kind_random", "kind_kept",
             "dist_1", "dist_2_3", "dist_4_7", "dist_8_plus", "depth_1", "depth_2")  # fmt: skip
OBJECTIVE = {  # what each synthetic experiment's summary says its accuracies mean (its objective's scoreboards)
    "pretrain/dyck": MaskedLM(language=Dyck()),
    "pretrain/bert": Combined({"nsp": NextSentence(), "mlm": MaskedLM()}),
    "pretrain/rtd": ReplacedTokenDetection(),
    "pretrain/next_token": NextTokenLM(),
    "break/mask_only": MaskedLM(),
    "finetune/full": Grammaticality(),
}


def board(prefix: str, cats: tuple[str, ...], seed: int, n: int = 400, ceiling: bool = False) -> dict:
    """val/<prefix>acc[_cat] (seed-dependent, with extremes), its n and, optionally, ceiling and gap."""
    out = {}
    for i, cat in enumerate(("", *cats)):
        suffix = f"_{cat}" if cat else ""
        value = {"partner_visible": 1.0, "dist_8_plus": [0.0, 0.6, 1.0][seed]}.get(cat, 0.5 + 0.03 * i + 0.01 * seed)
        out[f"val/{prefix}acc{suffix}"] = value
        out[f"val/{prefix}n{suffix}"] = n if cat != "dist_8_plus" else 9
        if ceiling:
            out[f"val/{prefix}ceiling/acc{suffix}"] = min(1.0, value + 0.05)
            out[f"val/{prefix}gap/acc{suffix}"] = min(1.0, value + 0.05) - value
    return out


def summaries(name: str, seed: int) -> dict:
    if name == "pretrain/dyck":
        metrics = board("", DYCK_CATS, seed, ceiling=True)
    elif name == "pretrain/bert":
        nsp = board("nsp/", ("is_next", "not_next"), seed)
        metrics = {**board("mlm/", ("opener", "closer"), seed, ceiling=True), **nsp}
    elif name == "pretrain/rtd":
        metrics = {**board("", ("original", "replaced"), seed), **board("generator/", ("opener", "closer"), seed)}
    elif name == "finetune/full":
        metrics = board("", ("grammatical", "ungrammatical"), seed)
    else:
        metrics = board("", ("opener", "closer", "kind_kept"), seed)
    return {**metrics, "val/loss": 0.5 + seed, "train/loss": [25.0, 0.3][name != "pretrain/rtd"], "step": 6,
            "params": 100, "trainable_params": 100, "wall_time_s": 1.0}  # fmt: skip


def fake_run(tmp: Path, e: Experiment, seed: int) -> Run:
    run = Run(e, seed, f"k{seed}", tmp / "runs" / e.name / f"seed{seed}")
    log_dir = run.run_dir / "log"
    log_dir.mkdir(parents=True)
    boards = {prefix: b.describe() for prefix, b in OBJECTIVE[e.name].scoreboards().items()}
    summary = {**summaries(e.name, seed), "log_dir": "log", "checkpoint": "log/last.ckpt", "code": {},
               "scoreboards": boards}  # fmt: skip
    heads = sorted({m.rsplit("acc", 1)[0] + "acc" for m in summary if re.fullmatch(r"val/(\w+/)?acc", m)})
    with open(log_dir / "metrics.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["step", "train/loss", *heads])
        for step in range(1, 7):
            writer.writerow([step - 1, summary["train/loss"] * (2 - step / 6), ""] + [""] * len(heads))
            if step % 3 == 0:
                writer.writerow([step - 1, "", *[summary[h] * step / 6 for h in heads]])
    (run.run_dir / "summary.json").write_text(json.dumps(summary))
    return run


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    experiments = [Experiment(name, "finetune" if name.startswith("finetune") else "pretrain", ("c.yaml",),
                              reference={"val/acc": 0.55} if name == "pretrain/dyck" else {})
                   for name in OBJECTIVE]  # fmt: skip
    claims = (Claim("mask_only below dyck", lower=MetricRef("break/mask_only", "val/acc"),
                    higher=MetricRef("pretrain/dyck", "val/acc")),)  # fmt: skip
    grid = Grid(tuple(experiments), claims, "a test", path=str(tmp / "synthetic.yaml"))
    runs = [fake_run(tmp, e, s) for e in experiments for s in SEEDS]
    out = tmp / "out"
    header = ["command: `python scripts/ablate.py`"]
    write_report(out, grid, experiments, runs, header, links={"other grid": "../x.html"})
    return out, runs


class Page(HTMLParser):
    """The data-* attributes of a dashboard's table cells and figures, and its title."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.cells, self.figures, self.title, self._in_title = [], [], "", False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td" and "data-metric" in attrs:
            self.cells.append(attrs)
        elif tag == "figure":
            self.figures.append(attrs)
        self._in_title = tag == "title"

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def table(self, role: str = "acc") -> set[tuple[str, str]]:
        return {(c["data-experiment"], c["data-metric"]) for c in self.cells if c["data-role"] == role}

    def drawn(self, attr: str = "data-metrics") -> set[tuple[str, str]]:
        return {tuple(p.split("|", 1)) for f in self.figures for p in f.get(attr, "").split(";") if p}


def logged_accuracies(rows) -> set[tuple[str, str]]:
    return {(e, m) for e, m in rows if (k := accuracies.parse(m)) is not None and k.role == "acc"}


def check_report(out: Path) -> Page:
    """Every accuracy a run logged is in ablation.csv, in a table cell and in a bar figure."""
    with open(out / "ablation.csv") as f:
        rows = [(r["experiment"], r["metric"]) for r in csv.DictReader(f)]
    page = Page((out / "dashboard.html").read_text())
    logged = logged_accuracies(rows)
    assert logged, "no accuracies logged"
    assert logged <= page.table(), sorted(logged - page.table())
    assert logged <= page.drawn(), sorted(logged - page.drawn())
    for cell in page.cells:
        if cell["data-role"] == "acc" and "data-lo" in cell:
            assert 0 <= float(cell["data-lo"]) <= float(cell["data-mean"]) <= float(cell["data-hi"]) <= 1, cell
    return page


def test_every_logged_accuracy_is_in_the_csv_the_table_and_a_figure(report):
    out, runs = report
    page = check_report(out)
    with open(out / "ablation.csv") as f:
        csv_pairs = {(r["experiment"], r["metric"]) for r in csv.DictReader(f)}
    for run in runs:
        for metric in run.summary():
            if (k := accuracies.parse(metric)) is not None and k.role == "acc":
                assert (run.experiment.name, metric) in csv_pairs & page.table() & page.drawn()
    assert ("pretrain/bert", "val/mlm/acc") in page.drawn("data-metrics")  # bert's curve too: its own head


def test_ceilings_and_gaps_belong_to_their_accuracy(report):
    out, runs = report
    page = Page((out / "dashboard.html").read_text())
    for _, metric in page.table() | page.drawn():
        assert "ceiling" not in metric and "gap" not in metric  # never a metric of their own
    with_ceiling = {(r.experiment.name, k.accuracy) for r in runs for m in r.summary()
                    if (k := accuracies.parse(m)) is not None and k.role == "ceiling"}  # fmt: skip
    assert with_ceiling and page.drawn("data-ceilings") == with_ceiling  # a tick per bar that has one
    assert page.table("ceiling") == with_ceiling and page.table("gap") == with_ceiling
    header = (out / "ablation.md").read_text()
    assert "oracle ceiling" in header and "gap to ceiling (paired)" in header


MEASURE_OF_HEAD = {  # what each synthetic head measures
    ("pretrain/dyck", ""): "cloze", ("pretrain/bert", "mlm/"): "cloze", ("pretrain/bert", "nsp/"): "nsp",
    ("pretrain/rtd", ""): "detection", ("pretrain/rtd", "generator/"): "cloze",
    ("pretrain/next_token", ""): "next_token", ("break/mask_only", ""): "cloze",
    ("finetune/full", ""): "grammaticality",
}  # fmt: skip


def test_measures_never_share_an_axis(report):
    out, _ = report
    page = Page((out / "dashboard.html").read_text())
    bars = [f for f in page.figures if f["id"].endswith("_metrics.png")]
    for figure in bars:
        pairs = [tuple(p.split("|")) for p in figure["data-metrics"].split(";")]
        kinds = {MEASURE_OF_HEAD[(e, accuracies.parse(m).prefix)] for e, m in pairs}
        assert len(kinds) == 1, (figure["id"], kinds)
    names = {f["id"] for f in bars}
    assert names == {"pretrain_metrics.png", "pretrain_nsp_metrics.png", "pretrain_detection_metrics.png",
                     "pretrain_next_token_metrics.png", "finetune_metrics.png", "break_metrics.png"}  # fmt: skip
    md = (out / "ablation.md").read_text()
    for title in ("next-sentence prediction", "replaced-token detection", "next-token accuracy", "cloze accuracy"):
        assert f"### pretrain: {title}" in md  # each measure its own table, labelled with what it measures


def test_break_figure_shows_the_baseline_its_claims_compare_against(report):
    out, _ = report
    page = Page((out / "dashboard.html").read_text())
    (fig,) = [f for f in page.figures if f["id"] == "break_metrics.png"]
    assert "pretrain/dyck|val/acc" in fig["data-metrics"] and "break/mask_only|val/acc" in fig["data-metrics"]


def test_tables_are_wide_with_n_per_category(report):
    out, _ = report
    md = (out / "ablation.md").read_text()
    table = md.split("### pretrain: cloze accuracy", 1)[1].split("###", 1)[0]
    header = table.splitlines()[2]
    for text in ("| all (n=400) |", "| opener (n=400) |", "| partner visible (n=400) |", "| [MASK] (n=400) |",
                 "| distance 1 (n=400) |", "| distance 8+ (n=9) |", "| depth 2 (n=400) |"):  # fmt: skip
        assert text in header
    rows = [line for line in table.splitlines() if line.startswith("| pretrain/") or line.startswith("| break/")]
    assert [r.split(" | ")[0] for r in rows] == ["| pretrain/dyck", "| pretrain/bert · MLM head",
                                                 "| pretrain/rtd · generator", "| break/mask_only"]  # fmt: skip


def test_page_is_titled_by_its_grid_links_out_and_renders_markdown(report):
    out, _ = report
    text = (out / "dashboard.html").read_text()
    assert Page(text).title == "minibert ablation: synthetic grid"
    assert '<a href="../x.html">other grid</a>' in text
    assert "<code>python scripts/ablate.py</code>" in text and "`" not in text.split("<body>", 1)[1]
    assert not re.search(r"#\d", text.split("<body>", 1)[1].split("<h2>Figures", 1)[0])  # no issue numbers


def test_a_grid_can_narrow_its_report(tmp_path):
    e = Experiment("pretrain/dyck", "pretrain", ("c.yaml",), metrics=("val/acc", "val/acc_opener"))
    runs = [fake_run(tmp_path, e, s) for s in SEEDS]
    write_report(tmp_path / "out", Grid((e,), path="g.yaml"), [e], runs, [], links={})
    page = Page((tmp_path / "out" / "dashboard.html").read_text())
    assert page.table() == page.drawn() - {("pretrain/dyck", "train/loss")} == {
        ("pretrain/dyck", "val/acc"), ("pretrain/dyck", "val/acc_opener")}  # fmt: skip


@pytest.mark.parametrize("out", ["results", "results/objectives"])
def test_committed_reports_show_every_logged_accuracy_within_bounds(out):
    page = check_report(ROOT / out)
    assert page.title.startswith("minibert ablation: ")
    md = (ROOT / out / "ablation.md").read_text()
    assert not re.search(r"issues? #\d", md)
    for lo, hi in re.findall(r"\((\d+\.\d)–(\d+\.\d)\)", md):  # every accuracy interval in the markdown
        assert 0 <= float(lo) <= float(hi) <= 100


@pytest.mark.parametrize(
    ("lower", "higher", "verdict"),
    [
        ((0.50, 0.50, 0.50), (0.501, 0.55, 0.501), "within noise"),  # every seed agrees, the interval holds 0
        ((0.50, 0.51, 0.52), (0.60, 0.62, 0.61), "holds"),
        ((0.50, 0.51, 0.52), (0.49, 0.515, 0.51), "does not hold"),
    ],
)
def test_a_claim_whose_interval_holds_zero_never_reads_holds(lower, higher, verdict):
    from minibert.ablation.report import claims_table
    from minibert.ablation.results import Results

    a, b = Experiment("a", "pretrain", ("c.yaml",)), Experiment("b", "pretrain", ("c.yaml",))
    claim = Claim("a below b", lower=MetricRef("a", "val/acc"), higher=MetricRef("b", "val/acc"))
    values = {("a", "val/acc"): dict(enumerate(lower)), ("b", "val/acc"): dict(enumerate(higher))}
    table = claims_table(Grid((a, b), (claim,)), [a, b], Results(values, []))
    row = dict(zip(table.header, (c.text for c in table.rows[0])))
    assert row["verdict"] == verdict
    half, mde = float(row["±"]), float(row["detectable"])
    assert 0 < half < mde  # the detectable difference is wider than the interval's half-width


def test_a_plugin_category_reads_as_its_board_declares_and_chance_follows_the_language(tmp_path):
    """Reports take a metric's meaning from the run's summary, never from class names: a plug-in's own
    category gets its family and label (in the figures' panels and beside the write-up too), and chance for
    token prediction is 1 in the language's kinds."""
    e = Experiment("pretrain/plug", "pretrain", ("c.yaml",), reference={"val/acc_rare": 0.5})
    run = fake_run(tmp_path, Experiment("break/mask_only", "pretrain", ("c.yaml",)), 0)
    summary = json.loads((run.run_dir / "summary.json").read_text())
    summary["val/acc_rare"], summary["val/n_rare"] = 0.4, 50
    four = MaskedLM(language=BracketPairs(kinds=4)).scoreboards()[""]
    board = four._replace(categories=(*four.categories, "rare"), labels=(("rare", "frequency", "rare token"),))
    summary["scoreboards"] = {"": board.describe()}
    moved = Run(e, 0, "k0", tmp_path / "runs" / e.name / "seed0")
    moved.run_dir.parent.mkdir(parents=True)
    run.run_dir.rename(moved.run_dir)
    (moved.run_dir / "summary.json").write_text(json.dumps(summary))
    (b,) = Results.collect([moved]).boards([e])
    assert b.measure.name == "cloze" and b.measure.chance == 0.25 and b.measure.chance_label == "chance (1 of 4 kinds)"
    assert (b.measure.family("rare"), b.measure.label("rare")) == ("frequency", "rare token")
    assert list(b.categories)[-1] == "rare"  # its own family sorts before 'other', after the known ones
    write_report(tmp_path / "out", Grid((e,), path="g.yaml"), [e], [moved], [], links={})
    md = (tmp_path / "out" / "ablation.md").read_text()
    assert "rare token" in md and "Chance (1 of 4 kinds): 25.0%" in md
    assert re.search(r"^\| pretrain/plug \| rare token \| 40\.0 ", md, re.M), md  # the write-up's row


def test_a_report_without_a_ceiling_says_so_and_names_the_strongest_reference():
    def metrics(acc: float, **refs: float) -> dict[str, dict[int, float]]:
        return {"val/acc": {0: acc, 1: acc + 0.01}, **{f"val/{r}/acc": {0: v, 1: v} for r, v in refs.items()}}

    text = metrics(0.25, **{"reference/unigram": 0.13, "reference/left_right_trigram": 0.37})
    generator = metrics(0.08, **{"generator/reference/left_bigram": 0.15, "generator/reference/unigram": 0.04})
    oracle = {**metrics(0.8, **{"reference/unigram": 0.9}), "val/ceiling/acc": {0: 0.85, 1: 0.85}}
    values = {("text", m): v for m, v in text.items()}
    values |= {("rtd", m): v for m, v in generator.items()}
    values |= {("dyck", m): v for m, v in oracle.items()}
    values |= {("finetune", "val/acc"): {0: 0.6, 1: 0.6}}
    experiments = [Experiment(n, "pretrain", ("c.yaml",)) for n in ("text", "rtd", "dyck", "finetune")]
    note = no_ceiling_note(experiments, Results(values, []))
    assert note.startswith("No exact ceiling exists")
    assert "left_right_trigram, 37.0% on the questions of text;" in note  # the strongest, not the first
    assert "generator/left_bigram, 15.0% on the questions of rtd." in note
    assert "dyck" not in note and "finetune" not in note  # a ceiling, or no references: nothing to say
    assert no_ceiling_note(experiments[2:], Results(values, [])) == ""
