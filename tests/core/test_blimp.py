"""BLiMP read from a folder the user downloaded: every bad input one line with status 2, nothing written; a
paradigm graded by the objective's own sentence score, sentences longer than the encoder skipped and counted."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from minibert.pairs.blimp import grade
from minibert.pairs.blimp_files import BlimpError, read_blimp
from minibert.training.checkpoints import last_checkpoint
from tests.corpora import write_corpus


def _blimp(folder, rows: dict[str, list[dict]]):
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in rows.items():
        (folder / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    return folder


PAIRS = [{"sentence_good": "the tokenizer splits words.", "sentence_bad": "the splits tokenizer words.", "UID": "x"}]


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: p / "nowhere", "no such folder"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "no *.jsonl file"),
        (lambda p: _blimp(p / "b", {"bad": [{"sentence_good": "a"}]}), "bad.jsonl:1: not a BLiMP line"),
        (lambda p: (_blimp(p / "c", {}), (p / "c" / "x.jsonl").write_text("{not json\n"))[0], "x.jsonl:1"),
    ],
    ids=["missing", "empty", "missing field", "corrupt"],
)
def test_a_bad_blimp_folder_is_one_line_naming_the_file(tmp_path, make, fragment):
    with pytest.raises(BlimpError) as err:
        read_blimp(make(tmp_path))
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_the_script_refuses_bad_input_with_status_2_and_writes_nothing(tmp_path, scripts, capsys, short_run):
    blimp = scripts("blimp")
    folder = _blimp(tmp_path / "data", {"anaphor_agreement": PAIRS})
    garbage = tmp_path / "garbage.ckpt"
    garbage.write_bytes(b"not a checkpoint")
    cases = [
        (["--checkpoint", str(tmp_path / "none.ckpt"), "--blimp", str(folder)], "no such file"),
        (["--checkpoint", str(garbage), "--blimp", str(folder)], "not a minibert pre-training checkpoint"),
        (["--checkpoint", str(garbage), "--blimp", str(tmp_path / "nowhere")], "no such folder"),
        (["--checkpoint", str(last_checkpoint(short_run["log_dir"])), "--blimp", str(folder)], "trained on text"),
    ]
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv, fragment in cases:
        assert blimp.main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0] and err[0].startswith("blimp.py: error:")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_paradigm_is_graded_by_the_objectives_own_score_and_long_sentences_are_counted(tmp_path, monkeypatch):
    from minibert.languages import Text
    from minibert.objectives import MaskedLM

    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "cache"))
    language = Text(corpus=str(write_corpus(tmp_path / "c")), vocab_size=100, length=40, val_share=0.2)
    torch.manual_seed(0)
    objective = MaskedLM(language=language)
    encoder = objective.setup_encoder().eval()
    long = " ".join(["tokenizer"] * 60)
    pairs = [(p["sentence_good"], p["sentence_bad"]) for p in PAIRS] * 3 + [(long + ".", long + " .")]
    acc, graded, skipped = grade(objective, encoder, pairs, max_len=41)
    assert (graded, skipped) == (3, 1) and acc in (0.0, 0.5, 1.0)  # one pair three times: one verdict
    good, bad = (objective.sentence_scores(encoder, torch.from_numpy(language.encode(s)[None])) for s in pairs[0])
    assert acc == float(np.where(good > bad, 1.0, np.where(good < bad, 0.0, 0.5))[0])
