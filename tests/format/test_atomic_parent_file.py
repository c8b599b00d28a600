"""Paths that cannot be written or read are named for what is wrong with them: a folder
part that is a file (not "the folder does not exist"), a file's contents given as its
name (shown in part, not whole)."""

import errno

import pytest

import onegraph as og
from onegraph.format.atomic import atomic_open, check_writable


@pytest.fixture
def blocker(tmp_path):
    path = tmp_path / "data.npy"
    path.write_bytes(b"not a folder")
    return path


def test_atomic_open_names_the_file_in_the_way(blocker):
    target = blocker / "x.og"
    with pytest.raises(NotADirectoryError) as info:
        with atomic_open(str(target)) as f:
            f.write(b"never")
    assert info.value.errno == errno.ENOTDIR
    assert str(info.value) == f"cannot write '{target}': '{blocker}' is a file, not a folder"
    assert blocker.read_bytes() == b"not a folder"


def test_check_writable_and_save_say_the_same(blocker, tmp_path):
    g = og.Graph()
    with g.as_default():
        og.identity(og.placeholder("float32", [1], name="x"), name="y")
    target = str(blocker / "m.og")
    with pytest.raises(NotADirectoryError) as checked:
        check_writable(target)
    with pytest.raises(NotADirectoryError) as saved:
        og.save(g.to_model(), target)
    assert str(checked.value) == str(saved.value)
    assert "is a file, not a folder" in str(saved.value)


def test_a_missing_folder_is_still_said_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="the folder does not exist"):
        check_writable(str(tmp_path / "nowhere" / "m.og"))


def test_a_model_passed_as_bytes_for_a_path_is_named_briefly(tmp_path):
    g = og.Graph()
    with g.as_default():
        og.identity(og.placeholder("float32", [1], name="x"), name="y")
    path = tmp_path / "m.og"
    og.save(g.to_model(), str(path))
    data = path.read_bytes()
    with pytest.raises(ValueError) as info:
        og.load(data)
    text = str(info.value)
    assert len(text) < 300, text  # not the whole file
    assert f"({len(data)} characters)" in text
    assert "the path contains a NUL byte" in text and "onegraph.format.parse" in text
    assert og.format.parse(data).graphs  # what the hint says works


def test_a_short_path_with_a_nul_byte_is_shown_whole(tmp_path):
    with pytest.raises(ValueError, match=r"^cannot write 'a\\x00b': the path contains a "
                                         r"NUL byte$"):
        check_writable("a\0b")
