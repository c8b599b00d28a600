"""2-D convolutions through Intel's oneDNN, when installed (the optional `onednn` extra).

A convolution written as im2col plus one GEMM spends its time in the GEMM's packing and
in a columns matrix kh*kw times the input's size; onnxruntime's MLAS runs convs
directly on channel-blocked images (NCHWc: 16 channels a vector, an output block's
accumulators in registers), and oneDNN's AVX-512/AVX2 JIT kernels do the same. Here a
float32 Conv of a Session's plan (its weights fixed while the node's cache lives) is
run by one oneDNN convolution primitive on blocked copies of its input and output:
the input is reordered into the layout the primitive picked (nChw16c on AVX-512), the
primitive adds the bias and applies the Relu as it writes, and its output is reordered
back into the NCHW result (or the Concat slice it was asked to fill). The weights are
reordered once per plan. Measured per Conv (one thread, Sapphire Rapids, bias and
Relu, the two reorders included), im2col + GEMM (or Winograd) against oneDNN:
SqueezeNet's 16 -> 64 3x3 on 55x55 941 -> 446 us, 32 -> 128 on 27x27 663 -> 395;
the rule of which convs come here is conv.py's (`_onednn_pays`).

The same backend runs the Session's conv-net chains, whole runs of conv-net steps kept
in the blocked layout (ops/onednn_chain.py, train/onednn_chains.py), and products by
constant float32 weights (ops/onednn_matmul.py, train/fuse_dense.py).

The backend is chosen by the environment variable ONEGRAPH_DNNL, read at first use:
"auto" (the default: oneDNN when its library loads, numpy otherwise), "numpy", or
"onednn" (oneDNN or an error); `use_backend` changes it at run time. The library is the
`onednn-cpu-gomp` wheel's libdnnl (or the path in ONEGRAPH_DNNL_LIBRARY); its thread
count follows OMP_NUM_THREADS. A process forked after oneDNN was loaded runs conv.py's
own paths: GNU OpenMP's thread pool does not survive fork, and a forked child's first
oneDNN call on several threads would hang. Results differ from the GEMM paths' in the
last bits (another summation order). Threads may share a plan: each thread has its own stream,
scratchpad and blocked buffers (oneDNN's primitives are thread-safe with the
scratchpad given by the caller).
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from ..errors import ExecutionError
from .backend_choice import BackendChoice

BACKENDS = ("auto", "numpy", "onednn")  # as _switch.names

# oneDNN 3.x C API enumerations (oneapi/dnnl/dnnl_types.h, dnnl_common_types.h)
_SUCCESS, _UNIMPLEMENTED = 0, 3
_CPU_ENGINE, _IN_ORDER_STREAM = 1, 1
_F32 = 3
_ANY, _A, _ABCD, _ABCDE = 1, 2, 5, 6
_FORWARD_INFERENCE, _CONVOLUTION_DIRECT, _ELTWISE_RELU = 96, 1, 0x20
_SCRATCHPAD_USER = 1
_QUERY_IMPL_INFO = 8
_QUERY_SRC, _QUERY_WEIGHTS, _QUERY_DST, _QUERY_SCRATCHPAD = 129, 131, 133, 136
_ARG_SRC, _ARG_DST, _ARG_WEIGHTS, _ARG_BIAS, _ARG_SCRATCHPAD = 1, 17, 33, 41, 80
_MAX_DIMS = 12
# oneDNN's fallbacks when no JIT kernel fits: its reference loops (a 3x3/2 stem on
# blocked layouts took 1.3 s against 1.2 ms) and im2col + its GEMM on plain layouts
# (what conv.py does itself)
_SLOW_IMPLEMENTATIONS = ("ref", "gemm", "x64:gemm")
_STATUS = {1: "out of memory", 2: "invalid arguments", 3: "unimplemented",
           4: "iterator ends", 5: "runtime error", 6: "not required"}

_Dims = ctypes.c_int64 * _MAX_DIMS
_Handle = ctypes.c_void_p


class _ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", _Handle)]


class _Declined(Exception):
    """oneDNN has no implementation for this convolution (the caller's own path runs)."""


def _arguments(pairs):
    """(count, C array) of execution arguments from (argument id, memory) pairs."""
    return len(pairs), (_ExecArg * len(pairs))(*[_ExecArg(k, v) for k, v in pairs])


def _dims(values) -> _Dims:
    d = _Dims()
    for i, v in enumerate(values):
        d[i] = int(v)
    return d


class _Library:
    """The entry points of one loaded libdnnl, with their C signatures, and its CPU
    engine."""

    def __init__(self, lib):
        h, i, p = _Handle, ctypes.c_int, ctypes.POINTER
        status = ctypes.c_int
        self.path = getattr(lib, "_name", "")
        signatures = {
            "dnnl_engine_create": (status, [p(h), i, ctypes.c_size_t]),
            "dnnl_stream_create": (status, [p(h), h, ctypes.c_uint]),
            "dnnl_stream_wait": (status, [h]),
            "dnnl_stream_destroy": (status, [h]),
            "dnnl_memory_desc_create_with_tag": (status, [p(h), i, _Dims, i, i]),
            "dnnl_memory_desc_create_with_strides": (status, [p(h), i, _Dims, i, _Dims]),
            "dnnl_memory_desc_destroy": (status, [h]),
            "dnnl_memory_desc_equal": (i, [h, h]),
            "dnnl_memory_desc_get_size": (ctypes.c_size_t, [h]),
            "dnnl_memory_create": (status, [p(h), h, h, h]),
            "dnnl_memory_set_data_handle": (status, [h, h]),
            "dnnl_memory_destroy": (status, [h]),
            "dnnl_primitive_attr_create": (status, [p(h)]),
            "dnnl_primitive_attr_destroy": (status, [h]),
            "dnnl_primitive_attr_set_scratchpad_mode": (status, [h, i]),
            "dnnl_primitive_attr_set_post_ops": (status, [h, h]),
            "dnnl_post_ops_create": (status, [p(h)]),
            "dnnl_post_ops_destroy": (status, [h]),
            "dnnl_post_ops_append_eltwise": (status, [h, i, ctypes.c_float,
                                                      ctypes.c_float]),
            "dnnl_convolution_forward_primitive_desc_create": (
                status, [p(h), h, i, i, h, h, h, h, _Dims, _Dims, _Dims, _Dims, h]),
            "dnnl_reorder_primitive_desc_create": (status, [p(h), h, h, h, h, h]),
            "dnnl_memory_desc_create_submemory": (status, [p(h), h, _Dims, _Dims]),
            "dnnl_post_ops_append_sum": (status, [h, ctypes.c_float, ctypes.c_int32, i]),
            "dnnl_pooling_forward_primitive_desc_create": (
                status, [p(h), h, i, i, h, h, _Dims, _Dims, _Dims, _Dims, _Dims, h]),
            "dnnl_concat_primitive_desc_create": (status, [p(h), h, h, i, i, p(h), h]),
            "dnnl_eltwise_forward_primitive_desc_create": (
                status, [p(h), h, i, i, h, h, ctypes.c_float, ctypes.c_float, h]),
            "dnnl_binary_primitive_desc_create": (status, [p(h), h, i, h, h, h, h]),
            "dnnl_matmul_primitive_desc_create": (status, [p(h), h, h, h, h, h, h]),
            "dnnl_lrn_forward_primitive_desc_create": (
                status, [p(h), h, i, i, h, h, ctypes.c_int64, ctypes.c_float,
                         ctypes.c_float, ctypes.c_float, h]),
            "dnnl_primitive_desc_query": (status, [h, i, i, h]),
            "dnnl_primitive_desc_query_md": (h, [h, i, i]),
            "dnnl_primitive_desc_destroy": (status, [h]),
            "dnnl_primitive_create": (status, [p(h), h]),
            "dnnl_primitive_execute": (status, [h, h, i, p(_ExecArg)]),
            "dnnl_primitive_destroy": (status, [h]),
        }
        for name, (restype, argtypes) in signatures.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name[len("dnnl_"):], fn)
        self.engine = _Handle()
        self.check(self.engine_create(ctypes.byref(self.engine), _CPU_ENGINE, 0),
                   "creating the CPU engine")

    @staticmethod
    def check(status: int, what: str) -> None:
        """Raise for a failed call: _Declined when oneDNN has no implementation,
        ExecutionError otherwise."""
        if status == _SUCCESS:
            return
        if status == _UNIMPLEMENTED:
            raise _Declined(what)
        raise ExecutionError(f"oneDNN: {what} failed: {_STATUS.get(status, status)}")

    def memory_desc(self, shape, tag=None, strides=None) -> _Handle:
        """A float32 memory descriptor of `shape` in format `tag` (or with element
        `strides`); the caller destroys it."""
        md = _Handle()
        if strides is not None:
            status = self.memory_desc_create_with_strides(
                ctypes.byref(md), len(shape), _dims(shape), _F32, _dims(strides))
        else:
            status = self.memory_desc_create_with_tag(
                ctypes.byref(md), len(shape), _dims(shape), _F32, tag)
        self.check(status, f"describing a {tuple(shape)} tensor")
        return md

    def memory(self, md, data=None) -> _Handle:
        """A memory object over `data` (an array's address, or none yet)."""
        mem = _Handle()
        self.check(self.memory_create(ctypes.byref(mem), md, self.engine,
                                      _Handle(data or 0)), "creating a memory object")
        return mem

    def primitive(self, pd) -> _Handle:
        """The primitive of a primitive descriptor."""
        prim = _Handle()
        self.check(self.primitive_create(ctypes.byref(prim), pd), "creating a primitive")
        return prim


def _library_paths():
    """Where libdnnl may be: ONEGRAPH_DNNL_LIBRARY, or the `onednn-cpu-gomp` wheel's
    files."""
    explicit = os.environ.get("ONEGRAPH_DNNL_LIBRARY")
    if explicit:
        yield explicit
        return
    try:
        from importlib import metadata
        files = metadata.files("onednn-cpu-gomp") or ()
    except Exception:  # not installed, or metadata unreadable
        files = ()
    for f in files:
        if f.name.startswith("libdnnl.so."):
            yield str(f.locate())


def _load_onednn():
    """The loaded oneDNN, or None when no libdnnl loads."""
    for path in _library_paths():
        try:
            return _Library(ctypes.CDLL(path))
        except (OSError, AttributeError, ExecutionError):
            continue
    return None


_switch = BackendChoice(
    "ONEGRAPH_DNNL", "onednn", _load_onednn,
    "oneDNN's libdnnl could not be loaded: install the 'onednn' extra (pip install "
    "'onegraph[onednn]', Linux x86-64) or set ONEGRAPH_DNNL_LIBRARY to the library's "
    "path")
_forked_after_load = False  # this process was forked from one that had loaded oneDNN


def _after_fork_in_child():
    global _forked_after_load
    if _switch.loaded:
        _forked_after_load = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _active_library():
    """The loaded oneDNN when the backend is oneDNN (and usable in this process), else
    None.

    Raises:
        InvalidArgumentError: ONEGRAPH_DNNL holds an unknown value.
        UnavailableError: ONEGRAPH_DNNL=onednn and oneDNN cannot be loaded.
    """
    lib = _switch.active()
    return None if _forked_after_load else lib


def backend() -> str:
    """The backend 2-D float32 convolutions may use now: "onednn" or "numpy" (always
    "numpy" in a process forked after oneDNN was loaded).

    Raises:
        InvalidArgumentError: ONEGRAPH_DNNL holds an unknown value.
        UnavailableError: ONEGRAPH_DNNL=onednn and oneDNN cannot be loaded.
    """
    return "numpy" if _active_library() is None else _switch.name


def use_backend(name: str) -> str:
    """Choose the backend for the convolutions that follow ("auto", "numpy" or "onednn",
    as ONEGRAPH_DNNL) and return the one now in use. Plans already made stay valid.

    Raises:
        InvalidArgumentError: `name` is not one of BACKENDS.
        UnavailableError: "onednn" and oneDNN cannot be loaded (the backend is then
            unchanged).
    """
    _switch.use(name)
    return backend()


def active() -> bool:
    """Whether convolutions go through oneDNN now.

    Raises:
        InvalidArgumentError: ONEGRAPH_DNNL holds an unknown value.
        UnavailableError: ONEGRAPH_DNNL=onednn and oneDNN cannot be loaded.
    """
    return _active_library() is not None


def _aligned_floats(count: int) -> np.ndarray:
    """A float32 buffer of `count` values starting on a 64-byte boundary."""
    raw = np.zeros(count + 16, np.float32)
    start = (-raw.ctypes.data % 64) // 4
    return raw[start:start + count]


class _Reorder:
    """A reorder primitive from one memory descriptor to another."""

    def __init__(self, lib, src_md, dst_md):
        self.pd = _Handle()
        lib.check(lib.reorder_primitive_desc_create(ctypes.byref(self.pd), src_md,
                                                    lib.engine, dst_md, lib.engine, None),
                  "creating a reorder")
        self.primitive = lib.primitive(self.pd)

    def destroy(self, lib):
        lib.primitive_destroy(self.primitive)
        lib.primitive_desc_destroy(self.pd)


def attributes(lib, post_op=None) -> _Handle:
    """Primitive attributes: a user-managed scratchpad (threads sharing a primitive
    each pass their own), and the eltwise `post_op` (an algorithm kind such as
    _ELTWISE_RELU) when given; the caller destroys them.

    Raises:
        ExecutionError: oneDNN failed.
    """
    attr, post_ops = _Handle(), _Handle()
    lib.check(lib.primitive_attr_create(ctypes.byref(attr)), "creating attributes")
    try:
        lib.check(lib.primitive_attr_set_scratchpad_mode(attr, _SCRATCHPAD_USER),
                  "setting the scratchpad mode")
        if post_op is not None:
            lib.check(lib.post_ops_create(ctypes.byref(post_ops)), "creating post-ops")
            lib.check(lib.post_ops_append_eltwise(post_ops, post_op, 0.0, 0.0),
                      "adding the activation")
            lib.check(lib.primitive_attr_set_post_ops(attr, post_ops),
                      "setting the post-ops")
    except BaseException:
        lib.primitive_attr_destroy(attr)
        raise
    finally:
        if post_ops:
            lib.post_ops_destroy(post_ops)
    return attr


class Primitive:
    """A primitive made by create(pointer to the descriptor, attributes) -> status,
    with the eltwise `post_op` (see `attributes`); `implementation` is oneDNN's name
    for the kernel it picked. oneDNN's reference loops and its plain-layout GEMM
    fallback are declined.

    Raises:
        _Declined: no implementation, or only a slow one.
        ExecutionError: oneDNN failed otherwise.
    """

    def __init__(self, lib, create, what, post_op=None):
        self.lib, self.pd, self.primitive = lib, _Handle(), None
        attr = attributes(lib, post_op)
        try:
            lib.check(create(ctypes.byref(self.pd), attr), what)
        finally:
            lib.primitive_attr_destroy(attr)
        impl = ctypes.c_char_p()
        lib.check(lib.primitive_desc_query(self.pd, _QUERY_IMPL_INFO, 0,
                                           ctypes.cast(ctypes.byref(impl), _Handle)),
                  "asking the implementation")
        self.implementation = (impl.value or b"?").decode()
        if self.implementation.startswith(_SLOW_IMPLEMENTATIONS):
            raise _Declined(self.implementation)
        self.primitive = lib.primitive(self.pd)
        self.scratchpad_md = self.md(_QUERY_SCRATCHPAD)
        self.scratchpad_size = lib.memory_desc_get_size(self.scratchpad_md) \
            if self.scratchpad_md else 0

    def md(self, what):
        """A descriptor the primitive descriptor owns (valid while it lives)."""
        return self.lib.primitive_desc_query_md(self.pd, what, 0)

    def __del__(self):
        if self.primitive:
            self.lib.primitive_destroy(self.primitive)
        if self.pd:
            self.lib.primitive_desc_destroy(self.pd)


def reordered_weights(lib, user_md, md, w):
    """(buffer, memory) of w (described by user_md) reordered into layout md once.

    Raises:
        _Declined: oneDNN has no such reorder.
        ExecutionError: oneDNN failed.
    """
    buffer = _aligned_floats(max(1, lib.memory_desc_get_size(md) // 4))
    memory = lib.memory(md, buffer.ctypes.data)
    source = lib.memory(user_md, w.ctypes.data)
    stream = _Handle()
    reorder = None
    try:
        reorder = _Reorder(lib, user_md, md)
        lib.check(lib.stream_create(ctypes.byref(stream), lib.engine, _IN_ORDER_STREAM),
                  "creating a stream")
        lib.check(lib.primitive_execute(reorder.primitive, stream, *_arguments(
            [(_ARG_SRC, source), (_ARG_DST, memory)])), "reordering the weights")
        lib.check(lib.stream_wait(stream), "waiting for the weights")
    except BaseException:
        lib.memory_destroy(memory)
        raise
    finally:
        if stream:
            lib.stream_destroy(stream)
        if reorder is not None:
            reorder.destroy(lib)
        lib.memory_destroy(source)
    return buffer, memory


class StreamState:
    """One thread's stream and the memory objects made for it (destroyed with it):
    the base of each plan's per-thread state (oneDNN's primitives are thread-safe with
    the caller's scratchpad, but a stream and a memory object's data handle are not)."""

    def __init__(self, lib):
        self.lib = lib
        self.memories = []
        self.stream = _Handle()
        lib.check(lib.stream_create(ctypes.byref(self.stream), lib.engine,
                                    _IN_ORDER_STREAM), "creating a stream")

    def memory(self, md, data=None) -> _Handle:
        """A memory object of this thread over `data` (an address; none yet)."""
        mem = self.lib.memory(md, data)
        self.memories.append(mem)
        return mem

    def execute(self, steps, what: str) -> None:
        """Run (primitive, argument count, arguments) steps in turn and wait for them.

        Raises:
            ExecutionError: oneDNN failed.
        """
        lib = self.lib
        for primitive, count, args in steps:
            status = lib.primitive_execute(primitive, self.stream, count, args)
            if status != _SUCCESS:
                lib.check(status, "running " + what)
        lib.check(lib.stream_wait(self.stream), "waiting for " + what)

    def __del__(self):
        for mem in self.memories:
            self.lib.memory_destroy(mem)
        if self.stream:
            self.lib.stream_destroy(self.stream)


def thread_state(threads: threading.local, make):
    """This thread's state in `threads`, made by make() on its first use."""
    state = getattr(threads, "state", None)
    if state is None:
        state = threads.state = make()
    return state


class _ThreadState(StreamState):
    """One thread's stream, scratchpad, blocked buffers and memory objects for a conv
    plan, with the argument lists of its primitives made once."""

    def __init__(self, lib, plan):
        super().__init__(lib)
        self.buffers = []

        def memory(md, buffer=True):
            data = None
            if buffer:
                floats = _aligned_floats(max(1, lib.memory_desc_get_size(md) // 4))
                self.buffers.append(floats)
                data = floats.ctypes.data
            return self.memory(md, data)

        self.user_src = memory(plan.user_src_md, buffer=False)
        self.user_dst = memory(plan.user_dst_md, buffer=False)
        src = memory(plan.src_md) if plan.src_reorder else self.user_src
        dst = memory(plan.dst_md) if plan.dst_reorder else self.user_dst
        conv = [(_ARG_SRC, src), (_ARG_WEIGHTS, plan.weights_memory), (_ARG_DST, dst)]
        if plan.bias_memory is not None:
            conv.append((_ARG_BIAS, plan.bias_memory))
        if plan.scratchpad_size:
            conv.append((_ARG_SCRATCHPAD, memory(plan.scratchpad_md)))
        self.steps = []
        if plan.src_reorder:
            self.steps.append((plan.src_reorder.primitive,) + _arguments(
                [(_ARG_SRC, self.user_src), (_ARG_DST, src)]))
        self.steps.append((plan.primitive,) + _arguments(conv))
        if plan.dst_reorder:
            self.steps.append((plan.dst_reorder.primitive,) + _arguments(
                [(_ARG_SRC, dst), (_ARG_DST, self.user_dst)]))


class ConvPlan:
    """One oneDNN convolution (float32, group `group`, NCHW in and out, bias and Relu
    fused) for a fixed input shape and output strides, with its reordered weights.

    Raises:
        _Declined: oneDNN has no implementation for it.
        ExecutionError: oneDNN failed otherwise.
    """

    def __init__(self, lib, x_shape, y_shape, y_strides, w, b, strides, pads_begin,
                 pads_end, dilations, group, relu):
        self.lib = lib
        self._descs = []
        n, c = x_shape[:2]
        m = w.shape[0]
        kernel = w.shape[2:]
        if group == 1:
            w_shape, w_tag = w.shape, _ABCD
        else:
            w_shape, w_tag = (group, m // group, c // group) + kernel, _ABCDE
        desc = self._desc
        self.user_src_md = desc(x_shape, _ABCD)
        self.user_dst_md = desc(y_shape, strides=y_strides)
        any_src, any_dst = desc(x_shape, _ANY), desc(y_shape, _ANY)
        any_w, user_w = desc(w_shape, _ANY), desc(w_shape, w_tag)
        bias_md = desc((m,), _A) if b is not None else None
        self.conv = Primitive(lib, lambda pd, attr: lib.convolution_forward_primitive_desc_create(
            pd, lib.engine, _FORWARD_INFERENCE, _CONVOLUTION_DIRECT, any_src, any_w, bias_md,
            any_dst, _dims(strides), _dims(d - 1 for d in dilations), _dims(pads_begin),
            _dims(pads_end), attr), "creating the convolution",
            _ELTWISE_RELU if relu else None)
        self.implementation = self.conv.implementation
        self.primitive = self.conv.primitive
        self.src_md, self.dst_md = self.conv.md(_QUERY_SRC), self.conv.md(_QUERY_DST)
        self.scratchpad_md = self.conv.scratchpad_md
        self.scratchpad_size = self.conv.scratchpad_size
        self.src_reorder = None if lib.memory_desc_equal(self.src_md, self.user_src_md) \
            else _Reorder(lib, self.user_src_md, self.src_md)
        self.dst_reorder = None if lib.memory_desc_equal(self.dst_md, self.user_dst_md) \
            else _Reorder(lib, self.dst_md, self.user_dst_md)
        self._memories = []
        # the weights, reordered once (with the bias, held for the plan's life)
        self._weights, self.weights_memory = reordered_weights(
            lib, user_w, self.conv.md(_QUERY_WEIGHTS), np.ascontiguousarray(w, np.float32))
        self._memories.append(self.weights_memory)
        self._bias = None if b is None else np.ascontiguousarray(b, dtype=np.float32)
        self.bias_memory = None if b is None else self._memory(bias_md, self._bias)
        self.w, self.b = w, b  # the sources, held: their identity marks the plan's
        self._threads = threading.local()

    def _desc(self, shape, tag=None, strides=None):
        md = self.lib.memory_desc(shape, tag, strides)
        self._descs.append(md)
        return md

    def _memory(self, md, array):
        mem = self.lib.memory(md, array.ctypes.data)
        self._memories.append(mem)
        return mem

    def run(self, x: np.ndarray, y: np.ndarray) -> None:
        """y = the convolution of x (C-contiguous float32 of the plan's input shape),
        into y (the plan's output shape and strides).

        Raises:
            ExecutionError: oneDNN failed.
        """
        state = thread_state(self._threads, lambda: _ThreadState(self.lib, self))
        self.lib.memory_set_data_handle(state.user_src, x.ctypes.data)
        self.lib.memory_set_data_handle(state.user_dst, y.ctypes.data)
        state.execute(state.steps, "the convolution")

    def __del__(self):
        lib = self.lib
        for mem in getattr(self, "_memories", ()):
            lib.memory_destroy(mem)
        for reorder in (getattr(self, "src_reorder", None),
                        getattr(self, "dst_reorder", None)):
            if reorder is not None:
                reorder.destroy(lib)
        for md in getattr(self, "_descs", ()):
            lib.memory_desc_destroy(md)


# Plans per node and input shape, then plain kernels (a model fed ever new image sizes
# must not grow a primitive per size)
_PLANS_PER_CONV = 4


def conv_2d(x, w, b, strides, pads_begin, pads_end, dilations, group, relu, y, cache):
    """y = Conv(x, w, b) (+ Relu when `relu`) for float32 NCHW x (C-contiguous) through
    oneDNN, with w and b fixed while `cache` (the node's) lives; y a float32 array of the
    output shape (any strides, e.g. a Concat's channel slice). True when done; False
    when the backend is not oneDNN, or oneDNN has no fast kernel for this conv or
    refuses its arguments (the caller's own path runs then).

    Raises:
        InvalidArgumentError: ONEGRAPH_DNNL holds an unknown value.
        UnavailableError: ONEGRAPH_DNNL=onednn and oneDNN cannot be loaded.
        ExecutionError: oneDNN failed.
    """
    lib = _active_library()
    if lib is None:
        return False
    plans = cache.get("onednn")
    if plans is None:
        plans = cache["onednn"] = {}
    key = (x.shape, y.shape, y.strides, relu)
    plan = plans.get(key)
    if plan is not None and plan is not False and (plan.w is not w or plan.b is not b):
        plan = None  # other weights than the plan's: not the constants a cache holds
        del plans[key]
    if plan is None:
        if len(plans) >= _PLANS_PER_CONV:
            return False
        try:
            plan = ConvPlan(lib, x.shape, y.shape,
                            tuple(s // y.itemsize for s in y.strides), w, b, strides,
                            pads_begin, pads_end, dilations, group, relu)
        except (_Declined, ExecutionError):
            # no kernel, or arguments past oneDNN's limits (a stride of 2**62 that
            # leaves one window): conv.py's own paths run this conv
            plan = False
        plans[key] = plan
    if plan is False:
        return False
    plan.run(x, y)
    return True


def _reset_for_tests():
    """Forget the requested backend (ONEGRAPH_DNNL is read again at next use)."""
    _switch.reset()
