"""GIF decoding in numpy and the standard library, as TF's gif decoder (giflib's
DGifSlurp, then TF's compositing) makes frames of a GIF87a/89a file.

parse() reads every image of the file into its descriptor, palette, graphics-control
transparency and de-interlaced colour indices (GIF's variable-width LZW, decoded here);
frames() stacks them the way TF does: the canvas is the largest frame's width and
height (not the logical screen's), each frame starts as a copy of the one before
(disposal methods are not applied, as in TF), the first frame's uncovered and
transparent pixels are black, and a transparent pixel keeps what was there.

Every defect (bad signature, truncation, an LZW code past the table, too few pixels,
no palette, an index past the palette) is a GifError (a ValueError) saying what is
wrong; the op kernels turn it into an ExecutionError.
"""

from __future__ import annotations

import numpy as np

_MAX_CODES = 4096


class GifError(ValueError):
    """A GIF file that cannot be decoded (what is wrong is the message)."""


class _Reader:
    """Bytes read in order; running past the end is a GifError naming `what`."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > len(self.data):
            raise GifError(f"GIF truncated: {what} needs {n} bytes at byte {self.pos}, "
                           f"the file has {len(self.data)}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self, what: str) -> int:
        return self.take(1, what)[0]

    def u16(self, what: str) -> int:
        b = self.take(2, what)
        return b[0] | (b[1] << 8)

    def blocks(self, what: str) -> list:
        """The data sub-blocks up to the empty one, as a list of bytes."""
        out = []
        while True:
            n = self.u8(what)
            if n == 0:
                return out
            out.append(self.take(n, what))


def lzw_decode(data: bytes, min_size: int, count: int) -> bytes:
    """The first `count` colour indices that GIF's LZW stream `data` (its sub-blocks
    joined) holds with root code size `min_size`; codes after them are ignored, as
    giflib skips them.

    Raises:
        GifError: a code past the table, the stream ending (or its end code) before
            `count` indices, or min_size outside 1..8.
    """
    if not 1 <= min_size <= 8:
        raise GifError(f"GIF LZW minimum code size must be 1 to 8, got {min_size}")
    clear, eoi = 1 << min_size, (1 << min_size) + 1
    roots = [bytes([i]) for i in range(clear)]
    table, width, prev = list(roots) + [b"", b""], min_size + 1, None
    out = bytearray()
    acc = nacc = pos = 0
    size = len(data)
    while len(out) < count:
        while nacc < width:
            if pos >= size:
                raise GifError(f"GIF image data ended after {len(out)} of {count} pixels")
            acc |= data[pos] << nacc
            pos += 1
            nacc += 8
        code = acc & ((1 << width) - 1)
        acc >>= width
        nacc -= width
        if code == clear:
            table, width, prev = list(roots) + [b"", b""], min_size + 1, None
            continue
        if code == eoi:
            raise GifError(f"GIF image data ended (end code) after {len(out)} of {count} "
                           f"pixels")
        nxt = len(table)
        if prev is None:
            if code >= clear:
                raise GifError(f"GIF image data is corrupt: code {code} right after a "
                               f"clear code")
            entry = table[code]
        else:
            if code < nxt:
                entry = table[code]
                first = entry[:1]
            elif code == nxt and nxt < _MAX_CODES:
                first = table[prev][:1]
                entry = table[prev] + first
            else:
                raise GifError(f"GIF image data is corrupt: code {code} is past the "
                               f"{nxt}-entry table")
            if nxt < _MAX_CODES:  # a full table is kept until the next clear code
                table.append(table[prev] + first)
                if len(table) >= (1 << width) and width < 12:
                    width += 1
        out += entry
        prev = code
    return bytes(out[:count])


def _deinterlace(idx: np.ndarray) -> np.ndarray:
    """Rows stored in GIF's four interlace passes back in top-to-bottom order."""
    h = idx.shape[0]
    order = np.concatenate([np.arange(0, h, 8), np.arange(4, h, 8), np.arange(2, h, 4),
                            np.arange(1, h, 2)])
    out = np.empty_like(idx)
    out[order] = idx
    return out


def _palette(r: _Reader, flags: int, what: str) -> np.ndarray:
    """The (n, 3) colour table that `flags` announces (bit 7, size bits 0-2)."""
    n = 2 << (flags & 7)
    return np.frombuffer(r.take(3 * n, what), np.uint8).reshape(n, 3)


def parse(data: bytes, max_pixels: int) -> list:
    """The images of a GIF file, in order: dicts with left, top, indices (h, w)
    uint8, palette ((n, 3) uint8 or None: the local table, else the global one) and
    transparent (the first graphics-control extension's index, or -1).

    Raises:
        GifError: not a GIF, truncated, corrupt image data, an empty frame, no
            images, or frames holding more than `max_pixels` indices in all.
    """
    r = _Reader(data)
    if r.take(6, "the signature")[:3] != b"GIF":
        raise GifError(f"not a GIF file: it starts with {data[:6]!r}")
    r.take(4, "the screen size")
    flags = r.u8("the screen descriptor")
    r.take(2, "the screen descriptor")
    screen_palette = _palette(r, flags, "the global colour table") if flags & 0x80 \
        else None
    images, transparent, total = [], -1, 0
    seen_gce = False
    while True:
        kind = r.u8("a block type")
        if kind == 0x3B:
            break
        if kind == 0x21:
            label = r.u8("an extension label")
            blocks = r.blocks("an extension")
            if label == 0xF9 and not seen_gce:
                # giflib reads the first graphics-control block before each image;
                # a malformed one leaves the frame without transparency
                seen_gce = True
                if blocks and len(blocks[0]) == 4 and blocks[0][0] & 1:
                    transparent = blocks[0][3]
            continue
        if kind != 0x2C:
            raise GifError(f"GIF is corrupt: unknown block type 0x{kind:02x} at byte "
                           f"{r.pos - 1}")
        left, top = r.u16("an image descriptor"), r.u16("an image descriptor")
        w, h = r.u16("an image descriptor"), r.u16("an image descriptor")
        iflags = r.u8("an image descriptor")
        local = _palette(r, iflags, "a local colour table") if iflags & 0x80 else None
        if w == 0 or h == 0:
            raise GifError(f"GIF frame {len(images)} is empty ({w} x {h})")
        total += w * h
        if total > max_pixels:
            raise GifError(f"GIF frames hold over {max_pixels} pixels")
        min_size = r.u8("the LZW code size")
        stream = b"".join(r.blocks("image data"))
        idx = np.frombuffer(lzw_decode(stream, min_size, w * h), np.uint8).reshape(h, w)
        if iflags & 0x40:
            idx = _deinterlace(idx)
        images.append({"left": left, "top": top, "indices": idx, "transparent": transparent,
                       "palette": local if local is not None else screen_palette})
        transparent, seen_gce = -1, False
    if not images:
        raise GifError("GIF file does not contain any image")
    return images


def frames(images: list, count: int | None = None) -> np.ndarray:
    """The first `count` (all when None) frames that TF's decoder composes from
    parse()'s images: uint8 (frames, height, width, 3) on a canvas of the largest
    frame's height and width.

    Raises:
        GifError: a frame without a palette, or an index past its palette.
    """
    height = max(im["indices"].shape[0] for im in images)
    width = max(im["indices"].shape[1] for im in images)
    count = len(images) if count is None else count
    out = np.zeros((count, height, width, 3), np.uint8)
    for k, im in enumerate(images[:count]):
        if k:
            out[k] = out[k - 1]
        idx, pal = im["indices"], im["palette"]
        top, left = im["top"], im["left"]
        bottom, right = min(top + idx.shape[0], height), min(left + idx.shape[1], width)
        if pal is None:
            raise GifError(f"GIF frame {k} has no colour map (no local or global table)")
        if bottom <= top or right <= left:
            continue
        part = idx[:bottom - top, :right - left]
        keep = part == im["transparent"]
        bad = (part >= len(pal)) & ~keep
        if bad.any():
            raise GifError(f"GIF frame {k}: found colour index {int(part[bad].max())} "
                           f"outside of the colour map's {len(pal)} entries")
        colours = pal[np.minimum(part, len(pal) - 1)]
        region = out[k, top:bottom, left:right]
        region[~keep] = colours[~keep]
    return out
