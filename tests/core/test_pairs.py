"""Minimal pairs: exact labels, counts kept, strata as a brute force reads them, floors that tie where they
must, zero-shot scores equal to a plain loop over masked copies, a convex probe, and every shipped objective
graded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from minibert.languages import BracketPairs, Dyck
from minibert.objectives import MaskedLM, NextSentence, NextTokenLM
from minibert.pairs import NGramFloors, PairGrader, PairSettings, PairsUnavailable, draw_pairs, pair_credit
from minibert.pairs.floors import floor_accuracies, judged_cells
from minibert.pairs.grade import DESIGN_SEED, judged_design, logged_names
from minibert.pairs.keys import check_order, floor_names
from minibert.pairs.probe import fit_direction, probe_credit
from tests.languages_plugin import Copy

ROOT = Path(__file__).resolve().parents[2]

SMALL = PairSettings(per_cell=20, probe_per_cell=40)


@pytest.fixture(scope="module")
def dyck_pairs():
    return Dyck(), draw_pairs(Dyck(), np.random.default_rng(0), per_cell=60)


def _type_counts(lang: Dyck, ids: np.ndarray) -> np.ndarray:
    return np.stack([(ids == t).sum(1) for t in range(2, lang.vocab_size)], axis=1)


def test_pairs_are_exactly_labelled_and_keep_every_count(dyck_pairs):
    lang, pairs = dyck_pairs
    assert lang.contains(pairs.good).all() and not lang.contains(pairs.bad).any()  # the oracle's 100%
    assert (_type_counts(lang, pairs.good) == _type_counts(lang, pairs.bad)).all()  # counting cannot tell
    assert ((pairs.good != pairs.bad).sum(1) == 2).all()  # one swap apart


def test_cells_are_filled_equally_and_categories_are_consistent(dyck_pairs):
    _, pairs = dyck_pairs
    assert np.bincount(pairs.cell, minlength=len(pairs.cells)).tolist() == [60] * 8
    column = {n: i for i, n in enumerate(pairs.names)}
    for i, cell in enumerate(pairs.cells):
        edit, stratum = cell.split("-")
        rows = pairs.cell == i
        assert pairs.categories[rows, column[cell]].all() and pairs.categories[rows, column[edit]].all()
        assert pairs.categories[rows, column[stratum]].all()
        assert pairs.categories[:, column[cell]].sum() == rows.sum()


def _nearest_fault(row: list[int], kinds: int) -> tuple[int, int]:
    """(distance, depth) by brute force: pair brackets by the shape alone (a closer closes the latest open
    bracket of any type), then take the mismatched pair that is closest together."""
    faults = []
    for t, x in enumerate(row):
        if x >= 2 + kinds:
            depth, s = 0, t - 1
            while True:  # walk left to the bracket this closer closes
                depth += 1 if row[s] >= 2 + kinds else -1 if row[s] >= 2 else 0
                if depth < 0:
                    break
                s -= 1
            if row[s] != x - kinds:
                level = sum(1 if 2 <= y < 2 + kinds else -1 if y >= 2 + kinds else 0 for y in row[:s])
                faults.append((t - s, level + 1))
    return min(faults)


def test_strata_match_a_brute_force_reading(dyck_pairs):
    lang, pairs = dyck_pairs
    column = {n: i for i, n in enumerate(pairs.names)}
    bins = {1: "dist_1", 3: "dist_2_3", 5: "dist_4_7", 7: "dist_4_7"}
    for row, cats in zip(pairs.bad.tolist()[::7], pairs.categories[::7]):
        distance, depth = _nearest_fault(row, lang.kinds)
        assert cats[column[bins.get(distance, "dist_8_plus")]]
        assert cats[column[f"depth_{depth}" if depth < 4 else "depth_4_plus"]]


def test_counting_ties_and_local_cells_are_solved_by_a_bigram(dyck_pairs):
    lang, pairs = dyck_pairs
    floors = floor_accuracies(NGramFloors(lang, np.random.default_rng(1), sentences=5000), pairs)
    column = {n: i for i, n in enumerate(pairs.names)}
    assert np.allclose(floors["unigram"], 0.5)  # a bag of tokens is the same on both sides
    assert floors["bigram"][column["dist_1"]] == 1.0  # an opener facing another type's closer is never seen
    judged = judged_cells(pairs, floors, 0.7)
    assert judged and not any(c.endswith("dist_1") for c in judged)
    assert all(max(f[column[c]] for f in floors.values()) <= 0.7 for c in judged)


def test_an_n_gram_floor_solves_the_cells_whose_bracket_it_sees_and_dycks_declared_order_judges_only_the_rest():
    """A k-gram sees k - 1 tokens back: on Dyck it solves every cell whose closer lies within that reach of its
    opener, and the cells judged under the order Dyck declares (configs/languages/dyck.yaml) are those no floor
    through it tells apart: the distance-8-plus ones."""
    lang = Dyck(kinds=4, length=32, max_depth=6)
    pairs = draw_pairs(lang, np.random.default_rng([DESIGN_SEED, 1]), 250)
    floors = floor_accuracies(NGramFloors(lang, np.random.default_rng(1), order=6), pairs)
    column = {n: i for i, n in enumerate(pairs.names)}
    for cell in pairs.cells:
        reach = {"dist_1": 2, "dist_2_3": 4}.get(cell.split("-")[-1])  # the lowest order that sees its pair
        if reach is not None:
            assert floors[floor_names(reach)[-1]][column[cell]] >= 0.95, cell
            assert floors[floor_names(reach - 1)[-1]][column[cell]] <= 0.7, cell  # one order less does not
    order = yaml.safe_load((ROOT / "configs/languages/dyck.yaml").read_text())["pair_eval"]["floor_order"]
    judged = judged_design(lang, PairSettings(floor_order=order))
    assert judged and all(c.endswith("dist_8_plus") for c in judged)
    assert judged_design(lang, PairSettings(floor_order=3)) != judged  # a trigram leaves the shorter cells in


def test_a_floor_order_the_floors_cannot_count_is_refused_in_one_line():
    with pytest.raises(ValueError, match="floor_order=9: must be an integer from 1 to 8"):
        PairSettings(floor_order=9)
    with pytest.raises(ValueError, match="6-grams of 2000000 ids do not fit a 64-bit key; at most 3$"):
        check_order(6, 2_000_000)
    check_order(6, 40)


def test_bracket_pairs_have_no_cell_beyond_their_floors():
    assert judged_design(BracketPairs(), PairSettings()) == ()


def test_pair_credit_shares_ties():
    assert pair_credit(np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 2.0])).tolist() == [1.0, 0.0, 0.5]


def test_default_edit_swaps_and_keeps_only_broken_sentences():
    lang = Copy()  # a plug-in language with no edits of its own, and a membership test
    pairs = draw_pairs(lang, np.random.default_rng(0), per_cell=30)
    assert pairs.cells == ("swap-all",)
    assert lang.contains(pairs.good).all() and not lang.contains(pairs.bad).any()
    assert (np.sort(pairs.good, 1) == np.sort(pairs.bad, 1)).all()


def test_a_language_without_edits_or_membership_is_refused_in_one_line():
    class Mute(Copy):
        has_grammar = False

    with pytest.raises(PairsUnavailable) as err:
        draw_pairs(Mute(), np.random.default_rng(0), per_cell=5)
    assert "\n" not in str(err.value) and "pair_edits" in str(err.value)


def _brute_pll(objective: MaskedLM, encoder, ids: torch.Tensor) -> torch.Tensor:
    lang = objective.language
    out = torch.zeros(len(ids), dtype=torch.float64)
    for b in range(len(ids)):
        words = np.cumsum(lang.word_starts(ids[b : b + 1].numpy())[0])
        for t in range(ids.shape[1]):
            if not lang.is_content(ids[b : b + 1, t].numpy())[0]:
                continue
            copy = ids[b].clone()
            for s in range(t, ids.shape[1]):  # this piece and the later pieces of its word
                if words[s] == words[t] and lang.is_content(ids[b : b + 1, s].numpy())[0]:
                    copy[s] = 1
            logits = objective.head(encoder(copy[None]))[0, t]
            out[b] += logits.log_softmax(-1)[ids[b, t]].double()
    return out


class Pieces(BracketPairs):
    """Bracket pairs read as words of two pieces (an opener and its closer), to test PLL-word-l2r."""

    def word_starts(self, ids):
        return self.is_opener(ids)


@pytest.mark.parametrize("language", [BracketPairs(), Pieces()], ids=["tokens", "two-piece words"])
def test_pseudo_log_likelihood_equals_a_loop_over_masked_copies(language):
    torch.manual_seed(0)
    objective = MaskedLM(language=language)
    encoder = objective.setup_encoder().eval()
    ids = torch.from_numpy(language.sample(np.random.default_rng(0), 3))
    fast = objective.sentence_scores(encoder, ids, batch_size=7)
    assert torch.allclose(fast, _brute_pll(objective, encoder, ids), atol=1e-5)


def test_next_token_score_is_the_sum_of_left_to_right_log_probabilities():
    torch.manual_seed(0)
    objective = NextTokenLM(language=Dyck(length=8, max_depth=3))
    encoder = objective.setup_encoder().eval()
    ids = torch.from_numpy(objective.language.sample(np.random.default_rng(0), 4))
    want = torch.zeros(4, dtype=torch.float64)
    for t in range(1, ids.shape[1]):  # each prefix on its own: nothing to its right can leak in
        logp = objective.head(encoder(ids[:, :t]))[:, -1].log_softmax(-1)
        want += logp.gather(1, ids[:, t : t + 1]).squeeze(1).double()
    assert torch.allclose(objective.sentence_scores(encoder, ids, batch_size=3), want, atol=1e-5)


def test_probe_is_convex_so_its_fit_does_not_depend_on_where_it_starts():
    rng = np.random.default_rng(0)
    d = rng.normal(size=(500, 6)) + np.array([0.8, 0, 0, 0, 0, 0])
    a = fit_direction(d, np.random.default_rng(1))
    b = fit_direction(d * 1.0, np.random.default_rng(2))  # other label flips: the same optimum direction
    assert np.allclose(a / np.linalg.norm(a), b / np.linalg.norm(b), atol=0.05)
    null = fit_direction(rng.normal(size=(500, 6)), np.random.default_rng(3))
    assert abs(probe_credit(null, rng.normal(size=(4000, 6))).mean() - 0.5) < 0.03  # nothing to learn: chance


def test_an_objective_that_cannot_score_still_gets_its_probe_figure():
    objective = NextSentence(n_pairs=4)  # NSP alone: a [CLS] head, nothing that scores a sentence
    encoder = objective.setup_encoder()
    figures = PairGrader(BracketPairs(), seed=0, settings=SMALL).grade(objective, encoder)
    assert "acc_swap_closers" not in figures and "probe/acc_swap_closers" in figures
    assert set(figures) == logged_names(BracketPairs(), objective, SMALL)
    with pytest.raises(NotImplementedError, match="cannot score a sentence zero-shot"):
        objective.sentence_scores(encoder, torch.zeros(1, 17, dtype=torch.long))


def _shipped(language):
    from minibert.objectives import Combined, ReplacedTokenDetection, SpanMaskedLM, WholeWordMaskedLM

    return {
        "mlm": MaskedLM(language=language),
        "span": SpanMaskedLM(language=language),
        "whole_word": WholeWordMaskedLM(language=language),
        "next_token": NextTokenLM(language=language),
        "electra": ReplacedTokenDetection(language=language),
    }, Combined({"nsp": NextSentence(n_pairs=4), "mlm": MaskedLM()})


@pytest.mark.parametrize("causal", [False, True], ids=["bidirectional", "causal"])
def test_every_shipped_objective_has_a_zero_shot_and_a_probe_figure(causal):
    from dataclasses import replace

    from minibert.model import Encoder, EncoderConfig

    lang = Dyck(length=12, max_depth=4)
    grader = PairGrader(lang, seed=0, settings=SMALL)
    objectives, bert = _shipped(lang)
    for name, objective in objectives.items():
        torch.manual_seed(0)
        config = objective.configure_encoder(EncoderConfig(width=16, heads=2, layers=1, causal=causal))
        encoder = Encoder(config if name != "mlm" else replace(config, causal=causal))
        objective.build(config)
        figures = grader.grade(objective, encoder)
        assert objective.scoring and {"acc", "probe/acc"} <= set(figures), name
        assert 0.0 <= figures["acc"] <= 1.0 and set(figures) == logged_names(lang, objective, SMALL)
    assert "pseudo-log-likelihood" in bert.scoring and "mlm" in bert.scoring  # BERT reads through its MLM head
    encoder = bert.setup_encoder(EncoderConfig(width=16, heads=2, layers=1))
    ids = torch.from_numpy(BracketPairs().sample(np.random.default_rng(0), 2))
    assert torch.equal(bert.sentence_scores(encoder, ids), bert.parts["mlm"].sentence_scores(encoder, ids))


def test_text_edits_keep_the_window_and_change_one_thing_each(tmp_path, monkeypatch):
    from minibert.languages import Text
    from tests.corpora import write_corpus

    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "cache"))
    (folder := write_corpus(tmp_path / "c", n_files=20)).joinpath("extra.txt").write_text(
        " ".join(["This is a test and these are an example of what it has and they have ."] * 80)
    )
    lang = Text(corpus=str(folder), vocab_size=150, length=24, val_share=0.2)
    rng = np.random.default_rng(0)
    flips = {lang.token_id[a]: lang.token_id[b] for a, b in (("is", "are"), ("a", "an"), ("has", "have"))}
    flips |= {b: a for a, b in flips.items()}
    seen = set()
    windows = np.concatenate([lang.draw(rng, 200, "train"), lang.draw(rng, lang.val_windows, "val")])
    for row in windows.tolist():
        for name in lang.pair_edits:
            bad = lang.edit(row, name, rng)
            if bad is None:
                continue
            seen.add(name)
            changed = [t for t in range(len(row)) if row[t] != bad[t]]
            assert len(bad) == len(row) and changed
            if name == "word_swap":  # the same pieces, two neighbouring words in the other order
                assert sorted(row) == sorted(bad) and lang.letters[[row[t] for t in changed]].all()
            else:  # one whole word flipped to its partner
                (t,) = changed
                assert flips.get(row[t], lang.flips[row[t]]) == bad[t] and (name == "article") == (
                    lang.vocab[row[t]] in ("a", "an")
                )
    assert seen == set(lang.pair_edits)


def test_a_run_grades_its_final_weights_only_and_logs_what_preflight_predicts(tmp_path):
    import pandas as pd

    from minibert.ablation.preflight import logged_keys
    from minibert.training.cli import MiniBertCLI
    from minibert.training.fit import QUIET, fit

    args = ["--trainer.max_steps=8", "--trainer.val_check_interval=4", "--pair_eval.per_cell=10",
            "--pair_eval.probe_per_cell=20", "--data.val_size=64"]  # fmt: skip
    summary = fit(["configs/pretrain.yaml"], args, root_dir=tmp_path / "run")
    pairs = {k for k in summary if k.startswith("val/pairs/")}
    cli = MiniBertCLI(args=["--config=configs/pretrain.yaml", *args, *QUIET, f"--trainer.default_root_dir={tmp_path}"],
                      run=False)  # fmt: skip
    predicted = {k for k in logged_keys(cli.model, cli.trainer.callbacks) if k.startswith("val/pairs/")}
    assert pairs and pairs == predicted
    logged = pd.read_csv(Path(summary["log_dir"]) / "metrics.csv")
    graded = logged.dropna(subset=["val/pairs/probe/acc_swap_closers"])
    assert graded.step.tolist() == [7]  # the validation at step 4 graded no pairs: only the final weights
