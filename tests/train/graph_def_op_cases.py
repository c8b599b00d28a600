"""One TF op per case, for og.import_graph_def's op table: tools/record_tf_graph_def_ops.py
builds each as tf.raw_ops.<op>(**args) under TensorFlow (tf.compat.v1, graph mode) with
a placeholder per Feed, records the GraphDef and TF's outputs for every input set;
tests/train/test_graph_def_ops.py imports and runs the recording with og.

A case: name, the TF op type the GraphDef must hold, `args` (raw_ops keyword -> Feed(i)
for the i-th input of each run, or a constant / attribute value), `runs` (1-3 lists of
input arrays), `shapes` (placeholder shapes; None = the first run's shape, "any" = an
unknown rank) and `onnx`
(also compare an ONNX export run by onnxruntime).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

RNG = np.random.default_rng(5353)


@dataclass(frozen=True)
class Feed:
    """The index-th input array of each run, fed through a placeholder."""
    index: int


@dataclass
class Case:
    name: str
    op: str
    args: dict
    runs: list
    shapes: list | None = None
    onnx: bool = False
    extra: dict = field(default_factory=dict)


def _f(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def _i(*shape, lo=0, hi=5, dtype=np.int32):
    return RNG.integers(lo, hi, shape).astype(dtype)


X, Y, Z, W = Feed(0), Feed(1), Feed(2), Feed(3)
CASES: list = []


def _add(name, op, args, runs, shapes=None, onnx=False):
    CASES.append(Case(name, op, args, runs, shapes, onnx))


def _unary(op, lo=-2.0, hi=2.0, onnx=True):
    _add(op.lower(), op, {"features" if op == "Softsign" else "x": X},
         [[_f(2, 3, lo=lo, hi=hi)], [_f(4, 1, lo=lo, hi=hi)]],
         shapes=[[None, None]], onnx=onnx)


def _binary(op, a, b, onnx=True):
    _add(op.lower(), op, {"x": X, "y": Y}, [[a, b]], onnx=onnx)


# ------------------------------------------------------------------ StridedSlice at run time
_SS = [np.arange(24, dtype=np.float32).reshape(2, 3, 4)]


def _ss(name, strides, runs_be, **masks):
    """StridedSlice with begin/end fed at run time (strides constant)."""
    args = {"input": X, "begin": Y, "end": Z, "strides": np.array(strides, np.int32)}
    args.update(masks)
    runs = [[_SS[0], np.array(b, np.int32), np.array(e, np.int32)] for b, e in runs_be]
    _add(name, "StridedSlice", args, runs, shapes=[None, [len(strides)], [len(strides)]],
         onnx=True)


_ss("ss_index", [1], [([1], [2]), ([0], [1]), ([-1], [0])], shrink_axis_mask=1)
_ss("ss_ranges", [1, 1, 2], [([0, 1, 0], [2, 3, 4]), ([1, 0, 1], [2, 2, 4]),
                                         ([-1, -2, 3], [5, 3, 0])])
_ss("ss_reverse", [1, -1], [([0, 2], [2, 0]), ([1, -1], [2, -4])],
    end_mask=2)
_ss("ss_masks", [1, 1, 1, 1], [([0, 1, 0, 2], [0, 2, 0, 0]),
                                          ([0, 0, 0, -1], [0, 1, 0, 0])],
    begin_mask=1, end_mask=9, ellipsis_mask=0, new_axis_mask=4, shrink_axis_mask=2)
_ss("ss_ellipsis", [1, 1], [([0, 1], [0, 3]), ([0, 0], [0, 1])],
    ellipsis_mask=1)
_ss("ss_shrink_last", [1, 1, 1], [([0, 1, 3], [1, 3, 4]),
                                             ([1, 0, -1], [2, 3, 0])],
    shrink_axis_mask=5)

# ------------------------------------------------------------------ gathers and scatters
_P = _f(4, 3, 2)
_add("gather_nd", "GatherNd", {"params": X, "indices": Y},
     [[_P, np.array([[0, 1], [3, 2]], np.int32)],
      [_P, np.array([[2, 1], [0, 0], [1, 2]], np.int32)]],
     shapes=[None, [None, 2]], onnx=True)
_add("scatter_nd", "ScatterNd", {"indices": X, "updates": Y, "shape": np.array([5, 2],
                                                                              np.int32)},
     [[np.array([[1], [3], [1]], np.int32), _f(3, 2)]], onnx=True)
_add("tensor_scatter_update", "TensorScatterUpdate", {"tensor": X, "indices": Y, "updates": Z},
     [[_f(4, 3), np.array([[0], [2]], np.int32), _f(2, 3)]], onnx=True)
_add("tensor_scatter_add", "TensorScatterAdd", {"tensor": X, "indices": Y, "updates": Z},
     [[_f(4, 3), np.array([[1, 1], [3, 0], [1, 1]], np.int32), _f(3)]])
_add("tensor_scatter_sub", "TensorScatterSub", {"tensor": X, "indices": Y, "updates": Z},
     [[_i(5, hi=9), np.array([[4], [0]], np.int32), _i(2, hi=9)]])
_add("one_hot", "OneHot", {"indices": X, "depth": 4, "on_value": np.float32(2.5),
                           "off_value": np.float32(-1.0), "axis": -1},
     [[np.array([0, 3, -1, 2], np.int32)], [np.array([[1, 1], [5, 0]], np.int32)]],
     shapes=["any"])
_add("one_hot_2d", "OneHot", {"indices": X, "depth": 3, "on_value": np.float32(1.0),
                              "off_value": np.float32(0.0), "axis": 1},
     [[np.array([[1, 2], [0, 5]], np.int64)]], onnx=True)
_add("one_hot_axis0_fed", "OneHot", {"indices": X, "depth": 3, "on_value": Y,
                                      "off_value": Z, "axis": 0},
     [[np.array([0, 2, 1], np.int64), np.int32(7), np.int32(1)]])
_add("where", "Where", {"condition": X},
     [[np.array([[True, False], [False, True]])], [np.zeros((2, 3), bool)]],
     shapes=[[2, None]])
_add("where_float", "Where", {"condition": X},
     [[np.array([[0.0, 1.5, -2.0], [2.0, 0.0, 0.0]], np.float32)]])
_add("reverse", "ReverseV2", {"tensor": X, "axis": np.array([0, -1], np.int32)},
     [[_f(2, 3, 4)]], onnx=True)
for _op in ("Cumsum", "Cumprod"):
    _add(_op.lower(), _op, {"x": X, "axis": np.int32(1), "exclusive": False,
                            "reverse": False}, [[_f(2, 4)]], onnx=True)
    _add(_op.lower() + "_excl_rev", _op, {"x": X, "axis": np.int32(0), "exclusive": True,
                                         "reverse": True}, [[_f(3, 2)]])
_add("clip_by_value", "ClipByValue", {"t": X, "clip_value_min": np.float32(-0.5),
                                      "clip_value_max": Y}, [[_f(3, 3), np.float32(0.7)]],
     onnx=True)
_add("broadcast_to", "BroadcastTo", {"input": X, "shape": np.array([2, 3, 4], np.int32)},
     [[_f(3, 1)]], onnx=True)

# ------------------------------------------------------------------ space / batch / depth
_add("depth_to_space", "DepthToSpace", {"input": X, "block_size": 2},
     [[_f(1, 2, 3, 8)]], onnx=True)
_add("space_to_depth", "SpaceToDepth", {"input": X, "block_size": 2},
     [[_f(2, 4, 6, 3)]], onnx=True)
_add("space_to_batch_nd", "SpaceToBatchND",
     {"input": X, "block_shape": np.array([2, 2], np.int32),
      "paddings": np.array([[1, 1], [0, 2]], np.int32)}, [[_f(1, 4, 4, 2)]])
_add("batch_to_space_nd", "BatchToSpaceND",
     {"input": X, "block_shape": np.array([2, 2], np.int32),
      "crops": np.array([[0, 1], [1, 0]], np.int32)}, [[_f(4, 3, 3, 2)]])

# ------------------------------------------------------------------ conv / pool / image
_add("conv3d", "Conv3D", {"input": X, "filter": _f(2, 2, 2, 3, 4), "strides": [1, 1, 2, 1, 1],
                          "padding": "SAME"}, [[_f(1, 4, 5, 5, 3)]], onnx=True)
_add("max_pool3d", "MaxPool3D", {"input": X, "ksize": [1, 2, 2, 2, 1],
                                 "strides": [1, 2, 2, 2, 1], "padding": "VALID"},
     [[_f(2, 4, 4, 4, 2)]], onnx=True)
_add("avg_pool3d", "AvgPool3D", {"input": X, "ksize": [1, 2, 3, 2, 1],
                                 "strides": [1, 1, 2, 2, 1], "padding": "SAME"},
     [[_f(1, 3, 5, 4, 2)]])
_add("max_pool_v2", "MaxPoolV2", {"input": X, "ksize": np.array([1, 3, 3, 1], np.int32),
                                  "strides": np.array([1, 2, 2, 1], np.int32),
                                  "padding": "SAME"}, [[_f(1, 5, 5, 2)]], onnx=True)
_add("lrn", "LRN", {"input": X, "depth_radius": 2, "bias": 1.5, "alpha": 0.3, "beta": 0.75},
     [[_f(1, 2, 2, 7)]], onnx=True)
_add("resize_bicubic", "ResizeBicubic", {"images": X, "size": np.array([5, 7], np.int32)},
     [[_f(1, 3, 4, 2)]])
_add("resize_bicubic_half_pixel", "ResizeBicubic",
     {"images": X, "size": np.array([5, 7], np.int32), "half_pixel_centers": True},
     [[_f(1, 3, 4, 2)]])
_add("resize_area", "ResizeArea", {"images": X, "size": np.array([3, 5], np.int32)},
     [[_f(2, 6, 7, 1)]])
_add("crop_and_resize", "CropAndResize",
     {"image": X, "boxes": Y, "box_ind": np.array([0, 1], np.int32),
      "crop_size": np.array([3, 4], np.int32), "extrapolation_value": 0.5},
     [[_f(2, 5, 6, 2), np.array([[0.1, 0.2, 0.8, 0.9], [0.5, -0.2, 0.1, 1.1]], np.float32)]])
_add("extract_image_patches", "ExtractImagePatches",
     {"images": X, "ksizes": [1, 2, 3, 1], "strides": [1, 2, 1, 1], "rates": [1, 1, 1, 1],
      "padding": "VALID"}, [[_f(1, 5, 4, 2)]])
_BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                   [0, 10.1, 1, 11.1], [0, 100, 1, 101]], np.float32)
_SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)
_add("nms_v2", "NonMaxSuppressionV2", {"boxes": X, "scores": Y, "max_output_size": Z,
                                       "iou_threshold": np.float32(0.5)},
     [[_BOXES, _SCORES, np.int32(3)], [_BOXES, _SCORES, np.int32(10)]])
_add("nms_v3", "NonMaxSuppressionV3", {"boxes": X, "scores": Y, "max_output_size": 10,
                                       "iou_threshold": 0.5, "score_threshold": W},
     [[_BOXES, _SCORES, np.int32(0), np.float32(0.4)]], shapes=[None, None, None, []])
_add("nms_v4", "NonMaxSuppressionV4", {"boxes": X, "scores": Y, "max_output_size": 5,
                                       "iou_threshold": 0.5, "score_threshold": 0.0,
                                       "pad_to_max_output_size": True},
     [[_BOXES, _SCORES]])
_add("nms_v5", "NonMaxSuppressionV5", {"boxes": X, "scores": Y, "max_output_size": 6,
                                       "iou_threshold": 0.6, "score_threshold": 0.0,
                                       "soft_nms_sigma": 0.5},
     [[_BOXES, _SCORES]])

# ------------------------------------------------------------------ elementwise math
for _op, _lo, _hi in (("Tan", -1.2, 1.2), ("Atan", -3, 3), ("Asin", -0.99, 0.99),
                      ("Acos", -0.99, 0.99), ("Sinh", -2, 2), ("Cosh", -2, 2),
                      ("Asinh", -3, 3), ("Acosh", 1.01, 4), ("Atanh", -0.95, 0.95),
                      ("Expm1", -2, 2), ("Log1p", -0.9, 3), ("Erfc", -2, 2),
                      ("Softsign", -3, 3), ("Lgamma", 0.1, 5), ("Digamma", 0.2, 5)):
    _unary(_op, _lo, _hi, onnx=_op not in ("Lgamma", "Digamma"))
_SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, -0.0], np.float32)
for _op in ("IsNan", "IsInf", "IsFinite"):
    _add(_op.lower(), _op, {"x": X}, [[_SPECIAL]], onnx=True)
_binary("Atan2", _f(2, 3), _f(2, 3))
_binary("Mod", np.array([7, -7, 7, -7, 0], np.int32), np.array([3, 3, -3, -3, 5], np.int32))
_binary("TruncateDiv", np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32))
_binary("TruncateMod", np.array([7, -7, 7, -7], np.int32), np.array([3, 3, -3, -3], np.int32))
_binary("DivNoNan", np.array([1.0, -2.0, 3.0, 0.0], np.float32),
        np.array([2.0, 0.0, -4.0, 0.0], np.float32))
_binary("Xlogy", np.array([0.0, 1.0, 2.0, 0.0], np.float32),
        np.array([0.0, 2.0, 0.5, 3.0], np.float32))
_binary("Xdivy", np.array([0.0, 1.0, 2.0, 0.0], np.float32),
        np.array([0.0, 2.0, 0.5, 3.0], np.float32))
_A8, _B8 = _i(6, hi=200, dtype=np.int32), _i(6, hi=200, dtype=np.int32)
for _op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
    _binary(_op, _A8, _B8, onnx=False)
_binary("LeftShift", _A8, np.array([0, 1, 2, 3, 4, 5], np.int32), onnx=False)
_binary("RightShift", _A8, np.array([0, 1, 2, 3, 4, 5], np.int32), onnx=False)
_add("invert", "Invert", {"x": X}, [[np.array([0, 1, 200, 255], np.uint8)]])
_add("l2_loss", "L2Loss", {"t": X}, [[_f(3, 4)]], onnx=True)
_add("invert_permutation", "InvertPermutation", {"x": X},
     [[np.array([2, 0, 3, 1], np.int32)]])
_add("lin_space", "LinSpace", {"start": X, "stop": Y, "num": np.int32(5)},
     [[np.float32(-1.0), np.float32(3.0)]])
_add("unique", "Unique", {"x": X}, [[np.array([4, 1, 4, 2, 1, 9], np.int32)]])
_add("bucketize", "Bucketize", {"input": X, "boundaries": [-1.0, 0.0, 0.5, 2.0]},
     [[np.array([-3.0, -1.0, 0.2, 0.5, 1.0, 2.0, 5.0], np.float32)]], onnx=True)
_add("roll", "Roll", {"input": X, "shift": np.array([1, -2], np.int32),
                      "axis": np.array([0, 1], np.int32)}, [[_f(3, 4)]], onnx=True)

# ------------------------------------------------------------------ segments
_DATA = _f(5, 2)
_IDS = np.array([0, 0, 1, 3, 3], np.int32)
for _op in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"):
    _add(_op.lower(), _op, {"data": X, "segment_ids": Y}, [[_DATA, _IDS]])
for _op in ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
            "UnsortedSegmentProd"):
    _add(_op.lower(), _op, {"data": X, "segment_ids": Y, "num_segments": np.int32(4)},
         [[_DATA, np.array([2, 0, 2, 1, 0], np.int32)]])

# ------------------------------------------------------------------ linear algebra
_M = _f(2, 3, 3)
_SPD = (np.eye(3, dtype=np.float32) * 3 + _M @ np.swapaxes(_M, -1, -2) * 0.3)
_add("matrix_band_part", "MatrixBandPart", {"input": X, "num_lower": np.int64(1),
                                            "num_upper": np.int64(0)}, [[_f(4, 5)]])
_add("matrix_diag", "MatrixDiag", {"diagonal": X}, [[_f(2, 3)]])
_add("matrix_diag_v3", "MatrixDiagV3", {"diagonal": X, "k": np.array([-1, 1], np.int32),
                                        "num_rows": np.int32(-1), "num_cols": np.int32(4),
                                        "padding_value": np.float32(9.0),
                                        "align": "LEFT_RIGHT"}, [[_f(3, 3)]])
_add("matrix_set_diag", "MatrixSetDiag", {"input": X, "diagonal": Y}, [[_f(3, 4), _f(3)]])
_add("matrix_set_diag_v3", "MatrixSetDiagV3", {"input": X, "diagonal": Y,
                                               "k": np.int32(1)}, [[_f(3, 4), _f(3)]])
_add("matrix_diag_part", "MatrixDiagPart", {"input": X}, [[_f(2, 3, 4)]])
_add("matrix_diag_part_v3", "MatrixDiagPartV3", {"input": X, "k": np.array([0, 1], np.int32),
                                                 "padding_value": np.float32(-5.0)},
     [[_f(3, 4)]])
_add("cholesky", "Cholesky", {"input": X}, [[_SPD]])
_add("matrix_inverse", "MatrixInverse", {"input": X, "adjoint": True}, [[_SPD]])
_add("matrix_determinant", "MatrixDeterminant", {"input": X}, [[_M]])
_add("qr", "Qr", {"input": X, "full_matrices": False}, [[_f(4, 3)]])
_add("svd_values", "Svd", {"input": X, "compute_uv": False}, [[_f(2, 4, 3)]])

# ------------------------------------------------------------------ losses, quantisation
_LOGITS = _f(3, 5)
_add("sparse_softmax_xent", "SparseSoftmaxCrossEntropyWithLogits",
     {"features": X, "labels": Y}, [[_LOGITS, np.array([0, 4, 2], np.int32)]])
_add("softmax_xent", "SoftmaxCrossEntropyWithLogits", {"features": X, "labels": Y},
     [[_LOGITS, np.abs(_f(3, 5)) / 5]])
_add("fake_quant_args", "FakeQuantWithMinMaxArgs",
     {"inputs": X, "min": -1.0, "max": 1.5, "num_bits": 8}, [[_f(4, 5, lo=-2, hi=2)]])
_add("fake_quant_vars", "FakeQuantWithMinMaxVars",
     {"inputs": X, "min": Y, "max": Z, "num_bits": 4, "narrow_range": True},
     [[_f(4, 5), np.float32(-1.2), np.float32(0.9)]])
_add("fake_quant_per_channel", "FakeQuantWithMinMaxVarsPerChannel",
     {"inputs": X, "min": np.array([-1.0, -0.3, 0.1], np.float32),
      "max": np.array([1.0, 2.0, 1.1], np.float32)}, [[_f(4, 3)]])
_add("check_numerics", "CheckNumerics", {"tensor": X, "message": "bad"}, [[_f(3)]])


# ------------------------------------------------------------------ strings and images
def _png(pixels: np.ndarray) -> np.bytes_:
    """A minimal 8-bit PNG (no filter, one IDAT) of HxWxC uint8 pixels, C in 1..4."""
    h, w, c = pixels.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[c]

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color,
                                                             0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return np.bytes_(data)


_IMG = RNG.integers(0, 256, (3, 4, 3)).astype(np.uint8)
_add("decode_png", "DecodePng", {"contents": X, "channels": 0},
     [[_png(_IMG)], [_png(_IMG[:2, :, :1])]], shapes=[[]])
_add("decode_png_rgba", "DecodePng", {"contents": X, "channels": 4}, [[_png(_IMG)]])
_add("encode_png", "EncodePng", {"image": X, "compression": 6}, [[_IMG]])
_add("string_format", "StringFormat", {"inputs": [X, Y], "template": "x={} n={}",
                                       "placeholder": "{}", "summarize": 2},
     [[_f(5), np.int32(3)]])
_add("print", "Print", {"input": X, "data": [Y], "message": "og import test: ",
                        "summarize": 2}, [[_f(3), _i(2)]])
_add("print_v2", "PrintV2", {"input": X, "output_stream": "stdout", "end": "!\n"},
     [[np.bytes_(b"og import test")]])

NAMES = [c.name for c in CASES]
BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"
