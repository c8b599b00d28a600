"""og.train's checkpoint readers on TensorFlow V2 checkpoints (tensor bundles).

The fixtures under data/tf_checkpoints were written by tf.compat.v1 2.21's Saver, and
expected.npz holds what TF itself read back from them (tools/record_tf_checkpoints.py),
so TF is the oracle; TensorFlow is not needed here."""

import os
import shutil

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import DataLossError, NotFoundError
from onegraph.train.checkpoint_utils import CheckpointNotFoundError
from onegraph.train.tf_checkpoint import TFCheckpointReader, crc32c, masked_crc32c

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_checkpoints")
CKPTS = ("basic", "adam", "sharded")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(DATA, "expected.npz"), allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _prefix(expected, name):
    return os.path.join(DATA, name, expected[f"prefix/{name}"].item().decode())


def _tf_list(expected, name):
    """TF's list_variables of one fixture, rebuilt from the flat arrays."""
    names = [n.decode() for n in expected[f"list/{name}/names"]]
    ranks, dims = expected[f"list/{name}/ranks"], expected[f"list/{name}/shapes"].tolist()
    out, i = [], 0
    for n, r in zip(names, ranks):
        out.append((n, dims[i:i + r]))
        i += r
    return out


@pytest.mark.parametrize("name", CKPTS)
def test_list_variables_matches_tf(expected, name):
    assert og.train.list_variables(_prefix(expected, name)) == _tf_list(expected, name)
    assert og.train.list_variables(os.path.join(DATA, name)) == _tf_list(expected, name)


@pytest.mark.parametrize("name", CKPTS)
def test_every_tensor_equals_tf(expected, name):
    reader = og.train.NewCheckpointReader(_prefix(expected, name))
    for var, _ in _tf_list(expected, name):
        want = expected[f"{name}/{var}"]
        got = reader.get_tensor(var)
        if want.dtype.kind == "S":  # TF's object array of bytes, stored fixed-width
            assert got.dtype == object and got.shape == want.shape
            assert got.tolist() == want.tolist()
            continue
        assert got.dtype == want.dtype and got.shape == want.shape, var
        np.testing.assert_array_equal(got, want)


def test_reader_api_names_dtypes_and_shapes(expected):
    reader = og.train.load_checkpoint(os.path.join(DATA, "basic"))
    dtypes = reader.get_variable_to_dtype_map()
    assert dtypes["f32"] is og.float32 and dtypes["f64"] is og.float64
    assert dtypes["i64"] is og.int64 and dtypes["flag"] is og.bool
    assert dtypes["words"] is og.string
    shapes = reader.get_variable_to_shape_map()
    assert shapes["layer/dense/kernel"] == [3, 2] and shapes["scalar"] == []
    assert shapes["empty"] == [0, 4]
    assert reader.has_tensor("layer/dense/kernel:0") and not reader.has_tensor("nope")
    with pytest.raises(NotFoundError, match="nope"):
        reader.get_tensor("nope")
    value = og.train.load_variable(os.path.join(DATA, "adam"), "w/Adam")
    np.testing.assert_array_equal(value, expected["adam/w/Adam"])


def test_latest_checkpoint_reads_tfs_checkpoint_file(expected):
    assert og.train.latest_checkpoint(os.path.join(DATA, "adam")) == _prefix(expected,
                                                                             "adam")


def test_saver_restores_og_variables_from_a_tf_checkpoint(expected):
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.zeros((2, 1), np.float32), name="w")
        step = og.Variable(np.int64(0), name="global_step")
        saver = og.train.Saver([w, step])
        with og.Session(g) as sess:
            sess.run(og.global_variables_initializer())
            saver.restore(sess, _prefix(expected, "adam"))
            got_w, got_step = sess.run([w, step])
    np.testing.assert_array_equal(got_w, expected["adam/w"])
    assert got_step == expected["adam/global_step"]


def test_crc32c_is_castagnoli():
    # the standard check value of CRC-32C, and zlib's CRC-32 differs
    assert crc32c(b"123456789") == 0xE3069283
    data = np.random.default_rng(0).integers(0, 256, 300_001, dtype=np.uint8).tobytes()
    # the vectorised path equals the byte loop run in two parts
    assert crc32c(data) == crc32c(data[150_000:], crc32c(data[:150_000]))
    assert masked_crc32c(b"") == 0xA282EAD8


def _copy(tmp_path, name, expected):
    target = tmp_path / name
    shutil.copytree(os.path.join(DATA, name), target)
    return str(target / expected[f"prefix/{name}"].item().decode())


def _flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x40]))


def test_truncated_index_is_data_loss(tmp_path, expected):
    prefix = _copy(tmp_path, "basic", expected)
    with open(prefix + ".index", "r+b") as f:
        f.truncate(os.path.getsize(prefix + ".index") - 20)
    with pytest.raises(DataLossError, match="model.index"):
        og.train.list_variables(prefix)
    with open(prefix + ".index", "r+b") as f:
        f.truncate(10)
    with pytest.raises(DataLossError, match="truncated"):
        og.train.list_variables(prefix)


def test_wrong_magic_is_data_loss(tmp_path, expected):
    prefix = _copy(tmp_path, "basic", expected)
    _flip(prefix + ".index", os.path.getsize(prefix + ".index") - 1)
    with pytest.raises(DataLossError, match="magic"):
        og.train.NewCheckpointReader(prefix)


def test_corrupted_index_block_is_data_loss(tmp_path, expected):
    prefix = _copy(tmp_path, "basic", expected)
    _flip(prefix + ".index", 3)
    with pytest.raises(DataLossError, match="CRC"):
        og.train.list_variables(prefix)


@pytest.mark.parametrize("var", ["f32", "words"])
def test_flipped_data_byte_is_data_loss(tmp_path, expected, var):
    prefix = _copy(tmp_path, "basic", expected)
    entry = TFCheckpointReader(prefix)._entries[var]
    _flip(prefix + ".data-00000-of-00001", entry.offset + entry.size - 1)
    with pytest.raises(DataLossError, match=var):
        og.train.load_variable(prefix, var)
    og.train.load_variable(prefix, "i32")  # the other tensors are intact


def test_truncated_shard_is_data_loss(tmp_path, expected):
    prefix = _copy(tmp_path, "basic", expected)
    with open(prefix + ".data-00000-of-00001", "r+b") as f:
        f.truncate(10)
    with pytest.raises(DataLossError, match="truncated"):
        og.train.load_variable(prefix, "words")


def test_missing_shard_is_checkpoint_not_found(tmp_path, expected):
    prefix = _copy(tmp_path, "sharded", expected)
    os.remove(prefix + ".data-00001-of-00002")
    with pytest.raises(CheckpointNotFoundError, match="data-00001-of-00002"):
        og.train.list_variables(prefix)


def test_missing_prefix_is_checkpoint_not_found(tmp_path):
    with pytest.raises(CheckpointNotFoundError):
        og.train.list_variables(str(tmp_path / "model"))


def _rewrite_first_block(index_path, edit):
    """Apply `edit` (bytearray block contents, bytearray trailer) to the index file's
    single data block, then store a valid CRC again (so only the edit is wrong). The
    data block is at offset 0 and ends 5 bytes before the metaindex block, whose
    offset is the footer's first varint."""
    data = bytearray(open(index_path, "rb").read())
    footer, meta, shift, i = data[-48:], 0, 0, 0
    while True:
        meta |= (footer[i] & 0x7F) << shift
        shift, i = shift + 7, i + 1
        if not footer[i - 1] & 0x80:
            break
    size = meta - 5
    block, trailer = data[:size], data[size:size + 5]
    edit(block, trailer)
    trailer[1:5] = masked_crc32c(bytes(block) + bytes(trailer[:1])).to_bytes(4, "little")
    data[:size + 5] = block + trailer
    open(index_path, "wb").write(bytes(data))


def test_compressed_block_is_data_loss(tmp_path, expected):
    prefix = _copy(tmp_path, "basic", expected)

    def snappy(block, trailer):
        trailer[0] = 1

    _rewrite_first_block(prefix + ".index", snappy)
    with pytest.raises(DataLossError, match="compressed"):
        og.train.list_variables(prefix)


def test_unknown_dtype_is_data_loss(tmp_path, expected):
    prefix = _copy(tmp_path, "basic", expected)

    def unknown_dtype(block, trailer):
        # f64's entry is the only one starting 08 02 (dtype DT_DOUBLE) after its key,
        # stored as "64" (it shares "f" with the key before)
        at = bytes(block).index(b"64\x08\x02") + 3
        block[at] = 99

    _rewrite_first_block(prefix + ".index", unknown_dtype)
    with pytest.raises(DataLossError, match="unknown TF dtype code 99"):
        og.train.list_variables(prefix)
