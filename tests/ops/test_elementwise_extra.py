"""Extra checks for the elementwise and activation kernels.

* The ONNX Cast/CastLike node cases (data stored as TensorProto for the float8 / int4
  types numpy lacks) checked bit for bit after conversion to float32, which is stricter
  than the shared harness's allclose for the ml_dtypes types.
* erf against math.erf, float32 Gelu against math.erfc, Relu and Softmax fast paths;
  integer Div/Mod, BitShift edge cases, string casts.
"""

import math

import numpy as np
import pytest

from onegraph.errors import ExecutionError
from onegraph.ops import KernelContext, get_op
from onegraph.ops.elementwise import cast_array, erf

from .node_cases import all_node_cases, assert_outputs_match, onnx_attr_value

# Cast cases that still cannot pass once converted, with the reason.
_CAST_XFAIL: dict[str, str] = {}


def _cast_cases():
    from onnx import TensorProto, numpy_helper

    out = []
    for case in all_node_cases():
        graph = case.model.graph
        if len(graph.node) != 1 or graph.node[0].op_type not in ("Cast", "CastLike"):
            continue
        for i, (inputs, outputs) in enumerate(case.data_sets):
            conv = [numpy_helper.to_array(t) if isinstance(t, TensorProto) else t
                    for t in inputs]
            want = [numpy_helper.to_array(t) if isinstance(t, TensorProto) else t
                    for t in outputs]
            out.append((f"{case.name}[{i}]", graph.node[0], conv, want, case.rtol, case.atol))
    return out


_CASES = _cast_cases()


def _bits_equal(want, got):
    """Exact comparison of arrays of ml_dtypes types (NaN payloads aside)."""
    w = want.astype(np.float32)
    g = got.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(np.where(np.isnan(g), 0, g), np.where(np.isnan(w), 0, w))


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_cast_case_converted(case, request):
    name, node, inputs, expected, rtol, atol = case
    for prefix, why in _CAST_XFAIL.items():
        if name.startswith(prefix):  # run it anyway: an unexpected pass is an error
            request.node.add_marker(pytest.mark.xfail(reason=why, strict=True))
    op = get_op(node.op_type, node.domain)
    attrs = op.resolve_attrs({a.name: onnx_attr_value(a) for a in node.attribute})
    got = op.kernel(inputs, attrs, KernelContext())
    assert isinstance(got, tuple)
    want = expected[0]
    assert got[0].dtype == want.dtype, f"{name}: {got[0].dtype} != {want.dtype}"
    assert got[0].shape == want.shape
    if want.dtype.name in ("float16", "float32", "float64") or want.dtype.kind in "biu":
        assert_outputs_match(expected, got, rtol, atol, name)
    else:
        _bits_equal(want, got[0])


def test_erf_matches_math_erf(blas_backend):
    x = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-30, 0.9, 500),
                        [0.0, 2.5, 2.4999999, -2.5000001, 30.0]])
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), want, rtol=4e-15, atol=0)
    x32 = x.astype(np.float32)
    want32 = np.array([math.erf(float(v)) for v in x32], np.float32)
    # float32 runs MKL's erf or the fitted rational (7 ulp at worst), not the float64
    # series
    np.testing.assert_allclose(erf(x32), want32, rtol=5e-7, atol=0)
    assert erf(np.array([np.inf, -np.inf])).tolist() == [1.0, -1.0]
    assert np.isnan(erf(np.array([np.nan])))[0]
    assert erf(np.array([1.0], np.float16)).dtype == np.float16


def _run(op_type, inputs, **attrs):
    op = get_op(op_type)
    return op.kernel(inputs, op.resolve_attrs(attrs), KernelContext())[0]


def test_int_div_truncates_and_mod_signs():
    a = np.array([7, -7, 7, -7, 0], np.int32)
    b = np.array([2, 2, -2, -2, 3], np.int32)
    np.testing.assert_array_equal(_run("Div", [a, b]), [3, -3, -3, 3, 0])
    np.testing.assert_array_equal(_run("Mod", [a, b]), [1, 1, -1, -1, 0])
    np.testing.assert_array_equal(_run("Mod", [a, b], fmod=1), [1, -1, 1, -1, 0])
    big = np.array([2**62 + 1, -(2**62) - 1], np.int64)
    np.testing.assert_array_equal(_run("Div", [big, np.array([3, 3], np.int64)]),
                                  [(2**62 + 1) // 3, -((2**62 + 1) // 3)])


def test_bitshift_edge_cases():
    x = np.array([-8, 8, -8, 8], np.int8)
    y = np.array([1, 9, 8, -1], np.int8)
    np.testing.assert_array_equal(_run("BitShift", [x, y], direction="RIGHT"), [-4, 0, -1, 0])
    np.testing.assert_array_equal(_run("BitShift", [x, y], direction="LEFT"), [-16, 0, 0, 0])


def test_cast_strings():
    s = np.array(["1e-5", "INF", "-inf", "NaN", "+INF", "3.5", "1E8"], dtype=object)
    got = cast_array(s, np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([1e-5, np.inf, -np.inf, np.nan, np.inf, 3.5,
                                                 1e8], np.float32))
    assert cast_array(np.array(["1000", "-3"], dtype=object), np.int64).tolist() == [1000, -3]
    back = cast_array(np.array([0.5, 314.15926, -1.0], np.float32), np.dtype(object))
    assert back.dtype == object
    # each string is the float32's shortest repr: it reads back as the same float32
    # (compared as float32: numpy 1.x compares a float with a float32 in float64)
    assert [np.float32(v) for v in back] == [0.5, np.float32(314.15926), -1.0]
    assert [str(v) for v in back] == ["0.5", "314.15927", "-1.0"]
    assert cast_array(np.array([200], np.int16), np.int8).tolist() == [-56]
    assert cast_array(np.array([0.0, -0.0, 2.0]), np.bool_).tolist() == [False, False, True]


def test_float16_dtype_kept():
    x = np.array([-1.0, 0.5, 2.0], np.float16)
    for op_type in ("Neg", "Abs", "Sqrt", "Exp", "Erf", "Round", "Sign"):
        assert _run(op_type, [x]).dtype == np.float16, op_type
    assert _run("Add", [x, x]).dtype == np.float16
    assert _run("Mean", [x, x, x]).dtype == np.float16
    assert _run("Round", [np.array([0.5, 1.5, 2.5, -0.5], np.float32)]).tolist() == \
        [0.0, 2.0, 2.0, -0.0]


def test_activations_keep_dtype_and_are_stable():
    x16 = np.array([-3.0, -0.5, 0.0, 0.5, 3.0], np.float16)
    for op_type in ("Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid",
                    "HardSwish", "Tanh", "Softplus", "Softsign", "Gelu", "Mish",
                    "ThresholdedRelu", "Shrink", "Softmax", "LogSoftmax", "Hardmax"):
        assert _run(op_type, [x16]).dtype == np.float16, op_type
    big = np.array([[1000.0, 0.0, -1000.0]], np.float32)
    assert np.isfinite(_run("Sigmoid", [big])).all()
    np.testing.assert_allclose(_run("Softplus", [big]), [[1000.0, math.log(2.0), 0.0]])
    np.testing.assert_allclose(_run("LogSoftmax", [big]), [[0.0, -1000.0, -2000.0]])
    np.testing.assert_array_equal(_run("Hardmax", [np.array([[1.0, 3.0, 3.0]])]),
                                  [[0.0, 1.0, 0.0]])
    assert _run("Relu", [np.array([-2, 3], np.int32)]).tolist() == [0, 3]


def _softmax_f64(x, axis):
    """The oracle: float64, shifted by each row's own max."""
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("case", ["narrow", "rows_far_apart", "few_rows_far_below", "wide",
                                  "masked", "axis0", "axis0_far_below", "unshifted_edges",
                                  "below_unshifted", "above_unshifted",
                                  "high_rows_far_apart", "high_few_rows_far_below"])
def test_float32_softmax_matches_a_float64_per_row_softmax(case):
    # the float32 kernel may take exp(x) unshifted (all x in [-80, 87 - ln n]), shift by
    # the tensor's global max (span under 80) and sum rows with BLAS; every path must
    # agree with the per-row float64 softmax, tiny probabilities included (relative
    # error), and keep NaN rows NaN
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 16, 32)).astype(np.float32)
    axis = -1
    if case == "rows_far_apart":     # row maxima 70 apart: unshifted, e^-70 terms
        x[0, 0] -= 70
    elif case == "few_rows_far_below":  # two rows far below the rest
        x[0, 1, 3] -= 60
        x[1, 0, 7] -= 40
    elif case == "unshifted_edges":  # the unshifted range's ends: no subnormal, no inf
        x[0, 0, 0, :] = -79.9
        x[1, 2, 15, 31] = 87 - math.log(32) - 0.01
        x[1, 2, 15, :31] = 87 - math.log(32) - 0.02
    elif case == "below_unshifted":  # exp(-100) would be subnormal: shifted per row
        x[0, 1, 3] -= 100
    elif case == "above_unshifted":  # exp(90) would overflow: shifted
        x += 86
    elif case == "high_rows_far_apart":  # past the unshifted range: shared shift
        x += 100
        x[0, 0] -= 70
    elif case == "high_few_rows_far_below":  # shared shift; two rows redone on their own
        x += 100
        x[0, 1, 3] -= 60
        x[1, 0, 7] -= 40
    elif case == "wide":             # span over 80: per-row shift
        x[1, 2] += 500
    elif case == "masked":           # attention masks: -inf and -1e9 entries
        x[..., 20:] = -np.inf
        x[0, 1, :, 5:] = np.float32(-1e9)
    elif case == "axis0":
        axis = 0
    elif case == "axis0_far_below":
        axis = 0
        x[:, 1, 3, 5] -= 60
    y = _run("Softmax", [x], axis=axis)
    assert y.dtype == np.float32
    want = _softmax_f64(x, axis)
    np.testing.assert_allclose(y, want, rtol=2e-6, atol=0)
    x[1, 1, 3, 4] = np.nan
    y = _run("Softmax", [x], axis=axis)
    assert np.isnan(y[1, 1, 3] if axis == -1 else y[:, 1, 3, 4]).all()
    finite = ~np.isnan(_softmax_f64(x, axis))
    np.testing.assert_allclose(y[finite], _softmax_f64(x, axis)[finite], rtol=2e-6, atol=0)


@pytest.mark.parametrize("shape, axis", [((1, 1000), -1), ((1, 1000, 1, 1), 1), ((7,), 0)])
@pytest.mark.parametrize("offset", [0.0, 100.0, -300.0, 9.5e9])
def test_float32_softmax_of_one_row_matches_a_float64_softmax(shape, axis, offset):
    # one row (a classifier's logits) is shifted by its own max with no row sampling;
    # logits far past exp's range, spans over 80 and -inf/NaN entries included
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 3 + offset).astype(np.float32)
    np.testing.assert_allclose(_run("Softmax", [x], axis=axis), _softmax_f64(x, axis),
                               rtol=2e-6, atol=0)
    flat = x.reshape(-1)
    flat[4] = flat.max() - 150 if offset < 1e9 else -1e10   # far below: underflows to 0
    flat[:3] = -np.inf
    np.testing.assert_allclose(_run("Softmax", [x], axis=axis), _softmax_f64(x, axis),
                               rtol=2e-6, atol=1e-40)
    flat[3] = np.nan
    assert np.isnan(_run("Softmax", [x], axis=axis)).all()
    flat[:] = -np.inf   # no finite logit: NaN, as the float64 softmax
    with np.errstate(invalid="ignore"):
        want = _softmax_f64(x, axis)
    np.testing.assert_array_equal(np.isnan(_run("Softmax", [x], axis=axis)), np.isnan(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_against_a_zero_plane_matches_the_definition(dtype, monkeypatch):
    # float32/float64 Relu compares against a shared read-only plane of zeros; the
    # result must be max(x, 0) elementwise (NaN kept, -0.0/-inf to zero), in place or
    # not, for strided inputs, and past the plane's size (np.clip fallback)
    from onegraph.ops import activation

    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 7, 9)).astype(dtype)
    x[0, 0, 0, :4] = [np.nan, -np.inf, np.inf, -0.0]
    want = np.where(np.isnan(x), x, np.where(x > 0, x, 0)).astype(dtype)
    np.testing.assert_array_equal(_run("Relu", [x]), want)
    view = x[:, ::2, 1:, ::3]
    np.testing.assert_array_equal(activation.relu(view), want[:, ::2, 1:, ::3])
    inplace = x.copy()
    assert activation.relu(inplace, out=inplace) is inplace
    np.testing.assert_array_equal(inplace, want)
    monkeypatch.setattr(activation, "_ZERO_PLANES", {})
    monkeypatch.setattr(activation, "_ZERO_PLANE_BYTES", 64 * np.dtype(dtype).itemsize)
    assert activation._zero_plane(x) is None           # larger than the plane
    np.testing.assert_array_equal(_run("Relu", [x]), want)
    small = x[0, 0, :2, :4].copy()
    zeros = activation._zero_plane(small)
    assert zeros.shape == small.shape and not zeros.flags.writeable and not zeros.any()
    np.testing.assert_array_equal(activation.relu(small), want[0, 0, :2, :4])


@pytest.fixture
def gelu_backend(blas_backend, taken_by):
    """Exact float32 Gelu as x * Phi(x) with MKL's Phi ("mkl") or the numpy tail
    polynomial ("numpy"): (backend, calls), calls saying per normal_cdf call whether
    MKL computed it."""
    from onegraph.ops import activation

    return blas_backend, taken_by(activation, "normal_cdf")


def test_float32_gelu_matches_math_erfc_into_the_tail(gelu_backend):
    # float32 Gelu is x * Phi(x) through MKL's Phi or relu(x) - |x| Q(|x|) with a
    # fitted normal tail Q; against the float64 oracle x * erfc(-x / sqrt 2) / 2 its
    # error must stay relative everywhere, negative tail included (1 + erf(x / sqrt 2)
    # loses all digits past x ~ -5)
    x = np.concatenate([np.linspace(-14, 14, 40001), np.geomspace(1e-7, 14, 2000),
                        -np.geomspace(1e-7, 14, 2000), [0.0, -0.0, 1e-30, -1e-30]]
                       ).astype(np.float32)
    # a scratch-sized image too, so the temporaries come from the arena
    x = np.concatenate([x, np.random.default_rng(2).standard_normal(70000, np.float32)])
    y = _run("Gelu", [x])
    assert any(gelu_backend[1]) == (gelu_backend[0] == "mkl")
    assert y.dtype == np.float32 and y.shape == x.shape
    want = np.array([v * math.erfc(-v / math.sqrt(2.0)) / 2 for v in x.astype(float)])
    np.testing.assert_allclose(y, want, rtol=8e-6, atol=1e-38)
    # -inf: ONNX's formula gives -inf * 0 = NaN (as onnxruntime and the float16/64
    # kernels do); every finite input keeps its finite value next to the specials
    special = np.array([np.inf, -np.inf, np.nan, 30.0, -30.0, 1e30, -1e30], np.float32)
    for dtype in (np.float32, np.float64, np.float16):
        got = _run("Gelu", [special[:5].astype(dtype)]).astype(np.float32)
        np.testing.assert_array_equal(got[[0, 3, 4]], np.array([np.inf, 30, 0], np.float32))
        assert np.isnan(got[1]) and np.isnan(got[2])
    got = _run("Gelu", [special])
    np.testing.assert_array_equal(got[[5, 6]], np.array([1e30, 0], np.float32))
    tanh = _run("Gelu", [x[:40001]], approximate="tanh")
    z = x[:40001].astype(np.float64)
    np.testing.assert_allclose(tanh, 0.5 * z * (1 + np.tanh(
        math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3))), rtol=2e-6, atol=3e-7)


def test_float32_gelu_specials_in_later_blocks(gelu_backend):
    # float32 Gelu runs in blocks of 65536 values: specials in a later block, and a
    # block without any, must each get their own clamp
    x = np.random.default_rng(5).standard_normal((3, 70000), np.float32)
    x[2, 5], x[1, 7], x[2, 69999], x[0, 3] = -np.inf, np.nan, -1e30, np.inf
    y = _run("Gelu", [x])
    assert any(gelu_backend[1]) == (gelu_backend[0] == "mkl")
    assert y.shape == x.shape and y.dtype == np.float32
    assert np.isnan(y[2, 5]) and np.isnan(y[1, 7]) and y[2, 69999] == 0
    assert np.isposinf(y[0, 3])
    finite = np.isfinite(x) & (np.abs(x) < 1e4)
    v = x[finite].astype(np.float64)
    want = 0.5 * v * np.array([math.erfc(-t / math.sqrt(2.0)) for t in v])
    np.testing.assert_allclose(y[finite], want, rtol=8e-6, atol=1e-38)
    assert np.isnan(y).sum() == 2
    assert _run("Gelu", [np.zeros((0, 4), np.float32)]).shape == (0, 4)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_float16_gelu_is_the_float64_value_rounded(approximate, gelu_backend):
    # (the exact form goes through the float32 kernel, the tanh form through float64)
    """float16 Gelu runs the float32 kernel and rounds once: every finite float16 value
    (all 63,488) gives the float64 formula's value rounded to float16, or, for under
    1% of them (near a rounding tie, such as the half of a subnormal), the float16
    value on the exact value's other side: never more than one ulp away."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    x = x[np.isfinite(x)]
    got = _run("Gelu", [x], approximate=approximate)
    assert any(gelu_backend[1]) == (gelu_backend[0] == "mkl" and approximate == "none")
    assert got.dtype == np.float16
    v = x.astype(np.float64)
    if approximate == "none":
        exact = np.array([t * math.erfc(-t / math.sqrt(2.0)) / 2 for t in v])
    else:
        exact = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    want = exact.astype(np.float16)
    off = got != want
    assert off.sum() <= 0.01 * x.size
    ulp = np.spacing(np.abs(want[off])).astype(np.float64)
    assert np.all(np.abs(got[off].astype(np.float64) - exact[off]) <= ulp)


@pytest.mark.parametrize("op_type,attrs", [("Div", {}), ("Mod", {}), ("Mod", {"fmod": 1})])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_division_by_zero_is_refused(op_type, attrs, dtype):
    """onnxruntime refuses it ("Integer division by zero"); numpy would give 0."""
    op = get_op(op_type)
    a = np.array([7, 5, 3], dtype)
    with pytest.raises(ExecutionError, match=f"{op_type}: integer division by zero"):
        op.kernel([a, np.array([2, 0, 1], dtype)], op.resolve_attrs(attrs), None)
    (ok,) = op.kernel([a, np.array([2, 3, 1], dtype)], op.resolve_attrs(attrs), None)
    np.testing.assert_array_equal(ok, [3, 1, 3] if op_type == "Div" else [1, 2, 0])
