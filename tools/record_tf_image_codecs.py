"""Record TensorFlow's GIF / BMP decoding and JPEG encoding for
tests/train/test_image_codecs.py.

Needs tensorflow and Pillow (not onegraph dependencies); run it by hand when the cases
change:

    python tools/record_tf_image_codecs.py

Writes tests/train/data/tf_image_codecs_reference.npz. Files are stored as uint8 arrays
("gif/<case>", "bmp/<case>", "jpeg/<case>"); TF's results as "out/<what>/<case>/<how>";
a run that TF refuses as "err/<what>/<case>/<how>" holding the error class's name. The
GIFs are written here byte by byte (screen size, frame offsets, palettes, transparency,
disposal, interlacing chosen exactly) or by Pillow; the BMPs by Pillow or by hand.
"""

from __future__ import annotations

import io
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf_image_codecs_reference.npz")


# ------------------------------------------------------------------------- GIF writing

def _lzw(indices: np.ndarray, min_size: int) -> bytes:
    """GIF's variable-width LZW of a flat index array (a clear code first, another
    when the 4096-entry table fills)."""
    clear, eoi = 1 << min_size, (1 << min_size) + 1
    bits, nbits, out = 0, 0, bytearray()

    def emit(code, width):
        nonlocal bits, nbits
        bits |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8

    def fresh():
        return {bytes([i]): i for i in range(clear)}, eoi + 1, min_size + 1

    table, nxt, width = fresh()
    emit(clear, width)
    w = b""
    for k in indices.ravel().tolist():
        wk = w + bytes([k])
        if wk in table:
            w = wk
            continue
        emit(table[w], width)
        if nxt < 4096:
            table[wk] = nxt
            nxt += 1
            if nxt > (1 << width) and width < 12:
                width += 1
        else:
            emit(clear, width)
            table, nxt, width = fresh()
        w = bytes([k])
    if w:
        emit(table[w], width)
    emit(eoi, width)
    if nbits:
        out.append(bits & 0xFF)
    return bytes(out)


def _blocks(data: bytes) -> bytes:
    return b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255]
                    for i in range(0, len(data), 255)) + b"\0"


def _table(palette) -> tuple:
    """(size bits, table bytes) of a palette padded to a power of two >= 2."""
    n = max(2, len(palette))
    bits = max(1, int(np.ceil(np.log2(n))))
    pal = list(palette) + [(0, 0, 0)] * ((1 << bits) - len(palette))
    return bits, bytes(np.asarray(pal, np.uint8).ravel())


def _interlace(rows: np.ndarray) -> np.ndarray:
    order = list(range(0, len(rows), 8)) + list(range(4, len(rows), 8)) + \
        list(range(2, len(rows), 4)) + list(range(1, len(rows), 2))
    return rows[order]


def _gif(width, height, frames, palette=None, bg=0) -> bytes:
    """A GIF89a file: frames are dicts of indices (h, w), left, top, and optionally
    palette (a local table), interlace, transparent (index), disposal."""
    flags, gct = 0, b""
    if palette is not None:
        bits, gct = _table(palette)
        flags = 0x80 | 0x70 | (bits - 1)
    out = [b"GIF89a", struct.pack("<HHBBB", width, height, flags, bg, 0), gct]
    for f in frames:
        idx = np.asarray(f["indices"], np.uint8)
        t, disposal = f.get("transparent"), f.get("disposal", 0)
        if t is not None or disposal:
            packed = (disposal << 2) | (1 if t is not None else 0)
            out.append(struct.pack("<BBBBHBB", 0x21, 0xF9, 4, packed, 10, t or 0, 0))
        lflags, lct, bits = 0, b"", None
        if f.get("palette") is not None:
            bits, lct = _table(f["palette"])
            lflags = 0x80 | (bits - 1)
        if f.get("interlace"):
            lflags |= 0x40
            idx = _interlace(idx)
        out.append(struct.pack("<BHHHHB", 0x2C, f.get("left", 0), f.get("top", 0),
                               idx.shape[1], idx.shape[0], lflags))
        out.append(lct)
        used = bits or (palette is not None and _table(palette)[0]) or 8
        min_size = max(2, used)
        out.append(bytes([min_size]) + _blocks(_lzw(idx, min_size)))
    out.append(b";")
    return b"".join(out)


def _gifs() -> dict:
    rng = np.random.RandomState(3)
    pal4 = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (250, 250, 10)]
    pal16 = [tuple(int(v) for v in rng.randint(0, 256, 3)) for _ in range(16)]
    pal256 = [tuple(int(v) for v in rng.randint(0, 256, 3)) for _ in range(256)]
    gifs = {
        "static": _gif(7, 5, [{"indices": rng.randint(0, 4, (5, 7))}], pal4),
        "one_pixel": _gif(1, 1, [{"indices": [[2]]}], pal4),
        "odd16": _gif(13, 3, [{"indices": rng.randint(0, 16, (3, 13))}], pal16),
        "big256": _gif(70, 60, [{"indices": rng.randint(0, 256, (60, 70))}], pal256),
        "interlaced": _gif(11, 19, [{"indices": rng.randint(0, 16, (19, 11)),
                                     "interlace": True}], pal16),
        "local_palettes": _gif(6, 4, [
            {"indices": rng.randint(0, 4, (4, 6)), "palette": pal4},
            {"indices": rng.randint(0, 16, (4, 6)), "palette": pal16}]),
        "anim_offsets": _gif(8, 6, [
            {"indices": rng.randint(0, 4, (6, 8))},
            {"indices": [[0, 1, 3], [3, 3, 2], [1, 3, 0]], "left": 2, "top": 1,
             "transparent": 3, "disposal": 2},
            {"indices": rng.randint(0, 4, (3, 3)), "left": 5, "top": 3, "disposal": 1,
             "palette": pal16[:8]},
            {"indices": rng.randint(0, 4, (2, 8)), "left": 0, "top": 4, "disposal": 3,
             "transparent": 0}], pal4),
        "first_offset": _gif(8, 6, [
            {"indices": rng.randint(0, 4, (3, 4)), "left": 1, "top": 2},
            {"indices": rng.randint(0, 4, (2, 5)), "left": 3, "top": 1}], pal4),
        "first_transparent": _gif(5, 4, [{"indices": rng.randint(0, 4, (4, 5)),
                                          "transparent": 1}], pal4),
        "index_past_palette": _gif(3, 2, [{"indices": [[0, 1, 2], [3, 1, 0]]}],
                                   pal4[:2]),
        "no_palette": _gif(3, 2, [{"indices": [[0, 1, 0], [1, 1, 0]]}]),
    }
    from PIL import Image
    frames = [Image.fromarray(rng.randint(0, 256, (18, 20, 3)).astype(np.uint8))
              .quantize(8) for _ in range(1)]
    base = rng.randint(0, 256, (17, 21, 3)).astype(np.uint8)
    anim = []
    for k in range(3):
        img = base.copy()
        img[3 + k:7 + k, 2 + 2 * k:9 + 2 * k] = (40 * k, 200, 90)
        anim.append(Image.fromarray(img))
    buf = io.BytesIO()
    frames[0].save(buf, "GIF")  # >= 16 pixels a side: Pillow interlaces it
    gifs["pillow_static"] = buf.getvalue()
    buf = io.BytesIO()
    anim[0].save(buf, "GIF", save_all=True, append_images=anim[1:], duration=50, loop=0)
    gifs["pillow_anim"] = buf.getvalue()
    good = gifs["static"]
    gifs["truncated"] = good[:len(good) - 9]
    gifs["header_only"] = good[:13]
    gifs["corrupt_lzw"] = good[:len(good) - 12] + b"\xff" * 9 + good[-3:]
    return gifs


# ------------------------------------------------------------------------- BMP writing

def _bmp(pixels: np.ndarray, top_down=False, bpp=None) -> bytes:
    """An uncompressed BMP (BITMAPINFOHEADER) of uint8 (h, w, c): c 3 is written BGR,
    4 BGRA, 1 as 8-bit values with a grey palette."""
    h, w, c = pixels.shape
    bpp = bpp or 8 * c
    px = pixels[..., [2, 1, 0, 3][:c]] if c >= 3 else pixels
    row = (bpp // 8 * w + 3) // 4 * 4
    rows = px if top_down else px[::-1]
    body = b"".join(bytes(r.ravel()).ljust(row, b"\0") for r in rows)
    pal = bytes(np.repeat(np.arange(256, dtype=np.uint8), 4)) if c == 1 else b""
    offset = 54 + len(pal)
    head = b"BM" + struct.pack("<IHHI", offset + len(body), 0, 0, offset)
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, bpp, 0,
                       len(body), 2835, 2835, 256 if c == 1 else 0, 0)
    return head + info + pal + body


def _bmps() -> dict:
    from PIL import Image
    rng = np.random.RandomState(5)
    rgb = rng.randint(0, 256, (3, 5, 3)).astype(np.uint8)
    rgba = rng.randint(0, 256, (4, 3, 4)).astype(np.uint8)
    bmps = {"rgb24_odd": _bmp(rgb), "rgb24_topdown": _bmp(rgb, top_down=True),
            "rgba32": _bmp(rgba), "rgba32_topdown": _bmp(rgba, top_down=True),
            "one_pixel": _bmp(rgb[:1, :1]), "width7": _bmp(rng.randint(
                0, 256, (2, 7, 3)).astype(np.uint8)),
            "gray8": _bmp(rng.randint(0, 256, (3, 6, 1)).astype(np.uint8))}
    buf = io.BytesIO()
    Image.fromarray(rng.randint(0, 256, (5, 9, 3)).astype(np.uint8)).save(buf, "BMP")
    bmps["pillow_rgb"] = buf.getvalue()
    good = bmps["rgb24_odd"]
    bmps["truncated"] = good[:-5]
    bmps["trailing"] = good + b"\0\0\0\0"
    bmps["short"] = good[:20]
    bmps["bpp16"] = _bmp(rgb[..., :2], bpp=16)
    bmps["zero_width"] = good[:18] + struct.pack("<i", 0) + good[22:]
    return bmps


# ------------------------------------------------------------------------- JPEG

def _jpeg_images() -> dict:
    rng = np.random.RandomState(7)
    y, x = np.mgrid[0:21, 0:13]
    rgb = np.stack([x * 19, y * 12, (x + y) * 7], -1) + rng.randint(0, 40, (21, 13, 3))
    gray = (x * 9 + y * 5)[..., None] + rng.randint(0, 30, (21, 13, 1))
    return {"rgb": np.clip(rgb, 0, 255).astype(np.uint8),
            "gray": np.clip(gray, 0, 255).astype(np.uint8)}


ENCODINGS = {
    "default": {}, "q50": {"quality": 50}, "q0": {"quality": 0}, "q100": {"quality": 100},
    "progressive": {"progressive": True}, "optimize": {"optimize_size": True},
    "444": {"chroma_downsampling": False}, "rgb": {"format": "rgb"},
    "grayscale": {"format": "grayscale"},
    "cm": {"density_unit": "cm", "x_density": 72, "y_density": 96},
    "xmp": {"xmp_metadata": "<x:xmpmeta>onegraph</x:xmpmeta>"},
}

CROPS = {"inner": [1, 2, 5, 4], "full": [0, 0, 21, 13], "corner": [20, 12, 1, 1],
         "past_bottom": [17, 0, 5, 3], "zero_height": [0, 0, 0, 3],
         "negative": [-1, 0, 3, 3]}


def _run(sess, tf, arrays, key, build):
    """Record TF's value of build() under out/<key>, or its error class under err/<key>
    (raised while building or running)."""
    try:
        arrays["out/" + key] = np.asarray(sess.run(build()))
    except (tf.errors.OpError, ValueError, TypeError) as e:
        arrays["err/" + key] = np.asarray(type(e).__name__)


def main() -> int:
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    arrays = {}
    with tf.Session() as sess:
        for case, data in _gifs().items():
            arrays[f"gif/{case}"] = np.frombuffer(data, np.uint8)
            c = tf.constant(data)
            _run(sess, tf, arrays, f"gif/{case}/decode_gif", lambda: tf.io.decode_gif(c))
            _run(sess, tf, arrays, f"gif/{case}/image",
                 lambda: tf.io.decode_image(c, expand_animations=False))
            _run(sess, tf, arrays, f"gif/{case}/image_anim", lambda: tf.io.decode_image(c))
            _run(sess, tf, arrays, f"gif/{case}/image_float",
                 lambda: tf.io.decode_image(c, dtype=tf.float32))
            _run(sess, tf, arrays, f"gif/{case}/image_c4",
                 lambda: tf.io.decode_image(c, channels=4))
        for case, data in _bmps().items():
            arrays[f"bmp/{case}"] = np.frombuffer(data, np.uint8)
            c = tf.constant(data)
            for ch in (0, 1, 3, 4):
                _run(sess, tf, arrays, f"bmp/{case}/c{ch}",
                     lambda: tf.io.decode_bmp(c, channels=ch))
            _run(sess, tf, arrays, f"bmp/{case}/image", lambda: tf.io.decode_image(c))
        images = _jpeg_images()
        png = sess.run(tf.image.encode_png(tf.constant(images["rgb"])))
        jpg = sess.run(tf.image.encode_jpeg(tf.constant(images["rgb"])))
        others = {"png": png, "jpeg": jpg, "bmp": arrays["bmp/rgb24_odd"].tobytes(),
                  "gif": arrays["gif/static"].tobytes(), "empty": b"", "junk": b"GIX89a"}
        for kind, data in others.items():
            _run(sess, tf, arrays, f"cross/{kind}/decode_gif",
                 lambda: tf.io.decode_gif(data))
            _run(sess, tf, arrays, f"cross/{kind}/decode_bmp",
                 lambda: tf.io.decode_bmp(data))
        for name, image in images.items():
            arrays[f"image/{name}"] = image
            for enc, kw in ENCODINGS.items():
                key = f"jpeg/{name}_{enc}"
                try:
                    data = sess.run(tf.image.encode_jpeg(tf.constant(image), **kw))
                except (tf.errors.OpError, ValueError, TypeError) as e:
                    arrays["err/" + key] = np.asarray(type(e).__name__)
                    continue
                arrays[key] = np.frombuffer(data, np.uint8)
                arrays[f"out/{key}/decoded"] = sess.run(tf.image.decode_jpeg(
                    data, dct_method="INTEGER_ACCURATE"))
            data = arrays[f"jpeg/{name}_default"].tobytes()
            for crop, window in CROPS.items():
                for ch in (0, 1, 3):
                    _run(sess, tf, arrays, f"crop/{name}/{crop}/c{ch}",
                         lambda: tf.image.decode_and_crop_jpeg(
                             data, window, channels=ch, dct_method="INTEGER_ACCURATE"))
            _run(sess, tf, arrays, f"crop/{name}/ratio2/c0",
                 lambda: tf.image.decode_and_crop_jpeg(
                     data, [1, 1, 4, 3], ratio=2, dct_method="INTEGER_ACCURATE"))
            for q in (10, 60, 95):
                _run(sess, tf, arrays, f"adjust/{name}/q{q}/uint8",
                     lambda: tf.image.adjust_jpeg_quality(
                         tf.constant(image), q, dct_method="INTEGER_ACCURATE"))
                _run(sess, tf, arrays, f"adjust/{name}/q{q}/float",
                     lambda: tf.image.adjust_jpeg_quality(
                         tf.constant(image.astype(np.float32) / 255), q,
                         dct_method="INTEGER_ACCURATE"))
        bad = {"two_channels": np.zeros((4, 4, 2), np.uint8),
               "flat": np.zeros((4, 4), np.uint8)}
        for name, image in bad.items():
            _run(sess, tf, arrays, f"encode_bad/{name}/default",
                 lambda: tf.image.encode_jpeg(tf.constant(image)))
        _run(sess, tf, arrays, "encode_bad/gray_as_rgb/default",
             lambda: tf.image.encode_jpeg(tf.constant(images["gray"]), format="rgb"))
        _run(sess, tf, arrays, "encode_bad/quality101/default",
             lambda: tf.image.encode_jpeg(tf.constant(images["rgb"]), quality=101))
        _run(sess, tf, arrays, "encode_bad/adjust101/default",
             lambda: tf.image.adjust_jpeg_quality(tf.constant(images["rgb"]), 101))
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {os.path.normpath(OUT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
