"""The filter-gradient functions (og.nn.conv2d_backprop_filter,
depthwise_conv2d_native_backprop_filter, conv3d_backprop_filter_v2) with the input's
and out_backprop's batch and spatial sizes known only at run time, as TF1 accepts them.

Oracles: TensorFlow's recorded values and gradients (tests/train/data, through
tf1_reference.check_case with those axes hidden), central differences of the function
itself for its gradients, and the recorded values again for the onnxruntime run of the
exported graph.
"""

import numpy as np
import pytest

import onegraph as og

from . import tf1_reference
from .graph_runs import session_and_onnxruntime
from .tf1_nnextra2_cases import CASES as EXTRA2_CASES
from .tf1_nnmore_cases import CASES as NNMORE_CASES

NNMORE = tf1_reference.load("nnmore")
EXTRA2 = tf1_reference.load("nnextra2")

_CONV2D = [c for c in NNMORE_CASES if c[0].startswith("backprop_filter_")]
_OTHERS = [c for c in EXTRA2_CASES if c[0].startswith(("dw_bp_filter_", "c3_bp_filter_"))]


def _hidden(case, reference) -> dict:
    """The batch and spatial axes of the case's input and out_backprop placeholders."""
    args, kwargs = case[2], case[3]
    first = kwargs.get("data_format", "NHWC").startswith("NC")
    hidden = {}
    for key in (args[0][1:], args[2][1:]):
        rank = reference[f"in/{key}"].ndim
        hidden[key] = (0,) + tuple(range(2, rank)) if first else tuple(range(rank - 1))
    return hidden


def test_the_cases_are_there():
    assert len(_CONV2D) == 5 and len(_OTHERS) == 5


@pytest.mark.parametrize("case", _CONV2D, ids=[c[0] for c in _CONV2D])
def test_conv2d_backprop_filter_with_run_time_sizes_matches_tensorflow(case):
    tf1_reference.check_case(NNMORE, case, hidden_dims=_hidden(case, NNMORE))


@pytest.mark.parametrize("case", _OTHERS, ids=[c[0] for c in _OTHERS])
def test_depthwise_and_conv3d_backprop_filter_with_run_time_sizes_match_tensorflow(case):
    tf1_reference.check_case(EXTRA2, case, hidden_dims=_hidden(case, EXTRA2))


def _placeholders(x_shape, dy_shape, first=False, dtype=og.float32):
    """Placeholders whose batch and spatial dims are unknown (channels known)."""
    def ph(shape):
        c = 1 if first else len(shape) - 1
        return og.placeholder(dtype, [d if i == c else None for i, d in enumerate(shape)])
    return ph(x_shape), ph(dy_shape)


_MISFITS = [
    # (function, filter_sizes, strides, padding, kwargs, x shape, bad dy shape)
    (og.nn.conv2d_backprop_filter, [3, 3, 3, 4], [1, 2, 2, 1], "SAME", {},
     (2, 5, 6, 3), (2, 3, 4, 4)),
    (og.nn.conv2d_backprop_filter, [3, 3, 3, 4], [1, 1, 1, 1], "VALID", {},
     (2, 5, 6, 3), (2, 3, 3, 4)),
    (og.nn.conv2d_backprop_filter, [3, 3, 3, 4], [1, 1, 1, 1], "VALID", {},
     (2, 2, 6, 3), (2, 1, 4, 4)),     # the filter is larger than the input
    (og.nn.depthwise_conv2d_native_backprop_filter, [3, 3, 3, 2], [1, 2, 2, 1], "SAME", {},
     (2, 5, 6, 3), (2, 2, 3, 6)),
    (og.nn.conv3d_backprop_filter_v2, [2, 3, 3, 2, 3], [1, 2, 2, 2, 1], "VALID", {},
     (1, 4, 5, 6, 2), (1, 2, 2, 3, 3)),
]


@pytest.mark.parametrize("fn, sizes, strides, padding, kwargs, x_shape, dy_shape", _MISFITS)
def test_an_out_backprop_that_does_not_fit_fails_at_run_time(fn, sizes, strides, padding,
                                                               kwargs, x_shape, dy_shape):
    g = og.Graph()
    with g.as_default():
        x, dy = _placeholders(x_shape, dy_shape)
        dw = fn(x, sizes, dy, strides, padding, **kwargs)
        assert list(dw.shape) == sizes
        what = fn.__name__.replace("_v2", "")
        with pytest.raises(og.errors.ExecutionError,
                           match=f"{what}: out_backprop's spatial sizes"):
            og.Session(g).run(dw, {x: np.ones(x_shape, np.float32),
                                   dy: np.ones(dy_shape, np.float32)})


_EXPORTED = [(NNMORE, c) for c in _CONV2D if c[0] in ("backprop_filter_same",
                                                      "backprop_filter_explicit",
                                                      "backprop_filter_nchw")] + \
    [(EXTRA2, c) for c in _OTHERS if c[0] in ("dw_bp_filter_s2", "c3_bp_filter_valid_s2")]


@pytest.mark.parametrize("reference, case", _EXPORTED, ids=[c[0] for _, c in _EXPORTED])
def test_the_run_time_graph_exports_and_matches_in_onnxruntime(reference, case):
    name, path, args, kwargs, _ = case
    first = kwargs.get("data_format", "NHWC").startswith("NC")
    a, b = reference[f"in/{args[0][1:]}"], reference[f"in/{args[2][1:]}"]
    g = og.Graph()
    with g.as_default():
        x, dy = _placeholders(a.shape, b.shape, first)
        dw = tf1_reference.function(path)(x, args[1], dy, *args[3:], **kwargs)
    want, got = session_and_onnxruntime(g, {"x": x, "dy": dy}, {"dw": dw}, {"x": a, "dy": b})
    expected = reference[f"out/{name}"]
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(want[0], expected, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(got[0], expected, rtol=1e-5, atol=1e-5 * scale)


_SMALL = [
    # (function, filter_sizes, strides, padding, kwargs, x shape, dy shape)
    (og.nn.conv2d_backprop_filter, [3, 2, 2, 3], [1, 2, 2, 1], "SAME",
     {"dilations": [1, 1, 2, 1]}, (1, 5, 4, 2), (1, 3, 2, 3)),
    (og.nn.conv2d_backprop_filter, [2, 2, 2, 2], [1, 1, 2, 2],
     [[0, 0], [0, 0], [1, 0], [0, 2]], {"data_format": "NCHW"}, (2, 2, 4, 3), (2, 2, 2, 2)),
    (og.nn.depthwise_conv2d_native_backprop_filter, [2, 3, 2, 2], [1, 2, 1, 1], "VALID", {},
     (1, 5, 4, 2), (1, 2, 2, 4)),
    (og.nn.conv3d_backprop_filter_v2, [2, 2, 2, 1, 2], [1, 2, 1, 2, 1], "SAME", {},
     (1, 3, 3, 4, 1), (1, 2, 3, 2, 2)),
]


def _central_differences(loss, value: np.ndarray, eps=1e-3) -> np.ndarray:
    """d loss / d value by central differences (loss is bilinear here, so they are
    exact up to rounding)."""
    grad = np.zeros_like(value)
    for i in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[i] = eps
        grad[i] = (loss(value + step) - loss(value - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("fn, sizes, strides, padding, kwargs, x_shape, dy_shape", _SMALL)
def test_gradients_with_run_time_sizes_match_central_differences(fn, sizes, strides, padding,
                                                                 kwargs, x_shape, dy_shape):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(x_shape), rng.standard_normal(dy_shape)
    weights = rng.standard_normal(sizes)
    g = og.Graph()
    with g.as_default():
        x, dy = _placeholders(x_shape, dy_shape, "data_format" in kwargs, og.float64)
        dw = fn(x, sizes, dy, strides, padding, **kwargs)
        loss = og.reduce_sum(dw * og.constant(weights))
        grads = og.gradients(loss, [x, dy])
        sess = og.Session(g)
        got_x, got_dy = sess.run(grads, {x: a, dy: b})
        want_x = _central_differences(lambda v: sess.run(loss, {x: v, dy: b}), a)
        want_dy = _central_differences(lambda v: sess.run(loss, {x: a, dy: v}), b)
    np.testing.assert_allclose(got_x, want_x, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(got_dy, want_dy, rtol=1e-7, atol=1e-8)
    assert np.abs(want_x).max() > 0.1 and np.abs(want_dy).max() > 0.1


def _numpy_filter_grad(x, dy, kernel, steps, rates, padding, depthwise=False):
    """TF's filter gradient of an NHWC conv2d (depthwise: (kh, kw, in, multiplier)) by
    its definition: dW[i, j, c, m] = sum over n, y, x of x_padded[n, y s + i d,
    x s + j d, c] dy[n, y, x, m] (depthwise: dy's channel c * multiplier + m)."""
    sp = x.shape[1:3]
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, rates)]
    if padding == "SAME":
        totals = [max((-(-n // s) - 1) * s + r - n, 0) for n, s, r in zip(sp, steps, reach)]
        pairs = [(t // 2, t - t // 2) for t in totals]
    elif padding == "VALID":
        pairs = [(0, 0), (0, 0)]
    else:
        pairs = [tuple(p) for p in padding[1:3]]
    xp = np.pad(x, [(0, 0)] + pairs + [(0, 0)])
    out = dy.shape[1:3]
    c_in = x.shape[3]
    m = dy.shape[3] // c_in if depthwise else dy.shape[3]
    dw = np.zeros(list(kernel) + [c_in, m])
    for i, j in np.ndindex(*kernel):
        y0, x0 = i * rates[0], j * rates[1]
        taps = xp[:, y0:y0 + (out[0] - 1) * steps[0] + 1:steps[0],
                  x0:x0 + (out[1] - 1) * steps[1] + 1:steps[1], :]
        if depthwise:
            dw[i, j] = np.einsum("nyxc,nyxcm->cm", taps,
                                 dy.reshape(dy.shape[:3] + (c_in, m)))
        else:
            dw[i, j] = np.einsum("nyxc,nyxm->cm", taps, dy)
    return dw


_DEFINITION = [
    # (depthwise, kernel, steps, rates, padding, x shape (NHWC))
    (False, (3, 2), (2, 3), (1, 1), "SAME", (2, 7, 9, 2)),
    (False, (3, 3), (2, 2), (2, 1), "SAME", (1, 6, 5, 2)),
    (False, (2, 3), (3, 2), (1, 2), "VALID", (2, 9, 10, 1)),
    (False, (3, 2), (2, 2), (1, 1), [[0, 0], [2, 1], [0, 3], [0, 0]], (1, 6, 7, 2)),
    (True, (3, 3), (2, 1), (1, 2), "SAME", (2, 5, 7, 2)),
    (True, (2, 2), (2, 3), (1, 1), [[0, 0], [1, 2], [3, 0], [0, 0]], (1, 6, 5, 3)),
]


@pytest.mark.parametrize("depthwise, kernel, steps, rates, padding, x_shape", _DEFINITION)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_run_time_sizes_match_the_definition(depthwise, kernel, steps, rates, padding,
                                             x_shape, data_format):
    """Strides, dilations and paddings that TF's recorded cases do not combine, against
    the filter gradient's definition in numpy (the input's rows past the last tap, which
    SAME / explicit paddings leave with some strides, included)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape)
    sp = x_shape[1:3]
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, rates)]
    if padding == "SAME":
        out = [-(-n // s) for n, s in zip(sp, steps)]
    else:
        pairs = [(0, 0)] * 2 if padding == "VALID" else padding[1:3]
        out = [(n + sum(p) - r) // s + 1 for n, p, r, s in zip(sp, pairs, reach, steps)]
    m = 2
    dy = rng.standard_normal([x_shape[0]] + out + [x_shape[3] * m if depthwise else m])
    want = _numpy_filter_grad(x, dy, kernel, steps, rates, padding, depthwise)
    first = data_format == "NCHW"

    def layout(v):
        return [v[0], v[3], v[1], v[2]] if first else list(v)

    def data(a):
        return a.transpose(0, 3, 1, 2) if first else a
    fn = (og.nn.depthwise_conv2d_native_backprop_filter if depthwise else
          og.nn.conv2d_backprop_filter)
    g = og.Graph()
    with g.as_default():
        xp, dyp = _placeholders(data(x).shape, data(dy).shape, first, og.float64)
        dw = fn(xp, list(kernel) + [x_shape[3], m], dyp, layout([1, *steps, 1]),
                padding if isinstance(padding, str) else layout(padding),
                data_format=data_format, dilations=layout([1, *rates, 1]))
        got = og.Session(g).run(dw, {xp: data(x), dyp: data(dy)})
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
