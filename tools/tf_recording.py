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


def record_cases(cases_module: str, reference: str) -> None:
    """Run `cases.run(tf, name)` for every name of `cases.CASES` (tests/train/
    <cases_module>.py) under tf.compat.v1 and write the results to
    tests/train/data/<reference>."""
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    cases = load_cases(cases_module)
    recorded = {name: cases.run(tf, name) for name in cases.CASES}
    for name, result in recorded.items():
        print(name, json.dumps(result)[:300])
    write_reference(TRAIN_TESTS / "data" / reference, recorded)


def write_reference(path, data) -> None:
    """data as indented, key-sorted JSON at path, written to a temporary file first."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    print(f"wrote {path} ({len(data)} scenarios)")
