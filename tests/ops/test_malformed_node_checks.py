"""Malformed nodes that used to run silently with a wrong (or empty) result, or fail
with a raw Python message, and that onnxruntime refuses: each is now a named error
naming what is wrong (ONNX import audit findings 2, 3, 4, 7 and 10).

* conv and pooling: kernel_shape, strides and output_padding against the input's
  spatial rank, Conv's kernel_shape against W, W's rank against X's, ConvTranspose's
  output_padding below max(stride, dilation), global pools on rank < 3, negative pads,
  a window longer than the padded input (a negative output size; a size of 0 stays
  allowed, as onnxruntime allows it);
* Resize sizes/scales against the input rank (or `axes`), LayerNormalization's axis,
  Split's num_outputs and split sizes;
* operands the spec makes scalars (Loop M, TopK K, OneHot depth, CumSum axis) or 1-D
  tensors (Slice starts/ends/axes/steps, Reshape shape, Pad pads); the one-element
  forms onnxruntime accepts are still accepted (Loop M of any one-element shape,
  OneHot depth and CumSum axis as a scalar or [1]);
* Scan's direction attributes;
* Pad's constant_value, DepthToSpace/SpaceToDepth, InstanceNormalization, Gemm's C,
  Squeeze and Einsum equations, which gave numpy's or Python's words.

Every model is built with onnx.helper, imported with `from_onnx` and run by a Session;
the graph inputs are declared without shapes, so the import cannot infer anything
and the check that answers is the kernel's, the same one the op's inference rule
runs. onnxruntime is the oracle: it must refuse the same node, given the model with
its input shapes declared (some refusals, such as Pad's 2-D pads or ConvTranspose's
negative pads, come from its shape inference only).
"""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import ConversionError, OpAttributeError, ShapeError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F32, I64 = np.float32, np.int64
FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64

X4 = np.arange(32, dtype=F32).reshape(1, 2, 4, 4) / 10
X2 = np.arange(6, dtype=F32).reshape(2, 3)


def _i64(*values):
    return np.array(values if len(values) != 1 else values[0], I64)


def _model(op, inputs, outputs=(("y", FLOAT),), opset=21, shaped=False, **attrs):
    """A one-node model. `inputs`: (name, array, is_initializer) in node order ("" for
    an omitted optional input); graph inputs are typed, and shaped if `shaped`.
    `outputs`: (name, element type) of the node's outputs, all graph outputs."""
    elem = helper.np_dtype_to_tensor_dtype
    node = helper.make_node(op, [n for n, _, _ in inputs], [n for n, _ in outputs], **attrs)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(n, elem(np.asarray(v).dtype),
                                       np.shape(v) if shaped else None)
         for n, v, init in inputs if n and not init],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v, init in inputs if n and init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else 9
    return model


def _feeds(model_inputs):
    return {n: np.asarray(v) for n, v, init in model_inputs if n and not init}


def _feed(name, value):
    return (name, value, False)


def _init(name, value):
    return (name, value, True)


# --------------------------------------------------------------------------- cases

# (id, op, inputs, attrs, outputs, opset, error, message fragment)
_CASES = [
    # -- finding 2: conv and pooling geometry against the input's spatial rank
    ("maxpool-kernel-1d-on-2d", "MaxPool", [_feed("x", X4)], dict(kernel_shape=[2]),
     None, 21, OpAttributeError, r"kernel_shape \[2\] has 1 value\(s\), but the rank-4 "
                                 r"input has 2 spatial dims"),
    ("maxpool-kernel-3d-on-2d", "MaxPool", [_feed("x", X4)], dict(kernel_shape=[2, 2, 2]),
     None, 21, OpAttributeError, r"kernel_shape \[2, 2, 2\] has 3 value"),
    ("averagepool-kernel-1d-on-2d", "AveragePool", [_feed("x", X4)], dict(kernel_shape=[2]),
     None, 21, OpAttributeError, r"kernel_shape \[2\] has 1 value"),
    ("lppool-kernel-1d-on-2d", "LpPool", [_feed("x", X4)], dict(kernel_shape=[2]),
     None, 21, OpAttributeError, r"kernel_shape \[2\] has 1 value"),
    ("maxpool-rank-2-input", "MaxPool", [_feed("x", X2)], dict(kernel_shape=[2]),
     None, 21, ShapeError, "the input has rank 2; it needs at least 3"),
    ("conv-kernel-shape-not-w", "Conv", [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))],
     dict(kernel_shape=[5, 5]), None, 21, ShapeError,
     r"Conv: kernel_shape \[5, 5\] differs from W's spatial dims \[3, 3\]"),
    ("conv-kernel-shape-1d", "Conv", [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))],
     dict(kernel_shape=[3]), None, 21, OpAttributeError,
     r"Conv: kernel_shape \[3\] has 1 value\(s\), expected 2"),
    ("conv-w-rank-3-x-rank-4", "Conv", [_feed("x", X4), _init("w", np.ones((2, 2, 3), F32))],
     {}, None, 21, ShapeError, "Conv: W has rank 3 .* but X rank 4"),
    ("convtranspose-kernel-shape-1d", "ConvTranspose",
     [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))], dict(kernel_shape=[3]),
     None, 21, OpAttributeError, r"ConvTranspose: kernel_shape \[3\] has 1 value"),
    ("convtranspose-w-rank-3", "ConvTranspose",
     [_feed("x", X4), _init("w", np.ones((2, 2, 3), F32))], {}, None, 21, ShapeError,
     "ConvTranspose: W has rank 3"),
    ("convtranspose-strides-1d", "ConvTranspose",
     [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))], dict(strides=[2]),
     None, 21, OpAttributeError, r"strides \[2\] must hold 2 positive values"),
    ("convtranspose-output-padding-1d", "ConvTranspose",
     [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))],
     dict(strides=[2, 2], output_padding=[1]), None, 21, OpAttributeError,
     r"output_padding \[1\] must hold 2"),
    ("convtranspose-output-padding-not-below-stride", "ConvTranspose",
     [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))],
     dict(output_padding=[5, 5]), None, 21, OpAttributeError,
     r"output_padding \[5, 5\]: entry 0 \(5\) must be less than the stride \(1\) or the "
     r"dilation \(1\)"),
    ("convtranspose-output-padding-equals-stride", "ConvTranspose",
     [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))],
     dict(strides=[2, 2], output_padding=[2, 1]), None, 21, OpAttributeError,
     r"entry 0 \(2\) must be less than the stride \(2\)"),
    ("globalaveragepool-rank-2", "GlobalAveragePool", [_feed("x", X2)], {}, None, 21,
     ShapeError, "GlobalAveragePool: input of rank 2; it needs at least 3"),
    ("globalmaxpool-rank-1", "GlobalMaxPool", [_feed("x", X2[0])], {}, None, 21,
     ShapeError, "GlobalMaxPool: input of rank 1"),
    ("globallppool-rank-2", "GlobalLpPool", [_feed("x", X2)], {}, None, 21,
     ShapeError, "GlobalLpPool: input of rank 2"),

    # -- finding 3: lengths and axes against the input's rank
    ("resize-sizes-short", "Resize", [_feed("x", X4), ("", None, True), ("", None, True),
                                      _init("sizes", _i64([8, 8]))], {}, None, 21,
     ShapeError, "Resize: sizes has 2 entries; it needs one per axis, as many as the "
                 "input's rank 4"),
    ("resize-scales-short", "Resize", [_feed("x", X4), ("", None, True),
                                       _init("scales", np.array([2, 2], F32))], {}, None, 21,
     ShapeError, "Resize: scales has 2 entries"),
    ("resize-sizes-not-axes", "Resize", [_feed("x", X4), ("", None, True), ("", None, True),
                                         _init("sizes", _i64([1, 2, 8, 8]))],
     dict(axes=[2, 3]), None, 18, ShapeError,
     r"Resize: sizes has 4 entries; .* the 2 axes \[2, 3\]"),
    ("layernorm-axis-7", "LayerNormalization", [_feed("x", X4), _init("s", np.ones(4, F32))],
     dict(axis=7), None, 21, OpAttributeError,
     "LayerNormalization: axis 7 out of range for rank 4"),
    ("layernorm-axis-minus-5", "LayerNormalization",
     [_feed("x", X4), _init("s", np.ones(4, F32))], dict(axis=-5), None, 21,
     OpAttributeError, "LayerNormalization: axis -5 out of range for rank 4"),
    ("split-num-outputs-not-outputs", "Split", [_feed("x", np.arange(6, dtype=F32))],
     dict(num_outputs=3), (("y", FLOAT), ("z", FLOAT)), 18, OpAttributeError,
     r"Split: num_outputs is 3 but the node has 2 output\(s\)"),
    ("split-num-outputs-0", "Split", [_feed("x", np.arange(6, dtype=F32))],
     dict(num_outputs=0), (("y", FLOAT), ("z", FLOAT)), 18, OpAttributeError,
     "Split: num_outputs must be at least 1, got 0"),
    ("split-negative-size", "Split", [_feed("x", np.arange(2, dtype=F32)),
                                      _init("split", _i64([3, -1]))], {},
     (("y", FLOAT), ("z", FLOAT)), 21, ShapeError,
     r"Split: split sizes \[3, -1\] must not be negative"),
    ("split-more-parts-than-outputs", "Split", [_feed("x", np.arange(3, dtype=F32)),
                                                _init("split", _i64([1, 1, 1]))], {},
     (("y", FLOAT), ("z", FLOAT)), 21, ShapeError,
     r"Split: 3 parts \[1, 1, 1\] for the node's 2 output\(s\)"),

    # -- finding 4: scalar and 1-D operands
    ("topk-k-two-values", "TopK", [_feed("x", X2[0]), _init("k", _i64([1, 2]))], {},
     (("v", FLOAT), ("i", INT64)), 21, ShapeError,
     r"TopK: K must be a 1-D tensor of one element, got shape \[2\]"),
    ("topk-k-scalar", "TopK", [_feed("x", X2[0]), _init("k", _i64(2))], {},
     (("v", FLOAT), ("i", INT64)), 21, ShapeError,
     r"TopK: K must be a 1-D tensor of one element, got shape \[\]"),
    ("onehot-depth-two-values", "OneHot",
     [_feed("i", _i64([1])), _init("d", _i64([3, 5])), _init("v", np.array([0, 1], F32))],
     {}, None, 21, ShapeError,
     r"OneHot: depth must be a scalar or a 1-D tensor of one element, got shape \[2\]"),
    ("onehot-depth-2d", "OneHot",
     [_feed("i", _i64([1])), _init("d", _i64([[3]])), _init("v", np.array([0, 1], F32))],
     {}, None, 21, ShapeError, r"OneHot: depth must be .* got shape \[1, 1\]"),
    ("cumsum-axis-two-values", "CumSum", [_feed("x", X2[0]), _init("a", _i64([0, 0]))], {},
     None, 21, ShapeError,
     r"CumSum: axis must be a scalar or a 1-D tensor of one element, got shape \[2\]"),
    ("cumsum-axis-2d", "CumSum", [_feed("x", X2[0]), _init("a", _i64([[0]]))], {}, None, 21,
     ShapeError, r"CumSum: axis must be .* got shape \[1, 1\]"),
    ("slice-starts-ends-2d", "Slice", [_feed("x", X2[0]), _init("s", _i64([[0]])),
                                       _init("e", _i64([[1]]))], {}, None, 21, ShapeError,
     r"Slice: starts must be a 1-D tensor, got shape \[1, 1\]"),
    ("slice-starts-scalar", "Slice", [_feed("x", X2[0]), _init("s", _i64(0)),
                                      _init("e", _i64(2))], {}, None, 21, ShapeError,
     r"Slice: starts must be a 1-D tensor, got shape \[\]"),
    ("slice-axes-2d", "Slice", [_feed("x", X2[0]), _init("s", _i64([0])), _init("e", _i64([2])),
                                _init("a", _i64([[0]]))], {}, None, 21, ShapeError,
     r"Slice: axes must be a 1-D tensor"),
    ("slice-steps-2d", "Slice", [_feed("x", X2[0]), _init("s", _i64([0])), _init("e", _i64([2])),
                                 _init("a", _i64([0])), _init("st", _i64([[1]]))], {}, None, 21,
     ShapeError, r"Slice: steps must be a 1-D tensor"),
    ("reshape-shape-2d", "Reshape", [_feed("x", X2[0]), _init("s", _i64([[3, 1]]))], {},
     None, 21, ShapeError, r"Reshape: shape must be a 1-D tensor, got shape \[1, 2\]"),
    ("reshape-shape-scalar", "Reshape", [_feed("x", X2[0]), _init("s", _i64(3))], {},
     None, 21, ShapeError, r"Reshape: shape must be a 1-D tensor, got shape \[\]"),
    ("pad-pads-2d", "Pad", [_feed("x", X2[0]), _init("p", _i64([[1, 1]]))], {}, None, 21,
     ShapeError, r"Pad: pads must be a 1-D tensor, got shape \[1, 2\]"),
    ("pad-pads-scalar", "Pad", [_feed("x", X2[0]), _init("p", _i64(1))], {}, None, 21,
     ShapeError, r"Pad: pads must be a 1-D tensor, got shape \[\]"),

    # -- finding 10: forbidden attribute values, and raw Python messages
    ("conv-negative-pads", "Conv", [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))],
     dict(pads=[-5, -5, -5, -5]), None, 21, OpAttributeError,
     r"pads \[-5, -5, -5, -5\] must not be negative"),
    ("maxpool-negative-pads", "MaxPool", [_feed("x", X4)],
     dict(kernel_shape=[2, 2], pads=[-1, 0, 0, 0]), None, 21, OpAttributeError,
     r"pads \[-1, 0, 0, 0\] must not be negative"),
    ("averagepool-negative-pads", "AveragePool", [_feed("x", X4)],
     dict(kernel_shape=[2, 2], pads=[0, 0, 0, -1]), None, 21, OpAttributeError,
     "must not be negative"),
    ("convtranspose-negative-pads", "ConvTranspose",
     [_feed("x", X4), _init("w", np.ones((2, 2, 3, 3), F32))], dict(pads=[-1, -1, -1, -1]),
     None, 21, OpAttributeError, r"pads \[-1, -1, -1, -1\] must not be negative"),
    ("maxpool-window-longer-than-input", "MaxPool", [_feed("x", X4)],
     dict(kernel_shape=[9, 9]), None, 21, ShapeError,
     "the window .* spans 9 but the padded input only 4 .* output size would be -4"),
    ("averagepool-window-longer-than-input", "AveragePool", [_feed("x", X4)],
     dict(kernel_shape=[7, 7], strides=[1, 1]), None, 21, ShapeError,
     "output size would be -2"),
    ("conv-window-longer-than-input", "Conv",
     [_feed("x", X4), _init("w", np.ones((2, 2, 7, 7), F32))], {}, None, 21, ShapeError,
     "spans 7 but the padded input only 4"),
    ("pad-constant-value-two-values", "Pad",
     [_feed("x", X2[0]), _init("p", _i64([1, 1])), _init("v", np.array([1, 2], F32))], {},
     None, 21, ShapeError,
     r"Pad: constant_value must be a scalar \(one element\), got shape \[2\]"),
    ("pad-constant-value-empty", "Pad",
     [_feed("x", X2[0]), _init("p", _i64([1, 1])), _init("v", np.zeros(0, F32))], {},
     None, 21, ShapeError, r"Pad: constant_value must be a scalar .* got shape \[0\]"),
    ("depthtospace-blocksize-0", "DepthToSpace", [_feed("x", X4)], dict(blocksize=0),
     None, 21, OpAttributeError, "DepthToSpace: blocksize must be at least 1, got 0"),
    ("depthtospace-channels", "DepthToSpace", [_feed("x", X4)], dict(blocksize=3),
     None, 21, ShapeError, r"DepthToSpace: 2 channels not divisible by blocksize\*\*2 = 9"),
    ("spacetodepth-blocksize-0", "SpaceToDepth", [_feed("x", X4)], dict(blocksize=0),
     None, 21, OpAttributeError, "SpaceToDepth: blocksize must be at least 1, got 0"),
    ("spacetodepth-spatial", "SpaceToDepth", [_feed("x", X4)], dict(blocksize=3),
     None, 21, ShapeError, "SpaceToDepth: spatial dim 4 not divisible by blocksize 3"),
    ("instancenorm-scale-size", "InstanceNormalization",
     [_feed("x", X4), _init("s", np.ones(5, F32)), _init("b", np.ones(5, F32))], {}, None, 21,
     ShapeError, r"InstanceNormalization: scale has shape \[5\]; it needs one value per "
                 r"channel, shape \[2\]"),
    ("instancenorm-bias-size", "InstanceNormalization",
     [_feed("x", X4), _init("s", np.ones(2, F32)), _init("b", np.ones(3, F32))], {}, None, 21,
     ShapeError, r"InstanceNormalization: B has shape \[3\]"),
    ("gemm-c-not-broadcastable", "Gemm",
     [_feed("a", np.ones((2, 3), F32)), _feed("b", np.ones((3, 4), F32)),
      _init("c", np.ones(3, F32))], {}, None, 21, ShapeError,
     r"Gemm: C of shape \[3\] does not broadcast to the result's shape \[2, 4\]"),
    ("gemm-c-rank-3", "Gemm",
     [_feed("a", np.ones((2, 3), F32)), _feed("b", np.ones((3, 4), F32)),
      _init("c", np.ones((3, 2, 4), F32))], {}, None, 21, ShapeError,
     r"Gemm: C of shape \[3, 2, 4\] does not broadcast"),
    ("squeeze-axis-not-1", "Squeeze", [_feed("x", X2), _init("a", _i64([0]))], {}, None, 21,
     ShapeError, "Squeeze: axis 0 has size 2, not 1"),
    ("einsum-two-arrows", "Einsum", [_feed("x", X2), _feed("w", X2.T.copy())],
     dict(equation="ij,jk->ik->"), None, 21, ConversionError,
     "Einsum: equation 'ij,jk->ik->' is malformed"),
    ("einsum-output-label-unknown", "Einsum", [_feed("x", X2)], dict(equation="ij->iz"),
     None, 21, ConversionError, "Einsum: equation 'ij->iz' is malformed: output labels"),
    ("einsum-term-rank", "Einsum", [_feed("x", X2)], dict(equation="ijk->i"), None, 21,
     ShapeError, "Einsum: term 'ijk' of equation 'ijk->i' names 3 dims, but input 0 has "
                 "rank 2"),
    ("einsum-label-sizes", "Einsum", [_feed("x", X2)], dict(equation="ii"), None, 21,
     ShapeError, r"Einsum: label 'i' has sizes 2 and 3 \(in equation 'ii'\)"),
]


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_malformed_node_is_a_named_error(case):
    _, op, inputs, attrs, outputs, opset, error, message = case
    model = _model(op, inputs, outputs or (("y", FLOAT),), opset, **attrs)
    feeds = _feeds(inputs)
    names = [n for n, _ in (outputs or (("y", FLOAT),))]
    with pytest.raises(error, match=message):
        og.Session(from_onnx(model)).run(names, feeds)
    shaped = _model(op, inputs, outputs or (("y", FLOAT),), opset, shaped=True, **attrs)
    _assert_onnxruntime_refuses(shaped, feeds)


def _assert_onnxruntime_refuses(model, feeds):
    """onnxruntime refuses `model` when loading it or running it on `feeds`."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    with pytest.raises(Exception):  # noqa: B017 - onnxruntime's own error types
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        session.run(None, feeds)


# --------------------------------------------------------------------------- Loop, Scan

def _vi(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def _loop_model(m, shaped=False):
    """Loop(M, "", x) whose body adds x to the carried value each trip."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]),
         helper.make_node("Add", ["v", "x"], ["v2"])], "body",
        [_vi("i", INT64, []), _vi("cin", TensorProto.BOOL, []), _vi("v", FLOAT, [2])],
        [_vi("cout", TensorProto.BOOL, []), _vi("v2", FLOAT, [2])])
    return _model("Loop", [_init("M", m), ("", None, True), _feed("x", np.array([0.5, 0.7], F32))],
                  shaped=shaped, body=body)


@pytest.mark.parametrize("m,shape", [(_i64([3, 4]), r"\[2\]"), (_i64([]), r"\[0\]")],
                         ids=["two-values", "empty"])
def test_loop_trip_count_must_hold_one_element(m, shape):
    model = _loop_model(m)
    x = np.array([0.5, 0.7], F32)
    with pytest.raises(ShapeError, match=f"Loop: M must hold one element .* got shape {shape}"):
        og.Session(from_onnx(model)).run("y", {"x": x})
    if m.size:  # onnxruntime crashes the process on an empty M (audit finding 4)
        _assert_onnxruntime_refuses(_loop_model(m, shaped=True), {"x": x})


@pytest.mark.parametrize("attr,value", [("scan_input_directions", [7]),
                                        ("scan_output_directions", [-1])])
def test_scan_directions_are_0_or_1(attr, value):
    """A running sum over the scan axis; a direction outside {0, 1} used to run forward."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "xi"], ["s2"]),
         helper.make_node("Identity", ["s2"], ["o"])], "body",
        [_vi("s", FLOAT, [2]), _vi("xi", FLOAT, [2])],
        [_vi("s2", FLOAT, [2]), _vi("o", FLOAT, [2])])
    x = np.arange(6, dtype=F32).reshape(3, 2)
    inputs = [_feed("s0", np.zeros(2, F32)), _feed("x", x)]
    attrs = {"body": body, "num_scan_inputs": 1, attr: value}
    model = _model("Scan", inputs, (("s", FLOAT), ("ys", FLOAT)), **attrs)
    feeds = _feeds(inputs)
    with pytest.raises(OpAttributeError,
                       match=rf"Scan: {attr} \[{value[0]}\] may hold only 0 \(forward\) "
                             r"and 1 \(reverse\)"):
        og.Session(from_onnx(model)).run(["s", "ys"], feeds)
    _assert_onnxruntime_refuses(
        _model("Scan", inputs, (("s", FLOAT), ("ys", FLOAT)), shaped=True, **attrs), feeds)
