"""og.data (train/data.py, ops/dataset.py) against TF1's tf.data: the element sequences,
types and shapes TF 2.21 gives for the same pipelines (recorded by
tools/record_tf_data.py into data/tf1_data_reference.json), plus shuffle's properties,
MonitoredSession, and the errors."""

from __future__ import annotations

import base64
import json
import os
import struct

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import DataLossError, ExecutionError, OutOfRangeError
from onegraph.ops import dataset as dataset_ops
from onegraph.train import data as tfdata
from onegraph.train.tfrecord import read_records

from .data_cases import (CAPTURE_FEEDS, FILES, capturing, feedable, pipelines,
                         sparse_pipelines, window_pipelines)

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "tf1_data_reference.json")) as _f:
    REF = json.load(_f)

D = tfdata.Dataset


def _flat(value) -> list:
    if isinstance(value, tuple) and not isinstance(value, og.TensorShape):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _flat(value[k])]
    return [value]


def _expected_component(ref: dict, as_bytes: bool):
    if ref["dtype"] == "bytes":
        raw = [v.encode("latin-1") for v in ref["values"]]
        values = raw if as_bytes else [v.decode("utf-8") for v in raw]
        out = np.empty(len(values), object)
        out[:] = values
        return out.reshape(ref["shape"])
    return np.array(ref["values"], dtype=ref["dtype"]).reshape(ref["shape"])


def _check_elements(got: list, want: list, as_bytes: bool = False) -> None:
    assert len(got) == len(want)
    for g_element, w_element in zip(got, want):
        g_flat = _flat(g_element)
        assert len(g_flat) == len(w_element)
        for g, w in zip(g_flat, w_element):
            expected = _expected_component(w, as_bytes)
            g = np.asarray(g)
            assert g.shape == expected.shape
            assert g.dtype == expected.dtype
            assert g.tolist() == expected.tolist()


def _drain(sess, nxt) -> list:
    out = []
    while True:
        try:
            out.append(sess.run(nxt))
        except OutOfRangeError:
            return out


def _shape_list(s):
    return None if s.ndims is None else list(s)


@pytest.fixture
def files(tmp_path):
    """The files TF read when recording, written back from the recording."""
    paths = {k: tmp_path / k for k in FILES}
    paths["text"].write_bytes(REF["files"]["text"].encode())
    for name in FILES[1:]:
        paths[name].write_bytes(base64.b64decode(REF["files"][name]))
    return {k: str(p) for k, p in paths.items()}


SCENARIOS = sorted(k for k in REF if "elements" in REF[k])


def test_every_recorded_scenario_is_built():
    with og.Graph().as_default():
        assert set(SCENARIOS) == set(pipelines(og, dict.fromkeys(FILES, "")))


@pytest.mark.parametrize("name", SCENARIOS)
def test_elements_types_and_shapes_match_tf(name, files):
    ref = REF[name]
    with og.Graph().as_default():
        ds = pipelines(og, files)[name]
        assert [t.short_name for t in _flat(ds.output_types)] == ref["types"]
        assert [_shape_list(s) for s in _flat(ds.output_shapes)] == ref["shapes"]
        it = tfdata.make_one_shot_iterator(ds)
        nxt = it.get_next()
        assert [_shape_list(t.get_shape()) for t in _flat(nxt)] == ref["shapes"]
        with og.Session() as sess:
            # TFRecords are bytes, other strings str (onegraph's strings)
            records = "tfrecords" in name or name == "interleave_files"
            _check_elements(_drain(sess, nxt), ref["elements"], as_bytes=records)


def test_initializable_iterator_fed_twice():
    ref = REF["initializable"]
    with og.Graph().as_default():
        ph = og.placeholder(og.float32, [None])
        ds = D.from_tensor_slices(ph).map(lambda x: x * 10)
        it = ds.make_initializable_iterator()
        nxt = it.get_next()
        assert [_shape_list(s) for s in _flat(it.output_shapes)] == ref["shapes"]
        with og.Session() as sess:
            sess.run(it.initializer, {ph: [1, 2, 3]})
            _check_elements(_drain(sess, nxt), ref["first"])
            sess.run(it.initializer, {ph: [7, 8]})
            _check_elements(_drain(sess, nxt), ref["second"])


def test_initializer_restarts_mid_sequence():
    with og.Graph().as_default():
        it = tfdata.make_initializable_iterator(D.range(5))
        nxt = it.get_next()
        with og.Session() as sess:
            sess.run(it.initializer)
            assert [int(sess.run(nxt)) for _ in range(3)] == [0, 1, 2]
            sess.run(it.initializer)
            assert [int(sess.run(nxt)) for _ in range(2)] == [0, 1]


def test_reinitializable_iterator_switches_datasets():
    ref = REF["reinitializable"]
    with og.Graph().as_default():
        it = tfdata.Iterator.from_structure(og.int64, og.TensorShape([]))
        i1 = it.make_initializer(D.range(3))
        i2 = it.make_initializer(D.range(100, 102).map(lambda x: x * 2))
        nxt = it.get_next()
        assert _shape_list(nxt.get_shape()) == ref["shape"]
        with og.Session() as sess:
            for init, want in zip((i1, i2, i1), ref["runs"]):
                sess.run(init)
                _check_elements(_drain(sess, nxt), want)


def test_end_of_sequence_repeats_and_each_session_starts_over():
    with og.Graph().as_default():
        nxt = D.range(2).make_one_shot_iterator().get_next()
        for _ in range(2):
            with og.Session() as sess:
                assert [int(sess.run(nxt)) for _ in range(2)] == [0, 1]
                for _ in range(2):
                    with pytest.raises(OutOfRangeError, match="End of sequence"):
                        sess.run(nxt)


def test_monitored_session_stops_at_the_end():
    with og.Graph().as_default():
        nxt = D.range(7).batch(3).make_one_shot_iterator().get_next()
        seen = []
        with og.train.MonitoredSession() as sess:
            while not sess.should_stop():
                seen.append(sess.run(nxt).tolist())
        assert seen == [[0, 1, 2], [3, 4, 5], [6]]


def _epochs(ds, n_epochs, size):
    with og.Graph().as_default():
        nxt = ds.make_one_shot_iterator().get_next()
        with og.Session() as sess:
            values = [int(v) for v in _drain(sess, nxt)]
    assert len(values) == n_epochs * size
    return [values[k * size:(k + 1) * size] for k in range(n_epochs)]


def test_shuffle_epochs_are_permutations_within_the_buffer_window():
    size, buffer = 50, 8
    epochs = _epochs(D.range(size).shuffle(buffer, seed=3).repeat(3), 3, size)
    for epoch in epochs:
        assert sorted(epoch) == list(range(size))
        assert epoch != list(range(size))
        # the element emitted k-th was among the first k + buffer of the input
        assert all(v < k + buffer for k, v in enumerate(epoch))
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2]
    same = _epochs(D.range(size).shuffle(buffer, seed=3).repeat(3), 3, size)
    assert same == epochs  # a seed fixes the sequence
    fixed = _epochs(D.range(size).shuffle(buffer, seed=3, reshuffle_each_iteration=False)
                    .repeat(2), 2, size)
    assert fixed[0] == fixed[1]


def test_map_that_captures_another_graphs_tensor_is_refused():
    outer = og.Graph()
    with outer.as_default():
        t = og.placeholder(og.int64, [])
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="may read tensors of the graph it is built in"):
            D.range(3).map(lambda x: x + t)
        with pytest.raises(ValueError, match="may read tensors of the graph it is built in"):
            D.range(3).map(lambda x: t)
        # a constant (numpy value) is fine
        nxt = D.range(3).map(lambda x: x + np.int64(5)).make_one_shot_iterator().get_next()
        with og.Session() as sess:
            assert [int(v) for v in _drain(sess, nxt)] == [5, 6, 7]


def test_get_next_before_initializing_fails():
    with og.Graph().as_default():
        it = tfdata.make_initializable_iterator(D.range(3))
        nxt = it.get_next()
        with og.Session() as sess:
            with pytest.raises(ExecutionError, match="has not been initialized"):
                sess.run(nxt)
        reinit = tfdata.Iterator.from_structure(og.int64, [])
        with og.Session() as sess:
            with pytest.raises(ExecutionError, match="has not been initialized"):
                sess.run(reinit.get_next())
        with pytest.raises(ValueError, match="does not have an initializer"):
            reinit.initializer  # noqa: B018 - the property raises


def test_unknown_token_names_it():
    with og.Graph().as_default():
        it = D.range(3).make_one_shot_iterator()
        nxt = it.get_next()
        dataset_ops.unregister(it._token)  # as in a process that loaded the graph
        with og.Session() as sess:
            with pytest.raises(ExecutionError, match=it._token):
                sess.run(nxt)


def test_one_shot_iterator_cannot_capture_a_placeholder():
    with og.Graph().as_default():
        ph = og.placeholder(og.float32, [None])
        with pytest.raises(ValueError, match="one-shot iterator cannot capture"):
            tfdata.make_one_shot_iterator(D.from_tensor_slices(ph))


def test_corrupt_tfrecord_is_data_loss(files, tmp_path):
    data = bytearray(base64.b64decode(REF["files"]["records"]))
    data[12 + 0 + 4 + 12 + 1] ^= 0xFF  # a byte of the second record's body ("abc")
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with og.Graph().as_default():
        nxt = tfdata.TFRecordDataset(str(bad)).make_one_shot_iterator().get_next()
        with og.Session() as sess:
            assert sess.run(nxt) == b""
            with pytest.raises(DataLossError, match="corrupted record data"):
                sess.run(nxt)
    truncated = tmp_path / "short.tfrecord"
    truncated.write_bytes(bytes(base64.b64decode(REF["files"]["records"]))[:-3])
    with pytest.raises(DataLossError, match="truncated"):
        list(read_records(str(truncated)))
    assert struct.unpack("<Q", bytes(data[:8]))[0] == 0


def test_generator_element_of_wrong_shape_fails_when_read():
    def gen():
        yield np.zeros([2], np.float32)
        yield np.zeros([3], np.float32)
    with og.Graph().as_default():
        nxt = D.from_generator(gen, og.float32, [2]).make_one_shot_iterator().get_next()
        with og.Session() as sess:
            assert sess.run(nxt).tolist() == [0.0, 0.0]
            with pytest.raises(ExecutionError, match="was expected"):
                sess.run(nxt)


@pytest.mark.parametrize("build, error, text", [
    (lambda: D.range(3).batch(0), ValueError, "batch_size must be a positive"),
    (lambda: D.range(3).padded_batch(-1), ValueError, "batch_size must be a positive"),
    (lambda: D.range(3).shuffle(0), ValueError, "buffer_size must be a positive"),
    (lambda: D.range(1, 5, 0), ValueError, "step must be a non-zero"),
    (lambda: D.range("5"), TypeError, "1 to 3 integers"),
    (lambda: D.range(3).repeat("x"), TypeError, "count must be an integer"),
    (lambda: D.range(3).take(None), TypeError, "count must be an integer"),
    (lambda: D.range(3).map(5), TypeError, "must be callable"),
    (lambda: D.range(3).filter(lambda x: x * 2), TypeError, "scalar bool"),
    (lambda: D.range(3).flat_map(lambda x: x), TypeError, "must return a Dataset"),
    (lambda: D.from_tensor_slices(np.float32(1)), ValueError, "scalar"),
    (lambda: D.from_tensor_slices((np.zeros(2), np.zeros(3))), ValueError, "first dim"),
    (lambda: D.from_tensor_slices({"a": object()}), TypeError, "numbers or strings"),
    (lambda: D.range(3).concatenate(D.from_tensors(np.float32(1))), TypeError, "types"),
    (lambda: D.range(3).apply(lambda d: 3), TypeError, "must return a Dataset"),
    (lambda: D.range(3).unbatch(), ValueError, "rank >= 1"),
    (lambda: D.zip((D.range(3), D.range(3))).padded_batch(2, padded_shapes=([],)),
     ValueError, "structure"),
    (lambda: D.range(3).map(lambda x: og.fill([x], x)).padded_batch(2, [2, 3]), ValueError,
     "does not fit"),
    (lambda: D.from_generator(5, og.int64), TypeError, "must be callable"),
    (lambda: tfdata.TextLineDataset(3), TypeError, "filenames"),
    (lambda: tfdata.TFRecordDataset([]), TypeError, "filenames"),
    (lambda: tfdata.make_one_shot_iterator([1, 2]), TypeError, "expected a Dataset"),
    (lambda: tfdata.Iterator.from_structure(og.int64, []).make_initializer(
        D.from_tensors(np.float32(1))), TypeError, "expected types"),
    (lambda: tfdata.Iterator.from_structure(og.int64, [2]).make_initializer(
        D.range(3)), TypeError, "expected shapes"),
])
def test_bad_arguments_raise_named_errors(build, error, text):
    with og.Graph().as_default():
        with pytest.raises(error, match=text):
            build()


def test_saved_graph_run_in_another_process_names_the_token(tmp_path):
    import subprocess
    import sys
    g = og.Graph()
    with g.as_default():
        it = D.range(3).make_one_shot_iterator()
        it.get_next(name="next")
    path = str(tmp_path / "m.og")
    og.save(g.to_model(), path)
    code = ("import onegraph as og\ntry:\n    og.Session(og.load(%r)).run('next')\n"
            "except og.errors.ExecutionError as e:\n    print('ExecutionError', e)\n" % path)
    root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, timeout=120)
    assert out.stdout.startswith("ExecutionError"), out.stderr[-400:]
    assert repr(it._token) in out.stdout


# --- feedable iterators, interleave, shard, list_files ----------------------------------

def test_feedable_iterator_switches_like_tf():
    def inspect(it, nxt, handle, handles):
        assert _shape_list(nxt.get_shape()) == [] and it.string_handle() is handle
        assert handles["train"] != handles["valid"]

    assert feedable(og, inspect) == REF["feedable"]


def test_feedable_iterator_errors():
    with og.Graph().as_default():
        train = D.range(5).make_one_shot_iterator()
        valid = D.range(3).make_initializable_iterator()
        handle = og.placeholder(og.string, [])
        nxt = tfdata.Iterator.from_string_handle(handle, og.int64, []).get_next()
        wrong_type = tfdata.Iterator.from_string_handle(handle, og.float32).get_next()
        wrong_shape = tfdata.Iterator.from_string_handle(handle, og.int64, [3]).get_next()
        two = tfdata.Iterator.from_string_handle(handle, (og.int64, og.int64)).get_next()
        with og.Session() as sess:
            th, vh = sess.run([train.string_handle(), valid.string_handle()])
            with pytest.raises(ExecutionError, match="names no iterator"):
                sess.run(nxt, {handle: "nonsense"})
            with pytest.raises(ExecutionError, match="has not been initialized"):
                sess.run(nxt, {handle: vh})
            with pytest.raises(ExecutionError, match="Data type mismatch at component 0"):
                sess.run(wrong_type, {handle: th})
            with pytest.raises(ExecutionError, match="Incompatible shapes at component 0"):
                sess.run(wrong_shape, {handle: th})
            with pytest.raises(ExecutionError, match="expected 2 types but got 1"):
                sess.run(two, {handle: th})
            assert int(sess.run(nxt, {handle: th})) == 0
        with og.Session() as other:  # a handle names an iterator of its own session only
            with pytest.raises(ExecutionError, match="names no iterator"):
                other.run(nxt, {handle: th})
        with pytest.raises(TypeError, match="string tensor"):
            tfdata.Iterator.from_string_handle(og.placeholder(og.int64, []), og.int64)
        with pytest.raises(ValueError, match="scalar"):
            tfdata.Iterator.from_string_handle(og.placeholder(og.string, [2]), og.int64)
        feedable = tfdata.Iterator.from_string_handle(handle, og.int64)
        with pytest.raises(TypeError, match="from_string_handle iterator"):
            feedable.make_initializer(D.range(3))


LIST_FILES = ["b.txt", "a.txt", "c.csv", "d.txt", "sub/e.txt", ".hidden.txt"]
LIST_PATTERNS = [["*.txt"], ["*.csv", "[ab].txt"], ["*.txt", "a.*"], ["?.*"], ["*/*.txt"],
                 ["*"]]  # tools/record_tf_data.py's


def _list_dir(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in LIST_FILES:
        (tmp_path / name).write_text(name)
    return tmp_path


def test_list_files_unshuffled_matches_tf(tmp_path):
    root = _list_dir(tmp_path)
    for patterns, want in zip(LIST_PATTERNS, REF["list_files"]):
        with og.Graph().as_default():
            ds = D.list_files([str(root / p) for p in patterns], shuffle=False)
            assert ds.output_types == og.string and _shape_list(ds.output_shapes) == []
            nxt = ds.make_one_shot_iterator().get_next()
            with og.Session() as sess:
                got = [os.path.relpath(str(v[()]), root) for v in _drain(sess, nxt)]
        assert got == want, patterns
    with og.Graph().as_default():  # one pattern as a str
        nxt = D.list_files(str(root / "?.csv"), shuffle=False).make_one_shot_iterator()
        with og.Session() as sess:
            assert str(sess.run(nxt.get_next())[()]) == str(root / "c.csv")


def _names(ds) -> list:
    with og.Graph().as_default():
        nxt = ds().make_one_shot_iterator().get_next()
        with og.Session() as sess:
            return [str(v[()]) for v in _drain(sess, nxt)]


def test_list_files_shuffles_each_epoch_by_default(tmp_path):
    for k in range(12):
        (tmp_path / f"f{k:02d}").write_text("x")
    pattern = str(tmp_path / "f*")
    ordered = sorted(str(p) for p in tmp_path.iterdir())
    epochs = _names(lambda: D.list_files(pattern, seed=5).repeat(2))
    first, second = epochs[:12], epochs[12:]
    assert sorted(first) == ordered and sorted(second) == ordered
    assert first != ordered and first != second
    assert _names(lambda: D.list_files(pattern, seed=5).repeat(2)) == epochs


def test_list_files_without_a_match_fails_when_read(tmp_path):
    with og.Graph().as_default():
        it = D.list_files(str(tmp_path / "*.none")).make_initializable_iterator()
        with og.Session() as sess:
            sess.run(it.initializer)
            with pytest.raises(ExecutionError, match="no files match"):
                sess.run(it.get_next())


def test_interleave_default_cycle_is_one_per_cpu():
    from onegraph.train.data_more import _cpus

    def build(cycle):
        return lambda: D.range(1, 6).interleave(
            lambda x: D.from_tensor_slices(og.fill([x], x)), cycle_length=cycle)
    got = [str(v) for v in _names(build(None))]
    assert got == [str(v) for v in _names(build(_cpus()))]


@pytest.mark.parametrize("build, error, text", [
    (lambda: D.range(3).interleave(lambda x: x), TypeError, "must return a Dataset"),
    (lambda: D.range(3).interleave(lambda x: D.range(2), cycle_length=0), ValueError,
     "cycle_length"),
    (lambda: D.range(3).interleave(lambda x: D.range(2), block_length=-1), ValueError,
     "block_length"),
    (lambda: D.range(3).interleave(lambda x: D.range(2), num_parallel_calls="a"),
     ValueError, "num_parallel_calls"),
    (lambda: D.range(3).shard(0, 0), ValueError, "num_shards must be > 0"),
    (lambda: D.range(3).shard(3, 3), ValueError, "index must be in"),
    (lambda: D.range(3).shard(3, -1), ValueError, "index must be in"),
    (lambda: D.range(3).shard(2.0, 1), TypeError, "must be an integer"),
    (lambda: D.list_files([]), TypeError, "file_pattern"),
    (lambda: D.list_files(3), TypeError, "file_pattern"),
    (lambda: D.list_files("*", shuffle="no"), TypeError, "shuffle"),
])
def test_more_bad_arguments_raise_named_errors(build, error, text):
    with og.Graph().as_default():
        with pytest.raises(error, match=text):
            build()


def test_one_shot_iterator_refuses_values_unknown_while_building(tmp_path):
    with og.Graph().as_default():
        v = og.Variable([1.0, 2.0])
        with pytest.raises(ValueError, match="not known while building"):
            tfdata.make_one_shot_iterator(D.from_tensor_slices(v.read_value()))
        with pytest.raises(ValueError, match="not known while building"):
            tfdata.make_one_shot_iterator(D.from_tensor_slices(og.random_uniform([3])))


def test_file_datasets_check_their_arguments(files):
    with og.Graph().as_default():
        for make in (tfdata.TFRecordDataset, tfdata.TextLineDataset):
            with pytest.raises(TypeError, match="string tensor of rank 0 or 1"):
                make(og.constant([[files["text"]]]))
            with pytest.raises(TypeError, match="string tensor of rank 0 or 1"):
                make(og.constant([1, 2]))
            with pytest.raises(ValueError, match='Not a valid compression_type: "BZ2"'):
                make(files["text"], compression_type="BZ2")
            with pytest.raises(ValueError, match="num_parallel_reads"):
                make(files["text"], num_parallel_reads=0)


def test_file_names_fed_to_an_initializable_iterator(files):
    with og.Graph().as_default():
        names = og.placeholder(og.string, [None])
        it = tfdata.TFRecordDataset(names).make_initializable_iterator()
        nxt = it.get_next()
        with og.Session() as sess:
            sess.run(it.initializer, {names: [files["records2"]]})
            assert sess.run(nxt) == b"second file 0"
            sess.run(it.initializer, {names: [files["records_zlib"]]})
            with pytest.raises(DataLossError):  # a ZLIB file read as plain records
                sess.run(nxt)


@pytest.mark.parametrize("name", sorted(REF["capturing"]))
def test_functions_capture_placeholders_and_outer_arguments_as_tf(name):
    with og.Graph().as_default():
        scale = og.placeholder(og.int64, [])
        it = tfdata.make_initializable_iterator(capturing(og, scale)[name])
        nxt = it.get_next()
        with og.Session() as sess:
            for value, want in zip(CAPTURE_FEEDS, REF["capturing"][name]):
                sess.run(it.initializer, {scale: value})
                _check_elements(_drain(sess, nxt), want)
        if "placeholder" in name:  # what reads only constants and arguments is one-shot
            with pytest.raises(ValueError, match="not known while building"):
                tfdata.make_one_shot_iterator(capturing(og, scale)[name])
        else:
            tfdata.make_one_shot_iterator(capturing(og, scale)[name])


@pytest.mark.parametrize("name", sorted(REF["sparse"]))
def test_sparse_components_match_tf(name):
    ref = REF["sparse"][name]
    with og.Graph().as_default():
        ds = sparse_pipelines(og)[name]
        assert [c.__name__ for c in _flat(ds.output_classes)] == ref["classes"]
        assert [t.short_name for t in _flat(ds.output_types)] == ref["types"]
        # og's static shapes are TF's, or know more (og knows sparse.reduce_sum's rank)
        for got, want in zip([_shape_list(s) for s in _flat(ds.output_shapes)], ref["shapes"]):
            assert got == want or (want is None and got is not None)
        nxt = tfdata.make_one_shot_iterator(ds).get_next()
        assert [type(t).__name__ for t in _flat(nxt)] == ref["classes"]
        assert [_shape_list(t.get_shape()) for t in _flat(nxt)] == \
            [_shape_list(s) for s in _flat(ds.output_shapes)]
        with og.Session() as sess:
            _check_elements(_drain(sess, nxt), ref["elements"])


def test_reinitializable_and_feedable_iterators_carry_sparse_components():
    ref = REF["sparse"]["sparse_map_batch"]["elements"]
    with og.Graph().as_default():
        ds = sparse_pipelines(og)["sparse_map_batch"]
        it = tfdata.Iterator.from_structure(ds.output_types, ds.output_shapes,
                                            output_classes=ds.output_classes)
        init = it.make_initializer(ds)
        with pytest.raises(TypeError, match="expected types"):  # dense against sparse
            it.make_initializer(D.range(3).map(lambda x: og.fill(og.reshape(x, [1]), x)))
        handle = og.placeholder(og.string, [])
        feedable = tfdata.Iterator.from_string_handle(handle, ds.output_types,
                                                      ds.output_shapes, ds.output_classes)
        nxt, fed = it.get_next(), feedable.get_next()
        assert isinstance(nxt, og.SparseTensor) and isinstance(fed, og.SparseTensor)
        with og.Session() as sess:
            sess.run(init)
            first = sess.run(nxt)
            assert isinstance(first, og.SparseTensorValue)
            value = sess.run(it.string_handle())
            second = sess.run(fed, {handle: value})
        _check_elements([first, second], ref)


def test_file_cache_is_written_by_a_complete_pass_and_read_afterwards(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        for i in range(3):
            yield np.full([2], len(calls) * 10 + i, np.int64)
    prefix = str(tmp_path / "c")
    with og.Graph().as_default():
        ds = D.from_generator(gen, og.int64, og.TensorShape([2])).cache(prefix)
        with og.Session() as sess:
            partial = ds.take(1).make_one_shot_iterator().get_next()
            assert sess.run(partial).tolist() == [10, 10]
            with pytest.raises(OutOfRangeError):
                sess.run(partial)
        # a pass left unfinished caches nothing and leaves no temporary file
        assert list(tmp_path.iterdir()) == []
        with og.Session() as sess:
            epochs = [v.tolist() for v in _drain(sess, ds.repeat(2).make_one_shot_iterator()
                                                 .get_next())]
        assert epochs == [[20, 20], [21, 21], [22, 22]] * 2 and len(calls) == 2
        with og.Session() as sess:  # another run reads the file, not the generator
            again = [v.tolist() for v in _drain(sess, ds.make_one_shot_iterator().get_next())]
        assert again == epochs[:3] and len(calls) == 2
        (tmp_path / "d.og-cache.tmp").write_bytes(b"")
        with og.Session() as sess:
            with pytest.raises(ExecutionError, match="concurrent caching iterator"):
                sess.run(ds.__class__.range(2).cache(str(tmp_path / "d"))
                         .make_one_shot_iterator().get_next())


def test_file_cache_keeps_sparse_and_string_components(tmp_path):
    ref = REF["sparse"]["sparse_dict_map"]["elements"]
    with og.Graph().as_default():
        ds = sparse_pipelines(og)["sparse_dict_map"].cache(str(tmp_path / "s"))
        for _ in range(2):  # computed and written, then read back
            with og.Session() as sess:
                _check_elements(_drain(sess, ds.make_one_shot_iterator().get_next()), ref)
        words = D.from_tensor_slices(np.array(["a", "\u00e9t\u00e9", ""], object))
        cached = words.cache(str(tmp_path / "w"))
        for _ in range(2):
            with og.Session() as sess:
                got = _drain(sess, cached.make_one_shot_iterator().get_next())
            assert [str(v) for v in got] == ["a", "\u00e9t\u00e9", ""]


@pytest.mark.parametrize("name", sorted(REF["windows"]))
def test_windows_match_tf(name):
    ref = REF["windows"][name]
    with og.Graph().as_default():
        ds = window_pipelines(og)[name]
        assert [t.short_name for t in _flat(ds.output_types)] == ref["types"]
        assert [_shape_list(s) for s in _flat(ds.output_shapes)] == ref["shapes"]
        with og.Session() as sess:
            _check_elements(_drain(sess, ds.make_one_shot_iterator().get_next()),
                            ref["elements"])


def test_windows_are_datasets_for_flat_map_only():
    with og.Graph().as_default():
        windows = D.range(4).window(2)
        assert windows.output_classes is D
        for use in (lambda: windows.map(lambda w: w), lambda: windows.batch(2),
                    lambda: windows.make_one_shot_iterator(), lambda: windows.window(2)):
            with pytest.raises(TypeError, match="hold windows"):
                use()
        with pytest.raises(ValueError, match="shift must be a positive integer"):
            D.range(4).window(2, 0)
