"""Operators: TF's image codecs and box ops that ONNX lacks (onegraph domain).

DecodePng / EncodePng are a PNG codec written with zlib and struct: every colour type
and bit depth (1/2/4/8/16), the five row filters, palettes, tRNS transparency and
Adam7 interlacing; the conversions to the requested channels and dtype follow what
TF's libpng setup does (palette and tRNS expanded, RGB to grey by libpng's fixed-point
0.299/0.587 weights, 16 to 8 bits by dropping the low byte, 8 to 16 bits by x 257).
EncodePng writes what TF's libpng writer writes (adaptive filter per row by libpng's
minimum-sum heuristic, Z_FILTERED, libpng's window for small images, IDAT chunks of
8192 bytes), so for the same zlib its bytes are TF's. DecodeImage sniffs the format
(PNG, BMP, and JPEG through DecodeJpeg's decoder; GIF is refused, naming the
ImageDecoder op). DecodeJpeg decodes with Pillow's libjpeg when Pillow is installed
(the image extra; UnsupportedOpError when run without it), converting and scaling
inside libjpeg as TF does. ExtractJpegShape reads a JPEG's frame header, no decoder
needed.

Strings are onegraph's: Python str standing for bytes by UTF-8 with surrogateescape
(see ops/strings_tf.py). A corrupt or truncated file is an ExecutionError naming what
is wrong, never a zlib or struct error; so is a PNG whose header declares more than
256 MiB of decoded data (_MAX_DECODED_BYTES), refused before anything is inflated.
Kernels whose result size comes from a value (a resize or glimpse size, a padded NMS
limit) refuse results over 2 GiB (_MAX_RESULT_BYTES) rather than allocate them.

ResizeArea, DrawBoundingBoxes, ExtractGlimpse, the NMS variants (soft-NMS with
scores, padded, by overlaps, combined per class) and SampleDistortedBoundingBox follow
TF's CPU kernels.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError, UnsupportedOpError
from .common import MAX_RESULT_BYTES, result_bytes
from .random import _rng  # the seeded per-node stream, as the random ops'
from .registry import KernelContext, TensorInfo, define

_OBJ = np.dtype(object)


def _as_bytes(value, op: str) -> bytes:
    """The bytes of a scalar string tensor (str by surrogateescape, or bytes)."""
    v = np.asarray(value, dtype=object)
    if v.ndim != 0:
        raise ShapeError(f"{op}: contents must be a scalar string, got shape {list(v.shape)}")
    s = v.item()
    if isinstance(s, bytes):
        return s
    if not isinstance(s, str):
        raise ShapeError(f"{op}: contents must be a string, got {type(s).__name__}")
    return s.encode("utf-8", "surrogateescape")


def _as_string(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=_OBJ)
    out[()] = data.decode("utf-8", "surrogateescape")
    return out


def _numbers(value, what: str, op: str) -> np.ndarray:
    """value as an array of ints or floats (a string or bool input is a ShapeError
    naming `what`, not numpy's conversion error)."""
    v = np.asarray(value)
    if v.dtype.kind not in "iuf":
        raise ShapeError(f"{op}: {what} must be numbers, got {v.dtype}")
    return v


def _scalar_input(value, what: str, op: str, integer: bool = False):
    """A scalar input (or one of a single element) as a Python int or float: any other
    size, or a float where an integer belongs, is a ShapeError naming `what`."""
    v = np.asarray(value)
    if v.size != 1:
        raise ShapeError(f"{op}: {what} must be a scalar, got shape {list(v.shape)}")
    if v.dtype.kind not in ("iu" if integer else "iuf"):
        raise ShapeError(f"{op}: {what} must be {'an integer' if integer else 'a number'}, "
                         f"got {v.dtype}")
    item = v.reshape(-1)[0]
    return int(item) if integer else float(item)


# ---------------------------------------------------------------------------------------
# PNG decoding

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
_SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
# Adam7 passes as (first row, first column, row step, column step)
_ADAM7 = ((0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2),
          (0, 1, 2, 2), (1, 0, 2, 1))
# libpng's png_set_rgb_to_gray(.., 0.299, 0.587) as 15-bit fixed point (truncated)
_GRAY = np.asarray([29900 * 32768 // 100000, 58700 * 32768 // 100000], np.int64)
_GRAY = np.append(_GRAY, 32768 - _GRAY.sum())
_MAX_PIXELS = 1 << 29  # refuse BMP headers that claim more (the bytes must be there)
# A PNG's pixels are deflated, so a small file can declare a huge image (a
# decompression bomb: 260 KB of zlib stream inflate to 256 MiB of zero rows). Its
# declared size is checked against this many bytes of decoded data before anything is
# inflated or allocated: the larger of the inflated scanlines, the samples at a byte
# (two for 16 bits) each, and the result in the channels and dtype asked for.
_MAX_DECODED_BYTES = 1 << 28
# A kernel whose result size comes from a value (a resize or glimpse size, an NMS
# limit) rather than from its inputs' sizes refuses results larger than this, naming
# the size, instead of attempting the allocation (which either fails with a bare
# MemoryError or, overcommitted, succeeds and exhausts the machine's memory later).
_MAX_RESULT_BYTES = MAX_RESULT_BYTES
_COLOR_NAMES = {0: "grey", 2: "RGB", 3: "palette", 4: "grey + alpha", 6: "RGBA"}


def _check_result_size(op: str, what: str, shape, itemsize: int) -> None:
    """Refuse a result of `shape` whose bytes exceed _MAX_RESULT_BYTES (Python int
    arithmetic: no overflow whatever the dimensions)."""
    size = result_bytes(shape, itemsize)
    if size > _MAX_RESULT_BYTES:
        raise ExecutionError(f"{op}: {what} of shape {[int(d) for d in shape]} would take "
                             f"{size:,} bytes, over the limit of {_MAX_RESULT_BYTES:,} bytes "
                             "for one result of an image kernel")


def _png_chunks(data: bytes, op: str) -> list:
    """[(type, payload)] of a PNG file, every length and CRC checked."""
    if data[:8] != _SIGNATURE:
        raise ExecutionError(f"{op}: not a PNG file (wrong signature "
                             f"{data[:8]!r}, want {_SIGNATURE!r})")
    chunks, pos = [], 8
    while True:
        if pos + 12 > len(data):
            raise ExecutionError(f"{op}: PNG truncated at byte {pos} of {len(data)} "
                                 f"(no IEND chunk)")
        length, tag = struct.unpack(">I4s", data[pos:pos + 8])
        if length > 0x7FFFFFFF or pos + 12 + length > len(data):
            raise ExecutionError(f"{op}: PNG chunk {tag!r} at byte {pos} claims {length} "
                                 f"bytes; the file is truncated ({len(data)} bytes)")
        payload = data[pos + 8:pos + 8 + length]
        crc, = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(tag + payload) & 0xFFFFFFFF != crc:
            raise ExecutionError(f"{op}: PNG chunk {tag!r} at byte {pos} has a bad CRC "
                                 "(the file is corrupt)")
        chunks.append((tag, payload))
        pos += 12 + length
        if tag == b"IEND":
            return chunks


def _png_header(chunks, op: str) -> tuple:
    if not chunks or chunks[0][0] != b"IHDR" or len(chunks[0][1]) != 13:
        raise ExecutionError(f"{op}: PNG does not start with a 13-byte IHDR chunk")
    w, h, depth, ctype, comp, filt, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if ctype not in _DEPTHS or depth not in _DEPTHS[ctype]:
        raise ExecutionError(f"{op}: PNG colour type {ctype} with bit depth {depth} is "
                             "not valid")
    if comp != 0 or filt != 0 or interlace not in (0, 1):
        raise ExecutionError(f"{op}: PNG compression {comp}, filter method {filt} or "
                             f"interlace {interlace} is not valid")
    if w == 0 or h == 0 or w > 0x7FFFFFFF or h > 0x7FFFFFFF:
        raise ExecutionError(f"{op}: PNG size {w} x {h} is not valid (the PNG format "
                             "allows 1 to 2^31 - 1 pixels per side)")
    return w, h, depth, ctype, interlace


def _passes(w: int, h: int, interlace: int) -> list:
    """(first row, first column, row step, column step, rows, columns) of each
    non-empty pass."""
    grid = _ADAM7 if interlace else ((0, 0, 1, 1),)
    out = []
    for y0, x0, dy, dx in grid:
        rows, cols = (h - y0 + dy - 1) // dy, (w - x0 + dx - 1) // dx
        if rows > 0 and cols > 0:
            out.append((y0, x0, dy, dx, rows, cols))
    return out


def _unfilter(raw: memoryview, rows: int, row_bytes: int, bpp: int, op: str) -> np.ndarray:
    """The (rows, row_bytes) uint8 scanlines of one pass, its five filters undone.

    None, Sub and Up rows are whole-row numpy operations. Average and Paeth make each
    byte depend on the one bpp to its left, which a per-byte Python loop undoes at
    about 3 MB/s: a small deflated file of Paeth rows would take minutes. When a pass
    holds such rows and is at least _WAVEFRONT_MIN pixels each way, the whole pass is
    undone by anti-diagonals instead (see _unfilter_wavefront)."""
    table = np.frombuffer(raw, np.uint8, count=rows * (row_bytes + 1))
    table = table.reshape(rows, row_bytes + 1)
    ftypes, lines = table[:, 0], table[:, 1:]
    unknown = np.flatnonzero(ftypes > 4)
    if unknown.size:
        r = int(unknown[0])
        raise ExecutionError(f"{op}: PNG row {r} has unknown filter type {int(ftypes[r])}")
    serial = (ftypes == 3) | (ftypes == 4)
    if serial.any() and min(rows, row_bytes // bpp) >= _WAVEFRONT_MIN:
        return _unfilter_wavefront(lines, ftypes, bpp)
    out = np.zeros((rows, row_bytes), np.uint8)
    prev = np.zeros(row_bytes, np.int64)
    for r in range(rows):
        ftype = int(ftypes[r])
        line = lines[r].astype(np.int64)
        if ftype == 0:
            cur = line
        elif ftype == 1:  # Sub: a running sum within each of the bpp byte lanes
            pad = (-row_bytes) % bpp
            lanes = np.concatenate([line, np.zeros(pad, np.int64)]).reshape(-1, bpp)
            cur = (np.cumsum(lanes, axis=0) & 255).reshape(-1)[:row_bytes]
        elif ftype == 2:
            cur = (line + prev) & 255
        else:
            cur = _unfilter_serial(line.tolist(), prev.tolist(), bpp, ftype)
        out[r] = cur
        prev = cur
    return out


_WAVEFRONT_MIN = 32  # narrower or shorter passes: the per-row loop is quicker


def _unfilter_wavefront(lines: np.ndarray, ftypes: np.ndarray, bpp: int) -> np.ndarray:
    """Undo any mix of the five filters over a pass of (rows, row_bytes) filtered bytes
    by anti-diagonals: pixel (r, j) needs only (r, j - 1), (r - 1, j) and (r - 1, j - 1),
    so the pixels with the same r + j are independent and one numpy step undoes them
    all, whatever their rows' filters; rows + width - 1 steps in all.

    The filtered input and the output are reached through skewed strided views, in
    which a diagonal is a column (row r shifted left by r). The diagonals themselves
    are kept in three rotating int16 buffers indexed by row + 1 (entry 0 and any row a
    diagonal does not reach stay 0: the 0 PNG's predictors see outside the image), so
    a pixel's left and upper neighbours are contiguous slices of the previous
    diagonal and its upper-left one of the diagonal before. Each byte is computed by
    the per-byte formulas."""
    from numpy.lib.stride_tricks import as_strided

    rows, row_bytes = lines.shape
    width = row_bytes // bpp  # whole pixels: row_bytes is a multiple of bpp
    skew = dict(shape=(rows, rows + width - 1, bpp), strides=((width - 1) * bpp, bpp, 1))
    x_skew = as_strided(np.ascontiguousarray(lines), writeable=False, **skew)
    out = np.empty((rows, row_bytes), np.uint8)
    out_skew = as_strided(out, **skew)  # [r, d] is pixel (r, d - r)
    diagonals = [np.zeros((rows + 1, bpp), np.int16) for _ in range(3)]
    kind = ftypes.astype(np.int16)[:, None]
    sub, up, average, paeth = (kind == 1), (kind == 2), (kind == 3), (kind == 4)
    for d in range(rows + width - 1):
        r0, r1 = max(0, d - width + 1), min(rows - 1, d)
        here, last, before = diagonals[d % 3], diagonals[(d - 1) % 3], diagonals[(d - 2) % 3]
        a = last[r0 + 1:r1 + 2]  # left: row r of diagonal d - 1
        b = last[r0:r1 + 1]      # up: row r - 1 of diagonal d - 1
        c = before[r0:r1 + 1]    # up-left: row r - 1 of diagonal d - 2
        rs = slice(r0, r1 + 1)
        # Paeth: p = a + b - c; |p - a|, |p - b|, |p - c| without forming p
        pa, pb, pc = np.abs(b - c), np.abs(a - c), np.abs(a + b - 2 * c)
        nearest = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        pred = np.select([sub[rs], up[rs], average[rs], paeth[rs]],
                         [a, b, (a + b) >> 1, nearest], 0)
        cur = (x_skew[rs, d] + pred) & 255
        here[r0 + 1:r1 + 2] = cur
        out_skew[rs, d] = cur
    return out


def _unfilter_serial(line: list, prev: list, bpp: int, ftype: int) -> np.ndarray:
    """Average (3) or Paeth (4): each byte depends on the one bpp to its left."""
    cur = list(line)
    for i in range(len(cur)):
        a = cur[i - bpp] if i >= bpp else 0
        b = prev[i]
        if ftype == 3:
            cur[i] = (cur[i] + ((a + b) >> 1)) & 255
        else:
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[i] = (cur[i] + pred) & 255
    return np.asarray(cur, np.int64)


def _samples(lines: np.ndarray, cols: int, per_pixel: int, depth: int) -> np.ndarray:
    """(rows, cols, per_pixel) samples of unfiltered scanlines: uint8 up to 8 bits,
    uint16 at 16 (the smallest types that hold them: a large image's samples are not
    widened to int64, which would take 8 to 64 times the decoded bytes)."""
    rows = lines.shape[0]
    if depth == 16:
        pairs = lines.reshape(rows, -1, 2)
        v = (pairs[..., 0].astype(np.uint16) << 8) | pairs[..., 1]
    elif depth == 8:
        v = lines
    else:  # the samples' bits, most significant first, gathered in uint8
        bits = np.unpackbits(lines, axis=1).reshape(rows, -1, depth)
        v = bits[..., 0].copy()
        for k in range(1, depth):
            v <<= 1
            v |= bits[..., k]
    return v[:, :cols * per_pixel].reshape(rows, cols, per_pixel)


def _png_limit(w: int, h: int, depth: int, ctype: int, native: int, channels: int,
               bits16: bool, stream: int, op: str) -> None:
    """Refuse, before inflating anything, a PNG whose declared size decodes to more
    than _MAX_DECODED_BYTES: the inflated scanlines (`stream` bytes), the samples as
    the decoder holds them and the result in the channels and dtype asked for. Python
    ints throughout, so a 2^31 x 2^31 header cannot overflow the check."""
    sample_bytes = 2 if depth == 16 else 1
    samples = w * h * _SAMPLES[ctype] * sample_bytes
    result = w * h * (channels or native) * (2 if bits16 else 1)
    need = max(stream, samples, result)
    if need > _MAX_DECODED_BYTES:
        raise ExecutionError(
            f"{op}: PNG declares {w} x {h} pixels ({_COLOR_NAMES[ctype]}, {depth}-bit), "
            f"which decode to {need:,} bytes (as {channels or native} channels of "
            f"{'uint16' if bits16 else 'uint8'}), over the limit of "
            f"{_MAX_DECODED_BYTES:,} bytes ({_MAX_DECODED_BYTES >> 20} MiB); refused "
            "before inflating it")


def _png_pixels(data: bytes, op: str, channels: int = 0, bits16: bool = False) -> tuple:
    """(samples (h, w, k) as stored: uint8, or uint16 for 16-bit files; colour type,
    bit depth, palette (uint8 [n, 3]), tRNS). The declared size is checked against
    _MAX_DECODED_BYTES (for the result in `channels` and `bits16`) before inflating,
    and inflating stops at the size the header implies."""
    chunks = _png_chunks(data, op)
    w, h, depth, ctype, interlace = _png_header(chunks, op)
    palette = trns = None
    idat = []
    for tag, payload in chunks[1:]:
        if tag == b"PLTE":
            if len(payload) % 3 or not 0 < len(payload) <= 768:
                raise ExecutionError(f"{op}: PNG PLTE chunk of {len(payload)} bytes is "
                                     "not valid")
            palette = np.frombuffer(payload, np.uint8).reshape(-1, 3)
        elif tag == b"tRNS":
            trns = payload
            want = {0: 2, 2: 6}.get(ctype)
            if ctype in (4, 6) or (want is not None and len(payload) != want):
                trns = None  # libpng ignores an invalid tRNS (a benign error)
        elif tag == b"IDAT":
            idat.append(payload)
        elif tag != b"IEND" and not tag[0] & 0x20 and tag != b"IHDR":
            raise ExecutionError(f"{op}: PNG has an unknown critical chunk {tag!r}")
    if ctype == 3 and palette is not None and trns is not None and len(trns) > len(palette):
        trns = None  # more entries than the palette: invalid, ignored as libpng does
    if ctype == 3 and palette is None:
        raise ExecutionError(f"{op}: palette PNG without a PLTE chunk")
    if not idat:
        raise ExecutionError(f"{op}: PNG has no IDAT chunk")
    per_pixel = _SAMPLES[ctype]
    bpp = max(1, per_pixel * depth // 8)
    passes = _passes(w, h, interlace)
    sizes = [(rows, (cols * per_pixel * depth + 7) // 8) for *_, rows, cols in passes]
    expected = sum(rows * (rb + 1) for rows, rb in sizes)
    native = (4 if trns is not None else 3) if ctype == 3 else per_pixel
    _png_limit(w, h, depth, ctype, native, channels, bits16, expected, op)
    # max_length: inflate produces at most the scanlines the header implies. Data past
    # them stays compressed in the inflater and is dropped, as libpng drops it (its
    # "extra compressed data" is a benign error), so a stream that would inflate to
    # gigabytes behind a small header is never materialised.
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(b"".join(idat), expected)
    except zlib.error as e:
        raise ExecutionError(f"{op}: PNG image data is corrupt (zlib: {e})") from None
    if len(raw) < expected:
        raise ExecutionError(f"{op}: PNG image data is truncated: {len(raw)} of "
                             f"{expected} bytes" + ("" if inflater.eof else
                                                    " (the zlib stream is cut short)"))
    image = np.zeros((h, w, per_pixel), np.uint16 if depth == 16 else np.uint8)
    view, pos = memoryview(raw), 0
    for (y0, x0, dy, dx, rows, cols), (_, rb) in zip(passes, sizes):
        lines = _unfilter(view[pos:pos + rows * (rb + 1)], rows, rb, bpp, op)
        pos += rows * (rb + 1)
        image[y0::dy, x0::dx] = _samples(lines, cols, per_pixel, depth)
    if ctype == 3 and int(image.max()) >= len(palette):
        raise ExecutionError(f"{op}: PNG palette index {int(image.max())} is beyond its "
                             f"{len(palette)} entries")
    return image, ctype, depth, palette, trns


def _png_decode(data: bytes, channels: int, bits16: bool, op: str) -> np.ndarray:
    """TF's DecodePng of PNG bytes: (h, w, channels) uint8 or uint16.

    The arithmetic stays in uint8/uint16 (uint32 for the grey weights) so decoding
    takes a small multiple of the result's bytes, which _png_limit bounds."""
    if channels not in (0, 1, 3, 4):
        raise OpAttributeError(f"{op}: channels must be 0, 1, 3 or 4, got {channels}")
    image, ctype, depth, palette, trns = _png_pixels(data, op, channels, bits16)
    # TF asks libpng for an opaque alpha of (1 << bit depth) - 1 in the file's depth,
    # which for 1/2/4-bit files stays that small after expansion to 8 bits
    filler = (1 << depth) - 1 if depth < 8 else 255
    alpha = None
    if ctype == 3:  # palette to RGB(A); tRNS entries beyond its length are opaque
        idx = image[..., 0]
        rgb = palette[idx]
        if trns is not None:
            table = np.full(len(palette), 255, np.uint8)
            table[:min(len(trns), len(palette))] = list(trns[:len(palette)])
            alpha = table[idx]
        native = 4 if trns is not None else 3
        color, depth = rgb, 8
    else:
        native = _SAMPLES[ctype]
        has_alpha = ctype in (4, 6)
        color = image[..., :-1] if has_alpha else image
        if has_alpha:
            alpha = image[..., -1]
        elif trns is not None and len(trns) >= 2 * color.shape[-1]:
            key = np.asarray(struct.unpack(f">{color.shape[-1]}H",
                                           trns[:2 * color.shape[-1]]), np.int64)
            kind = image.dtype.type
            alpha = np.where((color == key).all(axis=-1), kind(0), kind((1 << depth) - 1))
        if depth < 8:  # libpng expands grey bits by replicating them
            scale = 255 // ((1 << depth) - 1)
            color = color * np.uint8(scale)
            if alpha is not None:
                alpha = np.where(alpha > 0, np.uint8(255), np.uint8(0))
            depth = 8
    want = channels or native
    if want < 3 and color.shape[-1] == 3:  # libpng's rgb_to_gray, in the file's depth
        same = (color[..., 0] == color[..., 1]) & (color[..., 0] == color[..., 2])
        rounding = 16384 if depth == 16 else 0
        # at most 65535 * 32768 + 16384 < 2^32: uint32 holds the weighted sum
        gray = sum(color[..., k].astype(np.uint32) * int(_GRAY[k]) for k in range(3))
        gray = (gray + rounding) >> 15
        color = np.where(same, color[..., 0], gray)[..., None]
    out_type = np.uint16 if bits16 else np.uint8
    if depth == 16 and not bits16:
        color, alpha = color >> 8, None if alpha is None else alpha >> 8
    elif depth == 8 and bits16:
        color = color.astype(np.uint16) * np.uint16(257)
        alpha = None if alpha is None else alpha.astype(np.uint16) * np.uint16(257)
    if want >= 3 and color.shape[-1] == 1:
        color = np.repeat(color, 3, axis=-1)
    if want in (2, 4):
        if alpha is None:
            alpha = np.full(color.shape[:2], filler * 257 if bits16 else filler, out_type)
        color = np.concatenate([color.astype(out_type, copy=False),
                                alpha.astype(out_type, copy=False)[..., None]], axis=-1)
    return color.astype(out_type, copy=False)


def _decode_png_kernel(inputs, attrs, ctx):
    """DecodePng: (h, w, channels) of the PNG in a scalar string."""
    dtype = attrs["dtype"]
    if dtype not in ("uint8", "uint16"):
        raise OpAttributeError(f"DecodePng: dtype must be uint8 or uint16, got {dtype!r}")
    data = _as_bytes(inputs[0], "DecodePng")
    return (_png_decode(data, int(attrs["channels"]), dtype == "uint16", "DecodePng"),)


def _decode_png_infer(attrs, inputs):
    c = int(attrs["channels"])
    return [TensorInfo(np.dtype(attrs["dtype"]), (None, None, c or None))]


# ---------------------------------------------------------------------------------------
# PNG encoding

_IDAT_SIZE = 8192  # libpng's zbuf size: one IDAT chunk per full output buffer


def _chunk(tag: bytes, payload: bytes) -> bytes:
    return (struct.pack(">I", len(payload)) + tag + payload
            + struct.pack(">I", zlib.crc32(tag + payload) & 0xFFFFFFFF))


def _filter_rows(lines: np.ndarray, bpp: int, filters: tuple) -> bytes:
    """Filtered scanlines, each row's filter chosen as libpng does: the smallest sum of
    |byte as signed|, ties to the earlier of None, Sub, Up, Average, Paeth."""
    rows, n = lines.shape
    x = lines.astype(np.int64)
    up = np.vstack([np.zeros((1, n), np.int64), x[:-1]])
    left = np.hstack([np.zeros((rows, bpp), np.int64), x[:, :-bpp]])[:, :n]
    ul = np.hstack([np.zeros((rows, bpp), np.int64), up[:, :-bpp]])[:, :n]
    p = left + up - ul
    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - ul)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, ul))
    candidates = {0: x, 1: x - left, 2: x - up, 3: x - ((left + up) >> 1), 4: x - paeth}
    options = [(f, candidates[f] & 255) for f in filters]
    out = bytearray()
    if len(options) == 1:
        f, v = options[0]
        for r in range(rows):
            out.append(f)
            out += v[r].astype(np.uint8).tobytes()
        return bytes(out)
    costs = np.stack([np.where(v < 128, v, 256 - v).sum(axis=1) for _, v in options])
    best = np.argmin(costs, axis=0)  # the first of equal minima
    for r in range(rows):
        f, v = options[best[r]]
        out.append(f)
        out += v[r].astype(np.uint8).tobytes()
    return bytes(out)


def _png_encode(image: np.ndarray, level: int, op: str) -> bytes:
    if image.ndim != 3 or image.shape[2] not in (1, 2, 3, 4):
        raise ShapeError(f"{op}: image must be [height, width, channels] with 1 to 4 "
                         f"channels, got shape {list(image.shape)}")
    if image.dtype not in (np.uint8, np.uint16):
        raise ShapeError(f"{op}: image must be uint8 or uint16, got {image.dtype}")
    if not -1 <= level <= 9:
        raise OpAttributeError(f"{op}: compression must be in [-1, 9], got {level}")
    h, w, c = image.shape
    if h == 0 or w == 0 or h >= 1 << 31 or w >= 1 << 31:
        raise ShapeError(f"{op}: image of {h} x {w} cannot be a PNG")
    depth = 16 if image.dtype == np.uint16 else 8
    ctype = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    lines = image.astype(">u2").view(np.uint8) if depth == 16 else image
    lines = np.ascontiguousarray(lines).reshape(h, -1)
    filters = [0, 1, 2, 3, 4]  # libpng drops those a one-row or one-column image cannot use
    if h == 1:
        filters = [f for f in filters if f not in (2, 3, 4)]
    if w == 1:
        filters = [f for f in filters if f not in (1, 3, 4)]
    raw = _filter_rows(lines, c * depth // 8, tuple(filters))
    # libpng's deflate setup: Z_FILTERED when rows are filtered, and for images under
    # 16 KiB the smallest window that holds them (zlib's minimum 9 bits for 8)
    size = len(raw)
    bits = 15
    if size <= 16384:
        half = 1 << 14
        while size + 262 <= half:
            half >>= 1
            bits -= 1
    bits = max(bits, 9)
    strategy = zlib.Z_FILTERED if filters != [0] else zlib.Z_DEFAULT_STRATEGY
    comp = zlib.compressobj(level, zlib.DEFLATED, bits, 8, strategy)
    row_len = lines.shape[1] + 1
    stream = b"".join(comp.compress(raw[k:k + row_len]) for k in range(0, size, row_len))
    stream = bytearray(stream + comp.flush())
    _optimize_cmf(stream, size)
    out = [_SIGNATURE, _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0))]
    out += [_chunk(b"IDAT", bytes(stream[k:k + _IDAT_SIZE]))
            for k in range(0, len(stream), _IDAT_SIZE)]
    out.append(_chunk(b"IEND", b""))
    return b"".join(out)


def _optimize_cmf(stream: bytearray, size: int) -> None:
    """libpng's optimize_cmf: for data under 16 KiB, the zlib header claims the
    smallest window that holds `size` bytes (a header-only change: FCHECK redone)."""
    cmf = stream[0]
    if size > 16384 or (cmf & 0x0F) != 8 or (cmf & 0xF0) > 0x70:
        return
    cinfo = cmf >> 4
    half = 1 << (cinfo + 7)
    if size > half:
        return
    while True:
        half >>= 1
        cinfo -= 1
        if not (cinfo > 0 and size <= half):
            break
    cmf = (cmf & 0x0F) | (cinfo << 4)
    flg = stream[1] & 0xE0
    flg += 0x1F - ((cmf << 8) + flg) % 0x1F
    stream[0], stream[1] = cmf, flg


def _encode_png_kernel(inputs, attrs, ctx):
    """EncodePng: the PNG bytes (a scalar string) of a uint8/uint16 [h, w, c] image."""
    image = np.asarray(inputs[0])
    return (_as_string(_png_encode(image, int(attrs["compression"]), "EncodePng")),)


def _string_infer(attrs, inputs):
    return [TensorInfo(_OBJ, ())]


# ---------------------------------------------------------------------------------------
# DecodeImage (PNG, BMP), ExtractJpegShape


def _bmp_decode(data: bytes, channels: int, op: str) -> np.ndarray:
    """TF's DecodeBmp: uncompressed 24/32-bit BMPs (bottom-up or top-down), BGR(A) to
    RGB(A); channels 0 keeps the file's 3 or 4."""
    if len(data) < 54:
        raise ExecutionError(f"{op}: BMP truncated: {len(data)} bytes, the headers need 54")
    offset, = struct.unpack("<I", data[10:14])
    width, height, planes, bits, compression = struct.unpack("<iiHHI", data[18:34])
    if bits not in (24, 32) or compression not in (0, 3):
        raise ExecutionError(f"{op}: BMP with {bits} bits per pixel and compression "
                             f"{compression} is not supported (24 or 32 bits, uncompressed)")
    if width <= 0 or height == 0 or abs(height) * width > _MAX_PIXELS:
        raise ExecutionError(f"{op}: BMP size {width} x {height} is not valid")
    native = bits // 8
    row = (native * width + 3) // 4 * 4
    rows = abs(height)
    need = row * (rows - 1) + native * width  # the last row's padding may be cut off
    if offset + need > len(data):
        raise ExecutionError(f"{op}: BMP pixel data truncated: needs {need} bytes from "
                             f"byte {offset}, the file has {len(data)}")
    body = data[offset:offset + row * rows].ljust(row * rows, b"\0")
    px = np.frombuffer(body, np.uint8).reshape(rows, row)
    px = px[:, :native * width].reshape(rows, width, native)
    if height > 0:
        px = px[::-1]
    out = px[..., [2, 1, 0, 3][:native]]
    want = channels or native
    if want not in (0, 1, 3, 4) or want == 1:
        raise OpAttributeError(f"{op}: a BMP decodes to 3 or 4 channels, asked {channels}")
    if want == 3:
        out = out[..., :3]
    elif want == 4 and native == 3:
        out = np.concatenate([out, np.full(out.shape[:2] + (1,), 255, np.uint8)], -1)
    return np.ascontiguousarray(out)


def _image_format(data: bytes) -> str:
    if data[:8] == _SIGNATURE:
        return "png"
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:3] == b"GIF":
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return "unknown"


def _decode_image_kernel(inputs, attrs, ctx):
    """DecodeImage: PNG (any) or BMP bytes to (h, w, c) of dtype uint8/uint16."""
    data = _as_bytes(inputs[0], "DecodeImage")
    dtype, channels = attrs["dtype"], int(attrs["channels"])
    kind = _image_format(data)
    if kind == "png":
        return (_png_decode(data, channels, dtype == "uint16", "DecodeImage"),)
    if kind == "bmp":
        out = _bmp_decode(data, channels, "DecodeImage")
        return (out.astype(np.uint16) * 257 if dtype == "uint16" else out,)
    if kind == "jpeg":
        out = _jpeg_decode(data, channels, 1, "DecodeImage")
        return (out.astype(np.uint16) * 257 if dtype == "uint16" else out,)
    if kind == "gif":
        raise ExecutionError(
            "DecodeImage: the bytes are a GIF image; onegraph decodes PNG, BMP and (with "
            "Pillow) JPEG, but has no GIF decoder: use the ImageDecoder op (Pillow, pip "
            "install 'onegraph[image]')")
    raise ExecutionError(f"DecodeImage: unknown image format: the first 4 bytes are "
                         f"{data[:4]!r} (neither PNG, JPEG, GIF nor BMP)")


def _jpeg_decode(data: bytes, channels: int, ratio: int, op: str) -> np.ndarray:
    """JPEG bytes to uint8 (h, w, c) pixels through Pillow's libjpeg, as TF decodes
    them: channels 0 keeps the file's (1 or 3), 1 asks libjpeg for the luma channel
    itself, 3 for RGB; ratio 2, 4 or 8 scales down while decoding (libjpeg's DCT
    scaling, ceil(size / ratio) pixels). libjpeg's accurate integer DCT is used: TF's
    dct_method INTEGER_ACCURATE gives the same pixels, its default INTEGER_FAST ones a
    few levels away.

    Raises:
        UnsupportedOpError: Pillow is not installed (onegraph[image]).
        ExecutionError: the bytes are not a JPEG Pillow can decode, or the image is
            past Pillow's decompression-bomb limit.
    """
    if channels not in (0, 1, 3):
        raise ExecutionError(f"{op}: a JPEG decodes to 1 or 3 channels, asked {channels}")
    try:
        import io
        import warnings

        from PIL import Image
    except ImportError as e:
        raise UnsupportedOpError(f"{op}: decoding JPEG needs Pillow: pip install "
                                 f"'onegraph[image]'") from e
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                if img.format != "JPEG":
                    raise ExecutionError(f"{op}: the bytes are not a JPEG image")
                native = "L" if img.mode == "L" else "RGB"
                mode = {0: native, 1: "L", 3: "RGB"}[channels]
                if mode != img.mode or ratio > 1:
                    # libjpeg converts or scales while decoding (a colour image's gray
                    # is its Y channel, not a mix of decoded RGB), as TF's decoder does
                    # Pillow takes the largest scale 2^-k whose image holds the size
                    # asked; floor(side / ratio) (>= 1) makes that exactly 1 / ratio
                    img.draft(mode, (max(1, img.width // ratio), max(1, img.height // ratio)))
                pixels = np.asarray(img.convert(mode), dtype=np.uint8)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombWarning,
            Image.DecompressionBombError) as e:
        raise ExecutionError(f"{op}: cannot decode {len(data)} bytes as a JPEG image: "
                             f"{e}") from e
    return np.ascontiguousarray(pixels[:, :, None] if pixels.ndim == 2 else pixels)


def _decode_jpeg_kernel(inputs, attrs, ctx):
    """DecodeJpeg: JPEG bytes to uint8 (h, w, c), TF's channels and ratio."""
    channels, ratio = int(attrs["channels"]), int(attrs["ratio"])
    if channels not in (0, 1, 3):
        raise OpAttributeError(f"DecodeJpeg: channels must be 0, 1 or 3, got {channels}")
    if ratio not in (1, 2, 4, 8):
        raise OpAttributeError(f"DecodeJpeg: ratio must be 1, 2, 4 or 8, got {ratio}")
    return (_jpeg_decode(_as_bytes(inputs[0], "DecodeJpeg"), channels, ratio, "DecodeJpeg"),)


def _decode_jpeg_infer(attrs, inputs):
    c = int(attrs["channels"])
    return [TensorInfo(np.dtype(np.uint8), (None, None, c or None))]


def _decode_image_infer(attrs, inputs):
    c = int(attrs["channels"])
    return [TensorInfo(np.dtype(attrs["dtype"]), (None, None, c or None))]


def _jpeg_shape_kernel(inputs, attrs, ctx):
    """ExtractJpegShape: [height, width, components] from a JPEG's SOF marker."""
    data = _as_bytes(inputs[0], "ExtractJpegShape")
    if data[:2] != b"\xff\xd8":
        raise ExecutionError("ExtractJpegShape: not a JPEG file (no SOI marker)")
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ExecutionError(f"ExtractJpegShape: corrupt JPEG: no marker at byte {pos}")
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        length, = struct.unpack(">H", data[pos + 2:pos + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if pos + 10 > len(data):
                break
            h, w = struct.unpack(">HH", data[pos + 5:pos + 9])
            return (np.asarray([h, w, data[pos + 9]], np.dtype(attrs["output_type"])),)
        if marker in (0xD9, 0xDA) or length < 2:
            break
        pos += 2 + length
    raise ExecutionError("ExtractJpegShape: JPEG truncated or without a frame header "
                         "(SOF marker)")


def _jpeg_shape_infer(attrs, inputs):
    return [TensorInfo(np.dtype(attrs["output_type"]), (3,))]


def _is_jpeg_kernel(inputs, attrs, ctx):
    """IsJpeg: whether a scalar string starts with the JPEG SOI marker (TF's test)."""
    data = _as_bytes(inputs[0], "IsJpeg")
    return (np.asarray(data[:3] == b"\xff\xd8\xff"),)


def _bool_infer(attrs, inputs):
    return [TensorInfo(np.dtype(bool), ())]


# ---------------------------------------------------------------------------------------
# ResizeArea


def _area_taps(n_in: int, n_out: int, align: bool) -> tuple:
    """TF's area kernel on one axis as taps: (index, weight) arrays of shape (n_out, K)
    (output cell i covers [i s, (i + 1) s) of the input, s = n_in / n_out in float32,
    with align_corners (n_in - 1) / (n_out - 1); each tap is its overlap with one input
    pixel, the last pixel repeated past the edge; unused taps weigh 0) and s.

    K is the most pixels a cell overlaps (ceil(s) + 1), so the taps take O(n_in +
    n_out) memory where a dense (n_out, n_in) matrix would take their product; the
    float32 arithmetic is the per-pixel loop's, vectorised."""
    f = np.float32
    scale = f(n_in - 1) / f(n_out - 1) if align and n_out > 1 else f(n_in) / f(n_out)
    cells = np.arange(n_out, dtype=np.int64)
    lo = (cells.astype(f) * scale)[:, None]
    hi = ((cells + 1).astype(f) * scale)[:, None]
    start = np.floor(lo).astype(np.int64)
    stop = np.ceil(hi).astype(np.int64)
    k = start + np.arange(max(1, int((stop - start).max())), dtype=np.int64)
    # int64 against float32 compares exactly (both are exact in float64)
    left, over = k < lo, k + 1 > hi
    weight = np.where(left, np.where(over, scale, (k + 1).astype(f) - lo),
                      np.where(over, hi - k.astype(f), f(1.0)))
    weight = np.where(k < stop, weight, f(0)).astype(np.float64)
    return np.minimum(k, n_in - 1), weight, float(scale)


_AREA_DENSE_CELLS = 1 << 22  # a (n_out, n_in) weight matrix up to this size: 32 MiB


def _area_axis(x: np.ndarray, index: np.ndarray, weight: np.ndarray, axis: int) -> np.ndarray:
    """sum over taps of weight * x gathered along `axis` (float64): the area average
    of one axis, unnormalised. A strong reduction has many taps per cell: then (when
    small enough) one dense weight matrix and a tensordot replace a Python loop over
    the taps."""
    n_out, taps = index.shape
    n_in = x.shape[axis]
    if taps > 64 and n_out * n_in <= _AREA_DENSE_CELLS:
        dense = np.zeros((n_out, n_in))
        np.add.at(dense, (np.repeat(np.arange(n_out), taps), index.reshape(-1)),
                  weight.reshape(-1))
        return np.moveaxis(np.tensordot(dense, x, axes=([1], [axis])), 0, axis)
    shape = [1] * x.ndim
    shape[axis] = index.shape[0]
    out = np.zeros(x.shape[:axis] + (index.shape[0],) + x.shape[axis + 1:])
    for t in range(index.shape[1]):
        out += np.take(x, index[:, t], axis=axis) * weight[:, t].reshape(shape)
    return out


def _resize_area_kernel(inputs, attrs, ctx):
    """ResizeArea: NHWC images to size [h, w] by TF's area averaging (float32).

    Separable: one axis then the other (the order that keeps the intermediate
    smaller), each a few gathers and multiply-adds in float64; results larger than
    _MAX_RESULT_BYTES are refused before any work."""
    x = np.asarray(inputs[0])
    size = np.asarray(inputs[1])
    if x.ndim != 4 or size.size != 2:
        raise ShapeError(f"ResizeArea: images {list(x.shape)} must be 4-D and size hold 2 "
                         f"values, got shape {list(size.shape)}")
    if size.dtype.kind not in "iu" or x.dtype.kind not in "iuf":
        raise ShapeError(f"ResizeArea: images must be numbers and size integers, got "
                         f"{x.dtype} and {size.dtype}")
    oh, ow = (int(v) for v in size.reshape(-1))
    if min(oh, ow) <= 0 or 0 in x.shape[1:3]:
        raise ExecutionError(f"ResizeArea: sizes must be positive, got input "
                             f"{list(x.shape[1:3])} and output {[oh, ow]}")
    n, h, w, c = x.shape
    # float64 is what the work is done in; the float32 result is half that. An empty
    # batch or depth still counts as 1: numpy cannot even shape [0, 2^40, 2^40, 3]
    _check_result_size("ResizeArea", "the resized images", (max(n, 1), oh, ow, max(c, 1)),
                       8)
    if n * c == 0:  # nothing to average (and no weights to make)
        return (np.zeros((n, oh, ow, c), np.float32),)
    # the taps: each output row (column) has ceil(scale) + 1 of them, an index and a
    # weight of 8 bytes each, and about as much again in temporaries while made
    taps = sum(out * (-(-size_in // out) + 2) for size_in, out in ((h, oh), (w, ow)))
    _check_result_size("ResizeArea", f"the area weights for {[h, w]} to {[oh, ow]}",
                       (taps,), 32)
    align = bool(attrs["align_corners"])
    iy, wy, sy = _area_taps(h, oh, align)
    ix, wx, sx = _area_taps(w, ow, align)
    if oh * w <= h * ow:
        y = _area_axis(_area_axis(x, iy, wy, 1), ix, wx, 2)
    else:
        y = _area_axis(_area_axis(x, ix, wx, 2), iy, wy, 1)
    # align_corners from a 1-pixel axis has scale 0: the cells are empty and TF's
    # normalisation 1 / 0 makes them NaN, as here (without numpy's warnings)
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = float(np.float32(1.0) / (np.float32(sy) * np.float32(sx)))
        return ((y * norm).astype(np.float32),)


def _resize_area_infer(attrs, inputs):
    x, size = inputs
    dims = (None, None)
    if size.value is not None:
        dims = tuple(int(v) for v in np.asarray(size.value).reshape(-1))
    n = x.shape[0] if x.shape is not None else None
    c = x.shape[3] if x.shape is not None else None
    return [TensorInfo(np.dtype(np.float32), (n,) + dims + (c,))]


# ---------------------------------------------------------------------------------------
# DrawBoundingBoxes

_BOX_COLORS = np.asarray([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                          [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1],
                          [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)


def _pixel_index(value) -> int | None:
    """A float32 box corner scaled to pixels, truncated toward 0 as TF's cast does; None
    for NaN. An infinite value (given, or a huge finite corner whose scaling overflowed
    float32) becomes a pixel far beyond that side of any image: 2^62, which Python
    ints carry exactly and which the drawing then treats as outside, as TF's clamping
    treats a huge finite corner."""
    v = float(value)
    if v != v:
        return None
    return int(min(max(v, -2.0 ** 62), 2.0 ** 62))


def _draw_boxes_kernel(inputs, attrs, ctx):
    """DrawBoundingBoxes(V2): each box's outline (1 pixel) in its colour, as TF's
    kernel: corners scaled by size - 1 and truncated, lines outside the image
    skipped, colours cycling through the table (TF's default one without colors).
    A box with a NaN corner is skipped (it has no position; TF's cast of NaN to an
    integer is undefined); infinite corners lie beyond that edge of the image."""
    images = np.array(_numbers(inputs[0], "images", "DrawBoundingBoxes"), copy=True)
    boxes = _numbers(inputs[1], "boxes", "DrawBoundingBoxes").astype(np.float32)
    colors = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
    if images.ndim != 4 or boxes.ndim != 3 or boxes.shape[2] != 4 \
            or boxes.shape[0] != images.shape[0]:
        raise ShapeError(f"DrawBoundingBoxes: images {list(images.shape)} and boxes "
                         f"{list(boxes.shape)} do not fit ([b, h, w, d] and [b, n, 4])")
    n, h, w, d = images.shape
    # a copy: grey images overwrite the table's first column, and a fed or constant
    # colors array may be read-only
    table = _BOX_COLORS.copy() if colors is None or np.asarray(colors).size == 0 \
        else np.array(_numbers(colors, "colors", "DrawBoundingBoxes"), np.float32)
    if table.ndim != 2 or table.shape[1] < d:
        raise ShapeError(f"DrawBoundingBoxes: colors {list(table.shape)} must be [k, >= "
                         f"{d}] for images of depth {d}")
    if d == 1:
        table[:, 0] = 1
    for b in range(n):
        for k in range(boxes.shape[1]):
            color = table[k % len(table), :d].astype(images.dtype)
            with np.errstate(over="ignore", invalid="ignore"):  # inf * 0, huge * size
                corners = boxes[b, k] * np.float32([h - 1, w - 1, h - 1, w - 1])
            y0, x0, y1, x1 = (_pixel_index(v) for v in corners)
            if None in (y0, x0, y1, x1):
                continue
            if y0 > y1 or x0 > x1 or y0 >= h or y1 < 0 or x0 >= w or x1 < 0:
                continue
            cy0, cy1, cx0, cx1 = max(y0, 0), min(y1, h - 1), max(x0, 0), min(x1, w - 1)
            if y0 >= 0:
                images[b, y0, cx0:cx1 + 1] = color
            if y1 < h:
                images[b, y1, cx0:cx1 + 1] = color
            if x0 >= 0:
                images[b, cy0:cy1 + 1, x0] = color
            if x1 < w:
                images[b, cy0:cy1 + 1, x1] = color
    return (images,)


def _same_infer(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


# ---------------------------------------------------------------------------------------
# Non-maximum suppression variants (TF's NonMaxSuppressionV5 and WithOverlaps)


def _box_corners(boxes: np.ndarray) -> tuple:
    """(ymin, xmin, ymax, xmax, area) float32 arrays of [n, 4] boxes whose corners may
    come in either order, as TF's IOU reads them."""
    b = boxes.astype(np.float32)
    y1, x1 = np.minimum(b[:, 0], b[:, 2]), np.minimum(b[:, 1], b[:, 3])
    y2, x2 = np.maximum(b[:, 0], b[:, 2]), np.maximum(b[:, 1], b[:, 3])
    with np.errstate(over="ignore", invalid="ignore"):
        area = (y2 - y1) * (x2 - x1)
    return y1, x1, y2, x2, area


def _iou_with(corners: tuple, i: int, others: np.ndarray) -> np.ndarray:
    """TF's IOU in float32 of box i with each of the boxes `others` (indices): 0 where
    either box is empty. NMS asks for one candidate against the boxes selected so far,
    so n boxes take O(n) memory (an n x n matrix of 50 000 anchors would be 10 GB)."""
    y1, x1, y2, x2, area = corners
    zero = np.float32(0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        iy = np.maximum(np.minimum(y2[i], y2[others]) - np.maximum(y1[i], y1[others]), zero)
        ix = np.maximum(np.minimum(x2[i], x2[others]) - np.maximum(x1[i], x1[others]), zero)
        inter = iy * ix
        iou = inter / (area[i] + area[others] - inter)
    return np.where((area[i] <= 0) | (area[others] <= 0), zero, iou).astype(np.float32)


def _soft_nms(similarity, scores, limit, threshold, score_t, sigma):
    """TF's DoNonMaxSuppressionOp: (indices, scores) by a priority queue on score
    (ties to the lower index). Without sigma a candidate overlapping a selected box by
    more than the threshold is dropped; with sigma > 0 nothing is dropped outright, its
    score decays by exp(-iou^2 / (2 sigma)) per selected box and it is queued again
    while above score_t (each selected box weighs on it once).

    similarity(i, js) is the float32 similarity of candidate i with each box of the
    index array js. TF walks the selected boxes newest first, multiplying the score
    by each weight and stopping at a hard suppression or when the score falls to
    score_t; here the weights of that walk come in one call and its running products
    from np.multiply.accumulate (sequential float32 products, the loop's own), the
    stop being the first index where either condition holds."""
    import heapq

    f = np.float32
    soft = sigma > 0
    scale = f(-0.5) / f(sigma) if soft else f(0)
    threshold, score_t = f(threshold), f(score_t)
    scores = np.asarray(scores, np.float32)
    keep = np.flatnonzero(scores > score_t)
    heap = list(zip((-scores[keep]).tolist(), keep.tolist(), [0] * keep.size))
    heapq.heapify(heap)
    selected, picked_scores = [], []
    while len(selected) < limit and heap:
        neg, i, begin = heapq.heappop(heap)
        score = original = f(-neg)
        hard = False
        if len(selected) > begin:
            sims = np.asarray(similarity(i, np.asarray(selected[begin:][::-1])), np.float32)
            with np.errstate(over="ignore", invalid="ignore", under="ignore"):
                weight = np.exp(scale * sims * sims, dtype=np.float32)
                factor = weight if soft else np.where(sims <= threshold, weight, f(0))
                running = np.multiply.accumulate(
                    np.concatenate([np.asarray([score], f), factor.astype(f)]))[1:]
            stops = running <= score_t
            if not soft:
                over = sims > threshold
                first_hard = int(np.argmax(over)) if over.any() else len(sims)
                stops[first_hard:] = True  # the walk never gets past a hard stop
                hard = first_hard < len(sims) and not (running[:first_hard] <= score_t).any()
            if not hard:
                score = running[int(np.argmax(stops))] if stops.any() else running[-1]
        if hard:
            continue
        if score == original:
            selected.append(i)
            picked_scores.append(score)
        elif score > score_t:
            heapq.heappush(heap, (-float(score), i, len(selected)))
    return selected, picked_scores


def _combined_nms_kernel(inputs, attrs, ctx):
    """CombinedNonMaxSuppression: greedy NMS per (image, class), then each image's
    best max_total_size detections over all classes (TF's kernel). Results beyond
    _MAX_RESULT_BYTES (a max_total_size far above the boxes there are, padded) are
    refused."""
    op = "CombinedNonMaxSuppression"
    boxes = _numbers(inputs[0], "boxes", op).astype(np.float32)
    scores = _numbers(inputs[1], "scores", op).astype(np.float32)
    per_class = _scalar_input(inputs[2], "max_output_size_per_class", op, integer=True)
    total = _scalar_input(inputs[3], "max_total_size", op, integer=True)
    iou_t = np.float32(_scalar_input(inputs[4], "iou_threshold", op))
    score_t = np.float32(_scalar_input(inputs[5], "score_threshold", op))
    if boxes.ndim != 4 or boxes.shape[3] != 4 or scores.ndim != 3 \
            or scores.shape[:2] != boxes.shape[:2] or boxes.shape[2] not in (1, scores.shape[2]):
        raise ShapeError(f"CombinedNonMaxSuppression: boxes {list(boxes.shape)} and scores "
                         f"{list(scores.shape)} do not fit ([b, n, q, 4], [b, n, classes])")
    if per_class <= 0 or total <= 0 or not 0 <= iou_t <= 1:
        raise ExecutionError(f"CombinedNonMaxSuppression: max_output_size_per_class "
                             f"({per_class}) and max_total_size ({total}) must be > 0, "
                             f"iou_threshold ({iou_t}) in [0, 1]")
    batch, n, q, _ = boxes.shape
    classes = scores.shape[2]
    size_per_class = min(per_class, n)
    pad_per_class, clip = bool(attrs["pad_per_class"]), bool(attrs["clip_boxes"])
    per_batch = min(total, per_class * classes) if pad_per_class else total
    # boxes (4 floats), scores and classes per detection
    _check_result_size(op, "the detections (boxes, scores, classes)", (batch, per_batch, 6),
                       4)
    out_boxes = np.zeros((batch, per_batch, 4), np.float32)
    out_scores = np.zeros((batch, per_batch), np.float32)
    out_classes = np.zeros((batch, per_batch), np.float32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found = []
        for c in range(classes):
            cls_boxes = boxes[b, :, c if q > 1 else 0]
            corners = _box_corners(cls_boxes)
            picked, kept = _soft_nms(lambda a, ks: _iou_with(corners, a, ks), scores[b, :, c],
                                     size_per_class, iou_t, score_t, 0.0)
            found += [(s, k, c, cls_boxes[i]) for k, (i, s) in enumerate(zip(picked, kept))]
        found.sort(key=lambda t: -t[0])  # stable: ties keep class, then rank, order
        # TF: at most per_batch either way (with pad_per_class that is also capped by
        # max_total_size, which max_output_size_per_class * classes may exceed)
        count = min(len(found), per_batch)
        valid[b] = count
        for k, (s, _, c, box) in enumerate(found[:count]):
            out_boxes[b, k] = np.clip(box, 0, 1) if clip else box
            out_scores[b, k], out_classes[b, k] = s, c
    return out_boxes, out_scores, out_classes, valid


def _combined_infer(attrs, inputs):
    f = np.dtype(np.float32)
    return [TensorInfo(f, None), TensorInfo(f, None), TensorInfo(f, None),
            TensorInfo(np.dtype(np.int32), None)]


def _nms_v5_kernel(inputs, attrs, ctx):
    """NonMaxSuppressionV5: (selected_indices int32, selected_scores, valid_outputs).
    Any max_output_size >= 0 is accepted (no more boxes than there are are selected);
    padded to it, a result beyond _MAX_RESULT_BYTES is refused."""
    op = "NonMaxSuppressionV5"
    boxes, scores = _numbers(inputs[0], "boxes", op), _numbers(inputs[1], "scores", op)
    limit = _scalar_input(inputs[2], "max_output_size", op, integer=True)
    iou_t = np.float32(_scalar_input(inputs[3], "iou_threshold", op))
    score_t = np.float32(_scalar_input(inputs[4], "score_threshold", op))
    sigma = _scalar_input(inputs[5], "soft_nms_sigma", op)
    if boxes.ndim != 2 or boxes.shape[1] != 4 or scores.shape != boxes.shape[:1]:
        raise ShapeError(f"NonMaxSuppressionV5: boxes {list(boxes.shape)} and scores "
                         f"{list(scores.shape)} do not fit")
    if limit < 0 or not 0 <= iou_t <= 1 or sigma < 0:
        raise ExecutionError(f"NonMaxSuppressionV5: max_output_size {limit} must be >= 0, "
                             f"iou_threshold {iou_t} in [0, 1], soft_nms_sigma {sigma} >= 0")
    out_type = scores.dtype if scores.dtype.kind == "f" else np.dtype(np.float32)
    pad = bool(attrs["pad_to_max_output_size"])
    if pad:
        _check_result_size(op, "the padded selection (indices and scores)", (limit,),
                           4 + out_type.itemsize)
    corners = _box_corners(boxes)
    picked, kept = _soft_nms(lambda a, ks: _iou_with(corners, a, ks),
                             scores.astype(np.float32), limit, iou_t, score_t, sigma)
    valid = len(picked)
    if pad:
        picked = picked + [0] * (limit - valid)
        kept = kept + [0.0] * (limit - valid)
    return (np.asarray(picked, np.int32), np.asarray(kept, out_type),
            np.asarray(valid, np.int32))


def _nms_v5_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.int32), (None,)), TensorInfo(inputs[1].dtype, (None,)),
            TensorInfo(np.dtype(np.int32), ())]


def _nms_overlaps_kernel(inputs, attrs, ctx):
    """NonMaxSuppressionWithOverlaps: greedy NMS on a given overlap matrix (a candidate
    is dropped when its overlap with a selected box exceeds overlap_threshold)."""
    op = "NonMaxSuppressionWithOverlaps"
    overlaps = _numbers(inputs[0], "overlaps", op).astype(np.float32)
    scores = _numbers(inputs[1], "scores", op).astype(np.float32)
    limit = _scalar_input(inputs[2], "max_output_size", op, integer=True)
    threshold = np.float32(_scalar_input(inputs[3], "overlap_threshold", op))
    score_t = np.float32(_scalar_input(inputs[4], "score_threshold", op))
    n = scores.shape[0] if scores.ndim == 1 else -1
    if overlaps.shape != (n, n):
        raise ShapeError(f"NonMaxSuppressionWithOverlaps: overlaps {list(overlaps.shape)} "
                         f"must be [n, n] for scores {list(scores.shape)}")
    if limit < 0:
        raise ExecutionError(f"NonMaxSuppressionWithOverlaps: max_output_size must be >= "
                             f"0, got {limit}")
    picked, _ = _soft_nms(lambda a, ks: overlaps[a, ks], scores, limit, threshold, score_t,
                          0.0)
    return (np.asarray(picked, np.int32),)


def _indices_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.int32), (None,))]


# ---------------------------------------------------------------------------------------
# SampleDistortedBoundingBox


def _random_crop_rect(rng, width, height, min_area, max_area, ratio):
    """TF's GenerateRandomCrop: (x, y, w, h) of a crop of aspect `ratio` (w / h) and
    area within [min_area, max_area] (fractions of the image), or None."""
    f = np.float32
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        lo, hi = f(min_area) * f(width) * f(height), f(max_area) * f(width) * f(height)
        sides = np.rint(np.sqrt(np.asarray([lo, hi], f) / f(ratio)))
        widest = np.rint(sides[1] * f(ratio))
    # a huge image or an extreme ratio can overflow float32: no crop of this ratio
    if not (np.isfinite(sides).all() and np.isfinite(widest)):
        return None
    h, max_h = int(sides[0]), int(sides[1])
    if int(widest) > width:
        max_h = int((width + 0.5 - 1e-7) / ratio)
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += int(rng.integers(0, max_h - h + 1))
    w = int(np.rint(h * f(ratio)))
    area = f(w * h)
    if area < lo:
        h += 1
        w = int(np.rint(h * f(ratio)))
        area = f(w * h)
    if area > hi:
        h -= 1
        w = int(np.rint(h * f(ratio)))
        area = f(w * h)
    if area < lo or area > hi or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = int(rng.integers(0, height - h)) if h < height else 0
    x = int(rng.integers(0, width - w)) if w < width else 0
    return x, y, w, h


def _sample_box_kernel(inputs, attrs, ctx):
    """SampleDistortedBoundingBoxV2: (begin, size, bboxes) of a random crop of aspect
    and area in range covering at least min_object_covered of some box (the whole
    image when max_attempts draws find none), as TF's kernel."""
    op = "SampleDistortedBoundingBox"
    size = np.asarray(inputs[0]).reshape(-1)
    boxes = _numbers(inputs[1], "bounding_boxes", op).astype(np.float32)
    covered = _scalar_input(inputs[2], "min_object_covered", op)
    if size.dtype.kind not in "iu":
        raise ShapeError(f"{op}: image_size must be integers, got {size.dtype}")
    if size.size != 3 or boxes.ndim != 3 or boxes.shape[2] != 4:
        raise ShapeError(f"SampleDistortedBoundingBox: image_size must hold 3 values and "
                         f"bounding_boxes be [batch, N, 4], got {list(size.shape)} and "
                         f"{list(boxes.shape)}")
    height, width = int(size[0]), int(size[1])
    if height <= 0 or width <= 0:
        raise ExecutionError(f"SampleDistortedBoundingBox: image height and width must be "
                             f"positive, got {height} x {width}")
    ratios, areas = attrs["aspect_ratio_range"], attrs["area_range"]
    with np.errstate(over="ignore"):
        # the draws are float32: a bound that is 0 or infinite there (1e-300, 1e300)
        # would make the crop's sides 0 / 0 or inf / inf
        as_f32 = np.asarray(list(ratios) + list(areas), np.float64).astype(np.float32)
    if len(ratios) != 2 or len(areas) != 2 or not 0 < ratios[0] <= ratios[1] \
            or not 0 < areas[0] <= areas[1] <= 1 or attrs["max_attempts"] <= 0 \
            or not (np.isfinite(as_f32).all() and (as_f32 > 0).all()):
        raise ExecutionError(f"SampleDistortedBoundingBox: aspect_ratio_range {ratios} and "
                             f"area_range {areas} must be ordered pairs of positive "
                             f"float32 numbers (areas at most 1), max_attempts "
                             f"{attrs['max_attempts']} > 0")
    rects = [(b[1] * width, b[0] * height, b[3] * width, b[2] * height)
             for b in boxes.reshape(-1, 4)]
    if any(not (0 <= v <= 1) for b in boxes.reshape(-1, 4) for v in b):
        raise ExecutionError("SampleDistortedBoundingBox: bounding box coordinates must "
                             "lie in [0, 1]")
    if not rects:
        if not attrs["use_image_if_no_bounding_boxes"]:
            raise ExecutionError("SampleDistortedBoundingBox: no bounding box given; set "
                                 "use_image_if_no_bounding_boxes to use the whole image")
        rects = [(0.0, 0.0, float(width), float(height))]
    rng = _rng(attrs, ctx)
    crop = None
    # No crop can cover more than all of a box, nor any part of an empty one: then
    # every attempt would fail, and a large max_attempts would only spin
    attempts = int(attrs["max_attempts"])
    if not covered <= 1 or all((x1 - x0) * (y1 - y0) <= 0 for x0, y0, x1, y1 in rects):
        attempts = 0
    for _ in range(attempts):
        ratio = np.float32(rng.random()) * np.float32(ratios[1] - ratios[0]) \
            + np.float32(ratios[0])
        rect = _random_crop_rect(rng, width, height, areas[0], areas[1], ratio)
        if rect is None:
            continue
        x, y, w, h = rect
        for x0, y0, x1, y1 in rects:
            box_area = (x1 - x0) * (y1 - y0)
            inter = max(0.0, min(x + w, x1) - max(x, x0)) * max(0.0, min(y + h, y1)
                                                                 - max(y, y0))
            if box_area > 0 and inter / box_area >= covered:
                crop = rect
                break
        if crop is not None:
            break
    x, y, w, h = crop if crop is not None else (0, 0, width, height)
    kind = np.asarray(inputs[0]).dtype
    begin = np.asarray([y, x, 0], kind)
    extent = np.asarray([h, w, -1], kind)
    bbox = np.asarray([[[y / height, x / width, (y + h) / height, (x + w) / width]]],
                      np.float32)
    return begin, extent, bbox


def _sample_box_infer(attrs, inputs):
    kind = inputs[0].dtype
    return [TensorInfo(kind, (3,)), TensorInfo(kind, (3,)),
            TensorInfo(np.dtype(np.float32), (1, 1, 4))]


# ---------------------------------------------------------------------------------------
# ExtractGlimpse (TF's V1 kernel)


def _glimpse_kernel(inputs, attrs, ctx):
    """ExtractGlimpse: a [h, w] window of each NHWC image at its (y, x) offset (TF1's
    V1 rules: normalized offsets scaled by the image size, centered ones measured from
    its centre at half scale, the window's half size taken off, truncated toward 0);
    window pixels outside the image hold noise: uniform in the image's [min, max],
    gaussian by each channel's mean and deviation clipped to its range, or zero."""
    x = np.asarray(inputs[0])
    size = np.asarray(inputs[1])
    offsets = np.asarray(inputs[2])
    noise = attrs["noise"]
    if x.ndim != 4 or size.size != 2 or offsets.shape != (x.shape[0], 2):
        raise ShapeError(f"ExtractGlimpse: input {list(x.shape)} must be 4-D, size hold 2 "
                         f"values (shape {list(size.shape)}) and offsets be [batch, 2] "
                         f"({list(offsets.shape)})")
    if size.dtype.kind not in "iu" or offsets.dtype.kind not in "iuf":
        raise ShapeError(f"ExtractGlimpse: size must be integers and offsets numbers, got "
                         f"{size.dtype} and {offsets.dtype}")
    size = [int(v) for v in size.reshape(-1)]
    offsets = offsets.astype(np.float32)
    if min(size) <= 0 or noise not in ("uniform", "gaussian", "zero"):
        raise ExecutionError(f"ExtractGlimpse: size {size} must be positive and noise one "
                             f"of uniform, gaussian, zero (got {noise!r})")
    bad = np.flatnonzero(~np.isfinite(offsets).all(axis=1))
    if bad.size:  # TF's cast of a NaN or infinite position to an index is undefined
        i = int(bad[0])
        raise ExecutionError(f"ExtractGlimpse: offsets[{i}] = {offsets[i].tolist()} is not "
                             "finite: a glimpse needs a position (y, x) of finite numbers")
    n, height, width, c = x.shape
    gh, gw = size
    # an empty batch or depth counts as 1: numpy cannot shape [0, 2^40, 2^40, 3] either
    _check_result_size("ExtractGlimpse", "the glimpses", (max(n, 1), gh, gw, max(c, 1)),
                       x.dtype.itemsize)
    f = np.float32
    out = np.zeros((n, gh, gw, c), x.dtype)
    rng = None
    for i in range(n):
        oy, ox = offsets[i]
        with np.errstate(over="ignore"):  # a huge finite offset scaled past float32
            if attrs["normalized"]:
                ox, oy = ox * f(width), oy * f(height)
            if attrs["centered"]:
                ox, oy = ox / f(2) + f(width) / f(2), oy / f(2) + f(height) / f(2)
            ox, oy = ox - f(gw) / f(2), oy - f(gh) / f(2)
        # C++ casts truncate; a corner that overflowed to +-inf is far outside the image
        ox, oy = (int(min(max(float(v), -2.0 ** 62), 2.0 ** 62)) for v in (ox, oy))
        y0, y1 = max(oy, 0), min(oy + gh, height)
        x0, x1 = max(ox, 0), min(ox + gw, width)
        inside = y0 < y1 and x0 < x1
        if not (oy >= 0 and ox >= 0 and oy + gh <= height and ox + gw <= width):
            if noise != "zero" and x[i].size:
                rng = rng or (ctx if ctx is not None else KernelContext()).rng
                img = x[i].astype(np.float32)
                if noise == "uniform":
                    lo = img.min()
                    fill = lo + rng.random((gh, gw, c)).astype(np.float32) * (img.max() - lo)
                else:
                    mean, sd = img.mean(axis=(0, 1)), img.std(axis=(0, 1))
                    fill = np.clip(mean + rng.standard_normal((gh, gw, c)).astype(
                        np.float32) * sd, img.min(axis=(0, 1)), img.max(axis=(0, 1)))
                out[i] = fill.astype(x.dtype)
        if inside:
            out[i, y0 - oy:y1 - oy, x0 - ox:x1 - ox] = x[i, y0:y1, x0:x1]
    return (out,)


def _glimpse_infer(attrs, inputs):
    x, size = inputs[0], inputs[1]
    dims = (None, None)
    if size.value is not None:
        dims = tuple(int(v) for v in np.asarray(size.value).reshape(-1))
    n = x.shape[0] if x.shape is not None else None
    c = x.shape[3] if x.shape is not None else None
    return [TensorInfo(x.dtype, (n,) + dims + (c,))]


OPS = (
    define("CombinedNonMaxSuppression", ["boxes", "scores", "max_output_size_per_class",
                                         "max_total_size", "iou_threshold",
                                         "score_threshold"],
           ["nmsed_boxes", "nmsed_scores", "nmsed_classes", "valid_detections"],
           _combined_nms_kernel, [("pad_per_class", "int", 0), ("clip_boxes", "int", 1)],
           infer=_combined_infer, domain="onegraph"),
    define("DecodeImage", ["contents"], ["image"], _decode_image_kernel,
           [("channels", "int", 0), ("dtype", "string", "uint8")],
           infer=_decode_image_infer, domain="onegraph"),
    define("DecodeJpeg", ["contents"], ["image"], _decode_jpeg_kernel,
           [("channels", "int", 0), ("ratio", "int", 1)],
           infer=_decode_jpeg_infer, domain="onegraph"),
    define("DecodePng", ["contents"], ["image"], _decode_png_kernel,
           [("channels", "int", 0), ("dtype", "string", "uint8")],
           infer=_decode_png_infer, domain="onegraph"),
    define("DrawBoundingBoxes", ["images", "boxes", "colors?"], ["output"],
           _draw_boxes_kernel, infer=_same_infer, domain="onegraph"),
    define("EncodePng", ["image"], ["contents"], _encode_png_kernel,
           [("compression", "int", -1)], infer=_string_infer, domain="onegraph"),
    define("ExtractJpegShape", ["contents"], ["image_shape"], _jpeg_shape_kernel,
           [("output_type", "string", "int32")], infer=_jpeg_shape_infer,
           domain="onegraph"),
    define("ExtractGlimpse", ["input", "size", "offsets"], ["glimpse"], _glimpse_kernel,
           [("centered", "int", 1), ("normalized", "int", 1), ("noise", "string", "uniform")],
           infer=_glimpse_infer, stateful=True, domain="onegraph"),
    define("IsJpeg", ["contents"], ["is_jpeg"], _is_jpeg_kernel, infer=_bool_infer,
           domain="onegraph"),
    define("NonMaxSuppressionV5", ["boxes", "scores", "max_output_size", "iou_threshold",
                                   "score_threshold", "soft_nms_sigma"],
           ["selected_indices", "selected_scores", "valid_outputs"], _nms_v5_kernel,
           [("pad_to_max_output_size", "int", 0)], infer=_nms_v5_infer, domain="onegraph"),
    define("NonMaxSuppressionWithOverlaps", ["overlaps", "scores", "max_output_size",
                                             "overlap_threshold", "score_threshold"],
           ["selected_indices"], _nms_overlaps_kernel, infer=_indices_infer,
           domain="onegraph"),
    define("ResizeArea", ["images", "size"], ["resized_images"], _resize_area_kernel,
           [("align_corners", "int", 0)], infer=_resize_area_infer, domain="onegraph"),
    define("SampleDistortedBoundingBox", ["image_size", "bounding_boxes",
                                          "min_object_covered"],
           ["begin", "size", "bboxes"], _sample_box_kernel,
           [("seed", "float", None), ("aspect_ratio_range", "floats", [0.75, 1.33]),
            ("area_range", "floats", [0.05, 1.0]), ("max_attempts", "int", 100),
            ("use_image_if_no_bounding_boxes", "int", 0)],
           infer=_sample_box_infer, stateful=True, domain="onegraph"),
)
