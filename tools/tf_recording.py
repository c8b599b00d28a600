"""Shared pieces of the tools/record_tf_*.py scripts: loading a scenario module of
tests/train (shared with the test that reads the recording) and writing a reference
file whole (a temporary file renamed into place)."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRAIN_TESTS = ROOT / "tests" / "train"


def load_cases(name: str):
    """The module tests/train/<name>.py, loaded without importing the tests package."""
    spec = importlib.util.spec_from_file_location(name, TRAIN_TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_reference(path, data) -> None:
    """data as indented, key-sorted JSON at path, written to a temporary file first."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    print(f"wrote {path} ({len(data)} scenarios)")
