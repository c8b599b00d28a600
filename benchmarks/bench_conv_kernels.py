"""Time onegraph Conv/pool kernels against onnxruntime (single thread) on CNN-like shapes.

Run with one BLAS thread for a fair comparison:
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python3 benchmarks/bench_conv_kernels.py
"""

from __future__ import annotations

import sys
import time

import numpy as np


def _ort_session(op_type, inputs, attrs, out_shape=None):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    names = [f"i{k}" for k in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(nm, TensorProto.FLOAT, a.shape)
         for nm, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    feed = dict(zip(names, inputs))
    return lambda: sess.run(None, feed)


def _best(fn, reps=20):
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    from onegraph.ops import KernelContext, get_op

    rng = np.random.default_rng(0)
    cases = [
        ("Conv 3x3 64->64 56x56", "Conv", [(1, 64, 56, 56), (64, 64, 3, 3), (64,)],
         dict(pads=[1, 1, 1, 1])),
        ("Conv 1x1 256->64 56x56", "Conv", [(1, 256, 56, 56), (64, 256, 1, 1), (64,)], {}),
        ("Conv 7x7/2 3->64 224", "Conv", [(1, 3, 224, 224), (64, 3, 7, 7), (64,)],
         dict(pads=[3, 3, 3, 3], strides=[2, 2])),
        ("Conv 3x3/2 128->128 56", "Conv", [(1, 128, 56, 56), (128, 128, 3, 3), (128,)],
         dict(pads=[1, 1, 1, 1], strides=[2, 2])),
        ("Conv 3x3 512->512 14x14", "Conv", [(1, 512, 14, 14), (512, 512, 3, 3), (512,)],
         dict(pads=[1, 1, 1, 1])),
        ("DWConv 3x3 144 56x56", "Conv", [(1, 144, 56, 56), (144, 1, 3, 3), (144,)],
         dict(pads=[1, 1, 1, 1], group=144)),
        ("GConv 1x1 g3 240->240 28", "Conv", [(1, 240, 28, 28), (240, 80, 1, 1)],
         dict(group=3)),
        ("MaxPool 3x3/2 64 112", "MaxPool", [(1, 64, 112, 112)],
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
        ("AvgPool 3x3/1 192 35", "AveragePool", [(1, 192, 35, 35)],
         dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
        ("ConvT 4x4/2 256->128 16", "ConvTranspose", [(1, 256, 16, 16), (256, 128, 4, 4)],
         dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    ]
    want = sys.argv[1:]
    for label, op_type, shapes, attrs in cases:
        if want and not any(w in label for w in want):
            continue
        inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        op = get_op(op_type)
        ra = op.resolve_attrs(attrs)
        ours = _best(lambda: op.kernel(inputs, ra, KernelContext()))
        theirs = _best(_ort_session(op_type, inputs, attrs))
        print(f"{label:28s} onegraph {ours * 1e3:8.3f} ms  ort {theirs * 1e3:8.3f} ms  "
              f"ratio {ours / theirs:5.2f}")


if __name__ == "__main__":
    main()
