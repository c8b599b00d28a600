"""ops/blas.py: products with a constant operand through MKL's packed GEMM.

Every product is checked against numpy in float64 (an independent oracle: numpy's own
BLAS, not MKL); layouts cover what kernels hand in (contiguous, transposed views, rows
of a wider array, an output that is a column block of a wider array). The MKL tests are
skipped where libmkl_rt does not load (the `mkl` extra is x86-64 only); the backend
choice and the numpy fallback are tested everywhere.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from onegraph.errors import InvalidArgumentError, UnavailableError
from onegraph.ops import blas

from ..backends import needs_backend


@pytest.fixture
def backend_reset():
    """Put the requested backend back to ONEGRAPH_BLAS after the test."""
    yield
    blas._reset_for_tests()


needs_mkl = needs_backend(blas, "mkl", "Intel MKL (the mkl extra)")


def _views(x, kind):
    """x (2-D) as the layout `kind`, same values."""
    if kind == "contiguous":
        return np.ascontiguousarray(x)
    if kind == "transposed":  # a Fortran-ordered view, as Gemm's transB gives
        return np.ascontiguousarray(x.T).T
    wide = np.zeros((x.shape[0], x.shape[1] + 5), x.dtype)  # rows of a wider array
    wide[:, 2:2 + x.shape[1]] = x
    return wide[:, 2:2 + x.shape[1]]


def _oracle(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _close(got, want, dtype):
    scale = max(1.0, float(np.abs(want).max()))
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("constant", ["a", "b"])
@pytest.mark.parametrize("a_kind", ["contiguous", "transposed", "wide"])
@pytest.mark.parametrize("b_kind", ["contiguous", "transposed", "wide"])
def test_packed_product_matches_float64(dtype, constant, a_kind, b_kind, backend_reset):
    blas.use_backend("mkl")
    rng = np.random.default_rng(0)
    a0 = rng.standard_normal((96, 700)).astype(dtype)
    b0 = rng.standard_normal((700, 300)).astype(dtype)
    a, b = _views(a0, a_kind), _views(b0, b_kind)
    cache: dict = {}
    for _ in range(2):  # the pack is made on the first call, reused on the second
        got = blas.matmul_constant(a, b, cache, constant)
        assert got is not None and got.dtype == dtype and got.shape == (96, 300)
        _close(got, _oracle(a0, b0), dtype)
    (owner, views), = cache.values()
    constant_array = a if constant == "a" else b
    base = constant_array if constant_array.base is None else constant_array.base
    assert owner is base  # the array owning the memory, not a view made per call
    assert [len(packs) for packs in views.values()] == [1]


@needs_mkl
def test_output_into_a_column_block_of_a_wider_array(backend_reset):
    blas.use_backend("mkl")
    rng = np.random.default_rng(1)
    w = rng.standard_normal((256, 288)).astype(np.float32)
    x = rng.standard_normal((288, 400)).astype(np.float32)
    y = np.full((256, 1000), 7.0, np.float32)
    got = blas.matmul_constant(w, x, {}, "a", out=y[:, 300:700])
    assert got is not None and np.shares_memory(got, y)
    _close(y[:, 300:700], _oracle(w, x), np.float32)
    assert np.all(y[:, :300] == 7) and np.all(y[:, 700:] == 7)


@needs_mkl
def test_views_of_one_owner_keep_their_own_packs(backend_reset):
    """Two slices of one cached weight array (the same owner) must not share a pack."""
    blas.use_backend("mkl")
    rng = np.random.default_rng(2)
    owner = rng.standard_normal((2, 256, 512)).astype(np.float32)
    x = rng.standard_normal((512, 160)).astype(np.float32)
    cache: dict = {}
    for _ in range(2):
        for j in range(2):
            got = blas.matmul_constant(owner[j], x, cache, "a")
            _close(got, _oracle(owner[j], x), np.float32)
    (held, views), = cache.values()
    assert held is owner and len(views) == 2


@needs_mkl
def test_views_made_per_call_share_their_base_pack(backend_reset):
    """A weight reshaped or transposed anew on every call (a new view object each
    time) is packed once, under the array that owns its memory."""
    blas.use_backend("mkl")
    rng = np.random.default_rng(6)
    w = rng.standard_normal((128, 64, 3, 3)).astype(np.float32)
    x = rng.standard_normal((576, 200)).astype(np.float32)
    cache: dict = {}
    for _ in range(3):
        got = blas.matmul_constant(w.reshape(128, 576), x, cache, "a")
        _close(got, _oracle(w.reshape(128, 576), x), np.float32)
    (held, views), = cache.values()
    assert held is w and [len(p) for p in views.values()] == [1]


@needs_mkl
def test_new_shapes_of_the_moving_operand_get_packs_up_to_the_limit(backend_reset):
    blas.use_backend("mkl")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((512, 512)).astype(np.float32)
    cache: dict = {}
    results = []
    for rows in range(16, 16 + 8 * (blas._PACKS_PER_CONSTANT + 2), 8):
        x = rng.standard_normal((rows, 512)).astype(np.float32)
        got = blas.matmul_constant(x, w, cache, "b")
        results.append(got is not None)
        if got is not None:
            _close(got, _oracle(x, w), np.float32)
    # the first shapes are packed; past the limit the caller is told to use numpy
    assert results == [True] * blas._PACKS_PER_CONSTANT + [False, False]


@needs_mkl
def test_threads_share_one_cache(backend_reset):
    blas.use_backend("mkl")
    rng = np.random.default_rng(4)
    w = rng.standard_normal((256, 384)).astype(np.float32)
    xs = [rng.standard_normal((64, 256)).astype(np.float32) for _ in range(4)]
    cache: dict = {}
    errors = []

    def work(x):
        try:
            for _ in range(20):
                _close(blas.matmul_constant(x, w, cache, "b"), _oracle(x, w), np.float32)
        except Exception as e:  # reported to the main thread below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors[0]


@needs_mkl
@pytest.mark.parametrize("case", ["small", "small_constant", "few_rows", "int", "mixed",
                                  "strided", "3-d", "bad_out", "aliased_out"])
def test_products_mkl_does_not_take_are_left_to_numpy(case, backend_reset):
    """None (the caller multiplies with numpy) below the measured crossover, for
    dtypes, layouts and outputs it cannot describe."""
    blas.use_backend("mkl")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    out = None
    if case == "small":
        a, b = a[:64, :64], b[:64, :64]
    elif case == "small_constant":  # numpy packs it cheaply: see _MIN_CONSTANT_ELEMENTS
        a, b = rng.standard_normal((4096, 64)).astype(np.float32), b[:64, :64]
    elif case == "few_rows":  # a matrix-vector product in all but name
        a = a[:blas._MIN_ROWS - 1]
    elif case == "int":
        a, b = a.astype(np.int32), b.astype(np.int32)
    elif case == "mixed":
        b = b.astype(np.float64)
    elif case == "strided":  # every other column: no leading dimension describes it
        a = np.repeat(a, 2, axis=1)[:, ::2]
    elif case == "3-d":
        a = a.reshape(2, 64, 256)
    elif case == "bad_out":
        out = np.empty((256, 128), np.float32).T  # columns, not rows, contiguous
    elif case == "aliased_out":  # BLAS would read what it already overwrote
        out = a
    assert blas.matmul_constant(a, b, {}, "b", out=out) is None


def test_numpy_backend_leaves_every_product_to_numpy(backend_reset):
    assert blas.use_backend("numpy") == "numpy"
    assert blas.backend() == "numpy"
    a = np.ones((256, 512), np.float32)
    assert blas.matmul_constant(a, a.T, {}, "b") is None


@pytest.mark.parametrize("value", ["openblas", "", 3, None])
def test_use_backend_refuses_unknown_names(value, backend_reset):
    before = blas.backend()
    with pytest.raises(InvalidArgumentError, match="expected one of auto, numpy, mkl"):
        blas.use_backend(value)
    assert blas.backend() == before


def _run(code: str, **env) -> subprocess.CompletedProcess:
    import os

    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=120)


def test_environment_chooses_the_backend():
    """ONEGRAPH_BLAS is read at first use: an unknown value is an error naming the
    variable; "mkl" without a loadable library is UnavailableError saying what to
    install; "auto" then falls back to numpy and a Session still runs a large MatMul."""
    code = """
        import numpy as np
        import onegraph as og
        from onegraph.ops import blas
        try:
            blas.backend()
        except Exception as e:
            print(type(e).__name__, e)
        else:
            print("backend", blas.backend())
        g = og.Graph()
        with g.as_default():
            x = og.placeholder(og.float32, [64, 512], name="x")
            w = og.constant(np.eye(512, dtype=np.float32) * 2, name="w")
            y = og.matmul(x, w)
        with og.Session(graph=g) as sess:
            feed = np.arange(64 * 512, dtype=np.float32).reshape(64, 512)
            print("ok", bool(np.array_equal(sess.run(y, {x: feed}), 2 * feed)))
    """
    missing = {"ONEGRAPH_MKL_LIBRARY": "/nonexistent/libmkl_rt.so"}
    bad = _run(code, ONEGRAPH_BLAS="openblas")
    assert "InvalidArgumentError ONEGRAPH_BLAS='openblas'" in bad.stdout, bad.stderr
    forced = _run(code, ONEGRAPH_BLAS="mkl", **missing)
    assert "UnavailableError" in forced.stdout and "onegraph[mkl]" in forced.stdout
    auto = _run(code, ONEGRAPH_BLAS="auto", **missing)
    assert "backend numpy" in auto.stdout and "ok True" in auto.stdout, auto.stderr
    plain = _run(code, ONEGRAPH_BLAS="numpy")
    assert "backend numpy" in plain.stdout and "ok True" in plain.stdout, plain.stderr


def test_use_backend_mkl_without_the_library_keeps_the_backend(monkeypatch,
                                                              backend_reset):
    monkeypatch.setattr(blas._switch, "loaded", False)  # as if no libmkl_rt had loaded
    blas.use_backend("auto")
    with pytest.raises(UnavailableError, match="ONEGRAPH_MKL_LIBRARY"):
        blas.use_backend("mkl")
    assert blas.backend() == "numpy"


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_cdf_matches_math_erfc(dtype, backend_reset):
    """MKL's Phi(x) against 0.5 erfc(-x / sqrt 2) in float64 wherever the result is a
    normal number: float32 within 2 ulp; float64 within the oracle's own error (x /
    sqrt 2 rounded, then erfc's steep tail: up to ~1e-13 relative at x = -30), specials
    as the limits, and in place (out is x)."""
    import math

    blas.use_backend("mkl")
    x = np.concatenate([np.linspace(-12, 12, 20001), -np.geomspace(1e-6, 37, 500),
                        np.geomspace(1e-6, 9, 500)]).astype(dtype)
    got = blas.normal_cdf(x, np.empty_like(x))
    want = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x.astype(float)])
    normal = want >= np.finfo(dtype).tiny
    if dtype == np.float32:
        ulp = np.spacing(want[normal].astype(dtype)).astype(float)
        assert np.all(np.abs(got[normal] - want[normal]) <= 2 * ulp)
    else:
        np.testing.assert_allclose(got[normal], want[normal], rtol=5e-13, atol=0)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], dtype)
    same = special.copy()
    assert blas.normal_cdf(same, same) is same
    np.testing.assert_array_equal(same, np.array([1, 0, np.nan, 0.5, 0.5], dtype))


@needs_mkl
def test_normal_cdf_leaves_what_it_cannot_take_to_numpy(backend_reset):
    blas.use_backend("mkl")
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    for args in [(x[::2], np.empty(32, np.float32)),            # strided input
                 (x, np.empty(64, np.float64)),                  # other output dtype
                 (x, np.empty(63, np.float32)),                  # other shape
                 (x.astype(np.float16), np.empty(64, np.float16))]:
        assert blas.normal_cdf(*args) is None
    blas.use_backend("numpy")
    out = np.full(64, 7, np.float32)
    assert blas.normal_cdf(x, out) is None and (out == 7).all()


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_through_mkl_matches_math_erf(dtype, backend_reset, taken_by):
    """The Erf kernel's erf under the MKL backend is MKL's (checked taken): within an
    ulp of math.erf, odd, the limits at +-inf, NaN kept, 0-d arrays kept 0-d."""
    import math

    from onegraph.ops import elementwise

    taken = taken_by(elementwise, "mkl_erf")
    blas.use_backend("mkl")
    x = np.concatenate([np.linspace(-6, 6, 40001), np.geomspace(1e-30, 6, 800),
                        -np.geomspace(1e-30, 6, 800)]).astype(dtype)
    got = elementwise.erf(x)
    want = np.array([math.erf(v) for v in x.astype(float)])
    ulp = np.spacing(np.abs(want).astype(dtype)).astype(float)
    assert got.dtype == dtype and np.all(np.abs(got - want) <= ulp)
    special = elementwise.erf(np.array([np.inf, -np.inf, np.nan, -0.0], dtype))
    np.testing.assert_array_equal(special[:2], [1, -1])
    assert np.isnan(special[2]) and np.signbit(special[3])
    assert elementwise.erf(np.array(0.5, dtype)).shape == ()
    assert taken and all(taken)


@needs_mkl
@pytest.mark.parametrize("constant", ["a", "b"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_packed_product_accumulates_into_out(constant, dtype, backend_reset):
    """accumulate=True adds the product to what `out` holds (GEMM's beta = 1), also
    into a column block of a wider array; without `out` there is nothing to add to."""
    blas.use_backend("mkl")
    rng = np.random.default_rng(13)
    a = rng.standard_normal((256, 300)).astype(dtype)
    b = rng.standard_normal((300, 320)).astype(dtype)
    wide = rng.standard_normal((256, 400)).astype(dtype)
    before = wide.copy()
    cache: dict = {}
    got = blas.matmul_constant(a, b, cache, constant, wide[:, 40:360], accumulate=True)
    assert got is not None and np.shares_memory(got, wide)
    _close(wide[:, 40:360], before[:, 40:360] + _oracle(a, b), dtype)
    np.testing.assert_array_equal(wide[:, :40], before[:, :40])
    np.testing.assert_array_equal(wide[:, 360:], before[:, 360:])
    assert blas.matmul_constant(a, b, cache, constant, accumulate=True) is None


@needs_mkl
def test_small_constants_accumulate_through_mkl(backend_reset):
    """A constant below the size MKL takes for plain products is still packed when the
    product accumulates into `out` (it saves numpy's add pass); plain products of it
    stay with numpy."""
    blas.use_backend("mkl")
    rng = np.random.default_rng(14)
    w = rng.standard_normal((256, 65)).astype(np.float32)    # 16k values, under 64k
    x = rng.standard_normal((65, 3136)).astype(np.float32)
    s = rng.standard_normal((256, 3136)).astype(np.float32)
    want = s.astype(np.float64) + _oracle(w, x)
    cache: dict = {}
    assert blas.matmul_constant(w, x, cache, "a", np.empty_like(s)) is None
    assert blas.matmul_constant(w, x, cache, "a", s, accumulate=True) is s
    _close(s, want, np.float32)
