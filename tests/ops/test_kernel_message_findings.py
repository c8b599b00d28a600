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
from onegraph.errors import ExecutionError, OpAttributeError, ShapeError  # noqa: E402
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


# ------------------------------------------------------------- 2. ConcatFromSequence

def _sequence_model(op_node, feeds):
    build = helper.make_node("SequenceConstruct", list(feeds), ["s"])
    return _model([build, op_node], feeds)


# (axis, new_axis, range named in the message) for two tensors of rank 2
CFS_AXES = [(-100, 0, "[-2, 1]"), (2, 0, "[-2, 1]"), (-3, 0, "[-2, 1]"),
            (-100, 1, "[-3, 2]"), (3, 1, "[-3, 2]"), (-4, 1, "[-3, 2]")]


@pytest.mark.parametrize("axis, new_axis, valid", CFS_AXES,
                         ids=[f"axis{a}-new_axis{n}" for a, n, _ in CFS_AXES])
def test_concat_from_sequence_axis_out_of_range_is_refused_by_name(axis, new_axis, valid):
    feeds = {"a": np.zeros((2, 3), np.float32), "b": np.ones((2, 3), np.float32)}
    node = helper.make_node("ConcatFromSequence", ["s"], ["y"], name="cfs_node", axis=axis,
                            new_axis=new_axis)
    _refused(_sequence_model(node, feeds), feeds, OpAttributeError, "cfs_node",
             f"axis {axis}", valid)


CFS_MISFITS = [
    ("scalars", 0, {"a": np.array(1, np.float32), "b": np.array(2, np.float32)}, "scalars"),
    ("ranks", 0, {"a": np.zeros((2, 3), np.float32), "b": np.zeros(3, np.float32)}, "rank 1"),
    ("dims", 0, {"a": np.zeros((2, 3), np.float32), "b": np.zeros((3, 2), np.float32)},
     "[3, 2]"),
    ("stack_dims", 1, {"a": np.zeros((2, 3), np.float32), "b": np.zeros((2, 4), np.float32)},
     "[2, 4]"),
]


@pytest.mark.parametrize("new_axis, feeds, word", [c[1:] for c in CFS_MISFITS],
                         ids=[c[0] for c in CFS_MISFITS])
def test_concat_from_sequence_tensors_that_do_not_fit_are_refused_by_name(new_axis, feeds,
                                                                          word):
    node = helper.make_node("ConcatFromSequence", ["s"], ["y"], name="cfs_node", axis=0,
                            new_axis=new_axis)
    _refused(_sequence_model(node, feeds), feeds, ShapeError, "cfs_node", word)


@pytest.mark.parametrize("axis, new_axis", [(-3, 1), (2, 1), (-2, 0), (1, 0)])
def test_concat_from_sequence_edge_axes_match_onnxruntime(axis, new_axis):
    feeds = {"a": np.arange(6, dtype=np.float32).reshape(2, 3),
             "b": -np.arange(6, dtype=np.float32).reshape(2, 3)}
    node = helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)
    model = _sequence_model(node, feeds)
    np.testing.assert_array_equal(_og(model, feeds)[0], _ort(model, feeds)[0])


@pytest.mark.parametrize("op", ["SequenceAt", "SequenceErase", "SequenceInsert"])
def test_empty_sequence_position_is_refused_by_name(op):
    feeds = {"a": np.ones(2, np.float32), "p": np.zeros(0, np.int64)}
    inputs = ["s", "a", "p"] if op == "SequenceInsert" else ["s", "p"]
    nodes = [helper.make_node("SequenceConstruct", ["a", "a"], ["s"]),
             helper.make_node(op, inputs, ["t"], name="seq_node")]
    if op == "SequenceAt":
        nodes.append(helper.make_node("Identity", ["t"], ["y"]))
    else:
        nodes.append(helper.make_node("SequenceLength", ["t"], ["y"]))
    _refused(_model(nodes, feeds), feeds, ShapeError, "seq_node", "'position'", "[0]")
