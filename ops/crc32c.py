"""CRC-32C (Castagnoli), as LevelDB tables, TF's checkpoints and TFRecord files use it,
and LevelDB's masking of it. A table loop for short buffers, numpy lanes chained by
CRC linearity for long ones."""

from __future__ import annotations

import numpy as np

_MASK_DELTA = 0xA282EAD8  # LevelDB's CRC masking constant
_CASTAGNOLI = 0x82F63B78  # CRC-32C polynomial, reflected

__all__ = ["crc32c", "mask", "masked_crc32c"]


def _make_table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ _CASTAGNOLI if c & 1 else c >> 1
        table[b] = c
    return table


_TABLE = _make_table()
_TABLE_LIST = [int(v) for v in _TABLE]


def _raw_scalar(state: int, data) -> int:
    """The CRC register after feeding `data` into `state` (no pre/post inversion)."""
    table = _TABLE_LIST
    for b in data:
        state = table[(state ^ b) & 0xFF] ^ (state >> 8)
    return state


def _zeros_operator(n: int) -> list:
    """The linear map 'feed n zero bytes' on the 32-bit register, as the images of its
    32 unit vectors (GF(2) matrix columns), by repeated squaring."""
    def apply(cols, v):
        out, i = 0, 0
        while v:
            if v & 1:
                out ^= cols[i]
            v >>= 1
            i += 1
        return out

    result = [1 << i for i in range(32)]
    power = [_raw_scalar(1 << i, b"\0") for i in range(32)]  # one zero byte
    while n:
        if n & 1:
            result = [apply(power, c) for c in result]
        power = [apply(power, c) for c in power]
        n >>= 1
    return result


def _byte_tables(cols: list) -> list:
    """Per byte position of the register, {byte value: image under the map}."""
    tables = []
    for pos in range(4):
        t = []
        for b in range(256):
            out, v, i = 0, b << (8 * pos), 0
            while v:
                if v & 1:
                    out ^= cols[i]
                v >>= 1
                i += 1
            t.append(out)
        tables.append(t)
    return tables


def _raw_vectorized(state: int, data: np.ndarray) -> int:
    """As _raw_scalar for big buffers: the data is cut into `lanes` equal chunks whose
    registers numpy advances together, then the chunks are chained with the linear
    'feed L zero bytes' map (CRC linearity: crc(s, A+B) = Z_|B|(crc(s, A)) ^ crc(0, B))."""
    lanes = 4096
    length = data.size // lanes
    body = data[:lanes * length].reshape(lanes, length).T.copy()  # column j: byte j of each
    regs = np.zeros(lanes, np.uint32)
    for j in range(length):
        regs = _TABLE[(regs ^ body[j]) & 0xFF] ^ (regs >> np.uint32(8))
    tables = _byte_tables(_zeros_operator(length))
    t0, t1, t2, t3 = tables
    for r in regs.tolist():
        state = (t0[state & 0xFF] ^ t1[(state >> 8) & 0xFF] ^ t2[(state >> 16) & 0xFF]
                 ^ t3[state >> 24] ^ r)
    return _raw_scalar(state, data[lanes * length:].tobytes())


def crc32c(data, crc: int = 0) -> int:
    """CRC-32C (Castagnoli) of `data` (bytes-like), continuing from `crc`. Never raises
    for bytes-like input."""
    buf = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    state = crc ^ 0xFFFFFFFF
    if buf.size < 1 << 16:  # the table loop is quicker than numpy's set-up here
        state = _raw_scalar(state, buf.tobytes())
    else:
        state = _raw_vectorized(state, buf)
    return state ^ 0xFFFFFFFF


def masked_crc32c(data) -> int:
    """LevelDB's masked CRC-32C of `data` (rotated right by 15 bits plus a constant), as
    stored in table block trailers and TF's string tensors."""
    return mask(crc32c(data))


def mask(crc: int) -> int:
    """LevelDB's masking of a CRC (so CRCs of data holding CRCs stay well spread)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF
