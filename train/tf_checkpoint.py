"""Reading TensorFlow's V2 checkpoints (tensor bundles) with numpy only.

A TF checkpoint with prefix P is:

- `P.index`: an SSTable (LevelDB table format, uncompressed) whose keys are tensor
  names and whose values are serialized BundleEntryProto messages (dtype, shape,
  shard, offset, size, crc32c); the empty key holds the BundleHeaderProto (number of
  shards, endianness);
- `P.data-0000i-of-0000N`: the shards holding each tensor's raw little-endian bytes
  (string tensors: the varint64 lengths of all elements, a masked CRC-32C of those
  lengths, then the bytes);
- `checkpoint` in the directory: a text index (`model_checkpoint_path: "..."`).

`TFCheckpointReader` exposes TF1's CheckpointReader API. Every block CRC of the index
is checked when it is opened and every tensor's CRC-32C when it is read (as og's own
reader verifies every checksum), so damage raises DataLossError instead of giving
wrong values; a missing file raises CheckpointNotFoundError (from checkpoint_utils,
via `not_found`, which the caller passes so this module does not import it).
"""

from __future__ import annotations

import codecs
import os
import re

import numpy as np

from ..errors import DataLossError, FormatError, NotFoundError
from ..format import DType
from ..ops.crc32c import crc32c, mask, masked_crc32c  # noqa: F401 - (its API too)

TABLE_MAGIC = 0xDB4775248B80FB57  # LevelDB table footer magic (little-endian fixed64)
FOOTER_SIZE = 48  # two BlockHandles padded to 40 bytes, then the magic
BLOCK_TRAILER = 5  # compression type byte + masked CRC-32C

# TF's DataType enum codes -> og dtypes (None: a TF type og has no dtype for)
_TF_DTYPES = {
    1: DType.FLOAT32, 2: DType.FLOAT64, 3: DType.INT32, 4: DType.UINT8, 5: DType.INT16,
    6: DType.INT8, 7: DType.STRING, 8: None, 9: DType.INT64, 10: DType.BOOL,
    11: None, 12: None, 13: None, 14: DType.BFLOAT16, 15: None, 16: None,
    17: DType.UINT16, 18: None, 19: DType.FLOAT16, 20: None, 21: None,
    22: DType.UINT32, 23: DType.UINT64,
}
_TF_DTYPE_NAMES = {8: "complex64", 11: "qint8", 12: "quint8", 13: "qint32", 15: "qint16",
                   16: "quint16", 18: "complex128", 20: "resource", 21: "variant"}


# --- byte decoding -------------------------------------------------------------------------

class _Bytes:
    """A cursor over bytes whose reads past the end raise DataLossError naming `what`."""

    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def varint(self, limit: int = 64) -> int:
        value, shift = 0, 0
        while True:
            if self.pos >= len(self.data):
                raise DataLossError(f"{self.what}: truncated varint")
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift >= limit + 6:
                raise DataLossError(f"{self.what}: varint longer than {limit} bits")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise DataLossError(f"{self.what}: {n} bytes asked at {self.pos}, only "
                                f"{len(self.data) - self.pos} left (truncated)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def fixed32(self) -> int:
        return int.from_bytes(self.take(4), "little")


def _proto_fields(data: bytes, what: str) -> list:
    """[(field number, value)] of a protobuf message: ints for varint and fixed fields,
    bytes for length-delimited ones.

    Raises:
        DataLossError: the message is malformed (names `what`).
    """
    cur, out = _Bytes(data, what), []
    while not cur.at_end():
        tag = cur.varint()
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            out.append((field, cur.varint()))
        elif wire == 1:
            out.append((field, int.from_bytes(cur.take(8), "little")))
        elif wire == 2:
            out.append((field, cur.take(cur.varint())))
        elif wire == 5:
            out.append((field, cur.fixed32()))
        else:
            raise DataLossError(f"{what}: protobuf wire type {wire} is not supported")
    return out


def _int64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


# --- the SSTable ---------------------------------------------------------------------------

def _block_handle(cur: _Bytes) -> tuple:
    return cur.varint(), cur.varint()


def _read_block(table: bytes, handle: tuple, path: str) -> bytes:
    """The checked contents of the block at `handle` (offset, size).

    Raises:
        DataLossError: past the end of the file, compressed, or its CRC differs.
    """
    offset, size = handle
    end = offset + size + BLOCK_TRAILER
    if end > len(table):
        raise DataLossError(f"TF checkpoint index {path}: block at {offset} (+{size}) runs "
                            f"past the end of the file ({len(table)} bytes): truncated")
    contents = table[offset:offset + size]
    kind = table[offset + size]
    stored = int.from_bytes(table[offset + size + 1:end], "little")
    if masked_crc32c(contents + bytes([kind])) != stored:
        raise DataLossError(f"TF checkpoint index {path}: block at {offset} fails its "
                            "CRC-32C check (corrupted)")
    if kind != 0:
        raise DataLossError(f"TF checkpoint index {path}: block at {offset} is compressed "
                            f"(type {kind}); TF writes bundles uncompressed, only those "
                            "are read")
    return contents


def _block_entries(block: bytes, path: str) -> list:
    """[(key, value)] of one table block, in order.

    Raises:
        DataLossError: the block is malformed.
    """
    what = f"TF checkpoint index {path}"
    if len(block) < 4:
        raise DataLossError(f"{what}: block of {len(block)} bytes is too short")
    restarts = int.from_bytes(block[-4:], "little")
    limit = len(block) - 4 - 4 * restarts
    if restarts < 1 or limit < 0:
        raise DataLossError(f"{what}: block has a bad restart count {restarts}")
    cur, key, out = _Bytes(block[:limit], what), b"", []
    while not cur.at_end():
        shared, unshared, vlen = cur.varint(32), cur.varint(32), cur.varint(32)
        if shared > len(key):
            raise DataLossError(f"{what}: entry shares {shared} bytes of a {len(key)}-byte "
                                "key")
        key = key[:shared] + cur.take(unshared)
        out.append((key, cur.take(vlen)))
    return out


def _table_entries(path: str) -> list:
    """[(key, value)] of every entry of the SSTable file `path`.

    Raises:
        DataLossError: truncated, bad magic, a damaged or compressed block.
    """
    with open(path, "rb") as f:
        table = f.read()
    if len(table) < FOOTER_SIZE:
        raise DataLossError(f"TF checkpoint index {path}: {len(table)} bytes, shorter than "
                            "a table footer (truncated)")
    footer = table[-FOOTER_SIZE:]
    if int.from_bytes(footer[-8:], "little") != TABLE_MAGIC:
        raise DataLossError(f"TF checkpoint index {path}: bad table magic "
                            f"0x{int.from_bytes(footer[-8:], 'little'):016x} (not a TF "
                            "checkpoint index, or truncated)")
    cur = _Bytes(footer[:-8], f"TF checkpoint index {path} footer")
    _block_handle(cur)  # metaindex: TF writes no filters, nothing to read there
    index = _read_block(table, _block_handle(cur), path)
    entries = []
    for _, handle in _block_entries(index, path):
        h = _block_handle(_Bytes(handle, f"TF checkpoint index {path}"))
        entries += _block_entries(_read_block(table, h, path), path)
    return entries


# --- bundle entries ------------------------------------------------------------------------

class _Entry:
    """One BundleEntryProto: where a tensor's bytes are and what they hold."""

    def __init__(self, name: str, value: bytes, path: str):
        what = f"TF checkpoint index {path}: entry {name!r}"
        self.dtype_code, self.shape, self.shard = 0, [], 0
        self.offset, self.size, self.crc, self.sliced = 0, 0, None, False
        for field, v in _proto_fields(value, what):
            if field == 1:
                self.dtype_code = v
            elif field == 2:
                self.shape = _shape(v, what)
            elif field == 3:
                self.shard = v
            elif field == 4:
                self.offset = v
            elif field == 5:
                self.size = v
            elif field == 6:
                self.crc = v
            elif field == 7:
                self.sliced = True
        if self.dtype_code not in _TF_DTYPES:
            raise DataLossError(f"{what}: unknown TF dtype code {self.dtype_code}")


def _shape(data: bytes, what: str) -> list:
    """The dims of a TensorShapeProto.

    Raises:
        DataLossError: a dim is negative (unknown) or the message is malformed.
    """
    dims = []
    for field, v in _proto_fields(data, what + " shape"):
        if field == 2:
            size = 0
            for f, d in _proto_fields(v, what + " dim"):
                if f == 1:
                    size = _int64(d)
            if size < 0:
                raise DataLossError(f"{what}: stored shape has dim {size}")
            dims.append(size)
        elif field == 3 and v:
            raise DataLossError(f"{what}: stored shape has unknown rank")
    return dims


def _header(value: bytes, path: str) -> int:
    """The number of shards of a BundleHeaderProto.

    Raises:
        DataLossError: big-endian or malformed header.
    """
    shards, endianness = 1, 0
    for field, v in _proto_fields(value, f"TF checkpoint index {path}: header"):
        if field == 1:
            shards = v
        elif field == 2:
            endianness = v
    if endianness != 0:
        raise DataLossError(f"TF checkpoint index {path}: big-endian bundles are not read")
    if shards < 1:
        raise DataLossError(f"TF checkpoint index {path}: header records {shards} shards")
    return shards


def _length_bytes(lengths) -> bytes:
    """String lengths as TF checksums them: uint32 each (uint64 when one does not fit)."""
    return b"".join(n.to_bytes(4 if n < 1 << 32 else 8, "little") for n in lengths)


def _decode_strings(raw: bytes, count: int, what: str) -> tuple:
    """(object array of `count` bytes elements, TF's tensor CRC-32C of them) from TF's
    string tensor encoding. That CRC covers the fixed-width lengths, the stored (masked)
    lengths checksum, then the elements' bytes.

    Raises:
        DataLossError: the lengths' checksum differs or the bytes run short or over.
    """
    cur = _Bytes(raw, what)
    lengths = [cur.varint() for _ in range(count)]
    fixed = _length_bytes(lengths)
    stored = cur.take(4)
    if masked_crc32c(fixed) != int.from_bytes(stored, "little"):
        raise DataLossError(f"{what}: string lengths fail their CRC-32C check (corrupted)")
    crc = crc32c(fixed + stored)
    out = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        out[i] = bytes(cur.take(n))
        crc = crc32c(out[i], crc)
    if not cur.at_end():
        raise DataLossError(f"{what}: {len(raw) - cur.pos} bytes beyond its strings")
    return out, crc


# --- the reader ----------------------------------------------------------------------------

def shard_path(prefix: str, shard: int, shards: int) -> str:
    """The data file of one shard of the bundle at `prefix`. Never raises."""
    return f"{prefix}.data-{shard:05d}-of-{shards:05d}"


def is_tf_checkpoint(prefix: str) -> bool:
    """Whether `prefix` names a TF V2 checkpoint (`prefix.index` exists). Never raises
    for a path."""
    return os.path.isfile(prefix + ".index")


def tf_checkpoint_state(directory: str, filename: str = "checkpoint"):
    """(latest, [all, oldest first]) as TF's checkpoint state text file `filename` in
    `directory` records them (C-escaped, relative paths taken in the directory; as TF1's
    get_checkpoint_state reads it), or None when there is no such file.

    Raises:
        DataLossError: the file is unreadable or has no model_checkpoint_path.
    """
    path = os.path.join(directory, filename)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise DataLossError(f"TF checkpoint state {path} is unreadable: {e}") from e

    def paths(field):
        found = re.findall(rf'^{field}:\s*"((?:[^"\\]|\\.)*)"', text, re.M)
        # TF writes the paths C-escaped (non-ASCII bytes as octal escapes)
        out = [os.fsdecode(codecs.escape_decode(p.encode("utf-8"))[0]) for p in found]
        return [p if os.path.isabs(p) else os.path.join(directory, p) for p in out]

    latest = paths("model_checkpoint_path")
    if not latest:
        raise DataLossError(f"TF checkpoint state {path} has no model_checkpoint_path")
    return latest[0], paths("all_model_checkpoint_paths")


def tf_latest_checkpoint(directory: str) -> str | None:
    """The prefix TF's `checkpoint` text file in `directory` records as latest, if its
    index exists (relative prefixes are taken in the directory); else None.

    Raises:
        DataLossError: the `checkpoint` file is not TF's text format.
    """
    state = tf_checkpoint_state(directory)
    if state is None:
        return None
    return state[0] if is_tf_checkpoint(state[0]) else None


class TFCheckpointReader:
    """The tensors of a TF V2 checkpoint (tensor bundle) at `prefix` (TF1's
    CheckpointReader on it). The index is read and checked when made; each tensor is
    read from its shard, and its CRC-32C checked, when asked for.

    Raises (constructor):
        `not_found` (og's CheckpointNotFoundError): no `prefix.index`, or a data shard
            is missing.
        DataLossError: the index is truncated, corrupted (block CRC, bad magic),
            compressed, or records an unknown dtype or a malformed entry.
    """

    def __init__(self, prefix: str, not_found=NotFoundError):
        self.path = prefix
        index = prefix + ".index"
        if not os.path.isfile(index):
            raise not_found(f"TFCheckpointReader: no TF checkpoint index {index}")
        entries = _table_entries(index)
        shards = 1
        self._entries = {}
        for key, value in entries:
            if key == b"":
                shards = _header(value, index)
                continue
            try:
                name = key.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DataLossError(f"TF checkpoint index {index}: key {key!r} is not "
                                    "UTF-8") from e
            self._entries[name] = _Entry(name, value, index)
        self._shards = [shard_path(prefix, i, shards) for i in range(shards)]
        for path in self._shards:
            if not os.path.isfile(path):
                raise not_found(f"TFCheckpointReader: data shard {path} of TF checkpoint "
                                f"{prefix} is missing")
        for name, e in self._entries.items():
            if e.shard >= shards:
                raise DataLossError(f"TF checkpoint index {index}: entry {name!r} is in "
                                    f"shard {e.shard} of {shards}")

    def has_tensor(self, name: str) -> bool:
        """Whether the checkpoint holds a tensor named `name`. Never raises."""
        return _plain(name) in self._entries

    def get_variable_to_shape_map(self) -> dict:
        """{tensor name: its shape as a list}. Never raises."""
        return {k: list(e.shape) for k, e in self._entries.items()}

    def get_variable_to_dtype_map(self) -> dict:
        """{tensor name: its og dtype}.

        Raises:
            FormatError: a tensor's TF dtype has no og dtype (e.g. complex64).
        """
        return {k: self._dtype(k, e) for k, e in self._entries.items()}

    def _dtype(self, name: str, entry: _Entry) -> DType:
        dtype = _TF_DTYPES[entry.dtype_code]
        if dtype is None:
            raise FormatError(f"TFCheckpointReader: tensor {name!r} of {self.path} has TF "
                              f"dtype {_TF_DTYPE_NAMES[entry.dtype_code]}, which onegraph "
                              "has no dtype for")
        return dtype

    def get_tensor(self, name: str) -> np.ndarray:
        """The stored value of tensor `name` ("name:0" accepted), a new array (string
        tensors: an object array of bytes, as TF).

        Raises:
            NotFoundError: no such tensor.
            DataLossError: its bytes are truncated or fail their CRC-32C check.
            FormatError: a dtype og has not, or a partitioned (sliced) variable.
        """
        key = _plain(name)
        entry = self._entries.get(key)
        if entry is None:
            raise NotFoundError(f"Key {key} not found in checkpoint {self.path}")
        dtype = self._dtype(key, entry)
        if entry.sliced:
            raise FormatError(f"TFCheckpointReader: tensor {key!r} of {self.path} is a "
                              "partitioned variable (saved in slices), not supported")
        raw = self._raw(key, entry)
        what = f"TF checkpoint {self.path}: tensor {key!r}"
        count = int(np.prod(entry.shape, dtype=np.int64))
        if dtype is DType.STRING:
            value, crc = _decode_strings(raw, count, what)
        else:
            if len(raw) != count * dtype.itemsize:
                raise DataLossError(f"{what}: {len(raw)} bytes for {count} elements of "
                                    f"{dtype.short_name}")
            crc = crc32c(raw)
            value = np.frombuffer(raw, dtype.numpy).copy()
        if entry.crc is not None and mask(crc) != entry.crc:
            raise DataLossError(f"{what}: its bytes fail their CRC-32C check (corrupted)")
        return value.reshape(entry.shape)

    def _raw(self, name: str, entry: _Entry) -> bytes:
        """The bytes of one tensor from its shard.

        Raises:
            DataLossError: the shard is shorter than the entry says.
        """
        path = self._shards[entry.shard]
        with open(path, "rb") as f:
            f.seek(entry.offset)
            raw = f.read(entry.size)
        if len(raw) != entry.size:
            raise DataLossError(f"TF checkpoint shard {path}: tensor {name!r} needs bytes "
                                f"[{entry.offset}, {entry.offset + entry.size}), the file "
                                "ends before (truncated)")
        return raw


def _plain(name) -> str:
    """A tensor name without TF1's ":0" output suffix."""
    name = str(name)
    return name[:-2] if name.endswith(":0") else name


def tf_to_og_checkpoint(prefix: str, path: str) -> str:
    """Write the tensors of the TF V2 checkpoint at `prefix` as an og checkpoint file
    `path` (so og's Restore op can assign them by name); returns `path`. Tensors og
    cannot hold (a dtype it has not, partitioned variables) are left out: restoring a
    variable from one then fails as for any variable the file lacks.

    Raises:
        CheckpointNotFoundError: no `prefix.index`, or a data shard is missing.
        DataLossError: the index or a tensor is truncated or corrupted.
    """
    from ..ops.checkpoint import write_checkpoint
    from .checkpoint_utils import CheckpointNotFoundError  # here: it imports this module
    reader = TFCheckpointReader(prefix, not_found=CheckpointNotFoundError)
    values = []
    for name, entry in reader._entries.items():
        if _TF_DTYPES[entry.dtype_code] is None or entry.sliced:
            continue
        values.append((name, reader.get_tensor(name)))
    write_checkpoint(path, values, {"converted_from": prefix})
    return path
