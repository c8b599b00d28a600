"""Gradient rules vs central finite differences in float64, one row per op (table-driven).

Each case: (id, build function over input tensors, input arrays). Inputs are float64
unless the op needs integers; only float inputs are checked.
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.train import api_special as _sp
from onegraph.train import nn_tf1_more as _ctc
from onegraph.errors import GradientNotDefinedError

from .gradcheck import check_op_gradients

R = np.random.default_rng(42)


def f64(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, shape).astype(np.float64)


def away_from_zero(*shape):
    x = f64(*shape)
    return np.where(np.abs(x) < 0.2, 0.5, x)


raw = og.raw_ops


def unary(op_type, **attrs):
    return lambda x: getattr(raw, op_type)(x, **attrs)


def binary(op_type):
    return lambda a, b: getattr(raw, op_type)(a, b)


def recurrent(op_type, direction="forward", num_outputs=2, seq_lens=None, with_state=True,
              **attrs):
    """Build an RNN/GRU/LSTM over (X, W, R[, B, initial_h[, initial_c, P]])."""
    def build(x, w, r, *rest):
        lens = None if seq_lens is None else og.constant(np.array(seq_lens))
        ins = [x, w, r] + ([rest[0], lens] + list(rest[1:]) if rest else [])
        return getattr(raw, op_type)(*ins, hidden_size=2, direction=direction,
                                     num_outputs=num_outputs, **attrs)
    return build


def recurrent_inputs(op_type, dirs=1, layout=0, full=True, steps=3, batch=2, size=3,
                     hidden=2):
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op_type]
    x = f64(steps, batch, size) if layout == 0 else f64(batch, steps, size)
    state = (dirs, batch, hidden) if layout == 0 else (batch, dirs, hidden)
    ins = [x, f64(dirs, gates * hidden, size), f64(dirs, gates * hidden, hidden)]
    if full:
        ins += [f64(dirs, 2 * gates * hidden), f64(*state)]
        if op_type == "LSTM":
            ins += [f64(*state), f64(dirs, 3 * hidden)]
    return ins


CASES = [
    # elementwise arithmetic, with broadcasting
    ("Add", binary("Add"), [f64(3, 4), f64(4)]),
    ("Add_bcast_both", binary("Add"), [f64(3, 1), f64(1, 4)]),
    ("Sub", binary("Sub"), [f64(2, 3), f64(2, 1)]),
    ("Mul", binary("Mul"), [f64(2, 3), f64(3)]),
    ("Div", binary("Div"), [f64(2, 3), f64(2, 3, lo=0.5, hi=2.0)]),
    ("Pow", binary("Pow"), [f64(2, 3, lo=0.5, hi=2.0), f64(2, 3)]),
    ("Neg", unary("Neg"), [f64(3)]),
    ("Abs", unary("Abs"), [away_from_zero(5)]),
    ("Exp", unary("Exp"), [f64(4)]),
    ("Log", unary("Log"), [f64(4, lo=0.5, hi=3.0)]),
    ("Sqrt", unary("Sqrt"), [f64(4, lo=0.5, hi=3.0)]),
    ("Reciprocal", unary("Reciprocal"), [f64(4, lo=0.5, hi=3.0)]),
    ("Sin", unary("Sin"), [f64(4)]),
    ("Cos", unary("Cos"), [f64(4)]),
    ("Tan", unary("Tan"), [f64(4)]),
    ("Sinh", unary("Sinh"), [f64(4)]),
    ("Cosh", unary("Cosh"), [f64(4)]),
    ("Asin", unary("Asin"), [f64(4, lo=-0.8, hi=0.8)]),
    ("Acos", unary("Acos"), [f64(4, lo=-0.8, hi=0.8)]),
    ("Atan", unary("Atan"), [f64(4)]),
    ("Asinh", unary("Asinh"), [f64(4)]),
    ("Erf", unary("Erf"), [f64(4)]),
    ("Acosh", unary("Acosh"), [f64(4, lo=1.2, hi=3.0)]),
    ("Atanh", unary("Atanh"), [f64(4, lo=-0.8, hi=0.8)]),
    ("Mod_fmod", lambda a, b: raw.Mod(a, b, fmod=1), [f64(3, 4, lo=-5, hi=5),
                                                      f64(4, lo=0.7, hi=1.3)]),
    ("Mod_floor", lambda a, b: raw.Mod(a, b), [f64(3, 4, lo=-5, hi=5), f64(3, 1, lo=0.7, hi=1.3)]),
    ("Max", lambda a, b: raw.Max(a, b), [f64(3, 4), f64(4)]),
    ("Min", lambda a, b: raw.Min(a, b), [f64(3, 4), f64(3, 4)]),
    ("Sum", lambda a, b, c: raw.Sum(a, b, c), [f64(2, 3), f64(3), f64(2, 1)]),
    ("Mean", lambda a, b: raw.Mean(a, b), [f64(2, 3), f64(2, 3)]),
    ("Where", lambda a, b: og.where(a > 0.0, a, b), [away_from_zero(3, 4), f64(4)]),
    ("Cast", lambda a: raw.Cast(a, to=11) * a, [f64(3)]),
    ("Clip", lambda a: og.clip_by_value(a, -0.5, 0.5), [f64(10)]),
    # activations
    ("Relu", unary("Relu"), [away_from_zero(3, 4)]),
    ("LeakyRelu", unary("LeakyRelu", alpha=0.1), [away_from_zero(3, 4)]),
    ("Elu", unary("Elu"), [away_from_zero(3, 4)]),
    ("Selu", unary("Selu"), [away_from_zero(3, 4)]),
    ("Sigmoid", unary("Sigmoid"), [f64(3, 4)]),
    ("Tanh", unary("Tanh"), [f64(3, 4)]),
    ("Softplus", unary("Softplus"), [f64(3, 4)]),
    ("Softsign", unary("Softsign"), [f64(3, 4)]),
    ("HardSigmoid", unary("HardSigmoid"), [f64(3, 4)]),
    ("HardSwish", unary("HardSwish"), [f64(3, 4, lo=-5, hi=5)]),
    ("Gelu", unary("Gelu"), [f64(3, 4)]),
    ("Gelu_tanh", unary("Gelu", approximate="tanh"), [f64(3, 4)]),
    ("Mish", unary("Mish"), [f64(3, 4)]),
    ("PRelu", lambda x, s: raw.PRelu(x, s), [away_from_zero(2, 3), f64(3)]),
    ("ThresholdedRelu", unary("ThresholdedRelu", alpha=0.1), [away_from_zero(6)]),
    ("Celu", unary("Celu", alpha=0.7), [away_from_zero(3, 4)]),
    ("Shrink", unary("Shrink", lambd=0.3, bias=0.1), [f64(10)]),
    ("Hardmax", lambda x: raw.Hardmax(x) * x, [f64(3, 4)]),
    ("Softmax", unary("Softmax", axis=-1), [f64(3, 5)]),
    ("Softmax_axis0", unary("Softmax", axis=0), [f64(3, 5)]),
    ("LogSoftmax", unary("LogSoftmax", axis=1), [f64(3, 5)]),
    # linalg
    ("MatMul_2d", lambda a, b: og.matmul(a, b), [f64(3, 4), f64(4, 2)]),
    ("MatMul_batched", lambda a, b: og.matmul(a, b), [f64(2, 3, 4), f64(4, 5)]),
    ("MatMul_vec", lambda a, b: og.matmul(a, b), [f64(4), f64(4, 2)]),
    ("MatMul_matvec", lambda a, b: og.matmul(a, b), [f64(3, 4), f64(4)]),
    ("Gemm", lambda a, b, c: raw.Gemm(a, b, c, alpha=0.5, beta=2.0),
     [f64(3, 4), f64(4, 2), f64(2)]),
    ("Gemm_tA", lambda a, b: raw.Gemm(a, b, transA=1), [f64(4, 3), f64(4, 2)]),
    ("Gemm_tB", lambda a, b: raw.Gemm(a, b, transB=1), [f64(3, 4), f64(2, 4)]),
    ("Gemm_tAtB", lambda a, b: raw.Gemm(a, b, transA=1, transB=1), [f64(4, 3), f64(2, 4)]),
    ("Einsum_matmul", lambda a, b: raw.Einsum(a, b, equation="ij,jk->ik"),
     [f64(2, 3), f64(3, 4)]),
    ("Einsum_implicit_sum_out", lambda a, b: raw.Einsum(a, b, equation="ij,jk"),
     [f64(2, 3), f64(3, 4)]),
    ("Einsum_reduce_only", lambda a: raw.Einsum(a, equation="ij->i"), [f64(2, 3)]),
    ("Einsum_outer3", lambda a, b, c: raw.Einsum(a, b, c, equation="i,j,k->kij"),
     [f64(2), f64(3), f64(2)]),
    ("Einsum_ellipsis_bcast", lambda a, b: raw.Einsum(a, b, equation="...ij,...jk->...ik"),
     [f64(1, 2, 3), f64(3, 3, 4)]),
    ("Einsum_ellipsis_rank", lambda a, b: raw.Einsum(a, b, equation="...ij,jk->...ik"),
     [f64(2, 2, 3), f64(3, 4)]),
    ("Einsum_scalar", lambda a, b: raw.Einsum(a, b, equation="...j,j->"), [f64(2, 3), f64(3)]),
    # conv and pooling
    ("Conv", lambda x, w, b: raw.Conv(x, w, b, pads=[1, 1, 1, 1]),
     [f64(2, 3, 5, 5), f64(4, 3, 3, 3), f64(4)]),
    ("Conv_stride2", lambda x, w: raw.Conv(x, w, strides=[2, 2]),
     [f64(1, 2, 6, 7), f64(3, 2, 3, 2)]),
    ("Conv_dilated_group", lambda x, w: raw.Conv(x, w, dilations=[2, 1], group=2,
                                                 pads=[1, 0, 2, 1]),
     [f64(1, 4, 6, 5), f64(2, 2, 2, 3)]),
    ("Conv_same_upper", lambda x, w: raw.Conv(x, w, auto_pad="SAME_UPPER", strides=[2, 2]),
     [f64(1, 1, 5, 5), f64(2, 1, 3, 3)]),
    ("MaxPool", lambda x: raw.MaxPool(x, kernel_shape=[2, 2], strides=[2, 2]),
     [f64(2, 2, 4, 6)]),
    ("MaxPool_overlap_pad", lambda x: raw.MaxPool(x, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
     [f64(1, 2, 4, 5)]),
    ("AveragePool", lambda x: raw.AveragePool(x, kernel_shape=[2, 2], pads=[1, 1, 0, 0]),
     [f64(1, 2, 4, 5)]),
    ("GlobalAveragePool", unary("GlobalAveragePool"), [f64(2, 3, 4, 4)]),
    ("ConvTranspose", lambda x, w, b: raw.ConvTranspose(x, w, b, strides=[2, 2],
                                                        pads=[1, 0, 0, 1]),
     [f64(2, 3, 3, 4), f64(3, 2, 3, 2), f64(2)]),
    ("ConvTranspose_group_outpad", lambda x, w: raw.ConvTranspose(
        x, w, strides=[2, 1], group=2, dilations=[1, 2], output_padding=[1, 0]),
     [f64(1, 4, 3, 3), f64(4, 1, 2, 2)]),
    ("ConvTranspose_same_upper", lambda x, w: raw.ConvTranspose(x, w, strides=[2],
                                                                auto_pad="SAME_UPPER"),
     [f64(1, 2, 4), f64(2, 3, 3)]),
    ("LRN", lambda x: raw.LRN(x, size=3, alpha=0.5, beta=0.75, bias=1.5), [f64(2, 5, 3, 2)]),
    ("LRN_even", lambda x: raw.LRN(x, size=4, alpha=0.5, beta=0.6, bias=1.5), [f64(2, 5, 3)]),
    ("LpPool_p3_pad", lambda x: raw.LpPool(x, kernel_shape=[2, 2], pads=[1, 0, 0, 1], p=3),
     [away_from_zero(1, 2, 4, 5)]),
    ("LpPool_p2_stride", lambda x: raw.LpPool(x, kernel_shape=[3], strides=[2]),
     [f64(2, 2, 7)]),
    # ceil_mode: the last window (taps 6-8 of 8) counts 2 taps, not 3
    ("LpPool_ceil", lambda x: raw.LpPool(x, kernel_shape=[3], strides=[3], ceil_mode=1, p=3),
     [away_from_zero(2, 2, 8)]),
    ("GlobalMaxPool", unary("GlobalMaxPool"), [f64(2, 3, 4, 4)]),
    ("GlobalLpPool", unary("GlobalLpPool"), [away_from_zero(2, 3, 4, 4)]),
    ("GlobalLpPool_p3", unary("GlobalLpPool", p=3), [away_from_zero(2, 3, 5)]),
    # normalization
    ("BatchNorm_inference", lambda x, s, b, m, v: raw.BatchNormalization(x, s, b, m, v,
                                                                        epsilon=1e-3),
     [f64(2, 3, 2, 2), f64(3), f64(3), f64(3), f64(3, lo=0.5, hi=1.5)]),
    ("BatchNorm_inference_2d", lambda x, s, b, m, v: raw.BatchNormalization(x, s, b, m, v),
     [f64(4, 3), f64(3), f64(3), f64(3), f64(3, lo=0.5, hi=1.5)]),
    ("BatchNorm_training", lambda x, s, b, m, v: raw.BatchNormalization(
        x, s, b, m, v, training_mode=1, momentum=0.8, num_outputs=3),
     [f64(3, 2, 2, 2), f64(2), f64(2), f64(2), f64(2, lo=0.5, hi=1.5)]),
    ("BatchNorm_training_y", lambda x, s, b, m, v: raw.BatchNormalization(
        x, s, b, m, v, training_mode=1, num_outputs=3)[0],
     [f64(4, 3), f64(3), f64(3), f64(3), f64(3, lo=0.5, hi=1.5)]),
    ("InstanceNorm", lambda x, s, b: raw.InstanceNormalization(x, s, b),
     [f64(2, 3, 4, 2), f64(3), f64(3)]),
    ("LayerNorm_axis1", lambda x, s, b: raw.LayerNormalization(x, s, b, axis=1),
     [f64(2, 3, 4), f64(3, 4), f64(4)]),
    ("LayerNorm_stats_unused", lambda x, s: raw.LayerNormalization(x, s, num_outputs=3)[0],
     [f64(2, 3, 4), f64(4)]),
    ("GroupNorm", lambda x, s, b: raw.GroupNormalization(x, s, b, num_groups=2),
     [f64(2, 4, 3, 2), f64(4), f64(4)]),
    ("MeanVarianceNorm", unary("MeanVarianceNormalization"), [f64(2, 3, 2, 2)]),
    ("MeanVarianceNorm_axis1", unary("MeanVarianceNormalization", axes=[1]), [f64(2, 3, 2)]),
    ("LpNorm_p2", unary("LpNormalization", axis=1), [f64(2, 3, 2)]),
    ("LpNorm_p1", unary("LpNormalization", axis=-1, p=1), [f64(2, 3, 4)]),
    # reductions
    ("ReduceSum", lambda x: og.reduce_sum(x, 1), [f64(3, 4, 2)]),
    ("ReduceSum_all_keep", lambda x: og.reduce_sum(x, keepdims=True), [f64(3, 4)]),
    ("ReduceMean", lambda x: og.reduce_mean(x, [0, 2]), [f64(3, 4, 2)]),
    ("ReduceMax", lambda x: og.reduce_max(x, 1), [f64(3, 4)]),
    ("ReduceMin", lambda x: og.reduce_min(x, 0, keepdims=True), [f64(3, 4)]),
    ("ReduceProd", lambda x: og.reduce_prod(x, 1), [f64(3, 4)]),
    ("ReduceLogSumExp", lambda x: og.reduce_logsumexp(x, 1), [f64(3, 4)]),
    ("ReduceSumSquare", lambda x: raw.ReduceSumSquare(x, og.constant(np.array([1])),
                                                      keepdims=0), [f64(3, 4)]),
    ("ReduceL1", lambda x: raw.ReduceL1(x, og.constant(np.array([1]))), [away_from_zero(3, 4)]),
    ("ReduceL2", lambda x: raw.ReduceL2(x, og.constant(np.array([0]))), [f64(3, 4)]),
    ("ReduceLogSum", lambda x: raw.ReduceLogSum(x, og.constant(np.array([1]))),
     [f64(3, 4, lo=0.5, hi=2)]),
    ("TopK", lambda x: raw.TopK(x, og.constant(np.array([2])), axis=1)[0], [f64(3, 5)]),
    ("TopK_smallest", lambda x: raw.TopK(x, og.constant(np.array([2])), axis=0,
                                         largest=0)[0], [f64(3, 5)]),
    ("CumSum", lambda x: raw.CumSum(x, og.constant(np.array(1))), [f64(3, 4)]),
    ("CumSum_rev_excl", lambda x: raw.CumSum(x, og.constant(np.array(0)), exclusive=1,
                                             reverse=1), [f64(3, 4)]),
    # shape family
    ("Reshape", lambda x: og.reshape(x, [4, -1]), [f64(2, 3, 2)]),
    ("Flatten", lambda x: og.nn.flatten(x), [f64(2, 3, 2)]),
    ("Transpose", lambda x: og.transpose(x, [1, 2, 0]), [f64(2, 3, 4)]),
    ("Transpose_default", lambda x: og.transpose(x), [f64(2, 3, 4)]),
    ("Squeeze", lambda x: og.squeeze(x, 1), [f64(3, 1, 2)]),
    ("Unsqueeze", lambda x: og.expand_dims(x, 0), [f64(3, 2)]),
    ("Concat", lambda a, b: og.concat([a, b], 1), [f64(2, 3), f64(2, 2)]),
    ("Split", lambda x: og.split(x, [1, 3], axis=1)[1] * 2.0, [f64(2, 4)]),
    ("Split_both", lambda x: og.split(x, 2, axis=0), [f64(4, 3)]),
    ("Expand", lambda x: raw.Expand(x, og.constant(np.array([3, 2, 4]))), [f64(2, 1)]),
    ("Tile", lambda x: og.tile(x, [2, 3]), [f64(2, 3)]),
    ("Pad", lambda x: og.pad(x, [[1, 0], [2, 1]]), [f64(2, 3)]),
    ("Pad_reflect", lambda x: og.pad(x, [[1, 2], [2, 1]], "REFLECT"), [f64(3, 4)]),
    ("Pad_symmetric", lambda x: og.pad(x, [[2, 0], [1, 3]], "SYMMETRIC"), [f64(3, 4)]),
    ("Pad_edge_crop", lambda x: raw.Pad(x, og.constant(np.array([2, -1, -1, 3])),
                                        mode="edge"), [f64(3, 4)]),
    ("Pad_wrap_axes", lambda x: raw.Pad(x, og.constant(np.array([5, 1])), None,
                                        og.constant(np.array([-1])), mode="wrap"),
     [f64(2, 3)]),
    ("Identity", lambda x: og.identity(x) * x, [f64(3)]),
    ("Trilu", lambda x: raw.Trilu(x, og.constant(np.array(1)), upper=0), [f64(2, 3, 4)]),
    ("Trilu_upper", lambda x: raw.Trilu(x), [f64(4, 3)]),
    ("Resize_nearest", lambda x: raw.Resize(x, None, og.constant(np.array([1, 1, 2.0, 1.5]))),
     [f64(1, 2, 3, 4)]),
    ("Resize_linear_down", lambda x: raw.Resize(
        x, None, og.constant(np.array([1, 1, 0.6, 1.7])), mode="linear"), [f64(1, 2, 5, 4)]),
    ("Resize_cubic_sizes", lambda x: raw.Resize(
        x, None, None, og.constant(np.array([1, 1, 5, 3])), mode="cubic",
        coordinate_transformation_mode="align_corners"), [f64(1, 2, 3, 4)]),
    ("Resize_crop", lambda x: raw.Resize(
        x, og.constant(np.array([0.0, -0.2, 1.0, 0.9])), None,
        og.constant(np.array([4, 5])), axes=[0, 1], mode="linear",
        coordinate_transformation_mode="tf_crop_and_resize"), [f64(3, 4)]),
    ("ConstantOfShape_Range", lambda s, d: raw.Range(s, og.constant(np.array(3.05)), d) * 2.0
     + raw.ConstantOfShape(og.shape(s), value=np.zeros(1)), [np.array(0.3), np.array(0.5)]),
    ("DepthToSpace", lambda x: raw.DepthToSpace(x, blocksize=2), [f64(1, 8, 2, 3)]),
    ("DepthToSpace_CRD", lambda x: raw.DepthToSpace(x, blocksize=2, mode="CRD"),
     [f64(2, 12, 2, 3)]),
    ("SpaceToDepth", lambda x: raw.SpaceToDepth(x, blocksize=2), [f64(1, 2, 4, 6)]),
    # indexing
    ("Slice", lambda x: x[1:, ::2], [f64(3, 5)]),
    ("Slice_neg_step", lambda x: x[::-1, 1], [f64(3, 5)]),
    ("Gather_rows", lambda p, i: og.gather(p, i), [f64(5, 3), np.array([[0, 2], [2, 4]])]),
    ("Gather_axis1", lambda p, i: raw.Gather(p, i, axis=1),
     [f64(3, 4, 2), np.array([[0, 3], [3, -1]])]),
    ("Compress_axis", lambda x: raw.Compress(x, og.constant(np.array([True, False, True])),
                                             axis=1), [f64(2, 4)]),
    ("Compress_flat", lambda x: raw.Compress(x, og.constant(np.array([1, 0, 1, 1]) > 0)),
     [f64(2, 4)]),
    ("ScatterElements", lambda d, u: raw.ScatterElements(
        d, og.constant(np.array([[1, 0], [2, 3]])), u, axis=1), [f64(2, 4), f64(2, 2)]),
    ("ScatterElements_add", lambda d, u: raw.ScatterElements(
        d, og.constant(np.array([[1, 1], [2, 2]])), u, axis=1, reduction="add"),
     [f64(2, 4), f64(2, 2)]),
    ("ScatterND", lambda d, u: raw.ScatterND(d, og.constant(np.array([[1], [3]])), u),
     [f64(4, 3), f64(2, 3)]),
    ("ScatterND_add", lambda d, u: raw.ScatterND(d, og.constant(np.array([[1, 0], [1, 0]])),
                                                 u, reduction="add"), [f64(4, 3), f64(2)]),
    # max / min: dy reaches the winning candidate (data's value or a repeated update)
    ("ScatterElements_max", lambda d, u: raw.ScatterElements(
        d, og.constant(np.array([[1, 1], [2, 0]])), u, axis=1, reduction="max"),
     [np.array([[0.1, 0.5, -0.3, 0.2], [0.9, -0.8, 0.0, 0.4]]),
      np.array([[0.7, 0.3], [-0.2, 0.6]])]),
    ("ScatterND_min", lambda d, u: raw.ScatterND(d, og.constant(np.array([[1, 0], [1, 0],
                                                                          [2, 2]])),
                                                 u, reduction="min"),
     [np.arange(12.0).reshape(4, 3) / 10 - 0.55, np.array([-0.4, -0.9, 0.65])]),
    ("OneHot_values", lambda v: raw.OneHot(og.constant(np.array([1, 0, 3])),
                                           og.constant(np.array(4)), v), [f64(2)]),
    ("GatherElements", lambda x, i: raw.GatherElements(x, i, axis=1),
     [f64(3, 4), np.array([[0, 0], [1, 3], [2, 2]])]),
    ("GatherND", lambda x, i: raw.GatherND(x, i), [f64(3, 4), np.array([[0, 1], [2, 2],
                                                                       [0, 1]])]),
    ("GatherND_batch_dims", lambda x, i: raw.GatherND(x, i, batch_dims=1),
     [f64(2, 3, 4), np.array([[[0, 1], [2, -1], [0, 1]], [[1, 3], [1, 3], [0, 0]]])]),
    # recurrent (BPTT kernels), small shapes
    ("RNN", recurrent("RNN"), recurrent_inputs("RNN")),
    ("RNN_reverse_Y_only", recurrent("RNN", "reverse", num_outputs=1),
     recurrent_inputs("RNN")),
    ("RNN_bidirectional_seq_lens", recurrent("RNN", "bidirectional", seq_lens=[2, 3]),
     recurrent_inputs("RNN", 2)),
    ("GRU", recurrent("GRU"), recurrent_inputs("GRU")),
    ("GRU_bidirectional_layout1", recurrent("GRU", "bidirectional", layout=1),
     recurrent_inputs("GRU", 2, layout=1)),
    ("GRU_linear_before_reset", recurrent("GRU", "bidirectional", seq_lens=[1, 3],
                                          linear_before_reset=1),
     recurrent_inputs("GRU", 2)),
    ("GRU_reverse_no_bias", recurrent("GRU", "reverse"), recurrent_inputs("GRU", full=False)),
    ("LSTM_peepholes", recurrent("LSTM", num_outputs=3), recurrent_inputs("LSTM")),
    ("LSTM_reverse_Y_h", lambda *a: recurrent("LSTM", "reverse", num_outputs=3)(*a)[1],
     recurrent_inputs("LSTM")),
    ("LSTM_bidirectional_seq_lens", recurrent("LSTM", "bidirectional", num_outputs=3,
                                              seq_lens=[3, 1]),
     recurrent_inputs("LSTM", 2)),
    ("LSTM_input_forget_layout1", recurrent("LSTM", "bidirectional", num_outputs=3,
                                            input_forget=1, layout=1),
     recurrent_inputs("LSTM", 2, layout=1)),
    ("LSTM_minimal_inputs", recurrent("LSTM", num_outputs=1),
     recurrent_inputs("LSTM", full=False)),
    # fused losses and helpers
    ("SparseSoftmaxXent", lambda lg, lab: og.nn.sparse_softmax_cross_entropy(lab, lg),
     [f64(4, 5), np.array([0, 3, 4, 1])]),
    ("SoftmaxXent", lambda lg, lab: og.nn.softmax_cross_entropy(lab, lg),
     [f64(4, 5), np.full((4, 5), 0.2)]),
    ("AddN", lambda a, b: og.add_n([a, b, a]), [f64(2, 3), f64(2, 3)]),
    ("CheckNumerics", lambda a: og.check_numerics(og.sin(a), "sin"), [f64(2, 3)]),
    ("ReverseSequence", lambda a: og.reverse_sequence(a, [3, 1], seq_axis=1, batch_axis=0),
     [f64(2, 3, 2)]),
    # the onegraph-domain matrix ops (more in test_api_linalg_solve.py)
    ("MatrixInverse", lambda a: og.matrix_inverse(a), [f64(3, 3) + 3 * np.eye(3)]),
    ("MatrixSolve", lambda a, b: og.matrix_solve(a, b, adjoint=True),
     [f64(2, 3, 3) + 3 * np.eye(3), f64(3, 2)]),
    ("MatrixTriangularSolve", lambda a, b: og.matrix_triangular_solve(a, b, lower=False),
     [f64(3, 3) + 3 * np.eye(3), f64(2, 3, 2)]),
    ("Cholesky", lambda a: og.cholesky(og.matmul(a, a, transpose_b=True)
                                       + og.constant(3 * np.eye(3))), [f64(3, 3)]),
    ("Qr", lambda a: list(og.qr(a)), [f64(4, 3)]),
    ("Svd", lambda a: og.svd(a, compute_uv=False), [f64(4, 3)]),
    ("SelfAdjointEig", lambda a: og.self_adjoint_eigvals(a), [f64(3, 3)]),
    # the onegraph-domain special functions (more in test_api_special.py)
    ("Lgamma", lambda a: _sp.lgamma(a), [np.array([0.7, 2.3, 5.1, -0.4])]),
    ("Digamma", lambda a: _sp.digamma(a), [np.array([0.7, 2.3, 5.1, -0.4])]),
    ("Polygamma", lambda x: _sp.polygamma(og.constant(np.array([1.0, 2.0, 0.0])), x),
     [np.array([0.8, 1.7, 3.2])]),
    ("Zeta", lambda q: _sp.zeta(og.constant(np.array([2.0, 3.5])), q), [np.array([0.9, 2.2])]),
    ("Igamma", lambda x: _sp.igamma(og.constant(np.array([0.5, 2.0, 7.0])), x),
     [np.array([0.3, 1.9, 9.0])]),
    ("Igammac", lambda x: _sp.igammac(og.constant(np.array([0.5, 2.0, 7.0])), x),
     [np.array([0.3, 1.9, 9.0])]),
    ("Betainc", lambda x: _sp.betainc(og.constant(np.array([2.0, 0.7, 5.0])),
                                      og.constant(np.array([3.0, 1.4, 2.0])), x),
     [np.array([0.3, 0.6, 0.8])]),
    ("Lbeta", lambda a: _sp.lbeta(a), [np.array([[0.7, 2.3, 5.1], [1.5, 0.4, 3.0]])]),
    ("Erfinv", lambda a: _sp.erfinv(a), [np.array([-0.7, 0.1, 0.95])]),
    ("Erfcinv", lambda a: _sp.erfcinv(a), [np.array([0.05, 0.9, 1.6])]),
    ("Ndtri", lambda a: _sp.ndtri(a), [np.array([0.02, 0.4, 0.9])]),
    ("BesselI0", lambda a: _sp.bessel_i0(a), [np.array([-2.0, 0.3, 9.0])]),
    ("BesselI0e", lambda a: _sp.bessel_i0e(a), [np.array([-2.0, 0.3, 9.0])]),
    ("BesselI1", lambda a: _sp.bessel_i1(a), [np.array([-2.0, 0.3, 9.0])]),
    ("BesselI1e", lambda a: _sp.bessel_i1e(a), [np.array([-2.0, 0.3, 9.0])]),
    ("Xlog1py", lambda x, y: _sp.xlog1py(x, y),
     [np.array([0.5, -1.2, 2.0]), np.array([0.3, 2.0, -0.4])]),
    # the onegraph-domain LU, expm and tridiagonal solve (more in test_api_linalg_more.py)
    ("Lu", lambda a: _more("api_linalg_more").lu(a)[0], [f64(4, 4)]),
    ("MatrixExponential", lambda a: _more("api_linalg_more").expm(a), [f64(2, 3, 3)]),
    ("MatrixSquareRoot", lambda a: _more("api_linalg_more").sqrtm(
        og.matmul(a, a, transpose_b=True) + og.constant(np.eye(3))), [f64(2, 3, 3)]),
    ("TridiagonalSolve", lambda d, r: _more("api_linalg_more").tridiagonal_solve(d, r),
     [f64(3, 4) + np.array([[0.0], [3.0], [0.0]]), f64(4, 2)]),
    # gamma draws: finite differences through the sampler are not the implicit gradient
    # (a draw held at its CDF quantile), so these rows only place the ops; the rule is
    # checked against differences of the inverse CDF in test_api_random_more.py
    ("RandomGamma", lambda x: x * og.reduce_sum(
        _more("api_random_more").random_gamma([3], 2.0, dtype=og.float64, seed=1)),
     [f64(2)]),
    ("StatelessRandomGamma", lambda x: x * og.reduce_sum(
        _more("api_random_more").stateless_gamma([3], [1, 2], 2.0, dtype=og.float64)),
     [f64(2)]),
    # the onegraph-domain CTC loss (more in test_nn_tf1_more.py): repeats, a shorter
    # logit_length, blank 0
    ("CTCLoss", lambda lg, lab, n_lab, n_lg: _ctc.ctc_loss_v2(lab, lg, n_lab, n_lg),
     [f64(5, 2, 4) * 2, np.array([[1, 1], [3, 0]]), np.array([2, 1]), np.array([5, 3])]),
]


def _more(module: str):
    """onegraph.train.<module>, imported once og's public names are loaded."""
    import importlib

    return importlib.import_module(f"onegraph.train.{module}")


@pytest.mark.parametrize("name,build,inputs", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(name, build, inputs):
    check_op_gradients(build, inputs)


def test_cases_cover_every_op_with_a_rule():
    """Every op with a gradient rule appears in the table (directly or as a helper)."""
    from onegraph.ops import REGISTRY

    covered = set()
    for _, build, inputs in CASES:
        g = og.Graph()
        with g.as_default():
            build(*[og.placeholder(np.asarray(a).dtype, np.shape(a)) for a in inputs])
        covered.update(n.op_type for n in g.ir_graph.nodes)
    with_rule = {op.name for op in REGISTRY if op.gradient is not None}
    exempt = {"ReadVariable", "StopGradient", "IdentityN", "CastLike", "Ceil", "Floor",
              "Round", "Sign", "Dropout", "EyeLike"}   # EyeLike: no gradient (shape only)
    # the gradient helpers' own rules (second-order gradients) are checked one by one
    # in test_training_semantics.py
    exempt |= {"SumToShapeOf", "BroadcastLike", "ReluGrad", "SigmoidGrad", "TanhGrad",
               "SoftmaxGrad", "LogSoftmaxGrad", "ReduceGrad", "OnesLike", "ZerosLike",
               "ConvGradInput", "ConvGradFilter", "ConvTransposeGradInput",
               "ConvTransposeGradFilter", "AveragePoolGrad", "MaxPoolGrad", "MaxPoolGradGrad"}
    # the sparse ops' rules are checked against TF's gradients and central differences in
    # tests/ops/test_sparse_ops.py and tests/train/test_sparse_api.py
    exempt |= {"SparseToDense", "SparseTensorDenseMatMul", "SparseAdd", "SparseTensorDenseAdd",
               "SparseReorder", "SparseReduceSum", "SparseFillEmptyRows", "SparseSoftmax",
               "SparseDenseCwiseMul", "SparseDenseCwiseDiv"}
    assert with_rule - covered - exempt == set()


def test_missing_rule_names_the_op():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        y = raw.Unique(x)
        with pytest.raises(GradientNotDefinedError, match="Unique"):
            og.gradients(og.reduce_sum(y), [x])


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [(3, 3)]), ("ii", [(4, 4)]), ("iii->i", [(2, 2, 2)]), ("bii->b", [(2, 3, 3)]),
    ("iij,j->i", [(2, 2, 3), (3,)]), ("ij,jj->i", [(2, 3), (3, 3)]),
    ("...ii->...i", [(2, 3, 3)])])
def test_einsum_diagonal_operand_gradient(equation, shapes):
    """A repeated subscript (diagonal, trace) gets its gradient on the diagonal only."""
    rng = np.random.default_rng(3)
    check_op_gradients(lambda *ts: raw.Einsum(*ts, equation=equation),
                       [rng.standard_normal(s) for s in shapes])


@pytest.mark.parametrize("attrs,match", [
    ({"clip": 1.0}, "clip"),
    ({"activations": ["Relu", "Tanh"]}, "default activations"),
])
def test_recurrent_unsupported_attributes_raise(attrs, match):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3, 2, 3])
        w = og.constant(f64(1, 6, 3))
        r = og.constant(f64(1, 6, 2))
        y = raw.GRU(x, w, r, hidden_size=2, num_outputs=1, **attrs)
        with pytest.raises(GradientNotDefinedError, match=match):
            og.gradients(og.reduce_sum(y), [x])


def test_layer_norm_statistics_outputs_have_no_gradient():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2, 3])
        _, mean, _ = raw.LayerNormalization(x, og.constant(np.ones(3)), num_outputs=3)
        with pytest.raises(GradientNotDefinedError, match="Mean and InvStdDev"):
            og.gradients(og.reduce_sum(mean), [x])


def test_non_differentiable_ops_on_the_path_pass_through():
    """Comparisons, ArgMax, Shape, NonZero... produce integers or booleans: no gradient
    flows into them, so the driver needs no rule to pass them."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2, 3])
        mask = raw.Greater(x, og.constant(0.0))
        arg = raw.ArgMax(x, axis=1, keepdims=0)
        n = raw.Cast(raw.Size(raw.NonZero(mask)), to=11) + raw.Cast(
            raw.ReduceSum(arg, keepdims=0), to=11)
        y = og.reduce_sum(og.where(raw.Not(raw.IsNaN(x)), x * x, x)) + n
        (gx,) = og.gradients(y, [x])
    v = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]])
    np.testing.assert_allclose(og.Session(g).run(gx, {x: v}), 2 * v)


def test_stop_gradient_blocks():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        y = og.reduce_sum(x * og.stop_gradient(x))
        (gx,) = og.gradients(y, [x])
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(og.Session(g).run(gx, {x: v}), v)


def test_custom_gradient_and_override(monkeypatch):
    # the registration below must not outlive the test (a rerun in the same process
    # would find "DoubleGrad_test" registered twice)
    from onegraph.train import gradients as gradients_module
    monkeypatch.setattr(gradients_module, "_REGISTERED", dict(gradients_module._REGISTERED))
    g = og.Graph()
    with g.as_default():
        @og.custom_gradient
        def clipped_identity(x):
            def grad(dy):
                return og.clip_by_value(dy, -1.0, 1.0)
            return og.identity(x), grad

        x = og.placeholder(og.float32, [3])
        y = og.reduce_sum(clipped_identity(x) * og.constant(np.float32([0.5, 3.0, -4.0])))
        (gx,) = og.gradients(y, [x])

        @og.RegisterGradient("DoubleGrad_test")
        def _double(b, op, grads):
            return [grads[0] * 2.0]

        with og.gradient_override_map({"Identity": "DoubleGrad_test"}):
            z = og.identity(x)
        (gz,) = og.gradients(og.reduce_sum(z), [x])
    sess = og.Session(g)
    gx_v, gz_v = sess.run([gx, gz], {x: np.zeros(3, np.float32)})
    np.testing.assert_allclose(gx_v, [0.5, 1.0, -1.0])
    np.testing.assert_allclose(gz_v, [2.0, 2.0, 2.0])


def test_gather_gradient_is_sparse_and_feeds_scatter_add():
    g = og.Graph()
    with g.as_default():
        emb = og.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="emb")
        ids = og.placeholder(og.int64, [None])
        loss = og.reduce_sum(og.nn.embedding_lookup(emb, ids))
        (ge,) = og.gradients(loss, [emb])
        assert isinstance(ge, og.IndexedSlices)
        update = emb.scatter_add(ge.indices, ge.values * -1.0)
        sgd = og.train.SGD(1.0).minimize(loss)
    ops = {n.op_type for n in g.ir_graph.nodes}
    assert "IndexedSlicesToDense" not in ops and "SparseApplyGradientDescent" in ops
    sess = og.Session(g)
    sess.run(update, {ids: [1, 1, 3]})
    want = np.arange(12, dtype=np.float32).reshape(4, 3)
    want[1] -= 2
    want[3] -= 1
    np.testing.assert_allclose(sess.run(emb), want)
    sess.run(sgd, {ids: [0]})
    want[0] -= 1
    np.testing.assert_allclose(sess.run(emb), want)


def test_gradients_sum_over_paths_with_addn():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2])
        y = og.reduce_sum(x * x + og.exp(x) + x)
        (gx,) = og.gradients(y, x)
    assert any(n.op_type == "AddN" for n in g.ir_graph.nodes)
    v = np.array([0.5, -1.0])
    np.testing.assert_allclose(og.Session(g).run(gx, {x: v}), 2 * v + np.exp(v) + 1)
