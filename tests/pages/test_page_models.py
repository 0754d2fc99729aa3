"""Every page model (minibert.report: one per page that reads a table) on constructed tables: the committed tables
with every validation figure replaced by a random one, seed by seed. Each model is called as its page calls it;
its tables keep their header's width, and what it picks or counts equals a brute-force reading of the same
(changed) table: the best cell is the best, a partition covers every arm once, a verdict's side is its interval's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from minibert.report import verdicts
from minibert.report.render import Renderer
from minibert.tables import table
from minibert.tables.query import BY_DOCUMENT, Data, Diff

ROOT = Path(__file__).resolve().parents[2]


class Randomised(Renderer):
    """The committed tables, every `val/` figure but the ceilings and references drawn uniformly from 5-95%; the
    figures' parts per validation document are left out, since they would no longer add up to them."""

    def __init__(self, seed: int):
        super().__init__(ROOT)
        self.rng = np.random.default_rng(seed)

    def data(self, folder: Path) -> Data:
        folder = Path(folder).resolve()
        if folder not in self.tables:
            committed = super().data(folder)
            frame = committed.frame[~committed.frame.metric.str.startswith(BY_DOCUMENT)].copy()
            drawn = frame.metric.str.startswith("val/") & ~frame.metric.str.contains("ceiling|bayes|reference|floor")
            frame.loc[drawn, "value"] = self.rng.uniform(0.05, 0.95, drawn.sum())
            changed = Data(frame, committed.made, committed.out)
            changed.family.name = committed.family.name
            verdicts.decide(changed, self.grid_of(folder), self.root)  # the changed table's own verdicts
            self.tables[folder] = changed
        return super().data(folder)


def widths(header: list, rows: list[list]) -> None:
    assert rows and all(len(r) == len(header) for r in rows), (header, rows[:2])


def side(c: Diff) -> str:
    """Which arm the whole interval favours, read off the interval the verdict reads."""
    v = c.verdict()
    return {"A better": "A", "B better": "B"}.get(v, "none")


def check_scaling(r: Renderer) -> None:
    s = r.env.globals["scaling"]("scaling")
    widths(["claim", "budget", "A − B", "verdict", "the claim", "behind"], s.claim_rows())
    for claim in s.claims:  # "holds" only where the verdict names the claimed winner
        assert (claim.holds == "holds") == (side(claim.diff) == "A")


def check_structure(r: Renderer) -> None:
    from minibert.report.structure import JUDGED
    from minibert.tables.arms import label

    s = r.env.globals["structure"]("structure")
    widths(["measure", "A", "B", "A − B", "seeds", "verdict"], s.answer_rows())
    widths(s.layer_header(), s.layer_rows("uuas"))
    for m in JUDGED:
        for baseline in ("random", "embeddings"):
            named = [s.who(m, baseline, k) for k in ("above", "below", "undecided")]
            found = [a for n in named if n != "none" for a in n.split(", ")]
            assert sorted(found) == sorted(map(label, s.arms))  # every objective on exactly one side
        for a in s.arms:
            means = {layer: s.stat("probe", layer, m, a).mean for layer in (1, 2)}
            assert means[s.best_layer(a, m)] == max(means.values())


def check_masking_rate(r: Renderer) -> None:
    m = r.env.globals["masking_rate"]("masking_rate")
    widths(["language", "claim", "measured by", "A − B", "verdict", "the claim"], m.claim_rows())
    for _, _, _, _, verdict, holds in m.claim_rows():
        assert (holds == "holds") == (verdict.endswith(" better") and not verdict.startswith(("80/10/10", "15%"))
                                      or verdict.startswith("equivalent"))  # fmt: skip
    for lang in m.languages:
        rows, found = m.language(lang)
        widths(["recipe", "steps", "cloze", "gap", "vs", "tuned", "vs"], rows)
        assert not set(found["pretrain"]["better"]) & set(found["pretrain"]["worse"])


def check_length(r: Renderer) -> None:
    page = r.env.globals["length"]("length")
    widths(["objective", "A", "length", "A − learned", "±", "seeds", "verdict"], page.answer_rows())
    widths(["objective", "positions", *(x for n in page.past for x in (str(n), "v"))], page.held_rows())
    pairs = len(page.objectives) * len(page.schemes)
    for n in page.past:
        counts = [int(part.split(" for ")[1].split(" of ")[0]) for part in page.held_sentence(n).split("; ")]
        assert sum(counts) == pairs
    widths(page.gap_header(), page.gap_rows("mlm"))
    widths(page.finetune_header(), page.finetune_rows())


def check_dyck_gap(r: Renderer) -> None:
    from minibert.report.dyck_gap import BINS

    g = r.env.globals["dyck_gap"]("dyck")
    widths(g.header(), g.rows())
    assert all(len(points) == len(BINS) for points in g.by_distance().values())


def check_recipe(r: Renderer) -> None:
    page = r.env.globals["recipe"]("recipe")
    within = [e for e in page.sweep if page.stat("wall_time_s", e).mean <= page.budget * page.base_time]
    assert page.best.mean == min(page.stat("val/gap/acc", e).mean for e in within)
    assert page.steadiest.sd == min(page.stat("val/gap/acc", e).sd for e in page.sweep)
    widths(["lr", "steps", "val", "gap", "sd", "range", "near", "time", "cost"], page.sweep_rows())
    widths(["lr", "acc", "sd", "range"], page.tuned_rows())
    widths(["o", "what", "mean", "sd", "range", "seeds"], page.other_rows())


def check_text(r: Renderer) -> None:
    page = r.env.globals["text_page"]("text")
    widths(page.cloze_header(), page.cloze_rows())
    widths(["encoder", "seeds", "acc", "minus", "verdict"], page.tuned_rows())
    named = [a for part in page.against_bigram().rstrip(".").split("; ") for a in part.split(": ")[1].split(", ")]
    assert sorted(named) == sorted(label.split(" (")[0] for label, _, _ in page.cloze)
    assert page.corpus["documents"]["train"] > 0


def check_text_recipe(r: Renderer) -> None:
    """The arm picked is brute force's, on the randomised table and on the committed one, on the page's rule and
    on one that takes a single seed, where some arm does beat the trigram (so the pick is not vacuous)."""
    from minibert.report.text_recipe import ACC, TRIGRAM

    picked = []
    for page in (r.env.globals["text_recipe"]("text_recipe"), Renderer(ROOT).env.globals["text_recipe"]("text_recipe")):
        widths(page.header, page.rows())
        assert [page.flops(e) for e in page.by_flops] == sorted(page.flops(e) for e in page.by_flops)
        d = page.data
        for seeds in (page.min_seeds, 1):
            within = [e for e in d.experiments() if len(d.seeds(experiment=e)) >= seeds
                      and d.stat("wall_time_s", experiment=e).mean <= page.budget_s]  # fmt: skip
            beating = [e for e in within if side(page.against(e)) == "A"]
            chosen = d.cheapest(ACC, TRIGRAM, limits={"wall_time_s": page.budget_s}, seeds=seeds)
            assert chosen == (min(beating, key=page.flops) if beating else None)
            picked.append(chosen)
        assert page.chosen == picked[-2]
    assert any(picked)


def check_objectives(r: Renderer) -> None:
    from minibert.report.objectives import CHANCE
    from minibert.tables.arms import objective as registered

    o = r.env.globals["objectives"]("objectives")
    widths(["objective", "own", "frozen", "full"], o.objective_rows())
    widths(["pre-training", "full", "frozen", "BERT-base"], o.rows())
    pretrained = set(o.data.frame.loc[o.data.frame["stage"] == "pretrain", "objective"])
    assert [row[0] for row in o.objective_rows()][:-1] == [registered(x).label for x in o.objectives]
    assert set(o.objectives) == pretrained  # every objective the grid pre-trains, once
    for a, b in (("MaskedLM", "NextTokenLM"), ("Combined", "MaskedLM")):
        c = o.diff(a, b)
        assert o.holds(a, b) == {"A": "holds", "B": "does not hold", "none": "undecided"}[side(c)]
        per_seed = [float(x) for x in o.per_seed(a, b).split(" / ")]
        assert per_seed == pytest.approx([100 * (c.a.values[s] - c.b.values[s]) for s in sorted(c.a.values)], abs=0.051)
        gaps = [x - y for x, y in zip(registered(a).published.figures, registered(b).published.figures, strict=True)]
        assert o.published_gap(a, b) == pytest.approx((min(gaps), max(gaps)))
    for objective in ("MaskedLM", "NextTokenLM"):
        iv = o.ft(objective, "frozen").interval
        assert ("holds" in o.chance(objective, "frozen")) == (iv.lo <= CHANCE <= iv.hi)


def check_masking(r: Renderer) -> None:
    page = r.env.globals["masking"]("masking")
    for lang in page.languages:
        widths(["M", "S", "R", "acc", "gap", "ft", "probe"], page.strategy_rows(lang))
        widths(["split", "acc", "ft", "probe", "bert", "mask", "random", "kept"], page.against_rows(lang))
        said = page.sides(lang, "full")
        named = [s for part in said.split("; ") for s in part.split(": ")[1].split(", ") if s != "none"]
        assert sorted(named) == sorted(s for s in page.bert if s != page.base)


def check_probes(r: Renderer) -> None:
    page = r.env.globals["probes"]("probes")
    widths(page.header(), page.rows())
    for lang in page.languages:
        means = [s.mean for _, _, s in page.ranked(lang)]
        assert page.best(lang)[2].mean == max(means) and page.lowest(lang)[2].mean == min(means)


def check_dyck_page(r: Renderer) -> None:
    from minibert.report.dyck_page import SOURCES

    page = r.dyck_page()
    widths(["h", "sees", "seeds", "ceiling", "gap", "sd", "d1", "d8"], page.head_rows())
    widths(["e", "seeds", "acc", "sd", "lo", "hi", "failed"], page.encoder_rows())
    tuned = page.mlm_tuned.values
    assert tuned[page.worst_seed] == min(tuned.values())
    for label, arm in (("MLM, full", "mlm-full"), ("span masking, full", "span-full")):
        row = next(r for r in page.encoder_rows() if r[0] == label)
        assert row[-1] == sum(x <= page.fails_at for x in page.tuned(arm).values.values())
    sources = [e for *_, e in SOURCES]
    assert page.spread.top.sd == max(page.variance.stat("val/gap/acc", experiment=e).sd for e in sources)
    assert page.meets_sd_target == (page.mlm_tuned.sd <= page.sd_target)
    assert page.clear_of_ceiling == (page.mlm_gap.interval.lo > page.saturated_above)
    assert page.spread.init_alone_wider == (page.spread.init.sd > page.mlm_gap.sd)


def check_finetune(r: Renderer) -> None:
    from minibert.report.grid_report import claim_answer

    page = r.finetune()
    widths(["r", "params", "acc", "g", "u", "theirs"], page.rows())
    for answer in page.claims():  # the verdict the grid's report gives the same claim
        claim = next(c for c in page.grid.claims if c.text == answer.text)
        assert claim_answer(claim, page.data).verdict == answer.verdict
    c, higher, n = page.full_against("frozen")
    assert higher <= n and side(c) in ("A", "B", "none")


def check_digest(r: Renderer) -> None:
    d = r.digest()
    scaling = d.scaling()
    assert scaling.budgets and scaling.lead.startswith("at ")
    rate = d.masking_rate()
    assert rate.dyck_plateau[0] <= rate.dyck_plateau[1]
    assert d.structure().depth_claim in ("holds", "does not hold", "is undecided")
    assert d.length().verdict.endswith(".")
    assert d.text().against.endswith(".")


MODELS: dict[str, Callable[[Renderer], None]] = {
    "scaling": check_scaling, "structure": check_structure, "masking_rate": check_masking_rate, "length": check_length,
    "dyck_gap": check_dyck_gap, "recipe": check_recipe, "text": check_text, "masking": check_masking,
    "probes": check_probes, "objectives": check_objectives, "text_recipe": check_text_recipe,
    "dyck_page": check_dyck_page, "finetune": check_finetune, "digest": check_digest,
}  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("model", list(MODELS))
def test_every_page_model_reads_a_constructed_table_as_brute_force_does(model, seed):
    MODELS[model](Randomised(seed))


def test_every_grid_page_model_is_tested_here():
    from minibert.report.render import GRID_MODELS

    assert set(GRID_MODELS) - {"text_page"} <= set(MODELS) and "text" in MODELS


def test_a_missing_or_damaged_corpus_record_is_one_line(tmp_path):
    from minibert.report.text import TextPage

    page = TextPage(Data(Randomised(0).grid("text").frame, {}, str(tmp_path)))
    with pytest.raises(table.TableError, match="corpus.json: missing"):
        page.corpus  # noqa: B018
    (tmp_path / "corpus.json").write_text('{"source": "stdlib"}')
    with pytest.raises(table.TableError, match="lacks documents, tokens, vocab_size"):
        TextPage(Data(page.data.frame, {}, str(tmp_path))).corpus  # noqa: B018
