"""Operators: TF's ops whose results are sparse tensors (onegraph domain): CTC decoders,
edit distance, string splitting.

A sparse tensor travels as TF's raw ops pass it: indices int64 (N, rank), values (N,),
dense_shape int64 (rank,).

CTCGreedyDecoder(inputs (T, B, C), sequence_length (B,)) -> (indices, values, shape,
log_probability (B, 1)): per example the first largest class per time step below its
length, blanks dropped (and repeats, with merge_repeated); log_probability is minus the
sum of those maxima, as TF.

CTCBeamSearchDecoder(inputs, sequence_length) -> outputs*: top_paths indices tensors,
then top_paths values tensors, then top_paths shape tensors, then log_probability
(B, top_paths). TF's prefix beam search (ctc_beam_search.h, default scorer, blank = last
class) is followed step for step, including its bounded heap (gtl::TopN) and the
order libstdc++'s heap and sort routines leave equal beams in, so ties break as TF's.

EditDistance(hypothesis sparse, truth sparse) -> float32 of shape max(hyp_shape,
truth_shape)[:-1]: Levenshtein distance per sequence (a run of entries sharing all
indices but the last, in stored order), divided by the truth's length if normalize.

StringSplitTF(input (N,), delimiter ()) and StringSplitV2(input (N,), sep ()) ->
(indices, values, shape): TF's StringSplit (every byte of delimiter splits; empty
delimiter: one token per byte) and StringSplitV2 (sep as a whole, or runs of ASCII
whitespace when sep is empty, at most maxsplit splits). They work on the bytes the
strings stand for (ops/strings_tf.py's UTF-8 bridge), as TF does.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, ShapeError
from .regex_re2 import text_bytes
from .registry import REQUIRED, TensorInfo, define

_D = "onegraph"
_I64 = np.dtype(np.int64)
_F32 = np.dtype(np.float32)
_OBJ = np.dtype(object)
_WHITESPACE = b" \t\n\v\f\r"


# ------------------------------------------------------------------ shared helpers

def _sparse_infos(rank: int, values_dtype) -> list:
    return [TensorInfo(_I64, (None, rank)), TensorInfo(np.dtype(values_dtype), (None,)),
            TensorInfo(_I64, (rank,))]


def _store_sequences(seqs: list) -> tuple:
    """Sequences (one list of ints per example) as TF's (indices, values, shape)."""
    lengths = [len(s) for s in seqs]
    total = sum(lengths)
    indices = np.zeros((total, 2), np.int64)
    values = np.zeros(total, np.int64)
    offset = 0
    for b, seq in enumerate(seqs):
        n = len(seq)
        indices[offset:offset + n, 0] = b
        indices[offset:offset + n, 1] = np.arange(n)
        values[offset:offset + n] = seq
        offset += n
    shape = np.array([len(seqs), max(lengths, default=0)], np.int64)
    return indices, values, shape


def _check_ctc_inputs(name: str, inputs: list) -> tuple:
    """Validate (inputs, sequence_length) as TF's CTC decoders do; returns them.

    Raises:
        ShapeError: wrong ranks or batch sizes (TF's shape-inference messages).
        ExecutionError: empty inputs, a non-float dtype, or a length beyond max_time.
    """
    x, lens = np.asarray(inputs[0]), np.asarray(inputs[1])
    if x.ndim != 3:
        raise ShapeError(f"{name}: Shape must be rank 3 but is rank {x.ndim}")
    if lens.ndim != 1:
        raise ShapeError(f"{name}: Shape must be rank 1 but is rank {lens.ndim}")
    if lens.shape[0] != x.shape[1]:
        raise ShapeError(f"{name}: Dimensions must be equal, but are {x.shape[1]} and "
                         f"{lens.shape[0]}")
    if x.dtype not in (np.float32, np.float64):
        raise ExecutionError(f"{name}: inputs must be float32 or float64, got {x.dtype}")
    if lens.dtype.kind not in "iu":
        raise ExecutionError(f"{name}: sequence_length must be int32, got {lens.dtype}")
    if x.size == 0:
        raise ExecutionError(f"{name}: inputs must not be empty")
    for b, n in enumerate(lens):
        if not n <= x.shape[0]:
            raise ExecutionError(f"{name}: sequence_length({b}) <= {x.shape[0]}")
    return x, lens.astype(np.int64)


def _ctc_infer_common(name: str, inputs: list) -> tuple:
    x, lens = inputs[0], inputs[1]
    if x.shape is not None and len(x.shape) != 3:
        raise ShapeError(f"{name}: Shape must be rank 3 but is rank {len(x.shape)}")
    if lens.shape is not None and len(lens.shape) != 1:
        raise ShapeError(f"{name}: Shape must be rank 1 but is rank {len(lens.shape)}")
    batch = None if x.shape is None else x.shape[1]
    if lens.shape is not None and batch is not None and lens.shape[0] is not None \
            and lens.shape[0] != batch:
        raise ShapeError(f"{name}: Dimensions must be equal, but are {batch} and "
                         f"{lens.shape[0]}")
    return batch, x.dtype


# ------------------------------------------------------------------ greedy decoder

def _greedy_kernel(inputs, attrs, ctx):
    """TF's CTCGreedyDecoder: best path per example, blanks (and merged repeats) out.

    Raises:
        ShapeError / ExecutionError: as `_check_ctc_inputs`; a blank_index outside
            [-num_classes, num_classes).
    """
    x, lens = _check_ctc_inputs("CTCGreedyDecoder", inputs)
    max_time, batch, classes = x.shape
    given = int(attrs["blank_index"])
    blank = classes + given if given < 0 else given
    if not 0 <= blank < classes:
        raise ExecutionError(f"CTCGreedyDecoder: blank_index expected to be between "
                             f"{-classes} and {classes - 1} but was {given}")
    merge = bool(attrs["merge_repeated"])
    best = np.argmax(x, axis=2)              # (T, B): the first largest class, as TF's RowMax
    top = np.take_along_axis(x, best[..., None], axis=2)[..., 0]
    log_prob = np.zeros((batch, 1), x.dtype)
    seqs = []
    for b in range(batch):
        n = max(int(lens[b]), 0)
        path = best[:n, b]
        # TF adds -max step by step in T: a running sum, not a pairwise one
        if n:
            log_prob[b, 0] = np.cumsum(-top[:n, b], dtype=x.dtype)[-1]
        keep = path != blank
        if merge and n:
            keep &= np.concatenate(([True], path[1:] != path[:-1]))
        seqs.append(path[keep].tolist())
    return (*_store_sequences(seqs), log_prob)


def _greedy_infer(attrs, inputs):
    batch, dtype = _ctc_infer_common("CTCGreedyDecoder", inputs)
    return _sparse_infos(2, _I64) + [TensorInfo(dtype, (batch, 1))]


# ------------------------------------------------------------------ beam search decoder
# libstdc++'s heap and sort routines, as gtl::TopN calls them: `less(a, b)` is TopN's
# comparator (a beats b), so the heap's front is the worst beam. Equal beams end up in
# the order these exact routines leave them, which decides TF's ties.

def _push_up(v, hole, top, value, less):
    parent = (hole - 1) // 2
    while hole > top and less(v[parent], value):
        v[hole] = v[parent]
        hole = parent
        parent = (hole - 1) // 2
    v[hole] = value


def _adjust(v, first, hole, length, value, less):
    # indices are relative to `first` (a heap inside v[first:first + length])
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    sub = v[first:first + length]
    _push_up(sub, hole, top, value, less)
    v[first:first + length] = sub


def _make_heap(v, less, first=0, last=None):
    last = len(v) if last is None else last
    n = last - first
    if n < 2:
        return
    parent = (n - 2) // 2
    while True:
        _adjust(v, first, parent, n, v[first + parent], less)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(v, less, last=None):
    last = len(v) if last is None else last
    if last > 1:
        last -= 1
        value = v[last]
        v[last] = v[0]
        _adjust(v, 0, 0, last, value, less)


def _sort_heap(v, less, first=0, last=None):
    last = len(v) if last is None else last
    while last - first > 1:
        last -= 1
        value = v[last]
        v[last] = v[first]
        _adjust(v, first, 0, last - first, value, less)


def _insertion_sort(v, first, last, less, guarded=True):
    for i in range(first + 1, last):
        value = v[i]
        if guarded and less(value, v[first]):
            v[first + 1:i + 1] = v[first:i]
            v[first] = value
            continue
        j = i
        while j > first and less(value, v[j - 1]):
            v[j] = v[j - 1]
            j -= 1
        v[j] = value


def _std_sort(v, less):
    """std::sort as libstdc++ runs it (introsort, threshold 16, final insertion)."""
    n = len(v)
    if n < 2:
        return

    def median_to_first(res, a, b, c):
        if less(v[a], v[b]):
            pick = b if less(v[b], v[c]) else (c if less(v[a], v[c]) else a)
        elif less(v[a], v[c]):
            pick = a
        else:
            pick = c if less(v[b], v[c]) else b
        v[res], v[pick] = v[pick], v[res]

    def loop(first, last, depth):
        while last - first > 16:
            if depth == 0:
                _make_heap(v, less, first, last)
                _sort_heap(v, less, first, last)
                return
            depth -= 1
            mid = first + (last - first) // 2
            median_to_first(first, first + 1, mid, last - 1)
            lo, hi = first + 1, last
            while True:
                while less(v[lo], v[first]):
                    lo += 1
                hi -= 1
                while less(v[first], v[hi]):
                    hi -= 1
                if not lo < hi:
                    break
                v[lo], v[hi] = v[hi], v[lo]
                lo += 1
            loop(lo, last, depth)
            last = lo

    loop(0, n, 2 * (n.bit_length() - 1))
    if n > 16:
        _insertion_sort(v, 0, 16, less)
        _insertion_sort(v, 15, n, less, guarded=False)
    else:
        _insertion_sort(v, 0, n, less)


def _beats(a, b) -> bool:
    return a.newp[0] > b.newp[0]


class _TopN:
    """gtl::TopN<BeamEntry*, BeamComparer>: keeps the `limit` best beams."""

    def __init__(self, limit):
        self.limit = limit
        self.items: list = []
        self.state = 0          # 0 unordered, 1 bottom known, 2 heap

    def push(self, v):
        if self.limit == 0:
            return
        items = self.items
        if self.state != 2:
            items.append(v)
            if len(items) == self.limit + 1:
                _make_heap(items, _beats)
                _pop_heap(items, _beats)
                items.pop()
                self.state = 2
            elif self.state == 0 or _beats(items[-1], items[0]):
                pass
            else:
                items[0], items[-1] = items[-1], items[0]
        elif _beats(v, items[0]):
            _pop_heap(items, _beats)
            items[-1] = v
            _push_up(items, len(items) - 1, 0, v, _beats)

    def bottom(self):
        items = self.items
        if self.state == 0:
            worst = 0
            for i in range(1, len(items)):
                if _beats(items[worst], items[i]):
                    worst = i
            items[0], items[worst] = items[worst], items[0]
            self.state = 1
        return items[0]

    def extract(self) -> list:
        out, self.items = self.items, []
        if self.state != 2:
            _std_sort(out, _beats)
        else:
            _sort_heap(out, _beats)
        self.state = 0
        return out


class _Beam:
    """A prefix: its parent, last label, children and [total, blank, label] log probs."""

    __slots__ = ("parent", "label", "children", "oldp", "newp")

    def __init__(self, parent, label, zero):
        self.parent, self.label, self.children = parent, label, {}
        self.oldp = [zero, zero, zero]
        self.newp = [zero, zero, zero]

    def labels(self, merge: bool) -> list:
        out, prev, node = [], -1, self
        while node.parent is not None:
            if not merge or node.label != prev:
                out.append(node.label)
            prev = node.label
            node = node.parent
        return out[::-1]


def _log_sum_exp(a, b, zero, f):
    # TF's LogSumExp computes the correction with log1pf/expf: in float32 for any T
    if a == zero:
        return b
    if b == zero:
        return a
    hi, lo = (a, b) if a > b else (b, a)
    return hi + f(np.log1p(np.exp(np.float32(lo - hi))))


def _beam_decode(x, beam_width: int, top_paths: int, merge: bool):
    """One example's (T, C) logits -> (top paths, their log probabilities)."""
    f = x.dtype.type
    zero = f(-np.inf)
    classes = x.shape[1]
    blank = classes - 1
    root = _Beam(None, -1, zero)
    root.newp = [f(0), f(0), zero]
    leaves = _TopN(beam_width)
    leaves.push(root)
    for row in x:
        top = row.max()
        offset = top + np.log(np.cumsum(np.exp(row - top), dtype=x.dtype)[-1])
        logp = row - offset                 # log softmax, as TF's raw_input - norm_offset
        branches = leaves.extract()
        for b in branches:
            b.oldp = list(b.newp)
        for b in branches:
            if b.parent is not None:
                parent = b.parent
                if parent.newp[0] != zero:
                    prev = parent.oldp[1] if b.label == parent.label else parent.oldp[0]
                    b.newp[2] = _log_sum_exp(b.newp[2], prev, zero, f)
                b.newp[2] = b.newp[2] + (row[b.label] - offset)
            b.newp[1] = b.oldp[0] + (row[blank] - offset)
            b.newp[0] = _log_sum_exp(b.newp[1], b.newp[2], zero, f)
            leaves.push(b)
        for b in branches:
            if not _candidate(b.oldp[0], leaves, beam_width, zero):
                continue
            for label in range(classes - 1):
                child = b.children.get(label)
                if child is None:
                    child = b.children[label] = _Beam(b, label, zero)
                if child.newp[0] != zero:
                    continue
                child.newp[1] = zero
                prev = b.oldp[1] if label == b.label else b.oldp[0]
                child.newp[2] = logp[label] + prev
                child.newp[0] = child.newp[2]
                if _candidate(child.newp[0], leaves, beam_width, zero):
                    if len(leaves.items) == beam_width:
                        leaves.bottom().newp = [zero, zero, zero]
                    leaves.push(child)
                else:
                    child.oldp = [zero, zero, zero]
                    child.newp = [zero, zero, zero]
    if top_paths > beam_width:
        raise ExecutionError("CTCBeamSearchDecoder: requested more paths than the beam "
                             "width.")
    if top_paths > len(leaves.items):
        raise ExecutionError("CTCBeamSearchDecoder: Less leaves in the beam search than "
                             "requested.")
    best = _TopN(top_paths)
    for leaf in leaves.items:
        best.push(leaf)
    chosen = best.extract()[:top_paths]
    return [c.labels(merge) for c in chosen], [c.newp[0] for c in chosen]


def _candidate(total, leaves, beam_width, zero) -> bool:
    return total > zero and (len(leaves.items) < beam_width
                             or total > leaves.bottom().newp[0])


def _beam_kernel(inputs, attrs, ctx):
    """TF's CTCBeamSearchDecoder: outputs are top_paths indices, top_paths values,
    top_paths shapes, then log_probability (batch, top_paths).

    Raises:
        ShapeError / ExecutionError: as `_check_ctc_inputs`; top_paths > beam_width or
            more paths asked than the search kept (TF's messages).
    """
    x, lens = _check_ctc_inputs("CTCBeamSearchDecoder", inputs)
    beam_width, top_paths = int(attrs["beam_width"]), int(attrs["top_paths"])
    merge = bool(attrs["merge_repeated"])
    batch = x.shape[1]
    log_prob = np.zeros((batch, top_paths), x.dtype)
    per_path = [[] for _ in range(top_paths)]
    for b in range(batch):
        paths, scores = _beam_decode(x[:max(int(lens[b]), 0), b], beam_width, top_paths,
                                     merge)
        for p in range(top_paths):
            per_path[p].append(paths[p])
            log_prob[b, p] = scores[p]
    stored = [_store_sequences(seqs) for seqs in per_path]
    return (*[s[0] for s in stored], *[s[1] for s in stored], *[s[2] for s in stored],
            log_prob)


def _beam_infer(attrs, inputs):
    batch, dtype = _ctc_infer_common("CTCBeamSearchDecoder", inputs)
    n = int(attrs["top_paths"])
    return ([TensorInfo(_I64, (None, 2))] * n + [TensorInfo(_I64, (None,))] * n
            + [TensorInfo(_I64, (2,))] * n + [TensorInfo(dtype, (batch, n))])


def _beam_check(attrs):
    for name in ("beam_width", "top_paths"):
        if attrs[name] is REQUIRED or int(attrs[name]) < 1:
            return f"{name} must be >= 1, got {attrs[name]}"
    return None


# ------------------------------------------------------------------ edit distance

def _levenshtein(s, t) -> int:
    """Edit distance between sequences s and t (lists), one row at a time."""
    if not s:
        return len(t)
    if not t:
        return len(s)
    row = list(range(len(t) + 1))
    for i, a in enumerate(s, 1):
        prev, row[0] = row[0], i
        for j, c in enumerate(t, 1):
            cur = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a != c))
            prev = cur
    return row[-1]


def _check_sparse(name: str, indices, values, shape) -> None:
    if indices.ndim != 2:
        raise ShapeError(f"EditDistance: {name}_indices should be a matrix, but got shape: "
                         f"{list(indices.shape)}")
    if values.ndim != 1:
        raise ShapeError(f"EditDistance: {name}_values should be a vector, but got shape: "
                         f"{list(values.shape)}")
    if shape.ndim != 1:
        raise ShapeError(f"EditDistance: {name}_shape should be a vector, but got shape: "
                         f"{list(shape.shape)}")
    if indices.shape[0] != values.shape[0]:
        raise ShapeError(f"EditDistance: Number of elements in index ({indices.shape[0]}) "
                         f"and values ({values.shape[0]}) do not match.")
    if shape.shape[0] != indices.shape[1]:
        raise ShapeError(f"EditDistance: Number of dimensions in index "
                         f"({indices.shape[1]}) and shape ({shape.shape[0]}) do not match.")
    if shape.shape[0] < 2:
        raise ShapeError(f"EditDistance: Input {name.capitalize()} SparseTensors must have "
                         f"rank at least 2, but {name}_shape rank is: {shape.shape[0]}")


def _groups(indices, values) -> list:
    """Runs of entries sharing all but the last index: [(prefix, [values...])]."""
    out = []
    for k in range(indices.shape[0]):
        prefix = tuple(int(i) for i in indices[k, :-1])
        if out and out[-1][0] == prefix:
            out[-1][1].append(values[k])
        else:
            out.append((prefix, [values[k]]))
    return out


def _edit_kernel(inputs, attrs, ctx):
    """TF's EditDistance over two sparse tensors; float32 of the shared leading shape.

    Raises:
        ShapeError: malformed sparse tensors or ranks that differ (TF's messages).
        ExecutionError: a sequence's index lies outside the output.
    """
    hi, hv, hs, ti, tv, ts = (np.asarray(a) for a in inputs)
    _check_sparse("hypothesis", hi, hv, hs)
    _check_sparse("truth", ti, tv, ts)
    if hs.shape[0] != ts.shape[0]:
        raise ShapeError(f"EditDistance: Num elements of hypothesis_shape does not match "
                         f"truth_shape: {hs.shape[0]} vs. {ts.shape[0]}")
    out_shape = tuple(int(d) for d in np.maximum(hs[:-1], ts[:-1]))
    out = np.zeros(out_shape, np.float32)
    normalize = bool(attrs["normalize"])
    hyp, truth = _groups(hi, hv.tolist()), _groups(ti, tv.tolist())

    def put(prefix, value):
        if any(not 0 <= p < d for p, d in zip(prefix, out_shape)):
            raise ExecutionError(f"EditDistance: sequence index {list(prefix)} is outside "
                                 f"the output shape {list(out_shape)}")
        out[prefix] = value

    # TF walks both group lists together in stored order (it does not sort them)
    i = j = 0
    while i < len(hyp) or j < len(truth):
        if i < len(hyp) and j < len(truth) and hyp[i][0] == truth[j][0]:
            dist = _levenshtein(truth[j][1], hyp[i][1])
            put(hyp[i][0], dist / (len(truth[j][1]) if normalize else 1.0))
            i += 1
            j += 1
        elif i < len(hyp) and (j == len(truth) or truth[j][0] > hyp[i][0]):
            put(hyp[i][0], np.inf if normalize else len(hyp[i][1]))
            i += 1
        else:
            put(truth[j][0], 1.0 if normalize else len(truth[j][1]))
            j += 1
    return (out,)


def _edit_infer(attrs, inputs):
    hs, ts = inputs[2], inputs[5]
    for info in (hs, ts):
        if info.shape is not None and len(info.shape) == 1 and info.shape[0] is not None \
                and info.shape[0] < 2:
            raise ShapeError(f"EditDistance: Input SparseTensors must have rank at least 2, "
                             f"got {info.shape[0]}")
    if hs.value is not None and ts.value is not None and hs.value.shape == ts.value.shape:
        return [TensorInfo(_F32, tuple(int(d) for d in
                                       np.maximum(hs.value[:-1], ts.value[:-1])))]
    rank = None
    for info in (hs, ts):
        if info.shape is not None and len(info.shape) == 1 and info.shape[0] is not None:
            rank = info.shape[0]
    return [TensorInfo(_F32, None if rank is None else (None,) * (rank - 1))]


# ------------------------------------------------------------------ string split

def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else text_bytes(str(v))


def _as_text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _split_inputs(name: str, inputs) -> tuple:
    x, sep = np.asarray(inputs[0], dtype=object), np.asarray(inputs[1], dtype=object)
    if x.ndim != 1:
        raise ShapeError(f"{name}: Shape must be rank 1 but is rank {x.ndim}")
    if sep.ndim != 0:
        raise ShapeError(f"{name}: Shape must be rank 0 but is rank {sep.ndim}")
    for v in (*x.tolist(), sep[()]):
        if not isinstance(v, (str, bytes)):
            raise ExecutionError(f"{name}: inputs must be strings, got "
                                 f"{type(v).__name__} {v!r:.40}")
    return [_as_bytes(v) for v in x.tolist()], _as_bytes(sep[()])


def _store_tokens(rows: list) -> tuple:
    total = sum(len(r) for r in rows)
    indices = np.zeros((total, 2), np.int64)
    values = np.empty(total, dtype=object)
    k = 0
    for i, row in enumerate(rows):
        for j, tok in enumerate(row):
            indices[k] = (i, j)
            values[k] = _as_text(tok)
            k += 1
    shape = np.array([len(rows), max((len(r) for r in rows), default=0)], np.int64)
    return indices, values, shape


def _split_v1(text: bytes, delims: bytes, skip_empty: bool) -> list:
    if not text:
        return []                            # TF gives an empty string no token at all
    if not delims:
        return [text[i:i + 1] for i in range(len(text))]
    tokens, start = [], 0
    for k, byte in enumerate(text):
        if byte in delims:
            tokens.append(text[start:k])
            start = k + 1
    tokens.append(text[start:])
    return [t for t in tokens if t] if skip_empty else tokens


def _split_tf_kernel(inputs, attrs, ctx):
    """TF's StringSplit: every byte of the delimiter splits (empty: split into bytes).

    Raises:
        ShapeError: input not 1-D or delimiter not a scalar.
        ExecutionError: a value that is not a string.
    """
    texts, delims = _split_inputs("StringSplitTF", inputs)
    skip = bool(attrs["skip_empty"])
    return _store_tokens([_split_v1(t, delims, skip) for t in texts])


def _split_whitespace(text: bytes, maxsplit: int) -> list:
    if maxsplit == 0:
        return [text]                       # TF: the string untouched (even empty)
    tokens, p, n, count = [], 0, len(text), 0
    while p < n and text[p] in _WHITESPACE:
        p += 1
    while p < n:
        start = p
        while p < n and text[p] not in _WHITESPACE:
            p += 1
        tokens.append(text[start:p])
        while p < n and text[p] in _WHITESPACE:
            p += 1
        count += 1
        if count == maxsplit:
            # the rest, whitespace after it included, is the last token (even if empty)
            tokens.append(text[p:])
            break
    return tokens


def _split_v2_kernel(inputs, attrs, ctx):
    """TF's StringSplitV2: split on sep (runs of ASCII whitespace if sep is empty),
    at most maxsplit times (-1: no limit).

    Raises:
        ShapeError: input not 1-D or sep not a scalar.
        ExecutionError: a value that is not a string.
    """
    texts, sep = _split_inputs("StringSplitV2", inputs)
    maxsplit = int(attrs["maxsplit"])
    if sep:
        rows = [t.split(sep, maxsplit) for t in texts]
    else:
        rows = [_split_whitespace(t, maxsplit) for t in texts]
    return _store_tokens(rows)


def _split_infer_for(name):
    def infer(attrs, inputs):
        x, sep = inputs[0], inputs[1]
        if x.shape is not None and len(x.shape) != 1:
            raise ShapeError(f"{name}: Shape must be rank 1 but is rank {len(x.shape)}")
        if sep.shape is not None and len(sep.shape) != 0:
            raise ShapeError(f"{name}: Shape must be rank 0 but is rank {len(sep.shape)}")
        return _sparse_infos(2, _OBJ)
    return infer


OPS = (
    define("CTCGreedyDecoder", ["inputs", "sequence_length"],
           ["decoded_indices", "decoded_values", "decoded_shape", "log_probability"],
           _greedy_kernel, attrs=[("merge_repeated", "int", 0), ("blank_index", "int", -1)],
           infer=_greedy_infer, domain=_D, dtypes=("float32", "float64"),
           doc="TF's CTCGreedyDecoder (best path; blank_index -1 is the last class)."),
    define("CTCBeamSearchDecoder", ["inputs", "sequence_length"], ["outputs*"],
           _beam_kernel, attrs=[("beam_width", "int", REQUIRED),
                                ("top_paths", "int", REQUIRED),
                                ("merge_repeated", "int", 1)],
           infer=_beam_infer, domain=_D, dtypes=("float32", "float64"),
           check_attrs=_beam_check,
           doc="TF's CTCBeamSearchDecoder; outputs: top_paths indices, top_paths values, "
               "top_paths shapes, log_probability."),
    define("EditDistance", ["hypothesis_indices", "hypothesis_values", "hypothesis_shape",
                            "truth_indices", "truth_values", "truth_shape"], ["output"],
           _edit_kernel, attrs=[("normalize", "int", 1)], infer=_edit_infer, domain=_D,
           doc="TF's EditDistance between two sparse tensors (float32)."),
    define("StringSplitTF", ["input", "delimiter"], ["indices", "values", "shape"],
           _split_tf_kernel, attrs=[("skip_empty", "int", 1)],
           infer=_split_infer_for("StringSplitTF"), domain=_D,
           doc="TF's StringSplit (each delimiter byte splits)."),
    define("StringSplitV2", ["input", "sep"], ["indices", "values", "shape"],
           _split_v2_kernel, attrs=[("maxsplit", "int", -1)],
           infer=_split_infer_for("StringSplitV2"), domain=_D,
           doc="TF's StringSplitV2 (sep as a whole; whitespace runs when empty)."),
)
