"""Record TensorFlow's sparse serialization, make_tensor_proto / make_ndarray and
decode_json_example results for tests/train/test_sparse_serialize.py and
tests/train/test_tensor_proto.py.

Run by hand with the scratch TF venv (never imported by tests):

    /tmp/s51/tfvenv/bin/python tools/record_tf_sparse_serialize.py

Runs the scenarios of tests/train/sparse_serialize_cases.py under tf.compat.v1 (graph
mode) and writes tests/train/data/tf1_sparse_serialize_reference.json: bytes as hex,
values as lists (strings as hex), static shapes, and errors as (class, first line).
"""

from __future__ import annotations

import numpy as np
import tensorflow.compat.v1 as tf

from tf_recording import TRAIN_TESTS, load_cases, write_reference  # noqa: E402

tf.disable_eager_execution()

OUT = TRAIN_TESTS / "data" / "tf1_sparse_serialize_reference.json"
CASES = load_cases("sparse_serialize_cases")


def _sparse_value(name):
    indices, values, dtype, shape = CASES.SPARSE[name]
    if dtype == "string":
        values = [v.encode("utf-8") for v in values]
    ind = np.array(indices, np.int64).reshape(-1, len(shape))
    return tf.SparseTensor(ind, tf.constant(values, dtype=tf.as_dtype(dtype), shape=[len(values)]),
                           np.array(shape, np.int64))


def _values(arr) -> list:
    arr = np.asarray(arr)
    if arr.dtype == object:
        return [v.hex() for v in arr.reshape(-1).tolist()]
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    return [repr(v) if isinstance(v, float) else v for v in arr.reshape(-1).tolist()]


def _shape(static) -> list | None:
    return None if static.ndims is None else [d for d in static.as_list()]


def _error(e) -> dict:
    # OpError's first line is "Graph execution error:": keep the first line of TF's words
    lines = [ln.strip() for ln in str(getattr(e, "message", e)).splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("Graph execution", "Detected at",
                                                              "File ", "[[", "Node:"))]
    words = [ln for ln in lines if "node" not in ln[:5]]
    return {"error": type(e).__name__, "message": (words or lines or [""])[0]}


def _run(build):
    """Build in a fresh graph and run; the outputs or the error (and when it came)."""
    with tf.Graph().as_default():
        try:
            out = build()
        except Exception as e:  # noqa: BLE001 - the recorded result is the error
            return dict(_error(e), when="build")
        with tf.Session() as sess:
            try:
                return {"static": out[1], "value": sess.run(out[0])}
            except Exception as e:  # noqa: BLE001
                return dict(_error(e), when="run")


def _sparse_result(res) -> dict:
    if "error" in res:
        return res
    v = res["value"]
    return {"indices": np.asarray(v.indices).tolist(), "values": _values(v.values),
            "dtype": np.asarray(v.values).dtype.name, "dense_shape": v.dense_shape.tolist(),
            "static": res["static"]}


def _strings_result(res) -> dict:
    if "error" in res:
        return res
    arr = np.asarray(res["value"], dtype=object)
    return {"shape": list(arr.shape), "hex": _values(arr), "static": res["static"]}


def _static_sparse(sp):
    return [_shape(sp.indices.shape), _shape(sp.values.shape), _shape(sp.get_shape())]


def record_sparse(out: dict) -> None:
    ser, many, de = {}, {}, {}
    for name in CASES.SPARSE:
        ser[name] = _strings_result(_run(lambda: (
            (lambda t: (t, _shape(t.shape)))(tf.io.serialize_sparse(_sparse_value(name))))))
    for name in list(CASES.MANY) + ["i64_1d"]:
        many[name] = _strings_result(_run(lambda: (
            (lambda t: (t, _shape(t.shape)))(tf.io.serialize_many_sparse(_sparse_value(name))))))
    for name in CASES.MANY:
        dtype = tf.as_dtype(CASES.SPARSE[name][2])

        def build(name=name, dtype=dtype):
            sp = tf.io.deserialize_many_sparse(
                tf.io.serialize_many_sparse(_sparse_value(name)), dtype)
            return sp, _static_sparse(sp)
        de[name] = _sparse_result(_run(build))
    for name, parts in CASES.STACKS.items():
        dtype = tf.as_dtype(CASES.SPARSE[parts[0]][2])
        rank = len(CASES.SPARSE[parts[0]][3])

        def build(parts=parts, dtype=dtype, rank=rank):
            rows = tf.stack([tf.io.serialize_sparse(_sparse_value(p)) for p in parts])
            sp = tf.io.deserialize_many_sparse(rows, dtype, rank=rank + 1)
            return sp, _static_sparse(sp)
        de[name] = _sparse_result(_run(build))
    out["serialize_sparse"], out["serialize_many_sparse"] = ser, many
    out["deserialize_many_sparse"] = de
    out["errors"] = record_errors()


def record_errors() -> dict:
    errs = {}

    def stack(parts):
        return tf.stack([tf.io.serialize_sparse(_sparse_value(p)) for p in parts])
    errs["wrong_dtype"] = _run(lambda: (
        tf.io.deserialize_many_sparse(stack(["f32_2d"]), tf.int64), None))
    errs["mixed_rank"] = _run(lambda: (
        tf.io.deserialize_many_sparse(stack(["f32_2d", "empty_2d"]) if False else
                                      stack(["i64_2d", "empty_3d"]), tf.int64), None))
    errs["vector_input"] = _run(lambda: (tf.io.deserialize_many_sparse(
        tf.io.serialize_sparse(_sparse_value("f32_2d")), tf.float32), None))
    errs["two_columns"] = _run(lambda: (tf.io.deserialize_many_sparse(
        tf.constant([["a", "b"]]), tf.float32), None))
    errs["not_proto"] = _run(lambda: (tf.io.deserialize_many_sparse(
        tf.constant([["\xff\xff", "b", "c"]]), tf.float32), None))
    errs["empty_batch"] = _run(lambda: (tf.io.deserialize_many_sparse(
        tf.zeros([0, 3], tf.string), tf.float32), None))
    errs["variant"] = _run(lambda: (tf.io.serialize_sparse(
        _sparse_value("f32_2d"), out_type=tf.variant), None))
    ph = {}

    def placeholder_rank1():
        ph["x"] = tf.sparse_placeholder(tf.float32, shape=[None])
        return tf.io.serialize_many_sparse(ph["x"]), None
    with tf.Graph().as_default():
        try:
            t, _ = placeholder_rank1()
            with tf.Session() as sess:
                sess.run(t, {ph["x"]: tf.SparseTensorValue([[0]], [1.0], [3])})
            errs["many_rank1"] = {"error": "none"}
        except Exception as e:  # noqa: BLE001
            errs["many_rank1"] = _error(e)
    return errs


def record_protos(out: dict) -> None:
    protos = {}
    for name, kw in CASES.PROTOS.items():
        kw = dict(kw)
        if "np" in kw:
            data, dt = kw.pop("np")
            kw["values"] = np.array(data, dtype=dt)
        try:
            p = tf.make_tensor_proto(**kw)
        except Exception as e:  # noqa: BLE001
            protos[name] = _error(e)
            continue
        arr = tf.make_ndarray(p)
        protos[name] = {"hex": p.SerializeToString().hex(), "text": str(p),
                        "dtype": arr.dtype.name, "shape": list(arr.shape),
                        "values": _values(arr)}
    out["make_tensor_proto"] = protos


def record_json(out: dict) -> None:
    res = {}
    for name, text in CASES.JSON.items():
        r = _run(lambda: ((lambda t: (t, _shape(t.shape)))(tf.io.decode_json_example(text))))
        res[name] = _strings_result(r)
    out["decode_json_example"] = res


def main() -> None:
    out = {}
    record_sparse(out)
    record_protos(out)
    record_json(out)
    write_reference(OUT, out)


if __name__ == "__main__":
    main()
