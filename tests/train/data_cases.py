"""The tf.data pipelines that tools/record_tf_data.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_data.py under onegraph (`tf` is either module): the
element sequences must agree."""

from __future__ import annotations

import numpy as np


# the files the file scenarios read (FILES[k] is the path of file k): a text file, two
# TFRecord files, the first compressed both ways and the text gzip-compressed
FILES = ("text", "records", "records2", "records_gzip", "records_zlib", "text_gzip")


def pipelines(tf, files) -> dict:
    """Scenario name -> dataset, built in the current default graph; `files` names the
    text and TFRecord files the file datasets read (FILES)."""
    D = tf.data.Dataset
    f32, i64 = np.float32, np.int64
    a = np.arange(6, dtype=f32).reshape(3, 2)
    b = np.array([1, 2, 3], i64)

    def gen():
        for i in range(4):
            yield i, np.full([i], 0.5 * i, f32)

    return {
        "slices_tuple": D.from_tensor_slices((a, b)),
        "slices_dict": D.from_tensor_slices(
            {"a": np.array([[1, 2], [3, 4]], np.int32), "b": np.array([b"x", b"yz"])}),
        "from_tensors": D.from_tensors((a, np.int32(7))).repeat(2),
        "range_stop": D.range(5),
        "range_step": D.range(2, 11, 3),
        "range_negative": D.range(10, 0, -3),
        "map_arith": D.range(6).map(lambda x: x * 2 + 1),
        "map_tuple": D.from_tensor_slices((a, b)).map(
            lambda x, y: (x + tf.cast(y, tf.float32), y * y)),
        "map_dict": D.from_tensor_slices({"p": b, "q": b * 10}).map(
            lambda d: {"s": d["p"] + d["q"], "d": d["q"] - d["p"]}),
        "filter": D.range(10).filter(lambda x: x % 3 < 2),
        "batch": D.range(10).batch(4),
        "batch_drop": D.range(10).batch(4, drop_remainder=True),
        "batch_tuple": D.from_tensor_slices((a, b)).batch(2),
        "padded_batch": D.range(1, 6).map(lambda x: tf.fill([x], x)).padded_batch(
            2, padded_shapes=[None]),
        "padded_batch_fixed": D.range(1, 5).map(lambda x: tf.fill([x], x)).padded_batch(
            3, padded_shapes=[6], padding_values=np.int64(-1), drop_remainder=True),
        "repeat": D.range(3).repeat(2),
        "take_skip": D.range(10).skip(2).take(5),
        "take_all": D.range(4).take(-1),
        "skip_all": D.range(4).skip(-1),
        "zip": D.zip((D.range(3), D.range(10, 15))),
        "zip_dict": D.zip({"x": D.range(3), "y": D.range(5, 9).map(lambda v: v * v)}),
        "concatenate": D.range(3).concatenate(D.range(10, 12)),
        "flat_map": D.range(3).flat_map(lambda x: D.from_tensors(x).repeat(2)),
        "flat_map_slices": D.from_tensor_slices(a).flat_map(
            lambda r: D.from_tensor_slices(r * 2)),
        "interleave_block": D.range(1, 6).interleave(
            lambda x: D.from_tensor_slices(tf.fill([x], x)), cycle_length=2, block_length=2),
        "interleave_cycle3": D.range(1, 8).interleave(
            lambda x: D.from_tensor_slices(tf.fill([x % 3 + 1], x * 10)), cycle_length=3),
        "interleave_tuple": D.from_tensor_slices((a, b)).interleave(
            lambda x, y: D.from_tensor_slices((x, tf.fill([2], y))), cycle_length=2,
            block_length=1),
        "interleave_one": D.range(3).interleave(
            lambda x: D.from_tensor_slices(tf.fill([2], x)), cycle_length=1, block_length=3),
        "shard": D.range(10).shard(3, 1),
        "shard_last": D.range(7).shard(4, 3),
        "unbatch": D.from_tensor_slices(np.arange(12, dtype=i64).reshape(3, 2, 2)).unbatch(),
        "enumerate": D.from_tensor_slices(np.array([5, 6, 7], np.int32)).enumerate(start=3),
        "cache_repeat": D.range(3).map(lambda x: x + 1).cache().repeat(2),
        "apply": D.range(5).apply(lambda d: d.skip(1).map(lambda v: -v)),
        "prefetch": D.range(3).prefetch(2),
        "text_lines": tf.data.TextLineDataset(files["text"]),
        "tfrecords": tf.data.TFRecordDataset([files["records"], files["records"]]),
        "tfrecords_gzip": tf.data.TFRecordDataset(files["records_gzip"], compression_type="GZIP"),
        "tfrecords_zlib": tf.data.TFRecordDataset([files["records_zlib"]], "ZLIB"),
        "text_lines_gzip": tf.data.TextLineDataset(files["text_gzip"], compression_type="GZIP"),
        "tfrecords_parallel_reads": tf.data.TFRecordDataset(
            [files["records"], files["records2"], files["records"]], num_parallel_reads=2),
        "slices_of_constants": D.from_tensor_slices(
            tf.constant(np.array([1, 2, 3], np.int32)) * 2 + tf.range(3)),
        "tfrecords_tensor_names": tf.data.TFRecordDataset(
            tf.constant([files["records2"], files["records"]])),
        "interleave_files": D.from_tensor_slices([files["records"], files["records2"]])
        .interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=3),
        "flat_map_text_files": D.from_tensor_slices([files["text"], files["text"]])
        .flat_map(tf.data.TextLineDataset).take(7),
        "generator": D.from_generator(gen, (tf.int64, tf.float32),
                                      (tf.TensorShape([]), tf.TensorShape([None]))),
        "generator_padded": D.from_generator(gen, (tf.int64, tf.float32),
                                             (tf.TensorShape([]), tf.TensorShape([None])))
        .padded_batch(3),
    }


# the (iterator, reads) steps the feedable scenario takes: train is one-shot over
# range(5), valid an initializable iterator over range(100, 103), re-initialized at "init"
FEEDABLE_STEPS = ["train", "train", "init", "valid", "train", "valid", "valid", "valid",
                  "init", "valid", "train", "train", "train"]


def feedable(tf, inspect=None) -> list:
    """TF1's train/validation switching: the element (or "end") each step reads.
    `inspect(it, nxt, handle, handles)`, when given, sees the iterators and the two
    handles before the steps run."""
    with tf.Graph().as_default():
        train = tf.data.make_one_shot_iterator(tf.data.Dataset.range(5))
        valid = tf.data.make_initializable_iterator(tf.data.Dataset.range(100, 103))
        handle = tf.placeholder(tf.string, [])
        it = tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([]))
        nxt = it.get_next()
        seen = []
        with tf.Session() as sess:
            handles = dict(zip(("train", "valid"), sess.run(
                [train.string_handle(), valid.string_handle()])))
            if inspect is not None:
                inspect(it, nxt, handle, handles)
            for step in FEEDABLE_STEPS:
                if step == "init":
                    sess.run(valid.initializer)
                    continue
                try:
                    seen.append(int(sess.run(nxt, {handle: handles[step]})))
                except tf.errors.OutOfRangeError:
                    seen.append("end")
        return seen


# the values fed to the placeholder the capturing pipelines read, one run each
CAPTURE_FEEDS = [10, 3]


def capturing(tf, scale) -> dict:
    """Scenario name -> dataset whose functions read `scale` (an int64 placeholder of
    the graph) or the arguments of the functions around them (TF's captures)."""
    D = tf.data.Dataset
    return {
        "map_reads_placeholder": D.range(3).map(lambda x: x * scale),
        "nested_reads_outer_argument": D.range(1, 4).flat_map(
            lambda x: D.range(x).map(lambda y: y + x * 100)),
        "nested_reads_placeholder": D.range(1, 3).interleave(
            lambda x: D.range(x).map(lambda y: scale * y + x), cycle_length=2),
        "filter_and_range_read_placeholder": D.range(8).filter(lambda x: x < scale)
        .flat_map(lambda x: D.range(x, scale)),
    }


def _example(tf, values, label):
    """A serialized tf.train.Example with a VarLen-like float list and an int label."""
    T = tf.train
    return T.Example(features=T.Features(feature={
        "v": T.Feature(float_list=T.FloatList(value=values)),
        "label": T.Feature(int64_list=T.Int64List(value=[label]))})).SerializeToString()


def sparse_pipelines(tf) -> dict:
    """Scenario name -> dataset with SparseTensor components."""
    D = tf.data.Dataset
    i64 = np.int64
    st = tf.SparseTensorValue(np.array([[0, 0], [1, 0], [1, 2], [3, 1]], i64),
                              np.array([1.5, 2.5, 3.5, 4.5], np.float32),
                              np.array([4, 3], i64))
    sorted_st = tf.SparseTensorValue(np.array([[0, 0], [1, 0], [1, 2], [3, 1]], i64),
                                     np.array([1, 2, 3, 4], np.int32), np.array([4, 3], i64))

    def ragged(x):
        return tf.SparseTensor(tf.reshape(tf.range(x), [-1, 1]), tf.range(x) * 10,
                               tf.reshape(x, [1]))

    serialized = np.array([_example(tf, [1.0, 2.0], 7), _example(tf, [], 8),
                           _example(tf, [3.0], 9)], object)
    spec = {"v": tf.io.VarLenFeature(tf.float32), "label": tf.io.FixedLenFeature([], tf.int64)}
    return {
        "sparse_slices": D.from_tensor_slices(sorted_st),
        "sparse_from_tensors_unbatch": D.from_tensors(st).apply(lambda d: d.unbatch()),
        "sparse_map_batch": D.range(4).map(ragged).batch(3),
        "sparse_dict_map": D.range(1, 3).map(lambda x: {"s": ragged(x), "d": x * 2}),
        "sparse_concatenate": D.range(2).map(ragged).concatenate(D.range(3, 4).map(ragged)),
        "sparse_map_reads_sparse": D.range(1, 4).map(ragged).map(
            lambda s: (tf.sparse.reduce_sum(s), s.dense_shape)),
        "parse_varlen_batch": D.from_tensor_slices(serialized).map(
            lambda r: tf.io.parse_single_example(r, spec)).batch(2),
    }


def window_pipelines(tf) -> dict:
    """Scenario name -> dataset made of windows (turned back into values)."""
    D = tf.data.Dataset
    pairs = D.from_tensor_slices((np.arange(7, dtype=np.int64), np.arange(7) * 0.5))
    return {
        "window_batch": D.range(7).window(3).flat_map(lambda w: w.batch(3)),
        "window_shift_stride": D.range(10).window(3, shift=2, stride=2).flat_map(
            lambda w: w.batch(3)),
        "window_drop": D.range(10).window(4, 3, drop_remainder=True).flat_map(
            lambda w: w.batch(4)),
        "window_long_shift": D.range(11).window(2, shift=5).flat_map(lambda w: w.batch(2)),
        "window_tuple_zip": pairs.window(3, 2).flat_map(
            lambda a, b: D.zip((a.batch(3), b.batch(3)))),
        "window_interleave": D.range(6).window(2).interleave(
            lambda w: w.map(lambda v: v * 10), cycle_length=2),
        "window_dict_reduce_batch": D.from_tensor_slices({"x": np.arange(5, dtype=np.int32)})
        .window(2, 1).flat_map(lambda d: d["x"].batch(2)),
    }
