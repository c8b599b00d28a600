"""TFRecord files in TF1's words: `TFRecordWriter` and `tf_record_iterator`
(tf.python_io), plain or compressed (record_compression.py). The format itself,
`frame_record` and `read_records` (each read checks both checksums: a damaged or cut
file is a DataLossError naming the file and the record's offset), is ops/record_io.py's.
"""

from __future__ import annotations

import os
import types

from ..ops.record_io import RecordFileWriter, frame_record, read_records  # noqa: F401
from .record_compression import TFRecordCompressionType, TFRecordOptions, as_options


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
        self._writer = RecordFileWriter(
            os.fspath(path), TFRecordOptions.get_compression_type_string(options),
            **options._zlib_settings())

    def write(self, record) -> None:
        """Append one record (bytes; a str is written as UTF-8).

        Raises:
            ValueError: the writer is closed.
            TypeError: record is not bytes or str.
        """
        if isinstance(record, str):
            record = record.encode("utf-8")
        self._writer.write(record)

    def flush(self) -> None:
        """Push the written records to the temporary file. Raises OSError."""
        self._writer.flush()

    def close(self) -> None:
        """Finish the file: end the compressed stream, fsync, then rename it to its
        path. Raises OSError."""
        self._writer.close()

    def discard(self) -> None:
        """Drop what was written: the path is left untouched. Never raises."""
        self._writer.discard()

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
