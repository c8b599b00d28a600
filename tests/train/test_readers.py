"""TF1's queue-based readers and FixedLengthRecordDataset against TF's recordings
(tools/record_tf_readers.py): the same files, read by the scenarios of readers_cases.py
with onegraph, give TF's keys, values, counters and errors."""

from __future__ import annotations

import json
import pathlib
import re
import threading
import types

import pytest

import onegraph as og
from onegraph.errors import DataLossError
from onegraph.train import readers
from onegraph.train.data_fixed_length import FixedLengthRecordDataset
from onegraph.train.queues import PaddingFIFOQueue, PriorityQueue

from . import readers_cases as cases

REFERENCE = json.loads((pathlib.Path(__file__).parent / "data"
                        / "tf1_readers_reference.json").read_text())
TIMEOUT = 60  # seconds a scenario may take before it counts as hung


def og_api():
    """onegraph's names for the scenarios (TF's tf.compat.v1 spellings)."""
    api = types.SimpleNamespace(
        Graph=og.Graph, Session=og.Session, placeholder=og.placeholder,
        local_variables_initializer=og.local_variables_initializer, int32=og.int32,
        int64=og.int64, float32=og.float32, string=og.string,
        string_input_producer=og.train.string_input_producer, batch=og.train.batch,
        Coordinator=og.train.Coordinator, start_queue_runners=og.train.start_queue_runners,
        OutOfRangeError=og.errors.OutOfRangeError,
        FixedLengthRecordDataset=FixedLengthRecordDataset,
        make_one_shot_iterator=og.data.make_one_shot_iterator,
        PaddingFIFOQueue=PaddingFIFOQueue, PriorityQueue=PriorityQueue)
    for name in readers.__all__:
        setattr(api, name, getattr(readers, name))
    return api


def with_timeout(fn, *args):
    """fn(*args) in a thread; fails the test if it has not returned in TIMEOUT s."""
    box = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = e
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(TIMEOUT)
    assert not t.is_alive(), f"{fn.__name__} hung for {TIMEOUT}s"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The files TF read, byte for byte."""
    path = tmp_path_factory.mktemp("readers")
    for name, data in REFERENCE["files"].items():
        (path / name).write_bytes(bytes.fromhex(data))
    return str(path)


def _normal(value):
    """Results with what legitimately differs taken out: the scenario folder, TF's
    queue names ("_8_input_producer"), onegraph's "node '...' (...): " prefix, the
    first line of a message of TF's
    "Graph execution error" form."""
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, str):
        value = re.sub(r"\"/[^\"]*/([^/\"]+)\"", r'"\1"', value)
        value = re.sub(r"^node '[^']*' \([^)]*\): ", "", value)
        return re.sub(r"(Queue) '[^']*'", r"\1 'Q'", value)
    return value


# scenarios whose error message is worded differently here (type and gist compared)
_GIST = {"tfrecord_truncated": "truncated record"}


@pytest.mark.parametrize("case", cases.CASES, ids=[c["name"] for c in cases.CASES])
def test_scenario_matches_tf(case, folder):
    got = _normal(with_timeout(cases.run, og_api(), case, folder))
    want = _normal(REFERENCE["cases"][case["name"]])
    if case["name"] in _GIST:
        last_got, last_want = got[0].pop(), want[0].pop()
        assert last_got["error"] == last_want["error"]
        assert _GIST[case["name"]] in last_got["message"]
    assert got == want


def test_truncated_tfrecord_is_data_loss(folder):
    with og.Graph().as_default():
        fq = og.train.string_input_producer([f"{folder}/cut.tfrecord"], num_epochs=1,
                                            shuffle=False)
        key, value = readers.TFRecordReader().read(fq)
        with og.Session() as sess:
            sess.run(og.local_variables_initializer())
            coord = og.train.Coordinator()
            threads = og.train.start_queue_runners(sess, coord)
            assert with_timeout(sess.run, value) == b"a0"
            with_timeout(sess.run, value)
            with pytest.raises(DataLossError, match="truncated record at offset 41"):
                with_timeout(sess.run, value)
            coord.request_stop()
            coord.join(threads)


def test_two_threads_share_one_reader(folder):
    """Records are handed out once each across threads reading the same reader."""
    with og.Graph().as_default():
        fq = og.train.string_input_producer([f"{folder}/a.tfrecord", f"{folder}/b.tfrecord"],
                                            num_epochs=3, shuffle=False)
        key, _ = readers.TFRecordReader().read(fq)
        sess = og.Session()
        sess.run(og.local_variables_initializer())
        coord = og.train.Coordinator()
        threads = og.train.start_queue_runners(sess, coord)
        keys, lock = [], threading.Lock()

        def drain():
            try:
                while True:
                    k = sess.run(key)
                    with lock:
                        keys.append(str(k).rsplit("/", 1)[-1])
            except og.errors.OutOfRangeError:
                return
        workers = [threading.Thread(target=drain, daemon=True) for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(TIMEOUT)
            assert not w.is_alive(), "a reading thread hung"
        coord.request_stop()
        coord.join(threads)
        sess.close()
    assert sorted(keys) == sorted(["a.tfrecord:0", "a.tfrecord:18", "a.tfrecord:41",
                                   "b.tfrecord:0", "b.tfrecord:26"] * 3)


def test_read_blocks_until_a_file_name_arrives(folder):
    with og.Graph().as_default():
        q = og.FIFOQueue(4, [og.string], shapes=[[]])
        name = og.placeholder(og.string, [])
        enq, close = q.enqueue([name]), q.close()
        key, value = readers.WholeFileReader().read(q)
        with og.Session() as sess:
            later = threading.Timer(0.3, lambda: sess.run(enq, {name: f"{folder}/whole_a.dat"}))
            later.start()
            k, v = with_timeout(sess.run, [key, value])
            later.join()
            assert v == bytes.fromhex(REFERENCE["files"]["whole_a.dat"])
            sess.run(close)
            with pytest.raises(og.errors.OutOfRangeError, match="is closed and has "
                               "insufficient elements"):
                with_timeout(sess.run, key)


@pytest.mark.parametrize("make, error, match", [
    (lambda: readers.FixedLengthRecordReader(0), ValueError, "record_bytes must be positive"),
    (lambda: readers.FixedLengthRecordReader(4, header_bytes=-1), ValueError,
     "header_bytes must be >= 0"),
    (lambda: readers.FixedLengthRecordReader(4.5), TypeError, "record_bytes must be an "
     "integer"),
    (lambda: readers.FixedLengthRecordReader(4, encoding="LZ4"), ValueError, "LZ4"),
    (lambda: readers.TFRecordReader(options="BZ2"), ValueError, "BZ2"),
    (lambda: readers.TextLineReader(skip_header_lines=-2), ValueError,
     "skip_header_lines must be >= 0"),
    (lambda: readers.IdentityReader().read("not a queue"), TypeError,
     "queue must be a queue"),
    (lambda: readers.IdentityReader().read_up_to(og.FIFOQueue(2, [og.string]), 0),
     ValueError, "num_records must be positive"),
    (lambda: FixedLengthRecordDataset(["x"], 0), ValueError, "record_bytes must be positive"),
    (lambda: FixedLengthRecordDataset(["x"], 4, footer_bytes=-3), ValueError,
     "footer_bytes must be >= 0"),
    (lambda: FixedLengthRecordDataset(["x"], 4, compression_type="LZMA"), ValueError, "LZMA"),
    (lambda: FixedLengthRecordDataset(7, 4), TypeError, "filenames"),
    (lambda: readers.IdentityReader().serialize_state(), og.errors.UnimplementedError,
     "serializing"),
])
def test_bad_arguments(make, error, match):
    with og.Graph().as_default():
        with pytest.raises(error, match=match):
            make()


def test_reader_api_surface():
    with og.Graph().as_default():
        r = readers.TFRecordReader(name="rr")
        assert isinstance(r, readers.ReaderBase)
        assert r.supports_serialize is False
        assert r.reader_ref.dtype is not None
        assert r.num_records_produced().dtype == og.int64
