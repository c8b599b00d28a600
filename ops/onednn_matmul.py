"""Matrix products with constant float32 weights through oneDNN's matmul, when the
oneDNN backend is active (ops/onednn.py).

MKL's packed GEMM (ops/blas.py) keeps a pack of each weight matrix, but its packs were
several times the matrix (a 256 x 1024 float32 matrix, 1 MB, packed into 7.1 MB on
AMD EPYC Zen 4), so in a model, where each layer's weights come from memory, the
product waits on that traffic. oneDNN's matmul reorders the weights once into its
own blocked layout, the same size as the matrix, and runs its brgemm AVX-512/AVX2
kernels on it. Measured per
product, one thread, AMD EPYC Zen 4, caches flushed before each call (warm in
brackets), MKL packed -> oneDNN: 128 x 256 @ 256 x 1024 1036 (763) -> 726 (611) us,
128 x 1024 @ 1024 x 256 934 (769) -> 697 (629) us, 128 x 256 @ 256 x 256 421 (235) ->
258 (164) us. Products with fewer than _MIN_ROWS rows (a batch-1 classifier's
matrix-vector product, which only streams the weights) or under _MIN_MULTIPLY_ADDS
stay with MKL or numpy. Results differ from the GEMMs' in the last bits.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ExecutionError
from .common import per_view
from .onednn import (_ANY, _ARG_BIAS, _ARG_DST, _ARG_SCRATCHPAD, _ARG_SRC, _ARG_WEIGHTS,
                     _QUERY_WEIGHTS, Primitive, StreamState, _active_library,
                     _aligned_floats, _arguments, _Declined, reordered_weights,
                     thread_state)

_MIN_ROWS = 8
_MIN_MULTIPLY_ADDS = 1 << 18
_PLANS_PER_WEIGHTS = 4  # row counts with a plan per weight matrix; others go to MKL
_MAX_DIM = 1 << 40


# activations oneDNN applies as it writes the product (eltwise algorithm kinds)
ACTIVATIONS = {"gelu": 0x31, "gelu_tanh": 0x2b}


class MatmulPlan:
    """a @ w (+ bias) (then `activation`, a key of ACTIVATIONS) for C-contiguous a of
    `rows` rows and the constant (K, N) float32 matrix w (any strides), w reordered
    once.

    Raises:
        _Declined: oneDNN has no fast kernel for the product.
        ExecutionError: oneDNN failed otherwise.
    """

    def __init__(self, lib, rows, w, bias=None, activation=None):
        self.lib = lib
        k, n = w.shape
        self._descs = [lib.memory_desc((rows, k), strides=(k, 1)),
                       lib.memory_desc((k, n), _ANY),
                       lib.memory_desc((k, n), strides=tuple(s // 4 for s in w.strides)),
                       lib.memory_desc((rows, n), strides=(n, 1)),
                       lib.memory_desc((1, n), strides=(n, 1))]
        src, any_w, user_w, dst, bias_md = self._descs
        self.product = Primitive(lib, lambda pd, attr: lib.matmul_primitive_desc_create(
            pd, lib.engine, src, any_w, bias_md if bias is not None else None, dst, attr),
            "creating a matmul", ACTIVATIONS[activation] if activation else None)
        self._memories = []
        self._weights, weights_memory = reordered_weights(
            lib, user_w, self.product.md(_QUERY_WEIGHTS), w)
        self._memories.append(weights_memory)
        self.args = [(_ARG_WEIGHTS, weights_memory)]
        if bias is not None:
            self._bias = np.ascontiguousarray(bias, dtype=np.float32)
            self._memories.append(lib.memory(bias_md, self._bias.ctypes.data))
            self.args.append((_ARG_BIAS, self._memories[-1]))
        self.w, self.bias = w, bias  # held: their identity marks the plan's
        self._threads = threading.local()

    def run(self, a: np.ndarray, y: np.ndarray) -> None:
        """y = a @ w (y C-contiguous float32 (rows, N)).

        Raises:
            ExecutionError: oneDNN failed.
        """
        state = thread_state(self._threads, lambda: _ThreadState(self))
        self.lib.memory_set_data_handle(state.src, a.ctypes.data)
        self.lib.memory_set_data_handle(state.dst, y.ctypes.data)
        state.execute(state.steps, "the matmul")

    def __del__(self):
        lib = self.lib
        for mem in getattr(self, "_memories", ()):
            lib.memory_destroy(mem)
        for md in getattr(self, "_descs", ()):
            lib.memory_desc_destroy(md)


class _ThreadState(StreamState):
    """One thread's stream, scratchpad and source/result memory objects for a plan."""

    def __init__(self, plan):
        super().__init__(plan.lib)
        src, _, _, dst, _ = plan._descs
        self.src, self.dst = self.memory(src), self.memory(dst)
        args = [(_ARG_SRC, self.src), (_ARG_DST, self.dst)] + plan.args
        product = plan.product
        if product.scratchpad_size:
            self.scratchpad = _aligned_floats(product.scratchpad_size // 4 + 1)
            args.append((_ARG_SCRATCHPAD, self.memory(product.scratchpad_md,
                                                      self.scratchpad.ctypes.data)))
        self.steps = [(product.primitive,) + _arguments(args)]


def matmul_constant(a: np.ndarray, w: np.ndarray, cache: dict, bias=None,
                    activation=None) -> np.ndarray | None:
    """a @ w for float32 2-D a (M, K) and w (K, N), where w holds the same values on
    every call for as long as `cache` lives (a model's weights), through oneDNN's
    matmul with w's reordered copy in `cache`; plus `bias` (a constant float32 (N,)
    vector) and then `activation` (a key of ACTIVATIONS) as oneDNN writes the product.
    None when the backend is not oneDNN, the product is small, or oneDNN has no fast
    kernel for it (the caller's GEMM runs).

    Raises:
        InvalidArgumentError: ONEGRAPH_DNNL holds an unknown value.
        UnavailableError: ONEGRAPH_DNNL=onednn and oneDNN cannot be loaded.
        ExecutionError: oneDNN failed.
    """
    lib = _active_library()
    if lib is None or type(a) is not np.ndarray or type(w) is not np.ndarray \
            or a.dtype != np.float32 or w.dtype != np.float32 or a.ndim != 2 \
            or w.ndim != 2 or a.shape[1] != w.shape[0]:
        return None
    (m, k), n = a.shape, w.shape[1]
    if m < _MIN_ROWS or m * n * k < _MIN_MULTIPLY_ADDS or max(m, n, k) > _MAX_DIM \
            or any(s % 4 or s < 0 for s in w.strides) or bias is not None and (
                type(bias) is not np.ndarray or bias.dtype != np.float32
                or bias.shape not in ((n,), (1, n))):
        return None
    # (oneDNN's fast kernels want dense rows: with a row stride it picks a GEMM)
    a = np.ascontiguousarray(a)
    # (Gemm's transB makes a new view of the constant on every call)
    plans = per_view(cache, "onednn.matmul", w)
    key = (m, activation)
    plan = plans.get(key)
    if plan is not None and plan is not False and plan.bias is not bias:
        plan = None  # another bias than the plan's
        del plans[key]
    if plan is None:
        if len(plans) >= _PLANS_PER_WEIGHTS:
            return None
        try:
            plan = MatmulPlan(lib, m, w, bias, activation)
        except (_Declined, ExecutionError):
            plan = False  # MKL or numpy multiplies
        plans[key] = plan
    if plan is False:
        return None
    y = np.empty((m, n), np.float32)
    plan.run(a, y)
    return y
