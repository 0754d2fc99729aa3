"""Every command the README and docs/ show runs as written, up to where it would start long work: each bash
block is read line by line (continuations joined, comments dropped), its file-making lines (mkdir, cat with a
here-document, cp) run in a scratch checkout, and every minibert command is parsed by the program it names:
`python -m minibert fit` with `--print_config` (the configs load, every option exists, every class path
imports), the scripts' and the export's own argument parsers (the options exist and are well formed). A file a
page shows in a python or yaml block whose first line names it (`# my_objectives.py`) is written into the scratch
checkout first. A command none of these covers must be listed in SKIPPED with the test that runs it instead."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# commands run elsewhere, each with where (a prefix of the command's first words)
SKIPPED = {
    "pip install": ".ci/run installs from a clean clone with the README's commands",
    "pytest": "the test suite itself",
    "python -c": "what an exported folder does in transformers: tests/core/test_export.py",
    "PYTHONPATH=my_plugins python -c": "the first-day plug-in checks: tests/pages/test_readme_guide.py runs them",
    "git worktree": "docs/reliability.md's measurement of an old commit, by hand",
    "python scripts/ablate.py --grid /tmp/tg.yaml": "the same measurement, on the grid its `python -c` line writes",
}


class Parsed(Exception):
    """Raised in place of running: the command's arguments parsed."""


def commands(page: Path) -> list[tuple[int, str, list[str]]]:
    """(line, the block's file-making shell text so far, the command's words) of every command in the page's bash
    blocks; a here-document's body is part of the shell text, never a command."""
    found = []
    text = page.read_text()
    for block in re.finditer(r"```(?:bash|sh)\n(.*?)```", text, re.S):
        start = text[: block.start()].count("\n") + 2
        lines = block.group(1).replace("\\\n", " ").splitlines()  # a continued command on one line
        shell, heredoc, i = [], None, 0
        while i < len(lines):
            line = lines[i]
            if heredoc is not None:  # a file's text, up to its end word
                shell.append(line)
                heredoc = None if line.strip() == heredoc else heredoc
            elif line.strip() and not line.lstrip().startswith("#"):
                words = shlex.split(line, comments=True)
                if marker := re.search(r"<<\s*'?(\w+)'?", line):
                    heredoc = marker.group(1)
                    shell.append(line)
                elif words and words[0] in ("mkdir", "cp", "cat"):
                    shell.append(line)
                elif words:
                    found.append((start + i, "\n".join(shell), words))
            i += 1
    return found


def named_files(page: Path) -> dict[str, str]:
    """{file name: text} of the python and yaml blocks whose first line is a comment naming their file."""
    found = re.findall(r"```(?:python|yaml)\n# ([\w./-]+\.(?:py|yaml))\n(.*?)```", page.read_text(), re.S)
    return dict(found)


def documented() -> list[tuple[str, str, list[str]]]:
    return [(f"{p.relative_to(ROOT)}:{line}", shell, words) for p in PAGES for line, shell, words in commands(p)]


CASES = documented()


def test_the_pages_show_commands():
    programs = {program(words)[0] for _, _, words in CASES}
    assert len(CASES) > 30 and {"minibert", "scripts/ablate.py", "scripts/compare.py", "minibert.export"} <= programs


def program(words: list[str]) -> tuple[str, list[str], dict[str, str]]:
    """(the program, its arguments, the environment set before it) of a command: `PYTHONPATH=x python -m
    minibert fit ...`, `srun python ...` and `torchrun ... -m minibert ...` name minibert's CLI."""
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        key, value = words[0].split("=", 1)
        env[key], words = value, words[1:]
    for i, word in enumerate(words):
        if word == "-m" and i + 1 < len(words):
            return words[i + 1], words[i + 2 :], env
        if word.endswith(".py") and i > 0 and words[i - 1] == "python":
            return word, words[i + 1 :], env
    return " ".join(words[:2]), words[2:], env


def load(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_only(main, argv: list[str], monkeypatch) -> argparse.Namespace:
    """The namespace `main(argv)` parses its arguments into, stopping it there (SystemExit 2 on a bad option)."""
    real = argparse.ArgumentParser.parse_args

    def parse(self, args=None, namespace=None):
        raise Parsed(real(self, args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)
    with pytest.raises(Parsed) as parsed:
        main(argv)
    return parsed.value.args[0]


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    """A checkout to run in: the repository's configs and tests, nothing written back."""
    for name in ("configs", "tests", "benchmarks", "scripts", "docs"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("where, shell, words", CASES, ids=[c[0] for c in CASES])
def test_every_documented_command_runs_as_far_as_its_arguments(where, shell, words, scratch, monkeypatch):
    line = " ".join(words)
    page = ROOT / where.rsplit(":", 1)[0]
    for name, text in named_files(page).items():
        (scratch / name).write_text(text)
    if skip := next((why for start, why in SKIPPED.items() if line.startswith(start)), None):
        pytest.skip(skip)
    if shell:  # the block's files first: a plug-in written with cat, copied with cp
        subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=scratch, check=True, timeout=30)
    name, argv, env = program(words)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
        if key == "PYTHONPATH":
            monkeypatch.syspath_prepend(str(scratch / value))
    if name == "minibert":
        from minibert.training.cli import main

        assert argv[0] == "fit", line
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as done:
            main([*argv, "--print_config"])
        assert done.value.code in (0, None), f"{where}: {line}\n{err.getvalue()[-2000:]}"
        assert "trainer:" in out.getvalue()
    elif name == "minibert.export":
        from minibert.export.__main__ import main

        assert parse_only(main, argv, monkeypatch).out_dir
    elif name == "minibert.report":
        from minibert.report.render import main

        parse_only(main, argv, monkeypatch)
    elif name in ("scripts/ablate.py", "scripts/compare.py"):
        module = load(name)
        module.parse_args(argv)  # its own checks after argparse's too
    elif name in ("scripts/blimp.py", "benchmarks/bench.py", "benchmarks/bench_floor.py"):
        parse_only(load(name).main, argv, monkeypatch)
    else:
        pytest.fail(f"{where}: {line}: no dry run for {name!r}; add one, or list it in SKIPPED with where it runs")


def test_a_command_with_a_wrong_option_fails_its_dry_run(scratch, monkeypatch):
    """The dry run can fail: a misspelt option of each kind of program is caught."""
    from minibert.training.cli import main

    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit) as done:
        main(["fit", "-c", "configs/pretrain.yaml", "--trainer.max_stepz", "3"])  # refused before anything runs
    assert done.value.code == 2
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit) as done:
        load("scripts/ablate.py").parse_args(["--seedz", "3"])
    assert done.value.code == 2
