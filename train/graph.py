"""The graph-building API: deferred (TF1-style) graphs of onegraph ops.

A `Graph` wraps a `onegraph.format.Graph` (the IR that is saved and executed) and
adds what building needs: a default-graph stack, name and device scopes, control
dependencies, collections, control-flow contexts, and shape/dtype inference of every
new node through the op registry. `Tensor` and `Operation` are light handles (a graph
and an index), so `Session.run` resolves them without name lookups::

    import onegraph as og
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        y = og.reduce_sum(x * 2.0)
    print(og.Session(g).run(y, {x: np.ones((2, 3), np.float32)}))   # 12.0
"""

from __future__ import annotations

import contextlib
import dataclasses
import numbers
import re
import threading
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType, Graph as IRGraph, Model, TensorKind
from ..ops import REGISTRY, TensorInfo
from . import partial_shapes
from .tensor_shape import TensorShape, dimension_value, static as _static_shape

# Collection keys (the names users pass to `get_collection`).
GLOBAL_VARIABLES = "variables"
TRAINABLE_VARIABLES = "trainable_variables"
GLOBAL_STEP = "global_step"
UPDATE_OPS = "update_ops"
QUEUE_RUNNERS = "queue_runners"
LOSSES = "losses"
REGULARIZATION_LOSSES = "regularization_losses"
LOCAL_VARIABLES = "local_variables"
METRIC_VARIABLES = "metric_variables"

DOMAIN = "onegraph"


def as_dtype(dtype) -> DType:
    """Normalise a dtype given as og.float32, 'float32', numpy dtype or Python type.

    Raises:
        OneGraphError: the value names no known dtype.
    """
    if dtype is float:
        return DType.FLOAT32
    if dtype is int:
        return DType.INT64
    if dtype is bool:
        return DType.BOOL
    try:
        return DType.parse(dtype)
    except Exception as e:
        raise OneGraphError(f"unknown dtype {dtype!r}") from e


_MAX_DIM = int(np.iinfo(np.int64).max)


def _shape_tuple(shape, what: str = "shape") -> tuple | None:
    """User shape (None = unknown rank, None/-1 entries = unknown dims) -> tuple|None.

    Raises:
        TypeError: shape is not a list/tuple (or 1-D integer array) of ints and Nones,
            e.g. a bare int, a str or a float entry (names `what`).
        ShapeError: an entry is negative other than -1, or beyond the int64 range.
    """
    if shape is None or isinstance(shape, TensorShape) and shape.ndims is None:
        return None
    if isinstance(shape, np.ndarray) and shape.ndim == 1 and shape.dtype.kind in "iu":
        shape = shape.tolist()
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{what} must be a list of ints (None or -1 for an unknown dim), "
                        f"or None for an unknown rank; got {type(shape).__name__} "
                        f"{_brief(shape)}")
    dims = []
    for k, d in enumerate(shape):
        d = dimension_value(d)
        if d is None:
            dims.append(None)
            continue
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{what}: dim {k} must be an int or None, got "
                            f"{type(d).__name__} {_brief(d)} (in {_brief(shape)})")
        d = int(d)
        if d < -1 or d > _MAX_DIM:
            raise ShapeError(f"{what}: dim {k} is {d}; a dim must be >= 0, or None or -1 "
                             f"when unknown (in {_brief(shape)})")
        dims.append(None if d == -1 else d)
    return tuple(dims)


def check_seed(seed, what: str) -> int | None:
    """A seed: None or an int >= 0 (numpy integers too; not a bool).

    Raises:
        TypeError: seed is not an int or None (names `what`).
        ValueError: seed is negative.
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{what}: seed must be None or an int >= 0, got "
                        f"{type(seed).__name__} {_brief(seed)}")
    if seed < 0:
        raise ValueError(f"{what}: seed must be >= 0, got {seed}")
    return int(seed)


def check_name(name, what: str) -> None:
    """Refuse a `name=` argument that is not a str or None.

    Raises:
        TypeError: it is not (names `what`).
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{what}: name must be a str or None, got {type(name).__name__} "
                        f"{_brief(name)}")


def check_graph(graph, what: str) -> None:
    """Refuse a `graph=` argument that is not an og.Graph or None.

    Raises:
        TypeError: it is not (names `what`).
    """
    if graph is not None and not isinstance(graph, Graph):
        raise TypeError(f"{what}: graph must be an og.Graph or None, got "
                        f"{type(graph).__name__} {_brief(graph)}")


# Most outputs one node may have (og.split / og.unstack counts, num_outputs): a bigger
# count would allocate millions of tensors before any kernel could refuse it.
MAX_OUTPUTS = 1 << 16


def _ir_shape(shape) -> tuple | None:
    return None if shape is None else tuple(-1 if d is None else int(d) for d in shape)


class Tensor:
    """A symbolic tensor: one output of an op (or a placeholder/constant/variable).

    Supports `+ - * / @ **`, unary `-`, comparisons `< <= > >=` (elementwise, bool
    results) and `[...]` slicing. `==` keeps its Python meaning (identity) so tensors
    can key a feed_dict.

    Attributes:
        graph: the owning `Graph`.
        tensor_index: index of the tensor in the IR graph.
    """

    __slots__ = ("graph", "tensor_index", "__weakref__")

    def __init__(self, graph: "Graph", tensor_index: int):
        self.graph = graph
        self.tensor_index = tensor_index

    # -- metadata -------------------------------------------------------------------

    @property
    def _ir(self):
        return self.graph._ir.tensors[self.tensor_index]

    @property
    def name(self) -> str:
        return self._ir.name

    @property
    def dtype(self) -> DType:
        return self._ir.dtype

    @property
    def shape(self) -> TensorShape | None:
        """Static shape: a TensorShape (a tuple with None for unknown dims, and TF's
        methods), or None for unknown rank."""
        s = self._ir.shape
        return None if s is None else _static_shape(tuple(None if d < 0 else d for d in s))

    @property
    def op(self) -> "Operation | None":
        """The op producing this tensor (None for placeholders, constants, variables)."""
        n = self.graph._producer.get(self.tensor_index)
        return None if n is None else Operation(self.graph, n)

    @property
    def value_index(self) -> int:
        op = self.op
        return 0 if op is None else op._node.outputs.index(self.tensor_index)

    def get_shape(self) -> TensorShape:
        """The static shape (TF1's get_shape): `shape`, and TensorShape(None) for an
        unknown rank (so get_shape().ndims and .as_list() work as in TF). Never
        raises."""
        found = self.shape
        return TensorShape(None) if found is None else found

    def consumers(self) -> list:
        """The ops that read this tensor, in the order they were added. Never raises."""
        me = self.tensor_index
        return [Operation(self.graph, k) for k, node in enumerate(self.graph._ir.nodes)
                if me in node.inputs]

    def set_shape(self, shape) -> None:
        """Refine the static shape with what `shape` knows (e.g. after a reshape whose
        target was dynamic), as TF's set_shape: the dims known in either are kept.

        Raises:
            TypeError: shape is not a list of ints and Nones (or None).
            ShapeError: a dim is negative other than -1, or shape contradicts a known
                dim or the rank (TF's ValueError).
        """
        given = _shape_tuple(shape, f"set_shape of {self.name!r}")
        known = self.shape
        if given is None:
            return
        if known is not None:
            if len(known) != len(given) or any(
                    a is not None and b is not None and a != b for a, b in zip(known, given)):
                raise ShapeError(f"set_shape of {self.name!r}: shape {list(given)} is not "
                                 f"compatible with its shape {list(known)}")
            given = tuple(a if a is not None else b for a, b in zip(known, given))
        self._ir.shape = _ir_shape(given)

    def _replace_shape(self, dims: tuple | None) -> None:
        """Set the static shape to `dims` even where it knows less than the current one
        (placeholder_with_default's: a feed may change what the default fixes)."""
        self._ir.shape = _ir_shape(dims)

    def eval(self, feed_dict: Mapping | None = None, session=None):
        """This tensor's value in one run of `session`, by default the default session
        (a `with sess:` or `with sess.as_default():` block), as TF1's Tensor.eval.

        Raises:
            ValueError: no session is given and none is the default.
            (and whatever `Session.run` raises)
        """
        return _session_for(session, self, "Tensor.eval").run(self, feed_dict)

    def __repr__(self) -> str:
        return (f"<og.Tensor {self.name!r} shape={self.shape} "
                f"dtype={self.dtype.short_name}>")

    def __hash__(self):
        return hash((id(self.graph), self.tensor_index))

    def __eq__(self, other):
        return (isinstance(other, Tensor) and other.graph is self.graph
                and other.tensor_index == self.tensor_index)

    def __bool__(self):
        raise TypeError("a symbolic og.Tensor has no truth value; use og.cond for "
                        "data-dependent branches")

    # -- operators ------------------------------------------------------------------

    def _bin(self, op_type, other, reverse=False):
        a, b = _convert_pair(self, other, op_type)
        if reverse:
            a, b = b, a
        return a.graph.op(op_type, [a, b])

    def __add__(self, other):
        return self._bin("Add", other)

    def __radd__(self, other):
        return self._bin("Add", other, True)

    def __sub__(self, other):
        return self._bin("Sub", other)

    def __rsub__(self, other):
        return self._bin("Sub", other, True)

    def __mul__(self, other):
        return self._bin("Mul", other)

    def __rmul__(self, other):
        return self._bin("Mul", other, True)

    # / is TF1's truediv (integers divide in floats), // and % floor as Python's,
    # & | ^ ~ are the logical ops of bool tensors (TF1's operators)
    def __truediv__(self, other):
        from .api import divide

        return divide(self, other)

    def __rtruediv__(self, other):
        from .api import divide

        return divide(other, self)

    def __floordiv__(self, other):
        from .api_math import floordiv

        return floordiv(self, other)

    def __rfloordiv__(self, other):
        from .api_math import floordiv

        return floordiv(other, self)

    def __mod__(self, other):
        from .api_math import floormod

        return floormod(self, other)

    def __rmod__(self, other):
        from .api_math import floormod

        return floormod(other, self)

    def _logical(self, op_type, other, reverse=False):
        a, b = _convert_pair(self, other, op_type)
        for t in (a, b):
            if t.dtype not in (DType.BOOL, DType.UNDEFINED):
                raise TypeError(f"{op_type}: the operands of & | ^ must be bool tensors "
                                f"(TF1's logical operators), got {t.dtype.short_name}")
        if reverse:
            a, b = b, a
        return a.graph.op(op_type, [a, b])

    def __and__(self, other):
        return self._logical("And", other)

    def __rand__(self, other):
        return self._logical("And", other, True)

    def __or__(self, other):
        return self._logical("Or", other)

    def __ror__(self, other):
        return self._logical("Or", other, True)

    def __xor__(self, other):
        return self._logical("Xor", other)

    def __rxor__(self, other):
        return self._logical("Xor", other, True)

    def __invert__(self):
        if self.dtype not in (DType.BOOL, DType.UNDEFINED):
            raise TypeError(f"~: the operand must be a bool tensor (TF1's logical_not), got "
                            f"{self.dtype.short_name}")
        return self.graph.op("Not", [self])

    def __matmul__(self, other):
        return self._bin("MatMul", other)

    def __rmatmul__(self, other):
        return self._bin("MatMul", other, True)

    def __pow__(self, other):
        return self._bin("Pow", other)

    def __rpow__(self, other):
        return self._bin("Pow", other, True)

    def __neg__(self):
        return self.graph.op("Neg", [self])

    def __abs__(self):
        return self.graph.op("Abs", [self])

    def __lt__(self, other):
        return self._bin("Less", other)

    def __le__(self, other):
        return self._bin("LessOrEqual", other)

    def __gt__(self, other):
        return self._bin("Greater", other)

    def __ge__(self, other):
        return self._bin("GreaterOrEqual", other)

    def __getitem__(self, key):
        from . import api

        return api.strided_slice(self, key)


class Operation:
    """A node of the graph (handle: graph + node index).

    Attributes:
        graph: the owning `Graph`.
        node_index: index of the node in the IR graph.
    """

    __slots__ = ("graph", "node_index")

    def __init__(self, graph: "Graph", node_index: int):
        self.graph = graph
        self.node_index = node_index

    @property
    def _node(self):
        return self.graph._ir.nodes[self.node_index]

    @property
    def name(self) -> str:
        return self._node.name

    @property
    def type(self) -> str:
        return self._node.op_type

    op_type = type

    @property
    def domain(self) -> str:
        return self._node.domain

    @property
    def device(self) -> str:
        return self._node.device

    @property
    def inputs(self) -> list:
        """Input tensors (None for an omitted optional input)."""
        return [None if i < 0 else Tensor(self.graph, i) for i in self._node.inputs]

    @property
    def outputs(self) -> list:
        return [Tensor(self.graph, i) for i in self._node.outputs]

    @property
    def control_inputs(self) -> list:
        return [Operation(self.graph, i) for i in self._node.control_inputs]

    @property
    def attrs(self) -> dict:
        """Attributes with the op's defaults filled in."""
        op = REGISTRY.get(self.type, self.domain)
        return op.resolve_attrs(self._node.attributes)

    def __repr__(self) -> str:
        return f"<og.Operation {self.name!r} type={self.type}>"

    def run(self, feed_dict: Mapping | None = None, session=None) -> None:
        """Run this op (and what it depends on) in `session`, by default the default
        session, as TF1's Operation.run.

        Raises:
            ValueError: no session is given and none is the default.
            (and whatever `Session.run` raises)
        """
        _session_for(session, self, "Operation.run").run(self, feed_dict)

    def __hash__(self):
        return hash((id(self.graph), "op", self.node_index))

    def __eq__(self, other):
        return (isinstance(other, Operation) and other.graph is self.graph
                and other.node_index == self.node_index)


def _session_for(session, what, call: str):
    """`session`, else the default session; ValueError naming `call` when neither."""
    if session is None:
        from .session import get_default_session

        session = get_default_session()
        if session is None:
            raise ValueError(f"{call} of {what.name!r}: no default session; run it inside "
                             "`with og.Session(graph) as sess:` or `with "
                             "sess.as_default():`, or pass session=sess")
    return session


class _Scopes(threading.local):
    def __init__(self):
        self.graphs: list = []


_scopes = _Scopes()
_global_default: "Graph | None" = None
_global_lock = threading.Lock()


def get_default_graph() -> "Graph":
    """The innermost graph of an `as_default()` block, else the global default graph."""
    global _global_default
    if _scopes.graphs:
        return _scopes.graphs[-1]
    with _global_lock:
        if _global_default is None:
            _global_default = Graph()
        return _global_default


def reset_default_graph() -> None:
    """Replace the global default graph with a new, empty one."""
    global _global_default
    with _global_lock:
        _global_default = Graph()


def remove_innermost(stack: list, entry) -> None:
    """Delete the last occurrence of `entry` (by identity) from a default stack; a
    missing entry is fine. Never raises."""
    for k in range(len(stack) - 1, -1, -1):
        if stack[k] is entry:
            del stack[k]
            return


def output_named(ir: IRGraph, name: str, node_named) -> int | None:
    """The tensor a TF1-style "op:k" name means: output k of the node `node_named(op)`
    returns the index of, or for ":0" the tensor called op; None when it names none
    (or is not of that form)."""
    base, sep, k = name.rpartition(":")
    if not sep or not base or not k.isdigit():
        return None
    node = node_named(base)
    if node is not None:
        outputs = ir.nodes[node].outputs
        return outputs[int(k)] if int(k) < len(outputs) and outputs[int(k)] >= 0 else None
    return ir.find_tensor(base) if int(k) == 0 else None


class _BuildState(threading.local):
    """One thread's scopes while it builds a graph (see Graph._building)."""

    def __init__(self):
        self.scope: list[str] = []
        self.device: list[str] = []
        self.control: list[list[int]] = []
        self.cf_stack: list = []


def _per_thread(field: str) -> property:
    """A Graph attribute kept in the calling thread's _BuildState."""
    def get(self):
        return getattr(self._building, field)

    def set_(self, value):
        setattr(self._building, field, value)
    return property(get, set_)


class Graph:
    """A training graph under construction (wraps the IR graph that is run and saved).

    Args:
        name: the IR graph's name.

    Example::

        g = og.Graph()
        with g.as_default():
            c = og.constant([1.0, 2.0]) * 3.0
    """

    def __init__(self, name: str = "main"):
        self._ir = IRGraph(name)
        self._lock = threading.RLock()
        self._producer: dict[int, int] = {}
        self._static: dict[int, np.ndarray] = {}
        # entries of small integer tensors known in part while building (shapes built
        # from og.shape(x)[0] and ints): see partial_shapes.py
        self._partial: dict[int, tuple] = {}
        self._used_names: set[str] = set()
        self._name_counts: dict[str, int] = {}
        # name scopes, devices, control dependencies and the control-flow context
        # stack (cond / while builders, innermost last) are per thread, as TF1's name
        # stack: two threads building at once must not see each other's scopes
        self._building = _BuildState()
        self._collections: dict[str, list] = {}
        self._const_cache: dict = {}
        self._node_context: dict[int, Any] = {}
        # gradient overrides per node (custom_gradient) and per op type
        self._node_grad: dict[int, Any] = {}
        self._grad_override_map: dict[str, str] = {}
        self._variables_by_handle: dict[int, Any] = {}
        # control flow built by og.cond / og.while_loop (train/control_flow.py)
        self._merge_pred: dict[int, Any] = {}
        self._loop_of_node: dict[int, Any] = {}
        self._finalized = False
        # the graph-level seed (og.set_random_seed), as TF1's Graph.seed: None = unseeded
        self.seed: int | None = None
        # a function's graph (og.data traces them) takes tensors of the graphs around it
        # through this hook, as TF's FuncGraph captures: tensor -> a tensor of this graph
        self._capture: Callable | None = None
        self._enclosing: Graph | None = None  # the graph that was default when it was made

    @classmethod
    def around(cls, ir: IRGraph) -> "Graph":
        """A Graph whose ops are added to the existing IR graph `ir` (an imported one):
        tensors and nodes already there are found by name and index, their constant
        data serves `static_value`, and new names avoid theirs. The ONNX importer builds
        ai.onnx.preview.training's Gradient this way, with `gradients`. Never raises."""
        g = cls(ir.name)
        g._ir = ir
        g._index_ir()
        return g

    def adopt(self, ir: IRGraph) -> None:
        """Take in the tensors and nodes of a loaded IR graph, keeping this graph's own
        IR object (so a Session running it sees them): og.saved_model's loader fills a
        Session's empty graph this way.

        Raises:
            ValueError: this graph has ops or tensors already.
            OneGraphError: this graph is finalized.
        """
        if self._ir.tensors or self._ir.nodes:
            raise ValueError(f"the graph is not empty (it has {len(self._ir.nodes)} ops)")
        self._check_open()
        target = self._ir
        target.tensors[:], target.nodes[:] = ir.tensors, ir.nodes
        target.inputs[:], target.outputs[:] = ir.inputs, ir.outputs
        target.doc_string = ir.doc_string
        self._index_ir()

    def _index_ir(self) -> None:
        """The indexes of an IR graph built elsewhere: producers, names taken, and the
        constants' values for static_value."""
        ir = self._ir
        self._producer = ir.producers()
        self._used_names = {t.name for t in ir.tensors} | {n.name for n in ir.nodes}
        self._static = {k: np.asarray(t.data) for k, t in enumerate(ir.tensors)
                        if t.kind is TensorKind.CONSTANT and t.data is not None}

    _scope = _per_thread("scope")
    _device = _per_thread("device")
    _control = _per_thread("control")
    _cf_stack = _per_thread("cf_stack")

    # -- plumbing for Session ---------------------------------------------------------

    @property
    def ir_graph(self) -> IRGraph:
        """The IR graph (what `Session` runs and `to_model` saves)."""
        return self._ir

    model = None  # a Session built on a Graph has no Model signatures

    def finalize(self) -> None:
        """Make the graph read-only: adding ops raises afterwards."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        """Make a finalized graph take ops again (TF1's private method of that name;
        MonitoredSession gives the graph back as it found it when it closes)."""
        self._finalized = False

    @property
    def finalized(self) -> bool:
        """Whether `finalize()` has run."""
        return self._finalized

    # -- lookups by name (TF1: restoring handles of a graph built elsewhere) ----------

    def get_operations(self) -> list:
        """Every op of the graph, in the order they were added. Never raises."""
        return [Operation(self, k) for k in range(len(self._ir.nodes))]

    def get_operation_by_name(self, name: str) -> "Operation":
        """The op called `name`.

        Raises:
            TypeError: name is not a str.
            KeyError: no op has that name (as TF1's Graph).
        """
        if not isinstance(name, str):
            raise TypeError(f"get_operation_by_name: name must be a str, got "
                            f"{type(name).__name__}")
        for k, node in enumerate(self._ir.nodes):
            if node.name == name:
                return Operation(self, k)
        hint = " (that is a tensor name; use get_tensor_by_name)" \
            if self._ir.find_tensor(name) is not None or ":" in name else ""
        raise KeyError(f"get_operation_by_name: no op named {name!r} in the graph{hint}")

    def get_tensor_by_name(self, name: str) -> Tensor:
        """The tensor called `name`, or output k of the op called op for a TF1-style
        "op:k" name ("x:0" is the tensor x too).

        Raises:
            TypeError: name is not a str.
            KeyError: nothing has that name (as TF1's Graph).
        """
        if not isinstance(name, str):
            raise TypeError(f"get_tensor_by_name: name must be a str, got "
                            f"{type(name).__name__}")
        index = self._ir.find_tensor(name)
        if index is None:
            index = output_named(self._ir, name, lambda base: next(
                (k for k, node in enumerate(self._ir.nodes) if node.name == base), None))
        if index is None:
            raise KeyError(f"get_tensor_by_name: no tensor named {name!r} in the graph "
                           "(a tensor's name, or 'op:k' for output k of op)")
        return Tensor(self, index)

    # -- default graph and scopes -----------------------------------------------------

    @contextlib.contextmanager
    def as_default(self):
        """Make this the default graph inside a `with` block (per thread)."""
        stack = _scopes.graphs
        stack.append(self)
        try:
            yield self
        finally:
            # its own entry, not the top: an InteractiveSession made inside the block
            # pushed its graph above it and keeps it there until it is closed
            remove_innermost(stack, self)

    @contextlib.contextmanager
    def name_scope(self, name: str | None):
        """Prefix names of ops created inside with `name/` (nested scopes stack up).

        As TF1's Graph.name_scope: a name ending in "/" (the string a `with ... as
        scope` gave) re-enters that scope as it is, wherever this is entered; None or
        "" goes back to the root scope.

        Raises:
            TypeError: name is not a str or None.
        """
        check_name(name, "name_scope")
        if not name or name.endswith("/"):
            saved = self._scope
            self._scope = [part for part in (name or "").split("/") if part]
            try:
                yield name or ""
            finally:
                self._scope = saved
            return
        full = "/".join(self._scope + [name])
        if full in self._used_names and not name.endswith("_"):
            full = self._unique(full)
            name = full.rsplit("/", 1)[-1]
        self._used_names.add(full)
        self._scope.append(name)
        try:
            yield full + "/"
        finally:
            self._scope.pop()

    @contextlib.contextmanager
    def device(self, device: str | None):
        """Place ops created inside on `device` (e.g. "/job:ps/task:0").

        As TF1: a spec naming only some fields fills in the others from the enclosing
        scope ("/device:CPU:0" inside "/job:ps/task:0" is "/job:ps/task:0/device:CPU:0");
        None ignores every enclosing scope.

        Raises:
            TypeError: device is not a str or None.
            ValueError: a part of the spec is not job:, replica:, task: or a device.
        """
        if device is not None and not isinstance(device, str):
            raise TypeError(f"device: spec must be a str or None, got "
                            f"{type(device).__name__}")
        outer = self._device[-1] if self._device else ""
        self._device.append("" if device is None else merge_device(outer, device))
        try:
            yield
        finally:
            self._device.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Iterable | None):
        """Ops created inside run after every op (or tensor's producer) listed.

        `None` clears the dependencies of enclosing blocks.
        """
        if control_inputs is None:
            saved, self._control = self._control, []
            try:
                yield
            finally:
                self._control = saved
            return
        nodes = []
        for c in control_inputs:
            n = self._control_node(c, "control_dependencies")
            if n is not None:
                nodes.append(n)
        self._control.append(nodes)
        try:
            yield
        finally:
            self._control.pop()

    def _control_node(self, x, where: str) -> int | None:
        """The node a control input stands for: an Operation, a Tensor's producer (None
        for a placeholder or constant, which nothing runs), a Variable's own op (not
        its initializer), or an op or tensor given by name (TF1's as_graph_element).

        Raises:
            TypeError: x is none of these (a number, a function, None).
            KeyError: no op or tensor has the name x.
        """
        if isinstance(x, str):
            for k, node in enumerate(self._ir.nodes):
                if node.name == x:
                    return k
            return _node_of(self.get_tensor_by_name(x))
        handle = getattr(x, "handle", None)
        if isinstance(handle, Tensor) and getattr(x, "initializer", None) is not None:
            # a Variable: its own op (as TF1's variable op), not its `op` property, the
            # initializer, which would reset it whenever the dependent op runs
            return _node_of(handle)
        if isinstance(x, Operation) or isinstance(x, Tensor) \
                or getattr(x, "node_index", None) is not None \
                or getattr(x, "op", None) is not None:
            return _node_of(x)
        raise TypeError(f"{where}: a control input must be an op, a tensor, a variable or "
                        f"the name of one; got {type(x).__name__} {x!r:.60}")

    def _unique(self, base: str) -> str:
        check_name(base, "Graph")
        if base not in self._used_names and self._ir.find_tensor(base) is None:
            return base
        k = self._name_counts.get(base, 0)
        while True:
            k += 1
            cand = f"{base}_{k}"
            if cand not in self._used_names and self._ir.find_tensor(cand) is None:
                self._name_counts[base] = k
                return cand

    def _node_name(self, name: str | None, op_type: str) -> str:
        """The name of a new node: `name` (or the op type) under the current name scope,
        made unique; a name ending in "/" (what `with name_scope(...) as scope` gives,
        as TF1 names a summary or a merged op after its scope) is taken as it is.

        Raises:
            ValueError: a name ending in "/" is only "/", or a tensor has that name.
        """
        if not name or not name.endswith("/"):
            return self.unique_name(name or op_type)
        exact = name[:-1]
        if not exact or self._ir.find_tensor(exact) is not None:
            raise ValueError(f"{op_type}: name {name!r}: a node named {exact!r} already "
                             "exists in the graph" if exact else
                             f"{op_type}: name {name!r} names no node")
        self._used_names.add(exact)
        return exact

    def unique_name(self, name: str) -> str:
        """`name` under the current name scope, made unique in this graph.

        Raises:
            TypeError: name is not a str.
        """
        check_name(name, "unique_name")
        full = "/".join(self._scope + [name]) if self._scope else name
        full = self._unique(full)
        self._used_names.add(full)
        return full

    # -- collections --------------------------------------------------------------------

    @staticmethod
    def _collection_key(name) -> None:
        try:
            hash(name)
        except TypeError:
            raise TypeError(f"collection name must be hashable (usually a str), got "
                            f"{type(name).__name__} {_brief(name)}") from None

    def add_to_collection(self, name: str, value) -> None:
        """Append `value` to the named collection.

        Raises:
            TypeError: name is not hashable.
        """
        self._collection_key(name)
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name: str, scope: str | None = None) -> list:
        """A copy of the named collection (empty if it does not exist); with `scope`,
        only its items that have a name matching that regular expression from its
        start (TF1's filter: `re.match(scope, item.name)`).

        Raises:
            TypeError: name is not hashable, or scope is not a str or None.
            re.error: scope is not a regular expression.
        """
        self._collection_key(name)
        items = list(self._collections.get(name, ()))
        if scope is None:
            return items
        if not isinstance(scope, str):
            raise TypeError(f"get_collection: scope must be a str or None, got "
                            f"{type(scope).__name__}")
        pattern = re.compile(scope)
        return [item for item in items
                if isinstance(getattr(item, "name", None), str) and pattern.match(item.name)]

    def get_collection_ref(self, name: str) -> list:
        """The named collection itself (mutable).

        Raises:
            TypeError: name is not hashable.
        """
        self._collection_key(name)
        return self._collections.setdefault(name, [])

    # -- building -----------------------------------------------------------------------

    def _check_open(self):
        if self._finalized:
            raise OneGraphError(f"graph {self._ir.name!r} is finalized; no ops can be added")

    def _add_tensor(self, name, dtype, shape, kind=TensorKind.ACTIVATION, data=None) -> int:
        with self._lock:
            self._check_open()
            name = self._unique(name)
            self._used_names.add(name)
            return self._ir.add_tensor(name, dtype, _ir_shape(shape), kind, data)

    def placeholder(self, dtype, shape=None, name: str | None = None) -> Tensor:
        """A graph input that must be fed at run time (see `onegraph.placeholder`).

        Raises:
            TypeError: name is not a str, or shape is not a list of ints and Nones.
            ShapeError: a dim is negative other than -1.
            OneGraphError: dtype names no known dtype.
        """
        check_name(name, "placeholder")
        shape = _shape_tuple(shape, "placeholder: shape")
        full = "/".join(self._scope + [name or "Placeholder"])
        with self._lock:
            index = self._add_tensor(full, as_dtype(dtype), shape)
            self._ir.inputs.append(index)
        return Tensor(self, index)

    def constant(self, value, dtype=None, name: str | None = None,
                 shared: bool = True) -> Tensor:
        """A constant tensor holding `value` (see `onegraph.constant`). Small unnamed
        constants are `shared`: the same value gives the same tensor (og's own axes,
        shapes and scalars); og.constant asks for its own tensor, as TF1's tf.constant
        makes a new op (gradients with respect to two equal constants are two).

        Raises:
            TypeError: name is not a str.
            OneGraphError: value is not array-like or does not fit `dtype`.
        """
        check_name(name, "constant")
        # a private, read-only copy: the caller may change its array afterwards, and
        # fetches or kernels must not write into the graph's data
        array = np.array(_as_array(value, dtype), copy=True)
        array.flags.writeable = False
        small = shared and array.size <= 16 and array.dtype != object and name is None
        # the dtype itself: ml_dtypes' types share one .str ('<V1' for uint4, int4 and
        # float8e4m3fn), and zeros of each have the same bytes
        key = (array.dtype, array.shape, array.tobytes()) if small else None
        with self._lock:
            if key is not None and key in self._const_cache:
                return Tensor(self, self._const_cache[key])
            index = self._add_tensor("/".join(self._scope + [name or "Const"]),
                                     DType.from_numpy(array.dtype), array.shape,
                                     TensorKind.CONSTANT, array)
            self._static[index] = array
            if key is not None:
                self._const_cache[key] = index
        return Tensor(self, index)

    def variable_tensor(self, name: str, dtype, shape, data) -> Tensor:
        """A VARIABLE tensor: the Session holds its state (initialised from `data`)."""
        with self._lock:
            self._check_open()
            self._used_names.add(name)
            index = self._ir.add_tensor(name, as_dtype(dtype),
                                        _ir_shape(_shape_tuple(shape, f"variable {name!r}")),
                                        TensorKind.VARIABLE, data)
        return Tensor(self, index)

    def op(self, op_type: str, inputs: Sequence, attrs: Mapping[str, Any] | None = None,
           num_outputs: int | None = None, name: str | None = None,
           domain: str | None = None, control_inputs: Iterable = (),
           dtypes: Sequence | None = None, shapes: Sequence | None = None):
        """Add a node and return its output tensor (or a list when it has several).

        This is also the builder gradient rules receive (`b.op(...)`).

        Args:
            op_type: the registered op type.
            inputs: tensors (or values converted with `constant`), None for an
                omitted optional input.
            attrs: node attributes.
            num_outputs: outputs to create (default: the op's declared outputs; a
                variadic output needs it).
            name: node name (made unique under the current name scope).
            domain: op domain; default: "" if the op exists there, else "onegraph".
            control_inputs: extra ops/tensors that must run first.
            dtypes, shapes: override inferred output dtypes/shapes.

        Returns:
            A `Tensor` for one output, a list of `Tensor`s for several, or the
            `Operation` when the op has no outputs.

        Raises:
            UnsupportedOpError: no such op.
            ShapeError: inference found the inputs inconsistent (names the node).
            TypeError: name is not a str, or num_outputs is not an int.
            ValueError: num_outputs is negative or above MAX_OUTPUTS.
        """
        check_name(name, op_type)
        if num_outputs is not None:
            if isinstance(num_outputs, (bool, np.bool_)) or not isinstance(
                    num_outputs, (int, np.integer)):
                raise TypeError(f"{op_type}: num_outputs must be an int, got "
                                f"{type(num_outputs).__name__} {_brief(num_outputs)}")
            if not 0 <= num_outputs <= MAX_OUTPUTS:
                raise ValueError(f"{op_type}: num_outputs must be in [0, {MAX_OUTPUTS}], "
                                 f"got {num_outputs}")
            num_outputs = int(num_outputs)
        if domain is None:
            domain = "" if REGISTRY.has(op_type, "") else DOMAIN
        opdef = REGISTRY.get(op_type, domain)
        attrs = {k: v for k, v in (attrs or {}).items() if v is not None}
        with self._lock:
            self._check_open()
            in_tensors = [None if x is None else self.convert(x) for x in inputs]
            ctx = self._cf_stack[-1] if self._cf_stack else None
            if ctx is not None:
                in_tensors = [None if t is None else ctx.capture(t) for t in in_tensors]
            if self._node_context:
                self._check_frames(op_type, name, in_tensors, ctx)
            node_name = self._node_name(name, op_type)
            if num_outputs is None:
                # optional outputs ("name?") are created only when asked for
                num_outputs = sum(1 for o in opdef.outputs if not o.endswith("?"))
                if op_type == "IdentityN":
                    num_outputs = len(inputs)
            out_names = [node_name if k == 0 else self._unique(f"{node_name}:{k}")
                         for k in range(num_outputs)]
            for n in out_names:
                self._used_names.add(n)
            outs = [self._ir.add_tensor(n, DType.UNDEFINED, None) for n in out_names]
            in_idx = [-1 if t is None else t.tensor_index for t in in_tensors]
            self._ir.add_node(op_type, in_idx, outs, attrs, name=node_name, domain=domain,
                              device=self._device[-1] if self._device else "")
            n = len(self._ir.nodes) - 1
            node = self._ir.nodes[n]
            for t in outs:
                self._producer[t] = n
            ctrl = [c for group in self._control for c in group]
            ctrl += [c for c in (self._control_node(x, op_type) for x in control_inputs)
                     if c is not None]
            node.control_inputs = sorted(set(ctrl))
            if ctx is not None:
                self._node_context[n] = ctx
                ctx.add_op(n, in_tensors)
            self._infer(n, opdef, in_tensors, dtypes, shapes)
            if shapes is None:
                partial_shapes.record(self, node, self._known_dims)
        if not outs:
            return Operation(self, n)
        result = [Tensor(self, t) for t in outs]
        return result[0] if len(result) == 1 else result

    def _check_frames(self, op_type, name, in_tensors, ctx) -> None:
        """Refuse an input computed inside a while loop that does not enclose `ctx`
        (it has a value per iteration, none outside; TF1 refuses it too)."""
        for t in in_tensors:
            n = None if t is None else self._producer.get(t.tensor_index)
            c = None if n is None else self._node_context.get(n)
            if c is None:
                continue
            loop = _enclosing_loop(c)
            node = self._ir.nodes[n]
            if loop is not None and node.op_type == "Exit" \
                    and node.attributes.get("frame_name") == loop.frame:
                loop = _enclosing_loop(loop.outer)  # a loop's result lives outside it
            a = ctx
            while a is not None and a is not loop:
                a = a.outer
            if loop is not None and a is None:
                raise OneGraphError(
                    f"cannot use {t.name!r} as an input of {op_type} {name or op_type!r}: "
                    f"it is computed inside while loop {loop.frame!r} and has no value "
                    "outside it; return it from the loop body as a loop variable")

    def _infer(self, n, opdef, in_tensors, dtypes, shapes):
        node = self._ir.nodes[n]
        out_t = [self._ir.tensors[i] for i in node.outputs]
        infos = None
        if opdef.infer is not None:
            args = []
            for t in in_tensors:
                if t is None:
                    args.append(None)
                    continue
                ir = self._ir.tensors[t.tensor_index]
                dt = None if ir.dtype is DType.UNDEFINED else ir.dtype.numpy
                shape = None if ir.shape is None else tuple(None if d < 0 else d
                                                            for d in ir.shape)
                args.append(TensorInfo(dt, shape, self._static.get(t.tensor_index)))
            try:
                # the output count too: an equal Split before opset 18 takes its parts
                # from it, as the executors' kernels and inference do
                attrs = opdef.resolve_attrs(node.attributes, f"node {node.name!r}: ",
                                            len(node.outputs))
                infos = opdef.infer(attrs, args)
            except ShapeError as e:
                raise ShapeError(f"node {node.name!r} ({node.op_type}): {e}") from e
            except OneGraphError:
                raise
            except Exception:  # inference is best effort; the kernel has the last word
                infos = None
        for k, t in enumerate(out_t):
            info = infos[k] if infos is not None and k < len(infos) else None
            if info is not None:
                if info.dtype is not None:
                    try:
                        t.dtype = DType.from_numpy(info.dtype)
                    except Exception:
                        pass
                t.shape = _ir_shape(info.shape)
                if info.value is not None and not opdef.stateful:
                    self._static[node.outputs[k]] = np.asarray(info.value)
            if dtypes is not None and k < len(dtypes) and dtypes[k] is not None:
                t.dtype = as_dtype(dtypes[k])
            if shapes is not None and k < len(shapes) and shapes[k] is not None:
                t.shape = _ir_shape(_shape_tuple(shapes[k]))

    def _known_dims(self, index: int) -> tuple | None:
        """Tensor `index`'s shape, None for unknown dims, or None for an unknown rank."""
        shape = self._ir.tensors[index].shape
        return None if shape is None else tuple(None if d < 0 else d for d in shape)

    def constant_ints(self, values) -> Tensor:
        """An int64 vector constant (axes, shapes, sizes in gradient rules)."""
        return self.constant(np.asarray(list(values), dtype=np.int64))

    def indexed_slices(self, values: Tensor, indices: Tensor, like: Tensor):
        """A sparse gradient (see `onegraph.train.gradients.IndexedSlices`)."""
        from .gradients import IndexedSlices

        return IndexedSlices(values, indices, like)

    def static_value(self, t: Tensor) -> np.ndarray | None:
        """The value of `t` if known while building (constants, folded shapes)."""
        return self._static.get(t.tensor_index)

    def convert(self, value, dtype=None) -> Tensor:
        """Turn a Tensor, Variable or array-like into a Tensor of this graph.

        Raises:
            OneGraphError: a tensor of another graph is used here.
        """
        if isinstance(value, Tensor):
            if value.graph is not self:
                if self._capture is not None:
                    return self._capture(value)
                raise OneGraphError(f"tensor {value.name!r} belongs to another graph")
            return value
        conv = getattr(value, "_as_graph_tensor", None)
        if conv is not None:
            return conv(self)
        return self.constant(value, dtype)

    # -- saving --------------------------------------------------------------------------

    def to_model(self, signatures: Mapping | None = None, session=None,
                 metadata: Mapping | None = None) -> Model:
        """The `Model` to save: this graph (variables holding their initial values, or
        their current values in `session`), plus named signatures.

        Args:
            signatures: name -> `signature(...)` result.
            session: if given, variables are saved with their values in this session.
            metadata: extra key/value strings.

        Returns:
            A `onegraph.format.Model`: a snapshot of the graph as it is now (ops built
            later are not in it) sharing this graph's arrays.

        Raises:
            OneGraphError: `session` runs another graph, or holds a value whose dtype
                or shape contradicts its variable's declaration.
            RuntimeError: `session` is closed.
        """
        import copy

        ir = copy.copy(self._ir)
        # a snapshot: building more ops appends to (and shape inference updates) the
        # live graph's lists and tensors, which must not leak into a saved model
        ir.tensors = [copy.copy(t) for t in self._ir.tensors]
        ir.nodes = [dataclasses.replace(n, inputs=list(n.inputs), outputs=list(n.outputs),
                                        attributes=dict(n.attributes),
                                        control_inputs=list(n.control_inputs))
                    for n in self._ir.nodes]
        ir.inputs, ir.outputs = list(self._ir.inputs), list(self._ir.outputs)
        if session is not None:
            if session.ir_graph is not self._ir:
                raise OneGraphError(
                    "to_model: the session was made for another graph (its variable "
                    "values belong to that graph); pass a Session of this graph")
            for i, value in session.variable_values().items():
                t = ir.tensors[i]
                _check_variable_value(t, value)
                ir.tensors[i] = type(t)(t.name, t.dtype, value.shape, t.kind, value,
                                        t.quantization)
        model = Model(graphs=[ir], opset_imports={"": 21, DOMAIN: 1},
                      metadata=dict(metadata or {}))
        for key in (GLOBAL_STEP,):
            for v in self.get_collection(key):
                model.metadata[f"collection:{key}"] = v.handle.name
        init = self._collections.get("_initializer_names")
        if init:
            model.metadata["initializer"] = ",".join(init)
        for sig_name, sig in (signatures or {}).items():
            model.add_signature(sig_name, inputs={k: t.tensor_index
                                                  for k, t in sig["inputs"].items()},
                                outputs={k: t.tensor_index for k, t in sig["outputs"].items()},
                                targets=[_node_of(x) for x in sig["targets"]])
        return model


def _check_variable_value(t, value: np.ndarray) -> None:
    """Refuse a variable value whose dtype or shape contradicts the declared tensor.

    Raises:
        OneGraphError: it does.
    """
    declared = t.shape
    if value.dtype != t.dtype.numpy or (declared is not None and (
            len(declared) != value.ndim
            or any(d >= 0 and d != v for d, v in zip(declared, value.shape)))):
        raise OneGraphError(
            f"variable {t.name!r} is declared {t.dtype.short_name} "
            f"{None if declared is None else list(declared)} but holds "
            f"{value.dtype} {list(value.shape)}")


def _enclosing_loop(ctx):
    """The innermost while-loop context among ctx and its outer contexts, or None."""
    while ctx is not None and not hasattr(ctx, "frame"):
        ctx = ctx.outer
    return ctx


_DEVICE_FIELDS = ("job", "replica", "task", "device")


def _device_fields(spec: str) -> dict:
    """{field: value} of a device spec such as "/job:ps/replica:0/task:1/device:GPU:0"
    (TF1's legacy "/cpu:0" and "/gpu:1" name the device too).

    Raises:
        ValueError: a part is none of job:, replica:, task:, device: or cpu:/gpu:.
    """
    fields = {}
    for part in spec.split("/"):
        if not part:
            continue
        key, _, value = part.partition(":")
        low = key.lower()
        if low in ("job", "replica", "task") and value:
            fields[low] = value
        elif low == "device" and value:
            fields["device"] = value
        elif low in ("cpu", "gpu") and value:
            fields["device"] = f"{key.upper()}:{value}"
        else:
            raise ValueError(f"device: cannot parse {part!r} of {spec!r} (expected "
                             "job:, replica:, task: or device:TYPE:N parts)")
    return fields


def merge_device(outer: str, inner: str) -> str:
    """The device spec `inner` with the fields it leaves out taken from `outer`.

    Raises:
        ValueError: either spec has a part that is not a device field.
    """
    fields = _device_fields(outer)
    fields.update(_device_fields(inner))
    return "".join(f"/{k}:{fields[k]}" for k in _DEVICE_FIELDS if k in fields)


def _node_of(x) -> int | None:
    """Node index of an Operation, a Tensor's producer, or a Variable's initializer."""
    if x is None:
        return None
    if isinstance(x, Operation):
        return x.node_index
    if isinstance(x, Tensor):
        return x.graph._producer.get(x.tensor_index)
    node = getattr(x, "node_index", None)
    if node is not None:
        return node
    op = getattr(x, "op", None)
    if op is not None and op is not x:
        return _node_of(op)
    return None


def _as_array(value, dtype=None) -> np.ndarray:
    """`value` as an array (of `dtype` when given; Python floats default to float32).

    Raises:
        OneGraphError: the value is not array-like, or does not fit `dtype` (a
            fraction for an integer type, an integer out of its range), where numpy
            would silently truncate or wrap.
    """
    try:
        array = np.asarray(value)
        if array.dtype.kind == "S" and not isinstance(value, (np.ndarray, np.generic)):
            # numpy's fixed-width bytes drop trailing NUL bytes, which TF's strings keep
            # (a BMP's last row padding): keep Python's bytes objects as they are
            array = np.array(value, dtype=object)
    except (ValueError, TypeError, OverflowError) as e:
        raise OneGraphError(f"cannot convert {type(value).__name__} to a tensor: {e}") \
            from None
    if dtype is not None:
        return _fit(array, as_dtype(dtype).numpy, value)
    if array.dtype == object and not all(isinstance(v, (str, bytes)) for v in array.flat):
        raise OneGraphError(f"cannot convert {type(value).__name__} to a tensor (a list of "
                            "tensors needs og.stack or og.concat)")
    if array.dtype == np.float64 and not isinstance(value, (np.ndarray, np.generic)):
        array = array.astype(np.float32)  # Python floats default to float32 (TF rule)
    elif array.dtype.kind in "US":
        array = array.astype(object)
    return array


def _is_number(v) -> bool:
    return isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, np.ndarray)


def _fit(array: np.ndarray, want: np.dtype, value) -> np.ndarray:
    """array cast to `want`, refusing value changes numpy makes silently.

    Raises:
        OneGraphError: value is None, a str/bytes for a numeric dtype, a dict or other
            object that is not a number, a complex number for a real dtype, a fraction
            for an integer dtype, or out of the dtype's range (names the value's type
            and the target dtype).
    """
    target = "string" if want == object else str(want)

    def refuse(why: str):
        raise OneGraphError(f"cannot convert {_brief(value)} ({type(value).__name__}) to "
                            f"{target}: {why}")

    if value is None:
        refuse("None is not a value (give a number or an array)")
    if array.dtype == want:
        return array.astype(want, copy=False)
    if want == object:  # string tensors: keep what numpy made of the value
        if array.dtype == object and any(v is None for v in array.flat):
            refuse("it holds None")
        return array.astype(want, copy=False)
    if array.dtype == object:
        bad = next((v for v in array.flat if not _is_number(v)), _NOTHING)
        if bad is not _NOTHING:
            refuse(f"it holds {type(bad).__name__} {_brief(bad)}, not a number"
                   + (" (a list of tensors needs og.stack or og.concat)"
                      if _is_symbolic(bad) else ""))
        kinds = {np.asarray(v).dtype.kind for v in array.flat}
        if "c" in kinds and want.kind != "c":
            refuse("a complex number has no real value")
        try:  # to numbers numpy can check below (Python ints beyond int64 stay objects)
            array = array.astype(np.float64 if "f" in kinds else
                                 np.complex128 if "c" in kinds else np.int64)
        except (TypeError, ValueError, OverflowError):
            if want.kind in "iub":
                refuse(f"out of the range of {target}")
            try:
                return array.astype(want)
            except (TypeError, ValueError, OverflowError) as e:
                refuse(str(e))
    if array.dtype.kind not in "biufc":
        refuse(f"a string is not a {'bool' if want.kind == 'b' else 'number'} (parse it "
               "first)" if array.dtype.kind in "US"
               else f"a {array.dtype} value is not a number")
    if array.dtype.kind == "c" and want.kind != "c":
        refuse("a complex number has no real value")
    if want.kind in "iu" and array.size:
        if array.dtype.kind == "f" and not np.array_equal(array, np.trunc(array)):
            raise OneGraphError(f"cannot convert {_brief(value)} to {want}: it is not a "
                                "whole number (cast explicitly with og.cast)")
        if array.dtype.kind in "iuf":
            info = np.iinfo(want)
            if array.min() < info.min or array.max() > info.max:
                raise OneGraphError(f"cannot convert {_brief(value)} to {want}: out of "
                                    f"its range [{info.min}, {info.max}]")
    try:
        return array.astype(want)
    except (TypeError, ValueError, OverflowError) as e:
        refuse(str(e))


_NOTHING = object()


def _brief(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _convert_pair(a, b, op: str = "a binary op"):
    """Convert two operands of a binary op; plain values take the tensor's dtype.

    Raises:
        ShapeError: both are tensors, of different dtypes (`check_same_dtype`).
        OneGraphError: a plain operand does not convert to the other's dtype (None, a
            str, a dict, a fraction for an integer tensor, ...; names `op`).
    """
    try:
        if isinstance(a, Tensor) and isinstance(b, Tensor) and b.graph is not a.graph and \
                b.graph is get_default_graph():
            # a tensor of the default graph (a function's being traced) with one of a graph
            # around it: build where the function is (which captures the other), as TF
            tb = b.graph.convert(b)
            ta = b.graph.convert(a)
        elif isinstance(a, Tensor) or hasattr(a, "_as_graph_tensor"):
            g = a.graph if isinstance(a, Tensor) else a._as_graph_tensor(None).graph
            ta = g.convert(a)
            tb = g.convert(b, None if _is_symbolic(b) else _dtype_for(ta))
        else:
            g = b.graph if isinstance(b, Tensor) else b._as_graph_tensor(None).graph
            tb = g.convert(b)
            ta = g.convert(a, _dtype_for(tb))
    except OneGraphError as e:
        raise _named(e, op) from None
    check_same_dtype(op, [ta, tb])
    return ta, tb


def _named(e: OneGraphError, where: str) -> OneGraphError:
    """The same error with `where: ` in front of its message (type kept)."""
    return type(e)(f"{where}: {e}")


def check_same_dtype(op: str, tensors) -> None:
    """Refuse operands of different known dtypes, as TF1 does: numpy would promote
    (int64 + float32 -> float64) while the graph declared the first operand's dtype,
    so the value and its declared dtype would disagree.

    Raises:
        ShapeError: two of the tensors have different dtypes (names both).
    """
    known = [(k, t.dtype) for k, t in enumerate(tensors)
             if t is not None and t.dtype is not DType.UNDEFINED]
    if len({d for _, d in known}) > 1:
        parts = ", ".join(f"input {k} is {d.short_name}" for k, d in known)
        raise ShapeError(f"{op}: operands of different dtypes ({parts}); tensors are "
                         "not converted implicitly, cast one with og.cast")


def _is_symbolic(x) -> bool:
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_tensor")


def _dtype_for(t: Tensor):
    return None if t.dtype is DType.UNDEFINED else t.dtype


def integer_tensor(value, what: str, graph: Graph | None = None) -> Tensor:
    """`value` as an integer tensor (plain values become int64), for indices, ids and
    labels: a float tensor is refused rather than truncated (as TF1 does).

    Raises:
        ShapeError: value is a tensor of a non-integer dtype (names `what`).
        OneGraphError: a plain value is not integers (names `what`).
    """
    try:
        t = convert_to_tensor(value, DType.INT64, graph)
    except OneGraphError as e:
        raise _named(e, what) from None
    if t.dtype is not DType.UNDEFINED and t.dtype.numpy.kind not in "iu":
        raise ShapeError(f"{what} must be an integer tensor, got {t.dtype.short_name}")
    return t


def bool_tensor(value, what: str, graph: Graph | None = None) -> Tensor:
    """`value` as a bool tensor (plain values become bool), for conditions and masks.

    Raises:
        ShapeError: value is a tensor of another dtype (names `what`).
        OneGraphError: a plain value is not a bool or number (names `what`).
    """
    try:
        t = convert_to_tensor(value, DType.BOOL, graph)
    except OneGraphError as e:
        raise _named(e, what) from None
    if t.dtype not in (DType.BOOL, DType.UNDEFINED):
        raise ShapeError(f"{what} must be a bool tensor, got {t.dtype.short_name} "
                         "(compare it, e.g. og.greater(x, 0))")
    return t


def convert_to_tensor(value, dtype=None, graph: Graph | None = None) -> Tensor:
    """A Tensor for `value` in `graph` (default: the value's own graph or the default).

    Args:
        value: Tensor, Variable, or array-like (becomes a constant).
        dtype: dtype for array-likes.

    Raises:
        TypeError: graph is not an og.Graph.
        OneGraphError: value is not array-like or does not fit `dtype`, or is a tensor
            of another graph.
    """
    check_graph(graph, "convert_to_tensor")
    if isinstance(value, Tensor):
        return value
    if graph is None:
        conv = getattr(value, "_as_graph_tensor", None)
        graph = conv(None).graph if conv is not None else get_default_graph()
    return graph.convert(value, dtype)
