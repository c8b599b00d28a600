"""Rewriting single ONNX nodes into other ONNX ops, for writing a model at an older
opset (`convert_opset`) and for spelling onnxruntime's ops in ONNX's (`to_onnx`).

Two kinds of rewrite, each one function of a node and a `NodeBuilder`:
- lowerings (`LOWERINGS`): an op newer than the target into older ops (Gelu, Mish,
  HardSwish, LayerNormalization, RMSNormalization, Trilu);
- adaptations (`ADAPTATIONS`): an op that exists at the target but gained something
  since that the node uses, into the older op's form (Shape's start/end, Pad's and the
  reductions' axes inputs, Split's num_outputs, GridSample-20's mode names, RoiAlign's
  output_half_pixel), and for targets before 13 and 11 the inputs that were attributes
  (Squeeze's axes, Split's sizes; Clip's bounds, Pad's pads, Slice's starts and ends)
  and the other forms the older op has (`ADAPTATIONS_BEFORE_13`, `ADAPTATIONS_BEFORE_11`:
  Softmax's axis, Dropout's ratio, Resize-10 and Upsample-9, ...).
The nodes are written for the target opset in HELD_DOMAIN, which the version converter
leaves alone.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConversionError
from .onnx_import import _onnx, onnx_schema
from .onnx_legacy import proto_subgraphs

# The domain held nodes sit in while the converter runs (it adapts only ONNX's own
# domain) and the version its opset import gets meanwhile.
HELD_DOMAIN = "onegraph.held"

FLOAT_TYPES = {1: np.float32, 10: np.float16, 11: np.float64}


class NodeBuilder:
    """Appends the nodes that replace one node, named after it, into a node list."""

    def __init__(self, node, target, elem_type, domain=HELD_DOMAIN):
        self.base = node.name or (node.output[0] if node.output else "lowered")
        self.target = target
        self.elem_type = elem_type
        # the nodes' domain: held from the version converter, or ONNX's own
        self.domain = domain
        self.constants: dict = {}
        self.nodes = []
        self.count = 0

    def _name(self, tag):
        self.count += 1
        return f"{self.base}/{tag}_{self.count}"

    def op(self, op_type, inputs, output=None, **attrs):
        from onnx import helper

        out = output or self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out],
                                           name=self._name(op_type), domain=self.domain,
                                           **attrs))
        return out

    def const(self, value, elem_type=None):
        """A scalar Constant of this node's float type (or `elem_type`)."""
        from onnx import numpy_helper

        dtype = FLOAT_TYPES[elem_type or self.elem_type]
        tensor = numpy_helper.from_array(np.asarray(value, dtype=dtype))
        return self.op("Constant", [], value=tensor)

    def ints(self, values):
        """A 1-D int64 Constant."""
        from onnx import numpy_helper

        return self.op("Constant", [], value=numpy_helper.from_array(
            np.asarray(values, np.int64)))

    def scalar(self, value):
        """An int64 scalar Constant."""
        from onnx import numpy_helper

        return self.op("Constant", [], value=numpy_helper.from_array(np.int64(value)))

    def constant_input(self, name):
        """The value of `name` if an initializer or Constant node of the graph being
        rewritten holds it (see `_lower_new_ops`), else None."""
        return self.constants.get(name)

    def axes_op(self, op_type, x, axes):
        """Squeeze or Unsqueeze over `axes`: an input from opset 13, an attribute before."""
        if self.target >= 13:
            return self.op(op_type, [x, self.ints(axes)])
        return self.op(op_type, [x], axes=list(axes))

    def slice(self, x, starts, ends, axes, output=None):
        """Slice of x with constant starts, ends and axes (steps of 1): inputs from opset
        10, attributes before."""
        if self.target >= 10:
            return self.op("Slice", [x, self.ints(starts), self.ints(ends), self.ints(axes)],
                           output=output)
        return self.op("Slice", [x], output=output, starts=list(starts), ends=list(ends),
                       axes=list(axes))

    def reduce_mean(self, x, axes):
        if self.target >= 18:
            from onnx import numpy_helper

            axes_t = self.op("Constant", [], value=numpy_helper.from_array(
                np.asarray(axes, np.int64)))
            return self.op("ReduceMean", [x, axes_t], keepdims=1)
        return self.op("ReduceMean", [x], axes=list(axes), keepdims=1)


def _decoded_attributes(node) -> dict:
    """A NodeProto's attributes as {name: value}, strings decoded (to write them again
    with helper.make_node)."""
    return {a.name: node_attr(node, a.name, None) for a in node.attribute}


def node_attr(node, name, default):
    """A NodeProto's attribute value (strings decoded), or `default` if unset."""
    for a in node.attribute:
        if a.name == name:
            value = _onnx().helper.get_attribute_value(a)
            return value.decode() if isinstance(value, bytes) else value
    return default


def _lower_gelu(node, b: NodeBuilder):
    x, y = node.input[0], node.output[0]
    if node_attr(node, "approximate", "none") == "tanh":
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Add", [x, b.op("Mul", [cube, b.const(0.044715)])])
        t = b.op("Tanh", [b.op("Mul", [inner, b.const(math.sqrt(2.0 / math.pi))])])
    else:
        t = b.op("Erf", [b.op("Mul", [x, b.const(1.0 / math.sqrt(2.0))])])
    half_x = b.op("Mul", [x, b.const(0.5)])
    b.op("Mul", [half_x, b.op("Add", [t, b.const(1.0)])], output=y)


def _lower_mish(node, b: NodeBuilder):
    x = node.input[0]
    b.op("Mul", [x, b.op("Tanh", [b.op("Softplus", [x])])], output=node.output[0])


def _lower_hard_swish(node, b: NodeBuilder):
    x = node.input[0]
    gate = b.op("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5)
    b.op("Mul", [x, gate], output=node.output[0])


def _normalized_axes(node, rank) -> list:
    """[axis, ..., rank - 1] of a normalization node's `axis` attribute (default -1)."""
    if rank is None:
        raise NotLowered("the rank of its input is unknown")
    axis = int(node_attr(node, "axis", -1))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise NotLowered(f"axis {axis} is out of range for rank {rank}")
    return list(range(axis, rank))


def _lower_layer_norm(node, b: NodeBuilder, rank):
    axes = _normalized_axes(node, rank)
    eps = float(node_attr(node, "epsilon", 1e-5))
    stash = int(node_attr(node, "stash_type", 1))
    if stash not in FLOAT_TYPES:
        raise NotLowered(f"stash_type {stash} is not a float type")
    x = node.input[0]
    xs = x if stash == b.elem_type else b.op("Cast", [x], to=stash)
    mean = b.reduce_mean(xs, axes)
    d = b.op("Sub", [xs, mean])
    var = b.reduce_mean(b.op("Mul", [d, d]), axes)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, b.const(eps, stash)])])])
    normed = b.op("Mul", [d, inv])
    if stash != b.elem_type:
        normed = b.op("Cast", [normed], to=b.elem_type)
    outputs = list(node.output) + [""] * (3 - len(node.output))
    has_bias = len(node.input) > 2 and node.input[2]
    scaled = b.op("Mul", [normed, node.input[1]],
                  output=None if has_bias else outputs[0] or None)
    if has_bias:
        b.op("Add", [scaled, node.input[2]], output=outputs[0] or None)
    if outputs[1]:
        b.op("Identity", [mean], output=outputs[1])
    if outputs[2]:
        b.op("Identity", [inv], output=outputs[2])


def lower_rms_norm(node, b: NodeBuilder, rank, scale_type, out_type, stat_type=None):
    """Append to `b` the ONNX-13 ops that compute an RMS normalization node (ONNX's
    RMSNormalization, or onnxruntime's SimplifiedLayerNormalization with its optional
    inv_std_var output): Y = X / sqrt(mean(X^2 over axis..-1) + epsilon) * scale, in
    float (double when X is double or stash_type is 11), Y cast to `out_type` and
    inv_std_var to `stat_type`.

    Raises:
        NotLowered: the rank of X is unknown, axis is out of range, stash_type or the
            scale's type is not a float type.
    """
    axes = _normalized_axes(node, rank)
    stash = int(node_attr(node, "stash_type", 1))
    if stash not in (1, 11):
        raise NotLowered(f"stash_type {stash} is not float (1) or double (11)")
    if scale_type not in FLOAT_TYPES:
        raise NotLowered(f"its scale's type is {type_name(scale_type)}, not float16, "
                         "float or double")
    work = 11 if 11 in (stash, b.elem_type) else 1
    x = node.input[0]
    xs = x if b.elem_type == work else b.op("Cast", [x], to=work)
    mean_square = b.reduce_mean(b.op("Mul", [xs, xs]), axes)
    eps = b.const(float(node_attr(node, "epsilon", 1e-5)), work)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [mean_square, eps])])])
    scale = node.input[1] if scale_type == work else b.op("Cast", [node.input[1]], to=work)
    outputs = list(node.output) + [""] * (2 - len(node.output))
    if outputs[0]:
        y = b.op("Mul", [b.op("Mul", [xs, inv]), scale],
                 output=outputs[0] if out_type == work else None)
        if out_type != work:
            b.op("Cast", [y], output=outputs[0], to=out_type)
    if outputs[1]:
        if stat_type in (None, work):
            b.op("Identity", [inv], output=outputs[1])
        else:
            b.op("Cast", [inv], output=outputs[1], to=stat_type)


def _shape_by_slice(node, b: NodeBuilder, rank, types):
    """Shape's start and end (opset 15) as a Slice of the whole shape, which clamps
    and counts negative positions from the end just as they do."""
    start = int(node_attr(node, "start", 0))
    end = node_attr(node, "end", None)
    shape = b.op("Shape", [node.input[0]])
    b.slice(shape, [start], [_INT64_MAX if end is None else int(end)], [0],
            output=node.output[0])


def _pad_on_every_axis(node, b: NodeBuilder, rank, types):
    """Pad's `axes` input (opset 18) spelled out: the pads of the axes scattered into
    zeros for all `rank` axes (begins, then ends), as Pad-13 takes them."""
    axes = _pad_axes(node, b, rank)
    zeros = b.ints([0] * (2 * rank))
    where = b.ints(axes + [a + rank for a in axes])
    pads = b.op("ScatterElements", [zeros, where, node.input[1]], axis=0)
    inputs = [node.input[0], pads] + ([node.input[2]] if node.input[2] else [])
    mode = node_attr(node, "mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise NotLowered(f"its mode {mode!r} came in at opset 19")
    b.op("Pad", inputs, output=node.output[0], mode=mode)


def _pad_axes(node, b: NodeBuilder, rank) -> list:
    """Pad-18's constant `axes` input, counted from the front for an input of `rank`."""
    axes = b.constant_input(node.input[3])
    if axes is None:
        raise NotLowered("its axes are not a constant")
    if rank is None:
        raise NotLowered("the rank of its input is unknown")
    axes = [int(a) + rank if int(a) < 0 else int(a) for a in np.asarray(axes).reshape(-1)]
    if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        raise NotLowered(f"its axes {axes} are not distinct axes of rank {rank}")
    return axes


def _reduce_with_axes_attribute(node, b: NodeBuilder, rank, types):
    """A reduction's axes input (opset 18; ReduceSum's came at 13) as the attribute
    the older op takes, when the axes are constant."""
    axes = b.constant_input(node.input[1])
    if axes is None:
        raise NotLowered(f"its axes are computed at run time, and before opset 18 "
                         f"{node.op_type} takes them only as an attribute")
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    keepdims = int(node_attr(node, "keepdims", 1))
    if not axes and int(node_attr(node, "noop_with_empty_axes", 0)):
        # no reduction, but the op's elementwise part still applies (as onnxruntime
        # and onegraph compute it: ReduceL2 gives sqrt(x * x), ReduceLogSumExp x)
        x, out = node.input[0], node.output[0]
        if node.op_type in ("ReduceL2", "ReduceSumSquare"):
            square = b.op("Mul", [x, x], output=out if node.op_type == "ReduceSumSquare"
                          else None)
            if node.op_type == "ReduceL2":
                b.op("Sqrt", [square], output=out)
        else:
            b.op({"ReduceL1": "Abs", "ReduceLogSum": "Log"}.get(node.op_type, "Identity"),
                 [x], output=out)
        return
    attrs = {"keepdims": keepdims}
    if axes:
        attrs["axes"] = axes
    b.op(node.op_type, [node.input[0]], output=node.output[0], **attrs)


def _split_sizes_at_run_time(node, b: NodeBuilder, rank, types):
    """Split's num_outputs (opset 18) on an axis whose length is known only at run time
    (`_split_by_sizes` took the known ones): the sizes, ceil(length / n) each and the
    rest last, computed from the input's shape as Split-13's `split` input."""
    n = int(node_attr(node, "num_outputs", 0))
    if n < 1 or n != len(node.output):
        raise NotLowered(f"num_outputs {n} does not match its {len(node.output)} outputs")
    axis = int(node_attr(node, "axis", 0))
    length = b.op("Gather", [b.op("Shape", [node.input[0]]), b.ints([axis])])
    part = b.op("Div", [b.op("Add", [length, b.ints([n - 1])]), b.ints([n])])
    last = b.op("Sub", [length, b.op("Mul", [part, b.ints([n - 1])])])
    sizes = b.op("Concat", [part] * (n - 1) + [last], axis=0)
    b.nodes.append(_onnx().helper.make_node(
        "Split", [node.input[0], sizes], list(node.output), name=b._name("Split"),
        domain=b.domain, axis=axis))


def _lower_trilu(node, b: NodeBuilder, rank, types):
    """Trilu (opset 14) as a Where over the last two axes: keep x[..., i, j] where
    j - i >= k (upper) or j - i <= k (lower), zero elsewhere (NaN too)."""
    from onnx import numpy_helper

    if rank is not None and rank < 2:
        raise NotLowered(f"its input has rank {rank}, and Trilu needs at least 2")
    elem_type = types.get(node.input[0], (0, None))[0]
    if not elem_type:
        raise NotLowered("its input's type is unknown")
    x = node.input[0]
    shape = b.op("Shape", [x])

    def positions(axis):
        length = b.axes_op("Squeeze", b.op("Gather", [shape, b.ints([axis])]), [0])
        return b.op("Range", [b.scalar(0), length, b.scalar(1)])

    diff = b.op("Sub", [b.axes_op("Unsqueeze", positions(-1), [0]),
                        b.axes_op("Unsqueeze", positions(-2), [1])])
    k = node.input[1] if len(node.input) > 1 and node.input[1] else b.scalar(0)
    upper = int(node_attr(node, "upper", 1))
    if b.target >= 12:
        keep = b.op("GreaterOrEqual" if upper else "LessOrEqual", [diff, k])
    else:  # (GreaterOrEqual and LessOrEqual came in at 12; the positions are integers)
        keep = b.op("Not", [b.op("Less" if upper else "Greater", [diff, k])])
    if elem_type == _onnx().TensorProto.BOOL:  # (onnxruntime has no bool Where before 16)
        b.op("And", [keep, x], output=node.output[0])
        return
    zero = b.op("Constant", [], value=numpy_helper.from_array(
        np.zeros((), _onnx().helper.tensor_dtype_to_np_dtype(elem_type))))
    b.op("Where", [keep, x, zero], output=node.output[0])


def _grid_sample_modes_of_16(node, b: NodeBuilder, rank, types):
    """GridSample-20's mode names (linear, cubic) and N-D inputs in GridSample-16's
    terms: bilinear and bicubic, 4-D only."""
    if rank != 4:
        raise NotLowered(f"before opset 20 it takes 4-D inputs only, and its input's rank "
                         f"is {'unknown' if rank is None else rank}")
    attrs = {a.name: _onnx().helper.get_attribute_value(a) for a in node.attribute}
    mode = attrs.get("mode", b"linear")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    attrs["mode"] = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    for name in ("padding_mode",):
        if isinstance(attrs.get(name), bytes):
            attrs[name] = attrs[name].decode()
    b.op("GridSample", list(node.input), output=node.output[0], **attrs)


def _roi_align_of_10(node, b: NodeBuilder, rank, types):
    """RoiAlign-16's output_half_pixel is RoiAlign-10's only way of sampling; its
    half_pixel (the default from 16) has no older form."""
    mode = node_attr(node, "coordinate_transformation_mode", "half_pixel")
    if mode != "output_half_pixel":
        raise NotLowered(f"its coordinate_transformation_mode {mode!r} came in at opset 16")
    attrs = _decoded_attributes(node)
    del attrs["coordinate_transformation_mode"]
    b.op("RoiAlign", list(node.input), output=node.output[0], **attrs)


def _softmax_on_last_axis(node, b: NodeBuilder, rank, types):
    """Softmax, LogSoftmax or Hardmax at opset 13 (along one axis) in the older form,
    which flattens the input into 2-D at `axis` and normalizes each row: the same on
    the last axis, so another axis is first transposed to the end and back."""
    if rank is None:
        raise NotLowered("the rank of its input is unknown, and before opset 13 the op "
                         "normalizes over every axis from `axis` on together")
    axis = int(node_attr(node, "axis", -1))
    if not -rank <= axis < rank:
        raise NotLowered(f"its axis {axis} is out of range for rank {rank}")
    axis %= rank
    last = rank - 1
    if axis == last:
        b.op(node.op_type, [node.input[0]], output=node.output[0], axis=last)
        return
    swap = list(range(rank))
    swap[axis], swap[last] = last, axis   # a swap of two axes is its own inverse
    moved = b.op("Transpose", [node.input[0]], perm=swap)
    done = b.op(node.op_type, [moved], axis=last)
    b.op("Transpose", [done], output=node.output[0], perm=swap)


def _dropout_of_10(node, b: NodeBuilder, rank, types):
    """Dropout-12's ratio and training_mode inputs in Dropout-10's terms: an inference
    node (training_mode omitted or a constant false) passes its input through at any
    ratio, as Dropout-10 does outside training; a constant ratio becomes the attribute,
    and the mask (all true) is a ConstantOfShape."""
    inputs = list(node.input) + ["", ""]
    if inputs[2]:
        mode = b.constant_input(inputs[2])
        if mode is None:
            raise NotLowered("its training_mode is computed at run time, and before "
                             "opset 12 Dropout has no training mode")
        if bool(np.asarray(mode).reshape(-1)[0]):
            raise NotLowered("it runs in training mode, which Dropout has only from "
                             "opset 12")
    attrs = {}
    if inputs[1]:
        ratio = b.constant_input(inputs[1])
        if ratio is not None:
            attrs["ratio"] = float(np.asarray(ratio).reshape(-1)[0])
    b.op("Dropout", [inputs[0]], output=node.output[0], **attrs)
    if len(node.output) > 1 and node.output[1]:
        # the mask of an inference step is all true; Dropout-10's own mask is left
        # unspecified (onnxruntime gives all false), so it is written out instead
        from onnx import numpy_helper

        b.op("ConstantOfShape", [b.op("Shape", [inputs[0]])], output=node.output[1],
             value=numpy_helper.from_array(np.ones(1, bool)))


def _omits_roi_or_scales(node) -> bool:
    inputs = list(node.input)
    return any(k < len(inputs) - 1 and not inputs[k] for k in (1, 2))


def _resize_with_empty_roi_scales(node, b: NodeBuilder, rank, types):
    """Resize-13's omitted roi or scales (optional from 13) as the empty tensors that
    Resize-11 takes in their place. The node stays in ONNX's domain, so its later
    changes (axes, antialias, ...) are still checked when it is held."""
    from onnx import numpy_helper

    b.domain = ""
    inputs = list(node.input)
    for k in (1, 2):
        if k < len(inputs) - 1 and not inputs[k]:
            inputs[k] = b.op("Constant", [], value=numpy_helper.from_array(
                np.zeros(0, np.float32)))
    b.op("Resize", inputs, output=node.output[0], **_decoded_attributes(node))


def _omits_gemm_c(node) -> bool:
    return len(node.input) < 3 or not node.input[2]


def _gemm_with_zero_c(node, b: NodeBuilder, rank, types):
    """Gemm-11's omitted C (optional from 11; the dynamo exporter omits it for a
    matmul without bias) as the zero scalar that Gemm-9 takes in its place (C is
    broadcast to (M, N), and beta * 0 adds nothing). The node stays in ONNX's domain,
    so its later changes (types at 13) are still checked when it is held."""
    from onnx import helper, numpy_helper

    elem_type = types.get(node.input[0], (0, None))[0]
    if not elem_type:
        raise NotLowered("it omits C, which is required before opset 11, and the type "
                         "of its input A is unknown")
    b.domain = ""
    zero = numpy_helper.from_array(np.zeros((), helper.tensor_dtype_to_np_dtype(elem_type)))
    c = b.op("Constant", [], value=zero)
    b.op("Gemm", [node.input[0], node.input[1], c], output=node.output[0],
         **_decoded_attributes(node))


_INT64_MAX = np.iinfo(np.int64).max


# --------------------------------------------------------------------------------------
# Inputs that were attributes before opset 11 (Clip's bounds, Pad's pads and value) or
# 10 (Slice's starts, ends and axes): written as the attributes when constant
# --------------------------------------------------------------------------------------

def _given(node, k) -> bool:
    return len(node.input) > k and bool(node.input[k])


def _constant_operand(node, b: NodeBuilder, k, what, since):
    """Input k of `node` (given) as a numpy array, when it is a constant."""
    value = b.constant_input(node.input[k])
    if value is None:
        raise NotLowered(f"its {what} computed at run time, and before opset {since} "
                         f"{node.op_type} needs a constant (it is an attribute there)",
                         since=since)
    return np.asarray(value)


def _float_attribute_value(node, b: NodeBuilder, k, what, since) -> float:
    """Input k of `node`, a constant scalar, as the float32 an attribute holds.

    Raises:
        NotLowered: it is computed at run time, or float32 cannot hold it exactly.
    """
    value = _constant_operand(node, b, k, what, since).reshape(-1)
    v = float(value[0]) if value.size == 1 else None
    if v is None or (not np.isnan(v) and float(np.float32(v)) != v):
        raise NotLowered(f"its {what} {value.tolist()}, which a float attribute cannot hold "
                         f"exactly (before opset {since} {node.op_type} takes it only as one)",
                         since=since)
    return v


def _float_input_only(node, types, since):
    elem_type = types.get(node.input[0], (0, None))[0]
    if elem_type not in FLOAT_TYPES:
        raise NotLowered(f"its input is {type_name(elem_type)}, and before opset {since} "
                         f"{node.op_type} takes float16, float and double only", since=since)


def _uses_clip_bounds(node) -> bool:
    return _given(node, 1) or _given(node, 2)


def _clip_with_attributes(node, b: NodeBuilder, rank, types):
    """Clip-11's constant min and max inputs as Clip-6's attributes. A bound not given
    is the input type's lowest or largest value in both (Clip-6's defaults are
    float32's, so float16's are written out; double's does not fit the attribute).
    Bounds that cross (min > max) clip everything to max, which onnxruntime's Clip-6
    refuses to be told: both are written as max."""
    _float_input_only(node, types, 12)
    dtype = FLOAT_TYPES[types[node.input[0]][0]]
    bounds = {}
    for k, name, limit in ((1, "min", np.finfo(dtype).min), (2, "max", np.finfo(dtype).max)):
        if _given(node, k):
            bounds[name] = _float_attribute_value(node, b, k, f"{name} is", 11)
        elif float(np.float32(limit)) == float(limit):
            bounds[name] = float(limit)
        else:
            raise NotLowered(f"its {name} is not given, which means {dtype.__name__}'s "
                             f"{'lowest' if k == 1 else 'largest'} value, and the "
                             "float attribute before opset 11 cannot hold that")
    if bounds["min"] > bounds["max"]:
        bounds["min"] = bounds["max"]
    b.op("Clip", [node.input[0]], output=node.output[0], **bounds)


def _pad_with_attributes(node, b: NodeBuilder, rank, types):
    """Pad-11's constant pads and constant_value inputs (and Pad-18's axes) as Pad-2's
    attributes."""
    _float_input_only(node, types, 11)
    mode = node_attr(node, "mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise NotLowered(f"its mode {mode!r} came in at opset 19")
    pads = [int(p) for p in _constant_operand(node, b, 1, "pads are", 11).reshape(-1)]
    if _given(node, 3):
        axes = _pad_axes(node, b, rank)
        if len(pads) != 2 * len(axes):
            raise NotLowered(f"its {len(pads)} pads do not match its {len(axes)} axes")
        full = [0] * (2 * rank)
        for i, a in enumerate(axes):
            full[a], full[a + rank] = pads[i], pads[i + len(axes)]
        pads = full
    attrs = {"mode": mode, "pads": pads}
    if mode == "constant" and _given(node, 2):
        attrs["value"] = _float_attribute_value(node, b, 2, "constant_value is", 11)
    b.op("Pad", [node.input[0]], output=node.output[0], **attrs)


def _slice_before_11(node, b: NodeBuilder, rank, types):
    """Slice-13 for a target before 11, where axes count from the front only: constant
    negative axes are counted from the input's rank; before 10, the constant starts,
    ends and axes become Slice-1's attributes (which has no steps: only steps of 1)."""
    axes = index_type = None
    if _given(node, 3) and b.constant_input(node.input[3]) is not None:
        given = np.asarray(b.constant_input(node.input[3]))
        axes, index_type = [int(a) for a in given.reshape(-1)], given.dtype
        if any(a < 0 for a in axes):
            if rank is None:
                raise NotLowered(f"its axes {axes} are negative, which only opset 11 "
                                 "counts from the back, and its input's rank is unknown")
            axes = [a + rank if a < 0 else a for a in axes]
    if b.target >= 10:
        inputs = list(node.input)
        if axes is not None:   # in the type of starts and ends (int32 or int64)
            from onnx import numpy_helper

            inputs[3] = b.op("Constant", [], value=numpy_helper.from_array(
                np.asarray(axes, index_type)))
        b.op("Slice", inputs, output=node.output[0])
        return
    starts, ends = ([int(v) for v in _constant_operand(node, b, k, f"{what} are", 10)
                     .reshape(-1)] for k, what in ((1, "starts"), (2, "ends")))
    if _given(node, 3) and axes is None:
        _constant_operand(node, b, 3, "axes are", 10)   # raises: computed at run time
    if _given(node, 4):
        steps = _constant_operand(node, b, 4, "steps are", 10).reshape(-1).tolist()
        if any(s != 1 for s in steps):
            raise NotLowered(f"its steps {steps} are not all 1, and before opset 10 Slice "
                             "has no steps", since=10)
    b.slice(node.input[0], starts, ends, range(len(starts)) if axes is None else axes,
            output=node.output[0])


def _lower_rms_normalization(node, b: NodeBuilder, rank, types):
    scale_type = types.get(node.input[1], (0, None))[0] if len(node.input) > 1 else 0
    # Y in X's type, as onegraph's kernel and ONNX's reference compute it (the schema
    # says scale's type; onnxruntime runs only X and scale of one type)
    lower_rms_norm(node, b, rank, scale_type, b.elem_type)


def _lower_cast_like(node, b: NodeBuilder, rank, types):
    """CastLike (opset 15) as a Cast to its second input's element type, which the
    export knows where onnx's inliner cannot find it (inside If and Loop bodies)."""
    elem_type = types.get(node.input[1], (0, None))[0] if len(node.input) > 1 else 0
    if not elem_type:
        raise NotLowered("the type of its target_type input is unknown")
    # `saturate` (opset 19) only concerns float8 types, which no target before 19 has
    b.op("Cast", [node.input[0]], output=node.output[0], to=elem_type)


def type_name(elem_type: int) -> str:
    """ONNX's name of an element type number ("float16"), or "unknown" for 0."""
    if not elem_type:
        return "unknown"
    names = _onnx().TensorProto.DataType
    return names.Name(elem_type).lower() if elem_type in names.values() else str(elem_type)


class NotLowered(Exception):
    """A node that the rewrite cannot handle (why in the message); `since`: the opset
    of the change the node uses, where the rewrite knows it better than its table."""

    def __init__(self, message, since=None):
        super().__init__(message)
        self.since = since


# op -> (the opset it came in at, its rewrite into older ops)
LOWERINGS = {"Gelu": (20, _lower_gelu), "Mish": (18, _lower_mish),
              "HardSwish": (14, _lower_hard_swish),
              "LayerNormalization": (17, _lower_layer_norm),
              "RMSNormalization": (23, _lower_rms_normalization),
              "Trilu": (14, _lower_trilu), "CastLike": (15, _lower_cast_like)}

# lowerings that take any element type (the others need float16, float or double)
_ANY_TYPE_LOWERINGS = frozenset({"Trilu", "CastLike"})


def graph_constants(graph) -> dict:
    """{name: array} of a graph's initializers and Constant nodes' tensor values."""
    from onnx import numpy_helper

    found = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
            for a in node.attribute:
                if a.name == "value" and a.HasField("t"):
                    found[node.output[0]] = numpy_helper.to_array(a.t)
                elif a.name == "value_ints":
                    found[node.output[0]] = np.asarray(list(a.ints), np.int64)
                elif a.name == "value_int":
                    found[node.output[0]] = np.asarray(a.i, np.int64)
    return found


def _uses_shape_bounds(node) -> bool:
    return any(a.name in ("start", "end") for a in node.attribute)


def _uses_pad_axes(node) -> bool:
    return len(node.input) > 3 and bool(node.input[3])


def _uses_num_outputs(node) -> bool:
    return any(a.name == "num_outputs" for a in node.attribute) and not (
        len(node.input) > 1 and node.input[1])


def _axes_as_attribute(node, b: NodeBuilder, rank, types):
    """Squeeze-13's and Unsqueeze-13's axes input as the attribute of their opset-11
    (and opset-1) forms, when the axes are constant (a negative axis is counted from
    the front afterwards below 11, onnx_downgrade's `_axes_from_the_front`). onnx's
    converter does the same for the nodes it reaches, but never enters If/Loop/Scan
    bodies, and has no Squeeze adapter below 11."""
    axes = b.constant_input(node.input[1])
    if axes is None:
        raise NotLowered(f"its axes are computed at run time, and before opset 13 "
                         f"{node.op_type} takes them only as an attribute")
    b.op(node.op_type, [node.input[0]], output=node.output[0],
         axes=[int(a) for a in np.asarray(axes).reshape(-1)])


def _split_as_attribute(node, b: NodeBuilder, rank, types):
    """Split-13's sizes input as Split-11's (and Split-2's) `split` attribute, when
    constant (inside If/Loop/Scan bodies too, which onnx's converter does not enter)."""
    sizes = b.constant_input(node.input[1])
    if sizes is None:
        raise NotLowered("its sizes are computed at run time, and before opset 13 Split "
                         "takes them only as an attribute")
    b.nodes.append(_onnx().helper.make_node(
        "Split", [node.input[0]], list(node.output), name=b._name("Split"),
        domain=b.domain, axis=int(node_attr(node, "axis", 0)),
        split=[int(v) for v in np.asarray(sizes).reshape(-1)]))


def _takes_roi_and_scales(node) -> bool:
    return len(node.input) > 2   # Resize-11's form (Resize-10: X and scales)


# Resize before 11 has one coordinate mapping, 'asymmetric' (x_in = x_out / scale), and
# takes only scales. In onnxruntime, which defines what these older ops compute,
# Resize-10's linear and Upsample-9's nearest and linear (scales >= 1, Upsample's
# range) compute what Resize-11+ does with 'asymmetric' (nearest_mode 'floor');
# Resize-10's nearest does so only for integer scales (measured over random shapes and
# scales; 1.5 or 0.75 pick other pixels).
_RESIZE_DEFAULTS_BEFORE_11 = {"exclude_outside": 0, "antialias": 0,
                              "keep_aspect_ratio_policy": "stretch"}


def _resize_before_11(node, b: NodeBuilder, rank, types):
    """Resize-11+ for a target before 11, where it is Resize-10 (Upsample-9 below 10)
    with constant scales: modes nearest ('floor') and linear, mapped 'asymmetric'."""
    mode = node_attr(node, "mode", "nearest")
    if mode not in ("nearest", "linear"):
        raise NotLowered(f"its mode {mode!r} came in at opset 11")
    ctm = node_attr(node, "coordinate_transformation_mode", "half_pixel")
    if ctm != "asymmetric":
        raise NotLowered(f"its coordinate_transformation_mode {ctm!r} came in at opset 11 "
                         "(before it Resize maps coordinates only as 'asymmetric' does)")
    nearest = node_attr(node, "nearest_mode", "round_prefer_floor")
    if mode == "nearest" and nearest != "floor":
        raise NotLowered(f"its nearest_mode {nearest!r} came in at opset 11 (before it "
                         "nearest rounds down)")
    for name, default in _RESIZE_DEFAULTS_BEFORE_11.items():
        if node_attr(node, name, default) != default:
            raise NotLowered(f"its attribute {name!r} came in after opset 10")
    if node_attr(node, "axes", None) is not None:
        raise NotLowered("its attribute 'axes' came in at opset 18")
    scales = b.constant_input(node.input[2]) if _given(node, 2) else None
    if scales is None or np.asarray(scales).size == 0:
        raise NotLowered("its output size is not given as constant scales, the only way "
                         "before opset 11")
    scales = np.asarray(scales, np.float32).reshape(-1)
    if b.target < 10:
        if (scales < 1).any():
            raise NotLowered(f"its scales {scales.tolist()} shrink, which Upsample, "
                             "Resize's form before opset 10, cannot")
        op = "Upsample"
    else:
        if mode == "nearest" and (scales != np.floor(scales)).any():
            raise NotLowered(f"its scales {scales.tolist()} are not whole numbers, for "
                             "which Resize-10's nearest picks other pixels")
        op = "Resize"
    from onnx import numpy_helper

    b.op(op, [node.input[0], b.op("Constant", [], value=numpy_helper.from_array(scales))],
         output=node.output[0], mode=mode)


def _uses_axes_input(node) -> bool:
    """Whether input 1 is given (the axes, Split's sizes, Pad's pads, Slice's starts),
    which the op's older form takes as an attribute."""
    return _given(node, 1)


# op -> (the opset it changed at, whether a node uses the change, the node's rewrite in
# the older op's terms): ops that exist at the target, but in a form the node cannot use
ADAPTATIONS = {"Shape": (15, _uses_shape_bounds, _shape_by_slice),
                "Pad": (18, _uses_pad_axes, _pad_on_every_axis),
                "Split": (18, _uses_num_outputs, _split_sizes_at_run_time),
                "GridSample": (20, lambda node: True, _grid_sample_modes_of_16),
                "RoiAlign": (16, lambda node: True, _roi_align_of_10),
                **{op: (18, _uses_axes_input, _reduce_with_axes_attribute)
                   for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                              "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                              "ReduceSumSquare")}}

# Adaptations for targets before 13 (from _OLDEST_REWRITE_TARGET): Softmax's axis
# (onnx's converter keeps a Softmax-13 axis that is not the last as it is, which means
# another thing at 12), Resize's roi and scales (optional from 13), Dropout's ratio
# and training_mode inputs (from 12; onnx's converter has no adapter down from there),
# ReduceSum's, Squeeze's and Unsqueeze's axes and Split's sizes (inputs from 13; onnx's
# converter moves them into the attribute, but not inside If/Loop/Scan bodies, and its
# ReduceSum adapter names no node when they are computed)
ADAPTATIONS_BEFORE_13 = {**{op: (13, lambda node: True, _softmax_on_last_axis)
                            for op in ("Softmax", "LogSoftmax", "Hardmax")},
                         "Resize": (13, _omits_roi_or_scales, _resize_with_empty_roi_scales),
                         "Dropout": (12, lambda node: True, _dropout_of_10),
                         "ReduceSum": (13, _uses_axes_input, _reduce_with_axes_attribute),
                         "Squeeze": (13, _uses_axes_input, _axes_as_attribute),
                         "Unsqueeze": (13, _uses_axes_input, _axes_as_attribute),
                         "Split": (13, _uses_axes_input, _split_as_attribute)}
# Adaptations for targets before 11, which take precedence over the ones above: Gemm's
# omitted C (optional from 11; onnx's converter keeps it omitted), and the inputs that
# were attributes (Clip's min and max, Pad's pads and value; Slice's starts, ends and
# axes before 10), which onnx's converter has no adapter for
ADAPTATIONS_BEFORE_11 = {"Gemm": (11, _omits_gemm_c, _gemm_with_zero_c),
                         "Clip": (11, _uses_clip_bounds, _clip_with_attributes),
                         "Pad": (11, _uses_axes_input, _pad_with_attributes),
                         "Slice": (11, _uses_axes_input, _slice_before_11),
                         "Resize": (11, _takes_roi_and_scales, _resize_before_11)}
# ops rewritten for targets before the op existed (Resize as Upsample below 10)
_WRITTEN_AS_ANOTHER_OP = frozenset({"Resize"})
_NEGATIVE_AXES_OPSET = 11
# the oldest target the adaptations write for (negative axes came in at 11) ...
_OLDEST_REWRITE_TARGET = 11
# ... except these, whose rewrites write ops that mean the same from opset 8 (the axes
# they write are non-negative or go through onnx_downgrade's count from the front);
# Resize, Split's num_outputs and Pad's axes (at 11 and 12) write forms that came in
# at 11 or later
_ALSO_FROM_OPSET_8 = frozenset({"Softmax", "LogSoftmax", "Hardmax", "Dropout", "RoiAlign",
                                "Squeeze", "Unsqueeze", "Split", "Shape",
                                *ADAPTATIONS_BEFORE_11,
                                *(op for op, entry in ADAPTATIONS.items()
                                  if entry[2] is _reduce_with_axes_attribute),
                                "ReduceSum"})
_OLDEST_TARGET_FROM_8 = 8
# rewrites that write opset-13 forms (Split's sizes as an input)
_WRITES_OPSET_13_FORMS = frozenset({_split_sizes_at_run_time})


def adaptation_for(node, source, target):
    """The (opset, uses, rewrite) entry that rewrites `node` for `target`, or None."""
    if node.domain not in ("", "ai.onnx") or target < _OLDEST_TARGET_FROM_8 or (
            target < _OLDEST_REWRITE_TARGET and node.op_type not in _ALSO_FROM_OPSET_8):
        return None
    tables = ((ADAPTATIONS_BEFORE_11,) if target < _NEGATIVE_AXES_OPSET else ()) + (
        ADAPTATIONS, ADAPTATIONS_BEFORE_13)
    for table in tables:
        entry = table.get(node.op_type)
        if entry is None or not source >= entry[0] > target:
            continue
        if target < 13 and entry[2] in _WRITES_OPSET_13_FORMS:
            continue
        if entry[1](node) and (onnx_schema(node.op_type, target, "") is not None
                               or node.op_type in _WRITTEN_AS_ANOTHER_OP):
            return entry
    return None


def lower_new_ops(graph, source, target, types, outer_constants=None) -> int:
    """Replace (in place, subgraphs too) each node whose op is newer than `target` and
    has a rewrite by its older-op form, and each node using what its op gained since
    `target` where that has a rewrite (Shape's start and end, Pad's axes); returns how
    many were replaced.

    Raises:
        ConversionError: such a node's input type (or rank) is unknown or not float; a
            Pad's axes are not constant or its mode came in after the target.
    """
    count = lowered_here = 0
    new_nodes = []
    constants = dict(outer_constants or {})
    constants.update(graph_constants(graph))
    for node in graph.node:
        for sub in proto_subgraphs(node):
            count += lower_new_ops(sub, source, target, types, constants)
        adaptation = adaptation_for(node, source, target)
        if adaptation is not None:
            builder = NodeBuilder(node, target, 0)
            builder.constants = constants
            try:
                adaptation[2](node, builder, types.get(node.input[0], (0, None))[1], types)
            except NotLowered as e:
                raise ConversionError(
                    f"cannot write {node.op_type} node {node.name!r} at opset {target} (it "
                    f"changed at opset {e.since or adaptation[0]} in a way the node uses): "
                    f"{e}; export at a later opset") from None
            new_nodes.extend(builder.nodes)
            lowered_here += 1
            continue
        entry = LOWERINGS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if entry is None or entry[0] <= target or onnx_schema(node.op_type, source, "") is None:
            new_nodes.append(node)
            continue
        where = f"{node.op_type} node {node.name!r}"
        elem_type, rank = types.get(node.input[0], (0, None))
        if elem_type not in FLOAT_TYPES and node.op_type not in _ANY_TYPE_LOWERINGS:
            raise ConversionError(
                f"cannot write {where} at opset {target} (the op came in at opset "
                f"{entry[0]}): its input's type is {type_name(elem_type)}, "
                "and the rewrite into older ops needs float16, float or double")
        builder = NodeBuilder(node, target, elem_type)
        try:
            if node.op_type == "LayerNormalization":
                entry[1](node, builder, rank)
            elif node.op_type in ("RMSNormalization", "Trilu", "CastLike"):
                entry[1](node, builder, rank, types)
            else:
                entry[1](node, builder)
        except NotLowered as e:
            raise ConversionError(f"cannot write {where} at opset {target} (the op came "
                                  f"in at opset {entry[0]}): {e}") from None
        new_nodes.extend(builder.nodes)
        lowered_here += 1
    if lowered_here:
        replace_nodes(graph, new_nodes)
    return count + lowered_here


def replace_nodes(graph, nodes) -> None:
    """Make `nodes` (some of them the graph's own) the graph's node list, in order."""
    from onnx import NodeProto

    # copies: the kept messages belong to the field that is about to be cleared
    copies = []
    for node in nodes:
        copy = NodeProto()
        copy.CopyFrom(node)
        copies.append(copy)
    del graph.node[:]
    graph.node.extend(copies)
