"""STFT's real signal as PyTorch exports it: (batch, length) without the trailing 1
(torch.onnx.export of torch.stft), which onnxruntime takes as real; against
onnxruntime, and the same values as the (batch, length, 1) form."""

import numpy as np
import pytest
from onnx import TensorProto

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import ShapeError

from .single_node import one_node_model, run_onnxruntime


def _stft(shape):
    return one_node_model(
        "STFT", [("x", TensorProto.FLOAT, shape)], opset=17, onesided=1,
        initializers={"step": np.array(2, np.int64),
                      "win": np.hanning(8).astype(np.float32),
                      "flen": np.array(8, np.int64)})


def _run(model, x):
    return og.Session(from_onnx(model)).run("y", {"x": x})


def test_two_dimensional_real_signal_matches_onnxruntime_and_the_3d_form():
    x = np.random.default_rng(0).standard_normal((2, 32)).astype(np.float32)
    got = _run(_stft(["b", "t"]), x)
    assert got.shape == (2, 13, 5, 2)
    np.testing.assert_allclose(got, run_onnxruntime(_stft(["b", "t"]), {"x": x}),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got, _run(_stft(["b", "t", 1]), x[..., None]))


def test_other_signal_ranks_are_refused():
    with pytest.raises(ShapeError, match=r"signal must be \(batch, length\), \(batch, "
                                         r"length, 1\) or \(batch, length, 2\)"):
        _run(_stft(None), np.zeros((2, 3, 32, 1), np.float32))
