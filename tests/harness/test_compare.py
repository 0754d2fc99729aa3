"""scripts/compare.py on tiny grids: paired seeds, the seeds before the first possible verdict at once then one
per look, a verdict from the sign rule with every seed at its value, a comparison that
resumes and extends instead of starting over, a plug-in file judged against every arm of its yardsticks, and
bad input in one line with status 2 before anything trains."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from minibert.compare.comparison import RULE, ComparisonError, Design, Pair, as_diff, judge
from minibert.compare.comparison import table as table_lines
from minibert.stats import betting
from minibert.stats.sign import decide, first_bound, stops
from minibert.tables import table
from minibert.tables.query import Data

ROOT = Path(__file__).resolve().parents[2]
TINY = {"trainer.max_steps": 6, "trainer.val_check_interval": 6, "data.val_size": 64, "data.val_batch_size": 64,
        "data.val_seed": None}  # fmt: skip
PLUGIN = """
from minibert.languages import Language
from minibert.masking import MaskingRecipe
from minibert.objectives import MaskedLM


class HalfMasked(MaskedLM):
    def __init__(self, language: Language | None = None) -> None:
        super().__init__(masking=MaskingRecipe(p_pick=0.5), language=language)
"""


def grid_file(tmp_path: Path) -> Path:
    experiments = [
        {"name": "p/mlm", "job_type": "pretrain", "configs": ["configs/pretrain.yaml"], "overrides": TINY},
        {"name": "p/span", "job_type": "pretrain", "overrides": TINY,
         "configs": ["configs/pretrain.yaml", "configs/objectives/span.yaml"]},
    ]  # fmt: skip
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump({"experiments": experiments}))
    return path


def seed_folders(out: Path) -> dict[str, list[str]]:
    return {
        arm: sorted(p.name.split("-")[0] for p in (out / "runs" / "p" / arm).glob("seed*")) for arm in ("mlm", "span")
    }


FIRST = first_bound()  # no verdict on one pair before this many seeds: the fixture's cap
TOLD: dict[str, str] = {}  # what the fixture's comparison printed on stderr


@pytest.fixture(scope="module")
def compared(tmp_path_factory, scripts):
    tmp = tmp_path_factory.mktemp("compare")
    grid, out = grid_file(tmp), tmp / "out"
    argv = ["--grid", str(grid), "--out", str(out), "--arms", "p/mlm,p/span", "--metric", "val/acc",
            "--max-seeds", str(FIRST), "--workers", "2", "--name", "c"]  # fmt: skip
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        code = scripts("compare").main(argv)
    TOLD["first"] = said.getvalue()  # what the first invocation told, for the tests of its estimates
    return code, out, argv, json.loads((out / "comparisons" / "c.json").read_text())


def test_the_first_wave_measures_this_machines_pace_before_the_rest_of_the_first_look_is_priced(compared):
    """One run a worker first (here seed 0 of both arms), then what is left at the pace those runs showed here."""
    lines = [line for line in TOLD["first"].splitlines() if line.startswith("compare.py: ")]
    waves = [i for i, line in enumerate(lines) if line.startswith("compare.py: seed(s) ")]
    paced = [i for i, line in enumerate(lines) if "this machine's pace, measured on its first runs" in line]
    assert lines[waves[0]].startswith("compare.py: seed(s) 0 of 2 arm(s) trained here")
    rest = ", ".join(map(str, range(1, FIRST)))
    assert lines[waves[1]].startswith(f"compare.py: seed(s) {rest} of 2 arm(s)") and waves[0] < paced[0] < waves[1]
    assert len(paced) == 1 and "the first look about" in lines[paced[0]] and "min more" in lines[paced[0]]


def test_compare_runs_the_seeds_before_the_first_possible_verdict_at_once_and_stops_at_the_cap(compared):
    code, out, _, result = compared
    assert code == 0
    (pair,) = result["pairs"]
    assert (pair["a"], pair["b"], pair["looks"]) == ("p/mlm", "p/span", FIRST)  # 6 steps decide nothing: the cap
    assert pair["verdict"] == "undecided (cap)" and pair["lo"] <= pair["mean"] <= pair["hi"]
    seeds = [f"seed{s}" for s in range(FIRST)]
    assert seed_folders(out) == {"mlm": seeds, "span": seeds}
    accuracy = table.read(out).query("metric == 'val/acc' and category == ''")  # the runs are the grid's
    assert len(accuracy) == 2 * FIRST
    text = (out / "comparisons" / "c.md").read_text()
    assert "| p/mlm | p/span | val/acc |" in text  # and its history, every look:
    assert "- p/mlm vs p/span: val/acc: win rate 1: " in text and f", {FIRST}: " in text and "; mean 1: " in text
    assert f"no verdict is possible before {FIRST})" in text
    answer = (out / "ablation.md").read_text().split("## How it was run", 1)[0]
    (row,) = [line.split(" | ") for line in answer.splitlines() if line.startswith("| mlm vs span: val/acc")]
    assert row[2] == str(FIRST) and row[3].removesuffix(" |") == "undecided (cap)"


def test_seed_s_gives_both_arms_one_data_stream_and_one_starting_encoder(compared):
    _, out, _, _ = compared
    for seed in (0, FIRST - 1):
        summaries = [json.loads(p.read_text()) for p in sorted(out.glob(f"runs/p/*/seed{seed}-*/summary.json"))]
        assert len(summaries) == 2
        assert summaries[0]["seeds"] == summaries[1]["seeds"] == {"seed_everything": seed, "init": seed,
                                                                  "data": seed, "val": seed}  # fmt: skip


def test_a_larger_cap_continues_the_sequence_reusing_every_seed_it_ran(compared, scripts, capsys):
    _, out, argv, _ = compared
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("runs/p/*/seed*/summary.json")}
    again = [*argv[: argv.index("--max-seeds") + 1], str(FIRST + 1), *argv[argv.index("--max-seeds") + 2 :]]
    assert scripts("compare").main(again) == 0
    said = capsys.readouterr().err  # what is left, not the first look again
    assert f"compare.py: resumed after {FIRST} seeds: " in said and "the first look done" in said
    assert "the first look about" not in said
    result = json.loads((out / "comparisons" / "c.json").read_text())
    assert result["looks"] == {"p/mlm vs p/span: val/acc": FIRST + 1} and result["design"]["extended_from"] == [FIRST]
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())  # nothing retrained, nothing re-piloted
    assert seed_folders(out)["mlm"] == [f"seed{s}" for s in range(FIRST + 1)]  # one more seed: one more look


def test_minutes_stops_on_the_clock_after_the_first_look_and_the_record_says_where(compared, scripts, capsys):
    """The first look's seeds are in the folder already (the fixture's), so the clock allows it; then it stops."""
    _, out, argv, _ = compared
    clocked = [*argv[: argv.index("--name")], "--name", "clock", "--max-seeds", str(FIRST + 3), "--minutes", "0.001"]
    assert scripts("compare").main(clocked) == 0  # the first look's seeds are reused from the fixture's runs
    err = capsys.readouterr().err
    assert "--minutes 0.001: stops before a seed" in err
    assert "the next seed would pass --minutes 0.001" in err and f"stopping at {FIRST} seeds" in err
    result = json.loads((out / "comparisons" / "clock.json").read_text())
    assert result["looks"] == {"p/mlm vs p/span: val/acc": FIRST} and result["design"]["cap"] == FIRST
    assert result["pairs"][0]["verdict"] == "undecided (cap)" and result["clock"] == FIRST
    # the record says plainly why it stopped, names the arms, gives their own figures and what would decide it
    text = (out / "comparisons" / "clock.md").read_text()
    (row,) = [line for line in text.splitlines() if line.startswith("| p/mlm | p/span |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[-2] == "undecided (clock)" and cells[-1] == f"stopped on the clock (--minutes) after {FIRST} seeds"
    mlm, span = (float(x) for x in cells[3].split(", "))
    assert float(cells[7].split(" ")[0]) == pytest.approx(mlm - span, abs=0.011)  # the mean, beside the wins
    assert "a decision would take" in text and "Continue (every seed run so far is reused)" in text


def _table(tmp_path: Path, a: dict[int, float], b: dict[int, float], metric: str = "val/acc") -> Data:
    """A grid's table of two arms whose seeds each graded their own validation questions."""
    rows = [{"grid": "g", "experiment": e, "stage": "pretrain", "seed": s, "val_seed": s, "metric": metric,
             "category": "", "value": v, "n": 1000, "run": "", "code": ""}
            for e, values in (("x/a", a), ("x/b", b)) for s, v in values.items()]  # fmt: skip
    import pandas as pd

    return Data(pd.DataFrame(rows))


def test_judge_stops_at_the_first_look_whose_win_rate_excludes_one_half_and_names_that_seed(tmp_path):
    a = {s: 0.80 + 0.01 * (s % 3) for s in range(20)}
    b = {s: 0.38 + 0.01 * (s % 2) for s in range(20)}
    b[1] = 0.95  # B wins one seed
    data = _table(tmp_path, a, b)
    (j,) = judge(data, Design([Pair("x/a", "x/b", "val/acc")], 20), {"x/a vs x/b: val/acc": 20})
    # a Beta(1, 1) mixture against a fair coin: 2^m B(1 + k, 1 + m - k) first reaches 20 at 11 wins in 12
    assert j.verdict.verdict == "A better" and j.verdict.look == 12 == decide(j.diffs, 20).look
    assert (j.verdict.wins, j.verdict.losses, j.verdict.e_value) == (11, 1, pytest.approx(4096 / 156))
    assert j.verdict.rate[0] > 0.5 and j.median == pytest.approx(0.42)
    assert as_diff(data, j).say("a", "b").startswith("a better: a − b = +")  # the sign rule's, not the interval's
    (row,) = [r for r in table_lines(Design([j.pair], 20), [j]) if r.startswith("| x/a | x/b |")]
    assert "| a better | sign decided after 12 seeds |" in row and "| 11 of 12; 0 |" in row
    assert f"| {100 * j.means[0]:.2f}, {100 * j.means[1]:.2f} |" in row  # the arms by name, their own means
    # lower is better on a gap: the same numbers favour B
    (g,) = judge(_table(tmp_path, a, b, "val/gap/acc"), Design([Pair("x/a", "x/b", "val/gap/acc")], 20),
                 {"x/a vs x/b: val/gap/acc": 20})  # fmt: skip
    assert g.verdict.verdict == "B better" and g.verdict.look == 12 and g.diffs[0] < 0
    assert Design([Pair("x/a", "x/b", "val/gap/acc")], 20).range(g.pair) == (-2.0, 2.0)  # the mean's range


def test_two_gaps_on_the_same_questions_differ_by_their_accuracies_so_the_design_bets_on_half_the_range(tmp_path):
    """Arms of one seed grading one set of questions share its ceiling: A - B of their gaps is B's accuracy minus
    A's, within [-1, 1]. A design that says so before its first seed reads the mean's sequence on that range, so
    its interval is narrower from the same seeds (the sign rule needs no range); a seed whose ceilings differ is
    refused in one line; a record made without it keeps the wider range, and
    continuing it under the narrower one is refused."""
    import pandas as pd

    rng = np.random.default_rng(3)
    ceiling = {s: 0.9 + 0.02 * rng.random() for s in range(40)}
    accuracy = {"x/a": {s: ceiling[s] - 0.15 - 0.02 * rng.random() for s in range(40)},
                "x/b": {s: ceiling[s] - 0.45 - 0.02 * rng.random() for s in range(40)}}  # fmt: skip
    rows = [{"grid": "g", "experiment": e, "stage": "pretrain", "seed": s, "val_seed": s, "metric": m,
             "category": "", "value": v, "n": 1000, "run": "", "code": ""}
            for e, acc in accuracy.items() for s in range(40)
            for m, v in (("val/acc", acc[s]), ("val/gap/acc", ceiling[s] - acc[s]),
                         ("val/ceiling/acc", ceiling[s]))]  # fmt: skip
    data, pair = Data(pd.DataFrame(rows)), Pair("x/a", "x/b", "val/gap/acc")
    wide, narrow = Design([pair], 40), Design([pair], 40, same_questions=True)
    assert (wide.range(pair), narrow.range(pair)) == ((-2.0, 2.0), (-1.0, 1.0))
    (w,), (n,) = (judge(data, d, {pair.label: 40}) for d in (wide, narrow))
    assert w.diffs == n.diffs and all(d == pytest.approx(accuracy["x/a"][s] - accuracy["x/b"][s])
                                      for s, d in enumerate(n.diffs))  # fmt: skip
    assert n.verdict == w.verdict and n.verdict.verdict == "A better"
    assert n.interval.hi - n.interval.lo < (w.interval.hi - w.interval.lo) / 1.5
    assert Design.from_json(wide.to_json()).range(pair) == (-2.0, 2.0)  # a record keeps the range it was made with
    assert "range of a seed's difference was [-2.0, 2.0], now [-1.0, 1.0]" in narrow.same_question(
        Design.from_json(wide.to_json())
    )
    assert narrow.same_question(Design.from_json(narrow.to_json())) is None  # a record keeps the narrower one too
    accuracy = Pair("x/a", "x/b", "val/acc")  # on an accuracy the flag changes nothing, so a record continues
    assert Design([accuracy], 40, same_questions=True).same_question(Design([accuracy], 20)) is None
    moved = pd.DataFrame(rows)
    moved.loc[(moved.experiment == "x/b") & (moved.metric == "val/ceiling/acc") & (moved.seed == 5), "value"] = 0.5
    with pytest.raises(ComparisonError, match="at seed 5 the arms' ceilings .* are 0.9.* and 0.5"):
        judge(Data(moved), narrow, {pair.label: 40})
    # a run with no figure counts at its arm's worst; against a gap below zero (a model may beat the expected
    # ceiling on a finite sample) that would pass the narrowed range, so the difference stops at its edge
    beaten = pd.DataFrame(rows)
    beaten.loc[(beaten.experiment == "x/a") & (beaten.metric == "val/gap/acc") & (beaten.seed == 0), "value"] = -0.01
    beaten = beaten[~((beaten.experiment == "x/b") & (beaten.seed == 0))]
    (j,) = judge(Data(beaten), narrow, {pair.label: 40})
    assert j.diffs[0] == 1.0 and j.failures.b == 1  # A's gap -0.01 against B's worst, 1: +1.01, at the edge


def test_every_seed_counts_at_its_value_and_failures_are_counted_per_arm(tmp_path):
    """A seed that did not learn stays in the verdict at its value, and a run with no figure counts at its arm's
    worst value: dropping them would bias the difference towards the arm that fails. Each arm's failures are
    counted apart, with McNemar's exact test of equal rates."""
    a = {s: 0.80 + 0.003 * s for s in range(8)}
    b = {s: 0.70 + 0.002 * s for s in range(8)}
    a[2] = 0.5  # a seed that learned nothing
    del b[5]  # a run that gave no figure
    (j,) = judge(_table(tmp_path, a, b), Design([Pair("x/a", "x/b", "val/acc", 0.55)], 8),
                 {"x/a vs x/b: val/acc": 8})  # fmt: skip
    assert (j.failures.a, j.failures.b, j.failures.seeds) == (1, 1, 8) and j.failures.p == 1.0
    assert j.diffs[2] == pytest.approx(0.5 - 0.704) and j.diffs[5] == pytest.approx(0.815 - 0.0)
    assert len(j.history) == 8 and not any(math.isnan(d) for d in j.diffs)


def test_a_figure_outside_its_range_or_a_metric_of_unknown_range_is_refused(tmp_path):
    from minibert.compare.comparison import ComparisonError

    pair = Pair("x/a", "x/b", "val/loss")
    with pytest.raises(ComparisonError, match="range is not known"):
        Design([pair], 8).range(pair)
    data = _table(tmp_path, {0: 2.5, 1: 2.4}, {0: 2.6, 1: 9.0}, "val/loss")
    design = Design([pair], 8, bounds=(0.0, 5.0))
    assert design.range(pair) == (-5.0, 5.0)
    with pytest.raises(ComparisonError, match="9 at seed 1 lies outside"):
        judge(data, design, {pair.label: 2})


def test_a_family_of_pairs_splits_alpha_so_a_borderline_pair_alone_decides_but_not_among_four(tmp_path):
    rng = __import__("numpy").random.default_rng(3)
    a = {s: 0.80 + float(rng.normal(0, 0.01)) for s in range(30)}
    b = {s: a[s] - 0.012 + float(rng.normal(0, 0.01)) for s in range(30)}
    data = _table(tmp_path, a, b)
    pair = Pair("x/a", "x/b", "val/acc")
    looks = {pair.label: 30}
    alone = judge(data, Design([pair], 30), looks)[0]
    among = judge(data, Design([pair] * 4, 30), looks)[0]
    assert alone.interval.hi - alone.interval.lo < among.interval.hi - among.interval.lo
    lo, hi = alone.verdict.rate
    assert among.verdict.rate[0] < lo and hi <= among.verdict.rate[1]  # the win rate's sequence at alpha / 4
    assert alone.verdict.look <= among.verdict.look


def test_a_record_judged_by_an_earlier_rule_is_judged_again_by_the_sign_rule(tmp_path):
    """A record that names no rule stopped on a confidence sequence for the mean: the betting one (it names its
    sequence and margin) or, before it, the safe t-test. It is judged again by the sign rule, which has nothing
    to tune, at the default band, and says what it was first judged by; a design whose bounds or band change is
    another question, and a rule this code does not know is refused."""
    from minibert.compare.comparison import ComparisonError

    a = {s: 0.80 + 0.01 * (s % 3) for s in range(6)}
    b = {s: 0.58 + 0.01 * (s % 2) for s in range(6)}
    data, pair = _table(tmp_path, a, b), Pair("x/a", "x/b", "val/acc")
    new = Design([pair], 6)
    body = new.to_json()
    assert body["rule"] == RULE and Design.from_json(body) == new
    kept = {k: v for k, v in body.items() if k not in ("rule", "earlier", "bounds", "band", "margin")}
    bet = Design.from_json(kept | {"sequence": "betting", "margin": 0.01})
    t_test = Design.from_json(kept | {"prior_variance": 20, "margin": 0.01})
    assert bet.earlier == "the betting sequence on the mean (margin 0.01)" and bet.margin == 0.01
    assert t_test.earlier == "the safe t-test, g = 20" and new.same_question(t_test) is None
    looks = {pair.label: 6}
    (now,), (then,) = judge(data, new, looks), judge(data, t_test, looks)
    assert now.verdict == then.verdict and now.verdict.verdict == "undecided (cap)"  # 6 wins: too few for any rule
    assert "First judged by the safe t-test, g = 20" in "\n".join(table_lines(t_test, [then]))
    assert new.same_question(Design([pair], 6, bounds=(0.0, 1.0))) == "its bounds was (0.0, 1.0), now None"
    assert new.same_question(Design([pair], 6, band=(0.3, 0.7))) == "its band was (0.3, 0.7), now (0.25, 0.75)"
    with pytest.raises(ComparisonError, match="does not know"):
        Design.from_json(body | {"rule": "something else"})


@pytest.mark.parametrize("finetune", [False, True], ids=["pairs", "finetune"])
def test_a_plugin_file_becomes_a_grid_of_every_shipped_arm_at_one_flop_budget(tmp_path, scripts, finetune):
    """configs/compare.yaml as shipped: the plug-in's class found in its file, every language's shipped arms
    and the new one pre-trained at that language's MLM budget, judged in pairs on the language's declared figures
    (no fine-tuning, and a language that makes no pairs refused while its cells are built), each arm's task read
    from its objective, or each fine-tuned fully with --finetune."""
    from minibert import compare

    (tmp_path / "half_masked.py").write_text(PLUGIN)
    cls, class_path, plugins = compare.find_objective(str(tmp_path / "half_masked.py"), [])
    assert (cls.__name__, class_path, plugins) == ("HalfMasked", "half_masked.HalfMasked", [str(tmp_path)])
    request = compare.Request(objective=str(tmp_path / "half_masked.py"), finetune=finetune)
    made = compare.plugin_grid(request, cls, class_path, tmp_path / "out")
    grid_path, pairs, timing = made.path, made.pairs, made.timing
    spec = yaml.safe_load((ROOT / "configs/compare.yaml").read_text())["languages"]
    grid = yaml.safe_load(grid_path.read_text())["experiments"]
    stage, suffix = ("finetune", "-full") if finetune else ("pretrain", "")
    for language, lang in spec.items():
        shipped = set(lang["arms"])
        mine = [p for p in pairs if p.a == f"{language}/{stage}/HalfMasked{suffix}"]
        assert {p.b for p in mine} == {f"{language}/{stage}/{a}{suffix}" for a in shipped}
        if finetune:
            assert all(p.metric == lang["metric"] and p.fails_below == lang["fails_below"] for p in mine)
        else:  # every seed counts at its value: nothing is set apart as failed
            first = lang.get("judged", ["val/pairs/acc"])[0]  # until the arms' logged figures are seen
            assert all(p.metric == first and p.fails_below is None for p in mine)
            assert made.measures[f"{language}/pretrain/HalfMasked"] == "cloze"
            assert {made.measures[f"{language}/pretrain/{a}"] for a in ("next_token", "mlm")} == {"next_token", "cloze"}
        pre = [e for e in grid if e["name"].startswith(f"{language}/pretrain/")]
        assert len(pre) == len(shipped) + 1
        assert {e["overrides"]["budget.flops"] for e in pre} == {float(lang["flops"])}
        assert all(e["overrides"]["pair_eval.enabled" if finetune else "pair_eval.required"] is not finetune
                   for e in pre)  # fmt: skip
        assert finetune == any(e["name"].startswith(f"{language}/finetune/") for e in grid)
        rest = lang["pretrain"][1:]  # the objective's config right after the base, before the language's
        assert all(e["configs"][0] == lang["pretrain"][0] and e["configs"][len(e["configs"]) - len(rest) :] == rest
                   for e in pre)  # fmt: skip
    assert len(timing) == len(spec)
    for bad, fragment in (("nope.py", "no such file"), (f"{tmp_path / 'half_masked.py'}:Other", "no objective 'Other'"),
                          ("minibert.objectives.Nope", "cannot import it")):  # fmt: skip
        with pytest.raises(compare.ComparisonError, match=fragment):
            compare.find_objective(bad, [])


def test_a_failed_seed_is_one_a_guesser_would_match_on_its_languages_validation_questions():
    """Each language's `fails_below` is the lowest accuracy (0.1-point steps) a coin-flipper reaches with
    probability at most 0.1% on that language's validation questions, counted in its committed timing grid:
    a seed that learned a little stays in, one that cannot be told from guessing is set apart."""
    from scipy.stats import binom

    def reached_by_guessing(accuracy: float, n: int) -> float:
        return float(binom.sf(math.ceil(accuracy * n - 1e-9) - 1, n, 0.5))  # P(a guesser's accuracy >= accuracy)

    yardsticks = yaml.safe_load((ROOT / "configs/compare.yaml").read_text())
    chance = yardsticks["fails_guessing"]
    for language, lang in yardsticks["languages"].items():
        t = table.read(ROOT / "results" / lang["timing"]["grid"])
        rows = (t.experiment == lang["timing"]["finetune"].format(arm="mlm")) & (t.metric == lang["metric"])
        counts = t[rows & (t.category == "")].n.unique()
        assert len(counts) == 1, (language, counts)
        n, threshold = int(counts[0]), lang["fails_below"]
        assert reached_by_guessing(threshold, n) <= chance < reached_by_guessing(threshold - 0.001, n), language
    assert reached_by_guessing(0.535, 2000) <= 0.001 < reached_by_guessing(0.515, 2000)  # n matters


@pytest.mark.slow
@pytest.mark.every_core
def test_a_plugin_file_is_run_against_every_arm_of_its_yardsticks(tmp_path, scripts):
    (tmp_path / "half_masked.py").write_text(PLUGIN)
    yardsticks = {"languages": {"brackets": {
        "pretrain": ["configs/pretrain.yaml"], "finetune": ["configs/finetune.yaml"], "flops": 2.0e9,
        "metric": "val/acc", "fails_below": 0.0,
        "timing": {"grid": "objectives", "pretrain": "objectives/pretrain/{arm}",
                   "finetune": "objectives/finetune/{arm}-full"},
        "arms": {"mlm": [], "span": ["configs/objectives/span.yaml"]}}}}  # fmt: skip
    spec = tmp_path / "yardsticks.yaml"
    spec.write_text(yaml.safe_dump(yardsticks))
    out = tmp_path / "out"
    tiny = tmp_path / "tiny.yaml"  # the fine-tuning recipe cut to a few steps
    tiny.write_text(yaml.safe_dump({"trainer": {"max_steps": 4, "val_check_interval": 4},
                                    "data": {"val_size": 64, "val_batch_size": 64}}))  # fmt: skip
    yardsticks["languages"]["brackets"]["finetune"] = ["configs/finetune.yaml", str(tiny)]
    spec.write_text(yaml.safe_dump(yardsticks))
    plugin = str(tmp_path / "half_masked.py")
    argv = [plugin, "--yardsticks", str(spec), "--out", str(out), "--max-seeds", str(first_bound(0.05 / 2)),
            "--finetune"]  # the first look of a family of two  # fmt: skip
    assert scripts("compare").main(argv) == 0
    result = json.loads((out / "comparisons" / "verdicts.json").read_text())
    assert [(p["a"], p["b"]) for p in result["pairs"]] == [
        ("brackets/finetune/HalfMasked-full", "brackets/finetune/mlm-full"),
        ("brackets/finetune/HalfMasked-full", "brackets/finetune/span-full"),
    ]
    steps = table.read(out).query("metric == 'step' and stage == 'pretrain'").groupby("experiment")["value"].mean()
    assert steps.nunique() == 1 and 0 < steps.iloc[0] < 600  # one FLOP budget: MLM and span cost alike a step


def _bad(tmp_path: Path, change: dict) -> list[str]:
    args = {"--grid": str(grid_file(tmp_path)), "--out": str(tmp_path / "out"), "--arms": "p/mlm,p/span",
            "--metric": "val/acc", "--max-seeds": str(FIRST), **change}  # fmt: skip
    return [x for k, v in args.items() if v is not None for x in (k, v)]


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"--arms": "p/mlm,p/nope"}, "'p/nope' is not an experiment"),
        ({"--arms": "p/mlm"}, "two or more different"),
        ({"--arms": "p/mlm,p/mlm"}, "two or more different"),
        ({"--metric": "val/acx"}, "p/mlm does not log it"),
        ({"--yardsticks": "{band}"}, "alike band [0.6, 0.9]: needs 0 < lo < 0.5 < hi < 1"),
        ({"--yardsticks": "no/such.yaml"}, "--yardsticks no/such.yaml: cannot read it"),
        ({"--max-seeds": "2"}, f"at least {FIRST}"),
        ({"--metric": "val/loss"}, "val/loss: its range is not known"),
        ({"--name": "../../x"}, "plain file name"),
        ({"--grid": None, "--arms": None, "--metric": None, "--out": None}, "give a plug-in objective"),
    ],
)
def test_bad_input_is_one_line_with_status_2_before_anything_trains(tmp_path, scripts, capsys, change, fragment):
    (tmp_path / "band.yaml").write_text("alike: [0.6, 0.9]\n")
    argv = [x.format(band=tmp_path / "band.yaml") for x in _bad(tmp_path, change)]
    try:
        code = scripts("compare").main(argv)
    except SystemExit as exited:  # argparse's own errors
        code = exited.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and fragment in err[-1] and "Traceback" not in "\n".join(err)
    assert err[-1].startswith("compare.py: error:") or "usage: compare.py" in "\n".join(err)
    assert not (tmp_path / "out" / "runs").exists()  # nothing trained


def test_a_damaged_record_is_one_line_and_left_as_it_is(compared, scripts, capsys, tmp_path):
    _, out, argv, _ = compared
    damaged = tmp_path / "damaged"
    shutil.copytree(out, damaged, ignore=shutil.ignore_patterns("runs"))
    (damaged / "comparisons" / "c.json").write_text('{"design": ')
    moved = [*argv[: argv.index("--out") + 1], str(damaged), *argv[argv.index("--out") + 2 :]]
    assert scripts("compare").main(moved) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("compare.py: error:") and "c.json: not JSON (line 1" in err[0]
    assert (damaged / "comparisons" / "c.json").read_text() == '{"design": '


def test_another_band_on_a_recorded_comparison_is_refused_not_overwritten(compared, scripts, capsys, tmp_path):
    _, out, argv, _ = compared
    before = (out / "comparisons" / "c.json").read_text()
    (tmp_path / "band.yaml").write_text("alike: [0.3, 0.7]\n")
    assert scripts("compare").main([*argv, "--yardsticks", str(tmp_path / "band.yaml")]) == 2
    assert "its band was (0.25, 0.75), now (0.3, 0.7)" in capsys.readouterr().err
    assert (out / "comparisons" / "c.json").read_text() == before


def test_on_a_shared_validation_set_the_means_sequence_holds_the_sets_own_error_which_seeds_do_not_average_away():
    """Every seed grading one fixed set of n questions carries that set's draw (a shift of the true difference
    by about sqrt(2 p (1 - p) / n)), so per-seed differences agree with each other and not with the truth. With
    no true difference, a sequence over seeds alone calls a winner far above 5% of the time; widened by the
    set's term (`_shared_set`), it stays below 5% (the audited mistake: intervals without validation error)."""
    import numpy as np

    from minibert.compare.comparison import _shared_set

    rng, n, p, experiments, seeds = np.random.default_rng(0), 2000, 0.6, 1000, 400
    se = np.sqrt(2 * p * (1 - p) / n)
    wrong = {"seeds only": 0, "with the set's error": 0}

    class Shared:  # the two arms' figures as a grid's table gives them (minibert.tables.query.Stat)
        mean, n, shared = p, 2000, True

    class Table:
        @staticmethod
        def find(metric, category, experiment):
            return Shared()

        @staticmethod
        def clustered(*sides, seeds=None):
            return None  # no figures per document

    alpha, widen = _shared_set(Table(), Pair("a", "b", "val/acc"), 0.05, set(range(seeds)))
    assert alpha == 0.025 and widen > 2 * se
    shift = rng.normal(0, se, (experiments, 1))  # the fixed set's draw, shared by every seed
    diffs = shift + rng.normal(0, 0.002, (experiments, seeds))  # seeds differ little
    for name, (level, w) in {"seeds only": (0.05, 0.0), "with the set's error": (alpha, widen)}.items():
        up, down, _ = betting.stops(diffs, 1e-9, level, widen=w)  # the mean's sequence, every comparison at once
        wrong[name] = int((up | down)[:, -1].sum())
    assert wrong["seeds only"] / experiments > 0.3
    assert wrong["with the set's error"] / experiments <= 0.05


def test_on_text_every_seed_draws_from_the_same_documents_so_the_means_sequence_holds_their_error():
    """compare.py draws each seed's own validation questions, but on text they come from the same few documents,
    whose own leaning (an arm x document effect) every seed shares. Each simulated comparison logs its arms'
    figures per document (20 documents, 400 questions each per seed), and `_shared_set` widens the sequence by
    the documents' term it bounds from the first 10 seeds, though no set is shared: with no true difference over
    documents, a winner is called at most 5% of the time over 400 seeds, against more than 30% of the time from
    the seeds alone."""
    from minibert.compare.comparison import _shared_set

    rng, experiments, logged = np.random.default_rng(1), 300, 10
    wrong = {"seeds only": 0, "with the documents' term": 0}
    for _ in range(experiments):
        data, _, diffs = documents_table(rng, 400, 20, 400, 0.06, logged)
        alpha, widen = _shared_set(data, Pair("a", "b", "val/acc"), 0.05, set(range(logged)))
        assert alpha == 0.025 and widen > 0
        for name, (level, w) in {"seeds only": (0.05, 0.0), "with the documents' term": (alpha, widen)}.items():
            up, down, _ = betting.stops(diffs, 1e-9, level, widen=w)
            wrong[name] += bool(up[-1] or down[-1])
    assert wrong["seeds only"] > 0.3 * experiments and wrong["with the documents' term"] <= 0.05 * experiments, wrong


def documents_table(rng, seeds: int, docs: int, per_doc: int, sd_doc: float, logged: int | None = None):
    """A grid's table of arms a and b whose seeds answer their own questions from the same `docs` documents (the
    first `logged` seeds in it, default all), the documents' own draw (the mean over them of where a does better
    than b, `sd_doc` per document) and A - B per seed, every seed."""
    import pandas as pd

    lean = rng.normal(0, sd_doc, docs)
    rows, means = [], []
    for arm, sign in (("a", 0.5), ("b", -0.5)):
        acc = rng.binomial(per_doc, np.clip(0.6 + sign * lean, 0, 1), (seeds, docs)) / per_doc  # (S, C)
        means.append(acc.mean(1))
        for s in range(seeds if logged is None else logged):
            base = {"grid": "g", "experiment": arm, "stage": "pretrain", "seed": s, "val_seed": s, "run": "r",
                    "code": ""}  # fmt: skip
            rows.append({**base, "metric": "val/acc", "category": "", "value": acc[s].mean(), "n": docs * per_doc})
            rows += [{**base, "metric": "val/by_document/acc", "category": f"d{c}", "value": acc[s, c],
                      "n": per_doc} for c in range(docs)]  # fmt: skip
    return Data(pd.DataFrame(rows, columns=[*table.FIRST, *table.LAST])), float(lean.mean()), means[0] - means[1]


def test_the_documents_term_is_an_upper_bound_from_the_comparisons_own_seeds_and_covers_their_draw():
    """3 seeds and 40 documents: the unbiased estimate of the documents' variance is 0 in a good share of
    comparisons, and the widening built on it misses the documents' own draw far more often than its nominal
    rate. The upper confidence bound `_shared_set` adds covers it at least 93% of the time (nominally 97.5%),
    and only the comparison's own seeds enter it: runs of another grid under the same names do not."""
    from scipy.stats import norm

    from minibert.compare.comparison import _shared_set

    rng, experiments = np.random.default_rng(4), 400
    zero = covered = covered_by_estimate = 0
    for _ in range(experiments):
        data, draw, _ = documents_table(rng, 3, 40, 60, 0.03)
        docs = data.clustered(("val/acc", "a"), ("val/acc", "b"))
        zero += docs.question_variance == 0
        alpha, widen = _shared_set(data, Pair("a", "b", "val/acc"), 0.05, {0, 1, 2})
        covered += abs(draw) <= widen / float(norm.ppf(1 - 0.05 / 8)) * float(norm.ppf(1 - 0.05 / 4))
        covered_by_estimate += abs(draw) <= float(norm.ppf(1 - 0.05 / 4)) * np.sqrt(docs.question_variance)
    print(f"\n3 seeds, 40 documents: estimate 0 in {zero / experiments:.2f}; the draw covered by the bound "
          f"{covered / experiments:.3f}, by the estimate {covered_by_estimate / experiments:.3f}")  # fmt: skip
    assert zero / experiments > 0.1
    assert covered / experiments >= 0.93 and covered_by_estimate / experiments < 0.9
    assert _shared_set(data, Pair("a", "b", "val/acc"), 0.05, set()) == (0.05, 0.0)  # no own runs: no term


@pytest.mark.slow
@pytest.mark.every_core
def test_mlm_under_another_name_paired_with_committed_mlm_runs_ties_them_seed_by_seed(tmp_path, scripts, monkeypatch):
    """End to end on Dyck at a small budget, with yardsticks committed first (scripts/yardsticks.py's path): the
    comparison trains the plug-in alone, pairs its seed s with the committed MLM run of seed s, and an objective
    that is MLM under another name ties it on every figure of every seed (the same data stream, initial weights,
    validation draw and pairs), so its verdict can only be a tie, never a sign."""
    from minibert.compare import committed
    from minibert.sweep import Sweep

    (tmp_path / "alias.py").write_text(
        "from minibert.objectives import MaskedLM\n\n\nclass Alias(MaskedLM):\n    pass\n"
    )
    small = {"data": {"val_size": 500}, "pair_eval": {"per_cell": 20, "probe_per_cell": 40}}
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(small))  # fewer questions: a tie is a tie on any number
    dyck = ["configs/pretrain.yaml", "configs/languages/dyck.yaml", "configs/recipes/dyck-pretrain.yaml",
            str(tmp_path / "small.yaml")]  # fmt: skip
    spec = tmp_path / "yardsticks.yaml"
    spec.write_text(yaml.safe_dump({"languages": {"dyck": {
        "pretrain": dyck, "finetune": ["configs/finetune.yaml"], "flops": 3.0e10, "metric": "val/acc",
        "fails_below": 0.515, "timing": {"grid": "dyck", "pretrain": "dyck/pretrain/{arm}",
                                         "finetune": "dyck/finetune/{arm}-full"},
        "judged": ["val/gap/acc", "val/pairs/acc"], "arms": {"mlm": []}}}}))  # fmt: skip
    monkeypatch.setattr(committed, "committed_folder", lambda language: tmp_path / "yardsticks" / language)
    seeds = list(range(first_bound()))  # one pair: the fewest seeds a verdict could come at
    grid = committed.yardstick_grid(str(spec), "dyck")
    assert Sweep(str(grid), tmp_path / "yardsticks" / "dyck", seeds=seeds, workers=2).run() == 0
    out = tmp_path / "out"
    argv = [str(tmp_path / "alias.py"), "--yardsticks", str(spec), "--out", str(out), "--max-seeds", str(len(seeds))]
    assert scripts("compare").main(argv) == 0
    assert {p.parent.name for p in out.glob("runs/dyck/pretrain/*/seed*")} == {"Alias"}  # only the plug-in trained
    t = table.read(out)
    assert set(t.stage) == {"pretrain"}  # nothing fine-tuned
    for metric in ("val/gap/acc", "val/pairs/acc", "val/pairs/probe/acc"):
        both = t[t.metric == metric].pivot_table(index="seed", columns="experiment", values="value")
        assert list(both.index) == seeds and (both["dyck/pretrain/Alias"] == both["dyck/pretrain/mlm"]).all(), metric
    result = json.loads((out / "comparisons" / "verdicts.json").read_text())
    (alias,) = result["pairs"]
    assert alias["metric"] == "val/gap/acc" and "better" not in alias["verdict"] and alias["mean"] == 0


@pytest.mark.slow
def test_a_committed_yardstick_seed_trained_again_gives_its_figures_back(tmp_path):
    """The committed table is what today's code makes: MLM's seed 0, trained again from its grid, gives back its
    committed figures (within the half point the reproduction check allows an accuracy)."""
    from minibert.compare import committed
    from minibert.sweep import Sweep

    grid = tmp_path / "grid.yaml"
    grid.write_text((committed.committed_folder("dyck") / "grid.yaml").read_text())
    assert Sweep(str(grid), tmp_path / "out", seeds=[0], only=["dyck/pretrain/mlm"], workers=1).run() == 0
    again, kept = table.read(tmp_path / "out"), table.read(committed.committed_folder("dyck"))
    for metric in ("val/acc", "val/gap/acc", "val/pairs/acc", "val/pairs/probe/acc"):
        new, old = (float(x[(x.experiment == "dyck/pretrain/mlm") & (x.seed == 0) & (x.metric == metric)
                               & (x.category == "")].value.iloc[0]) for x in (again, kept))  # fmt: skip
        assert abs(new - old) <= 0.005, (metric, new, old)


MUTE = """
from tests.languages_plugin import Copy


class Mute(Copy):  # no edits of its own and no membership test: it makes no minimal pairs
    has_grammar = False
"""


def test_a_language_that_makes_no_pairs_is_refused_in_one_line_and_nothing_is_written(tmp_path, scripts, capsys):
    (tmp_path / "mute.py").write_text(MUTE)
    (tmp_path / "mute.yaml").write_text(yaml.safe_dump({"model": {"init_args": {"objective": {"init_args": {
        "language": {"class_path": "mute.Mute"}}}}}}))  # fmt: skip
    spec = tmp_path / "yardsticks.yaml"
    spec.write_text(yaml.safe_dump({"languages": {"mute": {
        "pretrain": ["configs/pretrain.yaml", str(tmp_path / "mute.yaml")], "finetune": ["configs/finetune.yaml"],
        "flops": 1.0e9, "metric": "val/acc", "fails_below": 0.5,
        "timing": {"grid": "objectives", "pretrain": "x/{arm}", "finetune": "y/{arm}"},
        "arms": {"mlm": []}}}}))  # fmt: skip
    (tmp_path / "half_masked.py").write_text(PLUGIN)
    out = tmp_path / "out"
    argv = [str(tmp_path / "half_masked.py"), "--yardsticks", str(spec), "--out", str(out), "--plugins", str(tmp_path)]
    assert scripts("compare").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Mute cannot make minimal pairs" in err[-1] and "Traceback" not in "\n".join(err)
    assert not out.exists()  # the grid it wrote to build the cells is gone again


def test_an_open_pair_says_its_wins_why_it_is_open_the_seeds_the_sign_rule_needs_and_the_command(tmp_path):
    from minibert import compare
    from minibert.stats.sign import seeds_to_decide, signs

    rng = np.random.default_rng(0)
    a = {s: 0.80 + 0.02 * rng.normal() for s in range(5)}
    b = {s: 0.78 + 0.02 * rng.normal() for s in range(5)}
    design = Design([Pair("x/a", "x/b", "val/acc")], 20)
    (j,) = judge(_table(tmp_path, a, b), design, {"x/a vs x/b: val/acc": 5})
    assert j.verdict.reason == "below the cap"
    lines = compare.next_steps(_table(tmp_path, a, b), design, [j], "python scripts/compare.py p.py --minutes 15", 90)
    need = seeds_to_decide(j.diffs, design.alpha_for(j.pair), design.band)
    v = j.verdict
    assert need > 5 and f"would take about {need} seeds (about {round(need * 1.5)} min at this pace)" in lines[3]
    assert f"a wins {v.wins} of {v.untied} untied seeds" in lines[3] and "open because" in lines[3]
    assert lines[-1].endswith(f"`python scripts/compare.py p.py --max-seeds {need}`")
    # half of the comparisons continued like this one stop by then: a median, read off the seeds so far
    s = signs(j.diffs)
    draws = np.concatenate([np.tile(s, (400, 1)), s[rng.integers(0, 5, (400, need - 5))]], 1)
    up, down, inside = stops(draws, design.alpha_for(j.pair), design.band)
    assert 0.4 <= (up | down | inside)[:, -1].mean() <= 0.65


@pytest.mark.parametrize(
    ("plugin", "extra", "fragment"),
    [
        ("class Broken(:\n", [], "line 1: cannot import it (SyntaxError"),
        ("raise RuntimeError('boom')\n", [], "cannot import it (RuntimeError: boom)"),
        (PLUGIN, ["--out", "{file}"], "a file, not a folder"),
        (PLUGIN, ["--name", "../../x"], "plain file name"),
    ],
    ids=["syntax error", "error on import", "--out a file", "--name a path"],
)
def test_a_bad_plugin_or_place_is_one_line_with_status_2_and_nothing_written(tmp_path, scripts, capsys, plugin,
                                                                             extra, fragment):  # fmt: skip
    (tmp_path / "mine.py").write_text(plugin)
    (tmp_path / "a_file").write_text("")
    out = tmp_path / "out"
    argv = [str(tmp_path / "mine.py"), "--out", str(out), *(x.format(file=tmp_path / "a_file") for x in extra)]
    try:
        code = scripts("compare").main(argv)
    except SystemExit as exited:  # refused while the arguments are read, before anything is imported
        code = exited.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0] and err[0].startswith("compare.py: error:")
    assert not out.exists() and (tmp_path / "a_file").read_text() == ""


def test_a_comparisons_own_grid_page_is_titled_by_its_folder_not_grid_grid(tmp_path):
    from types import SimpleNamespace

    from minibert.report.grid_report import title

    out = tmp_path / "compare" / "HalfMasked-pairs-dyck"
    out.mkdir(parents=True)
    assert title(out, SimpleNamespace(path=str(out / "grid.yaml"))) == "comparison compare/HalfMasked-pairs-dyck"
    assert title(out, SimpleNamespace(path="configs/ablations/dyck.yaml")) == "dyck grid"


def test_a_grid_claim_that_a_record_holds_is_judged_by_its_sequence_not_again_on_the_same_seeds(tmp_path):
    """A claim 'x/b's accuracy below x/a's', where a comparison recorded x/a against x/b on the gap: the claim
    reads the record's sign rule (here undecided at 4 seeds, as the rule decides nothing before 8), although a
    fixed-sample interval over the same seeds would say it holds; with the arms' ceilings apart, the gap is
    another question and the claim is judged on its own seeds."""
    import pandas as pd

    from minibert.ablation.grid import Claim, MetricRef
    from minibert.report import grid_report

    def rows(b_ceiling: float) -> list[dict]:
        figures = {"x/a": lambda s: (0.80 + 0.002 * s, 0.9), "x/b": lambda s: (0.60 - 0.002 * s, b_ceiling)}
        out = []
        for s in range(4):
            for e, (acc, ceiling) in ((e, f(s)) for e, f in figures.items()):
                for m, v in (("val/acc", acc), ("val/ceiling/acc", ceiling), ("val/gap/acc", ceiling - acc)):
                    out.append({"grid": "g", "experiment": e, "stage": "pretrain", "seed": s, "val_seed": s,
                                "metric": m, "category": "", "value": v, "n": 1000, "run": "", "code": ""})  # fmt: skip
        return out

    claim = Claim("b below a", lower=MetricRef("x/b", "val/acc"), higher=MetricRef("x/a", "val/acc"))
    shared = Data(pd.DataFrame(rows(0.9)), out=str(tmp_path))
    (tmp_path / "comparisons").mkdir()
    for a, b, metric in (("x/a", "x/b", "val/gap/acc"), ("x/b", "x/a", "val/gap/acc"), ("x/b", "x/a", "val/acc")):
        pair = Pair(a, b, metric)  # recorded either way round, on the gap or on the claim's own metric
        design = Design([pair], 20).to_json()  # made before designs said whether the questions are shared
        (tmp_path / "comparisons" / "c.json").write_text(json.dumps({"design": design, "looks": {pair.label: 4}}))
        answer = grid_report.claim_answer(claim, shared, tmp_path)
        assert answer.verdict == "undecided" and "`comparisons/c`; sequential" in answer.text, (pair, answer.text)
        d = answer.diff  # higher − lower on the claim's side, drawn on the side where the claim holds
        assert d.interval.mean == pytest.approx(0.206) and d.favour.mean > 0 and answer.seeds == "4", pair
    alone = grid_report.claim_answer(claim, Data(pd.DataFrame(rows(0.9))))  # no record to read: an interval
    assert alone.verdict == "holds" and "sequential" not in alone.text
    design = Design([Pair("x/a", "x/b", "val/gap/acc")], 20).to_json()
    (tmp_path / "comparisons" / "c.json").write_text(
        json.dumps({"design": design, "looks": {"x/a vs x/b: val/gap/acc": 4}})
    )
    apart = Data(pd.DataFrame(rows(0.7)), out=str(tmp_path))
    assert grid_report.claim_answer(claim, apart, tmp_path).verdict == "holds"  # the record is not its question


def test_minutes_that_cannot_hold_the_first_look_are_refused_before_anything_trains(compared, scripts, capsys):
    """The seeds before any verdict run at once; where they would pass --minutes at the recorded pace (the
    folder's own runs' wall times), compare says so in one line and trains nothing, unless --overrun accepts it."""
    _, out, argv, _ = compared
    later = [*argv[: argv.index("--name")], "--name", "later", "--first-seed", "100", "--minutes", "0.001"]
    code = scripts("compare").main(later)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("compare.py: error: --minutes 0.001: the first look runs")
    assert f"runs {FIRST} seeds at once" in err[-1] and "--overrun" in err[-1]
    assert not list(out.glob("runs/p/*/seed100-*")) and not (out / "comparisons" / "later.json").exists()


def test_a_plugins_comparison_writes_outside_the_committed_pages_unless_published():
    """By default a plug-in's comparison goes under runs/compare/ (ignored by git), and its report is its own
    (render.publish rebuilds every page only for a table under results/); --publish puts it in results/compare/."""
    import subprocess

    from minibert.compare.request import Request
    from minibert.compare.session import _out

    plugin = "docs/examples/mask_rate_30.py"
    mine, published = (_out(Request(objective=plugin, languages=["dyck"], publish=p)) for p in (False, True))
    assert mine == ROOT / "runs/compare/MaskRate30-pairs-dyck"
    assert published == ROOT / "results/compare/MaskRate30-pairs-dyck"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(mine / "results.csv")], cwd=ROOT)
    assert ignored.returncode == 0  # git status stays clean
    with pytest.raises(ComparisonError, match="--publish goes with a plug-in"):
        Request(grid="configs/ablations/dyck.yaml", arms=["a", "b"], metric="val/acc", out=Path("x"),
                publish=True).check()  # fmt: skip


def test_shrink_leaves_out_the_last_listed_pairs_until_the_first_look_fits_the_minutes(capsys):
    """--shrink with --minutes: the family is cut from its end (the yardsticks file lists MLM first) before any run,
    from the recorded pace alone, until its first look (fewer pairs: fewer seeds, and fewer arms a seed) fits."""
    from dataclasses import replace

    from minibert.compare.committed import Borrowed
    from minibert.compare.request import Request
    from minibert.compare.session import _Comparison, _shrunk

    pairs = [Pair("x/new", f"x/{b}", "val/acc", None, "x") for b in ("mlm", "span", "electra", "next_token")]
    request = Request(objective="new.py", minutes=5, shrink=True)
    c = _Comparison(request, Path("o"), Path("g"), [], pairs, Design(pairs, 40), {}, Path("r"), [], 75.0, Borrowed())

    def pace(kept: list) -> float:
        return 15.0 * (len(kept) + 1)  # seconds a seed: 15 an arm, the new one and each yardstick

    # the first look: 4 pairs 10 seeds x 75 s, 3 pairs 10 x 60 s, 2 pairs 9 x 45 s, 1 pair 8 x 30 s = 240 s <= 300
    shrunk = _shrunk(c, pace)
    assert [p.b for p in shrunk.pairs] == ["x/mlm"] and shrunk.design.pairs == shrunk.pairs and shrunk.per_seed == 30
    assert "judging 1 of 4 pair(s), leaving out span, electra, next_token" in capsys.readouterr().err
    assert _shrunk(replace(c, request=replace(request, minutes=60)), pace).pairs == pairs  # it fits: as it was
