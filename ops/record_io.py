"""TF's record files, below the APIs that use them (og.python_io, og.data, the reader
and dataset kernels): the TFRecord framing, zlib / gzip streams and line reading.

A TFRecord is its length (u64 little-endian), the masked CRC-32C of those 8 bytes
(u32), the data, and the data's masked CRC-32C (u32); every read checks both checksums,
so a damaged or cut file is a DataLossError naming the file and the record's offset,
never wrong data. A compressed file is one zlib stream ("ZLIB", with zlib's header) or
one gzip stream ("GZIP") over the whole file, as TF writes it; TF's zlib settings
(level 6, window bits 15, memory level 9) give TF's bytes. Files are written to a
temporary name, fsynced and renamed into place, so a reader never sees half of one.
"""

from __future__ import annotations

import os
import struct
import zlib

from ..errors import DataLossError
from .crc32c import masked_crc32c

_HEADER = 12  # the length and its CRC
_PIECE = 1 << 24  # the most read from a file at once
_CHUNK = 1 << 18  # compressed bytes inflated at a time
_LINE_CHUNK = 1 << 16  # bytes a text file is read in

__all__ = ["RecordFileWriter", "frame_record", "open_stream", "raw_lines", "read_records",
           "read_whole"]


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
    "ZLIB" or "GZIP". The file is read as a stream, a record at a time.

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


def raw_lines(path: str, compression: str = ""):
    """The lines of a file as bytes, without their "\\n" (a last line without one
    included), read a chunk at a time.

    Raises:
        OSError; DataLossError (damaged compressed data).
    """
    with open_stream(path, compression) as f:
        tail = b""
        while True:
            chunk = f.read(_LINE_CHUNK)
            if not chunk:
                break
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()
            yield from lines
        if tail:
            yield tail


def read_whole(path: str, compression: str = "") -> bytes:
    """The whole (decompressed) content of a file, read a piece at a time.

    Raises:
        OSError; DataLossError (damaged compressed data).
    """
    parts = []
    with open_stream(path, compression) as f:
        while True:
            part = f.read(_CHUNK)
            if not part:
                return b"".join(parts)
            parts.append(part)


class _Inflating:
    """A binary stream of the decompressed bytes of a zlib or gzip file."""

    def __init__(self, raw, path: str, gzip: bool):
        self._raw = raw
        self._path = path
        self._inflate = zlib.decompressobj(31 if gzip else 15)
        self._buffer = b""
        self._ended = False

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and not self._ended:
            chunk = self._raw.read(_CHUNK)
            try:
                if chunk:
                    self._buffer += self._inflate.decompress(chunk)
                else:
                    self._buffer += self._inflate.flush()
                    self._ended = True
            except zlib.error as e:
                raise DataLossError(f"{self._path}: the compressed data is damaged ({e})") \
                    from None
        if self._ended and not self._inflate.eof and not self._buffer:
            raise DataLossError(f"{self._path}: the compressed data ends early")
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

    def close(self) -> None:
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_stream(path: str, compression: str = ""):
    """`path` opened for reading as a binary stream of its (decompressed) bytes;
    compression "" (none), "ZLIB" or "GZIP".

    Raises:
        OSError: the file cannot be opened.
        (when read) DataLossError: the compressed data is damaged or cut short.
    """
    raw = open(path, "rb")
    if not compression:
        return raw
    return _Inflating(raw, path, compression == "GZIP")


class RecordFileWriter:
    """Writes TFRecords to `path`, compressed as `compression` ("", "ZLIB", "GZIP")
    with zlib's `level`, `wbits` (9-15; 16 is added for GZIP), `mem_level` and
    `strategy` (TF's defaults give TF's bytes). The file is `path` + ".tmp" until
    close() fsyncs and renames it into place; discard() drops it instead.

    Raises (from the constructor):
        OSError: the temporary file cannot be created.
    """

    def __init__(self, path: str, compression: str = "", level: int = -1, wbits: int = 15,
                 mem_level: int = 9, strategy: int = zlib.Z_DEFAULT_STRATEGY):
        self._path = os.fspath(path)
        self._tmp = self._path + ".tmp"
        self._file = open(self._tmp, "wb")
        self._deflate = None
        if compression:
            wbits += 16 if compression == "GZIP" else 0
            self._deflate = zlib.compressobj(level, zlib.DEFLATED, wbits, mem_level, strategy)

    @property
    def closed(self) -> bool:
        return self._file is None

    def _put(self, data: bytes) -> None:
        self._file.write(self._deflate.compress(data) if self._deflate else data)

    def write(self, record: bytes) -> None:
        """Append one record (bytes).

        Raises:
            ValueError: the writer is closed.
            TypeError: record is not bytes-like.
        """
        if self._file is None:
            raise ValueError("TFRecordWriter: write after close")
        self._put(frame_record(record))

    def flush(self) -> None:
        """Make what was written readable in the temporary file (zlib's sync flush, as
        TF's Flush). Raises OSError."""
        if self._file is None:
            return
        if self._deflate is not None:
            self._file.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Finish the file: end the compressed stream, fsync, then rename it to its
        path. Raises OSError."""
        if self._file is None:
            return
        if self._deflate is not None:
            self._file.write(self._deflate.flush(zlib.Z_FINISH))
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
