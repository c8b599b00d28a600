"""Record TensorFlow's sparse tensor ops for tests/ops/test_sparse_ops.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_sparse_ops.py

Writes tests/ops/data/tf_sparse_ops_reference.npz. Each case "<case>" holds "<case>/op"
(the raw op's name), "<case>/attrs" (JSON), "<case>/in<i>" (the inputs in the op's
order; SparseConcat's lists flattened as indices..., values..., shapes...), then either
"<case>/out<i>" (TF's outputs) or "<case>/error" (TF's message). Cases with gradients
also hold "<case>/gout" (the output differentiated), "<case>/gy" (its grad_ys) and
"<case>/grad<i>" (tf.gradients w.r.t. input i). No pickle: strings are str arrays.
"""

from __future__ import annotations

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "ops", "data", "tf_sparse_ops_reference.npz")

# TF's raw op argument names, in order
ARGS = {
    "SparseToDense": ["sparse_indices", "output_shape", "sparse_values", "default_value"],
    "SparseTensorDenseMatMul": ["a_indices", "a_values", "a_shape", "b"],
    "SparseAdd": ["a_indices", "a_values", "a_shape", "b_indices", "b_values", "b_shape",
                  "thresh"],
    "SparseTensorDenseAdd": ["a_indices", "a_values", "a_shape", "b"],
    "SparseReorder": ["input_indices", "input_values", "input_shape"],
    "SparseReshape": ["input_indices", "input_shape", "new_shape"],
    "SparseReduceSum": ["input_indices", "input_values", "input_shape", "reduction_axes"],
    "SparseReduceSumSparse": ["input_indices", "input_values", "input_shape",
                              "reduction_axes"],
    "SparseReduceMax": ["input_indices", "input_values", "input_shape", "reduction_axes"],
    "SparseReduceMaxSparse": ["input_indices", "input_values", "input_shape",
                              "reduction_axes"],
    "SparseSlice": ["indices", "values", "shape", "start", "size"],
    "SparseFillEmptyRows": ["indices", "values", "dense_shape", "default_value"],
    "SparseSoftmax": ["sp_indices", "sp_values", "sp_shape"],
    "SparseSparseMaximum": ["a_indices", "a_values", "a_shape", "b_indices", "b_values",
                            "b_shape"],
    "SparseSparseMinimum": ["a_indices", "a_values", "a_shape", "b_indices", "b_values",
                            "b_shape"],
    "SparseDenseCwiseAdd": ["sp_indices", "sp_values", "sp_shape", "dense"],
    "SparseDenseCwiseMul": ["sp_indices", "sp_values", "sp_shape", "dense"],
    "SparseDenseCwiseDiv": ["sp_indices", "sp_values", "sp_shape", "dense"],
}


def i64(x):
    return np.array(x, np.int64).reshape(np.shape(x))


def idx(x, rank):
    return np.array(x, np.int64).reshape(-1, rank)


def _cases(rng):
    """A list of (name, op, inputs, attrs, grad): grad is None or (gout, [input indices])."""
    f32, f64 = np.float32, np.float64
    c = []

    def add(name, op, inputs, attrs=None, grad=None):
        c.append((name, op, inputs, attrs or {}, grad))

    # 1. SparseToDense
    std = "SparseToDense"
    add("std_matrix", std, [idx([[0, 1], [1, 0], [2, 3]], 2), i64([3, 4]),
                            np.array([1.5, -2, 3], f32), f32(0.5)])
    add("std_vector", std, [i64([0, 3, 4]), i64([6]), np.array([1, 2, 3], np.int32),
                            np.int32(-1)])
    add("std_scalar_index", std, [i64(2), i64([5]), np.float64(7), np.float64(0)])
    add("std_scalar_value", std, [idx([[0, 0, 1], [1, 2, 0]], 3), i64([2, 3, 2]),
                                  np.int64(9), np.int64(4)])
    add("std_empty", std, [idx([], 2), i64([2, 2]), np.zeros(0, f32), f32(1)])
    add("std_int32_indices", std, [np.array([[1], [3]], np.int32), np.array([4], np.int32),
                                   np.array([5.0, 6.0], f64), f64(0)])
    add("std_unsorted_err", std, [idx([[1, 0], [0, 1]], 2), i64([2, 2]),
                                  np.array([1, 2], f32), f32(0)])
    add("std_unsorted_novalidate", std, [idx([[1, 0], [0, 1]], 2), i64([2, 2]),
                                         np.array([1, 2], f32), f32(0)],
        {"validate_indices": False})
    add("std_repeated_err", std, [idx([[0, 1], [0, 1]], 2), i64([2, 2]),
                                  np.array([1, 2], f32), f32(0)])
    add("std_oob_err", std, [idx([[0, 1], [2, 0]], 2), i64([2, 2]),
                             np.array([1, 2], f32), f32(0)])
    add("std_negative_err", std, [idx([[0, -1]], 2), i64([2, 2]),
                                  np.array([1], f32), f32(0)])
    add("std_values_count_err", std, [idx([[0, 1], [1, 1]], 2), i64([2, 2]),
                                      np.array([1, 2, 3], f32), f32(0)])

    # 2. SparseTensorDenseMatMul
    mm = "SparseTensorDenseMatMul"
    ai = idx([[2, 1], [0, 0], [1, 3], [0, 2], [2, 1]], 2)  # unordered, a duplicate
    for aa in (False, True):
        for ab in (False, True):
            shape = i64([4, 3]) if aa else i64([3, 4])
            ind = ai[:, ::-1].copy() if aa else ai
            b = rng.standard_normal((2, 4) if ab else (4, 2))
            add(f"mm_{int(aa)}{int(ab)}", mm, [ind, rng.standard_normal(5), shape, b],
                {"adjoint_a": aa, "adjoint_b": ab}, (0, [1, 3]))
    add("mm_f32", mm, [idx([[0, 1], [1, 0]], 2), np.array([1.5, 2], f32), i64([2, 2]),
                       rng.standard_normal((2, 3)).astype(f32)], None, (0, [1, 3]))
    add("mm_int32", mm, [idx([[0, 1], [1, 0]], 2), np.array([3, 2], np.int32), i64([2, 2]),
                         np.array([[1, 2], [3, 4]], np.int32)])
    add("mm_empty", mm, [idx([], 2), np.zeros(0), i64([3, 2]), rng.standard_normal((2, 4))],
        None, (0, [1, 3]))
    add("mm_oob_err", mm, [idx([[0, 5]], 2), np.ones(1), i64([2, 2]), np.ones((2, 2))])
    add("mm_inner_err", mm, [idx([[0, 1]], 2), np.ones(1), i64([2, 3]), np.ones((2, 2))])

    # 3. SparseAdd
    sa = "SparseAdd"
    a_i = idx([[0, 0], [0, 2], [1, 1], [2, 3]], 2)
    b_i = idx([[0, 2], [1, 0], [2, 3], [2, 4]], 2)
    add("add_f64", sa, [a_i, rng.standard_normal(4), i64([3, 5]), b_i, rng.standard_normal(4),
                        i64([3, 5]), np.float64(0)], None, (1, [1, 4]))
    add("add_thresh", sa, [a_i, np.array([1, 2, 0.5, 3], f32), i64([3, 5]), b_i,
                           np.array([4, -1.9, -3, 0.1], f32), i64([3, 5]), f32(0.5)],
        None, (1, [1, 4]))
    add("add_int32", sa, [a_i, np.array([1, 2, 3, 4], np.int32), i64([3, 5]), b_i,
                          np.array([5, -2, -4, 1], np.int32), i64([3, 5]), np.int32(1)])
    add("add_int64_zero", sa, [a_i, np.array([1, 2, 3, 4], np.int64), i64([3, 5]), b_i,
                               np.array([5, -2, -4, 1], np.int64), i64([3, 5]), np.int64(0)])
    add("add_rank3", sa, [idx([[0, 1, 1], [1, 0, 0]], 3), np.array([1.0, 2.0]), i64([2, 2, 2]),
                          idx([[0, 0, 1], [1, 0, 0]], 3), np.array([3.0, 4.0]),
                          i64([2, 2, 2]), np.float64(0)], None, (1, [1, 4]))
    add("add_empty", sa, [idx([], 2), np.zeros(0, f32), i64([2, 2]), idx([[1, 1]], 2),
                          np.array([2.5], f32), i64([2, 2]), f32(0)], None, (1, [1, 4]))
    add("add_shape_err", sa, [a_i, np.ones(4), i64([3, 5]), b_i, np.ones(4), i64([3, 6]),
                              np.float64(0)])

    # 4. SparseTensorDenseAdd
    sda = "SparseTensorDenseAdd"
    add("sda_dup", sda, [idx([[1, 0], [0, 2], [1, 0]], 2), rng.standard_normal(3),
                         i64([2, 3]), rng.standard_normal((2, 3))], None, (0, [1, 3]))
    add("sda_int32", sda, [idx([[1], [3]], 1), np.array([1, 2], np.int32), i64([4]),
                           np.array([10, 20, 30, 40], np.int32)])
    add("sda_rank3", sda, [idx([[1, 0, 1]], 3), np.array([2.0], f32), i64([2, 2, 2]),
                           np.ones((2, 2, 2), f32)], None, (0, [1, 3]))
    add("sda_shape_err", sda, [idx([[1, 0]], 2), np.ones(1), i64([2, 3]), np.ones((3, 2))])

    # 5. SparseReorder
    ro = "SparseReorder"
    add("reorder_2d", ro, [idx([[2, 1], [0, 3], [1, 0], [0, 1]], 2), rng.standard_normal(4),
                           i64([3, 4])], None, (1, [1]))
    add("reorder_3d_dup", ro, [idx([[1, 0, 1], [0, 1, 1], [1, 0, 1], [0, 0, 0]], 3),
                               np.array([1, 2, 3, 4], np.int32), i64([2, 2, 2])])
    add("reorder_empty", ro, [idx([], 2), np.zeros(0, f32), i64([3, 4])])
    add("reorder_oob_err", ro, [idx([[5, 0]], 2), np.ones(1, f32), i64([3, 4])])

    # 6. SparseReshape
    rs = "SparseReshape"
    add("reshape_2to3", rs, [idx([[0, 1], [1, 4], [2, 0]], 2), i64([3, 6]), i64([3, 2, 3])])
    add("reshape_infer", rs, [idx([[0, 1], [1, 4], [2, 0]], 2), i64([3, 6]), i64([-1, 9])])
    add("reshape_flat", rs, [idx([[1, 0, 1], [0, 1, 0]], 3), i64([2, 2, 2]), i64([8])])
    add("reshape_empty", rs, [idx([], 2), i64([4, 0]), i64([0, -1, 2])])
    add("reshape_size_err", rs, [idx([[0, 1]], 2), i64([3, 6]), i64([4, 4])])
    add("reshape_two_neg_err", rs, [idx([[0, 1]], 2), i64([3, 6]), i64([-1, -1])])
    add("reshape_indivisible_err", rs, [idx([[0, 1]], 2), i64([3, 6]), i64([-1, 5])])

    # 7. SparseReduce*
    r_i = idx([[0, 1, 0], [1, 0, 1], [0, 1, 1], [1, 2, 0], [0, 0, 1]], 3)
    r_v = np.array([1.0, -2.0, 3.0, 4.0, -5.0])
    for op in ("SparseReduceSum", "SparseReduceSumSparse", "SparseReduceMax",
               "SparseReduceMaxSparse"):
        short = op[len("SparseReduce"):].lower()
        gr = (0, [1]) if op == "SparseReduceSum" else None
        for axes, keep in (([1], False), ([0, 2], True), ([-1], False), ([], False),
                           ([0, 1, 2], False), ([-3, 1], True)):
            name = f"red_{short}_{'_'.join(str(a).replace('-', 'm') for a in axes) or 'none'}"
            add(name + ("_keep" if keep else ""), op,
                [r_i, r_v, i64([2, 3, 2]), np.array(axes, np.int32)],
                {"keep_dims": keep}, gr)
        add(f"red_{short}_int32_scalar_axis", op,
            [r_i, np.array([1, 2, 3, 4, 5], np.int32), i64([2, 3, 2]), np.int32(0)])
        add(f"red_{short}_f32_empty", op,
            [idx([], 2), np.zeros(0, f32), i64([2, 3]), np.array([1], np.int32)])
        add(f"red_{short}_axis_err", op, [r_i, r_v, i64([2, 3, 2]), np.array([3], np.int32)])

    # 8. SparseConcat (inputs flattened: N indices, N values, N shapes)
    add("concat_dim1", "SparseConcat",
        [idx([[0, 1], [1, 0]], 2), idx([[0, 0], [1, 2]], 2), idx([[1, 1]], 2),
         np.array([1, 2], f32), np.array([3, 4], f32), np.array([5], f32),
         i64([2, 2]), i64([2, 3]), i64([2, 2])], {"concat_dim": 1, "N": 3})
    add("concat_dim0_neg", "SparseConcat",
        [idx([[0, 1], [1, 0]], 2), idx([[0, 0]], 2),
         np.array([1, 2], np.int64), np.array([3], np.int64),
         i64([2, 2]), i64([1, 2])], {"concat_dim": -2, "N": 2})
    add("concat_empty", "SparseConcat",
        [idx([], 2), idx([[0, 0]], 2), np.zeros(0), np.array([3.0]), i64([2, 2]), i64([2, 1])],
        {"concat_dim": 1, "N": 2})
    add("concat_shape_err", "SparseConcat",
        [idx([[0, 1]], 2), idx([[0, 0]], 2), np.ones(1), np.ones(1), i64([2, 2]), i64([3, 2])],
        {"concat_dim": 1, "N": 2})

    # 9. SparseSlice
    sl = "SparseSlice"
    s_i = idx([[0, 0], [0, 3], [1, 1], [2, 2], [3, 4], [3, 0]], 2)
    add("slice_mid", sl, [s_i, np.arange(6.0), i64([4, 5]), i64([1, 1]), i64([2, 3])])
    add("slice_clip", sl, [s_i, np.arange(6, dtype=np.int32), i64([4, 5]), i64([2, 2]),
                           i64([5, 5])])
    add("slice_empty", sl, [s_i, np.arange(6.0, dtype=f32), i64([4, 5]), i64([1, 2]),
                            i64([0, 2])])
    add("slice_start_past", sl, [s_i, np.arange(6.0), i64([4, 5]), i64([5, 0]), i64([2, 2])])

    # 10. SparseFillEmptyRows
    fe = "SparseFillEmptyRows"
    add("fill_rows", fe, [idx([[1, 0], [3, 2], [1, 3]], 2), rng.standard_normal(3),
                          i64([5, 4]), np.float64(-1)], None, (1, [1, 3]))
    add("fill_none_empty", fe, [idx([[0, 0], [1, 1]], 2), np.array([1, 2], np.int32),
                                i64([2, 3]), np.int32(7)])
    add("fill_all_empty", fe, [idx([], 2), np.zeros(0, f32), i64([3, 2]), f32(0.5)],
        None, (1, [1, 3]))
    add("fill_rank3", fe, [idx([[2, 0, 1]], 3), np.array([4.0], f32), i64([3, 2, 2]),
                           f32(9)], None, (1, [1, 3]))
    add("fill_oob_err", fe, [idx([[5, 0]], 2), np.ones(1), i64([3, 2]), np.float64(0)])

    # 11. SparseSoftmax
    sm = "SparseSoftmax"
    add("softmax_2d", sm, [idx([[0, 0], [0, 2], [1, 1], [2, 0], [2, 1], [2, 3]], 2),
                           rng.standard_normal(6), i64([3, 4])], None, (0, [1]))
    add("softmax_3d_f32", sm, [idx([[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 2]], 3),
                               np.array([1, 2, 100, 101], f32), i64([2, 2, 3])],
        None, (0, [1]))
    add("softmax_empty", sm, [idx([], 2), np.zeros(0), i64([2, 2])])

    # 12. SparseSparseMaximum / Minimum
    for op in ("SparseSparseMaximum", "SparseSparseMinimum"):
        short = op[len("SparseSparse"):].lower()
        add(f"ss_{short}", op, [a_i, rng.standard_normal(4), i64([3, 5]), b_i,
                                rng.standard_normal(4), i64([3, 5])])
        add(f"ss_{short}_int32", op, [a_i, np.array([1, -2, 3, 4], np.int32), i64([3, 5]),
                                      b_i, np.array([5, -2, -4, 1], np.int32), i64([3, 5])])

    # 13. SparseDenseCwise*
    d_i = idx([[0, 1], [1, 0], [1, 2]], 2)
    for op in ("SparseDenseCwiseAdd", "SparseDenseCwiseMul", "SparseDenseCwiseDiv"):
        short = op[len("SparseDenseCwise"):].lower()
        gr = None if short == "add" else (0, [1, 3])
        add(f"cw_{short}_full", op, [d_i, rng.standard_normal(3), i64([2, 3]),
                                     rng.standard_normal((2, 3)) + 3], None, gr)
        add(f"cw_{short}_bcast_row", op, [d_i, rng.standard_normal(3).astype(f32), i64([2, 3]),
                                          (rng.standard_normal(3) + 3).astype(f32)], None, gr)
        add(f"cw_{short}_bcast_col", op, [d_i, rng.standard_normal(3), i64([2, 3]),
                                          rng.standard_normal((2, 1)) + 3], None, gr)
        add(f"cw_{short}_scalar", op, [d_i, rng.standard_normal(3), i64([2, 3]),
                                       np.float64(2.5)], None, gr)
    return c


def _message(e) -> str:
    # graph-mode messages lead with where the node was defined; the kernel's own
    # message follows the "Node: '<name>'" line (and precedes any "\n\t [[" trailer)
    text = str(e.message).split("\n\t [[")[0]
    if "\nNode: '" in text:
        text = text.split("\nNode: '", 1)[1].split("\n", 1)[1]
    return text.strip()


def _run(tf, name, op, inputs, attrs, grad, rec):
    rec[f"{name}/op"] = np.array(op)
    rec[f"{name}/attrs"] = np.array(json.dumps(attrs))
    for i, x in enumerate(inputs):
        rec[f"{name}/in{i}"] = np.asarray(x)
    g = tf.Graph()
    with g.as_default():
        # placeholders of unknown shape: the kernels, not graph-time shape inference,
        # see the inputs (so refusals carry the kernels' messages)
        ts = [tf.placeholder(tf.as_dtype(np.asarray(x).dtype)) for x in inputs]
        feed = dict(zip(ts, inputs))
        kw = {k: v for k, v in attrs.items() if k != "N"}
        if op == "SparseConcat":
            n = attrs["N"]
            outs = tf.raw_ops.SparseConcat(indices=ts[:n], values=ts[n:2 * n],
                                           shapes=ts[2 * n:], **kw)
        else:
            outs = getattr(tf.raw_ops, op)(**dict(zip(ARGS[op], ts)), **kw)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        fetch = list(outs)
        wrt = []
        if grad is not None:
            gout, wrt = grad
            gy_t = tf.placeholder(outs[gout].dtype)
            grads = tf.gradients(outs[gout], [ts[i] for i in wrt], grad_ys=gy_t)
    with tf.Session(graph=g) as s:
        try:
            vals = s.run(fetch, feed)
        except tf.errors.OpError as e:
            rec[f"{name}/error"] = np.array(_message(e))
            return
        for i, v in enumerate(vals):
            rec[f"{name}/out{i}"] = np.asarray(v)
        if grad is not None:
            shape = vals[gout].shape
            gy = np.random.default_rng(len(name)).standard_normal(shape).astype(
                vals[gout].dtype)
            rec[f"{name}/gout"] = np.array(gout)
            rec[f"{name}/gy"] = gy
            try:
                gvals = s.run([x for x in grads if x is not None], {gy_t: gy, **feed})
            except tf.errors.OpError as e:  # TF's own rule fails (a scalar dense)
                print(f"{name}: TF's gradient fails: {_message(e)}")
                del rec[f"{name}/gout"], rec[f"{name}/gy"]
                return
            it = iter(gvals)
            for i, gr in zip(wrt, grads):
                if gr is not None:
                    v = next(it)
                    if hasattr(v, "values"):  # IndexedSlicesValue -> dense
                        dense = np.zeros(inputs[i].shape, v.values.dtype)
                        np.add.at(dense, v.indices, v.values)
                        v = dense
                    rec[f"{name}/grad{i}"] = np.asarray(v)


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    rng = np.random.default_rng(51)
    rec: dict = {}
    names = []
    for name, op, inputs, attrs, grad in _cases(rng):
        _run(tf, name, op, inputs, attrs, grad, rec)
        names.append(name)
    rec["cases"] = np.array(names)
    np.savez_compressed(OUT, **rec)
    print(f"{len(names)} cases -> {OUT}")


if __name__ == "__main__":
    main()
