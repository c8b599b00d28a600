"""Where onnxruntime is an oracle for integer matrix products, and where it is not.

On x86 CPUs without VNNI (AVX2, or AVX-512 alone: AMD EPYC before Zen 4, Intel before
Cascade Lake), onnxruntime's uint8 x int8 kernels (MatMulInteger, QGemm, QLinearConv,
QAttention, DynamicQuantizeMatMul, ... through MLAS) add each pair of byte products in
16 bits with saturation (VPMADDUBSW), so 255*127 + 255*127 comes out as 32767, not the
exact 64770 that ONNX defines and onegraph computes (onnxruntime issues #6004, #7524).
int8 x int8 goes the same way (the activations are shifted to uint8 first).

No pair can saturate while the int8 operand stays in [-64, 63] (255 * 64 * 2 = 32640):
that is what onnxruntime's quantizer does with reduce_range, and what a test that
checks onegraph against onnxruntime draws its int8 weights from on such CPUs
(`weight_codes`). A stored model whose weights use the full range cannot be checked
against onnxruntime there (`needs_exact_int8_oracle` skips that comparison).

Some contrib kernels are missing on such CPUs altogether (MatMulFpQ4 "4b quantization
not yet supported on this hardware platform"): `ort_lacks_kernel` tells that error.
"""

from __future__ import annotations

import functools

import numpy as np

SATURATION_REASON = ("onnxruntime's uint8 x int8 kernels saturate in 16 bits on this "
                     "CPU (x86 without VNNI), so it is no oracle for full-range int8 "
                     "weights here")


@functools.lru_cache(maxsize=None)
def ort_saturates_u8s8() -> bool:
    """Whether onnxruntime's MatMulInteger gives 32767 for [255, 255] @ [127, 127]
    (exactly 64770) on this machine. False when onnxruntime is not installed."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return False
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    graph = helper.make_graph(
        [node], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 2]),
         helper.make_tensor_value_info("b", TensorProto.INT8, [2, 1])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"a": np.full((1, 2), 255, np.uint8),
                           "b": np.full((2, 1), 127, np.int8)})
    return int(y.reshape(-1)[0]) != 255 * 127 * 2


def weight_codes(rng, dtype, shape) -> np.ndarray:
    """Random integer codes of `dtype` for the weight (second) operand of an integer
    product that onnxruntime checks: the full range, except int8 on a CPU where
    onnxruntime saturates, where [-64, 63]."""
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    low, high = int(info.min), int(info.max)
    if dtype == np.int8 and ort_saturates_u8s8():
        low, high = -64, 63
    return rng.integers(low, high + 1, shape).astype(dtype)


def needs_exact_int8_oracle() -> str | None:
    """The reason to skip an onnxruntime comparison of an int8 model with full-range
    weights on this CPU, or None where onnxruntime computes exactly."""
    return SATURATION_REASON if ort_saturates_u8s8() else None


def ort_lacks_kernel(error: BaseException) -> bool:
    """Whether an onnxruntime error says that its kernel does not run on this CPU."""
    return "not yet supported on this hardware platform" in str(error)
