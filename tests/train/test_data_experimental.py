"""og.data.experimental (train/data_experimental.py) and Dataset.reduce against TF1's
tf.data.experimental: the element sequences, values, types and shapes TF 2.21 gives for
the same pipelines (tools/record_tf_data.py, data/tf1_data_reference.json's
"experimental"), plus sample_from_datasets' properties, the TFRecord writer and errors."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError
from onegraph.train import data as tfdata

from .data_experimental_cases import (SINGLE_ERRORS, experimental_pipelines,
                                      failing_singles, single_values)
from .test_data import REF, _check_elements, _drain, _flat, _shape_list

EXP = REF["experimental"]
D, X = tfdata.Dataset, tfdata.experimental
PIPELINES = sorted(k for k in EXP if "elements" in EXP[k])
SINGLES = sorted(k for k in EXP if "value" in EXP[k])


def test_every_recorded_scenario_is_built():
    with og.Graph().as_default():
        assert set(PIPELINES) == set(experimental_pipelines(og))
        assert set(SINGLES) == set(single_values(og))
        assert set(EXP["errors"]) == set(failing_singles(og)) == set(SINGLE_ERRORS)


@pytest.mark.parametrize("name", PIPELINES)
def test_elements_types_and_shapes_match_tf(name):
    ref = EXP[name]
    with og.Graph().as_default():
        ds = experimental_pipelines(og)[name]
        assert [t.short_name for t in _flat(ds.output_types)] == ref["types"]
        assert [_shape_list(s) for s in _flat(ds.output_shapes)] == ref["shapes"]
        nxt = tfdata.make_one_shot_iterator(ds).get_next()
        with og.Session() as sess:
            _check_elements(_drain(sess, nxt), ref["elements"])


@pytest.mark.parametrize("name", SINGLES)
def test_single_element_and_reduce_match_tf(name):
    ref = EXP[name]
    with og.Graph().as_default():
        tensors = single_values(og)[name]
        assert [_shape_list(t.get_shape()) for t in _flat(tensors)] == ref["shapes"]
        with og.Session() as sess:
            for _ in range(2):  # computed anew each run
                _check_elements([sess.run(tensors)], [ref["value"]])


@pytest.mark.parametrize("name", sorted(SINGLE_ERRORS))
def test_single_element_errors_are_tfs(name):
    with og.Graph().as_default():
        tensors = failing_singles(og)[name]
        with og.Session() as sess:
            with pytest.raises(ExecutionError, match=EXP["errors"][name]):
                sess.run(tensors)


def test_sample_from_datasets_keeps_each_order_and_is_seeded():
    def run(seed, weights=None):
        with og.Graph().as_default():
            ds = X.sample_from_datasets([D.range(5), D.range(100, 103), D.range(50, 51)],
                                        weights, seed=seed).repeat(2)
            with og.Session() as sess:
                return [int(v) for v in _drain(sess, ds.make_one_shot_iterator().get_next())]
    got = run(3)
    for epoch in (got[:9], got[9:]):
        assert sorted(epoch) == [0, 1, 2, 3, 4, 50, 100, 101, 102]
        for low, high in ((0, 5), (100, 103)):
            part = [v for v in epoch if low <= v < high]
            assert part == sorted(part)
    assert got[:9] != got[9:]  # each epoch draws anew
    assert run(3) == got
    assert run(1, [1.0, 0.0, 0.0]) == [0, 1, 2, 3, 4] * 2  # weight 0: never drawn
    for bad in ([1.0], [1.0, -1.0, 0.0], [0.0, 0.0, 0.0]):
        with pytest.raises(ValueError, match="weights"):
            X.sample_from_datasets([D.range(1)] * 3, bad)


def test_tfrecord_writer_writes_a_dataset(tmp_path):
    with og.Graph().as_default():
        strings = D.from_tensor_slices(np.array([b"a", b"", b"xyz"], object))
        path = str(tmp_path / "out.tfrecord")
        write = X.TFRecordWriter(path, "GZIP").write(strings)
        with og.Session() as sess:
            sess.run(write)
        assert list(og.python_io.tf_record_iterator(path, "GZIP")) == [b"a", b"", b"xyz"]
        with pytest.raises(TypeError, match="scalar `DT_STRING`"):
            X.TFRecordWriter(path).write(D.range(3))
        with pytest.raises(ValueError, match="Not a valid compression_type"):
            X.TFRecordWriter(path, "LZ4")
        failing = D.from_generator(_bad_strings, og.string, og.TensorShape([]))
        broken = str(tmp_path / "broken.tfrecord")
        with og.Session() as sess:
            with pytest.raises(ExecutionError, match="generator failed"):
                sess.run(X.TFRecordWriter(broken).write(failing))
        assert not list(tmp_path.glob("broken*"))  # no half-written file is left


def _bad_strings():
    yield b"fine"
    raise RuntimeError("generator failed")


def test_errors_name_what_is_wrong():
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="exactly one of window_size"):
            X.group_by_window(lambda x: x, lambda k, w: w)
        with pytest.raises(TypeError, match="integer scalar"):
            D.range(3).apply(X.group_by_window(lambda x: og.cast(x, og.float32),
                                               lambda k, w: w, 2))
        with pytest.raises(TypeError, match="must return a Dataset"):
            D.range(3).apply(X.group_by_window(lambda x: x, lambda k, w: k, 2))
        with pytest.raises(ValueError, match="len\\(bucket_boundaries\\) \\+ 1"):
            X.bucket_by_sequence_length(lambda x: x, [2, 4], [1, 1])
        with pytest.raises(ValueError, match="increasing"):
            X.bucket_by_sequence_length(lambda x: x, [4, 2], [1, 1, 1])
        with pytest.raises(TypeError, match="only supports inputs with a single"):
            D.range(3).map(lambda x: og.cast(x, og.float32)).apply(X.unique())
        with pytest.raises(TypeError, match="differ from the initial state's"):
            D.range(3).apply(X.scan(np.int32(0), lambda s, x: (og.cast(s, og.float32), x)))
        with pytest.raises(TypeError, match="scalar bool"):
            D.range(3).apply(X.take_while(lambda x: x))
        with pytest.raises(TypeError, match="same element types"):
            X.choose_from_datasets([D.range(2), D.from_tensors(1.0)], D.range(1))
        with pytest.raises(TypeError, match="int64 scalars"):
            X.choose_from_datasets([D.range(2)], D.from_tensors(np.int32(0)))
        with pytest.raises(TypeError, match="dtype must be an integer"):
            X.Counter(dtype=og.float32)
        ds = X.choose_from_datasets([D.range(2)], D.from_tensor_slices(np.array([0, 3])))
        with og.Session() as sess:
            nxt = ds.make_one_shot_iterator().get_next()
            assert sess.run(nxt) == 0
            with pytest.raises(ExecutionError, match="Selector index out of range: 3 >= 1"):
                sess.run(nxt)


def test_pad_to_bucket_boundary_refuses_long_elements_when_their_bucket_is_batched():
    with og.Graph().as_default():
        ds = D.from_generator(lambda: iter([np.ones(2), np.ones(9), np.ones(1)]), og.float64,
                              og.TensorShape([None]))
        ds = ds.apply(X.bucket_by_sequence_length(lambda s: og.shape(s)[0], [3, 7], [2, 2, 2],
                                                  pad_to_bucket_boundary=True))
        nxt = ds.make_one_shot_iterator().get_next()
        with og.Session() as sess:
            assert sess.run(nxt).tolist() == [[1.0, 1.0], [1.0, 0.0]]  # padded to 2
            with pytest.raises(ExecutionError, match="length < max\\(bucket_boundaries\\)"):
                sess.run(nxt)


def test_ignore_errors_skips_only_what_comes_before_it(caplog):
    bad = D.from_tensor_slices(np.array([1.0, -1.0, 4.0], np.float32))
    with og.Graph().as_default():
        def checked(x):
            return og.check_numerics(og.log(x), "bad")
        before = bad.map(checked).apply(X.ignore_errors(log_warning=True))
        after = bad.apply(X.ignore_errors()).map(checked)
        with og.Session() as sess:
            with caplog.at_level("WARNING", logger="onegraph"):
                got = _drain(sess, before.make_one_shot_iterator().get_next())
            assert [float(v) for v in got] == [0.0, float(np.log(np.float32(4.0)))]
            assert "ignore_errors: skipped an element" in caplog.text
            nxt = after.make_one_shot_iterator().get_next()
            assert sess.run(nxt) == 0.0
            with pytest.raises(ExecutionError, match="bad"):
                sess.run(nxt)


def test_tf_sentinels_in_both_namespaces():
    # TF 2.21: tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1,
    # INFINITE_CARDINALITY == -1, UNKNOWN_CARDINALITY == -2
    for ns in (og.data, og.data.experimental):
        assert (ns.AUTOTUNE, ns.INFINITE_CARDINALITY, ns.UNKNOWN_CARDINALITY) == (-1, -1, -2)
