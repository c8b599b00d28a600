"""Element types of onegraph tensors and their numpy equivalents.

The enum values are the ones stored in `.og` files (see `onegraph.fbs`). bfloat16 has
no numpy type of its own: it maps to `ml_dtypes.bfloat16` when that package is
installed and otherwise to its raw 16-bit storage (`uint16`).
"""

from __future__ import annotations

import enum

import numpy as np

from ..errors import FormatError


class DType(enum.IntEnum):
    """A tensor element type; values match `onegraph.fbs`'s `DType` enum."""

    UNDEFINED = 0
    FLOAT32 = 1
    FLOAT16 = 2
    BFLOAT16 = 3
    FLOAT64 = 4
    INT8 = 5
    UINT8 = 6
    INT16 = 7
    UINT16 = 8
    INT32 = 9
    UINT32 = 10
    INT64 = 11
    UINT64 = 12
    BOOL = 13
    STRING = 14

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype (little-endian) used for this type's data; object for STRING."""
        try:
            return _TO_NUMPY[self]
        except KeyError:
            raise FormatError(f"dtype {self.name} has no numpy equivalent") from None

    @property
    def itemsize(self) -> int:
        """Bytes per element in a file (0 for STRING, which is variable length)."""
        return 0 if self in (DType.STRING, DType.UNDEFINED) else _TO_NUMPY[self].itemsize

    @property
    def short_name(self) -> str:
        return self.name.lower()

    @classmethod
    def from_numpy(cls, dtype) -> "DType":
        """Map a numpy dtype (or anything np.dtype accepts) to a DType.

        Raises:
            FormatError: the dtype has no onegraph equivalent (e.g. complex64).
        """
        if isinstance(dtype, DType):
            return dtype
        dt = np.dtype(dtype)
        if dt.kind in "OUS":
            return cls.STRING
        found = _FROM_NUMPY.get(dt.newbyteorder("<") if dt.byteorder == ">" else dt)
        if found is None:
            raise FormatError(f"numpy dtype {dt} has no onegraph equivalent")
        return found

    @classmethod
    def parse(cls, value) -> "DType":
        """Accept a DType, its name ('float32'), or a numpy dtype."""
        if isinstance(value, DType):
            return value
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        return cls.from_numpy(value)


def _bfloat16_storage() -> np.dtype:
    try:
        import ml_dtypes  # optional; onnx depends on it

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:  # pragma: no cover - depends on environment
        return np.dtype("<u2")


_TO_NUMPY = {
    DType.FLOAT32: np.dtype("<f4"),
    DType.FLOAT16: np.dtype("<f2"),
    DType.BFLOAT16: _bfloat16_storage(),
    DType.FLOAT64: np.dtype("<f8"),
    DType.INT8: np.dtype("i1"),
    DType.UINT8: np.dtype("u1"),
    DType.INT16: np.dtype("<i2"),
    DType.UINT16: np.dtype("<u2"),
    DType.INT32: np.dtype("<i4"),
    DType.UINT32: np.dtype("<u4"),
    DType.INT64: np.dtype("<i8"),
    DType.UINT64: np.dtype("<u8"),
    DType.BOOL: np.dtype("?"),
    DType.STRING: np.dtype(object),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items() if k is not DType.STRING}
# Native-order aliases (identical on little-endian hosts, which is every target we ship to).
_FROM_NUMPY.update({np.dtype(v.str.replace("<", "=")): k for v, k in list(_FROM_NUMPY.items())})
