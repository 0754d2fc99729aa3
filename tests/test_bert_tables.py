"""The grids behind BERT's Tables 7, 8 and 5 in miniature, and the pages scripts/bert_tables.py builds from them:
the grids hold exactly the cells the tables read, and the pages' figures are the csv's, recomputed by hand."""

import csv

import pytest

from minibert.ablation.grid import load_grid
from minibert.ablation.intervals import accuracy_interval, difference_interval
from minibert.masking import MaskingRecipe

INIT = "model.init_args.objective.init_args"


@pytest.fixture(scope="module")
def tables(scripts):
    return scripts("bert_tables")


def test_the_probes_tables_rows_are_cells_with_the_features_their_names_say(root):
    grid = load_grid(root / "configs/ablations/probes.yaml", root=root)
    spec = grid.tables["probes"]
    assert list(spec.languages) == ["pairs", "dyck"]
    for lang in spec.languages:
        for suffix in spec.rows:
            e = grid[spec.cell(lang, suffix)]
            assert e.encoder_from == f"probes/{lang}/pretrain"
            if suffix in ("full", "frozen"):
                assert e.overrides == {"model.init_args.regime": suffix}
                continue
            assert "configs/probe.yaml" in e.configs
            cell, pooling = suffix.split("-")
            layer, concat = {"emb": (0, 1), "layer1": (1, 1), "layer2": (2, 1), "concat2": (2, 2)}[cell]
            assert (e.overrides[f"{INIT}.layer"], e.overrides[f"{INIT}.concat"], e.overrides[f"{INIT}.pooling"]) == (
                layer,
                concat,
                pooling,
            )
        assert ("configs/languages/dyck.yaml" in grid[f"probes/{lang}/pretrain"].configs) == (lang == "dyck")


def test_masking_grid_runs_the_six_strategies_with_the_rates_their_names_say(root, tables):
    grid = load_grid(root / "configs/ablations/masking.yaml", root=root)
    assert len(grid.experiments) == 6 * 2 * 3
    spec = grid.tables["masking"]
    assert len(spec.rows) == 6 and all(len(bert) == 3 for bert in spec.rows.values())  # BERT's three columns
    for lang in spec.languages:
        for row in spec.rows:
            name = spec.cell(lang, row)
            recipe = MaskingRecipe(**grid[f"{name}/pretrain"].overrides[f"{INIT}.masking"])
            mask, same, rnd = (p / 100 for p in tables.strategy(row))
            assert (recipe.p_pick, recipe.p_mask, recipe.p_random) == (0.15, mask, rnd)
            assert recipe.p_kept == pytest.approx(same, abs=1e-12)
            assert "eval_masking" not in str(grid[f"{name}/pretrain"].overrides)  # graded on the default questions
            assert grid[f"{name}/full"].overrides["model.init_args.regime"] == "full"
            assert "configs/probe.yaml" in grid[f"{name}/probe"].configs
            assert grid[f"{name}/full"].encoder_from == grid[f"{name}/probe"].encoder_from == f"{name}/pretrain"


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, ["experiment", "seed", "metric", "value", "run_dir"])
        writer.writeheader()
        for experiment, metric, values in rows:
            for seed, value in enumerate(values):
                writer.writerow(
                    {"experiment": experiment, "seed": seed, "metric": metric, "value": value, "run_dir": "x"}
                )


def test_probes_page_picks_the_best_probe_by_mean_and_reports_each_seeds_difference(tmp_path, tables):
    out = tmp_path / "probes"
    out.mkdir()
    spec = tables.declared("probes")
    acc = {suffix: [0.5, 0.5, 0.5] for suffix in spec.rows}
    acc |= {"full": [0.99, 1.0, 0.98], "frozen": [0.50, 0.52, 0.49], "layer2-mean": [0.61, 0.55, 0.70],
            "layer1-max": [0.65, 0.64, 0.66], "layer2-cls": [0.51, 0.50, 0.52]}  # fmt: skip
    rows = [(f"probes/pairs/{k}", "val/acc", v) for k, v in acc.items()]
    write_csv(out / "ablation.csv", rows + [(f"probes/pairs/{k}", "val/n", [2000] * 3) for k in acc])
    assert tables.best_probe(tables.read_values(out / "ablation.csv"), spec, "pairs") == "layer1-max"  # 65.0 > 62.0
    page = tables.write_page("probes", out)
    assert page.parent == out  # a table script writes inside its --out only
    text = page.read_text()
    for seed in range(3):  # layer1-max minus frozen, and minus the [CLS] probe, seed by seed
        p, f, c = (100 * acc[k][seed] for k in ("layer1-max", "frozen", "layer2-cls"))
        assert f"| {seed} | {p:.1f} | {f:.1f} | {c:.1f} | {p - f:+.1f} | {p - c:+.1f} |" in text
    assert "| 0 | 65.0 | 50.0 | 51.0 | +15.0 | +14.0 |" in text  # the same, written out once
    # the report's intervals: paired by seed, seed spread plus the sampling error of n=2000 questions each
    by = {k: dict(enumerate(v)) for k, v in acc.items()}
    diff = difference_interval(by["layer1-max"], by["frozen"], 2000, 2000)
    assert f"| {diff.percent()} | " in text
    mean = accuracy_interval(acc["layer2-mean"], 2000)
    assert f"| layer 2 (last), mean | {mean.percent()} (61.0 / 55.0 / 70.0) |" in text
    assert "then seeds 0 / 1 / 2." in text


def test_a_csv_without_the_experiments_a_table_reads_is_refused_and_nothing_is_written(tmp_path, tables, capsys):
    out = tmp_path / "not_probes"
    out.mkdir()
    write_csv(out / "ablation.csv", [("probes/pairs/full", "val/acc", [0.9, 0.9])])
    assert tables.main(["probes", "--out", str(out)]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "probes/pairs/emb-mean val/acc" in line, line
    assert tables.main(["masking", "--out", str(out)]) == 2
    assert "none of the masking table's experiments" in capsys.readouterr().err
    assert sorted(f.name for f in tmp_path.rglob("*") if f.is_file()) == ["ablation.csv"]


def test_masking_verdicts_follow_the_probe_means_and_notes_survive_a_rebuild(tmp_path, tables):
    out = tmp_path / "masking"
    out.mkdir()
    rows = []
    strategies = tables.declared("masking").rows
    for i, row in enumerate(strategies):  # probe accuracy rises down the list: 0/0/100 best, 80/10/10 worst
        name = f"masking/pairs/{row}"
        rows += [(f"{name}/pretrain", "val/acc", [0.9] * 3), (f"{name}/pretrain", "val/gap/acc", [0.001] * 3)]
        rows += [(f"{name}/pretrain", "val/ceiling/acc", [0.901] * 3)]
        rows += [(f"{name}/full", "val/acc", [0.95] * 3), (f"{name}/probe", "val/acc", [0.6 + i / 100] * 3)]
    write_csv(out / "ablation.csv", rows)
    page = tables.write_page("masking", out)
    text = page.read_text()
    assert "| best feature-based | 80-10-10 | 0-0-100 (65.0); BERT's holds: no |" in text
    assert "| worst feature-based | 100-0-0 | 80-10-10 (60.0); BERT's holds: no |" in text
    assert "| 100% | 0% | 0% | 90.0 (90.0 / 90.0 / 90.0) | 0.1 |" in text  # no spread, no n: a bare mean
    page.write_text(text + "\nhand-written reading\n")
    assert tables.write_page("masking", out).read_text().endswith("<!-- notes -->\n\nhand-written reading\n")


def test_tasks_page_reads_the_committed_objectives_grid(root, tables, tmp_path):
    table = tables.Table(tables.read_values(root / "results/objectives/ablation.csv"))
    lines = "\n".join(tables.tasks_page(table, tables.declared("tasks"), ["pairs"]))
    for name, label in (("bert", "MLM + NSP"), ("mlm", "MLM alone"), ("next_token", "next-token LM")):
        by_seed = table.get(f"objectives/finetune/{name}-full", "val/acc")
        assert sorted(by_seed) == [0, 1, 2]
        row = next(line for line in lines.splitlines() if line.startswith(f"| {label}"))
        n = table.n(f"objectives/finetune/{name}-full")
        assert f"| {accuracy_interval(list(by_seed.values()), n).percent()} (" in row


def test_a_table_its_page_cannot_read_is_one_line(tables):
    from minibert.ablation.grid import Table

    bad = {"masking": Table("m/{language}/{row}", {"pairs": "p"}, {"80-10": [1, 2, 3]}),
           "tasks": Table("t/{row}", {"pairs": "p", "dyck": "d"}, {"mlm": ["MLM", "84"]}),
           "probes": Table("p/{language}/{row}", {"pairs": "p"}, {"full": "fine-tuning"})}  # fmt: skip
    for table, spec in bad.items():
        with pytest.raises(tables.BadTable) as err:
            tables._check(table, spec, f"g.yaml: tables.{table}")
        assert str(err.value).startswith(f"g.yaml: tables.{table}") and "\n" not in str(err.value)
    for table in ("probes", "masking", "tasks"):  # the committed declarations pass
        tables.declared(table)
