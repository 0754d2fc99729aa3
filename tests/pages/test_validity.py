"""The predictive-validity study's page (configs/pages/results/validity.md.j2, minibert.report.validity) on
constructed tables: a toy language whose ranking is text's is said to predict it, one whose ranking is text's
reversed is said to run against it, every coefficient on the page is the study's own, and cloze skips the arms
that do not answer the cloze question. The study's grid and its --quick variant load, and the quick variant
changes every experiment's budget and nothing else."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from minibert.ablation.grid import GridError, load_grid
from minibert.report.render import Renderer
from minibert.report.validity import NAMES, TARGET, Study
from minibert.tables import table
from minibert.tables.query import Data
from tests.templates import copy_templates
from tests.validity_tables import ARMS, rows, with_saved_configs

ROOT = Path(__file__).resolve().parents[2]


def page(tmp_path: Path, orders: dict[str, float], drop: str = "") -> tuple[str, Study]:
    """The page rendered from the settings' rows (`drop`: an experiment whose seed 2 is left out)."""
    out = tmp_path / "results" / "validity"
    kept = [r for i, (s, o) in enumerate(orders.items()) for r in rows(s, o, seed=i)
            if not (r["experiment"] == drop and r["seed"] == 2)]  # fmt: skip
    frame = pd.DataFrame(kept, columns=[*table.FIRST, "objective", *table.LAST])
    table.write(frame, out)
    with_saved_configs(out)
    command = "python scripts/ablate.py --grid configs/ablations/validity.yaml"
    (out / "run.json").write_text(json.dumps({"command": command}))
    template = Path("results/validity.md.j2")  # relative to configs/pages
    copy_templates(tmp_path, template)
    renderer = Renderer(tmp_path)
    path, text = renderer.render(template)
    assert path == tmp_path / "results" / "validity.md"
    return text, renderer.study("validity")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    return page(tmp_path_factory.mktemp("validity"), {"dyck": 1, "brackets": -1, "text1x": 1, "text": 1})


def test_a_toy_that_ranks_as_text_predicts_it_and_one_that_reverses_it_runs_against_it(rendered):
    text, study = rendered
    answer = text.split("## Rank correlations")[0]
    for measure in ("cloze", "fine-tuning"):
        said = answer.split(f"On {measure}")[1].split("\n\n")[0]
        assert re.search(r"Dyck's ranking over \d arms predicts text's", said)
        assert re.search(r"the bracket pairs' ranking over \d arms runs against text's", said)
    dyck, brackets = study.compare("dyck", "text", "finetune"), study.compare("brackets", "text", "finetune")
    assert dyck.correlation.spearman.lo > 0.5 and brackets.correlation.spearman.hi < -0.5
    assert dyck.pairs.same > 0 and dyck.pairs.other == 0 and brackets.pairs.other > 0 and brackets.pairs.same == 0


def test_a_small_text_run_is_said_to_predict_better_only_than_the_toy_that_reverses_text(rendered):
    text, study = rendered
    rows = text.split("## Does a small text run")[1].split("##")[0]
    assert "| the bracket pairs | fine-tuning (accuracy) | 7 |" in rows and "text at 1x predicts better |" in rows
    assert "| Dyck | fine-tuning (accuracy) | 7 |" in rows
    dyck = next(line for line in rows.splitlines() if line.startswith("| Dyck | fine-tuning"))
    assert dyck.endswith("| undecided |")
    v = study.versus("text1x", "brackets", "finetune")
    assert v.spearman.lo > 0 and f"{v.spearman.value:+.2f} ({v.spearman.lo:+.2f} to {v.spearman.hi:+.2f})" in rows


def test_every_coefficient_on_the_page_is_the_studys(rendered):
    text, study = rendered
    names = {k: v for k, v in NAMES.items() if k != TARGET}
    table_rows = [line for line in text.splitlines() if line.startswith("| ") and "Spearman" not in line]
    for setting, name in names.items():
        for measure, label in (("cloze", "cloze"), ("finetune", "fine-tuning")):
            c = study.compare(setting, "text", measure)
            row = next(r for r in table_rows if r.startswith(f"| {name} | {label}") and "%" not in r)
            s = c.correlation.spearman
            assert f"{s.value:+.2f} ({s.lo:+.2f} to {s.hi:+.2f})" in row
            assert f"| {len(c.arms)} | {c.seeds_x}, {c.seeds_y} |" in row
            top, own = study.ceiling("text", measure, c.arms), study.ceiling(setting, measure, c.arms)
            assert row.endswith(f"| {top.spearman:+.2f}, {top.kendall:+.2f} | {own.spearman:+.2f} |")
            # text here is quality plus little noise: a perfect predictor scores near 1, and no coefficient beats it
            assert 0.9 < top.spearman <= 1 and c.correlation.spearman.value <= top.spearman + 0.05


def test_cloze_ranks_only_the_arms_that_answer_the_cloze_question(rendered):
    _, study = rendered
    cloze, finetune = study.compare("dyck", "text", "cloze"), study.compare("dyck", "text", "finetune")
    not_cloze = {"electra", "next_token"}  # their objectives answer another question (configs/arms.yaml)
    assert set(study.not_cloze) == not_cloze
    assert set(cloze.arms) == set(ARMS) - not_cloze and set(finetune.arms) == set(ARMS)
    # text's cloze figure is the best reference minus the accuracy, on the same questions
    mlm = study.figure("text", "cloze", "mlm")
    acc = Data.load(Path(study.data.out)).stat("val/acc", experiment="validity/text/pretrain/mlm")
    assert mlm.mean == pytest.approx(0.55 - acc.mean)


def test_a_cell_short_of_seeds_is_named_and_its_comparisons_use_the_seeds_every_arm_has(rendered, tmp_path):
    assert "Partial results" not in rendered[0]
    text, study = page(tmp_path, {"dyck": 1, "text": 1}, drop="validity/text/finetune/span")
    assert "**Partial results.** 1 of the 28 cells" in text and "text/finetune/span" in text
    assert study.compare("dyck", "text", "finetune").seeds_y == 2
    assert study.compare("dyck", "text", "cloze").seeds_y == 3


def test_the_page_draws_a_scatter_per_predictor_and_states_the_budget_ratio(rendered):
    text, _ = rendered
    for setting in ("dyck", "brackets", "text1x"):
        assert f"(validity/{setting}.png)" in text
    assert re.search(r"21x\s+Dyck's", text)


def test_the_grid_loads_and_its_quick_variant_adds_its_overrides_to_every_experiment_and_nothing_else():
    grid = load_grid(ROOT / "configs/ablations/validity.yaml", root=ROOT)
    settings = {e.name.split("/")[1] for e in grid.experiments}
    arms = {e.name.split("/")[3] for e in grid.experiments}
    assert settings == {"dyck", "brackets", "text1x", "text"} and len(arms) >= 12
    assert all(grid[e.encoder_from].name.split("/")[3] == e.name.split("/")[3] for e in grid.experiments
               if e.encoder_from)  # fmt: skip
    quick = grid.quickened()
    for full, small in zip(grid.experiments, quick.experiments):
        assert (full.name, full.configs, full.encoder_from) == (small.name, small.configs, small.encoder_from)
        assert small.overrides == {**full.overrides, **grid.quick}
    assert quick.experiments[0].overrides["budget.flops"] is None
    with pytest.raises(GridError, match="no `quick`"):
        load_grid(ROOT / "configs/ablations/text.yaml", root=ROOT).quickened()


def test_quick_needs_its_own_out_folder_a_grid_with_a_quick_variant_and_never_mixes_with_real_runs(tmp_path):
    from tests.ablating import ablate

    refused = ablate("--grid", "configs/ablations/validity.yaml", "--quick", "--seeds", "1")
    assert refused.returncode == 2 and "--quick needs its own --out" in refused.stderr
    refused = ablate("--grid", "configs/ablations/text.yaml", "--quick", "--out", str(tmp_path), "--seeds", "1")
    assert refused.returncode == 2 and "no `quick` overrides" in refused.stderr
    # a folder holds runs of one kind: quick runs never join a real table, nor real runs a quick one
    for made, flag in (({"command": "real"}, ["--quick"]), ({"command": "quick", "quick": True}, [])):
        (tmp_path / "run.json").write_text(json.dumps(made))
        refused = ablate("--grid", "configs/ablations/validity.yaml", *flag, "--out", str(tmp_path), "--seeds", "1")
        assert refused.returncode == 2 and "give this run another --out" in refused.stderr, refused.stderr


@pytest.mark.slow
@pytest.mark.every_core
def test_the_quick_study_runs_every_setting_end_to_end_and_its_page_renders(tmp_path):
    """Three arms (one that answers no cloze question) in all four settings at the quick budget, two seeds: the
    runner trains them, the table holds every setting's figures, and the study's page renders from it."""
    from tests.ablating import ablate

    out = tmp_path / "results" / "validity"
    only = ",".join(f"validity/*/*/{arm}" for arm in ("mlm", "span", "electra"))
    done = ablate("--grid", "configs/ablations/validity.yaml", "--quick", "--out", str(out), "--seeds", "2",
                  "--workers", "2", "--only", only)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    study = Study(Data.load(out))
    assert set(study.settings) == {"dyck", "brackets", "text1x", "text"} and study.settings[-1] == "text"
    assert study.arms[0] == "mlm" and set(study.arms) == {"mlm", "span", "electra"}
    for setting in study.settings:
        assert set(study.arms_of("finetune", setting)) == {"mlm", "span", "electra"}
        assert set(study.arms_of("cloze", setting)) == {"mlm", "span"}
    flops = [study.data.stat("flops", experiment=f"validity/{s}/pretrain/mlm").mean for s in study.settings]
    assert flops == sorted(flops) and flops[0] < flops[-1]  # the settings' models differ even at one step count
    template = Path("results/validity.md.j2")
    copy_templates(tmp_path, template)
    _, text = Renderer(tmp_path).render(template)
    assert "| Dyck | fine-tuning (accuracy) | 3 | 2, 2 |" in text
    assert "| Dyck | cloze" not in text  # two cloze arms: too few for a coefficient
    assert "| mlm |" in text and "| electra |" in text


def test_each_effect_panel_pairs_an_arms_effect_in_the_toy_with_its_effect_in_text(rendered):
    _, study = rendered
    for setting in study.predictors:
        for label, _, _, points in study.effect_panels(setting):
            measure = next(m for m, name in study.measure_labels.items() if name == label)
            arms = study.comparable(setting, study.target, measure=measure)
            toy, text = (study.effects(s, measure, study.control, arms) for s in (setting, study.target))
            assert points == {a: (toy[a], text[a]) for a in arms if a != study.control}


def test_the_study_names_the_toys_that_predict_and_states_text_s_own_ceiling_only_where_none_does(rendered):
    _, study = rendered
    assert set(study.toys) == {"dyck", "brackets"} and study.cells == 2 * len(study.settings) * len(study.arms)
    for m in ("cloze", "finetune"):
        assert [c.x for c in study.predicting(m, study.toys)] == ["dyck"] and study.unpredicted_ceiling(m) == ""
        assert [c.x for c in study.predicting(m, ["brackets"])] == []
    for p, _, lo, lo_arm, hi, hi_arm in study.leave_one_out():
        assert p in study.predictors and lo <= hi and {lo_arm, hi_arm} <= set(study.arms)


def test_where_no_toy_predicts_text_the_study_states_text_s_own_ceiling(tmp_path):
    out = tmp_path / "validity"
    orders = {"dyck": -1, "brackets": -1, "text1x": 1, "text": 1}
    table.write(pd.DataFrame([r for i, (s, o) in enumerate(orders.items()) for r in rows(s, o, seed=i)],
                             columns=[*table.FIRST, *table.LAST]), out)  # fmt: skip
    with_saved_configs(out)
    study = Study(Data.load(out))
    first = study.against_target("finetune", study.predictors)[0]
    assert study.predicting("finetune", study.toys) == []
    assert study.unpredicted_ceiling("finetune") == f"{study.ceiling('text', 'finetune', first.arms).spearman:+.2f}"
