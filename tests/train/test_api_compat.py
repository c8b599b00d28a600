"""onegraph.train.api_compat (TF1's remaining tf.compat.v1 names) against TensorFlow's
outputs and gradients, recorded in data/tf1_compat_reference.npz by
`tools/record_tf1_reference.py compat` (TensorFlow 2.21's tf.compat.v1); the assertions,
collections and initializer aliases (which the eager recorder cannot run) directly;
shapes known only at run time; bad arguments; an ONNX export run in onnxruntime."""

import math

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ExecutionError, ShapeError
from onegraph.train import api_compat as C

from . import tf1_reference
from .graph_runs import run_on
from .tf1_compat_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("compat")


@pytest.fixture
def compat_functions(monkeypatch):
    """tf1_reference resolves the cases' names in api_compat (not yet in og's namespace)."""
    monkeypatch.setattr(tf1_reference, "function",
                        lambda path: getattr(C, path.split(".")[-1]))


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)
    assert {c[0] for c in CASES} == {k[4:] for k in reference if k.startswith("out/")}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, compat_functions, case):
    tf1_reference.check_case(reference, case)


_PATCH_CASES = [c for c in CASES if c[1] == "extract_image_patches"]


@pytest.mark.parametrize("case", _PATCH_CASES, ids=[c[0] for c in _PATCH_CASES])
def test_patches_of_images_sized_only_at_run_time(reference, compat_functions, case):
    """TensorFlow's extract_image_patches cases again with the images' batch, height
    and width unknown while building: the same patches and gradients."""
    tf1_reference.check_case(reference, case, hidden_dims={"img": (0, 1, 2)})


def test_patches_check_a_valid_patch_at_run_time():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, None, 2])
        y = C.extract_image_patches(x, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 1, 1], "VALID")
        assert y.shape[-1] == 12
        sess = og.Session(g)
        assert sess.run(y, {x: np.ones((1, 5, 4, 2), np.float32)}).shape == (1, 2, 3, 12)
        with pytest.raises(ExecutionError, match="a VALID patch spans"):
            sess.run(y, {x: np.ones((1, 2, 4, 2), np.float32)})


def test_every_differentiated_case_has_tensorflow_gradients(reference):
    """(TF has gradients for all the inputs the cases differentiate, so each is checked)"""
    for name, _, _, _, wrt in CASES:
        for key in wrt:
            assert f"grad/{name}/{key[1:]}" in reference, (name, key)


@pytest.mark.parametrize("name", ["s2b_2d_padded", "s2b_1d", "b2s_2d", "b2s_1d",
                                  "useg_max_2d_ids", "useg_mean", "segment_prod_zeros",
                                  "segment_max", "tsnd_max_repeated_tie"])
def test_shapes_known_only_at_run_time(reference, name):
    """The same cases with every dim of every input unknown while building."""
    _, path, args, kwargs, _ = next(c for c in CASES if c[0] == name)
    g = og.Graph()
    feeds = {}
    with g.as_default():
        def value(v):
            if isinstance(v, str) and v.startswith("@"):
                a = reference[f"in/{v[1:]}"]
                p = og.placeholder(a.dtype, [None] * a.ndim)
                feeds[p] = a
                return p
            return v
        out = getattr(C, path)(*[value(a) for a in args], **kwargs)
        assert out.shape is None or None in out.shape
    got = og.Session(g).run(out, feeds)
    np.testing.assert_allclose(got, reference[f"out/{name}"], rtol=1e-6, atol=1e-6)


def test_erfc_is_accurate_in_the_tails():
    x = np.concatenate([np.linspace(-7.0, 27.0, 6801), [-np.inf, np.inf, np.nan]])
    x32 = x.astype(np.float32)
    got64, got32 = run_on(lambda a, b: [C.erfc(a), C.erfc(b)], x, x32)
    tiny = np.finfo(np.float32).tiny
    for got, at, lowest, rtol in ((got64, x, 1e-300, 2e-14), (got32, x32, tiny, 2.5e-7)):
        want = np.array([math.erfc(v) if not np.isnan(v) else np.nan for v in at])
        ok = ~np.isnan(want) & (want > lowest) | ~np.isfinite(x)
        np.testing.assert_allclose(got[ok], want[ok].astype(got.dtype), rtol=rtol, atol=0)
        assert np.isnan(got[-1]) and got[-3] == 2.0 and got[-2] == 0.0


def test_log_sigmoid_has_no_overflow_and_tfs_gradient_at_zero():
    x = np.array([-1e4, -90.0, 0.0, 90.0, 1e4, np.inf, -np.inf], np.float32)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [7])
        y = C.log_sigmoid(p)
        (dy,) = og.gradients(og.reduce_sum(y), [p])
    value, grad = og.Session(g).run([y, dy], {p: x})
    np.testing.assert_allclose(value[:5], [-1e4, -90.0, -math.log(2.0), -math.exp(-90.0),
                                           0.0], rtol=1e-6)
    assert value[5] == 0.0 and value[6] == -np.inf
    np.testing.assert_allclose(grad[:5], [1.0, 1.0, 0.5, math.exp(-90.0), 0.0], rtol=1e-6)


def test_functions_without_gradients_in_tf_have_none():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3])
        for fn in (C.rint, C.floor_div, C.truncatediv, C.truncatemod):
            y = fn(x) if fn is C.rint else fn(x, 2.0)
            assert og.gradients(og.reduce_sum(y), [x]) == [None], fn.__name__


def test_integer_divisions_by_zero_fail_the_run():
    for fn in (C.div, C.truncatediv, C.truncatemod, C.floor_div):
        g = og.Graph()
        with g.as_default():
            a = og.placeholder(og.int32, [2])
            out = fn(a, og.constant(np.array([1, 0], np.int32)))
        with pytest.raises(ExecutionError, match="division by zero"):
            og.Session(g).run(out, {a: np.array([3, 4], np.int32)})


@pytest.mark.parametrize("fn", [C.div, C.div_no_nan, C.truncatediv, C.truncatemod,
                                C.floor_div])
def test_divisions_refuse_a_bad_name_mixed_dtypes_and_non_numbers(fn):
    # TF1's division ops take one numeric dtype on both sides (no bool, no string)
    what = fn.__name__
    g = og.Graph()
    with g.as_default():
        f = og.placeholder(og.float32, [2])
        i = og.placeholder(og.int32, [2])
        b = og.placeholder(og.bool_, [2])
        with pytest.raises(TypeError, match=f"^{what}: name must be a str"):
            fn(f, f, name=3)
        with pytest.raises(ShapeError, match=f"^{what}: operands of different dtypes"):
            fn(f, i)
        with pytest.raises(ShapeError, match=f"^{what}: x must be a numeric tensor"):
            fn(b, b)


def test_casts_and_list_functions():
    x = np.array([[1.5, -2.25], [3.0, 1e-3]], np.float32)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [2, 2])
        q = og.placeholder(og.int64, [None, 3])
        half = C.to_bfloat16(p)
        assert C.to_float(p) is p and half.dtype == og.DType.BFLOAT16
        a, b = C.identity_n([p, q])
        shapes = C.shape_n([p, q, 7.0])
        wide = C.shape_n([q], out_type=og.int64)
        stacked = C.parallel_stack([p, p * 2.0, og.constant(np.ones((2, 2), np.float32))])
        (dp,) = og.gradients(og.reduce_sum(C.identity_n([p * 3.0])[0] * stacked[1]), [p])
        scaled = C.scalar_mul(og.constant(2.0), og.IndexedSlices(p, og.constant([0, 1]), p))
        assert isinstance(scaled, og.IndexedSlices)
        assert C.is_tensor(p) and C.is_tensor(og.Variable(1.0)) and C.is_tensor(scaled)
        assert not C.is_tensor(x) and not C.is_tensor(1.0) and not C.is_tensor([p])
    qv = np.arange(12).reshape(4, 3)
    got = og.Session(g).run([half, a, b, shapes[0], shapes[1], shapes[2], wide[0], stacked,
                             dp, scaled.values], {p: x, q: qv})
    assert got[0].dtype.name == "bfloat16"
    np.testing.assert_allclose(got[0].astype(np.float32), x, rtol=2.0 ** -8)
    np.testing.assert_array_equal(got[1], x)
    np.testing.assert_array_equal(got[2], qv)
    for shape, want in zip(got[3:6], ([2, 2], [4, 3], [])):
        assert shape.dtype == np.int32 and shape.tolist() == want
    assert got[6].dtype == np.int64 and got[6].tolist() == [4, 3]
    np.testing.assert_array_equal(got[7], np.stack([x, 2 * x, np.ones((2, 2))]))
    np.testing.assert_array_equal(got[8], 12.0 * x)
    np.testing.assert_array_equal(got[9], 2.0 * x)


def test_where_v2_coordinates_of_a_scalar_and_of_nothing():
    got = run_on(lambda s, e: [C.where_v2(s), C.where_v2(e)], np.array(True),
                 np.zeros((2, 0, 3), bool))
    assert got[0].shape == (1, 0) and got[1].shape == (0, 3)
    assert got[0].dtype == got[1].dtype == np.int64


def test_segment_ids_beyond_num_segments_and_scatter_indices_out_of_range_fail():
    """(as og.unsorted_segment_sum's and og.scatter_nd's: ScatterND's run-time error)"""
    g = og.Graph()
    with g.as_default():
        d = og.placeholder(og.float32, [3])
        bad_segment = C.unsorted_segment_max(d, og.constant([0, 1, 3]), 3)
        bad_index = C.tensor_scatter_nd_update(d, og.constant([[3]]), og.constant([1.0]))
    sess = og.Session(g)
    for out in (bad_segment, bad_index):
        with pytest.raises(ShapeError, match=r"node '.*' \(ScatterND\): .*index out of "
                                             r"range"):
            sess.run(out, {d: np.zeros(3, np.float32)})


# --------------------------------------------------------------------------- asserts

def _checks_on_x(build):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3], name="x")
        check = build(x)
        with og.control_dependencies([check]):
            y = og.identity(x) * 2.0
    return og.Session(g), x, check, y


@pytest.mark.parametrize("build, good, bad, words", [
    (lambda x: C.assert_positive(x), [1, 2, 3], [1, 0, 3], "x > 0"),
    (lambda x: C.assert_non_negative(x), [0, 2, 3], [1, -1, 3], "x >= 0"),
    (lambda x: C.assert_negative(x), [-1, -2, -3], [-1, 0, -3], "x < 0"),
    (lambda x: C.assert_non_positive(x), [0, -2, -3], [1, -2, -3], "x <= 0"),
    (lambda x: C.assert_greater_equal(x, [1.0, 2.0, 3.0]), [1, 3, 3], [1, 1, 3], "x >= y"),
    (lambda x: C.assert_less_equal(x, 2.0), [1, 2, 2], [1, 2, 2.5], "x <= y"),
    (lambda x: C.assert_none_equal(x, 0.0), [1, -2, 3], [1, 0, 3], "x != y"),
    (lambda x: C.assert_near(x, [1.0, 2.0, 3.0], rtol=0.0, atol=0.01), [1.005, 2, 3],
     [1.02, 2, 3], "not equal to tolerance rtol = 0.0, atol = 0.01"),
])
def test_value_assertions_pass_or_fail_the_run(build, good, bad, words):
    sess, x, check, y = _checks_on_x(build)
    np.testing.assert_allclose(sess.run(y, {x: np.array(good, np.float32)}),
                               2 * np.array(good, np.float32))
    sess.run(check, {x: np.array(good, np.float32)})
    with pytest.raises(ExecutionError, match=rf"node 'assert_\w+' \(Assert\): assertion "
                                             rf"failed: .*{words}"):
        sess.run(y, {x: np.array(bad, np.float32)})


def test_assertion_messages_and_data():
    sess, x, check, y = _checks_on_x(lambda x: C.assert_positive(
        x, message="weights must be positive", name="positive_weights"))
    with pytest.raises(ExecutionError, match=r"node 'positive_weights' \(Assert\): "
                                             r"assertion failed: weights must be positive "
                                             r"Condition x > 0 did not hold element-wise: "
                                             r"x \(name: x\) = \[1.0, -2.0, 3.0\]"):
        sess.run(y, {x: np.array([1, -2, 3], np.float32)})
    sess, x, check, y = _checks_on_x(lambda x: C.assert_less_equal(
        x, 1.0, data=["x too big:", x], summarize=1))
    with pytest.raises(ExecutionError, match=r"assertion failed: x too big: \[5.0, \.\.\.\]"):
        sess.run(y, {x: np.array([5, 0, 0], np.float32)})


def test_value_assertions_on_constants_fail_while_building():
    g = og.Graph()
    with g.as_default():
        ok = C.assert_positive(og.constant([1, 2]))
        assert ok.type == "Assert"
        og.Session(g).run(ok)
        with pytest.raises(ExecutionError, match=r"assert_positive: assertion failed while "
                                                 r"building .*x > 0.*\[ 1 -2\]"):
            C.assert_positive(og.constant([1, -2]))
        with pytest.raises(ExecutionError, match="assert_none_equal: assertion failed"):
            C.assert_none_equal([1.0, 2.0], [3.0, 2.0])
        with pytest.raises(ExecutionError, match="assert_near: assertion failed"):
            C.assert_near(og.constant([1.0]), og.constant([1.0001]))
        C.assert_near(og.constant([1.0]), og.constant([1.0000001]))
        with pytest.raises(ExecutionError, match="assert_greater_equal: assertion failed"):
            C.assert_greater_equal(og.constant(np.int32(1)), og.constant(np.int32(2)))


def test_rank_assertions():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        anything = og.placeholder(og.float32, None, name="anything")
        assert C.assert_rank(x, 2).type == "NoOp"
        assert C.assert_rank_at_least(x, 1).type == "NoOp"
        with pytest.raises(ValueError, match=r"assert_rank: Tensor x must have rank 3\.  "
                                             r"Received rank 2, shape \[None, 3\]"):
            C.assert_rank(x, 3)
        with pytest.raises(ValueError, match="assert_rank_at_least: checking. .*must have "
                                             "rank at least 3"):
            C.assert_rank_at_least(x, 3, message="checking")
        with pytest.raises(ValueError, match="assert_rank: rank must be a scalar"):
            C.assert_rank(x, og.constant([2]))
        exactly = C.assert_rank(anything, 2)
        at_least = C.assert_rank_at_least(anything, og.constant(np.int32(2)))
    sess = og.Session(g)
    for op in (exactly, at_least):
        sess.run(op, {anything: np.zeros((2, 5), np.float32)})
        with pytest.raises(ExecutionError, match=r"Tensor anything must have rank"):
            sess.run(op, {anything: np.zeros(5, np.float32)})
    sess.run(at_least, {anything: np.zeros((1, 2, 3), np.float32)})
    with pytest.raises(ExecutionError, match="must have rank"):
        sess.run(exactly, {anything: np.zeros((1, 2, 3), np.float32)})


def test_static_type_and_scalar_assertions():
    g = og.Graph()
    with g.as_default():
        i = og.placeholder(og.int32, [2], name="i")
        f = og.placeholder(og.float32, [], name="f")
        assert C.assert_integer(i).type == "NoOp"
        assert C.assert_type(i, og.int32).type == "NoOp"
        assert C.assert_type(f, "float32").type == "NoOp"
        assert C.assert_scalar(f) is f
        with pytest.raises(TypeError, match=r'assert_integer: Expected "x" to be integer '
                                            r"type.  Found: f of dtype float32"):
            C.assert_integer(f)
        with pytest.raises(TypeError, match="assert_type: ints.  i must be of type int64; "
                                            "got int32"):
            C.assert_type(i, og.int64, message="ints")
        with pytest.raises(ValueError, match=r"assert_scalar: Expected scalar shape for i, "
                                             r"saw shape: \[2\]"):
            C.assert_scalar(i)
        with pytest.raises(ValueError, match="saw shape: unknown"):
            C.assert_scalar(og.placeholder(og.float32, None))


# --------------------------------------------------------------------------- collections

def test_variable_aliases_collections_and_graph_keys():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.ones(2, np.float32), name="w")
        counter = og.Variable(np.zeros((), np.int64), trainable=False, name="counter",
                              collections=[C.GraphKeys.LOCAL_VARIABLES])
        assert C.all_variables() == og.global_variables() == [w]
        assert og.get_collection(C.GraphKeys.TRAINABLE_VARIABLES) == [w]
        assert og.get_collection(C.GraphKeys.VARIABLES) == [w]
        assert og.local_variables() == [counter]
        bump = og.assign_add(w, np.ones(2, np.float32))
        tick = og.assign_add(counter, np.int64(1))
        init_all, init_local = C.initialize_all_variables(), C.initialize_local_variables()
        init_w = C.initialize_variables([w], name="init_w")
        assert init_w.name == "init_w"
        ref = C.get_collection_ref("my_things")
        ref.append("first")
        assert og.get_collection("my_things") == ["first"]
        C.add_to_collections(["a", "b", "a"], w)
        C.add_to_collections("c", counter)
        C.add_to_collections(("my_things",), "second")
        assert og.get_collection("a") == [w] and og.get_collection("b") == [w]
        assert og.get_collection("c") == [counter]
        assert ref == ["first", "second"] and C.get_collection_ref("my_things") is ref
    sess = og.Session(g)
    sess.run([bump, tick])
    sess.run([bump, tick])
    np.testing.assert_array_equal(sess.run(w), [3, 3])
    sess.run(init_w)
    np.testing.assert_array_equal(sess.run(w), [1, 1])
    assert sess.run(counter) == 2
    sess.run(init_local)
    assert sess.run(counter) == 0
    sess.run([bump, tick])
    sess.run(init_all)
    np.testing.assert_array_equal(sess.run(w), [1, 1])
    assert sess.run(counter) == 1
    keys = C.GraphKeys
    assert (keys.GLOBAL_VARIABLES, keys.TRAINABLE_VARIABLES, keys.LOCAL_VARIABLES,
            keys.UPDATE_OPS, keys.LOSSES, keys.REGULARIZATION_LOSSES, keys.GLOBAL_STEP,
            keys.METRIC_VARIABLES) == (og.GLOBAL_VARIABLES, og.TRAINABLE_VARIABLES,
                                       og.LOCAL_VARIABLES, og.UPDATE_OPS, og.LOSSES,
                                       og.REGULARIZATION_LOSSES, og.GLOBAL_STEP,
                                       og.METRIC_VARIABLES)
    assert keys.SUMMARIES == "summaries" and keys.MODEL_VARIABLES == "model_variables"
    assert keys.TABLE_INITIALIZERS == "table_initializer"


# --------------------------------------------------------------------------- bad arguments

def test_bad_arguments_are_named():
    g = og.Graph()
    with g.as_default():
        f = og.placeholder(og.float32, [2, 3])
        i = og.placeholder(og.int32, [2, 3])
        b = og.placeholder(og.bool_, [2, 3])
        img = og.placeholder(og.float32, [1, 5, 5, 2])
        ids = og.placeholder(og.int32, [2])
        checks = [
            (TypeError, "to_float: name must be", lambda: C.to_float(f, name=3)),
            (TypeError, "to_int32: cannot cast the string", lambda: C.to_int32(
                og.constant(np.array(["1"], object)))),
            (ShapeError, "div: operands of different dtypes", lambda: C.div(f, i)),
            (ShapeError, "div_no_nan: x must be a numeric tensor", lambda: C.div_no_nan(b, b)),
            (ShapeError, "truncatemod: x must be a numeric", lambda: C.truncatemod(b, b)),
            (TypeError, "arg_max: dimension must be an int", lambda: C.arg_max(f, 1.0)),
            (ShapeError, r"arg_min: dimension 2 is out of range", lambda: C.arg_min(f, 2)),
            (TypeError, "arg_max: output_type must be one of int32, int64",
             lambda: C.arg_max(f, 0, output_type=og.float32)),
            (ShapeError, "reverse_v2: axis \\[0, -2\\] names an axis twice",
             lambda: C.reverse_v2(f, [0, -2])),
            (TypeError, "reverse_v2: axis must be an int", lambda: C.reverse_v2(f, "0")),
            (ValueError, "where_v2: give both x and y", lambda: C.where_v2(b, f)),
            (ShapeError, "where_v2: condition must be a bool", lambda: C.where_v2(f, f, f)),
            (ShapeError, "cannot broadcast", lambda: C.where_v2(b, f, og.zeros([4]))),
            (ShapeError, "logical_xor: y must be a bool", lambda: C.logical_xor(b, f)),
            (TypeError, "erfc: x must be a float tensor", lambda: C.erfc(i)),
            (TypeError, "rint: x must be a float tensor", lambda: C.rint(i)),
            (TypeError, "log_sigmoid: x must be a float tensor", lambda: C.log_sigmoid(i)),
            (TypeError, "saturate_cast: dtype must be numeric or bool",
             lambda: C.saturate_cast(f, og.string)),
            (ValueError, "scalar_mul: scalar must be a 0-D value",
             lambda: C.scalar_mul([1.0, 2.0], f)),
            (ShapeError, "scalar_mul: scalar is int32 but x is float32",
             lambda: C.scalar_mul(og.constant(np.int32(2)), f)),
            (TypeError, "identity_n: input must be a list", lambda: C.identity_n(f)),
            (ValueError, "shape_n: input is an empty list", lambda: C.shape_n([])),
            (TypeError, "shape_n: out_type must be one of int32, int64",
             lambda: C.shape_n([f], out_type=og.float32)),
            (ShapeError, "parallel_stack: values\\[1\\] .* must have a fully known shape",
             lambda: C.parallel_stack([f, og.placeholder(og.float32, [None, 3])])),
            (ShapeError, "parallel_stack: values\\[1\\] has shape \\[3, 2\\]",
             lambda: C.parallel_stack([f, og.zeros([3, 2])])),
            (TypeError, "assert_positive: message must be a str",
             lambda: C.assert_positive(f, message=1)),
            (TypeError, "assert_less_equal: summarize must be an int",
             lambda: C.assert_less_equal(f, f, summarize="3")),
            (TypeError, "assert_none_equal: data must be a list",
             lambda: C.assert_none_equal(f, f, data="x")),
            (ShapeError, "assert_negative: x must be a numeric", lambda: C.assert_negative(b)),
            (TypeError, "assert_near: x must be a float tensor", lambda: C.assert_near(i, i)),
            (ShapeError, "assert_near: atol is int32 but x is float32",
             lambda: C.assert_near(f, f, atol=og.constant(np.int32(1)))),
            (TypeError, "assert_rank: rank must be an int", lambda: C.assert_rank(f, 2.0)),
            (ShapeError, "tensor_scatter_nd_add: updates must have shape \\[2, 3\\]",
             lambda: C.tensor_scatter_nd_add(og.zeros([4, 3]), og.constant([[0], [1]]),
                                             og.zeros([2, 4]))),
            (ShapeError, "tensor_scatter_nd_max: indices must be an integer",
             lambda: C.tensor_scatter_nd_max(f, f, f)),
            (ShapeError, "tensor_scatter_nd_min: indices .* address 3 dims",
             lambda: C.tensor_scatter_nd_min(f, og.constant([[0, 0, 0]]), og.zeros([1]))),
            (ShapeError, "tensor_scatter_nd_sub: updates are int32 but tensor is float32",
             lambda: C.tensor_scatter_nd_sub(f, og.constant([[0]]),
                                             og.zeros([1, 3], og.int32))),
            (ShapeError, "tensor_scatter_nd_update: indices must have rank >= 1",
             lambda: C.tensor_scatter_nd_update(f, og.constant(0), f)),
            (ShapeError, "segment_max: segment_ids must be 1-D",
             lambda: C.segment_max(f, og.constant([[0, 1], [1, 1]]))),
            (ShapeError, "segment_mean: segment_ids of shape \\[3\\] must be a prefix",
             lambda: C.segment_mean(f, og.constant([0, 1, 1]))),
            (ShapeError, "unsorted_segment_min: num_segments must be a scalar",
             lambda: C.unsorted_segment_min(f, ids, og.constant([2]))),
            (ValueError, "unsorted_segment_prod: num_segments must be >= 0",
             lambda: C.unsorted_segment_prod(f, ids, -1)),
            (ShapeError, "unsorted_segment_max: segment_ids must be an integer",
             lambda: C.unsorted_segment_max(f, f, 2)),
            (ShapeError, "unsorted_segment_mean: data must be a numeric",
             lambda: C.unsorted_segment_mean(b, ids, 2)),
            (TypeError, "unsorted_segment_sqrt_n: data must be a float",
             lambda: C.unsorted_segment_sqrt_n(i, ids, 2)),
            (TypeError, "space_to_batch_nd: block_shape must be a list of ints",
             lambda: C.space_to_batch_nd(img, 2, [[0, 0]])),
            (ValueError, "space_to_batch_nd: block_shape must be >= 1",
             lambda: C.space_to_batch_nd(img, [0, 1], [[0, 0], [0, 0]])),
            (ValueError, "space_to_batch_nd: paddings must hold 2 \\[start, end\\] pairs",
             lambda: C.space_to_batch_nd(img, [1, 1], [[0, 0]])),
            (ValueError, "space_to_batch_nd: paddings must be >= 0",
             lambda: C.space_to_batch_nd(img, [1, 1], [[0, -1], [0, 0]])),
            (ShapeError, "space_to_batch_nd: dim 1 .* is not a multiple of block size 2",
             lambda: C.space_to_batch_nd(img, [2, 1], [[0, 0], [0, 0]])),
            (ShapeError, "space_to_batch_nd: input of shape \\[2, 3\\] needs rank >= 3",
             lambda: C.space_to_batch_nd(f, [1, 1], [[0, 0], [0, 0]])),
            (TypeError, "batch_to_space_nd: crops must be a list of \\[start, end\\] pairs",
             lambda: C.batch_to_space_nd(img, [1], [0, 0])),
            (ShapeError, "batch_to_space_nd: the batch .* is not a multiple of "
             "prod\\(block_shape\\) = 4",
             lambda: C.batch_to_space_nd(img, [2, 2], [[0, 0]] * 2)),
            (ShapeError, "batch_to_space_nd: crops \\[3, 3\\] exceed dim 1",
             lambda: C.batch_to_space_nd(img, [1], [[3, 3]])),
            (TypeError, "extract_image_patches: rates is required",
             lambda: C.extract_image_patches(img, [1, 2, 2, 1], [1, 1, 1, 1], padding="SAME")),
            (ValueError, "extract_image_patches: padding must be 'SAME' or 'VALID'",
             lambda: C.extract_image_patches(img, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                             "same")),
            (ValueError, "extract_image_patches: strides must be \\[1, rows, cols, 1\\]",
             lambda: C.extract_image_patches(img, [1, 2, 2, 1], [2, 1, 1, 1], [1, 1, 1, 1],
                                             "SAME")),
            (TypeError, "extract_image_patches: ksizes must be a list of 4 ints",
             lambda: C.extract_image_patches(img, [2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")),
            (ValueError, "give ksizes or its newer name sizes, not both",
             lambda: C.extract_image_patches(img, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                             "SAME", sizes=[1, 3, 3, 1])),
            (ShapeError, "extract_image_patches: a VALID patch spans 9 pixels",
             lambda: C.extract_image_patches(img, [1, 3, 1, 1], [1, 1, 1, 1], [1, 4, 1, 1],
                                             "VALID")),
            (ShapeError, "extract_image_patches: images must be 4-D NHWC, got \\[1, 4, 1\\]",
             lambda: C.extract_image_patches(og.placeholder(og.float32, [1, 4, 1]),
                                             [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                             "SAME")),
            (ValueError, "extract_image_patches: a 2147483648 x 1 patch has more than",
             lambda: C.extract_image_patches(img, [1, 2**31, 1, 1], [1, 1, 1, 1],
                                             [1, 1, 1, 1], "SAME")),
            (ShapeError, "extract_image_patches: SAME padding .* more than 2147483648",
             lambda: C.extract_image_patches(img, [1, 2, 1, 1], [1, 1, 1, 1],
                                             [1, 2**31, 1, 1], "SAME")),
            (TypeError, "initialize_variables: var_list must be a list",
             lambda: C.initialize_variables(f)),
            (TypeError, "add_to_collections: names must be a collection name",
             lambda: C.add_to_collections(3, f)),
            (TypeError, "add_to_collections: a collection name must be hashable",
             lambda: C.add_to_collections([["a"]], f)),
        ]
        for error, words, call in checks:
            with pytest.raises(error, match=words):
                call()


# --------------------------------------------------------------------------- export

def test_compat_functions_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(8)
    xv = rng.randn(2, 4, 6, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4, 6, 3], name="x")
        rows = og.reshape(x, [-1, 3])
        ids = og.constant(np.tile(np.array([0, 2, 2, 1, -1, 0], np.int32), 8))
        blocks = C.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 2]])
        outs = {
            "erfc": C.erfc(x * 3.0),
            "log_sigmoid": C.log_sigmoid(x * 30.0),
            "div_no_nan": C.div_no_nan(x, C.rint(x)),
            "where": C.where_v2(x > 0.0, x, og.constant([1.0, 2.0, 3.0])),
            "coordinates": C.where_v2(x > 1.0),
            "xor": C.logical_xor(x > 0.0, x < 0.5),
            "s2b": blocks,
            "b2s": C.batch_to_space_nd(blocks, [2, 2], [[1, 1], [0, 2]]),
            "patches": C.extract_image_patches(x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1],
                                               "SAME"),
            "segment_max": C.unsorted_segment_max(rows, ids, 4),
            "segment_prod": C.unsorted_segment_prod(rows, ids, 4),
            "segment_mean": C.segment_mean(rows, og.constant(np.repeat(np.arange(8), 6))),
            "scatter_max": C.tensor_scatter_nd_max(x, og.constant([[0, 1], [1, 3], [0, 1]]),
                                                   og.ones([3, 6, 3])),
            "scatter_sub": C.tensor_scatter_nd_sub(x, og.constant([[1, 2, 3]]),
                                                   og.ones([1, 3])),
            "saturated": C.saturate_cast(x * 300.0, og.uint8),
            "div": C.div(C.to_int32(x * 10.0), 3),
            "argmax": C.arg_max(x, 3, output_type=og.int32),
        }
        loss = og.reduce_sum(outs["segment_max"]) + og.reduce_sum(outs["patches"])
        (dx,) = og.gradients(loss, [x])
        sig = og.signature({"x": x}, outs)
    want = og.Session(g).run(list(outs.values()) + [dx], {x: xv})
    assert want[-1].shape == xv.shape and np.abs(want[-1]).sum() > 0
    proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": xv})
    for key, a, b in zip(outs, got, want):
        assert a.dtype == b.dtype and a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=key)
