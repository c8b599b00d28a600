"""Operators: text featurisation (ONNX TfIdfVectorizer).

TfIdfVectorizer counts, per input row, how often each n-gram of its pool occurs, with
n in [min_gram_length, max_gram_length] and up to `max_skip_count` tokens skipped
between the items of an n-gram (1-grams are counted once, not once per skip). The
kernel is vectorised over rows and positions: tokens become dense ids of the pool's
vocabulary (`np.searchsorted`), and for each (n, skip) every window of the input is
matched against the pool n-grams at once by walking the pool's prefix trie column by
column, each trie level being a sorted array of (parent prefix id, token id) keys.

Semantics follow the ONNX spec and onnxruntime: `weights[i]` scales the i-th pool
n-gram (not output column i); a pool n-gram listed twice is an error; several n-grams
may share an output column, which then holds the sum of their values (in IDF mode a
sum of their weights: onnxruntime keeps whichever matched last). A 0-D input is one
token, like [1]; a [0, C] input gives a [0, max(ngram_indexes) + 1] output.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .common import check_result_size
from .registry import TensorInfo, define

_OP = "TfIdfVectorizer"
_MODES = ("TF", "IDF", "TFIDF")


def _text(v) -> str:
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _object_strings(items: list) -> np.ndarray:
    # Object arrays of str, not numpy's fixed-width unicode, which drops trailing NULs.
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


class _Pool:
    """The checked pool: vocabulary, per-length n-gram token ids and output columns."""

    __slots__ = ("strings", "vocab", "grams", "columns", "weights", "width")

    def __init__(self, attrs):
        mode = attrs["mode"]
        if mode not in _MODES:
            raise OpAttributeError(f"{_OP}: mode must be one of {list(_MODES)}, got {mode!r}")
        lo, hi, skip = (int(attrs["min_gram_length"]), int(attrs["max_gram_length"]),
                        int(attrs["max_skip_count"]))
        if lo < 1 or hi < lo:
            raise OpAttributeError(f"{_OP}: need 1 <= min_gram_length <= max_gram_length, got "
                                   f"{lo} and {hi}")
        if skip < 0:
            raise OpAttributeError(f"{_OP}: max_skip_count must be >= 0, got {skip}")
        ints, strs = attrs["pool_int64s"], attrs["pool_strings"]
        if (ints is None) == (strs is None):
            raise OpAttributeError(f"{_OP}: exactly one of pool_int64s and pool_strings must "
                                   "be set")
        self.strings = strs is not None
        if self.strings:
            pool = _object_strings([_text(s) for s in strs])
        else:
            pool = np.asarray(ints, dtype=np.int64).reshape(-1)
        # Tokens as dense ids of the sorted vocabulary, so every key below is an int64.
        self.vocab, token_ids = np.unique(pool, return_inverse=True)
        token_ids = token_ids.reshape(-1)

        starts = [int(c) for c in np.asarray(attrs["ngram_counts"], dtype=np.int64).reshape(-1)]
        indexes = np.asarray(attrs["ngram_indexes"], dtype=np.int64).reshape(-1)
        if not starts or indexes.size == 0:
            raise OpAttributeError(f"{_OP}: ngram_counts and ngram_indexes must be non-empty")
        if (indexes < 0).any():
            raise OpAttributeError(f"{_OP}: ngram_indexes must be >= 0")
        if hi > len(starts):
            raise OpAttributeError(f"{_OP}: max_gram_length {hi} exceeds the {len(starts)} "
                                   "n-gram lengths listed by ngram_counts")
        self.width = int(indexes.max()) + 1
        self.grams: dict[int, np.ndarray] = {}
        self.columns: dict[int, np.ndarray] = {}
        first = 0  # index of the first n-gram of the current length among all pool n-grams
        for n, begin in enumerate(starts, start=1):
            end = starts[n] if n < len(starts) else pool.size
            if not 0 <= begin <= end <= pool.size:
                raise OpAttributeError(f"{_OP}: ngram_counts {starts} is out of bounds for a "
                                       f"pool of {pool.size} items ({n}-grams)")
            if (end - begin) % n:
                raise OpAttributeError(f"{_OP}: the {end - begin} pool items of the {n}-grams "
                                       f"do not make whole {n}-grams")
            count = (end - begin) // n
            if first + count > indexes.size:
                raise OpAttributeError(f"{_OP}: ngram_indexes has {indexes.size} entries, "
                                       "fewer than the pool's n-grams")
            if count and lo <= n <= hi:
                grams = token_ids[begin:end].reshape(count, n)
                if np.unique(grams, axis=0).shape[0] != count:
                    raise OpAttributeError(f"{_OP}: the pool lists a {n}-gram twice")
                self.grams[n] = grams
                self.columns[n] = np.arange(first, first + count)
            first += count
        weights = attrs["weights"]
        if weights is None or mode == "TF":
            self.weights = None
        else:
            self.weights = np.asarray(weights, dtype=np.float32).reshape(-1)
            if self.weights.size != indexes.size:
                raise OpAttributeError(f"{_OP}: weights has {self.weights.size} entries, "
                                       f"ngram_indexes {indexes.size}; they must match")
        # columns[n] held pool n-gram numbers until here; keep both mappings.
        self.columns = {n: (i, indexes[i]) for n, i in self.columns.items()}

    def token_ids(self, x: np.ndarray) -> np.ndarray:
        """Vocabulary id of every token of `x`, -1 where it is not in the pool."""
        if self.vocab.size == 0:
            return np.full(x.shape, -1, dtype=np.int64)
        pos = np.searchsorted(self.vocab, x)
        pos = np.minimum(pos, self.vocab.size - 1)
        return np.where(self.vocab[pos] == x, pos, -1).astype(np.int64)


def _trie(grams: np.ndarray, base: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The prefix trie of distinct pool n-grams `grams` [K, n], one sorted level per item.

    Level k holds the distinct keys parent * base + token of the pool's (k+1)-item
    prefixes, `parent` being the prefix's position in level k-1 (0 at level 0). Also
    returns, per node of the last level, the pool row it ends.
    """
    count, n = grams.shape
    node = np.zeros(count, dtype=np.int64)
    levels = []
    for k in range(n):
        level, node = np.unique(node * base + grams[:, k], return_inverse=True)
        levels.append(level)
        node = node.reshape(-1)
    # Pool n-grams are distinct, so the last level's nodes are the pool rows, permuted.
    row_of_node = np.empty(count, dtype=np.int64)
    row_of_node[node] = np.arange(count)
    return levels, row_of_node


def _match(trie, base: int, windows: np.ndarray) -> np.ndarray:
    """Pool row equal to each window (last axis = the n-gram's items), -1 for none.

    Walks all windows down the trie together, one binary search per level; a window
    drops out at its first token (-1: not in the pool) or prefix no pool n-gram shares.
    """
    levels, row_of_node = trie
    node = np.zeros(windows.shape[:-1], dtype=np.int64)
    alive = np.ones(windows.shape[:-1], dtype=bool)
    for k, level in enumerate(levels):
        tok = windows[..., k]
        key = node * base + tok
        pos = np.minimum(np.searchsorted(level, key), level.size - 1)
        alive &= (tok >= 0) & (level[pos] == key)
        node = np.where(alive, pos, 0)
    return np.where(alive, row_of_node[node], -1)


def _check_width(n_rows: int, width: int, input_bytes: int) -> None:
    """Refuse an output [n_rows, width] (width max(ngram_indexes) + 1) more than 2 GiB
    larger than the input, before it is allocated: an ngram_indexes value of 2**40
    asks for terabytes.

    Raises:
        ResourceExhaustedError: naming the output shape and the largest index.
    """
    check_result_size(_OP, "the output", (n_rows, width), 4, beyond=input_bytes,
                      cause=f"ngram_indexes holds {width - 1}")


def _tfidf_kernel(inputs, attrs, ctx):
    """Count (and weight) the pool's n-grams in each row of X: [C] -> [W], [N, C] -> [N, W].

    W is max(ngram_indexes) + 1; the output is float32.

    Raises:
        OpAttributeError: inconsistent attributes (mode, gram lengths, pool layout,
            duplicate pool n-grams, weights length).
        ShapeError: X is not 0-, 1- or 2-D, or its dtype does not match the pool.
        ResourceExhaustedError: ngram_indexes make the output over 2 GiB larger than X.
    """
    pool = _Pool(attrs)
    x = np.asarray(inputs[0])
    if x.ndim > 2:
        raise ShapeError(f"{_OP}: input must be [C] or [N, C], got shape {list(x.shape)}")
    is_text = x.dtype.kind in "OUS"
    if pool.strings != is_text:
        raise ShapeError(f"{_OP}: a {'string' if pool.strings else 'int64'} pool needs "
                         f"{'string' if pool.strings else 'int32/int64'} input, got {x.dtype}")
    if not is_text and x.dtype not in (np.int32, np.int64):
        raise ShapeError(f"{_OP}: input must be int32, int64 or string, got {x.dtype}")
    rows = x.reshape(1, -1) if x.ndim < 2 else x
    if is_text:
        rows = _object_strings([_text(v) for v in rows.reshape(-1)]).reshape(rows.shape)
    ids = pool.token_ids(rows)
    n_rows, length = ids.shape
    _check_width(n_rows, pool.width, x.nbytes)
    out = np.zeros((n_rows, pool.width), dtype=np.float32)
    base = pool.vocab.size + 1
    distances = range(1, int(attrs["max_skip_count"]) + 2)
    for n, grams in pool.grams.items():
        gram_number, column = pool.columns[n]
        trie = _trie(grams, base)
        size = grams.shape[0]
        counts = np.zeros(n_rows * size, dtype=np.int64)
        # A 1-gram is the same whatever the skip, so it is counted at distance 1 only.
        for d in (distances if n > 1 else (1,)):
            starts = length - (n - 1) * d
            if starts <= 0:
                break
            windows = ids[:, np.arange(starts)[:, None] + d * np.arange(n)]
            found = _match(trie, base, windows)
            row, _ = np.nonzero(found >= 0)
            counts += np.bincount(row * size + found[found >= 0], minlength=counts.size)
        counts = counts.reshape(n_rows, size)
        if attrs["mode"] == "TF":
            values = counts.astype(np.float32)
        else:
            values = (counts > 0 if attrs["mode"] == "IDF" else counts).astype(np.float32)
            if pool.weights is not None:
                values *= pool.weights[gram_number]
        np.add.at(out, (slice(None), column), values)
    return (out.reshape(pool.width) if x.ndim < 2 else out,)


def _tfidf_infer(attrs, inputs):
    """Float output: [W] for a 0-/1-D input, [N, W] for [N, C]; W = max(ngram_indexes) + 1."""
    indexes = attrs["ngram_indexes"]
    width = int(np.max(indexes)) + 1 if indexes is not None and len(indexes) else None
    shape = inputs[0].shape
    if shape is None:
        out = None
    elif len(shape) > 2:
        raise ShapeError(f"{_OP}: input must be [C] or [N, C], got rank {len(shape)}")
    else:
        out = (width,) if len(shape) < 2 else (shape[0], width)
        if width is not None and all(d is not None for d in shape) \
                and inputs[0].dtype is not None:
            n_rows = shape[0] if len(shape) == 2 else 1
            _check_width(n_rows, width, int(np.prod(shape, dtype=object)) *
                         np.dtype(inputs[0].dtype).itemsize)
    return [TensorInfo(np.dtype(np.float32), out)]


OPS = (
    define(_OP, ["X"], ["Y"], _tfidf_kernel,
           attrs=[("max_gram_length", "int"), ("max_skip_count", "int"),
                  ("min_gram_length", "int"), ("mode", "string"), ("ngram_counts", "ints"),
                  ("ngram_indexes", "ints"), ("pool_int64s", "ints", None),
                  ("pool_strings", "strings", None), ("weights", "floats", None)],
           infer=_tfidf_infer, since_version=9, dtypes=("int32", "int64", "object"),
           doc="n-gram counts (TF, IDF, TF-IDF) of integer or string token rows"),
)

KNOWN_FAILURES: dict[str, str] = {}
