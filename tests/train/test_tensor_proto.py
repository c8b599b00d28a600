"""make_tensor_proto / make_ndarray (train/tensor_proto.py) against TensorFlow's
recordings (tools/record_tf_sparse_serialize.py -> data/tf1_sparse_serialize_reference.json):
the proto's bytes and text equal TF's, TF's errors and words, make_ndarray of TF's bytes."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import DataLossError
from onegraph.train import tensor_proto as tp

from . import sparse_serialize_cases as cases

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "tf1_sparse_serialize_reference.json").read_text())["make_tensor_proto"]


def _kwargs(name: str) -> dict:
    kw = dict(cases.PROTOS[name])
    if "np" in kw:
        data, dt = kw.pop("np")
        kw["values"] = np.array(data, dtype=dt)
    return kw


def _same_values(got: np.ndarray, ref: dict) -> None:
    assert got.dtype.name == ref["dtype"]
    assert list(got.shape) == ref["shape"]
    flat = got.reshape(-1).tolist()
    if got.dtype == object:
        assert [v.hex() for v in flat] == ref["values"]
    elif got.dtype.kind == "f":
        want = [float(v) for v in ref["values"]]
        assert all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(flat, want))
        assert len(flat) == len(want)
    else:
        assert flat == ref["values"]


@pytest.mark.parametrize("name", sorted(cases.PROTOS))
def test_make_tensor_proto_matches_tf(name):
    ref = REF[name]
    if "error" in ref:
        with pytest.raises(getattr(__builtins__, ref["error"], None) or Exception) as info:
            tp.make_tensor_proto(**_kwargs(name))
        assert type(info.value).__name__ == ref["error"]
        words = ref["message"].split(":")[0] if name == "ragged" else ref["message"]
        assert words in str(info.value)
        return
    proto = tp.make_tensor_proto(**_kwargs(name))
    assert proto.SerializeToString().hex() == ref["hex"]
    assert str(proto) == ref["text"]
    _same_values(tp.make_ndarray(proto), ref)


@pytest.mark.parametrize("name", sorted(n for n in REF if "hex" in REF[n]))
def test_make_ndarray_of_tf_bytes(name):
    proto = tp.TensorProto.FromString(bytes.fromhex(REF[name]["hex"]))
    _same_values(tp.make_ndarray(proto), REF[name])
    assert proto.SerializeToString().hex() == REF[name]["hex"]
    assert str(proto) == REF[name]["text"]


def test_every_scenario_recorded():
    assert sorted(REF) == sorted(cases.PROTOS)


def test_og_dtypes_and_equality():
    a = tp.make_tensor_proto([1, 2], dtype=og.float32)
    assert a == tp.make_tensor_proto(np.array([1, 2], np.float32))
    assert a != tp.make_tensor_proto([1, 2], dtype=og.float64)
    assert tp.make_tensor_proto(a) is a
    assert [d.size for d in a.tensor_shape.dim] == [2]
    assert a.dtype == 1 and a.tensor_content == np.array([1, 2], np.float32).tobytes()


def test_bad_inputs():
    with pytest.raises(TypeError, match="needs a TensorProto"):
        tp.make_ndarray(np.zeros(2))
    with pytest.raises(DataLossError):
        tp.TensorProto.FromString(b"\x0a\x05ab")
    with pytest.raises(TypeError, match="needs bytes"):
        tp.TensorProto.FromString("text")
    with pytest.raises(ValueError, match="no field"):
        tp.TensorProto(nope=1)
