"""Variables: mutable state that persists across Session steps.

A Variable is a VARIABLE tensor of the IR graph (its initial value stored as the
tensor's data, so a saved model carries it) plus graph nodes that use it: one
ReadVariable shared by ordinary uses, an Assign initializer, and whatever updates
the user or an optimizer adds (Assign, AssignAdd, AssignSub, ScatterAdd, Apply*).
"""

from __future__ import annotations

import enum
from typing import Callable

import numpy as np

from ..errors import OneGraphError, ShapeError, UnimplementedError
from . import graph as _g
from .graph import Graph, Operation, Tensor


def _sparse_delta_method(method: str, reduction: str, words: str):
    """A Variable method applying an og.IndexedSlices to rows (TF1's Variable.<method>)."""
    def update(self, sparse_delta, use_locking=False, name: str | None = None) -> Tensor:
        del use_locking
        return self._scatter(method, reduction, sparse_delta, None, name, nd=False)

    update.__name__ = method
    update.__doc__ = (
        f"An op {words} row `sparse_delta.indices[i]` of the variable "
        f"(`sparse_delta` an og.IndexedSlices; repeated rows apply in order); outputs the "
        f"new value (TF1's Variable.{method}; `og.{method}` takes indices and updates)."
        "\n\n        Raises:\n            TypeError: sparse_delta is not an "
        "og.IndexedSlices, or name is not a str.\n            ShapeError: the indices "
        "are not integers, or the values' dtype or static\n                shape does "
        "not fit (indices' shape + the variable's row shape).\n        ")
    return update


def _index_tuples_method(method: str, reduction: str, words: str):
    """A Variable method updating what index tuples pick (TF1's Variable.<method>)."""
    def update(self, indices, updates, name: str | None = None) -> Tensor:
        return self._scatter(method, reduction, indices, updates, name, nd=True)

    update.__name__ = method
    update.__doc__ = (
        f"An op {words} `var[tuple(indices[j])]` of the variable (the last axis of "
        f"indices holds index tuples into the first axes; repeats apply in order); "
        f"outputs the new value (TF1's Variable.{method})."
        "\n\n        Raises:\n            TypeError: name is not a str.\n"
        "            ShapeError: the indices are not integers, the tuples are longer than "
        "the\n                variable's rank, or the updates' dtype or static shape "
        "does not fit\n                (indices' shape without its last axis + the "
        "shape of what a tuple picks).\n        ")
    return update


MODEL_VARIABLES = "model_variables"  # TF1's GraphKeys.MODEL_VARIABLES
MOVING_AVERAGE_VARIABLES = "moving_average_variables"  # GraphKeys.MOVING_AVERAGE_VARIABLES


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized (TF's tf.VariableSynchronization;
    og runs on one device, so the value only decides `trainable`'s default)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed variable's updates are aggregated (TF1's
    tf.VariableAggregation; accepted and kept, no effect on one device)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # TF1's deprecated alias of ONLY_FIRST_REPLICA


def _sync_aggregation_trainable(synchronization, aggregation, trainable, name) -> tuple:
    """(synchronization, aggregation, trainable) as TF1 settles them: None gives AUTO and
    NONE, values are looked up in the enums, and trainable None becomes "not ON_READ".

    Raises:
        ValueError: synchronization or aggregation is no member's value (TF1's message).
    """
    if aggregation is None:
        aggregation = VariableAggregation.NONE
    elif not isinstance(aggregation, VariableAggregation):
        try:
            aggregation = VariableAggregation(getattr(aggregation, "value", aggregation))
        except (ValueError, TypeError):
            raise ValueError(f"Invalid variable aggregation mode: {aggregation} for "
                             f"variable: {name}") from None
    if synchronization is None:
        synchronization = VariableSynchronization.AUTO
    elif not isinstance(synchronization, VariableSynchronization):
        try:
            synchronization = VariableSynchronization(
                getattr(synchronization, "value", synchronization))
        except (ValueError, TypeError):
            raise ValueError(f"Invalid variable synchronization mode: {synchronization} "
                             f"for variable: {name}") from None
    if trainable is None:
        trainable = synchronization is not VariableSynchronization.ON_READ
    return synchronization, aggregation, trainable


def _check_constraint(constraint) -> None:
    """Raises ValueError (TF1's class) when constraint is neither None nor callable."""
    if constraint is not None and not callable(constraint):
        raise ValueError(f"Variable: the `constraint` argument must be None or a "
                         f"callable, got a {type(constraint).__name__}: "
                         f"{_g._brief(constraint)}")


def _static_shape(shape, value_shape, validate_shape: bool, base: str):
    """The variable's static shape: `shape` when given (it must fit the initial value's
    shape; an og.TensorShape(None) leaves even the rank unknown), else the value's, as
    TF's variables (validate_shape=False then only lets the kernel accept a new shape).

    Raises:
        TypeError: shape is not a list of ints and Nones.
        ValueError: shape does not fit the initial value's shape.
    """
    del validate_shape  # TF 2's tf.compat.v1 keeps the static shape either way
    dims = _g._shape_tuple(shape, f"Variable {base!r}: shape")
    if dims is None:
        return tuple(value_shape) if shape is None else None
    if len(dims) != len(value_shape) or any(
            d is not None and d != v for d, v in zip(dims, value_shape)):
        raise ValueError(f"Variable {base!r}: the initial value's shape "
                         f"{list(value_shape)} is not compatible with the explicitly "
                         f"supplied `shape` argument {list(dims)}")
    return dims


class Variable:
    """A mutable tensor living in the Session across steps (TF1's tf.Variable).

    Args:
        initial_value: array-like (stored in the graph and the saved model), or a
            callable returning one; a Tensor is also accepted (its value is then
            computed by the initializer op only).
        trainable: add to the TRAINABLE_VARIABLES collection (optimizers' default);
            None: True unless synchronization is ON_READ (TF1's).
        collections: collections to add to (default: GLOBAL_VARIABLES, plus
            TRAINABLE_VARIABLES when trainable). A str here is taken as `name`
            (onegraph's earlier third positional argument).
        validate_shape: False lets assign() set values of other shapes (the static
            shape is then `shape`, or unknown).
        caching_device: accepted (TF1's), no effect: og has one device.
        name: name of the variable tensor (under the current name scope).
        variable_def, import_scope: TF1's VariableDef protos are not supported.
        dtype: convert the initial value to this dtype.
        expected_shape: ignored, as TF1 does.
        constraint: a callable projecting the value after an optimizer's update (kept
            as `.constraint`), or None.
        use_resource: accepted (og's variables behave as resource variables).
        synchronization, aggregation: og.VariableSynchronization and
            og.VariableAggregation members (or their values), kept.
        shape: the static shape (None dims allowed with validate_shape=False).
        graph: the og.Graph to build in (default: the initial value's, or the default
            graph).

    Example::

        w = og.Variable(np.zeros((3, 2), np.float32), name="w")
        y = x @ w            # uses the variable's current value
        step = w.assign_add(np.ones((3, 2), np.float32))

    Raises:
        OneGraphError: the initial value is a tensor of unknown shape or dtype, or a
            value that is not array-like or does not fit `dtype` (None, a str, ...).
        errors.UnimplementedError: variable_def or import_scope is given.
        TypeError: name is not a str, graph is not an og.Graph, validate_shape not a
            bool, or shape not a list of ints.
        ValueError: no initial_value; collections is not a list, tuple or set;
            constraint is not callable; synchronization or aggregation is invalid; or
            shape does not fit the initial value (TF1's classes).
    """

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape: bool = True, caching_device=None, name: str | None = None,
                 variable_def=None, dtype=None, expected_shape=None, import_scope=None,
                 constraint=None, use_resource=None, synchronization=None,
                 aggregation=None, shape=None, graph: Graph | None = None):
        del caching_device, expected_shape  # one device; TF1 ignores expected_shape
        if isinstance(collections, str) and name is None:
            name, collections = collections, None  # onegraph's old (value, trainable, name)
        for what, given in (("variable_def", variable_def), ("import_scope", import_scope)):
            if given is not None:
                raise UnimplementedError(f"Variable: {what} (building a Variable from a "
                                         "VariableDef proto) is not supported")
        _g.check_name(name, "Variable")
        _g.check_graph(graph, "Variable")
        if initial_value is None:
            raise ValueError("Variable: initial_value must be specified.")
        if not isinstance(validate_shape, (bool, np.bool_)):
            raise TypeError(f"Variable: validate_shape must be True or False, got "
                            f"{_g._brief(validate_shape)}")
        if collections is not None and not isinstance(collections, (list, tuple, set)):
            raise ValueError(f"Variable: collections must be a list, tuple, or set, got "
                             f"{type(collections).__name__} {_g._brief(collections)}")
        _check_constraint(constraint)
        self.synchronization, self.aggregation, trainable = _sync_aggregation_trainable(
            synchronization, aggregation, trainable, name)
        self.constraint = constraint
        self.validate_shape = bool(validate_shape)
        self.use_resource = use_resource
        if callable(initial_value) and not isinstance(initial_value, Tensor):
            initial_value = initial_value()
        if graph is None:
            graph = (initial_value.graph if isinstance(initial_value, Tensor)
                     else _g.get_default_graph())
        self.graph = graph
        self.trainable = bool(trainable)
        base = graph.unique_name(name or "Variable")
        assign_attrs = None if validate_shape else {"validate_shape": 0}
        with graph.control_dependencies(None):
            saved_cf, graph._cf_stack = graph._cf_stack, []
            saved_scope = graph._scope
            try:
                if isinstance(initial_value, Tensor):
                    init = initial_value
                    if init.shape is None or any(d is None for d in init.shape) or \
                            init.dtype is _g.DType.UNDEFINED:
                        raise OneGraphError(f"variable {base!r}: initial value tensor needs a "
                                            "fully known shape and dtype")
                    if dtype is not None and _g.as_dtype(dtype) != init.dtype:
                        init = graph.op("Cast", [init], {"to": _onnx_type(dtype)})
                    data, value_shape, vdtype = None, init.shape, init.dtype
                else:
                    try:
                        data = _g._as_array(initial_value, dtype)
                    except OneGraphError as e:
                        raise _g._named(e, f"variable {base!r}: initial_value") from None
                    data = np.array(data, order="C")
                    value_shape, vdtype = data.shape, _g.DType.from_numpy(data.dtype)
                    init = None
                static = _static_shape(shape, value_shape, validate_shape, base)
                self.handle = graph.variable_tensor(base, vdtype, static, data)
                saved_scope, graph._scope = graph._scope, []  # names below are absolute
                if init is None:
                    init = graph.constant(data, name=f"{base}/initial_value")
                self.initial_value = init
                self.initializer = graph.op("Assign", [self.handle, init], assign_attrs,
                                            name=f"{base}/Assign").op
                self._read = graph.op("ReadVariable", [self.handle], name=f"{base}/read")
            finally:
                graph._cf_stack = saved_cf
                graph._scope = saved_scope
        self._reads = [self._read]
        graph._variables_by_handle[self.handle.tensor_index] = self
        collections = [_g.GLOBAL_VARIABLES] if collections is None else list(collections)
        if trainable and _g.TRAINABLE_VARIABLES not in collections:
            collections.append(_g.TRAINABLE_VARIABLES)  # TF1 adds it to given ones too
        for c in collections:
            graph.add_to_collection(c, self)
        graph.get_collection_ref("_initializer_names").append(self.initializer.name)

    @classmethod
    def _of_loaded(cls, graph: Graph, handle: Tensor, initializer: Operation, read: Tensor,
                   trainable: bool) -> "Variable":
        """The Variable of a loaded graph's variable tensor, Assign op and read tensor
        (og.saved_model's loader; no op is added), in GLOBAL_VARIABLES (and
        TRAINABLE_VARIABLES) as a built one is. Never raises."""
        v = cls.__new__(cls)
        v.graph, v.trainable, v.handle = graph, bool(trainable), handle
        v.initializer, v._read, v._reads = initializer, read, [read]
        v.constraint, v.validate_shape, v.use_resource = None, True, None
        v.synchronization = VariableSynchronization.AUTO
        v.aggregation = VariableAggregation.NONE
        v.initial_value = Tensor(graph, graph.ir_graph.nodes[initializer.node_index].inputs[1])
        graph._variables_by_handle[handle.tensor_index] = v
        graph.add_to_collection(_g.GLOBAL_VARIABLES, v)
        if v.trainable:
            graph.add_to_collection(_g.TRAINABLE_VARIABLES, v)
        graph.get_collection_ref("_initializer_names").append(initializer.name)
        return v

    # -- identity ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.handle.name

    @property
    def dtype(self):
        return self.handle.dtype

    @property
    def shape(self):
        return self.handle.shape

    def get_shape(self):
        """The static shape as a TensorShape (TF1's Variable.get_shape). Never raises."""
        return self.handle.get_shape()

    @property
    def op(self) -> Operation:
        """The initializer (so `og.group(var)` or control deps on a variable work)."""
        return self.initializer

    @property
    def tensor_index(self) -> int:
        """Fetching a Variable fetches its value."""
        return self._read.tensor_index

    @property
    def _base(self) -> str:
        """The variable's own name without its scope: ops named after it are built in
        the current name scope, which would otherwise repeat the scope ("s/s/w/...")."""
        return self.name.rsplit("/", 1)[-1]

    def value(self) -> Tensor:
        """The variable's value as read by ordinary uses (one shared ReadVariable)."""
        return self._read

    def read_value(self) -> Tensor:
        """A fresh read, ordered after the current control dependencies."""
        g = self.graph
        if g._cf_stack and self._read.tensor_index not in g._cf_stack[-1].inside:
            # inside a cond branch or while_loop body: the read's gradient flows to the
            # shared read outside, which the cond or loop carries in (a Switch, an
            # Enter), so it reaches the variable whichever branch runs and summed over
            # the iterations; the read's own gradient would be dead in the branch not
            # taken, or stay inside the loop
            return g.op("ReadVariable", [self.handle, self._read], name=f"{self._base}/read")
        t = g.op("ReadVariable", [self.handle], name=f"{self._base}/read")
        self._reads.append(t)
        return t

    def is_initialized(self, name: str | None = None) -> Tensor:
        """A bool scalar tensor: whether the variable holds a value in the session that
        runs it (TF1's Variable.is_initialized). A variable made from an array holds
        its initial value from the session's start; one made from a tensor only after
        its initializer ran.

        Raises:
            TypeError: name is not a str.
        """
        _g.check_name(name, "is_initialized")
        with self.graph.control_dependencies(None):
            return self.graph.op("IsVariableInitialized", [self.handle],
                                 name=name or f"{self._base}/IsVariableInitialized")

    def _as_graph_tensor(self, graph):
        if graph is not None and graph is not self.graph:
            raise OneGraphError(f"variable {self.name!r} belongs to another graph")
        g = self.graph
        if g._control:
            # honour enclosing control_dependencies (inside a cond or loop too: the
            # shared read was made outside it, before them)
            return self.read_value()
        return self._read

    def __repr__(self) -> str:
        return f"<og.Variable {self.name!r} shape={self.shape} dtype={self.dtype.short_name}>"

    # -- updates ----------------------------------------------------------------------

    def _update_value(self, op: str, value) -> Tensor:
        """`value` as a tensor of the variable's dtype, checked against its static dtype
        and shape: Assign needs the variable's shape, AssignAdd/AssignSub a shape that
        broadcasts to it without changing it (the kernels' rules, found at build time).

        Raises:
            ShapeError: value is a tensor of another dtype, or its static shape does
                not fit the variable's.
            OneGraphError: a plain value does not convert to the variable's dtype.
        """
        try:
            t = self.graph.convert(value, self.dtype)
        except OneGraphError as e:
            raise _g._named(e, f"{op} to variable {self.name!r}") from None
        if t.dtype is not _g.DType.UNDEFINED and t.dtype != self.dtype:
            raise ShapeError(f"{op} to variable {self.name!r}: value is "
                             f"{t.dtype.short_name} but the variable is "
                             f"{self.dtype.short_name}; cast it with og.cast")
        vs, ts = self.shape, t.shape
        if vs is not None and ts is not None:
            if op == "Assign":
                ok = len(vs) == len(ts) and all(
                    a is None or b is None or a == b for a, b in zip(vs, ts))
            else:
                ok = len(ts) <= len(vs) and all(
                    b is None or b == 1 or a is None or a == b
                    for a, b in zip(vs[len(vs) - len(ts):], ts))
            if not ok:
                raise ShapeError(f"{op} to variable {self.name!r}: value of shape "
                                 f"{list(ts)} does not fit the variable's shape "
                                 f"{list(vs)}")
        return t

    def _update(self, op: str, value, name: str | None) -> Tensor:
        """The `op` (Assign, AssignAdd or AssignSub) node updating the variable with
        `value`, named `name` or "<variable>/<op>"; its output is the new value.

        Raises:
            ShapeError / OneGraphError: as `_update_value`.
            TypeError: name is not a str.
        """
        attrs = {"validate_shape": 0} if op == "Assign" and not self.validate_shape \
            else None
        return self.graph.op(op, [self.handle, self._update_value(op, value)], attrs,
                             name=name or f"{self._base}/{op}")

    def assign(self, value, name: str | None = None) -> Tensor:
        """An op setting the variable to `value`; its output is the new value.

        Raises:
            ShapeError: value is a tensor of another dtype, or of a static shape other
                than the variable's.
            OneGraphError: a plain value does not convert to the variable's dtype.
            TypeError: name is not a str.
        """
        return self._update("Assign", value, name)

    def assign_add(self, delta, name: str | None = None) -> Tensor:
        """An op adding `delta` to the variable (atomically); outputs the new value.

        Raises:
            ShapeError: delta is a tensor of another dtype, or of a static shape that
                does not broadcast to the variable's.
            OneGraphError: a plain delta does not convert to the variable's dtype.
            TypeError: name is not a str.
        """
        return self._update("AssignAdd", delta, name)

    def assign_sub(self, delta, name: str | None = None) -> Tensor:
        """An op subtracting `delta` from the variable; outputs the new value.

        Raises:
            ShapeError: delta is a tensor of another dtype, or of a static shape that
                does not broadcast to the variable's.
            OneGraphError: a plain delta does not convert to the variable's dtype.
            TypeError: name is not a str.
        """
        return self._update("AssignSub", delta, name)

    def scatter_add(self, indices, updates=None, name: str | None = None) -> Tensor:
        """An op adding `updates[i]` to row `indices[i]` (sparse; repeats accumulate; a
        negative index counts from the end, as og.gather's do); outputs the new value.
        `indices` may also be an og.IndexedSlices (TF1's `sparse_delta`), with no
        `updates`.

        Raises:
            TypeError: name is not a str.
            ShapeError: indices is not an integer tensor, updates is a tensor of
                another dtype, or its static shape is not indices' shape + the
                variable's row shape.
            OneGraphError: plain updates do not convert to the variable's dtype.
        """
        i, u = self._scatter_operands("scatter_add", indices, updates, name, nd=False)
        return self.graph.op("ScatterAdd", [self.handle, i, u],
                             name=name or f"{self._base}/ScatterAdd")

    scatter_update = _sparse_delta_method("scatter_update", "none",
                                          "setting to `sparse_delta.values[i]`")
    scatter_sub = _sparse_delta_method("scatter_sub", "sub",
                                       "subtracting `sparse_delta.values[i]` from")
    scatter_mul = _sparse_delta_method("scatter_mul", "mul",
                                       "multiplying by `sparse_delta.values[i]`")
    scatter_div = _sparse_delta_method("scatter_div", "div",
                                       "dividing by `sparse_delta.values[i]`")
    scatter_min = _sparse_delta_method("scatter_min", "min",
                                       "taking the minimum with `sparse_delta.values[i]` of")
    scatter_max = _sparse_delta_method("scatter_max", "max",
                                       "taking the maximum with `sparse_delta.values[i]` of")
    scatter_nd_update = _index_tuples_method("scatter_nd_update", "none",
                                             "setting to `updates[j]`")
    scatter_nd_add = _index_tuples_method("scatter_nd_add", "add", "adding `updates[j]` to")
    scatter_nd_sub = _index_tuples_method("scatter_nd_sub", "sub",
                                          "subtracting `updates[j]` from")

    def count_up_to(self, limit: int, name: str | None = None) -> Tensor:
        """An op adding 1 to this integer scalar variable while it is below `limit`;
        outputs its value before the increment, and raises og.OutOfRangeError when run
        once the variable has reached the limit (TF1's Variable.count_up_to).

        Raises:
            TypeError: limit is not an int, or name is not a str.
            ShapeError: the variable is not an integer scalar (where known).
        """
        _g.check_name(name, "count_up_to")
        if isinstance(limit, (bool, np.bool_)) or not isinstance(limit, (int, np.integer)):
            raise TypeError(f"count_up_to: limit must be an int, got {limit!r:.60}")
        if self.dtype not in (_g.DType.INT32, _g.DType.INT64) or (
                self.shape is not None and len(self.shape) != 0):
            raise ShapeError(f"count_up_to: variable {self.name!r} must be an int32 or "
                             f"int64 scalar, got {self.dtype.short_name} "
                             f"{list(self.shape) if self.shape is not None else '?'}")
        return self.graph.op("CountUpTo", [self.handle], {"limit": int(limit)},
                             name=name or f"{self._base}/CountUpTo")

    def _scatter(self, method: str, reduction: str, indices, updates, name, nd: bool):
        """The ScatterUpdate (rows) or ScatterNdUpdate (index tuples) op of a method."""
        i, u = self._scatter_operands(method, indices, updates, name, nd)
        op = "ScatterNdUpdate" if nd else "ScatterUpdate"
        return self.graph.op(op, [self.handle, i, u], {"reduction": reduction},
                             name=name or f"{self._base}/{op}")

    def _scatter_operands(self, method: str, indices, updates, name, nd: bool):
        """(int64 indices, updates) of a scatter method, checked against the variable's
        static shape: updates are indices' shape (without its last axis for `nd`) + the
        shape of what one index picks, or (rows only, as in TF1) a scalar."""
        _g.check_name(name, method)
        if updates is None:
            from .gradients import IndexedSlices  # (gradients imports this module)

            if nd or not isinstance(indices, IndexedSlices):
                raise TypeError(f"{method}: give indices and updates"
                                + ("" if nd else ", or one og.IndexedSlices"))
            indices, updates = indices.indices, indices.values
        g = self.graph
        where = f"{method} to variable {self.name!r}"
        i = _g.integer_tensor(indices, f"{where}: indices", g)
        try:
            u = g.convert(updates, self.dtype)
        except OneGraphError as e:
            raise _g._named(e, where) from None
        if u.dtype is not _g.DType.UNDEFINED and u.dtype != self.dtype:
            raise ShapeError(f"{where}: updates are {u.dtype.short_name} but the variable "
                             f"is {self.dtype.short_name}; cast them with og.cast")
        vs, is_, us = self.shape, i.shape, u.shape
        if nd and is_ is not None and not is_:
            raise ShapeError(f"{where}: indices must have at least one axis (the last "
                             f"holds the index tuples)")
        if vs is not None and is_ is not None and us is not None and (vs or nd) and (
                us or nd):
            if nd:
                depth = is_[-1]
                want = (None if depth is None or depth > len(vs)
                        else tuple(is_[:-1]) + tuple(vs[depth:]))
                if depth is not None and depth > len(vs):
                    raise ShapeError(f"{where}: index tuples of length {depth} are longer "
                                     f"than the variable's rank {len(vs)}")
            else:
                want = tuple(is_) + tuple(vs[1:])
            if want is not None and (len(us) != len(want) or any(
                    a is not None and b is not None and a != b for a, b in zip(us, want))):
                raise ShapeError(f"{where}: updates of shape {list(us)} must have the shape "
                                 f"{[d if d is not None else -1 for d in want]} the indices "
                                 f"pick" + ("" if nd else ", or be a scalar"))
        if i.dtype is not _g.DType.INT64:
            from .api import cast  # (api imports this module)

            i = cast(i, _g.DType.INT64)
        return i, u

    def eval(self, session=None) -> np.ndarray:
        """The variable's current value in `session`, by default the default session
        (a `with sess:` or `with sess.as_default():` block), as TF1's Variable.eval.

        Raises:
            ValueError: no session is given and none is the default.
            ExecutionError: the variable is not initialised in that session.
        """
        return _g._session_for(session, self, "Variable.eval").run(self._read)

    def load(self, value, session=None) -> None:
        """Set the variable to `value` in `session` (default: the default session)
        without adding ops to the graph, as TF1's Variable.load: the initializer runs
        with `value` fed for the initial value.

        Raises:
            TypeError: value is a Session (this is load(value, session); to read the
                value, use eval(session)).
            ValueError: no session is given and none is the default.
            ShapeError: value's shape or dtype does not fit the variable.
        """
        from .session import Session

        if isinstance(value, Session):
            raise TypeError(f"Variable.load of {self.name!r}: the first argument is the "
                            "value to set (load(value, session)); read the value with "
                            "eval(session)")
        _g._session_for(session, self, "Variable.load").run(
            self.initializer, {self.initial_value: value})


def _operator(name: str) -> Callable:
    def method(self, *args):
        return getattr(self._as_graph_tensor(None), name)(*args)
    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__pow__",
              "__rpow__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__",
              "__getitem__"):
    setattr(Variable, _name, _operator(_name))


def _onnx_type(dtype) -> int:
    from .api import onnx_type

    return onnx_type(dtype)


def _collected(key: str, scope, graph, what: str) -> list:
    """The Variables in collection `key` of `graph` (the default graph if None) whose
    names match regular expression `scope` from their start (all with scope None), as
    TF1's tf.global_variables(scope) and its kin. A Graph given as `scope` is taken as
    the graph (onegraph's earlier signature was f(graph)).

    Raises:
        TypeError: graph is not an og.Graph, or scope not a str.
        re.error: scope is not a regular expression.
    """
    if isinstance(scope, Graph) and graph is None:
        scope, graph = None, scope
    _g.check_graph(graph, what)
    if scope is not None and not isinstance(scope, str):
        raise TypeError(f"{what}: scope must be a str (a regular expression matched "
                        f"against the start of variable names) or None, got "
                        f"{type(scope).__name__}")
    return (graph or _g.get_default_graph()).get_collection(key, scope)


def global_variables(scope: str | None = None, graph: Graph | None = None) -> list:
    """Every Variable of the graph (default graph if none given); with `scope`, those
    whose names match it from their start (tf.global_variables(scope)).

    Raises:
        TypeError: graph is not an og.Graph, or scope not a str.
        re.error: scope is not a regular expression.
    """
    return _collected(_g.GLOBAL_VARIABLES, scope, graph, "global_variables")


def trainable_variables(scope: str | None = None, graph: Graph | None = None) -> list:
    """The trainable Variables of the graph; with `scope`, those whose names match it
    from their start (tf.trainable_variables(scope): a GAN's generator's, say).

    Raises:
        TypeError: graph is not an og.Graph, or scope not a str.
        re.error: scope is not a regular expression.
    """
    return _collected(_g.TRAINABLE_VARIABLES, scope, graph, "trainable_variables")


def variables_initializer(var_list, name: str = "init") -> Operation:
    """One op that runs the initializers of `var_list`.

    Raises:
        TypeError: var_list is not a list of Variables, or name is not a str.
    """
    if isinstance(var_list, (str, bytes, Tensor, Variable)) or not hasattr(
            var_list, "__iter__") or isinstance(var_list, np.ndarray) and var_list.ndim == 0:
        raise TypeError(f"variables_initializer: var_list must be a list of Variables, "
                        f"got {type(var_list).__name__}")
    var_list = list(var_list)
    for v in var_list:
        if not hasattr(v, "initializer"):
            raise TypeError(f"variables_initializer: var_list holds a "
                            f"{type(v).__name__} ({_g._brief(v)}), not a Variable")
    g = var_list[0].graph if var_list else _g.get_default_graph()
    return g.op("NoOp", [], name=name, control_inputs=[v.initializer for v in var_list])


def global_variables_initializer(graph: Graph | None = None) -> Operation:
    """One op that (re)sets every global variable to its initial value.

    Variables created from arrays also start at their initial value in a new Session,
    so running this op is needed only to reset them or for tensor-valued initial
    values.

    Raises:
        TypeError: graph is not an og.Graph.
    """
    _g.check_graph(graph, "global_variables_initializer")
    g = graph or _g.get_default_graph()
    with g.control_dependencies(None):
        found = global_variables(graph=g)
        return variables_initializer(found, name="init") if found else g.op(
            "NoOp", [], name="init")


def local_variables(scope: str | None = None, graph: Graph | None = None) -> list:
    """The graph's local Variables (og.LOCAL_VARIABLES: og.metrics' totals, ...); with
    `scope`, those whose names match it from their start (tf.local_variables(scope)).

    Raises:
        TypeError: graph is not an og.Graph, or scope not a str.
        re.error: scope is not a regular expression.
    """
    return _collected(_g.LOCAL_VARIABLES, scope, graph, "local_variables")


def model_variables(scope: str | None = None, graph: Graph | None = None) -> list:
    """The graph's MODEL_VARIABLES collection (layers' weights a model declares; TF1's
    tf.model_variables); with `scope`, those whose names match it from their start.

    Raises:
        TypeError: graph is not an og.Graph, or scope not a str.
        re.error: scope is not a regular expression.
    """
    return _collected(MODEL_VARIABLES, scope, graph, "model_variables")


def moving_average_variables(scope: str | None = None, graph: Graph | None = None) -> list:
    """The graph's MOVING_AVERAGE_VARIABLES collection (what og.train.
    ExponentialMovingAverage.apply averaged; TF1's tf.moving_average_variables); with
    `scope`, those whose names match it from their start.

    Raises:
        TypeError: graph is not an og.Graph, or scope not a str.
        re.error: scope is not a regular expression.
    """
    return _collected(MOVING_AVERAGE_VARIABLES, scope, graph, "moving_average_variables")


def local_variables_initializer(graph: Graph | None = None) -> Operation:
    """One op that (re)sets every local variable to its initial value (TF1's; og.metrics
    are reset by it).

    Raises:
        TypeError: graph is not an og.Graph.
    """
    _g.check_graph(graph, "local_variables_initializer")
    g = graph or _g.get_default_graph()
    with g.control_dependencies(None):
        found = local_variables(graph=g)
        return variables_initializer(found, name="init_local") if found else g.op(
            "NoOp", [], name="init_local")


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    """The graph's global step (an int64 scalar Variable, not trainable).

    Raises:
        TypeError: graph is not an og.Graph.
    """
    _g.check_graph(graph, "get_or_create_global_step")
    g = graph or _g.get_default_graph()
    found = g.get_collection(_g.GLOBAL_STEP)
    if found:
        return found[0]
    with g.name_scope(None):
        saved, g._scope = g._scope, []
        try:
            step = Variable(np.array(0, np.int64), trainable=False, name="global_step",
                            graph=g, collections=[_g.GLOBAL_VARIABLES, _g.GLOBAL_STEP])
        finally:
            g._scope = saved
    return step


def _variable_list(var_list, what: str) -> list:
    """var_list as a list of Variables; None gives the default graph's global and local
    variables (TF1's default).

    Raises:
        TypeError: var_list is not a list of Variables.
    """
    if var_list is None:
        return global_variables() + local_variables()
    if isinstance(var_list, (str, bytes, Tensor, Variable)) or not hasattr(
            var_list, "__iter__"):
        raise TypeError(f"{what}: var_list must be a list of Variables, got "
                        f"{type(var_list).__name__}")
    var_list = list(var_list)
    for v in var_list:
        if not isinstance(v, Variable):
            raise TypeError(f"{what}: var_list holds a {type(v).__name__} "
                            f"({_g._brief(v)}), not a Variable")
    return var_list


def is_variable_initialized(variable) -> Tensor:
    """A bool scalar tensor: whether `variable` holds a value (TF1's
    tf.is_variable_initialized).

    Raises:
        TypeError: variable is not an og.Variable.
    """
    if not isinstance(variable, Variable):
        raise TypeError(f"is_variable_initialized: expected an og.Variable, got "
                        f"{type(variable).__name__}")
    return variable.is_initialized()


def report_uninitialized_variables(var_list=None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """A 1-D string tensor of the names of the variables in `var_list` (default: the
    global and local variables) that hold no value when it runs, in var_list's order
    (TF1's tf.report_uninitialized_variables; TF's names are the variables' op names,
    og's variable names are those already). Empty when every one is initialized.

    Raises:
        TypeError: var_list is not a list of Variables, or name is not a str.
    """
    _g.check_name(name, "report_uninitialized_variables")
    var_list = _variable_list(var_list, "report_uninitialized_variables")
    g = var_list[0].graph if var_list else _g.get_default_graph()
    with g.control_dependencies(None), g.name_scope(name):
        names = g.constant(np.array([v.name for v in var_list], dtype=object).reshape(-1)
                           if var_list else np.array([], dtype=object))
        if not var_list:
            return g.op("Identity", [names], name="Const")
        flags = g.op("Concat", [g.op("Unsqueeze", [v.is_initialized(), g.constant(
            np.array([0], np.int64))]) for v in var_list], {"axis": 0})
        missing = g.op("Not", [flags])
        return g.op("Compress", [names, missing], {"axis": 0})


def assert_variables_initialized(var_list=None):
    """A tensor whose evaluation fails with FailedPreconditionError naming the first
    variable of `var_list` (default: the global and local variables) that holds no value
    (TF1's tf.assert_variables_initialized: the variables' ranks, read); None when
    var_list is empty.

    Raises:
        TypeError: var_list is not a list of Variables.
    """
    var_list = _variable_list(var_list, "assert_variables_initialized")
    if not var_list:
        return None
    g = var_list[0].graph
    with g.control_dependencies(None):
        ranks = [g.op("Size", [g.op("Shape", [v.read_value()])]) for v in var_list]
        if len(ranks) == 1:
            return ranks[0]
        return g.op("Concat", [g.op("Unsqueeze", [r, g.constant(np.array([0], np.int64))])
                               for r in ranks], {"axis": 0})
