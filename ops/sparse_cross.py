"""Operators: TF's sparse feature crosses (onegraph domain).

SparseCross (TF1's op behind tf.sparse.cross_hashed, hashed_output set) and SparseCrossV2
(tf.sparse.cross: "a_X_b" strings) cross, batch row by batch row, the features of N
sparse tensors (rank 2, indices grouped by row in row-major order) and of dense
[batch, k] tensors, sparse inputs first: the cartesian product of the row's features,
the last input varying fastest, as TF's ProductIterator. The output is a
[batch, max crosses per row] SparseTensor.

Inputs are given as one variadic list: N indices, N values, N shapes, then the dense
tensors (attribute N counts the sparse inputs); SparseCrossV2 takes its separator
first. Values are int64 or strings (TF's Python layer casts other integers).

Hashing (TF's HashCrosser): starting from hash_key, each feature is folded in with
FingerprintCat64; a string feature enters as its FarmHash Fingerprint64, an int64 one
as its own bits. The result is taken mod num_buckets (> 0) or else mod 2**63 - 1. In
string crosses an int64 feature is its decimal text.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from .registry import TensorInfo, define
from .strings_tf import _flat, _obj, _utf8, fingerprint64

DOMAIN = "onegraph"

_U = np.uint64
_MUL = _U(0xC6A4A7935BD1E995)  # FingerprintCat64's multiplier
_INT64_MAX = _U(2 ** 63 - 1)


def _shape_text(shape) -> str:
    """A shape as TF's TensorShape.DebugString prints it: "[2,3]"."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _shift_mix(v: np.ndarray) -> np.ndarray:
    return v ^ (v >> _U(47))


def fingerprint_cat64(fp1: np.ndarray, fp2: np.ndarray) -> np.ndarray:
    """TF's FingerprintCat64 of two uint64 arrays (elementwise): the hash of the pair,
    order-dependent."""
    with np.errstate(over="ignore"):
        out = fp1 ^ _MUL
        out = out ^ (_shift_mix(fp2 * _MUL) * _MUL)
        out = out * _MUL
        out = _shift_mix(out) * _MUL
        return _shift_mix(out)


def _is_str(x: np.ndarray) -> bool:
    return x.dtype.kind in "OUS"


class _Column:
    """One input's features: its flat values and, per batch row, where that row's
    features start and how many there are."""

    def __init__(self, values: np.ndarray, starts: np.ndarray, counts: np.ndarray):
        self.values, self.starts, self.counts = values, starts, counts

    def hashes(self) -> np.ndarray:
        """Each feature as the uint64 the hashed cross folds in."""
        if _is_str(self.values):
            return fingerprint64([_utf8(s) for s in _flat(self.values)])
        return self.values.astype(np.int64).view(_U)

    def texts(self) -> list:
        """Each feature as the str the string cross joins."""
        if _is_str(self.values):
            return _flat(self.values)
        return [str(int(v)) for v in self.values]


def _check_values(values: np.ndarray, what: str) -> None:
    if not (_is_str(values) or values.dtype == np.int64):
        raise InvalidArgumentError(f"{what} must be int64 or string, got {values.dtype}")


def _sparse_column(ind: np.ndarray, batch: int, values: np.ndarray) -> _Column:
    """A sparse input's row layout as TF's ExtractFeatureData scans it: row b's
    features are the run of entries, from where row b-1's ended, whose row index is b."""
    rows = ind[:, 0]
    starts = np.zeros(batch, np.int64)
    counts = np.zeros(batch, np.int64)
    at = 0
    for b in range(batch):  # one step per batch row, as TF's scan
        starts[b] = at
        end = at
        while end < rows.size and rows[end] == b:
            end += 1
        counts[b], at = end - at, end
    return _Column(values, starts, counts)


def _columns(inputs, n_sparse: int) -> tuple[list, int]:
    """The checked columns (sparse first, then dense) and the batch size.

    Raises:
        InvalidArgumentError: TF's messages for an input of the wrong rank or size, a
            batch size that differs between inputs, values not int64 or strings.
    """
    n = n_sparse
    if n < 0 or len(inputs) < 3 * n:
        raise InvalidArgumentError(f"SparseCross: N={n} needs 3*N sparse inputs, got "
                                   f"{len(inputs)} inputs")
    ind = [np.asarray(x) for x in inputs[:n]]
    val = [np.asarray(x) for x in inputs[n:2 * n]]
    shp = [np.asarray(x) for x in inputs[2 * n:3 * n]]
    dense = [np.asarray(x) for x in inputs[3 * n:]]
    for i, x in enumerate(ind):
        if x.ndim != 2:
            raise InvalidArgumentError(f"Input indices should be a matrix but received shape "
                                       f"{_shape_text(x.shape)} at position {i}")
        if x.shape[1] != 2:
            raise InvalidArgumentError(f"Expected D2 of index to be 2 got {x.shape[1]} at "
                                       f"position {i}")
    for i, x in enumerate(val):
        if x.ndim != 1:
            raise InvalidArgumentError(f"Input values should be a vector but received shape "
                                       f"{_shape_text(x.shape)} at position {i}")
        if x.shape[0] != ind[i].shape[0]:
            raise InvalidArgumentError(f"Expected size of values to be {ind[i].shape[0]} got "
                                       f"{x.shape[0]} at position {i}")
        _check_values(x, f"values at position {i}")
    for i, x in enumerate(shp):
        if x.ndim != 1:
            raise InvalidArgumentError(f"Input shapes should be a vector but received shape "
                                       f"{_shape_text(x.shape)} at position {i}")
        if x.shape[0] != 2:
            raise InvalidArgumentError(f"Expected shape to be 2D got {x.shape[0]} at "
                                       f"position {i}")
    for i, x in enumerate(dense):
        if x.ndim != 2:
            raise InvalidArgumentError(f"Dense inputs should be a matrix but received shape "
                                       f"{_shape_text(x.shape)} at position {i}")
        _check_values(x, f"dense input at position {i}")
    if not shp and not dense:
        raise InvalidArgumentError("SparseCross needs at least one input")
    batch = int(shp[0][0]) if shp else int(dense[0].shape[0])
    for i, x in enumerate(shp):
        if int(x[0]) != batch:
            raise InvalidArgumentError(f"Expected batch size {batch} got {int(x[0])} at "
                                       f"position {i}")
    for i, x in enumerate(dense):
        if x.shape[0] != batch:
            raise InvalidArgumentError(f"Expected batch size {batch} got {x.shape[0]} at "
                                       f"dense tensor {i}")
    cols = [_sparse_column(ind[i].astype(np.int64), batch, val[i]) for i in range(n)]
    for x in dense:
        width = x.shape[1]
        cols.append(_Column(x.reshape(-1), np.arange(batch, dtype=np.int64) * width,
                            np.full(batch, width, np.int64)))
    return cols, batch


def _product(cols: list, batch: int):
    """Every cross, row by row: the output indices (M, 2), the dense shape, and per
    column the flat position of the feature each cross takes from it."""
    picks = [[] for _ in cols]
    rows, ks = [], []
    width = 0
    for b in range(batch):  # one step per batch row; the product itself is vectorised
        counts = tuple(int(c.counts[b]) for c in cols)
        total = int(np.prod(counts)) if counts else 0
        if total == 0:
            continue
        # row-major unravel: the last column varies fastest, as TF's ProductIterator
        within = np.unravel_index(np.arange(total), counts)
        for i, c in enumerate(cols):
            picks[i].append(c.starts[b] + within[i])
        rows.append(np.full(total, b, np.int64))
        ks.append(np.arange(total, dtype=np.int64))
        width = max(width, total)
    if rows:
        indices = np.stack([np.concatenate(rows), np.concatenate(ks)], axis=1)
        picks = [np.concatenate(p).astype(np.int64) for p in picks]
    else:
        indices = np.zeros((0, 2), np.int64)
        picks = [np.zeros(0, np.int64) for _ in cols]
    return indices, np.array([batch, width], np.int64), picks


def _sparse_cross(inputs, attrs, ctx):
    """TF's SparseCross: hashed int64 crosses (hashed_output=1) or "_X_"-joined string
    crosses of the inputs' features, row by row."""
    cols, batch = _columns(inputs, int(attrs["N"]))
    indices, shape, picks = _product(cols, batch)
    if not int(attrs["hashed_output"]):
        return (indices, _join(cols, picks, "_X_"), shape)
    num_buckets = int(attrs["num_buckets"])
    if num_buckets < 0:
        raise InvalidArgumentError(f"num_buckets should be >= 0, got {num_buckets}")
    h = np.full(indices.shape[0], np.int64(attrs["hash_key"]), np.int64).view(_U)
    for c, p in zip(cols, picks):
        h = fingerprint_cat64(h, c.hashes()[p])
    h = h % (_U(num_buckets) if num_buckets > 0 else _INT64_MAX)
    return (indices, h.astype(np.int64), shape)


def _join(cols, picks, sep: str) -> np.ndarray:
    texts = [c.texts() for c in cols]
    n = picks[0].size if picks else 0
    out = [sep.join(t[int(p[k])] for t, p in zip(texts, picks)) for k in range(n)]
    return _obj(out, (n,))


def _sparse_cross_v2(inputs, attrs, ctx):
    """TF's SparseCrossV2: string crosses of the inputs' features joined by `sep`."""
    sep = np.asarray(inputs[0])
    if sep.ndim != 0:
        raise InvalidArgumentError(f"Input separator should be a scalar but received shape "
                                   f"{_shape_text(sep.shape)}")
    cols, batch = _columns(inputs[1:], int(attrs["N"]))
    indices, shape, picks = _product(cols, batch)
    return (indices, _join(cols, picks, _flat(sep)[0]), shape)


def _infer(dtype):
    def infer(attrs, inputs):
        return [TensorInfo(np.dtype(np.int64), (None, 2)), TensorInfo(np.dtype(dtype), (None,)),
                TensorInfo(np.dtype(np.int64), (2,))]
    return infer


def _cross_infer(attrs, inputs):
    return _infer(np.int64 if int(attrs.get("hashed_output", 0)) else object)(attrs, inputs)


_OUT3 = ["output_indices", "output_values", "output_shape"]

OPS = (
    define("SparseCross", ["inputs*"], _OUT3, _sparse_cross,
           attrs=[("N", "int"), ("hashed_output", "int", 0), ("num_buckets", "int", 0),
                  ("hash_key", "int", 0)],
           infer=_cross_infer, domain=DOMAIN,
           doc="TF's SparseCross (inputs: N indices, N values, N shapes, dense tensors)"),
    define("SparseCrossV2", ["sep", "inputs*"], _OUT3, _sparse_cross_v2,
           attrs=[("N", "int")], infer=_infer(object), domain=DOMAIN,
           doc="TF's SparseCrossV2 (separator first, then as SparseCross)"),
)
