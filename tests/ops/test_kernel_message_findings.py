"""Legacy fuzz finding F15: kernels that let numpy's or Python's own error text through
(wrapped in ExecutionError) where a named check belongs.

Each case is a small ONNX model run through `from_onnx` and the Session, and through
onnxruntime as the oracle: where onnxruntime refuses, onegraph must refuse too, with a
named error type whose message names the node, the input or attribute and its value,
and holds none of numpy's or Python's own words; where onnxruntime runs the model,
onegraph must give its values.
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import ExecutionError, OneGraphError, ShapeError  # noqa: E402
from onegraph.train.session import Session  # noqa: E402

# Words of numpy's and Python's own exceptions that a message must not carry.
FOREIGN_WORDS = ("could not be broadcast", "AxisError", "out of bounds for", "IndexError",
                 "TypeError", "ValueError", "Maximum allowed", "NoneType",
                 "array is too big", "Unable to allocate", "is not supported between")


def _info(name, value):
    return helper.make_tensor_value_info(
        name, helper.np_dtype_to_tensor_dtype(np.asarray(value).dtype), None)


def _model(nodes, feeds, outputs=("y",), opset=21):
    graph = helper.make_graph(nodes, "g", [_info(k, v) for k, v in feeds.items()],
                              [helper.make_empty_tensor_value_info(o) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10)


def _ort(model, feeds):
    """onnxruntime's outputs, or the exception it raised."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        return session.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - any refusal of onnxruntime's
        return e


def _og(model, feeds, outputs=("y",)):
    return Session(from_onnx(model)).run(list(outputs), feeds)


def _refused(model, feeds, error, *words, outputs=("y",)):
    """onnxruntime refuses the model; onegraph raises `error` (not its ExecutionError
    wrapper of a foreign exception) naming every one of `words`, without numpy's."""
    assert isinstance(_ort(model, feeds), Exception), "onnxruntime runs this model"
    with pytest.raises(error) as info:
        _og(model, feeds, outputs)
    text = str(info.value)
    assert type(info.value) is not ExecutionError or "failed:" not in text, text
    for word in words:
        assert word in text, text
    for word in FOREIGN_WORDS:
        assert word not in text, text
    return info.value


# --------------------------------------------------------------------------- 1. Clip

CLIP_BAD = [("min", np.arange(4, dtype=np.float32)), ("max", np.arange(4, dtype=np.float32)),
            ("min", np.zeros(0, np.float32)), ("max", np.ones((2, 1), np.float32))]


@pytest.mark.parametrize("name, bound", CLIP_BAD,
                         ids=[f"{n}{list(b.shape)}" for n, b in CLIP_BAD])
def test_clip_bound_that_is_not_a_scalar_is_refused_by_name(name, bound):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    inputs = ["x", "b", ""] if name == "min" else ["x", "", "b"]
    feeds = {"x": x, "b": bound}
    model = _model([helper.make_node("Clip", inputs, ["y"], name="clip_node")], feeds)
    _refused(model, feeds, ShapeError, "clip_node", f"'{name}'", str(list(bound.shape)))


@pytest.mark.parametrize("shape", [(), (1,)], ids=str)
def test_clip_takes_the_bounds_onnxruntime_takes(shape):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    feeds = {"x": x, "lo": np.full(shape, -0.5, np.float32),
             "hi": np.full(shape, 0.25, np.float32)}
    model = _model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], feeds)
    want = _ort(model, feeds)
    np.testing.assert_array_equal(_og(model, feeds)[0], want[0])
    np.testing.assert_array_equal(want[0], np.clip(x, -0.5, 0.25))
