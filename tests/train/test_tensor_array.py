"""og.TensorArray (train/tensor_array.py): TF1's per-step accumulator in og.while_loop,
checked against numpy, central differences and onnxruntime. Static shapes and the
values of unwritten elements are the ones tf.compat.v1 2.21 printed (graph mode)."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError

from .gradcheck import check_op_gradients

F32 = np.float32
X = np.arange(12, dtype=F32).reshape(4, 3) - 5.0


def _squares_loop(x, ta, n):
    """Writes x[i] ** 2 into ta for i < n, in an og.while_loop; returns the array."""
    def body(i, ta):
        return i + 1, ta.write(i, x[i] ** 2)
    _, out = og.while_loop(lambda i, ta: i < n, body, [og.constant(0), ta])
    return out


def test_a_while_loop_accumulates_into_a_fixed_and_a_dynamic_size_array():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4, 3])
        n = og.placeholder(og.int64, [])
        fixed = _squares_loop(x, og.TensorArray(og.float32, size=4), 4).stack()
        shaped = _squares_loop(x, og.TensorArray(og.float32, size=4, element_shape=[3]),
                               n).stack()
        grown = _squares_loop(x, og.TensorArray(og.float32, size=0, dynamic_size=True),
                              n).stack()
        # static shapes tf.compat.v1 2.21 gives these stacks
        assert fixed.shape == (4, 3)
        assert grown.shape == (None, 3)
        sess = og.Session(g)
        np.testing.assert_array_equal(sess.run(fixed, {x: X}), X ** 2)
        np.testing.assert_array_equal(sess.run(shaped, {x: X, n: 2}),
                                      np.r_[X[:2] ** 2, np.zeros((2, 3), F32)])
        for k in (0, 2, 4):
            got = sess.run(grown, {x: X, n: k})
            assert got.shape == (k, 3)
            np.testing.assert_array_equal(got, X[:k] ** 2)


def test_static_shapes_of_stack_for_a_known_and_an_unknown_size():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4, 3])
        n = og.placeholder(og.int32, [])
        # tf.compat.v1 2.21: (4, 3), (None, 3); element_shape (3,)
        known = og.TensorArray(og.float32, size=4).write(0, x[0])
        unknown = og.TensorArray(og.float32, size=n).write(0, x[0])
        assert known.stack().shape == (4, 3)
        assert unknown.stack().shape == (None, 3)
        assert known.element_shape.as_list() == [3]
        assert known.dtype == og.float32
        assert og.Session(g).run(unknown.size(), {x: X, n: 5}) == 5


def test_unstack_read_gather_scatter_concat_split_and_size():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4, 3])
        rows = og.TensorArray(og.float32, size=4).unstack(x)
        pieces = og.TensorArray(og.float32, size=2).split(
            og.reshape(og.range(10.0), [5, 2]), [2, 3])
        halves = og.TensorArray(og.float32, size=2).split(x, [2, 2])
        scattered = og.TensorArray(og.float32, size=4).scatter(
            [3, 1], og.constant([[1.0, 2.0], [3.0, 4.0]]))
        want = {rows.read(1): X[1], rows.gather([2, 0]): X[[2, 0]],
                rows.concat(): X.reshape(-1), rows.size(): 4,
                rows.identity().stack(): X,
                pieces.read(1): np.arange(4.0, 10.0).reshape(3, 2),
                pieces.concat(): np.arange(10.0).reshape(5, 2), pieces.size(): 2,
                halves.stack(): X.reshape(2, 2, 3), halves.gather([1]): X[None, 2:],
                scattered.stack(): [[0, 0], [3, 4], [0, 0], [1, 2]],
                scattered.gather([1, 3]): [[3, 4], [1, 2]]}
        sess = og.Session(g)
        got = sess.run(list(want), {x: X})
        for (t, w), v in zip(want.items(), got):
            np.testing.assert_array_equal(v, np.asarray(w, F32), err_msg=t.name)
        assert rows.size().dtype == og.int32  # TF's
        sess.run(rows.close())


def test_a_dynamic_array_grows_when_written_past_its_end():
    g = og.Graph()
    with g.as_default():
        ta = og.TensorArray(og.float32, size=1, dynamic_size=True)
        ta = ta.write(2, [5.0, 6.0]).scatter([4], [[7.0, 8.0]])
        got = og.Session(g).run([ta.stack(), ta.size()])
    np.testing.assert_array_equal(got[0], [[0, 0], [0, 0], [5, 6], [0, 0], [7, 8]])
    assert got[1] == 5


def test_an_unwritten_element_reads_as_zeros_as_tf_2_21():
    # tf.compat.v1 2.21 (TensorList-backed) printed zeros for read(1) and stack() of
    # an array of 3 with only element 0 written (TF1's TensorArrayV3 raised instead)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4, 3])
        ta = og.TensorArray(og.float32, size=3).write(0, x[0])
        got = og.Session(g).run([ta.read(1), ta.stack()], {x: X})
    np.testing.assert_array_equal(got[0], np.zeros(3, F32))
    np.testing.assert_array_equal(got[1], np.r_[X[:1], np.zeros((2, 3), F32)])


def test_reading_an_array_of_unknown_element_shape_with_nothing_written_is_refused():
    with og.Graph().as_default():
        ta = og.TensorArray(og.float32, size=3)
        with pytest.raises(ValueError, match=r"TensorArray.read: nothing was written"):
            ta.read(0)
        with pytest.raises(ValueError, match=r"TensorArray.stack: nothing was written"):
            ta.stack()


def test_bad_writes_are_refused_by_name():
    with og.Graph().as_default():
        ta = og.TensorArray(og.float32, size=2).write(0, [1.0])
        # tf.compat.v1 2.21: ValueError "Inconsistent shapes: saw (2,) but expected (1,)"
        with pytest.raises(ShapeError, match=r"TensorArray.write: inconsistent element "
                                             r"shapes: saw \[2\] but expected \[1\]"):
            ta.write(1, [1.0, 2.0])
        with pytest.raises(TypeError, match=r"TensorArray.write: the array holds float32"):
            ta.write(1, og.constant([1], og.int32))
        with pytest.raises(ShapeError, match=r"TensorArray.read: index must be an integer"):
            ta.read(og.constant(1.0))
        pieces = og.TensorArray(og.float32, size=2).split([1.0, 2.0, 3.0], [1, 2])
        with pytest.raises(ValueError, match=r"TensorArray.write: not supported on an "
                                             r"array made by split"):
            pieces.write(0, [1.0])
        with pytest.raises(ShapeError, match=r"TensorArray.unstack: the array has size 2"):
            og.TensorArray(og.float32, size=2).unstack(og.zeros([3, 2]))
        with pytest.raises(ShapeError, match=r"TensorArray: size must be >= 0"):
            og.TensorArray(og.float32, size=-1)
        with pytest.raises(TypeError, match=r"TensorArray: size must be an int"):
            og.TensorArray(og.float32, size=2.5)


def test_an_array_is_a_cond_result():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool, [])
        ta = og.TensorArray(og.float32, size=2)
        out = og.cond(p, lambda: ta.write(0, [1.0, 2.0]), lambda: ta.write(1, [3.0, 4.0]))
        sess = og.Session(g)
        np.testing.assert_array_equal(sess.run(out.stack(), {p: True}), [[1, 2], [0, 0]])
        np.testing.assert_array_equal(sess.run(out.stack(), {p: False}), [[0, 0], [3, 4]])


@pytest.mark.parametrize("dynamic", [False, True])
def test_gradient_of_the_stack_reaches_the_values_written_in_a_loop(dynamic):
    def build(x):
        ta = og.TensorArray(og.float64, size=0 if dynamic else 4, dynamic_size=dynamic)

        def body(i, ta):
            return i + 1, ta.write(i, og.sin(x[i]) * x[i])
        _, ta = og.while_loop(lambda i, ta: i < 4, body, [og.constant(0), ta])
        return og.reduce_sum(ta.stack()) + ta.read(2)[1]

    x = np.random.default_rng(3).standard_normal((4, 3))
    (grad,) = check_op_gradients(build, [x])  # central differences
    assert np.abs(grad).max() > 0


@pytest.mark.parametrize("dynamic", [False, True])
def test_the_loop_exports_to_onnx_and_runs_in_onnxruntime(dynamic):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4, 3], name="x")
        ta = og.TensorArray(og.float32, size=0 if dynamic else 4, dynamic_size=dynamic)
        y = _squares_loop(x, ta, 4).stack()
    model = g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})})
    proto = to_onnx(model)
    sess = ort.InferenceSession(proto.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], X ** 2)
