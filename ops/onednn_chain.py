"""Chains of float32 2-D conv-net steps run by oneDNN on channel-blocked images.

One conv through oneDNN (ops/onednn.py) pays a reorder of its input into the blocked
layout its kernel runs on (nChw16c: 16 channels a vector) and of its output back to
NCHW; those two passes ate most of what the kernel gains, so 1x1 convs stayed im2col-
free GEMMs. onnxruntime's NCHWc transformer keeps whole runs of a conv net blocked
instead. A `ChainProgram` does that for a run of a Session's steps (the Session's
rewrite in train/onednn_chains.py picks them): Convs (bias and Relu fused), MaxPool,
AveragePool, GlobalAveragePool, LRN, Relu, Add, a BatchNormalization + Relu reduced
to a per-channel clip, channel Concats and inference Dropout, all on nChw16c buffers;
the chain's inputs are reordered in as its first readers need them and only the
values read outside the chain are reordered out to NCHW. A Concat whose inputs start
on block boundaries costs nothing for the inputs its steps make: they write into their
channel blocks of its buffer (others are copied there). Values whose lives do not
overlap share buffers. A step oneDNN has no kernel for (an Add that broadcasts), and a
conv that runs better on conv.py's own paths (3x3 stride-1 convs with many channels on
wide images: Winograd), runs its own kernel, its inputs reordered out and its output
back in.

A program is made for one set of input shapes. It raises `Declined` when a step's
shapes or arguments do not fit (the caller then runs the steps one by one, whose
kernels report what is wrong); the results are those of the steps (another summation
order: the last bits differ).
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from ..errors import ExecutionError, OneGraphError
from . import onednn
from .onednn import (_A, _ABCD, _ABCDE, _ANY, _ARG_BIAS, _ARG_DST, _ARG_SCRATCHPAD,
                     _ARG_SRC, _ARG_WEIGHTS, _CONVOLUTION_DIRECT, _ELTWISE_RELU,
                     _FORWARD_INFERENCE, _QUERY_SRC, _QUERY_WEIGHTS, Primitive,
                     StreamState, _Declined, _Handle, _aligned_floats, _arguments, _dims,
                     reordered_weights, thread_state)
from .scratch import begin_kernel

Declined = _Declined

_BLOCKED = 78  # aBcd16b: nChw16c
_BLOCK = 16
_POOL_MAX, _POOL_AVG_INCLUDE, _POOL_AVG_EXCLUDE = 0x1ff, 0x2ff, 0x3ff
_LRN_ACROSS_CHANNELS = 0xaff
_BINARY_ADD, _BINARY_MAX, _BINARY_SUB = 0x1fff0, 0x1fff2, 0x1fff5
_ARG_SRC_1 = 2
_ARG_MULTIPLE_SRC = 1024


class ChainOp:
    """One step of a chain: `kind` ("conv", "maxpool", "avgpool", "globalavgpool",
    "lrn", "relu", "add", "concat", "identity"), its input and output tensor ids, the
    node's attributes, and for convs the constant weights, bias and fused Relu (for
    Add its fused Relu; for "clip", max(x, b) per channel, or max(x - b, 0) with
    `relu`); `host` is the step's own kernel (inputs, attrs, ctx) ->
    outputs, which runs the step on NCHW copies where oneDNN has no kernel for it (or,
    for 3x3 convs with many channels on wide images, a slower one than Winograd)."""

    __slots__ = ("kind", "inputs", "output", "attrs", "w", "b", "relu", "host")

    def __init__(self, kind, inputs, output, attrs, w=None, b=None, relu=False,
                 host=None):
        self.kind, self.inputs, self.output, self.attrs = kind, tuple(inputs), output, attrs
        self.w, self.b, self.relu, self.host = w, b, relu, host


def _decline_on_error(fn):
    """Run fn(); a onegraph error (a shape or attribute the step's own kernel reports
    better) declines the chain."""
    try:
        return fn()
    except OneGraphError as e:
        raise Declined(str(e)) from e


class ChainProgram:
    """The oneDNN primitives of a chain for fixed input shapes, with its reordered
    weights; `run` executes it (threads may share a program: each has its own
    buffers, memory objects and stream).

    Raises:
        Declined: a step has no fast oneDNN kernel, or its arguments do not fit.
        ExecutionError: oneDNN failed otherwise.
    """

    def __init__(self, lib, ops, inputs, outputs, input_shapes):
        self.lib = lib
        self._descs, self._memories, self._held, self._prims = [], [], [], []
        self.inputs, self.outputs = tuple(inputs), tuple(outputs)
        self.shapes = dict(zip(inputs, input_shapes))
        self.md = {}       # tensor or temporary -> memory descriptor
        self.root = {}     # tensor or temporary -> whose buffer holds it (None: the user's)
        self.steps = []    # ("prim", Primitive, [(arg, key)]) or ("host", op, in, out)
        self.alias = {}
        self.offset = {}   # a Concat slice's byte offset in its Concat's buffer
        self._temporaries = 0
        for t, shape in self.shapes.items():
            if len(shape) != 4:
                raise Declined(f"a rank-{len(shape)} input")
            self.md[t] = self._desc(shape, _ABCD)
            self.root[t] = None
        for op in ops:
            if op.kind == "identity":
                self.alias[op.output] = self._key(op.inputs[0])
            else:
                self.shapes[op.output] = _decline_on_error(lambda: self._shape_of(op))
        self._readers = {}
        for op in ops:
            for t in op.inputs:
                self._readers[self._key(t)] = self._readers.get(self._key(t), 0) + 1
        self._sliced, self._sub = self._concat_slices(ops)
        self._written = set()  # values their step wrote into their Concat slice
        self._blocked_inputs = {}
        for op in ops:
            if op.kind != "identity":
                try:
                    getattr(self, "_build_" + op.kind)(op)
                except Declined as e:
                    if op.host is None:
                        raise Declined(f"{op.kind} of "
                                       f"{self.shapes[self._key(op.inputs[0])]}: {e}") from e
                    # no oneDNN kernel for it (a grouped conv of 136 channels a group,
                    # an Add that broadcasts): the step's own kernel, on NCHW
                    self._host_step(op)
        self.output_keys = [self._key(t) for t in outputs]
        self.output_shapes = [self.shapes[k] for k in self.output_keys]
        self.output_mds = [self._desc(s, _ABCD) for s in self.output_shapes]
        self.output_reorders = [onednn._Reorder(lib, self.md[k], md)
                                for k, md in zip(self.output_keys, self.output_mds)]
        self.scratchpad_size = max((s[1].scratchpad_size for s in self.steps
                                    if s[0] == "prim"), default=0)
        self.slot_of, self.slot_sizes = self._share_buffers()
        self._threads = threading.local()

    # -- planning ------------------------------------------------------------------

    def _key(self, t):
        return self.alias.get(t, t)

    def _desc(self, shape, tag=None, strides=None):
        md = self.lib.memory_desc(shape, tag, strides)
        self._descs.append(md)
        return md

    def _temporary(self, md):
        self._temporaries += 1
        key = ("temporary", self._temporaries)
        self.md[key], self.root[key] = md, key
        return key

    def _shape_of(self, op):
        from .conv import _pool_geometry
        from .pool import _geometry

        x = self.shapes[self._key(op.inputs[0])]
        if op.kind == "conv":
            m, cg = op.w.shape[:2]
            group = int(op.attrs.get("group", 1))
            if op.w.ndim != 4 or x[1] != cg * group or m % group:
                raise Declined("weights that do not fit")
            *_, out_sp = _pool_geometry(x[2:], list(op.w.shape[2:]), op.attrs)
            return (x[0], m) + tuple(out_sp)
        if op.kind in ("maxpool", "avgpool"):
            return x[:2] + tuple(_geometry(x, op.attrs, 4)[-1])
        if op.kind == "globalavgpool":
            return x[:2] + (1, 1)
        if op.kind == "concat":
            shapes = [self.shapes[self._key(t)] for t in op.inputs]
            axis = int(op.attrs.get("axis", 1))
            if axis not in (1, -3) or any(s[:1] + s[2:] != x[:1] + x[2:] for s in shapes):
                raise Declined("a Concat that is not one of channels")
            return (x[0], sum(s[1] for s in shapes)) + x[2:]
        if op.kind == "clip" and x[1] != op.b.shape[0]:
            raise Declined("a BatchNormalization of other channels")
        if op.kind == "add":
            # (one that broadcasts runs as a host step; 4-D only)
            try:
                y = np.broadcast_shapes(x, self.shapes[self._key(op.inputs[1])])
            except ValueError:  # the Add's own kernel says it in onegraph's words
                raise Declined("an Add of shapes that do not broadcast") from None
            if len(y) != 4:
                raise Declined("an Add of another rank")
            return y
        return x

    def _concat_slices(self, ops):
        """{concat output: channel offsets of its inputs} for the chain's channel
        Concats whose inputs start on block boundaries, and {tensor: (concat output,
        channel offset)} for those inputs that the step making them may write
        straight into their slice of the Concat's buffer (read by it alone)."""
        made = {op.output for op in ops if op.kind not in ("identity", "concat")}
        sliced, sub = {}, {}
        for op in ops:
            if op.kind != "concat":
                continue
            keys = [self._key(t) for t in op.inputs]
            offsets = [int(o) for o in np.cumsum([0] + [self.shapes[k][1] for k in keys])]
            if any(o % _BLOCK for o in offsets[:-1]) or len(set(keys)) != len(keys):
                continue
            sliced[op.output] = offsets
            for k, o in zip(keys, offsets):
                if k in made and self._readers.get(k) == 1 and k not in self.outputs:
                    sub[k] = (op.output, o)
        return sliced, sub

    def _slice(self, key, parent, shape, offset):
        """Describe `key` (of `shape`) as channels [offset, offset + shape[1]) of the
        blocked value `parent`: for one image a dense blocked tensor at a byte offset
        in the parent's buffer (channel blocks are contiguous there, and every kernel
        takes a dense tensor), for a batch a sub-memory descriptor."""
        parent_md = self._blocked(parent)
        if shape[0] == 1:
            md = self._desc(shape, _BLOCKED)
            self.offset[key] = 4 * offset * math.prod(shape[2:])
        else:
            md = _Handle()
            self.lib.check(self.lib.memory_desc_create_submemory(
                ctypes.byref(md), parent_md, _dims(shape), _dims((0, offset, 0, 0))),
                "describing a Concat slice")
            self._descs.append(md)
        self.md[key], self.root[key] = md, parent

    def _with_output(self, t, create):
        """create(descriptor of t) -> the Primitive of the step making t: written into
        its Concat slice when it has one and the kernel takes that, else into a
        blocked buffer of its own."""
        if t in self._sub:
            parent, offset = self._sub[t]
            self._slice(t, parent, self.shapes[t], offset)
            try:
                prim = create(self.md[t])
            except Declined:  # (jit 3x3 convs refuse a batch's slice past channel 0)
                del self.md[t], self.root[t]
                self.offset.pop(t, None)
            else:
                self._written.add(t)
                return prim
        return create(self._blocked(t))

    def _blocked(self, t):
        if t not in self.md:
            self.md[t], self.root[t] = self._desc(self.shapes[t], _BLOCKED), t
        return self.md[t]

    def _primitive(self, create, what, relu=False):
        """A Primitive (ops/onednn.py) from create(pd pointer, attr) -> status."""
        prim = Primitive(self.lib, create, what, _ELTWISE_RELU if relu else None)
        self._prims.append(prim)
        return prim

    def _add_step(self, prim, args):
        if prim.scratchpad_size:
            key = ("scratchpad", len(self.steps))
            self.md[key], self.root[key] = prim.scratchpad_md, "scratchpad"
            args = args + [(_ARG_SCRATCHPAD, key)]
        self.steps.append(("prim", prim, args))

    def _reorder_to(self, key, md):
        """key itself when its layout is md, else a temporary holding it reordered."""
        if self.lib.memory_desc_equal(self.md[key], md):
            return key
        tmp = self._temporary(md)
        reorder = onednn._Reorder(self.lib, self.md[key], md)
        self._prims.append(_ReorderPrimitive(self.lib, reorder))
        self.steps.append(("prim", self._prims[-1], [(_ARG_SRC, key), (_ARG_DST, tmp)]))
        return tmp

    def _src(self, t):
        """(key, descriptor) a primitive reads t from: the chain's own values as they
        are, its inputs (NCHW) through one blocked copy each."""
        key = self._key(t)
        if self.root[key] is None:
            if key not in self._blocked_inputs:
                self._blocked_inputs[key] = self._reorder_to(
                    key, self._desc(self.shapes[key], _BLOCKED))
            key = self._blocked_inputs[key]
        return key, self.md[key]

    # -- steps -----------------------------------------------------------------------

    def _build_conv(self, op):
        from .conv import _onednn_pays, _pool_geometry

        lib = self.lib
        x_key = self._key(op.inputs[0])
        x_shape = self.shapes[x_key]
        w = op.w
        m = w.shape[0]
        group = int(op.attrs.get("group", 1))
        strides, dil, pb, pe, out_sp = _decline_on_error(
            lambda: _pool_geometry(x_shape[2:], list(w.shape[2:]), op.attrs))
        if min(pb + pe) < 0:
            raise Declined("negative pads")
        kernel = list(w.shape[2:])
        if op.host is not None and group == 1 and kernel == [3, 3] \
                and not _onednn_pays(x_shape[1], m, group, kernel, strides, dil, out_sp):
            self._host_step(op)
            return
        if group == 1:
            w_shape, w_tag = w.shape, _ABCD
        else:
            w_shape, w_tag = (group, m // group, w.shape[1]) + tuple(kernel), _ABCDE
        any_w, user_w = self._desc(w_shape, _ANY), self._desc(w_shape, w_tag)
        bias_md = self._desc((m,), _A) if op.b is not None else None
        key, x_md = x_key, self.md[x_key]
        if self.root[key] is None:
            # a chain input: reordered into the layout the kernel wants (an RGB stem
            # reads NCHW as it is)
            x_md = self._desc(x_shape, _ANY)
        prim = self._with_output(op.output, lambda y_md: self._primitive(
            lambda pd, attr: lib.convolution_forward_primitive_desc_create(
                pd, lib.engine, _FORWARD_INFERENCE, _CONVOLUTION_DIRECT, x_md, any_w,
                bias_md, y_md, _dims(strides), _dims(d - 1 for d in dil), _dims(pb),
                _dims(pe), attr), "creating a convolution", op.relu))
        key = self._reorder_to(key, prim.md(_QUERY_SRC))
        weights, w_mem = reordered_weights(lib, user_w, prim.md(_QUERY_WEIGHTS),
                                           np.ascontiguousarray(w, dtype=np.float32))
        self._hold(weights)
        self._memories.append(w_mem)
        args = [(_ARG_SRC, key), (_ARG_WEIGHTS, ("memory", w_mem)), (_ARG_DST, op.output)]
        if op.b is not None:
            bias = self._hold(np.ascontiguousarray(op.b, dtype=np.float32))
            args.append((_ARG_BIAS, ("memory", self._memory(bias_md, bias))))
        self._add_step(prim, args)

    def _host_step(self, op):
        """Run op's own kernel on NCHW: its inputs reordered out, its output back in."""
        plain_ins = []
        for t in op.inputs:
            key = self._key(t)
            plain = self._temporary(self._desc(self.shapes[key], _ABCD))
            reorder = onednn._Reorder(self.lib, self.md[key], self.md[plain])
            self._prims.append(_ReorderPrimitive(self.lib, reorder))
            self.steps.append(("prim", self._prims[-1], [(_ARG_SRC, key),
                                                         (_ARG_DST, plain)]))
            plain_ins.append(plain)
        plain_out = self._temporary(self._desc(self.shapes[op.output], _ABCD))
        self.root[plain_out] = None  # the host kernel's own array, set per run
        self.steps.append(("host", op, tuple(plain_ins), plain_out))
        self._prims.append(self._with_output(op.output, lambda y_md: _ReorderPrimitive(
            self.lib, onednn._Reorder(self.lib, self.md[plain_out], y_md))))
        self.steps.append(("prim", self._prims[-1], [(_ARG_SRC, plain_out),
                                                     (_ARG_DST, op.output)]))

    def _build_pool(self, op, algorithm, kernel, strides, dil, pb, pe):
        lib = self.lib
        key, x_md = self._src(op.inputs[0])
        prim = self._with_output(op.output, lambda y_md: self._primitive(
            lambda pd, attr: lib.pooling_forward_primitive_desc_create(
                pd, lib.engine, _FORWARD_INFERENCE, algorithm, x_md, y_md, _dims(strides),
                _dims(kernel), _dims(d - 1 for d in dil), _dims(pb), _dims(pe), attr),
            "creating a pooling"))
        self._add_step(prim, [(_ARG_SRC, key), (_ARG_DST, op.output)])

    def _window(self, op):
        """(kernel, strides, dilations, pads_begin, oneDNN's pads_end) of a pool; the
        end pads reach the last window ceil_mode keeps."""
        from .pool import _geometry

        x = self.shapes[self._key(op.inputs[0])]
        kernel, strides, dil, pb, pe, out_sp = _decline_on_error(
            lambda: _geometry(x, op.attrs, 4))
        if len(kernel) != 2 or min(pb + pe) < 0:
            raise Declined("not a 2-D pool")
        # oneDNN's end pads give its output size by floor division: the pads its
        # last window reaches (ceil_mode's may pass the node's, floor's fall short)
        reach = [(o - 1) * s + (k - 1) * d + 1 - n - b for o, s, k, d, n, b in
                 zip(out_sp, strides, kernel, dil, x[2:], pb)]
        return kernel, strides, dil, pb, pe, [max(r, 0) for r in reach]

    def _build_maxpool(self, op):
        kernel, strides, dil, pb, _, reach = self._window(op)
        self._build_pool(op, _POOL_MAX, kernel, strides, dil, pb, reach)

    def _build_avgpool(self, op):
        kernel, strides, dil, pb, pe, reach = self._window(op)
        include = bool(op.attrs.get("count_include_pad", 0))
        # windows counting padding: oneDNN counts the end pads it is given, ONNX the
        # node's pads only (a ceil_mode window past them counts what it covers)
        if include and any(r > e for r, e in zip(reach, pe)):
            raise Declined("windows counted differently")
        self._build_pool(op, _POOL_AVG_INCLUDE if include else _POOL_AVG_EXCLUDE,
                         kernel, strides, dil, pb, reach)

    def _build_globalavgpool(self, op):
        x = self.shapes[self._key(op.inputs[0])]
        self._build_pool(op, _POOL_AVG_EXCLUDE, x[2:], (1, 1), (1, 1), (0, 0), (0, 0))

    def _build_lrn(self, op):
        lib = self.lib
        size = int(op.attrs["size"])
        if size % 2 == 0:
            raise Declined("an even LRN size (ONNX's window is lopsided)")
        key, x_md = self._src(op.inputs[0])
        a = op.attrs
        prim = self._with_output(op.output, lambda y_md: self._primitive(
            lambda pd, attr: lib.lrn_forward_primitive_desc_create(
                pd, lib.engine, _FORWARD_INFERENCE, _LRN_ACROSS_CHANNELS, x_md, y_md, size,
                float(a.get("alpha", 1e-4)), float(a.get("beta", 0.75)),
                float(a.get("bias", 1.0)), attr), "creating an LRN"))
        self._add_step(prim, [(_ARG_SRC, key), (_ARG_DST, op.output)])

    def _build_relu(self, op):
        lib = self.lib
        key, x_md = self._src(op.inputs[0])
        prim = self._with_output(op.output, lambda y_md: self._primitive(
            lambda pd, attr: lib.eltwise_forward_primitive_desc_create(
                pd, lib.engine, _FORWARD_INFERENCE, _ELTWISE_RELU, x_md, y_md, 0.0, 0.0,
                attr), "creating a Relu"))
        self._add_step(prim, [(_ARG_SRC, key), (_ARG_DST, op.output)])

    def _build_add(self, op):
        lib = self.lib
        if len({self.shapes[self._key(t)] for t in op.inputs}) != 1:
            raise Declined("an Add that broadcasts")
        (a, a_md), (b, b_md) = self._src(op.inputs[0]), self._src(op.inputs[1])
        prim = self._with_output(op.output, lambda y_md: self._primitive(
            lambda pd, attr: lib.binary_primitive_desc_create(
                pd, lib.engine, _BINARY_ADD, a_md, b_md, y_md, attr), "creating an Add",
            op.relu))
        self._add_step(prim, [(_ARG_SRC, a), (_ARG_SRC_1, b), (_ARG_DST, op.output)])

    def _build_clip(self, op):
        lib = self.lib
        key, x_md = self._src(op.inputs[0])
        bound = self._hold(np.ascontiguousarray(op.b, dtype=np.float32))
        bound_md = self._desc((1, bound.size, 1, 1), _ABCD)
        prim = self._with_output(op.output, lambda y_md: self._primitive(
            lambda pd, attr: lib.binary_primitive_desc_create(
                pd, lib.engine, _BINARY_SUB if op.relu else _BINARY_MAX, x_md, bound_md,
                y_md, attr), "creating a BatchNormalization", op.relu))
        self._add_step(prim, [(_ARG_SRC, key), (_ARG_SRC_1, ("memory", self._memory(
            bound_md, bound))), (_ARG_DST, op.output)])

    def _build_concat(self, op):
        lib = self.lib
        y_md = self._blocked(op.output)
        offsets = self._sliced.get(op.output)
        if offsets is not None:
            # inputs not written into their slices are copied there
            for t, offset in zip(op.inputs, offsets):
                key = self._key(t)
                if key not in self._written:
                    part = self._temporary(None)
                    self._slice(part, op.output, self.shapes[key], offset)
                    self._add_step(_ReorderPrimitive(lib, onednn._Reorder(
                        lib, self.md[key], self.md[part])), [(_ARG_SRC, key),
                                                             (_ARG_DST, part)])
            return
        # inputs off the block boundaries: oneDNN concatenates blocked images only by
        # its reference loops, so this one runs on NCHW copies (rare: 24 + 24 channels)
        srcs = [self._reorder_to(self._key(t), self._desc(self.shapes[self._key(t)], _ABCD))
                for t in op.inputs]
        plain = self._temporary(self._desc(self.shapes[op.output], _ABCD))
        mds = (_Handle * len(srcs))(*[self.md[k] for k in srcs])
        prim = self._primitive(
            lambda pd, attr: lib.concat_primitive_desc_create(
                pd, lib.engine, self.md[plain], len(srcs), 1, mds, attr),
            "creating a Concat")
        self._add_step(prim, [(_ARG_MULTIPLE_SRC + i, k) for i, k in enumerate(srcs)]
                       + [(_ARG_DST, plain)])
        self._add_step(_ReorderPrimitive(lib, onednn._Reorder(lib, self.md[plain], y_md)),
                       [(_ARG_SRC, plain), (_ARG_DST, op.output)])

    def _hold(self, array):
        self._held.append(array)
        return array

    def _memory(self, md, array):
        mem = self.lib.memory(md, array.ctypes.data)
        self._memories.append(mem)
        return mem

    def _share_buffers(self):
        """({buffer owner: slot}, slot sizes in bytes): values whose lives do not
        overlap share a slot, so a deep chain's working set stays a few images (and in
        cache) instead of one buffer per value."""
        sizes, first, last = {}, {}, {}
        for key, root in self.root.items():
            if root is not None:
                size = self.scratchpad_size if root == "scratchpad" \
                    else self.lib.memory_desc_get_size(self.md[key]) \
                    + self.offset.get(key, 0)
                sizes[root] = max(sizes.get(root, 0), size)
        uses = [[k for _, k in s[2]] if s[0] == "prim" else list(s[2]) + [s[3]]
                for s in self.steps]
        uses.append(self.output_keys)  # reordered out after the last step
        for when, keys in enumerate(uses):
            for key in keys:
                root = self.root.get(key) if not isinstance(key, tuple) \
                    or key[0] != "memory" else None
                if root is not None:
                    first.setdefault(root, when)
                    last[root] = when
        slot_of, slot_sizes, free_after = {}, [], []
        for root in sorted(first, key=first.get):
            if root == "scratchpad":
                continue
            free = [s for s, end in enumerate(free_after) if end < first[root]]
            if free:  # the freed slot nearest in size
                slot = min(free, key=lambda s: abs(slot_sizes[s] - sizes[root]))
                slot_sizes[slot] = max(slot_sizes[slot], sizes[root])
                free_after[slot] = last[root]
            else:
                slot = len(slot_sizes)
                slot_sizes.append(sizes[root])
                free_after.append(last[root])
            slot_of[root] = slot
        if "scratchpad" in sizes:
            slot_of["scratchpad"] = len(slot_sizes)
            slot_sizes.append(sizes["scratchpad"])
        return slot_of, slot_sizes

    # -- running -----------------------------------------------------------------------

    def run(self, inputs, ctx) -> list:
        """The chain's outputs (new NCHW float32 arrays) for `inputs` (C-contiguous
        float32 arrays of the program's input shapes); `ctx` is passed to host steps.

        Raises:
            ExecutionError: oneDNN failed.
        """
        state = thread_state(self._threads, lambda: _ThreadState(self))
        lib = self.lib
        for mem, x in zip(state.input_memories, inputs):
            lib.memory_set_data_handle(mem, x.ctypes.data)
        outs = [np.empty(s, np.float32) for s in self.output_shapes]
        for mem, y in zip(state.output_memories, outs):
            lib.memory_set_data_handle(mem, y.ctypes.data)
        for segment in state.segments:
            if segment[0] == "oneDNN":
                state.execute(segment[1], "the chain")  # (and waits for it)
            else:
                begin_kernel()
                _, op, xs, mem, shape = segment
                (y,) = op.host(xs, op.attrs, ctx)
                y = np.ascontiguousarray(y, dtype=np.float32)
                if any(np.may_share_memory(y, x) for x in xs):
                    # (an Add summing in place): its buffer may be the next step's
                    # destination
                    y = y.copy()
                if y.shape != shape:  # (the reorder reads `shape` from it)
                    raise ExecutionError(f"a chain's {op.kind} step gave shape "
                                         f"{list(y.shape)}, expected {list(shape)}")
                state.host_outputs.append(y)  # alive until its reorder ran
                lib.memory_set_data_handle(mem, y.ctypes.data)
        state.host_outputs.clear()
        return outs

    def __del__(self):
        lib = self.lib
        for mem in getattr(self, "_memories", ()):
            lib.memory_destroy(mem)
        for reorder in getattr(self, "output_reorders", ()):
            reorder.destroy(lib)
        self._prims = []
        for md in getattr(self, "_descs", ()):
            lib.memory_desc_destroy(md)


class _ReorderPrimitive:
    """A reorder as a chain step (no scratchpad)."""

    scratchpad_size = 0

    def __init__(self, lib, reorder):
        self.lib, self.reorder = lib, reorder
        self.primitive = reorder.primitive

    def __del__(self):
        self.reorder.destroy(self.lib)


class _ThreadState(StreamState):
    """One thread's buffers, memory objects, stream and argument lists for a
    program: `segments`, runs of primitives ("oneDNN", steps) between host steps
    ("host", op, input arrays, output memory, output shape)."""

    def __init__(self, program):
        super().__init__(program.lib)
        self.host_outputs = []
        self.buffers = [_aligned_floats(max(1, size // 4 + 1))
                        for size in program.slot_sizes]
        buffers = {root: self.buffers[slot] for root, slot in program.slot_of.items()}
        base = {root: b.ctypes.data for root, b in buffers.items()}
        memory = {}

        def memory_of(key):
            if isinstance(key, tuple) and key[0] == "memory":
                return key[1]
            mem = memory.get(key)
            if mem is None:
                root = program.root[key]
                mem = memory[key] = self.memory(
                    program.md[key],
                    base[root] + program.offset.get(key, 0) if root is not None else None)
            return mem

        self.input_memories = [memory_of(t) for t in program.inputs]
        self.segments = []
        primitives = []
        for step in program.steps:
            if step[0] == "host":
                _, op, x_keys, y_key = step
                # the host kernel reads NCHW arrays over its inputs' buffers
                xs = []
                for t, key in zip(op.inputs, x_keys):
                    shape = program.shapes[program._key(t)]
                    xs.append(buffers[key][:math.prod(shape)].reshape(shape))
                self.segments += [("oneDNN", primitives),
                                  ("host", op, xs, memory_of(y_key),
                                   program.shapes[op.output])]
                primitives = []
                continue
            _, prim, args = step
            primitives.append((prim.primitive,) + _arguments(
                [(arg, memory_of(key)) for arg, key in args]))
        self.output_memories = []
        for k, md, reorder in zip(program.output_keys, program.output_mds,
                                  program.output_reorders):
            self.output_memories.append(self.memory(md))
            primitives.append((reorder.primitive,) + _arguments(
                [(_ARG_SRC, memory_of(k)), (_ARG_DST, self.output_memories[-1])]))
        self.segments.append(("oneDNN", primitives))
