"""TFRecord files, TF's container of records (event files, tf.data's TFRecordDataset,
tf.python_io): each record is its length (u64 little-endian), the masked CRC-32C of
those 8 bytes (u32), the data, and the data's masked CRC-32C (u32).

`frame_record` and `read_records` are the format; `TFRecordWriter` and
`tf_record_iterator` are TF1's tf.python_io names for writing and reading one, plain
or compressed (record_compression.py). Every
read checks both checksums, so a damaged or cut file is a DataLossError naming the file
and the record's offset, never wrong data.
"""

from __future__ import annotations

import os
import struct
import types

from ..errors import DataLossError
from .record_compression import (Deflating, TFRecordCompressionType, TFRecordOptions,
                                 as_options, open_stream)
from .tf_checkpoint import masked_crc32c

_HEADER = 12  # the length and its CRC
_PIECE = 1 << 24  # the most read from a file at once


def frame_record(data: bytes) -> bytes:
    """`data` framed as one TFRecord.

    Raises:
        TypeError: data is not bytes-like.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"a TFRecord holds bytes, got {type(data).__name__}")
    data = bytes(data)
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + struct.pack("<I", masked_crc32c(data)))


def read_records(path: str, compression: str = ""):
    """The records of TFRecord file `path`, in order, as bytes; compression "" (none),
    "ZLIB" or "GZIP" (see record_compression.py). The file is read as a stream, a
    record at a time.

    Raises:
        OSError: the file cannot be read.
        DataLossError: a record is cut short or fails a checksum, or the compressed
            data is damaged.
    """
    with open_stream(path, compression) as f:
        pos = 0
        while True:
            head = _read_exact(f, _HEADER)
            if not head:
                return
            if len(head) < _HEADER:
                raise DataLossError(f"{path}: truncated record header at offset {pos}")
            (head_crc,) = struct.unpack("<I", head[8:])
            if masked_crc32c(head[:8]) != head_crc:
                raise DataLossError(f"{path}: corrupted record length at offset {pos}")
            (length,) = struct.unpack("<Q", head[:8])
            rest = _read_exact(f, length + 4)
            if len(rest) < length + 4:
                raise DataLossError(f"{path}: truncated record at offset {pos}")
            body = rest[:length]
            (body_crc,) = struct.unpack("<I", rest[length:])
            if masked_crc32c(body) != body_crc:
                raise DataLossError(f"{path}: corrupted record data at offset {pos}")
            yield body
            pos += _HEADER + length + 4


def _read_exact(f, size: int) -> bytes:
    """Up to `size` bytes of f, fewer only at its end; read in bounded pieces so a
    length field that checks out but is absurd cannot ask for all memory at once."""
    parts, left = [], size
    while left:
        part = f.read(min(left, _PIECE))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def tf_record_iterator(path, options=None):
    """The records of a TFRecord file as bytes (TF1's tf.python_io.tf_record_iterator);
    options: None, a compression type ("ZLIB", "GZIP") or a TFRecordOptions.

    Raises:
        ValueError: options is not a valid compression type.
        OSError, DataLossError: as read_records (when iterated).
    """
    kind = TFRecordOptions.get_compression_type_string(as_options(options,
                                                                  "tf_record_iterator"))
    return read_records(os.fspath(path), kind)


class TFRecordWriter:
    """Writes records to a TFRecord file (TF1's tf.python_io.TFRecordWriter), compressed
    as options says (None, "ZLIB", "GZIP" or a TFRecordOptions; TF's bytes). The file
    is written as `path` + ".tmp" and renamed into place by close() (also on leaving a
    `with` block), so a reader never sees half a file.

    Raises (from the constructor):
        ValueError: options is not a valid compression type or setting.
        OSError: the file cannot be created.
    """

    def __init__(self, path, options=None):
        options = as_options(options, "TFRecordWriter")
        self._path = os.fspath(path)
        self._tmp = self._path + ".tmp"
        self._file = open(self._tmp, "wb")
        compressed = TFRecordOptions.get_compression_type_string(options) != ""
        self._sink = Deflating(self._file, options) if compressed else self._file

    def write(self, record) -> None:
        """Append one record (bytes; a str is written as UTF-8).

        Raises:
            ValueError: the writer is closed.
            TypeError: record is not bytes or str.
        """
        if self._file is None:
            raise ValueError("TFRecordWriter: write after close")
        if isinstance(record, str):
            record = record.encode("utf-8")
        self._sink.write(frame_record(record))

    def flush(self) -> None:
        """Push the written records to the temporary file. Raises OSError."""
        if self._file is not None:
            self._sink.flush()
            self._file.flush()

    def close(self) -> None:
        """Finish the file: end the compressed stream, fsync, then rename it to its
        path. Raises OSError."""
        if self._file is None:
            return
        if self._sink is not self._file:
            self._sink.finish()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        os.replace(self._tmp, self._path)

    def discard(self) -> None:
        """Drop what was written: the temporary file goes, the path is untouched.
        Never raises."""
        if self._file is None:
            return
        self._file.close()
        self._file = None
        try:
            os.remove(self._tmp)
        except OSError:
            pass

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


python_io = types.ModuleType("onegraph.python_io", "TF1's tf.python_io: TFRecordWriter, "
                             "tf_record_iterator, TFRecordOptions, TFRecordCompressionType.")
python_io.TFRecordWriter = TFRecordWriter
python_io.tf_record_iterator = tf_record_iterator
python_io.TFRecordOptions = TFRecordOptions
python_io.TFRecordCompressionType = TFRecordCompressionType
python_io.__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter",
                     "tf_record_iterator"]

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "frame_record",
           "python_io", "read_records", "tf_record_iterator"]
