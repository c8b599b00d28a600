"""og.nn.nce_loss and og.nn.sampled_softmax_loss checked against TensorFlow's
tf.compat.v1.nn (values, and gradients with respect to weights, biases and inputs):
shared by tests/train/test_sampled_losses.py and `tools/record_tf1_reference.py
sampled` (which needs tensorflow; the test does not). Case form as tf1_nn_cases.py's;
the sampled classes are given (`sampled_values`, a tuple of "@key" inputs), so the
losses are deterministic. Sampled class 4 is also a true class of example 1 and 7 one
of example 2 (accidental hits).
"""

import numpy as np


def make_inputs() -> dict:
    """Weights (20 classes x 5), biases, inputs (batch 3), labels, sampled classes and
    their expected counts (fixed seed); shards of the weights for both partition
    strategies."""
    rng = np.random.RandomState(20261203)
    w = rng.randn(20, 5).astype(np.float32)
    b = (rng.randn(20) * 0.1).astype(np.float32)
    rows = np.arange(20)
    return {
        "w": w, "b": b,
        "x": rng.randn(3, 5).astype(np.float32),
        "labels": np.array([[2], [4], [19]], np.int64),
        "labels2": np.array([[2, 11], [4, 0], [7, 7]], np.int64),
        "sampled": np.array([4, 9, 0, 15, 7, 1], np.int64),
        "true_count": rng.uniform(0.05, 0.9, (3, 1)).astype(np.float32),
        "true_count2": rng.uniform(0.05, 0.9, (3, 2)).astype(np.float32),
        "sampled_count": rng.uniform(0.05, 0.9, (6,)).astype(np.float32),
        # "mod": row r in shard r % 3 at r // 3; "div": blocks of 7, 7, 6 rows
        "w_mod0": w[rows % 3 == 0], "w_mod1": w[rows % 3 == 1], "w_mod2": w[rows % 3 == 2],
        "b_mod0": b[rows % 3 == 0], "b_mod1": b[rows % 3 == 1], "b_mod2": b[rows % 3 == 2],
        "w_div0": w[:7], "w_div1": w[7:14], "w_div2": w[14:],
        "b_div0": b[:7], "b_div1": b[7:14], "b_div2": b[14:],
    }


_ONE = ("@sampled", "@true_count", "@sampled_count")
_TWO = ("@sampled", "@true_count2", "@sampled_count")
_COMMON = ["@w", "@b"]

CASES = [
    ("nce", "nn.nce_loss", _COMMON + ["@labels", "@x", 6, 20],
     {"sampled_values": _ONE}, ["@w", "@b", "@x"]),
    ("nce_hits_removed", "nn.nce_loss", _COMMON + ["@labels", "@x", 6, 20],
     {"sampled_values": _ONE, "remove_accidental_hits": True}, ["@w", "@b", "@x"]),
    ("nce_two_true", "nn.nce_loss", _COMMON + ["@labels2", "@x", 6, 20],
     {"num_true": 2, "sampled_values": _TWO, "remove_accidental_hits": True},
     ["@w", "@b", "@x"]),
    ("softmax", "nn.sampled_softmax_loss", _COMMON + ["@labels", "@x", 6, 20],
     {"sampled_values": _ONE}, ["@w", "@b", "@x"]),
    ("softmax_hits_kept", "nn.sampled_softmax_loss", _COMMON + ["@labels", "@x", 6, 20],
     {"sampled_values": _ONE, "remove_accidental_hits": False}, ["@w", "@b", "@x"]),
    ("softmax_two_true", "nn.sampled_softmax_loss", _COMMON + ["@labels2", "@x", 6, 20],
     {"num_true": 2, "sampled_values": _TWO}, ["@w", "@b", "@x"]),
    ("softmax_shards_mod", "nn.sampled_softmax_loss",
     [["@w_mod0", "@w_mod1", "@w_mod2"], ["@b_mod0", "@b_mod1", "@b_mod2"], "@labels2",
      "@x", 6, 20], {"num_true": 2, "sampled_values": _TWO}, ["@w_mod1", "@x"]),
    ("nce_shards_div", "nn.nce_loss",
     [["@w_div0", "@w_div1", "@w_div2"], ["@b_div0", "@b_div1", "@b_div2"], "@labels",
      "@x", 6, 20], {"sampled_values": _ONE, "partition_strategy": "div"},
     ["@w_div2", "@b_div0", "@x"]),
]
