"""Fixes from the audit of the elementwise, activation, normalisation and recurrent
ONNX kernels against onnxruntime and ONNX's reference evaluator.

- Normalisations over an empty extent (InstanceNormalization of [3, 4, 0], a
  LayerNormalization of [1, 0], BatchNormalization training on a batch of 0, ...) give
  NaN statistics as the reference does, without numpy's "Mean of empty slice" warning
  escaping the Session; LayerNormalization's InvStdDev is NaN with its Mean (it was
  1/sqrt(epsilon)).
- float32 Softmax of rows far below the tensor's largest value: within a couple of ulp
  of the exact result, as onnxruntime (the shared shift cost up to 25-50 ulp).
"""

import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from onegraph.convert import from_onnx  # noqa: E402
from onegraph.train.session import Session  # noqa: E402


def _model(op, inputs, outputs, **attrs):
    node = helper.make_node(op, [n for n, _ in inputs], outputs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs],
        [helper.make_empty_tensor_value_info(o) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                             ir_version=10)


def _ones(n):
    return np.ones(n, np.float32)


EMPTY_CASES = [
    ("InstanceNormalization", [("x", np.zeros((3, 4, 0), np.float32)), ("s", _ones(4)),
                               ("b", _ones(4))], ["y"], {}),
    ("BatchNormalization", [("x", np.zeros((0, 2, 3), np.float32)), ("s", _ones(2)),
                            ("b", _ones(2)), ("m", _ones(2)), ("v", _ones(2))],
     ["y", "rm", "rv"], {"training_mode": 1}),
    ("GroupNormalization", [("x", np.zeros((2, 4, 0), np.float32)), ("s", _ones(4)),
                            ("b", _ones(4))], ["y"], {"num_groups": 2}),
    ("MeanVarianceNormalization", [("x", np.zeros((2, 3, 0, 1), np.float32))], ["y"], {}),
]


@pytest.mark.parametrize("op, inputs, outputs, attrs", EMPTY_CASES,
                         ids=[c[0] for c in EMPTY_CASES])
def test_normalising_nothing_gives_the_reference_nans_quietly(op, inputs, outputs, attrs):
    model = _model(op, inputs, outputs, **attrs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # any RuntimeWarning fails the test
        got = Session(from_onnx(model)).run(outputs, dict(inputs))
    assert got[0].shape == inputs[0][1].shape
    if op == "GroupNormalization":
        return   # ONNX's reference evaluator fails on it (an IndexError in its Reshape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the reference's own numpy warnings
        want = ReferenceEvaluator(model).run(None, dict(inputs))
    for name, a, b in zip(outputs, got, want, strict=True):
        assert a.shape == b.shape, name
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=name)


def test_layer_normalization_of_nothing_has_nan_mean_and_inv_std_dev():
    inputs = [("x", np.zeros((2, 3, 0), np.float32)), ("s", _ones(0)), ("b", _ones(0))]
    model = _model("LayerNormalization", inputs, ["y", "mean", "inv"], axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, mean, inv = Session(from_onnx(model)).run(["y", "mean", "inv"], dict(inputs))
    assert y.shape == (2, 3, 0)
    assert mean.shape == inv.shape == (2, 3, 1)
    assert np.isnan(mean).all() and np.isnan(inv).all()


def _ulp_error(got, exact):
    return float(np.max(np.abs(got.astype(np.float64) - exact)
                        / np.spacing(np.abs(exact).astype(np.float32))))


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_rows_far_below_the_largest_value_stay_precise(axis):
    rng = np.random.RandomState(0)
    cases = [np.asarray([[39.1, 39.7, 39.35, 39.9], [-39.9, -39.3, -39.65, -39.1],
                         [0.5, -3.0, 2.25, 1.0]], np.float32),
             # rows a few units wide at offsets far apart
             (rng.randn(16, 24) + rng.uniform(-30, 30, (16, 1))).astype(np.float32)]
    for data in cases:
        data = data if axis == -1 else np.ascontiguousarray(data.T)
        model = _model("Softmax", [("x", data)], ["y"], axis=axis)
        got = Session(from_onnx(model)).run(["y"], {"x": data})[0]
        ref = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, {"x": data})[0]
        wide = data.astype(np.float64)
        e = np.exp(wide - wide.max(axis=axis, keepdims=True))
        exact = e / e.sum(axis=axis, keepdims=True)
        # float32 rounding of x - max costs a few ulp in rows a few units wide: no more
        # than onnxruntime's own error plus one ulp
        assert _ulp_error(got, exact) <= max(1.0, _ulp_error(ref, exact)) + 1.0
