"""The in-memory model: Model, Graph, Node, Tensor, Signature.

Tensors, nodes and graphs are linked by index, exactly as in the file, so a loaded
model needs no name lookups to run. The classes are plain slotted dataclasses that are
easy to build by hand::

    g = Graph("main")
    x = g.add_input("x", "float32", [1, 4])
    w = g.add_constant("w", np.ones((4, 2), np.float32))
    (y,) = g.add_node("MatMul", [x, w], ["y"])
    g.outputs = [y]
    model = Model(graphs=[g])
    model.add_signature("serving", inputs={"x": x}, outputs={"y": y})

`Graph.lint()` checks the invariants (indices in range, each tensor produced once, no
cycles outside control-flow frames, data consistent with dtype and shape, every name,
number and attribute storable in the file's types); `Model.lint()` adds signatures,
opsets, metadata, the schema version and acyclic subgraph references.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import FormatError
from .dtypes import DType

# 1.1: DType values 15-24 (float8, int4, int2, float4); 1.2: Tensor.containers;
# 1.3: map containers (MAP_INT64, MAP_STRING); 1.4: Tensor.dim_names;
# 1.5: Node.doc_string, Graph.doc_string; 1.6: Buffer.raw_bytes (STRING elements that
# are not UTF-8 text)
SCHEMA_VERSION = (1, 6)

# Ops whose outgoing edges close a loop in a control-flow frame (the paper's
# NextIteration -> Merge back edge); cycle checks ignore edges leaving them.
BACK_EDGE_OPS = frozenset({"NextIteration"})


class TensorKind(enum.IntEnum):
    """Where a tensor's value comes from; values match `onegraph.fbs`."""

    ACTIVATION = 0
    CONSTANT = 1
    VARIABLE = 2


class Container(enum.IntEnum):
    """What wraps a value's tensors (ONNX sequence/optional/map types); values match
    `onegraph.fbs`. A map's values are the next wrapper inward, or the element."""

    SEQUENCE = 0
    OPTIONAL = 1
    MAP_INT64 = 2
    MAP_STRING = 3


class AttrType(enum.IntEnum):
    """Attribute value types; values match `onegraph.fbs`'s `AttributeType`."""

    UNDEFINED = 0
    FLOAT = 1
    INT = 2
    STRING = 3
    TENSOR = 4
    GRAPH = 5
    FLOATS = 6
    INTS = 7
    STRINGS = 8
    GRAPHS = 9


class TypedList(list):
    """A list attribute value that remembers its type, so an empty list round-trips."""

    __slots__ = ("attr_type",)

    def __init__(self, attr_type: AttrType, items: Iterable = ()):
        super().__init__(items)
        self.attr_type = AttrType(attr_type)


# Python values the file stores as integers / as numbers; ranges of its integer types.
_INTEGERS = (bool, int, np.integer, np.bool_)
_NUMBERS = (bool, int, float, np.integer, np.floating, np.bool_)
_INT32_RANGE = (-(2**31), 2**31 - 1)
_INT64_RANGE = (-(2**63), 2**63 - 1)
_UINT16_RANGE = (0, 2**16 - 1)
_LIST_TYPES = {AttrType.FLOATS, AttrType.INTS, AttrType.STRINGS, AttrType.GRAPHS}


def attr_type_of(value: Any, where: str = "") -> AttrType:
    """The AttrType a Python attribute value is stored as.

    Raises:
        FormatError: the value has no attribute representation.
    """
    if isinstance(value, TypedList):
        return value.attr_type
    if isinstance(value, _INTEGERS):
        return AttrType.INT
    if isinstance(value, (float, np.floating)):
        return AttrType.FLOAT
    if isinstance(value, str):
        return AttrType.STRING
    if isinstance(value, np.ndarray):
        return AttrType.TENSOR
    if isinstance(value, Graph):
        return AttrType.GRAPH
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, Graph) for v in value) and value:
            return AttrType.GRAPHS
        if all(isinstance(v, str) for v in value) and value:
            return AttrType.STRINGS
        if all(isinstance(v, _INTEGERS) for v in value):
            return AttrType.INTS
        if all(isinstance(v, _NUMBERS) for v in value):
            return AttrType.FLOATS
    raise FormatError(f"{where}: attribute value of type {type(value).__name__} "
                      "cannot be stored")


def _check_int(value: Any, where: str, bounds: tuple[int, int] = _INT64_RANGE,
               type_name: str = "int64") -> None:
    """Refuse a value that is not an integer within `bounds` (lo, hi), naming `where`.

    Raises:
        FormatError: not an int (bool and numpy integers count), or out of range.
    """
    if not isinstance(value, _INTEGERS):
        raise FormatError(f"{where}: {value!r} is not an int")
    if not bounds[0] <= int(value) <= bounds[1]:
        raise FormatError(f"{where}: {int(value)} is outside {type_name}")


def _check_str(value: Any, where: str) -> None:
    """Refuse a value the file cannot store as a string: not a str, or not encodable
    as UTF-8 (a lone surrogate).

    Raises:
        FormatError: naming `where`.
    """
    if not isinstance(value, str):
        raise FormatError(f"{where}: {type(value).__name__} is not a str")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise FormatError(f"{where}: {value!r} is not valid UTF-8 ({e.reason})") from None


def _check_attribute(value: Any, where: str) -> AttrType:
    """The AttrType `value` is stored as, after checking every element fits the file:
    ints within int64, floats within float64, strings encodable, graphs for GRAPHS.

    Raises:
        FormatError: naming `where` (and the element index for lists).
    """
    kind = attr_type_of(value, where)
    if isinstance(value, TypedList) and kind not in _LIST_TYPES:
        raise FormatError(f"{where}: a TypedList cannot have the non-list type "
                          f"{kind.name}")
    if kind is AttrType.INT:
        _check_int(value, where)
    elif kind is AttrType.STRING:
        _check_str(value, where)
    elif kind is AttrType.INTS:
        # whole-list checks first: tree-ensemble attributes hold millions of entries
        lo, hi = _INT64_RANGE
        typed = not isinstance(value, TypedList) or all(isinstance(v, _INTEGERS)
                                                         for v in value)
        if not (typed and (not value or lo <= min(value) and max(value) <= hi)):
            for i, v in enumerate(value):
                _check_int(v, f"{where}[{i}]")
    elif kind is AttrType.FLOATS:
        ok = not isinstance(value, TypedList) or all(isinstance(v, _NUMBERS) for v in value)
        try:
            if ok:
                list(map(float, value))  # a huge int overflows a float64
        except OverflowError:
            ok = False
        if not ok:
            for i, v in enumerate(value):
                if not isinstance(v, _NUMBERS):
                    raise FormatError(f"{where}[{i}]: {type(v).__name__} is not a number")
                try:
                    float(v)
                except OverflowError:
                    raise FormatError(f"{where}[{i}]: {v} cannot be stored as a "
                                      "float64") from None
    elif kind is AttrType.STRINGS:
        for i, v in enumerate(value):
            _check_str(v, f"{where}[{i}]")
    elif kind is AttrType.GRAPHS:
        for i, v in enumerate(value):
            if not isinstance(v, Graph):
                raise FormatError(f"{where}[{i}]: {type(v).__name__} is not a Graph")
    elif kind is AttrType.TENSOR:
        try:
            DType.from_numpy(value.dtype)  # refuses complex, datetime, void, ...
        except FormatError as e:
            raise FormatError(f"{where}: {e}") from None
    return kind


@dataclasses.dataclass(slots=True, eq=False)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per `axis`."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0

    def __post_init__(self):
        self.scale = np.asarray(self.scale, dtype=np.float32).reshape(-1)
        self.zero_point = np.asarray(self.zero_point, dtype=np.int64).reshape(-1)

    def __eq__(self, other):
        return (isinstance(other, Quantization) and self.axis == other.axis
                and self.scale.tobytes() == other.scale.tobytes()  # nan == nan here
                and np.array_equal(self.zero_point, other.zero_point))


def _shape_tuple(shape, name) -> tuple[int, ...]:
    """`shape` (any sequence of ints; None or -1 for an unknown dimension) as a tuple
    of ints, unknown dimensions -1. Dimensions below -1 are left to `Graph.lint`.

    Raises:
        TypeError: not a sequence (a bare int, a str), or a dimension is neither an
            int (numpy integers count, bool does not) nor None; naming the tensor.
    """
    try:
        if isinstance(shape, (str, bytes, Mapping)):
            raise TypeError
        dims = list(shape)
    except TypeError:
        raise TypeError(f"tensor {name!r}: shape must be a sequence of ints (-1 or None "
                        f"for an unknown dimension) or None for an unknown rank, got "
                        f"{type(shape).__name__} {shape!r}") from None
    out = []
    for k, d in enumerate(dims):
        if d is None:
            out.append(-1)
            continue
        try:
            if isinstance(d, (bool, np.bool_)):
                raise TypeError
            out.append(operator.index(d))  # int, numpy integers, 0-d int arrays
        except TypeError:
            raise TypeError(f"tensor {name!r}: dimension {k} of shape {dims!r} is a "
                            f"{type(d).__name__}, not an int (or None for unknown)") from None
    return tuple(out)


@dataclasses.dataclass(slots=True, eq=False)
class Tensor:
    """A tensor of a graph: name, dtype, shape (-1 = unknown dim, None = unknown rank).

    Constants and variables carry `data` (a numpy array, usually a view of the
    memory-mapped file after `load`); activations do not. `containers` marks a value
    that wraps tensors, outermost first: (SEQUENCE,) is a sequence of tensors of this
    dtype and shape, (OPTIONAL, SEQUENCE) an optional sequence; () a plain tensor.
    `dim_names` names the dimensions of `shape` (ONNX's dim_param, e.g. "batch"): one
    str per dimension, "" for a dimension without a name, a name only on a -1
    dimension; None when no dimension has one. Names that stop fitting (inference
    learned the size) are dropped when the tensor is written (`fitting_dim_names`).
    """

    name: str
    dtype: DType
    shape: tuple[int, ...] | None
    kind: TensorKind = TensorKind.ACTIVATION
    data: np.ndarray | None = None
    quantization: Quantization | None = None
    containers: tuple[Container, ...] = ()
    dim_names: tuple[str, ...] | None = None

    def __post_init__(self):
        """Normalize dtype, kind, containers and shape (None dims become -1).

        Raises:
            FormatError: "tensor 'x': unknown dtype 'float33'" (see `DType.parse`).
            TypeError: the shape is not a sequence of ints (a bare int, a str) or a
                dimension is not an int or None.
        """
        try:
            self.dtype = DType.parse(self.dtype)
        except FormatError as e:
            raise FormatError(f"tensor {self.name!r}: {e}") from None
        self.kind = TensorKind(self.kind)
        self.containers = tuple(Container(c) for c in self.containers)
        if self.shape is not None:
            self.shape = _shape_tuple(self.shape, self.name)
        if self.dim_names is not None:
            self.dim_names = tuple(self.dim_names)

    def __eq__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        same_data = (self.data is None and other.data is None) or (
            self.data is not None and other.data is not None
            and self.data.shape == other.data.shape
            and (self.data.dtype == object
                 and self.data.ravel().tolist() == other.data.ravel().tolist()
                 or self.data.dtype != object
                 and self.data.tobytes() == np.asarray(other.data, self.data.dtype).tobytes()))
        return (self.name == other.name and self.dtype == other.dtype
                and self.shape == other.shape and self.kind == other.kind and same_data
                and self.quantization == other.quantization
                and self.containers == other.containers
                and fitting_dim_names(self) == fitting_dim_names(other))

    @property
    def num_elements(self) -> int | None:
        if self.shape is None or any(d < 0 for d in self.shape):
            return None
        return int(np.prod(self.shape, dtype=object))


@dataclasses.dataclass(slots=True, eq=False)
class Node:
    """One operation: op type and domain, input/output tensor indices, attributes.

    An input index of -1 marks an omitted optional input. `control_inputs` are node
    indices that must run before this one. `doc_string` is free text about the node
    (ONNX's NodeProto.doc_string, e.g. the source line an exporter recorded).
    """

    op_type: str
    inputs: list[int]
    outputs: list[int]
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict)
    name: str = ""
    domain: str = ""
    device: str = ""
    control_inputs: list[int] = dataclasses.field(default_factory=list)
    doc_string: str = ""

    def __eq__(self, other):
        if not isinstance(other, Node):
            return NotImplemented
        return (self.op_type == other.op_type and self.inputs == other.inputs
                and self.outputs == other.outputs and self.name == other.name
                and self.domain == other.domain and self.device == other.device
                and self.control_inputs == other.control_inputs
                and self.doc_string == other.doc_string
                and _attrs_equal(self.attributes, other.attributes))

    def subgraphs(self) -> list["Graph"]:
        """The graphs held in this node's attributes (If branches, Loop and Scan
        bodies), in attribute order. Never raises."""
        out = []
        if not isinstance(self.attributes, Mapping):  # Graph.lint names it
            return out
        for value in self.attributes.values():
            if isinstance(value, Graph):
                out.append(value)
            elif isinstance(value, (list, tuple)) and not (
                    isinstance(value, TypedList) and value.attr_type is not AttrType.GRAPHS):
                out.extend(v for v in value if isinstance(v, Graph))
        return out


def _attr_value_equal(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.dtype == b.dtype and a.shape == b.shape
                and (a.ravel().tolist() == b.ravel().tolist() if a.dtype == object
                     else a.tobytes() == b.tobytes()))
    if isinstance(a, Graph) or isinstance(b, Graph):
        return isinstance(a, Graph) and isinstance(b, Graph) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_attr_value_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def _attrs_equal(a: Mapping, b: Mapping) -> bool:
    return a.keys() == b.keys() and all(_attr_value_equal(a[k], b[k]) for k in a)


@dataclasses.dataclass(slots=True, eq=False)
class Graph:
    """A dataflow graph: tensors, nodes, and the indices of its inputs and outputs;
    `doc_string` is free text about it (ONNX's GraphProto.doc_string)."""

    name: str = "main"
    tensors: list[Tensor] = dataclasses.field(default_factory=list)
    nodes: list[Node] = dataclasses.field(default_factory=list)
    inputs: list[int] = dataclasses.field(default_factory=list)
    outputs: list[int] = dataclasses.field(default_factory=list)
    doc_string: str = ""
    # name -> index, rebuilt lazily whenever the tensor list changed length (counted
    # separately: a file may repeat a name, so the dict can be shorter than the list)
    _name_index: dict[str, int] = dataclasses.field(default_factory=dict, init=False,
                                                     repr=False)
    _name_count: int = dataclasses.field(default=0, init=False, repr=False)
    # names held by more than one tensor (rebuilt with _name_index)
    _name_repeats: frozenset = dataclasses.field(default=frozenset(), init=False,
                                                 repr=False)
    # node names taken, for naming unnamed nodes; rebuilt when the node list changed
    # length other than through add_node
    _node_names: set = dataclasses.field(default_factory=set, init=False, repr=False)
    _node_count: int = dataclasses.field(default=-1, init=False, repr=False)

    def __eq__(self, other):
        if not isinstance(other, Graph):
            return NotImplemented
        return (self.name == other.name and self.tensors == other.tensors
                and self.nodes == other.nodes and self.inputs == other.inputs
                and self.outputs == other.outputs and self.doc_string == other.doc_string)

    def copy(self) -> "Graph":
        """A copy with its own node, tensor, input and output lists (the Tensor and
        Node objects are shared) and its own name caches: a tensor added to the copy
        is not found by name in this graph. Never raises."""
        return Graph(name=self.name, tensors=list(self.tensors), nodes=list(self.nodes),
                     inputs=list(self.inputs), outputs=list(self.outputs),
                     doc_string=self.doc_string)

    # -- building ---------------------------------------------------------------------

    def add_tensor(self, name: str, dtype, shape, kind=TensorKind.ACTIVATION,
                   data: np.ndarray | None = None,
                   quantization: Quantization | None = None, containers=()) -> int:
        """Append a tensor and return its index (`containers`: see `Tensor`).

        `shape` is a sequence of ints (-1 or None for an unknown dimension), or None
        for an unknown rank.

        Raises:
            FormatError: the name is already used in this graph, or the dtype is
                unknown.
            TypeError: the shape is not a sequence of ints and None (see `Tensor`).
        """
        if self.find_tensor(name) is not None:
            raise FormatError(f"graph {self.name!r}: tensor name {name!r} already used")
        self.tensors.append(Tensor(name, dtype, shape, kind, data, quantization, containers))
        self._name_index[name] = len(self.tensors) - 1
        self._name_count = len(self.tensors)
        return len(self.tensors) - 1

    def add_input(self, name: str, dtype, shape, containers=()) -> int:
        """Add an activation tensor and make it a graph input; returns its index.

        `dtype` as `DType.parse` takes it; `shape` a sequence of ints (-1 or None for an
        unknown dimension: `[None, 4]`), or None for an unknown rank.

        Raises:
            FormatError: the name is already used, or the dtype is unknown.
            TypeError: the shape is not a sequence of ints and None (e.g. a bare int).
        """
        index = self.add_tensor(name, dtype, shape, containers=containers)
        self.inputs.append(index)
        return index

    def add_constant(self, name: str, value, kind=TensorKind.CONSTANT) -> int:
        """Add a tensor holding `value` (converted with np.asarray); returns its index.

        Raises:
            FormatError: naming the constant: the value is not an array of one shape
                (nested lists of different lengths), its element type has no onegraph
                equivalent (e.g. complex), or the name is already used.
        """
        where = f"graph {self.name!r}: constant {name!r}"
        try:
            array = np.asarray(value)
        except ValueError as e:
            if "inhomogeneous" in str(e) or "sequence" in str(e):
                raise FormatError(f"{where}: the value is not an array of one shape "
                                  "(nested sequences of different lengths)") from None
            raise FormatError(f"{where}: cannot make an array of the value "
                              f"({type(value).__name__})") from None
        except (TypeError, OverflowError, RecursionError):
            raise FormatError(f"{where}: cannot make an array of the value "
                              f"({type(value).__name__})") from None
        if array.dtype.kind in "US":
            array = array.astype(object)
        try:
            dtype = DType.from_numpy(array.dtype)
        except FormatError as e:
            raise FormatError(f"{where}: {e}") from None
        return self.add_tensor(name, dtype, array.shape, kind, array)

    def add_node(self, op_type: str, inputs: Sequence[int | str | None],
                 outputs: Sequence[int | str], attributes: Mapping[str, Any] | None = None,
                 name: str = "", domain: str = "", device: str = "") -> list[int]:
        """Append a node; returns the indices of its outputs.

        Inputs may be tensor indices, tensor names, or None (omitted optional input).
        Outputs may be indices or names; a name not yet in the graph becomes a new
        activation tensor of unknown dtype and shape. Without `name` the node is called
        `{op_type}_{k}` with the smallest k >= its index that no node has yet.

        Raises:
            FormatError: an input name is unknown.
        """
        in_idx = [-1 if x is None else self._index(x, create=False) for x in inputs]
        out_idx = [self._index(x, create=True) for x in outputs]
        if self._node_count != len(self.nodes):
            self._node_names = {node.name for node in self.nodes}
        node_name = name
        if not node_name:
            # A synthesized name skips names nodes already have: a node explicitly
            # named "Neg_1" must not get a twin (onnxruntime refuses duplicate names).
            k = len(self.nodes)
            node_name = f"{op_type}_{k}"
            while node_name in self._node_names:
                k += 1
                node_name = f"{op_type}_{k}"
        self.nodes.append(Node(op_type, in_idx, out_idx, dict(attributes or {}), node_name,
                               domain, device))
        self._node_names.add(node_name)
        self._node_count = len(self.nodes)
        return out_idx

    def find_tensor(self, name: str) -> int | None:
        """Index of the tensor called `name`, or None."""
        count = len(self.tensors)
        if self._name_count != count:
            # a new dict, published whole: a Session thread looking a name up while
            # another rebuilds must never see it half-filled (clear() then update())
            index = {t.name: i for i, t in enumerate(self.tensors[:count])}
            repeats = frozenset()
            if len(index) != count:
                seen: set = set()
                repeats = frozenset(t.name for t in self.tensors[:count]
                                    if t.name in seen or seen.add(t.name))
            self._name_index, self._name_repeats = index, repeats
            self._name_count = count
        return self._name_index.get(name)

    def name_is_repeated(self, name: str) -> bool:
        """Whether more than one tensor of the graph is called `name` (a file may repeat
        a name; `find_tensor` then finds the last)."""
        self.find_tensor(name)
        return name in self._name_repeats

    def tensor(self, key: int | str) -> Tensor:
        """The tensor with this index or name."""
        return self.tensors[self._index(key, create=False)]

    def _index(self, key: int | str, create: bool) -> int:
        if isinstance(key, (int, np.integer)):
            return int(key)
        if not isinstance(key, str):
            raise TypeError(f"graph {self.name!r}: a tensor is given by its index (int) or "
                            f"name (str), got {type(key).__name__} {key!r}")
        found = self.find_tensor(key)
        if found is not None:
            return found
        if not create:
            raise FormatError(f"graph {self.name!r}: no tensor named {key!r}")
        return self.add_tensor(key, DType.UNDEFINED, None)

    # -- analysis ---------------------------------------------------------------------

    def producers(self) -> dict[int, int]:
        """Map tensor index -> index of the node producing it."""
        return {t: n for n, node in enumerate(self.nodes) for t in node.outputs if t >= 0}

    def topological_order(self) -> list[int]:
        """Node indices in an order where every node follows its producers.

        Ties keep the stored order. Edges out of NextIteration nodes (control-flow back
        edges) are ignored.

        Raises:
            FormatError: the graph has a cycle outside control-flow frames.
        """
        order = topological_order(len(self.tensors), self.nodes)
        if order is None:
            raise FormatError(f"graph {self.name!r}: cycle outside control-flow frames")
        return order

    def lint(self) -> None:
        """Check the graph's invariants.

        Raises:
            FormatError: an index is out of range, a tensor is produced twice, a
                constant's data disagrees with its dtype/shape, there is a cycle, a
                name, attribute value or quantization axis does not fit the file's
                types (str as UTF-8, int64, float64, int32), or a tensor's dim_names
                are not str; or an entry is of the wrong type (a `tensors` entry that is
                not a Tensor, a `nodes` entry not a Node, a tensor's data not a numpy
                array, ...).
        """
        where = f"graph {self.name!r}"
        _check_entries(self, where)
        n_t = len(self.tensors)
        _check_str(self.name, f"{where}.name")
        _check_str(self.doc_string, f"{where}.doc_string")
        produced: dict[int, int] = {}
        for i in self.inputs:
            _check_index(i, n_t, f"{where}.inputs")
        for i in self.outputs:
            _check_index(i, n_t, f"{where}.outputs")
        for k, node in enumerate(self.nodes):
            for field in ("op_type", "name", "domain", "device", "doc_string"):
                _check_str(getattr(node, field), f"{where}.nodes[{k}].{field}")
            at = f"{where}.nodes[{k}] ({node.op_type} {node.name!r})"
            for i in node.inputs:
                if i != -1:
                    _check_index(i, n_t, f"{at}.inputs")
            for i in node.outputs:
                _check_index(i, n_t, f"{at}.outputs")
                if i in produced:
                    raise FormatError(f"{at}: tensor {self.tensors[i].name!r} is already "
                                      f"produced by node {produced[i]}")
                produced[i] = k
            for c in node.control_inputs:
                _check_index(c, len(self.nodes), f"{at}.control_inputs")
            for name, value in node.attributes.items():
                _check_str(name, f"{at}: attribute name {name!r}")
                _check_attribute(value, f"{at}: attribute {name!r}")
        for k, t in enumerate(self.tensors):
            _check_str(t.name, f"{where}.tensors[{k}].name")
            at = f"{where}.tensors[{k}] ({t.name!r})"
            _check_shape(t, at)
            if t.data is not None:
                if t.shape is None or tuple(t.data.shape) != t.shape:
                    raise FormatError(f"{at}: data shape {t.data.shape} != shape {t.shape}")
                if t.dtype is DType.STRING:
                    # elements (str, or UTF-8 bytes) are checked as the writer encodes them
                    if t.data.dtype.kind not in "OUS":
                        raise FormatError(f"{at}: data dtype {t.data.dtype} cannot hold "
                                          "STRING elements")
                elif t.data.dtype != t.dtype.numpy:
                    raise FormatError(f"{at}: data dtype {t.data.dtype} != {t.dtype.name}")
            elif t.kind is not TensorKind.ACTIVATION and t.kind is not TensorKind.VARIABLE:
                raise FormatError(f"{at}: constant without data")
            if k in produced and t.kind is TensorKind.CONSTANT:
                raise FormatError(f"{at}: constant is also produced by a node")
        self.topological_order()


def _check_entries(g: "Graph", where: str) -> None:
    """Refuse graph fields and entries of the wrong Python type, which the rest of
    `lint` (and the writer) would trip over with an AttributeError.

    Raises:
        FormatError: naming the field or entry and the type found.
    """
    for field in ("tensors", "nodes", "inputs", "outputs"):
        if not isinstance(getattr(g, field), (list, tuple)):
            raise FormatError(f"{where}.{field}: {type(getattr(g, field)).__name__} is "
                              "not a list")
    for k, t in enumerate(g.tensors):
        at = f"{where}.tensors[{k}]"
        if not isinstance(t, Tensor):
            raise FormatError(f"{at}: {type(t).__name__} is not a Tensor")
        if not isinstance(t.dtype, DType):
            raise FormatError(f"{at} ({t.name!r}).dtype: {type(t.dtype).__name__} is not "
                              "a DType")
        if not isinstance(t.kind, TensorKind):
            raise FormatError(f"{at} ({t.name!r}).kind: {type(t.kind).__name__} is not a "
                              "TensorKind")
        if t.shape is not None and not (isinstance(t.shape, (tuple, list)) and all(
                isinstance(d, _INTEGERS) and not isinstance(d, (bool, np.bool_))
                for d in t.shape)):
            raise FormatError(f"{at} ({t.name!r}).shape: {t.shape!r} is not a sequence of ints")
        if t.data is not None and not isinstance(t.data, np.ndarray):
            raise FormatError(f"{at} ({t.name!r}).data: {type(t.data).__name__} is not a "
                              "numpy array (Graph.add_constant converts a value)")
        if t.quantization is not None and not isinstance(t.quantization, Quantization):
            raise FormatError(f"{at} ({t.name!r}).quantization: "
                              f"{type(t.quantization).__name__} is not a Quantization")
    for k, node in enumerate(g.nodes):
        at = f"{where}.nodes[{k}]"
        if not isinstance(node, Node):
            raise FormatError(f"{at}: {type(node).__name__} is not a Node")
        for field in ("inputs", "outputs", "control_inputs"):
            if not isinstance(getattr(node, field), (list, tuple)):
                raise FormatError(f"{at} ({node.op_type!r}).{field}: "
                                  f"{type(getattr(node, field)).__name__} is not a list")
        if not isinstance(node.attributes, Mapping):
            raise FormatError(f"{at} ({node.op_type!r}).attributes: "
                              f"{type(node.attributes).__name__} is not a mapping")


# Shapes with more elements than this are refused by the reader; refuse them on write.
MAX_ELEMENTS = 1 << 62


def _check_shape(t: Tensor, where: str) -> None:
    """Refuse what the reader would refuse: dims below -1, unaddressable sizes,
    quantization parameters and dimension names that do not fit the tensor."""
    _check_dim_names(t, where)
    product = 1
    for d in t.shape or ():
        if d < -1:
            raise FormatError(f"{where}: invalid dimension {d} in shape {t.shape}")
        product *= max(d, 1)
        if product > MAX_ELEMENTS:
            raise FormatError(f"{where}: shape {t.shape} has more elements than can be "
                              "addressed")
    if t.quantization is not None:
        _check_int(t.quantization.axis, f"{where}.quantization.axis", _INT32_RANGE,
                   "int32")
        check_quantization(t.quantization, t.dtype, t.shape, where)


# The values a zero point of an integer tensor can take (what its elements can hold).
_ZERO_POINT_RANGE = {
    DType.INT2: (-2, 1), DType.UINT2: (0, 3), DType.INT4: (-8, 7), DType.UINT4: (0, 15),
    DType.INT8: (-2 ** 7, 2 ** 7 - 1), DType.UINT8: (0, 2 ** 8 - 1),
    DType.INT16: (-2 ** 15, 2 ** 15 - 1), DType.UINT16: (0, 2 ** 16 - 1),
    DType.INT32: (-2 ** 31, 2 ** 31 - 1), DType.UINT32: (0, 2 ** 32 - 1)}


def check_quantization(q: Quantization, dtype: DType, shape, where: str) -> None:
    """Refuse quantization parameters that cannot describe the tensor: scales that
    are not finite and positive, a zero-point count other than 0 or the scale count,
    zero points outside the range of an integer `dtype`, and with a known `shape`, a
    per-axis `axis` outside the rank or a scale count other than that axis' size.

    Raises:
        FormatError: naming `where`.quantization and what is wrong.
    """
    at = f"{where}.quantization"
    n = len(q.scale)
    bad = ~(np.isfinite(q.scale) & (q.scale > 0))
    if bad.any():
        k = int(np.argmax(bad))
        raise FormatError(f"{at}.scale[{k}]: {q.scale[k]} is not a finite positive number")
    if len(q.zero_point) not in (0, n):
        raise FormatError(f"{at}: {n} scales but {len(q.zero_point)} zero points")
    bounds = _ZERO_POINT_RANGE.get(dtype)
    if len(q.zero_point) and bounds is not None:
        outside = (q.zero_point < bounds[0]) | (q.zero_point > bounds[1])
        if outside.any():
            k = int(np.argmax(outside))
            raise FormatError(f"{at}.zero_point[{k}]: {q.zero_point[k]} is outside "
                              f"{dtype.name}'s range [{bounds[0]}, {bounds[1]}]")
    if shape is None or n <= 1:
        return
    if not 0 <= q.axis < len(shape):
        raise FormatError(f"{at}.axis: {q.axis} out of range for rank {len(shape)}")
    if shape[q.axis] not in (-1, n):
        raise FormatError(f"{at}: {n} scales for axis {q.axis} of size {shape[q.axis]}")


def _check_dim_names(t: Tensor, where: str) -> None:
    """Refuse dimension names the writer cannot write: not a sequence of str, or a str
    UTF-8 cannot encode. (Names that no longer fit the shape, because shape inference
    later learned a dimension's size or rank, are dropped when written: see
    `fitting_dim_names`.)

    Raises:
        FormatError: naming `where`.dim_names (and the entry's index).
    """
    names = t.dim_names
    if names is None:
        return
    at = f"{where}.dim_names"
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise FormatError(f"{at}: {type(names).__name__} is not a sequence of str")
    for k, name in enumerate(names):
        _check_str(name, f"{at}[{k}]")


def fitting_dim_names(t: Tensor) -> tuple[str, ...] | None:
    """`t.dim_names` as far as they fit `t.shape`: None when there are none, the shape
    is unknown or of another rank; a dimension whose size is known loses its name
    (None when no name is left). What the writer stores. Never raises."""
    names, shape = t.dim_names, t.shape
    if names is None or shape is None or len(names) != len(shape):
        return None
    kept = tuple(name if d == -1 else "" for name, d in zip(names, shape))
    return kept if any(kept) else None


def _check_index(i: int, n: int, where: str) -> None:
    if not isinstance(i, (int, np.integer)):
        raise FormatError(f"{where}: index {i!r} is not an int")
    if not 0 <= i < n:
        raise FormatError(f"{where}: index {i} out of range (0..{n - 1})")


def subgraph_cycle(edges: Sequence[Iterable[int]]) -> tuple[int, int] | None:
    """Find a cycle among subgraph references: `edges[g]` lists the graphs whose
    indices graph g's attributes refer to. Returns the (graph, target) reference that
    closes the first cycle found, or None when the references form a DAG.

    Iterative depth-first search from each graph in index order, targets ascending
    (deterministic, no recursion limit).
    """
    n = len(edges)
    targets = [sorted(set(e)) for e in edges]
    state = [0] * n  # 0 new, 1 on the stack, 2 done
    for start in range(n):
        if state[start]:
            continue
        stack = [(start, iter(targets[start]))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state[nxt] == 1:
                return node, nxt
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, iter(targets[nxt])))
    return None


def topological_order(num_tensors: int, nodes: Sequence[Node]) -> list[int] | None:
    """Kahn's algorithm over nodes; returns None when there is a cycle.

    Data edges go from a tensor's producer to its consumers, control edges from a
    control input to its dependent; edges leaving NextIteration nodes are skipped.
    """
    producer = [-1] * num_tensors
    for n, node in enumerate(nodes):
        for t in node.outputs:
            if 0 <= t < num_tensors:
                producer[t] = n
    indegree = [0] * len(nodes)
    consumers: list[list[int]] = [[] for _ in nodes]
    for n, node in enumerate(nodes):
        deps = set()
        for t in node.inputs:
            if 0 <= t < num_tensors and producer[t] >= 0:
                deps.add(producer[t])
        deps.update(c for c in node.control_inputs if 0 <= c < len(nodes))
        for d in deps:
            if nodes[d].op_type in BACK_EDGE_OPS:
                continue
            indegree[n] += 1
            consumers[d].append(n)
    import heapq

    ready = [n for n in range(len(nodes)) if indegree[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        n = heapq.heappop(ready)
        order.append(n)
        for c in consumers[n]:
            indegree[c] -= 1
            if indegree[c] == 0:
                heapq.heappush(ready, c)
    return order if len(order) == len(nodes) else None


@dataclasses.dataclass(slots=True, eq=False)
class Signature:
    """A named entry point: input/output keys mapped to tensor indices of `graph`,
    and target nodes to run for their effects."""

    name: str
    inputs: dict[str, int] = dataclasses.field(default_factory=dict)
    outputs: dict[str, int] = dataclasses.field(default_factory=dict)
    targets: list[int] = dataclasses.field(default_factory=list)
    graph: int = 0

    def __eq__(self, other):
        if not isinstance(other, Signature):
            return NotImplemented
        return (self.name, self.inputs, self.outputs, self.targets, self.graph) == (
            other.name, other.inputs, other.outputs, other.targets, other.graph)


@dataclasses.dataclass(slots=True, eq=False)
class Model:
    """A whole `.og` file: graphs (0 is main), signatures, opsets, metadata.

    After `onegraph.load`, `path` names the file and `file_info` describes its layout.
    """

    graphs: list[Graph] = dataclasses.field(default_factory=list)
    signatures: dict[str, Signature] = dataclasses.field(default_factory=dict)
    opset_imports: dict[str, int] = dataclasses.field(default_factory=dict)
    metadata: dict[str, str] = dataclasses.field(default_factory=dict)
    producer: str = "onegraph"
    schema_version: tuple[int, int] = SCHEMA_VERSION
    path: str | None = None
    file_info: dict | None = None

    def __eq__(self, other):
        if not isinstance(other, Model):
            return NotImplemented
        return (self.all_graphs() == other.all_graphs()
                and self.signatures == other.signatures
                and self.opset_imports == other.opset_imports
                and self.metadata == other.metadata and self.producer == other.producer
                and tuple(self.schema_version) == tuple(other.schema_version))

    @property
    def graph(self) -> Graph:
        """The main graph (graph 0).

        Raises:
            FormatError: the model has no graph ("PATH: model has no graphs" for a
                model loaded from a file).
        """
        if not self.graphs:
            raise FormatError(f"{self.path}: model has no graphs" if self.path
                              else "model has no graphs")
        return self.graphs[0]

    def add_signature(self, name: str, inputs: Mapping[str, int | str] | None = None,
                      outputs: Mapping[str, int | str] | None = None,
                      targets: Iterable[int] = (), graph: int = 0) -> Signature:
        """Add (or replace) a named entry point; tensors by index or name.

        Raises:
            TypeError: `name` is not a str, `graph` not an int, `inputs`/`outputs` not
                mappings of key -> tensor index or name, or `targets` not node indices.
            FormatError: `graph` is out of range, or a tensor name is unknown.
        """
        if not isinstance(name, str):
            raise TypeError(f"add_signature: name must be a str, got {type(name).__name__}")
        where = f"signature {name!r}"
        if isinstance(graph, (bool, np.bool_)) or not isinstance(graph, (int, np.integer)):
            raise TypeError(f"{where}: graph must be a graph index (int), got "
                            f"{type(graph).__name__} {graph!r}")
        if not 0 <= graph < len(self.graphs):
            raise FormatError(f"{where}: graph {int(graph)} out of range (the model has "
                              f"{len(self.graphs)} graphs)")
        for field, value in (("inputs", inputs), ("outputs", outputs)):
            if value is not None and not isinstance(value, Mapping):
                raise TypeError(f"{where}: {field} must be a mapping of key -> tensor index "
                                f"or name, got {type(value).__name__}")
        if isinstance(targets, (str, bytes)) or not isinstance(targets, Iterable):
            raise TypeError(f"{where}: targets must be a sequence of node indices, got "
                            f"{type(targets).__name__}")
        targets = list(targets)
        for t in targets:
            if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)):
                raise TypeError(f"{where}: targets must be node indices (int), got "
                                f"{type(t).__name__} {t!r}")
        graph = int(graph)
        g = self.graphs[graph]
        sig = Signature(name, {k: g._index(v, False) for k, v in (inputs or {}).items()},
                        {k: g._index(v, False) for k, v in (outputs or {}).items()},
                        list(targets), graph)
        self.signatures[name] = sig
        return sig

    def all_graphs(self) -> list[Graph]:
        """`graphs` followed by every subgraph referenced from attributes (DFS order)."""
        out = list(self.graphs)
        seen = {id(g) for g in out}
        stack = list(reversed(out))
        while stack:
            g = stack.pop()
            # entries of the wrong type are skipped here; Graph.lint names them
            nodes = g.nodes if isinstance(g, Graph) and isinstance(g.nodes, (list, tuple)) \
                else ()
            for node in nodes:
                if not isinstance(node, Node):
                    continue
                for sub in node.subgraphs():
                    if id(sub) not in seen:
                        seen.add(id(sub))
                        out.append(sub)
                        stack.append(sub)
        return out

    def lint(self) -> None:
        """Lint every graph, the subgraph references, signatures, opsets, metadata and
        the schema version: whatever passes is saved as a file `load` accepts.

        Raises:
            FormatError: see `Graph.lint`; or a subgraph attribute refers to the main
                graph or subgraph references form a cycle; a signature names a missing
                tensor/node; a key (opset domain, metadata or signature key) is not a
                str; an opset version is outside int64; the schema's major version is
                not `SCHEMA_VERSION[0]` or its minor version is outside uint16.
        """
        if not isinstance(self.graphs, (list, tuple)):
            raise FormatError(f"graphs: {type(self.graphs).__name__} is not a list")
        for k, g in enumerate(self.graphs):
            if not isinstance(g, Graph):
                raise FormatError(f"graphs[{k}]: {type(g).__name__} is not a Graph")
        for field in ("signatures", "opset_imports", "metadata"):
            if not isinstance(getattr(self, field), Mapping):
                raise FormatError(f"{field}: {type(getattr(self, field)).__name__} is not "
                                  "a mapping")
        for key, sig in self.signatures.items():
            if not isinstance(sig, Signature):
                raise FormatError(f"signatures[{key!r}]: {type(sig).__name__} is not a "
                                  "Signature")
        try:
            version = tuple(self.schema_version)
        except TypeError:
            version = ()
        if len(version) != 2:
            raise FormatError(f"schema_version: {self.schema_version!r} is not "
                              "(major, minor)")
        if version[0] != SCHEMA_VERSION[0]:
            raise FormatError(f"schema_version.major: {version[0]!r} is not "
                              f"{SCHEMA_VERSION[0]}, the only major version readers of this "
                              "version understand")
        _check_int(version[1], "schema_version.minor", _UINT16_RANGE, "uint16")
        _check_str(self.producer, "producer")
        for domain, opset in self.opset_imports.items():
            _check_str(domain, f"opset_imports key {domain!r}")
            _check_int(opset, f"opset_imports[{domain!r}].version")
        for key, value in self.metadata.items():
            _check_str(key, f"metadata key {key!r}")
            _check_str(str(value), f"metadata[{key!r}]")  # stored as str(value)
        graphs = self.all_graphs()
        for g in graphs:
            g.lint()
        main = self.graphs[0] if self.graphs else None
        index = {id(g): i for i, g in enumerate(graphs)}
        edges = []
        for g in graphs:
            targets = []
            for node in g.nodes:
                subs = node.subgraphs()
                if any(sub is main for sub in subs):
                    name = next(n for n, v in node.attributes.items() if v is main or (
                        isinstance(v, (list, tuple)) and any(x is main for x in v)))
                    raise FormatError(f"graph {g.name!r}: attribute {name!r} of node "
                                      f"{node.name!r} refers to the main graph")
                targets.extend(index[id(sub)] for sub in subs)
            edges.append(targets)
        cycle = subgraph_cycle(edges)
        if cycle is not None:
            raise FormatError(f"graph {graphs[cycle[0]].name!r}: subgraph references form a "
                              f"cycle through graph {graphs[cycle[1]].name!r}")
        for name, sig in self.signatures.items():
            _check_str(name, f"signatures key {name!r}")
            _check_index(sig.graph, len(self.graphs), f"signatures[{name!r}].graph")
            g = self.graphs[sig.graph]
            for field in ("inputs", "outputs"):
                for key, t in getattr(sig, field).items():
                    _check_str(key, f"signatures[{name!r}].{field} key {key!r}")
                    _check_index(t, len(g.tensors), f"signatures[{name!r}][{key!r}]")
            for n in sig.targets:
                _check_index(n, len(g.nodes), f"signatures[{name!r}].targets")
