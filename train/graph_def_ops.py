"""og.import_graph_def's op table: each TF op type as a call to og's TF1-named functions.

Each converter takes (node, inputs, ctx) - the NodeDef, its data inputs as og Tensors, and
the importer's context (static values, the node's name) - and returns an og Tensor, a
list of Tensors (one per TF output) or an og Operation (for nodes without outputs).
Attribute defaults are TF's (op_def) defaults.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .graph_def_functions import FUNCTION_CONVERTERS
from .graph_def_state import STATE_CONVERTERS
from .graph_def_tensor_array import TENSOR_ARRAY_CONVERTERS

__all__ = ["CONVERTERS", "BACK_EDGE_SOURCES", "MERGE_KINDS"]

# a Merge's input from one of these is a loop's back edge (the importer patches it in)
BACK_EDGE_SOURCES = frozenset({"NextIteration", "RefNextIteration"})
MERGE_KINDS = frozenset({"Merge", "RefMerge"})


def _og():
    from . import public    # og's namespace; imported late as public.py imports this
    return public


def _where(node) -> str:
    return f"node {node.name!r} ({node.op})"


def _ints(ctx, node, t, what: str):
    """The static integer value of input `t` (a Const or a folded shape), as a list or int.

    Raises:
        ConversionError: the value is only known at run time.
    """
    value = _value(ctx, node, t, what)
    return int(value) if value.ndim == 0 else [int(v) for v in value.reshape(-1)]


def _value(ctx, node, t, what: str) -> np.ndarray:
    """The static value of input `t` as an array.

    Raises:
        ConversionError: the value is only known at run time.
    """
    value = ctx.static(t)
    if value is None:
        raise ConversionError(f"{_where(node)}: {what} must be a constant for og's "
                              f"importer, it is computed at run time")
    return np.asarray(value)


def _maybe_static(ctx, t):
    """Input `t` as plain ints when known while building (og's shape-like arguments
    often want Python values), else the tensor itself."""
    value = ctx.static(t)
    if value is None or np.asarray(value).dtype.kind not in "iu":
        return t
    value = np.asarray(value)
    return int(value) if value.ndim == 0 else value.tolist()


def _padding(node):
    """TF's padding attr: "SAME"/"VALID", or EXPLICIT's explicit_paddings as 4 pairs."""
    padding = node.get("padding", "VALID")
    if padding == "EXPLICIT":
        flat = [int(v) for v in node.get("explicit_paddings", [])]
        if len(flat) != 8:
            raise ConversionError(f"{_where(node)}: EXPLICIT padding needs 8 "
                                  f"explicit_paddings, got {len(flat)}")
        return [flat[i:i + 2] for i in range(0, 8, 2)]
    return padding


def _unary(fn_name):
    def convert(node, ins, ctx):
        fn = _og()
        for part in fn_name.split("."):
            fn = getattr(fn, part)
        return fn(ins[0], name=ctx.name)
    return convert


def _binary(fn_name):
    def convert(node, ins, ctx):
        fn = _og()
        for part in fn_name.split("."):
            fn = getattr(fn, part)
        return fn(ins[0], ins[1], name=ctx.name)
    return convert


def _shaped(fn_name):
    """A (tensor, shape-like argument) op; the argument passed as ints when static."""
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], _maybe_static(ctx, ins[1]), name=ctx.name)
    return convert


def _reduce(fn_name):
    def convert(node, ins, ctx):
        keep = bool(node.get("keep_dims", False))
        return getattr(_og(), fn_name)(ins[0], _maybe_static(ctx, ins[1]), keepdims=keep,
                                       name=ctx.name)
    return convert


def _placeholder(node, ins, ctx):
    shape = node.get("shape")
    return _og().placeholder(node.get("dtype"), shape, name=ctx.name)


def _const(node, ins, ctx):
    value = node.get("value")
    if value is None:
        raise ConversionError(f"{_where(node)}: has no value attr")
    dtype = node.get("dtype", value.dtype)
    return _og().constant(np.asarray(value, dtype=dtype), name=ctx.name)


def _matmul(node, ins, ctx):
    return _og().matmul(ins[0], ins[1], transpose_a=node.get("transpose_a", False),
                        transpose_b=node.get("transpose_b", False), name=ctx.name)


def _batch_matmul(node, ins, ctx):
    return _og().matmul(ins[0], ins[1], adjoint_a=node.get("adj_x", False),
                        adjoint_b=node.get("adj_y", False), name=ctx.name)


def _bias_add(node, ins, ctx):
    return _og().nn.bias_add(ins[0], ins[1], data_format=node.get("data_format", "NHWC"),
                             name=ctx.name)


def _conv2d(node, ins, ctx):
    return _og().nn.conv2d(ins[0], ins[1], strides=node.get("strides"),
                           padding=_padding(node), data_format=node.get("data_format", "NHWC"),
                           dilations=node.get("dilations", [1, 1, 1, 1]), name=ctx.name)


def _depthwise(node, ins, ctx):
    return _og().nn.depthwise_conv2d_native(
        ins[0], ins[1], node.get("strides"), _padding(node),
        data_format=node.get("data_format", "NHWC"),
        dilations=node.get("dilations", [1, 1, 1, 1]), name=ctx.name)


def _conv2d_backprop_input(node, ins, ctx):
    return _og().nn.conv2d_backprop_input(
        ins[0], ins[1], ins[2], strides=node.get("strides"), padding=_padding(node),
        data_format=node.get("data_format", "NHWC"),
        dilations=node.get("dilations", [1, 1, 1, 1]), name=ctx.name)


def _pool(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og().nn, fn_name)(ins[0], node.get("ksize"), node.get("strides"),
                                          node.get("padding"),
                                          data_format=node.get("data_format", "NHWC"),
                                          name=ctx.name)
    return convert


def _fused_batch_norm(node, ins, ctx):
    if node.get("is_training", True):
        raise ConversionError(f"{_where(node)}: is_training=True (batch statistics) is "
                              f"not supported; freeze the graph for inference")
    out = _og().nn.fused_batch_norm(ins[0], ins[1], ins[2], mean=ins[3], variance=ins[4],
                                    epsilon=node.get("epsilon", 1e-4),
                                    data_format=node.get("data_format", "NHWC"),
                                    is_training=False, name=ctx.name)
    y = out[0]
    # TF's outputs: y, batch mean, batch variance, then reserve spaces (the same stats)
    count = 6 if node.op == "FusedBatchNormV3" else 5
    return [y] + [ins[3], ins[4]] * 2 + [ins[3]] * (count - 5)


def _squeeze(node, ins, ctx):
    axis = node.get("squeeze_dims", []) or None
    return _og().squeeze(ins[0], axis=axis, name=ctx.name)


def _concat(node, ins, ctx):
    if node.op == "Concat":
        axis, values = ins[0], ins[1:]
    else:
        axis, values = ins[-1], ins[:-1]
    return _og().concat(list(values), _ints(ctx, node, axis, "the axis"), name=ctx.name)


def _pack(node, ins, ctx):
    return _og().stack(list(ins), axis=node.get("axis", 0), name=ctx.name)


def _unpack(node, ins, ctx):
    return list(_og().unstack(ins[0], num=node.get("num"), axis=node.get("axis", 0)))


def _slice_bounds(ctx, node, t, what: str, n: int):
    """Per-axis bounds of StridedSlice's input `t`: ints where known while building,
    else scalar tensors picked out of `t` (TF's begin/end computed at run time).

    Raises:
        ConversionError: `t` is not a vector of length n.
    """
    value = ctx.static(t)
    if value is not None:
        value = np.asarray(value).reshape(-1)
        if value.shape != (n,):
            raise ConversionError(f"{_where(node)}: {what} has {value.size} entries, "
                                  f"strides has {n}")
        return [int(v) for v in value]
    shape = t.shape
    if shape is not None and (len(shape) != 1 or shape[0] not in (None, n)):
        raise ConversionError(f"{_where(node)}: {what} must be a vector of {n} entries, "
                              f"its shape is {list(shape)}")
    return [_og().strided_slice(t, i) for i in range(n)]


def _strided_slice(node, ins, ctx):
    """TF's StridedSlice masks turned into a Python index for og.strided_slice. Begin
    and end may be run-time tensors (x[i] in a loop); strides must be constants, as
    og's Slice steps are (TF's own front ends always emit constant strides)."""
    og = _og()
    strides = _ints(ctx, node, ins[3], "strides")
    if not isinstance(strides, list):
        raise ConversionError(f"{_where(node)}: strides must be a vector")
    begin = _slice_bounds(ctx, node, ins[1], "begin", len(strides))
    end = _slice_bounds(ctx, node, ins[2], "end", len(strides))
    masks = {k: int(node.get(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                              "new_axis_mask", "shrink_axis_mask")}
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif masks["new_axis_mask"] & bit:
            key.append(None)
        elif masks["shrink_axis_mask"] & bit:
            key.append(b)
        else:
            key.append(slice(None if masks["begin_mask"] & bit else b,
                             None if masks["end_mask"] & bit else e, s))
    return og.identity(og.strided_slice(ins[0], tuple(key)), name=ctx.name)


def _pad(node, ins, ctx):
    og = _og()
    if node.op == "MirrorPad":
        paddings = np.reshape(_ints(ctx, node, ins[1], "paddings"), (-1, 2)).tolist()
        return og.pad(ins[0], paddings, mode=node.get("mode"), name=ctx.name)
    fill = _value(ctx, node, ins[2], "constant_values") if node.op == "PadV2" else 0
    return og.pad(ins[0], ins[1], constant_values=fill, name=ctx.name)


def _arg(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], _maybe_static(ctx, ins[1]),
                                       output_type=node.get("output_type", np.int64),
                                       name=ctx.name)
    return convert


def _gather_v2(node, ins, ctx):
    return _og().gather(ins[0], ins[1], axis=_ints(ctx, node, ins[2], "the axis"),
                        batch_dims=node.get("batch_dims", 0), name=ctx.name)


def _resize(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og().image, fn_name)(
            ins[0], ins[1], align_corners=node.get("align_corners", False),
            half_pixel_centers=node.get("half_pixel_centers", False), name=ctx.name)
    return convert


def _split(node, ins, ctx):
    axis = _ints(ctx, node, ins[0], "the axis")
    return list(_og().split(ins[1], node.get("num_split"), axis=axis, name=ctx.name))


def _split_v(node, ins, ctx):
    sizes = _ints(ctx, node, ins[1], "size_splits")
    axis = _ints(ctx, node, ins[2], "the axis")
    return list(_og().split(ins[0], sizes, axis=axis, name=ctx.name))


def _top_k(node, ins, ctx):
    k = _ints(ctx, node, ins[1], "k")
    out = _og().nn.top_k(ins[0], k=k, sorted=node.get("sorted", True), name=ctx.name)
    return [out[0], out[1]]


def _range(node, ins, ctx):
    return _og().range(ins[0], ins[1], ins[2], dtype=node.get("Tidx"), name=ctx.name)


def _shape_like(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], out_type=node.get("out_type", np.int32),
                                       name=ctx.name)
    return convert


def _one_hot(node, ins, ctx):
    """TF's OneHot: on/off values are tensors; og's one_hot wants numbers, so run-time
    ones pick through a 0/1 mask instead."""
    og = _og()
    depth = _maybe_static(ctx, ins[1])
    axis = int(node.get("axis", -1))
    on, off = ctx.static(ins[2]), ctx.static(ins[3])
    if on is not None and off is not None:
        return og.one_hot(ins[0], depth, on_value=np.asarray(on).item(),
                          off_value=np.asarray(off).item(), axis=axis,
                          dtype=node.get("T", ins[2].dtype), name=ctx.name)
    mask = og.cast(og.one_hot(ins[0], depth, axis=axis, dtype=np.int32), np.bool_)
    return og.where_v2(mask, ins[2], ins[3], name=ctx.name)


def _where_true(node, ins, ctx):
    """Where with one input: the coordinates of the true (non-zero) entries."""
    og = _og()
    cond = ins[0]
    if cond.dtype != og.bool:
        cond = og.not_equal(cond, og.zeros([], dtype=cond.dtype))
    return og.where(cond, name=ctx.name)


def _cumulative(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], axis=_ints(ctx, node, ins[1], "the axis"),
                                       exclusive=bool(node.get("exclusive", False)),
                                       reverse=bool(node.get("reverse", False)),
                                       name=ctx.name)
    return convert


def _block_op(fn_name):
    """DepthToSpace / SpaceToDepth: a block_size attr and a data_format."""
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], int(node.get("block_size")), name=ctx.name,
                                       data_format=node.get("data_format", "NHWC"))
    return convert


def _conv3d(node, ins, ctx):
    return _og().nn.conv3d(ins[0], ins[1], strides=node.get("strides"),
                           padding=node.get("padding"),
                           data_format=node.get("data_format", "NDHWC"),
                           dilations=node.get("dilations", [1, 1, 1, 1, 1]), name=ctx.name)


def _pool3d(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og().nn, fn_name)(ins[0], node.get("ksize"), node.get("strides"),
                                          node.get("padding"),
                                          data_format=node.get("data_format", "NDHWC"),
                                          name=ctx.name)
    return convert


def _max_pool_v2(node, ins, ctx):
    """MaxPoolV2: MaxPool with ksize and strides as (constant) inputs."""
    return _og().nn.max_pool(ins[0], _ints(ctx, node, ins[1], "ksize"),
                             _ints(ctx, node, ins[2], "strides"), node.get("padding"),
                             data_format=node.get("data_format", "NHWC"), name=ctx.name)


def _lrn(node, ins, ctx):
    return _og().nn.lrn(ins[0], depth_radius=int(node.get("depth_radius", 5)),
                        bias=float(node.get("bias", 1.0)), alpha=float(node.get("alpha", 1.0)),
                        beta=float(node.get("beta", 0.5)), name=ctx.name)


def _resize_area(node, ins, ctx):
    return _og().image.resize_area(ins[0], ins[1],
                                   align_corners=node.get("align_corners", False),
                                   name=ctx.name)


def _crop_and_resize(node, ins, ctx):
    return _og().image.crop_and_resize(
        ins[0], ins[1], box_ind=ins[2], crop_size=_ints(ctx, node, ins[3], "crop_size"),
        method=node.get("method", "bilinear"),
        extrapolation_value=float(node.get("extrapolation_value", 0.0)), name=ctx.name)


def _nms(node, ins, ctx):
    """NonMaxSuppressionV2..V5 (V2 has no score_threshold, V5 adds soft_nms_sigma);
    V4 returns (indices, valid_outputs), V5 (indices, scores, valid_outputs)."""
    from .image_more import _v5    # og's one NMS op behind all its NMS functions
    threshold = ins[4] if len(ins) > 4 else float("-inf")
    sigma = ins[5] if node.op == "NonMaxSuppressionV5" else 0.0
    pad = bool(node.get("pad_to_max_output_size", False))
    idx, scores, valid = _v5(ins[0], ins[1], ins[2], ins[3], threshold, sigma, pad,
                             _where(node))
    if node.op == "NonMaxSuppressionV5":
        return [idx, scores, valid]
    if node.op == "NonMaxSuppressionV4":
        return [idx, valid]
    return _og().identity(idx, name=ctx.name)


def _segment(fn_name, sorted_ids):
    def convert(node, ins, ctx):
        fn = getattr(_og(), fn_name)
        if sorted_ids:
            return fn(ins[0], ins[1], name=ctx.name)
        return fn(ins[0], ins[1], _maybe_static(ctx, ins[2]), name=ctx.name)
    return convert


def _align(node):
    align = node.get("align", "RIGHT_LEFT")
    return align.decode() if isinstance(align, bytes) else align


def _k(ctx, node, t):
    k = _ints(ctx, node, t, "k")
    return tuple(k) if isinstance(k, list) else k


def _matrix_diag(node, ins, ctx):
    og = _og()
    if node.op == "MatrixDiag":
        return og.matrix_diag(ins[0], name=ctx.name)
    return og.matrix_diag(ins[0], k=_k(ctx, node, ins[1]),
                          num_rows=_ints(ctx, node, ins[2], "num_rows"),
                          num_cols=_ints(ctx, node, ins[3], "num_cols"),
                          padding_value=ins[4], align=_align(node), name=ctx.name)


def _matrix_set_diag(node, ins, ctx):
    og = _og()
    if node.op == "MatrixSetDiag":
        return og.matrix_set_diag(ins[0], ins[1], name=ctx.name)
    return og.matrix_set_diag(ins[0], ins[1], k=_k(ctx, node, ins[2]), align=_align(node),
                              name=ctx.name)


def _matrix_diag_part(node, ins, ctx):
    og = _og()
    if node.op == "MatrixDiagPart":
        return og.matrix_diag_part(ins[0], name=ctx.name)
    return og.matrix_diag_part(ins[0], k=_k(ctx, node, ins[1]), padding_value=ins[2],
                               align=_align(node), name=ctx.name)


def _qr(node, ins, ctx):
    return list(_og().qr(ins[0], full_matrices=bool(node.get("full_matrices", False)),
                         name=ctx.name))


def _svd(node, ins, ctx):
    """TF's Svd has three outputs always; without compute_uv, u and v are unset."""
    og = _og()
    full = bool(node.get("full_matrices", False))
    if node.get("compute_uv", True):
        return list(og.svd(ins[0], full_matrices=full, compute_uv=True, name=ctx.name))
    s = og.svd(ins[0], full_matrices=full, compute_uv=False, name=ctx.name)
    empty = og.zeros([], dtype=ins[0].dtype)     # TF's unset u, v: scalars
    return [s, empty, empty]


def _bucketize(node, ins, ctx):
    """Bucketize: the number of boundaries <= x (TF's bucket index), as int32."""
    og = _og()
    bounds = np.asarray([float(b) for b in node.get("boundaries", [])], np.float64)
    if bounds.size and np.any(np.diff(bounds) < 0):
        raise ConversionError(f"{_where(node)}: boundaries must be sorted")
    if not bounds.size:
        return og.zeros_like(ins[0], dtype=np.int32, name=ctx.name)
    x = og.expand_dims(ins[0], -1)
    hits = og.greater_equal(x, og.constant(bounds.astype(ins[0].dtype.as_numpy_dtype)))
    return og.reduce_sum(og.cast(hits, np.int32), axis=-1, name=ctx.name)


def _extract_patches(node, ins, ctx):
    return _og().image.extract_image_patches(
        ins[0], ksizes=node.get("ksizes"), strides=node.get("strides"),
        rates=node.get("rates"), padding=node.get("padding"), name=ctx.name)


def _fake_quant(node, ins, ctx):
    og = _og()
    bits, narrow = int(node.get("num_bits", 8)), bool(node.get("narrow_range", False))
    if node.op == "FakeQuantWithMinMaxArgs":
        return og.fake_quant_with_min_max_args(
            ins[0], min=float(node.get("min", -6.0)), max=float(node.get("max", 6.0)),
            num_bits=bits, narrow_range=narrow, name=ctx.name)
    return og.fake_quant_with_min_max_vars(ins[0], ins[1], ins[2], num_bits=bits,
                                           narrow_range=narrow, name=ctx.name)


def _fake_quant_per_channel(node, ins, ctx):
    """Per-channel fake quantisation: og has no per-channel function, so TF's recipe
    (nudge min/max so 0 is exact, clamp, round to the grid) is composed from og ops,
    one (min, max) per entry of the last axis."""
    og = _og()
    bits, narrow = int(node.get("num_bits", 8)), bool(node.get("narrow_range", False))
    qmin, qmax = (1.0 if narrow else 0.0), float(2 ** bits - 1)
    lo, hi = og.cast(ins[1], np.float32), og.cast(ins[2], np.float32)
    scale = (hi - lo) / (qmax - qmin)
    zero = og.clip_by_value(og.round(qmin - lo / scale), qmin, qmax)
    nudged_lo, nudged_hi = (qmin - zero) * scale, (qmax - zero) * scale
    x = og.clip_by_value(og.cast(ins[0], np.float32), nudged_lo, nudged_hi)
    q = og.floor((x - nudged_lo) / scale + 0.5) * scale + nudged_lo
    return og.identity(q, name=ctx.name)


def _pass_through(node, ins, ctx):
    """An op whose output is its first input (Print: og's Print prints the same)."""
    og = _og()
    if node.op == "Print":
        return og.Print(ins[0], list(ins[1:]), message=node.get("message", None),
                        first_n=node.get("first_n", -1),
                        summarize=node.get("summarize", 3), name=ctx.name)
    return og.check_numerics(ins[0], node.get("message", ""), name=ctx.name)


def _string_format(node, ins, ctx):
    return _og().strings.format(node.get("template", "%s"), list(ins),
                                placeholder=node.get("placeholder", "%s"),
                                summarize=int(node.get("summarize", 3)), name=ctx.name)


def _print_v2(node, ins, ctx):
    """PrintV2 writes its scalar string (StringFormat's output) as it is: og's own
    PrintV2 op with tf.Print's style, which leaves a scalar string unquoted. TF's
    log(...) streams go to stderr; file://<path> is appended to, as in TF."""
    stream = node.get("output_stream", "stderr")
    if not (stream == "stdout" or stream.startswith("file://")):
        stream = "stderr"
    attrs = {"template": ["", node.get("end", "\n")], "summarize": -1, "style": "v1",
             "output_stream": stream, "first_n": -1}
    return _graph().op("PrintV2", [ins[0]], attrs, name=ctx.name)


def _decode_image(node, ins, ctx):
    og = _og()
    channels = int(node.get("channels", 0))
    if node.op == "DecodePng":
        return og.image.decode_png(ins[0], channels=channels,
                                   dtype=node.get("dtype", np.uint8), name=ctx.name)
    return og.image.decode_jpeg(
        ins[0], channels=channels, ratio=int(node.get("ratio", 1)),
        fancy_upscaling=bool(node.get("fancy_upscaling", True)),
        try_recover_truncated=bool(node.get("try_recover_truncated", False)),
        acceptable_fraction=float(node.get("acceptable_fraction", 1.0)),
        dct_method=node.get("dct_method", ""), name=ctx.name)


def _softmax_xent(node, ins, ctx):
    """(loss, backprop): backprop is softmax(logits) - labels (one-hot for the sparse
    op), TF's gradient output."""
    og = _og()
    logits, labels = ins[0], ins[1]
    if node.op == "SparseSoftmaxCrossEntropyWithLogits":
        loss = og.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                              name=ctx.name)
        depth = og.shape(logits, out_type=labels.dtype)[-1]
        labels = og.one_hot(labels, depth, dtype=logits.dtype)
    else:
        loss = og.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                          name=ctx.name)
    return [loss, og.nn.softmax(logits) - labels]


def _int64(t):
    """Indices as int64: og passes int32 ones through to ONNX's GatherND / ScatterND,
    which refuse them (the values are the same)."""
    og = _og()
    return t if t.dtype == og.int64 else og.cast(t, og.int64)


def _scatter_nd(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], _int64(ins[1]), ins[2], name=ctx.name)
    return convert


_MORE = {
    "GatherNd": lambda n, i, c: _og().gather_nd(i[0], _int64(i[1]), name=c.name),
    "ScatterNd": lambda n, i, c: _og().scatter_nd(_int64(i[0]), i[1],
                                                  _maybe_static(c, i[2]), name=c.name),
    "OneHot": _one_hot,
    "Where": _where_true,
    "ReverseV2": lambda n, i, c: _og().reverse(i[0], _ints(c, n, i[1], "the axis"),
                                               name=c.name),
    "Cumsum": _cumulative("cumsum"), "Cumprod": _cumulative("cumprod"),
    "ClipByValue": lambda n, i, c: _og().clip_by_value(i[0], i[1], i[2], name=c.name),
    "BroadcastTo": _shaped("broadcast_to"),
    "DepthToSpace": _block_op("depth_to_space"), "SpaceToDepth": _block_op("space_to_depth"),
    "SpaceToBatchND": lambda n, i, c: _og().space_to_batch_nd(
        i[0], _maybe_static(c, i[1]), _maybe_static(c, i[2]), name=c.name),
    "BatchToSpaceND": lambda n, i, c: _og().batch_to_space_nd(
        i[0], _maybe_static(c, i[1]), _maybe_static(c, i[2]), name=c.name),
    "Conv3D": _conv3d, "MaxPool3D": _pool3d("max_pool3d"), "AvgPool3D": _pool3d("avg_pool3d"),
    "MaxPoolV2": _max_pool_v2, "LRN": _lrn,
    "ResizeBicubic": _resize("resize_bicubic"), "ResizeArea": _resize_area,
    "CropAndResize": _crop_and_resize,
    "NonMaxSuppressionV2": _nms, "NonMaxSuppressionV3": _nms, "NonMaxSuppressionV4": _nms,
    "NonMaxSuppressionV5": _nms,
    "LinSpace": lambda n, i, c: _og().lin_space(i[0], i[1], i[2], name=c.name),
    "Unique": lambda n, i, c: list(_og().unique(i[0], out_idx=n.get("out_idx", np.int32),
                                                name=c.name)),
    "UnsortedSegmentSum": _segment("unsorted_segment_sum", False),
    "UnsortedSegmentMax": _segment("unsorted_segment_max", False),
    "UnsortedSegmentMin": _segment("unsorted_segment_min", False),
    "UnsortedSegmentProd": _segment("unsorted_segment_prod", False),
    "SegmentSum": _segment("segment_sum", True), "SegmentMean": _segment("segment_mean", True),
    "SegmentMax": _segment("segment_max", True), "SegmentMin": _segment("segment_min", True),
    "SegmentProd": _segment("segment_prod", True),
    "MatrixBandPart": lambda n, i, c: _og().matrix_band_part(
        i[0], _maybe_static(c, i[1]), _maybe_static(c, i[2]), name=c.name),
    "MatrixDiag": _matrix_diag, "MatrixDiagV3": _matrix_diag,
    "MatrixSetDiag": _matrix_set_diag, "MatrixSetDiagV3": _matrix_set_diag,
    "MatrixDiagPart": _matrix_diag_part, "MatrixDiagPartV3": _matrix_diag_part,
    "MatrixInverse": lambda n, i, c: _og().matrix_inverse(
        i[0], adjoint=bool(n.get("adjoint", False)), name=c.name),
    "Qr": _qr, "Svd": _svd, "Bucketize": _bucketize,
    "Roll": lambda n, i, c: _og().roll(i[0], _maybe_static(c, i[1]), _maybe_static(c, i[2]),
                                       name=c.name),
    "ExtractImagePatches": _extract_patches,
    "FakeQuantWithMinMaxVars": _fake_quant, "FakeQuantWithMinMaxArgs": _fake_quant,
    "FakeQuantWithMinMaxVarsPerChannel": _fake_quant_per_channel,
    "CheckNumerics": _pass_through, "Print": _pass_through,
    "StringFormat": _string_format, "PrintV2": _print_v2,
    "DecodeJpeg": _decode_image, "DecodePng": _decode_image,
    "EncodePng": lambda n, i, c: _og().image.encode_png(
        i[0], compression=int(n.get("compression", -1)), name=c.name),
    "SoftmaxCrossEntropyWithLogits": _softmax_xent,
    "SparseSoftmaxCrossEntropyWithLogits": _softmax_xent,
    "TensorScatterUpdate": _scatter_nd("tensor_scatter_update"),
    "TensorScatterAdd": _scatter_nd("tensor_scatter_add"),
    "TensorScatterSub": _scatter_nd("tensor_scatter_sub"),
}
_MORE_UNARY = {
    "Tan": "tan", "Atan": "atan", "Asin": "asin", "Acos": "acos", "Sinh": "sinh",
    "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh", "Expm1": "expm1",
    "Log1p": "log1p", "Erfc": "erfc", "IsNan": "is_nan", "IsInf": "is_inf",
    "IsFinite": "is_finite", "Softsign": "nn.softsign", "Lgamma": "lgamma",
    "Digamma": "digamma", "Invert": "bitwise.invert", "L2Loss": "nn.l2_loss",
    "InvertPermutation": "invert_permutation", "Cholesky": "cholesky",
    "MatrixDeterminant": "matrix_determinant",
}
_MORE_BINARY = {
    # TF's Mod is C's remainder (a truncating divide): not tf.math.mod's FloorMod
    "Atan2": "atan2", "Mod": "truncatemod", "TruncateDiv": "truncatediv",
    "TruncateMod": "truncatemod", "DivNoNan": "div_no_nan", "Xlogy": "math.xlogy",
    "Xdivy": "math.xdivy", "BitwiseAnd": "bitwise.bitwise_and",
    "BitwiseOr": "bitwise.bitwise_or", "BitwiseXor": "bitwise.bitwise_xor",
    "LeftShift": "bitwise.left_shift", "RightShift": "bitwise.right_shift",
}

_SIMPLE_UNARY = {
    "Identity": "identity", "Snapshot": "identity", "StopGradient": "stop_gradient",
    "Neg": "negative", "Abs": "abs", "Sqrt": "sqrt", "Rsqrt": "rsqrt", "Square": "square",
    "Exp": "exp", "Log": "log", "Tanh": "tanh", "Sigmoid": "sigmoid", "Relu": "nn.relu",
    "Relu6": "nn.relu6", "Elu": "nn.elu", "Selu": "nn.selu", "Softplus": "nn.softplus",
    "Softmax": "nn.softmax", "LogSoftmax": "nn.log_softmax", "Erf": "erf", "Floor": "floor",
    "Ceil": "ceil", "Round": "round", "Sign": "sign", "LogicalNot": "logical_not",
    "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos", "Rank": "rank",
}
_SIMPLE_BINARY = {
    "Add": "add", "AddV2": "add", "Sub": "subtract", "Mul": "multiply",
    "RealDiv": "realdiv", "Div": "div", "FloorDiv": "floordiv", "FloorMod": "floormod",
    "Maximum": "maximum", "Minimum": "minimum", "Pow": "pow",
    "SquaredDifference": "squared_difference", "Equal": "equal", "NotEqual": "not_equal",
    "Less": "less", "Greater": "greater", "LessEqual": "less_equal",
    "GreaterEqual": "greater_equal", "LogicalAnd": "logical_and", "LogicalOr": "logical_or",
    "Gather": "gather",
}

# --------------------------------------------------------------------- control flow v1
# TF1's dataflow control flow maps one to one onto og's own ops (ops/dataflow.py), which
# the Session runs as frames and the ONNX export rewrites to If / Loop; both read only
# the IR, so no og.cond / og.while_loop bookkeeping is made for imported nodes (and
# gradients through them are refused: see graph_def_import's module doc).

def _graph():
    return _og().get_default_graph()


def _predicate(t):
    """`t` with plain Identities (no control inputs) looked through. TF's cond switches
    its values on pred_id = Identity(pred) but its pivot on pred itself; og's export
    finds a cond by the one predicate its Switches share, and the values are equal."""
    while True:
        op = t.op
        if op is None or op.type != "Identity" or op.control_inputs:
            return t
        t = op.inputs[0]


def _switch(node, ins, ctx):
    return list(_graph().op("Switch", [ins[0], _predicate(ins[1])], name=ctx.name))


def _merge(node, ins, ctx):
    """Merge of the live input. For a loop's back edge (its NextIteration, built later)
    the importer passes the entering value and patches the input once that exists."""
    if not ins:
        raise ConversionError(f"{_where(node)}: a Merge needs at least one input")
    return list(_graph().op("Merge", list(ins), name=ctx.name))


def _enter(node, ins, ctx):
    frame = node.get("frame_name", "")
    if not isinstance(frame, str) or not frame:
        raise ConversionError(f"{_where(node)}: an Enter needs a frame_name")
    attrs = {"frame_name": frame, "is_constant": int(bool(node.get("is_constant", False))),
             "parallel_iterations": int(node.get("parallel_iterations", 10))}
    return _graph().op("Enter", [ins[0]], attrs, name=ctx.name)


def _exit(node, ins, ctx):
    """TF's Exit has no frame_name; og's names the frame it leaves (the importer
    tracks which frame each node runs in)."""
    if not ctx.frame:
        raise ConversionError(f"{_where(node)}: its input is not inside a loop frame "
                              "(no Enter leads to it)")
    return _graph().op("Exit", [ins[0]], {"frame_name": ctx.frame}, name=ctx.name)


_CONTROL_FLOW = {
    "Switch": _switch, "RefSwitch": _switch, "Merge": _merge, "RefMerge": _merge,
    "Enter": _enter, "RefEnter": _enter, "Exit": _exit, "RefExit": _exit,
    "NextIteration": lambda n, i, c: _graph().op("NextIteration", [i[0]], name=c.name),
    "RefNextIteration": lambda n, i, c: _graph().op("NextIteration", [i[0]], name=c.name),
    "LoopCond": lambda n, i, c: _graph().op("LoopCond", [i[0]], name=c.name),
}


CONVERTERS = {
    "Placeholder": _placeholder,
    "PlaceholderWithDefault": lambda n, i, c: _og().placeholder_with_default(
        i[0], n.get("shape"), name=c.name),
    "Const": _const,
    "IdentityN": lambda n, i, c: list(_og().identity_n(list(i), name=c.name)),
    "NoOp": lambda n, i, c: _og().no_op(name=c.name),
    # og's run-time check (tf.nn.dynamic_rnn adds one on sequence_length's shape)
    "Assert": lambda n, i, c: _og().Assert(i[0], list(i[1:]),
                                           summarize=int(n.get("summarize", 3)), name=c.name),
    "MatMul": _matmul, "BatchMatMul": _batch_matmul, "BatchMatMulV2": _batch_matmul,
    "BatchMatMulV3": _batch_matmul,
    "BiasAdd": _bias_add, "BiasAddV1": _bias_add,
    "AddN": lambda n, i, c: _og().add_n(list(i), name=c.name),
    "LeakyRelu": lambda n, i, c: _og().nn.leaky_relu(i[0], alpha=n.get("alpha", 0.2),
                                                     name=c.name),
    "Conv2D": _conv2d, "DepthwiseConv2dNative": _depthwise,
    "Conv2DBackpropInput": _conv2d_backprop_input,
    "MaxPool": _pool("max_pool"), "AvgPool": _pool("avg_pool"),
    "FusedBatchNorm": _fused_batch_norm, "FusedBatchNormV2": _fused_batch_norm,
    "FusedBatchNormV3": _fused_batch_norm,
    "Squeeze": _squeeze, "ConcatV2": _concat, "Concat": _concat,
    "Pack": _pack, "Unpack": _unpack,
    "Shape": _shape_like("shape"), "Size": _shape_like("size"),
    "StridedSlice": _strided_slice,
    "Transpose": lambda n, i, c: _og().transpose(i[0], _ints(c, n, i[1], "perm"),
                                                 name=c.name),
    "Slice": lambda n, i, c: _og().slice(i[0], _maybe_static(c, i[1]),
                                         _maybe_static(c, i[2]), name=c.name),
    "Fill": lambda n, i, c: _og().fill(_maybe_static(c, i[0]), i[1], name=c.name),
    "Pad": _pad, "PadV2": _pad, "MirrorPad": _pad,
    "Mean": _reduce("reduce_mean"), "Sum": _reduce("reduce_sum"),
    "Max": _reduce("reduce_max"), "Min": _reduce("reduce_min"),
    "Prod": _reduce("reduce_prod"), "Any": _reduce("reduce_any"),
    "All": _reduce("reduce_all"),
    "ArgMax": _arg("argmax"), "ArgMin": _arg("argmin"),
    "Cast": lambda n, i, c: _og().cast(i[0], n.get("DstT"), name=c.name),
    "ZerosLike": lambda n, i, c: _og().zeros_like(i[0], name=c.name),
    "OnesLike": lambda n, i, c: _og().ones_like(i[0], name=c.name),
    "GatherV2": _gather_v2,
    "Select": lambda n, i, c: _og().where(i[0], i[1], i[2], name=c.name),
    "SelectV2": lambda n, i, c: _og().where_v2(i[0], i[1], i[2], name=c.name),
    "ResizeBilinear": _resize("resize_bilinear"),
    "ResizeNearestNeighbor": _resize("resize_nearest_neighbor"),
    "Split": _split, "SplitV": _split_v, "TopKV2": _top_k, "Range": _range,
    "Einsum": lambda n, i, c: _og().einsum(n.get("equation"), *i, name=c.name),
}
CONVERTERS.update({op: _unary(fn) for op, fn in _SIMPLE_UNARY.items()})
CONVERTERS.update({op: _binary(fn) for op, fn in _SIMPLE_BINARY.items()})
CONVERTERS.update({op: _shaped(fn) for op, fn in (("Reshape", "reshape"), ("Tile", "tile"),
                                                  ("ExpandDims", "expand_dims"))})
CONVERTERS.update(_MORE)
CONVERTERS.update({op: _unary(fn) for op, fn in _MORE_UNARY.items()})
CONVERTERS.update({op: _binary(fn) for op, fn in _MORE_BINARY.items()})
CONVERTERS.update(_CONTROL_FLOW)
CONVERTERS.update(TENSOR_ARRAY_CONVERTERS)
CONVERTERS.update(FUNCTION_CONVERTERS)
CONVERTERS.update(STATE_CONVERTERS)
