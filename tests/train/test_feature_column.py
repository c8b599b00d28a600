"""onegraph's TF1 feature columns against TensorFlow's recordings
(tools/record_tf_feature_column.py -> data/tf1_feature_column_reference.json):
input_layer and linear_model outputs for every column kind with dense and sparse
inputs, OOV/default handling, hashed ids of many strings and integers, variable names
and shapes, static shapes, embedding gradients, make_parse_example_spec and TF's
errors; crossed columns (linear_model, indicator, embedding, nested) and shared
embedding columns (one variable, TF's name)."""

from __future__ import annotations

import json
import pathlib
import types

import numpy as np
import pytest

import onegraph as og
from onegraph.train import feature_column as fc

from . import feature_column_cases as cases

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "tf1_feature_column_reference.json").read_text())

# TF's messages end with a TF repr (tensor, reshape node) that onegraph words its own way
PREFIX_ONLY = {"err_rank0": "Feature (key: a) cannot have rank 0.",
               "err_numeric_shape": "Cannot reshape a tensor with 3 elements",
               # ... and a Python class path (tensorflow.python.feature_column...)
               "err_shared_kinds": "To use shared_embedding_column, all categorical_columns "
                                   "must have the same type, or be weighted_categorical_column "
                                   "or sequence column of the same type. Given column: "
                                   "IdentityCategoricalColumn(key='a', number_buckets=3, "
                                   "default_value=None) of type: <class '"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("fc")
    for name, data in cases.FILES.items():
        (root / name).write_bytes(data)
    return str(root)


def _dense(value):
    """og.convert_to_tensor, also densifying the IndexedSlices of an embedding gradient."""
    if isinstance(value, og.IndexedSlices):
        return value.to_dense()
    return og.convert_to_tensor(value)


def _lib(folder):
    return types.SimpleNamespace(
        fc=fc, constant=og.constant, placeholder=og.placeholder, SparseTensor=og.SparseTensor,
        string=og.string, int32=og.int32, int64=og.int64, float32=og.float32,
        constant_initializer=og.constant_initializer, gradients=og.gradients,
        reduce_sum=og.reduce_sum, global_variables=og.global_variables,
        trainable_variables=og.trainable_variables, convert_to_tensor=_dense,
        path=lambda n: f"{folder}/{n}")


def _values(value) -> list:
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        return [float(v) for v in arr.reshape(-1)]
    return [int(v) for v in arr.reshape(-1)]


def _check_static(ref, t):
    shape = t.shape
    if ref is None or shape.ndims is None:
        return
    got = shape.as_list()
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g is None or r is None or g == r, (got, ref)


@pytest.mark.parametrize("name", [n for n in cases.CASES if not n.startswith("err_")])
def test_scenario(name, folder):
    ref = REF[name]
    with og.Graph().as_default():
        built = cases.CASES[name](_lib(folder))
        outs = built["out"]
        got_vars = [[v.name.split(":")[0], v.shape.as_list()] for v in og.global_variables()]
        assert got_vars == ref["variables"]
        if "spec" in outs:
            assert cases.spec_record(outs["spec"]) == ref["spec"]
            return
        if "names" in outs:
            assert outs["names"] == ref["names"]
            return
        init = [og.global_variables_initializer(), og.tables_initializer()]
        with og.Session() as sess:
            sess.run(init)
            if built.get("assign"):
                for v in og.global_variables():
                    sess.run(og.assign(v, cases.fill(v.shape.as_list())))
            keys = sorted(outs)
            vals = sess.run([outs[k] for k in keys], built.get("feed"))
    for k, v in zip(keys, vals):
        r = ref["out"][k]
        assert list(np.shape(v)) == r["shape"], k
        assert outs[k].dtype.name.lower() == r["dtype"], k
        _check_static(r["static_shape"], outs[k])
        want = [float(x) if isinstance(x, str) else x for x in r["values"]]
        np.testing.assert_allclose(_values(v), want, rtol=2e-6, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("name", [n for n in cases.CASES if n.startswith("err_")])
def test_error(name, folder):
    ref = REF[name]
    with og.Graph().as_default():
        if "no_error" in ref:
            cases.CASES[name](_lib(folder))
            return
        if "error" not in ref:  # TF builds and runs it: so must onegraph
            built = cases.CASES[name](_lib(folder))
            assert built["out"]
            return
        with pytest.raises((ValueError, TypeError)) as info:
            cases.CASES[name](_lib(folder))
    assert type(info.value).__name__ == ref["error"]
    msg = str(info.value)
    if name in PREFIX_ONLY:
        assert msg.startswith(PREFIX_ONLY[name]) and ref["message"].startswith(PREFIX_ONLY[name])
    else:
        assert msg == ref["message"]


def test_hash_ids_cover_many_strings():
    """The hashed-id scenarios really exercise distinct buckets (guards the recording)."""
    vals = REF["hash_str"]["out"]["net"]["values"]
    assert len(set(vals)) == len(cases.WORDS)
