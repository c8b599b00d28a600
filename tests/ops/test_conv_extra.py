"""Conv / ConvTranspose / pooling kernels against onnxruntime on configurations the ONNX
node tests do not cover: groups, depthwise, channel multipliers, dilations, strides,
batch > 1, 1-D and 3-D, float16, MaxPool Indices with storage_order."""

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")


def _run_ort(op_type, inputs, attrs, n_out=1, opset=21):
    from onnx import helper

    names = [f"i{k}" for k in range(len(inputs))]
    outs = [f"o{k}" for k in range(n_out)]
    node = helper.make_node(op_type, names, outs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for nm, a in zip(names, inputs)],
        [helper.make_tensor_value_info(
            o, onnx.TensorProto.INT64 if k == 1 and op_type == "MaxPool"
            else helper.np_dtype_to_tensor_dtype(inputs[0].dtype), None)
         for k, o in enumerate(outs)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip(names, inputs)))


def _run_ours(op_type, inputs, attrs):
    op = get_op(op_type)
    return op.kernel(list(inputs), op.resolve_attrs(attrs), KernelContext())


def _check(op_type, inputs, attrs, n_out=1, rtol=1e-4, atol=1e-4):
    want = _run_ort(op_type, inputs, attrs, n_out)
    # a kernel called without the node's output count computes its optional outputs
    # too (MaxPool's Indices): compare the n_out the ONNX node asked for
    got = list(_run_ours(op_type, inputs, attrs))[:n_out]
    for w, g in zip(want, got, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                   atol=atol)
    # inference agrees with the kernel
    from onegraph.ops import TensorInfo
    op = get_op(op_type)
    infos = op.infer(op.resolve_attrs(attrs), [TensorInfo(a.dtype, a.shape) for a in inputs])
    for info, g in zip(infos, got):
        assert tuple(info.shape) == g.shape and np.dtype(info.dtype) == g.dtype


RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws from its own fresh generator: a test's inputs must not depend on
    which tests ran before it (a failure must reproduce under -k)."""
    global RNG
    RNG = np.random.default_rng(0)


def _r(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


CONV_CASES = [
    ("3x3 pad", (2, 8, 9, 9), (6, 8, 3, 3), dict(pads=[1, 1, 1, 1])),
    ("stride dil", (1, 4, 13, 11), (5, 4, 3, 2), dict(strides=[2, 3], dilations=[2, 1])),
    ("groups", (2, 6, 10, 10), (9, 2, 3, 3), dict(group=3, pads=[1, 0, 2, 1])),
    ("depthwise", (2, 16, 12, 12), (16, 1, 3, 3), dict(group=16, pads=[1, 1, 1, 1])),
    ("depthwise mult", (1, 4, 8, 8), (12, 1, 3, 3), dict(group=4, strides=[2, 2])),
    ("dw big", (1, 64, 40, 40), (64, 1, 5, 5), dict(group=64, pads=[2, 2, 2, 2])),
    ("1x1 stride", (2, 8, 9, 9), (4, 8, 1, 1), dict(strides=[2, 2])),
    ("1x1 groups", (1, 12, 5, 5), (12, 4, 1, 1), dict(group=3)),
    ("same lower", (1, 3, 7, 8), (4, 3, 4, 3), dict(auto_pad="SAME_LOWER", strides=[2, 2])),
    ("same upper", (1, 3, 7, 8), (4, 3, 4, 3), dict(auto_pad="SAME_UPPER", strides=[2, 1])),
    ("valid", (1, 3, 7, 8), (4, 3, 2, 3), dict(auto_pad="VALID")),
    ("1d", (2, 3, 20), (5, 3, 4), dict(pads=[2, 1], strides=[3])),
    ("3d", (1, 2, 6, 7, 5), (3, 2, 3, 2, 3), dict(pads=[1, 0, 1, 1, 1, 0])),
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv_vs_ort(case, bias):
    _, xs, ws, attrs = case
    inputs = [_r(*xs), _r(*ws)] + ([_r(ws[0])] if bias else [])
    _check("Conv", inputs, attrs)


def test_conv_float16():
    inputs = [_r(1, 4, 8, 8, dtype=np.float16), _r(6, 2, 3, 3, dtype=np.float16),
              _r(6, dtype=np.float16)]
    _check("Conv", inputs, dict(group=2, pads=[1, 1, 1, 1]), rtol=1e-2, atol=1e-2)


CONVT_CASES = [
    ("basic", (2, 4, 5, 5), (4, 3, 3, 3), dict()),
    ("stride pad outpad", (1, 4, 5, 6), (4, 2, 3, 4),
     dict(strides=[2, 3], pads=[1, 0, 1, 2], output_padding=[1, 2])),
    ("groups dil", (2, 6, 4, 4), (6, 2, 3, 3), dict(group=3, dilations=[2, 1])),
    ("output_shape", (1, 2, 4, 4), (2, 3, 3, 3), dict(strides=[2, 2], output_shape=[9, 10])),
    ("same upper", (1, 2, 4, 5), (2, 3, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
    ("1d", (1, 3, 7), (3, 2, 4), dict(strides=[2], pads=[1, 2])),
    # strided without dilation: the output-phase col2im
    ("4x4/2 decoder", (2, 8, 7, 6), (8, 4, 4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    ("stride above kernel", (1, 3, 4, 5), (3, 2, 2, 3), dict(strides=[3, 4])),
    ("one strided dim", (1, 2, 5, 4), (2, 3, 3, 2), dict(strides=[1, 2], pads=[0, 1, 2, 0])),
    ("groups stride", (2, 6, 3, 3), (6, 2, 3, 3), dict(group=3, strides=[2, 2],
                                                      output_padding=[1, 0])),
    ("3d", (1, 2, 3, 4, 3), (2, 3, 3, 2, 4), dict(strides=[2, 2, 3], pads=[1, 0, 1, 1, 0, 2])),
]


@pytest.mark.parametrize("case", CONVT_CASES, ids=[c[0] for c in CONVT_CASES])
def test_convtranspose_vs_ort(case):
    _, xs, ws, attrs = case
    _check("ConvTranspose", [_r(*xs), _r(*ws), _r(ws[1] * attrs.get("group", 1))], attrs)


POOL_CASES = [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)),
    ("MaxPool", dict(kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 0, 1, 2])),
    ("AveragePool", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ("LpPool", dict(kernel_shape=[2, 2], strides=[2, 2], p=3)),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=[f"{c[0]}{i}" for i, c in
                                                 enumerate(POOL_CASES)])
def test_pool_vs_ort(case):
    op_type, attrs = case
    _check(op_type, [_r(2, 3, 11, 10)], attrs)


@pytest.mark.parametrize("storage_order", [0, 1])
def test_maxpool_indices_vs_ort(storage_order):
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                 storage_order=storage_order)
    _check("MaxPool", [_r(2, 3, 9, 8)], attrs, n_out=2)


def test_maxpool_without_indices_matches():
    op = get_op("MaxPool")
    x = _r(2, 3, 9, 8)
    given = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    (fast,) = op.kernel([x], op.resolve_attrs(given, num_outputs=1), KernelContext())
    full = op.kernel([x], op.resolve_attrs(given, num_outputs=2), KernelContext())
    assert len(full) == 2
    np.testing.assert_array_equal(fast, full[0])


def test_lrn_and_globals_vs_ort():
    x = _r(2, 7, 5, 5)
    _check("LRN", [x], dict(size=3, alpha=0.01, beta=0.6, bias=2.0))
    _check("LRN", [x], dict(size=5))
    _check("GlobalAveragePool", [x], {})
    _check("GlobalMaxPool", [x], {})


BLOCKED_POOL_CASES = [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2])),                    # 3x3/2
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),             # 3x3 same
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),  # general
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2])),
]


@pytest.mark.parametrize("case", BLOCKED_POOL_CASES,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(BLOCKED_POOL_CASES)])
def test_pool_channel_blocks_vs_ort(case, monkeypatch):
    """Inputs of several 256 KiB channel blocks (and a ragged last block), batch 2:
    the flat window reductions run block by block (`ops.pool._by_channel_blocks`; the
    block sizes are made small so that a small input is split)."""
    from onegraph.ops import pool as pool_ops

    monkeypatch.setattr(pool_ops, "_POOL_BLOCK_BYTES", 1 << 18)
    monkeypatch.setattr(pool_ops, "_POOL_WHOLE_BYTES", 0)
    x = _r(2, 37, 63, 58)
    assert x.nbytes > 4 * pool_ops._POOL_BLOCK_BYTES
    op_type, attrs = case
    _check(op_type, [x], attrs)


PAD1_STRIDE2_CASES = [
    ((2, 5, 112, 112), dict(pads=[1, 1, 1, 1])),   # ResNet / DenseNet stem pool
    ((1, 4, 9, 12), dict(pads=[1, 1, 0, 0])),
    ((1, 4, 10, 11), dict(pads=[1, 1, 1, 0])),
    ((1, 3, 9, 9), dict(pads=[1, 1, 0, 0], ceil_mode=1)),
    ((1, 3, 2, 3), dict(pads=[1, 1, 1, 1])),
]
STRIDE2_CASES = [
    ((1, 6, 111, 111), {}),                        # SqueezeNet's pools: odd sizes
    ((2, 3, 12, 10), {}),                          # even sizes: no overhang
    ((1, 4, 10, 11), dict(ceil_mode=1)),           # last row overhangs
    ((1, 4, 11, 10), dict(ceil_mode=1)),           # last column overhangs
    ((1, 3, 10, 10), dict(pads=[0, 0, 1, 1])),     # both overhang (trailing pad)
    ((1, 2, 3, 4), {}),                            # one window
    ((1, 2, 4, 5), dict(ceil_mode=1)),
]


@pytest.mark.parametrize("path, case", [("_reduce_3x3_s2", c)
                                        for c in PAD1_STRIDE2_CASES + STRIDE2_CASES], ids=str)
@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
def test_pool_3x3_stride2_vs_ort(path, case, op_type, monkeypatch, numpy_kernels):
    """3x3/2 pools, with one leading pixel of padding or none, take their rows-first
    path (`ops.pool._reduce_3x3_s2`: rows at stride 2, then column shifts), the first
    window (with padding) and the last row and/or column window (overhanging) redone
    from their in-image rows and columns; the average pools too when the GEMM path does
    not take them."""
    from onegraph.ops import pool as pool_ops

    calls = []
    real = getattr(pool_ops, path)
    monkeypatch.setattr(pool_ops, path, lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(pool_ops, "_GEMM_POOL_FACTOR", 0)
    shape, extra = case
    x = _r(*shape)
    x[0, 0, 0, 0] = x[0, -1, -1, -1] = -np.inf
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], **extra)
    op = get_op(op_type)
    (got,) = op.kernel([x], op.resolve_attrs(attrs, num_outputs=1), KernelContext())
    (want,) = _run_ort(op_type, [x], attrs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert calls


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_whole_image_average_pools_vs_ort(dtype):
    """AveragePool whose one window is the whole image, and GlobalAveragePool, take the
    matrix-vector mean (`ops.pool._global_mean`)."""
    x = _r(2, 40, 7, 7, dtype=dtype)
    tol = 1e-2 if dtype == np.float16 else 1e-5
    _check("AveragePool", [x], dict(kernel_shape=[7, 7]), rtol=tol, atol=tol)
    _check("AveragePool", [x], dict(kernel_shape=[7, 7], strides=[3, 3]), rtol=tol, atol=tol)
    _check("GlobalAveragePool", [x], {}, rtol=tol, atol=tol)
    _check("GlobalAveragePool", [_r(3, 5, 4, 6, 2, dtype=dtype)], {}, rtol=tol, atol=tol)


def test_whole_image_average_pools_float64():
    """float64 (onnxruntime has no float64 pools): against math.fsum per image."""
    import math

    x = _r(2, 6, 5, 5, dtype=np.float64) * 1e3
    want = np.array([[math.fsum(x[i, j].ravel()) / 25 for j in range(6)] for i in range(2)])
    for op_type, attrs in (("AveragePool", dict(kernel_shape=[5, 5])),
                           ("GlobalAveragePool", {})):
        (got,) = _run_ours(op_type, [x], attrs)
        assert got.shape == (2, 6, 1, 1) and got.dtype == np.float64
        np.testing.assert_allclose(got[:, :, 0, 0], want, rtol=1e-13)


# im2col convs whose columns are built and multiplied in blocks of output rows
# (`ops.conv._im2col_gemm`); a tiny block size forces many blocks and a ragged last one
BLOCKED_IM2COL_CASES = [
    ("7x7/2 stem", (2, 3, 30, 29), (5, 3, 7, 7), dict(strides=[2, 2], pads=[3, 3, 3, 3])),
    ("11x11/4", (1, 3, 47, 45), (4, 3, 11, 11), dict(strides=[4, 4])),
    ("3x3/2 odd", (2, 3, 23, 21), (6, 3, 3, 3), dict(strides=[2, 2], pads=[0, 1, 1, 0])),
    ("3x3 stride 1", (1, 3, 19, 17), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1])),
    ("dilated strided", (1, 2, 21, 20), (3, 2, 3, 3), dict(strides=[2, 2],
                                                           dilations=[2, 2])),
    ("1d", (2, 3, 201), (4, 3, 5), dict(strides=[2], pads=[2, 2])),
    ("3d", (1, 2, 9, 6, 5), (3, 2, 3, 2, 3), dict(pads=[1, 0, 1, 1, 1, 0])),
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", BLOCKED_IM2COL_CASES, ids=[c[0] for c in BLOCKED_IM2COL_CASES])
def test_conv_im2col_in_row_blocks_vs_ort(case, bias, monkeypatch):
    from onegraph.ops import conv as conv_ops

    blocks = _count_blocks(monkeypatch)
    monkeypatch.setattr(conv_ops, "_COLS_BLOCK_BYTES", 2048)
    monkeypatch.setattr(conv_ops, "_COLS_BLOCK_COPIES", 1 << 30)
    _, xs, ws, attrs = case
    inputs = [_r(*xs), _r(*ws)] + ([_r(ws[0])] if bias else [])
    _check("Conv", inputs, attrs)
    # several blocks per image, covering the output rows once each
    n = xs[0]
    assert len(blocks) > 2 * n
    per_image = blocks[:len(blocks) // n]
    assert per_image[0][0] == 0 and all(a[1] == b[0] for a, b in zip(per_image, per_image[1:]))


def _count_blocks(monkeypatch):
    from onegraph.ops import conv as conv_ops

    blocks = []
    real = conv_ops._im2col_rows

    def counting(*args):
        copy = real(*args)
        return lambda r0, r1, out: blocks.append((r0, r1)) or copy(r0, r1, out)

    monkeypatch.setattr(conv_ops, "_im2col_rows", counting)
    return blocks


@pytest.mark.parametrize("name, xs, ws, attrs, n_blocks", [
    # ResNet's stem: 147 x 12544 columns (7 MiB) in four blocks of output rows
    ("7x7/2", (1, 3, 224, 224), (64, 3, 7, 7), dict(strides=[2, 2], pads=[3, 3, 3, 3]), 4),
    # AlexNet's: 121 taps, so blocks would cost more copy calls than they save
    ("11x11/4", (1, 3, 227, 227), (96, 3, 11, 11), dict(strides=[4, 4]), 1),
])
def test_conv_stems_at_full_size_vs_ort(name, xs, ws, attrs, n_blocks, monkeypatch):
    blocks = _count_blocks(monkeypatch)
    x, w, b = _r(*xs), _r(*ws) * 0.1, _r(ws[0])
    _check("Conv", [x, w, b], attrs, rtol=1e-4, atol=1e-3)
    assert len(blocks) == n_blocks


@pytest.mark.parametrize("xs, pads, want", [((1, 3, 5, 2), [0, 0, 0, 0], (1, 4, 3, 0)),
                                            ((1, 3, 0, 6), [1, 1, 1, 1], (1, 4, 0, 6))])
def test_conv_with_an_empty_output(xs, pads, want):
    """No output rows or columns: an empty result of the inferred shape, no error."""
    got = _run_ours("Conv", [_r(*xs), _r(4, 3, 3, 3)], dict(pads=pads))
    assert got[0].shape == want and got[0].dtype == np.float32
