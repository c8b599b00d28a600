"""onegraph's TF1 file and record decoding functions against TensorFlow's recordings
(tools/record_tf_io_ops.py -> data/tf1_io_ops_reference.json): decode_csv, decode_raw,
decode_padded_raw, serialize_tensor / parse_tensor (TF's TensorProto bytes),
decode_compressed of streams TF wrote, read_file / write_file, matching_files."""

from __future__ import annotations

import json
import os
import pathlib
import types

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import DataLossError, ExecutionError, NotFoundError, OneGraphError
from onegraph.train import api_io_ops as io

from . import io_ops_cases as cases

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "tf1_io_ops_reference.json").read_text())

LIB = types.SimpleNamespace(
    **{name: getattr(io, name) for name in io.__all__}, constant=og.constant,
    placeholder=og.placeholder, string=og.string, float16=og.float16, float32=og.float32,
    float64=og.float64, int16=og.int16, int32=og.int32, int64=og.int64, uint8=og.uint8,
    bool=og.bool)

# TF's error classes and the onegraph ones that stand for them
_ERRORS = {"InvalidArgumentError": (ExecutionError, ValueError, TypeError),
           "ValueError": (ValueError,), "TypeError": (TypeError,),
           "DataLossError": (DataLossError,), "NotFoundError": (NotFoundError,)}


def _dtype_name(t) -> str:
    return t.dtype.name.lower()


def _static(t):
    shape = t.shape
    return None if shape is None or shape.ndims is None else shape.as_list()


def _values(value) -> list:
    arr = np.asarray(value)
    if arr.dtype == object:
        return [(v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")).hex()
                for v in arr.reshape(-1)]
    if arr.dtype.kind == "f":
        return [repr(float(v)) for v in arr.reshape(-1)]
    return [int(v) for v in arr.reshape(-1)]


def _run_og(build):
    with og.Graph().as_default():
        fetches, feed = build(LIB)
        many = isinstance(fetches, (list, tuple))
        fetch_list = list(fetches) if many else [fetches]
        with og.Session() as sess:
            values = sess.run(fetch_list, feed)
        return many, fetch_list, values


def _check_against(build, ref: dict) -> None:
    if "error" in ref:
        with pytest.raises(_ERRORS[ref["error"]]) as info:
            _run_og(build)
        assert ref["message"] in str(info.value)
        return
    many, tensors, values = _run_og(build)
    assert many == ref["list"]
    assert len(tensors) == len(ref["outputs"])
    for t, v, want in zip(tensors, values, ref["outputs"]):
        assert _dtype_name(t) == want["dtype"]
        assert _static(t) == want["static_shape"]
        assert list(np.shape(v)) == want["shape"]
        assert _values(v) == want["values"]


TABLES = {**cases.CSV_CASES, **cases.RAW_CASES, **cases.SERIALIZE_CASES}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_matches_tf(name):
    _check_against(TABLES[name], REF[name])


def test_every_recorded_scenario_is_checked():
    assert set(TABLES) <= set(REF)
    assert any("error" in REF[k] for k in cases.CSV_CASES)
    assert any("error" in REF[k] for k in cases.RAW_CASES)


@pytest.mark.parametrize("name", sorted(cases.SERIALIZE_CASES))
def test_parse_tf_bytes(name):
    """og parses TF's own TensorProto bytes back to TF's values."""
    data = bytes.fromhex(REF[name]["outputs"][0]["values"][0])
    value = cases.SERIALIZE_VALUES[name]
    kind = "string" if value.dtype == object else value.dtype.name
    _check_against(cases.parse_case(data, kind), REF["parse_" + name])


def test_parse_errors():
    data = bytes.fromhex(REF["ser_float32_2x3"]["outputs"][0]["values"][0])
    _check_against(cases.parse_case(data, "int32"), REF["parse_err_type"])
    _check_against(cases.parse_case(b"\xff\xff\xff", "float32"), REF["parse_err_garbage"])


@pytest.mark.parametrize("kind", ["ZLIB", "GZIP", "none"])
def test_decode_compressed_tf_streams(kind):
    ref = REF[f"compressed_{kind}"]
    _check_against(cases.compress_case(bytes.fromhex(ref["input"]),
                                       "" if kind == "none" else kind), ref)


def test_decode_compressed_bad_data():
    _check_against(cases.compress_case(b"not zlib", "ZLIB"), REF["compressed_err_bad"])


def test_file_round_trip(tmp_path):
    ref = REF["file_round_trip"]
    path = str(tmp_path / "new" / "deeper" / "f.bin")
    contents = bytes.fromhex(ref["contents"])
    with og.Graph().as_default():
        w = io.write_file(path, np.array(contents, dtype=object))
        r = io.read_file(path)
        assert _static(r) == ref["static_shape"]
        with og.Session() as sess:
            sess.run(w)
            got = sess.run(r)
    assert _values(got) == [ref["read"]]
    # written atomically: the file and nothing else (no temp file left behind)
    assert os.listdir(tmp_path / "new" / "deeper") == ["f.bin"]


def test_write_file_replaces(tmp_path):
    path = str(tmp_path / "x.txt")
    with og.Graph().as_default():
        ops = [io.write_file(path, text) for text in ("first, longer", "second")]
        with og.Session() as sess:
            for op in ops:
                sess.run(op)
    assert pathlib.Path(path).read_bytes() == b"second"


def test_read_missing(tmp_path):
    want = REF["read_missing"]
    with og.Graph().as_default():
        r = io.read_file(str(tmp_path / "missing.txt"))
        with og.Session() as sess, pytest.raises(_ERRORS[want["error"]]) as info:
            sess.run(r)
    assert want["message"].replace("<dir>", str(tmp_path)) in str(info.value)


@pytest.mark.parametrize("name", sorted(cases.MATCH_PATTERNS))
def test_matching_files(tmp_path, name):
    for rel in cases.MATCH_FILES:
        path = tmp_path / "tree" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rel.encode())
    root = str(tmp_path / "tree") + "/"
    ref = REF[name]
    with og.Graph().as_default():
        t = io.matching_files([root + p for p in ref["patterns"]])
        assert _static(t) == ref["static_shape"]
        with og.Session() as sess:
            found = sess.run(t)
    assert [f[len(root):] for f in found.tolist()] == ref["found"]


# ------------------------------------------------------------------ bad inputs

@pytest.mark.parametrize("call, error, words", [
    (lambda: io.decode_raw(og.constant([1.0]), og.int32), TypeError, "string tensor"),
    (lambda: io.decode_raw(og.constant(["ab"]), og.string), TypeError, "out_type"),
    (lambda: io.decode_raw(["ab"], og.int8, bytes=["cd"]), ValueError, "exactly one"),
    (lambda: io.decode_csv(og.constant([1]), [[0]]), TypeError, "string tensor"),
    (lambda: io.decode_csv(["1"], [[[0]]]), ValueError, "at most rank 1"),
    (lambda: io.decode_csv(["1"], [[0, 1]]), ValueError, "only be 1 default"),
    (lambda: io.decode_csv(["1"], [[True]]), TypeError, "record_defaults[0]"),
    (lambda: io.decode_csv(["1"], [[0]], select_cols=[-1]), ValueError, "negative"),
    (lambda: io.decode_csv(["1"], "0"), TypeError, "must be a list"),
    (lambda: io.decode_compressed(["x"], "BZIP2"), ValueError, "Only ZLIB, GZIP"),
    (lambda: io.parse_tensor("x", "complex64"), OneGraphError, "complex64"),
    (lambda: io.read_file(["a", "b"]), ValueError, "rank 0"),
    (lambda: io.write_file("a", ["x", "y"]), ValueError, "rank 0"),
    (lambda: io.matching_files([["a"]]), ValueError, "at most rank 1"),
    (lambda: io.decode_padded_raw(["ab"], 3, og.int16), ValueError, "multiple"),
    (lambda: io.serialize_tensor(og.constant(1.0), name=3), TypeError, "name"),
])
def test_bad_inputs(call, error, words):
    with og.Graph().as_default():
        with pytest.raises(error) as info:
            call()
    assert words in str(info.value)


def test_decode_raw_bytes_alias():
    with og.Graph().as_default():
        t = io.decode_raw(bytes=np.array([b"\x01\x00\x02\x00"], dtype=object),
                          out_type=og.uint16)
        with og.Session() as sess:
            assert sess.run(t).tolist() == [[1, 2]]


def test_truncated_stream_is_data_loss():
    import zlib
    data = zlib.compress(b"abc" * 100)[:-5]
    with og.Graph().as_default():
        t = io.decode_compressed(np.array([data], dtype=object), "ZLIB")
        with og.Session() as sess, pytest.raises(DataLossError):
            sess.run(t)
