"""onnxruntime's NCHWc layout ops (`ops/ms_nchwc.py`, domain "com.microsoft.nchwc")
against onnxruntime.

The models are small standard float32 graphs that onnxruntime optimizes at
ORT_ENABLE_ALL and saves (into tmp_path); each test checks that the saved file holds the
NCHWc ops it is about, then imports it, runs it in onegraph.Session and compares with
onnxruntime running the ORIGINAL model (graph optimizations off). Block size 8 files
cannot be written on this AVX-512 machine: those are built here by blocking the weights
with the inverse of the decoder's permutation (the oracle is again the original model in
onnxruntime). Bounds: TOL rtol = atol = 1e-5 (measured max error 7.6e-6 on outputs up to
~25, at most 0.26 of the bound; summation order).

The block size is derived from the tensors where they fix it (a filter dim that is an odd
multiple of 8 means 8; an NCHW-input conv with 8..15 input channels means 16). A filter
whose blocked dims are all multiples of 16 fits both; it is read with this machine's
block size (as onnxruntime here reads it), which must be the one onnxruntime writes here,
read off a file it wrote (a Conv with 8 output channels is saved with roundup(8, B) of
them). The form tests pin `ms_nchwc.BLOCK_SIZE` to that size.
"""

from __future__ import annotations

import collections
import types

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError, UnsupportedOpError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402
from onegraph.ops import ms_nchwc  # noqa: E402

from .single_node import ort_session  # noqa: E402

NCHWC = "com.microsoft.nchwc"
TOL = dict(rtol=1e-5, atol=1e-5)
_mk = helper.make_node


def _optimize(model, path):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.optimized_model_filepath = str(path)
    ort.InferenceSession(model.SerializeToString(), options,
                         providers=["CPUExecutionProvider"])
    return onnx.load(str(path))


def _model(nodes, inputs, inits, opset=17, extra_opsets=()):
    graph = helper.make_graph(
        nodes, "nchwc",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]
                             + [helper.make_opsetid(d, 1) for d in extra_opsets],
                             ir_version=9)


def _ops(model):
    return collections.Counter(f"{n.domain}::{n.op_type}" if n.domain else n.op_type
                               for n in model.graph.node)


@pytest.fixture(scope="module")
def machine_block(tmp_path_factory):
    """The block size onnxruntime uses here, read off a file it writes: a Conv with 8
    output channels on a 3-channel input is saved with roundup(8, B) filters."""
    rng = np.random.default_rng(0)
    model = _model([_mk("Conv", ["x", "w"], ["y"])], [("x", [1, 3, 4, 4])],
                   {"w": rng.standard_normal((8, 3, 3, 3))})
    saved = _optimize(model, tmp_path_factory.mktemp("probe") / "probe.onnx")
    convs = [n for n in saved.graph.node if n.domain == NCHWC and n.op_type == "Conv"]
    if not convs:
        pytest.skip("onnxruntime writes no NCHWc ops on this machine")
    inits = {i.name: i for i in saved.graph.initializer}
    return int(inits[convs[0].input[1]].dims[0])


@pytest.fixture
def block(machine_block, monkeypatch):
    monkeypatch.setattr(ms_nchwc, "BLOCK_SIZE", machine_block)
    return machine_block


def _run_saved(tmp_path, model, feeds, want_ops, name="m"):
    """Optimize and save `model`, check the saved file holds `want_ops`, run it in
    onegraph; returns (onegraph's output, onnxruntime's on the original, saved model)."""
    saved = _optimize(model, tmp_path / f"{name}.onnx")
    counts = _ops(saved)
    assert {f"{NCHWC}::{o}" for o in want_ops} <= set(counts), dict(counts)
    got = onegraph.Session(from_onnx(saved)).run(["y"], feeds)[0]
    want = ort_session(model, optimize=False).run(None, feeds)[0]
    return got, want, saved


# --------------------------------------------------------------------------------------
# Conv forms
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("c,m,group,k,attrs", [
    (3, 32, 1, 3, dict(pads=[1, 1, 1, 1])),                 # NCHW input, OIHWBo
    (8, 16, 1, 3, dict(strides=[2, 2])),                    # 8 channels < 16: NCHW input
    (4, 6, 1, 3, {}),                                       # output padded 6 -> 16
    (16, 32, 1, 3, dict(pads=[1, 1, 1, 1])),                # OIHWBiBo
    (24, 16, 1, 3, dict(pads=[0, 1, 2, 1])),                # input padded 24 -> 32
    (16, 40, 1, 1, {}),                                     # 1x1, output padded 40 -> 48
    (32, 32, 32, 3, dict(pads=[1, 1, 1, 1])),               # depthwise
    (32, 32, 2, 3, dict(dilations=[2, 2], pads=[2, 2, 2, 2])),  # grouped, dilated
    (16, 16, 1, 3, dict(auto_pad="SAME_UPPER", strides=[2, 2])),
])
def test_conv_forms(tmp_path, block, c, m, group, k, attrs):
    rng = np.random.default_rng(1)
    # a first Conv whose output feeds the one under test, so its input is NCHWc too
    model = _model([_mk("Conv", ["x", "w", "b"], ["y"], group=group, **attrs)],
                   [("x", [2, c, 9, 9])],
                   {"w": rng.standard_normal((m, c // group, k, k)) * 0.3,
                    "b": rng.standard_normal(m)})
    feeds = {"x": rng.standard_normal((2, c, 9, 9)).astype(np.float32)}
    got, want, _ = _run_saved(tmp_path, model, feeds, ["Conv"])
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("act,nodes", [
    ("Relu", [_mk("Relu", ["c"], ["y"])]),
    ("Clip", [_mk("Clip", ["c", "lo", "hi"], ["y"])]),
    ("LeakyRelu", [_mk("LeakyRelu", ["c"], ["y"], alpha=0.2)]),
    ("HardSigmoid", [_mk("HardSigmoid", ["c"], ["y"], alpha=0.3, beta=0.4)]),
    ("Sigmoid", [_mk("Sigmoid", ["c"], ["y"])]),
])
def test_conv_activations_and_sum(tmp_path, block, act, nodes):
    """Two Convs, the second fused with the Add of the first's output (nchwc Conv's
    Sum input) and the activation."""
    rng = np.random.default_rng(2)
    graph = [_mk("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             _mk("Conv", ["c1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             _mk("Add", ["c2", "c1"], ["c"])] + nodes
    model = _model(graph, [("x", [1, 16, 8, 8])],
                   {"w1": rng.standard_normal((16, 16, 3, 3)) * 0.2, "b1": rng.standard_normal(16),
                    "w2": rng.standard_normal((16, 16, 3, 3)) * 0.1, "b2": rng.standard_normal(16),
                    "lo": 0.0, "hi": 1.5})
    feeds = {"x": rng.standard_normal((1, 16, 8, 8)).astype(np.float32)}
    got, want, saved = _run_saved(tmp_path, model, feeds, ["Conv", "ReorderInput"])
    convs = [n for n in saved.graph.node if n.op_type == "Conv"]
    assert any(len(n.input) == 4 for n in convs), "expected a Conv with a Sum input"
    np.testing.assert_allclose(got, want, **TOL)


# --------------------------------------------------------------------------------------
# Pooling, Upsample, the model corpus
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
    ("MaxPool", dict(kernel_shape=[2, 2], dilations=[2, 2])),
    ("MaxPool", dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2])),
    ("AveragePool", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[3, 2], pads=[1, 0, 1, 1], strides=[2, 1])),
    ("GlobalAveragePool", {}), ("GlobalMaxPool", {}),
])
def test_pools(tmp_path, block, op, attrs):
    rng = np.random.default_rng(3)
    model = _model([_mk("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                    _mk(op, ["c"], ["y"], **attrs)], [("x", [1, 16, 9, 9])],
                   {"w": rng.standard_normal((32, 16, 3, 3)) * 0.2})
    feeds = {"x": rng.standard_normal((1, 16, 9, 9)).astype(np.float32)}
    got, want, _ = _run_saved(tmp_path, model, feeds, [op])
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("mode,ctm,extra", [
    ("nearest", "asymmetric", dict(nearest_mode="floor")), ("linear", "asymmetric", {}),
    ("linear", "align_corners", {}), ("linear", "half_pixel", {})])
def test_upsample(tmp_path, block, mode, ctm, extra):
    rng = np.random.default_rng(4)
    model = _model([_mk("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                    _mk("Resize", ["c", "", "sc"], ["y"], mode=mode,
                        coordinate_transformation_mode=ctm, **extra)],
                   [("x", [1, 16, 5, 5])],
                   {"w": rng.standard_normal((16, 16, 3, 3)) * 0.2, "sc": [1, 1, 2, 3]})
    feeds = {"x": rng.standard_normal((1, 16, 5, 5)).astype(np.float32)}
    got, want, _ = _run_saved(tmp_path, model, feeds, ["Upsample"])
    np.testing.assert_allclose(got, want, **TOL)


def test_reorder_output_channels_last_and_concat(tmp_path, block):
    """Two Convs concatenated on NCHWc tensors, then a Transpose to NHWC that
    onnxruntime folds into ReorderOutput(channels_last=1)."""
    rng = np.random.default_rng(5)
    model = _model([_mk("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
                    _mk("Conv", ["x", "w2"], ["b"], pads=[1, 1, 1, 1]),
                    _mk("Concat", ["a", "b"], ["c"], axis=1),
                    _mk("Relu", ["c"], ["r"]),
                    _mk("Transpose", ["r"], ["y"], perm=[0, 2, 3, 1])], [("x", [1, 16, 6, 6])],
                   {"w1": rng.standard_normal((16, 16, 3, 3)) * .2,
                    "w2": rng.standard_normal((32, 16, 3, 3)) * .2})
    feeds = {"x": rng.standard_normal((1, 16, 6, 6)).astype(np.float32)}
    got, want, saved = _run_saved(tmp_path, model, feeds, ["Conv", "ReorderOutput"])
    assert "Concat" in _ops(saved)
    np.testing.assert_allclose(got, want, **TOL)


def test_corpus_model(tmp_path, block):
    """A small CNN: NCHW-input conv, max pool, conv+BN+relu, depthwise, residual add,
    average pool, upsample, global pools."""
    rng = np.random.default_rng(6)
    r = rng.standard_normal
    graph = [_mk("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
             _mk("Relu", ["c1"], ["r1"]),
             _mk("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             _mk("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             _mk("BatchNormalization", ["c2", "s", "bb", "mu", "var"], ["n2"]),
             _mk("Relu", ["n2"], ["r2"]),
             _mk("Conv", ["r2", "wd"], ["d"], pads=[1, 1, 1, 1], group=32),
             _mk("Add", ["d", "r2"], ["a"]),
             _mk("AveragePool", ["a"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             _mk("Resize", ["ap", "", "sc"], ["u"], mode="nearest",
                 coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             _mk("GlobalAveragePool", ["u"], ["g1"]), _mk("GlobalMaxPool", ["u"], ["g2"]),
             _mk("Add", ["g1", "g2"], ["y"])]
    model = _model(graph, [("x", [1, 3, 32, 32])], {
        "w1": r((16, 3, 3, 3)) * .3, "b1": r(16), "w2": r((32, 16, 3, 3)) * .1,
        "s": rng.uniform(.5, 1.5, 32), "bb": r(32), "mu": r(32) * .1,
        "var": rng.uniform(.5, 1.5, 32), "wd": r((32, 1, 3, 3)) * .3, "sc": [1, 1, 2, 2]})
    feeds = {"x": r((1, 3, 32, 32)).astype(np.float32)}
    got, want, _ = _run_saved(tmp_path, model, feeds,
                              ["Conv", "MaxPool", "AveragePool", "Upsample",
                               "GlobalAveragePool", "GlobalMaxPool", "ReorderOutput"])
    np.testing.assert_allclose(got, want, **TOL)


# --------------------------------------------------------------------------------------
# Block size 8 (written by hand: this machine writes 16)
# --------------------------------------------------------------------------------------


def _block_bibo(w, b):
    """OIHW -> OIHWBiBo storage (the inverse of ms_nchwc.decode_oihwbibo)."""
    o, i, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(o // b, b, i // b, b, kh, kw)
                                .transpose(0, 2, 4, 5, 3, 1)).reshape(w.shape)


def _block_bo(w, b):
    """OIHW -> OIHWBo storage (the inverse of ms_nchwc.decode_oihwbo)."""
    o, i, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(o // b, b, i, kh, kw)
                                .transpose(0, 2, 3, 4, 1)).reshape(w.shape)


def test_block_roundtrip():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    for b in (8, 16):
        np.testing.assert_array_equal(ms_nchwc.decode_oihwbibo(_block_bibo(w, b), b), w)
        np.testing.assert_array_equal(ms_nchwc.decode_oihwbo(_block_bo(w, b), b), w)
    # the two block sizes order the same filter differently
    assert not np.array_equal(_block_bibo(w, 8), _block_bibo(w, 16))


def test_block_size_8_file():
    """A file as onnxruntime writes it on AVX2 (B = 8, derived from the 24- and
    40-channel filters): NCHW-input conv (OIHWBo), a blocked conv (OIHWBiBo) with the
    first's output as Sum, a depthwise conv, max pool; BLOCK_SIZE stays unset."""
    assert ms_nchwc.BLOCK_SIZE is None
    rng = np.random.default_rng(8)
    w1, b1 = rng.standard_normal((24, 3, 3, 3)) * .3, rng.standard_normal(24)
    w2, b2 = rng.standard_normal((24, 24, 3, 3)) * .1, rng.standard_normal(24)
    wd = rng.standard_normal((24, 1, 3, 3)) * .3
    w3 = rng.standard_normal((40, 24, 1, 1)) * .2
    std = _model([_mk("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
                  _mk("Relu", ["c1"], ["r1"]),
                  _mk("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
                  _mk("Add", ["c2", "r1"], ["s"]), _mk("Relu", ["s"], ["r2"]),
                  _mk("Conv", ["r2", "wd"], ["d"], pads=[1, 1, 1, 1], group=24),
                  _mk("MaxPool", ["d"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                  _mk("Conv", ["p", "w3"], ["y"])], [("x", [1, 3, 8, 8])],
                 {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "wd": wd, "w3": w3})
    f32 = np.float32
    blocked = _model([
        _mk("Conv", ["x", "w1", "b1"], ["r1"], domain=NCHWC, pads=[1, 1, 1, 1],
            activation="Relu"),
        _mk("Conv", ["r1", "w2", "b2", "r1"], ["r2"], domain=NCHWC, pads=[1, 1, 1, 1],
            activation="Relu"),
        _mk("Conv", ["r2", "wd"], ["d"], domain=NCHWC, pads=[1, 1, 1, 1], group=24),
        _mk("MaxPool", ["d"], ["p"], domain=NCHWC, kernel_shape=[2, 2], strides=[2, 2]),
        _mk("Conv", ["p", "w3"], ["c"], domain=NCHWC),
        _mk("ReorderOutput", ["c"], ["y"], domain=NCHWC, channels=40)],
        [("x", [1, 3, 8, 8])],
        {"w1": _block_bo(w1.astype(f32), 8), "b1": b1, "w2": _block_bibo(w2.astype(f32), 8),
         "b2": b2, "wd": _block_bo(wd.astype(f32), 8), "w3": _block_bibo(w3.astype(f32), 8)},
        extra_opsets=[NCHWC])
    x = rng.standard_normal((1, 3, 8, 8)).astype(f32)
    want = ort_session(std, optimize=False).run(None, {"x": x})[0]
    got = onegraph.Session(from_onnx(blocked)).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, want, **TOL)


# --------------------------------------------------------------------------------------
# Errors, inference, round trip
# --------------------------------------------------------------------------------------


def test_machine_block_size_is_the_one_onnxruntime_writes_here(machine_block):
    assert ms_nchwc.machine_block_size() == machine_block


@pytest.mark.parametrize("features, block", [({"AVX512F": True, "AVX2": True}, 16),
                                             ({"AVX512F": False, "AVX2": True}, 8),
                                             ({}, None)])
def test_machine_block_size_reads_numpy_1_feature_table(monkeypatch, features, block):
    """numpy 1.x (the package supports >= 1.24) keeps the CPU feature table under
    np.core, not np._core; before it looked there too, a numpy 1.x machine read as
    having no block size, so ambiguous NCHWc convs were refused."""
    monkeypatch.setattr(ms_nchwc.platform, "machine", lambda: "x86_64")
    umath = types.SimpleNamespace(__cpu_features__=features)
    monkeypatch.setattr(ms_nchwc, "np", types.SimpleNamespace(
        core=types.SimpleNamespace(_multiarray_umath=umath)))
    assert ms_nchwc.machine_block_size.__wrapped__() == block


def test_ambiguous_filter_is_read_with_this_machines_block_size(tmp_path, machine_block):
    """A 16 -> 32 conv on an NCHWc input fits block sizes 8 and 16; with BLOCK_SIZE
    unset it is read as onnxruntime here wrote it."""
    assert ms_nchwc.BLOCK_SIZE is None
    rng = np.random.default_rng(7)
    model = _model([_mk("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])],
                   [("x", [1, 16, 6, 6])],
                   {"w": rng.standard_normal((32, 16, 3, 3)) * 0.3,
                    "b": rng.standard_normal(32)})
    feeds = {"x": rng.standard_normal((1, 16, 6, 6)).astype(np.float32)}
    got, want, _ = _run_saved(tmp_path, model, feeds, ["Conv"])
    np.testing.assert_allclose(got, want, **TOL)


def test_ambiguous_block_size_is_refused_without_a_machine_block(monkeypatch):
    monkeypatch.setattr(ms_nchwc, "machine_block_size", lambda: None)
    op = REGISTRY.get("Conv", NCHWC)
    x = np.zeros((1, 16, 4, 4), np.float32)
    w = np.zeros((16, 16, 3, 3), np.float32)
    with pytest.raises(UnsupportedOpError, match="Conv: filter .16, 16, 3, 3. .group 1. "
                                                 "fits MLAS block sizes 16 and 8"):
        op.kernel([x, w], op.resolve_attrs({}), None)


def test_errors(block):
    conv = REGISTRY.get("Conv", NCHWC)
    attrs = conv.resolve_attrs({})
    x = np.zeros((1, 16, 4, 4), np.float32)
    with pytest.raises(ShapeError, match="Conv: filter .12, 16, 3, 3. .group 1. on an input "
                                         "of 16 channels fits no MLAS block size"):
        conv.kernel([x, np.zeros((12, 16, 3, 3), np.float32)], attrs, None)
    with pytest.raises(ShapeError, match="Conv: X must be float32, got float64"):
        conv.kernel([x.astype(np.float64), np.zeros((16, 16, 3, 3))], attrs, None)
    with pytest.raises(ShapeError, match="Conv: Sum must have the output's shape"):
        conv.kernel([x, np.zeros((16, 16, 3, 3), np.float32), None,
                     np.zeros((1, 16, 1, 1), np.float32)], attrs, None)
    with pytest.raises(ShapeError, match="Conv: B must have shape .16,."):
        conv.kernel([x, np.zeros((16, 16, 3, 3), np.float32), np.zeros(3, np.float32)],
                    attrs, None)
    with pytest.raises(UnsupportedOpError, match="Conv: activation 'Gelu' is not supported"):
        conv.resolve_attrs({"activation": "Gelu"})
    with pytest.raises(OpAttributeError, match="Conv: activation Clip needs 2"):
        conv.resolve_attrs({"activation": "Clip"})
    out = REGISTRY.get("ReorderOutput", NCHWC)
    with pytest.raises(OpAttributeError, match="ReorderOutput: channels must be positive"):
        out.kernel([x], out.resolve_attrs({}), None)
    with pytest.raises(ShapeError, match="ReorderOutput: channels 20 exceeds the input's 16"):
        out.kernel([x], out.resolve_attrs({"channels": 20}), None)
    with pytest.raises(ShapeError, match="ReorderInput: X must be 4-D"):
        REGISTRY.get("ReorderInput", NCHWC).kernel([x[0]], {"channels_last": 0}, None)
    up = REGISTRY.get("Upsample", NCHWC)
    with pytest.raises(UnsupportedOpError, match="Upsample: mode 'cubic' is not supported"):
        up.kernel([x], up.resolve_attrs({"mode": "cubic", "scales": [1, 1, 2, 2]}), None)
    with pytest.raises(UnsupportedOpError, match="Upsample: coordinate_transformation_mode "
                                                 "'half_pixel' is not supported with mode"):
        up.kernel([x], up.resolve_attrs({"coordinate_transformation_mode": "half_pixel",
                                         "scales": [1, 1, 2, 2]}), None)
    with pytest.raises(OpAttributeError, match="Upsample: scales must be 4 integers"):
        up.kernel([x], up.resolve_attrs({"scales": [2, 1, 2, 2]}), None)
    mp = REGISTRY.get("MaxPool", NCHWC)
    with pytest.raises(UnsupportedOpError, match="MaxPool: storage_order=1"):
        mp.kernel([x], mp.resolve_attrs({"kernel_shape": [2, 2], "storage_order": 1}), None)
    with pytest.raises(OpAttributeError, match="MaxPool: .*kernel_shape"):
        mp.kernel([x], mp.resolve_attrs({"kernel_shape": [2]}), None)
    gap = REGISTRY.get("GlobalAveragePool", NCHWC)
    with pytest.raises(ShapeError, match="GlobalAveragePool: X must be float32"):
        gap.kernel([x.astype(np.float16)], {}, None)


def test_inference_matches_kernels(block):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 16, 7, 6)).astype(np.float32)
    f = np.dtype(np.float32)
    cases = [
        ("Conv", [x, _block_bibo(rng.standard_normal((32, 16, 3, 3)).astype(np.float32), 16)],
         dict(strides=[2, 1], pads=[1, 0, 1, 0])),
        ("ReorderInput", [x], dict(channels_last=1)),
        ("ReorderOutput", [x], dict(channels=5, channels_last=1)),
        ("MaxPool", [x], dict(kernel_shape=[3, 3], ceil_mode=1, strides=[2, 2])),
        ("AveragePool", [x], dict(kernel_shape=[2, 2])),
        ("GlobalMaxPool", [x], {}),
        ("Upsample", [x], dict(scales=[1, 1, 3, 2], mode="linear")),
    ]
    for name, inputs, attrs in cases:
        op = REGISTRY.get(name, NCHWC)
        resolved = op.resolve_attrs(attrs)
        (y,) = op.kernel(inputs, resolved, None)
        (info,) = op.infer(resolved, [TensorInfo(f, a.shape) for a in inputs])
        assert info.dtype == y.dtype and tuple(info.shape) == y.shape, name


def test_round_trip_model(tmp_path, block):
    """An ORT_ENABLE_ALL file imported and written back by to_onnx: onnxruntime runs
    the written model (it reads its own NCHWc ops) to the original's outputs."""
    rng = np.random.default_rng(10)
    model = _model([_mk("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
                    _mk("Relu", ["c1"], ["r"]),
                    _mk("Conv", ["r", "w2"], ["c2"], pads=[1, 1, 1, 1]),
                    _mk("MaxPool", ["c2"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                   [("x", [1, 3, 8, 8])],
                   {"w1": rng.standard_normal((16, 3, 3, 3)), "b1": rng.standard_normal(16),
                    "w2": rng.standard_normal((32, 16, 3, 3)) * .2})
    feeds = {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    got, want, saved = _run_saved(tmp_path, model, feeds, ["Conv", "MaxPool"])
    np.testing.assert_allclose(got, want, **TOL)
    back = to_onnx(from_onnx(saved))
    assert {n.op_type for n in back.graph.node if n.domain == NCHWC} == \
        {n.op_type for n in saved.graph.node if n.domain == NCHWC}
    again = ort_session(back, optimize=False).run(None, feeds)[0]
    np.testing.assert_allclose(again, want, **TOL)
