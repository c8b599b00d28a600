"""The nested element structures of og.data (train/data.py) and the functions its map,
filter and flat_map trace: flattening and packing tuples / dicts of components, the
components' dtypes and static shapes, values made arrays, and a traced function run
per element in a Session of its own."""

from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from ..errors import OneGraphError
from ..format import DType
from . import graph as _g
from .graph import Graph, Tensor
from .sparse_tensor import SparseTensor, SparseTensorValue
from .tensor_shape import TensorShape


# --- nested structures ------------------------------------------------------------------

def _flatten(struct) -> list:
    """The leaves of a nested tuple/dict structure (dicts by sorted key, as TF's nest);
    a SparseTensorValue is a leaf (a sparse component's value)."""
    if isinstance(struct, tuple) and not isinstance(struct, SparseTensorValue):
        return [leaf for item in struct for leaf in _flatten(item)]
    if isinstance(struct, dict):
        return [leaf for key in sorted(struct) for leaf in _flatten(struct[key])]
    return [struct]


def _pack(template, leaves: list):
    """`template`'s structure with its leaves replaced by `leaves`, in order."""
    it = iter(leaves)

    def build(t):
        if isinstance(t, tuple) and not isinstance(t, SparseTensorValue):
            items = [build(x) for x in t]
            return type(t)(*items) if hasattr(t, "_fields") else tuple(items)
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        return next(it)
    return build(template)


def _flatten_like(template, value, what: str) -> list:
    """The parts of `value` at the leaves of `template`'s structure (a leaf of the
    template takes the whole sub-value there: a shape list or TensorShape stays whole).

    Raises:
        TypeError: value's structure differs from template's where template nests.
    """
    if isinstance(template, tuple):
        if not isinstance(value, (tuple, list)) or isinstance(value, TensorShape) or len(
                value) != len(template):
            raise TypeError(f"{what}: expected the structure {template!r:.80}, got "
                            f"{value!r:.80}")
        return [p for t, v in zip(template, value) for p in _flatten_like(t, v, what)]
    if isinstance(template, dict):
        if not isinstance(value, dict) or sorted(value) != sorted(template):
            raise TypeError(f"{what}: expected a dict with keys {sorted(template)}, got "
                            f"{value!r:.80}")
        return [p for k in sorted(template) for p in _flatten_like(template[k], value[k], what)]
    return [value]


def _same_structure(a, b) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same_structure(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b)
                and all(_same_structure(a[k], b[k]) for k in a))
    return True


class _Component:
    """One component of an element: its DType and static shape (None: unknown rank);
    a sparse one is a SparseTensor of that values dtype and dense shape, whose value
    in an element is a SparseTensorValue (and three tensors in a graph). A window one
    (Dataset.window) is a dataset of such values: a list of them in an element, a
    Dataset in the functions of flat_map and interleave, nothing in a graph."""

    __slots__ = ("dtype", "shape", "sparse", "window")

    def __init__(self, dtype: DType, shape, sparse: bool = False, window: bool = False):
        self.dtype, self.shape = dtype, None if shape is None else tuple(shape)
        self.sparse, self.window = sparse, window

    def like(self, shape) -> "_Component":
        """The same kind and dtype with another shape."""
        return _Component(self.dtype, shape, self.sparse, self.window)

    def unwindowed(self) -> "_Component":
        """The component of a window's elements."""
        return _Component(self.dtype, self.shape, self.sparse)


def no_windows(comps: list, what: str) -> None:
    """Refuse window components where values are needed.

    Raises:
        TypeError: a component is a window's dataset.
    """
    if any(c.window for c in comps):
        raise TypeError(f"{what}: the elements hold windows (datasets); turn each into "
                        "values with flat_map or interleave first, e.g. "
                        ".flat_map(lambda w: w.batch(size))")


def _raw(comps: list) -> list:
    """The dense components that carry `comps` through graph ops: a sparse one is its
    indices (int64 [N, rank]), values ([N]) and dense_shape (int64 [rank])."""
    out = []
    for c in comps:
        if not c.sparse:
            out.append(c)
            continue
        rank = None if c.shape is None else len(c.shape)
        out += [_Component(DType.INT64, (None, rank)), _Component(c.dtype, (None,)),
                _Component(DType.INT64, (rank,))]
    return out


def _expand(element: list, comps: list) -> list:
    """An element's values as the arrays of _raw(comps)."""
    out = []
    for value, c in zip(element, comps):
        out.extend(value if c.sparse else (value,))
    return out


def _collapse(arrays: list, comps: list) -> list:
    """The arrays of _raw(comps) as an element's values (SparseTensorValues for sparse
    components)."""
    out, it = [], iter(arrays)
    for c in comps:
        out.append(SparseTensorValue(next(it), next(it), next(it)) if c.sparse else next(it))
    return out


def _graph_leaves(tensors: list, comps: list) -> list:
    """The graph tensors of _raw(comps) as the leaves of an element: SparseTensors (with
    their components' static shapes) for sparse components."""
    out, it = [], iter(tensors)
    for c in comps:
        if not c.sparse:
            out.append(next(it))
            continue
        sparse = SparseTensor(next(it), next(it), next(it))
        sparse._shape_default = TensorShape(c.shape)
        out.append(sparse)
    return out


def _leaf_component(leaf) -> "_Component":
    """The component of a graph leaf (a Tensor or a SparseTensor)."""
    if isinstance(leaf, SparseTensor):
        shape = leaf.get_shape()
        return _Component(leaf.dtype, None if shape.ndims is None else tuple(shape.as_list()),
                          sparse=True)
    return _Component(leaf.dtype, _shape(leaf))


def _leaf_tensors(leaf) -> list:
    """The graph tensors carrying a leaf: a SparseTensor's three, or the tensor."""
    if isinstance(leaf, SparseTensor):
        return [leaf.indices, leaf.values, leaf.dense_shape]
    return [leaf]


def _components(output_types, output_shapes, what: str) -> list:
    """The components (dtype, static shape) of TF1's (output_types, output_shapes)
    structures, flattened; no shapes: every shape unknown.

    Raises:
        TypeError: a type names no dtype, or the shapes' structure differs from the
            types'.
    """
    try:
        dtypes = [_g.as_dtype(t) for t in _flatten(output_types)]
    except OneGraphError as e:
        raise TypeError(f"{what}: {e}") from None
    if output_shapes is None:
        return [_Component(d, None) for d in dtypes]
    raw = _flatten_like(output_types, output_shapes, f"{what}: output_shapes")
    return [_Component(d, _g._shape_tuple(s, f"{what}: output_shapes"))
            for d, s in zip(dtypes, raw)]


def _merge_shape(a, b):
    """The most specific shape both `a` and `b` have (None dims where they differ)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _compatible(declared, shape) -> bool:
    return declared is None or shape is None or (len(declared) == len(shape) and all(
        d is None or s is None or d == s for d, s in zip(declared, shape)))


# --- values -------------------------------------------------------------------------------

def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _as_array(value, dtype: DType | None = None) -> np.ndarray:
    """A component value as an array: Python numbers as TF converts them (int32 when
    they fit, float32), text as onegraph's strings (object arrays of str).

    Raises:
        TypeError: the value is not array-like or does not fit `dtype`.
    """
    python = not isinstance(value, (np.ndarray, np.generic))
    try:
        array = np.asarray(value)
    except Exception as e:
        raise TypeError(f"a dataset component must be array-like, got "
                        f"{type(value).__name__}: {e}") from None
    if array.dtype.kind in "US" or (array.dtype == object and array.size and all(
            isinstance(v, (str, bytes)) for v in array.reshape(-1))):
        out = np.empty(array.shape, object)
        out.reshape(-1)[:] = [_text(v) for v in array.reshape(-1).tolist()]
        array = out
    elif array.dtype == object:
        raise TypeError(f"a dataset component must be numbers or strings, got "
                        f"{type(value).__name__} {value!r:.60}")
    elif dtype is None and python:
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and (array.size == 0 or (
                array.min() >= -2 ** 31 and array.max() < 2 ** 31)):
            array = array.astype(np.int32)
    if dtype is not None and DType.from_numpy(array.dtype) != dtype:
        if dtype == DType.STRING or array.dtype == object:
            raise TypeError(f"a value of dtype {DType.from_numpy(array.dtype).short_name} "
                            f"where {dtype.short_name} was expected")
        cast = array.astype(dtype.numpy)
        if not np.array_equal(cast, array):
            raise TypeError(f"a value of dtype {array.dtype} does not fit {dtype.short_name}")
        array = cast
    return array


def _key(t: Tensor) -> tuple:
    return id(t.graph), t.tensor_index


_SKIPPED = "ignore_errors"  # a run's state key: {error key: log the skipped errors}


def skips_errors(run: "_Run", key, error: Exception) -> bool:
    """Whether an ignore_errors downstream skips the failing elements of the
    transformation with error key `key` in this run (logging `error` as a warning
    when it asked to)."""
    skipped = run.state.get(_SKIPPED, {})
    if key not in skipped:
        return False
    if skipped[key]:
        logging.getLogger("onegraph").warning("ignore_errors: skipped an element: %s", error)
    return True


def skip_errors_of(run: "_Run", dataset, log_warning: bool) -> None:
    """Make this run skip the failing elements of `dataset` and of every dataset it
    reads from (ignore_errors)."""
    keys = run.state.setdefault(_SKIPPED, {})
    todo = [dataset]
    while todo:
        d = todo.pop()
        if d._error_key is not None:
            keys[d._error_key] = keys.get(d._error_key, False) or log_warning
        todo.extend(d._parents)


class _Run:
    """One opening of a pipeline by an iterator: the values of the graph tensors its
    sources read, and the state its transformations keep (epoch counters, caches)."""

    def __init__(self, feeds: dict):
        self.feeds = feeds
        self.state: dict = {}

    def value(self, t: Tensor) -> np.ndarray:
        return self.feeds[_key(t)]


# --- traced functions ------------------------------------------------------------------------

def _call(fn: Callable, args):
    """fn on an element: a tuple is spread over the arguments (TF's map), others whole."""
    return fn(*args) if isinstance(args, tuple) else fn(args)


def _captured_error(what: str, e: Exception) -> ValueError:
    return ValueError(f"{what}: the function uses a tensor of another graph ({e}); a "
                      "dataset function may read tensors of the graph it is built in (and "
                      "of the functions around it) only")


class _Traced:
    """A function traced once on placeholders of a private graph, run per element.

    The function may read tensors of the graphs around it (the user's graph, or the
    function a dataset function is traced in), as TF's functions capture: each becomes
    a placeholder of the private graph, listed in `captured`, fed from the run's values
    (so the dataset built with the function reads them as its sources do).

    Raises (on construction):
        TypeError: fn is not callable.
        ValueError: fn reads a tensor of a graph that does not enclose it.
    """

    def __init__(self, fn: Callable, structure, what: str, want_dataset: bool = False):
        if not callable(fn):
            raise TypeError(f"{what}: the function must be callable, got "
                            f"{type(fn).__name__}")
        self.graph = g = Graph(what)
        g._enclosing = _g.get_default_graph()
        self.captured: list = []  # tensors of the graphs around, in first-use order
        self._fed: list = []  # their placeholders here
        g._capture = self._capture
        self._in_comps = _flatten(structure)
        self._plain = [c for c in self._in_comps if not c.window]
        self._slots: list = []  # where a run's feeds hold each window argument's values
        self._out_comps = None  # the output's components when it is not a dataset
        if not want_dataset:
            no_windows(self._in_comps, what)
        with g.as_default():
            self.args = [g.placeholder(c.dtype, c.shape, name=f"arg{k}")
                         for k, c in enumerate(_raw(self._plain))]
            plain = iter(_graph_leaves(self.args, self._plain))
            leaves = [self._window_argument(c) if c.window else next(plain)
                      for c in self._in_comps]
            try:
                out = _call(fn, _pack(structure, leaves))
                if want_dataset:
                    from .data import Dataset  # (data builds on this module)
                    if not isinstance(out, Dataset):
                        raise TypeError(f"{what}: the function must return a Dataset, got "
                                        f"{type(out).__name__}")
                    # the inner dataset reads its tensors under their own keys
                    inner = out._captured()
                    self.template, self.output_keys = out, [_key(t) for t in inner]
                    self.outputs = [g.convert(t) for t in inner]
                    return
                leaves = [v if isinstance(v, SparseTensor) else g.convert(v)
                          for v in _flatten(out)]
                self.outputs = [g.convert(t) for leaf in leaves for t in _leaf_tensors(leaf)]
            except OneGraphError as e:
                if "another graph" in str(e):
                    raise _captured_error(what, e) from e
                raise
        self._out_comps = [_leaf_component(leaf) for leaf in leaves]
        self.template = _pack(out, self._out_comps)
        self.output_keys = None

    def _capture(self, t: Tensor) -> Tensor:
        """The placeholder standing for t, a tensor of a graph around this one.

        Raises:
            OneGraphError: t's graph does not enclose this function's.
        """
        around = self.graph._enclosing
        while around is not None and around is not t.graph:
            around = around._enclosing
        if around is None:
            raise OneGraphError(f"tensor {t.name!r} belongs to another graph")
        for known, placeholder in zip(self.captured, self._fed):
            if _key(known) == _key(t):
                return placeholder
        with self.graph.as_default():
            placeholder = self.graph.placeholder(t.dtype, _shape(t),
                                                 name=f"captured{len(self._fed)}")
        self.captured.append(t)
        self._fed.append(placeholder)
        return placeholder

    def _window_argument(self, comp: "_Component"):
        """The Dataset a window argument is inside the function: its values are the
        run's feeds under a slot of its own."""
        from .data import Dataset  # (data builds on this module)
        slot = object()
        self._slots.append(slot)
        return Dataset(comp.unwindowed(),
                       lambda run: ([v] for v in run.feeds[slot]))

    def session(self):
        from .session import Session  # the Session module imports much of og
        return Session(graph=self.graph)

    def run(self, sess, element: list, run: "_Run | None" = None) -> list:
        """The outputs' values for one element (a list of arrays); the captured
        tensors' values come from `run`."""
        if not self.outputs:
            return []
        plain = [v for v, c in zip(element, self._in_comps) if not c.window]
        feed = dict(zip(self.args, _expand(plain, self._plain)))
        for t, placeholder in zip(self.captured, self._fed):
            feed[placeholder] = run.value(t)
        values = [np.asarray(v) for v in sess.run(list(self.outputs), feed_dict=feed)]
        return values if self._out_comps is None else _collapse(values, self._out_comps)

    def inner_run(self, sess, element: list, run: "_Run") -> "_Run":
        """The run of the dataset the function returned, for one element."""
        values = self.run(sess, element, run)
        feeds = dict(zip(self.output_keys, values))
        windows = [v for v, c in zip(element, self._in_comps) if c.window]
        feeds.update(zip(self._slots, windows))
        return _Run(feeds)


def _shape(t: Tensor):
    s = t.shape
    return None if s is None else tuple(s)


