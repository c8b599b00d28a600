"""onnxruntime's MRotaryEmbedding (`ops/ms_llm.py`) against onnxruntime.

The oracle is onnxruntime's CPUExecutionProvider on one-node models over seeded random
inputs: 3-D and 4-D input, full and partial rotary dims, both mrope layouts, interleaved
and half-split pairs, a custom scale, and text-only tokens (T == H == W, which must equal
RotaryEmbedding). Bounds: float32 rtol = atol = 1e-5 (TOL; measured max error 2.4e-7);
float16 F16_TOL = 2e-3 (measured max error 0: both round the scaled cos/sin to float16 and
rotate in float32, rounding once; the bound leaves room for one float16 step at |y| ~ 1-2
should onnxruntime's MLAS row kernel round its products on another CPU).
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
TOL = dict(rtol=1e-5, atol=1e-5)
F16_TOL = dict(rtol=2e-3, atol=2e-3)
OP = "MRotaryEmbedding"


def _model(inputs, dtype=np.float32, op=OP, **attrs):
    names, graph_inputs, _ = node_inputs(inputs)
    node = helper.make_node(op, names, ["y"], domain=MS, **attrs)
    graph = helper.make_graph([node], op, graph_inputs, [helper.make_tensor_value_info(
        "y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _og(model, feeds):
    return onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)


def _check(inputs, tol=TOL, dtype=np.float32, **attrs):
    model = _model(inputs, dtype, **attrs)
    feeds = {k: np.asarray(v) for k, v in inputs}
    want = ort_session(model, optimize=False).run(None, feeds)[0]
    got = _og(model, feeds)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), **tol)
    return got


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _cos_sin(rng, positions, half, dtype=np.float32):
    angles = np.arange(positions)[:, None] * rng.random(half)[None]
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def _inputs(rng, shape, half, positions=16, dtype=np.float32, text=False):
    batch, seq = shape[0], shape[-2] if len(shape) == 4 else shape[1]
    pid = rng.integers(0, positions, (3, batch, seq)).astype(np.int64)
    if text:
        pid = np.broadcast_to(pid[:1], pid.shape).copy()
    cos, sin = _cos_sin(rng, positions, half, dtype)
    x = rng.standard_normal(shape).astype(dtype)
    return [("x", x), ("p", pid), ("c", cos), ("s", sin)]


# (input shape, half of the rotary dim, attributes)
_CASES = [((2, 3, 32), 4, dict(num_heads=4, mrope_section=[2, 1, 1])),
          ((2, 4, 3, 16), 8, dict(mrope_section=[4, 2, 2])),
          ((2, 4, 3, 16), 8, dict(mrope_section=[2, 3, 3])),
          ((1, 5, 48), 6, dict(num_heads=2, rotary_embedding_dim=12,
                               mrope_section=[2, 2, 2])),
          ((2, 2, 3, 24), 10, dict(num_heads=2, rotary_embedding_dim=20,
                                   mrope_section=[4, 3, 3])),
          ((1, 2, 4, 16), 8, dict(mrope_section=[8, 0, 0])),
          ((1, 2, 4, 16), 8, dict(mrope_section=[0, 0, 8])),
          ((1, 2, 4, 16), 8, dict(mrope_section=[1, 1, 6]))]


@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("shape,half,attrs", _CASES)
def test_mrotary_embedding(rng, layout, interleaved, shape, half, attrs):
    _check(_inputs(rng, shape, half), interleaved=interleaved, mrope_layout=layout, **attrs)


def test_mrotary_embedding_scale_and_text_tokens(rng):
    ins = _inputs(rng, (2, 3, 32), 4, text=True)
    _check(ins, num_heads=4, mrope_section=[2, 1, 1], scale=0.75)
    # text-only tokens (T == H == W) reduce it to RotaryEmbedding at those positions
    got = _check(ins, num_heads=4, mrope_section=[2, 1, 1], mrope_layout=1)
    rope_ins = [ins[0], ("p", ins[1][1][0]), ins[2], ins[3]]
    rope = _model(rope_ins, op="RotaryEmbedding", num_heads=4)
    want = ort_session(rope, optimize=False).run(None, dict(rope_ins))[0]
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("layout", [0, 1])
def test_mrotary_embedding_float16(rng, layout):
    _check(_inputs(rng, (2, 3, 32), 4, dtype=np.float16), F16_TOL, np.float16,
           num_heads=4, mrope_section=[2, 1, 1], mrope_layout=layout, scale=1.5)
    _check(_inputs(rng, (1, 2, 3, 16), 8, dtype=np.float16), F16_TOL, np.float16,
           mrope_section=[4, 2, 2], interleaved=1, mrope_layout=layout)


def test_mrotary_embedding_empty_sequence(rng):
    _check(_inputs(rng, (2, 0, 32), 4), num_heads=4, mrope_section=[2, 1, 1])


def test_inference_matches_kernel(rng):
    opdef = REGISTRY.get(OP, MS)
    for shape, half, attrs in _CASES[:2]:
        resolved = opdef.resolve_attrs(attrs)
        ins = _inputs(rng, shape, half)
        infos = [TensorInfo(v.dtype, v.shape) for _, v in ins]
        (info,) = opdef.infer(resolved, infos)
        (y,) = opdef.kernel([v for _, v in ins], resolved, None)
        assert np.dtype(info.dtype) == y.dtype and tuple(info.shape) == y.shape


def _run(ins, **attrs):
    opdef = REGISTRY.get(OP, MS)
    resolved = dict(opdef.resolve_attrs(dict(mrope_section=[2, 1, 1])), **attrs)
    return opdef.kernel([v for _, v in ins], resolved, None)


def test_errors(rng):
    ins = _inputs(rng, (2, 3, 32), 4)
    x, pid, cos, sin = (v for _, v in ins)
    with pytest.raises(OpAttributeError, match="MRotaryEmbedding: num_heads must be > 0"):
        _run(ins)
    run = lambda *vals, **a: _run(list(zip("xpcs", vals)), **dict(dict(num_heads=4), **a))
    with pytest.raises(ShapeError, match="MRotaryEmbedding: input must be 3-D or 4-D"):
        run(x[0], pid, cos, sin)
    with pytest.raises(ShapeError, match="position_ids must be int64 \\(3, batch, seq\\)"):
        run(x, pid[0], cos, sin)
    with pytest.raises(ShapeError, match="position_ids must be int64"):
        run(x, pid.astype(np.int32), cos, sin)
    with pytest.raises(ShapeError, match="positions 0..16 out of the caches' 16 rows"):
        run(x, np.where(pid == pid.max(), 16, pid), cos, sin)
    with pytest.raises(ShapeError, match="positions -1"):
        run(x, np.where(pid == pid.min(), -1, pid), cos, sin)
    with pytest.raises(ShapeError, match="cos_cache's second dim must be the rotary dim / 2"):
        run(x, pid, np.tile(cos, 2), np.tile(sin, 2))
    with pytest.raises(ShapeError, match="cos_cache .* and sin_cache"):
        run(x, pid, cos, sin[:, :2])
    with pytest.raises(ShapeError, match="must have the input's dtype"):
        run(x, pid, cos.astype(np.float16), sin.astype(np.float16))
    with pytest.raises(ShapeError, match="input must be float16 or float32"):
        run(x.astype(np.float64), pid, cos, sin)
    with pytest.raises(ShapeError, match="hidden size 32 is not a multiple of num_heads 3"):
        run(x, pid, cos, sin, num_heads=3)
    with pytest.raises(OpAttributeError, match="mrope_section \\[2, 2, 1\\] must sum to"):
        run(x, pid, cos, sin, mrope_section=[2, 2, 1])
    with pytest.raises(OpAttributeError, match="rotary dim 10 .* must be even and at most"):
        run(x, pid, cos, sin, rotary_embedding_dim=10)  # the head size is 8
    with pytest.raises(ShapeError, match="second dim must be the rotary dim / 2 = 3, got 4"):
        run(x, pid, cos, sin, rotary_embedding_dim=6)
    with pytest.raises(OpAttributeError, match="must be even"):
        run(x, pid, cos, sin, rotary_embedding_dim=5)


@pytest.mark.parametrize("attrs,words", [
    (dict(mrope_section=[2, 2]), "mrope_section must hold 3 integers"),
    (dict(mrope_section=[5, -1, 0]), "mrope_section values must be non-negative"),
    (dict(mrope_section=[2, 1, 1], mrope_layout=2), "mrope_layout must be 0"),
    (dict(mrope_section=[2, 1, 1], interleaved=2), "interleaved must be 0 or 1"),
    (dict(mrope_section=[2, 1, 1], rotary_embedding_dim=8),
     "num_heads is required when rotary_embedding_dim is set"),
    (dict(mrope_section=[2, 1, 1], num_heads=-1),
     "num_heads -1 and rotary_embedding_dim 0 must be >= 0"),
    ({}, "missing required attribute 'mrope_section'")])
def test_attribute_refusals(attrs, words):
    with pytest.raises(OpAttributeError, match=f"MRotaryEmbedding: {words}"):
        REGISTRY.get(OP, MS).resolve_attrs(attrs)


def test_round_trip_model(rng):
    """MRotaryEmbedding on Q (3-D) and K (4-D) with a shared cache initializer, imported
    and written back by to_onnx: onnxruntime runs the written model to the original's
    outputs."""
    cos, sin = _cos_sin(rng, 16, 8)
    init = [onnx.numpy_helper.from_array(cos, "cos"), onnx.numpy_helper.from_array(sin, "sin")]
    nodes = [helper.make_node(OP, ["q", "pos", "cos", "sin"], ["qr"], domain=MS, num_heads=4,
                              mrope_section=[4, 2, 2]),
             helper.make_node(OP, ["k", "pos", "cos", "sin"], ["kr"], domain=MS,
                              mrope_section=[2, 3, 3], mrope_layout=1, interleaved=1)]
    f = TensorProto.FLOAT
    graph = helper.make_graph(nodes, "mrope", [
        helper.make_tensor_value_info("q", f, [2, 3, 64]),
        helper.make_tensor_value_info("k", f, [2, 2, 3, 16]),
        helper.make_tensor_value_info("pos", TensorProto.INT64, [3, 2, 3])],
        [helper.make_tensor_value_info(n, f, None) for n in ("qr", "kr")], init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)], ir_version=9)
    feeds = {"q": rng.standard_normal((2, 3, 64)).astype(np.float32),
             "k": rng.standard_normal((2, 2, 3, 16)).astype(np.float32),
             "pos": rng.integers(0, 16, (3, 2, 3)).astype(np.int64)}
    want = ort_session(model, optimize=False).run(None, feeds)
    got = _og(model, feeds)
    back = to_onnx(from_onnx(model))
    assert [n.op_type for n in back.graph.node] == [OP, OP]
    again = ort_session(back, optimize=False).run(None, feeds)
    for w, g, a in zip(want, got, again):
        np.testing.assert_allclose(g, w, **TOL)
        np.testing.assert_allclose(a, w, **TOL)
