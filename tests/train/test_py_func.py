"""og.py_func / og.numpy_function (TF1's tf.py_func) against TF 2.21's recorded behaviour
(tests/train/data/tf1_py_func_reference.json, written by tools/record_tf_py_func.py):
what building returns, result dtypes (never converted), wrong counts, exceptions; plus
runs of stateful nodes, strings, a saved and reloaded graph, loops and conds."""

from __future__ import annotations

import gc
import json
import os
import re
import threading

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, OutOfRangeError
from onegraph.ops import pyfunc as pyfunc_ops
from onegraph.train.api_py_func import numpy_function, py_func
from onegraph.train.graph import Operation

from .py_func_cases import CASES

_DATA = os.path.join(os.path.dirname(__file__), "data", "tf1_py_func_reference.json")
with open(_DATA, encoding="utf-8") as _f:
    REFERENCE = json.load(_f)

# TF's error classes as onegraph's, TF's C++ dtype names as numpy's
_ERRORS = {"InvalidArgumentError": ExecutionError, "UnknownError": ExecutionError,
           "OutOfRangeError": OutOfRangeError}
_TF_TYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16"}


def _tout(spec):
    if isinstance(spec, str):
        return getattr(og, spec)
    return type(spec)(getattr(og, s) for s in spec)


def _tf_words(message: str) -> str:
    """TF's kernel message with numpy's dtype names."""
    return re.sub(r"\b(float|double|half)\b", lambda m: _TF_TYPE_NAMES[m.group(1)], message)


def test_cases_match_the_recording():
    assert sorted(CASES) == sorted(REFERENCE["cases"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_tf(name):
    func, spec = CASES[name]
    want = REFERENCE["cases"][name]
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2])
        out = py_func(func, [x], _tout(spec), name=name)
        if want["built"] == "operation":
            assert isinstance(out, Operation)
        elif want["built"] == "tensor":
            assert isinstance(out, og.Tensor)
        else:
            assert isinstance(out, list) and len(out) == int(want["built"].split(":")[1])
            assert all(isinstance(t, og.Tensor) for t in out)
        first = out[0] if isinstance(out, list) else out
        op = first if isinstance(first, Operation) else first.op
        assert op.type == want["op_type"]
        if "rank_known" in want:
            assert (first.shape is not None) == want["rank_known"]
            assert first.get_shape().ndims is None
        sess = og.Session(graph=g)
        if "error" in want:
            with pytest.raises(_ERRORS[want["error"]]) as info:
                sess.run(out, {x: np.array([1, 2], np.float32)})
            text = str(info.value)
            assert text.startswith(f"node {name!r} (PyFunc): ")
            expected = _tf_words(want["message"])
            assert re.sub(r"pyfunc_\d+", "pyfunc_N", text).endswith(expected), (text, expected)
            return
        got = sess.run(out, {x: np.array([1, 2], np.float32)})
    values = got if isinstance(got, list) else [got]
    assert len(values) == len(want["values"])
    for value, expected, dtype in zip(values, want["values"], want["dtypes"]):
        if expected is None:
            assert value is None
            continue
        array = np.asarray(value)
        assert (array.dtype == object if dtype == "string" else array.dtype.name == dtype)
        flat = array.reshape(-1).tolist() if array.ndim else [array.item()]
        assert flat == (expected if isinstance(expected, list) else [expected])


def test_gradient_is_none_and_op_types_like_tf():
    misc = REFERENCE["misc"]
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2])
        y = py_func(lambda v: v, [x], og.float32)
        grads = og.gradients(y * 2.0, x)
        assert (grads[0] is None) == misc["gradient_is_none"]
        w = og.Variable(np.ones(2, np.float32))
        z = py_func(lambda v: v, [w.read_value() if hasattr(w, "read_value") else w],
                    og.float32)
        assert og.gradients(og.reduce_sum(z) + og.reduce_sum(w), w)[0] is not None
        stateless = py_func(lambda v: v, [x], og.float32, stateful=False)
        assert stateless.op.type == misc["stateless_op_type"]
        assert numpy_function(lambda v: v, [x], og.float32).op.type == \
            misc["numpy_function_op_type"]


def _counter():
    """(the list of calls, a function returning how many calls so far as int64)."""
    calls = []

    def count():
        calls.append(1)
        return np.int64(len(calls))
    return calls, count


def test_stateful_runs_every_run_and_once_per_run():
    calls, count = _counter()
    g = og.Graph()
    with g.as_default():
        k = py_func(count, [], og.int64)
        sess = og.Session(graph=g)
        assert [int(sess.run(k)) for _ in range(3)] == [1, 2, 3]
        a, b = sess.run([k, k + 0])
        assert a == b == 4 and len(calls) == 4


def test_numpy_function_values_and_python_inputs():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [None])
        y, n = numpy_function(lambda v, s: (v * s, np.int64(v.size)), [x, 2.0],
                              [og.float64, og.int64])
        # a Python 2.0 is a float32 constant, as TF's convert_to_tensor makes it
        seen = []
        z = numpy_function(lambda s: seen.append(s.dtype) or s, [2.0], og.float32)
        sess = og.Session(graph=g)
        got = sess.run([y, n, z], {x: [1.0, 2.5, 4.0]})
    np.testing.assert_array_equal(got[0], [2.0, 5.0, 8.0])
    assert got[1] == 3 and seen == [np.float32]


def test_inputs_are_copies_the_function_may_change():
    g = og.Graph()
    with g.as_default():
        c = og.constant(np.array([1.0, 2.0], np.float32))

        def bump(v):
            v += 1  # a read-only constant would refuse this
            return v

        y = py_func(bump, [c], og.float32)
        sess = og.Session(graph=g)
        np.testing.assert_array_equal(sess.run(y), [2.0, 3.0])
        np.testing.assert_array_equal(sess.run(y), [2.0, 3.0])
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_strings_in_and_out():
    g = og.Graph()
    with g.as_default():
        s = og.placeholder(og.string, [2])
        seen = []

        def shout(v):
            seen.append(list(v))
            return [np.array([t.upper() for t in v]), b"\xff" + v[0].encode()]

        up, raw = py_func(shout, [s], [og.string, og.string])
        joined = og.strings.join([up[0], up[1]], separator="-") \
            if hasattr(og, "strings") and hasattr(og.strings, "join") else up
        sess = og.Session(graph=g)
        got_up, got_raw, _ = sess.run([up, raw, joined], {s: ["ab", "c"]})
    assert seen[0] == ["ab", "c"]  # str, not TF's bytes (documented)
    assert got_up.dtype == object and got_up.tolist() == ["AB", "C"]
    # bytes that are not UTF-8 become surrogate escapes (strings_tf's bridge)
    assert got_raw.item() == "\udcffab"


def test_exception_names_node_and_keeps_cause():
    err = KeyError("missing")

    def fail(v):
        raise err

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [])
        y = py_func(fail, [x], og.float32, name="failing")
        sess = og.Session(graph=g)
        with pytest.raises(ExecutionError) as info:
            sess.run(y, {x: 1.0})
    assert info.value.__cause__ is err
    assert str(info.value).startswith("node 'failing' (PyFunc): ")
    assert "KeyError" in str(info.value)


def test_stop_iteration_is_out_of_range_for_input_loops():
    items = iter([1, 2])

    def next_item():
        return np.int64(next(items))

    g = og.Graph()
    with g.as_default():
        y = py_func(next_item, [], og.int64)
        sess = og.Session(graph=g)
        got = []
        with pytest.raises(OutOfRangeError):
            while True:
                got.append(int(sess.run(y)))
    assert got == [1, 2]


def test_saved_graph_runs_while_registered_not_after(tmp_path):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        py_func(lambda v: v * 3, [x], og.float32, name="triple")
        model = g.to_model()
    token = next(n.attributes["token"] for n in model.graph.nodes if n.op_type == "PyFunc")
    path = str(tmp_path / "m.og")
    og.save(model, path)
    loaded = og.load(path)
    feed = {"x:0": np.array([1, 2], np.float32)}
    np.testing.assert_array_equal(og.Session(graph=loaded).run("triple:0", feed), [3, 6])
    del g, x, model
    gc.collect()  # the function goes with its graph, as TF's FuncRegistry drops it
    assert not pyfunc_ops.registered(token)
    with pytest.raises(ExecutionError, match=r"node 'triple' \(PyFunc\).*not registered "
                                             r"in this process"):
        og.Session(graph=loaded).run("triple:0", feed)


def test_in_while_loop_body_and_cond_branch():
    _, count = _counter()
    g = og.Graph()
    with g.as_default():
        def body(i, total):
            step = py_func(count, [], og.int64)
            step.set_shape([])
            return i + 1, total + step

        loop = og.while_loop(lambda i, total: i < 3, body,
                             [og.constant(0), og.constant(np.int64(0))])
        p = og.placeholder(og.bool, [])
        chosen = og.cond(p, lambda: py_func(lambda: np.float32(5), [], og.float32),
                         lambda: py_func(lambda: np.float32(7), [], og.float32))
        sess = og.Session(graph=g)
        assert [int(v) for v in sess.run(loop)] == [3, 6]  # 1 + 2 + 3
        assert [int(v) for v in sess.run(loop)] == [3, 15]  # 4 + 5 + 6
        assert float(sess.run(chosen, {p: True})) == 5.0
        assert float(sess.run(chosen, {p: False})) == 7.0


def test_concurrent_registration_and_runs():
    g = og.Graph()
    outs, errors = [], []
    with g.as_default():
        x = og.placeholder(og.float32, [])

    def build(k):
        try:
            with g.as_default():
                outs.append((k, py_func(lambda v, k=k: v + np.float32(k), [x], og.float32)))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=build, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    tokens = {n.attributes["token"] for n in g._ir.nodes if n.op_type == "PyFunc"}
    assert len(tokens) == 16
    sess = og.Session(graph=g)
    results = {}

    def run(k, y):
        results[k] = float(sess.run(y, {x: 1.0}))

    threads = [threading.Thread(target=run, args=item) for item in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k: 1.0 + k for k in range(16)}


@pytest.mark.parametrize("args, match", [
    ((5, [], og.float32), "func must be callable"),
    ((lambda: 1, "x", og.float32), "inp must be a list"),
    ((lambda: 1, [], "nope"), "Tout entry"),
    ((lambda: 1, [], [[og.float32]]), "Tout must be a dtype"),
    ((lambda: 1, [], None), "Tout must be a dtype"),
])
def test_bad_arguments_are_type_errors(args, match):
    with og.Graph().as_default():
        with pytest.raises(TypeError, match=match):
            py_func(*args)


def test_bad_stateful_and_name():
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="stateful must be a bool"):
            py_func(lambda: 1, [], og.float32, stateful="yes")
        with pytest.raises(TypeError):
            py_func(lambda: 1, [], og.float32, name=3)


def test_inp_tensor_not_in_a_list_is_refused():
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [2])
        with pytest.raises(TypeError, match="inp must be a list"):
            py_func(lambda v: v, x, og.float32)
