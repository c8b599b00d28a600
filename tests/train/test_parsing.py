"""Example parsing (train/api_parsing.py, ops/parsing.py) against TensorFlow's results
recorded by tools/record_tf_parsing.py for the scenarios of parsing_cases.py: values,
dtypes, static shapes, sparse components and error messages, on TF's own bytes."""

from __future__ import annotations

import json
import os
import types

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, OutOfRangeError
from onegraph.ops.regex_re2 import text_bytes
from onegraph.train import api_parsing, example_proto
from onegraph.train import data as tfdata

from .parsing_cases import error_cases, parse_cases, pipeline

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "tf1_parsing_reference.json")) as _fh:
    REF = json.load(_fh)
SERIALIZED = {k: bytes.fromhex(v) for k, v in REF["protos"].items()}


def og_module():
    """onegraph under the names parsing_cases.py uses (tf.io.*, tf.train.Example...)."""
    return types.SimpleNamespace(
        train=example_proto, io=api_parsing, data=og.data, float32=og.float32,
        int64=og.int64, string=og.string, int32=og.int32)


OG = og_module()


def _feed(data):
    if isinstance(data, (list, tuple)):
        x = og.placeholder(og.string, [len(data) if isinstance(data, tuple) else None])
        return x, {x: np.array([SERIALIZED[d] if isinstance(d, str) else d for d in data] or
                               np.zeros(0), dtype=object)}
    x = og.placeholder(og.string, [])
    return x, {x: SERIALIZED[data] if isinstance(data, str) else data}


def _plain(value):
    """As the recorder stores values: lists, strings as hex of their bytes."""
    arr = np.asarray(value)
    if arr.dtype == object:
        return np.vectorize(lambda v: (v if isinstance(v, bytes) else text_bytes(v)).hex(),
                            otypes=[object])(arr).tolist() if arr.size else arr.tolist()
    return arr.tolist()


def _shape(t):
    shape = t.get_shape()
    return None if shape.ndims is None else shape.as_list()


_DTYPES = {og.float32: "float32", og.int64: "int64", og.string: "string"}


def _describe(tensors: dict, values: dict) -> dict:
    out = {}
    for key, t in tensors.items():
        v = values[key]
        if isinstance(t, og.SparseTensor):
            assert np.asarray(v.values).dtype == np.dtype(
                {"float32": np.float32, "int64": np.int64, "string": object}[
                    _DTYPES[t.values.dtype]])
            out[key] = {"sparse": True, "dtype": _DTYPES[t.values.dtype],
                        "indices_shape": _shape(t.indices), "values_shape": _shape(t.values),
                        "dense_shape_shape": _shape(t.dense_shape),
                        "indices": _plain(v.indices), "values": _plain(v.values),
                        "dense_shape": _plain(v.dense_shape)}
            assert np.asarray(v.indices).dtype == np.int64
            assert np.asarray(v.dense_shape).dtype == np.int64
        else:
            out[key] = {"sparse": False, "dtype": _DTYPES[t.dtype], "shape": _shape(t),
                        "value": _plain(v)}
    return out


@pytest.mark.parametrize("name", sorted(parse_cases(OG)))
def test_parse_matches_tf(name):
    data, fn = parse_cases(OG)[name]
    with og.Graph().as_default():
        x, feed = _feed(data)
        got = fn(x)
        parts = got if isinstance(got, tuple) else (got,)
        with og.Session() as sess:
            values = sess.run(list(parts), feed)
        described = [_describe(p, v) for p, v in zip(parts, values)]
    assert described == REF["cases"][name]


@pytest.mark.parametrize("name", sorted(error_cases(OG)))
def test_errors_match_tf(name):
    data, fn = error_cases(OG)[name]
    ref = REF["errors"][name]
    with og.Graph().as_default():
        x, feed = _feed(data)
        if ref["stage"] == "build":
            kind = {"ValueError": ValueError, "TypeError": TypeError}[ref["type"]]
            with pytest.raises(kind) as info:
                fn(x)
        else:
            got = fn(x)
            with og.Session() as sess, pytest.raises(ExecutionError) as info:
                sess.run(got, feed)
    message = str(info.value)
    if name == "spec_bad_default":          # TF's text goes on about its Reshape node
        assert ref["message"].startswith(message.split(" (the default")[0])
    elif name == "spec_bad_type":
        assert "DataType int32 not in list of allowed values: float32, int64, string" in \
            ref["message"] and "DataType int32 not in list of allowed values" in message
    else:
        assert ref["message"] in message, (ref["message"], message)


def test_pipeline_over_tf_records(tmp_path):
    path = tmp_path / "records.tfrecord"
    path.write_bytes(bytes.fromhex(REF["records_file"]))
    with og.Graph().as_default():
        ds = pipeline(OG, str(path))
        nxt = tfdata.make_one_shot_iterator(ds).get_next()
        assert {k: _shape(v) for k, v in nxt.items()} == REF["pipeline_shapes"]
        batches = []
        with og.Session() as sess:
            while True:
                try:
                    batches.append({k: _plain(v) for k, v in sess.run(nxt).items()})
                except OutOfRangeError:
                    break
    assert batches == REF["pipeline"]


def test_str_and_bytes_inputs_agree():
    spec = {"name": OG.io.VarLenFeature(og.string), "x": OG.io.FixedLenFeature([2], og.float32)}
    with og.Graph().as_default():
        x = og.placeholder(og.string, [None])
        got = OG.io.parse_example(x, spec)
        with og.Session() as sess:
            a = sess.run(got, {x: np.array([SERIALIZED["basic2"]], dtype=object)})
            text = SERIALIZED["basic2"].decode("utf-8", "surrogateescape")
            b = sess.run(got, {x: np.array([text], dtype=object)})
    assert a["name"].values.tolist() == b["name"].values.tolist() == ["p", "q", "r"]
    assert a["x"].tolist() == b["x"].tolist()


def test_serialized_must_be_strings_of_the_right_rank():
    spec = {"x": OG.io.FixedLenFeature([2], og.float32)}
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="rank 0"):
            OG.io.parse_single_example(og.placeholder(og.string, [3]), spec)
        with pytest.raises(ValueError, match="rank 1"):
            OG.io.parse_example(og.placeholder(og.string, []), spec)
        with pytest.raises(TypeError, match="string tensor"):
            OG.io.parse_example(og.placeholder(og.float32, [2]), spec)
        with pytest.raises(ValueError, match="shape must be a list"):
            OG.io.parse_example(og.placeholder(og.string, [2]),
                                {"x": OG.io.FixedLenFeature([None], og.float32)})
