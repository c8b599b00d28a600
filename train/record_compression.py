"""How TFRecord and text files are compressed, in TF1's words: `TFRecordOptions` and
`TFRecordCompressionType` (tf.io / tf.python_io). The streams themselves are
ops/record_io.py's: the whole file one zlib ("ZLIB") or gzip ("GZIP") stream, with TF's
zlib defaults (level 6, window bits 15, memory level 9: TF's bytes).
"""

from __future__ import annotations

import zlib


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
        """RecordFileWriter's zlib arguments for these options."""
        return {"level": _or(self.compression_level, -1),
                "wbits": _or(self.window_bits, 15),
                "mem_level": _or(self.mem_level, 9),
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
