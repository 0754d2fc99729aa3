"""The exact oracle's cost is bounded and stated: its passes shrink to fit a memory budget, a language whose
single sentence would not fit is refused at construction with one line, and a long grading says so."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minibert.languages import Dyck
from minibert.oracle import announce
from tests.ablating import ROOT

MEASURE = """
import sys, threading, time
import numpy as np
from minibert.languages import Dyck
from minibert.masking import MaskingRecipe

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

length, n, causal, budget = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1", float(sys.argv[4])
lang = Dyck(length=length, oracle_memory_gb=budget)
rng = np.random.default_rng(0)
context, _ = MaskingRecipe().likelihoods(MaskingRecipe().apply(lang.sample(rng, n), rng, lang).inputs, lang)
base, peak, done = rss(), [0], threading.Event()

def watch():
    while not done.is_set():
        peak[0] = max(peak[0], rss() - base)
        time.sleep(0.0005)

thread = threading.Thread(target=watch)
thread.start()
lang.cavity(context, causal=causal)
done.set()
thread.join()
print(peak[0])
"""


def peak_bytes(length: int, n: int, causal: bool, budget: float) -> int:
    """Peak resident memory the cavity added, sampled every half millisecond in a fresh process (Linux)."""
    args = [sys.executable, "-c", MEASURE, str(length), str(n), str(int(causal)), str(budget)]
    return int(subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True).stdout)


def test_a_sentence_over_the_budget_is_refused_with_one_line_naming_what_to_lower():
    with pytest.raises(ValueError) as err:
        Dyck(length=512, oracle_memory_gb=0.2)
    line = str(err.value)
    assert "\n" not in line and "about 0.4 GB for one sentence" in line and "lower length" in line, line
    long = Dyck(length=512)  # the default budget (2 GB) fits one sentence: it runs, a few sentences per pass
    assert 1 <= long._chunk(False) <= 5 and long.oracle_cost(6000, False)[0] <= 2e9


@pytest.mark.parametrize("causal", [False, True])
def test_the_passes_shrink_to_the_budget(causal):
    budget = 0.15  # GB: bidirectional, a fifth of what 48 sentences in one pass take
    lang = Dyck(length=192, oracle_memory_gb=budget)
    assert lang._chunk(causal) < 48 < Dyck(length=32)._chunk(causal) == 500
    assert lang.oracle_cost(48, causal)[0] <= budget * 1e9


@pytest.mark.slow  # a memory measurement, in a fresh process: run apart from the fast tier
@pytest.mark.parametrize("causal", [False, True])
def test_the_measured_peak_stays_inside_the_budget(causal):
    budget = 0.15
    one = Dyck(length=192).oracle_cost(48, causal)[0]
    assert peak_bytes(192, 48, causal, 2.0) > 0.5 * one  # in one pass, it takes the memory the model says
    assert peak_bytes(192, 48, causal, budget) < budget * 1e9  # in the passes the budget allows, it stays inside


def test_a_long_grading_is_announced_with_its_estimate():
    with pytest.warns(UserWarning, match=r"grading 6000 sentences of Dyck\(.*length=512.*\) .* takes about \d+ min"):
        announce(Dyck(length=512), 6000, causal=False)
