"""ONNX's removed experimental ops (ImageScaler, Crop, Affine, ScaledTanh,
ParametricSoftplus, Scale, DynamicSlice; ThresholdedRelu before opset 10 and
MeanVarianceNormalization before 9, where onnx has no schema) in old-opset models,
which the importer
spells in standard ops before onnx's version converter upgrades the model
(`convert/onnx_legacy.py`, `rewrite_experimental`).

Oracle: onnxruntime 1.32, which still registers them (in models of opsets 1-9), running
the original model; onegraph imports it with from_onnx and runs it in its Session, and
the model exported back with to_onnx runs in onnxruntime too. Tanh and Softplus differ
from onnxruntime's in the last bits, so those compare to 1e-6; the rest bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.convert.onnx_legacy import (EXPERIMENTAL_OPS, has_experimental_ops,  # noqa: E402
                                          rewrite_experimental)
from onegraph.errors import ConversionError  # noqa: E402

F = TensorProto.FLOAT
ORT_OPSETS = (1, 6, 7, 8, 9)      # onnxruntime runs the experimental ops in opsets 1-9
RNG = np.random.default_rng(0)
X = (RNG.standard_normal((2, 3, 5, 6)) * 3).astype(np.float32)


def _model(nodes, inputs, opset, initializers=(), out_shape=None, value_info=()):
    """A model of `nodes` with graph inputs {name: array} (declared with their shapes)
    and output "y"."""
    graph = helper.make_graph(
        nodes, "experimental",
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                       list(v.shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(
            next(iter(inputs.values())).dtype), out_shape)],
        list(initializers), value_info=list(value_info))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3 if opset < 7 else 4 if opset < 10 else 7
    return model


def _one(op, opset, x=X, **attrs):
    return _model([helper.make_node(op, ["x"], ["y"], name="exp", **attrs)], {"x": x},
                  opset)


def _ort(model, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _check(model, feeds, exact=True, export=True):
    """onegraph (import + Session) and its export (run by onnxruntime) against
    onnxruntime on the original model."""
    want = _ort(model, feeds)
    imported = from_onnx(model)
    got = onegraph.Session(imported).run(["y"], feeds)[0]
    compare = np.testing.assert_array_equal if exact else \
        (lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6))
    assert got.dtype == want.dtype and got.shape == want.shape
    compare(got, want)
    if export:
        proto = to_onnx(imported)
        assert not {n.op_type for n in proto.graph.node} & set(EXPERIMENTAL_OPS)
        compare(_ort(proto, feeds), want)
    return got


# ---------------------------------------------------------------- one-node models

ONE_NODE = [
    ("ImageScaler", dict(scale=2.5, bias=[1.0, -1.0, 0.25]), True),
    ("ImageScaler", dict(bias=[1.0, -1.0, 0.25]), True),           # scale defaults to 1
    ("Crop", dict(border=[1, 0, 2, 1]), True),
    ("Crop", dict(border=[0, 0, 0, 0]), True),
    ("Crop", dict(border=[1, 1, 0, 0], scale=[3, 2]), True),
    ("Crop", dict(border=[0, 2, 5, 0], scale=[3, 1]), True),
    ("Crop", dict(border=[2, 1, 2, 1]), True),                     # leaves 3 x 2
    ("Affine", dict(alpha=2.0, beta=0.5), True),
    ("Affine", dict(), True),                                     # alpha 1, beta 0
    ("Affine", dict(beta=-3.0), True),
    ("Scale", dict(scale=3.0), True),
    ("Scale", dict(), True),                                      # scale defaults to 1
    ("ScaledTanh", dict(alpha=2.0, beta=0.5), False),
    ("ScaledTanh", dict(alpha=-1.5, beta=3.0), False),
    ("ParametricSoftplus", dict(alpha=2.0, beta=0.5), False),
    ("ParametricSoftplus", dict(alpha=0.5, beta=12.0), False),    # exp(beta x) overflows
]


@pytest.mark.parametrize("opset", ORT_OPSETS)
@pytest.mark.parametrize("op, attrs, exact", ONE_NODE)
def test_one_node(op, attrs, exact, opset):
    _check(_one(op, opset, **attrs), {"x": X}, exact)


@pytest.mark.parametrize("opset", [6, 7, 8, 9])    # opset 1: onnxruntime's float16 cast
@pytest.mark.parametrize("op, attrs", [                  # is a Cast-1 with an int `to`
    ("ImageScaler", dict(scale=0.5, bias=[1.0, 2.0, 3.0])),
    ("Affine", dict(alpha=2.0, beta=0.5)),
    ("Scale", dict(scale=3.0)),
    ("ScaledTanh", dict(alpha=2.0, beta=0.5)),
    ("ParametricSoftplus", dict(alpha=2.0, beta=0.5)),
    ("Crop", dict(border=[1, 0, 2, 1])),
])
def test_float16(op, attrs, opset):
    """onnxruntime runs float16 through float32 (inserted casts); onegraph computes
    in float16's compute type, so a rounding step may differ."""
    x = X.astype(np.float16)
    model = _one(op, opset, x=x, **attrs)
    want = _ort(model, {"x": x})
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                               rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("opset", [6, 8])      # ImageScaler: a Conv, then Mul + Add
def test_special_values(opset):
    x = np.array([[[[np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30]]]], np.float32)
    for op, attrs, exact in ((n, a, e) for n, a, e in ONE_NODE if n != "Crop"):
        if op == "ImageScaler":
            attrs = dict(attrs, bias=[0.5])
        _check(_one(op, opset, x=x, **attrs), {"x": x}, exact, export=False)


# ---------------------------------------------------------------- DynamicSlice

def _dynamic_slice(opset, starts, ends, axes=None, dtype=np.int64, as_constant=False):
    inits = [numpy_helper.from_array(np.array(starts, dtype), "s"),
             numpy_helper.from_array(np.array(ends, dtype), "e")]
    names = ["x", "s", "e"]
    if axes is not None:
        inits.append(numpy_helper.from_array(np.array(axes, dtype), "a"))
        names.append("a")
    nodes = [helper.make_node("DynamicSlice", names, ["y"], name="ds")]
    if as_constant:
        nodes = [helper.make_node("Constant", [], [t.name], value=t) for t in inits] + nodes
        inits = []
    return _model(nodes, {"x": X}, opset, inits)


@pytest.mark.parametrize("opset", ORT_OPSETS)
@pytest.mark.parametrize("starts, ends, axes", [
    ([0, 1], [1, 3], None),
    ([1, -4], [1000, -1], [2, 3]),
    ([-100], [2 ** 63 - 1], [1]),
    ([0, 0, 2, 1], [2, 3, 4, 5], [0, 1, 2, 3]),
    ([3], [1], [3]),                                  # empty
    ([1], [3], [-1]),
])
def test_dynamic_slice(starts, ends, axes, opset):
    _check(_dynamic_slice(opset, starts, ends, axes), {"x": X})


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_dynamic_slice_int32_and_constant_nodes(dtype):
    for as_constant in (False, True):
        _check(_dynamic_slice(8, [1, 2], [2, 5], [1, 3], dtype, as_constant), {"x": X})


@pytest.mark.parametrize("opset", ORT_OPSETS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_dynamic_slice_with_bounds_computed_at_run_time(opset, dtype):
    """Bounds fed at run time: Slice takes them as inputs only from opset 10, so the
    model is brought to opset 11 with the node set aside, then it becomes a Slice."""
    nodes = [helper.make_node("DynamicSlice", ["x", "s", "e", "a"], ["y"], name="ds"),
             helper.make_node("Identity", ["y"], ["z"])]
    s0 = np.array([1, -4], dtype)
    model = _model(nodes, {"x": X, "s": s0, "e": np.array([3, 100], dtype),
                           "a": np.array([2, 3], dtype)}, opset)
    model.graph.output[0].name = "z"
    imported = from_onnx(model)
    session = onegraph.Session(imported)
    for starts, ends, axes in (([1, -4], [3, 100], [2, 3]), ([0, 2], [1, 4], [0, 1]),
                               ([-1, 0], [-100, 9], [3, 2])):
        feeds = {"x": X, "s": np.array(starts, dtype), "e": np.array(ends, dtype),
                 "a": np.array(axes, dtype)}
        want = _ort(model, feeds)
        np.testing.assert_array_equal(session.run(["z"], feeds)[0], want)
        np.testing.assert_array_equal(_ort(to_onnx(imported), feeds), want)


def test_dynamic_slice_of_integers_with_computed_bounds():
    x = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("DynamicSlice", ["x", "st", "shape"], ["y"])]
    model = _model(nodes, {"x": x}, 8,
                   [numpy_helper.from_array(np.array([1, 1, 2], np.int64), "st")])
    np.testing.assert_array_equal(
        onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0], _ort(model, {"x": x}))


# ---------------------------------------------------------------- ops onnx defines later

@pytest.mark.parametrize("opset", ORT_OPSETS)
@pytest.mark.parametrize("attrs", [dict(alpha=0.5), dict(), dict(alpha=-2.0)])
def test_thresholded_relu_before_opset_10(opset, attrs):
    """onnx defines ThresholdedRelu from opset 10; onnxruntime runs it in 1-9 too."""
    _check(_one("ThresholdedRelu", opset, **attrs), {"x": X})


@pytest.mark.parametrize("opset", ORT_OPSETS[:-1])
@pytest.mark.parametrize("attrs", [dict(), dict(across_channels=1),
                                   dict(normalize_variance=0),
                                   dict(across_channels=1, normalize_variance=0)])
def test_mean_variance_normalization_before_opset_9(opset, attrs):
    """onnxruntime runs opset 9's kernel: axes [0, 2, 3] ([0, 1, 2, 3] across channels),
    not per image."""
    _check(_one("MeanVarianceNormalization", opset, **attrs), {"x": X}, exact=False)


# ---------------------------------------------------------------- multi-node models

@pytest.mark.parametrize("opset", [7, 8, 9])
def test_deferred_ops_with_an_upsample(opset):
    """Upsample (rewritten after the converter reaches opset 11) with ThresholdedRelu,
    a run-time DynamicSlice and an ImageScaler before it."""
    scales = np.array([1, 1, 2, 2], np.float32)
    up = helper.make_node("Upsample", ["b", "sc"], ["c"], mode="nearest") if opset == 9 \
        else helper.make_node("Upsample", ["b"], ["c"], mode="nearest",
                              scales=scales.tolist())
    nodes = [helper.make_node("ImageScaler", ["x"], ["a"], scale=0.5, bias=[1.0, 2.0, 3.0]),
             helper.make_node("ThresholdedRelu", ["a"], ["b"], alpha=0.75), up,
             helper.make_node("Shape", ["c"], ["shape"]),
             helper.make_node("DynamicSlice", ["c", "st", "shape"], ["y"], name="ds")]
    inits = [numpy_helper.from_array(np.array([0, 1, 3, 2], np.int64), "st")]
    if opset == 9:
        inits.append(numpy_helper.from_array(scales, "sc"))
    _check(_model(nodes, {"x": X}, opset, inits), {"x": X})


def _tiny_yolo_head(opset, rng):
    """ImageScaler -> Conv -> BatchNormalization -> LeakyRelu -> MaxPool, as the model
    zoo's tiny-yolov2 starts."""
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.2).astype(np.float32)
    bn = [np.abs(rng.standard_normal(4)).astype(np.float32) + 0.5 for _ in range(4)]
    inits = [numpy_helper.from_array(w, "w")] + [
        numpy_helper.from_array(v, k) for k, v in zip(("g", "b", "m", "v"), bn)]
    bn_attrs = {"is_test": 1} if opset < 7 else {}
    nodes = [helper.make_node("ImageScaler", ["x"], ["scaled"], name="scaler",
                              scale=1 / 255, bias=[0.0, 0.0, 0.0]),
             helper.make_node("Conv", ["scaled", "w"], ["conv"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["conv", "g", "b", "m", "v"], ["bn"],
                              epsilon=1e-3, **bn_attrs),
             helper.make_node("LeakyRelu", ["bn"], ["act"], alpha=0.1),
             helper.make_node("MaxPool", ["act"], ["y"], kernel_shape=[2, 2],
                              strides=[2, 2])]
    x = (rng.random((1, 3, 8, 8)) * 255).astype(np.float32)
    return _model(nodes, {"x": x}, opset, inits, out_shape=[1, 4, 4, 4]), x


@pytest.mark.parametrize("opset", [7, 8])
def test_tiny_yolo_head(opset):
    rng = np.random.default_rng(opset)
    model, x = _tiny_yolo_head(opset, rng)
    want = _ort(model, {"x": x})
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    proto = to_onnx(from_onnx(model))
    np.testing.assert_allclose(_ort(proto, {"x": x}), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opset", [6, 7, 8, 9])
def test_chain_of_experimental_ops(opset):
    """Each rewrite feeds the next: the element type of a later node's input is only
    known once the one before it is rewritten."""
    nodes = [helper.make_node("ImageScaler", ["x"], ["a"], scale=0.5, bias=[1.0, 2.0, 3.0]),
             helper.make_node("Crop", ["a"], ["b"], border=[1, 1, 1, 1]),
             helper.make_node("ScaledTanh", ["b"], ["c"], alpha=2.0, beta=0.25),
             helper.make_node("Relu", ["c"], ["d"]),
             helper.make_node("Affine", ["d"], ["e"], alpha=-1.0, beta=0.5),
             helper.make_node("ParametricSoftplus", ["e"], ["f"], alpha=1.5, beta=2.0),
             helper.make_node("Scale", ["f"], ["y"], scale=4.0)]
    _check(_model(nodes, {"x": X}, opset), {"x": X}, exact=False)


def test_experimental_op_inside_an_if_branch():
    then_g = helper.make_graph(
        [helper.make_node("Scale", ["x"], ["t"], scale=2.0)], "then", [],
        [helper.make_tensor_value_info("t", F, None)])
    else_g = helper.make_graph(
        [helper.make_node("Affine", ["x"], ["e"], alpha=3.0, beta=1.0)], "else", [],
        [helper.make_tensor_value_info("e", F, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    model = _model(nodes, {"x": X, "c": np.array(True)}, 8)
    for c in (True, False):
        feeds = {"x": X, "c": np.array(c)}
        np.testing.assert_array_equal(onegraph.Session(from_onnx(model)).run(["y"], feeds)[0],
                                      _ort(model, feeds))


# ---------------------------------------------------------------- the rewrite itself

def test_rewrite_keeps_the_opset_and_uses_initializers():
    model = _model([helper.make_node("ImageScaler", ["x"], ["y"], name="exp", scale=2.0,
                                     bias=[1.0, 2.0, 3.0])], {"x": X}, 8,
                   out_shape=list(X.shape))
    assert has_experimental_ops(model)
    out = rewrite_experimental(model)
    assert out.opset_import[0].version == 8
    assert [n.op_type for n in out.graph.node] == ["Mul", "Add"]
    assert out.graph.node[-1].name == "exp"
    assert sorted(numpy_helper.to_array(t).shape for t in out.graph.initializer) == \
        [(), (1, 3, 1, 1)]
    onnx.checker.check_model(out)
    assert not has_experimental_ops(out)
    assert [n.op_type for n in model.graph.node] == ["ImageScaler"]   # input untouched


def test_before_opset_7_image_scaler_is_a_depthwise_conv():
    out = rewrite_experimental(_one("ImageScaler", 6, scale=2.0, bias=[1.0, 2.0, 3.0]))
    (conv,) = out.graph.node
    assert conv.op_type == "Conv" and helper.get_attribute_value(conv.attribute[0]) == 3


def test_crop_is_a_slice_with_attributes():
    out = rewrite_experimental(_one("Crop", 9, border=[1, 2, 0, 3]))
    (node,) = out.graph.node
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert node.op_type == "Slice" and attrs["starts"] == [2, 1] and \
        attrs["ends"] == [-3, 2 ** 63 - 1] and attrs["axes"] == [2, 3]


def test_opset_10_models_are_left_alone():
    """onnxruntime refuses the experimental ops from opset 10 on; so does onegraph."""
    model = _one("Scale", 10, scale=2.0)
    assert not has_experimental_ops(model)
    with pytest.raises(ConversionError, match=r"unsupported op type\(s\): Scale"):
        from_onnx(model)


@pytest.mark.parametrize("op", ["GRUUnit", "GivenTensorFill", "ATen"])
def test_ops_onnxruntime_does_not_run_stay_unsupported(op):
    model = _model([helper.make_node(op, ["x"], ["y"])], {"x": X}, 8)
    with pytest.raises(ConversionError, match=rf"unsupported op type\(s\): {op} x1"):
        from_onnx(model)


# ---------------------------------------------------------------- refused attributes

@pytest.mark.parametrize("op, attrs, match", [
    ("ImageScaler", dict(scale=2.0), "attribute 'bias' is missing"),
    ("ImageScaler", dict(bias=[1.0, 2.0]), "bias has 2 values, the input 3 channels"),
    ("ScaledTanh", dict(alpha=1.0), "attribute 'beta' is missing"),
    ("ScaledTanh", dict(), "attribute 'alpha' is missing"),
    ("ParametricSoftplus", dict(beta=1.0), "attribute 'alpha' is missing"),
    ("Crop", dict(), r"attribute 'border' \(left, top, right, bottom\) is missing"),
    ("Crop", dict(scale=[2, 2]), "attribute 'border'"),
    ("Crop", dict(border=[1, 0, 1]), "'border' must be 4 non-negative integers"),
    ("Crop", dict(border=[-1, 0, 0, 0]), "'border' must be 4 non-negative integers"),
    ("Crop", dict(border=[0, 0, 0, 0], scale=[1, 1, 1]), "'scale' must be 2 non-negative"),
    ("Crop", dict(border=[0, 0, 0, 0], scale=[-1, 1]), "'scale' must be 2 non-negative"),
    ("Crop", dict(border=[2, 3, 2, 3]), "the crop needs 6 rows, the input has 5"),
    ("Crop", dict(border=[1, 1, 0, 0], scale=[2, 6]), "the crop needs 7 columns"),
])
def test_refused_like_onnxruntime(op, attrs, match):
    """onnxruntime refuses each of these too (at session creation or when it runs)."""
    model = _one(op, 8, **attrs)
    with pytest.raises(ConversionError, match=rf"{op} node 'exp': .*{match}"):
        from_onnx(model)
    with pytest.raises(Exception):
        _ort(model, {"x": X})


def test_image_scaler_and_crop_need_a_4d_input():
    x3 = X[0]
    for op, attrs in (("ImageScaler", dict(bias=[1.0] * 5)), ("Crop", dict(border=[0] * 4))):
        model = _one(op, 8, x=x3, **attrs)
        with pytest.raises(ConversionError, match=rf"{op} node 'exp': input must be 4-D"):
            from_onnx(model)
        with pytest.raises(Exception):
            _ort(model, {"x": x3})


def test_integer_input_is_refused():
    x = np.ones((1, 1, 2, 2), np.int32)
    with pytest.raises(ConversionError, match="Scale node 'exp': input 'x' is int32"):
        from_onnx(_one("Scale", 8, x=x, scale=2.0))
