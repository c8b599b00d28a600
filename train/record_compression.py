"""Compressed TFRecord and text files, as TF writes and reads them: the whole file is
one zlib stream ("ZLIB", with zlib's header) or one gzip stream ("GZIP").

`TFRecordOptions` and `TFRecordCompressionType` are TF1's names (tf.io /
tf.python_io). TF's zlib defaults are level 6, window bits 15 and memory level 9
(zlib's own is 8), and with the same settings Python's zlib writes TF's bytes.
`open_stream` reads any of the three kinds as a plain binary stream, so the record
framing above it does not care; a damaged stream is a DataLossError naming the file.
"""

from __future__ import annotations

import zlib

from ..errors import DataLossError


class TFRecordCompressionType:
    """The compression kinds as numbers (TF1's tf.python_io.TFRecordCompressionType)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP",
          TFRecordCompressionType.NONE: ""}


class TFRecordOptions:
    """How a TFRecord file is compressed (TF1's tf.io.TFRecordOptions): compression_type
    "" / None, "ZLIB" or "GZIP" (or a TFRecordCompressionType), and zlib's settings.
    flush_mode and the buffer sizes are accepted and do not change the file.

    Raises:
        ValueError: compression_type is not one of those (TF's "Not a valid
            compression_type"), or a zlib setting is out of range.
    """

    compression_type_map = dict(_NAMES)

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.get_compression_type_string(compression_type)  # TF checks it here
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy
        _check_setting(compression_level, -1, 9, "compression_level")
        _check_setting(window_bits, 9, 15, "window_bits")
        _check_setting(mem_level, 1, 9, "mem_level")
        _check_setting(compression_method, zlib.DEFLATED, zlib.DEFLATED, "compression_method")
        _check_setting(compression_strategy, 0, 4, "compression_strategy")

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """"", "ZLIB" or "GZIP" for options (None, a TFRecordOptions, a
        TFRecordCompressionType number or one of those strings).

        Raises:
            ValueError: anything else: 'Not a valid compression_type: "..."'.
        """
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if options is None or (isinstance(options, str) and options in _NAMES.values()):
            return options or ""
        if not isinstance(options, bool) and isinstance(options, int) and options in _NAMES:
            return _NAMES[options]
        raise ValueError(f'Not a valid compression_type: "{options}"')

    def _zlib_settings(self) -> dict:
        return {"level": _or(self.compression_level, -1),
                "wbits": _or(self.window_bits, 15),
                "memLevel": _or(self.mem_level, 9),
                "strategy": _or(self.compression_strategy, zlib.Z_DEFAULT_STRATEGY)}

    def __repr__(self) -> str:
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _or(value, default):
    return default if value is None else value


def _check_setting(value, low: int, high: int, name: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"TFRecordOptions: {name} must be an integer in [{low}, {high}], "
                         f"got {value!r:.40}")


def as_options(options, what: str) -> TFRecordOptions:
    """options (None, a compression name or number, or a TFRecordOptions) as a
    TFRecordOptions.

    Raises:
        ValueError: not a valid compression type.
        TypeError: options is some other kind of object.
    """
    if isinstance(options, TFRecordOptions):
        return options
    if options is not None and not isinstance(options, (str, int)):
        raise TypeError(f"{what}: options must be a TFRecordOptions or a compression type, "
                        f"got {type(options).__name__}")
    return TFRecordOptions(compression_type=options)


def compression_name(compression_type, what: str) -> str:
    """A dataset's compression_type argument ("" / None, "ZLIB", "GZIP") checked.

    Raises:
        ValueError: anything else.
    """
    try:
        return TFRecordOptions.get_compression_type_string(compression_type)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


class _Inflating:
    """A binary stream of the decompressed bytes of a zlib or gzip file."""

    _CHUNK = 1 << 18

    def __init__(self, raw, path: str, gzip: bool):
        self._raw = raw
        self._path = path
        self._inflate = zlib.decompressobj(31 if gzip else 15)
        self._buffer = b""
        self._ended = False

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and not self._ended:
            chunk = self._raw.read(self._CHUNK)
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


def open_stream(path: str, compression: str):
    """`path` opened for reading as a binary stream of its (decompressed) bytes.

    Raises:
        OSError: the file cannot be opened.
        (when read) DataLossError: the compressed data is damaged or cut short.
    """
    raw = open(path, "rb")
    if not compression:
        return raw
    return _Inflating(raw, path, compression == "GZIP")


class Deflating:
    """Compresses what is written to a binary file object with TF's settings;
    close() writes the stream's end (it does not close the file)."""

    def __init__(self, raw, options: TFRecordOptions):
        settings = options._zlib_settings()
        if TFRecordOptions.get_compression_type_string(options) == "GZIP":
            settings["wbits"] += 16
        self._raw = raw
        self._deflate = zlib.compressobj(settings["level"], zlib.DEFLATED, settings["wbits"],
                                         settings["memLevel"], settings["strategy"])

    def write(self, data: bytes) -> None:
        self._raw.write(self._deflate.compress(data))

    def flush(self) -> None:
        """Everything written so far made readable (zlib's sync flush, as TF's Flush)."""
        self._raw.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))

    def finish(self) -> None:
        self._raw.write(self._deflate.flush(zlib.Z_FINISH))
