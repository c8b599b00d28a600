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


_UNWRITABLE = "/proc/onegraph-test.og"  # /proc refuses new files, even to root
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"),
                                reason="needs Linux's /proc, a folder nobody can write")


@needs_proc
def test_a_folder_that_refuses_the_temp_file_is_named_as_the_target():
    # mkstemp's own error names the hidden temp file, which the user never typed
    with pytest.raises(OSError) as info:
        with atomic_open(_UNWRITABLE, "wb") as f:
            f.write(b"x")
    assert info.value.filename == _UNWRITABLE and ".tmp" not in str(info.value)


def test_a_failed_rename_names_the_target_and_removes_the_temp(tmp_path, monkeypatch):
    import errno

    import onegraph.format.atomic as atomic

    def refuse(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link", src, dst)

    monkeypatch.setattr(atomic.os, "replace", refuse)
    path = tmp_path / "f.og"
    with pytest.raises(OSError) as info:
        with atomic_open(path, "wb") as f:
            f.write(b"x")
    assert info.value.errno == errno.EXDEV and info.value.filename == str(path)
    assert ".tmp" not in str(info.value)
    assert os.listdir(tmp_path) == []


def test_check_writable_fails_where_atomic_open_would_and_creates_nothing(tmp_path):
    from onegraph.format.atomic import check_writable

    (tmp_path / "file").write_bytes(b"")
    check_writable(tmp_path / "new.og")
    check_writable(tmp_path / "new" / "deeper", folder=True)
    with pytest.raises(IsADirectoryError):
        check_writable(tmp_path)
    with pytest.raises(FileNotFoundError) as info:
        check_writable(tmp_path / "no" / "f.og")
    assert info.value.filename == str(tmp_path / "no" / "f.og")
    with pytest.raises(NotADirectoryError):
        check_writable(tmp_path / "file" / "out", folder=True)
    if os.path.isdir("/proc/self"):
        with pytest.raises(OSError) as info:
            check_writable(_UNWRITABLE)
        assert info.value.filename == _UNWRITABLE
    assert os.listdir(tmp_path) == ["file"]


def test_atomic_files_replace_their_targets_together_or_not_at_all(tmp_path):
    from onegraph.format.atomic import AtomicFiles

    (tmp_path / "a.txt").write_text("old a")
    (tmp_path / "b.txt").mkdir()  # the second target cannot be a file
    with pytest.raises(IsADirectoryError) as info:
        with AtomicFiles() as files:
            with files.open(tmp_path / "a.txt", "w") as f:
                f.write("new a")
            with files.open(tmp_path / "b.txt", "w") as f:
                f.write("new b")
    assert info.value.filename == str(tmp_path / "b.txt")
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]  # no temp file left
    (tmp_path / "b.txt").rmdir()
    with AtomicFiles() as files:
        with files.open(tmp_path / "a.txt", "w") as f:
            f.write("new a")
        assert (tmp_path / "a.txt").read_text() == "old a"  # nothing renamed yet
        with files.open(tmp_path / "b.txt", "w") as f:
            f.write("new b")
    assert (tmp_path / "a.txt").read_text() == "new a"
    assert (tmp_path / "b.txt").read_text() == "new b"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


def test_an_error_without_errno_raised_in_the_block_is_kept(tmp_path):
    """Only file-system errors are renamed onto the target; the caller's own OSError
    subclass without an errno came out as "[Errno None] ..." of plain OSError."""
    class Refused(OSError):
        pass

    with pytest.raises(Refused, match="^custom failure$"):
        with atomic_open(tmp_path / "x.bin") as f:
            f.write(b"partial")
            raise Refused("custom failure")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("where", ["rename", "commit"])
def test_an_interrupt_before_the_rename_leaves_no_temp_file(tmp_path, monkeypatch, where):
    """A KeyboardInterrupt (or the SystemExit of a SIGTERM handler) after the temp file
    is complete but before it is renamed removes it; the old file stays."""
    from onegraph.format import atomic

    path = tmp_path / "f.txt"
    path.write_text("old")
    real_replace = os.replace

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        if where == "rename":
            with atomic_open(path, "w") as f:
                f.write("new")
        else:
            with atomic.AtomicFiles() as files:
                with files.open(path, "w") as f:
                    f.write("new")
    monkeypatch.setattr(atomic.os, "replace", real_replace)
    assert os.listdir(tmp_path) == ["f.txt"] and path.read_text() == "old"


def test_writes_remove_temp_files_their_dead_writers_left(tmp_path):
    """A writer killed before its rename (SIGKILL) leaves its temp file; the next write
    into that folder removes it, but never the temp file of a live process."""
    from onegraph.format import atomic

    dead = tmp_path / f".tmp-999999999-{atomic._HOST}-abc.tmp"
    live = tmp_path / f".tmp-{os.getpid()}-{atomic._HOST}-def.tmp"
    dead.write_bytes(b"half a model")
    live.write_bytes(b"being written")
    with atomic_open(tmp_path / "f.txt", "w") as f:
        f.write("new")
    assert sorted(os.listdir(tmp_path)) == sorted(["f.txt", live.name])


def test_the_cli_turns_sigterm_into_systemexit_while_it_runs():
    import signal

    from onegraph.cli import _sigterm_exits

    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    with pytest.raises(SystemExit) as stop:
        with _sigterm_exits():
            os.kill(os.getpid(), signal.SIGTERM)
    assert stop.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
