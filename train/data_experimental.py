"""TF1's tf.data.experimental (og.data.experimental): transformations for
Dataset.apply (map_and_batch, shuffle_and_repeat, parallel_interleave, scan,
take_while, unique, group_by_window, bucket_by_sequence_length, ...), the sources
Counter, choose_from_datasets and sample_from_datasets, and get_single_element.

Every transformation here is TF's documented one over train/data.py's pipeline
machinery; the orders that TF defines (group_by_window's flush by ascending key at the
end of the input, choose_from_datasets skipping exhausted inputs) are TF's.
parallel_interleave runs sequentially in TF's deterministic (sloppy=False) order.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import ExecutionError
from ..format import DType
from ..ops import dataset as _ops
from . import graph as _g
from .data import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY,  # noqa: F401
                   Dataset, _positive)
from .data_iterator import _register, element_op
from .data_structure import (_as_array, _Component, _flatten, _flatten_like, _pack,
                             _Run, _shape, _Traced, skip_errors_of)
from .graph import Tensor
from .record_compression import compression_name


__all__ = ["AUTOTUNE", "Counter", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY",
           "bucket_by_sequence_length", "choose_from_datasets", "copy_to_device",
           "enumerate_dataset", "get_single_element", "group_by_window", "ignore_errors",
           "map_and_batch",
           "parallel_interleave", "prefetch_to_device", "sample_from_datasets", "scan",
           "shuffle_and_repeat", "take_while", "TFRecordWriter", "unbatch", "unique",
           "CsvDataset", "make_batched_features_dataset", "parse_example_dataset"]


# --- sources ---------------------------------------------------------------------------------

def Counter(start=0, step=1, dtype=DType.INT64) -> Dataset:  # noqa: N802 - TF's name
    """start, start + step, ... forever, as `dtype` scalars (TF's Counter).

    Raises:
        TypeError: start or step is not an integer, or dtype is not an integer type.
    """
    for value, name in ((start, "start"), (step, "step")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"Counter: {name} must be an integer, got {value!r:.40}")
    dtype = _g.as_dtype(dtype)
    if np.dtype(dtype.numpy).kind not in "iu":
        raise TypeError(f"Counter: dtype must be an integer type, got {dtype.short_name}")

    def make(run):
        value = int(start)
        while True:
            yield [np.asarray(value, dtype.numpy)]
            value += int(step)
    return Dataset(_Component(dtype, ()), make)


def _datasets(datasets, what: str) -> list:
    sets = list(datasets) if isinstance(datasets, (list, tuple)) else None
    if not sets or not all(isinstance(d, Dataset) for d in sets):
        raise TypeError(f"{what}: datasets must be a non-empty list of Datasets")
    first = sets[0]
    for k, d in enumerate(sets[1:], 1):
        if d.output_types != first.output_types or d.output_classes != first.output_classes:
            raise TypeError(f"{what}: all datasets must have the same element types; "
                            f"dataset 0 has {first.output_types}, dataset {k} "
                            f"{d.output_types}")
    return sets


def _merged_structure(sets: list):
    """The element structure of datasets read in turn: shapes merged (None where they
    differ)."""
    comps = [d._components for d in sets]
    merged = []
    for parts in zip(*comps):
        shape = parts[0].shape
        for p in parts[1:]:
            shape = None if shape is None or p.shape is None or len(p.shape) != len(
                shape) else tuple(a if a == b else None for a, b in zip(shape, p.shape))
        merged.append(parts[0].like(shape))
    return _pack(sets[0]._structure, merged)


def _directed(sets: list, selector: Callable, structure, what: str) -> Dataset:
    """Elements of sets[i] for each index i the selector (run -> iterator of ints)
    gives; an exhausted input's turns are skipped; the end comes when the selector
    ends or every input is exhausted (TF's DirectedInterleave)."""

    def make(run):
        its = [iter(d._make(run)) for d in sets]
        live = len(its)
        for index in selector(run):
            if not 0 <= index < len(its):
                raise ExecutionError(f"{what}: Selector index out of range: {index} >= "
                                     f"{len(its)}")
            if its[index] is None:
                continue
            element = next(its[index], None)
            if element is None:
                its[index] = None
                live -= 1
                if live == 0:
                    return
                continue
            yield element
    return Dataset(structure, make, parents=sets)


def choose_from_datasets(datasets, choice_dataset: Dataset) -> Dataset:
    """The next element of datasets[c] for each c of choice_dataset (int64 scalars);
    a choice of an exhausted dataset is skipped (TF's choose_from_datasets).

    Raises:
        TypeError: datasets is not a list of Datasets of one element type, or
            choice_dataset is not a Dataset of int64 scalars.
        (when read) ExecutionError: a choice is out of range.
    """
    sets = _datasets(datasets, "choose_from_datasets")
    if not isinstance(choice_dataset, Dataset) or [
            (c.dtype, c.shape) for c in choice_dataset._components] != [(DType.INT64, ())]:
        raise TypeError("choose_from_datasets: choice_dataset must be a Dataset of int64 "
                        "scalars")

    def selector(run):
        for (choice,) in choice_dataset._make(run):
            yield int(choice)
    out = _directed(sets, selector, _merged_structure(sets), "choose_from_datasets")
    out._parents = tuple(sets) + (choice_dataset,)
    return out


def sample_from_datasets(datasets, weights=None, seed=None) -> Dataset:
    """Elements drawn at random from datasets, dataset i with probability weights[i]
    (uniform when None) among those not yet exhausted, until none that has weight is
    left; each dataset's own order is kept. The draws are numpy's, not TF's.

    Raises:
        TypeError: datasets is not a list of Datasets of one element type.
        ValueError: weights does not have one non-negative number per dataset, or
            they sum to 0; seed is negative.
    """
    sets = _datasets(datasets, "sample_from_datasets")
    seed = _g.check_seed(seed, "sample_from_datasets")
    w = np.ones(len(sets)) if weights is None else np.asarray(weights, np.float64)
    if w.shape != (len(sets),) or not np.all(np.isfinite(w)) or np.any(w < 0) or \
            w.sum() <= 0:
        raise ValueError(f"sample_from_datasets: weights must be {len(sets)} non-negative "
                         f"numbers with a positive sum, got {weights!r:.80}")
    state_key = object()  # this dataset's epoch counter in a run's state

    def make(run):
        epoch = run.state.get(state_key, 0)
        run.state[state_key] = epoch + 1
        rng = np.random.default_rng(None if seed is None else [seed, epoch])
        its = [iter(d._make(run)) for d in sets]
        live = w.copy()
        while live.sum() > 0:
            index = int(rng.choice(len(live), p=live / live.sum()))
            element = next(its[index], None)
            if element is None:
                live[index] = 0.0
                continue
            yield element
    return Dataset(_merged_structure(sets), make, parents=sets)


# --- transformations -------------------------------------------------------------------------

def map_and_batch(map_func: Callable, batch_size, num_parallel_batches=None,
                  drop_remainder: bool = False, num_parallel_calls=None) -> Callable:
    """Dataset.apply transformation: map(map_func) then batch(batch_size).
    Never raises itself (map and batch check their arguments when applied)."""
    return lambda ds: ds.map(map_func).batch(batch_size, drop_remainder)


def shuffle_and_repeat(buffer_size, count=None, seed=None) -> Callable:
    """Dataset.apply transformation: shuffle(buffer_size, seed) then repeat(count),
    each epoch shuffled anew. Never raises itself."""
    return lambda ds: ds.shuffle(buffer_size, seed).repeat(count)


def parallel_interleave(map_func: Callable, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None) -> Callable:
    """Dataset.apply transformation: interleave(map_func, cycle_length, block_length)
    in TF's deterministic order (sloppy is accepted; the order is always the
    deterministic one). Never raises itself."""
    return lambda ds: ds.interleave(map_func, cycle_length, block_length)


def ignore_errors(log_warning: bool = False) -> Callable:
    """Dataset.apply transformation: the elements, without those whose computation
    failed in a map or filter function (or a CsvDataset record that does not parse)
    upstream, as TF's ignore_errors; with log_warning each skipped error is logged.
    An error in another transformation (a batch of mismatched shapes, a damaged
    TFRecord file) still ends the pipeline. Never raises itself."""
    def apply(ds: Dataset) -> Dataset:
        def make(run):
            skip_errors_of(run, ds, bool(log_warning))
            yield from ds._make(run)
        return ds._derive(ds._structure, make)
    return apply


def unbatch() -> Callable:
    """Dataset.apply transformation: Dataset.unbatch. Never raises itself."""
    return lambda ds: ds.unbatch()


def enumerate_dataset(start=0) -> Callable:
    """Dataset.apply transformation: Dataset.enumerate(start). Never raises itself."""
    return lambda ds: ds.enumerate(start)


def prefetch_to_device(device, buffer_size=None) -> Callable:
    """Dataset.apply transformation: the dataset unchanged (onegraph runs on the CPU).
    Never raises."""
    return lambda ds: ds


def copy_to_device(target_device, source_device="/cpu:0") -> Callable:
    """Dataset.apply transformation: the dataset unchanged (onegraph runs on the CPU).
    Never raises."""
    return lambda ds: ds


def _traced_with_state(fn: Callable, state_structure, element_structure, what: str,
                       with_output: bool = True):
    """fn(state, element) traced, with the state's shapes relaxed (None where the
    state fn returns differs) and traced again once, as TF does. fn returns
    (new_state, output), or only new_state when not with_output.

    Raises:
        TypeError: fn returns another structure, or other types, than the state's.
    """
    traced = _Traced(fn, (state_structure, element_structure), what)
    for _ in range(2):
        out = traced.template
        if with_output and (not isinstance(out, tuple) or len(out) != 2):
            raise TypeError(f"{what}: the function must return (new_state, output)")
        got = _flatten_like(state_structure, out[0] if with_output else out, what)
        want = _flatten(state_structure)
        if [g.dtype for g in got] != [w.dtype for w in want]:
            raise TypeError(f"{what}: the new state's types "
                            f"{[g.dtype.short_name for g in got]} differ from the initial "
                            f"state's {[w.dtype.short_name for w in want]}")
        relaxed = [w.like(_relax(w.shape, g.shape)) for w, g in zip(want, got)]
        if [r.shape for r in relaxed] == [w.shape for w in want]:
            return traced, state_structure
        state_structure = _pack(state_structure, relaxed)
        traced = _Traced(fn, (state_structure, element_structure), what)
    return traced, state_structure


def _relax(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _initial_state(initial_state, what: str):
    """(structure of components, values) of an initial state of arrays or constant
    tensors.

    Raises:
        TypeError: a part is a tensor whose value is not known while building.
    """
    leaves, values = _flatten(initial_state), []
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            value = leaf.graph.static_value(leaf)
            if value is None:
                raise TypeError(f"{what}: the initial state's tensor {leaf.name!r} is not "
                                "a constant; pass its value")
            leaf = value
        values.append(_as_array(leaf))
    comps = [_Component(DType.from_numpy(v.dtype), v.shape) for v in values]
    return _pack(initial_state, comps), values


def scan(initial_state, scan_func: Callable) -> Callable:
    """Dataset.apply transformation: scan_func(state, element) -> (new_state, output)
    run over the elements from initial_state, giving the outputs (TF's scan).

    Raises (when applied):
        TypeError: scan_func is not callable or does not return (state, output) with
            the initial state's structure and types, or the initial state is not
            constant.
    """
    def apply(ds: Dataset) -> Dataset:
        structure, start = _initial_state(initial_state, "scan")
        fn, structure = _traced_with_state(scan_func, structure, ds._structure, "scan")
        n_state = len(start)
        out_structure = fn.template[1]

        def make(run):
            sess = fn.session()
            try:
                state = list(start)
                for element in ds._make(run):
                    values = fn.run(sess, state + element, run)
                    state = values[:n_state]
                    yield values[n_state:]
            finally:
                sess.close()
        return ds._derive(out_structure, make, captured=fn.captured)
    return apply


def take_while(predicate: Callable) -> Callable:
    """Dataset.apply transformation: the elements up to the first for which
    predicate (a scalar bool) is false.

    Raises (when applied):
        TypeError: predicate does not return a scalar bool tensor.
    """
    def apply(ds: Dataset) -> Dataset:
        fn = _Traced(predicate, ds._structure, "take_while")
        outs = _flatten(fn.template)
        if len(outs) != 1 or outs[0].dtype != DType.BOOL or outs[0].shape not in (None, ()):
            raise TypeError("take_while: predicate must return a scalar bool tensor")

        def make(run):
            sess = fn.session()
            try:
                for element in ds._make(run):
                    if not bool(fn.run(sess, element, run)[0]):
                        return
                    yield element
            finally:
                sess.close()
        return ds._derive(ds._structure, make, captured=fn.captured)
    return apply


def unique() -> Callable:
    """Dataset.apply transformation: each distinct element once, at its first
    occurrence.

    Raises (when applied):
        TypeError: the elements are not single int32, int64 or string components.
    """
    def apply(ds: Dataset) -> Dataset:
        comps = ds._components
        if len(comps) != 1 or comps[0].sparse or comps[0].dtype not in (
                DType.INT32, DType.INT64, DType.STRING):
            raise TypeError("`tf.data.experimental.unique()` only supports inputs with a "
                            "single `tf.int32`, `tf.int64`, or `tf.string` component.")

        def make(run):
            seen = set()
            for element in ds._make(run):
                value = element[0]
                key = (value.shape, tuple(value.reshape(-1).tolist()))
                if key not in seen:
                    seen.add(key)
                    yield element
        return ds._derive(ds._structure, make)
    return apply


def _windows(ds: Dataset, run, key_of: Callable, size_of: Callable):
    """(key, elements) windows of ds: a window is given as soon as its key's group
    reaches size_of(key) elements; at the end the rest, by ascending key (TF's
    GroupByWindow)."""
    groups: dict = {}
    for element in ds._make(run):
        key = key_of(element)
        group = groups.setdefault(key, [])
        group.append(element)
        if len(group) >= size_of(key):
            del groups[key]
            yield key, group
    for key in sorted(groups):
        yield key, groups[key]


def _window_dataset(structure):
    """A Dataset standing for one window: its elements are what the run's feeds hold
    under the returned key."""
    slot = object()
    return Dataset(structure, lambda run: iter(run.feeds[slot])), slot


def _scalar_fn(fn: Callable, structure, what: str) -> _Traced:
    """fn traced on the elements of `structure`, checked to give an integer scalar.

    Raises:
        TypeError: it gives something else.
    """
    traced = _Traced(fn, structure, what)
    outs = _flatten(traced.template)
    if len(outs) != 1 or outs[0].shape not in (None, ()) or np.dtype(
            outs[0].dtype.numpy).kind not in "iu":
        raise TypeError(f"{what}: the function must return an integer scalar tensor")
    return traced


def group_by_window(key_func: Callable, reduce_func: Callable, window_size=None,
                    window_size_func: Callable | None = None) -> Callable:
    """Dataset.apply transformation: elements grouped by key_func(element) (an int64
    scalar); each group of window_size (or window_size_func(key)) elements, and at the
    end each unfinished group by ascending key, goes to reduce_func(key, window
    dataset), whose dataset's elements are the output.

    Raises (when applied):
        ValueError: not exactly one of window_size and window_size_func is given, or
            window_size is not a positive integer.
        TypeError: key_func or window_size_func does not return an int64 scalar, or
            reduce_func does not return a Dataset.
        (when read) ExecutionError: window_size_func gives a size below 1.
    """
    if (window_size is None) == (window_size_func is None):
        raise ValueError("group_by_window: give exactly one of window_size and "
                         "window_size_func")
    fixed = None if window_size is None else _positive(window_size, "group_by_window",
                                                       "window_size")

    def apply(ds: Dataset) -> Dataset:
        key_fn = _scalar_fn(key_func, ds._structure, "group_by_window key_func")
        size_fn = None if window_size_func is None else _scalar_fn(
            window_size_func, _Component(DType.INT64, ()), "group_by_window window_size_func")
        window, slot = _window_dataset(ds._structure)
        reduce_fn = _Traced(lambda key: reduce_func(key, window),
                            _Component(DType.INT64, ()), "group_by_window reduce_func",
                            want_dataset=True)
        inner = reduce_fn.template

        def make(run):
            fns = [f for f in (key_fn, size_fn, reduce_fn) if f is not None]
            sessions = {id(f): f.session() for f in fns}

            def call(fn, element) -> list:
                return fn.run(sessions[id(fn)], element, run)

            def size_of(key) -> int:
                if size_fn is None:
                    return fixed
                size = int(call(size_fn, [np.asarray(key, np.int64)])[0])
                if size < 1:
                    raise ExecutionError(f"group_by_window: Window size must be greater "
                                         f"than zero, but got {size}.")
                return size
            try:
                for key, elements in _windows(ds, run, lambda e: int(call(key_fn, e)[0]),
                                              size_of):
                    window_run = reduce_fn.inner_run(sessions[id(reduce_fn)],
                                                     [np.asarray(key, np.int64)], run)
                    window_run.feeds[slot] = elements
                    yield from inner._make(window_run)
            finally:
                for sess in sessions.values():
                    sess.close()
        captured = [t for f in (key_fn, size_fn, reduce_fn) if f is not None
                    for t in f.captured]
        return ds._derive(inner._structure, make, captured=captured)
    return apply


def bucket_by_sequence_length(element_length_func: Callable, bucket_boundaries,
                              bucket_batch_sizes, padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                              drop_remainder: bool = False) -> Callable:
    """Dataset.apply transformation: elements bucketed by element_length_func(element)
    (bucket i holds lengths in [boundaries[i-1], boundaries[i])) and batched per bucket
    with bucket_batch_sizes[i] elements, padded to the batch's longest (or to the
    bucket's boundary - 1 with pad_to_bucket_boundary), as TF's.

    Raises:
        ValueError: len(bucket_batch_sizes) != len(bucket_boundaries) + 1, the
            boundaries are not increasing positive integers, or a batch size is not a
            positive integer.
        (when read) ExecutionError: with pad_to_bucket_boundary, an element as long as
            the last boundary or longer (TF's message).
    """
    bounds = [int(b) for b in bucket_boundaries]
    sizes = [_positive(s, "bucket_by_sequence_length", "a bucket batch size")
             for s in bucket_batch_sizes]
    if len(sizes) != len(bounds) + 1:
        raise ValueError("bucket_by_sequence_length: len(bucket_batch_sizes) must equal "
                         "len(bucket_boundaries) + 1")
    if any(b <= 0 for b in bounds) or any(a >= b for a, b in zip(bounds, bounds[1:])):
        raise ValueError("bucket_by_sequence_length: bucket_boundaries must be increasing "
                         f"positive integers, got {bounds}")

    def apply(ds: Dataset) -> Dataset:
        length_fn = _scalar_fn(element_length_func, ds._structure,
                               "bucket_by_sequence_length element_length_func")
        window, slot = _window_dataset(ds._structure)
        batched = [_bucket_batches(window, size, None if not pad_to_bucket_boundary or
                                   i == len(bounds) else bounds[i] - 1, padded_shapes,
                                   padding_values, no_padding, drop_remainder)
                   for i, size in enumerate(sizes)]

        def make(run):
            sess = length_fn.session()

            def bucket_of(element) -> int:
                length = int(length_fn.run(sess, element, run)[0])
                return int(np.searchsorted(bounds, length, side="right"))
            try:
                for bucket, elements in _windows(ds, run, bucket_of, sizes.__getitem__):
                    if pad_to_bucket_boundary and bucket == len(bounds):
                        raise ExecutionError("When pad_to_bucket_boundary=True, elements "
                                             "must have length < max(bucket_boundaries).")
                    yield from batched[bucket]._make(_Run({slot: elements}))
            finally:
                sess.close()
        return ds._derive(_merged_structure(batched), make, captured=length_fn.captured)
    return apply


def _bucket_batches(window: Dataset, size: int, filler, padded_shapes, padding_values,
                    no_padding: bool, drop_remainder: bool) -> Dataset:
    """One bucket's batching of its window: batch, or padded_batch with the None dims
    of padded_shapes (default: the element shapes) filled with `filler` (None: pad to
    the batch's longest), as TF's bucket_by_sequence_length."""
    if no_padding:
        return window.batch(size, drop_remainder)
    shapes = padded_shapes if padded_shapes is not None else window.output_shapes
    parts = _flatten_like(window._structure, shapes, "bucket_by_sequence_length")
    filled = [[filler if d is None or d == -1 else d for d in _dims(p)] for p in parts]
    return window.padded_batch(size, _pack(window._structure, filled), padding_values,
                               drop_remainder)


def _dims(shape) -> list:
    """A padded shape (a list, a TensorShape) as a list of dims (None unknown).

    Raises:
        ValueError: an unknown rank (TF needs known ranks here too).
    """
    dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
    return [None if d is None else int(d) for d in dims]


def reduce(dataset: Dataset, initial_state, reduce_func: Callable):
    """Tensors of the state reduce_func(state, element) leaves after the last element,
    from initial_state (TF's Dataset.reduce; og.data.Dataset.reduce).

    Raises:
        TypeError: reduce_func does not return a state of the initial state's structure
            and types, or the initial state is not constant.
    """
    structure, start = _initial_state(initial_state, "Dataset.reduce")
    fn, structure = _traced_with_state(reduce_func, structure, dataset._structure,
                                       "Dataset.reduce", with_output=False)

    def make(run):
        sess = fn.session()
        try:
            state = list(start)
            for element in dataset._make(run):
                state = fn.run(sess, state + element, run)
            yield state
        finally:
            sess.close()
    return get_single_element(dataset._derive(structure, make, captured=fn.captured),
                              name="ReduceDataset")


# --- whole-dataset ops -----------------------------------------------------------------------

def _pipeline_inputs(dataset: Dataset, what: str):
    """(graph, token, captured tensors) for an op reading the whole of `dataset`.

    Raises:
        TypeError: dataset is not a Dataset.
        ValueError: it reads tensors of another graph than the default one.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{what}: expected a Dataset, got {type(dataset).__name__}")
    g = _g.get_default_graph()
    captured = dataset._captured()
    for t in captured:
        if t.graph is not g:
            raise ValueError(f"{what}: the dataset reads tensor {t.name!r} of another graph")
    return g, _register(g, dataset), captured


def get_single_element(dataset: Dataset, name=None):
    """The one element of `dataset` as tensors (a structure like its elements),
    computed anew each time they run (TF's get_single_element).

    Raises:
        TypeError: dataset is not a Dataset.
        (when run) ExecutionError: "Dataset was empty." / "Dataset had more than one
            element." (TF's InvalidArgument messages).
    """
    g, token, captured = _pipeline_inputs(dataset, "get_single_element")
    return element_op(g, "DatasetToSingleElement", captured, {"token": token},
                      dataset._structure, name or "DatasetToSingleElement")


class TFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file (TF1's
    tf.data.experimental.TFRecordWriter): `write(dataset)` returns the op that does
    it when run (compression_type "", "ZLIB" or "GZIP"; the file is whole or absent).

    Raises (from the constructor):
        TypeError: filename is not a str or a scalar string tensor.
        ValueError: compression_type is not valid.
    """

    def __init__(self, filename, compression_type=None):
        if not isinstance(filename, (str, Tensor)) or (isinstance(filename, Tensor) and (
                filename.dtype != DType.STRING or _shape(filename) not in (None, ()))):
            raise TypeError(f"TFRecordWriter: filename must be a str or a scalar string "
                            f"tensor, got {filename!r:.60}")
        self._filename = filename
        self._compression = compression_name(compression_type, "TFRecordWriter")

    def write(self, dataset: Dataset, name=None):
        """The op writing `dataset`'s elements, one record each.

        Raises:
            TypeError: dataset is not a Dataset of scalar strings (TF's message).
        """
        comps = dataset._components if isinstance(dataset, Dataset) else None
        if comps is None or [(c.dtype, c.shape) for c in comps] != [(DType.STRING, ())]:
            raise TypeError("`dataset` must produce scalar `DT_STRING` tensors whereas it "
                            f"produces {getattr(dataset, 'output_types', dataset)!r:.80}")
        g, token, captured = _pipeline_inputs(dataset, "TFRecordWriter.write")
        return g.op("DatasetToTFRecord", [g.convert(self._filename)] + captured,
                    {"token": token, "compression_type": self._compression},
                    name=name or "DatasetToTFRecord", domain=_ops.DOMAIN)


_CSV_NAMES = ("CsvDataset", "make_batched_features_dataset", "parse_example_dataset")


def __getattr__(name: str):
    # data_csv builds on og.data, which imports this module: load it on first use
    if name in _CSV_NAMES:
        from . import data_csv
        return getattr(data_csv, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
