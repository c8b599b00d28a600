"""Scenarios of TF1's queue-based readers, PaddingFIFOQueue, PriorityQueue and
FixedLengthRecordDataset, shared by tools/record_tf_readers.py (runs them with TF) and
tests/train/test_readers.py / test_queues_more.py (run them with onegraph and compare).

`run(api, case, folder)` builds and runs one scenario with `api`, a namespace of the
library's names (TF's tf.compat.v1 or onegraph's); results are JSON-ready: bytes as
hex, keys as text with the folder removed, errors as {"error": class name, "message"}.
No tensorflow import here.
"""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

# The raw files every scenario may read (TFRecord files are written by the library's
# own writer: TF's when recording, then stored byte for byte in the reference).
RAW = {
    "fixed.bin": bytes(range(24)),
    "fixed_hf.bin": b"HDR" + bytes(range(65, 65 + 12)) + b"FT",
    "fixed_bad.bin": bytes(range(10)),
    "fixed_hop.bin": bytes(range(100, 110)),
    "lines.txt": b"header\nfirst\r\nsecond\n\nfourth",
    "lines2.txt": b"h1\nh2\nx\ny\n",
    "whole_a.dat": b"\x00\x01binary\xff",
    "whole_b.dat": b"",
}
GZIP_RAW = {"fixed.bin.gz": "fixed.bin", "fixed_hf.bin.zz": "fixed_hf.bin"}
TFRECORDS = {
    "a.tfrecord": ([b"a0", b"a1-long", b""], None),
    "b.tfrecord": ([b"b0" * 5, b"b1"], None),
    "z.tfrecord": ([b"zz0", b"zz1"], "ZLIB"),
    "g.tfrecord": ([b"gg0", b"gg1", b"gg2"], "GZIP"),
}


def raw_files() -> dict:
    """Every non-TFRecord file's bytes (the compressed ones made here, deterministic)."""
    out = dict(RAW)
    out["fixed.bin.gz"] = gzip.compress(RAW["fixed.bin"], mtime=0)
    out["fixed_hf.bin.zz"] = zlib.compress(RAW["fixed_hf.bin"])
    return out


def _case(name, reader, files, steps, args=None, epochs=1, kind="reader"):
    return {"name": name, "kind": kind, "reader": reader, "files": files, "steps": steps,
            "args": args or {}, "epochs": epochs}


DRAIN = ["drain"]
CASES = [
    _case("tfrecord_two_files", "TFRecordReader", ["a.tfrecord", "b.tfrecord"],
          DRAIN + ["produced", "completed"]),
    _case("tfrecord_two_epochs", "TFRecordReader", ["a.tfrecord", "b.tfrecord"],
          DRAIN + ["produced", "completed"], epochs=2),
    _case("tfrecord_zlib", "TFRecordReader", ["z.tfrecord"], DRAIN,
          {"options": "ZLIB"}),
    _case("tfrecord_gzip", "TFRecordReader", ["g.tfrecord"], DRAIN, {"options": "GZIP"}),
    _case("tfrecord_read_up_to", "TFRecordReader", ["a.tfrecord", "b.tfrecord"],
          ["up_to:2", "up_to:2", "up_to:2", "up_to:2", "up_to:2", "produced", "completed"]),
    _case("tfrecord_up_to_big", "TFRecordReader", ["a.tfrecord", "b.tfrecord"],
          ["up_to:10", "up_to:10", "up_to:10"]),
    _case("tfrecord_reset", "TFRecordReader", ["a.tfrecord", "b.tfrecord"],
          ["read", "produced", "completed", "reset", "produced", "completed", "read",
           "read", "read"], epochs=2),
    _case("textline", "TextLineReader", ["lines.txt", "lines2.txt"],
          DRAIN + ["produced", "completed"]),
    _case("textline_skip", "TextLineReader", ["lines.txt", "lines2.txt"],
          DRAIN + ["produced"], {"skip_header_lines": 2}),
    _case("textline_up_to", "TextLineReader", ["lines.txt", "lines2.txt"],
          ["up_to:3", "up_to:3", "up_to:3", "up_to:3"], {"skip_header_lines": 1}),
    _case("whole_file", "WholeFileReader", ["whole_a.dat", "whole_b.dat", "lines2.txt"],
          DRAIN + ["produced", "completed"]),
    _case("whole_file_up_to", "WholeFileReader", ["whole_a.dat", "whole_b.dat"],
          ["up_to:5", "up_to:5"]),
    _case("identity", "IdentityReader", ["whole_a.dat", "x/y"], DRAIN + ["produced"]),
    _case("identity_up_to", "IdentityReader", ["p", "q", "r"], ["up_to:2", "up_to:2",
                                                                "up_to:2"]),
    _case("fixed", "FixedLengthRecordReader", ["fixed.bin"], DRAIN + ["produced"],
          {"record_bytes": 8}),
    _case("fixed_header_footer", "FixedLengthRecordReader", ["fixed_hf.bin", "fixed_hf.bin"],
          DRAIN + ["produced", "completed"],
          {"record_bytes": 4, "header_bytes": 3, "footer_bytes": 2}),
    _case("fixed_hop", "FixedLengthRecordReader", ["fixed_hop.bin"], DRAIN,
          {"record_bytes": 4, "hop_bytes": 2}),
    _case("fixed_hop_footer", "FixedLengthRecordReader", ["fixed.bin"], DRAIN,
          {"record_bytes": 5, "hop_bytes": 3, "header_bytes": 2, "footer_bytes": 4}),
    _case("fixed_gzip", "FixedLengthRecordReader", ["fixed.bin.gz"], DRAIN,
          {"record_bytes": 6, "encoding": "GZIP"}),
    _case("fixed_zlib", "FixedLengthRecordReader", ["fixed_hf.bin.zz"], DRAIN,
          {"record_bytes": 4, "header_bytes": 3, "footer_bytes": 2, "encoding": "ZLIB"}),
    _case("fixed_up_to", "FixedLengthRecordReader", ["fixed.bin", "fixed.bin"],
          ["up_to:2", "up_to:2", "up_to:2", "up_to:2", "up_to:2"], {"record_bytes": 8}),
    _case("fixed_bad_size", "FixedLengthRecordReader", ["fixed_bad.bin"], DRAIN,
          {"record_bytes": 4}),
    _case("tfrecord_truncated", "TFRecordReader", ["cut.tfrecord"], DRAIN),
    _case("batch_over_reader", "TFRecordReader", ["a.tfrecord", "b.tfrecord"],
          ["batch:2"]),
    # FixedLengthRecordDataset (no reader; `args` are the dataset's)
    _case("ds_fixed", None, ["fixed.bin", "fixed_hf.bin"], DRAIN, {"record_bytes": 4},
          kind="dataset"),
    _case("ds_fixed_hf", None, ["fixed_hf.bin"], DRAIN,
          {"record_bytes": 4, "header_bytes": 3, "footer_bytes": 2}, kind="dataset"),
    _case("ds_fixed_gzip", None, ["fixed.bin.gz"], DRAIN,
          {"record_bytes": 12, "compression_type": "GZIP"}, kind="dataset"),
    _case("ds_fixed_zlib", None, ["fixed_hf.bin.zz"], DRAIN,
          {"record_bytes": 6, "header_bytes": 3, "footer_bytes": 2,
           "compression_type": "ZLIB"}, kind="dataset"),
    _case("ds_fixed_parallel", None, ["fixed.bin", "fixed_hf.bin"], DRAIN,
          {"record_bytes": 4, "num_parallel_reads": 2}, kind="dataset"),
    _case("ds_fixed_bad_size", None, ["fixed_bad.bin"], DRAIN, {"record_bytes": 4},
          kind="dataset"),
    _case("ds_fixed_bad_size_gzip", None, ["fixed.bin.gz"], DRAIN,
          {"record_bytes": 5, "compression_type": "GZIP"}, kind="dataset"),
]


def _item(value):
    """A 0-d array's element (onegraph returns scalars as 0-d arrays)."""
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _hex(value) -> str:
    value = _item(value)
    if isinstance(value, str):
        value = value.encode("utf-8")
    return bytes(value).hex()


def _value(value, folder: str) -> str:
    """value as hex, the folder taken out (IdentityReader's values are file names)."""
    value = _item(value)
    if isinstance(value, str):
        value = value.encode("utf-8")
    return bytes(value).replace((folder + os.sep).encode(), b"").hex()


def _text(value, folder: str) -> str:
    value = _item(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    return str(value).replace(folder + os.sep, "")


def _error(e) -> dict:
    lines = str(e).split("\n")
    message = lines[0]
    for i, line in enumerate(lines[:-1]):
        if line.startswith("Node: "):  # TF: the op's own message follows its node
            message = lines[i + 1]
    return {"error": type(e).__name__, "message": message}


def _reader(api, case):
    args = dict(case["args"])
    return getattr(api, case["reader"])(**args)


def run(api, case: dict, folder: str) -> list:
    """The results of `case`'s steps, run with `api` over the files in `folder`."""
    if case["kind"] == "dataset":
        return _run_dataset(api, case, folder)
    with api.Graph().as_default():
        names = [os.path.join(folder, f) for f in case["files"]]
        fq = api.string_input_producer(names, num_epochs=case["epochs"], shuffle=False)
        reader = _reader(api, case)
        key, value = reader.read(fq)
        ops = {"produced": reader.num_records_produced(),
               "completed": reader.num_work_units_completed(), "reset": reader.reset()}
        up_to, batches = {}, {}
        for step in case["steps"]:
            if step.startswith("up_to:"):
                up_to[step] = reader.read_up_to(fq, int(step[6:]))
            if step.startswith("batch:"):
                batches[step] = api.batch([key, value], int(step[6:]),
                                          allow_smaller_final_batch=True)
        sess = api.Session()
        sess.run(api.local_variables_initializer())
        coord = api.Coordinator()
        threads = api.start_queue_runners(sess, coord)
        out = []
        try:
            for step in case["steps"]:
                out.append(_step(api, sess, step, key, value, ops, up_to, batches, folder))
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
            sess.close()
    return out


def _step(api, sess, step, key, value, ops, up_to, batches, folder):
    try:
        if step == "read":
            k, v = sess.run([key, value])
            return [_text(k, folder), _value(v, folder)]
        if step == "drain":
            got = []
            try:
                while len(got) < 100:
                    k, v = sess.run([key, value])
                    got.append([_text(k, folder), _value(v, folder)])
            except api.OutOfRangeError as e:
                got.append(_error(e))
            except Exception as e:  # noqa: BLE001 - recorded for comparison
                got.append(_error(e))
            return got
        if step in ("produced", "completed"):
            return int(sess.run(ops[step]))
        if step == "reset":
            sess.run(ops["reset"])
            return None
        if step in up_to:
            ks, vs = sess.run(up_to[step])
            return [[_text(k, folder) for k in ks], [_value(v, folder) for v in vs]]
        if step in batches:
            got = []
            try:
                while len(got) < 20:
                    ks, vs = sess.run(batches[step])
                    got.append([[_text(k, folder) for k in ks], [_value(v, folder) for v in vs]])
            except api.OutOfRangeError as e:
                got.append(_error(e))
            return got
    except Exception as e:  # noqa: BLE001 - recorded for comparison
        return _error(e)
    raise ValueError(f"unknown step {step!r}")


def _run_dataset(api, case, folder):
    with api.Graph().as_default():
        names = [os.path.join(folder, f) for f in case["files"]]
        ds = api.FixedLengthRecordDataset(names, **case["args"])
        nxt = api.make_one_shot_iterator(ds).get_next()
        got = []
        with api.Session() as sess:
            try:
                while len(got) < 100:
                    got.append(_hex(sess.run(nxt)))
            except Exception as e:  # noqa: BLE001 - recorded (OutOfRange or an error)
                got.append(_error(e))
    return [got]


# --- queues -------------------------------------------------------------------------------

def run_padding(api) -> dict:
    """PaddingFIFOQueue: elements of varying shapes, dequeue_many pads to the largest."""
    out = {}
    with api.Graph().as_default():
        q = api.PaddingFIFOQueue(10, [api.int32, api.string, api.float32],
                                 shapes=[[None], [None, None], []])
        x = api.placeholder(api.int32, [None])
        s = api.placeholder(api.string, [None, None])
        f = api.placeholder(api.float32, [])
        enq = q.enqueue([x, s, f])
        many = q.dequeue_many(3)
        upto = q.dequeue_up_to(3)
        one = q.dequeue()
        close = q.close()
        with api.Session() as sess:
            feeds = [([1], [["a"]], 1.5), ([1, 2, 3], [["b", "c"]], 2.0),
                     (np.zeros(0, np.int32), np.zeros((0, 0), object), 3.0),
                     ([7, 8], [["d"], ["e"]], 4.0), ([9], [["f"]], 5.0)]
            for xv, sv, fv in feeds:
                sess.run(enq, {x: xv, s: sv, f: fv})
            out["many"] = _plain(sess.run(many))
            out["one"] = _plain(sess.run(one))
            sess.run(close)
            out["up_to"] = _run_or_error(sess, upto)
            out["end"] = _run_or_error(sess, upto)
    return out


def run_priority(api) -> dict:
    """PriorityQueue: dequeues the smallest priority first (ties: see the recording)."""
    out = {}
    with api.Graph().as_default():
        q = api.PriorityQueue(10, [api.string, api.int32], shapes=[[], []])
        p = api.placeholder(api.int64, [None])
        s = api.placeholder(api.string, [None])
        v = api.placeholder(api.int32, [None])
        enq = q.enqueue_many([p, s, v])
        one = q.dequeue()
        many = q.dequeue_many(2)
        upto = q.dequeue_up_to(10)
        size = q.size()
        close = q.close()
        with api.Session() as sess:
            sess.run(enq, {p: [5, 1, 3, 1, 9, -2, 3], s: list("abcdefg"),
                           v: [0, 1, 2, 3, 4, 5, 6]})
            out["size"] = int(sess.run(size))
            out["one"] = _plain(sess.run(one))
            out["many"] = _plain(sess.run(many))
            sess.run(close)
            out["up_to"] = _run_or_error(sess, upto)
            out["end"] = _run_or_error(sess, one)
    return out


def _run_or_error(sess, fetch):
    try:
        return _plain(sess.run(fetch))
    except Exception as e:  # noqa: BLE001 - recorded for comparison
        return _error(e)


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    a = np.asarray(value)
    if a.dtype == object or a.dtype.kind in "SU":
        return {"shape": list(a.shape), "strings": [_hex(x) for x in a.reshape(-1).tolist()]}
    return {"shape": list(a.shape), "dtype": a.dtype.name, "values": a.reshape(-1).tolist()}


BAD_ARGS = {
    "priority_no_shapes": lambda api: api.PriorityQueue(4, [api.int32], shapes=None),
    "priority_shapes_mismatch": lambda api: api.PriorityQueue(4, [api.int32],
                                                              shapes=[[], []]),
    "padding_no_shapes": lambda api: api.PaddingFIFOQueue(4, [api.int32]),
    "padding_shapes_mismatch": lambda api: api.PaddingFIFOQueue(4, [api.int32, api.int32],
                                                                shapes=[[None]]),
}


def run_bad_args(api) -> dict:
    """The error each BAD_ARGS constructor raises, as {"error", "message"}."""
    out = {}
    for name, make in BAD_ARGS.items():
        with api.Graph().as_default():
            try:
                make(api)
                out[name] = None
            except Exception as e:  # noqa: BLE001 - recorded for comparison
                out[name] = _error(e)
    return out


def write_files(folder: str, writer) -> None:
    """Write every scenario file into folder; writer(path, records, compression) writes
    a TFRecord file. cut.tfrecord is a.tfrecord less its last 3 bytes."""
    for name, data in raw_files().items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    for name, (records, compression) in TFRECORDS.items():
        writer(os.path.join(folder, name), records, compression)
    with open(os.path.join(folder, "a.tfrecord"), "rb") as f:
        data = f.read()
    with open(os.path.join(folder, "cut.tfrecord"), "wb") as f:
        f.write(data[:-3])
