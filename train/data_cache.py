"""Dataset.cache(filename): the elements of a complete pass kept in a file, so later
passes (and later runs of the program) read the file instead of recomputing them, as
TF's file cache.

The file (`<filename>.og-cache`) is a TFRecord file holding each element's component
arrays as serialized TensorProtos (a SparseTensor as its three), written to
`<filename>.og-cache.tmp` during the first pass and renamed into place only when that
pass completes; a pass left unfinished leaves no cache. A second writer finding the
temporary file refuses, as TF does with its lockfile.
"""

from __future__ import annotations

import os

from ..errors import DataLossError, ExecutionError
from ..ops.io_ops import parse_array, serialize_array
from .data_structure import _collapse, _expand, _raw, no_windows
from ..ops.record_io import RecordFileWriter, read_records

_SUFFIX = ".og-cache"


def cache_path(filename: str) -> str:
    """The cache file of a Dataset.cache(filename)."""
    return os.fspath(filename) + _SUFFIX


def cached(dataset, filename: str, run):
    """The elements of `dataset`: read from its cache file when one exists, otherwise
    computed and written to it (in place once the pass completes).

    Raises:
        ExecutionError: another pass is writing the cache now (its temporary file
            exists), or the cache file does not hold this dataset's elements.
        DataLossError, OSError: the cache file is damaged or cannot be read / written.
    """
    comps = dataset._components
    no_windows(comps, "cache")
    width = len(_raw(comps))
    path = cache_path(filename)
    if os.path.exists(path):
        yield from _read(path, comps, width)
        return
    if os.path.exists(path + ".tmp"):
        raise ExecutionError(f"There appears to be a concurrent caching iterator running - "
                             f"cache lockfile already exists ('{path}.tmp'). If you are sure "
                             f"no other running computations are using this cache prefix, "
                             f"delete the lockfile and re-initialize the iterator.")
    writer = RecordFileWriter(path)
    try:
        for element in dataset._make(run):
            for array in _expand(element, comps):
                writer.write(serialize_array(array))
            yield element
    except BaseException:  # an error, or the pass abandoned (GeneratorExit): no cache
        writer.discard()
        raise
    writer.close()


def _read(path: str, comps: list, width: int):
    arrays = []
    for record in read_records(path):
        arrays.append(parse_array(record))
        if len(arrays) == width:
            yield _collapse(arrays, comps)
            arrays = []
    if arrays:
        raise DataLossError(f"{path}: the cache ends inside an element")
