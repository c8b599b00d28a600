"""The special-function cases (og.lgamma, og.math.erfinv, og.math.special.bessel_i0,
...) checked against TensorFlow's tf.compat.v1: shared by
tests/train/test_api_special.py and tools/record_tf1_reference.py (`special`), in
tf1_nn_cases.py's function-call form.

Inputs span each function's regions (tiny, moderate, large, negative, near poles) in
float64 and float32; the "sp*" inputs hold the special values (0, -0, +-inf, NaN,
poles, out-of-domain) whose results are compared exactly. Gradients are taken only
where the outputs are finite. Values where TensorFlow itself is inaccurate (erfinv
near 0 and next to +-1, lgamma next to its zeros at 1 and 2, float32 polygamma below
-9) are left to the high-precision checks in the test.
"""

import numpy as np

_INF, _NAN = np.inf, np.nan


def make_inputs() -> dict:
    """The named input arrays (fixed values)."""
    f64 = lambda v: np.asarray(v, np.float64)  # noqa: E731
    f32 = lambda v: np.asarray(v, np.float32)  # noqa: E731
    gam = [1e-10, 1e-3, 0.1, 0.5, 0.75, 1.25, 1.5, 2.5, 3.7, 9.9, 10.1, 50.5, 1e3, 1e10,
           -0.5, -1.5, -2.5, -3.3, -10.7, -100.2, -1e5 - 0.5]
    bes = [0.0, 1e-5, 0.3, 1.0, -1.0, 2.5, 7.9, 8.1, -8.1, 15.0, 30.0, 80.0]
    bes_big = bes + [100.0, 500.0, -700.0, 1e4, 1e10]
    ein = [-0.999999, -0.9, -0.5, -0.3, -1e-3, 0.001, 0.2, 0.49, 0.5, 0.51, 0.8, 0.99,
           1 - 1e-12]
    cin = [1e-300, 1e-100, 1e-10, 0.01, 0.3, 0.5, 0.7, 1.2, 1.5, 1.9, 1.999999]
    nin = [1e-300, 1e-50, 1e-5, 0.1, 0.25, 0.3, 0.45, 0.55, 0.7, 0.75, 0.9, 1 - 1e-10]
    return {
        "g64": f64(gam + [1e-300, 1e300]), "g32": f32(gam[:-3]), "g32neg": f32(gam[-3:]),
        "gsp": f64([-_INF, -3.0, -1.0, -0.0, 0.0, _INF, _NAN]),
        "b64": f64(bes), "b64big": f64(bes_big), "b32": f32(bes), "b32big": f32(bes_big[:-1]),
        "bsp": f64([-_INF, _INF, _NAN, -0.0, 1e300, -1e300]),
        "e64": f64(ein[:-1]), "e32": f32([v for v in ein[:-1] if abs(v) > 0.01]),
        "esp": f64([-1.0, 1.0, -1.5, 2.0, _NAN, _INF, 0.0]),
        "c64": f64(cin), "c32": f32([1e-30, 1e-10, 0.01, 0.3, 0.5, 0.7, 1.2, 1.5, 1.9]),
        "csp": f64([0.0, 2.0, -0.1, 2.1, _NAN, _INF]),
        "n64": f64(nin), "n32": f32([1e-30] + nin[1:-1]),
        "nsp": f64([0.0, 1.0, -0.1, 1.1, _NAN, -_INF]),
        "pg_n": f64([[0.0], [1.0], [2.0], [3.0], [6.0]]),
        "pg_x": f64([[0.3, 1.0, 2.5, 10.0, 100.0, -0.5, -2.5, -1.3]]),
        "pg_n32": f32([[0.0], [1.0], [2.0], [4.0]]),
        "pg_x32": f32([[0.3, 1.0, 2.5, 10.0, 100.0, -0.5, -1.3]]),
        "pg_nsp": f64([[-1.0], [1.5], [_NAN], [1.0], [2.0]]),
        "pg_xsp": f64([[-_INF, -2.0, 0.0, _INF, _NAN, 1.0]]),
        "z_s": f64([[1.5], [2.0], [3.0], [7.5], [30.0]]),
        "z_q": f64([[0.1, 1.0, 3.3, 50.0, 1e5, 1e9]]),
        "z_s_int": f64([[2.0], [3.0], [4.0]]), "z_q_neg": f64([[-0.5, -2.5, -3.7, -20.25]]),
        "z_s32": f32([[1.5], [2.0], [5.0]]), "z_q32": f32([[0.1, 1.0, 3.3, 50.0, 1e5]]),
        "z_ssp": f64([[0.5], [1.0], [2.0], [3.0], [_INF], [_NAN]]),
        "z_qsp": f64([[-_INF, -2.0, -1.5, 0.0, 0.5, 1.0, 2.0, _INF, _NAN]]),
        "ig_a": f64([[0.01], [0.5], [1.0], [3.0], [20.0], [150.0]]),
        "ig_x": f64([[1e-3, 0.1, 1.0, 2.9, 10.0, 25.0, 160.0, 300.0]]),
        "ig_a32": f32([[0.5], [1.0], [3.0], [20.0]]),
        "ig_x32": f32([[0.1, 1.0, 2.9, 10.0, 25.0]]),
        "ig_asp": f64([[-1.0], [0.0], [1.0], [_INF], [_NAN]]),
        "ig_xsp": f64([[-1.0, 0.0, 1.0, _INF, _NAN]]),
        "bi_a": f64([0.1, 0.5, 1.0, 2.0, 5.0, 30.0, 200.0, 0.5, 3.0, 1.0, 12.0]),
        "bi_b": f64([0.2, 0.5, 1.0, 3.0, 1.0, 30.0, 100.0, 7.0, 0.5, 1e-2, 15.0]),
        "bi_x": f64([0.3, 0.5, 0.2, 0.7, 0.9, 0.45, 0.65, 0.01, 0.99, 0.5, 0.3]),
        "bi_a32": f32([0.5, 1.0, 2.0, 5.0, 30.0, 3.0]),
        "bi_b32": f32([0.5, 1.0, 3.0, 1.0, 30.0, 0.5]),
        "bi_x32": f32([0.5, 0.2, 0.7, 0.9, 0.45, 0.99]),
        "bi_xs": f64([0.0, 1e-3, 0.25, 0.5, 0.75, 1.0]),
        "bi_asp": f64([0.0, -1.0, 1.0, 1.0, 1.0, 1.0, 2.0, _NAN, _INF, 1.0]),
        "bi_bsp": f64([1.0, 2.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, _NAN]),
        "bi_xsp": f64([0.5, 0.5, 0.5, -0.1, 1.1, _NAN, 1.0, 0.0, 0.5, 0.5]),
        "lb": f64([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [3.0, 4.5, 0.2], [10.0, 20.0, 1e3],
                   [-0.5, 2.0, 1.0]]),
        "lb32": f32([[1.0, 2.0], [0.5, 0.5], [3.0, 4.5], [10.0, 20.0]]),
        "lb_empty": f64(np.zeros((2, 0))),
        "xl_x": f64([[0.0], [1.0], [-2.5], [3.0]]),
        "xl_y": f64([[-0.5, 0.0, 1e-10, 1.0, 10.0, 1e10]]),
        "xl_x32": f32([[0.0], [1.0], [-2.5]]), "xl_y32": f32([[-0.5, 0.0, 1e-6, 1.0, 1e6]]),
        "xl_xsp": f64([[0.0], [-0.0], [1.0], [-1.0], [_INF], [_NAN]]),
        "xl_ysp": f64([[-2.0, -1.0, 0.0, _INF, -_INF, _NAN]]),
    }


def _unary(fn, path, keys):
    """Cases of one unary function over inputs (key, differentiate?)."""
    return [(f"{fn}_{key}", path, [f"@{key}"], {}, [f"@{key}"] if grad else [])
            for key, grad in keys]


CASES = (
    _unary("lgamma", "lgamma", [("g64", True), ("g32", True), ("g32neg", True), ("gsp", False)])
    # TF's float32 polygamma (digamma's gradient) is wrong for x < -9 (0.0357 for
    # trigamma(-10.7), not 14.99): g32neg has no gradient here, see the test
    + _unary("digamma", "digamma", [("g64", True), ("g32", True), ("g32neg", False),
                                    ("gsp", False)])
    + _unary("math_lgamma", "math.lgamma", [("g32", False)])
    + _unary("i0", "math.bessel_i0", [("b64", True), ("b32", True), ("bsp", False)])
    + _unary("i1", "math.bessel_i1", [("b64", True), ("b32", True), ("bsp", False)])
    # no float32 gradients at large |x|: i1e - sign(x) i0e cancels to 1/(2x) of each
    + _unary("i0e", "math.bessel_i0e", [("b64big", True), ("b32big", False), ("b32", True),
                                        ("bsp", False)])
    + _unary("i1e", "math.bessel_i1e", [("b64big", True), ("b32big", False), ("b32", True),
                                        ("bsp", False)])
    + _unary("special_i0", "math.special.bessel_i0", [("b32", False)])
    + _unary("special_i1e", "math.special.bessel_i1e", [("b32", False)])
    + _unary("erfinv", "math.erfinv", [("e64", True), ("e32", True), ("esp", False)])
    + _unary("erfcinv", "math.erfcinv", [("c64", True), ("c32", True), ("csp", False)])
    + _unary("ndtri", "math.ndtri", [("n64", True), ("n32", True), ("nsp", False)])
    + [
        ("polygamma64", "polygamma", ["@pg_n", "@pg_x"], {}, ["@pg_x"]),
        ("polygamma32", "math.polygamma", ["@pg_n32", "@pg_x32"], {}, ["@pg_x32"]),
        ("polygamma_sp", "polygamma", ["@pg_nsp", "@pg_xsp"], {}, []),
        ("zeta64", "zeta", ["@z_s", "@z_q"], {}, ["@z_q"]),
        ("zeta_negq", "zeta", ["@z_s_int", "@z_q_neg"], {}, ["@z_q_neg"]),
        ("zeta32", "math.zeta", [], {"x": "@z_s32", "q": "@z_q32"}, ["@z_q32"]),
        ("zeta_sp", "zeta", ["@z_ssp", "@z_qsp"], {}, []),
        ("igamma64", "igamma", ["@ig_a", "@ig_x"], {}, ["@ig_x"]),
        ("igammac64", "igammac", ["@ig_a", "@ig_x"], {}, ["@ig_x"]),
        ("igamma32", "math.igamma", ["@ig_a32", "@ig_x32"], {}, ["@ig_x32"]),
        ("igammac32", "math.igammac", ["@ig_a32", "@ig_x32"], {}, ["@ig_x32"]),
        ("igamma_sp", "igamma", ["@ig_asp", "@ig_xsp"], {}, []),
        ("igammac_sp", "igammac", ["@ig_asp", "@ig_xsp"], {}, []),
        ("betainc64", "betainc", ["@bi_a", "@bi_b", "@bi_x"], {}, ["@bi_x"]),
        ("betainc32", "math.betainc", ["@bi_a32", "@bi_b32", "@bi_x32"], {}, ["@bi_x32"]),
        ("betainc_scalar_ab", "betainc", [2.5, 0.5, "@bi_xs"], {}, []),
        ("betainc_sp", "betainc", ["@bi_asp", "@bi_bsp", "@bi_xsp"], {}, []),
        ("lbeta64", "lbeta", ["@lb"], {}, ["@lb"]),
        ("lbeta32", "math.lbeta", ["@lb32"], {}, ["@lb32"]),
        ("lbeta_empty", "lbeta", ["@lb_empty"], {}, []),
        ("xlog1py64", "math.xlog1py", ["@xl_x", "@xl_y"], {}, ["@xl_x", "@xl_y"]),
        ("xlog1py32", "math.xlog1py", ["@xl_x32", "@xl_y32"], {}, ["@xl_x32", "@xl_y32"]),
        ("xlog1py_sp", "math.xlog1py", ["@xl_xsp", "@xl_ysp"], {}, []),
    ]
)
