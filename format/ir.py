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
cycles outside control-flow frames, data consistent with dtype and shape).
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import FormatError
from .dtypes import DType

# 1.1: DType values 15-24 (float8, int4, int2, float4); 1.2: Tensor.containers;
# 1.3: map containers (MAP_INT64, MAP_STRING)
SCHEMA_VERSION = (1, 3)

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


def attr_type_of(value: Any, where: str = "") -> AttrType:
    """The AttrType a Python attribute value is stored as.

    Raises:
        FormatError: the value has no attribute representation.
    """
    if isinstance(value, TypedList):
        return value.attr_type
    if isinstance(value, (bool, int, np.integer)):
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
        if all(isinstance(v, (bool, int, np.integer)) for v in value):
            return AttrType.INTS
        if all(isinstance(v, (bool, int, float, np.integer, np.floating)) for v in value):
            return AttrType.FLOATS
    raise FormatError(f"{where}: attribute value of type {type(value).__name__} "
                      "cannot be stored")


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


@dataclasses.dataclass(slots=True, eq=False)
class Tensor:
    """A tensor of a graph: name, dtype, shape (-1 = unknown dim, None = unknown rank).

    Constants and variables carry `data` (a numpy array, usually a view of the
    memory-mapped file after `load`); activations do not. `containers` marks a value
    that wraps tensors, outermost first: (SEQUENCE,) is a sequence of tensors of this
    dtype and shape, (OPTIONAL, SEQUENCE) an optional sequence; () a plain tensor.
    """

    name: str
    dtype: DType
    shape: tuple[int, ...] | None
    kind: TensorKind = TensorKind.ACTIVATION
    data: np.ndarray | None = None
    quantization: Quantization | None = None
    containers: tuple[Container, ...] = ()

    def __post_init__(self):
        self.dtype = DType.parse(self.dtype)
        self.kind = TensorKind(self.kind)
        self.containers = tuple(Container(c) for c in self.containers)
        if self.shape is not None:
            self.shape = tuple(int(d) for d in self.shape)

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
                and self.containers == other.containers)

    @property
    def num_elements(self) -> int | None:
        if self.shape is None or any(d < 0 for d in self.shape):
            return None
        return int(np.prod(self.shape, dtype=object))


@dataclasses.dataclass(slots=True, eq=False)
class Node:
    """One operation: op type and domain, input/output tensor indices, attributes.

    An input index of -1 marks an omitted optional input. `control_inputs` are node
    indices that must run before this one.
    """

    op_type: str
    inputs: list[int]
    outputs: list[int]
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict)
    name: str = ""
    domain: str = ""
    device: str = ""
    control_inputs: list[int] = dataclasses.field(default_factory=list)

    def __eq__(self, other):
        if not isinstance(other, Node):
            return NotImplemented
        return (self.op_type == other.op_type and self.inputs == other.inputs
                and self.outputs == other.outputs and self.name == other.name
                and self.domain == other.domain and self.device == other.device
                and self.control_inputs == other.control_inputs
                and _attrs_equal(self.attributes, other.attributes))

    def subgraphs(self) -> list["Graph"]:
        """The graphs held in this node's attributes (If branches, Loop and Scan
        bodies), in attribute order. Never raises."""
        out = []
        for value in self.attributes.values():
            if isinstance(value, Graph):
                out.append(value)
            elif isinstance(value, (list, tuple)):
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
    """A dataflow graph: tensors, nodes, and the indices of its inputs and outputs."""

    name: str = "main"
    tensors: list[Tensor] = dataclasses.field(default_factory=list)
    nodes: list[Node] = dataclasses.field(default_factory=list)
    inputs: list[int] = dataclasses.field(default_factory=list)
    outputs: list[int] = dataclasses.field(default_factory=list)
    # name -> index, rebuilt lazily whenever the tensor list changed length (counted
    # separately: a file may repeat a name, so the dict can be shorter than the list)
    _name_index: dict[str, int] = dataclasses.field(default_factory=dict, init=False,
                                                     repr=False)
    _name_count: int = dataclasses.field(default=0, init=False, repr=False)
    # node names taken, for naming unnamed nodes; rebuilt when the node list changed
    # length other than through add_node
    _node_names: set = dataclasses.field(default_factory=set, init=False, repr=False)
    _node_count: int = dataclasses.field(default=-1, init=False, repr=False)

    def __eq__(self, other):
        if not isinstance(other, Graph):
            return NotImplemented
        return (self.name == other.name and self.tensors == other.tensors
                and self.nodes == other.nodes and self.inputs == other.inputs
                and self.outputs == other.outputs)

    # -- building ---------------------------------------------------------------------

    def add_tensor(self, name: str, dtype, shape, kind=TensorKind.ACTIVATION,
                   data: np.ndarray | None = None,
                   quantization: Quantization | None = None, containers=()) -> int:
        """Append a tensor and return its index (`containers`: see `Tensor`).

        Raises:
            FormatError: the name is already used in this graph.
        """
        if self.find_tensor(name) is not None:
            raise FormatError(f"graph {self.name!r}: tensor name {name!r} already used")
        self.tensors.append(Tensor(name, dtype, shape, kind, data, quantization, containers))
        self._name_index[name] = len(self.tensors) - 1
        self._name_count = len(self.tensors)
        return len(self.tensors) - 1

    def add_input(self, name: str, dtype, shape, containers=()) -> int:
        """Add an activation tensor and make it a graph input; returns its index."""
        index = self.add_tensor(name, dtype, shape, containers=containers)
        self.inputs.append(index)
        return index

    def add_constant(self, name: str, value, kind=TensorKind.CONSTANT) -> int:
        """Add a tensor holding `value` (converted with np.asarray); returns its index."""
        array = np.asarray(value)
        if array.dtype.kind in "US":
            array = array.astype(object)
        return self.add_tensor(name, DType.from_numpy(array.dtype), array.shape, kind, array)

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
        names = self._name_index
        if self._name_count != len(self.tensors):
            names.clear()
            names.update((t.name, i) for i, t in enumerate(self.tensors))
            self._name_count = len(self.tensors)
        return names.get(name)

    def tensor(self, key: int | str) -> Tensor:
        """The tensor with this index or name."""
        return self.tensors[self._index(key, create=False)]

    def _index(self, key: int | str, create: bool) -> int:
        if isinstance(key, (int, np.integer)):
            return int(key)
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
                constant's data disagrees with its dtype/shape, or there is a cycle.
        """
        n_t = len(self.tensors)
        where = f"graph {self.name!r}"
        produced: dict[int, int] = {}
        for i in self.inputs:
            _check_index(i, n_t, f"{where}.inputs")
        for i in self.outputs:
            _check_index(i, n_t, f"{where}.outputs")
        for k, node in enumerate(self.nodes):
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
        for k, t in enumerate(self.tensors):
            at = f"{where}.tensors[{k}] ({t.name!r})"
            _check_shape(t, at)
            if t.data is not None:
                if t.shape is None or tuple(t.data.shape) != t.shape:
                    raise FormatError(f"{at}: data shape {t.data.shape} != shape {t.shape}")
                if t.dtype is not DType.STRING and t.data.dtype != t.dtype.numpy:
                    raise FormatError(f"{at}: data dtype {t.data.dtype} != {t.dtype.name}")
            elif t.kind is not TensorKind.ACTIVATION and t.kind is not TensorKind.VARIABLE:
                raise FormatError(f"{at}: constant without data")
            if k in produced and t.kind is TensorKind.CONSTANT:
                raise FormatError(f"{at}: constant is also produced by a node")
        self.topological_order()


# Shapes with more elements than this are refused by the reader; refuse them on write.
MAX_ELEMENTS = 1 << 62


def _check_shape(t: Tensor, where: str) -> None:
    """Refuse what the reader would refuse: dims below -1, unaddressable sizes, and
    quantization parameters that do not fit the tensor."""
    product = 1
    for d in t.shape or ():
        if d < -1:
            raise FormatError(f"{where}: invalid dimension {d} in shape {t.shape}")
        product *= max(d, 1)
        if product > MAX_ELEMENTS:
            raise FormatError(f"{where}: shape {t.shape} has more elements than can be "
                              "addressed")
    q = t.quantization
    if q is not None and t.shape is not None:
        n = len(q.scale)
        if len(q.zero_point) not in (0, n):
            raise FormatError(f"{where}.quantization: {n} scales but "
                              f"{len(q.zero_point)} zero points")
        if n > 1 and not 0 <= q.axis < max(len(t.shape), 1):
            raise FormatError(f"{where}.quantization.axis: {q.axis} out of range for "
                              f"rank {len(t.shape)}")


def _check_index(i: int, n: int, where: str) -> None:
    if not 0 <= i < n:
        raise FormatError(f"{where}: index {i} out of range (0..{n - 1})")


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
            FormatError: the model has no graph.
        """
        if not self.graphs:
            raise FormatError("model has no graphs")
        return self.graphs[0]

    def add_signature(self, name: str, inputs: Mapping[str, int | str] | None = None,
                      outputs: Mapping[str, int | str] | None = None,
                      targets: Iterable[int] = (), graph: int = 0) -> Signature:
        """Add (or replace) a named entry point; tensors by index or name."""
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
            for node in g.nodes:
                for sub in node.subgraphs():
                    if id(sub) not in seen:
                        seen.add(id(sub))
                        out.append(sub)
                        stack.append(sub)
        return out

    def lint(self) -> None:
        """Lint every graph and the signatures.

        Raises:
            FormatError: see `Graph.lint`; or a signature names a missing tensor/node.
        """
        graphs = self.all_graphs()
        for g in graphs:
            g.lint()
        if self.graphs:
            main = self.graphs[0]
            for g in graphs:
                for node in g.nodes:
                    for name, value in node.attributes.items():
                        subs = value if isinstance(value, (list, tuple)) else [value]
                        if any(sub is main for sub in subs):
                            raise FormatError(f"graph {g.name!r}: attribute {name!r} of "
                                              f"node {node.name!r} refers to the main graph")
        for name, sig in self.signatures.items():
            _check_index(sig.graph, len(self.graphs), f"signatures[{name!r}].graph")
            g = self.graphs[sig.graph]
            for key, t in list(sig.inputs.items()) + list(sig.outputs.items()):
                _check_index(t, len(g.tensors), f"signatures[{name!r}][{key!r}]")
            for n in sig.targets:
                _check_index(n, len(g.nodes), f"signatures[{name!r}].targets")
