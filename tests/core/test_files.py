"""Atomic writes give files the mode a plain `open()` would: 0666 less the process's umask."""

import errno
import os
import stat

import pytest

from minibert.atomic_writes import current_umask, write_atomic, write_json


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077, 0o027])
def test_written_files_respect_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        assert current_umask() == umask
        write_atomic(tmp_path / "a.txt", "x")
        write_json(tmp_path / "b.json", {"v": 1.0})
        with open(tmp_path / "plain.txt", "w") as f:  # the reference: what open() gives
            f.write("x")
    finally:
        os.umask(old)
    expected = 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode) == expected
    for name in ("a.txt", "b.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name
    assert (tmp_path / "a.txt").read_text() == "x"


def test_a_write_the_disk_refuses_names_the_file_it_was_writing(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")  # as the kernel says it: no file

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as err:
        write_atomic(tmp_path / "report.md", "x")
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(tmp_path / "report.md")
    assert not list(tmp_path.iterdir())  # no temporary left behind
