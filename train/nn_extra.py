"""More of TF1's tf.nn: transposed, separable, atrous and 1-D convolutions, local
response normalisation, space/depth rearrangements and the weighted logistic loss.

Images are NHWC unless data_format="NCHW", filters keep TF's layouts, and each function
is one or a few ONNX ops (ConvTranspose, Conv, LRN, SpaceToDepth, DepthToSpace), so
graphs using them export.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from . import api
from . import api_extra
from . import api_math
from . import debugging
from . import graph as _g
from .api import _t
from .graph import Tensor
from .nn_ops import (_back, _explicit_pairs, _filter, _image_format, _image_input, _nchw,
                     _spatial, _window_padding, check_valid_window, conv2d_op,
                     depthwise_conv2d)

__all__ = ["atrous_conv2d", "conv1d", "conv2d_transpose", "depth_to_space",
           "local_response_normalization", "lrn", "separable_conv2d", "space_to_depth",
           "weighted_cross_entropy_with_logits"]


# --------------------------------------------------------------------------- transposed

def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None) -> Tensor:
    """TF1's tf.nn.conv2d_transpose: the gradient of conv2d with respect to its input.
    `filter` is (kh, kw, out_channels, in_channels); `output_shape` the 4-D shape of
    the result (ints, a 1-D integer tensor, or a list mixing ints and scalar tensors;
    its batch entry is not used: the input's batch is). The padding is TF's: the
    output is what a conv2d with these strides and padding would take to give
    `value`'s size (SAME's odd pixel at the end). Where the input's or the output's
    height or width is known only at run time, the run checks that they fit
    (ExecutionError otherwise, as TF1 raises).

    Raises:
        TypeError: value, filter, output_shape or strides is missing.
        ShapeError: shapes do not fit one another (named), or a size that must be known
            is not.
        ValueError: padding or data_format is malformed.
    """
    value = value if value is not None else input
    filter = filter if filter is not None else filters  # noqa: A001 - TF's name
    if value is None or filter is None or output_shape is None or strides is None:
        raise TypeError("conv2d_transpose needs value (input), filter (filters), "
                        "output_shape and strides")
    first = _image_format(data_format, "conv2d_transpose")
    fmt = "NCHW" if first else "NHWC"
    x = _image_input(value, "conv2d_transpose")
    w = _filter(filter, x, "conv2d_transpose", "(kh, kw, out_channels, in_channels)")
    kh, kw, c_out, c_in = w.shape
    steps = _spatial(strides, fmt, "conv2d_transpose: strides")
    rates = _spatial(dilations, fmt, "conv2d_transpose: dilations", default=1)
    xc = _nchw(x, first)
    in_sp = xc.shape[2:] if xc.shape is not None else (None, None)
    channels = xc.shape[1] if xc.shape is not None else None
    if channels is not None and channels != c_in:
        raise ShapeError(f"conv2d_transpose: input has {channels} channels but filter "
                         f"{list(w.shape)} takes {c_in}")
    out_sp, out_c = _output_dims(output_shape, first)
    if out_c is not None and out_c != c_out:
        raise ShapeError(f"conv2d_transpose: output_shape has {out_c} channels but filter "
                         f"{list(w.shape)} makes {c_out}")
    reach = [(k - 1) * d + 1 for k, d in zip((kh, kw), rates)]
    padding = _explicit_pairs(padding, first, "conv2d_transpose")
    weights = api.transpose(w, [3, 2, 0, 1])   # (in, out, kh, kw)
    if None in in_sp or None in out_sp:
        _forward_pads(padding, 0, 1, 1, 1)  # padding's form checked while building
        y = transposed_at_run_time(xc, weights, output_shape, out_sp, first, steps, rates,
                                   padding, "conv2d_transpose")
        return _back(y, first, name)
    begins, ends, extra = [], [], []
    for axis, (n_in, n_out, s, r) in enumerate(zip(in_sp, out_sp, steps, reach)):
        before, after = _forward_pads(padding, axis, n_out, s, r)
        if (n_out + before + after - r) // s + 1 != n_in:
            raise ShapeError(f"conv2d_transpose: output_shape's size {n_out} on spatial axis "
                             f"{axis} does not give the input's {n_in} under a conv2d with "
                             f"stride {s} and this padding")
        # ONNX: out = s (in - 1) + reach - begin - end + output_padding
        end = s * (n_in - 1) + r - before - n_out
        begins.append(before)
        ends.append(max(end, 0))
        extra.append(max(-end, 0))
    attrs = {"kernel_shape": [kh, kw], "strides": steps, "dilations": rates,
             "pads": begins + ends}
    if any(extra):
        attrs["output_padding"] = extra
    return _back(x.graph.op("ConvTranspose", [xc, weights], attrs), first, name)


def transposed_at_run_time(xc, weights, output_shape, known_out, first, steps, rates,
                           padding, what, group=1) -> Tensor:
    """TF1's N-D conv transpose (input xc channels first, weights (C, M / group, k...))
    when the input's or the output's spatial sizes are known only at run time: an ONNX
    ConvTranspose without pads and with the largest output_padding (stride - 1), whose
    output holds every size that a conv with these strides maps back to the input's,
    cropped to the window TF's padding ("SAME", "VALID" or explicit [before, after]
    pairs) gives. The run checks, as TF1 does, that output_shape's spatial sizes give
    the input's under that conv (ExecutionError otherwise). Returns channels first;
    `known_out` (output_shape's spatial sizes, None where only the run knows them)
    goes into the static shape."""
    g = xc.graph
    n = len(steps)
    kernel = list(weights.shape[2:])

    def i64(v):
        return g.constant(np.asarray(v, np.int64))

    attrs = {"kernel_shape": kernel, "strides": list(steps), "dilations": list(rates),
             "group": group}
    if any(s > 1 for s in steps):
        attrs["output_padding"] = [s - 1 for s in steps]
    full = g.op("ConvTranspose", [xc, weights], attrs)
    n_in = api.gather(api.shape(xc), i64(list(range(2, n + 2))))
    entries = api_math._int64_bounds(output_shape, f"{what}: output_shape", g)
    n_out = api.gather(entries, i64(list(range(2, n + 2)) if first else list(range(1, n + 1))))
    s = i64(steps)
    r = i64([(k - 1) * d + 1 for k, d in zip(kernel, rates)])
    zeros = i64([0] * n)
    if isinstance(padding, str) and padding.upper() == "SAME":
        begin = api.maximum((n_in - 1) * s + r - n_out, zeros) // 2
        maps_to = (n_out + s - 1) // s
    else:
        pads = [[0, 0]] * n if isinstance(padding, str) else padding
        begin = i64([p[0] for p in pads])
        maps_to = api.maximum(n_out + i64([sum(p) for p in pads]) - r, i64([-1] * n)) // s + 1
    fits = api_extra.reduce_all(api.logical_and(api.equal(maps_to, n_in),
                                                api.greater(n_out, zeros)))
    check = debugging.Assert(fits, [
        f"{what}: output_shape's spatial sizes", n_out,
        f"do not give the input's under a convolution with strides {list(steps)} and this "
        "padding; the input's spatial sizes:", n_in])
    with api.control_dependencies([check]):
        y = api_math.slice(full, api.concat([i64([0, 0]), begin], 0),
                           api.concat([i64([-1, -1]), n_out], 0))
    # what is known while building: the input's batch, the filter's channels and
    # output_shape's static sizes
    y.set_shape([xc.shape[0] if xc.shape is not None else None,
                 weights.shape[1] * group] + list(known_out))
    return y


def _output_dims(output_shape, first: bool) -> tuple:
    """(spatial sizes, channels) of conv2d_transpose's output_shape, None where only the
    run knows them; the batch entry may be anything (the input's batch is used)."""
    if _g._is_symbolic(output_shape):
        t = _t(output_shape)
        value = t.graph.static_value(t)
        if value is None:
            if t.shape is not None and tuple(t.shape) not in ((4,), (None,)):
                raise ShapeError(f"conv2d_transpose: output_shape must have 4 entries, got "
                                 f"shape {list(t.shape)}")
            return (None, None), None
        entries = [int(v) for v in np.asarray(value).reshape(-1)]
    elif isinstance(output_shape, (list, tuple, np.ndarray)):
        entries = list(output_shape)
    else:
        raise TypeError(f"conv2d_transpose: output_shape must be a list of 4 sizes or a "
                        f"tensor, got {type(output_shape).__name__}")
    if len(entries) != 4:
        raise ShapeError(f"conv2d_transpose: output_shape must have 4 entries, got "
                         f"{len(entries)}")

    def known(v, what):
        if _g._is_symbolic(v):
            t = _t(v)
            v = t.graph.static_value(t)
            if v is None:
                return None
        v = api._int_arg(v if not isinstance(v, np.ndarray) else v.item(),
                         f"conv2d_transpose: output_shape {what}")
        if v <= 0:
            raise ShapeError(f"conv2d_transpose: output_shape {what} must be > 0, got {v}")
        return v

    sp = entries[2:] if first else entries[1:3]
    c = entries[1] if first else entries[3]
    return (known(sp[0], "height"), known(sp[1], "width")), known(c, "channels")


def _forward_pads(padding, axis: int, n_out: int, s: int, reach: int) -> tuple:
    """(before, after) padding of the conv2d that maps the transposed conv's output
    size n_out back to its input: TF's SAME (the odd pixel after), VALID, or explicit."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return 0, 0
        if padding.upper() != "SAME":
            raise ValueError(f"conv2d_transpose: padding must be 'SAME', 'VALID' or "
                             f"explicit pairs, got {padding!r:.60}")
        total = max((-(-n_out // s) - 1) * s + reach - n_out, 0)
        return total // 2, total - total // 2
    pairs = _window_padding([list(p) for p in padding], None, None, None,
                            "conv2d_transpose")["pads"]
    return pairs[axis], pairs[axis + 2]


# --------------------------------------------------------------------------- other convs

def separable_conv2d(input, depthwise_filter, pointwise_filter, strides,  # noqa: A002
                     padding, rate=None, name=None, data_format=None,
                     dilations=None) -> Tensor:
    """TF1's tf.nn.separable_conv2d: depthwise_conv2d with depthwise_filter (kh, kw,
    in, multiplier), then a 1x1 conv2d with pointwise_filter (1, 1, in * multiplier,
    out).

    Raises:
        ShapeError: a filter does not fit (pointwise must be 1x1 over in * multiplier).
        TypeError / ValueError: as depthwise_conv2d.
    """
    p = _t(pointwise_filter)
    if p.shape is not None and (len(p.shape) != 4 or tuple(p.shape[:2]) != (1, 1)):
        raise ShapeError(f"separable_conv2d: pointwise_filter must be (1, 1, in * "
                         f"multiplier, out), got shape {list(p.shape)}")
    mid = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate,
                           data_format=data_format, dilations=dilations)
    return conv2d_op(mid, p, [1, 1, 1, 1], "VALID", data_format=data_format or "NHWC",
                     name=name)


def atrous_conv2d(value, filters, rate, padding, name=None) -> Tensor:
    """TF1's tf.nn.atrous_conv2d: conv2d of NHWC value with filters (kh, kw, in, out)
    dilated by `rate`, stride 1.

    Raises:
        TypeError: rate is not a positive int.
        ShapeError / ValueError: as conv2d.
    """
    if isinstance(rate, bool) or not isinstance(rate, (int, np.integer)) or rate < 1:
        raise TypeError(f"atrous_conv2d: rate must be a positive int, got {rate!r:.40}")
    return conv2d_op(value, filters, [1, 1, 1, 1], padding, dilations=[1, rate, rate, 1],
                     name=name)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None) -> Tensor:  # noqa: A002
    """TF1's tf.nn.conv1d: value (batch, width, in) ("NWC", or "NCW") convolved with
    filters (kw, in, out), as a conv2d over a height of 1.

    Raises:
        TypeError: value, filters, stride or padding is missing.
        ShapeError: value is not 3-D, filters not 3-D with known dims, or a VALID window
            is wider than a width known while building.
        ValueError: data_format is not NWC/NCW.
    """
    value = value if value is not None else input
    if value is None or filters is None or stride is None or padding is None:
        raise TypeError("conv1d needs value (input), filters, stride and padding")
    data_format = "NWC" if data_format is None else data_format
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"conv1d: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    first = data_format == "NCW"
    x = _t(value)
    w = _g.convert_to_tensor(filters, x.dtype, x.graph)
    if x.shape is not None and len(x.shape) != 3:
        raise ShapeError(f"conv1d: value must be 3-D, got shape {list(x.shape)}")
    if w.shape is None or len(w.shape) != 3 or None in w.shape:
        raise ShapeError(f"conv1d: filters must be 3-D (kw, in, out) with known dims, got "
                         f"shape {w.shape}")

    def widened(v, what):  # TF1's int, [s] or [1, s, 1] as the 4-D form
        items = list(v) if isinstance(v, (list, tuple)) else [v]
        if len(items) == 3:
            items = items[1:2] if not first else items[2:3]
        if len(items) != 1:
            raise TypeError(f"conv1d: {what} must be an int or 1 or 3 of them, got {v!r:.40}")
        return [1, 1, items[0], 1] if not first else [1, 1, 1, items[0]]

    steps = widened(stride, "stride")
    rates = widened(1 if dilations is None else dilations, "dilations")
    if not isinstance(padding, str):
        raise ValueError(f"conv1d: padding must be 'SAME' or 'VALID', got {padding!r:.40}")
    if padding.upper() == "VALID" and x.shape is not None:
        rate = rates[2] if not first else rates[3]
        check_valid_window([x.shape[1 if not first else 2]], [(w.shape[0] - 1) * rate + 1],
                           "conv1d")
    x4 = api.expand_dims(x, 1 if not first else 2)
    y = conv2d_op(x4, api.expand_dims(w, 0), steps, padding, data_format="NCHW" if first
                  else "NHWC", dilations=rates)
    return api.squeeze(y, [1 if not first else 2], name=name)


# --------------------------------------------------------------------------- normalisation

def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0,  # noqa: A002
                                 beta=0.5, name=None) -> Tensor:
    """TF1's tf.nn.lrn over the last axis of a 4-D NHWC input: x / (bias + alpha *
    sum of x^2 over the channels within depth_radius) ** beta (ONNX's LRN, whose
    alpha is divided by the window size).

    Raises:
        ShapeError: input is not 4-D.
        TypeError: depth_radius is not an int >= 0, or a number is not a number.
    """
    x = _image_input(input, "lrn")
    if isinstance(depth_radius, bool) or not isinstance(depth_radius, (int, np.integer)) \
            or depth_radius < 0:
        raise TypeError(f"lrn: depth_radius must be an int >= 0, got {depth_radius!r:.40}")
    size = 2 * int(depth_radius) + 1
    numbers = {}
    for key, v in (("bias", bias), ("alpha", alpha), ("beta", beta)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
            raise TypeError(f"lrn: {key} must be a number, got {v!r:.40}")
        numbers[key] = float(v)
    y = x.graph.op("LRN", [_nchw(x, False)],
                   {"size": size, "alpha": numbers["alpha"] * size, "beta": numbers["beta"],
                    "bias": numbers["bias"]})
    return _back(y, False, name)


lrn = local_response_normalization


# --------------------------------------------------------------------------- rearranging

def _blocks(op_type, what, input, block_size, data_format, name):  # noqa: A002
    first = _image_format(data_format, what)
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) \
            or block_size < 2:
        raise ValueError(f"{what}: block_size must be an int >= 2, got {block_size!r:.40}")
    x = _image_input(input, what)
    attrs = {"blocksize": int(block_size)}
    if op_type == "DepthToSpace":
        attrs["mode"] = "DCR"   # TF's order: depth (i * bs + j) * C + c
    return _back(x.graph.op(op_type, [_nchw(x, first)], attrs), first, name)


def space_to_depth(input, block_size, name=None, data_format="NHWC") -> Tensor:  # noqa: A002
    """TF1's tf.space_to_depth: each block_size x block_size block of pixels moved into
    the channels (channel (i * block_size + j) * C + c).

    Raises:
        ValueError: block_size is not an int >= 2, or data_format is malformed.
        ShapeError: input is not 4-D, or its size does not divide (when the graph runs).
    """
    return _blocks("SpaceToDepth", "space_to_depth", input, block_size, data_format, name)


def depth_to_space(input, block_size, name=None, data_format="NHWC") -> Tensor:  # noqa: A002
    """TF1's tf.depth_to_space, the inverse of space_to_depth.

    Raises:
        ValueError: block_size is not an int >= 2, or data_format is malformed.
        ShapeError: input is not 4-D, or its channels do not divide (when the graph
            runs).
    """
    return _blocks("DepthToSpace", "depth_to_space", input, block_size, data_format, name)


# --------------------------------------------------------------------------- losses

def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None,
                                       name=None, targets=None) -> Tensor:
    """TF1's tf.nn.weighted_cross_entropy_with_logits: the logistic loss with the
    positive term weighted by pos_weight, computed without overflow as
    (1 - z) x + (1 + (q - 1) z) (log(1 + exp(-|x|)) + max(-x, 0)).

    Raises:
        TypeError: labels (targets), logits or pos_weight is missing, or logits are not
            floats.
        ShapeError: labels and logits have different static shapes.
    """
    labels = labels if labels is not None else targets
    if labels is None or logits is None or pos_weight is None:
        raise TypeError("weighted_cross_entropy_with_logits needs labels (targets), "
                        "logits and pos_weight")
    from .nn import logistic_operands

    z, x = logistic_operands(labels, logits, "weighted_cross_entropy_with_logits")
    q = _g.convert_to_tensor(pos_weight, x.dtype, x.graph)
    g = x.graph
    with g.name_scope(name or "logistic_loss"):
        log_weight = 1.0 + (q - 1.0) * z
        # TF1's spelling (Abs and Relu), so the gradient at x = 0 is TF1's too
        tail = api_math.log1p(api.exp(-api.abs(x))) + api.relu(-x)
        return api.add((1.0 - z) * x, log_weight * tail, name="value")
