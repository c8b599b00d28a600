"""Matrix products with a constant operand through Intel MKL's packed GEMM, when installed
(and MKL's vector math for the normal CDF and erf).

numpy's matmul (OpenBLAS, in numpy's wheels) copies both operands into its packed panel
layout on every call. A model's weights never change between runs, and onnxruntime
packs them once when a session starts (MLAS's pre-packed weights). Intel MKL, the
optional `mkl` extra (x86-64), does the same through its packed GEMM
(cblas_?gemm_pack, cblas_?gemm_compute): a kernel that multiplies by a constant matrix
keeps its packed copy in its per-node cache and only the other operand moves. Measured
per product, one thread, Intel Sapphire Rapids (AVX-512), weights not in cache, numpy
against MKL packed: 128x256 @ 256x1024 605 -> 435 us, 128x768 @ 768x3072 5260 -> 3571 us,
32x512 @ 512x512 243 -> 146 us, 8x1024 @ 1024x1024 620 -> 195 us. A call into MKL costs
some 5-20 us more than numpy's, so small products (under _MIN_MULTIPLY_ADDS, fewer
than _MIN_ROWS rows on the moving side, or a constant under _MIN_CONSTANT_ELEMENTS)
stay with numpy, which wins there.

The backend is chosen by the environment variable ONEGRAPH_BLAS, read at first use:
"auto" (the default: MKL when its library loads, numpy otherwise), "numpy", or "mkl"
(MKL or an error). `use_backend` changes it at run time. MKL is loaded from the `mkl`
wheel's libmkl_rt (or the path in ONEGRAPH_MKL_LIBRARY, or the system's mkl_rt) with
32-bit integers (the LP64 interface); its thread count follows MKL_NUM_THREADS as usual.
Results differ from numpy's in the last bits (another summation order), as any two BLAS
libraries do; float32 and float64 only, other dtypes always use numpy. A pack takes
about as much memory as the constant itself, for as long as its node's plan lives.

The same backend choice covers two of MKL's vector-math functions (high accuracy):
`normal_cdf`, Phi(x), from which exact Gelu is x * Phi(x) in two passes instead of
numpy's two dozen (131k float32 values 363 -> 80 us, within 2 ulp of the exact value
over float32's normal range, where numpy's polynomial keeps 1.3e-6 relative), and `erf`
(the Erf op and every erf() user: 131k float32 values 324 -> 81 us, within an ulp).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

import numpy as np

from .backend_choice import BackendChoice
from .common import per_view

BACKENDS = ("auto", "numpy", "mkl")  # as _switch.names

# Measured crossovers (see the module docstring): below either, numpy is faster
_MIN_MULTIPLY_ADDS = 1 << 22
_MIN_ROWS = 8
# ... and a constant this small costs numpy little to pack, while MKL runs behind it in
# the model when the other operand is long: ResNet-50's 1x1 convs on 56x56 images,
# 256 x 65 (weights and bias) @ 65 x 3136 2.2 ms against 1.2 and 64 x 256 @ 256 x 3136
# 1.4 against 1.15; from 128 x 512 up MKL gains (0.80 ms against 0.85)
_MIN_CONSTANT_ELEMENTS = 1 << 16
# ... unless the product accumulates into `out` (a residual): MKL then saves the add
# pass numpy needs after its GEMM, which outweighs its slower small-constant product:
# 256 x 65 @ 65 x 3136 plus the add 1196 -> 916 us, 512 x 129 @ 129 x 784 930 -> 716 us
# (ResNet-50's 56x56 and 28x28 residual 1x1 convs; the model 0.7-1.8% faster)
_MIN_ACCUMULATING_CONSTANT = 0
# MKL's LP64 interface takes 32-bit sizes and leading dimensions
_MAX_DIM = (1 << 31) - 1
# Packs of one constant for this many shapes of the moving operand, then plain numpy
# (a model fed ever new batch sizes must not grow a pack per size)
_PACKS_PER_CONSTANT = 4

# CBLAS enumerations (mkl_cblas.h)
_ROW_MAJOR, _NO_TRANS, _TRANS, _PACKED = 101, 111, 112, 151
_A_MATRIX, _B_MATRIX = 161, 162
_LP64 = 0

# MKL vector-math functions taken (vms<name> / vmd<name>: n, a, r, mode)
_VECTOR_FUNCTIONS = ("CdfNorm", "Erf")

class _Mkl:
    """The packed-GEMM and vector-math entry points of one loaded libmkl_rt, per
    dtype."""

    def __init__(self, lib):
        p, i, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
        self.path = getattr(lib, "_name", "")
        self.get_size, self.pack, self.compute, self.vector = {}, {}, {}, {}
        for dtype, prefix, real in ((np.dtype(np.float32), "s", ctypes.c_float),
                                    (np.dtype(np.float64), "d", ctypes.c_double)):
            get_size = getattr(lib, f"cblas_{prefix}gemm_pack_get_size")
            get_size.restype, get_size.argtypes = sz, [i, i, i, i]
            pack = getattr(lib, f"cblas_{prefix}gemm_pack")
            pack.restype, pack.argtypes = None, [i, i, i, i, i, i, real, p, i, p]
            compute = getattr(lib, f"cblas_{prefix}gemm_compute")
            compute.restype = None
            compute.argtypes = [i, i, i, i, i, i, p, i, p, i, real, p, i]
            self.get_size[dtype], self.pack[dtype], self.compute[dtype] = \
                get_size, pack, compute
            for name in _VECTOR_FUNCTIONS:
                fn = getattr(lib, f"vm{prefix}{name}")
                fn.restype, fn.argtypes = None, [i, p, p, ctypes.c_int64]
                self.vector[name, dtype] = fn


def _library_paths():
    """Where libmkl_rt may be: ONEGRAPH_MKL_LIBRARY, the `mkl` wheel's files, the
    system's library path."""
    explicit = os.environ.get("ONEGRAPH_MKL_LIBRARY")
    if explicit:
        yield explicit
        return
    try:
        from importlib import metadata
        files = metadata.files("mkl") or ()
    except Exception:  # not installed, or metadata unreadable: look elsewhere
        files = ()
    for f in files:
        name = f.name
        if name.startswith("libmkl_rt.so") or name in ("mkl_rt.2.dll", "libmkl_rt.2.dylib"):
            yield str(f.locate())
    found = ctypes.util.find_library("mkl_rt")
    if found:
        yield found


def _load_mkl():
    """The loaded MKL, or None when no libmkl_rt loads with the LP64 interface."""
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
            set_layer = lib.MKL_Set_Interface_Layer
            set_layer.restype, set_layer.argtypes = ctypes.c_int, [ctypes.c_int]
            # 32-bit integers whatever MKL_INTERFACE_LAYER says; a library another
            # module already set to ILP64 reports that layer back and is not used
            if set_layer(_LP64) != _LP64:
                continue
            return _Mkl(lib)
        except (OSError, AttributeError):
            continue
    return None


_switch = BackendChoice(
    "ONEGRAPH_BLAS", "mkl", _load_mkl,
    "Intel MKL's libmkl_rt could not be loaded: install the 'mkl' extra (pip install "
    "'onegraph[mkl]', x86-64) or set ONEGRAPH_MKL_LIBRARY to the library's path")


def _active_mkl():
    """The loaded MKL when the backend is MKL, else None.

    Raises:
        InvalidArgumentError: ONEGRAPH_BLAS holds an unknown value.
        UnavailableError: "mkl" was asked for and no libmkl_rt loads.
    """
    return _switch.active()


def backend() -> str:
    """The backend products with a constant operand use now: "mkl" or "numpy".

    Raises:
        InvalidArgumentError: ONEGRAPH_BLAS holds an unknown value.
        UnavailableError: ONEGRAPH_BLAS=mkl and MKL cannot be loaded.
    """
    return _switch.backend()


def use_backend(name: str) -> str:
    """Choose the backend for the products that follow ("auto", "numpy" or "mkl", as
    ONEGRAPH_BLAS) and return the one now in use. Packs already made stay valid.

    Raises:
        InvalidArgumentError: `name` is not one of BACKENDS.
        UnavailableError: "mkl" and MKL cannot be loaded (the backend is then
            unchanged).
    """
    return _switch.use(name)


def _layout(x):
    """(CBLAS transpose flag, leading dimension) that describe the 2-D array x in
    row-major terms, or None when its strides fit neither orientation."""
    rows, cols = x.shape
    step = x.itemsize
    s0, s1 = x.strides
    if s1 == step and s0 % step == 0 and s0 // step >= max(1, cols):
        return _NO_TRANS, s0 // step
    if s0 == step and s1 % step == 0 and s1 // step >= max(1, rows):
        return _TRANS, s1 // step
    return None


def _aligned(nbytes: int) -> np.ndarray:
    """A byte buffer of nbytes starting on a 64-byte boundary (MKL's own alignment)."""
    raw = np.empty(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + nbytes]


def matmul_constant(a: np.ndarray, b: np.ndarray, cache: dict, constant: str = "b",
                    out: np.ndarray | None = None,
                    accumulate: bool = False) -> np.ndarray | None:
    """a @ b for 2-D a (M, K) and b (K, N) of one float dtype, where operand `constant`
    ("a" or "b") holds the same values on every call for as long as `cache` lives (a
    model's weights, or a kernel's cached copy of them). Through MKL's packed GEMM,
    with the constant's packed copy kept in `cache`, when the backend is MKL and the
    product is large enough to gain; otherwise None, and the caller multiplies with
    numpy.

    The pack is kept under the identity of the array that owns the constant's memory
    (its base, for a transposed or reshaped view made per call) and the view's place
    in it. `out`: a (M, N) array of that dtype with contiguous rows, sharing no memory with
    a or b, to write into (a strided row view is fine); the result is then `out`.
    `accumulate`: add the product to what `out` holds (GEMM's beta = 1: a residual
    added in the same pass), which needs `out`.

    Raises:
        InvalidArgumentError: ONEGRAPH_BLAS holds an unknown value.
        UnavailableError: ONEGRAPH_BLAS=mkl and MKL cannot be loaded.
    """
    mkl = _active_mkl()
    if mkl is None or a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype \
            or a.dtype not in mkl.compute or type(a) is not np.ndarray \
            or type(b) is not np.ndarray:
        return None
    m, k = a.shape
    n = b.shape[1]
    moving = n if constant == "a" else m
    least = _MIN_ACCUMULATING_CONSTANT if accumulate else _MIN_CONSTANT_ELEMENTS
    if b.shape[0] != k or moving < _MIN_ROWS or m * n * k < _MIN_MULTIPLY_ADDS \
            or (a.size if constant == "a" else b.size) < least \
            or max(m, n, k) > _MAX_DIM:
        return None
    la, lb = _layout(a), _layout(b)
    if la is None or lb is None or max(la[1], lb[1]) > _MAX_DIM:
        return None
    if out is None:
        if accumulate:
            return None
        out = np.empty((m, n), a.dtype)
    elif out.shape != (m, n) or out.dtype != a.dtype or out.strides[1] != out.itemsize \
            or out.strides[0] % out.itemsize or out.strides[0] < out.itemsize * n \
            or np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return None
    packed = _packed(mkl, a if constant == "a" else b, la if constant == "a" else lb,
                     constant, m, n, k, cache)
    if packed is None:
        return None
    ldc = out.strides[0] // out.itemsize
    beta = 1.0 if accumulate else 0.0
    if constant == "a":
        mkl.compute[a.dtype](_ROW_MAJOR, _PACKED, lb[0], m, n, k, packed.ctypes.data,
                             la[1], b.ctypes.data, lb[1], beta, out.ctypes.data, ldc)
    else:
        mkl.compute[a.dtype](_ROW_MAJOR, la[0], _PACKED, m, n, k, a.ctypes.data, la[1],
                             packed.ctypes.data, lb[1], beta, out.ctypes.data, ldc)
    return out


def _packed(mkl, w, layout, constant, m, n, k, cache):
    """The packed copy of the constant w for this product's (M, N, K), from `cache` or
    made and put there; None when that view of the constant already has its share of
    packs (_PACKS_PER_CONSTANT shapes)."""
    packs = per_view(cache, ("blas.packed", constant), w)
    packed = packs.get((m, n, k))
    if packed is not None or len(packs) >= _PACKS_PER_CONSTANT:
        return packed
    ident = _A_MATRIX if constant == "a" else _B_MATRIX
    dtype = w.dtype
    size = int(mkl.get_size[dtype](ident, m, n, k))
    if size <= 0:  # MKL declined the shape: numpy multiplies
        return None
    packed = _aligned(size)
    mkl.pack[dtype](_ROW_MAJOR, ident, layout[0], m, n, k, 1.0, w.ctypes.data, layout[1],
                    packed.ctypes.data)
    packs[(m, n, k)] = packed
    return packed


# Vector math mode: high accuracy (VML_HA; under 2 ulp over float32's normal range,
# measured against math.erfc), no error status kept (VML_ERRMODE_NOERR), the CPU's
# denormal handling left as it is
_VML_MODE = 0x2 | 0x2000
# MKL_INT (LP64) counts: longer arrays go in parts of this many values
_VML_MAX_COUNT = 1 << 30


def normal_cdf(x: np.ndarray, out: np.ndarray) -> np.ndarray | None:
    """Phi(x) = 0.5 (1 + erf(x / sqrt 2)), the standard normal CDF, through MKL's
    vmsCdfNorm / vmdCdfNorm (`_vector_math`): `out`, or None when numpy is to compute
    it. Phi(-inf) = 0, Phi(inf) = 1, NaN stays NaN.

    Raises:
        InvalidArgumentError: ONEGRAPH_BLAS holds an unknown value.
        UnavailableError: ONEGRAPH_BLAS=mkl and MKL cannot be loaded.
    """
    return _vector_math("CdfNorm", x, out)


def erf(x: np.ndarray, out: np.ndarray) -> np.ndarray | None:
    """The error function through MKL's vmsErf / vmdErf (`_vector_math`): `out`, or None
    when numpy is to compute it. erf(+-inf) = +-1, NaN stays NaN.

    Raises:
        InvalidArgumentError: ONEGRAPH_BLAS holds an unknown value.
        UnavailableError: ONEGRAPH_BLAS=mkl and MKL cannot be loaded.
    """
    return _vector_math("Erf", x, out)


def _vector_math(name, x, out):
    """MKL's vector-math function `name` of a C-contiguous float32 or float64 array x,
    written into `out` (C-contiguous, x's shape and dtype, may be x) and returned, when
    the backend is MKL; None, with nothing written, otherwise."""
    mkl = _active_mkl()
    fn = None if mkl is None else mkl.vector.get((name, x.dtype))
    if fn is None or out.dtype != x.dtype or out.shape != x.shape \
            or type(x) is not np.ndarray \
            or not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    flat_x, flat_y = x.reshape(-1), out.reshape(-1)
    item = x.itemsize
    for start in range(0, flat_x.size, _VML_MAX_COUNT):
        count = min(_VML_MAX_COUNT, flat_x.size - start)
        fn(count, flat_x.ctypes.data + start * item, flat_y.ctypes.data + start * item,
           _VML_MODE)
    return out


def _reset_for_tests():
    """Forget the requested backend (ONEGRAPH_BLAS is read again at next use)."""
    _switch.reset()
