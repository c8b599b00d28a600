"""TF1's `og.TensorArray` as a functional value built from ordinary og ops.

A TensorArray holds one tensor, its "flow": the elements stacked along a new axis 0
([size, *element_shape]), and static metadata shared with every TensorArray derived
from it (dtype, element shape, dynamic_size), as TF1's graph TensorArray shares its
inferred element shape. write / scatter / unstack / split return a NEW TensorArray
(TF's rule: use the result of write); their flow is a copy of the old one with rows
replaced (ScatterND), so gradients reach the written values through ordinary ops.

* A dynamic_size array grows (a Concat of zero rows) when a write's index reaches
  its size; its flow's static first dimension is unknown so a while_loop carries it.
* While no element shape is known (no element_shape given, nothing written yet) the
  flow is a placeholder of zeros of unknown static rank; the first write reshapes it
  to [size, *value's shape] at run time, so a write inside a while_loop body works.
* Unwritten elements read as zeros, as tf.compat.v1 2.21 (TensorList-backed) does
  when the element shape is known; TF1's older TensorArrayV3 raised "Could not read
  from TensorArray index ... because it has not yet been written to" instead, which
  this array does not track (no written mask). Reading or stacking an array whose
  element shape is still unknown is refused when the graph is built.
* `split` makes a "ragged" array (flow = the value, plus the elements' lengths):
  read, concat, size, stack (equal lengths), gather, identity and close work on it;
  write and scatter are refused.
* TensorArrays are valid `og.while_loop` loop variables and `og.cond` results: the
  composite hook of control_flow.py flattens one to its flow tensor(s).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api, api_compat, api_extra, api_math
from . import graph as _g
from .control_flow import register_composite
from .graph import Tensor


class _Meta:
    """Static facts shared by a TensorArray and every array derived from it."""

    def __init__(self, dtype: DType, element_shape, dynamic_size: bool, infer_shape: bool):
        self.dtype = dtype
        self.element_shape = element_shape  # tuple with None dims, or None (unknown rank)
        self.dynamic_size = dynamic_size
        self.infer_shape = infer_shape
        self.written = False  # some write/scatter/unstack happened (flow has its shape)
        self.size: int | None = None  # the fixed size when known statically


def _shape_of(dims) -> tuple | None:
    return None if dims is None else tuple(dims)


def _merge(known, new, what: str):
    """TF's merge of element shapes: None dims take the other's; a conflict is refused."""
    if known is None:
        return new
    if new is None:
        return known
    if len(known) != len(new) or any(a is not None and b is not None and a != b
                                     for a, b in zip(known, new)):
        raise ShapeError(f"{what}: inconsistent element shapes: saw {list(new)} but "
                         f"expected {list(known)}")
    return tuple(a if a is not None else b for a, b in zip(known, new))


class TensorArray:
    """TF1's tf.TensorArray: a list of same-dtype tensors, usable in og.while_loop.

    Args:
        dtype: the elements' dtype.
        size: the number of elements (int or int scalar tensor); 0 by default.
        dynamic_size: let writes past the end grow the array.
        clear_after_read: accepted for TF1 compatibility (reads never clear).
        tensor_array_name, handle, flow: accepted (handle/flow must be None).
        infer_shape: merge the element shape of each write into element_shape.
        element_shape: the elements' shape when known (a list with None dims).
        colocate_with_first_write_call, name: accepted for TF1 compatibility.

    `dtype` and `element_shape` are properties, as TF's (ta.element_shape, no call).

    Raises:
        TypeError: dtype is not a dtype, size is not an integer, or handle/flow given.
        ShapeError: size is a tensor that is not an integer scalar, or negative, or
            element_shape is not a shape.
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None,
                 _flow=None, _lengths=None, _meta=None):
        del clear_after_read, tensor_array_name, colocate_with_first_write_call, name
        if _meta is not None:  # a derived array: same metadata, new flow
            self._meta, self._flow, self._lengths = _meta, _flow, _lengths
            return
        if handle is not None or flow is not None:
            raise TypeError("TensorArray: handle and flow are not supported (onegraph's "
                            "TensorArray is a value, not a resource)")
        dt = _g.as_dtype(dtype)
        shape = None if element_shape is None else _g._shape_tuple(
            element_shape, "TensorArray: element_shape")
        self._meta = _Meta(dt, shape, bool(dynamic_size), bool(infer_shape))
        self._lengths = None
        size = 0 if size is None else size
        if not self._meta.dynamic_size and isinstance(size, (int, np.integer)):
            self._meta.size = int(size)
        self._flow = _initial_flow(self._meta, size)

    # ------------------------------------------------------------------ metadata
    @property
    def dtype(self) -> DType:
        """The elements' dtype."""
        return self._meta.dtype

    @property
    def flow(self) -> Tensor:
        """The tensor that carries the elements (TF's flow)."""
        return self._flow

    @property
    def dynamic_size(self) -> bool:
        """Whether writes past the end grow the array."""
        return self._meta.dynamic_size

    @property
    def element_shape(self):
        """The elements' static shape (TensorShape; unknown rank if not known yet)."""
        from .tensor_shape import TensorShape
        return TensorShape(self._meta.element_shape)

    def _derive(self, flow: Tensor, lengths: Tensor | None = None) -> "TensorArray":
        return TensorArray(self._meta.dtype, _flow=flow, _lengths=lengths, _meta=self._meta)

    def _value(self, value, what: str) -> Tensor:
        """value as a tensor of the array's dtype (TypeError if it has another)."""
        v = _g.convert_to_tensor(value, self._meta.dtype) if not isinstance(value, Tensor) \
            else value
        if v.dtype != self._meta.dtype:
            raise TypeError(f"TensorArray.{what}: the array holds "
                            f"{self._meta.dtype.short_name}, got a "
                            f"{v.dtype.short_name} value")
        return v

    def _note_shape(self, shape, what: str) -> None:
        if self._meta.infer_shape or self._meta.element_shape is None:
            self._meta.element_shape = _merge(self._meta.element_shape, shape,
                                              f"TensorArray.{what}")
        self._meta.written = True

    def _dense(self, what: str) -> None:
        if self._lengths is not None:
            raise ValueError(f"TensorArray.{what}: not supported on an array made by "
                             "split (its elements may have different lengths); "
                             "unstack its concat() into a new TensorArray instead")

    def _known(self, what: str) -> None:
        if self._meta.element_shape is None and not self._meta.written:
            raise ValueError(f"TensorArray.{what}: nothing was written and the element "
                             "shape is unknown (TF: 'Trying to read an uninitialized "
                             "tensor but element_shape is not fully defined')")

    # ------------------------------------------------------------------ writes
    def write(self, index, value, name=None) -> "TensorArray":
        """A new TensorArray with element `index` set to value.

        Raises:
            TypeError: value's dtype is not the array's.
            ShapeError: value's shape conflicts with the element shape, or index is
                not an integer scalar.
            ValueError: the array was made by split.
        """
        del name
        self._dense("write")
        v = self._value(value, "write")
        i = _index(index, "TensorArray.write")
        self._note_shape(v.shape, "write")
        flow = self._rows_like(v)
        if self._meta.dynamic_size:
            flow = _grown(flow, i + np.int64(1), v)
        new = api_compat.tensor_scatter_nd_update(
            flow, api.reshape(i, [1, 1]), api.expand_dims(v, 0))
        return self._derive(_with_static(new, self._static_rows(), self._meta))

    def scatter(self, indices, value, name=None) -> "TensorArray":
        """A new TensorArray with elements indices[k] set to value[k].

        Raises:
            TypeError: value's dtype is not the array's.
            ShapeError: indices is not an integer vector, or value's rows conflict
                with the element shape.
            ValueError: the array was made by split.
        """
        del name
        self._dense("scatter")
        v = self._value(value, "scatter")
        idx = _g.convert_to_tensor(indices)
        if idx.dtype.numpy.kind not in "iu" or (idx.shape is not None and len(idx.shape) != 1):
            raise ShapeError("TensorArray.scatter: indices must be an integer vector")
        idx = api.cast(idx, DType.INT64)
        row = api.gather(v, np.int64(0))  # a row's shape, for the buffer's shape
        self._note_shape(None if v.shape is None else v.shape[1:], "scatter")
        flow = self._rows_like(row)
        if self._meta.dynamic_size:
            flow = _grown(flow, api.reduce_max(idx) + np.int64(1), row)
        new = api_compat.tensor_scatter_nd_update(flow, api.expand_dims(idx, 1), v)
        return self._derive(_with_static(new, self._static_rows(), self._meta))

    def unstack(self, value, name=None) -> "TensorArray":
        """A new TensorArray whose elements are value's rows (value[0], value[1], ...).

        Raises:
            TypeError: value's dtype is not the array's.
            ShapeError: value is a scalar, or a fixed-size array of known size gets
                another number of rows.
        """
        del name
        v = self._value(value, "unstack")
        if v.shape is not None and len(v.shape) == 0:
            raise ShapeError("TensorArray.unstack: value must have a leading dimension")
        n = self._static_rows()
        if not self._meta.dynamic_size and n is not None and v.shape is not None \
                and v.shape[0] is not None and v.shape[0] != n:
            raise ShapeError(f"TensorArray.unstack: the array has size {n} but value has "
                             f"{v.shape[0]} rows")
        self._note_shape(None if v.shape is None else v.shape[1:], "unstack")
        return self._derive(_with_static(api.identity(v), n, self._meta))

    def split(self, value, lengths, name=None) -> "TensorArray":
        """A new TensorArray whose element k is the next lengths[k] rows of value.

        Raises:
            TypeError: value's dtype is not the array's.
            ShapeError: value is a scalar, or lengths is not an integer vector.
        """
        del name
        v = self._value(value, "split")
        if v.shape is not None and len(v.shape) == 0:
            raise ShapeError("TensorArray.split: value must have a leading dimension")
        ln = _g.convert_to_tensor(lengths)
        if ln.dtype.numpy.kind not in "iu" or (ln.shape is not None and len(ln.shape) != 1):
            raise ShapeError("TensorArray.split: lengths must be an integer vector")
        rest = None if v.shape is None else (None,) + tuple(v.shape[1:])
        self._note_shape(rest, "split")
        return self._derive(api.identity(v), api.cast(ln, DType.INT64))

    # ------------------------------------------------------------------ reads
    def read(self, index, name=None) -> Tensor:
        """Element `index` (zeros if it was never written, as tf.compat.v1 2.21).

        Raises:
            ShapeError: index is not an integer scalar.
            ValueError: nothing was written and the element shape is unknown.
        """
        del name
        self._known("read")
        i = _index(index, "TensorArray.read")
        if self._lengths is not None:
            start = api.gather(api_extra.cumsum(self._lengths, exclusive=True), i)
            rows = api_extra.range(start, start + api.gather(self._lengths, i))
            return api.gather(self._flow, rows)
        out = api.gather(self._full(), i)
        if self._meta.element_shape is not None:
            out.set_shape(self._meta.element_shape)
        return out

    def stack(self, name=None) -> Tensor:
        """All elements stacked along a new axis 0: [size, *element_shape].

        Raises:
            ValueError: nothing was written and the element shape is unknown.
        """
        del name
        self._known("stack")
        if self._lengths is not None:
            n, first = api.shape(self._lengths)[:1], api.gather(self._lengths, np.int64(0))
            return api.reshape(self._flow, api.concat(
                [n, api.reshape(first, [1]), api.shape(self._flow)[1:]], 0))
        return _with_static(api.identity(self._full()), self._static_rows(), self._meta)

    def gather(self, indices, name=None) -> Tensor:
        """The elements at indices, stacked: [len(indices), *element_shape].

        Raises:
            ShapeError: indices is not an integer vector.
            ValueError: nothing was written and the element shape is unknown.
        """
        del name
        idx = _g.convert_to_tensor(indices)
        if idx.dtype.numpy.kind not in "iu" or (idx.shape is not None and len(idx.shape) != 1):
            raise ShapeError("TensorArray.gather: indices must be an integer vector")
        return api.gather(self.stack(), idx)

    def concat(self, name=None) -> Tensor:
        """The elements concatenated along their axis 0.

        Raises:
            ShapeError: the elements are scalars.
            ValueError: nothing was written and the element shape is unknown.
        """
        del name
        self._known("concat")
        if self._lengths is not None:
            return api.identity(self._flow)
        es = self._meta.element_shape
        if es is not None and len(es) == 0:
            raise ShapeError("TensorArray.concat: the elements are scalars; concat needs "
                             "elements of rank >= 1 (use stack)")
        flow = self._full()
        return api.reshape(flow, api.concat([[-1], api.shape(flow)[2:]], 0))

    def size(self, name=None) -> Tensor:
        """The number of elements, an int32 scalar (TF's)."""
        del name
        rows = self._lengths if self._lengths is not None else self._flow
        return api.cast(api.gather(api.shape(rows), np.int64(0)), DType.INT32)

    def identity(self) -> "TensorArray":
        """A new TensorArray of the same elements (TF's, for control dependencies)."""
        return self._derive(api.identity(self._flow),
                            None if self._lengths is None else api.identity(self._lengths))

    def close(self, name=None):
        """A NoOp (TF1 frees the array's resource; this array is a value)."""
        return api.no_op(name)

    def mark_used(self) -> None:
        """Accepted for TF compatibility."""

    # ------------------------------------------------------------------ helpers
    def _static_rows(self) -> int | None:
        return None if self._meta.dynamic_size else self._meta.size

    def _rows_like(self, row: Tensor) -> Tensor:
        """The flow as [size, *row's shape] (see `_reshaped`)."""
        return _reshaped(self._flow, row.shape, api_extra.size(row, out_type=DType.INT64),
                         api.shape(row))

    def _full(self) -> Tensor:
        """The flow as [size, *element_shape] when that shape is fully known (a loop
        that wrote nothing leaves the placeholder flow), else the flow."""
        es = self._meta.element_shape
        if es is None or any(d is None for d in es):
            return self._flow
        return _reshaped(self._flow, es, np.int64(np.prod(es, dtype=np.int64)),
                         api.constant(np.array(es, np.int64)))


def _reshaped(flow: Tensor, row_static, width, row_shape) -> Tensor:
    """flow as [size, *row_shape]: a flow whose static rank is not 1 + the row's (the
    placeholder of zeros [size] made before any element shape was known, carried by
    a loop) is reshaped at run time, broadcasting its zeros; other flows already
    have that shape (writes check it)."""
    if flow.shape is not None and row_static is not None \
            and len(flow.shape) == len(row_static) + 1:
        return flow
    size = api.gather(api.shape(flow), np.int64(0))
    # elements per row: 1 for the placeholder, the row's size once written (a max
    # keeps an empty array's reshape well defined)
    per = api_math.floordiv(api_extra.size(flow, out_type=DType.INT64),
                            api.maximum(size, np.int64(1)))
    flat = api.reshape(flow, api.stack([size, api.maximum(per, np.int64(1))]))
    flat = api_math.broadcast_to(flat, api.stack([size, width]))
    return api.reshape(flat, api.concat([api.reshape(size, [1]), row_shape], 0))


def _index(index, what: str) -> Tensor:
    i = _g.convert_to_tensor(index)
    if i.dtype.numpy.kind not in "iu" or (i.shape is not None and len(i.shape) != 0):
        raise ShapeError(f"{what}: index must be an integer scalar, got "
                         f"{i.dtype.short_name} of shape {i.shape}")
    return api.cast(i, DType.INT64) if i.dtype is not DType.INT64 else i


def _initial_flow(meta: _Meta, size) -> Tensor:
    """Zeros [size, *element_shape]; of unknown static rank while no element shape is
    known (the first write reshapes it), of unknown first dim if dynamic_size."""
    if isinstance(size, Tensor) or hasattr(size, "_as_graph_tensor"):
        n = _g.convert_to_tensor(size)
        if n.dtype.numpy.kind not in "iu" or (n.shape is not None and len(n.shape) != 0):
            raise ShapeError("TensorArray: size must be an integer scalar, got "
                             f"{n.dtype.short_name} of shape {n.shape}")
        n = api.reshape(api.cast(n, DType.INT64), [1])
    else:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"TensorArray: size must be an int or an integer tensor, got "
                            f"{type(size).__name__}")
        if size < 0:
            raise ShapeError(f"TensorArray: size must be >= 0, got {size}")
        n = api.constant(np.array([size], np.int64))
    es = meta.element_shape
    if es is None or any(d is None for d in es):
        flow = api.identity(api.zeros(n, meta.dtype))
        flow._replace_shape(None)  # run-time shape [size] until the first write
        return flow
    flow = api.identity(api.zeros(api.concat([n, api.constant(np.array(es, np.int64))], 0),
                                  meta.dtype))
    return _with_static(flow, meta.size, meta, replace=True)  # meta.size: None if dynamic


def _with_static(t: Tensor, rows, meta: _Meta, replace: bool = False) -> Tensor:
    """t with the static shape [rows, *element_shape] (rows None: unknown)."""
    if meta.element_shape is None:
        return t
    shape = (rows,) + tuple(meta.element_shape)
    if replace:
        t._replace_shape(shape)
    elif t.shape is None or len(t.shape) == len(shape):
        t.set_shape(shape)
    return t


def _grown(flow: Tensor, needed: Tensor, row: Tensor) -> Tensor:
    """flow with zero rows appended up to `needed` rows (dynamic_size)."""
    size = api.gather(api.shape(flow), np.int64(0))
    extra = api.maximum(needed - size, np.int64(0))
    pad = api.zeros(api.concat([api.reshape(extra, [1]), api.shape(row)], 0), flow.dtype)
    out = api.concat([flow, pad], 0)
    if out.shape is not None:
        out._replace_shape((None,) + tuple(out.shape[1:]))
    return out


def _to_tensors(ta: TensorArray) -> list:
    return [ta._flow] if ta._lengths is None else [ta._flow, ta._lengths]


def _from_tensors(ta: TensorArray, tensors: list) -> TensorArray:
    return ta._derive(tensors[0], tensors[1] if len(tensors) > 1 else None)


register_composite(TensorArray, _to_tensors, _from_tensors)
