"""Every entry point answers a usage error in one line with status 2 before torch or Lightning is imported (the
modules loaded are read, not a clock: timings are benchmarks/usage_errors.py's), spells options in full (a
prefix of an option is refused, never taken for it), and checks the folder it writes to before any work: a file,
under a file, a folder it cannot write, a folder another runner holds (status 3, naming the holder's command)."""

from __future__ import annotations

import json
import shlex
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
# the files the cases name, by their placeholder: made in a scratch folder (`scratch`)
FILES = {
    "band": ("band.yaml", "alike: [0.6, 0.9]\n"),
    "ckpt": ("fake.ckpt", "not a checkpoint"),
    "grid": ("grid.yaml", "experiments: []\n"),
    "no_objective": ("no_objective.py", "from torch import nn\n\n\nclass Head(nn.Module):\n    pass\n"),
    "two": ("two.py", "import minibert.objectives\nfrom minibert.objectives import MaskedLM\n\n\nclass A(MaskedLM):\n"
                      "    pass\n\n\nclass B(minibert.objectives.SpanMaskedLM):\n    pass\n"),
    "broken": ("broken.py", "from minibert.objectives import MaskedLM\n\n\nclass A(MaskedLM)\n    pass\n"),
    "runs": ("runs", {"seed0/summary.json": "{}", "seed1/summary.json": "{}"}),  # no checkpoint to grade again
    "blimp": ("blimp", {"anaphor_agreement.jsonl": '{"sentence_good": "A cat sat.", "sentence_bad": "A cat sats."}\n'}),
    "empty": ("empty", {}),  # stays empty: a refused command writes nothing
}  # fmt: skip
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
    "compare: an unknown language": ("scripts/compare.py", ["docs/examples/mask_rate_30.py", "--languages", "dyk"],
                                     "--languages: 'dyk' is not in configs/compare.yaml; valid: dyck, brackets, text"),
    "compare: a plug-in with no objective": ("scripts/compare.py", ["{no_objective}"],
                                             "no_objective.py defines no Objective subclass: name one as"),
    "compare: a plug-in with two objectives": ("scripts/compare.py", ["{two}"],
                                               "two.py defines 2 objectives (A, B): name one as"),
    "compare: a class the plug-in does not define": ("scripts/compare.py", ["{two}:C"],
                                                     "no objective 'C' in"),
    "compare: a plug-in that does not parse": ("scripts/compare.py", ["{broken}"],
                                               "broken.py, line 4: cannot import it (SyntaxError: "),
    "ablate: --report-only with no finished run": ("scripts/ablate.py", ["--report-only", "--out", "{empty}"],
                                                   "holds no finished run"),
    "ablate: a grid with no experiments": ("scripts/ablate.py", ["--grid", "{grid}", "--out", "{empty}"],
                                           "experiments must be a non-empty list"),
    "ablate: --only that matches nothing": ("scripts/ablate.py", ["--only", "nope/*", "--out", "{empty}"],
                                            "--only 'nope/*' matches no experiment"),
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
    "documents: a glob that matches nothing": ("scripts/documents.py", ["{empty}/seed*"], "matches 0 run folder(s)"),
    "documents: --b and --reference": ("scripts/documents.py", ["{runs}/seed*", "--b", "{runs}/seed*", "--reference",
                                       "left_right_trigram"], "give --b or --reference, not both"),
    "documents: a run with no checkpoint": ("scripts/documents.py", ["{runs}/seed*"], "no **/config.yaml"),
    "export: not a checkpoint": ("-m minibert.export", ["{ckpt}", "{empty}/hf"], "not a zip archive"),
    "blimp: no BLiMP folder": ("scripts/blimp.py", ["--checkpoint", "{ckpt}", "--blimp", "{empty}/nope"],
                               "no such folder"),
    "blimp: not a checkpoint": ("scripts/blimp.py", ["--checkpoint", "{ckpt}", "--blimp", "{blimp}"],
                                "not a zip archive"),
    "fill-in demo: an unknown option": ("scripts/demo_fill_in.py", ["--nope"], "unrecognized arguments: --nope"),
    "fill-in demo: a negative index": ("scripts/demo_fill_in.py", ["--index", "-1"], "--index: -1 is not allowed"),
    "masking demo: a share above 1": ("scripts/demo_masking.py", ["--p-pick", "1.5"], "--p-pick: 1.5 is not allowed"),
    "attention demo: no width": ("scripts/demo_attention.py", ["--dim", "0"], "--dim: 0 is not allowed"),
    "saved configs: no table there": ("scripts/saved_configs.py", ["docs"], "docs: no results table"),
    "saved configs: an abbreviated option": ("scripts/saved_configs.py", ["--rel"], "unrecognized arguments: --rel"),
}  # fmt: skip


def scratch(folder: Path) -> dict[str, str]:
    """Make FILES in `folder`: {placeholder: its path}."""
    for name, text in FILES.values():
        if isinstance(text, dict):  # a folder, and the files in it
            (folder / name).mkdir()
            for file, body in text.items():
                (folder / name / file).parent.mkdir(parents=True, exist_ok=True)
                (folder / name / file).write_text(body)
        else:
            (folder / name).write_text(text)
    return {key: str(folder / name) for key, (name, _) in FILES.items()}


def probe(target: str, argv: list[str]) -> tuple[dict, list[str]]:
    """({"code": exit status, "heavy": torch or Lightning modules imported}, stderr's lines) of one command."""
    kind, _, name = target.rpartition(" ")
    done = subprocess.run([sys.executable, "-c", PROBE, kind or "path", name, *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr.strip().splitlines()


@pytest.mark.parametrize("case", list(CASES))
def test_a_usage_error_is_one_line_with_status_2_before_torch_is_imported(case, tmp_path):
    target, argv, said = CASES[case]
    made = scratch(tmp_path)
    report, lines = probe(target, [a.format(**made) for a in argv])
    assert report["code"] == 2 and len(lines) == 1 and said in lines[0], (report, lines)
    assert ": error: " in lines[0] and not any("usage:" in line for line in lines)
    assert report["heavy"] == [], f"{case}: imported {report['heavy']} before answering"
    assert not (tmp_path / "out").exists() and not Path("/tmp/minibert-usage-export").exists()
    assert not any((tmp_path / "empty").iterdir()), "a refused command wrote into its folder"


HOLDER = """import sys, time
from minibert.ablation.lock import OutLock
with OutLock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(300)
"""
HELD = {
    "compare": ("scripts/compare.py", ["docs/examples/mask_rate_30.py", "--languages", "dyck", "--out", "{held}"]),
    "ablate": ("scripts/ablate.py", ["--out", "{held}"]),
}


@pytest.mark.parametrize("case", list(HELD))
def test_a_folder_another_runner_holds_is_one_line_with_status_3_naming_its_command_before_torch(case, tmp_path):
    """Asked before any estimate or import, and the holder named by the command that started it, whatever it is."""
    (tmp_path / "holder.py").write_text(HOLDER)
    held = tmp_path / "held"
    command = [sys.executable, str(tmp_path / "holder.py"), str(held)]
    holder = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        target, argv = HELD[case]
        report, lines = probe(target, [a.format(held=held) for a in argv])
    finally:
        holder.kill()
        holder.wait()
    assert report["code"] == 3 and len(lines) == 1 and report["heavy"] == [], (report, lines)
    name = shlex.join(["python", *command[1:]])
    assert lines[0].startswith(f"{Path(target).name}: error: {held} is in use by `{name}` (pid {holder.pid} on ")
    assert sorted(p.name for p in held.iterdir()) == [".ablate.lock"]


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
        _, (line, *more) = probe(target, argv)
        assert "/sys is not writable by this user" in line and not more, (target, line, more)


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
