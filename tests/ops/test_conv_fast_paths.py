"""The GEMM-then-shift Conv path (`ops.conv._conv_taps_2d`, stride 1, M <= C/2) against
onnxruntime: symmetric/asymmetric/zero pads, batch > 1, non-square kernels and images,
auto_pad, float64 and float16."""

from __future__ import annotations

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")


def _ort_conv(x, w, b, attrs):
    from onnx import TensorProto, helper

    dt = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
          np.float16: TensorProto.FLOAT16}[x.dtype.type]
    names = ["x", "w", "b"][:2 + (b is not None)]
    node = helper.make_node("Conv", names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info(nm, dt, a.shape)
        for nm, a in zip(names, (x, w, b))], [helper.make_tensor_value_info("y", dt, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip(names, (x, w, b))))[0]


@pytest.mark.parametrize("case", [
    ((1, 16, 9, 9), (8, 16, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 12, 7, 10), (4, 12, 3, 3), dict(pads=[0, 2, 1, 0])),
    ((1, 8, 6, 6), (4, 8, 3, 3), {}),
    ((3, 10, 8, 5), (5, 10, 2, 3), dict(pads=[1, 0, 0, 2])),
    ((1, 8, 7, 7), (2, 8, 5, 5), dict(auto_pad="SAME_UPPER")),
    ((1, 8, 6, 7), (3, 8, 4, 2), dict(auto_pad="SAME_LOWER")),
    ((1, 6, 5, 5), (3, 6, 5, 5), {}),
], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_taps_path_matches_onnxruntime(case, dtype, bias):
    xs, ws, attrs = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    op = get_op("Conv")
    got = op.kernel([x, w] + ([b] if bias else []), op.resolve_attrs(attrs, num_outputs=1),
                    KernelContext())[0]
    if dtype == np.float64:  # onnxruntime has no float64 Conv: compare with float32
        want = _ort_conv(x.astype(np.float32), w.astype(np.float32),
                         None if b is None else b.astype(np.float32), attrs)
    else:
        want = _ort_conv(x, w, b, attrs)
    assert got.dtype == dtype and got.shape == want.shape
    tol = 1e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol * np.abs(want.astype(np.float64)).max())
