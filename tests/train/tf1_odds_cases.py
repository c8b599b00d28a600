"""TF1's small top-level functions and tf.nest, as tools/record_tf_odds.py runs them
under TensorFlow (tf.compat.v1) and tests/train/test_api_tf1_odds.py under onegraph
(`tf` is either module)."""

from __future__ import annotations

import collections

import numpy as np

Point = collections.namedtuple("Point", ["x", "y"])


def tensors(tf) -> dict:
    """Scenario name -> tensor, built in the current default graph."""
    f32, i64 = np.float32, np.int64
    data = tf.constant(np.arange(15, dtype=f32).reshape(5, 3) - 4)
    data3 = tf.constant(np.arange(24, dtype=np.float64).reshape(4, 3, 2))
    return {
        "segment_sum": tf.sparse.segment_sum(data, [0, 1, 3, 4], [0, 0, 2, 2]),
        "segment_sum_num": tf.sparse.segment_sum(data, [4, 4, 0], [1, 1, 3], num_segments=5),
        "segment_mean": tf.sparse.segment_mean(data, [0, 1, 3, 4, 2], [0, 0, 1, 3, 3]),
        "segment_mean_3d": tf.sparse.segment_mean(data3, [0, 3], [1, 1]),
        "segment_sqrt_n": tf.sparse.segment_sqrt_n(data, [0, 1, 2, 4], [0, 0, 0, 2]),
        "segment_sqrt_n_num": tf.sparse.segment_sqrt_n(data3, np.array([1, 2], i64),
                                                       np.array([0, 2], i64), num_segments=4),
        "unravel_index": tf.unravel_index(tf.constant([1, 5, 7, 0], tf.int32),
                                          tf.constant([2, 4], tf.int32)),
        "unravel_index_3d": tf.unravel_index(tf.constant(np.array([22, 41, 37, 5], i64)),
                                             tf.constant(np.array([7, 6, 1], i64))),
        "unravel_index_scalar": tf.unravel_index(tf.constant(17, tf.int32),
                                                 tf.constant([3, 3, 3], tf.int32)),
        "clip_by_average_norm": tf.clip_by_average_norm(data, 0.5),
        "clip_by_average_norm_small": tf.clip_by_average_norm(data, 100.0),
        "non_decreasing_true": tf.is_non_decreasing(tf.constant([[1, 2], [2, 5]])),
        "non_decreasing_false": tf.is_non_decreasing(tf.constant([1.0, 0.5])),
        "non_decreasing_empty": tf.is_non_decreasing(tf.constant(np.zeros([0], f32))),
        "strictly_increasing_true": tf.is_strictly_increasing(tf.constant([-3, 0, 9])),
        "strictly_increasing_false": tf.is_strictly_increasing(tf.constant([1, 2, 2])),
        "strictly_increasing_uint8": tf.is_strictly_increasing(
            tf.constant(np.array([0, 200, 255], np.uint8))),
        "tensor_scatter_add": tf.tensor_scatter_add(data, [[1], [3]], tf.ones([2, 3])),
        "tensor_scatter_sub": tf.tensor_scatter_sub(data, [[0, 2]], [10.0]),
        "tensor_scatter_update": tf.tensor_scatter_update(data, [[4]], [[7.0, 8.0, 9.0]]),
        "accumulate_n": tf.accumulate_n([data, data * 2.0, tf.ones([5, 3])]),
        "sparse_matmul": tf.sparse_matmul(data, data, transpose_b=True, a_is_sparse=True),
    }


def structures() -> dict:
    """Scenario name -> a Python structure for tf.nest."""
    return {
        "dict": {"b": 1, "a": [2, (3, 4)], "c": {"z": 5, "y": None}},
        "namedtuple": Point(x=[1, 2], y={"k": "text"}),
        "ordered": collections.OrderedDict([("z", 1), ("a", 2)]),
        "leaf": 7,
        "empty": [(), {}, [[]]],
    }


def nest_results(tf) -> dict:
    """What tf.nest does with each structure: flatten, map_structure (leaves to their
    repr), pack_sequence_as of numbered leaves."""
    out = {}
    for name, s in structures().items():
        flat = tf.nest.flatten(s)
        packed = tf.nest.pack_sequence_as(s, list(range(len(flat))))
        out[name] = {"flatten": [repr(v) for v in flat],
                     "map": repr(tf.nest.map_structure(lambda v: repr(v), s)),
                     "pack": repr(packed), "is_nested": tf.nest.is_nested(s)}
    return out


# structure pairs and whether (and how) tf.nest.assert_same_structure refuses them
SAME_STRUCTURE = {
    "equal": ({"a": [1, 2]}, {"a": [3, 4]}, True),
    "list_vs_tuple": ([1, 2], (1, 2), True),
    "list_vs_tuple_unchecked": ([1, 2], (1, 2), False),
    "lengths": ([1, 2], [1], True),
    "keys": ({"a": 1}, {"b": 1}, True),
    "leaf_vs_list": (1, [1], True),
}
