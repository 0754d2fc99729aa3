"""A grid's own report (minibert.report.grid_report) on small constructed tables: every logged accuracy is in
its experiment's detail with its question count and the table's mean; verdicts follow the printed intervals
(a claim whose interval holds zero never reads "holds"); recorded comparisons are on the first screen with the
arms' own seeds and the arm their interval favours; no absolute path on a page; `record` never drops runs
unless told to."""

from __future__ import annotations

import html
import json
import re
import statistics
from pathlib import Path

import pandas as pd
import pytest

from minibert.ablation.grid import Claim, Experiment, Grid, MetricRef
from minibert.ablation.runner import Run
from minibert.checkout import without_absolute_paths
from minibert.report import grid_report
from minibert.stats import accuracies
from minibert.tables import record as table_record
from minibert.tables import saved, sealed, table
from minibert.tables.record import RecordError

ROOT = Path(__file__).resolve().parents[2]
LABEL = accuracies.label
INTERVAL = re.compile(r"([+-]?[\d,]+\.\d) \(([+-]?[\d,]+\.\d) to ([+-]?[\d,]+\.\d)\)")


def cells(experiment: str, metric: str, values: dict[int, float], category: str = "", n: float | None = None):
    """Table rows of one experiment's metric, a value per seed."""
    return [{"grid": "synthetic", "experiment": experiment, "stage": experiment.split("/")[0],
             "arm": experiment.rsplit("/", 1)[-1], "seed": seed, "val_seed": 2018, "metric": metric,
             "category": category, "value": value, "n": n, "run": f"r{seed}", "code": ""}
            for seed, value in values.items()]  # fmt: skip


def grid(names, claims=()) -> Grid:
    experiments = tuple(Experiment(name, "pretrain", ("configs/pretrain.yaml",)) for name in names)
    return Grid(experiments, tuple(claims), path="configs/ablations/synthetic.yaml")


def report(out: Path, rows: list[dict], claims=(), made: dict | None = None) -> dict[str, str]:
    """The table of `rows` written to `out`, its report rendered: {'md': text, 'html': text}."""
    frame = pd.DataFrame(rows, columns=[*table.FIRST, "arm", *table.LAST])
    table.write(frame, out)
    (out / "run.json").write_text(json.dumps(made or {"command": "python scripts/ablate.py"}))
    grid_report.write(out, grid(list(dict.fromkeys(frame["experiment"])), claims))
    return {"md": (out / "ablation.md").read_text(), "html": (out / "dashboard.html").read_text()}


def sections(page: dict[str, str], kind: str) -> dict[str, list[list[str]]]:
    """Each section's table rows as cells: Markdown sections by their `## ` title, dashboard sections by their
    `<h2>` or their toggle's summary; 'The answer' is the first screen's."""
    text = page[kind]
    out: dict[str, list[list[str]]] = {}
    if kind == "md":
        for part in re.split(r"^## ", text, flags=re.M)[1:]:
            title, body = part.split("\n", 1)
            rows = [line.strip("| ").split(" | ") for line in body.splitlines() if line.startswith("| ")]
            out[title] = rows[1:]  # the header, then (after the separator, not matched) the rows
        return out
    answer = text.split('<section id="answer">', 1)[1].split("</section>", 1)[0]
    parts = [("The answer", answer)]
    parts += re.findall(r"(?:<h2>|<summary>)(.*?)(?:</h2>|</summary>)(.*?)(?=<h2>|<details>|</body>)", text, re.S)
    for title, body in parts:
        rows = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
                for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]  # fmt: skip
        out[html.unescape(title)] = [r for r in rows if r]
    return out


def points(values: dict[int, float]) -> str:
    return f"{100 * statistics.fmean(values.values()):,.1f}"


# --- every logged figure is in its experiment's detail ---------------------------------------------------


def logged(seed_values) -> list[dict]:
    """A pre-training run with a ceiling and its gap, two heads, categories (one at 100%, a distance bin of 9
    questions from 0 to 100%) and a loss; a fine-tuning run with one accuracy."""
    rows = []
    for i, (metric, category, n) in enumerate([("val/acc", "", 1200), ("val/acc", "opener", 600),
                                               ("val/acc", "partner_visible", 300), ("val/acc", "dist_8_plus", 9),
                                               ("val/mlm/acc", "closer", 500)]):  # fmt: skip
        values = {s: seed_values(s, i) for s in range(3)}
        if category == "partner_visible":
            values = dict.fromkeys(range(3), 1.0)
        if category == "dist_8_plus":
            values = {0: 0.0, 1: 0.6, 2: 1.0}
        rows += cells("pretrain/dyck", metric, values, category, n)
    acc = {s: seed_values(s, 0) for s in range(3)}
    ceiling = {s: 0.9 + 0.01 * s for s in range(3)}
    rows += cells("pretrain/dyck", "val/ceiling/acc", ceiling, "", 1200)
    rows += cells("pretrain/dyck", "val/gap/acc", {s: ceiling[s] - acc[s] for s in range(3)}, "", 1200)
    rows += cells("pretrain/dyck", "train/loss", {0: 2.0, 1: 2.5, 2: 2.25})
    rows += cells("finetune/full", "val/acc", {s: seed_values(s, 9) for s in range(3)}, "", 800)
    return rows


@pytest.fixture(scope="module")
def detailed(tmp_path_factory):
    out = tmp_path_factory.mktemp("detail")
    rows = logged(lambda seed, i: 0.31 + 0.07 * i + 0.013 * seed + 0.0007 * seed * seed)
    return rows, report(out, rows)


@pytest.mark.parametrize("kind", ["md", "html"])
def test_every_logged_figure_is_in_its_experiments_detail_with_its_n_and_mean(detailed, kind):
    rows, page = detailed
    shown = sections(page, kind)
    frame = pd.DataFrame(rows)
    for (experiment, metric, category), group in frame.groupby(["experiment", "metric", "category"]):
        values = dict(zip(group["seed"], group["value"]))
        accuracy = accuracies.parse(metric) is not None
        label = (LABEL(category) if category else "all") if accuracy else ""
        n = f"{group['n'].iloc[0]:,.0f}" if accuracy else "–"
        (row,) = [r for r in shown[experiment] if r[:3] == [metric, label, n]]
        mean = points(values) if accuracy else f"{statistics.fmean(values.values()):.1f}"
        assert row[3].startswith(f"{mean} ("), (experiment, metric, category, row)


def test_accuracy_intervals_stay_within_0_and_100_points_even_at_the_extremes(detailed):
    _, page = detailed
    shown = sections(page, "md")
    checked = 0
    for experiment in ("pretrain/dyck", "finetune/full"):
        for metric, _, _, figure in shown[experiment]:
            if accuracies.parse(metric) is not None:
                mean, lo, hi = (float(x.replace(",", "")) for x in INTERVAL.fullmatch(figure).groups())
                assert 0 <= lo <= mean <= hi <= 100, (experiment, metric, figure)
                checked += 1
    assert checked == 8


def test_the_overview_shows_a_ceiling_and_gap_only_where_one_is_logged(detailed):
    rows, page = detailed
    for kind in ("md", "html"):
        overview = {r[0]: r for r in sections(page, kind)["Experiments"]}
        dyck, full = overview["pretrain/dyck"], overview["finetune/full"]
        assert full[2] == "3" and full[4:] == ["–", "–"]  # no exact ceiling: said, not left blank or zero
        ceiling = {r["seed"]: r["value"] for r in rows if r["metric"] == "val/ceiling/acc"}
        assert dyck[4].startswith(f"{points(ceiling)} (") and INTERVAL.fullmatch(dyck[5])


def test_the_page_is_titled_by_its_grid(detailed):
    _, page = detailed
    assert page["md"].startswith("# minibert ablation: synthetic grid\n")
    assert "<title>minibert ablation: synthetic grid</title>" in page["html"]


# --- verdicts follow the intervals -------------------------------------------------------------------------

LOWER = {0: 0.50, 1: 0.51, 2: 0.52}


@pytest.mark.parametrize(
    ("lower", "higher", "verdict"),
    [
        ({0: 0.50, 1: 0.50, 2: 0.50}, {0: 0.501, 1: 0.55, 2: 0.501}, "undecided"),  # every seed agrees; 0 inside
        (LOWER, {0: 0.49, 1: 0.53, 2: 0.515}, "undecided"),
        (LOWER, {0: 0.60, 1: 0.62, 2: 0.61}, "holds"),
        (LOWER, {0: 0.40, 1: 0.42, 2: 0.41}, "fails"),  # wholly on the other side
    ],
)
def test_a_pair_claim_holds_only_when_its_whole_interval_is_on_the_claimed_side(tmp_path, lower, higher, verdict):
    claim = Claim("b above a", lower=MetricRef("p/a", "val/acc"), higher=MetricRef("p/b", "val/acc"))
    page = report(tmp_path, cells("p/a", "val/acc", lower, n=400) + cells("p/b", "val/acc", higher, n=400), [claim])
    for kind in ("md", "html"):
        ((text, figure, seeds, said),) = sections(page, kind)["The answer"]
        assert (text, seeds, said) == ("b above a", "3", verdict)
        mean, lo, hi = (float(x) for x in INTERVAL.match(figure).groups())
        assert {"holds": lo > 0, "fails": hi < 0, "undecided": lo <= 0 <= hi}[verdict], figure
        assert mean == pytest.approx(100 * (statistics.fmean(higher.values()) - statistics.fmean(lower.values())),
                                     abs=0.051)  # fmt: skip


@pytest.mark.parametrize(
    ("bounds", "verdict"),
    [
        ({"at_least": 0.90}, "undecided"),  # the bound is inside the interval
        ({"at_least": 0.50}, "holds"),
        ({"at_least": 0.99}, "fails"),
        ({"at_most": 0.99}, "holds"),
        ({"at_most": 0.50}, "fails"),
        ({"at_least": 0.5, "at_most": 0.91}, "undecided"),
    ],
)
def test_a_threshold_claim_holds_only_when_its_whole_interval_is_within_its_bounds(tmp_path, bounds, verdict):
    claim = Claim("p/a near 90%", value=MetricRef("p/a", "val/acc_opener"), **bounds)
    page = report(tmp_path, cells("p/a", "val/acc", {0: 0.88, 1: 0.90, 2: 0.92}, "opener", 400), [claim])
    ((_, figure, seeds, said),) = sections(page, "md")["The answer"]
    assert (seeds, said) == ("3", verdict)
    _, lo, hi = (float(x) / 100 for x in INTERVAL.match(figure).groups())
    least, most = bounds.get("at_least", 0.0), bounds.get("at_most", 1.0)
    inside, outside = least <= lo and hi <= most, hi < least or lo > most
    assert {"holds": inside, "fails": outside, "undecided": not inside and not outside}[verdict], figure


# --- recorded comparisons, on the first screen, with their arms' own seeds ------------------------------

MLM = {s: 0.60 + 0.01 * (s % 3) for s in range(7)}  # seeds 0-6
SPAN = {s: 0.68 + 0.012 * (s % 2) for s in range(2, 7)}  # seeds 2-6: five pairs with MLM


def arms() -> list[dict]:
    rows = cells("p/mlm", "val/acc", MLM, n=5000) + cells("p/span", "val/acc", SPAN, n=5000)
    rows += cells("p/mlm", "val/gap/acc", {s: 0.9 - v for s, v in MLM.items()}, n=5000)
    rows += cells("p/span", "val/gap/acc", {s: 0.9 - v for s, v in SPAN.items()}, n=5000)
    return rows + cells("p/other", "val/acc", dict.fromkeys(range(10), 0.5), n=5000)  # the grid has 10 seeds


def record(folder: Path, name: str, pairs: list[tuple[str, str, str]], first_seed: int, looks: int) -> None:
    """A comparison as scripts/compare.py records it: its design (pairs, cap) and the seeds each ran."""
    from minibert.compare.comparison import Design, Pair

    design = Design([Pair(a, b, m) for a, b, m in pairs], cap=10, first_seed=first_seed)
    (folder / "comparisons").mkdir(exist_ok=True)
    body = {"design": design.to_json(), "looks": {p.label: looks for p in design.pairs}}
    (folder / "comparisons" / f"{name}.json").write_text(json.dumps(body))


@pytest.mark.parametrize("metric", ["val/acc", "val/gap/acc"])  # higher is better; lower is better
@pytest.mark.parametrize("order", [("p/mlm", "p/span"), ("p/span", "p/mlm")])
def test_a_recorded_comparison_is_on_the_first_screen_with_its_arms_seeds_and_the_arm_it_favours(
    tmp_path, metric, order
):
    record(tmp_path, "mlm-vs-span", [(*order, metric)], first_seed=2, looks=5)  # seeds 2-6, both arms ran them
    page = report(tmp_path, arms())
    a, b = (arm.rsplit("/", 1)[-1] for arm in order)
    for kind in ("md", "html"):
        ((text, figure, seeds, verdict),) = sections(page, kind)["The answer"]
        assert (
            text.startswith(f"{a} vs {b}: {metric}")
            and "comparisons/mlm-vs-span" in text
            and "open at 5 of 10 seeds" in text
        )
        assert text.endswith(f"; {a} won {5 if a == 'span' else 0} of 5 seeds)")  # span ahead on every seed
        assert seeds == "5"  # the seeds the comparison ran, not the grid's 10 nor MLM's 7
        # five seeds are fewer than the sign rule needs (sign.first_bound): the row says so, with the
        # difference oriented towards the arm ahead (span: higher acc, smaller gap)
        assert verdict == "undecided", (verdict, figure)
        diff = statistics.fmean(SPAN[s] - MLM[s] for s in SPAN)
        assert f"{100 * diff:.1f} (" in figure and "span" in figure
    assert page["md"].index("mlm-vs-span") < page["md"].index("## How it was run")
    assert (tmp_path / "claims.png").read_bytes().startswith(b"\x89PNG")
    assert "![the grid's comparisons, paired by seed](claims.png)" in page["md"]


def test_every_answer_row_counts_its_own_arms_seeds(tmp_path):
    record(tmp_path, "x", [("p/mlm", "p/other", "val/acc")], first_seed=0, looks=7)
    record(tmp_path, "y", [("p/span", "p/other", "val/acc")], first_seed=2, looks=5)
    claims = [Claim("span above mlm", lower=MetricRef("p/mlm", "val/acc"), higher=MetricRef("p/span", "val/acc")),
              Claim("mlm above 50%", value=MetricRef("p/mlm", "val/acc"), at_least=0.5),
              Claim("other at most 60%", value=MetricRef("p/other", "val/acc"), at_most=0.6)]  # fmt: skip
    page = report(tmp_path, arms(), claims)
    seeds = {e: set(v) for e, v in (("p/mlm", MLM), ("p/span", SPAN), ("p/other", range(10)))}
    want = [len(seeds["p/mlm"] & seeds["p/span"]), len(seeds["p/mlm"]), len(seeds["p/other"]),
            len(seeds["p/mlm"] & seeds["p/other"]), len(seeds["p/span"] & seeds["p/other"])]  # fmt: skip
    for kind in ("md", "html"):
        assert [int(row[2]) for row in sections(page, kind)["The answer"]] == want == [5, 7, 10, 7, 5]
    first = sections(page, "md")["Experiments"][0]
    assert (first[0], first[2]) == ("p/mlm", "7")  # experiment, seeds (after its objective)


# --- no absolute path on a page ----------------------------------------------------------------------------

ABSOLUTE = re.compile(r"(?<![\w.<~])/[\w.+-]+/")  # a path from the root: '/home/...', not 'val/acc' nor '</td>'


def test_no_absolute_path_reaches_a_page_even_when_run_json_holds_one(tmp_path):
    made = {"command": f"python scripts/ablate.py --grid {ROOT}/configs/ablations/default.yaml --out "
                       f"{tmp_path}/results --plugins '/home/someone/my plugins' --seeds 3",
            "grid": f"{ROOT / 'configs/ablations/default.yaml'}; seeds: 0, 1, 2",
            "table rebuilt": "python scripts/ablate.py --report-only --out /srv/out, 2026-12-01 10:00 UTC"}  # fmt: skip
    page = report(tmp_path, arms(), made=made)
    for text in page.values():
        assert not ABSOLUTE.search(text), ABSOLUTE.search(text)
        assert str(tmp_path) not in text and str(ROOT) not in text and "someone" not in text
        assert "--grid configs/ablations/default.yaml --out" in text  # inside the checkout: relative to it
        assert "grid: configs/ablations/default.yaml; seeds: 0, 1, 2" in text
        assert "2026-12-01 10:00 UTC" in text  # the rest of each line is kept
    assert json.loads((tmp_path / "run.json").read_text()) == made  # the record itself is not rewritten


# --- record: the table of the finished runs, never fewer runs than before unless told ----------------------


def finished_run(tmp: Path, e: Experiment, seed: int, acc: float) -> Run:
    run = Run(e, seed, f"{seed:04x}", tmp / "runs" / e.name / f"seed{seed}-{seed:04x}")
    run.run_dir.mkdir(parents=True)
    summary = {"val/acc": acc, "val/n": 64, "val/acc_opener": acc - 0.1, "val/n_opener": 32, "step": 4,
               "wall_time_s": 1.5, "log_dir": "log", "checkpoint": "log/last.ckpt", "seeds": {"val": 2018}}  # fmt: skip
    (run.run_dir / "summary.json").write_text(json.dumps(summary))
    return run


def test_record_writes_the_table_of_the_finished_runs_and_refuses_to_drop_any_unless_replace(tmp_path):
    g = grid(["p/a", "p/b"])
    runs = [finished_run(tmp_path, e, s, 0.5 + 0.1 * s) for e in g.experiments for s in range(3)]
    made = {"command": "python scripts/ablate.py --seeds 3"}
    written = table_record.record(tmp_path, g, runs, made, root=ROOT)
    # pages: render.publish; each experiment's config as LightningCLI resolves it (these runs kept none)
    files = {"results.csv", "categories.csv", "run.json", "configs/p/a.yaml", "configs/p/b.yaml"}
    assert {p.relative_to(tmp_path).as_posix() for p in written} == files
    assert (tmp_path / "configs/p/a.yaml").read_text().startswith(saved.RESOLVED)
    grid_report.write(tmp_path, g)
    recorded = table.read(tmp_path)
    assert set(zip(recorded["experiment"], recorded["seed"])) == {(r.experiment.name, r.seed) for r in runs}
    accuracy = recorded.query("metric == 'val/acc'")
    assert set(zip(accuracy["category"], accuracy["n"])) == {("", 64), ("opener", 32)}  # each with its count
    assert json.loads((tmp_path / "run.json").read_text()) == made
    before = {name: (tmp_path / name).read_bytes() for name in ("results.csv", "run.json", "ablation.md")}

    fewer = [r for r in runs if r.seed < 2 and r.experiment.name == "p/a"] + [r for r in runs if r.seed == 0][1:]
    with pytest.raises(RecordError, match=r"holds 3 run\(s\) this one would drop \(p/a seed 2, p/b seed 1, p/b seed 2"):
        table_record.record(tmp_path, g, fewer, {"command": "another"}, root=ROOT)
    assert {name: (tmp_path / name).read_bytes() for name in before} == before  # nothing written
    with pytest.raises(RecordError, match="nothing to report"):
        table_record.record(tmp_path, g, [], made, replace=True, root=ROOT)

    table_record.record(tmp_path, g, fewer, {"command": "another"}, replace=True, root=ROOT)
    grid_report.write(tmp_path, g)
    assert table.read(tmp_path)[["experiment", "seed"]].drop_duplicates().shape[0] == len(fewer) == 3
    assert "runs in the table: 3; seeds: 0, 1" in (tmp_path / "ablation.md").read_text()
    table_record.record(tmp_path, g, runs, made, root=ROOT)  # more runs than before: no refusal
    assert table.read(tmp_path)[["experiment", "seed"]].drop_duplicates().shape[0] == 6


def test_record_stores_paths_inside_the_checkout_relative_to_it_so_a_clone_elsewhere_renders_the_same_page(
    tmp_path,
):
    g = grid(["p/a"])
    runs = [finished_run(tmp_path, g.experiments[0], s, 0.6) for s in range(2)]
    made = {"command": f"python scripts/ablate.py --grid {ROOT}/configs/ablations/dyck.yaml --out {ROOT}/results/x "
                       f"--plugins /srv/plugins --seeds 2"}  # fmt: skip
    table_record.record(tmp_path, g, runs, made, root=ROOT)
    grid_report.write(tmp_path, g)
    stored = json.loads((tmp_path / "run.json").read_text())["command"]
    assert stored == "python scripts/ablate.py --grid configs/ablations/dyck.yaml --out results/x --plugins " \
                     "/srv/plugins --seeds 2"  # fmt: skip
    page = (tmp_path / "ablation.md").read_text()
    moved = without_absolute_paths(made["command"], Path("/elsewhere/minibert"))  # another clone
    assert "--out results/x" in page and "--out …/x" in moved  # the stored record no longer depends on where


def test_cheapest_picks_the_least_costly_arm_that_beats_its_reference_within_the_limits_on_enough_seeds():
    """Four arms against one reference (one count on the same questions): `a` is cheapest but never beats it,
    `b` beats it on one seed only, `c` beats it but runs too long, `d` beats it within the limit on 3 seeds."""
    from minibert.tables.query import Data

    rows = []
    for arm, flops, wall, accs in (("a", 1e9, 60, [0.30, 0.31, 0.29]), ("b", 2e9, 60, [0.50]),
                                   ("c", 3e9, 900, [0.50, 0.51, 0.49]), ("d", 4e9, 300, [0.45, 0.46, 0.44]),
                                   ("e", 5e9, 300, [0.50, 0.51, 0.49])):  # fmt: skip
        seeds = dict(enumerate(accs))
        e = f"pretrain/{arm}"
        rows += cells(e, "val/acc", seeds, n=20000) + cells(e, "val/reference/trigram/acc", {s: 0.35 for s in seeds})
        rows += cells(e, "flops", {s: flops for s in seeds}) + cells(e, "wall_time_s", {s: wall for s in seeds})
    d = Data(pd.DataFrame(rows, columns=[*table.FIRST, "arm", *table.LAST]))
    assert d.cheapest("val/acc", "val/reference/trigram/acc", limits={"wall_time_s": 600}) == "pretrain/d"
    assert d.cheapest("val/acc", "val/reference/trigram/acc") == "pretrain/c"
    assert d.cheapest("val/acc", "val/reference/trigram/acc", seeds=1) == "pretrain/b"
    assert d.cheapest("val/acc", "val/reference/trigram/acc", limits={"wall_time_s": 10}) is None


def test_every_declared_question_is_judged_from_the_table_whatever_a_page_reads():
    """The family's verdicts are computed from the table once, every declared question among them: `cheapest`
    stops at its first success, yet the family holds all three candidates' rows, and its pick reads them."""
    from minibert.report import verdicts
    from minibert.tables.query import Data
    from minibert.tables.stats import Family, UndeclaredQuestion

    rows = []
    for arm, flops, accs in (("a", 1e9, [0.50, 0.51, 0.49]), ("b", 2e9, [0.45, 0.46, 0.44]), ("c", 3e9, [0.3] * 3)):
        seeds = dict(enumerate(accs))
        e = f"pretrain/{arm}"
        rows += cells(e, "val/acc", seeds, n=20000) + cells(e, "val/reference/trigram/acc", {s: 0.35 for s in seeds})
        rows += cells(e, "flops", {s: flops for s in seeds})
    d = Data(pd.DataFrame(rows, columns=[*table.FIRST, "arm", *table.LAST]), family=Family("g"))
    d.family.declare([f"pretrain/{x} val/acc vs pretrain/{x} val/reference/trigram/acc" for x in "abc"], "here")
    judged = verdicts.judge(d)
    assert len(d.family.p) == 3 and [r.verdict for r in judged] == ["first better", "first better", "second better"]
    assert d.cheapest("val/acc", "val/reference/trigram/acc") == "pretrain/a"
    with pytest.raises(UndeclaredQuestion, match="not in the family declared in here"):
        d.diff("val/acc", {"experiment": "pretrain/a"}, {"experiment": "pretrain/c"}).verdict()


def test_figures_with_per_document_parts_resample_documents_and_hide_the_parts():
    """Two arms graded on 12 shared documents whose difficulty differs a lot, 4 seeds. Their accuracies' parts
    per document (what runs on real text log) make every interval the one that resamples documents with the
    seeds (exactly `bootstrap.clustered` on the same sums), wider than the binomial one that takes the 9,600
    questions as independent; the parts are never figures of their own."""
    import numpy as np

    from minibert.stats import bootstrap
    from minibert.tables.query import Data

    rng = np.random.default_rng(0)
    docs, seeds, per_doc = 12, 4, 800
    hard = rng.normal(0, 0.15, docs)  # a document's own difficulty, shared by both arms
    tilt = rng.normal(0, 0.05, docs)  # where the arms differ
    rows, sums = [], {}
    for arm, shift in (("a", 0.02), ("b", -0.02)):
        e = f"pretrain/{arm}"
        acc = np.clip(0.5 + shift + hard + (tilt if arm == "a" else -tilt), 0.05, 0.95)  # (C,)
        per = rng.binomial(per_doc, acc, (seeds, docs)) / per_doc  # (S, C)
        ref = np.clip(0.45 + hard, 0.05, 0.95)
        sums[arm] = per * per_doc
        rows += cells(e, "val/acc", dict(enumerate(per.mean(1))), n=docs * per_doc)
        rows += cells(e, "val/reference/trigram/acc", {s: float(ref.mean()) for s in range(seeds)})
        for c in range(docs):
            rows += cells(e, "val/by_document/acc", {s: per[s, c] for s in range(seeds)}, f"d{c}", per_doc)
            rows += cells(e, "val/by_document/reference/trigram/acc", {s: ref[c] for s in range(seeds)}, f"d{c}")
    d = Data(pd.DataFrame(rows, columns=[*table.FIRST, "arm", *table.LAST]))
    flat = Data(d.frame[~d.frame.metric.str.startswith("val/by_document/")])
    n = np.full((seeds, docs), float(per_doc))
    expected = bootstrap.clustered(sums["a"], n, sums["b"], n)
    got = d.diff("val/acc", {"experiment": "pretrain/a"}, {"experiment": "pretrain/b"}).interval
    assert (got.mean, got.lo, got.hi) == pytest.approx((expected.mean, expected.lo, expected.hi))
    plain = flat.diff("val/acc", {"experiment": "pretrain/a"}, {"experiment": "pretrain/b"}).interval
    assert got.mean == pytest.approx(plain.mean) and got.hi - got.lo > 1.5 * (plain.hi - plain.lo)
    one = d.stat("val/acc", experiment="pretrain/a").interval
    assert one.hi - one.lo > 2 * (flat.stat("val/acc", experiment="pretrain/a").interval.hi - flat.stat(
        "val/acc", experiment="pretrain/a").interval.lo)  # fmt: skip
    gap = d.between("val/acc", "val/reference/trigram/acc", experiment="pretrain/a").interval  # the same questions
    ref = np.broadcast_to(np.clip(0.45 + hard, 0.05, 0.95) * per_doc, (seeds, docs))
    assert (gap.lo, gap.hi) == pytest.approx(
        (bootstrap.clustered(sums["a"], n, ref, n).lo, bootstrap.clustered(sums["a"], n, ref, n).hi)
    )
    assert all(not m.startswith("val/by_document/") for m, _ in d.figures("pretrain/a"))
    # a table whose parts no longer add up to the figure they split is refused, not silently read from the parts
    from minibert.tables.query import QueryError

    broken = d.frame.copy()
    whole = (broken.experiment == "pretrain/a") & (broken.metric == "val/acc") & (broken.seed == 0)
    broken.loc[whole, "value"] += 0.05
    with pytest.raises(QueryError, match="per validation document averages"):
        Data(broken).stat("val/acc", experiment="pretrain/a")


def test_figures_per_category_and_document_are_stored_apart_and_read_back_as_one_table(tmp_path):
    """A table with per-category and per-document rows is written as results.csv without them plus a narrow
    categories.csv and documents.csv, and read back equal to what was written; a table rewritten without them
    leaves no narrow file behind, documents of a run that results.csv does not hold (a writer killed between the
    files) are not joined, and a run with no row of its own keeps its categories in results.csv."""
    rows = []
    for seed in range(3):
        rows += cells("pretrain/a", "val/acc", {seed: 0.6 + seed / 100}, n=300)
        rows += cells("pretrain/a", "val/acc", {seed: 0.5}, "opener", n=100)
        for d in range(4):
            rows += cells("pretrain/a", "val/by_document/acc", {seed: 0.5 + d / 10}, f"d{d}", 75)
            rows += cells("pretrain/a", "val/by_document/n", {seed: 75.0}, f"d{d}")
    frame = pd.DataFrame(rows, columns=[*table.FIRST, "arm", *table.LAST])
    frame = frame.sort_values(table.ORDER, kind="stable", ignore_index=True).assign(code="4f1c")
    written = table.write(frame, tmp_path)
    assert [p.name for p in written] == list(table.FILES)
    main = pd.read_csv(tmp_path / table.FILE)
    categories = pd.read_csv(tmp_path / table.CATEGORIES)
    documents = pd.read_csv(tmp_path / table.DOCUMENTS)
    assert not main.metric.str.startswith(table.BY_DOCUMENT).any() and main.category.isna().all() and len(main) == 3
    assert list(categories.columns) == table.DOCUMENT_COLUMNS and set(categories.category) == {"opener"}
    assert list(documents.columns) == table.DOCUMENT_COLUMNS and len(documents) == 24
    pd.testing.assert_frame_equal(table.read(tmp_path), frame, check_dtype=False)

    documents.loc[documents.seed == 2, "run"] = "a run results.csv does not hold"
    sealed.write(tmp_path / table.DOCUMENTS, documents.to_csv(index=False))  # whole, as an earlier write left it
    assert set(table.read(tmp_path).query("metric.str.startswith('val/by_document/')").seed) == {0, 1}

    flat = frame[frame.category == ""]
    assert [p.name for p in table.write(flat, tmp_path)] == [table.FILE]
    assert not (tmp_path / table.DOCUMENTS).exists() and not (tmp_path / table.CATEGORIES).exists()
    pd.testing.assert_frame_equal(table.read(tmp_path), flat.reset_index(drop=True), check_dtype=False)

    only = frame[frame.category == "opener"]  # no row of its own: its run's columns stay in results.csv
    assert [p.name for p in table.write(only, tmp_path)] == [table.FILE]
    pd.testing.assert_frame_equal(table.read(tmp_path), only.reset_index(drop=True), check_dtype=False)


def test_a_claim_met_exactly_on_every_seed_holds_and_one_missed_exactly_fails(tmp_path):
    """A figure with no spread and no sampling error (a training loss of exactly 0 on every seed) is not a
    question for an interval: met exactly, the claim holds; missed exactly, it fails."""
    zero = cells("p/pick_0", "train/loss", dict.fromkeys(range(3), 0.0))
    for bound, want in ((0.0, "holds"), (-0.5, "fails")):
        claim = Claim("no blanks, no loss", value=MetricRef("p/pick_0", "train/loss"), at_most=bound)
        page = report(tmp_path / str(bound), zero, [claim])
        ((text, figure, seeds, verdict),) = sections(page, "md")["The answer"]
        assert verdict == want and seeds == "3" and figure.startswith("0.0 (0.0 to 0.0)"), (bound, verdict)


def test_a_comparison_stopped_on_the_clock_reads_the_same_on_every_page(tmp_path):
    """The record knows the look `--minutes` stopped it at: its table, the dashboard's answer and any page that
    quotes it say '(clock)' and 'stopped on the clock', never '(cap)' on one and '(clock)' on another."""
    from minibert.compare import comparison
    from minibert.compare.comparison import Design, Pair
    from minibert.tables.query import Data

    rows = arms()
    (tmp_path / "comparisons").mkdir()
    design = Design([Pair("p/mlm", "p/span", "val/acc")], cap=5, first_seed=2)
    body = {"design": design.to_json(), "looks": {design.pairs[0].label: 5}, "clock": 5}  # --minutes stopped it at 5
    (tmp_path / "comparisons" / "c.json").write_text(json.dumps(body))
    page = report(tmp_path, rows)
    ((text, _, _, verdict),) = sections(page, "md")["The answer"]
    record = comparison.recorded(tmp_path, "c", Data(pd.DataFrame(rows), out=str(tmp_path)))
    (j,) = record.judged
    table_row = next(r for r in comparison.table(record.design, record.judged, record.clock) if r.startswith("| p/"))
    assert verdict == record.words(j, "mlm", "span") == "undecided (clock)"
    assert "stopped on the clock (--minutes) after 5 seeds" in text and "stopped on the clock" in table_row
    assert "| undecided (clock) |" in table_row


def test_the_tables_under_a_folder_leave_out_the_runs_a_sweep_is_writing(tmp_path):
    for folder in ("a", "a/runs/pretrain/x", "b/c", "d"):
        (tmp_path / folder).mkdir(parents=True)
    for folder in ("a", "a/runs/pretrain/x", "b/c"):
        (tmp_path / folder / table.FILE).write_text("grid\n")
    assert table.tables_under(tmp_path) == [tmp_path / "a", tmp_path / "b/c"]
    assert table.tables_under(tmp_path / "gone") == []  # a folder removed before the walk: nothing, no error
