"""og.import_graph_def with TF1's TensorArrayV3 ops in control flow v1 loops against TF:
frozen GraphDefs (tf.nn.dynamic_rnn with BasicRNN/LSTM/GRU cells with and without
sequence_length, tf.map_fn, tf.scan, tf.foldl/foldr, hand-written while loops writing
arrays) and outputs recorded by tools/record_tf_graph_def_tensor_array.py (TF 2.21,
tf.compat.v1 with control flow v2 off), run by og's Session, saved to and loaded from
.og, and exported to ONNX for onnxruntime."""

from __future__ import annotations

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ConversionError, ShapeError
from onegraph.train.graph_def import AttrValue, GraphDef, NodeDef
from onegraph.train.graph_def_import import import_graph_def

from . import graph_def_recordings as rec

NAMES = ["rnn_basic", "rnn_basic_seqlen", "rnn_lstm", "rnn_lstm_seqlen", "rnn_gru",
         "rnn_gru_seqlen", "map_fn", "scan_fold", "while_dynamic", "while_fixed", "split",
         "bad_reads"]


def test_recordings_hold_tensor_array_v3_in_control_flow_v1():
    for name in NAMES:
        graph_def, _, _, runs = rec.load("ta_" + name)
        kinds = {n.op for n in graph_def.node}
        assert "TensorArrayV3" in kinds, name
        assert not any(k.startswith("TensorList") or k in ("While", "StatelessWhile", "If")
                       for k in kinds), name
        if name not in ("split", "bad_reads"):
            assert {"Enter", "Exit", "Merge", "NextIteration"} <= kinds, name
        assert len(runs) >= 2, name


@pytest.mark.parametrize("name", NAMES)
def test_imported_graph_matches_tf(name):
    rec.check_imported("ta_" + name)


@pytest.mark.parametrize("name", NAMES)
def test_saved_og_file_runs(name, tmp_path):
    rec.check_og_file("ta_" + name, tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_onnx_export_runs_in_onnxruntime(name, tmp_path):
    rec.check_onnxruntime("ta_" + name, tmp_path)


def test_read_out_of_range_fails_at_run_time():
    # TF: InvalidArgumentError "Tried to read from index 5 but array size is: 3"
    ref = np.load(os.path.join(rec.DATA, "ta_bad_reads.npz"))
    assert str(ref["err_3"][0]) == "InvalidArgumentError"
    assert "index 5" in str(ref["err_3"][1]) and "size is: 3" in str(ref["err_3"][1])
    graph_def, _, _, _ = rec.load("ta_bad_reads")
    with og.Graph().as_default() as g:
        out, i = import_graph_def(graph_def, return_elements=["out:0", "i:0"], name="")
        with og.Session(graph=g) as sess:
            with pytest.raises(ShapeError, match="out of range.*size 3"):
                sess.run(out, {i: ref["in_3_0"]})


def _node(name, op, inputs=(), **attrs):
    return NodeDef(name=name, op=op, input=list(inputs),
                   attr={k: AttrValue(kind, v) for k, (kind, v) in attrs.items()})


def _int_const(name, value):
    return _node(name, "Const", dtype=("type", 3),
                 value=("tensor", _tensor_proto(np.asarray(value, np.int32))))


def _tensor_proto(array):
    """A TensorProto's bytes for an int32 array (dtype, shape, int_val)."""
    def varint(n):
        out = bytearray()
        n &= (1 << 64) - 1
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def field(num, payload):
        return varint(num << 3 | 2) + varint(len(payload)) + payload
    dims = b"".join(field(2, varint(1 << 3) + varint(d)) for d in array.shape)
    ints = b"".join(varint(int(v)) for v in array.reshape(-1))
    return varint(1 << 3) + varint(3) + field(2, dims) + field(7, ints)


def _array_graph(write_type, split_lengths=None):
    """size-3 float TensorArray, element shape [2], written once at index 0."""
    nodes = [_int_const("size", 3), _int_const("i", 0),
             _node("v", "Placeholder", dtype=("type", write_type), shape=("shape", [2])),
             _node("ta", "TensorArrayV3", ["size"], dtype=("type", 1),
                   element_shape=("shape", [2])),
             _node("w", "TensorArrayWriteV3", ["ta", "i", "v", "ta:1"], T=("type", write_type))]
    if split_lengths is not None:
        nodes += [_int_const("len", split_lengths),
                  _node("x", "Placeholder", dtype=("type", 1), shape=("shape", [6])),
                  _node("s", "TensorArraySplitV3", ["ta", "x", "len", "ta:1"],
                        T=("type", 1))]
    return GraphDef(nodes)


def test_hand_built_array_imports():
    # the oracle: a write then nothing else, so the flow holds [v, 0, 0]
    with og.Graph().as_default() as g:
        w, v = import_graph_def(_array_graph(1), return_elements=["w:0", "v:0"], name="")
        with og.Session(graph=g) as sess:
            got = sess.run(w, {v: np.array([1.5, -2.0], np.float32)})
    np.testing.assert_array_equal(got, [[1.5, -2.0], [0, 0], [0, 0]])


def test_dtype_mismatch_is_refused():
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="'w'.*int32.*float32"):
            import_graph_def(_array_graph(3))


def test_unequal_split_is_refused():
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="'s'.*not all equal"):
            import_graph_def(_array_graph(1, split_lengths=[1, 2, 3]))


def test_handle_not_from_a_tensor_array_is_refused():
    gd = GraphDef([_int_const("i", 0),
                   _node("h", "Placeholder", dtype=("type", 1), shape=("shape", [])),
                   _node("r", "TensorArrayReadV3", ["h", "i", "h"], dtype=("type", 1))])
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="'r'.*not come from a TensorArrayV3"):
            import_graph_def(gd)
