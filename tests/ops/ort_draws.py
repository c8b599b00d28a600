"""onnxruntime as the oracle of the random-draw sweeps (test_window_geometry_sweep.py,
test_shape_index_sweep.py): a draw onnxruntime refuses is skipped, and so is one where
onnxruntime leaves the spec and ONNX's reference evaluator agrees with the Session."""

from __future__ import annotations


class OrtRefused(Exception):
    """onnxruntime refused the model or its run: the draw is skipped."""


class OrtDiverges(OrtRefused):
    """onnxruntime's result differs from the Session's, whose matches ONNX's reference
    evaluator (onnxruntime leaving the spec; each sweep names the deviations it knows):
    the draw is skipped."""


def ort_run(model, outs, feeds):
    """onnxruntime's (CPU) outputs `outs` of `model` on `feeds`; OrtRefused if it
    refuses the model or the run."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        sess = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
        return sess.run(outs, feeds)
    except Exception as e:  # noqa: BLE001 (any refusal of onnxruntime's)
        raise OrtRefused(str(e)[:300]) from e
