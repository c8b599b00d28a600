"""Element types of onegraph tensors and their numpy equivalents.

The enum values are the ones stored in `.og` files (see `onegraph.fbs`). Some types
have no numpy type of their own and map to `ml_dtypes` types when that package is
installed (onnx depends on it):

- BFLOAT16 -> `ml_dtypes.bfloat16`;
- FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0 ->
  `float8_e4m3fn`, `float8_e4m3fnuz`, `float8_e5m2`, `float8_e5m2fnuz`, `float8_e8m0fnu`;
- INT4, UINT4, INT2, UINT2, FLOAT4E2M1 -> `int4`, `uint4`, `int2`, `uint2`,
  `float4_e2m1fn` (one byte per element, value in the low bits: files store them
  unpacked, so a tensor's data is always `count * itemsize` bytes).

Without ml_dtypes the core still loads, saves and round-trips every file bit-exactly:
these types then use their raw storage, `uint16` for BFLOAT16 and `uint8` for the
others (`DType.numpy` says which; `DType.raw_storage` tells the two cases apart).
A tensor keeps its declared DType, so the data is reinterpreted, not converted, and
`DType.from_numpy` never maps a plain `uint8`/`uint16` array to one of these types.
The one exception is a node attribute holding a tensor of these types: an attribute is
just its numpy array, with no DType beside it, so without ml_dtypes the loader refuses
it (FormatError naming the dtype) rather than let a re-save turn it into UINT8.
Computing with such tensors is up to the kernels, which need ml_dtypes for it.
"""

from __future__ import annotations

import enum
import sys

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
    # schema 1.1: low-precision types, one byte per element in files (see module doc)
    FLOAT8E4M3FN = 15
    FLOAT8E4M3FNUZ = 16
    FLOAT8E5M2 = 17
    FLOAT8E5M2FNUZ = 18
    UINT4 = 19
    INT4 = 20
    FLOAT4E2M1 = 21
    FLOAT8E8M0 = 22
    UINT2 = 23
    INT2 = 24

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype (little-endian) used for this type's data; object for STRING."""
        if self in _ML_DTYPES:
            _load_ml_dtypes()
        try:
            return _TO_NUMPY[self]
        except KeyError:
            raise FormatError(f"dtype {self.name} has no numpy equivalent") from None

    @property
    def itemsize(self) -> int:
        """Bytes per element in a file (0 for STRING, which is variable length)."""
        if self in (DType.STRING, DType.UNDEFINED):
            return 0
        if self in _ML_DTYPES:  # ml_dtypes' types are as wide as their raw storage
            return np.dtype(_ML_DTYPES[self][1]).itemsize
        return _TO_NUMPY[self].itemsize

    @property
    def raw_storage(self) -> bool:
        """True when `numpy` is only this type's storage (ml_dtypes is not installed)."""
        return self in _load_ml_dtypes()

    @property
    def short_name(self) -> str:
        return self.name.lower()

    # -- TF's DType attributes (x.dtype.is_floating, x.dtype.as_numpy_dtype, ...) ----

    @property
    def base_dtype(self) -> "DType":
        """This type (TF's non-reference type; onegraph has no reference types)."""
        return self

    @property
    def as_numpy_dtype(self) -> type:
        """The numpy scalar type (np.float32, ...), as TF's; object for STRING.

        Raises:
            FormatError: the type has no numpy equivalent."""
        return self.numpy.type

    @property
    def is_floating(self) -> bool:
        """Whether this is a floating-point type (float8/16/32/64, bfloat16, float4)."""
        return self.name.startswith(("FLOAT", "BFLOAT"))

    @property
    def is_integer(self) -> bool:
        """Whether this is a signed or unsigned integer type (bool is not)."""
        return self.name.startswith(("INT", "UINT"))

    @property
    def is_unsigned(self) -> bool:
        """Whether this is an unsigned integer type."""
        return self.name.startswith("UINT")

    @property
    def is_bool(self) -> bool:
        return self is DType.BOOL

    @property
    def is_complex(self) -> bool:
        """False: onegraph has no complex types."""
        return False

    @property
    def is_numpy_compatible(self) -> bool:
        return self is not DType.UNDEFINED

    @property
    def size(self) -> int:
        """Bytes per element (TF's DType.size; 0 for STRING)."""
        return self.itemsize

    @property
    def min(self):
        """The lowest value of a numeric type, as TF's DType.min.

        Raises:
            TypeError: the type is not numeric (bool, string)."""
        return self._limits()[0]

    @property
    def max(self):
        """The highest value of a numeric type, as TF's DType.max.

        Raises:
            TypeError: the type is not numeric (bool, string)."""
        return self._limits()[1]

    def _limits(self) -> tuple:
        if self.is_integer:
            info = np.iinfo(self.numpy)
        elif self.is_floating:
            info = np.finfo(self.numpy)
        else:
            raise TypeError(f"dtype {self.short_name} has no min or max")
        return info.min, info.max

    @classmethod
    def from_numpy(cls, dtype) -> "DType":
        """Map a numpy dtype (or anything np.dtype accepts) to a DType.

        Names are numpy's: "float" and the Python type `float` are float64, "int" is
        int64. None is refused (np.dtype(None) would silently mean float64).

        Raises:
            FormatError: "unknown dtype 'float33'" (np.dtype does not know it, or it is
                None), or the dtype has no onegraph equivalent (e.g. complex64).
        """
        if isinstance(dtype, DType):
            return dtype
        if dtype is None:
            raise FormatError("unknown dtype None (give one, e.g. 'float32')")
        try:
            dt = np.dtype(dtype)
        except Exception:  # TypeError, ValueError, SyntaxError...: numpy's own words
            if _ml_loaded is not None:
                raise FormatError(f"unknown dtype {dtype!r}") from None
            # a name such as "bfloat16" means something once ml_dtypes is loaded
            _load_ml_dtypes()
            return cls.from_numpy(dtype)
        if dt.kind in "OUS":
            return cls.STRING
        key = dt.newbyteorder("<") if dt.byteorder == ">" else dt
        found = _FROM_NUMPY.get(key)
        if found is None and _ml_loaded is None and "ml_dtypes" in sys.modules:
            # an ml_dtypes array exists only once that package is imported (by the caller)
            _load_ml_dtypes()
            found = _FROM_NUMPY.get(key)
        if found is None:
            raise FormatError(f"numpy dtype {dt} has no onegraph equivalent")
        return found

    @classmethod
    def parse(cls, value) -> "DType":
        """Accept a DType, its name ('float32', case-insensitive), or a numpy dtype
        (anything `from_numpy` accepts).

        Raises:
            FormatError: "unknown dtype 'float33'" (also for None), or a numpy dtype
                with no onegraph equivalent (e.g. complex64).
        """
        if isinstance(value, DType):
            return value
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        return cls.from_numpy(value)


# DTypes that need ml_dtypes: (ml_dtypes attribute, raw storage without it).
_ML_DTYPES = {
    DType.BFLOAT16: ("bfloat16", "<u2"),
    DType.FLOAT8E4M3FN: ("float8_e4m3fn", "u1"),
    DType.FLOAT8E4M3FNUZ: ("float8_e4m3fnuz", "u1"),
    DType.FLOAT8E5M2: ("float8_e5m2", "u1"),
    DType.FLOAT8E5M2FNUZ: ("float8_e5m2fnuz", "u1"),
    DType.UINT4: ("uint4", "u1"),
    DType.INT4: ("int4", "u1"),
    DType.FLOAT4E2M1: ("float4_e2m1fn", "u1"),
    DType.FLOAT8E8M0: ("float8_e8m0fnu", "u1"),
    DType.UINT2: ("uint2", "u1"),
    DType.INT2: ("int2", "u1"),
}


def _ml_dtypes_numpy() -> tuple[dict, set]:
    """({DType: numpy dtype}, {DTypes using raw storage}) for the `_ML_DTYPES` types."""
    try:
        import ml_dtypes  # optional; onnx depends on it
    except ImportError:  # pragma: no cover - depends on environment (tested in a subprocess)
        ml_dtypes = None
    out, raw = {}, set()
    for dtype, (attr, storage) in _ML_DTYPES.items():
        found = getattr(ml_dtypes, attr, None) if ml_dtypes is not None else None
        if found is not None and np.dtype(found).itemsize == np.dtype(storage).itemsize:
            out[dtype] = np.dtype(found)
        else:  # no ml_dtypes, or one too old to have this type
            out[dtype], _ = np.dtype(storage), raw.add(dtype)
    return out, raw


_TO_NUMPY = {
    DType.FLOAT32: np.dtype("<f4"),
    DType.FLOAT16: np.dtype("<f2"),
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
# Native-order aliases of numpy's own types (identical on little-endian hosts, which is
# every target we ship to).
_FROM_NUMPY.update({np.dtype(v.str.replace("<", "=")): k for v, k in list(_FROM_NUMPY.items())})

# The `_ML_DTYPES` entries join the two maps on first use, not at import: importing
# ml_dtypes takes about half a second, most of `import onegraph` (and of every CLI
# command) when it is installed. None until then; afterwards the raw-storage set.
_ml_loaded: frozenset | None = None


def _load_ml_dtypes() -> frozenset:
    """Add the `_ML_DTYPES` types to the dtype maps (once); returns the DTypes that use
    raw storage (no ml_dtypes, or one too old to have the type)."""
    global _ml_loaded
    if _ml_loaded is None:
        ml_numpy, raw = _ml_dtypes_numpy()
        _TO_NUMPY.update(ml_numpy)
        # Raw storage types never map back (a uint8 array is UINT8, not FLOAT8E4M3FN).
        # No native-order aliases: ml_dtypes' `str` is not theirs ("<V1", "<f1"), and a
        # plain void array must not be taken for a float8.
        _FROM_NUMPY.update({v: k for k, v in ml_numpy.items() if k not in raw})
        _ml_loaded = frozenset(raw)
    return _ml_loaded
