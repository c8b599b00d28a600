"""TF1's tf.data: Dataset pipelines and their iterators, as used in graph mode (og.data)::

    ds = Dataset.from_tensor_slices((x, y)).shuffle(100, seed=1).batch(32).repeat(2)
    xb, yb = make_one_shot_iterator(ds).get_next()   # OutOfRangeError at the end

A Dataset is a Python object describing a pipeline; its elements are nested structures
(tuples, dicts, single components) of numpy arrays. map / filter / flat_map trace their
function once on placeholders of a private Graph and run that graph per element with
a Session of its own; the function may read tensors of the graph the dataset is built
in (they become the dataset's inputs, as placeholders given to a source; TF's capture)
and of the functions around it. Iterators are graph
ops (ops/dataset.py): the pipeline is kept in a process-wide registry under a token the
ops hold, the running Python iterator in the Session's state. Graph tensors a source
reads (e.g. placeholders given to from_tensor_slices) are inputs of the iterator's
initializer, so their values are taken when it runs (TF1's initializable iterator fed
through feed_dict).

Differences from TF: string components are str (onegraph's strings), except the
records of TFRecordDataset, which are bytes; shuffle's draws are not TF's.
"""

from __future__ import annotations

from typing import Callable

import itertools

import numpy as np

from ..errors import ExecutionError, OneGraphError
from ..format import DType
from ..ops.record_io import raw_lines, read_records
from . import graph as _g
from .data_structure import (_as_array, _compatible, _Component, _components, _flatten,
                             _flatten_like, _key, _merge_shape, _pack, _same_structure,
                             _leaf_component, _leaf_tensors, _shape, _text, _Traced,
                             no_windows, skips_errors)
from . import data_sparse
from .graph import Tensor
from .sparse_tensor import SparseTensor, SparseTensorValue
from .record_compression import compression_name
from .tensor_shape import TensorShape

__all__ = ["Dataset", "Iterator", "TFRecordDataset", "TextLineDataset", "get_output_classes",
           "get_output_shapes", "get_output_types", "make_initializable_iterator",
           "make_one_shot_iterator", "experimental", "FixedLengthRecordDataset",
           "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

# TF's sentinels (tf.data.AUTOTUNE and tf.data.experimental.AUTOTUNE: let the runtime
# choose a parallelism or buffer size; the cardinalities of endless and unknown inputs)
AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

_INF = -1


# --- datasets ----------------------------------------------------------------------------------

class Dataset:
    """A pipeline of elements (TF1's tf.data.Dataset); build with its classmethods and
    transformations, read with an iterator."""

    def __init__(self, structure, make: Callable, parents=(), captured=()):
        self._structure = structure
        self._make = make
        self._parents = tuple(parents)
        self._own_captured = list(captured)
        # set by the transformations whose per-element failures ignore_errors skips: the
        # key a run's state lists them under (data_structure.skips_errors)
        self._error_key: object | None = None

    # -- properties --
    @property
    def output_types(self):
        """The element's structure of DTypes."""
        return _pack(self._structure, [c.dtype for c in self._components])

    @property
    def output_shapes(self):
        """The element's structure of TensorShapes (None dims where sizes vary)."""
        return _pack(self._structure, [TensorShape(c.shape) for c in self._components])

    @property
    def output_classes(self):
        """The element's structure of component classes (Tensor, SparseTensor, or
        Dataset for a window)."""
        return _pack(self._structure, [Dataset if c.window else SparseTensor if c.sparse
                                       else Tensor for c in self._components])

    @property
    def element_spec(self):
        """The element's structure of (DType, TensorShape) pairs."""
        return _pack(self._structure, [(c.dtype, TensorShape(c.shape))
                                       for c in self._components])

    @property
    def _components(self) -> list:
        return _flatten(self._structure)

    def _captured(self) -> list:
        """The graph tensors this pipeline reads (each once, in order)."""
        seen, out = set(), []
        for t in self._own_captured + [t for p in self._parents for t in p._captured()]:
            if _key(t) not in seen:
                seen.add(_key(t))
                out.append(t)
        return out

    def _derive(self, structure, make, parents=None, captured=()) -> "Dataset":
        return Dataset(structure, make, (self,) if parents is None else parents, captured)

    # -- sources --
    @staticmethod
    def _source(tensors, sliced: bool, what: str) -> "Dataset":
        if isinstance(tensors, Dataset):
            raise TypeError(f"{what}: got a Dataset; pass tensors or arrays")
        leaves = _flatten(tensors)
        if not leaves:
            raise ValueError(f"{what}: the structure has no components")
        values, comps, lengths = [], [], set()
        for leaf in leaves:
            sparse = isinstance(leaf, (SparseTensor, SparseTensorValue))
            if isinstance(leaf, SparseTensorValue):
                leaf = data_sparse.as_value(leaf)
                shape = tuple(int(d) for d in leaf.dense_shape)
                dtype = DType.from_numpy(_as_array(leaf.values).dtype)
                leaf = leaf._replace(values=_as_array(leaf.values))
            elif isinstance(leaf, (Tensor, SparseTensor)):
                shape = _leaf_component(leaf).shape
                dtype = leaf.dtype
            else:
                leaf = _as_array(leaf)
                shape, dtype = leaf.shape, DType.from_numpy(leaf.dtype)
            if sliced:
                if shape is not None and len(shape) == 0:
                    raise ValueError(f"{what}: a component is a scalar; slicing needs "
                                     "rank >= 1")
                if shape is not None and shape[0] is not None:
                    lengths.add(shape[0])
                shape = None if shape is None else shape[1:]
            values.append(leaf)
            comps.append(_Component(dtype, shape, sparse))
        if len(lengths) > 1:
            raise ValueError(f"{what}: the components differ in their first dim "
                             f"{sorted(lengths)}")
        captured = [t for v in values if isinstance(v, (Tensor, SparseTensor))
                    for t in _leaf_tensors(v)]

        def value_of(run, v):
            if isinstance(v, SparseTensor):
                return data_sparse.as_value([run.value(t) for t in _leaf_tensors(v)])
            return np.asarray(run.value(v)) if isinstance(v, Tensor) else v

        def make(run):
            arrays = [value_of(run, v) for v in values]
            if not sliced:
                yield [a if c.sparse else a.copy() for a, c in zip(arrays, comps)]
                return
            sizes = {data_sparse.rows(a) if c.sparse else a.shape[0] if a.ndim else None
                     for a, c in zip(arrays, comps)}
            if len(sizes) != 1 or None in sizes:
                raise ExecutionError(f"{what}: the components' first dims differ or a "
                                    f"component is a scalar: {sorted(map(str, sizes))}")
            count = sizes.pop()
            columns = [data_sparse.split(a) if c.sparse else
                       [a[i, ...].copy() for i in range(count)] for a, c in zip(arrays, comps)]
            for i in range(count):
                yield [column[i] for column in columns]
        return Dataset(_pack(tensors, comps), make, captured=captured)

    @staticmethod
    def from_tensor_slices(tensors) -> "Dataset":
        """The slices of `tensors` along their first dim (a structure of arrays, lists
        or graph tensors; tensors are read when the iterator is initialized).

        Raises:
            TypeError: a component is not array-like.
            ValueError: a component is a scalar, or the first dims differ.
        """
        return Dataset._source(tensors, True, "from_tensor_slices")

    @staticmethod
    def from_tensors(tensors) -> "Dataset":
        """One element: `tensors` (a structure of arrays, lists or graph tensors).

        Raises:
            TypeError: a component is not array-like.
            ValueError: the structure is empty.
        """
        return Dataset._source(tensors, False, "from_tensors")

    @staticmethod
    def range(*args) -> "Dataset":
        """int64 elements range(stop), range(start, stop) or range(start, stop, step).

        The bounds may be integer scalar tensors (read when the iterator opens).

        Raises:
            TypeError: an argument is not an integer, or not 1 to 3 arguments.
            ValueError: step is 0.
            (when read) ExecutionError: a step tensor is 0.
        """
        def bad(a) -> bool:
            if isinstance(a, Tensor):
                return np.dtype(a.dtype.numpy).kind not in "iu" or _shape(a) not in (None, ())
            return isinstance(a, bool) or not isinstance(a, (int, np.integer))
        if not 1 <= len(args) <= 3 or any(bad(a) for a in args):
            raise TypeError(f"Dataset.range takes 1 to 3 integers or integer scalar "
                            f"tensors, got {args!r:.80}")
        bounds = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
        if not isinstance(bounds[2], Tensor) and bounds[2] == 0:
            raise ValueError("Dataset.range: step must be a non-zero integer")

        def make(run):
            start, stop, step = (int(run.value(a)) if isinstance(a, Tensor) else int(a)
                                 for a in bounds)
            if step == 0:
                raise ExecutionError("Dataset.range: step must be a non-zero integer")
            for i in range(start, stop, step):
                yield [np.asarray(i, np.int64)]
        return Dataset(_Component(DType.INT64, ()), make,
                       captured=[a for a in bounds if isinstance(a, Tensor)])

    @staticmethod
    def from_generator(generator: Callable, output_types, output_shapes=None,
                       args=None) -> "Dataset":
        """Elements yielded by `generator(*args)` (called anew each time an iterator
        opens), converted to `output_types`, checked against `output_shapes`.

        Raises:
            TypeError: generator is not callable, a type is unknown, or the shapes'
                structure differs from the types'.
            (when read) ExecutionError: an element does not fit its type or shape.
        """
        if not callable(generator):
            raise TypeError(f"from_generator: generator must be callable, got "
                            f"{type(generator).__name__}")
        comps = _components(output_types, output_shapes, "from_generator")
        arguments = [] if args is None else [_as_array(a) for a in args]

        def make(run):
            for value in generator(*arguments):
                try:
                    leaves = _flatten_like(output_types, value, "from_generator")
                except TypeError as e:
                    raise ExecutionError(f"`generator` yielded an element that did not match "
                                        f"the expected structure: {e}") from None
                out = []
                for leaf, c in zip(leaves, comps):
                    try:
                        a = _as_array(leaf, c.dtype)
                    except TypeError as e:
                        raise ExecutionError(f"from_generator: `generator` yielded an "
                                            f"element that did not match the expected type: "
                                            f"{e}") from None
                    if not _compatible(c.shape, a.shape):
                        raise ExecutionError(f"from_generator: `generator` yielded an element"
                                            f" of shape {list(a.shape)} where an element of "
                                            f"shape {_text_shape(c.shape)} was expected")
                    out.append(a)
                yield out
        return Dataset(_pack(output_types, comps), make)

    @staticmethod
    def zip(datasets) -> "Dataset":
        """Elements combining the elements of a structure of datasets, to the shortest.

        Raises:
            TypeError: a leaf of `datasets` is not a Dataset.
        """
        sets = _flatten(datasets)
        if not sets or not all(isinstance(d, Dataset) for d in sets):
            raise TypeError("Dataset.zip: datasets must be a (nested) structure of Datasets")
        structure = _pack(datasets, [d._structure for d in sets])

        def make(run):
            its = [iter(d._make(run)) for d in sets]
            while True:
                out = []
                for it in its:
                    element = next(it, None)
                    if element is None:
                        return
                    out.extend(element)
                yield out
        return Dataset(structure, make, parents=sets)

    # -- transformations --
    def map(self, map_func: Callable, num_parallel_calls=None) -> "Dataset":
        """Elements map_func(element) (a tuple element is spread over its arguments);
        the function is traced once on og tensors.

        Raises:
            TypeError: map_func is not callable.
            ValueError: map_func captures a tensor of another graph.
        """
        fn = _Traced(map_func, self._structure, "Dataset.map")
        key = object()

        def make(run):
            for _, value in self._traced_results(fn, run, key):
                yield value
        out = self._derive(fn.template, make, captured=fn.captured)
        out._error_key = key
        return out

    def _traced_results(self, fn: _Traced, run, key):
        """(element, fn's outputs for it) per element, in a Session of fn's own; an
        element whose computation fails is skipped when an ignore_errors downstream
        asked for it (error key `key`)."""
        sess = fn.session()
        try:
            for element in self._make(run):
                try:
                    value = fn.run(sess, element, run)
                except OneGraphError as e:
                    if skips_errors(run, key, e):
                        continue
                    raise
                yield element, value
        finally:
            sess.close()

    def filter(self, predicate: Callable) -> "Dataset":
        """The elements for which predicate(element) (a scalar bool tensor) is true.

        Raises:
            TypeError: predicate is not callable or does not return a bool scalar.
            ValueError: predicate captures a tensor of another graph.
        """
        fn = _Traced(predicate, self._structure, "Dataset.filter")
        outs = _flatten(fn.template)
        if len(outs) != 1 or outs[0].dtype != DType.BOOL or outs[0].shape not in (None, ()):
            raise TypeError("Dataset.filter: predicate must return a scalar bool tensor")

        key = object()

        def make(run):
            for element, value in self._traced_results(fn, run, key):
                if bool(value[0]):
                    yield element
        out = self._derive(self._structure, make, captured=fn.captured)
        out._error_key = key
        return out

    def flat_map(self, map_func: Callable) -> "Dataset":
        """The elements of the datasets map_func(element) returns, in order.

        Raises:
            TypeError: map_func is not callable or does not return a Dataset.
            ValueError: map_func captures a tensor of another graph.
        """
        fn = _Traced(map_func, self._structure, "Dataset.flat_map", want_dataset=True)
        inner = fn.template

        def make(run):
            sess = fn.session()
            try:
                for element in self._make(run):
                    yield from inner._make(fn.inner_run(sess, element, run))
            finally:
                sess.close()
        return self._derive(inner._structure, make, captured=fn.captured)

    def interleave(self, map_func: Callable, cycle_length=None, block_length=None,
                   num_parallel_calls=None) -> "Dataset":
        """The elements of the datasets map_func(element) returns, interleaved in TF's
        deterministic order (train/data_more.py; cycle_length None: one per CPU).

        Raises:
            TypeError: map_func is not callable or does not return a Dataset.
            ValueError: a length is not a positive integer, or map_func captures a
                tensor of another graph.
        """
        from .data_more import interleave
        return interleave(self, map_func, cycle_length, block_length, num_parallel_calls)

    def shard(self, num_shards: int, index: int) -> "Dataset":
        """Every num_shards-th element from element `index` (train/data_more.py).

        Raises:
            TypeError: an argument is not an integer.
            ValueError: num_shards <= 0 or index not in [0, num_shards).
        """
        from .data_more import shard
        return shard(self, num_shards, index)

    def window(self, size, shift=None, stride=1, drop_remainder=False) -> "Dataset":
        """Elements that are windows (datasets) of this one's, for flat_map or
        interleave (train/data_more.py).

        Raises:
            ValueError: size, shift or stride is not a positive integer.
            TypeError: the elements already hold windows.
        """
        from .data_more import window
        return window(self, size, shift, stride, drop_remainder)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None) -> "Dataset":
        """The names of the files matching the glob pattern(s), sorted unless shuffled
        (shuffle None: True) (train/data_more.py).

        Raises:
            TypeError: file_pattern is not a pattern or a list of them.
            (when read) ExecutionError: no file matches.
        """
        from .data_more import list_files
        return list_files(file_pattern, shuffle, seed)

    def batch(self, batch_size: int, drop_remainder: bool = False) -> "Dataset":
        """Elements stacking `batch_size` consecutive elements (the last may be smaller
        unless drop_remainder).

        Raises:
            ValueError: batch_size is not a positive integer.
        """
        size = _positive(batch_size, "batch", "batch_size")
        lead = size if drop_remainder else None
        comps = self._components
        no_windows(comps, "batch")
        structure = _pack(self._structure, [
            c.like(None if c.shape is None else (lead,) + c.shape) for c in comps])

        def make(run):
            for group in self._groups(run, size, drop_remainder):
                try:
                    yield [data_sparse.batch(parts) if c.sparse else np.stack(parts)
                           for parts, c in zip(zip(*group), comps)]
                except ValueError as e:
                    raise ExecutionError(f"batch: cannot batch elements of different shapes "
                                        f"({e}); use padded_batch") from None
        return self._derive(structure, make)

    def _groups(self, run, size: int, drop_remainder: bool):
        group = []
        for element in self._make(run):
            group.append(element)
            if len(group) == size:
                yield group
                group = []
        if group and not drop_remainder:
            yield group

    def padded_batch(self, batch_size: int, padded_shapes=None, padding_values=None,
                     drop_remainder: bool = False) -> "Dataset":
        """batch, padding each component to `padded_shapes` (None or -1 dims: to the
        batch's longest; padded_shapes None: every dim so) with `padding_values`
        (default 0, "" for strings).

        Raises:
            ValueError: batch_size is not positive, or padded_shapes / padding_values do
                not fit the element's structure or rank.
            TypeError: a component is a SparseTensor (TF's message).
            (when read) ExecutionError: an element is larger than its padded shape.
        """
        size = _positive(batch_size, "padded_batch", "batch_size")
        comps = self._components
        no_windows(comps, "padded_batch")
        if any(c.sparse for c in comps):
            raise TypeError("Batching of padded sparse tensors is not currently supported")
        if padded_shapes is None:
            shapes = [c.shape for c in comps]
            if any(s is None for s in shapes):
                raise ValueError("padded_batch: padded_shapes is needed for components of "
                                 "unknown rank")
            shapes = [tuple(None for _ in s) for s in shapes]
        else:
            try:
                raw = _flatten_like(self._structure, padded_shapes, "padded_batch")
            except TypeError as e:
                raise ValueError(f"padded_shapes must have the element's structure: {e}") \
                    from None
            shapes = [_g._shape_tuple(s, "padded_batch: padded_shapes") for s in raw]
            for s, c in zip(shapes, comps):
                if s is None or not _compatible(tuple(None for _ in s), c.shape) or (
                        c.shape is not None and any(
                            p is not None and e is not None and e > p
                            for p, e in zip(s, c.shape))):
                    raise ValueError(f"padded_batch: padded shape {_text_shape(s)} does not "
                                     f"fit the component's shape {_text_shape(c.shape)}")
        if padding_values is None:
            pads = [np.asarray("" if c.dtype == DType.STRING else 0, c.dtype.numpy)
                    for c in comps]
        else:
            if isinstance(padding_values, (tuple, dict)):
                try:
                    raw = _flatten_like(self._structure, padding_values, "padded_batch")
                except TypeError as e:
                    raise ValueError(f"padding_values must have the element's structure: "
                                     f"{e}") from None
            else:
                raw = [padding_values] * len(comps)
            pads = []
            for v, c in zip(raw, comps):
                v = _as_array(v) if not isinstance(v, Tensor) else None
                if v is None or v.ndim != 0:
                    raise ValueError("padded_batch: padding_values must be scalar values")
                try:
                    pads.append(_as_array(v, c.dtype))
                except TypeError as e:
                    raise TypeError(f"padded_batch: padding_values: {e}") from None
        lead = size if drop_remainder else None
        out_shapes = []
        for s, c in zip(shapes, comps):
            if padded_shapes is None:
                out_shapes.append((lead,) + c.shape)
            else:
                out_shapes.append((lead,) + tuple(
                    p if p is not None else None for p in s))
        structure = _pack(self._structure, [_Component(c.dtype, s)
                                            for c, s in zip(comps, out_shapes)])

        def pad(parts, shape, value):
            ranks = {p.ndim for p in parts}
            if ranks != {len(shape)}:
                raise ExecutionError(f"padded_batch: elements of rank {sorted(ranks)} where "
                                    f"rank {len(shape)} was expected")
            target = [d if d is not None else max(p.shape[k] for p in parts)
                      for k, d in enumerate(shape)]
            out = np.full([len(parts)] + target, value, dtype=value.dtype)
            for i, p in enumerate(parts):
                if any(a > b for a, b in zip(p.shape, target)):
                    raise ExecutionError(f"padded_batch: an element of shape {list(p.shape)} "
                                        f"is larger than the padded shape {target}")
                out[(i,) + tuple(slice(0, d) for d in p.shape)] = p
            return out

        def make(run):
            for group in self._groups(run, size, drop_remainder):
                yield [pad(list(parts), s, v) for parts, s, v in zip(zip(*group), shapes, pads)]
        return self._derive(structure, make)

    def shuffle(self, buffer_size: int, seed=None,
                reshuffle_each_iteration: bool = True) -> "Dataset":
        """The elements in random order: TF's buffer algorithm (fill a buffer of
        buffer_size, emit a random one, put the next input in its place). Each epoch
        (each pass a repeat makes) draws anew unless reshuffle_each_iteration is False.

        Raises:
            ValueError: buffer_size is not a positive integer.
            TypeError / ValueError: seed is not None or an int.
        """
        size = _positive(buffer_size, "shuffle", "buffer_size")
        seed = _g.check_seed(seed, "shuffle")

        def make(run):
            epoch = run.state.get(("shuffle", id(self)), 0)
            run.state[("shuffle", id(self))] = epoch + 1
            if seed is None:
                key = ("shuffle_seed", id(self))
                run.state.setdefault(key, int(np.random.default_rng().integers(2 ** 62)))
                base = run.state[key]
            else:
                base = seed
            rng = np.random.default_rng([base, epoch if reshuffle_each_iteration else 0])
            buffer, source = [], iter(self._make(run))
            for element in source:
                buffer.append(element)
                if len(buffer) == size:
                    break
            for element in source:
                i = int(rng.integers(len(buffer)))
                yield buffer[i]
                buffer[i] = element
            while buffer:
                i = int(rng.integers(len(buffer)))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()
        return self._derive(self._structure, make)

    def repeat(self, count=None) -> "Dataset":
        """The elements `count` times (None or -1: forever; an empty input ends).

        Raises:
            TypeError: count is not None or an integer.
        """
        count = _count(count, "repeat")

        def make(run):
            n = 0
            while count == _INF or n < count:
                empty = True
                for element in self._make(run):
                    empty = False
                    yield element
                n += 1
                if empty:
                    return
        return self._derive(self._structure, make)

    def take(self, count) -> "Dataset":
        """The first `count` elements (-1: all).

        Raises:
            TypeError: count is not an integer.
        """
        count = _count(count, "take", none_ok=False)

        def make(run):
            return itertools.islice(self._make(run), None if count == _INF else count)
        return self._derive(self._structure, make)

    def skip(self, count) -> "Dataset":
        """The elements after the first `count` (-1: none).

        Raises:
            TypeError: count is not an integer.
        """
        count = _count(count, "skip", none_ok=False)

        def make(run):
            # skip(-1) skips everything, as TF's
            if count == _INF:
                return iter(())
            return itertools.islice(self._make(run), count, None)
        return self._derive(self._structure, make)

    def prefetch(self, buffer_size=None) -> "Dataset":
        """The same elements (prefetching is a no-op here). Never raises."""
        return self._derive(self._structure, self._make)

    def cache(self, filename: str = "") -> "Dataset":
        """The same elements, kept after the first complete pass: in memory (the next
        passes of a repeat replay them), or with a filename in a file that later passes
        and later runs read instead (train/data_cache.py).

        Raises:
            TypeError: filename is not a str.
            (when read) ExecutionError, DataLossError: see data_cache.cached.
        """
        if not isinstance(filename, str):
            raise TypeError(f"cache: filename must be a str, got {filename!r:.60}")
        if filename:
            from .data_cache import cached  # (data_cache builds on this module)
            return self._derive(self._structure, lambda run: cached(self, filename, run))

        def make(run):
            key = ("cache", id(self))
            stored = run.state.get(key)
            if stored is not None:
                yield from ([_copy(a) for a in e] for e in stored)
                return
            seen = []
            for element in self._make(run):
                seen.append([_copy(a) for a in element])
                yield element
            run.state[key] = seen
        return self._derive(self._structure, make)

    def concatenate(self, dataset: "Dataset") -> "Dataset":
        """This dataset's elements, then `dataset`'s.

        Raises:
            TypeError: dataset is not a Dataset, or its structure or types differ.
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"concatenate: expected a Dataset, got {type(dataset).__name__}")
        mine, theirs = self._components, dataset._components
        if not _same_structure(self._structure, dataset._structure) or [
                c.dtype for c in mine] != [c.dtype for c in theirs]:
            raise TypeError("concatenate: the datasets' element structures or types differ")
        if [c.sparse for c in mine] != [c.sparse for c in theirs]:
            raise TypeError("concatenate: the datasets' element classes differ (a Tensor "
                            "against a SparseTensor)")
        structure = _pack(self._structure, [a.like(_merge_shape(a.shape, b.shape))
                                            for a, b in zip(mine, theirs)])

        def make(run):
            yield from self._make(run)
            yield from dataset._make(run)
        return self._derive(structure, make, (self, dataset))

    def unbatch(self) -> "Dataset":
        """The rows of each element's components (split along the first dim).

        Raises:
            ValueError: a component is a scalar.
        """
        comps = self._components
        no_windows(comps, "unbatch")
        if any(c.shape is not None and len(c.shape) == 0 for c in comps):
            raise ValueError("unbatch: the components must have rank >= 1")
        structure = _pack(self._structure, [
            c.like(None if c.shape is None else c.shape[1:]) for c in comps])

        def make(run):
            for element in self._make(run):
                rows = {data_sparse.rows(a) if c.sparse else a.shape[0]
                        for a, c in zip(element, comps)}
                if len(rows) != 1:
                    raise ExecutionError(f"unbatch: the components' first dims differ: "
                                        f"{sorted(rows)}")
                count = rows.pop()
                columns = [data_sparse.split(a) if c.sparse else
                           [a[i, ...].copy() for i in range(count)]
                           for a, c in zip(element, comps)]
                for i in range(count):
                    yield [column[i] for column in columns]
        return self._derive(structure, make)

    def enumerate(self, start: int = 0) -> "Dataset":
        """Elements (index, element), the int64 index counting from `start`.

        Raises:
            TypeError: start is not an integer.
        """
        if isinstance(start, bool) or not isinstance(start, (int, np.integer)):
            raise TypeError(f"enumerate: start must be an integer, got {start!r:.40}")

        def make(run):
            for i, element in enumerate(self._make(run), int(start)):
                yield [np.asarray(i, np.int64)] + element
        return self._derive((_Component(DType.INT64, ()), self._structure), make)

    def apply(self, transformation_func: Callable) -> "Dataset":
        """transformation_func(self), which must return a Dataset.

        Raises:
            TypeError: it is not callable or does not return a Dataset.
        """
        if not callable(transformation_func):
            raise TypeError("apply: transformation_func must be callable")
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"apply: transformation_func must return a Dataset, got "
                            f"{type(out).__name__}")
        return out

    def reduce(self, initial_state, reduce_func: Callable):
        """Tensors of the state reduce_func(state, element) leaves after the last
        element, from initial_state (train/data_experimental.py).

        Raises:
            TypeError: reduce_func's state differs from the initial state's structure
                or types, or the initial state is not constant.
        """
        from .data_experimental import reduce
        return reduce(self, initial_state, reduce_func)

    # -- iterators --
    def make_one_shot_iterator(self) -> "Iterator":
        """An iterator that opens this pipeline on its first get_next in a session.

        Raises:
            ValueError: the pipeline reads graph tensors (use an initializable one).
        """
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> "Iterator":
        """An iterator opened (and restarted) by running its `initializer`. Never raises
        beyond what building its ops raises."""
        return make_initializable_iterator(self, shared_name)


def _copy(value):
    """A copy of a component value (an array, or a SparseTensorValue's arrays)."""
    if isinstance(value, SparseTensorValue):
        return SparseTensorValue(*(np.array(a) for a in value))
    return value.copy()


def _text_shape(shape) -> str:
    return "<unknown>" if shape is None else str(["?" if d is None else d for d in shape])


def _positive(value, what: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{what}: {name} must be a positive integer, got {value!r:.40}")
    return int(value)


def _count(value, what: str, none_ok: bool = True) -> int:
    if value is None and none_ok:
        return _INF
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what}: count must be an integer, got {value!r:.40}")
    return _INF if value < 0 else int(value)


def _file_names(filenames, what: str):
    """filenames (a name, a list of names, or a string graph tensor of rank 0 or 1) as
    (a function of the run giving the names, the captured tensors).

    Raises:
        TypeError: anything else.
    """
    if isinstance(filenames, Tensor):
        shape = _shape(filenames)
        if filenames.dtype != DType.STRING or (shape is not None and len(shape) > 1):
            raise TypeError(f"{what}: filenames must be a string tensor of rank 0 or 1, got "
                            f"{filenames.dtype.name} of shape {_text_shape(shape)}")

        def names_of(run):
            values = np.asarray(run.value(filenames), object).reshape(-1)
            return [_text(n) for n in values.tolist()]
        return names_of, [filenames]
    names = [filenames] if isinstance(filenames, (str, bytes)) else filenames
    if isinstance(names, np.ndarray):
        names = names.reshape(-1).tolist()
    if not isinstance(names, (list, tuple)) or not names or not all(
            isinstance(n, (str, bytes)) for n in names):
        raise TypeError(f"{what}: filenames must be a file name, a non-empty list of them "
                        f"or a string tensor, got {filenames!r:.60}")
    names = [_text(n) for n in names]
    return (lambda run: names), []


def _file_source(filenames, compression_type, num_parallel_reads, what: str,
                 read: Callable):
    """(make, captured) of a dataset of the elements `read(name, compression, run)` yields
    (lists of arrays), file after file, or interleaved an element at a time over
    `num_parallel_reads` files (TF's deterministic order).

    Raises:
        TypeError, ValueError: as the file datasets.
    """
    names_of, captured = _file_names(filenames, what)
    compression = compression_name(compression_type, what)
    cycle = 1 if num_parallel_reads is None else _positive(num_parallel_reads, what,
                                                           "num_parallel_reads")

    def make(run):
        names = names_of(run)
        if cycle == 1:
            for name in names:
                yield from read(name, compression, run)
            return
        from .data_more import _interleaved  # (data_more builds on this module)
        yield from _interleaved(iter(names), lambda name: read(name, compression, run), cycle,
                                1)
    return make, captured


def _text_lines(name: str, compression: str, run=None):
    """The lines of a text file without their ends ("\n" or "\r\n"), as str elements."""
    for line in raw_lines(name, compression):
        yield [np.asarray(_text(line[:-1] if line.endswith(b"\r") else line), object)]


def _tfrecords(name: str, compression: str, run=None):
    """The records of a TFRecord file, as elements of a 0-d object array of bytes."""
    for record in read_records(name, compression):
        value = np.empty((), object)
        value[()] = record
        yield [value]


class TextLineDataset(Dataset):
    """The lines of text files (without the line end, "\n" or "\r\n"), as str.
    filenames: a name, a list of names or a string tensor (read when the iterator
    opens, so a dataset function may build one per element); compression_type "",
    "ZLIB" or "GZIP".

    Raises:
        TypeError: filenames is not a name, a list of names or a string tensor.
        ValueError: compression_type or num_parallel_reads is not valid.
        (when read) OSError, DataLossError (damaged compressed data).
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        make, captured = _file_source(filenames, compression_type, num_parallel_reads,
                                      "TextLineDataset", _text_lines)
        super().__init__(_Component(DType.STRING, ()), make, captured=captured)


class TFRecordDataset(Dataset):
    """The records of TFRecord files, as bytes (checked with their masked CRC-32C).
    filenames: a name, a list of names or a string tensor (read when the iterator
    opens, so `list_files(...).interleave(TFRecordDataset)` works); compression_type
    "", "ZLIB" or "GZIP"; num_parallel_reads interleaves that many files a record at a
    time (TF's order; read sequentially here).

    Raises:
        TypeError: filenames is not a name, a list of names or a string tensor.
        ValueError: compression_type or num_parallel_reads is not valid.
        (when read) DataLossError: a record is truncated or corrupt; OSError.
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        make, captured = _file_source(filenames, compression_type, num_parallel_reads,
                                      "TFRecordDataset", _tfrecords)
        super().__init__(_Component(DType.STRING, ()), make, captured=captured)


from .data_iterator import (Iterator, get_output_classes, get_output_shapes,  # noqa: E402,F401
                            get_output_types, make_initializable_iterator,
                            make_one_shot_iterator)
from . import data_experimental as experimental  # noqa: E402 - og.data.experimental


def __getattr__(name: str):
    # built on this module, so loaded on first use (importing it here would be circular)
    if name == "FixedLengthRecordDataset":
        from .data_fixed_length import FixedLengthRecordDataset
        return FixedLengthRecordDataset
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
