"""og.print / og.Print (printing when the graph runs), og.hessians, og.switch_case,
og.foldr and the og.debugging namespace.

Printed texts are what tf.compat.v1 2.21 printed for the same graphs (tf.print and
tf.Print); Hessians are checked against analytic ones and central differences of
og.gradients; switch_case follows TF's documented out-of-range rule (values as TF
2.21 returned them); foldr against a Python fold.
"""

import sys

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError

X25 = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], np.float32)


def _run(op, feed=None, graph=None):
    with og.Session(graph or op.graph) as sess:
        return sess.run(op, feed)


# -- og.print -------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, want", [
    # tf.print("x:", x, 7)
    (lambda: ("x:", og.constant(X25), 7), {}, "x: [[1 2 3 4 5]\n [6 7 8 9 10]] 7\n"),
    (lambda: ("y", og.constant(X25)), dict(summarize=1, sep="|", end="#\n"),
     "y|[[1 ... 5]\n [6 ... 10]]#\n"),
    (lambda: (og.constant(3), og.constant([1.5, 2.0]), og.constant(True), og.constant("s")),
     {}, '3 [1.5 2] 1 "s"\n'),
    (lambda: (og.constant(np.arange(10)),), {}, "[0 1 2 ... 7 8 9]\n"),
    (lambda: (og.constant(np.arange(10)),), dict(summarize=-1), "[0 1 2 3 4 5 6 7 8 9]\n"),
    (lambda: (og.constant(np.arange(20).reshape(10, 2)),), dict(summarize=1),
     "[[0 1]\n ...\n [18 19]]\n"),
    (lambda: (og.constant(np.arange(24).reshape(2, 3, 4)),), {},
     "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n"
     "  [20 21 22 23]]]\n"),
    (lambda: ([og.constant([1, 2]), 3], {"k": og.constant(1.5)}, "tail"), {},
     "[[1 2], 3] {'k': 1.5} tail\n"),
    (lambda: (og.constant(np.float32(1 / 3)),
              og.constant(np.array([0.1, 1e-7, 123456789.0], np.float32)),
              og.constant(np.float64(1) / 3), og.constant(np.zeros((0, 3), np.float32))), {},
     "0.333333343 [0.1 1e-07 123456792] 0.33333333333333331 []\n"),
    (lambda: ("a", "b"), dict(sep=""), "ab\n"),
])
def test_print_writes_what_tf_print_writes_when_run(capfd, args, kwargs, want):
    g = og.Graph()
    with g.as_default():
        op = og.print(*args(), output_stream=sys.stdout, **kwargs)
    assert capfd.readouterr().out == ""  # nothing while building
    _run(op, graph=g)
    assert capfd.readouterr().out == want


def test_print_defaults_to_stderr_runs_as_a_control_dependency_each_run(capfd):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        op = og.print("x =", x)
        with og.control_dependencies([op]):
            y = og.identity(x * 2.0)
        z = x + 1.0  # does not depend on the print
    with og.Session(g) as sess:
        sess.run(z, {x: [0.0, 1.0]})
        assert capfd.readouterr().err == ""
        for v in ([1.0, 2.0], [3.0, 4.5]):
            np.testing.assert_allclose(sess.run(y, {x: v}), np.array(v) * 2)
        out = capfd.readouterr()
    assert out.err == "x = [1 2]\nx = [3 4.5]\n" and out.out == ""


def test_print_to_file_and_stream_names(tmp_path, capfd):
    g = og.Graph()
    path = tmp_path / "log.txt"
    with g.as_default():
        a = og.print("to file", og.constant([1, 2]), output_stream=f"file://{path}")
        b = og.print("named", output_stream="sys.stderr")
    with og.Session(g) as sess:
        sess.run([a, a, b])
        sess.run(a)
    assert path.read_text() == "to file [1 2]\nto file [1 2]\n"
    assert capfd.readouterr().err == "named\n"


def test_print_refuses_bad_arguments():
    with pytest.raises(ValueError, match="print: unsupported output_stream 'bad'"):
        og.print(1, output_stream="bad")
    with pytest.raises(TypeError, match="print: summarize must be an int"):
        og.print(1, summarize=2.5)
    with pytest.raises(TypeError, match="print: sep and end must be str"):
        og.print(1, sep=None)


# -- og.Print (TF1) --------------------------------------------------------------------

def test_tf1_print_is_identity_printing_first_n_runs(capfd):
    g = og.Graph()
    with g.as_default():
        x = og.constant(X25)
        y = og.Print(x, [x, og.constant(2)], message="msg: ", first_n=2, summarize=2)
    assert capfd.readouterr().err == ""
    with og.Session(g) as sess:
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(y), X25)
    # tf.compat.v1 2.21 printed the line in the first two runs only
    assert capfd.readouterr().err == "msg: [[1 2...]...][2]\n" * 2
    with og.Session(g) as sess:  # a new session counts afresh
        sess.run(y)
    assert capfd.readouterr().err == "msg: [[1 2...]...][2]\n"


@pytest.mark.parametrize("data, summarize, want", [
    # tf.compat.v1 2.21's texts
    (lambda: [og.constant(np.arange(10)), "str"], 3, "[0 1 2...][str]\n"),
    (lambda: [og.constant(np.float32(1 / 3)), og.constant(np.arange(10.0))], None,
     "[0.333333343][0 1 2...]\n"),
    (lambda: [og.constant([True, False]), og.constant(np.arange(12).reshape(3, 4)),
              og.constant(np.arange(24).reshape(2, 3, 4)),
              og.constant(np.zeros((0, 3)))], 5,
     "[1 0][[0 1 2 3][4...]...][[[0 1 2 3][4...]]...][]\n"),
    (lambda: [og.constant(np.arange(12).reshape(3, 4))], 4, "[[0 1 2 3]...]\n"),
    (lambda: [og.constant(np.arange(12).reshape(3, 4))], 100,
     "[[0 1 2 3][4 5 6 7][8 9 10 11]]\n"),
])
def test_tf1_print_texts(capfd, data, summarize, want):
    g = og.Graph()
    with g.as_default():
        y = og.Print(og.constant(1), data(), summarize=summarize)
    assert _run(y, graph=g) == 1
    assert capfd.readouterr().err == want


def test_tf1_print_refuses_bad_arguments():
    x = og.constant(1.0)
    with pytest.raises(TypeError, match="Print: data must be a list"):
        og.Print(x, x)
    with pytest.raises(TypeError, match="Print: first_n must be an int"):
        og.Print(x, [x], first_n=1.5)
    with pytest.raises(TypeError, match="Print: message must be a str"):
        og.Print(x, [x], message=3)


def test_export_leaves_the_print_out_as_it_leaves_assert_out():
    import onnxruntime as ort

    from onegraph.convert import to_onnx

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        op = og.print("x", x)
        with og.control_dependencies([op]):
            y = og.identity(og.Print(x, [x], message="m") * 2.0, name="y")
    proto = to_onnx(g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})}))
    assert "PrintV2" not in {n.op_type for n in proto.graph.node}
    got = ort.InferenceSession(proto.SerializeToString()).run(
        None, {"x": np.array([1.0, 2.0], np.float32)})[0]
    np.testing.assert_allclose(got, [2.0, 4.0])


# -- og.hessians -----------------------------------------------------------------------

A3 = np.array([[1, 2, 0], [0, 3, 1], [4, 0, 5]], np.float32)


def _quadratic_plus_sin(a):
    # f(a) = a . (A a) + sum(sin a): Hessian A + A^T - diag(sin a)
    ax = og.reshape(og.matmul(og.constant(A3), og.reshape(a, [3, 1])), [3])
    return og.reduce_sum(a * ax) + og.reduce_sum(og.sin(a))


def test_hessians_match_analytic_and_central_differences():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [3], name="a")
        f = _quadratic_plus_sin(a)
        (h,) = og.hessians(f, a)
        (grad,) = og.gradients(f, [a])
    assert h.shape == (3, 3)
    av = np.array([1.0, 2.0, 3.0], np.float32)
    want = A3 + A3.T - np.diag(np.sin(av))
    with og.Session(g) as sess:
        got = sess.run(h, {a: av})
        np.testing.assert_allclose(got, want, rtol=1e-5)
        eps = 1e-2  # central differences of og.gradients, column by column
        fd = np.stack([(sess.run(grad, {a: av + eps * e}) - sess.run(grad, {a: av - eps * e}))
                       / (2 * eps) for e in np.eye(3, dtype=np.float32)], axis=1)
    np.testing.assert_allclose(got, fd, rtol=1e-3, atol=1e-3)


def test_hessians_of_a_matrix_and_a_list_of_ys():
    g = og.Graph()
    with g.as_default():
        m = og.placeholder(og.float32, [2, 2], name="m")
        (h,) = og.hessians([og.reduce_sum(m ** 3) * 2.0, og.reduce_sum(m)], [m])
    mv = np.array([[1, 2], [3, 4]], np.float32)
    # d2/dm2 of 2 sum(m^3): 12 m on the diagonal of the (2,2,2,2) Hessian (TF gave the same)
    want = np.zeros((2, 2, 2, 2), np.float32)
    for i in range(2):
        for j in range(2):
            want[i, j, i, j] = 12 * mv[i, j]
    np.testing.assert_allclose(_run(h, {m: mv}, g), want)


def test_hessians_refuse_unknown_shape_and_unconnected_x():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [None], name="a")
        b = og.placeholder(og.float32, [2], name="b")
        with pytest.raises(ShapeError, match="hessians: xs\\[0\\] 'a' must have a fully"):
            og.hessians(og.reduce_sum(a * a), [a])
        with pytest.raises(ValueError, match="hessians: ys does not depend on xs\\[0\\]"):
            og.hessians(og.reduce_sum(og.constant([1.0]) * 2.0), [b])


# -- og.switch_case and og.foldr --------------------------------------------------------

@pytest.mark.parametrize("i, want, want_dict", [
    # tf.compat.v1 2.21: out of range runs the last branch, or default when given
    (-1, 30, -1), (0, 10, 10), (1, 20, 30), (2, 30, -1), (5, 30, -1)])
def test_switch_case(i, want, want_dict):
    g = og.Graph()
    with g.as_default():
        idx = og.placeholder(og.int32, [], name="i")
        r = og.switch_case(idx, [lambda: og.constant(10), lambda: og.constant(20),
                                 lambda: og.constant(30)])
        r2 = og.switch_case(idx, {1: lambda: og.constant(30), 0: lambda: og.constant(10)},
                            default=lambda: og.constant(-1))
    with og.Session(g) as sess:
        assert sess.run([r, r2], {idx: i}) == [want, want_dict]


def test_switch_case_runs_only_the_chosen_branch(capfd):
    g = og.Graph()
    with g.as_default():
        idx = og.placeholder(og.int32, [], name="i")

        def branch(k):
            def fn():
                with og.control_dependencies([og.print("branch", k)]):
                    return og.constant(k)
            return fn
        r = og.switch_case(idx, [branch(0), branch(1)])
    assert _run(r, {idx: 1}, g) == 1
    assert capfd.readouterr().err == "branch 1\n"


def test_switch_case_refuses_bad_arguments():
    with pytest.raises(ValueError, match="switch_case: branch indices .* got \\[0, 2\\]"):
        og.switch_case(0, {0: lambda: og.constant(1), 2: lambda: og.constant(2)})
    with pytest.raises(TypeError, match="switch_case: branch_fns must be a non-empty"):
        og.switch_case(0, [])
    with pytest.raises(TypeError, match="switch_case: branch 1 is not callable"):
        og.switch_case(0, [lambda: og.constant(1), 2])
    with pytest.raises(TypeError, match="switch_case: branch_index must be an integer"):
        og.switch_case(og.constant(1.0), [lambda: og.constant(1)])
    with pytest.raises(ShapeError, match="switch_case: branch_index must be a scalar"):
        og.switch_case(og.constant([1]), [lambda: og.constant(1)])


def test_foldr_folds_from_the_end():
    e = np.array([1.0, 2.0, 3.0, 4.0], np.float32)

    def py_foldr(acc, xs):
        for v in reversed(xs):
            acc = acc * 10 + v
        return acc
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None], name="x")
        r = og.foldr(lambda a, v: a * 10 + v, x)
        r5 = og.foldr(lambda a, v: a * 10 + v, x, initializer=og.constant(5.0))
    with og.Session(g) as sess:
        # tf.compat.v1 2.21: 4321.0 and 54321.0
        assert sess.run([r, r5], {x: e}) == [py_foldr(e[-1], e[:-1]), py_foldr(5.0, e)]
        assert sess.run(r, {x: e[:1]}) == 1.0
    with pytest.raises(ShapeError, match="foldr: elems must have a leading dimension"):
        og.foldr(lambda a, v: a + v, og.constant(1.0))


def test_debugging_namespace():
    assert og.debugging.check_numerics is og.check_numerics
    assert og.debugging.Assert is og.Assert
    assert og.debugging.assert_equal is og.assert_equal
    assert {"is_nan", "assert_near", "assert_rank"} <= set(og.debugging.__all__)
    g = og.Graph()
    with g.as_default():
        bad = og.debugging.check_numerics(og.constant([1.0, np.nan]), "found")
    with pytest.raises(og.errors.ExecutionError, match="found: Tensor had NaN"):
        _run(bad, graph=g)
