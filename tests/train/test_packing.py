"""TF1's auto-packing: shapes, multiples, paddings and slice bounds that mix ints with
scalar tensors (``[og.shape(x)[0], -1]``), or are tensors, known only at run time.
Results are checked against numpy's spelling of the same operation."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import OneGraphError, ShapeError

BATCHES = (2, 5)


def _run_batches(build, dtype=np.float32):
    """build(x, n) on a placeholder x of shape [None, 3, 4] (n = its run-time batch
    size, an int64 scalar), run on arange data of each batch size in BATCHES."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(dtype, [None, 3, 4], name="x")
        outs = build(x, og.shape(x)[0])
        sess = og.Session(g, seed=0)
        for b in BATCHES:
            xv = np.arange(b * 12, dtype=dtype).reshape(b, 3, 4)
            yield xv, sess.run(outs, {x: xv})


def test_reshape_zeros_ones_fill_of_run_time_shapes():
    def build(x, n):
        return [og.reshape(x, [n, -1]), og.zeros([n, 5]), og.ones(og.shape(x), og.int32),
                og.fill([n, 2], 3.5), og.zeros([2, og.cast(n, og.int32)], og.string),
                og.ones([n], "bfloat16"), og.broadcast_to(og.constant(1.5), [n, 2])]
    for xv, (r, z, o, f, s, bf, bc) in _run_batches(build):
        b = len(xv)
        np.testing.assert_array_equal(r, xv.reshape(b, -1))
        np.testing.assert_array_equal(z, np.zeros((b, 5), np.float32))
        assert z.dtype == np.float32 and o.dtype == np.int32
        np.testing.assert_array_equal(o, np.ones(xv.shape, np.int32))
        np.testing.assert_array_equal(f, np.full((b, 2), 3.5, np.float32))
        assert s.shape == (2, b) and s.tolist() == [[""] * b] * 2
        assert str(bf.dtype) == "bfloat16" and bf.shape == (b,)
        np.testing.assert_array_equal(bf.astype(np.float32), np.ones(b, np.float32))
        np.testing.assert_array_equal(bc, np.full((b, 2), 1.5, np.float32))


def test_random_ops_take_run_time_shapes():
    def build(x, n):
        return [og.random_uniform([n, 2]), og.truncated_normal([n, 3])]
    for xv, (u, t) in _run_batches(build):
        assert u.shape == (len(xv), 2) and t.shape == (len(xv), 3)
        assert ((u >= 0) & (u < 1)).all() and (np.abs(t) <= 2).all()


def test_tile_slice_and_pad_of_run_time_sizes():
    def build(x, n):
        n32 = og.cast(n, og.int32)
        return [og.tile(x, [n, 1, 2]), og.tile(x, og.stack([n32, 1, 1])),
                og.slice(x, [0, 1, 0], [n - 1, 2, -1]),
                og.slice(x, og.stack([n - 1, 0, 2]), [1, -1, 2]),
                og.pad(x, [[0, n], [1, 0], [0, 0]], constant_value=-1.0),
                og.pad(x, og.constant(np.array([[1, 0], [0, 2], [1, 1]], np.int32)))]
    for xv, (t1, t2, s1, s2, p1, p2) in _run_batches(build):
        b = len(xv)
        np.testing.assert_array_equal(t1, np.tile(xv, (b, 1, 2)))
        np.testing.assert_array_equal(t2, np.tile(xv, (b, 1, 1)))
        np.testing.assert_array_equal(s1, xv[0:b - 1, 1:3, :])
        np.testing.assert_array_equal(s2, xv[b - 1:b, 0:, 2:4])
        np.testing.assert_array_equal(
            p1, np.pad(xv, [(0, b), (1, 0), (0, 0)], constant_values=-1.0))
        np.testing.assert_array_equal(p2, np.pad(xv, [(1, 0), (0, 2), (1, 1)]))


def test_indexing_with_scalar_tensors():
    def build(x, n):
        i = og.placeholder_with_default(og.constant(-1, og.int32), [])
        return [x[:n - 1], x[n - 1], x[1:n, ::2], x[i, 0], x[0, i], x[-n:, 1:og.constant(3)],
                x[og.constant(1):, i]]
    for xv, (a, b, c, d, e, f, h) in _run_batches(build):
        n = len(xv)
        for got, want in ((a, xv[:n - 1]), (b, xv[n - 1]), (c, xv[1:n, ::2]),
                          (d, xv[-1, 0]), (e, xv[0, -1]), (f, xv[-n:, 1:3]),
                          (h, xv[1:, -1])):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_stack_and_concat_give_python_numbers_the_tensor_dtype():
    # TF1: tf.stack([n_int32, 2]) is int32; before, the 2 became an int64 constant and
    # the stack was refused as mixing int32 and int64
    g = og.Graph()
    with g.as_default():
        n = og.placeholder(og.int32, [], name="n")
        s = og.stack([n, 2, np.int64(3)])
        c = og.concat([og.expand_dims(n, 0), [4]], 0)
        assert s.dtype == og.int32 and c.dtype == og.int32
        got = og.Session(g).run([s, c], {n: 7})
    np.testing.assert_array_equal(got[0], np.array([7, 2, 3], np.int32))
    np.testing.assert_array_equal(got[1], np.array([7, 4], np.int32))


def test_packed_arguments_export_and_run_in_onnxruntime():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3, 4], name="x")
        n = og.shape(x)[0]
        outs = {"flat": og.reshape(x, [n, -1]), "zeros": og.zeros([n, 2]),
                "tiled": og.tile(x, [1, n, 1]), "first": x[:n - 1, og.constant(2)],
                "padded": og.pad(x, [[n, 0], [0, 0], [0, 1]])}
        sig = og.signature({"x": x}, outs)
        sess = og.Session(g)
        proto = to_onnx(g, signatures={"serving": sig})
        runner = ort.InferenceSession(proto.SerializeToString(),
                                      providers=["CPUExecutionProvider"])
        for b in BATCHES:
            xv = np.random.RandomState(b).randn(b, 3, 4).astype(np.float32)
            want = sess.run(list(outs.values()), {x: xv})
            got = runner.run(list(outs), {"x": xv})
            for key, a, w in zip(outs, got, want, strict=True):
                np.testing.assert_array_equal(a, w, err_msg=key)


def test_bad_packed_arguments_are_named():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        n = og.shape(x)[0]
        cases = [
            (lambda: og.reshape(x, [og.constant(2.0), -1]), ShapeError,
             r"reshape: new_shape\[0\] must be an integer tensor"),
            (lambda: og.reshape(x, [og.shape(x), -1]), ShapeError,
             r"reshape: new_shape\[0\] must be a scalar tensor"),
            (lambda: og.zeros([n, "a"]), TypeError, r"zeros: shape\[1\] must be an int"),
            (lambda: og.zeros(og.constant([[1, 2]])), ShapeError,
             "zeros: shape must be a 1-D tensor"),
            (lambda: og.tile(x, [n, 1.5]), TypeError, r"tile: multiples\[1\]"),
            (lambda: og.pad(x, [[0, n], [0]]), ShapeError, "rows of different lengths"),
            (lambda: og.pad(x, og.constant([1, 2])), ShapeError,
             r"must have shape \[rank, 2\]"),
            (lambda: og.pad(x, og.constant([[1, 2]] * 3)), ShapeError, "3 rows"),
            (lambda: x[::n], OneGraphError, "steps ints or None"),
            (lambda: x[og.constant(0.5), 0], ShapeError, "index must be an integer"),
            (lambda: og.slice(x, [0, n], [og.constant([1]), 1]), ShapeError,
             r"slice: size\[0\] must be a scalar tensor"),
        ]
        for fn, error, message in cases:
            with pytest.raises(error, match=message):
                fn()


def test_a_run_time_shape_with_a_negative_dim_fails_the_run_by_name():
    g = og.Graph()
    with g.as_default():
        n = og.placeholder(og.int64, [], name="n")
        z = og.zeros([n, 2])
        with pytest.raises(ShapeError,
                           match=r"ConstantOfShape: the shape \[-3, 2\] has a negative dim"):
            og.Session(g).run(z, {n: -3})


def test_one_hot_depth_and_eye_sizes_as_tensors():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        labels = og.placeholder(og.int32, [None], name="labels")
        n = og.shape(x)[0]
        n32 = og.cast(n, og.int32)
        outs = [og.one_hot(labels, n32 + 1), og.eye(n), og.eye(n, 3, batch_shape=[2]),
                og.eye(2, n32, batch_shape=og.stack([n])), og.eye(n, dtype="bfloat16"),
                og.eye(n, dtype=og.bool_, name="mask")]
        sess = og.Session(g)
        for b in BATCHES:
            lv = np.arange(b, dtype=np.int32)[::-1].copy()
            got = sess.run(outs, {x: np.zeros((b, 3), np.float32), labels: lv})
            np.testing.assert_array_equal(got[0], np.eye(b + 1, dtype=np.float32)[lv])
            np.testing.assert_array_equal(got[1], np.eye(b, dtype=np.float32))
            np.testing.assert_array_equal(got[2], np.broadcast_to(np.eye(b, 3), (2, b, 3)))
            np.testing.assert_array_equal(got[3], np.broadcast_to(np.eye(2, b), (b, 2, b)))
            assert str(got[4].dtype) == "bfloat16"
            np.testing.assert_array_equal(got[4].astype(np.float32), np.eye(b))
            assert got[5].dtype == np.bool_
            np.testing.assert_array_equal(got[5], np.eye(b, dtype=bool))
        with pytest.raises(ShapeError, match="OneHot: depth -3"):
            sess.run(og.one_hot(labels, n32 - 5), {x: np.zeros((2, 3), np.float32),
                                                   labels: [0, 1]})
    with pytest.raises(ShapeError, match="one_hot: depth"):
        og.one_hot(og.constant([0]), og.constant([2, 3]))
    with pytest.raises(TypeError, match="eye: num_columns"):
        og.eye(og.constant(2), [3])
