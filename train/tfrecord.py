"""TFRecord files, TF's container of records (event files, tf.data's TFRecordDataset,
tf.python_io): each record is its length (u64 little-endian), the masked CRC-32C of
those 8 bytes (u32), the data, and the data's masked CRC-32C (u32).

`frame_record` and `read_records` are the format; `TFRecordWriter` and
`tf_record_iterator` are TF1's tf.python_io names for writing and reading one. Every
read checks both checksums, so a damaged or cut file is a DataLossError naming the file
and the record's offset, never wrong data.
"""

from __future__ import annotations

import os
import struct
import types

from ..errors import DataLossError
from .tf_checkpoint import masked_crc32c

_HEADER = 12  # the length and its CRC


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


def read_records(path: str):
    """The records of TFRecord file `path`, in order, as bytes.

    Raises:
        OSError: the file cannot be read.
        DataLossError: a record is cut short or fails a checksum.
    """
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        if pos + _HEADER > len(data):
            raise DataLossError(f"{path}: truncated record header at offset {pos}")
        head = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", head)
        (head_crc,) = struct.unpack("<I", data[pos + 8:pos + _HEADER])
        if masked_crc32c(head) != head_crc:
            raise DataLossError(f"{path}: corrupted record length at offset {pos}")
        end = pos + _HEADER + length + 4
        if end > len(data):
            raise DataLossError(f"{path}: truncated record at offset {pos}")
        body = data[pos + _HEADER:end - 4]
        (body_crc,) = struct.unpack("<I", data[end - 4:end])
        if masked_crc32c(body) != body_crc:
            raise DataLossError(f"{path}: corrupted record data at offset {pos}")
        yield body
        pos = end


def tf_record_iterator(path, options=None):
    """The records of a TFRecord file as bytes (TF1's tf.python_io.tf_record_iterator).

    Raises:
        NotImplementedError: options asks for compression (not supported).
        OSError, DataLossError: as read_records.
    """
    _uncompressed(options, "tf_record_iterator")
    return read_records(os.fspath(path))


class TFRecordWriter:
    """Writes records to a TFRecord file (TF1's tf.python_io.TFRecordWriter): the file
    is written as `path` + ".tmp" and renamed into place by close() (also on leaving a
    `with` block), so a reader never sees half a file.

    Raises (from the constructor):
        NotImplementedError: options asks for compression.
        OSError: the file cannot be created.
    """

    def __init__(self, path, options=None):
        _uncompressed(options, "TFRecordWriter")
        self._path = os.fspath(path)
        self._tmp = self._path + ".tmp"
        self._file = open(self._tmp, "wb")

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
        self._file.write(frame_record(record))

    def flush(self) -> None:
        """Push the written records to the temporary file. Raises OSError."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Finish the file: fsync, then rename it to its path. Raises OSError."""
        if self._file is None:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        os.replace(self._tmp, self._path)

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _uncompressed(options, what: str) -> None:
    kind = getattr(options, "compression_type", options)
    if kind not in (None, "", 0, "NONE"):
        raise NotImplementedError(f"{what}: compressed TFRecord files ({kind!r}) are not "
                                  "supported")


python_io = types.ModuleType("onegraph.python_io", "TF1's tf.python_io: TFRecordWriter and "
                             "tf_record_iterator.")
python_io.TFRecordWriter = TFRecordWriter
python_io.tf_record_iterator = tf_record_iterator
python_io.__all__ = ["TFRecordWriter", "tf_record_iterator"]

__all__ = ["TFRecordWriter", "frame_record", "python_io", "read_records",
           "tf_record_iterator"]
