"""Operators: onnxruntime's graph-optimizer fused ops (domain "com.microsoft").

onnxruntime rewrites a model when it loads it; with `SessionOptions.optimized_model_filepath`
set (graph_optimization_level ORT_ENABLE_EXTENDED or ORT_ENABLE_ALL) it saves the result,
and that file holds these ops in place of the standard ones:

- FusedConv: Conv (+ Z, a residual of the output's shape) + an activation, from
  ConvActivationFusion and Conv+BatchNormalization folding. `activation` is MLAS's list:
  Relu, Tanh, Sigmoid, HardSwish (no parameters; any given are ignored, as onnxruntime
  does), LeakyRelu (activation_params = [alpha]), Clip ([min, max]), HardSigmoid
  ([alpha, beta]); no `activation` is the identity.
- FusedGemm: Gemm + an activation (GemmActivationFusion), with activation_alpha/_beta/
  _gamma: Relu, Sigmoid, Tanh, Softplus, Softsign, LeakyRelu (alpha), Elu (alpha),
  ThresholdedRelu (alpha), Selu (alpha, gamma), HardSigmoid (alpha, beta),
  ParametricSoftplus (alpha log(1 + exp(beta x))), ScaledTanh (alpha tanh(beta x)).
  The activation is required and so are its parameters (onnxruntime refuses the node
  without them).
- FusedMatMul (MatMulScaleFusion, MatmulTransposeFusion) and TransposeMatMul, its older
  name: alpha * A' @ B' where transA/transB swap the last two dims and transBatchA/
  transBatchB move the first dim behind the batch dims ((d0, d1, .., dk, m, n) becomes
  (d1, .., dk, d0, m, n)), which needs both inputs of one rank >= 3 (as onnxruntime).
- GemmFastGelu: FastGelu(X @ W + bias), the tanh form; onnxruntime has it on its GPU
  providers only (the tests check it against MatMul + Add + tanh Gelu).
- NhwcMaxPool: MaxPool on a channels-last (N, *spatial, C) int8/uint8 tensor, what
  onnxruntime's NhwcTransformer writes around quantized convolutions.

The numerics are onegraph's Conv, Gemm, MatMul, MaxPool and activation kernels
(`ops/conv.py`, `ops/linalg.py`, `ops/pool.py`, `ops/activation.py`); float16 is computed
in float32 (float64 in float64) and rounded once at the end. Refused by name: an
activation outside the lists above (UnsupportedOpError), a missing or extra activation
parameter (OpAttributeError), a Z whose shape is not the output's, transBatch on inputs of
different or lower rank, and non-float inputs (ShapeError); as onnxruntime refuses them,
FusedMatMul/TransposeMatMul transpose flags beyond 32 bits (OpAttributeError), in
FusedConv (and the NCHWc and quantized convs, which share the check) window attributes of
another length (an empty one too) under any auto_pad, pads with an auto_pad other than
NOTSET, dilations with auto_pad SAME_*, and a window longer than the padded input;
NhwcMaxPool pads below 0 (under any auto_pad) or not smaller than the kernel, and an
input empty in a dim other than N. As onnxruntime reads them: a pooling ceil_mode
other than 1 is floor, a pooling window longer than the padded input by less than the
stride gives one (clipped) window (`short_input_pads`), and auto_pad SAME_* with a stride
longer than the kernel (negative padding) moves the windows into the input
(`ort_same_padding`).
Hostile sizes: window attributes beyond 2**31 - 1 are refused (OpAttributeError), and a
padded input, output or im2col buffer over 2 GiB (MAX_RESULT_BYTES) with a
ResourceExhaustedError before anything is allocated; a stride leaving one window along
its dim is lowered to the smallest that does (same output, no per-phase loop).
Accepted where onnxruntime's CPU provider has no kernel: float64 FusedConv, FusedGemm and
TransposeMatMul (its FusedMatMul takes float64): the same math as the float64 standard
ops, which is what the fused node replaced. FusedMatMulActivation, NhwcConv and
NhwcFusedConv have no onnxruntime CPU kernel and are not defined here.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import OpAttributeError, ResourceExhaustedError, ShapeError, UnsupportedOpError
from .activation import (_elu, _hard_sigmoid, _hard_swish, _leaky_relu, _selu, _sigmoid,
                         _softplus, _softsign, _thresholded_relu, relu)
from .common import MAX_RESULT_BYTES, result_bytes
from .conv import _CONV_ATTRS, _conv_infer, _pool_geometry, conv_nd
from .linalg import _gemm_infer, _gemm_kernel, _matmul_infer, _matmul_kernel, _matmul_shape
from .ms_transformer import _DOMAIN, _tanh_gelu
from .pool import _POOL_ATTRS, _maxpool_infer, _maxpool_kernel
from .registry import TensorInfo, define

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_FLOATS = ("float16", "float32", "float64")


# The standard ops whose helpers' messages start with their own name.
_STANDARD_NAMES = ("Conv", "Gemm", "MatMul", "MaxPool")


def _named(op):
    """Decorate a kernel or infer function so that the ShapeError/OpAttributeError the
    shared Conv/Gemm/MatMul/pool helpers raise (worded for the standard op, or for no
    op) name `op` instead."""
    def wrap(fn):
        """fn re-raising its shape/attribute errors under `op`'s name."""
        @functools.wraps(fn)
        def inner(*args):
            """fn(*args), its errors renamed."""
            try:
                return fn(*args)
            except (ShapeError, OpAttributeError) as e:
                msg = str(e)
                if msg.startswith(op + ":"):
                    raise
                head, sep, rest = msg.partition(": ")
                if sep and head in _STANDARD_NAMES:  # "Gemm: ..." -> "FusedGemm: ..."
                    msg = rest
                raise type(e)(f"{op}: {msg}") from e
        return inner
    return wrap


def _float_inputs(op, inputs, names):
    """The given inputs (None stays None) as arrays; all must be one float dtype of
    _FLOATS.

    Raises:
        ShapeError: an input is not float16/32/64, or its dtype differs from the first.
    """
    out = []
    first = None
    for x, name in zip(inputs, names):
        if x is None:
            out.append(None)
            continue
        x = np.asarray(x)
        if x.dtype.name not in _FLOATS:
            raise ShapeError(f"{op}: {name} must be float16, float32 or float64, got "
                             f"{x.dtype}")
        if first is not None and x.dtype != first:
            raise ShapeError(f"{op}: {name} is {x.dtype}, but {names[0]} is {first}")
        first = x.dtype if first is None else first
        out.append(x)
    return out


# Window attributes (kernel_shape, strides, dilations, pads) past this are refused
# before any arithmetic: numpy's stride tricks take C longs, and no real model has them.
_MAX_WINDOW_VALUE = (1 << 31) - 1


def check_result_size(op, what, shape, itemsize):
    """Refuse a result of `shape` whose bytes exceed MAX_RESULT_BYTES (Python int
    arithmetic: no overflow whatever the dims). A result (or a temporary such as a
    padded input) sized by an attribute or an input's value must not reach numpy as an
    allocation: a fuzzed pads=2**40 gives a bare MemoryError or an overcommitted
    success.

    Raises:
        ResourceExhaustedError: naming `op`, `what` and the size.
    """
    size = result_bytes(shape, itemsize)
    if size > MAX_RESULT_BYTES:
        raise ResourceExhaustedError(
            f"{op}: {what} of shape {[int(d) for d in shape]} would take {size:,} bytes, "
            f"over the limit of {MAX_RESULT_BYTES:,} bytes for one result")


def check_window_values(op, attrs, names=("kernel_shape", "strides", "dilations", "pads",
                                          "output_padding", "output_shape")):
    """Refuse window attributes (of `names` present in attrs) holding a value beyond
    +-(2**31 - 1).

    Raises:
        OpAttributeError: naming `op`, the attribute and its values.
    """
    for name in names:
        values = attrs.get(name)
        if values is not None and any(abs(int(v)) > _MAX_WINDOW_VALUE for v in values):
            raise OpAttributeError(f"{op}: {name} {[int(v) for v in values]} holds a value "
                                   f"beyond {_MAX_WINDOW_VALUE}")


def _check_conv_auto_pad(op, x_shape, attrs):
    """onnxruntime's Conv attribute rules, which every one of its convolutions applies:
    pads, when given, hold two values per spatial dim whatever auto_pad is (strides,
    dilations and kernel_shape one) and come with auto_pad NOTSET only, and auto_pad
    SAME_UPPER/SAME_LOWER takes no dilation other than 1.

    Raises:
        OpAttributeError: a window attribute of another length.
        UnsupportedOpError: a dilation with SAME_*.
    """
    mode = attrs.get("auto_pad") or "NOTSET"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    nsp = len(x_shape) - 2
    for name, want in (("pads", 2 * nsp), ("strides", nsp), ("dilations", nsp),
                       ("kernel_shape", nsp)):
        values = attrs.get(name)
        if values is not None and nsp > 0 and len(values) != want:
            raise OpAttributeError(
                f"{op}: {name} {[int(v) for v in values]} must hold {want} values "
                f"(onnxruntime refuses other lengths, an empty list too, under any auto_pad)")
    if mode != "NOTSET" and attrs.get("pads") is not None:
        raise OpAttributeError(f"{op}: auto_pad {mode} and pads are both given (onnxruntime "
                               "refuses a node with both)")
    dil = attrs.get("dilations")
    if mode in ("SAME_UPPER", "SAME_LOWER") and dil is not None and any(
            int(d) != 1 for d in dil):
        raise UnsupportedOpError(f"{op}: dilations {[int(d) for d in dil]} with auto_pad "
                                 f"{mode} are not supported (nor by onnxruntime)")


def check_window(op, x_shape, kernel, attrs, out_channels, itemsize, ceil_mode=False,
                 conv=False):
    """Check a sliding-window op's attributes against x (N, C, *spatial) before its
    kernel allocates anything: every kernel_shape/strides/dilations/pads value below
    2**31, and the padded input, the output (N, out_channels, *out) and the im2col
    columns (N, C * prod(kernel), prod(out)) each within MAX_RESULT_BYTES.

    `conv`: also onnxruntime's Conv attribute rules (`_check_conv_auto_pad`).

    Raises:
        OpAttributeError: a window attribute is out of range (or malformed, from
            Conv's geometry rule).
        UnsupportedOpError: (conv) dilations with auto_pad SAME_*.
        ShapeError: the window does not fit the input.
        ResourceExhaustedError: a buffer would exceed MAX_RESULT_BYTES.
    """
    check_window_values(op, attrs)
    if conv:
        _check_conv_auto_pad(op, x_shape, attrs)
    if len(x_shape) < 3 or any(abs(int(k)) > _MAX_WINDOW_VALUE for k in kernel):
        return  # the kernel's own checks name the rank problem
    sp = [int(d) for d in x_shape[2:]]
    try:
        _, _, pb, pe, out = _pool_geometry(sp, [int(k) for k in kernel], attrs, ceil_mode)
    except (ShapeError, OpAttributeError) as e:
        raise type(e)(f"{op}: {e}") from e
    n, c = int(x_shape[0]), int(x_shape[1])
    if conv and min(out, default=0) <= 0:
        # onnxruntime's convolutions refuse a window longer than the padded input (an
        # empty spatial dim included) rather than return an empty output
        raise ShapeError(f"{op}: the {list(kernel)} window (strides, dilations and pads "
                         f"applied) does not fit the input's spatial dims {sp}")
    if min(out, default=0) == 0:
        return  # an empty output: nothing below is allocated
    check_result_size(op, "the padded input", [n, c] + [d + b + e for d, b, e in
                                                       zip(sp, pb, pe)], itemsize)
    check_result_size(op, "the output", [n, out_channels] + list(out), itemsize)
    cols = c * int(np.prod([int(k) for k in kernel], dtype=object))
    check_result_size(op, "the im2col columns",
                      [n, cols, int(np.prod(out, dtype=object))], itemsize)


def single_window_strides(x_shape, kernel, attrs):
    """attrs with each stride that leaves one output position along its dim lowered to
    the smallest stride that still does (the output is the same: one window, at the
    same place). A fuzzed stride of 65536 otherwise costs Conv's strided (depthwise)
    path one Python step per stride phase: seconds for one small node."""
    strides = attrs.get("strides")
    if not strides or len(x_shape) < 3 or len(kernel) != len(strides) or any(
            int(s) < 1 for s in strides):
        return attrs
    mode = attrs.get("auto_pad") or "NOTSET"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    sp = [int(d) for d in x_shape[2:]]
    dil = list(attrs.get("dilations") or [1] * len(sp))
    pads = list(attrs.get("pads") or [0] * 2 * len(sp))
    if len(dil) != len(sp) or (mode == "NOTSET" and len(pads) != 2 * len(sp)):
        return attrs  # Conv's own checks name the problem
    new = []
    for i, (n, k, s) in enumerate(zip(sp, kernel, strides)):
        s = int(s)
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            # out = ceil(n / s), and the padding of a single window does not depend on s
            new.append(min(s, max(n, 1)))
            continue
        span = n + (int(pads[i]) + int(pads[i + len(sp)]) if mode == "NOTSET" else 0)
        span -= (int(k) - 1) * int(dil[i]) + 1
        # out = span // s + 1 is 1 for every s > span
        new.append(min(s, span + 1) if span >= 0 else s)
    if new == [int(s) for s in strides]:
        return attrs
    return dict(attrs, strides=new)


def ort_same_padding(x, kernel, attrs, conv=False):
    """(x, attrs) with auto_pad SAME_UPPER/SAME_LOWER resolved as onnxruntime resolves it,
    where that differs from onegraph's rule: onnxruntime pads by p = (ceil(n / s) - 1) * s
    + k - n even when p is negative (a stride longer than the kernel), which moves the
    windows into the input; onegraph's standard ops clamp p to 0. Such dims are cropped
    here and the node's pads made explicit (auto_pad NOTSET); x is (N, C, *spatial).
    The head padding of a negative p, as measured against onnxruntime 1.32 (C division,
    toward zero): pooling p / 2 (SAME_UPPER) and (p + 1) / 2 (SAME_LOWER); its CPU
    convolutions (`conv`) (p + 1) / 2 and (p + 2) / 2. A dilated pooling window is
    padded as if undilated (p from k, not (k - 1) * d + 1), as onnxruntime pads it; a
    dilated convolution is left as it is (refused with SAME_* by `check_window`)."""
    mode = attrs.get("auto_pad") or "NOTSET"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("SAME_UPPER", "SAME_LOWER") or x.ndim < 3:
        return x, attrs
    sp = x.shape[2:]
    strides = list(attrs.get("strides") or [1] * len(sp))
    dil = attrs.get("dilations")
    dilated = dil is not None and any(int(d) != 1 for d in dil)
    if len(kernel) != len(sp) or len(strides) != len(sp) or (dilated and conv) or min(
            [int(v) for v in strides] + [int(k) for k in kernel], default=1) < 1:
        return x, attrs  # the kernels' own checks name the problem
    heads, tails, crop = [], [], False
    for n, k, st in zip(sp, kernel, strides):
        st = int(st)
        need = (-(-n // st) - 1) * st + int(k) - n
        # C's division (toward 0); the convolutions' shift holds for a negative p only
        head = int((need + (mode == "SAME_LOWER") + (conv and need < 0)) / 2)
        heads.append(head)
        tails.append(need - head)
        crop = crop or need < 0
    if not crop and not dilated:
        return x, attrs
    index = (slice(None), slice(None)) + tuple(
        slice(-min(h, 0), n + min(t, 0)) for h, t, n in zip(heads, tails, sp))
    pads = [max(h, 0) for h in heads] + [max(t, 0) for t in tails]
    return x[index], dict(attrs, auto_pad="NOTSET", pads=pads)


def same_padding_shape(shape, kernel, attrs, conv=False):
    """(shape, attrs): `ort_same_padding` for inference, on a known (N, C, *spatial)
    shape (a zero-strided stand-in: nothing is allocated); unknown dims: unchanged."""
    if shape is None or None in shape or not kernel:
        return shape, attrs
    stand_in = np.broadcast_to(np.zeros((), np.int8), tuple(shape))
    stand_in, attrs = ort_same_padding(stand_in, kernel, attrs, conv)
    return stand_in.shape, attrs


def short_input_pads(x_shape, attrs):
    """attrs of a pooling op (ceil_mode 0, auto_pad NOTSET or VALID) with the end padding
    grown where the window is longer than the padded input by less than the stride:
    onnxruntime sizes the output (n + pads - window) / stride + 1 in C's division (toward
    zero), which gives one window there, clipped to the input, where floor gives none.
    The extra padding is ignored by MaxPool and by AveragePool with count_include_pad=0
    (the callers). x_shape is (N, C, *spatial)."""
    mode = attrs.get("auto_pad") or "NOTSET"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    kernel = attrs.get("kernel_shape")
    sp = [d for d in x_shape[2:]]
    if mode not in ("NOTSET", "VALID") or int(attrs.get("ceil_mode", 0)) or not kernel \
            or len(kernel) != len(sp) or None in sp:
        return attrs
    nsp = len(sp)
    strides = [int(v) for v in (attrs.get("strides") or [1] * nsp)]
    dil = [int(v) for v in (attrs.get("dilations") or [1] * nsp)]
    pads = [int(v) for v in (attrs.get("pads") or [0] * 2 * nsp)] if mode == "NOTSET" \
        else [0] * 2 * nsp
    if len(strides) != nsp or len(dil) != nsp or len(pads) != 2 * nsp:
        return attrs  # the pooling kernels' own checks name the problem
    grown = list(pads)
    for i, (n, k, st, d) in enumerate(zip(sp, kernel, strides, dil)):
        short = (int(k) - 1) * d + 1 - (n + pads[i] + pads[i + nsp])
        if n > 0 and 0 < short < st:
            grown[i + nsp] += short
    if grown == pads:
        return attrs
    return dict(attrs, auto_pad="NOTSET", pads=grown)


def pool_attrs(op, attrs):
    """A pooling op's attrs as onnxruntime reads them: pads, when given, not negative
    (whatever auto_pad is) and smaller than the kernel, pads/strides/dilations of the
    kernel's length when given (an empty list too), and ceil_mode 1 for ceil, any other
    value floor.

    Raises:
        OpAttributeError: a negative pad or one not smaller than the kernel, or a window
            attribute of another length.
    """
    pads = attrs.get("pads")
    if pads is not None and any(int(v) < 0 for v in pads):
        raise OpAttributeError(f"{op}: pads {[int(v) for v in pads]} must not be negative")
    nsp = len(attrs.get("kernel_shape") or ())
    for name, want in (("pads", 2 * nsp), ("strides", nsp), ("dilations", nsp)):
        values = attrs.get(name)
        if values is not None and nsp and len(values) != want:
            raise OpAttributeError(f"{op}: {name} {[int(v) for v in values]} must hold {want} "
                                   f"values (an empty list too, as onnxruntime refuses it)")
    kernel = [int(k) for k in attrs.get("kernel_shape") or ()]
    if pads is not None and nsp and len(pads) == 2 * nsp and any(
            int(p) >= kernel[i % nsp] for i, p in enumerate(pads)):
        raise OpAttributeError(f"{op}: pads {[int(v) for v in pads]} must be smaller than "
                               f"the kernel {kernel} (as onnxruntime requires)")
    ceil = int(int(attrs.get("ceil_mode", 0)) == 1)
    return attrs if int(attrs.get("ceil_mode", 0)) == ceil else dict(attrs, ceil_mode=ceil)


def check_pool(op, x_shape, attrs, itemsize):
    """`check_window` for a pooling op (kernel_shape from attrs, out_channels = C)."""
    kernel = attrs.get("kernel_shape")
    if kernel is not None and len(x_shape) >= 2:
        check_window(op, x_shape, kernel, attrs, x_shape[1], itemsize,
                     bool(int(attrs.get("ceil_mode", 0))))


def _work(dtype):
    """The dtype a kernel computes in: float64 for float64, float32 otherwise."""
    return _F64 if dtype == _F64 else _F32


def _padded(inputs, n):
    """inputs extended with None to length n (omitted trailing optional inputs)."""
    return list(inputs) + [None] * (n - len(inputs))


# --------------------------------------------------------------------------------------
# Activations: MLAS's (FusedConv) and onnxruntime's functor list (FusedGemm)
# --------------------------------------------------------------------------------------


def _clip(y, params):
    """Clip's activation: y clamped to [params[0], params[1]] in place."""
    return np.clip(y, y.dtype.type(params[0]), y.dtype.type(params[1]), out=y)


# name -> (number of activation_params, fn(y in the work dtype, params) -> new or same y)
_CONV_ACTIVATIONS = {
    "Relu": (0, lambda y, p: relu(y, out=y)),
    "Tanh": (0, lambda y, p: np.tanh(y, out=y)),
    "Sigmoid": (0, lambda y, p: _sigmoid(y, None)),
    "HardSwish": (0, lambda y, p: _hard_swish(y, None)),
    "LeakyRelu": (1, lambda y, p: _leaky_relu(y, {"alpha": p[0]})),
    "Clip": (2, _clip),
    "HardSigmoid": (2, lambda y, p: _hard_sigmoid(y, {"alpha": p[0], "beta": p[1]})),
}


def _activation_entry(op, name, table):
    """(name as str, its entry) of activation `name` (str or bytes) in a fused op's
    `table`.

    Raises:
        UnsupportedOpError: the table has no such activation (the message lists it).
    """
    name = name.decode() if isinstance(name, bytes) else name
    entry = table.get(name)
    if entry is None:
        raise UnsupportedOpError(f"{op}: activation {name!r} is not supported (supported: "
                                 f"{', '.join(sorted(table))})")
    return name, entry


def _conv_activation(op, attrs):
    """(fn, params) of a FusedConv-style node's activation attributes; fn None is the
    identity.

    Raises:
        UnsupportedOpError: an activation MLAS does not fuse.
        OpAttributeError: activation_params does not hold the count it needs.
    """
    name = attrs["activation"]
    if name is None:
        return None, ()
    name, (count, fn) = _activation_entry(op, name, _CONV_ACTIVATIONS)
    params = [float(v) for v in (attrs["activation_params"] or ())]
    if count and len(params) != count:
        raise OpAttributeError(f"{op}: activation {name} needs {count} activation_params, "
                               f"got {len(params)}")
    return fn, params


def _scaled_tanh(y, p):
    """ScaledTanh: p[0] * tanh(p[1] * y), in place."""
    y *= y.dtype.type(p[1])
    np.tanh(y, out=y)
    y *= y.dtype.type(p[0])
    return y


def _parametric_softplus(y, p):
    """ParametricSoftplus: p[0] * log(1 + exp(p[1] * y))."""
    y *= y.dtype.type(p[1])
    y = _softplus(y, None)
    y *= y.dtype.type(p[0])
    return y


# name -> (attributes it needs, fn(y, {"alpha": .., "beta": .., "gamma": ..}))
_GEMM_ACTIVATIONS = {
    "Relu": ((), lambda y, a: relu(y, out=y)),
    "Sigmoid": ((), lambda y, a: _sigmoid(y, None)),
    "Tanh": ((), lambda y, a: np.tanh(y, out=y)),
    "Softplus": ((), lambda y, a: _softplus(y, None)),
    "Softsign": ((), lambda y, a: _softsign(y, None)),
    "LeakyRelu": (("alpha",), _leaky_relu),
    "Elu": (("alpha",), _elu),
    "ThresholdedRelu": (("alpha",), _thresholded_relu),
    "Selu": (("alpha", "gamma"), _selu),
    "HardSigmoid": (("alpha", "beta"), _hard_sigmoid),
    "ParametricSoftplus": (("alpha", "beta"), lambda y, a: _parametric_softplus(
        y, (a["alpha"], a["beta"]))),
    "ScaledTanh": (("alpha", "beta"), lambda y, a: _scaled_tanh(y, (a["alpha"], a["beta"]))),
}


def _gemm_activation(op, attrs):
    """(fn, params dict) of FusedGemm's activation attributes.

    Raises:
        UnsupportedOpError: no activation, or one onnxruntime's FusedGemm does not fuse.
        OpAttributeError: a parameter the activation needs is not given.
    """
    name = attrs["activation"]
    name, (needs, fn) = _activation_entry(op, name, _GEMM_ACTIVATIONS)
    params = {}
    for key in needs:
        value = attrs["activation_" + key]
        if value is None:
            raise OpAttributeError(f"{op}: activation {name} needs attribute "
                                   f"activation_{key}")
        params[key] = float(value)
    return fn, params


def _check_gemm_activation(attrs):
    """check_attrs of FusedGemm: raises (UnsupportedOpError, OpAttributeError) unless
    the activation is known and has its parameters, so a model fails at load."""
    _gemm_activation("FusedGemm", attrs)
    return None


def _check_conv_activation(attrs):
    """check_attrs of FusedConv: as `_check_gemm_activation`."""
    _conv_activation("FusedConv", attrs)
    return None


def _activate(fn, y, params):
    """fn(y, params) with floating-point warnings off (exp overflows are expected)."""
    if fn is None:
        return y
    with np.errstate(all="ignore"):
        return np.asarray(fn(y, params))


# --------------------------------------------------------------------------------------
# FusedConv
# --------------------------------------------------------------------------------------


@_named("FusedConv")
def _fused_conv_kernel(inputs, attrs, ctx):
    """Y = activation(Conv(X, W, B) + Z)."""
    op = "FusedConv"
    x, w, b, z = _float_inputs(op, _padded(inputs, 4), ("X", "W", "B", "Z"))
    fn, params = _conv_activation(op, attrs)
    work = _work(x.dtype)
    if w.ndim >= 3:
        kernel = attrs.get("kernel_shape") or w.shape[2:]
        check_window(op, x.shape, kernel, attrs, w.shape[0], work.itemsize, conv=True)
        x, attrs = ort_same_padding(x, kernel, attrs, conv=True)
        attrs = single_window_strides(x.shape, kernel, attrs)
    y = conv_nd(x.astype(work, copy=False), w.astype(work, copy=False),
                None if b is None else b.astype(work, copy=False), attrs)
    if y.dtype != work or not y.flags.writeable:
        y = y.astype(work)
    if z is not None:
        if z.shape != y.shape:
            # onnxruntime adds Z into the output buffer: it must be the output's shape
            raise ShapeError(f"{op}: Z must have the output's shape {list(y.shape)}, got "
                             f"{list(z.shape)}")
        y += z.astype(work, copy=False)
    y = _activate(fn, y, params)
    return (y.astype(x.dtype, copy=False),)


@_named("FusedConv")
def _fused_conv_infer(attrs, inputs):
    """Conv's shape rule; Z, when its shape is known, must be the output's."""
    _conv_activation("FusedConv", attrs)
    (y,) = _conv_infer(attrs, inputs[:3])
    z = inputs[3] if len(inputs) > 3 else None
    if z is not None and z.shape is not None and y.shape is not None and (
            len(z.shape) != len(y.shape) or any(
                a is not None and b is not None and a != b for a, b in zip(z.shape, y.shape))):
        raise ShapeError(f"FusedConv: Z must have the output's shape {list(y.shape)}, got "
                         f"{list(z.shape)}")
    return [y]


# --------------------------------------------------------------------------------------
# FusedGemm
# --------------------------------------------------------------------------------------


@_named("FusedGemm")
def _fused_gemm_kernel(inputs, attrs, ctx):
    """Y = activation(alpha * A' @ B' + beta * C)."""
    op = "FusedGemm"
    a, b, c = _float_inputs(op, _padded(inputs, 3), ("A", "B", "C"))
    fn, params = _gemm_activation(op, attrs)
    if a.ndim == 2 and b.ndim == 2:  # (other ranks: Gemm's own message)
        (m, ka), (kb, n) = a.shape[::-1] if int(attrs["transA"]) else a.shape, \
            b.shape[::-1] if int(attrs["transB"]) else b.shape
        if ka != kb:
            raise ShapeError(f"{op}: A' {[m, ka]} and B' {[kb, n]} do not fit (inner dims "
                             f"{ka} and {kb})")
    work = _work(a.dtype)
    gemm_inputs = [a.astype(work, copy=False), b.astype(work, copy=False)]
    if c is not None:
        gemm_inputs.append(c.astype(work, copy=False))
    (y,) = _gemm_kernel(gemm_inputs, attrs, ctx)
    y = _activate(fn, np.array(y, dtype=work), params)
    return (y.astype(a.dtype, copy=False),)


@_named("FusedGemm")
def _fused_gemm_infer(attrs, inputs):
    """Gemm's shape rule."""
    return _gemm_infer(attrs, inputs)


# --------------------------------------------------------------------------------------
# FusedMatMul / TransposeMatMul
# --------------------------------------------------------------------------------------


def _trans_batch(op, a, b, attrs):
    """A and B (arrays or shape tuples) with transBatch applied: the first dim moved
    behind the batch dims, just before the last two.

    Raises:
        ShapeError: transBatch with inputs of different ranks, or of rank below 3.
    """
    tba, tbb = int(attrs.get("transBatchA", 0)), int(attrs.get("transBatchB", 0))
    if not (tba or tbb):
        return a, b
    ra, rb = len(np.shape(a)) if not isinstance(a, tuple) else len(a), \
        len(np.shape(b)) if not isinstance(b, tuple) else len(b)
    if ra != rb or ra < 3:
        raise ShapeError(f"{op}: transBatchA/transBatchB need A and B of one rank >= 3, got "
                         f"ranks {ra} and {rb}")
    perm = list(range(1, ra - 1)) + [0, ra - 1]

    def move(x):
        """x (array or shape tuple) with the first dim moved behind the batch dims."""
        if isinstance(x, tuple):
            return tuple(x[p] for p in perm)
        return np.transpose(x, perm)
    return (move(a) if tba else a), (move(b) if tbb else b)


def _last_two_swapped(x, flag):
    """x (array or shape tuple) with its last two dims swapped when flag and rank >= 2."""
    if not flag or len(x if isinstance(x, tuple) else np.shape(x)) < 2:
        return x
    if isinstance(x, tuple):
        return x[:-2] + (x[-1], x[-2])
    return np.swapaxes(x, -1, -2)


def _matmul_family(op):
    """Kernel and infer function of FusedMatMul-style op `op`."""
    @_named(op)
    def kernel(inputs, attrs, ctx):
        """Y = alpha * A' @ B' (A', B': A and B after transBatch and trans)."""
        a, b = _float_inputs(op, inputs[:2], ("A", "B"))
        if a.ndim == 0 or b.ndim == 0:
            raise ShapeError(f"{op}: scalar operands are not allowed")
        work = _work(a.dtype)
        a, b = _trans_batch(op, a.astype(work, copy=False), b.astype(work, copy=False),
                            attrs)
        a = _last_two_swapped(a, int(attrs["transA"]))
        b = _last_two_swapped(b, int(attrs["transB"]))
        _matmul_shape(a.shape, b.shape, where=f"{op}: ")  # numpy's own words otherwise
        (y,) = _matmul_kernel([a, b], {}, ctx)
        alpha = float(attrs["alpha"])
        if alpha != 1.0:
            y = y * work.type(alpha)
        return (np.asarray(y).astype(inputs[0].dtype, copy=False),)

    @_named(op)
    def infer(attrs, inputs):
        """MatMul's shape rule on the transposed shapes."""
        a, b = inputs[0], inputs[1]
        if a.shape is None or b.shape is None:
            return [TensorInfo(a.dtype, None)]
        sa, sb = _trans_batch(op, tuple(a.shape), tuple(b.shape), attrs)
        sa = _last_two_swapped(sa, int(attrs["transA"]))
        sb = _last_two_swapped(sb, int(attrs["transB"]))
        return _matmul_infer({}, [TensorInfo(a.dtype, sa), TensorInfo(b.dtype, sb)])
    return kernel, infer


_MATMUL_ATTRS = (("alpha", "float", 1.0), ("transA", "int", 0), ("transB", "int", 0))


def _check_trans_flags(attrs):
    """check_attrs of FusedMatMul/TransposeMatMul: any nonzero transpose flag transposes,
    as onnxruntime's kernel reads it, but a flag beyond 32 bits is refused: onnxruntime's
    shape inference reads it cut to 32 bits, so 2**40 both transposes and does not."""
    for name in ("transA", "transB", "transBatchA", "transBatchB"):
        if name in attrs and abs(int(attrs[name])) > _MAX_WINDOW_VALUE:
            return f"{name} {int(attrs[name])} does not fit 32 bits"
    return None

# --------------------------------------------------------------------------------------
# GemmFastGelu
# --------------------------------------------------------------------------------------


@_named("GemmFastGelu")
def _gemm_fast_gelu_kernel(inputs, attrs, ctx):
    """Y = FastGelu(X @ W + bias), tanh form; bias 1-D of W's last dim."""
    op = "GemmFastGelu"
    x, w, bias = _float_inputs(op, _padded(inputs, 3), ("X", "W", "bias"))
    if x.dtype == _F64:
        raise ShapeError(f"{op}: X must be float16 or float32, got float64")
    _matmul_shape(x.shape, w.shape, where=f"{op}: ")  # numpy's own words otherwise
    (y,) = _matmul_kernel([x.astype(_F32), w.astype(_F32)], {}, ctx)
    y = np.array(y, dtype=_F32)
    if bias is not None:
        if bias.ndim != 1 or y.ndim == 0 or bias.shape[0] != y.shape[-1]:
            raise ShapeError(f"{op}: bias must be 1-D of the output's last dim "
                             f"{list(y.shape[-1:])}, got shape {list(bias.shape)}")
        y += bias.astype(_F32)
    with np.errstate(all="ignore"):
        y = _tanh_gelu(y.reshape(y.shape or (1,))).reshape(y.shape)
    return (y.astype(x.dtype, copy=False),)


@_named("GemmFastGelu")
def _gemm_fast_gelu_infer(attrs, inputs):
    """MatMul's shape rule; bias, when known, 1-D of the output's last dim."""
    (y,) = _matmul_infer({}, inputs[:2])
    bias = inputs[2] if len(inputs) > 2 else None
    if bias is not None and bias.shape is not None and y.shape and (
            len(bias.shape) != 1 or None not in (bias.shape[0], y.shape[-1])
            and bias.shape[0] != y.shape[-1]):
        raise ShapeError(f"GemmFastGelu: bias must be 1-D of the output's last dim, got "
                         f"shape {list(bias.shape)}")
    return [y]


# --------------------------------------------------------------------------------------
# NhwcMaxPool
# --------------------------------------------------------------------------------------


def _nhwc_check(op, x):
    """x as an int8/uint8 array of rank >= 3.

    Raises:
        ShapeError: another dtype, or rank below 3.
    """
    x = np.asarray(x)
    if x.dtype not in (np.int8, np.uint8):
        raise ShapeError(f"{op}: x must be int8 or uint8, got {x.dtype}")
    if x.ndim < 3:
        raise ShapeError(f"{op}: x must be (N, *spatial, C) with a spatial dim, got shape "
                         f"{list(x.shape)}")
    return x


@_named("NhwcMaxPool")
def _nhwc_maxpool_kernel(inputs, attrs, ctx):
    """MaxPool over the spatial dims of channels-last x, returned channels-last."""
    x = _nhwc_check("NhwcMaxPool", inputs[0])
    if x.size == 0 and x.shape[0] != 0:
        raise ShapeError(f"NhwcMaxPool: x {list(x.shape)} is empty in a dim other than N "
                         "(onnxruntime refuses it)")
    nchw = np.moveaxis(x, -1, 1)
    attrs = pool_attrs("NhwcMaxPool", attrs)
    check_pool(op="NhwcMaxPool", x_shape=nchw.shape, attrs=attrs, itemsize=x.itemsize)
    if attrs.get("kernel_shape") is not None:
        nchw, attrs = ort_same_padding(nchw, attrs["kernel_shape"], attrs)
        attrs = short_input_pads(nchw.shape, attrs)
    (y,) = _maxpool_kernel([nchw], dict(attrs, __num_outputs__=1, storage_order=0), ctx)
    return (np.ascontiguousarray(np.moveaxis(y, 1, -1)),)


@_named("NhwcMaxPool")
def _nhwc_maxpool_infer(attrs, inputs):
    """MaxPool's shape rule on the channels-first view."""
    x = inputs[0]
    if x.dtype is not None and x.dtype not in (np.int8, np.uint8):
        raise ShapeError(f"NhwcMaxPool: x must be int8 or uint8, got {x.dtype}")
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    if len(x.shape) < 3:
        raise ShapeError(f"NhwcMaxPool: x must be (N, *spatial, C) with a spatial dim, got "
                         f"shape {list(x.shape)}")
    shape = (x.shape[0], x.shape[-1]) + tuple(x.shape[1:-1])
    attrs = pool_attrs("NhwcMaxPool", attrs)
    shape, attrs = same_padding_shape(shape, attrs.get("kernel_shape"), attrs)
    attrs = short_input_pads(shape, attrs)
    y = _maxpool_infer(attrs, [TensorInfo(x.dtype, shape)])[0]
    out = None if y.shape is None else (y.shape[0],) + tuple(y.shape[2:]) + (y.shape[1],)
    return [TensorInfo(x.dtype, out)]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

_fused_matmul_kernel, _fused_matmul_infer = _matmul_family("FusedMatMul")
_transpose_matmul_kernel, _transpose_matmul_infer = _matmul_family("TransposeMatMul")

_ACTIVATION_ATTRS = (("activation", "string", None), ("activation_params", "floats", None))
_GEMM_ACTIVATION_ATTRS = (("activation", "string", None), ("activation_alpha", "float", None),
                          ("activation_beta", "float", None),
                          ("activation_gamma", "float", None))

OPS = (
    define("FusedConv", ("X", "W", "B?", "Z?"), ("Y",), _fused_conv_kernel,
           _CONV_ATTRS + _ACTIVATION_ATTRS, infer=_fused_conv_infer, domain=_DOMAIN,
           dtypes=_FLOATS, check_attrs=_check_conv_activation,
           doc="activation(Conv(X, W, B) + Z), MLAS's fused activations."),
    define("FusedGemm", ("A", "B", "C?"), ("Y",), _fused_gemm_kernel,
           (("alpha", "float", 1.0), ("beta", "float", 1.0), ("transA", "int", 0),
            ("transB", "int", 0)) + _GEMM_ACTIVATION_ATTRS,
           infer=_fused_gemm_infer, domain=_DOMAIN, dtypes=_FLOATS,
           check_attrs=_check_gemm_activation,
           doc="activation(alpha * A' @ B' + beta * C)."),
    define("FusedMatMul", ("A", "B"), ("Y",), _fused_matmul_kernel,
           _MATMUL_ATTRS + (("transBatchA", "int", 0), ("transBatchB", "int", 0)),
           infer=_fused_matmul_infer, domain=_DOMAIN, dtypes=_FLOATS,
           check_attrs=_check_trans_flags,
           doc="alpha * A' @ B' with optional transposes of the last two and batch dims."),
    define("GemmFastGelu", ("X", "W", "bias?"), ("Y",), _gemm_fast_gelu_kernel,
           infer=_gemm_fast_gelu_infer, domain=_DOMAIN, dtypes=("float16", "float32"),
           doc="FastGelu(X @ W + bias), tanh-form Gelu."),
    define("NhwcMaxPool", ("x",), ("y",), _nhwc_maxpool_kernel,
           _POOL_ATTRS,
           infer=_nhwc_maxpool_infer, domain=_DOMAIN, dtypes=("int8", "uint8"),
           doc="MaxPool on channels-last int8/uint8 tensors."),
    define("TransposeMatMul", ("A", "B"), ("Y",), _transpose_matmul_kernel, _MATMUL_ATTRS,
           infer=_transpose_matmul_infer, domain=_DOMAIN, dtypes=_FLOATS,
           check_attrs=_check_trans_flags,
           doc="alpha * A' @ B' (FusedMatMul's older name, without transBatch)."),
)
