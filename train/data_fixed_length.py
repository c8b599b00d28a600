"""tf.data's FixedLengthRecordDataset (og.data.FixedLengthRecordDataset): the records of
files made of a header, records of a fixed size and a footer, as bytes."""

from __future__ import annotations

import os

import numpy as np

from ..errors import DataLossError, InvalidArgumentError
from ..format import DType
from ..ops.record_io import read_whole
from .data import Dataset, _file_source
from .data_structure import _Component

__all__ = ["FixedLengthRecordDataset"]

_PIECE = 1 << 20  # most bytes of a plain file read at once


def _size(value, name: str, positive: bool = False) -> int:
    """value (None: 0) as an int, > 0 if `positive` else >= 0.

    Raises:
        TypeError: not an integer. ValueError: out of range.
    """
    if value is None and not positive:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"FixedLengthRecordDataset: {name} must be an integer, got "
                        f"{value!r:.40}")
    if value < (1 if positive else 0):
        raise ValueError(f"FixedLengthRecordDataset: {name} must be "
                         f"{'positive' if positive else '>= 0'}, got {int(value)}")
    return int(value)


def _element(record: bytes) -> list:
    value = np.empty((), object)
    value[()] = record
    return [value]


def _not_whole(name, header, footer, body, size) -> str:
    return (f"Excluding the header ({header} bytes) and footer ({footer} bytes), input "
            f"file \"{name}\" has body length {body} bytes, which is not an exact "
            f"multiple of the record length ({size} bytes).")


def _records(size: int, header: int, footer: int):
    """read(name, compression, run) for _file_source: the file's records as elements.
    A plain file whose body is not whole records is an InvalidArgumentError before
    any record (its size is known); a compressed one a DataLossError at its end."""
    def read(name, compression, run=None):
        if compression:
            data = read_whole(name, compression)  # the footer is known at the stream's end
            body = max(len(data) - header - footer, 0)
            for at in range(header, header + body - size + 1, size):
                yield _element(data[at:at + size])
            if body % size:
                raise DataLossError(_not_whole(name, header, footer, body, size))
            return
        with open(name, "rb") as f:
            body = os.fstat(f.fileno()).st_size - header - footer
            if body < 0 or body % size:
                raise InvalidArgumentError(_not_whole(name, header, footer, body, size))
            f.seek(header)
            per_read = max(1, _PIECE // size)
            left = body // size
            while left:
                chunk = f.read(size * min(left, per_read))
                count = len(chunk) // size
                if count == 0:
                    raise DataLossError(f"{name}: the file shrank while being read")
                for i in range(count):
                    yield _element(chunk[i * size:(i + 1) * size])
                left -= count
    return read


class FixedLengthRecordDataset(Dataset):
    """The records of files of fixed-length records, each a bytes string of
    record_bytes bytes (TF's tf.data.FixedLengthRecordDataset). Each file is
    header_bytes, then whole records, then footer_bytes. filenames: a name, a list of
    names or a string tensor; compression_type "", "ZLIB" or "GZIP"; num_parallel_reads
    interleaves that many files a record at a time (TF's order); buffer_size is
    accepted and unused.

    Raises:
        TypeError: filenames is not a name, a list or a string tensor; a size is not an
            integer.
        ValueError: record_bytes is not positive, header/footer bytes negative,
            compression_type or num_parallel_reads not valid.
        (when read) InvalidArgumentError: a plain file's body is not whole records;
        DataLossError: the same for a compressed file, or damaged compressed data;
        OSError.
    """

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None):
        size = _size(record_bytes, "record_bytes", positive=True)
        header, footer = _size(header_bytes, "header_bytes"), _size(footer_bytes,
                                                                    "footer_bytes")
        if buffer_size is not None:
            _size(buffer_size, "buffer_size")
        make, captured = _file_source(filenames, compression_type, num_parallel_reads,
                                      "FixedLengthRecordDataset",
                                      _records(size, header, footer))
        super().__init__(_Component(DType.STRING, ()), make, captured=captured)
