"""Compiled kernels through numba, when installed (the optional `jit` extra).

Some kernels do little arithmetic per value read: a depthwise conv does kh*kw
multiply-adds per output and no reduction over channels, a pool kh*kw comparisons or
additions. numpy can only run them as
whole-array passes (one per tap, each reading and writing memory), so they run at
numpy's memory speed, not the CPU's; onnxruntime runs them as one compiled loop over
the image. With numba such a kernel is one compiled loop too, vectorised by LLVM for
the machine it runs on. Measured (conv_nd, one thread, Intel Sapphire Rapids, float32,
numpy's forms against numba's): depthwise 3x3 pad 1 136x28x28 stride 1 248 -> 85 us,
32x112x112 1215 -> 248, 112x56x56 stride 2 621 -> 251, 272x14x14 stride 2 105 -> 77,
5x5 pad 2 240x28x28 946 -> 405; ShuffleNet 2.07x onnxruntime's time -> 1.66x. Pools:
3x3/2 max 64x112x112 772 -> 328 us (where numpy's passes stay faster, small images and
other shapes, they keep them: ops/pool.py's rule). BatchNormalization + Relu folded to
per-channel passes (train/optimize.py) in one pass: DenseNet-121 1.42x -> 1.35x.

The backend is chosen by the environment variable ONEGRAPH_JIT, read at first use:
"auto" (the default: numba when it imports, numpy otherwise), "numpy", or "numba"
(numba or an error); `use_backend` changes it at run time. The compiled kernels live in
their op family's `*_jit` module (ops/conv_jit.py, ops/pool_jit.py,
ops/normalization_jit.py), imported only when
this backend is numba: numba is never imported otherwise. Each kernel compiles at its
first call per dtype (about a second) and numba caches the machine code on disk
(`__pycache__` beside the module, or NUMBA_CACHE_DIR), so later processes load it.
Results may differ from the numpy path's in the last bits (a multiply-add may be fused).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import UnavailableError
from .backend_choice import BackendChoice

BACKENDS = ("auto", "numpy", "numba")  # as _switch.names


def _load_numba():
    """The numba module, or None when it does not import."""
    try:
        import numba
    except Exception:  # not installed, or broken against this numpy: numpy kernels
        return None
    return numba


_switch = BackendChoice(
    "ONEGRAPH_JIT", "numba", _load_numba,
    "numba could not be imported: install the 'jit' extra (pip install 'onegraph[jit]')")

_modules: dict[str, ModuleType] = {}
_failures: dict[str, Exception] = {}  # families whose kernels failed to load, why


def kernels(family: str) -> ModuleType | None:
    """The compiled-kernel module of an op family ("conv" gives ops/conv_jit.py) when
    the backend is numba, else None.

    Raises:
        InvalidArgumentError: ONEGRAPH_JIT holds an unknown value.
        UnavailableError: ONEGRAPH_JIT=numba and numba cannot be imported or the
            family's kernels cannot be loaded ("auto" then gives None: numpy's kernels).
    """
    if _switch.active() is None:
        return None
    module = _modules.get(family)
    if module is None and family not in _failures:
        try:
            module = _modules[family] = importlib.import_module(
                f"{__package__}.{family}_jit")
        except Exception as e:
            # numba imports but cannot take the kernels (no writable cache location for
            # cache=True, an LLVM it cannot use, ...): numpy's kernels do the work
            _failures[family] = e
    if module is None and _switch.requested() == "numba":
        e = _failures[family]
        raise UnavailableError(
            f"ONEGRAPH_JIT=numba, but the compiled kernels of {family!r} could not be "
            f"loaded: {type(e).__name__}: {e}") from e
    return module


def backend() -> str:
    """The backend the kernels with a compiled form use now: "numba" or "numpy".

    Raises:
        InvalidArgumentError: ONEGRAPH_JIT holds an unknown value.
        UnavailableError: ONEGRAPH_JIT=numba and numba cannot be imported.
    """
    return _switch.backend()


def use_backend(name: str) -> str:
    """Choose the backend for the kernels that follow ("auto", "numpy" or "numba", as
    ONEGRAPH_JIT) and return the one now in use.

    Raises:
        InvalidArgumentError: `name` is not one of BACKENDS.
        UnavailableError: "numba" and numba cannot be imported (the backend is then
            unchanged).
    """
    return _switch.use(name)


def _reset_for_tests():
    """Forget the requested backend (ONEGRAPH_JIT is read again at next use)."""
    _switch.reset()
