"""tools/min_requirements.py, which `make test-min-deps` installs the oldest allowed core
dependencies with, and the floors themselves."""

import importlib.util
import os

import pytest

pytest.importorskip("tomllib")  # the tool reads pyproject.toml with it (Python >= 3.11)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool():
    spec = importlib.util.spec_from_file_location(
        "min_requirements", os.path.join(REPO, "tools", "min_requirements.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("requirement, pinned", [
    ("numpy>=1.24", "numpy==1.24.*"),
    ("flatbuffers>=25.12.19", "flatbuffers==25.12.19"),
    ("pkg >= 2.1, <3", "pkg==2.1.*"),
    ("mpich", "mpich"),
])
def test_floors_become_pins(requirement, pinned):
    assert _tool().pinned_to_floor(requirement) == pinned


def test_the_core_floors_are_the_tested_ones(capsys):
    """numpy 1.24 (what Raspberry Pi OS 12 ships) and flatbuffers 25.12.19, the first
    whose Python builder shares vtables only between tables of one size (older ones let
    og.save write files og.load refuses: tests/format/test_roundtrip.py)."""
    assert _tool().main([]) == 0
    assert capsys.readouterr().out.split() == ["numpy==1.24.*", "flatbuffers==25.12.19"]


def test_unreadable_pyproject_is_exit_status_1(tmp_path, capsys):
    assert _tool().main([str(tmp_path / "missing.toml")]) == 1
    assert "cannot read" in capsys.readouterr().err
    empty = tmp_path / "pyproject.toml"
    empty.write_text("[project]\nname = 'x'\n")
    assert _tool().main([str(empty)]) == 1
    assert "lists no [project] dependencies" in capsys.readouterr().err
