"""Record TensorFlow's file and record decoding results for tests/train/test_io_ops.py.

Run by hand with the scratch TF venv (never imported by tests):

    /tmp/s51/tfvenv/bin/python tools/record_tf_io_ops.py

Runs the scenarios of tests/train/io_ops_cases.py under tf.compat.v1 (graph mode) and
writes each one's outputs (dtype, static shape, values; strings as hex) or its error
(class, whether building or running raised, the message's first line) to
tests/train/data/tf1_io_ops_reference.json. Also records TF's TensorProto bytes parsed
back, zlib/gzip streams TF's own writer produced and what DecodeCompressed makes of
them, a file round trip, a missing file, and matching_files over a fixed tree.
"""

from __future__ import annotations

import os
import tempfile
import types

import numpy as np
import tensorflow.compat.v1 as tf

from tf_recording import TRAIN_TESTS, load_cases, write_reference  # noqa: E402

tf.disable_eager_execution()

OUT = TRAIN_TESTS / "data" / "tf1_io_ops_reference.json"


def _padded_raw(input_bytes, fixed_length, out_type, little_endian=True):
    # no tf.io wrapper in this TF: the raw op, as decode_padded_raw would call it
    return tf.raw_ops.DecodePaddedRaw(input_bytes=input_bytes, fixed_length=fixed_length,
                                      out_type=out_type, little_endian=little_endian)


def _lib():
    io = tf.io
    return types.SimpleNamespace(
        decode_csv=io.decode_csv, decode_raw=io.decode_raw,
        decode_padded_raw=_padded_raw, serialize_tensor=io.serialize_tensor,
        parse_tensor=io.parse_tensor, decode_compressed=io.decode_compressed,
        matching_files=io.matching_files, constant=tf.constant, placeholder=tf.placeholder,
        string=tf.string, float16=tf.float16, float32=tf.float32, float64=tf.float64,
        int16=tf.int16, int32=tf.int32, int64=tf.int64, uint8=tf.uint8, bool=tf.bool)


def _encode(tensor, value) -> dict:
    # numpy's bytes dtype would drop trailing NUL bytes: strings go through object
    arr = np.array(value, dtype=object) if isinstance(value, bytes) else np.asarray(value)
    if arr.dtype == object or arr.dtype.kind == "S":
        vals = [bytes(v).hex() for v in arr.reshape(-1)]
    elif arr.dtype.kind == "f":
        vals = [repr(float(v)) for v in arr.reshape(-1)]   # keeps inf/nan in JSON
    else:
        vals = [int(v) for v in arr.reshape(-1)]
    return {"dtype": tensor.dtype.name, "static_shape": tensor.shape.as_list()
            if tensor.shape.ndims is not None else None,
            "shape": list(arr.shape), "values": vals}


def _first_line(text) -> str:
    """The kernel's own sentence: TF 2's messages open with "Graph execution error:"
    and "Detected at node" lines and end with the node list."""
    lines = [ln.strip() for ln in str(text).split("\n")]
    lines = [ln for ln in lines if ln and not ln.startswith(("[[", "Detected at node",
                                                            "Graph execution error"))]
    return lines[-1].split("\t [[")[0].strip() if lines else ""


def run_case(build) -> dict:
    """One scenario's outputs or error, under a fresh graph."""
    with tf.Graph().as_default():
        try:
            fetches, feed = build(_lib())
        except (ValueError, TypeError) as e:
            return {"error": type(e).__name__, "stage": "build", "message": _first_line(e)}
        many = isinstance(fetches, (list, tuple))
        fetch_list = list(fetches) if many else [fetches]
        with tf.Session() as sess:
            try:
                values = sess.run(fetch_list, feed)
            except tf.errors.OpError as e:
                return {"error": type(e).__name__, "stage": "run",
                        "message": _first_line(e.message)}
        return {"outputs": [_encode(t, v) for t, v in zip(fetch_list, values)],
                "list": many}


def _compressed_streams(folder: str) -> dict:
    """ZLIB and GZIP streams written by TF's TFRecordWriter, as bytes."""
    out = {}
    for kind in ("ZLIB", "GZIP"):
        path = os.path.join(folder, f"records.{kind}")
        with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(kind)) as w:
            w.write(b"hello hello hello " * 20)
            w.write(b"\x00\xff binary")
        with open(path, "rb") as fh:
            out[kind] = fh.read()
    return out


def main() -> None:
    cases = load_cases("io_ops_cases")
    ref: dict = {}
    for table in (cases.CSV_CASES, cases.RAW_CASES, cases.SERIALIZE_CASES):
        for name, build in table.items():
            ref[name] = run_case(build)
    for name in cases.SERIALIZE_CASES:
        data = bytes.fromhex(ref[name]["outputs"][0]["values"][0])
        dtype = ref[name]["outputs"][0]["dtype"]
        dtype = {"float": "float32", "double": "float64"}.get(dtype, dtype)
        value = cases.SERIALIZE_VALUES[name]
        kind = "string" if value.dtype == object else value.dtype.name
        ref["parse_" + name] = run_case(cases.parse_case(data, kind))
    first = bytes.fromhex(ref["ser_float32_2x3"]["outputs"][0]["values"][0])
    ref["parse_err_type"] = run_case(cases.parse_case(first, "int32"))
    ref["parse_err_garbage"] = run_case(cases.parse_case(b"\xff\xff\xff", "float32"))
    with tempfile.TemporaryDirectory() as folder:
        streams = _compressed_streams(folder)
        for kind, data in streams.items():
            ref[f"compressed_{kind}"] = dict(run_case(cases.compress_case(data, kind)),
                                             input=data.hex())
        ref["compressed_none"] = dict(run_case(cases.compress_case(b"raw \xff", "")),
                                      input=b"raw \xff".hex())
        ref["compressed_err_bad"] = run_case(cases.compress_case(b"not zlib", "ZLIB"))
        for rel in cases.MATCH_FILES:
            path = os.path.join(folder, "tree", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(rel.encode())
        root = os.path.join(folder, "tree") + "/"
        for name, patterns in cases.MATCH_PATTERNS.items():
            found = run_case(lambda lib, p=patterns: (lib.matching_files(
                [root + q for q in p]), None))
            vals = [bytes.fromhex(v).decode()[len(root):] for v in found["outputs"][0]["values"]]
            ref[name] = {"patterns": patterns, "found": vals,
                         "static_shape": found["outputs"][0]["static_shape"]}
        with tf.Graph().as_default():
            path = os.path.join(folder, "new", "deeper", "f.bin")
            contents = bytes(range(256))
            w = tf.io.write_file(path, contents)
            r = tf.io.read_file(path)
            with tf.Session() as sess:
                sess.run(w)
                got = sess.run(r)
            ref["file_round_trip"] = {"contents": contents.hex(), "read": got.hex(),
                                      "static_shape": r.shape.as_list()}
            missing = tf.io.read_file(os.path.join(folder, "missing.txt"))
            with tf.Session() as sess:
                try:
                    sess.run(missing)
                except tf.errors.OpError as e:
                    ref["read_missing"] = {"error": type(e).__name__,
                                           "message": _first_line(e.message)
                                           .replace(folder, "<dir>")}
    write_reference(OUT, ref)


if __name__ == "__main__":
    main()
