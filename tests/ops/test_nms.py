"""NonMaxSuppression on detection-head sized inputs, against onnxruntime.

SSD and Faster R-CNN exports hand NMS every candidate box (27,000 for torchvision's
ssdlite320); selection must not build anything quadratic in the number of boxes.
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .single_node import one_node_model, run_onnxruntime  # noqa: E402


def _nms_model(batch, classes, n, max_out, iou, score):
    consts = {"max_out": np.array([max_out], np.int64), "iou": np.array([iou], np.float32)}
    if score is not None:
        consts["score"] = np.array([score], np.float32)
    return one_node_model(
        "NonMaxSuppression", [("boxes", TensorProto.FLOAT, [batch, n, 4]),
                              ("scores", TensorProto.FLOAT, [batch, classes, n])],
        output_type=TensorProto.INT64, initializers=consts, opset=17)


def _boxes(rng, batch, n, flipped=False):
    xy = rng.uniform(0, 300, (batch, n, 2))
    wh = rng.uniform(0, 60, (batch, n, 2))
    wh[:, ::97] = 0                        # some empty boxes
    a, b = xy, xy + wh
    if flipped:                            # corners given in either order
        a, b = b, a
    return np.concatenate([a, b], -1).astype(np.float32)


@pytest.mark.parametrize("batch,classes,n,max_out,iou,score,flipped", [
    (2, 3, 3000, 10_000, 0.5, None, False),
    (1, 2, 4000, 50, 0.3, 0.2, True),
    (1, 1, 2500, 10_000, 0.0, None, False),
    (1, 1, 30_000, 300, 0.6, 0.99, False),   # an N x N float64 matrix would be 7 GB
])
def test_matches_onnxruntime(batch, classes, n, max_out, iou, score, flipped):
    rng = np.random.default_rng(n)
    feeds = {"boxes": _boxes(rng, batch, n, flipped),
             "scores": rng.uniform(0, 1, (batch, classes, n)).astype(np.float32)}
    feeds["scores"][:, :, 5:9] = 0.5       # ties: the lower box index comes first
    model = _nms_model(batch, classes, n, max_out, iou, score)
    want = run_onnxruntime(model, feeds)
    got = onegraph.Session(from_onnx(model)).run(["y"], feeds)[0]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def _greedy_reference(boxes, scores, limit, iou_t):
    """Greedy NMS written out pair by pair in plain Python (one batch item, one class)."""
    def iou(p, q):
        y1, x1 = max(min(p[0], p[2]), min(q[0], q[2])), max(min(p[1], p[3]), min(q[1], q[3]))
        y2, x2 = min(max(p[0], p[2]), max(q[0], q[2])), min(max(p[1], p[3]), max(q[1], q[3]))
        inter = max(y2 - y1, 0.0) * max(x2 - x1, 0.0)
        ap = abs(p[2] - p[0]) * abs(p[3] - p[1])
        aq = abs(q[2] - q[0]) * abs(q[3] - q[1])
        union = ap + aq - inter
        return inter / union if inter > 0 and ap > 0 and aq > 0 and union > 0 else 0.0
    kept = []
    for i in sorted(range(len(scores)), key=lambda i: (-scores[i], i)):
        if len(kept) < limit and all(iou(boxes[i], boxes[k]) <= iou_t for k in kept):
            kept.append(i)
    return kept


@pytest.mark.parametrize("iou_t", [0.0, 0.3, 0.7, 1.0])  # [0, 1]: the spec's range
def test_matches_a_pairwise_reference(iou_t):
    rng = np.random.default_rng(11)
    n = 700   # more than two blocks of candidates
    boxes = _boxes(rng, 1, n, flipped=True)
    scores = rng.uniform(0, 1, (1, 1, n)).astype(np.float32)
    model = _nms_model(1, 1, n, 10_000, iou_t, None)
    got = onegraph.Session(from_onnx(model)).run(["y"], {"boxes": boxes, "scores": scores})[0]
    want = _greedy_reference(boxes[0].astype(np.float64).tolist(), scores[0, 0].tolist(),
                             10_000, iou_t)
    np.testing.assert_array_equal(got[:, 2], want)
