"""og.sparse.cross / og.sparse.cross_hashed against TensorFlow's recordings
(tools/record_tf_sparse_cross.py -> data/tf1_sparse_cross_reference.json): each
recorded scenario's inputs are rebuilt under onegraph and the output SparseTensor's
indices, values, dense_shape and dtype must equal TF's, or the same error class (and
message) must be raised at the same stage."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import onegraph as og

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "tf1_sparse_cross_reference.json").read_text())

_DTYPES = {"string": og.string, "int64": og.int64, "int32": og.int32, "float32": og.float32}


def _build(spec):
    """The og input a recorded spec describes (a raw value for the error scenarios)."""
    if isinstance(spec, dict) and "sparse" in spec:
        ind, val, shape = spec["sparse"]
        return og.SparseTensor(og.constant(np.asarray(ind, np.int64).reshape(-1, len(shape))),
                               og.constant(val, _DTYPES[spec["dtype"]]),
                               og.constant(np.asarray(shape, np.int64)))
    if isinstance(spec, dict) and "dense" in spec:
        return og.constant(spec["dense"], _DTYPES[spec["dtype"]])
    return spec


def _run(rec):
    """What onegraph gives for a recorded scenario, in the recording's form."""
    with og.Graph().as_default():
        inputs = rec["inputs"]
        try:
            args = [_build(i) for i in inputs] if isinstance(inputs, list) else inputs
            out = getattr(og.sparse, rec["fn"])(args, **rec["kwargs"])
        except (ValueError, TypeError) as e:
            return {"error": type(e).__name__, "stage": "build", "message": str(e)}
        with og.Session() as sess:
            try:
                val = sess.run(out)
            except og.errors.InvalidArgumentError as e:
                return {"error": "InvalidArgumentError", "stage": "run", "message": str(e)}
    values = np.asarray(val.values)
    vals = [str(v) for v in values] if values.dtype.kind == "O" else \
        [int(v) for v in values]
    return {"indices": np.asarray(val.indices).tolist(), "values": vals,
            "dense_shape": np.asarray(val.dense_shape).tolist(),
            "dtype": out.values.dtype.name.lower()}


@pytest.mark.parametrize("name", sorted(REF))
def test_matches_tensorflow(name):
    rec = REF[name]
    got, want = _run(rec), rec["tf"]
    if "error" in want:
        assert got.get("error") == want["error"], got
        assert got["stage"] == want["stage"]
        assert want["message"] in got["message"], (got["message"], want["message"])
        return
    assert "error" not in got, got
    assert got == want


def test_recording_is_broad():
    """The recording covers what the brief asks: many scenarios, both functions,
    buckets, keys, separators, empty rows and errors (guards a shrunk recording)."""
    ok = [r for r in REF.values() if "error" not in r["tf"]]
    assert len(ok) >= 15
    assert {r["fn"] for r in ok} == {"cross", "cross_hashed"}
    assert any(r["kwargs"].get("num_buckets") for r in ok)
    assert any(r["kwargs"].get("hash_key") for r in ok)
    assert any("separator" in r["kwargs"] for r in ok)
    assert any(r["tf"]["dense_shape"][1] == 0 for r in ok)
    assert sum("error" in r["tf"] for r in REF.values()) >= 6


def test_negative_num_buckets_refused():
    sp = og.SparseTensor([[0, 0]], og.constant(["a"]), [1, 1])
    with pytest.raises(ValueError, match="num_buckets must be >= 0"):
        og.sparse.cross_hashed([sp], num_buckets=-1)


def test_sparse_tensor_value_accepted():
    val = og.SparseTensorValue(np.array([[0, 0], [1, 0]], np.int64),
                               np.array([3, 4], np.int64), np.array([2, 1], np.int64))
    with og.Graph().as_default():
        out = og.sparse.cross([val, og.constant([["a"], ["b"]])])
        with og.Session() as sess:
            got = sess.run(out)
    assert [str(v) for v in got.values] == ["3_X_a", "4_X_b"]
