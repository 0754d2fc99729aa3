"""The demo scripts print what they claim: masking shares near the recipe, aligned rows, attention rows that
see the right number of tokens, and fill-in predictions from the model that was trained; a bad value of any
option is one line naming it, with status 2."""

import os
import re
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minibert.languages import BracketPairs
from minibert.training.checkpoints import last_checkpoint

LANG = BracketPairs()  # the demos' language


def rows_of(out: str, names: list[str]) -> dict[str, list[tuple[int, str]]]:
    """The named rows of a token table as (column offset, token) pairs."""
    found = {}
    for line in out.splitlines():
        name = line.split(" ", 1)[0]
        if name in names and name not in found:
            found[name] = [(m.start(), m.group()) for m in re.finditer(r"\S+", line)][1:]
    assert found.keys() == set(names), out
    return found


def assert_well_formed(tokens: list[str]) -> None:
    ids = LANG.encode(" ".join(tokens))  # raises on a token outside the vocabulary
    assert len(ids) == 17 and tokens[0] == "[CLS]" and (ids[2::2] == ids[1::2] + LANG.kinds).all()


def assert_aligned(rows: dict[str, list[tuple[int, str]]]) -> None:
    starts = [[start for start, _ in row] for row in rows.values()]
    assert all(s == starts[0] for s in starts), "columns are not aligned"


SHARE_LINE = re.compile(r"^(\[MASK\]|random|kept|picked)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%$", re.M)


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([], {"[MASK]": 12.0, "random": 1.5, "kept": 1.5, "picked": 15.0}),
        (
            ["--p-pick=0.5", "--p-mask=1.0", "--p-random=0.0", "--seed=3"],
            {"[MASK]": 50, "random": 0, "kept": 0, "picked": 50},
        ),
    ],
)
def test_masking_demo_shows_shares_near_the_recipe_and_an_aligned_sentence(scripts, capsys, flags, expected):
    scripts("demo_masking").main(flags)
    out = capsys.readouterr().out
    assert "Shares over 10,000 sentences (160,000 content tokens)" in out
    shares = {name: (float(obs), float(exp), float(tol)) for name, obs, exp, tol in SHARE_LINE.findall(out)}
    assert shares.keys() == expected.keys()
    for name, (observed, recipe, tolerance) in shares.items():
        assert recipe == expected[name]
        assert abs(observed - recipe) <= tolerance + 0.005, name  # + rounding of the printed figures

    rows = rows_of(out, ["original", "corrupted", "labels", "kind"])
    assert_aligned(rows)
    original, corrupted, labels, kind = ([tok for _, tok in row] for row in rows.values())
    assert_well_formed(original)
    for i in range(17):
        if kind[i] == ".":
            assert corrupted[i] == original[i] and labels[i] == "."
        else:
            assert labels[i] == original[i]
            assert (corrupted[i] == "[MASK]") == (kind[i] == "mask")
            assert (corrupted[i] == original[i]) == (kind[i] == "kept")


def test_attention_demo_rows_see_all_five_then_only_their_left(scripts, capsys):
    scripts("demo_attention").main([])
    out = capsys.readouterr().out
    sees = [int(s) for s in re.findall(r"sees (\d) of 5", out)]
    assert sees == [5] * 5 + [1, 2, 3, 4, 5]
    table = [line.split()[1:6] for line in out.splitlines() if "sees" in line]
    for i, row in enumerate(table):
        causal = i >= 5
        visible = [w for w in row if w != "-"]
        assert len(visible) == (i - 5 + 1 if causal else 5)
        assert row[len(visible) :] == ["-"] * (5 - len(visible))  # the hidden positions are the future ones
        assert sum(map(float, visible)) == pytest.approx(1.0, abs=0.03)  # each row sums to 1, up to rounding


@pytest.mark.parametrize("causal", [False, True])
def test_numpy_attention_equals_torch_scaled_dot_product_attention(scripts, causal):
    q, k, v = np.random.default_rng(1).normal(size=(3, 5, 8))
    out, weights = scripts("demo_attention").attention(q, k, v, causal=causal)
    expected = F.scaled_dot_product_attention(*(torch.from_numpy(x)[None] for x in (q, k, v)), is_causal=causal)[0]
    assert np.allclose(out, expected.numpy(), atol=1e-10)
    assert np.allclose(weights.sum(-1), 1.0)


def check_fill_in(out: str) -> float:
    """Checks the printed rows and count against each other; returns the printed held-out accuracy."""
    rows = rows_of(out, ["original", "input", "predicted"])
    assert_aligned(rows)
    original, inputs, predicted = ([tok for _, tok in row] for row in rows.values())
    assert_well_formed(original)
    blanks = [i for i, p in enumerate(predicted) if p != "."]
    assert blanks and all(inputs[i] == original[i] for i in range(17) if i not in blanks)
    right, total = map(int, re.search(r"(\d+) of (\d+) blanks filled in correctly", out).groups())
    assert total == len(blanks) and right == sum(predicted[i] == original[i] for i in blanks)
    return float(re.search(r"validation set: ([\d.]+)%", out).group(1))


def test_fill_in_demo_shows_the_trained_models_predictions(scripts, capsys, short_run):
    scripts("demo_fill_in").main(["--ckpt", str(last_checkpoint(short_run["log_dir"]))])
    accuracy = check_fill_in(capsys.readouterr().out)
    assert accuracy == pytest.approx(100 * short_run["val/acc"], abs=0.05)  # the run's own val/acc, same weights


def test_fill_in_demo_takes_a_checkpoint_without_hyperparameters_as_the_stock_mlm(scripts, capsys, short_run, tmp_path):
    saved = torch.load(last_checkpoint(short_run["log_dir"]), map_location="cpu", weights_only=True)
    for key in ("hyper_parameters", "hparams_name"):  # as older code wrote them
        saved.pop(key, None)
    torch.save(saved, tmp_path / "old.ckpt")
    scripts("demo_fill_in").main(["--ckpt", str(tmp_path / "old.ckpt")])
    assert check_fill_in(capsys.readouterr().out) == pytest.approx(100 * short_run["val/acc"], abs=0.05)


@pytest.mark.slow
def test_fill_in_demo_without_checkpoint_pretrains_the_default_model(scripts, capsys):
    scripts("demo_fill_in").main([])
    out = capsys.readouterr().out
    assert "no --ckpt given, so pre-training the default model first" in out
    assert check_fill_in(out) >= 88.0


# script, its arguments, what the one line must name (the option and the value given)
BAD_VALUES = {
    "masking: a share above 1": ("demo_masking", ["--p-pick", "1.5"], ["--p-pick", "1.5", "[0, 1]"]),
    "masking: a negative share": ("demo_masking", ["--p-random", "-0.1"], ["--p-random", "-0.1", "[0, 1]"]),
    "masking: NaN for a share": ("demo_masking", ["--p-mask", "nan"], ["--p-mask", "nan", "[0, 1]"]),
    "masking: a word for a share": ("demo_masking", ["--p-pick", "half"], ["--p-pick", "half", "[0, 1]"]),
    "masking: shares above 1 together": ("demo_masking", ["--p-mask", "0.9", "--p-random", "0.2"],
                                         ["--p-mask 0.9", "--p-random 0.2", "at most 1"]),
    "masking: --p-mask above 1 with the default --p-random": ("demo_masking", ["--p-mask", "0.95"],
                                                              ["--p-mask 0.95", "--p-random 0.1", "at most 1"]),
    "masking: no sentences": ("demo_masking", ["--sentences", "0"], ["--sentences", "0", "positive integer"]),
    "masking: a negative seed": ("demo_masking", ["--seed", "-1"], ["--seed", "-1", ">= 0"]),
    "attention: a negative width": ("demo_attention", ["--dim", "-1"], ["--dim", "-1", "positive integer"]),
    "attention: no width": ("demo_attention", ["--dim", "0"], ["--dim", "0", "positive integer"]),
    "attention: a fraction for a width": ("demo_attention", ["--dim", "1.5"], ["--dim", "1.5", "positive integer"]),
    "attention: a negative seed": ("demo_attention", ["--seed", "-2"], ["--seed", "-2", ">= 0"]),
    "fill-in: a negative index": ("demo_fill_in", ["--index", "-1"], ["--index", "-1", ">= 0"]),
    "fill-in: an index past the validation set": ("demo_fill_in", ["--index", "2000"],
                                                  ["--index 2000", "holds 2000", "[0, 1999]"]),
    "fill-in: no such checkpoint": ("demo_fill_in", ["--ckpt", "{tmp}/nope.ckpt"], ["--ckpt", "nope.ckpt", "no such"]),
    "fill-in: a folder for a checkpoint": ("demo_fill_in", ["--ckpt", "{tmp}"], ["--ckpt", "a folder"]),
    "fill-in: a file that is not a checkpoint": ("demo_fill_in", ["--ckpt", "{tmp}/notes.ckpt"],
                                                 ["--ckpt", "notes.ckpt", "not a readable PyTorch checkpoint"]),
    "fill-in: an unreadable checkpoint": ("demo_fill_in", ["--ckpt", "{tmp}/locked.ckpt"],
                                          ["--ckpt", "locked.ckpt", "not readable"]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_VALUES))
def test_a_bad_value_of_a_demo_option_is_one_line_naming_it_with_status_2(case, root, scripts, tmp_path, capsys,
                                                                          monkeypatch):  # fmt: skip
    """Run as its `main` in this process, named as a user runs it (the refusals come before anything heavy:
    tests/harness/test_usage_errors.py checks that in a process of its own)."""
    script, argv, named = BAD_VALUES[case]
    (tmp_path / "notes.ckpt").write_text("not a checkpoint")
    (tmp_path / "locked.ckpt").write_text("not read")
    (tmp_path / "locked.ckpt").chmod(0)
    if "{tmp}/locked.ckpt" in argv and os.access(tmp_path / "locked.ckpt", os.R_OK):
        pytest.skip("this user reads any file (root): no file is unreadable to it")
    monkeypatch.setattr(sys, "argv", [str(root / "scripts" / f"{script}.py")])  # argparse names the program by it
    with pytest.raises(SystemExit) as done:
        scripts(script).main([a.format(tmp=tmp_path) for a in argv])
    said = capsys.readouterr()
    lines = said.err.strip().splitlines()
    assert done.value.code == 2 and "Traceback" not in said.err, said.err[-2000:]
    assert len(lines) == 1 and lines[0].startswith(f"{script}.py: error: "), said.err[-2000:]
    assert all(n in lines[0] for n in named), lines[0]
    assert not said.out  # nothing was shown before the refusal
