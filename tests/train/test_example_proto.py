"""tf.train.Example protos (train/example_proto.py) against TensorFlow's bytes recorded
by tools/record_tf_parsing.py (protobuf's deterministic serialization) for the protos of
parsing_cases.py, plus protobuf's Python API and the wire-format corner cases."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

from onegraph.errors import DataLossError
from onegraph.train.example_proto import (BytesList, Example, Feature, FeatureList,
                                          FeatureLists, Features, FloatList, Int64List,
                                          SequenceExample)

from .test_parsing import OG
from .parsing_cases import protos

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "tf1_parsing_reference.json")) as _fh:
    REF = json.load(_fh)
PROTOS = protos(OG)


@pytest.mark.parametrize("name", sorted(PROTOS))
def test_serialization_equals_tf_bytes(name):
    assert PROTOS[name].SerializeToString().hex() == REF["protos"][name]


@pytest.mark.parametrize("name", sorted(PROTOS))
def test_parsing_tf_bytes_gives_the_proto(name):
    cls = type(PROTOS[name])
    parsed = cls.FromString(bytes.fromhex(REF["protos"][name]))
    assert parsed == PROTOS[name]
    assert parsed.SerializeToString().hex() == REF["protos"][name]


@pytest.mark.parametrize("name", sorted(PROTOS))
def test_text_format_equals_tf(name):
    mine, tf_text = str(PROTOS[name]), REF["text"][name]
    if mine.count("key: ") <= 1:
        assert mine == tf_text
    else:   # TF prints map entries in its hash order: compare the lines as a multiset
        assert sorted(mine.split("\n")) == sorted(tf_text.split("\n"))


def test_attribute_access_as_protobuf():
    ex = Example.FromString(bytes.fromhex(REF["protos"]["basic"]))
    feature = ex.features.feature
    assert sorted(feature) == ["label", "name", "x"]
    assert feature["x"].float_list.value == [1.0, 2.0]
    assert feature["label"].int64_list.value == [3]
    assert feature["name"].bytes_list.value == [b"abc"]
    assert feature["x"].WhichOneof("kind") == "float_list"
    assert feature["x"].HasField("float_list") and not feature["x"].HasField("int64_list")
    assert ex.HasField("features") and not Example().HasField("features")
    ints = Example.FromString(bytes.fromhex(REF["protos"]["ints"]))
    assert ints.features.feature["v"].int64_list.value == \
        [-1, 0, 1, 127, 128, 2 ** 62, -2 ** 63, 2 ** 63 - 1]
    seq = SequenceExample.FromString(bytes.fromhex(REF["protos"]["seq1"]))
    frames = seq.feature_lists.feature_list["frames"].feature
    assert [f.float_list.value for f in frames] == [[1, 2], [3, 4], [5, 6]]
    assert seq.context.feature["tags"].bytes_list.value == [b"a", b"b"]
    assert repr(feature["x"]) == "float_list {\n  value: 1\n  value: 2\n}\n"


def test_mutation_sets_the_oneof_member():
    f = Feature()
    assert f.WhichOneof("kind") is None
    f.int64_list.value.append(5)
    assert f.WhichOneof("kind") == "int64_list"
    ex = Example()
    ex.features.feature["a"] = f
    assert ex.SerializeToString() == Example(features=Features(feature={
        "a": Feature(int64_list=Int64List(value=[5]))})).SerializeToString()
    with pytest.raises(ValueError, match="no \"what\" field"):
        f.WhichOneof("what")
    with pytest.raises(TypeError, match="FloatList"):
        Feature(float_list=Int64List(value=[1]))
    with pytest.raises(TypeError, match="no field named"):
        Example(feature=Features())


def test_unpacked_numbers_parse():
    # field 1 written once per value: wire type 5 floats, wire type 0 varints
    floats = b"".join(b"\x0d" + struct.pack("<f", v) for v in (1.5, -2.0))
    assert FloatList.FromString(floats).value == [1.5, -2.0]
    ints = b"\x08\x03" + b"\x08" + b"\xff" * 9 + b"\x01"
    assert Int64List.FromString(ints).value == [3, -1]
    mixed = Feature.FromString(b"\x1a" + bytes([len(ints)]) + ints)
    assert mixed.int64_list.value == [3, -1]
    assert BytesList.FromString(b"\x0a\x00\x0a\x01z").value == [b"", b"z"]


def test_empty_messages_and_set_members():
    assert Example().SerializeToString() == b""
    assert Example(features=Features()).SerializeToString() == b"\x0a\x00"
    assert Feature(float_list=FloatList()).SerializeToString() == b"\x12\x00"
    assert FeatureLists(feature_list={"k": FeatureList()}).SerializeToString() == \
        b"\x0a\x05\x0a\x01k\x12\x00"


@pytest.mark.parametrize("data", [b"\x0a\x05\x0a\x03", b"\x0a", b"\x0f", b"\x0a\x02\x0a\x05"])
def test_corrupt_bytes_raise_data_loss(data):
    with pytest.raises(DataLossError, match="Example|Features|Feature"):
        Example.FromString(data)


def test_bad_values_raise():
    with pytest.raises(TypeError, match="needs bytes"):
        Example.FromString("text")
    with pytest.raises(DataLossError, match="multiple of 4"):
        FloatList.FromString(b"\x0a\x03abc")
    with pytest.raises(DataLossError, match="wire type"):
        Features.FromString(b"\x08\x01")
    with pytest.raises(ValueError, match="int64"):
        Int64List(value=[2 ** 63]).SerializeToString()
    with pytest.raises(TypeError):
        BytesList(value=[1]).SerializeToString()
    with pytest.raises(TypeError, match="keys must be str"):
        Features(feature={1: Feature()}).SerializeToString()
    assert np.float32(FloatList(value=[0.1]).value[0]) == np.float32(0.1)
