"""Every entry point answers a usage error in one line with status 2 before torch or Lightning is imported (the
modules loaded are read, not a clock: timings are benchmarks/bench_startup.py's), spells options in full (a
prefix of an option is refused, never taken for it), and checks the folder it writes to before any work: a file,
under a file, a folder it cannot write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# what runs the entry point in a fresh interpreter, then reports whether torch or Lightning was imported
PROBE = """
import json, runpy, sys
kind, target, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.argv = [target, *argv]
code = 0
try:
    if kind == "-m":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(target, run_name="__main__")
except SystemExit as done:
    code = done.code if isinstance(done.code, int) else 1
heavy = sorted(m for m in ("torch", "lightning", "lightning.pytorch") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.__stdout__)
"""

A_FILE = "README.md"  # a file of the checkout: nothing can be made under it
CASES = {
    "ablate: no such grid": ("scripts/ablate.py", ["--grid", "configs/ablations/nope.yaml"], "no such file"),
    "ablate: an abbreviated option": ("scripts/ablate.py", ["--seed", "3"], "unrecognized arguments: --seed"),
    "ablate: --out under a file": ("scripts/ablate.py", ["--out", f"{A_FILE}/out"], "is a file, so no folder"),
    "compare: no such plug-in file": ("scripts/compare.py", ["nope.py"], "nope.py: no such file"),
    "compare: an abbreviated option": ("scripts/compare.py", ["docs/examples/mask_rate_30.py", "--language", "dyck"],
                                       "unrecognized arguments: --language"),
    "compare: no such grid": ("scripts/compare.py", ["--grid", "nope.yaml", "--arms", "a,b", "--metric", "val/acc",
                                                     "--out", "/tmp/minibert-usage"], "--grid nope.yaml: no such file"),
    "compare: --out under a file": ("scripts/compare.py", ["docs/examples/mask_rate_30.py", "--out", f"{A_FILE}/x"],
                                    "is a file, so no folder"),
    "compare: a band not around one half": ("scripts/compare.py", ["docs/examples/mask_rate_30.py", "--yardsticks",
                                            "{band}"], "needs 0 < lo < 0.5 < hi < 1"),
    "compare: --shrink without --minutes": ("scripts/compare.py", ["docs/examples/mask_rate_30.py", "--shrink"],
                                            "give --minutes"),
    "fit: no such config": ("-m minibert", ["fit", "-c", "configs/nope.yaml"], "-c configs/nope.yaml: no such file"),
    "fit: an unknown subcommand": ("-m minibert", ["fti"], "unknown subcommand 'fti'"),
    "fit: no such checkpoint": ("-m minibert", ["fit", "-c", "configs/pretrain.yaml", "--ckpt_path", "x.ckpt"],
                                "--ckpt_path x.ckpt: no such file"),
    "fit: a root under a file": ("-m minibert", ["fit", "--trainer.default_root_dir", f"{A_FILE}/x"],
                                 "is a file, so no folder"),
    "report: an abbreviated option": ("-m minibert.report", ["--chec"], "unrecognized arguments: --chec"),
    "report: no such root": ("-m minibert.report", ["--root", "nope"], "--root nope: no such folder"),
    "export: no such checkpoint": ("-m minibert.export", ["nope.ckpt", "/tmp/minibert-usage-export"], "no such file"),
    "export: a folder that exists": ("-m minibert.export", ["{ckpt}", "docs"], "already exists and is not empty"),
    "export: under a file": ("-m minibert.export", ["{ckpt}", f"{A_FILE}/x"], "is a file, so no folder"),
    "blimp: missing arguments": ("scripts/blimp.py", [], "the following arguments are required: --checkpoint"),
    "documents: no arms": ("scripts/documents.py", [], "the following arguments are required: a"),
    "fill-in demo: an unknown option": ("scripts/demo_fill_in.py", ["--nope"], "unrecognized arguments: --nope"),
    "saved configs: no table there": ("scripts/saved_configs.py", ["docs"], "docs: no results table"),
    "saved configs: an abbreviated option": ("scripts/saved_configs.py", ["--rel"], "unrecognized arguments: --rel"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_a_usage_error_is_one_line_with_status_2_before_torch_is_imported(case, tmp_path):
    target, argv, said = CASES[case]
    (tmp_path / "band.yaml").write_text("alike: [0.6, 0.9]\n")
    (tmp_path / "fake.ckpt").write_bytes(b"not a checkpoint")
    argv = [a.format(band=tmp_path / "band.yaml", ckpt=tmp_path / "fake.ckpt") for a in argv]
    kind, _, name = target.rpartition(" ")
    done = subprocess.run([sys.executable, "-c", PROBE, kind or "path", name, *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    report = json.loads(done.stdout.strip().splitlines()[-1])
    lines = done.stderr.strip().splitlines()
    assert report["code"] == 2 and len(lines) == 1 and said in lines[0], (report, done.stderr)
    assert ": error: " in lines[0] and "usage:" not in done.stderr
    assert report["heavy"] == [], f"{case}: imported {report['heavy']} before answering"
    assert not (tmp_path / "out").exists() and not Path("/tmp/minibert-usage-export").exists()


def test_a_read_only_folder_is_refused_by_every_writer_in_one_line(tmp_path):
    """/sys is not writable, even by root (a permission error, as a read-only folder gives a user)."""
    from minibert.places import PlaceError, check_out

    if check_out_writable(Path("/sys")):
        pytest.skip("/sys is writable on this machine")
    with pytest.raises(PlaceError, match=r"--out /sys/x: /sys is not writable by this user"):
        check_out("/sys/x")
    for target, argv in (("scripts/ablate.py", ["--out", "/sys/x"]),
                         ("scripts/compare.py", ["docs/examples/mask_rate_30.py", "--out", "/sys/x"]),
                         ("-m minibert.export", [str(tmp_path / "f.ckpt"), "/sys/x"])):  # fmt: skip
        (tmp_path / "f.ckpt").write_bytes(b"x")
        kind, _, name = target.rpartition(" ")
        done = subprocess.run([sys.executable, "-c", PROBE, kind or "path", name, *argv], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        (line,) = done.stderr.strip().splitlines()
        assert "/sys is not writable by this user" in line, (target, done.stderr)


def check_out_writable(folder: Path) -> bool:
    import os
    import tempfile

    try:
        fd, path = tempfile.mkstemp(dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(path)
    return True


def test_a_full_disk_and_an_existing_file_are_refused_before_anything_is_written(tmp_path, monkeypatch):
    import shutil

    from minibert import places

    (tmp_path / "a_file").write_text("")
    with pytest.raises(places.PlaceError, match="a file, not a folder"):
        places.check_out(tmp_path / "a_file")
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(places.shutil, "disk_usage", lambda p: usage._replace(free=1024))
    with pytest.raises(places.PlaceError, match=r"is full \(0.0 MiB free\)"):
        places.check_out(tmp_path / "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # the probe left nothing behind
