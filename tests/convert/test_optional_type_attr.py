"""Optional's TYPE_PROTO `type` attribute: imported as protobuf text, exported back."""

from onnx import AttributeProto, TensorProto, helper

from onegraph.convert.onnx_export import _type_proto_attribute
from onegraph.convert.onnx_import import _attr_value


def test_type_proto_attribute_round_trip():
    tp = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [5]))
    attr = helper.make_attribute("type", tp)
    assert attr.type == AttributeProto.TYPE_PROTO
    text = _attr_value(attr, "test", None)
    assert isinstance(text, str) and "sequence_type" in text
    back = _type_proto_attribute("type", text, "test")
    assert back.type == AttributeProto.TYPE_PROTO and back.tp == tp
