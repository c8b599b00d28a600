"""Record TensorFlow's JPEG decoding for tests/train/test_decode_jpeg.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_jpeg.py

Writes tests/train/data/tf_jpeg_reference.npz: JPEG files made by tf.io.encode_jpeg
("jpeg/<case>", their bytes as uint8) and what tf.io.decode_jpeg (its default
INTEGER_FAST DCT, and INTEGER_ACCURATE: "accurate*") and tf.io.decode_image make of
them ("out/<case>/<how>"), so the tests compare onegraph with TensorFlow without
TensorFlow installed.
"""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf_jpeg_reference.npz")


def _images() -> dict:
    """Small test images: smooth gradients plus noise (so the DCT has work to do)."""
    rng = np.random.RandomState(7)
    y, x = np.mgrid[0:21, 0:13]
    rgb = np.stack([x * 19, y * 12, (x + y) * 7], -1) + rng.randint(0, 40, (21, 13, 3))
    gray = (x * 9 + y * 5)[..., None] + rng.randint(0, 30, (21, 13, 1))
    big = rng.randint(0, 256, (40, 56, 3))
    return {"rgb": np.clip(rgb, 0, 255).astype(np.uint8),
            "gray": np.clip(gray, 0, 255).astype(np.uint8),
            "noise": big.astype(np.uint8)}


def main() -> int:
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    arrays = {}
    encodings = {"": {}, "_q50": {"quality": 50}, "_progressive": {"progressive": True},
                 "_444": {"chroma_downsampling": False}}
    with tf.Session() as sess:
        for name, image in _images().items():
            for suffix, kwargs in encodings.items():
                if image.shape[-1] == 1 and suffix == "_444":
                    continue
                case = name + suffix
                data = sess.run(tf.image.encode_jpeg(tf.constant(image), **kwargs))
                arrays[f"jpeg/{case}"] = np.frombuffer(data, np.uint8)
                contents = tf.constant(data)
                exact = {"dct_method": "INTEGER_ACCURATE"}
                hows = {"channels0": tf.image.decode_jpeg(contents),
                        "channels1": tf.image.decode_jpeg(contents, channels=1),
                        "channels3": tf.image.decode_jpeg(contents, channels=3),
                        "ratio2": tf.image.decode_jpeg(contents, ratio=2),
                        "ratio4": tf.image.decode_jpeg(contents, channels=3, ratio=4),
                        "image": tf.image.decode_image(contents),
                        "image_uint16": tf.image.decode_image(contents, dtype=tf.uint16),
                        "accurate0": tf.image.decode_jpeg(contents, **exact),
                        "accurate1": tf.image.decode_jpeg(contents, channels=1, **exact),
                        "accurate3": tf.image.decode_jpeg(contents, channels=3, **exact),
                        "accurate_ratio2": tf.image.decode_jpeg(contents, ratio=2, **exact)}
                for how, t in hows.items():
                    arrays[f"out/{case}/{how}"] = sess.run(t)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {os.path.normpath(OUT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
