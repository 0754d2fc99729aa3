"""`python -m minibert.export` answers a usage error or a checkpoint that is not a file at once, in one line with
status 2, before torch is imported (no `transformers` needed)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "the following arguments are required"),
        (["{tmp}/none.ckpt", "{tmp}/out"], "no such file"),
        (["{tmp}", "{tmp}/out"], "a folder; give a .ckpt file (its checkpoints/last.ckpt, say)"),
    ],  # fmt: skip
    ids=["usage", "missing", "a folder"],
)
def test_bad_arguments_are_answered_in_one_line_before_any_heavy_import(tmp_path, args, fragment):
    code = ("import atexit, sys; atexit.register(lambda: print('torch imported:', 'torch' in sys.modules)); "
            "import minibert.export.__main__ as m; m.main()")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, *(a.format(tmp=tmp_path) for a in args)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and fragment in err[-1] and "Traceback" not in done.stderr
    # the cause of a fast answer; its time is benchmarks/usage_errors.py's (bounded in benchmarks/test_timings.py)
    assert done.stdout.strip() == "torch imported: False"
    assert not (tmp_path / "out").exists()
