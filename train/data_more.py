"""More of TF1's tf.data (og.data, train/data.py delegates here): Dataset.interleave,
Dataset.shard, Dataset.list_files and Dataset.window."""

from __future__ import annotations

import glob
import os
from typing import Callable

import numpy as np

from ..errors import ExecutionError
from ..format import DType
from . import graph as _g
from .data import AUTOTUNE, Dataset
from .data_structure import _Component, _pack, _text, _Traced, no_windows


def _cpus() -> int:
    """TF's AUTOTUNE cycle length: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _size(value, name: str, autotune: bool) -> int:
    if value is None:
        return AUTOTUNE
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or (
            value <= 0 and not (autotune and value == AUTOTUNE)):
        allowed = "a positive integer, None or -1 (AUTOTUNE)" if autotune else \
            "a positive integer or None"
        raise ValueError(f"interleave: {name} must be {allowed}, got {value!r:.40}")
    return int(value)


def interleave(dataset: Dataset, map_func: Callable, cycle_length=None, block_length=None,
               num_parallel_calls=None) -> Dataset:
    """The elements of the datasets map_func(element) returns, in TF's deterministic
    interleave order: `cycle_length` inputs open at once, `block_length` elements
    taken from each in turn, an exhausted one replaced by the next input.

    Raises:
        TypeError: map_func is not callable or does not return a Dataset.
        ValueError: a length is not a positive integer (cycle_length and
            num_parallel_calls may be None or -1, AUTOTUNE), or map_func captures a
            tensor of another graph.
    """
    cycle = _size(cycle_length, "cycle_length", True)
    cycle = _cpus() if cycle == AUTOTUNE else cycle  # TF: AUTOTUNE cycles over the CPUs
    block = _size(block_length, "block_length", False)
    block = 1 if block == AUTOTUNE else block
    _size(num_parallel_calls, "num_parallel_calls", True)  # checked; runs sequentially
    fn = _Traced(map_func, dataset._structure, "Dataset.interleave", want_dataset=True)
    inner = fn.template

    def make(run):
        sess = fn.session()

        def open_inner(element):
            return iter(inner._make(fn.inner_run(sess, element, run)))
        try:
            yield from _interleaved(iter(dataset._make(run)), open_inner, cycle, block)
        finally:
            sess.close()
    return dataset._derive(inner._structure, make, captured=fn.captured)


def _interleaved(source, open_inner: Callable, cycle: int, block: int):
    """TF's InterleaveDataset: visit the cycle's slots in turn, taking `block` elements
    from each; an empty slot takes the next input, an exhausted one is emptied."""
    slots: list = [None] * cycle
    index = taken = live = 0
    ended = False
    while not ended or live:
        current = slots[index]
        if current is not None:
            element = next(current, None)
            if element is not None:
                yield element
                taken += 1
                if taken == block:
                    index, taken = (index + 1) % cycle, 0
                continue
            slots[index] = None
            live -= 1
            index, taken = (index + 1) % cycle, 0
        elif not ended:
            element = next(source, None)
            if element is None:
                ended = True
            else:
                slots[index] = open_inner(element)
                live += 1
        else:
            index, taken = (index + 1) % cycle, 0


def shard(dataset: Dataset, num_shards, index) -> Dataset:
    """Every num_shards-th element, starting at element `index`.

    Raises:
        TypeError: num_shards or index is not an integer.
        ValueError: num_shards is not positive, or index is not in [0, num_shards).
    """
    for name, value in (("num_shards", num_shards), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"shard: {name} must be an integer, got {value!r:.40}")
    if num_shards <= 0:
        raise ValueError(f"shard: num_shards must be > 0, got {num_shards}")
    if not 0 <= index < num_shards:
        raise ValueError(f"shard: index must be in [0, num_shards={num_shards}), got {index}")
    n, k = int(num_shards), int(index)

    def make(run):
        for i, element in enumerate(dataset._make(run)):
            if i % n == k:
                yield element
    return dataset._derive(dataset._structure, make)


def _patterns(file_pattern) -> list:
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else file_pattern
    if isinstance(patterns, np.ndarray):
        patterns = patterns.reshape(-1).tolist()
    if not isinstance(patterns, (list, tuple)) or not patterns or not all(
            isinstance(p, (str, bytes)) for p in patterns):
        raise TypeError(f"list_files: file_pattern must be a glob pattern or a non-empty list "
                        f"of them, got {file_pattern!r:.60}")
    return [_text(p) for p in patterns]


def list_files(file_pattern, shuffle=None, seed=None) -> Dataset:
    """The names (str) of the files matching `file_pattern` (a glob pattern or a list of
    them), matched when an iterator opens: sorted, or in a random order (drawn anew
    each epoch) unless shuffle is False (shuffle None: True, as TF).

    Raises:
        TypeError: file_pattern is not a pattern or a list of them, shuffle not a bool.
        TypeError / ValueError: seed is not None or an int.
        (when read) ExecutionError: no file matches.
    """
    patterns = _patterns(file_pattern)
    if shuffle is not None and not isinstance(shuffle, (bool, np.bool_)):
        raise TypeError(f"list_files: shuffle must be a bool or None, got {shuffle!r:.40}")
    shuffle = True if shuffle is None else bool(shuffle)
    seed = _g.check_seed(seed, "list_files")
    state_key = object()  # this dataset's epoch counter and seed in a run's state

    def make(run):
        names = sorted(n for p in patterns for n in glob.glob(p, include_hidden=True))
        if not names:
            raise ExecutionError(f"list_files: no files match the pattern(s) {patterns}")
        if shuffle:
            epoch = run.state.get(("list_files", state_key), 0)
            run.state[("list_files", state_key)] = epoch + 1
            base = seed if seed is not None else run.state.setdefault(
                ("list_files_seed", state_key), int(np.random.default_rng().integers(2 ** 62)))
            order = np.random.default_rng([base, epoch]).permutation(len(names))
            names = [names[i] for i in order]
        for name in names:
            yield [np.asarray(name, object)]
    return Dataset(_Component(DType.STRING, ()), make)


def window(dataset: Dataset, size, shift=None, stride=1, drop_remainder=False) -> Dataset:
    """Elements that are windows of the input: window k holds the elements at
    k*shift + j*stride for j < size (shift None: size), each component a dataset of its
    values (TF's Dataset.window: a tuple element gives a tuple of datasets). The last
    windows may be shorter unless drop_remainder. Use them in flat_map or interleave,
    e.g. `.window(5, 1).flat_map(lambda w: w.batch(5))`.

    Raises:
        ValueError: size, shift or stride is not a positive integer.
        TypeError: the elements already hold windows.
    """
    size = _positive_arg(size, "size")
    shift = size if shift is None else _positive_arg(shift, "shift")
    stride = _positive_arg(stride, "stride")
    no_windows(dataset._components, "window")
    comps = dataset._components
    structure = _pack(dataset._structure, [
        _Component(c.dtype, c.shape, c.sparse, window=True) for c in comps])
    span = (size - 1) * stride + 1

    def as_window(elements: list) -> list:
        return [[e[k] for e in elements] for k in range(len(comps))]

    def make(run):
        buffered, skip = [], 0  # buffered: from the next window's first element on
        for element in dataset._make(run):
            if skip:  # between windows when shift is longer than a window's span
                skip -= 1
                continue
            buffered.append(element)
            if len(buffered) == span:
                yield as_window(buffered[::stride])
                skip = max(0, shift - span)
                buffered = buffered[shift:]
        while buffered and not drop_remainder:
            yield as_window(buffered[::stride][:size])
            buffered = buffered[shift:]
    return dataset._derive(structure, make)


def _positive_arg(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"window: {name} must be a positive integer, got {value!r:.40}")
    return int(value)
