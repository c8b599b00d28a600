"""Record TensorFlow's sparse-producing kernels for tests/ops/test_sparse_decode.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_sparse_decode.py

Runs TF's raw ops CTCGreedyDecoder, CTCBeamSearchDecoder, EditDistance, StringSplit
and StringSplitV2 in graph mode and writes tests/ops/data/tf_sparse_decode_reference.npz.
Each case "<op>/<case>" holds its inputs "<key>/in<i>", its attributes "<key>/attr/<name>"
(ints) and either TF's outputs "<key>/out<i>" or TF's refusal "<key>/error" (the message).
Strings are stored as numpy bytes arrays (TF's bytes, UTF-8 for text), so np.load needs
no pickle.
"""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "ops", "data", "tf_sparse_decode_reference.npz")


def _greedy_cases(rng) -> dict:
    """name -> (inputs, sequence_length, attrs)."""
    def logits(t, b, c, dtype=np.float32):
        return rng.standard_normal((t, b, c)).astype(dtype)
    ties = rng.integers(0, 3, (7, 4, 5)).astype(np.float32)
    cases = {
        "basic": (logits(6, 3, 5), [6, 3, 0], {"merge_repeated": 1}),
        "no_merge": (logits(6, 3, 5), [6, 4, 2], {"merge_repeated": 0}),
        "default_attrs": (logits(5, 2, 4), [5, 5], {}),
        "blank_first": (logits(6, 2, 4), [6, 5], {"merge_repeated": 1, "blank_index": 0}),
        "blank_mid": (logits(6, 2, 4), [6, 3], {"merge_repeated": 0, "blank_index": 2}),
        "blank_neg2": (logits(6, 2, 4), [6, 6], {"merge_repeated": 1, "blank_index": -2}),
        "ties": (ties, [7, 5, 1, 0], {"merge_repeated": 1}),
        "ties_no_merge": (ties, [7, 6, 2, 3], {"merge_repeated": 0}),
        "float64": (logits(6, 3, 6, np.float64), [6, 2, 4], {"merge_repeated": 1}),
        "all_zero_len": (logits(3, 2, 3), [0, 0], {"merge_repeated": 1}),
        "one_class": (logits(4, 2, 1), [4, 2], {"merge_repeated": 1}),
        "repeats": (np.tile(np.eye(3, dtype=np.float32)[[0, 0, 2, 0, 1, 1]][:, None], (1, 2, 1)),
                    [6, 6], {"merge_repeated": 1}),
        "repeats_no_merge": (np.tile(np.eye(3, dtype=np.float32)[[0, 0, 2, 0, 1, 1]][:, None],
                                     (1, 2, 1)), [6, 6], {"merge_repeated": 0}),
        "err_seq_too_long": (logits(4, 2, 3), [4, 5], {}),
        "err_rank": (logits(4, 2, 3)[0], [4, 2], {}),
        "err_batch": (logits(4, 2, 3), [4, 2, 1], {}),
        "err_seq_rank": (logits(4, 2, 3), [[4, 2]], {}),
        "err_blank": (logits(4, 2, 3), [4, 2], {"blank_index": 3}),
        "err_blank_neg": (logits(4, 2, 3), [4, 2], {"blank_index": -4}),
        "err_empty": (np.zeros((0, 2, 3), np.float32), [0, 0], {}),
    }
    return cases


def _beam_cases(rng) -> dict:
    """name -> (inputs, sequence_length, attrs)."""
    def logits(t, b, c, dtype=np.float32):
        return rng.standard_normal((t, b, c)).astype(dtype)
    cases = {
        "basic": (logits(8, 3, 4), [8, 5, 2], {"beam_width": 4, "top_paths": 1}),
        "top3": (logits(8, 3, 5), [8, 7, 6], {"beam_width": 6, "top_paths": 3}),
        "no_merge": (logits(8, 2, 4), [8, 8], {"beam_width": 5, "top_paths": 2,
                                               "merge_repeated": 0}),
        "beam1": (logits(6, 2, 4), [6, 4], {"beam_width": 1, "top_paths": 1}),
        "wide": (logits(10, 2, 6), [10, 9], {"beam_width": 25, "top_paths": 5}),
        "wide_no_merge": (logits(10, 2, 6), [10, 7], {"beam_width": 20, "top_paths": 4,
                                                      "merge_repeated": 0}),
        "float64": (logits(7, 2, 5, np.float64), [7, 5], {"beam_width": 8, "top_paths": 3}),
        "zero_len": (logits(4, 2, 3), [0, 4], {"beam_width": 3, "top_paths": 1}),
        "uniform_ties": (np.zeros((4, 1, 3), np.float32), [4], {"beam_width": 5,
                                                                "top_paths": 5}),
        "int_ties": (rng.integers(0, 2, (6, 3, 4)).astype(np.float32), [6, 5, 3],
                     {"beam_width": 7, "top_paths": 4}),
        "int_ties_no_merge": (rng.integers(0, 2, (6, 3, 4)).astype(np.float32), [6, 6, 6],
                              {"beam_width": 6, "top_paths": 3, "merge_repeated": 0}),
        "int_ties_wide": (rng.integers(0, 3, (5, 2, 5)).astype(np.float32), [5, 4],
                          {"beam_width": 18, "top_paths": 6}),
        "big_logits": (logits(6, 2, 4) * 30, [6, 6], {"beam_width": 4, "top_paths": 2}),
        "err_top_over_beam": (logits(4, 2, 3), [4, 4], {"beam_width": 2, "top_paths": 3}),
        "err_few_leaves": (logits(4, 2, 3), [0, 4], {"beam_width": 3, "top_paths": 2}),
        "err_seq_too_long": (logits(4, 2, 3), [5, 4], {"beam_width": 3, "top_paths": 1}),
        "err_rank": (logits(4, 2, 3)[:, :, 0], [4, 4], {"beam_width": 3, "top_paths": 1}),
        "err_batch": (logits(4, 2, 3), [4], {"beam_width": 3, "top_paths": 1}),
    }
    return cases


def _sparse(rows, shape, dtype=np.int64):
    """rows: list of (index tuple, value) -> (indices, values, shape) arrays."""
    idx = np.array([r[0] for r in rows], np.int64).reshape(len(rows), len(shape))
    if dtype is bytes:
        vals = np.array([r[1].encode() for r in rows], dtype="S").reshape(len(rows))
    else:
        vals = np.array([r[1] for r in rows], dtype).reshape(len(rows))
    return idx, vals, np.array(shape, np.int64)


def _seqs(seqs, shape, dtype=np.int64):
    """seqs: {prefix tuple: list of values} -> sparse arrays, sorted row-major."""
    rows = []
    for prefix in sorted(seqs):
        for j, v in enumerate(seqs[prefix]):
            rows.append((tuple(prefix) + (j,), v))
    return _sparse(rows, shape, dtype)


def _edit_cases(rng) -> dict:
    """name -> (hyp arrays, truth arrays, attrs)."""
    def rand_seqs(n_rows, max_len, vocab, shape):
        seqs = {}
        for i in range(n_rows):
            n = int(rng.integers(0, max_len + 1))
            if n:
                seqs[(i,)] = list(rng.integers(0, vocab, n))
        return _seqs(seqs, shape)
    hyp = rand_seqs(6, 7, 4, [6, 7])
    truth = rand_seqs(6, 7, 4, [6, 7])
    h3 = _seqs({(0, 0): [1, 2, 3], (0, 2): [4], (1, 1): [5, 5], (1, 0): [2]}, [2, 3, 4])
    t3 = _seqs({(0, 0): [1, 3], (0, 1): [7, 8], (1, 1): [5, 6, 5], (1, 2): [1]}, [2, 3, 3])
    sh = _seqs({(0,): ["ab", "cd", "e"], (1,): ["x"], (3,): ["héllo", ""]}, [4, 3], bytes)
    st = _seqs({(0,): ["ab", "e"], (2,): ["y", "z"], (3,): ["héllo", "", "!"]}, [4, 3], bytes)
    empty = _sparse([], [3, 0])
    return {
        "random": (hyp, truth, {"normalize": 1}),
        "random_raw": (hyp, truth, {"normalize": 0}),
        "rank3": (h3, t3, {"normalize": 1}),
        "rank3_raw": (h3, t3, {"normalize": 0}),
        "unequal_shape": (_seqs({(0,): [1, 2]}, [1, 5]),
                          _seqs({(0,): [1], (3,): [2, 2]}, [4, 3]), {"normalize": 1}),
        "strings": (sh, st, {"normalize": 1}),
        "strings_raw": (sh, st, {"normalize": 0}),
        "empty_both": (empty, _sparse([], [3, 0]), {"normalize": 1}),
        "empty_truth": (_seqs({(1,): [1, 2, 3]}, [3, 3]), _sparse([], [3, 0]),
                        {"normalize": 1}),
        "empty_truth_raw": (_seqs({(1,): [1, 2, 3]}, [3, 3]), _sparse([], [3, 0]),
                            {"normalize": 0}),
        "empty_hyp": (_sparse([], [2, 0]), _seqs({(0,): [4, 4]}, [2, 2]), {"normalize": 1}),
        "empty_hyp_raw": (_sparse([], [2, 0]), _seqs({(0,): [4, 4]}, [2, 2]),
                          {"normalize": 0}),
        "float_values": (_seqs({(0,): [1.5, 2.5], (1,): [0.0]}, [2, 2], np.float32),
                         _seqs({(0,): [1.5, 3.5, 2.5], (1,): [-0.0]}, [2, 3], np.float32),
                         {"normalize": 1}),
        "gap_in_sequence": (_sparse([((0, 0), 1), ((0, 3), 2)], [1, 5]),
                            _sparse([((0, 1), 1), ((0, 2), 2)], [1, 5]), {"normalize": 1}),
        "err_rank1": (_sparse([((0,), 1)], [2]), _sparse([((0,), 1)], [2]), {}),
        "err_rank_mismatch": (_seqs({(0,): [1]}, [2, 2]), h3, {}),
        "err_values_len": ((np.zeros((2, 2), np.int64), np.zeros(3, np.int64),
                            np.array([2, 2], np.int64)), _seqs({(0,): [1]}, [2, 2]), {}),
        "err_unsorted": (_sparse([((1, 0), 1), ((0, 0), 2)], [2, 2]),
                         _seqs({(0,): [1]}, [2, 2]), {}),
        "err_out_of_bounds": (_sparse([((0, 5), 1)], [2, 2]),
                              _seqs({(0,): [1]}, [2, 2]), {}),
    }


def _split_cases() -> dict:
    """name -> (op, strings, separator, attrs)."""
    words = ["hello world", "", "a,,b,", " lead  trail ", "héllo wörld é", "x"]
    return {
        "v1_space": ("StringSplit", words, " ", {}),
        "v1_space_keep": ("StringSplit", words, " ", {"skip_empty": 0}),
        "v1_multi": ("StringSplit", words, ", ", {"skip_empty": 1}),
        "v1_multi_keep": ("StringSplit", words, ", ", {"skip_empty": 0}),
        "v1_empty_delim": ("StringSplit", ["abc", "", "de"], "", {}),
        "v1_empty_delim_keep": ("StringSplit", ["abc", "", "de"], "", {"skip_empty": 0}),
        "v1_non_ascii_delim": ("StringSplit", ["aébéc", "éé"], "é", {"skip_empty": 0}),
        "v1_non_ascii_text_empty_delim": ("StringSplit", ["hé"], "", {}),
        "v1_all_empty": ("StringSplit", ["", ""], " ", {}),
        "v1_none": ("StringSplit", np.zeros((0,), "S"), " ", {}),
        "v2_default": ("StringSplitV2", words, "", {}),
        "v2_ws_maxsplit": ("StringSplitV2", words + ["  a b  c  "], "", {"maxsplit": 1}),
        "v2_ws_maxsplit2": ("StringSplitV2", ["  a b  c  ", "a\tb\nc d"], "", {"maxsplit": 2}),
        "v2_sep": ("StringSplitV2", words, ",", {}),
        "v2_sep_multi": ("StringSplitV2", ["a<>b<><>c", "<>", "", "abc"], "<>", {}),
        "v2_sep_maxsplit": ("StringSplitV2", ["a<>b<><>c", "<><><>", "x<>y"], "<>",
                            {"maxsplit": 2}),
        "v2_ws_maxsplit0": ("StringSplitV2", ["a b", " c ", ""], "", {"maxsplit": 0}),
        "v2_maxsplit0": ("StringSplitV2", ["a b", "a,b"], ",", {"maxsplit": 0}),
        "v2_non_ascii": ("StringSplitV2", ["héllo wörld", "éaé"], "é", {}),
        "v2_space_sep": ("StringSplitV2", [" a  b "], " ", {}),
        "err_v1_rank": ("StringSplit", [["a b"]], " ", {}),
        "err_v1_delim_rank": ("StringSplit", ["a b"], [" "], {}),
        "err_v2_rank": ("StringSplitV2", [["a b"]], " ", {}),
        "err_v2_sep_rank": ("StringSplitV2", ["a b"], [" "], {}),
    }


def _bytes(values) -> np.ndarray:
    arr = np.asarray(values, dtype=object)
    out = np.array([v.encode() if isinstance(v, str) else v for v in arr.reshape(-1)],
                   dtype="S").reshape(arr.shape)
    return out if arr.size else np.zeros(arr.shape, "S1")


def main() -> int:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    raw = tf.raw_ops
    rng = np.random.default_rng(20240517)
    arrays: dict = {}

    def record(key, ins, attrs, build):
        for i, a in enumerate(ins):
            arrays[f"{key}/in{i}"] = a
        for name, v in attrs.items():
            arrays[f"{key}/attr/{name}"] = np.int64(v)
        try:
            with tf.Graph().as_default(), tf.Session() as sess:
                outs = sess.run(build([tf.constant(a) for a in ins]))
        except (tf.errors.InvalidArgumentError, tf.errors.FailedPreconditionError,
                ValueError) as e:
            message = getattr(e, "message", None) or str(e)
            # graph execution errors: the kernel's message is the line before "[[{{node"
            lines = [ln for ln in message.split("\n") if ln.strip()]
            for i, ln in enumerate(lines):
                if ln.strip().startswith("[[{{node") and i:
                    message = lines[i - 1]
                    break
            else:
                message = lines[0].split(" for '{{node")[0]
            arrays[key + "/error"] = np.array(message)
            print(key, "error:", arrays[key + "/error"])
            return
        for i, o in enumerate(outs):
            # TF hands strings back as object arrays of bytes: store them as bytes arrays
            arrays[f"{key}/out{i}"] = _bytes(o) if o.dtype == object else o

    for name, (x, lens, attrs) in _greedy_cases(rng).items():
        tf_attrs = {k: (bool(v) if k == "merge_repeated" else v) for k, v in attrs.items()}
        record(f"greedy/{name}", [x, np.array(lens, np.int32)], attrs,
               lambda t, a=tf_attrs: list(raw.CTCGreedyDecoder(
                   inputs=t[0], sequence_length=t[1], **a)))
    for name, (x, lens, attrs) in _beam_cases(rng).items():
        tf_attrs = {k: (bool(v) if k == "merge_repeated" else v) for k, v in attrs.items()}

        def beam(t, a=tf_attrs):
            ix, vals, shapes, logp = raw.CTCBeamSearchDecoder(
                inputs=t[0], sequence_length=t[1], **a)
            return list(ix) + list(vals) + list(shapes) + [logp]
        record(f"beam/{name}", [x, np.array(lens, np.int32)], attrs, beam)
    for name, (hyp, truth, attrs) in _edit_cases(rng).items():
        tf_attrs = {k: bool(v) for k, v in attrs.items()}
        record(f"edit/{name}", list(hyp) + list(truth), attrs,
               lambda t, a=tf_attrs: [raw.EditDistance(
                   hypothesis_indices=t[0], hypothesis_values=t[1], hypothesis_shape=t[2],
                   truth_indices=t[3], truth_values=t[4], truth_shape=t[5],
                   normalize=a.get("normalize", True))])
    for name, (op, words, sep, attrs) in _split_cases().items():
        ins = [_bytes(words), _bytes(sep)]
        if op == "StringSplit":
            fn = (lambda t, a=dict(attrs): list(raw.StringSplit(
                input=t[0], delimiter=t[1], skip_empty=bool(a.get("skip_empty", 1)))))
        else:
            fn = (lambda t, a=dict(attrs): list(raw.StringSplitV2(
                input=t[0], sep=t[1], maxsplit=a.get("maxsplit", -1))))
        arrays[f"split/{name}/op"] = np.array(op)
        record(f"split/{name}", ins, attrs, fn)

    tmp = OUT + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, OUT)
    print("wrote", len(arrays), "arrays to", OUT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
