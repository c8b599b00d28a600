"""onegraph's TF1 lookup tables against TensorFlow's recordings
(tools/record_tf_lookup.py -> data/tf1_lookup_reference.json): static tables from
tensors and text files, vocabulary tables with FarmHash OOV buckets, index tables,
mutable tables, SparseTensor keys, static shapes, sizes and TF's errors; and
MonitoredSession's default local init running tables_initializer()."""

from __future__ import annotations

import json
import pathlib
import types

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, NotFoundError
from onegraph.train import lookup

from . import lookup_cases as cases

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "tf1_lookup_reference.json").read_text())

# TF's error classes and the onegraph ones that stand for them
_ERRORS = {"InvalidArgumentError": (ExecutionError,), "FailedPreconditionError":
           (ExecutionError,), "ValueError": (ValueError,), "TypeError": (TypeError,),
           "NotFoundError": (NotFoundError,)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("lookup")
    for name, data in cases.FILES.items():
        (root / name).write_bytes(data)
    return str(root)


def _lib(folder):
    names = {n: getattr(lookup, n) for n in lookup.__all__}
    return types.SimpleNamespace(
        **names, constant=og.constant, placeholder=og.placeholder,
        SparseTensor=og.SparseTensor, string=og.string, int32=og.int32, int64=og.int64,
        float32=og.float32, path=lambda name: f"{folder}/{name}")


def _values(value) -> list:
    arr = np.asarray(value)
    if arr.dtype == object:
        return [(v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")).hex()
                for v in arr.reshape(-1)]
    if arr.dtype.kind == "f":
        return [repr(float(v)) for v in arr.reshape(-1)]
    return [int(v) for v in arr.reshape(-1)]


def _encode(t, v) -> dict:
    shape = t.shape
    return {"dtype": t.dtype.name.lower(),
            "static_shape": None if shape is None or shape.ndims is None else shape.as_list(),
            "shape": list(np.shape(v)), "values": _values(v)}


def _record(step, value):
    if isinstance(step, og.SparseTensor):
        return {"sparse": [_encode(step.indices, value.indices),
                           _encode(step.values, value.values),
                           _encode(step.dense_shape, value.dense_shape)]}
    if isinstance(step, (list, tuple)):
        return [_record(s, v) for s, v in zip(step, value)]
    if not isinstance(step, og.Tensor):
        return None
    return _encode(step, value)


def _run(name, folder):
    with og.Graph().as_default():
        built = cases.CASES[name](_lib(folder))
        steps, feed = built if isinstance(built, tuple) else (built, None)
        init = lookup.tables_initializer()
        out = []
        with og.Session() as sess:
            if name not in cases.NO_INIT:
                sess.run(init)
            for step in steps:
                out.append(_record(step, sess.run(step, feed)))
        return out


def _message(ref: dict, folder: str) -> str:
    """The part of TF's message onegraph reproduces (not TF's node and tensor names)."""
    text = ref["message"].replace("<dir>", folder)
    for cut in (" for '{{node", ": <tf.Tensor"):
        text = text.split(cut)[0]
    return text


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_against_tf(name, folder):
    ref = REF[name]
    if "error" in ref:
        with pytest.raises(_ERRORS[ref["error"]]) as info:
            _run(name, folder)
        assert _message(ref, folder) in str(info.value)
        return
    got = _run(name, folder)
    if name == "mutable_export":    # TF exports in its hash order: compare as pairs
        _, keys, values = got
        want_k, want_v = ref["steps"][1], ref["steps"][2]
        assert {k: v for k, v in zip(keys["values"], values["values"])} == \
            {k: v for k, v in zip(want_k["values"], want_v["values"])}
        assert keys["dtype"] == want_k["dtype"] and values["dtype"] == want_v["dtype"]
        return
    assert got == ref["steps"]


def test_usage_example():
    with og.Graph().as_default():
        table = lookup.index_table_from_tensor(og.constant(["a", "b", "c"]),
                                               num_oov_buckets=1)
        ids = table.lookup(og.constant(["b", "zz"]))
        with og.Session() as sess:
            sess.run(lookup.tables_initializer())
            assert sess.run(ids).tolist() == [1, 3]


def test_properties_and_collection():
    with og.Graph().as_default() as g:
        table = lookup.StaticHashTable(lookup.KeyValueTensorInitializer(
            ["a"], np.array([1], np.int64)), -1)
        assert table.key_dtype == og.string and table.value_dtype == og.int64
        assert g.get_collection("table_initializer") == [table.initializer]
        assert table.init is table.initializer
        assert lookup.TextFileIndex.WHOLE_LINE == -2
        assert lookup.TextFileIndex.LINE_NUMBER == -1


def test_tables_initializer_without_tables():
    with og.Graph().as_default():
        op = lookup.tables_initializer()
        with og.Session() as sess:
            assert sess.run(op) is None


def test_reinitialize_same_data_is_noop():
    with og.Graph().as_default():
        table = lookup.index_table_from_tensor(["x", "y"])
        ids = table.lookup(og.constant(["y"]))
        with og.Session() as sess:
            sess.run(lookup.tables_initializer())
            sess.run(lookup.tables_initializer())
            assert sess.run(ids).tolist() == [1]


def test_monitored_session_initializes_tables():
    want = REF["index_tensor"]["steps"][0]["values"]
    with og.Graph().as_default():
        table = lookup.index_table_from_tensor(og.constant(["a", "b", "c"]),
                                               num_oov_buckets=1)
        ids = table.lookup(og.constant(["b", "zz", "c", "a", "q"]))
        with og.train.MonitoredSession() as sess:
            assert sess.run(ids).tolist() == want
