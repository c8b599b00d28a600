"""Summary ops against TensorFlow's recorded serialized summaries.

tests/ops/data/tf_summaries_reference.npz is written by tools/record_tf_summaries.py
(TF 2.21, graph mode): for each case the inputs, TF's Summary bytes or TF's refusal.
Scalars, histograms, audio, text and merges must match byte for byte; images match
in every field except the PNG stream, whose decoded pixels must match.
"""

import io
import os
import struct

import numpy as np
import pytest

from onegraph.errors import ExecutionError
from onegraph.ops import KernelContext, get_op
from onegraph.ops import summary_encoding as enc

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_summaries_reference.npz")
REF = dict(np.load(DATA, allow_pickle=False))


def _cases(kind):
    return sorted({k.split("/")[1] for k in REF if k.startswith(kind + "/")})


def _ok(kind):
    return [c for c in _cases(kind) if f"{kind}/{c}/out" in REF]


def _failing(kind):
    return [c for c in _cases(kind) if f"{kind}/{c}/error" in REF]


def _strings(array):
    """A numpy str array as og's string tensor (object array of str)."""
    out = np.empty(array.shape, dtype=object)
    out.reshape(-1)[:] = [str(s) for s in array.reshape(-1)]
    return out


def run(op_type, inputs, **attrs):
    op = get_op(op_type, "onegraph")
    (out,) = op.kernel(inputs, op.resolve_attrs(attrs), KernelContext())
    assert out.dtype == object and out.shape == ()
    return out[()]


def want(key):
    return REF[key + "/out"].tobytes()


# ---- scalars ----

@pytest.mark.parametrize("case", _ok("scalar"))
def test_scalar_matches_tf(case):
    key = f"scalar/{case}"
    tags, values = _strings(REF[key + "/tag"]), REF[key + "/in"]
    assert enc.scalar_summary(tags, values) == want(key)
    assert run("ScalarSummary", [tags, values]) == want(key)


@pytest.mark.parametrize("case", _failing("scalar"))
def test_scalar_shape_errors(case):
    key = f"scalar/{case}"
    tags, values = _strings(REF[key + "/tag"]), REF[key + "/in"]
    message = str(REF[key + "/error"])
    with pytest.raises(ValueError) as e:
        enc.scalar_summary(tags, values)
    assert str(e.value) == message
    with pytest.raises(ExecutionError, match="not the same shape"):
        run("ScalarSummary", [tags, values])


def test_scalar_refuses_strings_as_values():
    with pytest.raises(TypeError, match="real numbers"):
        enc.scalar_summary("a", np.array("x"))


# ---- histograms ----

@pytest.mark.parametrize("case", _ok("histogram"))
def test_histogram_matches_tf(case):
    key = f"histogram/{case}"
    tag, values = str(REF[key + "/tag"]), REF[key + "/in"]
    assert enc.histogram_summary(tag, values) == want(key)
    assert run("HistogramSummary", [_strings(REF[key + "/tag"]), values]) == want(key)


@pytest.mark.parametrize("case", _failing("histogram"))
def test_histogram_nonfinite_errors(case):
    key = f"histogram/{case}"
    tag, values = str(REF[key + "/tag"]), REF[key + "/in"]
    # TF names the node; og's function has only the tag to name
    message = str(REF[key + "/error"]).replace("HistogramSummary", tag)
    with pytest.raises(ValueError) as e:
        enc.histogram_summary(tag, values)
    assert str(e.value) == message
    with pytest.raises(ExecutionError, match="in (summary histogram|Histogram) for"):
        run("HistogramSummary", [_strings(REF[key + "/tag"]), values])


def test_histogram_default_buckets():
    limits = enc._BUCKET_LIMITS
    assert limits[0] == -limits[-1] == -np.finfo(np.float64).max
    assert limits[len(limits) // 2] == 0.0 and np.all(np.diff(limits) > 0)
    assert limits[len(limits) // 2 + 1] == 1e-12 and limits[-2] < 1e20 <= limits[-2] * 1.1


# ---- images ----

def _fields(data):
    return [(f, v) for f, _, v in enc.read_fields(data)]


def _decode_png(data):
    from PIL import Image  # dev dependency

    image = Image.open(io.BytesIO(data))
    pixels = np.asarray(image)
    return image.mode, pixels if pixels.ndim == 3 else pixels[..., None]


def _images(serialized):
    """(tag, height, width, colorspace, PIL mode, pixels) of each Value."""
    out = []
    for field, value in _fields(serialized):
        assert field == 1
        parts = dict(_fields(value))
        assert sorted(parts) == [1, 4]
        image = dict(_fields(parts[4]))
        out.append((parts[1], image[1], image[2], image[3]) + _decode_png(image[4]))
    return out


@pytest.mark.parametrize("case", _ok("image"))
def test_image_matches_tf(case):
    key = f"image/{case}"
    tag, images = str(REF[key + "/tag"]), REF[key + "/in"]
    most, bad = int(REF[key + "/max"]), REF[key + "/bad"].tolist()
    expected = _images(want(key))
    for got in (enc.image_summary(tag, images, most, bad),
                run("ImageSummary", [_strings(REF[key + "/tag"]), images],
                    max_images=most, bad_color=bad)):
        got = _images(got)
        assert [g[:5] for g in got] == [e[:5] for e in expected]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g[5], e[5])


def test_image_tags_follow_max_images_not_batch():
    tags = [t for t, *_ in _images(want("image/max1_n2"))]
    assert tags == [b"im/max1_n2/image"]
    tags = [t for t, *_ in _images(want("image/max3_n2"))]
    assert tags == [b"im/max3_n2/image/0", b"im/max3_n2/image/1"]


@pytest.mark.parametrize("case", _failing("image"))
def test_image_shape_errors(case):
    key = f"image/{case}"
    with pytest.raises(ValueError) as e:
        enc.image_summary("t", REF[key + "/in"])
    assert str(e.value) == str(REF[key + "/error"])
    with pytest.raises(ExecutionError, match="4-D with last dim"):
        run("ImageSummary", [_strings(np.array("t")), REF[key + "/in"]])


def test_image_bad_inputs():
    with pytest.raises(TypeError, match="uint8 or float"):
        enc.image_summary("t", np.zeros((1, 2, 2, 3), np.int32))
    with pytest.raises(ValueError, match="bad_color"):
        enc.image_summary("t", np.zeros((1, 2, 2, 3), np.float32), bad_color=[1, 2])
    with pytest.raises(ValueError, match="max_images"):
        enc.image_summary("t", np.zeros((1, 2, 2, 3), np.uint8), max_images=0)


def test_png_encoder_layout():
    data = enc.encode_png(np.arange(24, dtype=np.uint8).reshape(2, 3, 4))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">I4sIIBBBBB", data[8:29]) == (13, b"IHDR", 3, 2, 8, 6, 0, 0, 0)
    assert data.endswith(b"\x00\x00\x00\x00IEND\xaeB`\x82")
    with pytest.raises(ValueError, match="uint8"):
        enc.encode_png(np.zeros((2, 2, 2), np.uint8))


# ---- audio ----

@pytest.mark.parametrize("case", _ok("audio"))
def test_audio_matches_tf(case):
    key = f"audio/{case}"
    tag, audio = str(REF[key + "/tag"]), REF[key + "/in"]
    rate, most = REF[key + "/rate"], int(REF[key + "/max"])
    assert enc.audio_summary(tag, audio, rate, most) == want(key)
    got = run("AudioSummaryV2", [_strings(REF[key + "/tag"]), audio, rate], max_outputs=most)
    assert got == want(key)


@pytest.mark.parametrize("case", _failing("audio"))
def test_audio_errors(case):
    key = f"audio/{case}"
    with pytest.raises(ValueError) as e:
        enc.audio_summary("t", REF[key + "/in"], REF[key + "/rate"])
    assert str(e.value) == str(REF[key + "/error"])
    with pytest.raises(ExecutionError):
        run("AudioSummaryV2", [_strings(np.array("t")), REF[key + "/in"], REF[key + "/rate"]])


def test_audio_refuses_integers():
    with pytest.raises(TypeError, match="float"):
        enc.audio_summary("t", np.zeros((1, 4), np.int16), 8000.0)


# ---- text ----

@pytest.mark.parametrize("case", _ok("text"))
def test_text_matches_tf(case):
    key = f"text/{case}"
    tag, strings = str(REF[key + "/tag"]), _strings(REF[key + "/in"])
    assert enc.text_summary(tag, strings) == want(key)
    assert run("TextSummary", [_strings(REF[key + "/tag"]), strings]) == want(key)
    as_bytes = np.empty(strings.shape, object)
    as_bytes.reshape(-1)[:] = [s.encode("utf-8") for s in strings.reshape(-1)]
    assert enc.text_summary(tag, as_bytes) == want(key)


def test_text_refuses_numbers():
    with pytest.raises(TypeError, match="must be strings"):
        enc.text_summary("t", np.array([1, 2]))


# ---- merging ----

def _merge_inputs(key):
    return [REF[f"{key}/in{i}"].tobytes() for i in range(int(REF[key + "/parts"]))]


@pytest.mark.parametrize("case", _ok("merge"))
def test_merge_matches_tf(case):
    key = f"merge/{case}"
    parts = _merge_inputs(key)
    assert enc.merge_summaries(parts) == want(key)
    tensors = [np.array(p, dtype=object) for p in parts]
    assert run("MergeSummary", tensors) == want(key)
    stacked = np.empty(len(parts), object)  # one vector input holding all of them
    stacked[:] = parts
    assert run("MergeSummary", [stacked]) == want(key)


def test_merge_duplicate_tag():
    parts = _merge_inputs("merge/duplicate")
    message = str(REF["merge/duplicate/error"]).rstrip()
    with pytest.raises(ValueError) as e:
        enc.merge_summaries(parts)
    assert str(e.value) == message
    with pytest.raises(ExecutionError, match="Duplicate tag z"):
        run("MergeSummary", [np.array(p, dtype=object) for p in parts])


def test_merge_refuses_garbage():
    with pytest.raises(ValueError, match="malformed"):
        enc.merge_summaries([b"\x0a\x05ab"])
    with pytest.raises(TypeError, match="bytes"):
        enc.merge_summaries([3])


# ---- wire format ----

def test_varint_and_fields():
    assert enc.varint(0) == b"\x00" and enc.varint(300) == b"\xac\x02"
    assert enc.varint(-1) == b"\xff" * 9 + b"\x01"
    assert enc.field_varint(3, 0) == b"" and enc.field_varint(3, 0, always=True) == b"\x18\x00"
    assert enc.field_double(1, 0.0) == b""
    assert enc.field_double(1, -0.0) == b"\t" + bytes(7) + b"\x80"
    assert enc.field_float(2, 0.0, always=True) == b"\x15" + bytes(4)
    assert enc.field_bytes(1, "") == b"" and enc.field_bytes(1, "\u00e9") == b"\n\x02\xc3\xa9"
    assert enc.field_packed_doubles(6, [1.0]) == b"2\x08" + struct.pack("<d", 1.0)
    with pytest.raises(ValueError, match="64 bits"):
        enc.varint(2 ** 64)
    with pytest.raises(TypeError, match="integer"):
        enc.varint(1.5)
    with pytest.raises(ValueError, match="field number"):
        enc.field_varint(0, 1)
    with pytest.raises(TypeError, match="bytes or str"):
        enc.field_bytes(1, 5)


def test_infer_and_registration():
    for name in ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2",
                 "TextSummary", "MergeSummary"):
        op = get_op(name, "onegraph")
        assert not op.stateful
        (info,) = op.infer({}, [])
        assert info.dtype == np.dtype(object) and info.shape == ()
