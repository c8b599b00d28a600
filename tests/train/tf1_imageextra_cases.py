"""More og.image functions (tf.image's codecs, area resize, boxes, NMS variants,
MS-SSIM) checked against TensorFlow's tf.compat.v1.image: shared by
tests/train/test_image_extra.py and tools/record_tf1_reference.py imageextra (which
needs tensorflow; the test does not).

A case is (name, function path under tf.compat.v1 / og, positional arguments, keyword
arguments, inputs to differentiate); "@key" stands for make_inputs()[key] (see
tf1_nn_cases.py). Encoded images enter as Python bytes arguments (TF takes them as
string constants, og too); the same bytes are also stored as uint8 arrays
("png_<name>", "jpeg_<name>") so the reference file holds what was decoded.

The PNGs to decode are written here by `write_png`, a PNG writer independent of
onegraph's: every colour type and bit depth, each row's filter chosen in turn (so all
five are used), palettes with and without tRNS, grey and RGB tRNS keys, Adam7
interlacing, image data split over several IDAT chunks, ancillary chunks to skip.
"""

import base64
import struct
import zlib

import numpy as np

# ---------------------------------------------------------------------- PNG writer

ADAM7 = ((0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2),
         (0, 1, 2, 2), (1, 0, 2, 1))


def _chunk(tag: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + tag + data
            + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))


def _row_bytes(row: np.ndarray, depth: int) -> bytes:
    """One scanline's samples packed at `depth` bits, big-endian."""
    if depth == 16:
        return np.asarray(row, ">u2").tobytes()
    if depth == 8:
        return np.asarray(row, np.uint8).tobytes()
    bits = np.unpackbits(np.asarray(row, np.uint8)[:, None], axis=1)[:, 8 - depth:]
    return np.packbits(bits.reshape(-1)).tobytes()


def _filtered(row: bytes, prev, bpp: int, ftype: int) -> bytes:
    x = np.frombuffer(row, np.uint8).astype(np.int64)
    up = np.zeros_like(x) if prev is None else np.frombuffer(prev, np.uint8).astype(np.int64)
    left = np.concatenate([np.zeros(bpp, np.int64), x])[:len(x)]
    ul = np.concatenate([np.zeros(bpp, np.int64), up])[:len(x)]
    if ftype == 0:
        pred = np.zeros_like(x)
    elif ftype == 1:
        pred = left
    elif ftype == 2:
        pred = up
    elif ftype == 3:
        pred = (left + up) // 2
    else:
        p = left + up - ul
        pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
        pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, ul))
    return bytes([ftype]) + ((x - pred) & 255).astype(np.uint8).tobytes()


def write_png(samples, color_type: int, depth: int, palette=None, trns=None,
              interlace=False, idat_parts=1, level=6, extra=b"") -> bytes:
    """A PNG of samples (h, w, samples per pixel) as stored (palette indices for
    colour type 3), row filters 0, 1, 2, 3, 4 in turn."""
    samples = np.asarray(samples)
    h, w, per_pixel = samples.shape
    bpp = max(1, per_pixel * depth // 8)
    raw, k = b"", 0
    for y0, x0, dy, dx in (ADAM7 if interlace else ((0, 0, 1, 1),)):
        sub = samples[y0::dy, x0::dx]
        if sub.size == 0:
            continue
        prev = None
        for row in sub.reshape(sub.shape[0], -1):
            line = _row_bytes(row, depth)
            raw += _filtered(line, prev, bpp, k % 5)
            prev, k = line, k + 1
    data = zlib.compress(raw, level)
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth,
                                                                color_type, 0, 0,
                                                                int(interlace)))
    out += extra
    if palette is not None:
        out += _chunk(b"PLTE", np.asarray(palette, np.uint8).tobytes())
    if trns is not None:
        out += _chunk(b"tRNS", trns)
    step = -(-len(data) // idat_parts)
    for i in range(0, len(data), step):
        out += _chunk(b"IDAT", data[i:i + step])
    return out + _chunk(b"IEND", b"")


def _pngs() -> dict:
    """name -> PNG bytes, of every colour type and bit depth (fixed seed)."""
    rng = np.random.RandomState(20261203)
    out = {}
    for depth in (1, 2, 4, 8, 16):
        top = (1 << depth) - 1
        out[f"gray{depth}"] = write_png(rng.randint(0, top + 1, (7, 13, 1)), 0, depth)
        out[f"gray{depth}_interlaced"] = write_png(rng.randint(0, top + 1, (11, 10, 1)), 0,
                                                   depth, interlace=True)
        g = rng.randint(0, top + 1, (5, 9, 1))
        g[0, :3] = top // 3
        out[f"gray{depth}_trns"] = write_png(g, 0, depth, trns=struct.pack(">H", top // 3))
    for depth in (1, 2, 4, 8):
        n = min(1 << depth, 7)
        palette = rng.randint(0, 256, (n, 3))
        idx = rng.randint(0, n, (6, 11, 1))
        out[f"palette{depth}"] = write_png(idx, 3, depth, palette=palette)
        out[f"palette{depth}_trns"] = write_png(
            idx, 3, depth, palette=palette, trns=bytes(rng.randint(0, 256, max(1, n - 2)).tolist()))
    out["palette8_interlaced_trns"] = write_png(
        rng.randint(0, 7, (9, 9, 1)), 3, 8, palette=rng.randint(0, 256, (7, 3)),
        trns=bytes([0, 90, 255]), interlace=True)
    for depth in (8, 16):
        top = (1 << depth) - 1
        out[f"gray_alpha{depth}"] = write_png(rng.randint(0, top + 1, (6, 5, 2)), 4, depth)
        out[f"rgb{depth}"] = write_png(rng.randint(0, top + 1, (8, 7, 3)), 2, depth,
                                       idat_parts=3, extra=_chunk(b"tEXt", b"k\x00v"))
        rgb = rng.randint(0, top + 1, (5, 6, 3))
        rgb[1, 2:4] = rgb[0, 0] = [top // 2, 7, top]
        out[f"rgb{depth}_trns"] = write_png(rgb, 2, depth,
                                            trns=struct.pack(">HHH", top // 2, 7, top))
        out[f"rgb{depth}_interlaced"] = write_png(rng.randint(0, top + 1, (10, 12, 3)), 2,
                                                  depth, interlace=True)
        out[f"rgba{depth}"] = write_png(rng.randint(0, top + 1, (4, 9, 4)), 6, depth)
        out[f"rgba{depth}_interlaced"] = write_png(rng.randint(0, top + 1, (3, 2, 4)), 6,
                                                   depth, interlace=True)
    out["palette8_long_trns"] = write_png(  # tRNS longer than PLTE: libpng ignores it
        rng.randint(0, 3, (4, 5, 1)), 3, 8, palette=rng.randint(0, 256, (3, 3)),
        trns=bytes([10, 20, 30, 40]))
    out["gray8_bad_trns"] = write_png(  # a 1-byte grey tRNS: invalid, ignored
        rng.randint(0, 256, (3, 4, 1)), 0, 8, trns=b"\x05")
    grays = rng.randint(0, 256, (6, 7, 1))   # grey RGB: libpng keeps it exactly
    out["rgb8_grey_pixels"] = write_png(np.repeat(grays, 3, axis=2), 2, 8)
    out["one_pixel"] = write_png(np.asarray([[[200, 10, 30]]]), 2, 8)
    return out


PNGS = _pngs()

JPEGS = {  # tiny JPEGs (Pillow, quality 50): 5 x 12 RGB and 9 x 4 grey
    "rgb": base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxO"
    "QERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2Nj"
    "Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAFAAwDASIAAhEBAxEB/8QAHwAAAQUBAQEB"
    "AQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKB"
    "kaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1"
    "dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl"
    "5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcF"
    "BAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5"
    "OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0"
    "tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwBQ7f2dbTg4"
    "aWQk8nj5WP48JjnPWia/SwmaBbcOBg5ZvYUUV0UYRqRbkur/ADM5RUq0oPZX/M//2Q=="),
    "gray": base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxO"
    "QERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/wAALCAAJAAQBAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAEC"
    "AwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAk"
    "M2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJ"
    "ipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3"
    "+Pn6/9oACAEBAAA/AK9tDZwIYTaS3SocLJ9kjlzkAkZ3epPHb61q3H/ITvf99P8A0VHX/9k="),
}


def _bmp(pixels: np.ndarray, top_down=False) -> bytes:
    """An uncompressed 24-bit (3 channels) or 32-bit BMP of RGB(A) pixels."""
    h, w, c = pixels.shape
    row = (c * w + 3) // 4 * 4
    body = b""
    for r in (pixels if top_down else pixels[::-1]):
        line = r[:, [2, 1, 0, 3][:c]].astype(np.uint8).tobytes()
        body += line + b"\x00" * (row - len(line))
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, 8 * c, 0,
                       len(body), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 54 + len(body), 0, 0, 54) + info + body


def make_inputs() -> dict:
    """The named input arrays (fixed seed); the encoded files as uint8 arrays."""
    rng = np.random.RandomState(20261205)
    boxes = rng.rand(20, 4).astype(np.float32)
    boxes[:, 2:] = boxes[:, :2] + rng.rand(20, 2).astype(np.float32) * 0.5
    boxes[4] = boxes[4, [2, 3, 0, 1]]            # corners the other way round
    boxes[8] = boxes[7] + 0.02                   # near-duplicates
    boxes[9] = boxes[7] - 0.01
    scores = rng.permutation(20).astype(np.float32) / 20 + 0.01  # no ties
    batch_boxes = rng.rand(2, 12, 1, 4).astype(np.float32) * 1.1 - 0.05
    batch_boxes[..., 2:] = batch_boxes[..., :2] + 0.35
    class_boxes = rng.rand(2, 12, 3, 4).astype(np.float32)
    class_boxes[..., 2:] = class_boxes[..., :2] + 0.4
    out = {
        "img": rng.rand(2, 9, 13, 3).astype(np.float32),
        "img3": rng.rand(7, 5, 2).astype(np.float32),
        "u8img": rng.randint(0, 256, (1, 6, 10, 4)).astype(np.uint8),
        "gray_img": rng.rand(2, 8, 8, 1).astype(np.float32),
        "rgba_img": rng.rand(2, 10, 9, 4).astype(np.float32),
        "draw_boxes": np.asarray([[[0.1, 0.1, 0.6, 0.8], [0.0, 0.0, 1.0, 1.0],
                                   [-0.2, 0.3, 0.5, 1.4], [0.5, 0.5, 0.4, 0.9],
                                   [1.2, 0.1, 1.5, 0.2], [0.3, 0.3, 0.3, 0.3],
                                   [0.25, 0.7, 0.9, 0.75], [0.6, -0.5, 0.95, 0.2],
                                   [0.05, 0.45, 0.15, 0.55], [0.7, 0.1, 0.9, 0.4],
                                   [0.2, 0.2, 0.8, 0.3], [0.4, 0.0, 0.6, 1.0]]] * 2,
                                 np.float32),
        "colors": rng.rand(3, 4).astype(np.float32),
        # all pixels > 0, so a zero-noise glimpse marks where the window left the image
        "glimpse_img": (rng.rand(3, 9, 11, 2) + 0.5).astype(np.float32),
        "glimpse_in": np.asarray([[0.0, 0.0], [0.3, -0.4], [-0.5, 0.45]], np.float32),
        "glimpse_in_px": np.asarray([[2.0, 3.0], [2.0, 1.5], [5.9, 6.2]], np.float32),
        "glimpse_in_centered_px": np.asarray([[0.5, -1.7], [2.2, 2.0], [-2.0, -3.0]],
                                             np.float32),
        "glimpse_in_unit": np.asarray([[0.2, 0.25], [0.5, 0.5], [0.6, 0.3]], np.float32),
        "glimpse_out": np.asarray([[0.95, 0.9], [-0.9, 0.1], [3.0, -3.0]], np.float32),
        "boxes": boxes,
        "scores": scores,
        "overlaps": rng.rand(20, 20).astype(np.float32),
        "batch_boxes": batch_boxes,
        "class_boxes": class_boxes,
        "batch_scores": (rng.permutation(2 * 12 * 3).reshape(2, 12, 3) / 72.0
                         ).astype(np.float32),
        "ms_a": rng.rand(1, 29, 30, 3).astype(np.float32),
        "ms_u8": rng.randint(0, 256, (24, 22, 1)).astype(np.uint8),
        "enc_u8_1": rng.randint(0, 256, (7, 9, 1)).astype(np.uint8),
        "enc_u8_2": rng.randint(0, 256, (5, 4, 2)).astype(np.uint8),
        "enc_u8_3": rng.randint(0, 256, (9, 11, 3)).astype(np.uint8),
        "enc_u8_4": rng.randint(0, 256, (6, 8, 4)).astype(np.uint8),
        "enc_u16_1": rng.randint(0, 65536, (5, 6, 1)).astype(np.uint16),
        "enc_u16_2": rng.randint(0, 65536, (3, 3, 2)).astype(np.uint16),
        "enc_u16_3": rng.randint(0, 65536, (4, 7, 3)).astype(np.uint16),
        "enc_u16_4": rng.randint(0, 65536, (6, 5, 4)).astype(np.uint16),
        # smooth, compressible images (deflate matches, not stored blocks; enc_wide over
        # 16 KiB of rows: a full window) and a random one (2 IDAT chunks of stored data)
        "enc_smooth": (np.add.outer(np.arange(40), np.arange(50))[..., None]
                       * [1, 2, 3] % 256).astype(np.uint8),
        "enc_steps": np.repeat(rng.randint(0, 4, (30, 6, 4)) * 60, 8, axis=1
                               ).astype(np.uint8),
        "enc_big": rng.randint(0, 256, (50, 60, 3)).astype(np.uint8),
        "enc_wide": (np.add.outer(np.arange(100), np.arange(70))[..., None] * [1, 3, 5]
                     // 7 % 256).astype(np.uint8),
        "enc_smooth16": (np.add.outer(np.arange(20), np.arange(30))[..., None] * 997
                         ).astype(np.uint16),
        "enc_row": rng.randint(0, 256, (1, 20, 3)).astype(np.uint8),
        "enc_col": rng.randint(0, 256, (20, 1, 3)).astype(np.uint8),
        "enc_dot": np.asarray([[[9, 200]]], np.uint8),
    }
    noise = rng.randn(1, 29, 30, 3).astype(np.float32) * 0.2
    out["ms_b"] = np.clip(out["ms_a"] + noise, 0, 1).astype(np.float32)
    out["ms_u8b"] = np.clip(out["ms_u8"] + rng.randint(-40, 41, (24, 22, 1)), 0, 255
                            ).astype(np.uint8)
    smooth = np.sin(np.add.outer(np.arange(176) / 9.0, np.arange(180) / 13.0))
    out["ms_big"] = np.rint(128 + 100 * smooth).astype(np.uint8).reshape(1, 176, 180, 1)
    out["ms_big_b"] = np.clip(out["ms_big"] + rng.randint(-25, 26, (1, 176, 180, 1)), 0,
                              255).astype(np.uint8)
    out.update({f"png_{k}": np.frombuffer(v, np.uint8).copy() for k, v in PNGS.items()})
    out.update({f"jpeg_{k}": np.frombuffer(v, np.uint8).copy() for k, v in JPEGS.items()})
    return out


_ENCODE = ["enc_u8_1", "enc_u8_2", "enc_u8_3", "enc_u8_4", "enc_u16_1", "enc_u16_2",
           "enc_u16_3", "enc_u16_4", "enc_smooth", "enc_steps", "enc_big", "enc_wide",
           "enc_smooth16",
           "enc_row", "enc_col", "enc_dot"]

BMPS = {"bmp24": _bmp(np.random.RandomState(5).randint(0, 256, (5, 7, 3))),
        "bmp32_top_down": _bmp(np.random.RandomState(6).randint(0, 256, (4, 3, 4)),
                               top_down=True)}

CASES = (
    # PNG decoding: every file, every channels value TF takes, both dtypes
    [(f"decode_{k}_c{c}_{d}", "image.decode_png", [v], {"channels": c, "dtype": d}, [])
     for k, v in PNGS.items() for c in (0, 1, 3, 4) for d in ("uint8", "uint16")]
    # PNG encoding: TF's bytes (compared byte for byte) at several compression levels
    + [(f"encode_{k}_l{lvl}", "image.encode_png", [f"@{k}"], {"compression": lvl}, [])
       for k in _ENCODE for lvl in (-1, 0, 1, 9)]
    + [(f"decode_image_{k}_{d}", "image.decode_image", [PNGS[k]], {"dtype": d}, [])
       for k in ("rgb8", "rgba16", "palette4_trns", "gray2")
       for d in ("uint8", "uint16", "float32")]
    + [("decode_image_gray_c3", "image.decode_image", [PNGS["gray8"]], {"channels": 3}, []),
       ("decode_image_bmp24", "image.decode_image", [BMPS["bmp24"]], {}, []),
       ("decode_image_bmp24_c4", "image.decode_image", [BMPS["bmp24"]], {"channels": 4}, []),
       ("decode_image_bmp32", "image.decode_image", [BMPS["bmp32_top_down"]], {}, []),
       ("decode_image_bmp32_c3", "image.decode_image", [BMPS["bmp32_top_down"]],
        {"channels": 3}, []),
       ("is_jpeg_png", "image.is_jpeg", [PNGS["rgb8"]], {}, []),
       ("is_jpeg_jpeg", "image.is_jpeg", [JPEGS["rgb"]], {}, []),
       ("is_jpeg_empty", "image.is_jpeg", [b""], {}, []),
       ("jpeg_shape_rgb", "image.extract_jpeg_shape", [JPEGS["rgb"]], {}, []),
       ("jpeg_shape_gray64", "image.extract_jpeg_shape", [JPEGS["gray"]],
        {"output_type": "int64"}, [])]
    # area resizes: down, up, mixed, whole and fractional factors, align_corners
    + [(f"resize_area_{h}x{w}{'_ac' if ac else ''}", "image.resize_area", ["@img", [h, w]],
        {"align_corners": ac}, [])
       for h, w in ((3, 4), (4, 5), (9, 13), (18, 26), (5, 20), (1, 1), (7, 2))
       for ac in (False, True)]
    + [("resize_area_u8", "image.resize_area", ["@u8img", [4, 3]], {}, []),
       ("resize_images_area", "image.resize_images", ["@img", [4, 6]], {"method": 3}, []),
       ("resize_images_area_ac", "image.resize_images", ["@img", [5, 6]],
        {"method": 3, "align_corners": True}, []),
       ("resize_images_area_aspect", "image.resize_images", ["@img", [4, 10]],
        {"method": 3, "preserve_aspect_ratio": True}, [])]
    + [(f"resize_with_pad_{h}x{w}_m{m}", "image.resize_image_with_pad", ["@img", h, w],
        {"method": m}, ["@img"] if m == 0 else [])
       for h, w in ((12, 12), (5, 20), (20, 7), (9, 13)) for m in (0, 1, 2)]
    + [("resize_with_pad_3d", "image.resize_image_with_pad", ["@img3", 10, 4], {}, ["@img3"]),
       ("resize_with_pad_area", "image.resize_image_with_pad", ["@img", 6, 6],
        {"method": 3}, [])]
    # boxes drawn: TF's colour table on 3 and 4 channels, grey (white), given colours
    + [("draw_rgb", "image.draw_bounding_boxes", ["@img", "@draw_boxes"], {}, []),
       ("draw_rgba", "image.draw_bounding_boxes", ["@rgba_img", "@draw_boxes"], {}, []),
       ("draw_gray", "image.draw_bounding_boxes", ["@gray_img", "@draw_boxes"], {}, []),
       ("draw_colors", "image.draw_bounding_boxes", ["@rgba_img", "@draw_boxes"],
        {"colors": "@colors"}, [])]
    # glimpses: inside the image (exact), and leaving it (noise: see the test)
    + [("glimpse_in", "image.extract_glimpse", ["@glimpse_img", [3, 4], "@glimpse_in"], {},
        []),
       ("glimpse_in_px", "image.extract_glimpse", ["@glimpse_img", [4, 3], "@glimpse_in_px"],
        {"centered": False, "normalized": False}, []),
       ("glimpse_in_centered_px", "image.extract_glimpse",
        ["@glimpse_img", [3, 3], "@glimpse_in_centered_px"], {"normalized": False}, []),
       ("glimpse_in_unit", "image.extract_glimpse", ["@glimpse_img", [5, 4],
                                                     "@glimpse_in_unit"],
        {"centered": False}, []),
       ("glimpse_partial_uniform", "image.extract_glimpse", ["@glimpse_img", [4, 5],
                                                             "@glimpse_out"], {}, []),
       ("glimpse_partial_gaussian", "image.extract_glimpse", ["@glimpse_img", [4, 5],
                                                              "@glimpse_out"],
        {"uniform_noise": False}, [])]
    + [("extract_patches", "image.extract_patches", ["@img"],
        {"sizes": [1, 3, 2, 1], "strides": [1, 2, 3, 1], "rates": [1, 1, 2, 1],
         "padding": "SAME"}, ["@img"]),
       ("extract_image_patches", "image.extract_image_patches", ["@img", [1, 2, 2, 1],
                                                                [1, 1, 2, 1], [1, 1, 1, 1],
                                                                "VALID"], {}, [])]
    # NMS variants
    + [(f"nms_scores_s{s}_t{t}", "image.non_max_suppression_with_scores",
        ["@boxes", "@scores", n], {"iou_threshold": 0.3, "score_threshold": t,
                                   "soft_nms_sigma": s}, [])
       for s, t, n in ((0.0, float("-inf"), 10), (0.5, float("-inf"), 20), (0.5, 0.3, 20),
                       (0.1, 0.05, 6), (0.0, 0.4, 20))]
    + [(f"nms_padded_{p}_{n}", "image.non_max_suppression_padded", ["@boxes", "@scores", n],
        {"iou_threshold": 0.4, "pad_to_max_output_size": p, "score_threshold": 0.1}, [])
       for p in (False, True) for n in (5, 20)]
    + [(f"nms_overlaps_{t}", "image.non_max_suppression_overlaps",
        ["@overlaps", "@scores", 8], {"overlap_threshold": t, "score_threshold": 0.2}, [])
       for t in (0.3, 0.7)]
    + [("combined_shared", "image.combined_non_max_suppression",
        ["@batch_boxes", "@batch_scores", 4, 7], {"iou_threshold": 0.3}, []),
       ("combined_per_class", "image.combined_non_max_suppression",
        ["@class_boxes", "@batch_scores", 3, 20],
        {"iou_threshold": 0.4, "score_threshold": 0.2, "clip_boxes": False}, []),
       ("combined_pad_per_class", "image.combined_non_max_suppression",
        ["@class_boxes", "@batch_scores", 2, 20],
        {"iou_threshold": 0.5, "pad_per_class": True}, [])]
    # MS-SSIM: 3 scales (odd sizes padded), uint8 images, TF's 5 default weights
    + [("ssim_multiscale_3", "image.ssim_multiscale", ["@ms_a", "@ms_b", 1.0],
        {"power_factors": (0.2, 0.3, 0.5), "filter_size": 7}, ["@ms_a", "@ms_b"]),
       ("ssim_multiscale_u8", "image.ssim_multiscale", ["@ms_u8", "@ms_u8b", 255],
        {"power_factors": (0.5, 0.5), "filter_size": 5, "filter_sigma": 1.0}, []),
       ("ssim_multiscale_default", "image.ssim_multiscale", ["@ms_big", "@ms_big_b", 255],
        {}, [])]
)
