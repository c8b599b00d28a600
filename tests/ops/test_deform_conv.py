"""DeformConv against independent oracles on cases the ONNX node tests do not cover.

Oracles: onnxruntime's DeformConv (2-D only there) on seeded random inputs with
fractional and out-of-image offsets over strides, pads, dilations, groups and offset
groups; `onnx.reference.ReferenceEvaluator` on tiny 2-D cases (it loops per pixel);
onnxruntime's ordinary Conv for zero offsets and a unit mask (1-D, 2-D, 3-D); 1-D as
onnxruntime's 2-D with a unit height; a naive per-sample loop for 3-D. Plus inference
vs the kernel's shapes and the named errors for inconsistent inputs.
"""

import itertools
import zlib

import numpy as np
import pytest

from onegraph.errors import OpAttributeError, ShapeError
from onegraph.ops import KernelContext, TensorInfo, get_op

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper  # noqa: E402

NAMES = ("X", "W", "offset", "B", "mask")


def _model(op_type, inputs, attrs, opset=22):
    names = [nm if a is not None else "" for nm, a in zip(NAMES, inputs)]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op_type, names, ["Y"], **attrs)
    elem = helper.np_dtype_to_tensor_dtype(inputs[0].dtype)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for nm, a in zip(names, inputs) if nm],
        [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model, {nm: a for nm, a in zip(names, inputs) if nm}


def _ort(op_type, inputs, attrs):
    model, feeds = _model(op_type, inputs, attrs)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def _reference(inputs, attrs):
    from onnx.reference import ReferenceEvaluator

    model, feeds = _model("DeformConv", inputs, attrs)
    return ReferenceEvaluator(model).run(None, feeds)[0]


def _ours(inputs, attrs):
    """Through ONNX import and the Session, as a user runs it."""
    from onegraph import Session
    from onegraph.convert import from_onnx

    model, feeds = _model("DeformConv", inputs, attrs)
    return Session(from_onnx(model)).run(["Y"], feeds)[0]


def _kernel(inputs, attrs):
    op = get_op("DeformConv")
    return op.kernel(list(inputs), op.resolve_attrs(attrs), KernelContext())[0]


def _infer(inputs, attrs):
    op = get_op("DeformConv")
    return op.infer(op.resolve_attrs(attrs),
                    [None if a is None else TensorInfo(a.dtype, a.shape) for a in inputs])[0]


def _out_sp(sp, k, attrs):
    nsp = len(sp)
    s = attrs.get("strides", [1] * nsp)
    d = attrs.get("dilations", [1] * nsp)
    p = attrs.get("pads", [0] * 2 * nsp)
    return tuple((n + p[i] + p[i + nsp] - (kk - 1) * d[i] - 1) // s[i] + 1
                 for i, (n, kk) in enumerate(zip(sp, k)))


def _inputs(rng, n, c, m, sp, k, attrs, bias=True, mask=True, spread=2.0,
            dtype=np.float32):
    """Random X, W, offset (fractional, some far outside the image), B, mask."""
    group, og = attrs.get("group", 1), attrs.get("offset_group", 1)
    out = _out_sp(sp, k, attrs)
    taps = int(np.prod(k))
    off = rng.standard_normal((n, og * taps * len(sp)) + out) * spread
    # a few samples land entirely outside the padded image
    off.reshape(-1)[::7] += rng.choice([-1, 1], off.reshape(-1)[::7].shape) * 50
    return [rng.standard_normal((n, c) + tuple(sp)).astype(dtype),
            rng.standard_normal((m, c // group) + tuple(k)).astype(dtype),
            off.astype(dtype),
            rng.standard_normal(m).astype(dtype) if bias else None,
            rng.random((n, og * taps) + out).astype(dtype) if mask else None]


def _close(got, want, tol=1e-4):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=tol, atol=tol)


CASES_2D = [
    # (id, N, C, M, spatial, kernel, attrs)
    ("plain", 2, 3, 4, (6, 7), (3, 3), {}),
    ("pads", 1, 4, 5, (5, 6), (3, 2), dict(pads=[1, 2, 0, 1])),
    ("strides", 2, 2, 3, (9, 8), (3, 3), dict(strides=[2, 3], pads=[1, 1, 1, 1])),
    ("dilations", 1, 3, 2, (9, 9), (2, 3), dict(dilations=[3, 2], pads=[0, 1, 2, 0])),
    ("groups", 2, 6, 9, (6, 5), (3, 3), dict(group=3, pads=[1, 1, 1, 1])),
    ("offset groups", 1, 6, 4, (7, 6), (3, 2), dict(offset_group=3, strides=[1, 2])),
    ("groups x offset groups", 2, 8, 6, (5, 7), (2, 2),
     dict(group=2, offset_group=4, dilations=[2, 1], pads=[1, 0, 0, 1])),
    ("depthwise", 1, 4, 4, (6, 6), (3, 3), dict(group=4, offset_group=4, pads=[1, 1, 1, 1])),
    ("1x1", 2, 5, 3, (4, 5), (1, 1), dict(strides=[2, 1])),
    ("big kernel", 1, 2, 2, (4, 4), (4, 4), dict(pads=[2, 2, 2, 2])),
]


@pytest.mark.parametrize("bias,mask", [(True, True), (False, True), (True, False),
                                       (False, False)])
@pytest.mark.parametrize("case", CASES_2D, ids=[c[0] for c in CASES_2D])
def test_vs_onnxruntime(case, bias, mask):
    _, n, c, m, sp, k, attrs = case
    rng = np.random.default_rng(zlib.crc32(f"{case[0]} {bias} {mask}".encode()))
    inputs = _inputs(rng, n, c, m, sp, k, attrs, bias, mask)
    got = _kernel(inputs, attrs)
    _close(got, _ort("DeformConv", inputs, attrs))
    info = _infer(inputs, attrs)
    assert info.shape == got.shape and np.dtype(info.dtype) == got.dtype


def test_session_path_vs_onnxruntime():
    attrs = dict(group=2, offset_group=2, strides=[2, 1], pads=[1, 0, 1, 1])
    inputs = _inputs(np.random.default_rng(1), 2, 4, 6, (7, 6), (3, 2), attrs)
    _close(_ours(inputs, attrs), _ort("DeformConv", inputs, attrs))


@pytest.mark.parametrize("case", CASES_2D[:2] + CASES_2D[5:7], ids=lambda c: c[0])
def test_vs_reference_evaluator(case):
    _, n, c, m, sp, k, attrs = case
    # the reference evaluator loops per pixel and channel: keep it tiny
    inputs = _inputs(np.random.default_rng(7), 1, c, min(m, 2 * attrs.get("group", 1)),
                     sp, k, attrs)
    _close(_kernel(inputs, attrs), _reference(inputs, attrs))


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float16, 2e-2)])
def test_dtypes_vs_onnxruntime(dtype, tol):
    attrs = dict(group=2, offset_group=2, pads=[1, 1, 1, 1])
    inputs = _inputs(np.random.default_rng(3), 2, 4, 4, (5, 5), (3, 3), attrs, dtype=dtype)
    _close(_kernel(inputs, attrs), _ort("DeformConv", inputs, attrs), tol)


def test_integer_and_half_offsets_vs_onnxruntime():
    # exact cell corners and midpoints, including the last row/column (whose +1 corner
    # is outside the image)
    attrs = dict(pads=[1, 1, 1, 1])
    rng = np.random.default_rng(4)
    inputs = _inputs(rng, 1, 2, 3, (5, 4), (3, 3), attrs)
    inputs[2] = (rng.integers(-3, 4, inputs[2].shape) / 2).astype(np.float32)
    _close(_kernel(inputs, attrs), _ort("DeformConv", inputs, attrs))


CONV_CASES = [
    ("1d", (2, 3, 11), (4, 3, 3), dict(pads=[1, 2], strides=[2], dilations=[2])),
    ("2d", (2, 4, 7, 6), (6, 2, 3, 2), dict(group=2, offset_group=4, pads=[1, 0, 1, 1])),
    ("3d", (1, 4, 4, 5, 3), (2, 2, 2, 3, 2),
     dict(group=2, offset_group=2, strides=[1, 2, 1], pads=[0, 1, 1, 1, 0, 0])),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_zero_offsets_unit_mask_equal_conv(case):
    _, xs, ws, attrs = case
    rng = np.random.default_rng(5)
    og = attrs.get("offset_group", 1)
    conv_attrs = {k: v for k, v in attrs.items() if k != "offset_group"}
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    out = _out_sp(xs[2:], ws[2:], attrs)
    taps = int(np.prod(ws[2:]))
    off = np.zeros((xs[0], og * taps * len(out)) + out, np.float32)
    mask = np.ones((xs[0], og * taps) + out, np.float32)
    want = _ort("Conv", [x, w, b], conv_attrs)
    _close(_kernel([x, w, off, b, mask], attrs), want)
    _close(_kernel([x, w, off, None, None], attrs), want - b.reshape((-1,) + (1,) * len(out)))


def test_1d_equals_2d_with_unit_height():
    attrs1 = dict(strides=[2], pads=[2, 1], dilations=[2], group=2, offset_group=2)
    rng = np.random.default_rng(6)
    x, w, off, b, mask = _inputs(rng, 2, 4, 4, (13,), (3,), attrs1)
    # in 2-D the height offset of every tap is 0 (offset channels interleave h, w)
    n, ch, o = off.shape
    off2 = np.zeros((n, ch, 2, o), np.float32)
    off2[:, :, 1] = off
    attrs2 = dict(strides=[1, 2], pads=[0, 2, 0, 1], dilations=[1, 2], group=2,
                  offset_group=2)
    want = _ort("DeformConv", [x[:, :, None], w[:, :, None], off2.reshape(n, 2 * ch, 1, o),
                               b, mask[:, :, None]], attrs2)
    _close(_kernel([x, w, off, b, mask], attrs1), want[:, :, 0])


def _naive(x, w, off, b, mask, strides, pads, dilations, group, og):
    """Per-sample loops: multilinear interpolation with explicit bounds checks."""
    n, c = x.shape[:2]
    m = w.shape[0]
    kernel = w.shape[2:]
    nsp = len(kernel)
    out_sp = off.shape[2:]
    taps = list(itertools.product(*(range(k) for k in kernel)))
    off = off.reshape((n, og, len(taps), nsp) + out_sp)
    mask = mask.reshape((n, og, len(taps)) + out_sp)
    y = np.zeros((n, m) + out_sp)
    for bi, oc, ic in itertools.product(range(n), range(m), range(c)):
        if ic // (c // group) != oc // (m // group):
            continue
        g = ic // (c // og)
        for opos in itertools.product(*(range(o) for o in out_sp)):
            for t, tap in enumerate(taps):
                pos = [opos[i] * strides[i] - pads[i] + tap[i] * dilations[i]
                       + off[(bi, g, t, i) + opos] for i in range(nsp)]
                val = 0.0
                for corner in itertools.product(*[(int(np.floor(p)), int(np.floor(p)) + 1)
                                                  for p in pos]):
                    if all(0 <= q < s for q, s in zip(corner, x.shape[2:])):
                        wt = np.prod([1 - abs(p - q) for p, q in zip(pos, corner)])
                        val += wt * x[(bi, ic) + corner]
                y[(bi, oc) + opos] += (val * mask[(bi, g, t) + opos]
                                       * w[(oc, ic % (c // group)) + tap])
    return y + b.reshape((m,) + (1,) * nsp)


def test_3d_vs_naive_loops():
    attrs = dict(strides=[1, 2, 1], pads=[1, 0, 1, 0, 1, 1], dilations=[1, 1, 2], group=2,
                 offset_group=2)
    x, w, off, b, mask = _inputs(np.random.default_rng(8), 1, 4, 2, (3, 4, 4), (2, 2, 2),
                                 attrs, spread=1.5, dtype=np.float64)
    want = _naive(x, w, off, b, mask, attrs["strides"], attrs["pads"], attrs["dilations"],
                  attrs["group"], attrs["offset_group"])
    _close(_kernel([x, w, off, b, mask], attrs), want, 1e-10)


def test_far_offsets_give_bias():
    attrs = dict(pads=[1, 1, 1, 1])
    inputs = _inputs(np.random.default_rng(9), 1, 2, 3, (4, 4), (3, 3), attrs)
    inputs[2][:] = 1e6
    got = _kernel(inputs, attrs)
    np.testing.assert_array_equal(got, np.broadcast_to(inputs[3].reshape(3, 1, 1), got.shape))


def test_empty_batch_and_empty_output():
    attrs = dict(pads=[0, 0, 0, 0])
    rng = np.random.default_rng(10)
    inputs = _inputs(rng, 1, 2, 3, (4, 4), (3, 3), attrs)
    empty = [a[:0] if i in (0, 2, 4) else a for i, a in enumerate(inputs)]
    got = _kernel(empty, attrs)
    assert got.shape == (0, 3, 2, 2) and _infer(empty, attrs).shape == (0, 3, 2, 2)
    # a kernel larger than the image: no output pixels
    x = rng.standard_normal((1, 2, 2, 2)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    off = np.zeros((1, 18, 0, 0), np.float32)
    assert _kernel([x, w, off, None, None], {}).shape == (1, 3, 0, 0)


def test_infer_with_unknown_dims():
    attrs = dict(strides=[2, 2], pads=[1, 1, 1, 1])
    x = TensorInfo(np.dtype(np.float32), (None, 3, 8, None))
    w = TensorInfo(np.dtype(np.float32), (5, 3, 3, 3))
    off = TensorInfo(np.dtype(np.float32), (None, 18, None, 7))
    op = get_op("DeformConv")
    info = op.infer(op.resolve_attrs(attrs), [x, w, off, None, None])[0]
    assert info.shape == (None, 5, 4, 7)


def _bad(**over):
    """Consistent inputs (C=4, M=6, group 2, offset_group 2, 3x3 on 5x5) with overrides."""
    rng = np.random.default_rng(11)
    attrs = dict(group=2, offset_group=2)
    inputs = _inputs(rng, 1, 4, 6, (5, 5), (3, 3), attrs)
    for i, nm in enumerate(NAMES):
        if nm in over:
            shape = over.pop(nm)
            inputs[i] = None if shape is None else np.zeros(shape, np.float32)
    attrs.update(over)
    return inputs, attrs


BAD = [
    ("channels vs W", dict(W=(6, 3, 3, 3)), ShapeError, "W dim 1"),
    ("C vs group", dict(group=3, W=(6, 1, 3, 3)), ShapeError, "group"),
    ("M vs group", dict(W=(5, 2, 3, 3), B=(5,)), ShapeError, "output channels"),
    ("C vs offset_group", dict(offset_group=3, offset=(1, 54, 3, 3), mask=(1, 27, 3, 3)),
     ShapeError, "offset_group"),
    ("offset channels", dict(offset=(1, 18, 3, 3)), ShapeError, "offset has 18 channels"),
    ("offset spatial", dict(offset=(1, 36, 4, 3)), ShapeError, "offset spatial"),
    ("offset batch", dict(offset=(2, 36, 3, 3)), ShapeError, "offset batch"),
    ("mask channels", dict(mask=(1, 9, 3, 3)), ShapeError, "mask has 9 channels"),
    ("mask spatial", dict(mask=(1, 18, 3, 2)), ShapeError, "mask spatial"),
    ("bias", dict(B=(4,)), ShapeError, "bias"),
    ("rank", dict(offset=(1, 36, 3)), ShapeError, "rank"),
    ("kernel_shape", dict(kernel_shape=[2, 2]), ShapeError, "kernel_shape"),
    ("group 0", dict(group=0), OpAttributeError, "group"),
    ("offset_group 0", dict(offset_group=0), OpAttributeError, "offset_group"),
    ("strides length", dict(strides=[1]), OpAttributeError, "strides"),
    ("stride 0", dict(strides=[0, 1]), OpAttributeError, "strides"),
    ("negative pads", dict(pads=[-1, 0, 0, 0]), OpAttributeError, "pads"),
    ("dilations length", dict(dilations=[1, 1, 1]), OpAttributeError, "dilations"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_inputs_raise(case):
    _, over, err, words = case
    inputs, attrs = _bad(**over)
    with pytest.raises(err, match=f"DeformConv: .*{words}"):
        _kernel(inputs, attrs)
    with pytest.raises(err, match=words):
        _infer(inputs, attrs)


def test_bad_offset_through_session_names_node():
    from onegraph import Session
    from onegraph.convert import from_onnx

    inputs, attrs = _bad()
    model, _ = _model("DeformConv", inputs, attrs)
    for vi in model.graph.input:  # unknown shapes: the kernel must catch it at run time
        vi.type.tensor_type.ClearField("shape")
    feeds = dict(zip(NAMES, inputs))
    feeds["offset"] = np.zeros((1, 36, 2, 2), np.float32)
    with pytest.raises(ShapeError, match=r"DeformConv.*offset spatial"):
        Session(from_onnx(model)).run(["Y"], feeds)


def test_mixed_dtypes_rejected_by_inference():
    inputs, attrs = _bad()
    inputs[2] = inputs[2].astype(np.float64)
    with pytest.raises(ShapeError, match="dtype"):
        _infer(inputs, attrs)
