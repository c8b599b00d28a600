"""Still more of TF1's tf.nn: the CTC loss (dense labels), collapse_repeated,
ctc_unique_labels, 1-D / 3-D / N-D transposed convolutions, the depthwise and 3-D
convolution backprops, space_to_batch, with_space_to_batch, the v2 pools,
batch_norm_with_global_normalization, compute_average_loss,
scale_regularization_loss, three more candidate samplers and compute_accidental_hits.

The CTC loss takes TF1's SparseTensor labels, or TF's dense form (tf.nn.ctc_loss_v2's
labels (batch, max_label_length) and label_length). The loss
and its gradient come from one onegraph-domain op (ops/ctc.py); the samplers and the
accidental hits from ops/candidate_sampling*.py; everything else is a composition of
ONNX-semantics ops (ConvTranspose, Conv, Pad, Reshape, ...), so it exports.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import graph as _g
from .api import _int_arg, _t
from .api_compat import batch_to_space_nd, space_to_batch_nd
from . import api_extra
from . import api_math
from .api_compat import div_no_nan
from .api_extra import _op_seed
from .api_math import _floats
from .graph import Tensor, check_seed
from .nn import _positive_int
from .nn_extra import conv2d_transpose, transposed_at_run_time
from ..ops.random_more import check_sample_count
from .nn_sampled import sampler_arguments
from .nn_more import (_alias, _brief, _check_filter_channels, _filter_grad_conv_input,
                      _filter_grad_geometry, _first, _input, _last, _layout, _like, _pool,
                      _sizes, _spatial_sizes, _static_ints, batch_normalization)
from .nn_ops import depthwise_conv2d

__all__ = ["all_candidate_sampler", "avg_pool_v2", "batch_norm_with_global_normalization",
           "collapse_repeated", "compute_accidental_hits", "compute_average_loss",
           "conv1d_transpose", "conv3d_backprop_filter", "conv3d_backprop_filter_v2",
           "conv3d_transpose", "conv_transpose", "ctc_loss", "ctc_loss_v2",
           "ctc_unique_labels", "depthwise_conv2d_backprop_filter",
           "depthwise_conv2d_backprop_input", "depthwise_conv2d_native",
           "depthwise_conv2d_native_backprop_filter",
           "depthwise_conv2d_native_backprop_input", "fixed_unigram_candidate_sampler",
           "learned_unigram_candidate_sampler", "max_pool_v2", "scale_regularization_loss",
           "space_to_batch", "with_space_to_batch"]


def _ints(g, values) -> Tensor:
    return g.constant(np.asarray(list(values), np.int64))


# --------------------------------------------------------------------------- CTC

def _ctc(what, labels, logits, label_length, logit_length, time_major, blank, merge,
         ignore_longer, check_length, name) -> Tensor:
    """The CTCLoss op's loss on logits made time-major; `blank` may be negative."""
    x = _floats(_input(logits, 3, what, "logits"), f"{what}: logits")
    y = _input(_g.integer_tensor(labels, f"{what}: labels", x.graph), 2, what, "labels")
    lengths = []
    for arg, v in (("label_length", label_length), ("logit_length", logit_length)):
        t = _input(_g.integer_tensor(v, f"{what}: {arg}", x.graph), 1, what, arg)
        lengths.append(api.cast(t, DType.INT64))
    batch = [None if t.shape is None else t.shape[0] for t in (y, *lengths)]
    batch.append(None if x.shape is None else x.shape[1 if time_major else 0])
    known = {b for b in batch if b is not None}
    if len(known) > 1:
        raise ShapeError(f"{what}: the batch sizes of labels, label_length, logit_length "
                         f"and logits differ: {batch}")
    classes = None if x.shape is None else x.shape[2]
    # TF counts a negative blank_index from the end of the classes; when only the run
    # knows them, the classes are rotated to put that blank first (below)
    late_blank = blank < 0 and classes is None
    if blank < 0 and classes is not None:
        blank += classes
    if (blank < 0 and not late_blank) or (classes is not None and blank >= classes):
        raise ValueError(f"{what}: blank_index must be a class of the {classes} logits, "
                         f"got {blank}")
    g = x.graph
    with g.name_scope(name or what):
        xt = x if time_major else api.transpose(x, [1, 0, 2])
        y = api.cast(y, DType.INT64)
        if late_blank:
            xt, y = _blank_first(xt, y, blank, what)
            blank = 0
        loss, _ = g.op("CTCLoss", [xt, y] + lengths,
                       {"blank": int(blank), "merge_repeated": int(merge),
                        "ignore_longer": int(ignore_longer),
                        "check_length": int(check_length)},
                       num_outputs=2, domain="onegraph")
        return api.identity(loss, name="loss")


def _blank_first(x: Tensor, labels: Tensor, blank: int, what: str) -> tuple:
    """(x, labels) for a blank class num_classes + blank (blank < 0) of time-major
    logits x whose class count only the run knows: the classes rotated to start at the
    blank, the int64 labels renumbered to match. The CTC op takes its blank as an
    attribute, fixed while building; the loss and (rotated back through the slices)
    its gradient do not depend on the order of the classes. Labels outside
    [0, num_classes) are left as they are, for the op to refuse. An Assert checks
    that the blank is a class (ExecutionError when run)."""
    g = x.graph
    classes = api.reshape(g.op("Shape", [x], {"start": 2, "end": 3}), [])
    x = api_math._checked(x, api.greater_equal(classes, -blank),
                          f"{what}: blank_index {blank} needs at least {-blank} classes "
                          f"in the logits")
    rotated = api.concat([x[:, :, blank:], x[:, :, :blank]], axis=2)
    inside = api.logical_and(api.greater_equal(labels, 0), api.less(labels, classes))
    moved = api_math.floormod(labels - blank, classes)
    return rotated, api.where(inside, moved, labels)


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                unique=None, blank_index=None, name=None) -> Tensor:
    """TF's tf.nn.ctc_loss_v2 with dense labels: the negative log-probability of each
    example's labels[b, :label_length[b]] given logits[:logit_length[b], b] (time-major,
    (time, batch, classes), unless logits_time_major=False), summed over every
    alignment; blank_index (default 0, negative counts from the end) is the blank
    class. Returns the loss per example, (batch,). The gradient reaches the logits
    (TF's, from the forward-backward recursions; zero after logit_length). `unique`
    (ctc_unique_labels' result) only speeds TF up and changes nothing: it is checked
    and ignored. Labels that cannot fit their time steps give +inf.

    Raises:
        TypeError: logits are not floats, labels or a length not integers, or unique
            is not a pair.
        ShapeError: the ranks or batch sizes do not fit.
        ValueError: blank_index is not a class of the logits (known classes).
        ExecutionError (when run): a negative blank_index beyond the classes, when
            only the run knows how many there are (TF resolves it then too).
    """
    what = "ctc_loss_v2"
    if unique is not None and not (isinstance(unique, (tuple, list)) and len(unique) == 2):
        raise TypeError(f"{what}: unique must be ctc_unique_labels' (labels, indices) pair, "
                        f"got {_brief(unique)}")
    blank = 0 if blank_index is None else _int_arg(blank_index, f"{what}: blank_index")
    time_major = api._bool_arg(logits_time_major, f"{what}: logits_time_major")
    return _ctc(what, labels, logits, label_length, logit_length, time_major, blank,
                True, False, False, name)


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None, label_length=None) -> Tensor:
    """TF1's tf.compat.v1.nn.ctc_loss. The labels are TF1's SparseTensor (row b's labels
    at [b, 0], [b, 1], ...), or dense (batch, max_label_length) integers with
    label_length (batch,) saying how many of each row are used (None: all of them).
    Everything else is TF1's: `inputs` (or its new name `logits`) are
    unnormalised, (time, batch, classes) unless time_major=False; the blank is the
    last class (their count may be known only at run time); sequence_length (batch,)
    the time steps of each example;
    preprocess_collapse_repeated merges repeated labels first; ctc_merge_repeated=False
    counts a class emitted twice in a row as two labels; an example whose labels
    cannot fit its steps raises when run, unless ignore_longer_outputs_than_inputs
    (its loss and gradient are then 0). Returns the loss per example, (batch,).

    Raises:
        TypeError: sequence_length is missing, or an argument of the wrong type.
        ValueError: inputs and logits are both given.
        ShapeError: the ranks or batch sizes do not fit.
    """
    what = "ctc_loss"
    labels, label_length = _dense_labels(labels, label_length, what)
    x = _alias(inputs, logits, "inputs", "logits", what)
    if x is None or sequence_length is None:
        raise TypeError(f"{what} needs inputs (logits) and sequence_length")
    for arg, v in (("preprocess_collapse_repeated", preprocess_collapse_repeated),
                   ("ctc_merge_repeated", ctc_merge_repeated),
                   ("ignore_longer_outputs_than_inputs", ignore_longer_outputs_than_inputs),
                   ("time_major", time_major)):
        api._bool_arg(v, f"{what}: {arg}")
    x = _floats(_input(x, 3, what, "inputs"), f"{what}: inputs")
    y = _input(_g.integer_tensor(labels, f"{what}: labels", x.graph), 2, what, "labels")
    if label_length is None:
        g = x.graph
        label_length = api_extra.fill(g.op("Shape", [y], {"end": 1}),
                                      api.reshape(g.op("Shape", [y], {"start": 1}), []))
    if preprocess_collapse_repeated:
        y, label_length = collapse_repeated(y, label_length)
    return _ctc(what, y, x, label_length, sequence_length, time_major, -1,
                ctc_merge_repeated, ignore_longer_outputs_than_inputs, True, None)


def _dense_labels(labels, label_length, what: str) -> tuple:
    """(labels, label_length) with TF1's SparseTensor labels (row b holding its labels
    at [b, 0], [b, 1], ...) made dense (zero-padded) and their lengths counted.

    Raises:
        ValueError: SparseTensor labels come with a label_length.
    """
    from .sparse_tensor import SparseTensor, SparseTensorValue  # (it imports much)
    if not isinstance(labels, (SparseTensor, SparseTensorValue)):
        return labels, label_length
    if label_length is not None:
        raise ValueError(f"{what}: label_length is for dense labels; SparseTensor labels "
                         "carry their lengths")
    from .api_sparse import to_dense
    sp = SparseTensor.from_value(labels)
    present = to_dense(SparseTensor(sp.indices, api.ones_like(sp.values, dtype="int32"),
                                    sp.dense_shape))
    return to_dense(sp), api.reduce_sum(present, axis=1)


def collapse_repeated(labels, seq_length, name=None) -> tuple:
    """TF's tf.nn.collapse_repeated: each row of labels (batch, max_len) with runs of
    a repeated label merged into one, within its first seq_length entries; returns
    (collapsed labels (batch, longest new length), zero-padded, their lengths in
    seq_length's dtype).

    Raises:
        TypeError: labels or seq_length are not integers.
        ShapeError: labels is not 2-D or seq_length not 1-D.
    """
    what = "collapse_repeated"
    y = _input(_g.integer_tensor(labels, f"{what}: labels"), 2, what, "labels")
    g = y.graph
    n = _input(_g.integer_tensor(seq_length, f"{what}: seq_length", g), 1, what, "seq_length")
    with g.name_scope(name or what):
        first = api.cast(api.ones_like(_columns(y, 0, 1)), DType.BOOL)
        changed = api_extra.not_equal(_columns(y, 1, None), _columns(y, 0, -1))
        keep = api.concat([first, changed], axis=1)
        width = g.op("Shape", [y], {"start": 1, "end": 2})
        keep = api.logical_and(keep, api_extra.sequence_mask(n, api.reshape(width, [])))
        new_len = api.reduce_sum(api.cast(keep, DType.INT32), axis=1)
        new_width = api.reduce_max(new_len)
        slots = api_extra.sequence_mask(new_len, new_width)
        flat_slots = api.reshape(slots, [-1])
        idx = api_extra.range(0, api.reshape(g.op("Shape", [flat_slots]), []), 1)
        values = api_extra.boolean_mask(api.reshape(y, [-1]), api.reshape(keep, [-1]))
        where = api.expand_dims(api_extra.boolean_mask(idx, flat_slots), 1)
        flat = api_extra.scatter_nd(where, values, g.op("Shape", [idx]))
        out = api.reshape(flat, api.concat([g.op("Shape", [y], {"end": 1}),
                                            api.reshape(api.cast(new_width, DType.INT64),
                                                        [1])], 0))
        return out, api.cast(new_len, n.dtype)


def _columns(y: Tensor, start: int, end) -> Tensor:
    """y[:, start:end] (end None: to the last column)."""
    g = y.graph
    stop = np.iinfo(np.int64).max if end is None else end
    return g.op("Slice", [y, _ints(g, [start]), _ints(g, [stop]), _ints(g, [1])])


def ctc_unique_labels(labels, name=None) -> tuple:
    """TF's tf.nn.ctc_unique_labels: per row of labels (batch, max_len), its distinct
    values in order of first appearance, zero-padded to max_len (int64), and for each
    label the index of its value among them (int32), as tf.unique row by row. Built
    densely (a max_len x max_len comparison per row), so every shape is static.

    Raises:
        TypeError: labels are not integers.
        ShapeError: labels is not 2-D.
    """
    what = "ctc_unique_labels"
    y = _input(_g.integer_tensor(labels, f"{what}: labels"), 2, what, "labels")
    g = y.graph
    with g.name_scope(name or what):
        y64 = api.cast(y, DType.INT64)
        same = api.equal(api.expand_dims(y64, 2), api.expand_dims(y64, 1))     # (B, L, L)
        width = g.op("Shape", [y], {"start": 1, "end": 2})
        steps = api_extra.range(0, api.reshape(width, []), 1)
        earlier = api.less(api.expand_dims(steps, 0), api.expand_dims(steps, 1))  # k < j
        seen = api_extra.reduce_any(api.logical_and(same, earlier), axis=2)
        first = api.cast(api.logical_not(seen), DType.INT64)                   # (B, L)
        slot = api_extra.cumsum(first, axis=1) - 1               # the new index of a first one
        origin = api.argmax(api.cast(same, DType.INT32), axis=2)   # first equal position
        onehot = api.cast(api.equal(api.expand_dims(origin, 2),
                                    api.expand_dims(api.expand_dims(steps, 0), 0)),
                          DType.INT64)                                          # (B, L, L)
        idx = api.reduce_sum(onehot * api.expand_dims(slot, 1), axis=2)
        place = api.cast(api.equal(api.expand_dims(slot, 2),
                                   api.expand_dims(api.expand_dims(steps, 0), 0)),
                         DType.INT64) * api.expand_dims(first, 2)              # (B, j, c)
        unique = api.reduce_sum(place * api.expand_dims(y64, 2), axis=1)
        return unique, api.cast(idx, DType.INT32)


# --------------------------------------------------------------------------- transposes

def _output_sizes(output_shape, n: int, first: bool, what: str) -> tuple:
    """(spatial sizes, channels) of a transposed conv's output_shape (n + 2 entries,
    the batch entry may be anything), None where only the run knows them.

    Raises:
        ShapeError: another number of entries, or a size <= 0.
        TypeError: output_shape is neither a list nor a tensor.
    """
    if _g._is_symbolic(output_shape):
        t = _t(output_shape)
        value = t.graph.static_value(t)
        if value is None:
            if t.shape is not None and tuple(t.shape) not in ((n + 2,), (None,)):
                raise ShapeError(f"{what}: output_shape must have {n + 2} entries, got "
                                 f"shape {list(t.shape)}")
            return [None] * n, None
        entries = [int(v) for v in np.asarray(value).reshape(-1)]
    elif isinstance(output_shape, (list, tuple, np.ndarray)):
        entries = list(np.asarray(output_shape).reshape(-1)) \
            if isinstance(output_shape, np.ndarray) else list(output_shape)
    else:
        raise TypeError(f"{what}: output_shape must be a list of {n + 2} sizes or a "
                        f"tensor, got {type(output_shape).__name__}")
    if len(entries) != n + 2:
        raise ShapeError(f"{what}: output_shape must have {n + 2} entries, got "
                         f"{len(entries)}")

    def known(v, which):
        if _g._is_symbolic(v):
            t = _t(v)
            v = t.graph.static_value(t)
            if v is None:
                return None
            v = np.asarray(v).item()
        v = _int_arg(v, f"{what}: output_shape {which}")
        if v <= 0:
            raise ShapeError(f"{what}: output_shape {which} must be > 0, got {v}")
        return v

    sp = entries[2:] if first else entries[1:-1]
    c = entries[1] if first else entries[-1]
    return [known(s, f"spatial size {k}") for k, s in enumerate(sp)], known(c, "channels")


def _transpose_conv(what, n, x, weights, c_x, c_out, kernel, output_shape, steps, rates,
                    padding, first, name, group=1) -> Tensor:
    """The gradient of an N-D conv (the TF padding `padding` on an input of
    output_shape) with respect to its input, applied to x: an ONNX ConvTranspose
    with `weights` in its (c_x, c_out / group, k...) layout (cropped at run time when
    spatial sizes are known only then: `transposed_at_run_time`)."""
    xc = _first(x, n, first)
    channels = xc.shape[1] if xc.shape is not None else None
    if channels is not None and channels != c_x:
        raise ShapeError(f"{what}: the input has {channels} channels but the filter takes "
                         f"{c_x}")
    out_sp, out_c = _output_sizes(output_shape, n, first, what)
    if out_c is not None and out_c != c_out:
        raise ShapeError(f"{what}: output_shape has {out_c} channels but the filter makes "
                         f"{c_out}")
    in_sp = _spatial_sizes(xc, n)
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, rates)]
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {_brief(padding)}")
    if None in in_sp or None in out_sp:
        y = transposed_at_run_time(xc, weights, output_shape, out_sp, first, steps, rates,
                                   padding, what, group)
        return _last(y, n, first, name)
    begins, ends, extra = [], [], []
    for axis, (n_in, n_out, s, r) in enumerate(zip(in_sp, out_sp, steps, reach)):
        if padding.upper() == "VALID":
            before = after = 0
        else:
            total = max((-(-n_out // s) - 1) * s + r - n_out, 0)
            before, after = total // 2, total - total // 2
        if n_out + before + after < r or (n_out + before + after - r) // s + 1 != n_in:
            raise ShapeError(f"{what}: output_shape's size {n_out} on spatial axis {axis} "
                             f"does not give the input's {n_in} under a convolution with "
                             f"stride {s} and {padding} padding")
        end = s * (n_in - 1) + r - before - n_out
        begins.append(before)
        ends.append(max(end, 0))
        extra.append(max(-end, 0))
    attrs = {"kernel_shape": list(kernel), "strides": list(steps), "dilations": list(rates),
             "pads": begins + ends, "group": group}
    if any(extra):
        attrs["output_padding"] = extra
    return _last(x.graph.op("ConvTranspose", [xc, weights], attrs), n, first, name)


def _tf_transpose(what, n, value, filters, output_shape, strides, padding, data_format,
                  dilations, name) -> Tensor:
    first = _layout(data_format, n, what)
    x = _floats(_input(value, n + 2, what), f"{what}: input")
    w = _like(filters, x, f"{what}: filter")
    if w.shape is None or len(w.shape) != n + 2 or None in w.shape:
        raise ShapeError(f"{what}: filter must be {n + 2}-D (k..., out_channels, "
                         f"in_channels) with known dims, got shape "
                         f"{None if w.shape is None else list(w.shape)}")
    steps = _sizes(strides, n, first, f"{what}: strides")
    rates = _sizes(dilations, n, first, f"{what}: dilations", default=1)
    kernel, c_out, c_in = list(w.shape[:n]), w.shape[n], w.shape[n + 1]
    weights = api.transpose(w, [n + 1, n] + list(range(n)))    # (in, out, k...)
    return _transpose_conv(what, n, x, weights, c_in, c_out, kernel, output_shape, steps,
                           rates, padding, first, name)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None) -> Tensor:
    """TF1's tf.nn.conv1d_transpose: the gradient of conv1d with respect to its input;
    input (batch, width, in) (NWC, or NCW), filters (k, out_channels, in_channels),
    output_shape the 3-D result shape (ints, or tensors for sizes only the run knows:
    the run then checks that they fit the input); strides and dilations an int, 1 or
    3 ints; SAME or VALID padding.

    Raises:
        ShapeError: shapes do not fit (named), or a size that must be known is not.
        TypeError / ValueError: strides, dilations, padding or data_format is malformed.
    """
    return _tf_transpose("conv1d_transpose", 1, input, filters, output_shape, strides,
                         padding, data_format, dilations, name)


def conv3d_transpose(value, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NDHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None) -> Tensor:
    """TF1's tf.nn.conv3d_transpose: the gradient of conv3d with respect to its input;
    value (NDHWC, or NCDHW) (or its new name input), filter (kd, kh, kw, out, in) (or
    filters), output_shape the 5-D result shape; SAME or VALID padding.

    Raises:
        TypeError: value, filter, output_shape or strides is missing.
        ValueError: an argument and its new name are both given, or padding /
            data_format / strides malformed.
        ShapeError: shapes do not fit (named).
    """
    what = "conv3d_transpose"
    value = _alias(value, input, "value", "input", what)
    filter = _alias(filter, filters, "filter", "filters", what)  # noqa: A001 - TF's name
    if value is None or filter is None or output_shape is None or strides is None:
        raise TypeError(f"{what} needs value (input), filter (filters), output_shape and "
                        "strides")
    return _tf_transpose(what, 3, value, filter, output_shape, strides, padding,
                         data_format, dilations, name)


def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format=None, dilations=None, name=None) -> Tensor:
    """TF's tf.nn.conv_transpose: conv1d_transpose, conv2d_transpose or
    conv3d_transpose by the rank of output_shape (3, 4 or 5 entries), data_format
    defaulting to the channels-last layout of that rank.

    Raises:
        ValueError: output_shape has another number of entries (or its length is not
            known while building).
        As the function dispatched to otherwise.
    """
    what = "conv_transpose"
    if _g._is_symbolic(output_shape):
        shape = _t(output_shape).shape
        rank = shape[0] if shape is not None and len(shape) == 1 else None
    elif isinstance(output_shape, (list, tuple, np.ndarray)):
        rank = len(output_shape)
    else:
        rank = None
    if rank not in (3, 4, 5):
        raise ValueError(f"{what}: output_shape must have 3, 4 or 5 entries, got "
                         f"{_brief(output_shape)}")
    if rank == 4:
        fmt = "NHWC" if data_format is None else data_format
        return conv2d_transpose(input, filters, output_shape, strides, padding, fmt, name,
                                dilations=dilations)
    fn = conv1d_transpose if rank == 3 else conv3d_transpose
    fmt = _LAYOUTS_LAST[rank] if data_format is None else data_format
    return fn(input, filters, output_shape, strides, padding=padding, data_format=fmt,
              dilations=dilations, name=name)


_LAYOUTS_LAST = {3: "NWC", 5: "NDHWC"}


# --------------------------------------------------------------------------- depthwise

def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """TF1's tf.nn.depthwise_conv2d_native: each input channel convolved with its own
    channel_multiplier filters (filter (kh, kw, in, multiplier)); output channel
    i * multiplier + m; strides and dilations TF's 4-entry form; SAME or VALID.

    Raises:
        ShapeError: input or filter is not 4-D, or their channels differ.
        TypeError / ValueError: strides, dilations, padding or data_format is malformed.
    """
    first = _layout(data_format, 2, "depthwise_conv2d_native")
    steps = _sizes(strides, 2, first, "depthwise_conv2d_native: strides")
    rates = _sizes(dilations, 2, first, "depthwise_conv2d_native: dilations", default=1)
    return depthwise_conv2d(input, filter, [1] + steps + [1] if not first else
                            [1, 1] + steps, padding, name=name, data_format=data_format,
                            dilations=rates)


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop,  # noqa: A002
                                           strides, padding, data_format="NHWC",
                                           dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """TF1's tf.nn.depthwise_conv2d_native_backprop_input: the gradient of
    depthwise_conv2d_native(input, filter) with respect to its input of shape
    input_sizes (4 ints, known while building), given out_backprop; an ONNX
    ConvTranspose grouped by input channel.

    Raises:
        ShapeError: shapes do not fit (named), or input_sizes is not known.
        TypeError / ValueError: strides, dilations, padding or data_format is malformed.
    """
    what = "depthwise_conv2d_native_backprop_input"
    first = _layout(data_format, 2, what)
    dy = _floats(_input(out_backprop, 4, what, "out_backprop"), f"{what}: out_backprop")
    w = _like(filter, dy, f"{what}: filter")
    if w.shape is None or len(w.shape) != 4 or None in w.shape:
        raise ShapeError(f"{what}: filter must be 4-D (kh, kw, in, multiplier) with known "
                         f"dims, got shape {None if w.shape is None else list(w.shape)}")
    steps = _sizes(strides, 2, first, f"{what}: strides")
    rates = _sizes(dilations, 2, first, f"{what}: dilations", default=1)
    kh, kw, c_in, mult = w.shape
    weights = api.reshape(api.transpose(w, [2, 3, 0, 1]), [c_in * mult, 1, kh, kw])
    sizes = _static_ints(input_sizes, 4, f"{what}: input_sizes")
    return _transpose_conv(what, 2, dy, weights, c_in * mult, c_in, [kh, kw], sizes, steps,
                           rates, padding, first, name, group=c_in)


def _backprop_filter(what, n, input, filter_sizes, out_backprop, strides,  # noqa: A002
                     padding, data_format, dilations, name, depthwise=False) -> Tensor:
    """The gradient of an N-D conv (depthwise: of depthwise_conv2d) with respect to
    its filter of shape filter_sizes: an ONNX Conv of the input (channels as the batch;
    depthwise: as groups) with out_backprop as the kernel, strides and dilations
    swapped (as og.nn.conv2d_backprop_filter, whose helpers also handle batch and
    spatial sizes known only at run time)."""
    first = _layout(data_format, n, what)
    x = _floats(_input(input, n + 2, what), f"{what}: input")
    dy = _input(_like(out_backprop, x, f"{what}: out_backprop"), n + 2, what, "out_backprop")
    sizes = _static_ints(filter_sizes, n + 2, f"{what}: filter_sizes")
    kernel, c_in, c_out = sizes[:n], sizes[n], sizes[n + 1]
    if depthwise:
        c_out = c_in * c_out            # (kh, kw, in, multiplier)
    steps = _sizes(strides, n, first, f"{what}: strides")
    rates = _sizes(dilations, n, first, f"{what}: dilations", default=1)
    xc, dyc = _first(x, n, first), _first(dy, n, first)
    _check_filter_channels(what, xc, dyc, c_in, c_out, sizes)
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, rates)]
    geometry = _filter_grad_geometry(what, xc, dyc, padding, steps, reach, first,
                                     depthwise, "a convolution")
    g = x.graph
    axes = list(range(2, n + 2))
    with g.name_scope(name or what):
        xc, attrs = _filter_grad_conv_input(what, xc, dyc, geometry, steps, rates, reach,
                                            "a convolution")
        swap = [1, 0] + axes
        xs, ws = api.transpose(xc, swap), api.transpose(dyc, swap)
        if depthwise:   # one group per input channel: (1, in * batch, ...)
            sp = _spatial_sizes(xs, n)
            shape = [1, -1] + sp if None not in sp else api.concat(   # sizes of the run
                [_ints(g, [1, -1]), g.op("Shape", [xs], {"start": 2})], 0)
            xs = api.reshape(xs, shape)
            attrs["group"] = c_in
        dw = g.op("Conv", [xs, ws], attrs)                  # (in, out, k...) / (1, in*m, k)
        dw = api.reshape(dw, [c_in, sizes[n + 1]] + kernel)
        return api.transpose(dw, axes + [0, 1], name="filter_grad")


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop,  # noqa: A002
                                            strides, padding, data_format="NHWC",
                                            dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """TF1's tf.nn.depthwise_conv2d_native_backprop_filter: the gradient of
    depthwise_conv2d_native(input, filter) with respect to its filter of shape
    filter_sizes (kh, kw, in, multiplier), given out_backprop; SAME, VALID or explicit
    padding. The input's and out_backprop's batch and spatial sizes may be known only
    at run time; then the run checks that out_backprop's are the convolution's output
    sizes.

    Raises:
        ShapeError: the sizes known while building do not fit (named), or
            filter_sizes is not known while building.
        TypeError / ValueError: strides, dilations, padding or data_format is malformed.
        ExecutionError (of the run): sizes known only at run time do not fit
            (out_backprop's spatial sizes named).
    """
    return _backprop_filter("depthwise_conv2d_native_backprop_filter", 2, input,
                            filter_sizes, out_backprop, strides, padding, data_format,
                            dilations, name, depthwise=True)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides,  # noqa: A002
                              padding, data_format="NDHWC", dilations=(1, 1, 1, 1, 1),
                              name=None) -> Tensor:
    """TF1's tf.nn.conv3d_backprop_filter_v2 (and conv3d_backprop_filter): the gradient
    of conv3d(input, filter) with respect to its (kd, kh, kw, in, out) filter of shape
    filter_sizes, given out_backprop; SAME or VALID padding. The input's and
    out_backprop's batch and spatial sizes may be known only at run time; then the
    run checks that out_backprop's are the conv3d's output sizes.

    Raises:
        ShapeError: the sizes known while building do not fit (named), or
            filter_sizes is not known while building.
        TypeError / ValueError: strides, dilations, padding or data_format is malformed.
        ExecutionError (of the run): sizes known only at run time do not fit
            (out_backprop's spatial sizes named).
    """
    return _backprop_filter("conv3d_backprop_filter", 3, input, filter_sizes, out_backprop,
                            strides, padding, data_format, dilations, name)


conv3d_backprop_filter = conv3d_backprop_filter_v2


# --------------------------------------------------------------------------- space / batch

def space_to_batch(input, paddings, block_size=None, name=None,  # noqa: A002
                   block_shape=None) -> Tensor:
    """TF1's tf.nn.space_to_batch: space_to_batch_nd of a 4-D NHWC input with a square
    block of block_size (or its new name block_shape), paddings [[top, bottom],
    [left, right]].

    Raises:
        TypeError: block_size is missing or not a positive int.
        ValueError: block_size and block_shape are both given.
        ShapeError: input is not 4-D, or the padded sizes are not multiples of the block.
    """
    what = "space_to_batch"
    size = _alias(block_shape, block_size, "block_shape", "block_size", what)
    if size is None:
        raise TypeError(f"{what} needs block_size")
    size = _positive_int(size, f"{what}: block_size")
    x = _input(input, 4, what)
    return space_to_batch_nd(x, np.asarray([size, size], np.int64), paddings, name=name)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None) -> Tensor:
    """TF1's tf.nn.with_space_to_batch: op(converted_input, num_spatial_dims, padding)
    run on the input rearranged by space_to_batch_nd with block dilation_rate (so a
    VALID, undilated op acts as a dilated one), then rearranged back by
    batch_to_space_nd. SAME padding needs filter_shape (the padding is TF's, computed
    from the filter's dilated size); with all rates 1, op is called on the input as it
    is. spatial_dims default to the dims after the batch (after the channels for an
    "NC..." data_format). Spatial sizes unknown while building get their paddings up
    to a multiple of the rate when the graph runs (tensor paddings and crops, as TF's
    required_space_to_batch_paddings).

    Raises:
        ValueError: dilation_rate is not positive ints, padding not SAME / VALID,
            filter_shape missing for SAME, or spatial_dims not increasing and >= 1.
        ShapeError: the input's rank is unknown (with rates other than 1) or does not
            reach the last spatial dim.
    """
    what = "with_space_to_batch"
    rates = np.asarray(dilation_rate).reshape(-1).tolist() \
        if isinstance(dilation_rate, (list, tuple, np.ndarray, int, np.integer)) else None
    if not rates or not all(isinstance(r, int) and not isinstance(r, bool) and r > 0
                            for r in rates):
        raise ValueError(f"{what}: dilation_rate must be positive ints, got "
                         f"{_brief(dilation_rate)}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {_brief(padding)}")
    n = len(rates)
    x = _t(input)
    start = 2 if isinstance(data_format, str) and data_format.startswith("NC") else 1
    dims = list(range(start, start + n)) if spatial_dims is None else list(spatial_dims)
    if len(dims) != n or any(d < 1 for d in dims) or sorted(set(dims)) != dims:
        raise ValueError(f"{what}: spatial_dims must be {n} increasing dims >= 1, got "
                         f"{_brief(spatial_dims)}")
    if all(r == 1 for r in rates):
        return op(x, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError(f"{what}: filter_shape must be given for SAME padding")
        kernel = np.asarray(filter_shape).reshape(-1).tolist()[:n]
        extra = [(k - 1) * r for k, r in zip(kernel, rates)]
        base = [[e // 2, e - e // 2] for e in extra]
    else:
        base = [[0, 0]] * n
    if x.shape is None or len(x.shape) <= dims[-1]:
        raise ShapeError(f"{what}: the input needs a known rank above its last spatial "
                         f"dim {dims[-1]}, got shape "
                         f"{None if x.shape is None else list(x.shape)}")
    block, pads, crops = [], [], []
    for d in range(1, dims[-1] + 1):
        if d in dims:
            k = dims.index(d)
            r, (b, e) = rates[k], base[k]
            more = _to_multiple(x, d, b + e, r)
            block.append(r)
            pads.append([b, e + more])
            crops.append([0, more])
        else:
            block.append(1)
            pads.append([0, 0])
            crops.append([0, 0])
    block = np.asarray(block, np.int64)
    if any(_g._is_symbolic(v) for p in pads for v in p):
        # some sizes known only when the graph runs: TF's tensor paddings and crops
        converted = space_to_batch_nd(x, block, pads)
        return batch_to_space_nd(op(converted, n, "VALID"), block, crops)
    converted = space_to_batch_nd(x, block, np.asarray(pads, np.int64))
    result = op(converted, n, "VALID")
    return batch_to_space_nd(result, block, np.asarray(crops, np.int64))


def _to_multiple(x: Tensor, d: int, padding: int, rate: int):
    """What dim d of x, padded by `padding`, lacks to a multiple of rate: an int where
    the dim is known while building, else an int64 scalar tensor. Raises nothing."""
    if x.shape[d] is not None:
        return (rate - (x.shape[d] + padding) % rate) % rate
    size = api.reshape(x.graph.op("Shape", [x], {"start": d, "end": d + 1}), [])
    rate_t = x.graph.constant(np.int64(rate))
    # (Mod of a non-negative int64 is its floor remainder)
    return x.graph.op("Mod", [rate_t - x.graph.op("Mod", [size + np.int64(padding), rate_t]),
                              rate_t])


# --------------------------------------------------------------------------- pools, norms

def _pool_v2(op_type, what, input, ksize, strides, padding, data_format,  # noqa: A002
             name) -> Tensor:
    x = _t(input)
    if x.shape is not None:
        n = len(x.shape) - 2
    elif data_format is not None:
        n = len(data_format) - 2
    else:
        raise ValueError(f"{what}: input must have a known rank or data_format must be "
                         "given")
    if not 1 <= n <= 3:
        raise ValueError(f"{what}: input must be 3-D, 4-D or 5-D (1 to 3 spatial dims), "
                         f"got rank {n + 2}")
    explicit = op_type == "MaxPool" and n < 3
    return _pool(op_type, what, n, x, ksize, strides, padding, data_format, name,
                 explicit=explicit)


def max_pool_v2(input, ksize, strides, padding, data_format=None,  # noqa: A002
                name=None) -> Tensor:
    """TF's tf.nn.max_pool (v2): max_pool1d, 2-D max_pool or max_pool3d by the input's
    rank (3, 4 or 5), data_format defaulting to channels-last; explicit padding pairs
    for 1-D and 2-D.

    Raises:
        ValueError: the rank is not 3 to 5 (or unknown without data_format), or
            padding / data_format is malformed.
        TypeError: ksize or strides malformed.
        ShapeError: a VALID window is larger than the input.
    """
    return _pool_v2("MaxPool", "max_pool_v2", input, ksize, strides, padding, data_format,
                    name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None,  # noqa: A002
                name=None) -> Tensor:
    """TF's tf.nn.avg_pool (v2): avg_pool1d, 2-D avg_pool or avg_pool3d by the input's
    rank, padding left out of the count; SAME or VALID. Raises as max_pool_v2."""
    return _pool_v2("AveragePool", "avg_pool_v2", input, ksize, strides, padding,
                    data_format, name)


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None,
                                         scale_after_normalization=None, name=None,
                                         input=None, mean=None,  # noqa: A002
                                         variance=None) -> Tensor:
    """TF1's tf.nn.batch_norm_with_global_normalization: (t - m) / sqrt(v + epsilon)
    * gamma (when scale_after_normalization) + beta, as batch_normalization; input,
    mean and variance are the new names of t, m and v.

    Raises:
        TypeError: an argument is missing, or scale_after_normalization not a bool.
        ValueError: an argument and its new name are both given.
    """
    what = "batch_norm_with_global_normalization"
    t = _alias(t, input, "t", "input", what)
    m = _alias(m, mean, "m", "mean", what)
    v = _alias(v, variance, "v", "variance", what)
    if any(a is None for a in (t, m, v, beta, gamma, variance_epsilon,
                               scale_after_normalization)):
        raise TypeError(f"{what} needs t, m, v, beta, gamma, variance_epsilon and "
                        "scale_after_normalization")
    scale = api._bool_arg(scale_after_normalization, f"{what}: scale_after_normalization")
    return batch_normalization(t, m, v, beta, gamma if scale else None, variance_epsilon,
                               name=name)


def compute_average_loss(per_example_loss, sample_weight=None,
                         global_batch_size=None) -> Tensor:
    """TF's tf.nn.compute_average_loss outside a distribution strategy (one replica):
    sum(per_example_loss * sample_weight) / global_batch_size (default the loss's first
    dim), 0 when that is 0. A weight of one rank less than the loss gets a trailing
    axis; as TF, the weighted losses are computed in float32 and cast back.

    Raises:
        ValueError: per_example_loss is a scalar.
        TypeError: global_batch_size is not an integer.
    """
    what = "compute_average_loss"
    loss = _t(per_example_loss)
    dtype = loss.dtype
    if loss.shape is not None and len(loss.shape) == 0:
        raise ValueError(f"{what}: per_example_loss must have at least rank 1, got a "
                         "scalar")
    g = loss.graph
    if sample_weight is not None:
        w = api.cast(_g.convert_to_tensor(sample_weight, None, g), DType.FLOAT32)
        lf = api.cast(loss, DType.FLOAT32)
        if w.shape is not None and lf.shape is not None:
            if len(w.shape) == len(lf.shape) - 1:
                w = api.expand_dims(w, -1)
            elif len(w.shape) == len(lf.shape) + 1 and w.shape[-1] == 1:
                w = api.squeeze(w, [-1])
        loss = api.cast(lf * w, dtype)
    if global_batch_size is None:
        size = g.op("Shape", [loss], {"start": 0, "end": 1})
        size = api.reshape(size, [])
    else:
        size = _g.convert_to_tensor(global_batch_size, None, g)
        if size.dtype not in (DType.INT8, DType.INT16, DType.INT32, DType.INT64,
                              DType.UINT8, DType.UINT16, DType.UINT32, DType.UINT64):
            raise TypeError(f"{what}: global_batch_size must be an integer, got "
                            f"{size.dtype.short_name}")
        if size.shape is not None and len(size.shape) != 0:
            raise ValueError(f"{what}: global_batch_size must be a scalar")
    return div_no_nan(api.reduce_sum(loss), api.cast(size, dtype))


def scale_regularization_loss(regularization_loss) -> Tensor:
    """TF's tf.nn.scale_regularization_loss outside a distribution strategy: the sum
    of regularization_loss (a tensor, or a list of them, stacked) over one replica."""
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = api.stack(list(regularization_loss))
    return api.reduce_sum(_t(regularization_loss)) / 1


# --------------------------------------------------------------------------- samplers

def _classes(what, true_classes, num_true) -> Tensor:
    classes = _g.integer_tensor(true_classes, f"{what}: true_classes")
    shape = classes.shape
    if shape is not None and (len(shape) != 2 or shape[1] not in (None, num_true)):
        raise ShapeError(f"{what}: true_classes must be (batch, num_true={num_true}), got "
                         f"shape {list(shape)}")
    return api.cast(classes, DType.INT64)


def _sampler(op_type, what, true_classes, num_true, num_sampled, unique, range_max,
             seed, name, extra=None) -> tuple:
    num_true, num_sampled, range_max = sampler_arguments(
        what, name, seed, num_true, num_sampled, unique, range_max)
    classes = _classes(what, true_classes, num_true)
    g = classes.graph
    with g.name_scope(name or what) as scope:
        attrs = {"num_true": num_true, "num_sampled": num_sampled,
                 "unique": int(bool(unique)), "range_max": range_max,
                 "seed": _op_seed(g, seed, scope, what)}
        attrs.update(extra or {})
        return tuple(g.op(op_type, [classes], attrs, num_outputs=3, domain="onegraph"))


def _read_unigrams(vocab_file: str, what: str) -> list:
    """The counts of a vocab file: the last comma-separated field of each line."""
    try:
        with open(vocab_file, encoding="utf-8") as f:
            return [float(line.rstrip("\n").split(",")[-1]) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise ValueError(f"{what}: cannot read the counts of vocab_file "
                         f"{vocab_file!r}: {e}") from e


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique,
                                    range_max, vocab_file="", distortion=1.0,
                                    num_reserved_ids=0, num_shards=1, shard=0,
                                    unigrams=(), seed=None, name=None) -> tuple:
    """TF1's tf.nn.fixed_unigram_candidate_sampler: num_sampled class ids drawn with
    probability proportional to unigrams ** distortion (the counts given, or read from
    vocab_file's last CSV field per line), after num_reserved_ids ids of weight 0,
    keeping the ids of shard `shard` of num_shards (TF's id arithmetic); range_max must
    equal the number of weights kept (TF checks it when run, onegraph while building).
    Returns (sampled_candidates, true_expected_count, sampled_expected_count) as
    og.nn.uniform_candidate_sampler. True classes outside [0, range_max) raise when run.

    Raises:
        ValueError: both or neither of vocab_file and unigrams given, a negative
            unigram, shard not in [0, num_shards), range_max not the weights' count.
        TypeError: vocab_file is not a path, unigrams not a list of numbers or
            distortion not a number, or as og.nn.uniform_candidate_sampler.
        OpAttributeError: a unigram is NaN, infinite or beyond float32, distortion is
            not finite, or a zero unigram meets a negative distortion.
        ShapeError: more than MAX_SAMPLE_ELEMENTS weights, or as
            og.nn.uniform_candidate_sampler.
    """
    what = "fixed_unigram_candidate_sampler"
    if unigrams is None:    # as TF's default (), "not given"
        unigrams = ()
    if vocab_file is None:
        vocab_file = ""
    if not isinstance(vocab_file, str) and not hasattr(vocab_file, "__fspath__"):
        raise TypeError(f"{what}: vocab_file must be a path (str), got "
                        f"{type(vocab_file).__name__} {_brief(vocab_file)}")
    if not isinstance(unigrams, (list, tuple, np.ndarray)):
        raise TypeError(f"{what}: unigrams must be a list of numbers, got "
                        f"{type(unigrams).__name__} {_brief(unigrams)}")
    if isinstance(distortion, (bool, np.bool_)) or \
            not isinstance(distortion, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what}: distortion must be a number, got "
                        f"{type(distortion).__name__} {_brief(distortion)}")
    if bool(vocab_file) == bool(len(unigrams)):
        raise ValueError(f"{what}: give exactly one of vocab_file and unigrams")
    if vocab_file:
        counts = _read_unigrams(vocab_file, what)
    else:
        try:
            counts = [float(u) for u in np.asarray(unigrams, np.float64).reshape(-1)]
        except (TypeError, ValueError):   # strings, ragged lists, objects
            raise TypeError(f"{what}: unigrams must be a list of numbers, got "
                            f"{_brief(unigrams)}") from None
    if any(c < 0 for c in counts):
        raise ValueError(f"{what}: unigrams must be >= 0")
    range_max = _positive_int(range_max, f"{what}: range_max")
    reserved = _int_arg(num_reserved_ids, f"{what}: num_reserved_ids")
    shards = _positive_int(num_shards, f"{what}: num_shards")
    shard = _int_arg(shard, f"{what}: shard")
    if not 0 <= shard < shards or reserved < 0:
        raise ValueError(f"{what}: shard must lie in [0, num_shards={shards}) and "
                         f"num_reserved_ids be >= 0, got {shard} and {reserved}")
    from ..ops.candidate_sampling_more import fixed_unigram_weights
    kept = fixed_unigram_weights(counts, float(distortion), reserved, shards, shard).size
    if kept != range_max:
        raise ValueError(f"{what}: range_max ({_brief(range_max)}) must equal the number of "
                         f"weights in the shard ({kept})")
    return _sampler("FixedUnigramCandidateSampler", what, true_classes, num_true,
                    num_sampled, unique, range_max, seed, name,
                    {"unigrams": counts, "distortion": float(distortion),
                     "num_reserved_ids": reserved, "num_shards": shards, "shard": shard})


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique,
                                      range_max, seed=None, name=None) -> tuple:
    """TF1's tf.nn.learned_unigram_candidate_sampler: as the fixed unigram sampler with
    weights learned while running: every class starts at 1 and each run, after its
    draws, adds 1 per occurrence of a class in true_classes (the op's state lives in the
    Session, like a random op's stream). Returns and raises as
    og.nn.uniform_candidate_sampler; true classes outside [0, range_max) raise when
    run."""
    return _sampler("LearnedUnigramCandidateSampler", "learned_unigram_candidate_sampler",
                    true_classes, num_true, num_sampled, unique, range_max, seed, name)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None,
                          name=None) -> tuple:
    """TF1's tf.nn.all_candidate_sampler: every class, sampled_candidates =
    [0, num_sampled) int64, with expected counts 1 (float32, (batch, num_true) and
    (num_sampled,)); for tests of the sampled losses. unique and seed change nothing.
    (TF also refuses true classes outside [0, num_sampled) when run; onegraph does not
    look at their values.)

    Raises:
        TypeError: a count is not a positive int, unique not a bool or seed not an int.
        ShapeError: true_classes is not (batch, num_true) integers.
    """
    what = "all_candidate_sampler"
    _g.check_name(name, what)
    check_seed(seed, what)
    num_true = _positive_int(num_true, f"{what}: num_true")
    num_sampled = _positive_int(num_sampled, f"{what}: num_sampled")
    if not isinstance(unique, (bool, np.bool_)):
        raise TypeError(f"{what}: unique must be a bool, got {type(unique).__name__}")
    # np.arange(num_sampled) below is built now: refuse a size no op may draw
    check_sample_count((num_sampled,), what, "sampled_candidates")
    classes = _classes(what, true_classes, num_true)
    g = classes.graph
    with g.name_scope(name or what):
        sampled = api.identity(g.constant(np.arange(num_sampled, dtype=np.int64)),
                               name="sampled_candidates")
        true_count = api.ones_like(api.cast(classes, DType.FLOAT32),
                                   name="true_expected_count")
        sampled_count = api.identity(g.constant(np.ones(num_sampled, np.float32)),
                                     name="sampled_expected_count")
    return sampled, true_count, sampled_count


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None,
                            name=None) -> tuple:
    """TF1's tf.nn.compute_accidental_hits: for each true class (row-major over
    true_classes (batch, num_true)) that is also one of sampled_candidates, its row
    (indices, int32), the position of that candidate (ids, int64; the last position
    when a candidate repeats) and the weight -FLT_MAX (weights, float32), as dense
    1-D tensors of the number of hits (sampled_softmax_loss subtracts them).

    Raises:
        TypeError: num_true is not a positive int or seed not an int.
        ShapeError: true_classes is not (batch, num_true) integers or
            sampled_candidates not 1-D integers.
    """
    what = "compute_accidental_hits"
    _g.check_name(name, what)
    check_seed(seed, what)
    num_true = _positive_int(num_true, f"{what}: num_true")
    classes = _classes(what, true_classes, num_true)
    g = classes.graph
    sampled = _input(_g.integer_tensor(sampled_candidates, f"{what}: sampled_candidates", g),
                     1, what, "sampled_candidates")
    with g.name_scope(name or what):
        return tuple(g.op("ComputeAccidentalHits", [classes, api.cast(sampled, DType.INT64)],
                          {"num_true": num_true}, num_outputs=3, domain="onegraph"))
