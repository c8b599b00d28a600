"""onnxruntime's LLM contrib ops (`ops/ms_llm.py`: RotaryEmbedding, GroupQueryAttention)
against onnxruntime.

The oracle is onnxruntime's CPUExecutionProvider on single-node models over seeded
random inputs; every output the node declares is compared (including the padding rows
of right-padded batches and the zero tail of the KV cache, which onnxruntime also
writes). Bounds: rtol = atol = 1e-5 for float32 (TOL, measured max error 5e-7);
float16 F16_TOL = 2e-3 (measured max error 9.8e-4, one float16 step at |y| ~ 1-2:
onnxruntime's float16 GQA kernel rounds intermediates to float16, onegraph computes in
float32 and rounds once at the end).
onnxruntime's GQA CPU kernel needs head_size a multiple of 16 for do_rotary, so the
GQA cases use head_size 16.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError, UnsupportedOpError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
TOL = dict(rtol=1e-5, atol=1e-5)
F16_TOL = dict(rtol=2e-3, atol=2e-3)
_ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16}
B, N, H = 2, 4, 16


def _model(op, inputs, n_out, dtype=np.float32, **attrs):
    names, graph_inputs, _ = node_inputs(inputs)
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, domain=MS, **attrs)
    graph = helper.make_graph([node], op, graph_inputs, [
        helper.make_tensor_value_info(o, _ONNX_TYPE[np.dtype(dtype)], None) for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _feeds(inputs):
    return {k: np.asarray(v) for k, v in inputs if v is not None}


def _og(model, feeds):
    return onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)


def _check(op, inputs, n_out, tol=TOL, dtype=np.float32, **attrs):
    model = _model(op, inputs, n_out, dtype, **attrs)
    feeds = _feeds(inputs)
    want = ort_session(model, optimize=False).run(None, feeds)
    got = _og(model, feeds)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), **tol)
    return got


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _randn(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _cos_sin(rng, positions, half, dtype=np.float32):
    angles = np.arange(positions)[:, None] * rng.random(half)[None]
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


# --------------------------------------------------------------------------------------
# RotaryEmbedding
# --------------------------------------------------------------------------------------

_ROPE_CASES = [((2, 3, 32), dict(num_heads=4)), ((2, 4, 3, 8), {}), ((2, 3, 32), {}),
               ((2, 3, 32), dict(num_heads=2, rotary_embedding_dim=8)),
               ((1, 2, 5, 16), dict(num_heads=2, rotary_embedding_dim=8))]


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("shape,attrs", _ROPE_CASES)
@pytest.mark.parametrize("offset", [False, True])
def test_rotary_embedding(rng, interleaved, shape, attrs, offset):
    cos, sin = _cos_sin(rng, 16, 4)
    batch, seq = shape[0], shape[-2] if len(shape) == 4 else shape[1]
    pid = np.array([4], np.int64) if offset else \
        rng.integers(0, 16, (batch, seq)).astype(np.int64)
    _check("RotaryEmbedding", [("x", _randn(rng, *shape)), ("p", pid), ("c", cos),
                               ("s", sin)], 1, interleaved=interleaved, **attrs)


def test_rotary_embedding_float16(rng):
    cos, sin = _cos_sin(rng, 16, 4, np.float16)
    _check("RotaryEmbedding", [("x", _randn(rng, 2, 3, 32, dtype=np.float16)),
                               ("p", np.array([[0, 1, 2], [5, 6, 7]], np.int64)),
                               ("c", cos), ("s", sin)], 1, F16_TOL, np.float16, num_heads=4)


def test_rotary_embedding_errors(rng):
    cos, sin = _cos_sin(rng, 16, 4)
    run = REGISTRY.get("RotaryEmbedding", MS).kernel
    attrs = REGISTRY.get("RotaryEmbedding", MS).resolve_attrs({})
    x, pid = _randn(rng, 2, 3, 32), np.array([0], np.int64)
    with pytest.raises(ShapeError, match="RotaryEmbedding: input must be 3-D or 4-D"):
        run([x[0], pid, cos, sin], attrs, None)
    with pytest.raises(ShapeError, match="position_ids"):
        run([x, np.zeros((2, 4), np.int64), cos, sin], attrs, None)
    with pytest.raises(ShapeError, match="out of the caches"):
        run([x, np.array([14], np.int64), cos, sin], attrs, None)
    with pytest.raises(ShapeError, match="cos_cache"):
        run([x, pid, cos, sin[:, :2]], attrs, None)
    with pytest.raises(OpAttributeError, match="rotary_embedding_dim"):
        run([x, pid, cos, sin], dict(attrs, num_heads=4, rotary_embedding_dim=10), None)
    with pytest.raises(OpAttributeError, match="num_heads is required"):
        run([x, pid, cos, sin], dict(attrs, rotary_embedding_dim=4), None)
    with pytest.raises(UnsupportedOpError, match="RotaryEmbedding: is_packed_batching"):
        run([x, pid, cos, sin], dict(attrs, is_packed_batching=1), None)


# --------------------------------------------------------------------------------------
# GroupQueryAttention
# --------------------------------------------------------------------------------------


def _gqa_inputs(rng, seq, seqlens, total, kv_heads, past=None, rotary=False,
                dtype=np.float32, packed=False, head=H):
    q = _randn(rng, B, seq, N * head, dtype=dtype)
    k = _randn(rng, B, seq, kv_heads * head, dtype=dtype)
    v = _randn(rng, B, seq, kv_heads * head, dtype=dtype)
    if packed:
        q, k, v = np.concatenate([q, k, v], axis=-1), None, None
    pk = pv = None
    if past is not None:
        pk = _randn(rng, B, kv_heads, past, head, dtype=dtype)
        pv = _randn(rng, B, kv_heads, past, head, dtype=dtype)
    ins = [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv),
           ("sl", np.array(seqlens, np.int32)), ("t", np.array(total, np.int32))]
    if rotary:
        cos, sin = _cos_sin(rng, 32, head // 2, dtype)
        ins += [("c", cos), ("s", sin)]
    return ins


@pytest.mark.parametrize("seq,seqlens", [(1, [0, 0]), (3, [2, 1]), (5, [4, 4]), (6, [2, 5])])
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
@pytest.mark.parametrize("rotary,interleaved", [(0, 0), (1, 0), (1, 1)])
@pytest.mark.parametrize("window", [-1, 2])
def test_gqa_prompt(rng, seq, seqlens, kv_heads, rotary, interleaved, window):
    _check("GroupQueryAttention", _gqa_inputs(rng, seq, seqlens, seq, kv_heads,
                                              rotary=rotary), 3,
           num_heads=N, kv_num_heads=kv_heads, do_rotary=rotary,
           rotary_interleaved=interleaved, local_window_size=window)


def test_gqa_prompt_batch_one_and_zero_length_past(rng):
    ins = _gqa_inputs(rng, 4, [3, 1], 4, 2, past=0)
    _check("GroupQueryAttention", ins, 3, num_heads=N, kv_num_heads=2)
    one = [(k, v[:1] if v is not None and k not in ("t",) else v) for k, v in ins]
    _check("GroupQueryAttention", one, 3, num_heads=N, kv_num_heads=2, scale=0.3)


@pytest.mark.parametrize("kv_heads", [2, 1])
@pytest.mark.parametrize("rotary,interleaved", [(0, 0), (1, 0), (1, 1)])
@pytest.mark.parametrize("window", [-1, 3])
def test_gqa_decode_with_past(rng, kv_heads, rotary, interleaved, window):
    # past cache of 5 rows; entry 0 holds 5 tokens, entry 1 holds 3 (then zeros)
    ins = _gqa_inputs(rng, 1, [5, 3], 6, kv_heads, past=5, rotary=rotary)
    _check("GroupQueryAttention", ins, 3, num_heads=N, kv_num_heads=kv_heads,
           do_rotary=rotary, rotary_interleaved=interleaved, local_window_size=window)


@pytest.mark.parametrize("rotary,window", [(0, -1), (1, -1), (1, 3)])
def test_gqa_prompt_chunk_after_past(rng, rotary, window):
    # a 3-token chunk after 4 cached tokens (batch 1: onnxruntime's CPU kernel takes a
    # multi-token chunk with past only for batch 1)
    ins = _gqa_inputs(rng, 3, [6, 6], 7, 2, past=4, rotary=rotary)
    ins = [(k, v[:1] if v is not None and k not in ("t", "c", "s") else v) for k, v in ins]
    _check("GroupQueryAttention", ins, 3, num_heads=N, kv_num_heads=2, do_rotary=rotary,
           local_window_size=window)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_gqa_partial_rotary(rng, interleaved):
    # cos_cache of 8 columns rotates the first 16 of 32 head dims (onnxruntime wants
    # the cache's width a multiple of 8)
    ins = _gqa_inputs(rng, 3, [2, 1], 3, 2, head=32) + list(zip("cs", _cos_sin(rng, 32, 8)))
    _check("GroupQueryAttention", ins, 3, num_heads=N, kv_num_heads=2, do_rotary=1,
           rotary_interleaved=interleaved)


def test_gqa_packed_qkv(rng):
    _check("GroupQueryAttention", _gqa_inputs(rng, 3, [2, 1], 3, 2, packed=True,
                                              rotary=True), 3,
           num_heads=N, kv_num_heads=2, do_rotary=1)


def test_gqa_output_only(rng):
    _check("GroupQueryAttention", _gqa_inputs(rng, 3, [2, 2], 3, 2), 1, num_heads=N,
           kv_num_heads=2)


@pytest.mark.parametrize("past", [None, 4])
def test_gqa_float16(rng, past):
    seq, total, seqlens = (3, 3, [2, 1]) if past is None else (1, 5, [4, 2])
    _check("GroupQueryAttention", _gqa_inputs(rng, seq, seqlens, total, 2, past=past,
                                              rotary=True, dtype=np.float16), 3,
           F16_TOL, np.float16, num_heads=N, kv_num_heads=2, do_rotary=1)


def test_inference_matches_kernels(rng):
    for op, ins, attrs in [
            ("RotaryEmbedding", [("x", _randn(rng, 2, 3, 32)), ("p", np.array([1], np.int64)),
                                 *zip("cs", _cos_sin(rng, 8, 4))], dict(num_heads=4)),
            ("GroupQueryAttention", _gqa_inputs(rng, 1, [5, 3], 6, 2, past=5),
             dict(num_heads=N, kv_num_heads=2)),
            ("GroupQueryAttention", _gqa_inputs(rng, 3, [2, 1], 3, 1, packed=True),
             dict(num_heads=N, kv_num_heads=1))]:
        opdef = REGISTRY.get(op, MS)
        resolved = opdef.resolve_attrs(attrs)
        values = [v for _, v in ins]
        infos = [None if v is None else TensorInfo(
            v.dtype, v.shape, v if k == "t" else None) for k, v in ins]
        inferred = opdef.infer(resolved, infos)
        got = opdef.kernel(values, resolved, None)
        for info, y in zip(inferred, got):
            assert np.dtype(info.dtype) == y.dtype and tuple(info.shape) == y.shape, op


def _gqa_kernel_call(ins, **attrs):
    opdef = REGISTRY.get("GroupQueryAttention", MS)
    resolved = opdef.resolve_attrs(dict(dict(num_heads=N, kv_num_heads=2), **attrs))
    return opdef.kernel([v for _, v in ins], resolved, None)


@pytest.mark.parametrize("attrs,words", [
    (dict(softcap=30.0), "softcap"), (dict(smooth_softmax=1), "smooth_softmax"),
    (dict(causal=0), "causal"), (dict(qk_output=1), "qk_output"),
    (dict(sliding_window_cache=1), "sliding_window_cache"),
    (dict(k_quant_type="PER_TENSOR"), "k_quant_type"),
    (dict(kv_cache_bit_width=8), "kv_cache_bit_width")])
def test_gqa_refusals(rng, attrs, words):
    with pytest.raises(UnsupportedOpError, match=f"GroupQueryAttention: {words}"):
        _gqa_kernel_call(_gqa_inputs(rng, 3, [2, 2], 3, 2), **attrs)


@pytest.mark.parametrize("index,name", [(9, "position_ids"), (10, "attention_bias"),
                                        (11, "head_sink"), (16, "query_seqlens")])
def test_gqa_refused_inputs(rng, index, name):
    ins = _gqa_inputs(rng, 3, [2, 2], 3, 2)
    ins += [("x", None)] * (17 - len(ins))
    ins[index] = (name, np.zeros((1,), np.float32))
    with pytest.raises(UnsupportedOpError, match=f"GroupQueryAttention: the {name} input"):
        _gqa_kernel_call(ins)


def test_gqa_errors(rng):
    ins = _gqa_inputs(rng, 3, [2, 2], 3, 2)
    with pytest.raises(OpAttributeError, match="kv_num_heads"):
        _gqa_kernel_call(ins, kv_num_heads=3)
    bad = list(ins)
    bad[1] = ("k", ins[1][1][..., :8])
    with pytest.raises(ShapeError, match="key"):
        _gqa_kernel_call(bad)
    bad = list(ins)
    bad[5] = ("sl", np.array([2, 2], np.int64))
    with pytest.raises(ShapeError, match="seqlens_k must be int32"):
        _gqa_kernel_call(bad)
    bad = list(ins)
    bad[3] = ("pk", _randn(rng, B, 2, 2, H))
    with pytest.raises(ShapeError, match="past_key and past_value"):
        _gqa_kernel_call(bad)
    with pytest.raises(ShapeError, match="do_rotary=1 needs cos_cache"):
        _gqa_kernel_call(ins, do_rotary=1)
    with pytest.raises(ShapeError, match="seqlens_k \\[7, 3\\] must lie in \\[0, 6\\)"):
        _gqa_kernel_call(_gqa_inputs(rng, 1, [7, 3], 6, 2, past=5))
    # onnxruntime's rules (a fuzz: total_sequence_length 2**31 - 1 sized the present
    # cache at 128 GiB; a negative seqlens_k ran)
    with pytest.raises(ShapeError, match="total_sequence_length must equal "
                       "past_sequence_length \\+ kv_sequence_length"):
        _gqa_kernel_call(_gqa_inputs(rng, 1, [2, 2], 2**31 - 1, 2))
    with pytest.raises(ShapeError, match="seqlens_k \\[-7, 2\\] must lie in"):
        _gqa_kernel_call(_gqa_inputs(rng, 3, [-7, 2], 3, 2))


# --------------------------------------------------------------------------------------
# A small model through to_onnx
# --------------------------------------------------------------------------------------


def test_round_trip_model(rng):
    """RotaryEmbedding on Q and K, then GroupQueryAttention, imported and written back
    by to_onnx: onnxruntime runs the written model to the original's outputs."""
    kv = 2
    cos, sin = _cos_sin(rng, 32, H // 2)
    init = [onnx.numpy_helper.from_array(cos, "cos"), onnx.numpy_helper.from_array(sin, "sin")]
    nodes = [
        helper.make_node("RotaryEmbedding", ["q", "pos", "cos", "sin"], ["qr"], domain=MS,
                         num_heads=N),
        helper.make_node("RotaryEmbedding", ["k", "pos", "cos", "sin"], ["kr"], domain=MS,
                         num_heads=kv, interleaved=1),
        helper.make_node("GroupQueryAttention", ["qr", "kr", "v", "pk", "pv", "sl", "t"],
                         ["y", "present_k", "present_v"], domain=MS, num_heads=N,
                         kv_num_heads=kv, local_window_size=4)]
    f = TensorProto.FLOAT
    graph = helper.make_graph(nodes, "llm", [
        helper.make_tensor_value_info("q", f, [B, 1, N * H]),
        helper.make_tensor_value_info("k", f, [B, 1, kv * H]),
        helper.make_tensor_value_info("v", f, [B, 1, kv * H]),
        helper.make_tensor_value_info("pos", TensorProto.INT64, [B, 1]),
        helper.make_tensor_value_info("pk", f, [B, kv, 5, H]),
        helper.make_tensor_value_info("pv", f, [B, kv, 5, H]),
        helper.make_tensor_value_info("sl", TensorProto.INT32, [B]),
        helper.make_tensor_value_info("t", TensorProto.INT32, [])],
        [helper.make_tensor_value_info(n, f, None) for n in ("y", "present_k", "present_v")],
        init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)], ir_version=9)
    feeds = {"q": _randn(rng, B, 1, N * H), "k": _randn(rng, B, 1, kv * H),
             "v": _randn(rng, B, 1, kv * H), "pos": np.array([[5], [3]], np.int64),
             "pk": _randn(rng, B, kv, 5, H), "pv": _randn(rng, B, kv, 5, H),
             "sl": np.array([5, 3], np.int32), "t": np.array(6, np.int32)}
    want = ort_session(model, optimize=False).run(None, feeds)
    got = _og(model, feeds)
    back = to_onnx(from_onnx(model))
    assert {n.op_type for n in back.graph.node if n.domain == MS} == \
        {"RotaryEmbedding", "GroupQueryAttention"}
    again = ort_session(back, optimize=False).run(None, feeds)
    for w, g, a in zip(want, got, again):
        np.testing.assert_allclose(g, w, **TOL)
        np.testing.assert_allclose(a, w, **TOL)
