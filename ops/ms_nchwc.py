"""Operators: onnxruntime's NCHWc layout ops (domain "com.microsoft.nchwc").

onnxruntime's ORT_ENABLE_ALL level on x86 (MLAS's NCHWc kernels) rewrites float32 Conv,
pooling and Upsample/Resize nodes into this domain and saves them so in
`SessionOptions.optimized_model_filepath` files: ReorderInput converts NCHW (or NHWC,
channels_last=1) to NCHWc, the ops compute on NCHWc, ReorderOutput converts back,
keeping `channels` channels. Between them onnxruntime also leaves Add, Sum, Relu and
Concat on NCHWc tensors.

Representation. In onnxruntime an NCHWc tensor has the logical shape (N, Cp, H, W) with
Cp the channels rounded up to the block size B, stored as [N][Cp/B][H][W][B]. Only the
saved Conv weights show the blocked storage, so onegraph keeps NCHWc tensors as plain
(N, C', H, W) arrays: ReorderInput passes the channels through (no padding), a Conv
output has the filter's padded channel count (its extra channels are what onnxruntime
computes for them: the activation of zero), and ReorderOutput keeps the first
`channels`. Elementwise ops, Concat (onnxruntime keeps it only on block-aligned
inputs) and pooling then compute the same values as onnxruntime.

Conv weights are stored in MLAS's blocked layouts, decoded here to OIHW:
- OIHWBiBo, filter (Op, Ip, kh, kw) stored [Op/B][Ip/B][kh][kw][B_in][B_out]: convs
  whose input is NCHWc (group 1 and grouped convs; Ip is the per-group input channels,
  rounded up to B);
- OIHWBo, stored [Op/B][C][kh][kw][B_out]: convs reading a plain NCHW input of C < B
  channels (onnxruntime does not reorder such inputs), and depthwise convs (filter
  (Op, 1, kh, kw), group = channels).
B is 16 where onnxruntime ran on AVX-512 and 8 on AVX/AVX2. It is derived from the
node's tensors: B must divide every blocked dim, and an NCHW-input conv has fewer than
B input channels. A filter whose blocked dims are all multiples of 16 fits B = 8 and
B = 16 alike, with different weight orders, and nothing in the file tells them apart.
onnxruntime itself warns that ORT_ENABLE_ALL files are for the machine that wrote them
and reads such weights with its own block size; so does onegraph by default (16 where
the CPU has AVX-512F, 8 where it has AVX or AVX2, as MLAS picks). `BLOCK_SIZE` set to
8 or 16 overrides that, for a file written on another kind of machine; where neither
applies (not x86) such a node is refused with an UnsupportedOpError saying so.

Conv: activation(conv(X, W) + B + Sum), MLAS's activations (as FusedConv in
`ops/ms_fused.py`). MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: the standard
ops' kernels. Upsample: integer `scales`, mode nearest (asymmetric, floor) or linear
(asymmetric, align_corners or half_pixel), computed by onegraph's Resize. All float32
only, as onnxruntime. Refused: other dtypes, MaxPool storage_order=1, other Upsample
modes, ReorderOutput channels <= 0 or above the input's, GlobalAveragePool/GlobalMaxPool
of an input without pixels, Conv attributes onnxruntime refuses (see `ops/ms_fused.py`),
and sizes from values (pads, group, Upsample scales) whose buffers would pass 2 GiB
(ResourceExhaustedError, before allocating). MaxPool and AveragePool read ceil_mode and
auto_pad SAME_* (negative padding) as NhwcMaxPool does (see `ops/ms_fused.py`); Conv keeps
onegraph's SAME_* rule, which could not be checked against onnxruntime's NCHWc kernels
for strides longer than the kernel.
"""

from __future__ import annotations

import functools
import platform

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .conv import _CONV_ATTRS, conv_nd
from .ms_fused import (_activate, _conv_activation, _named, check_pool, check_result_size,
                       check_window, ort_same_padding, pool_attrs, same_padding_shape,
                       short_input_pads, single_window_strides)
from .pool import (_POOL_ATTRS, GlobalAveragePool, GlobalMaxPool, _averagepool_kernel,
                   _maxpool_infer, _maxpool_kernel, _pool_infer)
from .registry import TensorInfo, define, is_plan_constant, kernel_cache
from .shape import OPS as _SHAPE_OPS

_DOMAIN = "com.microsoft.nchwc"
_F32 = np.dtype(np.float32)

# The MLAS block sizes a file may have been written with (AVX-512: 16; AVX, AVX2: 8).
_BLOCK_SIZES = (16, 8)

# The block size to assume for a Conv whose tensors fit both (None: this machine's, as
# onnxruntime here would read the file). Set it to the block size of the machine that
# wrote the file when that was another kind of machine.
BLOCK_SIZE: int | None = None


@functools.lru_cache(maxsize=1)
def machine_block_size() -> int | None:
    """MLAS's NCHWc block size on this CPU: 16 with AVX-512F, 8 with AVX2 or AVX (what
    onnxruntime here writes and reads), None where MLAS has no NCHWc kernels (not x86)
    or numpy does not say."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return None
    # numpy's feature table is private: np._core from numpy 2, np.core before it
    # (numpy>=1.24 is supported); without it, do not guess
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    features = getattr(getattr(core, "_multiarray_umath", None), "__cpu_features__", None)
    if not isinstance(features, dict):
        return None
    if features.get("AVX512F"):
        return 16
    if features.get("AVX2") or features.get("AVX"):
        return 8
    return None

_RESIZE = next(op for op in _SHAPE_OPS if op.name == "Resize")


def _f32(op, x, what):
    """x as a float32 array.

    Raises:
        ShapeError: x is not float32 (onnxruntime's NCHWc kernels are float32 only).
    """
    x = np.asarray(x)
    if x.dtype != _F32:
        raise ShapeError(f"{op}: {what} must be float32, got {x.dtype}")
    return x


def _rank4(op, x, what="X"):
    """Raises ShapeError unless x is 4-D (MLAS's NCHWc kernels are 2-D)."""
    if x.ndim != 4:
        raise ShapeError(f"{op}: {what} must be 4-D (N, C, H, W), got shape {list(x.shape)}")


# --------------------------------------------------------------------------------------
# ReorderInput / ReorderOutput
# --------------------------------------------------------------------------------------


@_named("ReorderInput")
def _reorder_input_kernel(inputs, attrs, ctx):
    """NCHW (or NHWC with channels_last) to onegraph's NCHWc form: NCHW, unpadded."""
    x = _f32("ReorderInput", inputs[0], "X")
    _rank4("ReorderInput", x)
    if int(attrs["channels_last"]):
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    return (x,)


def _reorder_input_infer(attrs, inputs):
    """NCHW shape; channels_last moves the last dim to position 1."""
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    if len(x.shape) != 4:
        raise ShapeError(f"ReorderInput: X must be 4-D, got shape {list(x.shape)}")
    s = tuple(x.shape)
    return [TensorInfo(x.dtype, (s[0], s[3], s[1], s[2]) if int(attrs["channels_last"])
                       else s)]


def _output_channels(op, attrs, have):
    """ReorderOutput's `channels`, checked against the input's channel count."""
    channels = int(attrs["channels"])
    if channels <= 0:
        raise OpAttributeError(f"{op}: channels must be positive, got {channels}")
    if have is not None and channels > have:
        raise ShapeError(f"{op}: channels {channels} exceeds the input's {have}")
    return channels


@_named("ReorderOutput")
def _reorder_output_kernel(inputs, attrs, ctx):
    """The first `channels` channels, as NCHW (or NHWC with channels_last)."""
    op = "ReorderOutput"
    x = _f32(op, inputs[0], "X")
    _rank4(op, x)
    y = x[:, :_output_channels(op, attrs, x.shape[1])]
    y = y.transpose(0, 2, 3, 1) if int(attrs["channels_last"]) else y
    return (np.ascontiguousarray(y),)


def _reorder_output_infer(attrs, inputs):
    """(N, channels, H, W), or (N, H, W, channels) with channels_last."""
    x = inputs[0]
    op = "ReorderOutput"
    if x.shape is None:
        _output_channels(op, attrs, None)
        return [TensorInfo(x.dtype, None)]
    if len(x.shape) != 4:
        raise ShapeError(f"{op}: X must be 4-D, got shape {list(x.shape)}")
    c = _output_channels(op, attrs, x.shape[1])
    n, _, h, w = x.shape
    return [TensorInfo(x.dtype, (n, h, w, c) if int(attrs["channels_last"]) else (n, c, h, w))]


# --------------------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------------------


def decode_oihwbibo(w, block):
    """OIHW filter of an OIHWBiBo-blocked one: w (Op, Ip, kh, kw) stored as
    [Op/B][Ip/B][kh][kw][B_in][B_out]."""
    op_, ip, kh, kw = w.shape
    blocked = w.reshape(op_ // block, ip // block, kh, kw, block, block)
    return np.ascontiguousarray(blocked.transpose(0, 5, 1, 4, 2, 3)).reshape(w.shape)


def decode_oihwbo(w, block):
    """OIHW filter of an OIHWBo-blocked one: w (Op, C, kh, kw) stored as
    [Op/B][C][kh][kw][B_out]."""
    op_, c, kh, kw = w.shape
    blocked = w.reshape(op_ // block, c, kh, kw, block)
    return np.ascontiguousarray(blocked.transpose(0, 4, 1, 2, 3)).reshape(w.shape)


def _conv_form(x_channels, w_shape, group, block):
    """How onnxruntime would have laid out this Conv with block size `block`:
    "nchw" (OIHWBo filter, plain NCHW input of fewer than `block` channels),
    "depthwise" (OIHWBo, group = channels), "blocked" (OIHWBiBo), or None when the
    tensors cannot come from that block size."""
    op_, cin = w_shape[0], w_shape[1]
    if op_ % block:
        return None
    if group == 1 and cin < block:
        # the input was not reordered: X holds exactly the filter's input channels
        return "nchw" if x_channels == cin else None
    if group > 1 and cin == 1:
        # depthwise: one filter per channel (group = the channels, before or after
        # padding to a multiple of the block)
        fits = x_channels <= op_ and group in (x_channels, op_)
        return "depthwise" if fits else None
    if cin % block or x_channels > cin * group:
        return None
    return "blocked"


def _block_size(op, x_channels, w_shape, group):
    """(block size, form) of a Conv, from its tensors (see the module docstring).

    Raises:
        ShapeError: no block size fits the tensors.
        UnsupportedOpError: both fit with different weight orders and BLOCK_SIZE is
            not set.
    """
    fits = [(b, f) for b in _BLOCK_SIZES
            if (f := _conv_form(x_channels, w_shape, group, b)) is not None]
    if not fits:
        raise ShapeError(f"{op}: filter {list(w_shape)} (group {group}) on an input of "
                         f"{x_channels} channels fits no MLAS block size "
                         f"{' or '.join(map(str, _BLOCK_SIZES))}")
    if len(fits) == 1:
        return fits[0]
    if BLOCK_SIZE is not None:
        chosen = [fb for fb in fits if fb[0] == BLOCK_SIZE]
        if chosen:
            return chosen[0]
        raise ShapeError(f"{op}: filter {list(w_shape)} does not fit BLOCK_SIZE "
                         f"{BLOCK_SIZE}")
    chosen = [fb for fb in fits if fb[0] == machine_block_size()]
    if chosen:
        return chosen[0]
    raise UnsupportedOpError(
        f"{op}: filter {list(w_shape)} (group {group}) fits MLAS block sizes 16 and 8, "
        f"whose weight orders differ, the file does not say which wrote it and this "
        f"machine has no MLAS block size: set onegraph.ops.ms_nchwc.BLOCK_SIZE to the "
        f"writing machine's (16 with AVX-512, 8 with AVX/AVX2)")


def _decoded_filter(op, w, x_channels, group, attrs):
    """(OIHW filter, form), cached per node while the filter is the same plan constant
    (a fed filter is decoded every run: its buffer may have been refilled)."""
    constant = is_plan_constant(w)
    cache = kernel_cache(attrs) if constant else {}
    key = (id(w), x_channels, BLOCK_SIZE, machine_block_size())
    hit = cache.get("filter")
    if hit is not None and hit[0] == key and hit[1] is w:
        return hit[2], hit[3]
    block, form = _block_size(op, x_channels, w.shape, group)
    oihw = decode_oihwbibo(w, block) if form == "blocked" else decode_oihwbo(w, block)
    if constant:
        cache["filter"] = (key, w, oihw, form)
    return oihw, form


@_named("Conv")
def _conv_kernel(inputs, attrs, ctx):
    """activation(conv(X, W) + B + Sum) on NCHWc tensors (see the module docstring)."""
    op = "Conv"
    x = _f32(op, inputs[0], "X")
    w = _f32(op, inputs[1], "W")
    b = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
    s = inputs[3] if len(inputs) > 3 and inputs[3] is not None else None
    _rank4(op, x)
    _rank4(op, w, "W")
    fn, params = _conv_activation(op, attrs)
    group = int(attrs["group"])
    if group < 1:
        raise OpAttributeError(f"{op}: group {group} must be at least 1")
    oihw, form = _decoded_filter(op, w, x.shape[1], group, attrs)
    op_ = w.shape[0]
    if form == "depthwise":
        group = op_  # the padded channels are depthwise too (their filters are zeros)
    want = oihw.shape[1] * group
    # the channels the filter reads, X's own padded with zeros: a fuzzed group of 2**40
    # must be refused here, not allocated
    kernel = attrs.get("kernel_shape") or w.shape[2:]
    check_window(op, (x.shape[0], max(want, x.shape[1])) + x.shape[2:], kernel, attrs, op_,
                 x.itemsize, conv=True)
    attrs = single_window_strides(x.shape, kernel, attrs)
    if x.shape[1] < want:
        # an unpadded input (onegraph's ReorderInput): its missing channels are zeros
        x = np.concatenate([x, np.zeros((x.shape[0], want - x.shape[1]) + x.shape[2:],
                                        _F32)], axis=1)
    if b is not None:
        b = _f32(op, b, "B")
        if b.shape != (op_,):
            raise ShapeError(f"{op}: B must have shape ({op_},), got {list(b.shape)}")
    y = conv_nd(x, oihw, b, dict(attrs, group=group))
    if s is not None:
        s = _f32(op, s, "Sum")
        if s.shape != y.shape:
            raise ShapeError(f"{op}: Sum must have the output's shape {list(y.shape)}, got "
                             f"{list(s.shape)}")
        y = y + s
    return (np.asarray(_activate(fn, np.array(y, dtype=_F32, copy=False), params)),)


def _check_activation(attrs):
    """check_attrs of Conv: raises (UnsupportedOpError, OpAttributeError) unless the
    activation is one MLAS fuses, with its parameters, so a model fails at load."""
    _conv_activation("Conv", attrs)
    return None


def _conv_infer(attrs, inputs):
    """(N, Op, *out): the filter's padded output channels over Conv's geometry."""
    from .conv import _pool_geometry

    x, w = inputs[0], inputs[1]
    _conv_activation("Conv", attrs)
    if x.shape is None or w.shape is None or len(x.shape) != 4 or len(w.shape) != 4:
        if x.shape is not None and len(x.shape) != 4:
            raise ShapeError(f"Conv: X must be 4-D (N, C, H, W), got shape {list(x.shape)}")
        return [TensorInfo(x.dtype, None)]
    kernel = list(w.shape[2:])
    try:
        *_, out = _pool_geometry(x.shape[2:], kernel, attrs)
    except (ShapeError, OpAttributeError) as e:
        raise type(e)(f"Conv: {e}") from e
    return [TensorInfo(x.dtype, (x.shape[0], w.shape[0]) + tuple(out))]


# --------------------------------------------------------------------------------------
# Pooling, Upsample
# --------------------------------------------------------------------------------------


@_named("MaxPool")
def _max_pool_kernel(inputs, attrs, ctx):
    """MaxPool on NCHWc tensors (onnxruntime's kernel has no Indices output)."""
    x = _f32("MaxPool", inputs[0], "X")
    _rank4("MaxPool", x)
    if int(attrs["storage_order"]):
        raise UnsupportedOpError("MaxPool: storage_order=1 is not supported (no Indices "
                                 "output)")
    attrs = pool_attrs("MaxPool", attrs)
    check_pool("MaxPool", x.shape, attrs, x.itemsize)
    x, attrs = ort_same_padding(x, attrs["kernel_shape"], attrs)
    attrs = short_input_pads(x.shape, attrs)
    return (_maxpool_kernel([x], dict(attrs, __num_outputs__=1), ctx)[0],)


@_named("MaxPool")
def _max_pool_infer(attrs, inputs):
    """MaxPool's shape rule (the values output only)."""
    attrs = pool_attrs("MaxPool", attrs)
    x = inputs[0]
    shape, attrs = same_padding_shape(x.shape, attrs.get("kernel_shape"), attrs)
    if shape is not None:
        attrs = short_input_pads(shape, attrs)
    return _maxpool_infer(attrs, [TensorInfo(x.dtype, shape)])[:1]


@_named("AveragePool")
def _average_pool_kernel(inputs, attrs, ctx):
    """AveragePool on NCHWc tensors."""
    x = _f32("AveragePool", inputs[0], "X")
    _rank4("AveragePool", x)
    attrs = pool_attrs("AveragePool", attrs)
    check_pool("AveragePool", x.shape, attrs, x.itemsize)
    x, attrs = ort_same_padding(x, attrs["kernel_shape"], attrs)
    if not int(attrs["count_include_pad"]):  # (the extra padding must not count)
        attrs = short_input_pads(x.shape, attrs)
    return _averagepool_kernel([x], attrs, ctx)


def _global(op, std):
    """Kernel of nchwc GlobalAveragePool/GlobalMaxPool from the standard op `std`."""
    @_named(op)
    def kernel(inputs, attrs, ctx):
        """The standard op on a float32 4-D NCHWc tensor."""
        x = _f32(op, inputs[0], "X")
        _rank4(op, x)
        if x.shape[2] * x.shape[3] == 0:
            # (numpy's max of nothing is a ValueError, its mean a NaN with a warning)
            raise ShapeError(f"{op}: X {list(x.shape)} has no pixels to pool")
        return std.kernel([x], attrs, ctx)
    return kernel


_UPSAMPLE_MODES = {"nearest": ("asymmetric",),
                   "linear": ("asymmetric", "align_corners", "half_pixel")}


def _upsample_scales(op, attrs):
    """Upsample's integer scales (4 values, N and C scales 1).

    Raises:
        OpAttributeError: missing, not 4 values, below 1, or scaling N or C.
        UnsupportedOpError: a mode or coordinate_transformation_mode not implemented.
    """
    mode = attrs["mode"]
    mode = mode.decode() if isinstance(mode, bytes) else mode
    ctm = attrs["coordinate_transformation_mode"]
    ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
    if mode not in _UPSAMPLE_MODES:
        raise UnsupportedOpError(f"{op}: mode {mode!r} is not supported (nearest, linear)")
    if ctm not in _UPSAMPLE_MODES[mode]:
        raise UnsupportedOpError(f"{op}: coordinate_transformation_mode {ctm!r} is not "
                                 f"supported with mode {mode!r}")
    scales = attrs["scales"]
    if scales is None or len(scales) != 4 or min(scales) < 1 or list(scales[:2]) != [1, 1]:
        raise OpAttributeError(f"{op}: scales must be 4 integers >= 1 with N and C scales 1, "
                               f"got {None if scales is None else list(scales)}")
    return mode, ctm, [int(s) for s in scales]


@_named("Upsample")
def _upsample_kernel(inputs, attrs, ctx):
    """Upsample by integer scales with onegraph's Resize."""
    op = "Upsample"
    x = _f32(op, inputs[0], "X")
    _rank4(op, x)
    mode, ctm, scales = _upsample_scales(op, attrs)
    # the scales are values: an output past the result limit is refused, not allocated
    check_result_size(op, "the output", [d * k for d, k in zip(x.shape, scales)],
                      x.itemsize)
    if mode == "nearest":  # asymmetric + floor with integer scales: repeat each pixel
        return (np.ascontiguousarray(np.repeat(np.repeat(x, scales[2], 2), scales[3], 3)),)
    rattrs = _RESIZE.resolve_attrs({"mode": "linear", "coordinate_transformation_mode": ctm})
    return _RESIZE.kernel([x, None, np.asarray(scales, _F32)], rattrs, ctx)


def _upsample_infer(attrs, inputs):
    """Each dim times its scale."""
    x = inputs[0]
    _, _, scales = _upsample_scales("Upsample", attrs)
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    if len(x.shape) != 4:
        raise ShapeError(f"Upsample: X must be 4-D, got shape {list(x.shape)}")
    return [TensorInfo(x.dtype, tuple(None if d is None else d * s
                                      for d, s in zip(x.shape, scales)))]


def _pool_shape(op):
    """The standard pooling shape rule, errors named `op`."""
    def infer(attrs, inputs):
        """The pooling shape rule on the attrs as onnxruntime reads them."""
        attrs = pool_attrs(op, attrs)
        x = inputs[0]
        shape, attrs = same_padding_shape(x.shape, attrs.get("kernel_shape"), attrs)
        if shape is not None and not int(attrs.get("count_include_pad", 0)):
            attrs = short_input_pads(shape, attrs)
        return _pool_infer(attrs, [TensorInfo(x.dtype, shape)])
    return _named(op)(infer)


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

_F32S = ("float32",)

OPS = (
    define("AveragePool", ("X",), ("Y",), _average_pool_kernel,
           _POOL_ATTRS + (("count_include_pad", "int", 0),), infer=_pool_shape("AveragePool"),
           domain=_DOMAIN, dtypes=_F32S, doc="AveragePool on NCHWc tensors."),
    define("Conv", ("X", "W", "B?", "Sum?"), ("Y",), _conv_kernel,
           _CONV_ATTRS + (("activation", "string", None), ("activation_params", "floats", None)),
           infer=_conv_infer, domain=_DOMAIN, dtypes=_F32S,
           check_attrs=_check_activation,
           doc="activation(Conv + B + Sum) with an MLAS-blocked filter."),
    define("GlobalAveragePool", ("X",), ("Y",), _global("GlobalAveragePool", GlobalAveragePool),
           infer=GlobalAveragePool.infer, domain=_DOMAIN, dtypes=_F32S,
           doc="GlobalAveragePool on NCHWc tensors."),
    define("GlobalMaxPool", ("X",), ("Y",), _global("GlobalMaxPool", GlobalMaxPool),
           infer=GlobalMaxPool.infer, domain=_DOMAIN, dtypes=_F32S,
           doc="GlobalMaxPool on NCHWc tensors."),
    define("MaxPool", ("X",), ("Y",), _max_pool_kernel,
           _POOL_ATTRS + (("storage_order", "int", 0),), infer=_max_pool_infer,
           domain=_DOMAIN, dtypes=_F32S, doc="MaxPool on NCHWc tensors."),
    define("ReorderInput", ("X",), ("Y",), _reorder_input_kernel,
           (("channels_last", "int", 0),), infer=_reorder_input_infer, domain=_DOMAIN,
           dtypes=_F32S, doc="NCHW/NHWC to NCHWc (onegraph: NCHW, unpadded)."),
    define("ReorderOutput", ("X",), ("Y",), _reorder_output_kernel,
           (("channels", "int", 0), ("channels_last", "int", 0)),
           infer=_reorder_output_infer, domain=_DOMAIN, dtypes=_F32S,
           doc="NCHWc to NCHW/NHWC, keeping `channels` channels."),
    define("Upsample", ("X",), ("Y",), _upsample_kernel,
           (("coordinate_transformation_mode", "string", "asymmetric"),
            ("mode", "string", "nearest"), ("scales", "ints", None)),
           infer=_upsample_infer, domain=_DOMAIN, dtypes=_F32S,
           doc="Upsample by integer scales (nearest or linear)."),
)
