"""Hypothesis strategies for random valid onegraph models (`onegraph.format.Model`).

`models()` draws whole models: every dtype (schema 1.1's float8/int4/int2/float4 too, as
ml_dtypes arrays or, without ml_dtypes, raw uint8 storage), constant / variable / activation
tensors (activations with unknown dims and unknown rank), every attribute kind including
subgraphs, per-tensor and per-axis quantization, signatures with targets, metadata, opset
imports and optional NextIteration back edges. Nodes only reference existing tensors, each
tensor has at most one producer and the graph is acyclic apart from back edges; subgraphs
are built bottom-up, so graph references form a DAG that never points at the main graph.
Everything drawn passes `Model.lint()` and the reader's checks, so `load(save(m)) == m` must
hold for each.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from onegraph.format import (AttrType, DType, Graph, Model, Node, Quantization, Signature,
                             Tensor, TensorKind, TypedList)

DATA_DTYPES = [d for d in DType if d is not DType.UNDEFINED]
# Schema 1.1's low-precision types (one byte per element in files). With ml_dtypes they
# are ml_dtypes arrays; without it, raw uint8 storage, which still round-trips for
# tensors but is refused as an attribute value (it would be re-saved as UINT8).
LOW_PRECISION = [d for d in DType if d >= DType.FLOAT8E4M3FN]
# Bits each sub-byte type uses; ml_dtypes writes the rest of the byte as zero.
SUB_BYTE_BITS = {DType.INT4: 4, DType.UINT4: 4, DType.FLOAT4E2M1: 4, DType.INT2: 2,
                 DType.UINT2: 2}
ATTRIBUTE_DTYPES = [d for d in DATA_DTYPES if not d.raw_storage]
INT64 = st.integers(-(2**63), 2**63 - 1)
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
# any Unicode except surrogates (which UTF-8 cannot encode), non-ASCII included
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
NAMES = st.one_of(st.text("abcxyz_0123", min_size=1, max_size=6), TEXT)


def data_shapes(max_dims: int = 3, max_side: int = 3):
    """Fully known shapes of small tensors, scalars and empty tensors included."""
    return st.lists(st.integers(0, max_side), max_size=max_dims).map(tuple)


def activation_shapes():
    """Shapes of activations: unknown rank (None), or dims with -1 and large values."""
    dim = st.one_of(st.integers(-1, 8), st.just(-1), st.integers(2**20, 2**40))
    known = st.lists(dim, max_size=4).map(tuple).filter(
        lambda s: np.prod([max(d, 1) for d in s], dtype=object) <= 2**62)
    return st.one_of(st.none(), known)


@st.composite
def arrays(draw, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
    """An array of `dtype` and `shape`; floats get arbitrary bit patterns (nan, inf)."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype is DType.STRING:
        items = draw(st.lists(TEXT, min_size=n, max_size=n))
        out = np.empty(n, dtype=object)
        out[:] = items
        return out.reshape(shape)
    if dtype is DType.BOOL:
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                        dtype=np.bool_).reshape(shape)
    np_dtype = dtype.numpy
    raw = draw(st.binary(min_size=n * np_dtype.itemsize, max_size=n * np_dtype.itemsize))
    if dtype in SUB_BYTE_BITS and draw(st.integers(0, 3)):
        # mostly what ml_dtypes writes (high bits clear); sometimes any byte, which the
        # format stores and returns unchanged all the same
        raw = (np.frombuffer(raw, np.uint8) & ((1 << SUB_BYTE_BITS[dtype]) - 1)).tobytes()
    return np.frombuffer(raw, dtype=np_dtype).reshape(shape).copy()


# zero points an integer tensor's elements can hold (others are refused)
_ZERO_POINT_RANGE = {DType.INT8: (-128, 127), DType.UINT8: (0, 255), DType.INT4: (-8, 7),
                     DType.UINT4: (0, 15), DType.INT2: (-2, 1), DType.UINT2: (0, 3),
                     DType.INT16: (-2**15, 2**15 - 1), DType.UINT16: (0, 2**16 - 1),
                     DType.INT32: (-2**31, 2**31 - 1), DType.UINT32: (0, 2**32 - 1)}


@st.composite
def quantizations(draw, shape, dtype):
    """Per-tensor (one scale) or, for known ranks, per-axis params: one scale per
    index of the axis (2-4 for an unknown size); positive finite scales, zero points
    that fit an integer `dtype`."""
    axes = [k for k, d in enumerate(shape or ()) if d <= 4]  # -1 (unknown) included
    per_axis = bool(axes) and draw(st.booleans())
    axis = draw(st.sampled_from(axes)) if per_axis else draw(st.integers(-3, 3))
    n = 1
    if per_axis:
        n = shape[axis] if shape[axis] != -1 else draw(st.integers(2, 4))
    scale = draw(st.lists(st.floats(min_value=2.0 ** -126, max_value=2.0 ** 127, width=32),
                          min_size=n, max_size=n))
    low, high = _ZERO_POINT_RANGE.get(dtype, (-2**63, 2**63 - 1))
    zero_point = draw(st.one_of(st.just([]), st.lists(st.integers(low, high), min_size=n,
                                                      max_size=n)))
    return Quantization(np.array(scale, np.float32), np.array(zero_point, np.int64), axis)


@st.composite
def tensors(draw, name: str, kind: TensorKind) -> Tensor:
    """One tensor of the given kind; constants always carry data, variables usually."""
    dtype = draw(st.sampled_from(DATA_DTYPES))
    data = None
    if kind is TensorKind.ACTIVATION:
        shape = draw(activation_shapes())
        if draw(st.booleans()):
            dtype = draw(st.sampled_from(list(DType)))  # UNDEFINED too: not yet inferred
    else:
        shape = draw(data_shapes())
        if kind is TensorKind.CONSTANT or draw(st.integers(0, 4)):
            data = draw(arrays(dtype, shape))
    quant = draw(quantizations(shape, dtype)) if draw(st.integers(0, 3)) == 0 else None
    return Tensor(name, dtype, shape, kind, data, quant)


def attribute_values(subgraphs: list[Graph]):
    """Attribute values of every kind; GRAPH/GRAPHS pick from `subgraphs`."""
    options = [
        INT64,
        FLOATS,
        st.sampled_from([0.0, -0.0, float("nan"), float("inf"), float("-inf")]),
        TEXT,
        st.lists(INT64, min_size=1, max_size=4),
        st.lists(FLOATS, min_size=1, max_size=4),
        st.lists(TEXT, min_size=1, max_size=3),
        st.sampled_from([AttrType.INTS, AttrType.FLOATS, AttrType.STRINGS,
                         AttrType.GRAPHS]).map(lambda t: TypedList(t, [])),
        st.sampled_from(ATTRIBUTE_DTYPES).flatmap(
            lambda d: data_shapes(2).flatmap(lambda s: arrays(d, s))),
    ]
    if subgraphs:
        options.append(st.sampled_from(subgraphs))
        options.append(st.lists(st.sampled_from(subgraphs), min_size=1, max_size=3))
    return st.one_of(options)


@st.composite
def graphs(draw, subgraphs: list[Graph] = (), max_tensors: int = 8,
           max_nodes: int = 5) -> Graph:
    """A valid graph whose attributes may reference the graphs in `subgraphs`."""
    subgraphs = list(subgraphs)
    names = draw(st.lists(NAMES, unique=True, max_size=max_tensors))
    kinds = [draw(st.sampled_from(list(TensorKind))) for _ in names]
    g = Graph(draw(NAMES), doc_string=draw(TEXT))
    g.tensors = [draw(tensors(n, k)) for n, k in zip(names, kinds)]

    # Activations and variables may be produced by nodes; each gets at most one
    # producer. Nodes are generated in a topological order, then shuffled.
    producible = [i for i, t in enumerate(g.tensors) if t.kind is not TensorKind.CONSTANT]
    producible = draw(st.permutations(producible))
    n_produced = draw(st.integers(0, len(producible)))
    to_produce = list(producible[:n_produced])
    n_nodes = draw(st.integers(0, max_nodes))
    available = [i for i in range(len(g.tensors)) if i not in to_produce]
    nodes: list[Node] = []
    for k in range(n_nodes):
        n_out = draw(st.integers(0, min(2, len(to_produce))))
        outs, to_produce = to_produce[:n_out], to_produce[n_out:]
        choices = available + [-1] if available else [-1]
        ins = draw(st.lists(st.sampled_from(choices), max_size=3))
        ctrl = draw(st.lists(st.integers(0, k - 1), max_size=2, unique=True)) if k else []
        attrs = draw(st.dictionaries(NAMES, attribute_values(subgraphs), max_size=3))
        nodes.append(Node(draw(st.sampled_from(["Add", "MatMul", "Loop", "Custom", "If"])),
                          ins, outs, attrs, name=draw(TEXT), domain=draw(
                              st.sampled_from(["", "ai.onnx.ml", "com.example"])),
                          device=draw(st.sampled_from(["", "/cpu:0", "/gpu:1"])),
                          control_inputs=ctrl, doc_string=draw(TEXT)))
        available += outs
    # A control-flow frame: an earlier Merge reads what a later NextIteration makes.
    if to_produce and nodes and draw(st.booleans()):
        back = to_produce.pop()
        merge = draw(st.integers(0, len(nodes) - 1))
        nodes[merge].inputs.append(back)
        source = draw(st.sampled_from(available)) if available else -1
        nodes.append(Node("NextIteration", [source], [back], name="next"))
    order = draw(st.permutations(range(len(nodes))))
    new_index = {old: new for new, old in enumerate(order)}
    for node in nodes:
        node.control_inputs = [new_index[c] for c in node.control_inputs]
    g.nodes = [nodes[old] for old in order]

    n_t = len(g.tensors)
    activations = [i for i, t in enumerate(g.tensors)
                   if t.kind is TensorKind.ACTIVATION and i in available]
    g.inputs = draw(st.lists(st.sampled_from(activations), max_size=3)) if activations else []
    g.outputs = draw(st.lists(st.integers(0, n_t - 1), max_size=3)) if n_t else []
    return g


@st.composite
def models(draw, max_subgraphs: int = 3, max_tensors: int = 8, max_nodes: int = 5) -> Model:
    """A random valid Model: subgraphs, signatures, opsets, metadata."""
    pool: list[Graph] = []
    for _ in range(draw(st.integers(0, max_subgraphs))):
        # a subgraph may itself use earlier subgraphs (nested control flow)
        pool.append(draw(graphs(pool, max_tensors=4, max_nodes=3)))
    main = draw(graphs(pool, max_tensors=max_tensors, max_nodes=max_nodes))
    extra = draw(st.lists(st.sampled_from(pool), unique_by=id, max_size=2)) if pool else []
    model = Model(graphs=[main] + extra)
    model.producer = draw(st.one_of(st.just("onegraph"), TEXT))
    model.opset_imports = draw(st.dictionaries(
        st.sampled_from(["", "ai.onnx.ml", "com.microsoft", "ünïcode"]), INT64, max_size=3))
    model.metadata = draw(st.dictionaries(TEXT, TEXT, max_size=3))
    model.schema_version = (1, draw(st.sampled_from([0, 0, 1, 7, 65535])))
    for name in draw(st.lists(TEXT, unique=True, max_size=3)):
        gi = draw(st.integers(0, len(model.graphs) - 1))
        g = model.graphs[gi]
        n_t, n_n = len(g.tensors), len(g.nodes)
        keys = st.dictionaries(TEXT, st.integers(0, n_t - 1), max_size=3) if n_t else \
            st.just({})
        targets = st.lists(st.integers(0, n_n - 1), max_size=2) if n_n else st.just([])
        model.signatures[name] = Signature(name, draw(keys), draw(keys), draw(targets), gi)
    return model
