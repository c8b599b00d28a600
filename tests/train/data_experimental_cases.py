"""The tf.data.experimental pipelines that tools/record_tf_data.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_data_experimental.py under onegraph (`tf` is either
module): the element sequences must agree."""

from __future__ import annotations

import numpy as np


def experimental_pipelines(tf) -> dict:
    """Scenario name -> dataset, built in the current default graph (deterministic
    pipelines only)."""
    D, X = tf.data.Dataset, tf.data.experimental
    i64 = np.int64
    words = np.array([b"a", b"bb", b"a", b"ccc", b"bb", b"d"])

    def lengths():
        for n in [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]:
            yield np.arange(n, dtype=i64) + 1

    seqs = D.from_generator(lengths, tf.int64, tf.TensorShape([None]))
    return {
        "counter": X.Counter(start=3, step=2).take(4),
        "counter_int32": X.Counter(10, -3, dtype=tf.int32).take(3),
        "map_and_batch": D.range(7).apply(X.map_and_batch(lambda x: x * x, 3)),
        "map_and_batch_drop": D.range(7).apply(
            X.map_and_batch(lambda x: (x, -x), 3, drop_remainder=True)),
        "parallel_interleave": D.range(1, 6).apply(X.parallel_interleave(
            lambda x: D.from_tensor_slices(tf.fill([x], x)), cycle_length=2, block_length=2)),
        "parallel_interleave_cycle3": D.range(1, 8).apply(X.parallel_interleave(
            lambda x: D.range(x % 3 + 1).map(lambda y: y + x * 10), cycle_length=3)),
        "unbatch": D.from_tensor_slices(np.arange(8, dtype=i64).reshape(2, 2, 2)).apply(
            X.unbatch()),
        "enumerate_dataset": D.range(3).apply(X.enumerate_dataset(5)),
        "choose_from_datasets": X.choose_from_datasets(
            [D.range(3), D.range(10, 14), D.range(20, 22)],
            D.from_tensor_slices(np.array([0, 1, 2, 2, 2, 0, 1, 0, 0, 1, 1], i64))),
        "scan_running_sum": D.range(1, 6).apply(X.scan(
            np.int64(0), lambda state, x: (state + x, state * 10 + x))),
        "scan_tuple": D.from_tensor_slices((np.arange(4, dtype=i64), np.arange(4) * 0.5))
        .apply(X.scan((np.int64(1), np.float64(0)),
                      lambda s, e: ((s[0] * 2, s[1] + e[1]), e[0] + s[0]))),
        "take_while": D.range(10).apply(X.take_while(lambda x: x * x < 20)),
        "unique_int": D.from_tensor_slices(np.array([3, 1, 3, 2, 1, 7], i64)).apply(X.unique()),
        "unique_str": D.from_tensor_slices(words).apply(X.unique()),
        "group_by_window": D.range(10).apply(X.group_by_window(
            lambda x: x % 3, lambda key, w: w.batch(2).map(lambda b: (b, key)), window_size=2)),
        "group_by_window_size_func": D.range(12).apply(X.group_by_window(
            lambda x: x % 2, lambda key, w: w.batch(5), window_size_func=lambda k: k + 2)),
        "bucket_by_sequence_length": seqs.apply(X.bucket_by_sequence_length(
            lambda s: tf.shape(s)[0], [3, 5], [2, 2, 3])),
        "bucket_pad_to_boundary": seqs.apply(X.bucket_by_sequence_length(
            lambda s: tf.shape(s)[0], [3, 10], [2, 2, 2], pad_to_bucket_boundary=True,
            padding_values=np.int64(-1))),
        "bucket_drop_remainder": seqs.apply(X.bucket_by_sequence_length(
            lambda s: tf.shape(s)[0], [4], [3, 2], drop_remainder=True)),
        "ignore_errors_map": D.from_tensor_slices(np.array([1, 0, 2, -1, 4], np.float32)).map(
            lambda x: tf.debugging.check_numerics(tf.math.log(x), "bad")).apply(
            X.ignore_errors()),
        "ignore_errors_filter": D.from_tensor_slices(words[:3]).map(
            lambda s: tf.strings.length(s)).map(
            lambda n: tf.strings.to_number(tf.strings.as_string(n * 7 - 7), tf.int32) +
            tf.strings.to_number(tf.cond(n > 1, lambda: "x", lambda: "1"), tf.int32))
        .filter(lambda v: v > 0).apply(X.ignore_errors(log_warning=True)),
        "prefetch_to_device": D.range(3).apply(X.prefetch_to_device("/cpu:0")),
        "copy_to_device": D.range(3).apply(X.copy_to_device("/cpu:0")),
    }


def single_values(tf) -> dict:
    """Scenario name -> tensors from whole-dataset ops (get_single_element, reduce),
    built in the current default graph."""
    D, X = tf.data.Dataset, tf.data.experimental
    return {
        "single_tuple": X.get_single_element(
            D.from_tensors((np.int64(4), np.ones([2], np.float32)))),
        "single_of_batch": X.get_single_element(D.range(5).batch(5)),
        "reduce_sum": D.range(1, 6).reduce(np.int64(0), lambda s, x: s + x),
        "reduce_tuple": D.from_tensor_slices(np.arange(4, dtype=np.float32)).reduce(
            (np.float32(0), np.int64(0)), lambda s, x: (s[0] + x * x, s[1] + 1)),
        "reduce_grow": D.range(3).reduce(np.zeros([0], np.int64),
                                         lambda s, x: tf.concat([s, tf.reshape(x, [1])], 0)),
    }


# whole-dataset ops that fail when run, and TF's message
SINGLE_ERRORS = {"empty": "Dataset was empty.", "two": "Dataset had more than one element."}


def failing_singles(tf) -> dict:
    D, X = tf.data.Dataset, tf.data.experimental
    return {"empty": X.get_single_element(D.range(0)),
            "two": X.get_single_element(D.range(2))}
