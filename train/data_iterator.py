"""The iterators of og.data (train/data.py): one-shot, initializable and reinitializable
iterators over Dataset pipelines, as graph ops of ops/dataset.py whose running Python
iterator lives in each Session's state."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from ..format import DType
from ..ops import dataset as _ops
from ..ops.queue import encode_shapes
from . import graph as _g
from .data_structure import (_compatible, _Component, _components, _expand, _flatten,
                             _flatten_like, _graph_leaves, _key, _pack, _raw, _Run,
                             _same_structure, no_windows)
from .graph import Graph, Operation, Tensor
from .sparse_tensor import SparseTensor
from .tensor_shape import TensorShape

if TYPE_CHECKING:  # data imports this module at its end
    from .data import Dataset


# --- iterators ----------------------------------------------------------------------------------

class Iterator:
    """TF1's tf.data.Iterator: graph ops reading a pipeline, one Python iterator per
    session. Make one with make_one_shot_iterator, make_initializable_iterator or
    Iterator.from_structure (reinitializable: make_initializer(dataset))."""

    def __init__(self, graph: Graph, name: str, structure, token: str = "",
                 initializer: Operation | None = None, handle: Tensor | None = None):
        self._graph, self._name, self._structure = graph, name, structure
        self._token, self._initializer = token, initializer
        self._handle = handle  # the fed string handle of a feedable iterator

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None) -> "Iterator":
        """A feedable iterator: its get_next reads the element of whichever iterator
        the value of `string_handle` (a scalar string tensor, usually a placeholder
        fed with another iterator's string_handle() value) names in the session.

        Raises:
            TypeError: string_handle is not a string tensor, a type is unknown, or
                output_shapes' structure differs.
            ValueError: string_handle is not a scalar.
            (when run) ExecutionError: the handle names no iterator of the session, or
                the types or shapes do not fit the named iterator's.
        """
        if not isinstance(string_handle, Tensor) or string_handle.dtype != DType.STRING:
            raise TypeError(f"from_string_handle: string_handle must be a string tensor, "
                            f"got {string_handle!r:.80}")
        if string_handle.shape is not None and len(string_handle.shape) != 0:
            raise ValueError(f"from_string_handle: string_handle must be a scalar, got "
                             f"shape {list(string_handle.shape)}")
        structure = _declared(output_types, output_shapes, output_classes,
                              "Iterator.from_string_handle")
        g = string_handle.graph
        return Iterator(g, g.unique_name("FeedableIterator"), structure, handle=string_handle)

    def string_handle(self, name: str | None = None) -> Tensor:
        """A scalar string tensor whose value names this iterator in the session (feed
        it to a from_string_handle iterator's handle). A feedable iterator's is the
        handle it reads. Never raises beyond what building the op raises."""
        if self._handle is not None:
            return self._handle
        comps = _raw(_flatten(self._structure))
        ranks, dims = encode_shapes([c.shape for c in comps])
        with self._graph.as_default():
            return self._graph.op(
                "IteratorToStringHandle", [], {
                    "iterator": self._name, "token": self._token,
                    "output_types": [c.dtype.short_name for c in comps],
                    "output_ranks": ranks, "output_dims": dims},
                name=name or "IteratorToStringHandle", domain=_ops.DOMAIN,
                dtypes=[DType.STRING], shapes=[()])

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name: str | None = None,
                       output_classes=None) -> "Iterator":
        """An iterator of the given element structure, not bound to a dataset: run
        make_initializer(dataset) to (re)start it on one.

        output_classes marks SparseTensor components (TF1's output_classes).

        Raises:
            TypeError: a type is unknown, or output_shapes' or output_classes'
                structure differs.
        """
        structure = _declared(output_types, output_shapes, output_classes,
                              "Iterator.from_structure")
        g = _g.get_default_graph()
        return Iterator(g, shared_name or g.unique_name("Iterator"), structure)

    @property
    def output_types(self):
        """The element's structure of DTypes."""
        return _pack(self._structure, [c.dtype for c in _flatten(self._structure)])

    @property
    def output_shapes(self):
        """The element's structure of TensorShapes."""
        return _pack(self._structure, [TensorShape(c.shape)
                                       for c in _flatten(self._structure)])

    @property
    def output_classes(self):
        """The element's structure of component classes (Tensor or SparseTensor)."""
        return _pack(self._structure, [SparseTensor if c.sparse else Tensor
                                       for c in _flatten(self._structure)])

    @property
    def initializer(self) -> Operation:
        """The op (re)starting an initializable iterator.

        Raises:
            ValueError: this iterator has none (one-shot, or from_structure).
        """
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset: Dataset, name: str | None = None) -> Operation:
        """An op (re)starting this iterator on `dataset`.

        Raises:
            TypeError: dataset is not a Dataset, or its structure, types or shapes do
                not match this iterator's.
        """
        if self._handle is not None:
            raise TypeError("make_initializer: a from_string_handle iterator reads other "
                            "iterators; initialize those")
        if not _is_dataset(dataset):
            raise TypeError(f"make_initializer: expected a Dataset, got "
                            f"{type(dataset).__name__}")
        mine, theirs = _flatten(self._structure), dataset._components
        if not _same_structure(self._structure, dataset._structure) or len(mine) != len(
                theirs):
            raise TypeError("make_initializer: the dataset's element structure differs from "
                            "the iterator's")
        for a, b in zip(mine, theirs):
            if a.dtype != b.dtype or a.sparse != b.sparse:
                raise TypeError(f"make_initializer: expected types {self.output_types} but "
                                f"got dataset with types {dataset.output_types}")
            if not _compatible(a.shape, b.shape):
                raise TypeError(f"make_initializer: expected shapes {self.output_shapes} "
                                f"but got dataset with shapes {dataset.output_shapes}")
        return _initializer(self._graph, self._name, dataset, name)

    def get_next(self, name: str | None = None):
        """The next element as a structure of tensors with the static output shapes
        (the op raises OutOfRangeError at the end of the pipeline, ExecutionError
        before an initializable iterator is initialized).

        Raises:
            TypeError: name is not a str.
        """
        if self._handle is None:
            op, inputs = "IteratorGetNext", []
            attrs = {"iterator": self._name, "token": self._token}
        else:
            op, inputs, attrs = "IteratorGetNextFromStringHandle", [self._handle], {}
        return element_op(self._graph, op, inputs, attrs, self._structure,
                          name or "IteratorGetNext")


def _declared(output_types, output_shapes, output_classes, what: str):
    """The element structure TF1's (output_types, output_shapes, output_classes) declare
    (a SparseTensor class marks a sparse component).

    Raises:
        TypeError: a type is unknown, or the shapes' or classes' structure differs.
    """
    comps = _components(output_types, output_shapes, what)
    if output_classes is not None:
        classes = _flatten_like(output_types, output_classes, f"{what}: output_classes")
        comps = [_Component(c.dtype, c.shape, k is SparseTensor) for c, k in zip(comps, classes)]
    return _pack(output_types, comps)


def element_op(graph: Graph, op_type: str, inputs: list, attrs: dict, structure, name: str):
    """An op giving one element of `structure` (IteratorGetNext and its kin): its
    outputs carry the components (three per SparseTensor), returned as the element's
    structure of Tensors and SparseTensors with the components' static shapes."""
    comps = _flatten(structure)
    no_windows(comps, op_type)
    raw = _raw(comps)
    ranks, dims = encode_shapes([c.shape for c in raw])
    attrs = {**attrs, "output_types": [c.dtype.short_name for c in raw],
             "output_ranks": ranks, "output_dims": dims}
    with graph.as_default():
        outs = graph.op(op_type, inputs, attrs, num_outputs=len(raw), name=name,
                        domain=_ops.DOMAIN, dtypes=[c.dtype for c in raw],
                        shapes=[c.shape for c in raw])
    outs = outs if isinstance(outs, list) else [outs]
    return _pack(structure, _graph_leaves(outs, comps))


def _not_by_value(t: Tensor) -> str | None:
    """What makes t's value unknown while building (a placeholder, a variable, a
    stateful op such as a random draw, named), or None when it computes from constants
    alone, as TF's capture by value requires."""
    from ..ops import REGISTRY  # (the catalogue is built when first needed)

    seen, todo = set(), [t]
    while todo:
        x = todo.pop()
        if x is None or x.tensor_index in seen:
            continue
        seen.add(x.tensor_index)
        op = x.op
        if op is None:
            if x.graph.static_value(x) is None:
                return f"{x.name!r} (a placeholder or variable)"
            continue
        if REGISTRY.get(op.type, op.domain).stateful:
            return f"the stateful op {op.name!r} ({op.type})"
        todo.extend(op.inputs)
    return None


def _is_dataset(value) -> bool:
    from .data import Dataset  # (data imports this module at its end)
    return isinstance(value, Dataset)


def _register(graph: Graph, dataset: Dataset, fixed: dict | None = None) -> str:
    """Register the dataset's opener for as long as `graph` lives; return its token.
    The captured tensors' values come from the opening op's inputs, or from `fixed`
    (values known while building, for a one-shot iterator)."""
    no_windows(dataset._components, "an iterator")
    captured = [] if fixed is not None else dataset._captured()
    comps = dataset._components

    def opener(values):
        feeds = dict(fixed or {})
        feeds.update({_key(t): np.asarray(v) for t, v in zip(captured, values)})
        return (_expand(element, comps) for element in dataset._make(_Run(feeds)))
    token = _ops.register(opener)
    weakref.finalize(graph, _ops.unregister, token)
    return token


def _initializer(graph: Graph, iterator: str, dataset: Dataset, name) -> Operation:
    token = _register(graph, dataset)
    captured = dataset._captured()
    for t in captured:
        if t.graph is not graph:
            raise ValueError(f"the dataset reads tensor {t.name!r} of another graph than "
                             "the iterator's")
    return graph.op("MakeIterator", captured, {"iterator": iterator, "token": token},
                    name=name or "MakeIterator", domain=_ops.DOMAIN)


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """An iterator over `dataset` opened on its first get_next in each session (TF1's
    tf.data.make_one_shot_iterator).

    Raises:
        TypeError: dataset is not a Dataset.
        ValueError: the pipeline reads a graph tensor whose value is not known while
            building (a placeholder, a variable, a random draw: TF's "cannot capture by
            value"; use make_initializable_iterator). Constants and what folds from
            them are captured by value, as TF.
    """
    if not _is_dataset(dataset):
        raise TypeError(f"make_one_shot_iterator: expected a Dataset, got "
                        f"{type(dataset).__name__}")
    captured = dataset._captured()
    for t in captured:
        unknown = _not_by_value(t)
        if unknown is not None:
            raise ValueError(f"make_one_shot_iterator: the dataset reads graph tensor "
                             f"{t.name!r}, which depends on {unknown}, not known while "
                             "building; a one-shot iterator cannot capture it (use "
                             "make_initializable_iterator and feed it to the initializer)")
    fixed = {}
    if captured:
        from .session import Session  # (the session module imports much of og)
        with Session(graph=captured[0].graph) as sess:
            values = sess.run(captured)
        fixed = {_key(t): np.asarray(v) for t, v in zip(captured, values)}
    g = _g.get_default_graph()
    return Iterator(g, g.unique_name("OneShotIterator"), dataset._structure,
                    token=_register(g, dataset, fixed))


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """An iterator over `dataset` that its `initializer` op opens and restarts (the
    graph tensors the pipeline reads are the initializer's inputs: feed them there).

    Raises:
        TypeError: dataset is not a Dataset, or shared_name is not a str.
        ValueError: the pipeline reads tensors of several graphs.
    """
    if not _is_dataset(dataset):
        raise TypeError(f"make_initializable_iterator: expected a Dataset, got "
                        f"{type(dataset).__name__}")
    if shared_name is not None and not isinstance(shared_name, str):
        raise TypeError("make_initializable_iterator: shared_name must be a str")
    captured = dataset._captured()
    g = captured[0].graph if captured else _g.get_default_graph()
    name = shared_name or g.unique_name("Iterator")
    init = _initializer(g, name, dataset, None)
    return Iterator(g, name, dataset._structure, initializer=init)


def get_output_types(dataset_or_iterator):
    """TF1's tf.compat.v1.data.get_output_types. Raises AttributeError for others."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    """TF1's tf.compat.v1.data.get_output_shapes. Raises AttributeError for others."""
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    """TF1's tf.compat.v1.data.get_output_classes. Raises AttributeError for others."""
    return dataset_or_iterator.output_classes

