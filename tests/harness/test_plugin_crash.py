"""A plug-in that crashes is a bug, not an outcome: compare.py stops at its first crashing run with one line
naming the exception and the plug-in's own file and line, judges nothing and counts no seed; ablate.py does not
try the crashing cell's other seeds; a loss that is not finite from the first step blames the objective, not the
learning rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from minibert.ablation.crashes import PluginCrash, is_plugin_file, plugin_crash

BROKEN = """
from minibert.objectives import MaskedLM


class Broken(MaskedLM):
    def score(self, hidden, batch):
        raise RuntimeError("my loss is broken")
"""

NOT_FINITE = """
from minibert.objectives import MaskedLM


class NotFinite(MaskedLM):
    def score(self, hidden, batch):
        scored = super().score(hidden, batch)
        return scored._replace(loss=scored.loss * float("nan"))
"""


def yardsticks(tmp_path: Path) -> Path:
    """The bracket pairs at a budget of a few steps, MLM the only yardstick."""
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(yaml.safe_dump({"trainer": {"val_check_interval": 2},
                                    "data": {"val_size": 64, "val_batch_size": 64},
                                    "pair_eval": {"per_cell": 5, "probe_per_cell": 20}}))  # fmt: skip
    spec = tmp_path / "yardsticks.yaml"
    spec.write_text(yaml.safe_dump({"alike": [0.25, 0.75], "languages": {"dyck": {
        "pretrain": ["configs/pretrain.yaml", "configs/languages/dyck.yaml", str(tiny)],
        "finetune": ["configs/finetune.yaml"], "flops": 3.0e8, "metric": "val/acc", "fails_below": 0.515,
        "timing": {"grid": "dyck", "pretrain": "dyck/pretrain/{arm}", "finetune": "dyck/finetune/{arm}-full"},
        "arms": {"mlm": []}}}}))  # fmt: skip
    return spec


@pytest.mark.parametrize(("name", "source", "said"), [
    ("broken", BROKEN, "RuntimeError: my loss is broken, raised at"),
    ("not_finite", NOT_FINITE, "from its first batch, so the objective's code is at fault")])  # fmt: skip
def test_a_crashing_plugin_ends_the_comparison_at_its_first_run_with_one_line_and_no_verdict(
    tmp_path, scripts, capsys, name, source, said
):
    plugin = tmp_path / f"{name}.py"  # a module name of its own: a process imports a module once
    plugin.write_text(source)
    out = tmp_path / "out"
    code = scripts("compare").main([str(plugin), "--yardsticks", str(yardsticks(tmp_path)), "--out",
                                    str(out), "--workers", "1"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and said in lines[0] and str(plugin) in lines[0], err
    assert "Traceback" not in err and "run failed" not in err
    assert not (out / "comparisons").exists()  # nothing judged, no seed counted
    assert list(out.glob("runs/*/*/*/seed*/summary.json")) == []  # no run finished: none started after the crash
    if "(log: " in lines[0]:  # in training: the whole story is in the run's log
        log = next(out.glob("runs/dyck/pretrain/*/seed0-*/run.log")).read_text()
        assert ("Traceback" in log or "non-finite" in log) and lines[0].startswith("compare.py: error: dyck/pretrain/")
    else:  # while its cell was built, before anything trained
        assert "cell dyck/pretrain/" in lines[0] and not (out / "runs").exists()


def test_a_crash_is_the_plugins_only_when_the_plugins_own_code_raised(tmp_path):
    plugin = tmp_path / "helper.py"
    plugin.write_text("def boom():\n    raise ValueError('inside the plug-in')\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("helper", plugin)
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    try:
        helper.boom()
    except ValueError as err:
        crash = plugin_crash(err)
    assert isinstance(crash, PluginCrash) and f"{plugin}, line 2" in str(crash) and "inside the plug-in" in str(crash)
    try:
        json.loads("{")  # raised in the standard library, called from here: a test file is a plug-in's caller
    except ValueError as err:
        assert plugin_crash(err) is not None  # this test file is outside the package: it counts as user code
    import minibert.masking

    assert not is_plugin_file(minibert.masking.__file__) and not is_plugin_file(json.__file__)
    assert not is_plugin_file("<frozen importlib._bootstrap>") and is_plugin_file(str(plugin))


def test_a_cell_whose_run_crashes_in_plugin_code_is_not_tried_again_with_the_next_seed(tmp_path):
    """The runner's rule on a stand-in executor: the crashed cell's other seeds are not started, the other cells
    go on; with stop_on_crash nothing more starts."""
    from minibert.ablation.grid import Experiment
    from minibert.ablation.runner import Run, Triage, run_all

    class Executor:
        max_running = 1

        def __init__(self):
            self.started = []

        def submit(self, fn, run, *args):
            self.started.append(run.label)
            return len(self.started)  # a job handle

        def wait(self, jobs):
            return jobs[:1]

        def result(self, job):
            if self.started[job - 1].startswith("p/broken"):
                raise PluginCrash("RuntimeError: boom, raised at mine.py, line 3")

    def runs(names):
        return [Run(Experiment(name=n, job_type="pretrain", configs=()), s, f"k{s}", tmp_path / n / str(s), None)
                for n in names for s in range(3)]  # fmt: skip

    for stop, started in ((False, 4), (True, 1)):
        executor = Executor()
        outcome = run_all(Triage(todo=runs(["p/broken", "p/mlm"])), tmp_path, executor, stop_on_crash=stop)
        assert len(executor.started) == started and executor.started[0].startswith("p/broken")
        assert [r.label for r, _ in outcome.crashed] == [executor.started[0]]
        assert all(reason.startswith("not tried") for _, reason in outcome.failed)
