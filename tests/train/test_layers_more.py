"""og.layers' 1-D, 3-D, transposed 3-D and separable convolution and pooling layers
(TF1's tf.layers.conv1d, conv3d, conv3d_transpose, separable_conv1d/2d,
max_pooling1d/3d, average_pooling1d/3d) against an N-D numpy oracle written here from
TF's definitions (direct float64 sums over windows, TF's SAME padding with the odd
pixel at the end), TF1's output sizes and variable names, regularizers, gradients
(central differences), inputs whose dims only the run knows, an ONNX export run by
onnxruntime, and the arguments they refuse."""

import itertools

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import OneGraphError, ShapeError

from .graph_runs import session_and_onnxruntime


# --------------------------------------------------------------------------- the oracle

def _same_pads(size, reach, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + reach - size, 0)
    return total // 2, total - total // 2


def _windows(x, ksize, strides, rates, padding, fill):
    """(N, *out, *ksize, C) windows of channels-last x under TF's padding rules."""
    spatial = x.shape[1:-1]
    reach = [(k - 1) * r + 1 for k, r in zip(ksize, rates)]
    pads = [_same_pads(n, q, s) if padding == "same" else (0, 0)
            for n, q, s in zip(spatial, reach, strides)]
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)], constant_values=fill)
    out = [(xp.shape[1 + i] - reach[i]) // strides[i] + 1 for i in range(len(ksize))]
    win = np.empty([x.shape[0]] + out + list(ksize) + [x.shape[-1]], x.dtype)
    for o in itertools.product(*[range(n) for n in out]):
        for a in itertools.product(*[range(k) for k in ksize]):
            at = tuple(oi * s + ai * r for oi, ai, s, r in zip(o, a, strides, rates))
            win[(slice(None),) + o + a] = xp[(slice(None),) + at]
    return win


def conv_oracle(x, kernel, bias, strides, rates, padding):
    """TF's convolution: sum over the window of x * kernel (k..., in, out) + bias."""
    n = x.ndim - 2
    win = _windows(x.astype(np.float64), kernel.shape[:n], strides, rates, padding, 0.0)
    flat = win.reshape(win.shape[:n + 1] + (-1,))
    return flat @ kernel.reshape(-1, kernel.shape[-1]) + bias


def separable_oracle(x, depthwise, pointwise, bias, strides, rates, padding):
    """Each channel c times its depthwise filters (m of them) into channel c * M + m,
    then a 1x1 conv."""
    n = x.ndim - 2
    win = _windows(x.astype(np.float64), depthwise.shape[:n], strides, rates, padding, 0.0)
    mult = depthwise.shape[-1]
    mid = np.zeros(win.shape[:n + 1] + (x.shape[-1] * mult,))
    for c in range(x.shape[-1]):
        for m in range(mult):
            taps = win[(Ellipsis, c)]
            mid[..., c * mult + m] = np.sum(
                taps * depthwise[(Ellipsis, c, m)], axis=tuple(range(n + 1, 2 * n + 1)))
    return mid @ pointwise.reshape(-1, pointwise.shape[-1]) + bias


def pool_oracle(x, ksize, strides, padding, kind):
    """TF's pools: padding never wins a max and is left out of a mean."""
    n = x.ndim - 2
    win = _windows(x.astype(np.float64), ksize, strides, [1] * n, padding, np.nan)
    axes = tuple(range(n + 1, 2 * n + 1))
    return np.nanmax(win, axis=axes) if kind == "max" else np.nanmean(win, axis=axes)


def conv_transpose_oracle(x, kernel, bias, strides, padding):
    """TF's transposed conv (kernel (k..., out, in)): each input pixel scatters
    x * kernel to stride * i + a; the result is cropped to TF's size, from the SAME
    pad before (max(k - s, 0) // 2) or from 0 for VALID."""
    n = x.ndim - 2
    ks = kernel.shape[:n]
    spatial = x.shape[1:-1]
    full = [(m - 1) * s + k + s for m, k, s in zip(spatial, ks, strides)]
    y = np.zeros([x.shape[0]] + full + [kernel.shape[-2]])
    for i in itertools.product(*[range(m) for m in spatial]):
        for a in itertools.product(*[range(k) for k in ks]):
            at = tuple(ii * s + aa for ii, aa, s in zip(i, a, strides))
            y[(slice(None),) + at] += x[(slice(None),) + i] @ kernel[a].T
    if padding == "same":
        out = [m * s for m, s in zip(spatial, strides)]
        before = [max(k - s, 0) // 2 for k, s in zip(ks, strides)]
    else:
        out = [m * s + max(k - s, 0) for m, k, s in zip(spatial, ks, strides)]
        before = [0] * n
    crop = tuple(slice(b, b + o) for b, o in zip(before, out))
    return y[(slice(None),) + crop] + bias


def _first(a):
    return np.moveaxis(a, -1, 1)


def _last(a):
    return np.moveaxis(a, 1, -1)


def _session(g):
    sess = og.Session(g)
    with g.as_default():
        sess.run(og.global_variables_initializer())
    return sess


_RNG_INIT = og.random_normal_initializer(seed=3)


# --------------------------------------------------------------------------- values

CONV_CASES = [("same", 2, 1), ("valid", 1, 1), ("same", 1, 2), ("valid", 3, 1),
              ("valid", 1, 2), ("same", 3, 1)]


@pytest.mark.parametrize("padding, stride, rate", CONV_CASES)
@pytest.mark.parametrize("first", [False, True])
def test_conv1d_is_tf_convolution(padding, stride, rate, first):
    rng = np.random.RandomState(0)
    xv = rng.randn(2, 10, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2, 3, 10] if first else [2, 10, 3])
        y = og.layers.conv1d(x, 4, 3, strides=stride, padding=padding.upper(),
                             dilation_rate=rate, bias_initializer=_RNG_INIT,
                             data_format="channels_first" if first else "channels_last")
        kernel, bias = og.global_variables()
    assert (kernel.name, kernel.shape, bias.name, bias.shape) == (
        "conv1d/kernel", (3, 3, 4), "conv1d/bias", (4,))
    sess = _session(g)
    got, k, b = sess.run([y, kernel, bias], {x: _first(xv) if first else xv})
    want = conv_oracle(xv, k, b, [stride], [rate], padding)
    got = _last(got) if first else got
    size = -(-10 // stride) if padding == "same" else (9 - 2 * rate) // stride + 1
    assert got.shape == (2, size, 4) and tuple(y.shape) == tuple(
        (2, 4, size) if first else (2, size, 4))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding, stride, rate", [
    ("same", (2, 1, 3), (1, 1, 1)), ("valid", (1, 2, 1), (1, 1, 1)),
    ("same", (1, 1, 1), (2, 1, 2)), ("valid", (1, 1, 1), (1, 2, 1))])
@pytest.mark.parametrize("first", [False, True])
def test_conv3d_is_tf_convolution(padding, stride, rate, first):
    rng = np.random.RandomState(1)
    xv = rng.randn(2, 5, 6, 7, 2)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, _first(xv).shape if first else xv.shape)
        y = og.layers.conv3d(x, 3, (2, 3, 2), strides=stride, padding=padding,
                             dilation_rate=rate, bias_initializer=_RNG_INIT,
                             data_format="channels_first" if first else "channels_last")
        kernel, bias = og.global_variables()
    assert (kernel.name, kernel.shape, bias.name, bias.shape) == (
        "conv3d/kernel", (2, 3, 2, 2, 3), "conv3d/bias", (3,))
    sess = _session(g)
    got, k, b = sess.run([y, kernel, bias], {x: _first(xv) if first else xv})
    want = conv_oracle(xv, k, b, stride, rate, padding)
    got = _last(got) if first else got
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding, stride, ksize", [
    ("same", (2, 2, 2), (3, 3, 3)), ("valid", (2, 1, 3), (3, 2, 2)),
    ("same", (1, 3, 2), (2, 2, 1)), ("valid", (3, 1, 1), (2, 1, 3)),
    ("same", (3, 2, 1), (4, 1, 2))])
@pytest.mark.parametrize("first", [False, True])
def test_conv3d_transpose_is_tf_transposed_convolution(padding, stride, ksize, first):
    rng = np.random.RandomState(2)
    xv = rng.randn(2, 3, 2, 4, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, _first(xv).shape if first else xv.shape)
        y = og.layers.conv3d_transpose(
            x, 2, ksize, strides=stride, padding=padding, bias_initializer=_RNG_INIT,
            data_format="channels_first" if first else "channels_last")
        kernel, bias = og.global_variables()
    assert (kernel.name, kernel.shape, bias.name, bias.shape) == (
        "conv3d_transpose/kernel", ksize + (2, 3), "conv3d_transpose/bias", (2,))
    sess = _session(g)
    got, k, b = sess.run([y, kernel, bias], {x: _first(xv) if first else xv})
    want = conv_transpose_oracle(xv, k, b, stride, padding)
    sizes = [n * s if padding == "same" else n * s + max(q - s, 0)
             for n, q, s in zip((3, 2, 4), ksize, stride)]
    assert want.shape == (2, *sizes, 2)
    assert tuple(y.shape) == ((2, 2, *sizes) if first else (2, *sizes, 2))
    np.testing.assert_allclose(_last(got) if first else got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding, stride, rate, mult", [
    ("same", 2, 1, 1), ("valid", 1, 1, 2), ("same", 1, 2, 2), ("valid", 3, 1, 3),
    ("same", 3, 1, 2)])
@pytest.mark.parametrize("first", [False, True])
def test_separable_conv1d_is_tf_separable_convolution(padding, stride, rate, mult, first):
    rng = np.random.RandomState(3)
    xv = rng.randn(2, 11, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, _first(xv).shape if first else xv.shape)
        y = og.layers.separable_conv1d(
            x, 4, 3, strides=stride, padding=padding, dilation_rate=rate,
            depth_multiplier=mult, bias_initializer=_RNG_INIT,
            data_format="channels_first" if first else "channels_last")
        dw, pw, bias = og.global_variables()
    assert [(v.name, v.shape) for v in (dw, pw, bias)] == [
        ("separable_conv1d/depthwise_kernel", (3, 3, mult)),
        ("separable_conv1d/pointwise_kernel", (1, 3 * mult, 4)),
        ("separable_conv1d/bias", (4,))]
    sess = _session(g)
    got, d, p, b = sess.run([y, dw, pw, bias], {x: _first(xv) if first else xv})
    want = separable_oracle(xv, d, p, b, [stride], [rate], padding)
    assert tuple(y.shape) == (_first(want).shape if first else want.shape)
    np.testing.assert_allclose(_last(got) if first else got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding, stride, rate, mult", [
    ("same", (2, 1), (1, 1), 1), ("valid", (1, 1), (1, 1), 2), ("same", (1, 1), (2, 1), 2),
    ("valid", (3, 2), (1, 1), 1), ("same", (3, 3), (1, 1), 3)])
@pytest.mark.parametrize("first", [False, True])
def test_separable_conv2d_is_tf_separable_convolution(padding, stride, rate, mult, first):
    rng = np.random.RandomState(4)
    xv = rng.randn(2, 7, 8, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, _first(xv).shape if first else xv.shape)
        y = og.layers.separable_conv2d(
            x, 5, (3, 2), strides=stride, padding=padding, dilation_rate=rate,
            depth_multiplier=mult, bias_initializer=_RNG_INIT,
            data_format="channels_first" if first else "channels_last")
        dw, pw, bias = og.global_variables()
    assert [(v.name, v.shape) for v in (dw, pw, bias)] == [
        ("separable_conv2d/depthwise_kernel", (3, 2, 3, mult)),
        ("separable_conv2d/pointwise_kernel", (1, 1, 3 * mult, 5)),
        ("separable_conv2d/bias", (5,))]
    sess = _session(g)
    got, d, p, b = sess.run([y, dw, pw, bias], {x: _first(xv) if first else xv})
    want = separable_oracle(xv, d, p, b, stride, rate, padding)
    assert tuple(y.shape) == (_first(want).shape if first else want.shape)
    np.testing.assert_allclose(_last(got) if first else got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n, pool, stride", [
    (1, 3, 2), (1, 2, 3), (1, 4, 1), (3, (2, 3, 2), (2, 2, 1)), (3, 2, 3),
    (3, (3, 1, 2), (1, 2, 2))])
@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("kind", ["max", "average"])
@pytest.mark.parametrize("first", [False, True])
def test_pooling_layers_are_tf_pooling(n, pool, stride, padding, kind, first):
    rng = np.random.RandomState(5)
    xv = rng.randn(*((2, 9, 3) if n == 1 else (2, 5, 7, 6, 3)))
    layer = getattr(og.layers, f"{kind}_pooling{n}d")
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, _first(xv).shape if first else xv.shape)
        y = layer(x, pool, stride, padding=padding.upper() if n == 1 else padding,
                  data_format="channels_first" if first else "channels_last")
        assert not og.global_variables()
    assert y.op.name.startswith(f"{kind}_pooling{n}d/")
    got = og.Session(g).run(y, {x: _first(xv) if first else xv})
    pools = [pool] * n if isinstance(pool, int) else list(pool)
    steps = [stride] * n if isinstance(stride, int) else list(stride)
    want = pool_oracle(xv, pools, steps, padding, kind[:3] if kind == "max" else "avg")
    assert tuple(y.shape) == (_first(want).shape if first else want.shape)
    np.testing.assert_allclose(_last(got) if first else got, want, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- variables

def test_default_names_reuse_and_regularization_losses():
    g = og.Graph()
    with g.as_default():
        x1 = og.placeholder(og.float32, [2, 9, 3])
        x2 = og.placeholder(og.float32, [2, 6, 6, 3])
        x3 = og.placeholder(og.float32, [2, 4, 4, 4, 3])
        l2 = og.nn.l2_loss
        og.layers.conv1d(x1, 4, 3, kernel_regularizer=l2, bias_regularizer=l2)
        og.layers.conv1d(x1, 4, 3)
        og.layers.conv3d(x3, 2, 2, kernel_regularizer=l2)
        og.layers.conv3d_transpose(x3, 5, 2, bias_regularizer=l2)
        og.layers.separable_conv1d(x1, 2, 3, depthwise_regularizer=l2,
                                   pointwise_regularizer=l2, bias_regularizer=l2)
        og.layers.separable_conv2d(x2, 2, 3, depthwise_regularizer=l2)
        og.layers.separable_conv2d(x2, 2, 3, use_bias=False, name="sep")
        with og.variable_scope("tower"):
            og.layers.conv3d(x3, 2, 2, name="c", use_bias=False)
        losses = list(g.get_collection(og.REGULARIZATION_LOSSES))
        assert len(losses) == 8
        # reusing the variables adds no second loss, as in TF1
        og.layers.conv1d(x1, 4, 3, kernel_regularizer=l2, bias_regularizer=l2,
                         name="conv1d", reuse=True)
        og.layers.separable_conv2d(x2, 2, 3, depthwise_regularizer=l2,
                                   name="separable_conv2d", reuse=True)
        assert len(g.get_collection(og.REGULARIZATION_LOSSES)) == 8
        with pytest.raises(ValueError):   # an existing variable without reuse
            og.layers.conv1d(x1, 4, 3, name="conv1d")
        names = {v.name: tuple(v.shape) for v in og.global_variables()}
    assert names == {
        "conv1d/kernel": (3, 3, 4), "conv1d/bias": (4,),
        "conv1d_1/kernel": (3, 3, 4), "conv1d_1/bias": (4,),
        "conv3d/kernel": (2, 2, 2, 3, 2), "conv3d/bias": (2,),
        "conv3d_transpose/kernel": (2, 2, 2, 5, 3), "conv3d_transpose/bias": (5,),
        "separable_conv1d/depthwise_kernel": (3, 3, 1),
        "separable_conv1d/pointwise_kernel": (1, 3, 2), "separable_conv1d/bias": (2,),
        "separable_conv2d/depthwise_kernel": (3, 3, 3, 1),
        "separable_conv2d/pointwise_kernel": (1, 1, 3, 2), "separable_conv2d/bias": (2,),
        "sep/depthwise_kernel": (3, 3, 3, 1), "sep/pointwise_kernel": (1, 1, 3, 2),
        "tower/c/kernel": (2, 2, 2, 3, 2)}
    sess = _session(g)
    values = {v.name: sess.run(v) for v in g.get_collection(og.GLOBAL_VARIABLES)}
    want = [values[n] for n in ("conv1d/kernel", "conv1d/bias", "conv3d/kernel",
                                "conv3d_transpose/bias", "separable_conv1d/depthwise_kernel",
                                "separable_conv1d/pointwise_kernel", "separable_conv1d/bias",
                                "separable_conv2d/depthwise_kernel")]
    got = sess.run(losses)
    np.testing.assert_allclose(sorted(got), sorted(np.sum(np.square(w)) / 2 for w in want),
                               rtol=1e-5)


@pytest.mark.parametrize("layer, shape, args", [
    ("conv1d", (2, 7, 3), (4, 3)), ("conv3d", (2, 4, 5, 3, 2), (3, 2)),
    ("conv3d_transpose", (2, 2, 3, 2, 3), (2, (2, 3, 1))),
    ("separable_conv1d", (2, 8, 3), (2, 3)), ("separable_conv2d", (2, 5, 6, 2), (3, 2))])
def test_activation_and_use_bias_false(layer, shape, args):
    rng = np.random.RandomState(6)
    xv = rng.randn(*shape)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, shape)
        fn = getattr(og.layers, layer)
        strides = 2 if layer == "conv3d_transpose" else 1
        y = fn(x, *args, strides=strides, padding="same", activation=og.nn.relu,
               use_bias=False)
        variables = og.global_variables()
    assert not any(v.name.endswith("bias") for v in variables)
    sess = _session(g)
    got, *ws = sess.run([y] + variables, {x: xv})
    zero = np.zeros(args[0])
    if layer.startswith("separable"):
        want = separable_oracle(xv, ws[0], ws[1], zero, [1] * (len(shape) - 2),
                                [1] * (len(shape) - 2), "same")
    elif layer == "conv3d_transpose":
        want = conv_transpose_oracle(xv, ws[0], zero, [2, 2, 2], "same")
    else:
        want = conv_oracle(xv, ws[0], zero, [1] * (len(shape) - 2), [1] * (len(shape) - 2),
                           "same")
    assert (want < 0).any() and (got >= 0).all()
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------------- gradients

_GRAD_LAYERS = {
    "conv1d": ((2, 7, 3), lambda x, **kw: og.layers.conv1d(
        x, 2, 3, strides=2, padding="same", bias_initializer=_RNG_INIT, **kw)),
    "conv1d_first": ((2, 3, 8), lambda x, **kw: og.layers.conv1d(
        x, 2, 2, dilation_rate=2, padding="same", data_format="channels_first",
        bias_initializer=_RNG_INIT, **kw)),
    "conv3d": ((1, 4, 3, 5, 2), lambda x, **kw: og.layers.conv3d(
        x, 2, (2, 2, 3), strides=(2, 1, 2), padding="same", bias_initializer=_RNG_INIT,
        **kw)),
    "conv3d_transpose": ((1, 2, 3, 2, 2), lambda x, **kw: og.layers.conv3d_transpose(
        x, 2, (3, 2, 1), strides=(2, 1, 2), padding="same", bias_initializer=_RNG_INIT,
        **kw)),
    "conv3d_transpose_valid": ((1, 2, 2, 3, 2), lambda x, **kw: og.layers.conv3d_transpose(
        x, 2, (3, 1, 2), strides=(2, 2, 1), padding="valid", data_format="channels_last",
        bias_initializer=_RNG_INIT, **kw)),
    "separable_conv1d": ((2, 7, 2), lambda x, **kw: og.layers.separable_conv1d(
        x, 3, 3, strides=2, padding="same", depth_multiplier=2, bias_initializer=_RNG_INIT,
        **kw)),
    "separable_conv2d": ((1, 5, 4, 2), lambda x, **kw: og.layers.separable_conv2d(
        x, 2, (2, 3), dilation_rate=(2, 1), padding="same", depth_multiplier=2,
        bias_initializer=_RNG_INIT, **kw)),
    "max_pooling1d": ((2, 7, 2), lambda x, **kw: og.layers.max_pooling1d(
        x, 3, 2, padding="same", **kw)),
    "average_pooling1d": ((2, 7, 2), lambda x, **kw: og.layers.average_pooling1d(
        x, 3, 2, padding="same", **kw)),
    "max_pooling3d": ((1, 3, 4, 5, 2), lambda x, **kw: og.layers.max_pooling3d(
        x, 2, (1, 2, 2), padding="same", **kw)),
    "average_pooling3d": ((1, 3, 4, 5, 2), lambda x, **kw: og.layers.average_pooling3d(
        x, (2, 3, 2), 2, padding="same", **kw)),
}


def _grad_graph(key, hide):
    """The layer on a float64 placeholder (with every dim but the channels hidden when
    `hide`), a loss sum(y * r), and the loss's gradients w.r.t. the input and
    variables."""
    shape, build = _GRAD_LAYERS[key]
    first = "first" in key
    g = og.Graph()
    with g.as_default():
        if hide:
            ph = [None] * len(shape)
            ph[1 if first else -1] = shape[1 if first else -1]
        x = og.placeholder(og.float64, ph if hide else shape)
        init = og.random_normal_initializer(seed=11)
        kw = ({} if "pooling" in key else {"depthwise_initializer": init,
                                           "pointwise_initializer": init}
              if "separable" in key else {"kernel_initializer": init})
        y = build(x, **kw)
        r = og.placeholder(og.float64, None)
        loss = og.reduce_sum(y * r)
        variables = og.global_variables()
        grads = og.gradients(loss, [x] + variables)
        init = og.global_variables_initializer()
    sess = og.Session(g)
    sess.run(init)
    return g, sess, x, y, r, loss, variables, grads


@pytest.mark.parametrize("key", sorted(_GRAD_LAYERS))
def test_gradients_match_central_differences(key):
    rng = np.random.RandomState(7)
    g, sess, x, y, r, loss, variables, grads = _grad_graph(key, hide=False)
    xv = rng.randn(*_GRAD_LAYERS[key][0])
    rv = rng.randn(*sess.run(y, {x: xv}).shape)
    analytic = sess.run(grads, {x: xv, r: rv})
    values = sess.run(variables)
    eps = 1e-6
    for i, (ga, base) in enumerate(zip(analytic, [xv] + values, strict=True)):
        v = rng.randn(*base.shape)

        def loss_at(value, i=i):
            if i == 0:
                return sess.run(loss, {x: value, r: rv})
            variables[i - 1].load(value, sess)
            out = sess.run(loss, {x: xv, r: rv})
            variables[i - 1].load(base, sess)
            return out
        numeric = (loss_at(base + eps * v) - loss_at(base - eps * v)) / (2 * eps)
        exact = float(np.sum(ga * v))
        assert abs(numeric - exact) <= 1e-6 * max(1.0, abs(exact)), (key, i, numeric, exact)
    assert len(analytic) == (1 if "pooling" in key else 3 if "conv" in key and "separable"
                             not in key else 4)


@pytest.mark.parametrize("key", sorted(_GRAD_LAYERS))
def test_unknown_dims_give_the_known_shape_values_and_gradients(key):
    rng = np.random.RandomState(8)
    xv = rng.randn(*_GRAD_LAYERS[key][0])
    results = []
    for hide in (False, True):
        g, sess, x, y, r, loss, variables, grads = _grad_graph(key, hide)
        if hide:
            assert all(d is None for i, d in enumerate(x.shape) if i != (
                1 if "first" in key else len(x.shape) - 1))
            assert y.shape is not None and len(y.shape) == len(xv.shape)
        out = sess.run(y, {x: xv})
        rv = np.random.RandomState(9).randn(*out.shape)
        results.append(sess.run([y] + grads, {x: xv, r: rv}))
    for a, b in zip(*results, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_unknown_dims_at_two_sizes():
    g = og.Graph()
    rng = np.random.RandomState(10)
    with g.as_default():
        x1 = og.placeholder(og.float64, [None, None, 2])
        x3 = og.placeholder(og.float64, [None, None, None, None, 2])
        outs = [og.layers.conv1d(x1, 3, 3, strides=2, padding="same"),
                og.layers.separable_conv1d(x1, 3, 2, padding="valid"),
                og.layers.conv3d_transpose(x3, 2, 3, strides=2, padding="valid"),
                og.layers.conv3d(x3, 2, 2, strides=2, padding="same")]
    sess = _session(g)
    for n in (5, 8):
        xv1, xv3 = rng.randn(1, n, 2), rng.randn(2, n, n - 2, 3, 2)
        a, b, c, d = sess.run(outs, {x1: xv1, x3: xv3})
        assert a.shape == (1, -(-n // 2), 3) and b.shape == (1, n - 1, 3)
        assert c.shape == (2, 2 * n + 1, 2 * n - 3, 7, 2)
        assert d.shape == (2, -(-n // 2), -(-(n - 2) // 2), 2, 2)


# --------------------------------------------------------------------------- export

def test_layers_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(12)
    x1v = rng.randn(2, 9, 3).astype(np.float32)
    x3v = rng.randn(2, 4, 5, 6, 2).astype(np.float32)
    x2v = rng.randn(2, 6, 7, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x1 = og.placeholder(og.float32, [None, 9, 3], name="x1")
        x2 = og.placeholder(og.float32, [None, None, None, 3], name="x2")
        x3 = og.placeholder(og.float32, [None, 4, 5, 6, 2], name="x3")
        init = {"bias_initializer": og.random_normal_initializer(seed=1)}
        outs = {
            "c1": og.layers.conv1d(x1, 4, 3, strides=2, padding="same", **init),
            "sep1": og.layers.separable_conv1d(x1, 2, 2, dilation_rate=2, depth_multiplier=2,
                                               **init),
            "sep2": og.layers.separable_conv2d(x2, 4, 3, strides=2, padding="same",
                                               activation=og.nn.relu, **init),
            "c3": og.layers.conv3d(x3, 3, (2, 3, 2), padding="same", **init),
            "t3": og.layers.conv3d_transpose(x3, 2, 3, strides=(2, 1, 2), **init),
            "mp3": og.layers.max_pooling3d(x3, 2, 2, padding="same"),
            "ap1": og.layers.average_pooling1d(x1, 3, 2, padding="same"),
            "ap3": og.layers.average_pooling3d(x3, 2, (1, 2, 3),
                                               data_format="channels_first"),
            "mp1": og.layers.max_pooling1d(x1, 2, 1, data_format="channels_first"),
        }
    want, got = session_and_onnxruntime(g, {"x1": x1, "x2": x2, "x3": x3}, outs,
                                        {"x1": x1v, "x2": x2v, "x3": x3v}, _session(g))
    for key, a, b in zip(outs, got, want, strict=True):
        assert a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=key)


# --------------------------------------------------------------------------- refusals

def test_bad_arguments_are_refused_by_name():
    g = og.Graph()
    with g.as_default():
        x1 = og.placeholder(og.float32, [1, 6, 2])
        x2 = og.placeholder(og.float32, [1, 6, 6, 2])
        x3 = og.placeholder(og.float32, [1, 4, 4, 4, 2])
        cases = [
            (ShapeError, "conv1d: inputs must be 3-D", og.layers.conv1d, (x2, 2, 3), {}),
            (ShapeError, "conv3d: inputs must be 5-D", og.layers.conv3d, (x2, 2, 3), {}),
            (ShapeError, "conv3d_transpose: inputs must be 5-D", og.layers.conv3d_transpose,
             (x1, 2, 3), {}),
            (ShapeError, "separable_conv1d: inputs must be 3-D", og.layers.separable_conv1d,
             (x3, 2, 3), {}),
            (ShapeError, "separable_conv2d: inputs must be 4-D", og.layers.separable_conv2d,
             (x1, 2, 3), {}),
            (ShapeError, "max_pooling1d: inputs must be 3-D", og.layers.max_pooling1d,
             (x2, 2, 2), {}),
            (ShapeError, "average_pooling3d: inputs must be 5-D",
             og.layers.average_pooling3d, (x1, 2, 2), {}),
            (ShapeError, "conv1d: inputs .* must be floating point", og.layers.conv1d,
             (og.placeholder(og.int32, [1, 6, 2]), 2, 3), {}),
            (ShapeError, "conv3d: the channel count", og.layers.conv3d,
             (og.placeholder(og.float32, [1, 4, 4, 4, None]), 2, 3), {}),
            (ShapeError, "separable_conv2d: the channel count", og.layers.separable_conv2d,
             (og.placeholder(og.float32, [1, None, 4, 4]), 2, 3),
             {"data_format": "channels_first"}),
            (ShapeError, "max_pooling3d: with 'valid' padding the window \\(5\\) is larger",
             og.layers.max_pooling3d, (x3, 5, 1), {}),
            (ShapeError, "average_pooling1d: with 'valid' padding the window",
             og.layers.average_pooling1d, (x1, (7,), 1), {}),
            (ShapeError, "conv1d: with 'valid' padding the window \\(7\\)", og.layers.conv1d,
             (x1, 2, 4), {"dilation_rate": 2}),
            (ShapeError, "conv3d: with 'valid' padding the window", og.layers.conv3d,
             (x3, 2, (1, 5, 1)), {}),
            (ShapeError, "separable_conv1d: with 'valid' padding the window",
             og.layers.separable_conv1d, (x1, 2, 7), {}),
            (ShapeError, "separable_conv2d: with 'valid' padding the window",
             og.layers.separable_conv2d, (x2, 2, (1, 7)), {}),
            (TypeError, "conv1d: filters must be a positive int", og.layers.conv1d,
             (x1, 0, 3), {}),
            (TypeError, "conv3d: kernel_size must be a positive int or 3",
             og.layers.conv3d, (x3, 2, (2, 2)), {}),
            (TypeError, "conv3d_transpose: strides must be", og.layers.conv3d_transpose,
             (x3, 2, 2), {"strides": (1, 0, 1)}),
            (TypeError, "separable_conv1d: dilation_rate must be", og.layers.separable_conv1d,
             (x1, 2, 2), {"dilation_rate": 1.5}),
            (TypeError, "separable_conv2d: depth_multiplier must be a positive int",
             og.layers.separable_conv2d, (x2, 2, 2), {"depth_multiplier": 0}),
            (TypeError, "max_pooling1d: pool_size must be", og.layers.max_pooling1d,
             (x1, (2, 2), 1), {}),
            (TypeError, "average_pooling1d: strides must be", og.layers.average_pooling1d,
             (x1, 2, None), {}),
            (TypeError, "conv1d: use_bias", og.layers.conv1d, (x1, 2, 2), {"use_bias": "yes"}),
            (TypeError, "conv3d: activation must be a function", og.layers.conv3d,
             (x3, 2, 2), {"activation": "relu"}),
            (TypeError, "separable_conv2d: pointwise_regularizer must be a function",
             og.layers.separable_conv2d, (x2, 2, 2), {"pointwise_regularizer": 0.1}),
            (TypeError, "separable_conv1d: depthwise_regularizer must be a function",
             og.layers.separable_conv1d, (x1, 2, 2), {"depthwise_regularizer": 0.1}),
            (TypeError, "conv3d_transpose: kernel_regularizer must be a function",
             og.layers.conv3d_transpose, (x3, 2, 2), {"kernel_regularizer": 0.1}),
            (ValueError, "conv1d: padding must be 'same' or 'valid'", og.layers.conv1d,
             (x1, 2, 2), {"padding": "causal"}),
            (ValueError, "average_pooling3d: padding must be", og.layers.average_pooling3d,
             (x3, 2, 2), {"padding": "full"}),
            (ValueError, "conv3d: data_format must be", og.layers.conv3d, (x3, 2, 2),
             {"data_format": "NDHWC"}),
            (ValueError, "max_pooling3d: data_format must be", og.layers.max_pooling3d,
             (x3, 2, 2), {"data_format": "NCDHW"}),
            (ValueError, "conv1d: strides > 1 cannot be combined with dilation_rate",
             og.layers.conv1d, (x1, 2, 2), {"strides": 2, "dilation_rate": 2}),
            (ValueError, "separable_conv2d: strides > 1 cannot be combined",
             og.layers.separable_conv2d, (x2, 2, 2), {"strides": 2, "dilation_rate": 2}),
            (ValueError, "conv3d: strides > 1 cannot be combined", og.layers.conv3d,
             (x3, 2, 2), {"strides": (1, 2, 1), "dilation_rate": (2, 1, 1)}),
            (OneGraphError, "conv1d: kernel_constraint is not supported", og.layers.conv1d,
             (x1, 2, 2), {"kernel_constraint": abs}),
            (OneGraphError, "conv3d_transpose: bias_constraint is not supported",
             og.layers.conv3d_transpose, (x3, 2, 2), {"bias_constraint": abs}),
            (OneGraphError, "separable_conv1d: pointwise_constraint is not supported",
             og.layers.separable_conv1d, (x1, 2, 2), {"pointwise_constraint": abs}),
            (OneGraphError, "separable_conv2d: depthwise_constraint is not supported",
             og.layers.separable_conv2d, (x2, 2, 2), {"depthwise_constraint": abs}),
            (TypeError, "separable_conv2d: trainable must be a bool", og.layers.separable_conv2d,
             (x2, 2, 2), {"trainable": None}),
            (TypeError, "conv3d: .*name", og.layers.conv3d, (x3, 2, 2), {"name": 3}),
            (TypeError, "max_pooling1d: .*name", og.layers.max_pooling1d, (x1, 2, 2),
             {"name": 3}),
        ]
        for error, message, fn, args, kwargs in cases:
            with pytest.raises(error, match=message):
                fn(*args, **kwargs)
            assert not og.global_variables(), (fn.__name__, kwargs)
        with pytest.raises(ShapeError, match="conv1d: kernel_regularizer must give a scalar"):
            og.layers.conv1d(x1, 2, 2, kernel_regularizer=lambda w: w)
        with pytest.raises(ValueError):   # reuse of a scope that does not exist
            og.layers.separable_conv1d(x1, 2, 2, name="nothing", reuse=True)
