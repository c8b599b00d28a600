"""og.histogram_fixed_width(_bins), og.bitcast, og.bitwise, og.dtypes,
og.broadcast_dynamic_shape / broadcast_static_shape, og.extract_volume_patches,
og.batch_to_space, og.quantization's fake quantization and og.ensure_shape against
independent numpy oracles of TF's definitions (and TF's documented examples), the
static shapes tf.compat.v1 2.21 prints, gradients (central differences; the
straight-through rule for fake quantization), named errors and ONNX export run in
onnxruntime."""

import math

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError

from .gradcheck import check_op_gradients
from .graph_runs import run_on, session_and_onnxruntime

RNG = np.random.default_rng(11)


# --------------------------------------------------------------------------- oracles

def histogram_bin(v, lo, hi, nbins):
    """The bin of one value: below lo -> 0, at or above hi -> nbins - 1, else the
    equal-width bin floor((v - lo) / (hi - lo) * nbins)."""
    if v < lo:
        return 0
    if v >= hi:
        return nbins - 1
    return min(int(math.floor((float(v) - lo) / (hi - lo) * nbins)), nbins - 1)


def histogram_oracle(values, lo, hi, nbins):
    counts = [0] * nbins
    for v in np.ravel(values):
        counts[histogram_bin(v, lo, hi, nbins)] += 1
    return np.array(counts)


def bitcast_oracle(x, dtype):
    """numpy's view of the bytes, with TF's shape rule."""
    dtype = np.dtype(dtype)
    x = np.array(x, order="C")  # (ascontiguousarray makes a 0-d array 1-d)
    if dtype.itemsize < x.dtype.itemsize:
        return x.reshape(x.shape + (1,)).view(dtype)
    if dtype.itemsize > x.dtype.itemsize:
        return x.view(dtype).reshape(x.shape[:-1])
    return x.view(dtype)


def shift_oracle(x, y, left):
    """Python-int shifts: y clamped to [0, bits - 1]; a signed result wrapped into
    two's complement."""
    dt = x.dtype
    bits = 8 * dt.itemsize
    out = []
    for a, b in zip(np.ravel(x).tolist(), np.ravel(np.broadcast_to(y, x.shape)).tolist()):
        c = min(max(b, 0), bits - 1)
        r = (a * 2 ** c) if left else (a // 2 ** c)
        r %= 2 ** bits
        if dt.kind == "i" and r >= 2 ** (bits - 1):
            r -= 2 ** bits
        out.append(r)
    return np.array(out, dt).reshape(x.shape)


def volume_patches_oracle(x, ks, ss, padding):
    """out[b, i, j, k, ((p * kr + q) * kc + r) * C + c] = padded[b, i*sd + p, j*sh + q,
    k*sw + r, c], with SAME's zero padding (before = total // 2)."""
    n, dims, ch = x.shape[0], x.shape[1:4], x.shape[4]
    outs, pads = [], []
    for d, k, s in zip(dims, ks, ss):
        if padding == "SAME":
            o = -(-d // s)
            total = max((o - 1) * s + k - d, 0)
            pads.append((total // 2, total - total // 2))
        else:
            o = (d - k) // s + 1
            pads.append((0, 0))
        outs.append(o)
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    out = np.zeros([n] + outs + [int(np.prod(ks)) * ch], x.dtype)
    for b in range(n):
        for i, j, k in np.ndindex(*outs):
            patch = xp[b, i * ss[0]:i * ss[0] + ks[0], j * ss[1]:j * ss[1] + ks[1],
                       k * ss[2]:k * ss[2] + ks[2], :]
            out[b, i, j, k] = patch.reshape(-1)
    return out


def batch_to_space_oracle(x, crops, bs):
    """out[b, h * bs + i, w * bs + j, c] = x[(i * bs + j) * B + b, h, w, c], cropped."""
    nb, h, w, c = x.shape
    batch = nb // (bs * bs)
    out = np.zeros((batch, h * bs, w * bs, c), x.dtype)
    for i, j, b, hh, ww in np.ndindex(bs, bs, batch, h, w):
        out[b, hh * bs + i, ww * bs + j] = x[(i * bs + j) * batch + b, hh, ww]
    (t, bo), (le, ri) = crops
    return out[:, t:out.shape[1] - bo, le:out.shape[2] - ri]


def nudge_oracle(lo, hi, num_bits, narrow_range):
    """TF's documented nudging, in float32: scale = (max - min) / (quant_max -
    quant_min); the zero point quant_min - min / scale clipped to [quant_min,
    quant_max] and rounded; nudged_min / max = (quant_min / max - zero_point) * scale."""
    f = np.float32
    qmin = 1 if narrow_range else 0
    qmax = 2 ** num_bits - 1
    scale = (f(hi) - f(lo)) / f(qmax - qmin)
    zp_from_min = f(qmin) - f(lo) / scale
    if zp_from_min < qmin:
        zp = f(qmin)
    elif zp_from_min > qmax:
        zp = f(qmax)
    else:
        zp = f(math.floor(float(zp_from_min) + 0.5))  # round, half away from 0 (z >= 0)
    return (f(qmin) - zp) * scale, (f(qmax) - zp) * scale, scale


def fake_quant_oracle(x, lo, hi, num_bits=8, narrow_range=False):
    """TF's formula: clamp to the nudged range, then
    floor((clamped - nudged_min) / scale + 0.5) * scale + nudged_min."""
    nmin, nmax, scale = nudge_oracle(lo, hi, num_bits, narrow_range)
    clamped = np.clip(x, nmin, nmax).astype(np.float32)
    inv = np.float32(1.0) / scale
    return (np.floor((clamped - nmin) * inv + np.float32(0.5)) * scale + nmin).astype(
        np.float32), (x >= nmin) & (x <= nmax)


def run(t, feed=None):
    return og.Session(t.graph).run(t, feed or {})


# --------------------------------------------------------------------------- histograms

def test_histogram_fixed_width_tf_docstring_example():
    with og.Graph().as_default():
        out = og.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15], [0.0, 5.0], nbins=5)
        assert out.dtype == og.int32
        np.testing.assert_array_equal(run(out), [2, 1, 1, 0, 2])


def test_histogram_fixed_width_refuses_nan_when_run():
    # TF's kernel: "Histogram values must not contain NaN"
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [None])
        h = og.histogram_fixed_width(v, [0.0, 5.0], 5)
        sess = og.Session()
        assert sess.run(h, {v: [1.0, 4.9]}).tolist() == [0, 1, 0, 0, 1]
        with pytest.raises(ExecutionError, match="values must not contain NaN"):
            sess.run(h, {v: [1.0, np.nan]})


def test_histogram_fixed_width_bins_tf_docstring_example():
    with og.Graph().as_default():
        out = og.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 15], [0.0, 5.0], 5)
        np.testing.assert_array_equal(run(out), [0, 0, 1, 2, 4, 4])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_histogram_fixed_width_matches_oracle(dtype):
    values = (RNG.standard_normal((7, 9)) * 4).astype(dtype)
    lo, hi, nbins = -3, 5, 7
    out = run_on(lambda v: og.histogram_fixed_width(v, [lo, hi], nbins, dtype=og.int64),
                 values, dynamic=True)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, histogram_oracle(values, lo, hi, nbins))


def test_histogram_bins_matches_oracle_and_keeps_shape():
    values = (RNG.standard_normal((3, 4, 5)) * 3).astype(np.float64)
    out = run_on(lambda v: og.histogram_fixed_width_bins(v, [-2.0, 2.5], 6), values)
    want = np.vectorize(lambda v: histogram_bin(v, -2.0, 2.5, 6))(values)
    np.testing.assert_array_equal(out, want)


def test_histogram_range_tensor_checked_at_run_time():
    g = og.Graph()
    with g.as_default():
        r = og.placeholder(og.float32, [2])
        out = og.histogram_fixed_width(og.constant([0.5, 1.5]), r, 2)
        sess = og.Session(g)
        np.testing.assert_array_equal(sess.run(out, {r: [0.0, 2.0]}), [1, 1])
        with pytest.raises(ExecutionError, match="histogram_fixed_width: value_range"):
            sess.run(out, {r: [2.0, 2.0]})


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(value_range=[1.0, 0.0]), ValueError, "lo < hi"),
    (dict(value_range=[0.0, 1.0], nbins=0), ValueError, "nbins must be >= 1"),
    (dict(value_range=[0.0, 1.0], nbins=2.5), TypeError, "nbins must be an int"),
    (dict(value_range=[0.0, 1.0], dtype=og.float32), TypeError, "dtype"),
])
def test_histogram_bad_arguments(kwargs, error, match):
    with og.Graph().as_default():
        with pytest.raises(error, match=f"histogram_fixed_width.*{match}"):
            og.histogram_fixed_width(og.constant([1.0]), **kwargs)


def test_histogram_string_values_refused():
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="histogram_fixed_width: values"):
            og.histogram_fixed_width(og.constant(["a"]), [0, 1], 2)


# --------------------------------------------------------------------------- bitcast

@pytest.mark.parametrize("src, dst, shape", [
    (np.float32, np.int32, (2, 3)), (np.float32, np.uint8, (2, 3)),
    (np.int32, np.float64, (3, 2)), (np.uint8, np.float32, (2, 4)),
    (np.float64, np.int16, (3,)), (np.int64, np.float64, ()),
])
def test_bitcast_matches_numpy_view(src, dst, shape):
    x = (RNG.standard_normal(shape) * 100).astype(src)
    out = run_on(lambda t: og.bitcast(t, dst), x)
    want = bitcast_oracle(x, dst)
    assert out.dtype == want.dtype and out.shape == want.shape
    np.testing.assert_array_equal(out.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def test_bitcast_static_shapes_and_errors():
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [None, 5])
        assert og.bitcast(v, og.int32).shape == (None, 5)
        assert og.bitcast(v, og.uint16).shape == (None, 5, 2)
        with pytest.raises(ShapeError, match="last dim of 2"):
            og.bitcast(v, og.float64)
        with pytest.raises(TypeError, match="bitcast: type"):
            og.bitcast(v, og.bool)
        with pytest.raises(TypeError, match="bitcast: input"):
            og.bitcast(og.constant([True]), og.uint8)


def test_bitcast_has_no_gradient():
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [3])
        back = og.bitcast(og.bitcast(v, og.uint16), og.float32)
        assert og.gradients(og.reduce_sum(back), v) == [None]
        assert og.gradients(og.reduce_sum(og.bitcast(v, og.float32) * 2.0), v)[0] is not None


# --------------------------------------------------------------------------- bitwise

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
             np.uint64]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_bitwise_and_or_xor_invert(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, (4, 5), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, (5,), dtype=dtype, endpoint=True)
    for fn, want in ((og.bitwise.bitwise_and, a & b), (og.bitwise.bitwise_or, a | b),
                     (og.bitwise.bitwise_xor, a ^ b)):
        np.testing.assert_array_equal(run_on(fn, a, b), want)
    np.testing.assert_array_equal(run_on(og.bitwise.invert, a), ~a)


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("left", [True, False])
def test_shifts_match_python_ints(dtype, left):
    info = np.iinfo(dtype)
    bits = 8 * np.dtype(dtype).itemsize
    x = np.concatenate([RNG.integers(info.min, info.max, 30, dtype=dtype, endpoint=True),
                        np.array([info.min, info.max, 0, 1], dtype)])
    lo = -2 if info.min < 0 else 0
    y = RNG.integers(lo, bits + 3, x.shape).astype(dtype)
    fn = og.bitwise.left_shift if left else og.bitwise.right_shift
    np.testing.assert_array_equal(run_on(fn, x, y), shift_oracle(x, y, left))


def test_right_shift_is_arithmetic_for_signed():
    x = np.array([-8, -7, -1, 7], np.int32)
    out = run_on(og.bitwise.right_shift, x, np.full(4, 1, np.int32))
    np.testing.assert_array_equal(out, [-4, -4, -1, 3])


def test_bitwise_static_shape_and_errors():
    with og.Graph().as_default():
        i = og.placeholder(og.int32, [None])
        assert og.bitwise.bitwise_and(i, i).shape == (None,)
        with pytest.raises(TypeError, match="bitwise_and"):
            og.bitwise.bitwise_and(og.constant([1.0]), og.constant([1.0]))
        with pytest.raises(TypeError, match="left_shift"):
            og.bitwise.left_shift(i, og.constant([1], og.int64))
        with pytest.raises(TypeError, match="invert"):
            og.bitwise.invert(og.constant([1.0]))


# --------------------------------------------------------------------------- dtypes

def test_dtypes_namespace():
    for name in ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
                 "int64", "uint8", "uint16", "uint32", "uint64", "bool", "string"):
        assert getattr(og.dtypes, name) == getattr(og, name)
    assert og.dtypes.as_dtype("float32") == og.float32
    x = np.array([-300.0, -1.5, 3.7, 255.5, 1e10, np.inf], np.float32)
    out = run_on(lambda t: og.dtypes.saturate_cast(t, og.uint8), x)
    np.testing.assert_array_equal(out, np.clip(x, 0, 255).astype(np.uint8))
    np.testing.assert_array_equal(run_on(lambda t: og.dtypes.cast(t, og.int32), x[1:4]),
                                  [-1, 3, 255])
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [None, 5])
        assert og.saturate_cast(v, og.uint8).shape == (None, 5)


def test_saturate_cast_to_int_has_no_gradient():
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [3])
        out = og.dtypes.saturate_cast(v, og.int32)
        assert out.dtype == og.int32
        assert og.gradients(og.reduce_sum(og.cast(out, og.float32)), v) == [None]


# --------------------------------------------------------------------------- broadcasting

@pytest.mark.parametrize("sx, sy", [((2, 1, 3), (4, 1)), ((5,), (3, 1)), ((), (2, 3)),
                                    ((1, 0), (7, 1)), ((4, 3), (4, 3))])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_broadcast_dynamic_shape(sx, sy, dtype):
    x, y = np.array(sx, dtype), np.array(sy, dtype)
    out = run_on(og.broadcast_dynamic_shape, x, y, dynamic=True)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.broadcast_shapes(sx, sy))


def test_broadcast_dynamic_shape_incompatible_fails_the_run():
    with pytest.raises(ExecutionError, match="broadcast_dynamic_shape"):
        run_on(og.broadcast_dynamic_shape, np.array([2, 3], np.int32),
               np.array([4], np.int32), dynamic=True)


def test_broadcast_dynamic_shape_static_shape_and_errors():
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [None, 5])
        assert og.broadcast_dynamic_shape(og.shape(v), og.shape(v)).shape == (2,)
        with pytest.raises(TypeError, match="broadcast_dynamic_shape: shape_x"):
            og.broadcast_dynamic_shape(og.constant([1.0]), og.constant([1.0]))
        with pytest.raises(TypeError, match="one dtype"):
            og.broadcast_dynamic_shape(og.constant([1], og.int32), og.constant([1], og.int64))
        with pytest.raises(ShapeError, match="1-D"):
            og.broadcast_dynamic_shape(og.constant([[1]], og.int32), og.constant([1], og.int32))


@pytest.mark.parametrize("sx, sy, want", [
    ((None, 5), (None, 5), (None, 5)), ((None, 1), (3, 5), (3, 5)),
    ((None,), (1,), (None,)), ((None,), (4,), (4,)), ((2, 1), (7,), (2, 7)),
    ((), (None, 3), (None, 3)), ([1, None], [1, 1], (1, None)),
])
def test_broadcast_static_shape(sx, sy, want):
    got = og.broadcast_static_shape(sx, sy)
    assert got == want and isinstance(got, og.TensorShape)     # TF returns a TensorShape
    assert og.broadcast_static_shape(None, sy).ndims is None


def test_broadcast_static_shape_incompatible():
    with pytest.raises(ValueError, match="broadcast_static_shape: incompatible"):
        og.broadcast_static_shape((2, 3), (4, 3))


# --------------------------------------------------------------------------- volume patches

@pytest.mark.parametrize("shape, ks, ss, padding", [
    ((1, 4, 4, 4, 2), (2, 2, 2), (2, 2, 2), "VALID"),
    ((2, 5, 4, 3, 3), (3, 2, 2), (2, 1, 2), "SAME"),
    ((1, 3, 5, 4, 1), (2, 3, 1), (1, 2, 3), "VALID"),
    ((1, 4, 3, 5, 2), (1, 2, 3), (3, 2, 2), "SAME"),
])
def test_extract_volume_patches_matches_oracle(shape, ks, ss, padding):
    x = RNG.standard_normal(shape)
    out = run_on(lambda t: og.extract_volume_patches(t, [1, *ks, 1], [1, *ss, 1], padding),
                 x)
    np.testing.assert_array_equal(out, volume_patches_oracle(x, ks, ss, padding))


def test_extract_volume_patches_static_shape_and_gradient():
    with og.Graph().as_default():
        p = og.extract_volume_patches(og.zeros([1, 4, 4, 4, 2]), [1, 2, 2, 2, 1],
                                      [1, 2, 2, 2, 1], "VALID")
        assert p.shape == (1, 2, 2, 2, 16)
    x = RNG.standard_normal((1, 3, 4, 3, 2))
    check_op_gradients(lambda t: og.extract_volume_patches(t, [1, 2, 3, 2, 1],
                                                           [1, 1, 2, 2, 1], "SAME"), [x])


@pytest.mark.parametrize("args, error, match", [
    (([1, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"), TypeError, "ksizes"),
    (([2, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"), ValueError, "ksizes"),
    (([1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "FULL"), ValueError, "padding"),
    (([1, 5, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"), ShapeError, "larger than"),
])
def test_extract_volume_patches_bad_arguments(args, error, match):
    with og.Graph().as_default():
        with pytest.raises(error, match=f"extract_volume_patches.*{match}"):
            og.extract_volume_patches(og.zeros([1, 4, 4, 4, 2]), *args)
        with pytest.raises(ShapeError, match="extract_volume_patches: input must be 5-D"):
            og.extract_volume_patches(og.zeros([1, 4, 4, 2]), [1, 1, 1, 1, 1],
                                      [1, 1, 1, 1, 1], "VALID")


# --------------------------------------------------------------------------- batch_to_space

def test_batch_to_space_tf_docstring_example():
    x = np.array([[[[1]]], [[[2]]], [[[3]]], [[[4]]]], np.float32)
    out = run_on(lambda t: og.batch_to_space(t, [[0, 0], [0, 0]], 2), x)
    np.testing.assert_array_equal(out, [[[[1], [2]], [[3], [4]]]])


@pytest.mark.parametrize("shape, crops, bs", [
    ((8, 2, 3, 2), [[0, 0], [0, 0]], 2), ((9, 2, 2, 1), [[1, 2], [0, 3]], 3),
    ((4, 3, 2, 3), [[1, 0], [2, 1]], 2),
])
def test_batch_to_space_matches_oracle(shape, crops, bs):
    x = RNG.standard_normal(shape)
    out = run_on(lambda t: og.batch_to_space(t, crops, block_size=bs), x)
    np.testing.assert_array_equal(out, batch_to_space_oracle(x, crops, bs))
    back = run_on(lambda t: og.batch_to_space(t, crops, None, block_shape=bs), x)
    np.testing.assert_array_equal(back, out)


def test_batch_to_space_static_shape_gradient_and_errors():
    with og.Graph().as_default():
        assert og.batch_to_space(og.zeros([4, 2, 2, 3]), [[0, 0], [0, 0]], 2).shape == \
            (1, 4, 4, 3)
        with pytest.raises(ValueError, match="batch_to_space: block_size must be >= 1"):
            og.batch_to_space(og.zeros([4, 2, 2, 3]), [[0, 0], [0, 0]], 0)
        # block 1, as TF 2.21 takes it: the input, cropped
        one = og.batch_to_space(og.constant(np.arange(8.0).reshape(2, 2, 2, 1)),
                                [[0, 1], [1, 0]], 1)
        np.testing.assert_array_equal(og.Session().run(one),
                                      np.arange(8.0).reshape(2, 2, 2, 1)[:, :1, 1:])
        with pytest.raises(ShapeError, match="batch_to_space: input must be 4-D"):
            og.batch_to_space(og.zeros([4, 2, 3]), [[0, 0], [0, 0]], 2)
        with pytest.raises(ShapeError, match="multiple"):
            og.batch_to_space(og.zeros([6, 2, 2, 3]), [[0, 0], [0, 0]], 2)
        with pytest.raises(TypeError, match="batch_to_space: block_size must be an int"):
            og.batch_to_space(og.zeros([4, 2, 2, 3]), [[0, 0], [0, 0]], 2.0)
    x = RNG.standard_normal((8, 2, 2, 2))
    check_op_gradients(lambda t: og.batch_to_space(t, [[1, 0], [0, 1]], 2), [x])


# --------------------------------------------------------------------------- fake quant

def test_fake_quant_namespace_and_aliases():
    assert og.quantization.fake_quant_with_min_max_args is og.fake_quant_with_min_max_args
    assert og.quantization.fake_quant_with_min_max_vars is og.fake_quant_with_min_max_vars


@pytest.mark.parametrize("lo, hi, num_bits, narrow", [
    (-6.0, 6.0, 8, False), (-0.1, 1.3, 8, True), (0.3, 2.0, 4, False),
    (-3.7, -0.2, 6, False), (-1.0, 1.0, 16, True), (-0.72, 5.3, 2, False),
])
def test_fake_quant_args_and_vars_match_tf_formula(lo, hi, num_bits, narrow):
    x = np.concatenate([RNG.uniform(lo - 2, hi + 2, 200).astype(np.float32),
                        np.float32([lo, hi, 0.0])])
    want, _ = fake_quant_oracle(x, lo, hi, num_bits, narrow)
    out = run_on(lambda t: og.fake_quant_with_min_max_args(
        t, min=lo, max=hi, num_bits=num_bits, narrow_range=narrow), x)
    np.testing.assert_array_equal(out, want)
    out = run_on(lambda t, a, b: og.quantization.fake_quant_with_min_max_vars(
        t, a, b, num_bits=num_bits, narrow_range=narrow), x, np.float32(lo), np.float32(hi))
    np.testing.assert_array_equal(out, want)


def test_fake_quant_zero_is_exact_and_default_range():
    x = np.float32([0.0, -7.0, 7.0, 1.0])
    out = run_on(og.fake_quant_with_min_max_args, x)
    want, _ = fake_quant_oracle(x, -6.0, 6.0)
    np.testing.assert_array_equal(out, want)
    assert out[0] == 0.0


def test_fake_quant_straight_through_gradients():
    lo, hi = -0.1, 1.3
    nmin, nmax, _ = nudge_oracle(lo, hi, 8, False)
    # the nudged bounds themselves are inside (TF: nudged_min <= x <= nudged_max)
    x = np.float32([-1.0, nmin, 0.0, 0.5, 1.29, nmax, 2.0, 1.31])
    _, inside = fake_quant_oracle(x, lo, hi)
    assert inside[1] and inside[5] and not inside[0] and not inside[6]
    dz = RNG.standard_normal(x.shape).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        t = og.placeholder(og.float32, [8])
        a, b = og.placeholder(og.float32, []), og.placeholder(og.float32, [])
        y1 = og.fake_quant_with_min_max_args(t, lo, hi)
        y2 = og.fake_quant_with_min_max_vars(t, a, b)
        grads = og.gradients(og.reduce_sum(y1 * dz), [t]) + \
            og.gradients(og.reduce_sum(y2 * dz), [t, a, b])
        got = og.Session(g).run(grads, {t: x, a: np.float32(lo), b: np.float32(hi)})
    np.testing.assert_array_equal(got[0], np.where(inside, dz, 0))
    np.testing.assert_array_equal(got[1], np.where(inside, dz, 0))
    np.testing.assert_allclose(got[2], dz[x < nmin].sum(), rtol=1e-6)
    np.testing.assert_allclose(got[3], dz[x > nmax].sum(), rtol=1e-6)


def test_fake_quant_static_shape_and_errors():
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [None, 5])
        assert og.fake_quant_with_min_max_args(v).shape == (None, 5)
        with pytest.raises(ValueError, match="fake_quant_with_min_max_args: min has to be"):
            og.fake_quant_with_min_max_args(v, 1.0, 1.0)
        with pytest.raises(ValueError, match="num_bits must be in"):
            og.fake_quant_with_min_max_args(v, num_bits=1)
        with pytest.raises(TypeError, match="fake_quant_with_min_max_args: inputs"):
            og.fake_quant_with_min_max_args(og.constant([1.0], og.float64))
        with pytest.raises(ShapeError, match="fake_quant_with_min_max_vars: min must be a"):
            og.fake_quant_with_min_max_vars(v, og.constant([0.0]), 1.0)
    with pytest.raises(ExecutionError, match="fake_quant_with_min_max_vars: min has to be"):
        run_on(og.fake_quant_with_min_max_vars, np.float32([1.0]), np.float32(2.0),
               np.float32(1.0))


# --------------------------------------------------------------------------- ensure_shape

def test_ensure_shape_static_shapes():
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [None, 5])
        assert og.ensure_shape(v, [None, 5]).shape == (None, 5)
        s = og.placeholder(og.float32, [None, None, 4])
        assert og.ensure_shape(s, [2, None, 4]).shape == (2, None, 4)
        u = og.placeholder(og.float32, None)
        assert og.ensure_shape(u, [3, None]).shape == (3, None)
        with pytest.raises(ShapeError, match="ensure_shape"):
            og.ensure_shape(v, [None, 4])
        with pytest.raises(ShapeError, match="ensure_shape"):
            og.ensure_shape(v, [None, 5, 1])


def test_ensure_shape_run_time_check():
    g = og.Graph()
    with g.as_default():
        s = og.placeholder(og.float32, [None, None, 4])
        u = og.placeholder(og.float32, None)
        out, out_u = og.ensure_shape(s, [2, None, 4]), og.ensure_shape(u, [3, None])
        sess = og.Session(g)
        x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
        np.testing.assert_array_equal(sess.run(out, {s: x}), x)
        np.testing.assert_array_equal(sess.run(out_u, {u: x[0]}), x[0])
        with pytest.raises(ExecutionError, match="ensure_shape"):
            sess.run(out, {s: np.zeros((3, 3, 4), np.float32)})
        for bad in (np.zeros((2, 3), np.float32), np.zeros(3, np.float32),
                    np.zeros((3, 1, 1), np.float32)):
            with pytest.raises(ExecutionError, match="ensure_shape"):
                sess.run(out_u, {u: bad})


def test_ensure_shape_gradient_passes():
    x = RNG.standard_normal((2, 3))
    check_op_gradients(lambda t: og.ensure_shape(t, [2, None]) * 2.0, [x])


# --------------------------------------------------------------------------- ONNX export

def test_onnx_export_in_onnxruntime():
    g = og.Graph()
    with g.as_default():
        v = og.placeholder(og.float32, [None, 3], name="v")
        b = og.placeholder(og.float32, [8, 2, 2, 3], name="b")
        w = og.placeholder(og.float32, [1, 4, 5, 3, 2], name="w")
        i = og.placeholder(og.uint8, [None], name="i")
        outs = {"hist": og.histogram_fixed_width(v, [-1.0, 1.0], 6),
                "b2s": og.batch_to_space(b, [[1, 0], [0, 1]], 2),
                "patches": og.extract_volume_patches(w, [1, 2, 3, 2, 1], [1, 2, 1, 2, 1],
                                                     "SAME"),
                "and": og.bitwise.bitwise_and(i, i // 3),
                "bcast": og.broadcast_dynamic_shape(og.shape(v), og.constant([4, 1, 1],
                                                                            og.int64))}
    feeds = {"v": RNG.standard_normal((7, 3)).astype(np.float32),
             "b": RNG.standard_normal((8, 2, 2, 3)).astype(np.float32),
             "w": RNG.standard_normal((1, 4, 5, 3, 2)).astype(np.float32),
             "i": RNG.integers(0, 255, 9).astype(np.uint8)}
    want, got = session_and_onnxruntime(g, {k: t for k, t in
                                            (("v", v), ("b", b), ("w", w), ("i", i))},
                                        outs, feeds)
    np.testing.assert_array_equal(want[0], histogram_oracle(feeds["v"], -1.0, 1.0, 6))
    np.testing.assert_array_equal(want[1], batch_to_space_oracle(feeds["b"],
                                                                 [[1, 0], [0, 1]], 2))
    np.testing.assert_array_equal(want[2], volume_patches_oracle(feeds["w"], (2, 3, 2),
                                                                 (2, 1, 2), "SAME"))
    np.testing.assert_array_equal(want[4], [4, 7, 3])
    for a, b_ in zip(want, got):
        np.testing.assert_array_equal(a, b_)
