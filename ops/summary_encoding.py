"""TensorFlow's summary kernels as pure functions: serialized `tensorflow.Summary` bytes.

Each function returns what TF's kernel of the same job serializes (ScalarSummary,
HistogramSummary, ImageSummary, AudioSummaryV2, tf.summary.text's TensorSummaryV2,
MergeSummary), byte for byte except the PNG streams, whose pixels match. The protobuf
wire format is written by hand: fields in field-number order, as TF's C++ serializers
emit them, and proto3 scalars equal to their default (all-zero bits) left out; members
of a oneof (Summary.Value's simple_value) are written whatever their value.
"""

from __future__ import annotations

import struct
import sys
import zlib

import numpy as np

_DBL_MAX = sys.float_info.max


# ---- protobuf wire format -------------------------------------------------------------

def varint(value: int) -> bytes:
    """The base-128 varint of an int64/uint64; negatives take 10 bytes (two's complement).

    Raises:
        TypeError: value is not an integer.
        ValueError: value does not fit in 64 bits.
    """
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"varint needs an integer, got {type(value).__name__}")
    value = int(value)
    if not -2 ** 63 <= value < 2 ** 64:
        raise ValueError(f"varint {value} does not fit in 64 bits")
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field_key(field: int, wire_type: int) -> bytes:
    """The varint key of a field: its number and wire type.

    Raises:
        ValueError: the field number is outside [1, 2**29).
    """
    if not isinstance(field, int) or not 1 <= field < 2 ** 29:
        raise ValueError(f"protobuf field number must be in [1, 2**29), got {field!r}")
    return varint(field << 3 | wire_type)


def field_varint(field: int, value: int, always: bool = False) -> bytes:
    """An int/enum/bool field (wire type 0); empty when value is 0 unless `always`.

    Raises:
        ValueError: bad field number or value out of 64-bit range.
        TypeError: value is not an integer.
    """
    if int(value) == 0 and not always:
        return b""
    return field_key(field, 0) + varint(int(value))


def field_double(field: int, value: float, always: bool = False) -> bytes:
    """A double field (wire type 1); empty when its bits are all zero (0.0, not -0.0)
    unless `always`.

    Raises:
        ValueError: bad field number.
        TypeError: value is not a real number.
    """
    data = struct.pack("<d", float(value))
    if data == bytes(8) and not always:
        return b""
    return field_key(field, 1) + data


def field_float(field: int, value: float, always: bool = False) -> bytes:
    """A float field (wire type 5, the value rounded to float32); empty when its bits are
    all zero unless `always` (a oneof member is always written).

    Raises:
        ValueError: bad field number.
        TypeError: value is not a real number.
    """
    data = np.float32(value).tobytes()  # np.float32 keeps NaN payloads and infinities
    if data == bytes(4) and not always:
        return b""
    return field_key(field, 5) + data


def field_bytes(field: int, value, always: bool = False) -> bytes:
    """A length-delimited field (wire type 2) of bytes, a str (UTF-8) or an embedded
    message's bytes; empty when value is empty unless `always` (a set sub-message).

    Raises:
        ValueError: bad field number.
        TypeError: value is neither bytes nor str.
    """
    if isinstance(value, str):
        value = value.encode("utf-8")
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"length-delimited field needs bytes or str, got {type(value).__name__}")
    if not value and not always:
        return b""
    return field_key(field, 2) + varint(len(value)) + bytes(value)


def field_packed_doubles(field: int, values) -> bytes:
    """A packed repeated double field; empty when there are no values.

    Raises:
        ValueError: bad field number.
        TypeError: values are not real numbers.
    """
    data = np.asarray(values, dtype="<f8").tobytes()
    return field_bytes(field, data)


def encode_field(field: int, wire_type: int, value) -> bytes:
    """One field as `read_fields` gave it back (an int for a varint, the raw bytes
    otherwise), written again.

    Raises:
        ValueError: bad field number or wire type.
    """
    if wire_type == 0:
        return field_key(field, 0) + varint(value)
    if wire_type == 2:
        return field_key(field, 2) + varint(len(value)) + bytes(value)
    if wire_type in (1, 5):
        return field_key(field, wire_type) + bytes(value)
    raise ValueError(f"protobuf wire type {wire_type} is not supported")


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """(the varint at data[pos:], the position after it).

    Raises:
        ValueError: it is truncated or overlong.
    """
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("malformed summary: truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def packed_int64s(data: bytes) -> list[int]:
    """The int64 values of a packed repeated varint field (two's complement).

    Raises:
        ValueError: a varint is truncated or overlong.
    """
    out, pos = [], 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        out.append(value - 2 ** 64 if value >= 2 ** 63 else value)
    return out


def read_fields(data: bytes) -> list[tuple[int, int, bytes | int]]:
    """The (field, wire type, value) of each field of a serialized message, in order;
    value is an int for varints, the raw bytes otherwise.

    Raises:
        ValueError: the bytes are not a well-formed protobuf message.
    """
    out, pos = [], 0
    sizes = {1: 8, 5: 4}
    while pos < len(data):
        key, pos = read_varint(data, pos)
        field, wire_type = key >> 3, key & 7
        if field == 0:
            raise ValueError("malformed summary: field number 0")
        if wire_type == 0:
            value, pos = read_varint(data, pos)
        elif wire_type in sizes:
            value, pos = data[pos:pos + sizes[wire_type]], pos + sizes[wire_type]
        elif wire_type == 2:
            size, pos = read_varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        else:
            raise ValueError(f"malformed summary: unsupported wire type {wire_type}")
        if pos > len(data):
            raise ValueError("malformed summary: field runs past the end")
        out.append((field, wire_type, value))
    return out


def _value(tag: str, body: bytes) -> bytes:
    """One Summary.value (field 1) entry: its tag (field 1) then `body`."""
    return field_bytes(1, field_bytes(1, tag) + body, always=True)


def _shape_text(shape) -> str:
    """A shape as TF's TensorShape::DebugString writes it: [2,3]."""
    return "[" + ",".join(str(d) for d in shape) + "]"


def _tag_text(tag) -> str:
    """A tag given as str, bytes or a 0-d/one-element array of either."""
    if isinstance(tag, np.ndarray):
        if tag.size != 1:
            raise ValueError(f"tag must be a scalar string, got shape {_shape_text(tag.shape)}")
        tag = tag.reshape(-1)[0]
    if isinstance(tag, bytes):
        return tag.decode("utf-8", "surrogateescape")
    if not isinstance(tag, str):
        raise TypeError(f"tag must be a string, got {type(tag).__name__}")
    return tag


def _real(values, what: str, kinds: str = "iuf") -> np.ndarray:
    array = np.asarray(values)
    if array.dtype.kind not in kinds:
        raise TypeError(f"{what} must be real numbers, got dtype {array.dtype}")
    return array


# ---- scalars ---------------------------------------------------------------------------

def scalar_summary(tags, values) -> bytes:
    """TF's ScalarSummary: one Value{tag, simple_value (float32)} per element.

    Raises:
        ValueError: tags and values differ in shape (a scalar tag needs a scalar value).
        TypeError: values are not real numbers, or a tag is not a string.
    """
    tags_a = np.asarray(tags, dtype=object)
    values_a = _real(values, "ScalarSummary values")
    if tags_a.shape != values_a.shape:
        single = f" (tag '{_tag_text(tags_a.reshape(-1)[0])}')" if tags_a.size == 1 else ""
        raise ValueError(f"tags and values are not the same shape: {_shape_text(tags_a.shape)}"
                         f" != {_shape_text(values_a.shape)}{single}")
    out = bytearray()
    for tag, value in zip(tags_a.reshape(-1), values_a.reshape(-1)):
        out += _value(_tag_text(tag), field_float(2, float(value), always=True))
    return bytes(out)


# ---- histograms ------------------------------------------------------------------------

def _default_bucket_limits() -> np.ndarray:
    """TF's InitDefaultBuckets: powers of 1.1 from 1e-12 below 1e20, then DBL_MAX,
    mirrored negative, with 0 in the middle."""
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1  # repeated products, as TF builds them (not 1.1 ** k)
    positive.append(_DBL_MAX)
    return np.array([-x for x in reversed(positive)] + [0.0] + positive)


_BUCKET_LIMITS = _default_bucket_limits()


def histogram_summary(tag, values) -> bytes:
    """TF's HistogramSummary: a HistogramProto of the values (as double) over TF's default
    buckets, runs of empty buckets collapsed into their last limit.

    Raises:
        ValueError: a value is NaN ("Nan in summary histogram for: <tag>") or infinite
            ("Infinity in Histogram for: <tag>"), TF's messages (InvalidArgument in TF).
        TypeError: values are not real numbers, or tag is not a string.
    """
    tag = _tag_text(tag)
    flat = _real(values, "HistogramSummary values").reshape(-1).astype(np.float64)
    bad = ~np.isfinite(flat)
    if bad.any():
        first = flat[np.argmax(bad)]  # TF stops at the first non-finite value
        kind = "Nan in summary histogram" if np.isnan(first) else "Infinity in Histogram"
        raise ValueError(f"{kind} for: {tag}")
    counts = np.bincount(np.searchsorted(_BUCKET_LIMITS, flat, side="right"),
                         minlength=len(_BUCKET_LIMITS)).astype(np.float64)
    limits, buckets = [], []
    i = 0
    while i < len(counts):
        end, count = _BUCKET_LIMITS[i], counts[i]
        i += 1
        if count <= 0.0:  # a run of empty buckets becomes one, ending at the run's end
            while i < len(counts) and counts[i] <= 0.0:
                end, count = _BUCKET_LIMITS[i], counts[i]
                i += 1
        limits.append(end)
        buckets.append(count)
    low, high, total, squares = _DBL_MAX, -_DBL_MAX, 0.0, 0.0
    if flat.size:
        # cumsum adds in order, one rounding per add, as TF's loop (a sum is pairwise)
        # (+ 0.0: TF's sum starts at +0.0, so it is never -0.0)
        total, squares = np.cumsum(flat)[-1] + 0.0, np.cumsum(flat * flat)[-1]
        # TF keeps the first of equal extremes: matters for 0.0 against -0.0
        low, high = flat[np.argmax(flat == flat.min())], flat[np.argmax(flat == flat.max())]
    proto = (field_double(1, low) + field_double(2, high)
             + field_double(3, float(flat.size)) + field_double(4, total)
             + field_double(5, squares)
             + field_packed_doubles(6, limits) + field_packed_doubles(7, buckets))
    return _value(tag, field_bytes(5, proto, always=True))


# ---- images ----------------------------------------------------------------------------

def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(image: np.ndarray) -> bytes:
    """An 8-bit PNG of a (H, W, C) uint8 image: grey (C=1), RGB (3) or RGBA (4).

    Raises:
        ValueError: not a (H, W, C) uint8 array with C in {1, 3, 4}, or H/W too large.
    """
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (1, 3, 4):
        raise ValueError(f"encode_png needs a (H, W, 1|3|4) uint8 image, got "
                         f"{image.dtype} {_shape_text(image.shape)}")
    height, width, depth = image.shape
    if height >= 2 ** 31 or width >= 2 ** 31:
        raise ValueError(f"image {_shape_text(image.shape)} too large for PNG")
    color_type = {1: 0, 3: 2, 4: 6}[depth]
    rows = np.zeros((height, 1 + width * depth), np.uint8)  # filter byte 0: none
    rows[:, 1:] = image.reshape(height, width * depth)
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes()))
            + _png_chunk(b"IEND", b""))


def _normalize_float_image(values: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TF's NormalizeFloatImage on one (H, W, C) image: range from finite pixels, an
    affine map into uint8 (computed in the image's dtype), bad_color for the rest."""
    kind = values.dtype.type
    finite = np.isfinite(values).all(axis=-1)
    picked = values[finite].astype(np.float32)  # TF compares as float
    low = np.float32(picked.min()) if picked.size else np.float32(np.inf)
    high = np.float32(picked.max()) if picked.size else np.float32(-np.inf)
    threshold = np.float32(1e-6)
    if low < 0:
        biggest = max(abs(low), abs(high))
        scale = kind(0.0 if biggest < threshold else np.float32(127.0) / biggest)
        offset = kind(128.0)
    else:
        scale = kind(0.0 if high < threshold else np.float32(255.0) / high)
        offset = kind(0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        mapped = (values * scale + offset).astype(np.float64)
    out = np.trunc(np.where(finite[..., None], mapped, 0)).astype(np.int64).astype(np.uint8)
    out[~finite] = bad_color
    return out


def _batch_tags(tag: str, suffix: str, count: int, most: int) -> list[str]:
    """TF's tags: "<tag>/<suffix>" when at most one output is asked for, else numbered."""
    return [f"{tag}/{suffix}" if most <= 1 else f"{tag}/{suffix}/{i}" for i in range(count)]


def image_summary(tag, images, max_images: int = 3, bad_color=(255, 0, 0, 255)) -> bytes:
    """TF's ImageSummary: the first min(N, max_images) images of (N, H, W, C) as PNG in
    Summary.Image values; float images are rescaled as TF's NormalizeFloatImage does.

    Raises:
        ValueError: not 4-D with C in {1, 3, 4}; max_images < 1; bad_color has fewer
            than C channels or values outside [0, 255].
        TypeError: images are neither uint8 nor float16/32/64; tag is not a string.
    """
    tag = _tag_text(tag)
    array = np.asarray(images)
    if array.ndim != 4 or array.shape[3] not in (1, 3, 4):
        raise ValueError(f"Tensor must be 4-D with last dim 1, 3, or 4, not "
                         f"{_shape_text(array.shape)}")
    if array.dtype not in (np.uint8, np.float16, np.float32, np.float64):
        raise TypeError(f"ImageSummary images must be uint8 or float16/32/64, "
                        f"got {array.dtype}")
    if isinstance(max_images, bool) or int(max_images) != max_images or max_images < 1:
        raise ValueError(f"max_images must be an integer >= 1, got {max_images!r}")
    depth = array.shape[3]
    bad = np.asarray(bad_color).reshape(-1)
    if bad.dtype.kind not in "iu" or bad.size and (bad.min() < 0 or bad.max() > 255):
        raise ValueError(f"bad_color must be uint8 values, got {list(bad)}")
    if array.dtype != np.uint8 and bad.size < depth:
        raise ValueError(f"expected depth <= bad_color.size, got depth = {depth}, "
                         f"bad_color.size = {bad.size}")
    count = min(int(max_images), array.shape[0])
    out = bytearray()
    for i, name in enumerate(_batch_tags(tag, "image", count, int(max_images))):
        pixels = array[i] if array.dtype == np.uint8 else _normalize_float_image(
            array[i], bad[:depth].astype(np.uint8))
        image = (field_varint(1, array.shape[1]) + field_varint(2, array.shape[2])
                 + field_varint(3, depth) + field_bytes(4, encode_png(pixels)))
        out += _value(name, field_bytes(4, image, always=True))
    return bytes(out)


# ---- audio -----------------------------------------------------------------------------

def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """TF's EncodeAudioAsS16LEWav: (frames, channels) float32 as 16-bit PCM WAV, each
    sample round(x * 32768) (halves away from zero) clamped to int16.

    Raises:
        ValueError: not 2-D, no channels, sample_rate < 1, or too long for a WAV file.
    """
    if samples.ndim != 2 or samples.shape[1] < 1:
        raise ValueError(f"WAV needs (frames, channels >= 1) samples, got "
                         f"{_shape_text(samples.shape)}")
    frames, channels = samples.shape
    if sample_rate < 1 or channels >= 2 ** 16:
        raise ValueError(f"WAV needs sample_rate >= 1 and < 65536 channels, got "
                         f"{sample_rate} and {channels}")
    data_size = frames * channels * 2
    if 36 + data_size >= 2 ** 32 or sample_rate * channels * 2 >= 2 ** 32:
        raise ValueError("audio too long for a WAV file")
    # the product in float32 as TF's; roundf (halves away from zero) in float64, where
    # |x| + 0.5 is exact for every float32 x
    scaled = (samples.astype(np.float32) * np.float32(32768.0)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        rounded = np.copysign(np.floor(np.abs(scaled) + 0.5), scaled)
        pcm = np.clip(rounded, -32768, 32767).astype("<i2")
    header = (b"RIFF" + struct.pack("<I", 36 + data_size) + b"WAVEfmt "
              + struct.pack("<IHHIIHH", 16, 1, channels, sample_rate,
                            sample_rate * channels * 2, channels * 2, 16)
              + b"data" + struct.pack("<I", data_size))
    return header + pcm.tobytes()


def audio_summary(tag, audio, sample_rate, max_outputs: int = 3) -> bytes:
    """TF's AudioSummaryV2: the first min(N, max_outputs) clips of (N, frames[, channels])
    float audio as WAV in Summary.Audio values.

    Raises:
        ValueError: audio not 2-D or 3-D; sample_rate <= 0 ("sample_rate must be > 0");
            max_outputs < 1.
        TypeError: audio is not floating point; tag is not a string.
    """
    tag = _tag_text(tag)
    array = np.asarray(audio)
    if array.ndim not in (2, 3):
        raise ValueError(f"Tensor must be 3-D or 2-D, got: {_shape_text(array.shape)}")
    if array.dtype.kind != "f":
        raise TypeError(f"AudioSummaryV2 audio must be float, got dtype {array.dtype}")
    rate = np.float32(np.asarray(sample_rate).reshape(-1)[0] if np.ndim(sample_rate)
                      else sample_rate)
    if not rate > 0:
        raise ValueError("sample_rate must be > 0")
    if isinstance(max_outputs, bool) or int(max_outputs) != max_outputs or max_outputs < 1:
        raise ValueError(f"max_outputs must be an integer >= 1, got {max_outputs!r}")
    if array.ndim == 2:
        array = array[:, :, None]
    _, frames, channels = array.shape
    wav_rate = max(int(np.rint(rate)), 1)  # lrintf: halves to even; 0 becomes 1
    count = min(int(max_outputs), array.shape[0])
    out = bytearray()
    for i, name in enumerate(_batch_tags(tag, "audio", count, int(max_outputs))):
        clip = (field_float(1, rate) + field_varint(2, channels) + field_varint(3, frames)
                + field_bytes(4, encode_wav(array[i].astype(np.float32), wav_rate))
                + field_bytes(5, "audio/wav"))
        out += _value(name, field_bytes(6, clip, always=True))
    return bytes(out)


# ---- text ------------------------------------------------------------------------------

_TEXT_METADATA = field_bytes(1, field_bytes(1, "text"), always=True)  # plugin_data
_DT_STRING = 7


def text_summary(tag, strings) -> bytes:
    """What tf.compat.v1.summary.text serializes: a TensorSummaryV2 Value holding the
    strings as a DT_STRING TensorProto (shape, string_val) with the text plugin's
    metadata. str elements are written as UTF-8.

    Raises:
        TypeError: an element is neither str nor bytes; tag is not a string.
    """
    tag = _tag_text(tag)
    array = np.asarray(strings, dtype=object)
    shape = b"".join(field_bytes(2, field_varint(1, d), always=True) for d in array.shape)
    elements = bytearray()
    for item in array.reshape(-1):
        if isinstance(item, str):
            item = item.encode("utf-8")
        if not isinstance(item, bytes):
            raise TypeError(f"text summary elements must be strings, got {type(item).__name__}")
        elements += field_bytes(8, item, always=True)  # repeated: empty strings count
    tensor = field_varint(1, _DT_STRING) + field_bytes(2, shape, always=True) + elements
    return _value(tag, field_bytes(8, bytes(tensor), always=True)
                  + field_bytes(9, _TEXT_METADATA, always=True))


# ---- merging ---------------------------------------------------------------------------

def merge_summaries(serialized) -> bytes:
    """TF's MergeSummary: the Values of all serialized Summary inputs, in order.

    Raises:
        ValueError: a non-empty tag appears twice ("Duplicate tag <tag> found in summary
            inputs"), or an input is not a serialized Summary.
        TypeError: an input is not bytes.
    """
    out, seen = bytearray(), set()
    for blob in serialized:
        if not isinstance(blob, (bytes, bytearray)):
            raise TypeError(f"MergeSummary inputs must be bytes, got {type(blob).__name__}")
        for field, wire_type, value in read_fields(bytes(blob)):
            if field != 1:
                continue  # Summary has only field 1; TF drops unknown fields on merge too
            if wire_type != 2:
                raise ValueError("Could not parse one of the summary inputs")
            tags = [v for f, w, v in read_fields(value) if f == 1 and w == 2]
            tag = tags[-1].decode("utf-8", "surrogateescape") if tags else ""
            if tag and tag in seen:
                raise ValueError(f"Duplicate tag {tag} found in summary inputs")
            seen.add(tag)
            out += field_bytes(1, value, always=True)
    return bytes(out)
