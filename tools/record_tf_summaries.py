"""Record TensorFlow's serialized summaries for tests/ops/test_summary_ops.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_summaries.py

Writes tests/ops/data/tf_summaries_reference.npz, for each case "<kind>/<case>":
"<key>/in" (the values: numbers, or str arrays for text), "<key>/tag" (str),
"<key>/out" (TF's serialized Summary as uint8) and, for refused inputs, "<key>/error"
(TF's message). Audio cases also hold "<key>/rate"; image cases "<key>/max" and
"<key>/bad" (max_images, bad_color); merge cases "<key>/parts" (the number of inputs,
stored as "<key>/in<i>"). Strings are numpy str arrays, so np.load needs no pickle.
"""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "ops", "data", "tf_summaries_reference.npz")


def _scalar_cases(rng) -> dict:
    """name -> (tags, values)."""
    return {
        "several": (np.array(["a", "b/c", "d"]), np.array([1.5, -2.25, 3e38], np.float32)),
        "zero": (np.array("z"), np.float32(0.0)),
        "negative": (np.array("neg"), np.float32(-7.125)),
        "float64": (np.array("f64"), np.float64(1 / 3)),
        "int32": (np.array("i32"), np.int32(-12345)),
        "int64": (np.array("i64"), np.int64(2 ** 40 + 3)),
        "matrix": (np.array([["m0", "m1"], ["m2", "m3"]]),
                   rng.standard_normal((2, 2)).astype(np.float32)),
        "neg_zero": (np.array("nz"), np.float32(-0.0)),
        "nan": (np.array("nan"), np.float32(np.nan)),
        "empty_tag": (np.array(""), np.float32(2.0)),
        "shape_error": (np.array(["a", "b"]), np.array([1.0, 2.0, 3.0], np.float32)),
        "shape_error_single": (np.array(["a"]), np.array([1.0, 2.0], np.float32)),
    }


def _histogram_cases(rng) -> dict:
    """name -> values."""
    return {
        "normal": rng.standard_normal(1000).astype(np.float32),
        "ints": rng.integers(-50, 50, (7, 9)).astype(np.int32),
        "constant": np.full(20, 3.5, np.float32),
        "single": np.array([0.25], np.float64),
        "empty": np.zeros((0,), np.float32),
        "mixed": np.array([-3.0, -1e-13, 0.0, 0.0, 1e-13, 2.0, 1e5, -1e-5], np.float64),
        "large": np.array([1e30, -1e30, 1e20, 1.0], np.float64),
        "neg_zero": np.array([-0.0], np.float32),
        "float64_sums": rng.standard_normal(300) * 1e3,
        "nan": np.array([1.0, np.nan], np.float32),
        "inf": np.array([1.0, np.inf], np.float32),
    }


def _image_cases(rng) -> dict:
    """name -> (images, max_images, bad_color)."""
    red = [255, 0, 0, 255]
    nonfinite = rng.uniform(-2, 5, (2, 4, 5, 3)).astype(np.float32)
    nonfinite[0, 1, 2, 0] = np.nan
    nonfinite[0, 3, 3, 2] = np.inf
    nonfinite[1, 0, 0, 1] = -np.inf
    nonfinite[1, 2, 4, :] = 1e6  # finite: counts in the maximum
    return {
        "gray_u8": (rng.integers(0, 256, (2, 5, 7, 1)).astype(np.uint8), 3, red),
        "rgb_u8": (rng.integers(0, 256, (4, 6, 3, 3)).astype(np.uint8), 3, red),
        "rgba_u8": (rng.integers(0, 256, (1, 3, 4, 4)).astype(np.uint8), 3, red),
        "float_pos": (rng.uniform(0, 3, (2, 6, 5, 3)).astype(np.float32), 3, red),
        "float_neg": (rng.uniform(-4, 2, (2, 6, 5, 1)).astype(np.float32), 3, red),
        "float64_neg": (rng.uniform(-1, 7, (1, 5, 5, 4)), 3, red),
        "half_pos": (rng.uniform(0, 9, (1, 4, 6, 3)).astype(np.float16), 3, red),
        "half_neg": (rng.uniform(-9, 3, (1, 4, 6, 3)).astype(np.float16), 3, red),
        "nonfinite": (nonfinite, 3, [10, 20, 30, 40]),
        "nonfinite_rgba": (np.where(nonfinite[..., :1] > 4, np.nan, 1.0)
                           .repeat(4, -1).astype(np.float32), 3, red),
        "all_zero": (np.zeros((1, 3, 3, 1), np.float32), 3, red),
        "tiny": (np.full((1, 2, 2, 3), 1e-7, np.float32), 3, red),
        "max1_n2": (rng.uniform(0, 1, (2, 3, 3, 3)).astype(np.float32), 1, red),
        "max3_n2": (rng.uniform(0, 1, (2, 3, 3, 3)).astype(np.float32), 3, red),
        "bad_channels": (np.zeros((1, 2, 2, 2), np.float32), 3, red),
        "bad_rank": (np.zeros((2, 2, 3), np.float32), 3, red),
    }


def _audio_cases(rng) -> dict:
    """name -> (audio, sample_rate, max_outputs)."""
    loud = np.array([[-1.5, -1.0, -0.999, -0.5, 0.0, 0.5, 0.999, 1.0, 1.5, 1e9]], np.float32)
    halves = (np.arange(-8, 9, dtype=np.float32) + 0.5) / 32768
    return {
        "mono": (rng.uniform(-1, 1, (2, 50, 1)).astype(np.float32), 16000.0, 3),
        "stereo": (rng.uniform(-1, 1, (1, 30, 2)).astype(np.float32), 44100.0, 3),
        "rank2": (rng.uniform(-1, 1, (3, 20)).astype(np.float32), 8000.0, 3),
        "max1": (rng.uniform(-1, 1, (3, 10)).astype(np.float32), 22050.5, 1),
        "max2_n4": (rng.uniform(-1, 1, (4, 10, 1)).astype(np.float32), 100.0, 2),
        "beyond": (loud, 8000.0, 3),
        "halves": (halves[None, :], 8000.0, 3),
        "empty_frames": (np.zeros((1, 0, 2), np.float32), 8000.0, 3),
        "fraction_rate": (np.zeros((1, 4), np.float32), 0.4, 3),
        "bad_rank": (np.zeros((5,), np.float32), 8000.0, 3),
        "bad_rate": (np.zeros((1, 4), np.float32), 0.0, 3),
    }


def _text_cases() -> dict:
    """name -> strings."""
    return {
        "one": np.array("hello **world**"),
        "vector": np.array(["a", "", "ccc"]),
        "matrix": np.array([["r0c0", "r0c1", "r0c2"], ["r1c0", "r1c1", "r1c2"]]),
        "unicode": np.array(["h\u00e9llo \u2603", "\u65e5\u672c"]),
        "empty": np.array([], dtype=str),
    }


def _put(arrays: dict, key: str, data: bytes) -> None:
    arrays[key] = np.frombuffer(data, np.uint8)


def main() -> int:
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    rng = np.random.default_rng(20261205)
    arrays: dict = {}

    def run(key, make):
        """Record make()'s value under key/out, or TF's refusal under key/error."""
        try:
            with tf.Graph().as_default(), tf.Session() as sess:
                _put(arrays, key + "/out", sess.run(make()))
        except (tf.errors.InvalidArgumentError, ValueError) as e:
            # the kernel's own words: the line before TF's "[[{{node ...}}]]" trailer
            message = (e.message if hasattr(e, "message") else str(e)).split("\n\t [[")[0]
            arrays[key + "/error"] = np.array(message.split("\n")[-1])

    for name, (tags, values) in _scalar_cases(rng).items():
        key = f"scalar/{name}"
        arrays[key + "/tag"], arrays[key + "/in"] = tags, np.asarray(values)
        run(key, lambda: tf.raw_ops.ScalarSummary(
            tags=tf.placeholder_with_default(tags, None),
            values=tf.placeholder_with_default(np.asarray(values), None)))
    for name, values in _histogram_cases(rng).items():
        key = f"histogram/{name}"
        arrays[key + "/tag"], arrays[key + "/in"] = np.array("h/" + name), values
        run(key, lambda: tf.raw_ops.HistogramSummary(
            tag="h/" + name, values=tf.placeholder_with_default(values, None)))
    for name, (images, most, bad) in _image_cases(rng).items():
        key = f"image/{name}"
        arrays[key + "/tag"], arrays[key + "/in"] = np.array("im/" + name), images
        arrays[key + "/max"], arrays[key + "/bad"] = np.array(most), np.array(bad, np.uint8)
        run(key, lambda: tf.raw_ops.ImageSummary(
            tag="im/" + name, tensor=tf.placeholder_with_default(images, None),
            max_images=most, bad_color=tf.make_tensor_proto(np.array(bad, np.uint8))))
    for name, (audio, rate, most) in _audio_cases(rng).items():
        key = f"audio/{name}"
        arrays[key + "/tag"], arrays[key + "/in"] = np.array("au/" + name), audio
        arrays[key + "/rate"], arrays[key + "/max"] = np.float32(rate), np.array(most)
        run(key, lambda: tf.raw_ops.AudioSummaryV2(
            tag="au/" + name, tensor=tf.placeholder_with_default(audio, None),
            sample_rate=np.float32(rate), max_outputs=most))
    for name, strings in _text_cases().items():
        key = f"text/{name}"
        arrays[key + "/tag"], arrays[key + "/in"] = np.array("tx_" + name), strings
        run(key, lambda: tf.summary.text("tx_" + name, tf.constant(strings, tf.string)))
    _record_merges(tf, arrays, run)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    tmp = OUT + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, OUT)
    print(f"wrote {len(arrays)} arrays to {os.path.normpath(OUT)}")
    return 0


def _record_merges(tf, arrays: dict, run) -> None:
    """Merges of summaries recorded above, in the order given."""
    cases = {
        "order": ["scalar/several", "histogram/single", "text/one", "scalar/zero"],
        "reversed": ["scalar/zero", "image/rgba_u8", "scalar/several"],
        "one": ["audio/stereo"],
        "duplicate": ["scalar/zero", "scalar/negative", "scalar/zero"],
        "empty_tags": ["scalar/empty_tag", "scalar/empty_tag"],
    }
    for name, parts in cases.items():
        key = f"merge/{name}"
        blobs = [arrays[p + "/out"].tobytes() for p in parts]
        arrays[key + "/parts"] = np.array(len(parts))
        for i, blob in enumerate(blobs):
            _put(arrays, f"{key}/in{i}", blob)
        run(key, lambda: tf.raw_ops.MergeSummary(inputs=[tf.constant(b) for b in blobs]))


if __name__ == "__main__":
    raise SystemExit(main())
