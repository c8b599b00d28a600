"""serialize_sparse / serialize_many_sparse / deserialize_many_sparse
(train/api_sparse_serialize.py) and decode_json_example (train/api_json_example.py)
against TensorFlow's recordings (tools/record_tf_sparse_serialize.py ->
data/tf1_sparse_serialize_reference.json): bytes equal TF's, TF's bytes deserialize to
TF's values, static shapes, TF's errors and words, a round trip through a FIFOQueue."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import InvalidArgumentError, OneGraphError, ShapeError
from onegraph.train import api_json_example as jx
from onegraph.train import api_sparse_serialize as ss
from onegraph.train.example_proto import Example

from . import sparse_serialize_cases as cases

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "tf1_sparse_serialize_reference.json").read_text())


def _value(name: str) -> og.SparseTensorValue:
    indices, values, dtype, shape = cases.SPARSE[name]
    kind = object if dtype == "string" else dtype
    return og.SparseTensorValue(np.array(indices, np.int64).reshape(-1, len(shape)),
                                np.array(values, dtype=kind), np.array(shape, np.int64))


def _hex(arr) -> list:
    return [v.encode("utf-8", "surrogateescape").hex() if isinstance(v, str) else v.hex()
            for v in np.asarray(arr, dtype=object).reshape(-1).tolist()]


def _from_hex(rows) -> np.ndarray:
    text = [bytes.fromhex(h).decode("utf-8", "surrogateescape") for h in rows]
    return np.array(text, dtype=object)


def _run(fetch):
    with og.Session() as sess:
        return sess.run(fetch)


def _static(shape):
    return None if shape is None else list(shape)


def _check_strings(build, ref):
    with og.Graph().as_default():
        if ref.get("when") == "build":
            with pytest.raises((ValueError, TypeError, OneGraphError)):
                build()
            return
        out = build()
        if "error" in ref:
            with pytest.raises(InvalidArgumentError) as info:
                _run(out)
            assert ref["message"] in str(info.value)
            return
        assert _static(out.shape) == ref["static"]
        got = _run(out)
        assert list(got.shape) == ref["shape"]
        assert _hex(got) == ref["hex"]


@pytest.mark.parametrize("name", sorted(REF["serialize_sparse"]))
def test_serialize_sparse_bytes_equal_tf(name):
    _check_strings(lambda: ss.serialize_sparse(_value(name)), REF["serialize_sparse"][name])


@pytest.mark.parametrize("name", sorted(REF["serialize_many_sparse"]))
def test_serialize_many_sparse_bytes_equal_tf(name):
    ref = REF["serialize_many_sparse"][name]
    if name == "i64_1d":    # the rank is known while building here: refused at once
        with og.Graph().as_default(), pytest.raises(ValueError, match="should be > 1"):
            ss.serialize_many_sparse(_value(name))
        return
    _check_strings(lambda: ss.serialize_many_sparse(_value(name)), ref)


def _check_sparse(got, ref):
    assert np.asarray(got.indices).reshape(-1).tolist() == \
        np.asarray(ref["indices"], np.int64).reshape(-1).tolist()
    assert np.asarray(got.indices).shape[0] == len(ref["values"])
    assert got.values.dtype.name == ref["dtype"]
    if ref["dtype"] == "object":
        assert _hex(got.values) == ref["values"]
    elif got.values.dtype.kind == "f":
        assert got.values.tolist() == [float(v) for v in ref["values"]]
    else:
        assert got.values.tolist() == ref["values"]
    assert got.dense_shape.tolist() == ref["dense_shape"]


@pytest.mark.parametrize("name", sorted(cases.MANY))
def test_deserialize_tf_rows(name):
    """TF's own serialize_many_sparse rows deserialize to TF's SparseTensor."""
    ref = REF["deserialize_many_sparse"][name]
    many = REF["serialize_many_sparse"][name]
    if "error" in many:
        return
    dtype = cases.SPARSE[name][2]
    with og.Graph().as_default():
        rows = _from_hex(many["hex"]).reshape(many["shape"])
        sp = ss.deserialize_many_sparse(rows, og.string if dtype == "string" else dtype)
        assert [_static(sp.indices.shape), _static(sp.values.shape)] == ref["static"][:2]
        _check_sparse(_run(sp), ref)


@pytest.mark.parametrize("name", sorted(cases.STACKS))
def test_deserialize_stacks_rows_of_different_shapes(name):
    ref = REF["deserialize_many_sparse"][name]
    parts = cases.STACKS[name]
    rows = np.stack([_from_hex(REF["serialize_sparse"][p]["hex"]) for p in parts])
    rank = len(cases.SPARSE[parts[0]][3]) + 1
    with og.Graph().as_default():
        sp = ss.deserialize_many_sparse(rows, cases.SPARSE[parts[0]][2], rank=rank)
        assert _static(sp.indices.shape) == ref["static"][0]
        assert _static(sp.get_shape()) == ref["static"][2]
        _check_sparse(_run(sp), ref)


def _rows(parts):
    return np.stack([_from_hex(REF["serialize_sparse"][p]["hex"]) for p in parts])


@pytest.mark.parametrize("case", [("wrong_dtype", ["f32_2d"], "int64"),
                                  ("mixed_rank", ["i64_2d", "empty_3d"], "int64")])
def test_deserialize_errors_run(case):
    key, parts, dtype = case
    with og.Graph().as_default():
        sp = ss.deserialize_many_sparse(_rows(parts), dtype)
        with pytest.raises(InvalidArgumentError) as info:
            _run(sp)
        assert REF["errors"][key]["message"] in str(info.value)


def test_deserialize_other_errors():
    with og.Graph().as_default():
        bad = ss.deserialize_many_sparse(np.array([["\udcff\udcff", "b", "c"]], object),
                                         og.float32)
        with pytest.raises(InvalidArgumentError, match=REF["errors"]["not_proto"]["message"]):
            _run(bad)
        empty = og.placeholder(og.string, [None, 3])
        sp = ss.deserialize_many_sparse(empty, og.float32)
        with og.Session() as sess, pytest.raises(InvalidArgumentError) as info:
            sess.run(sp, {empty: np.zeros((0, 3), object)})
        assert REF["errors"]["empty_batch"]["message"] in str(info.value)
        assert REF["errors"]["vector_input"]["when"] == "build"
        with pytest.raises(ShapeError, match="rank 2 but is rank 1"):
            ss.deserialize_many_sparse(ss.serialize_sparse(_value("f32_2d")), og.float32)
        with pytest.raises(ShapeError, match="Dimension must be 3 but is 2"):
            ss.deserialize_many_sparse(np.array([["a", "b"]], object), og.float32)
        with pytest.raises(TypeError, match="string tensor"):
            ss.deserialize_many_sparse(og.constant([[1, 2, 3]]), og.float32)


def test_serialize_errors():
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="variant is not supported"):
            ss.serialize_sparse(_value("f32_2d"), out_type="variant")
        with pytest.raises(TypeError, match="out_type must be og.string"):
            ss.serialize_many_sparse(_value("f32_2d"), out_type=og.int32)
        with pytest.raises(TypeError, match="needs a SparseTensor"):
            ss.serialize_sparse(og.constant([1.0]))
        ph = og.sparse_placeholder(og.float32)
        many = ss.serialize_many_sparse(ph)
        with og.Session() as sess, pytest.raises(InvalidArgumentError) as info:
            sess.run(many, {ph: og.SparseTensorValue([[0]], [1.0], [3])})
        assert REF["errors"]["many_rank1"]["message"] in str(info.value)


def test_round_trip_through_fifo_queue():
    """TF1's pattern: serialized rows through a queue, deserialized in a batch."""
    ref = REF["deserialize_many_sparse"]["f32_2d"]
    with og.Graph().as_default():
        q = og.FIFOQueue(10, [og.string], shapes=[[3]])
        rows = ss.serialize_many_sparse(_value("f32_2d"))
        enq = q.enqueue_many([rows])
        batch = q.dequeue_many(2)
        sp = ss.deserialize_many_sparse(batch, og.float32, rank=2)
        with og.Session() as sess:
            sess.run(enq)
            _check_sparse(sess.run(sp), ref)


# ---------------------------------------------------------------- decode_json_example

@pytest.mark.parametrize("name", sorted(cases.JSON))
def test_decode_json_example_matches_tf(name):
    ref = REF["decode_json_example"][name]
    with og.Graph().as_default():
        out = jx.decode_json_example(cases.JSON[name])
        if "error" in ref:
            with pytest.raises(InvalidArgumentError, match="Error while parsing JSON"):
                _run(out)
            return
        assert _static(out.shape) == ref["static"]
        got = _run(out)
        assert _hex(got) == ref["hex"]
    for h in ref["hex"]:      # and the bytes are an Example example_proto reads
        Example.FromString(bytes.fromhex(h))


def test_decode_json_example_bad_input():
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="string tensor"):
            jx.decode_json_example(og.constant([1, 2]))
        with pytest.raises(TypeError, match="must be strings"):
            jx.decode_json_example([1, 2])
