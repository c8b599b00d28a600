"""Plan-time rewrites of `train/optimize.py` checked against onnxruntime on small ONNX
graphs: the rewritten plan must give the original graph's results."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

# the rewrites checked here are those the plan gets on conv.py's own paths: with
# oneDNN on, its chains (rewrite 13, tests/train/test_onednn_chains.py) take conv runs
pytestmark = pytest.mark.usefixtures("own_convs")


def _model(nodes, x_shape, rng, **weights):
    """An opset-19 model: input x (float32, x_shape), output y, the given float32
    initializers; with a seeded input."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor(k, TensorProto.FLOAT, v.shape, v.ravel())
         for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model, rng.standard_normal(x_shape).astype(np.float32)


def _conv_relu_maxpool(pool_attrs, x_shape=(2, 3, 9, 9)):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, x_shape[1], 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], **pool_attrs)]
    return _model(nodes, x_shape, rng, w=w, b=b)


def _session_and_pool_kernel(model, x):
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    (plan,) = sess._plans.values()
    pool = next(s for s in plan.steps if s.node.op_type == "MaxPool")
    return y, pool.kernel.__qualname__


@pytest.mark.parametrize("pool_attrs", [
    dict(kernel_shape=[3, 3], strides=[2, 2]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1),
    dict(kernel_shape=[2, 3], strides=[1, 2]),
], ids=str)
def test_relu_moves_past_maxpool(pool_attrs):
    """Conv + Relu -> MaxPool runs the Relu on the pooled output, same results."""
    model, x = _conv_relu_maxpool(pool_attrs)
    got, kernel = _session_and_pool_kernel(model, x)
    assert "_maxpool_then_relu" in kernel
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _concat_relu_maxpool(with_plain_branch=False):
    """Two Conv + Relu branches (a 1x1 and a 3x3) concatenated on channels, then a 3x3/2
    MaxPool: a fire module's tail. Optionally a third branch that is not a Conv."""
    rng = np.random.default_rng(5)
    x_shape = (2, 4, 11, 11)
    w1 = rng.standard_normal((3, 4, 1, 1)).astype(np.float32)
    w3 = rng.standard_normal((5, 4, 3, 3)).astype(np.float32)
    b1, b3 = (rng.standard_normal(n).astype(np.float32) for n in (3, 5))
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["x", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c3"], ["r3"])]
    parts = ["r1", "r3"]
    if with_plain_branch:
        nodes.append(helper.make_node("Neg", ["x"], ["n"]))
        parts.append("n")
    nodes += [helper.make_node("Concat", parts, ["cat"], axis=1),
              helper.make_node("MaxPool", ["cat"], ["y"], kernel_shape=[3, 3],
                               strides=[2, 2])]
    return _model(nodes, x_shape, rng, w1=w1, b1=b1, w3=w3, b3=b3)


@pytest.mark.parametrize("with_plain_branch", [False, True])
def test_relu_moves_past_maxpool_after_concat(with_plain_branch):
    """Concat of rectified Convs -> MaxPool: the Relu runs on the pooled output only when
    every piece is a rectified Conv (a Neg branch keeps the original order)."""
    model, x = _concat_relu_maxpool(with_plain_branch)
    got, kernel = _session_and_pool_kernel(model, x)
    assert ("_maxpool_then_relu" in kernel) is not with_plain_branch
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_relu_past_maxpool_keeps_order_for_all_padding_windows():
    """A window over padding only (2x2 windows with 2 leading pads) pools to the lowest
    float after Relu, not to 0: the rewrite falls back to Relu first."""
    model, x = _conv_relu_maxpool(dict(kernel_shape=[2, 2], pads=[2, 2, 0, 0]),
                                  (1, 3, 4, 4))
    got, _ = _session_and_pool_kernel(model, x)
    plain = og.Session(from_onnx(model))
    plain.optimize = False
    # (the fused Conv may take another GEMM path than the plain one: rounding may differ;
    # the -inf of the padding-only windows must be at the same places)
    np.testing.assert_allclose(got, plain.run("y", {"x": x}), rtol=1e-6, atol=1e-6)
    # the reference: Relu, then the max over each window's in-bounds part
    c = ort.InferenceSession(_conv_only(model).SerializeToString(),
                             providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    r = np.maximum(c, 0)
    assert got.shape == (1, 4, 5, 5)
    for i in range(5):
        for j in range(5):
            win = r[:, :, max(i - 2, 0):i, max(j - 2, 0):j]
            ref = win.max(axis=(2, 3)) if win.size else np.full((1, 4), -np.inf, np.float32)
            np.testing.assert_allclose(got[:, :, i, j], ref, rtol=1e-5, atol=1e-5)


def _conv_only(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.node[1:]
    m.graph.output[0].name = "c"
    return m


def _avgpool_conv_relu(pool_attrs, x_shape=(2, 12, 9, 8), bias=True, out_channels=5):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((out_channels, x_shape[1], 1, 1)).astype(np.float32)
    b = rng.standard_normal(out_channels).astype(np.float32)
    nodes = [helper.make_node("AveragePool", ["x"], ["p"], **pool_attrs),
             helper.make_node("Conv", ["p", "w"] + (["b"] if bias else []), ["c"]),
             helper.make_node("Relu", ["c"], ["y"])]
    return _model(nodes, x_shape, rng, w=w, **({"b": b} if bias else {}))


@pytest.mark.parametrize("pool_attrs,swapped", [
    (dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]), True),
    (dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), True),
    (dict(kernel_shape=[2, 3], pads=[1, 0, 0, 2], count_include_pad=1), False),
    (dict(kernel_shape=[2, 2], strides=[2, 2], count_include_pad=1), True),
], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_pointwise_conv_runs_before_average_pool(pool_attrs, swapped, bias):
    """AveragePool -> 1x1 Conv (+ Relu) computes the Conv first and pools its output
    channels, unless counted padding would scale the bias; same results as ORT."""
    model, x = _avgpool_conv_relu(pool_attrs, bias=bias)
    sess = og.Session(from_onnx(model))
    got = sess.run("y", {"x": x})
    (plan,) = sess._plans.values()
    names = [s.kernel.__qualname__ for s in plan.steps]
    assert any("_avgpool_bias_relu" in n for n in names) == swapped
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pointwise_conv_before_average_pool_keeps_a_fetched_pool_output():
    """The pool's output is fetched too: it must stay the pool of the input."""
    model, x = _avgpool_conv_relu(dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    sess = og.Session(from_onnx(model))
    p, y = sess.run(["p", "y"], {"x": x})
    full = ort.InferenceSession(_with_output(model, "p").SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(y, full[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(p, full[1], rtol=1e-5, atol=1e-5)


def _with_output(model, name):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    return m


def _conv_then_avgpool(pool_attrs, relu=False, x_shape=(2, 6, 10, 9)):
    rng = np.random.default_rng(6)
    w = rng.standard_normal((4, x_shape[1], 1, 1)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"])]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
    nodes.append(helper.make_node("AveragePool", ["r" if relu else "c"], ["y"], **pool_attrs))
    return _model(nodes, x_shape, rng, w=w, b=b)


@pytest.mark.parametrize("pool_attrs,relu,swapped", [
    (dict(kernel_shape=[2, 2], strides=[2, 2]), False, True),
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1), False, True),
    (dict(kernel_shape=[2, 2], strides=[2, 2]), True, False),           # Relu in between
    (dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]), False, False),       # no fewer pixels
    (dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0], count_include_pad=1),
     False, False),                                                     # counted padding
], ids=str)
def test_strided_average_pool_runs_before_pointwise_conv(pool_attrs, relu, swapped):
    """1x1 Conv -> strided AveragePool pools first and convolves the fewer pixels, only
    where that is exact; same results as onnxruntime either way."""
    model, x = _conv_then_avgpool(pool_attrs, relu)
    sess = og.Session(from_onnx(model))
    got = sess.run("y", {"x": x})
    (plan,) = sess._plans.values()
    ops = [s.node.op_type for s in plan.steps]
    assert ops == (["AveragePool", "Conv"] if swapped else ["Conv", "AveragePool"]), ops
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _depthwise_bn_pointwise(second, third=None, bn=True, relu=False, x_shape=(2, 8, 7, 6)):
    """Depthwise 3x3 Conv (+ BatchNormalization) (+ Relu) -> Conv `second` (attrs,
    1x1 unless kernel_shape says otherwise) [-> Conv `third`], every Conv with a bias."""
    rng = np.random.default_rng(8)
    c = x_shape[1]
    group = second.get("group", 1)
    k2 = second.pop("kernel_shape", [1, 1])
    weights = dict(
        w1=rng.standard_normal((c, 1, 3, 3)).astype(np.float32),
        b1=rng.standard_normal(c).astype(np.float32),
        w2=rng.standard_normal((12, c // group, *k2)).astype(np.float32),
        b2=rng.standard_normal(12).astype(np.float32),
        scale=rng.uniform(0.5, 2, c).astype(np.float32),
        shift=rng.standard_normal(c).astype(np.float32),
        mean=rng.standard_normal(c).astype(np.float32),
        var=rng.uniform(0.5, 2, c).astype(np.float32))
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["d"], group=c, pads=[1, 1, 1, 1])]
    t = "d"
    if bn:
        nodes.append(helper.make_node("BatchNormalization",
                                      [t, "scale", "shift", "mean", "var"], ["n"]))
        t = "n"
    if relu:
        nodes.append(helper.make_node("Relu", [t], ["r"]))
        t = "r"
    nodes.append(helper.make_node("Conv", [t, "w2", "b2"],
                                  ["y" if third is None else "p"], kernel_shape=k2, **second))
    if third is not None:
        weights["w3"] = rng.standard_normal((5, 12, 1, 1)).astype(np.float32)
        weights["b3"] = rng.standard_normal(5).astype(np.float32)
        nodes.append(helper.make_node("Conv", ["p", "w3", "b3"], ["y"], **third))
    return _model(nodes, x_shape, rng, **weights)


def _conv_biases(sess):
    (plan,) = sess._plans.values()
    return [s.kernel.conv_parts[2] is not None for s in plan.steps
            if hasattr(s.kernel, "conv_parts")]


@pytest.mark.parametrize("second,third,relu,biases", [
    (dict(group=4), None, False, [False, True]),
    (dict(group=1, strides=[2, 2]), None, False, [False, True]),
    (dict(group=2), dict(strides=[1, 1]), False, [False, False, True]),  # moved twice
    (dict(group=4), None, True, [True, True]),                   # Relu in between
    (dict(group=4, pads=[1, 0, 0, 1]), None, False, [True, True]),  # padded 1x1
    (dict(group=2, kernel_shape=[3, 1]), None, False, [True, True]),  # not 1x1
], ids=str)
def test_bias_moves_into_the_next_pointwise_conv(second, third, relu, biases):
    """A Conv's bias is carried by the unpadded 1x1 Conv reading it (through each one
    of a chain); not past a Relu, a padded or a larger kernel. Same results as ORT."""
    model, x = _depthwise_bn_pointwise(dict(second), third, relu=relu)
    sess = og.Session(from_onnx(model))
    got = sess.run("y", {"x": x})
    assert _conv_biases(sess) == biases
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_bias_stays_when_the_conv_output_is_fetched():
    """The first Conv's output is fetched too: it keeps its own bias."""
    model, x = _depthwise_bn_pointwise(dict(group=4), bn=False)
    sess = og.Session(from_onnx(model))
    d, y = sess.run(["d", "y"], {"x": x})
    assert _conv_biases(sess) == [True, True]
    full = ort.InferenceSession(_with_output(model, "d").SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(y, full[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d, full[1], rtol=1e-4, atol=1e-4)


def _dense_residual(residual_first):
    """x (3, 16) -> MatMul -> + bias -> + x (residual) -> Relu -> y: a transformer
    block's output projection; the residual Add's operand order as given."""
    rng = np.random.default_rng(8)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    res = ["x", "h"] if residual_first else ["h", "x"]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["h"]),
             helper.make_node("Add", res, ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    return _model(nodes, (3, 16), rng, w=w, b=b)


def _add_kernels(sess):
    (plan,) = sess._plans.values()
    return [s.kernel.__qualname__.split(".")[0] for s in plan.steps
            if s.node.op_type == "Add"]


@pytest.mark.parametrize("residual_first", [False, True])
def test_bias_and_residual_adds_run_in_place_on_the_matmul_output(residual_first):
    """The bias Add writes into the MatMul's fresh output and the residual Add (with
    its Relu) into the bias Add's; x, fed by the caller, is never written."""
    model, x = _dense_residual(residual_first)
    kept = x.copy()
    sess = og.Session(from_onnx(model))
    got = sess.run("y", {"x": x})
    assert _add_kernels(sess) == ["_add_into", "_add_into"]
    np.testing.assert_array_equal(x, kept)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_adds_keep_a_fetched_matmul_output():
    """The MatMul's output is fetched as well: the bias Add must not write into it."""
    model, x = _dense_residual(False)
    sess = og.Session(from_onnx(model))
    m, h, y = sess.run(["m", "h", "y"], {"x": x})
    assert _add_kernels(sess)[0] != "_add_into"
    full = ort.InferenceSession(_with_output(_with_output(model, "m"), "h")
                                .SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for got, want in zip((y, m, h), full):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _ort(model, x):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _conv_silu(mul_inputs, extra_reader=False, then="Identity"):
    rng = np.random.default_rng(4)
    w = rng.standard_normal((6, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["s"]),
             helper.make_node("Mul", mul_inputs, ["m"])]
    if extra_reader:   # c also feeds the output directly: no fusion
        nodes.append(helper.make_node("Add", ["m", "c"], ["y"]))
    else:
        nodes.append(helper.make_node(then, ["m"], ["y"]))
    return _model(nodes, (2, 3, 40, 40), rng, w=w)


@pytest.mark.parametrize("mul_inputs", [["c", "s"], ["s", "c"]])
def test_sigmoid_and_mul_become_one_silu_step(mul_inputs):
    model, x = _conv_silu(mul_inputs)
    x[0, 0, 0, :4] = [-200.0, 200.0, 0.0, -0.0]   # exp(-x) overflows: SiLU -> -0
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    (plan,) = sess._plans.values()
    ops = [s.node.op_type for s in plan.steps]
    assert "Mul" not in ops and ops.count("Sigmoid") == 1
    np.testing.assert_allclose(y, _ort(model, x), rtol=1e-5, atol=1e-5)


def test_a_relu_after_silu_is_kept():
    """Relu fusion folds the Relu into the Mul first; SiLU fusion then must not take
    that Mul (it dropped the Relu: negative outputs)."""
    model, x = _conv_silu(["c", "s"], then="Relu")
    y = og.Session(from_onnx(model)).run("y", {"x": x})
    assert y.min() == 0
    np.testing.assert_allclose(y, _ort(model, x), rtol=1e-5, atol=1e-5)


def test_silu_left_alone_when_its_input_has_another_reader():
    model, x = _conv_silu(["c", "s"], extra_reader=True)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    (plan,) = sess._plans.values()
    assert "Mul" in [s.node.op_type for s in plan.steps]
    np.testing.assert_allclose(y, _ort(model, x), rtol=1e-5, atol=1e-5)


def test_silu_with_the_sigmoid_fetched_is_not_fused():
    model, x = _conv_silu(["c", "s"])
    model.graph.output.append(helper.make_tensor_value_info("s", TensorProto.FLOAT, None))
    sess = og.Session(from_onnx(model))
    y, s = sess.run(["y", "s"], {"x": x})
    (plan,) = sess._plans.values()
    assert "Mul" in [st.node.op_type for st in plan.steps]
    want_y, want_s = ort.InferenceSession(model.SerializeToString(),
                                          providers=["CPUExecutionProvider"]).run(
        None, {"x": x})
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, want_s, rtol=1e-5, atol=1e-6)


# -- edges found by a near-miss fuzz of the rewrites: each case against onnxruntime --

def _ort_model(nodes, inputs, inits, dtype=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info("y", dtype, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _ort_y(model, x):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]


def test_float16_scale_that_would_overflow_the_folded_weights_is_not_folded():
    """W = 200 times Mul 400 is 80000, past float16's range, though 0.001 * 200 * 400
    is not: folding gave inf."""
    model = _ort_model(
        [helper.make_node("Conv", ["x", "W"], ["c"]), helper.make_node("Mul", ["c", "k"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 2, 3, 3])],
        [numpy_helper.from_array(np.full((2, 2, 1, 1), 200, np.float16), "W"),
         numpy_helper.from_array(np.array([400], np.float16), "k")], TensorProto.FLOAT16)
    x = np.full((1, 2, 3, 3), 0.001, np.float16)
    y = og.Session(from_onnx(model)).run("y", {"x": x})
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y.astype(np.float32), _ort_y(model, x).astype(np.float32),
                               rtol=2e-3)


def _bn_relu_conv(scale, bias, dtype, w_factor=1.0):
    """BatchNormalization (scale, bias; mean 0, var 1) -> Relu -> 3x3 Conv with padding
    in `dtype`, and a seeded input for it."""
    rng = np.random.default_rng(0)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def f(a, n):
        return numpy_helper.from_array(np.asarray(a, dtype), n)
    model = _ort_model(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"]),
         helper.make_node("Relu", ["bn"], ["r"]),
         helper.make_node("Conv", ["r", "W", "B"], ["y"], pads=[1, 1, 1, 1])],
        [helper.make_tensor_value_info("x", elem, [1, 2, 4, 4])],
        [f(scale, "s"), f(bias, "b"), f([0, 0], "m"), f([1, 1], "v"),
         f(rng.standard_normal((3, 2, 3, 3)) * w_factor, "W"), f(rng.standard_normal(3), "B")],
        elem)
    return model, rng.standard_normal((1, 2, 4, 4)).astype(dtype)


def test_tiny_batchnorm_scale_before_relu_and_a_padded_conv():
    """A pruned BN channel (scale 1e-39, bias 1): c = -b/a overflowed float32 and the
    BN-Relu-Conv rewrite gave -inf/NaN."""
    model, x = _bn_relu_conv([1.0, 1e-39], [0.0, 1.0], np.float32)
    np.testing.assert_allclose(og.Session(from_onnx(model)).run("y", {"x": x}),
                               _ort_y(model, x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(0, 4, 6, 6), (2, 4, 6, 6)])
def test_convs_folded_into_a_concat_with_an_empty_batch(shape):
    rng = np.random.default_rng(1)

    def r(*s):
        return rng.standard_normal(s).astype(np.float32)
    model = _ort_model(
        [helper.make_node("Conv", ["x", "W0", "B0"], ["c0"]),
         helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("Concat", ["c0", "c1"], ["y"], axis=1)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 6, 6])],
        [numpy_helper.from_array(r(3, 4, 1, 1), "W0"), numpy_helper.from_array(r(3), "B0"),
         numpy_helper.from_array(r(2, 4, 3, 3), "W1"), numpy_helper.from_array(r(2), "B1")])
    sess = og.Session(from_onnx(model))
    x = r(*shape)
    y = sess.run("y", {"x": x})
    assert y.shape == (shape[0], 5, 6, 6)
    np.testing.assert_allclose(y, _ort_y(model, x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("group", [1, 2])
def test_fused_pointwise_conv_of_an_image_without_pixels(group):
    """onnxruntime refuses zero-size images; the unfused kernel returns an empty
    result, and the fused 1x1 path (bias as a row of ones) raised on its reshape."""
    rng = np.random.default_rng(2)
    model = _ort_model(
        [helper.make_node("Conv", ["x", "W", "B"], ["y"], group=group)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, None, 3])],
        [numpy_helper.from_array(rng.standard_normal((16, 4 // group, 1, 1))
                                 .astype(np.float32), "W"),
         numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "B")])
    x = np.zeros((1, 4, 0, 3), np.float32)
    fused = og.Session(from_onnx(model)).run("y", {"x": x})
    plain = og.Session(from_onnx(model))
    plain.optimize = False
    assert fused.shape == plain.run("y", {"x": x}).shape == (1, 16, 0, 3)


def test_a_non_finite_constant_does_not_merge_into_the_affine_before_it():
    """(x a + b) * inf is +-inf; merged into x (a inf) + b inf it was inf - inf = NaN
    (BatchNormalization then Mul by an infinite constant)."""
    def f(a, n):
        return numpy_helper.from_array(np.asarray(a, np.float32), n)
    model = _ort_model(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"]),
         helper.make_node("Mul", ["bn", "c"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 1, 1])],
        [f([1, 1], "s"), f([0, 0], "b"), f([0, 0], "m"), f([1, 1], "v"),
         f(np.full((2, 1, 1), np.inf), "c")])
    x = np.array([1, -1], np.float32).reshape(1, 2, 1, 1)
    got = og.Session(from_onnx(model)).run("y", {"x": x})
    np.testing.assert_array_equal(got, _ort_y(model, x))
    np.testing.assert_array_equal(got.ravel(), [np.inf, -np.inf])


def test_float16_batchnorm_relu_conv_is_not_rescaled():
    """c = -b/a = -1e5 fits float32 but x - c leaves float16's range: the BN-Relu-Conv
    rewrite gave inf; float16 chains now run as they are."""
    model, x = _bn_relu_conv([1.0, 1e-3], [0.0, 100.0], np.float16, w_factor=0.1)
    got = og.Session(from_onnx(model)).run("y", {"x": x})
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got.astype(np.float32), _ort_y(model, x).astype(np.float32),
                               rtol=1e-2, atol=0.05)


def _closure_dicts(fn, depth=2):
    """The dicts a function's closure holds (its memo tables), also those of the
    functions it holds, `depth` levels down."""
    found = []
    for cell in fn.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, dict):
            found.append(value)
        elif callable(value) and getattr(value, "__closure__", None) and depth:
            found += _closure_dicts(value, depth - 1)
    return found


@pytest.mark.parametrize("build", ["conv_relu_maxpool", "concat_relu_maxpool"])
def test_per_shape_memos_stay_bounded_under_ever_new_image_sizes(build):
    """The fused steps' per-shape memos (Conv geometry, Relu past MaxPool, Concat
    buffers) keep a bounded number of image sizes: a dynamic-size model run on 150
    sizes must not grow them forever."""
    if build == "conv_relu_maxpool":
        model, x0 = _conv_relu_maxpool(dict(kernel_shape=[3, 3], strides=[2, 2]))
    else:
        model, x0 = _concat_relu_maxpool()
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[2].dim_param, dims[3].dim_param = "h", "w"  # dynamic image size
    sess = og.Session(from_onnx(model))
    rng = np.random.default_rng(0)
    for size in range(6, 156):
        x = rng.standard_normal(x0.shape[:2] + (size, 7)).astype(np.float32)
        y = sess.run("y", {"x": x})
        if size % 37 == 0:  # an independent oracle now and then
            np.testing.assert_allclose(y, _ort(model, x), rtol=1e-5, atol=1e-5)
    (plan,) = sess._plans.values()
    memos = [d for s in plan.steps for d in _closure_dicts(s.kernel)]
    per_shape = [d for d in memos if any(isinstance(k, tuple) for k in d)] + \
        [d["geometry"] for d in memos if "geometry" in d]
    assert per_shape and all(0 < len(d) <= 64 for d in per_shape)


# -- fusion audit findings (a helper's differential audit against optimize=False and
# onnxruntime); each test failed before its fix


def _unoptimised(model, feeds):
    sess = og.Session(from_onnx(model))
    sess.optimize = False
    return sess.run(["y"], feeds)[0]


def test_pointwise_conv_before_a_pool_window_over_padding_only_keeps_zero():
    """A strided AveragePool (count_include_pad 0) whose window covers only padding
    averages to 0; moved before the 1x1 Conv it gave the Conv's bias there."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
             helper.make_node("AveragePool", ["c"], ["y"], kernel_shape=[2, 2],
                              strides=[2, 2], pads=[1, 1, 1, 1], dilations=[3, 3])]
    model, _ = _model(nodes, [1, 1, 2, 2], np.random.default_rng(0),
                      w=np.full((1, 1, 1, 1), 2, np.float32), b=np.array([5], np.float32))
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
    got = og.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    np.testing.assert_array_equal(got, _ort(model, x))
    np.testing.assert_array_equal(got, _unoptimised(model, {"x": x}))


def test_a_constant_of_another_float_type_is_not_folded_into_a_conv():
    """Mul(float64 constant, float32 Conv) is float64 (built through the IR); folding
    the constant into the Conv's weights made it float32."""
    from onegraph.format import Graph, Model
    from onegraph.ops.inference import annotate_graph

    g = Graph("main")
    x = g.add_input("x", "float32", [1, 3, 4, 4])
    w = g.add_constant("w", np.ones((2, 3, 1, 1), np.float32))
    k = g.add_constant("k", np.full((2, 1, 1), 1 / 3, np.float64))
    (c,) = g.add_node("Conv", [x, w], ["c"])
    (m,) = g.add_node("Mul", [k, c], ["m"])
    (y,) = g.add_node("Relu", [m], ["y"])
    g.outputs = [y]
    annotate_graph(g)
    model = Model(graphs=[g], opset_imports={"": 21})
    xv = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    on, off = og.Session(model), og.Session(model)
    off.optimize = False
    a, b = on.run(["y"], {"x": xv})[0], off.run(["y"], {"x": xv})[0]
    assert a.dtype == b.dtype == np.float64
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_bn_relu_conv_runs_per_channel_on_a_rank_the_declarations_got_wrong():
    """A stale value_info says the BN input is 4-D; at run time it is 3-D, and the
    folded Relu's fallback divided a (1, C, L) tensor by a (C, 1, 1) scale."""
    r = np.random.default_rng(0)
    c, n = 3, 5
    inits = [numpy_helper.from_array(v, name) for name, v in (
        ("s", r.uniform(0.5, 1.5, c).astype(np.float32)),
        ("b", r.standard_normal(c).astype(np.float32)),
        ("mu", r.standard_normal(c).astype(np.float32)),
        ("var", r.uniform(0.5, 1.5, c).astype(np.float32)),
        ("w", r.standard_normal((4, c, 1)).astype(np.float32)))]
    nodes = [helper.make_node("Relu", ["xin"], ["x"]),
             helper.make_node("BatchNormalization", ["x", "s", "b", "mu", "var"], ["n"]),
             helper.make_node("Relu", ["n"], ["r"]), helper.make_node("Conv", ["r", "w"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("xin", TensorProto.FLOAT, [1, c, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, n])], initializer=inits,
        value_info=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, n, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    xv = r.standard_normal((1, c, n)).astype(np.float32)
    got = og.Session(from_onnx(model)).run(["y"], {"xin": xv})[0]
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]
                                ).run(None, {"xin": xv})[0]
    assert got.shape == want.shape == (1, 4, n)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bn_relu_pointwise_conv_with_a_large_shift_keeps_float32_accuracy():
    """A channel the Relu zeroes entirely added W shift and took it away again in the
    folded 1x1 form: 1.8 off at a BN scale of 1e6 (shift -1e7)."""
    c = 4
    r = np.random.default_rng(0)
    xv = r.standard_normal((1, c, 8, 8)).astype(np.float32)
    for scale in (1e4, 1e6):
        nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "mu", "var"], ["n"]),
                 helper.make_node("Relu", ["n"], ["r"]),
                 helper.make_node("Conv", ["r", "w"], ["y"])]
        model, _ = _model(nodes, [1, c, 8, 8], r, s=np.array([scale, 1, 1, 1], np.float32),
                          b=np.zeros(c, np.float32), mu=np.array([10, 0, 0, 0], np.float32),
                          var=np.ones(c, np.float32),
                          w=r.standard_normal((2, c, 1, 1)).astype(np.float32))
        got = og.Session(from_onnx(model)).run(["y"], {"x": xv})[0]
        np.testing.assert_allclose(got, _unoptimised(model, {"x": xv}), rtol=1e-5, atol=1e-5)


def test_in_place_add_of_shapes_that_do_not_broadcast_is_a_shape_error():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Add", ["c", "k"], ["y"])]
    model, xv = _model(nodes, [2, 3, 6, 6], np.random.default_rng(0),
                       w=np.ones((4, 3, 1, 1), np.float32), k=np.ones((4, 1), np.float32))
    with pytest.raises(og.ShapeError, match=r"input shapes \[2, 4, 6, 6\], \[4, 1\]"):
        og.Session(from_onnx(model)).run(["y"], {"x": xv})


# -- rewrite 10: Gelu in place on a fresh MatMul/Add output --

def _ffn_gelu(extra_reader=False, gelu_input="h"):
    """x (6, 32) -> MatMul -> + bias -> Gelu -> y (opset 20), a transformer FFN's first
    half; with `extra_reader` the biased value h is also added to the output."""
    rng = np.random.default_rng(9)
    w = (rng.standard_normal((32, 48)) * 3).astype(np.float32)
    b = rng.standard_normal(48).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["h"]),
             helper.make_node("Gelu", [gelu_input], ["g"])]
    if extra_reader:
        nodes.append(helper.make_node("Add", ["g", "h"], ["y"]))
    else:
        nodes.append(helper.make_node("Identity", ["g"], ["y"]))
    model, x = _model(nodes, (6, 32), rng, w=w, b=b)
    model.opset_import[0].version = 20
    # huge, infinite and NaN products: Gelu(+inf) = inf, Gelu(-inf) = Gelu(NaN) = NaN
    x[0, :3] = [np.inf, 0.0, 0.0]
    x[1, :3] = [-np.inf, 0.0, 0.0]
    x[2, :3] = [np.nan, 0.0, 0.0]
    x[3] *= 1e4
    return model, x


def _gelu_kernel_names(sess):
    (plan,) = sess._plans.values()
    return [s.kernel.__qualname__.split(".")[0] for s in plan.steps
            if s.node.op_type == "Gelu"]


def _same_as_ort(got, model, x):
    want = _ort(model, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(want), rtol=1e-5,
                               atol=1e-5)


def test_gelu_runs_in_place_on_the_bias_add_output():
    model, x = _ffn_gelu()
    kept = x.copy()
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert _gelu_kernel_names(sess) == ["_gelu_in_place_kernel"]
    np.testing.assert_array_equal(x, kept)  # the feed is never written
    _same_as_ort(y, model, x)
    _same_as_ort(sess.run("y", {"x": x}), model, x)  # and again, from the cached plan


def test_gelu_keeps_an_input_another_step_reads():
    model, x = _ffn_gelu(extra_reader=True)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert _gelu_kernel_names(sess) != ["_gelu_in_place_kernel"]
    _same_as_ort(y, model, x)


def test_gelu_keeps_a_fetched_input_and_a_feed():
    model, x = _ffn_gelu()
    sess = og.Session(from_onnx(model))
    h, y = sess.run(["h", "y"], {"x": x})
    assert _gelu_kernel_names(sess) != ["_gelu_in_place_kernel"]
    _same_as_ort(y, model, x)
    want_h = ort.InferenceSession(_with_output(model, "h").SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(["h"], {"x": x})
    np.testing.assert_array_equal(np.isnan(h), np.isnan(want_h[0]))
    np.testing.assert_allclose(np.nan_to_num(h), np.nan_to_num(want_h[0]), rtol=1e-5,
                               atol=1e-4)
    # a Gelu reading the fed x itself must leave the caller's array alone
    model, x = _ffn_gelu(gelu_input="x")
    kept = x.copy()
    sess = og.Session(from_onnx(model))
    sess.run("y", {"x": x})
    np.testing.assert_array_equal(x, kept)
    assert _gelu_kernel_names(sess) != ["_gelu_in_place_kernel"]


def _shuffle_unit(shuffle=True, reader="depthwise"):
    """ShuffleNet's unit head: a grouped 1x1 Conv + BatchNormalization + Relu, the
    channel shuffle (Reshape, Transpose, Reshape) when `shuffle`, then the Conv reading
    it: a 3x3 depthwise Conv + BatchNormalization ("depthwise", "depthwise_s2") or a
    dense 3x3 Conv ("dense")."""
    rng = np.random.default_rng(12)
    c, m = 8, 12
    x_shape = (2, c, 9, 9)
    weights = dict(w1=rng.standard_normal((m, c // 2, 1, 1)),
                   scale=rng.uniform(0.5, 2, m), shift=rng.standard_normal(m),
                   mean=rng.standard_normal(m), var=rng.uniform(0.5, 2, m),
                   w2=rng.standard_normal((m, 1 if reader != "dense" else m, 3, 3)),
                   b2=rng.standard_normal(m))
    weights = {k: v.astype(np.float32) for k, v in weights.items()}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], group=2),
             helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"],
                              ["n"]),
             helper.make_node("Relu", ["n"], ["r"])]
    t = "r"
    if shuffle:
        weights["s1"] = np.array([2, 2, m // 2, 9, 9], np.int64)
        weights["s2"] = np.array([2, m, 9, 9], np.int64)
        nodes += [helper.make_node("Reshape", ["r", "s1"], ["r1"]),
                  helper.make_node("Transpose", ["r1"], ["t"], perm=[0, 2, 1, 3, 4]),
                  helper.make_node("Reshape", ["t", "s2"], ["r2"])]
        t = "r2"
    group = 1 if reader == "dense" else m
    strides = [2, 2] if reader == "depthwise_s2" else [1, 1]
    nodes.append(helper.make_node("Conv", [t, "w2", "b2"], ["y"], group=group,
                                  pads=[1, 1, 1, 1], strides=strides))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model, rng.standard_normal(x_shape).astype(np.float32)


def _rectifying_steps(sess):
    (plan,) = sess._plans.values()
    return sum(bool(getattr(s.kernel, "relu_input", False)) for s in plan.steps)


def _shifting_steps(sess):
    """Steps that add a producer's bias as they read (rewrite 12), and the producers
    left without a bias."""
    (plan,) = sess._plans.values()
    shifting = sum(getattr(s.kernel, "input_shift", None) is not None for s in plan.steps)
    unbiased = sum(getattr(s.kernel, "bias_moved", False)
                   or getattr(s.kernel, "conv_parts", (0, 0, 0))[2] is None
                   for s in plan.steps if hasattr(s.kernel, "conv_parts")
                   or hasattr(s.kernel, "shuffled_parts"))
    return shifting, unbiased


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("reader", ["depthwise", "depthwise_s2"])
def test_relu_moves_into_the_depthwise_conv(shuffle, reader, jit_backend):
    """Rewrite 12: the grouped 1x1 Conv's bias (its BatchNormalization's shift) and Relu
    (after the folded shuffle or not) are applied by the depthwise Conv as it reads,
    the bias in the shuffled channel order; the same results as onnxruntime."""
    model, x = _shuffle_unit(shuffle, reader)
    x[0, :, :4] -= 3   # (plenty of negative 1x1 outputs for the Relu)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert _rectifying_steps(sess) == 1
    assert _shifting_steps(sess) == (1, 1)
    np.testing.assert_allclose(y, _ort(model, x), rtol=1e-4, atol=1e-4)


def test_relu_stays_before_a_dense_conv_or_a_fetched_output():
    """No rewrite 12 when the reader is not a depthwise Conv, or the rectified output
    is fetched too (it must come out rectified)."""
    model, x = _shuffle_unit(reader="dense")
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert _rectifying_steps(sess) == 0
    np.testing.assert_allclose(y, _ort(model, x), rtol=1e-4, atol=1e-4)
    model, x = _shuffle_unit(shuffle=False)
    sess = og.Session(from_onnx(model))
    r, y = sess.run(["r", "y"], {"x": x})
    assert _rectifying_steps(sess) == 0
    full = ort.InferenceSession(_with_output(model, "r").SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(["y", "r"], {"x": x})
    np.testing.assert_allclose(y, full[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r, full[1], rtol=1e-4, atol=1e-4)
    assert (r >= 0).all()


def test_relu_moves_along_a_chain_of_depthwise_convs(jit_backend):
    """Conv + Relu -> depthwise Conv + Relu -> depthwise Conv: each Relu moves into the
    next Conv, the middle one both rectifying its input and leaving its own Relu to
    the last; the same results as onnxruntime."""
    rng = np.random.default_rng(14)
    c = 6
    weights = {k: rng.standard_normal(shape).astype(np.float32) for k, shape in (
        ("w1", (c, 3, 1, 1)), ("w2", (c, 1, 3, 3)), ("w3", (c, 1, 3, 3)),
        ("b1", (c,)), ("b2", (c,)), ("b3", (c,)))}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], group=c, pads=[1] * 4),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["y"], group=c, pads=[1] * 4,
                              strides=[2, 2])]
    model, x = _model(nodes, (2, 3, 10, 10), rng, **weights)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert _rectifying_steps(sess) == 2
    assert _shifting_steps(sess) == (2, 2)  # b1 and b2 move on; the last keeps b3
    np.testing.assert_allclose(y, _ort(model, x), rtol=1e-4, atol=1e-4)



def test_a_shuffle_that_does_not_fold_keeps_its_bias():
    """A shuffled producer whose output shape does not fit its folded shuffle runs its
    Reshape/Transpose chain with the bias: the reader's shift is then None."""
    from onegraph.ops import conv as conv_ops
    from onegraph.train import optimize

    kernel = optimize._shuffled_conv_kernel(
        (conv_ops._conv_kernel, np.ones((12, 4, 1, 1), np.float32),
         np.arange(12, dtype=np.float32), True), [2, 2, 6, 9, 9], [2, 12, 9, 9], [])
    make, shift = optimize._without_relu_and_bias(kernel)
    moved = make()
    assert moved.bias_moved and moved.shuffled_parts[0][2] is not None  # (the fallback's)
    np.testing.assert_array_equal(shift((2, 12, 9, 9)),
                                  np.arange(12).reshape(2, 6).T.reshape(-1))
    assert shift((2, 12, 5, 5)) is None
    # whichever path the producer takes (the folded shuffle, or its Conv then the
    # Reshape/Transpose chain, here for an ndarray subclass), the bias is left to the
    # reader exactly when the shape fits
    from onegraph.ops import KernelContext, get_op

    class Sub(np.ndarray):
        pass

    attrs = get_op("Conv").resolve_attrs({}, num_outputs=1)
    x = np.random.default_rng(3).standard_normal((2, 4, 9, 9)).astype(np.float32)
    chain = [(get_op("Reshape").kernel, {"allowzero": 0}, np.array([2, 2, 6, 9, 9])),
             (get_op("Transpose").kernel, get_op("Transpose").resolve_attrs(
                 {"perm": [0, 2, 1, 3, 4]}, num_outputs=1), None),
             (get_op("Reshape").kernel, {"allowzero": 0}, np.array([2, 12, 9, 9]))]
    w = np.random.default_rng(4).standard_normal((12, 4, 1, 1)).astype(np.float32)
    moved = optimize._shuffled_conv_kernel(
        (conv_ops._conv_kernel, w, np.arange(12, dtype=np.float32), False),
        [2, 2, 6, 9, 9], [2, 12, 9, 9], chain, bias_moved=True)
    (fast,) = moved([x], attrs, KernelContext())
    (slow,) = moved([x.view(Sub)], attrs, KernelContext())
    np.testing.assert_allclose(np.asarray(slow), fast, rtol=1e-6, atol=1e-6)
    want = np.einsum("mc,nchw->nmhw", w[:, :, 0, 0], x)    # no bias
    np.testing.assert_allclose(fast, want.reshape(2, 2, 6, 9, 9).transpose(0, 2, 1, 3, 4)
                               .reshape(2, 12, 9, 9), rtol=1e-5, atol=1e-5)
