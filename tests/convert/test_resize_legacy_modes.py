"""Resize-11/12's coordinate_transformation_mode tf_half_pixel_for_nn (removed at opset
13): imported and run as onnxruntime runs the original, exported as its exact opset-13
spelling where one exists, refused by name where none does; values Resize does not
know are refused at import."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError
from onegraph.train.session import Session


def _resize_11(in_shape, scales=None, sizes=None, **attrs):
    inits = [numpy_helper.from_array(np.zeros(0, np.float32), "roi"),
             numpy_helper.from_array(np.asarray(scales if scales is not None else [],
                                                np.float32), "scales")]
    names = ["x", "roi", "scales"]
    if sizes is not None:
        inits.append(numpy_helper.from_array(np.asarray(sizes, np.int64), "sizes"))
        names.append("sizes")
    node = helper.make_node("Resize", names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 6
    return model


def _ort(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


_CASES = [({"scales": [1, 1, 2, 2]}, (1, 1, 3, 4)),
          ({"scales": [1, 1, 0.625, 1.75]}, (1, 2, 5, 6)),
          ({"scales": [1, 1, 3, 0.5]}, (2, 1, 4, 8)),
          ({"sizes": [1, 1, 7, 3]}, (1, 1, 3, 5)),
          ({"sizes": [1, 1, 2, 9]}, (1, 1, 6, 4))]


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "floor", None])
@pytest.mark.parametrize("size_args,in_shape", _CASES)
def test_tf_half_pixel_for_nn_runs_and_exports_as_onnxruntime_runs_it(
        size_args, in_shape, nearest_mode):
    extra = {"nearest_mode": nearest_mode} if nearest_mode else {}
    model = _resize_11(in_shape, mode="nearest",
                       coordinate_transformation_mode="tf_half_pixel_for_nn",
                       **size_args, **extra)
    x = np.random.default_rng(0).standard_normal(in_shape).astype(np.float32)
    expected = _ort(model, x)
    ours = from_onnx(model)
    np.testing.assert_array_equal(Session(ours).run(["y"], {"x": x})[0], expected)
    exported = to_onnx(ours)
    (node,) = exported.graph.node
    modes = {a.name: a.s.decode() for a in node.attribute if a.type == a.STRING}
    assert modes["coordinate_transformation_mode"] == "half_pixel"
    np.testing.assert_array_equal(_ort(exported, x), expected)


@pytest.mark.parametrize("attrs", [{"mode": "linear"},
                                   {"mode": "nearest", "nearest_mode": "ceil"},
                                   {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}])
def test_tf_half_pixel_for_nn_without_an_opset_13_spelling_is_refused_at_export(attrs):
    model = _resize_11((1, 1, 3, 4), scales=[1, 1, 2, 2],
                       coordinate_transformation_mode="tf_half_pixel_for_nn", **attrs)
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    ours = from_onnx(model)
    np.testing.assert_allclose(Session(ours).run(["y"], {"x": x})[0], _ort(model, x),
                               rtol=1e-6)
    with pytest.raises(ConversionError, match=r"node .*Resize.*'tf_half_pixel_for_nn' left "
                                              r"ONNX at opset 13"):
        to_onnx(ours)


@pytest.mark.parametrize("name,value", [("coordinate_transformation_mode", "half_pixels"),
                                        ("mode", "bilinear"), ("nearest_mode", "round"),
                                        ("keep_aspect_ratio_policy", "fit")])
def test_unknown_resize_choices_are_refused_at_import(name, value):
    model = _resize_11((1, 1, 3, 4), scales=[1, 1, 2, 2])
    model.opset_import[0].version = 19
    model.ir_version = 9
    model.graph.node[0].attribute.append(helper.make_attribute(name, value))
    with pytest.raises(ConversionError, match=rf"Resize.*{name} must be one of .*got '{value}'"):
        from_onnx(model)


def _upsample(opset, **attrs):
    node = helper.make_node("Upsample", ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3
    return model


@pytest.mark.parametrize("old_mode, new_mode", [("NEAREST", "nearest"), ("nearest", "nearest"),
                                                ("BILINEAR", "linear"),
                                                ("bilinear", "linear")])
def test_upsample_1_modes_run_as_upsample_7_in_onnxruntime(old_mode, new_mode):
    """Upsample-1 (experimental, opsets 1-6: height_scale, width_scale, modes NEAREST
    and BILINEAR) computes what the same resize spelled in Upsample-7 computes in
    onnxruntime, which has no Upsample-1 kernel. onnx's converter copied the old mode
    names, which Resize then refused."""
    x = np.random.default_rng(1).standard_normal((1, 2, 3, 4)).astype(np.float32)
    old = _upsample(1, height_scale=2.0, width_scale=3.0, mode=old_mode)
    same = _upsample(7, scales=[1.0, 1.0, 2.0, 3.0], mode=new_mode)
    got = Session(from_onnx(old)).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, _ort(same, x), rtol=1e-6, atol=1e-7)
    assert got.shape == (1, 2, 6, 12)
