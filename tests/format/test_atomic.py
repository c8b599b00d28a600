"""`format.atomic.atomic_open`, behind save, the checkpoint index and profiler traces:
the file appears whole or not at all, and a failure leaves no temp file behind."""

from __future__ import annotations

import os

import pytest

from onegraph.format.atomic import atomic_open


def test_writes_text_and_bytes_replacing_the_old_file(tmp_path):
    path = tmp_path / "f.txt"
    with atomic_open(path, "w") as f:
        f.write("first")
    with atomic_open(path, "wb") as f:
        f.write(b"second")
    assert path.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_error_inside_the_block_keeps_the_old_file_and_removes_the_temp(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError, match="half way"):
        with atomic_open(path, "w") as f:
            f.write("new, partly")
            assert len(os.listdir(tmp_path)) == 2  # the temp file sits next to it
            raise RuntimeError("half way")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_missing_folder_and_bad_mode_are_refused(tmp_path):
    with pytest.raises(FileNotFoundError):
        with atomic_open(tmp_path / "no" / "f.txt", "w") as f:
            f.write("x")
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(tmp_path / "f.txt", "a"):
            pass
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["no/f.og", "x.og/", ""])
def test_errors_name_the_path_given_not_the_temp_file(tmp_path, monkeypatch, name):
    # the CLI prints the error's filename: a user must see the path they typed
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.og").write_bytes(b"kept")
    with pytest.raises(OSError) as info:
        with atomic_open(name, "wb") as f:
            f.write(b"new")
    assert info.value.filename == name
    assert sorted(os.listdir(tmp_path)) == ["x.og"]
    assert (tmp_path / "x.og").read_bytes() == b"kept"
