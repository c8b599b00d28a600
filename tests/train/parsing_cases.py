"""The Example protos and parsing scenarios that tools/record_tf_parsing.py runs under
TensorFlow (tf.compat.v1) and tests/train/test_parsing.py / test_example_proto.py under
onegraph. `tf` is either module (or a namespace with train.Example..., io.parse_example...,
float32/int64/string, data.TFRecordDataset): the results must agree."""

from __future__ import annotations


def protos(tf) -> dict:
    """Name -> an Example or SequenceExample built with `tf`'s proto classes."""
    t = tf.train

    def f(values):
        return t.Feature(float_list=t.FloatList(value=values))

    def i(values):
        return t.Feature(int64_list=t.Int64List(value=values))

    def b(values):
        return t.Feature(bytes_list=t.BytesList(value=values))

    def ex(**feature):
        return t.Example(features=t.Features(feature=feature))

    return {
        "basic": ex(x=f([1.0, 2.0]), label=i([3]), name=b([b"abc"])),
        "basic2": ex(x=f([-0.5, 1e30]), label=i([-4]), name=b([b"p", b"q", b"r"])),
        "basic3": ex(x=f([3.25, 0.0]), label=i([2 ** 40]), name=b([])),
        "ints": ex(v=i([-1, 0, 1, 127, 128, 2 ** 62, -2 ** 63, 2 ** 63 - 1])),
        "matrix": ex(m=f([1, 2, 3, 4, 5, 6]), k=i([1, 2, 3, 4]),
                     s=b([b"a", b"\xff\xfe"]), seq=f([1, 2, 3, 4])),
        "matrix2": ex(m=f([0.5] * 6), k=i([9, 8, 7, 6]), s=b([b"", b"z"]), seq=f([7, 8])),
        "only_x": ex(x=f([5.0, 6.0])),
        # protobuf's deterministic map order (keys sharing a prefix)
        "key_order": ex(a=i([1]), ab=i([2]), abc=i([3]), b=i([4]), ba=i([5]), B=i([6]),
                        **{"\u00e9": i([7]), "z": i([8])}),
        "wrong_type": ex(x=i([1, 2]), label=i([3])),
        "wrong_size": ex(x=f([1.0, 2.0, 3.0]), label=i([3])),
        "empty_kind": ex(x=t.Feature(float_list=t.FloatList()), label=i([1])),
        # text-format corners (one map entry each, so TF's hash order cannot show)
        "text_bytes": ex(s=b([b"a\"'\\\n\x00\xff\x7f", b"\t\r"])),
        "text_floats": ex(v=f([1.0, 0.1, 1e30, float("inf"), -float("inf"), 3.4028235e38,
                               1e-45, 123456789.0, -0.0, 2.5e-8])),
        "text_key": ex(**{"k\u00e9\"\n": i([1])}),
        "sparse1": ex(ix=i([3, 1]), val=f([0.5, 1.5]), ix2=i([0, 2])),
        "sparse2": ex(ix=i([0]), val=f([2.0]), ix2=i([1])),
        "no_features": t.Example(),
        "empty_features": t.Example(features=t.Features()),
        "seq1": t.SequenceExample(
            context=t.Features(feature={"id": i([7]), "tags": b([b"a", b"b"])}),
            feature_lists=t.FeatureLists(feature_list={
                "frames": t.FeatureList(feature=[f([1, 2]), f([3, 4]), f([5, 6])]),
                "words": t.FeatureList(feature=[b([b"x"]), b([b"y", b"z"]), b([])]),
                "ids": t.FeatureList(feature=[i([1]), i([2, 3])])})),
        "seq2": t.SequenceExample(
            context=t.Features(feature={"id": i([8])}),
            feature_lists=t.FeatureLists(feature_list={
                "frames": t.FeatureList(feature=[f([9, 10])]),
                "ids": t.FeatureList(feature=[i([4, 5, 6])])})),
        "seq_bad_frame": t.SequenceExample(
            context=t.Features(feature={"id": i([1])}),
            feature_lists=t.FeatureLists(feature_list={
                "frames": t.FeatureList(feature=[f([1, 2, 3])])})),
    }


# the protos written, in order, to the TFRecord file the pipeline scenario reads
RECORDS = ("basic", "basic2", "basic3", "only_x")


def parse_cases(tf) -> dict:
    """Scenario name -> (input: a proto name (scalar) or a list of them (vector; a
    tuple: a vector of known length), fn(serialized tensor) -> dict or tuple of dicts
    of parsed tensors)."""
    io, f32, i64, s = tf.io, tf.float32, tf.int64, tf.string
    base = {"x": io.FixedLenFeature([2], f32), "label": io.FixedLenFeature([], i64),
            "name": io.VarLenFeature(s)}
    mat = {"m": io.FixedLenFeature([2, 3], f32), "k": io.FixedLenFeature([2, 2], i64),
           "s": io.FixedLenFeature([2], s),
           "seq": io.FixedLenSequenceFeature([2], f32, allow_missing=True),
           "absent": io.FixedLenFeature([2], s, default_value=[b"d", b"e"]),
           "absent_i": io.FixedLenFeature([], i64, default_value=-1),
           "vs": io.VarLenFeature(s), "vm": io.VarLenFeature(f32)}
    seq_ctx = {"id": io.FixedLenFeature([], i64), "tags": io.VarLenFeature(s),
               "w": io.FixedLenFeature([1], f32, default_value=[0.5])}
    seq_seq = {"frames": io.FixedLenSequenceFeature([2], f32),
               "words": io.VarLenFeature(s), "ids": io.VarLenFeature(i64),
               "none": io.FixedLenSequenceFeature([], i64, allow_missing=True)}
    return {
        "single_basic": ("basic", lambda x: io.parse_single_example(x, base)),
        "single_empty_var": ("basic3", lambda x: io.parse_single_example(x, base)),
        "batch_basic": (["basic", "basic2", "basic3"], lambda x: io.parse_example(x, base)),
        "batch_ints": (["ints"], lambda x: io.parse_example(
            x, {"v": io.FixedLenFeature([8], i64), "w": io.VarLenFeature(i64)})),
        "batch_matrix": (["matrix", "matrix2"], lambda x: io.parse_example(x, mat)),
        "single_matrix": ("matrix", lambda x: io.parse_single_example(x, mat)),
        "batch_defaults": (["only_x", "basic"], lambda x: io.parse_example(x, {
            "x": io.FixedLenFeature([2], f32),
            "label": io.FixedLenFeature([], i64, default_value=42),
            "name": io.FixedLenFeature([], s, default_value="none")})),
        "batch_seq_missing": (["only_x", "matrix", "matrix2"], lambda x: io.parse_example(x, {
            "seq": io.FixedLenSequenceFeature([], f32, allow_missing=True,
                                              default_value=-1.0)})),
        "batch_empty": ([], lambda x: io.parse_example(x, base)),
        "batch_known_length": (("matrix", "matrix2"), lambda x: io.parse_example(x, mat)),
        "batch_sparse_feature": (["sparse1", "sparse2"], lambda x: io.parse_example(x, {
            "sp": io.SparseFeature("ix", "val", f32, 5),
            "sp2": io.SparseFeature(["ix", "ix2"], "val", f32, [5, 3]),
            "ix": io.VarLenFeature(i64)})),
        "single_sparse_feature": ("sparse1", lambda x: io.parse_single_example(x, {
            "sp": io.SparseFeature("ix", "val", f32, 5, already_sorted=True),
            "sp_sorted": io.SparseFeature("ix", "val", f32, 5)})),
        "single_seq": ("seq1", lambda x: io.parse_single_sequence_example(
            x, context_features=seq_ctx, sequence_features=seq_seq)),
        "single_seq2": ("seq2", lambda x: io.parse_single_sequence_example(
            x, context_features={"id": io.FixedLenFeature([], i64)},
            sequence_features={"frames": io.FixedLenSequenceFeature([2], f32),
                               "ids": io.VarLenFeature(i64)})),
        "batch_seq": (["seq1", "seq2"], lambda x: io.parse_sequence_example(
            x, context_features={"id": io.FixedLenFeature([], i64)},
            sequence_features={"frames": io.FixedLenSequenceFeature([2], f32),
                               "ids": io.VarLenFeature(i64)})),
    }


def error_cases(tf) -> dict:
    """Scenario name -> (input, fn): running (or building) fn must fail."""
    io, f32, i64, s = tf.io, tf.float32, tf.int64, tf.string
    base = {"x": io.FixedLenFeature([2], f32), "label": io.FixedLenFeature([], i64)}
    return {
        "missing_single": ("only_x", lambda x: io.parse_single_example(x, base)),
        "missing_batch": (["basic", "only_x"], lambda x: io.parse_example(x, base)),
        "wrong_type_single": ("wrong_type", lambda x: io.parse_single_example(x, base)),
        "wrong_type_batch": (["wrong_type"], lambda x: io.parse_example(x, base)),
        "wrong_size_single": ("wrong_size", lambda x: io.parse_single_example(x, base)),
        "wrong_size_batch": (["wrong_size"], lambda x: io.parse_example(x, base)),
        "empty_kind_required": ("empty_kind", lambda x: io.parse_single_example(x, base)),
        "var_wrong_type": (["basic"], lambda x: io.parse_example(
            x, {"name": io.VarLenFeature(i64)})),
        "seq_stride": (["matrix"], lambda x: io.parse_example(
            x, {"m": io.FixedLenSequenceFeature([4], f32, allow_missing=True)})),
        "corrupt": (b"\x0a\x05\x0a\x03", lambda x: io.parse_single_example(x, base)),
        "corrupt_batch": ([b"\x0a\x05\x0a\x03"], lambda x: io.parse_example(x, base)),
        "seq_missing_list": ("seq2", lambda x: io.parse_single_sequence_example(
            x, sequence_features={"words": io.FixedLenSequenceFeature([], s)})),
        "seq_bad_frame": ("seq_bad_frame", lambda x: io.parse_single_sequence_example(
            x, sequence_features={"frames": io.FixedLenSequenceFeature([2], f32)})),
        "batch_seq_missing_list": (["seq1", "seq2"], lambda x: io.parse_sequence_example(
            x, sequence_features={"words": io.FixedLenSequenceFeature([], s)})),
        "batch_seq_bad_frame": (["seq1", "seq_bad_frame"], lambda x: io.parse_sequence_example(
            x, sequence_features={"frames": io.FixedLenSequenceFeature([2], f32)})),
        "seq_list_wrong_type": ("seq1", lambda x: io.parse_single_sequence_example(
            x, sequence_features={"words": io.VarLenFeature(i64)})),
        "var_wrong_type_single": ("basic", lambda x: io.parse_single_example(
            x, {"name": io.VarLenFeature(f32)})),
        "spec_none": ("basic", lambda x: io.parse_single_example(x, None)),
        "spec_bad_type": ("basic", lambda x: io.parse_single_example(
            x, {"x": io.FixedLenFeature([2], tf.int32)})),
        "spec_bad_default": ("basic", lambda x: io.parse_single_example(
            x, {"x": io.FixedLenFeature([2], f32, default_value=[1.0, 2.0, 3.0])})),
        "spec_seq_no_missing": (["basic"], lambda x: io.parse_example(
            x, {"x": io.FixedLenSequenceFeature([], f32)})),
        "spec_not_a_feature": ("basic", lambda x: io.parse_single_example(x, {"x": 3})),
    }


def pipeline(tf, path):
    """TFRecordDataset over the RECORDS file, each record parsed, batched by 3."""
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64, default_value=0)}
    return tf.data.TFRecordDataset(path).map(
        lambda r: tf.io.parse_single_example(r, spec)).batch(3)
