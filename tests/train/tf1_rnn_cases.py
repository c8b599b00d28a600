"""The og.nn recurrent cases checked against TensorFlow's tf.compat.v1.nn: shared by
tests/train/test_rnn_tf1.py and tools/record_tf1_reference.py (which needs
tensorflow; the test does not).

A case is (name, kind, cells, keyword arguments). kind is "uni" (dynamic_rnn of one cell),
"bi" (bidirectional_dynamic_rnn of two), "static" or "static_bi" (static_rnn /
static_bidirectional_rnn over the batch-major input unstacked along time, their per-step
outputs stacked back along axis 1 as the one output); a cell is ("lstm" | "basic_lstm" |
"gru" | "rnn", units[, constructor keyword arguments]) or ("multi", [cells]). The recording
gives every trainable variable random values (stored by name), and stores the outputs, the
final state's tensors (depth first) and the gradient of sum(outputs * R) with respect to the
inputs.
"""

import numpy as np


def make_inputs() -> dict:
    rng = np.random.RandomState(20261204)
    return {"x": rng.randn(3, 6, 4).astype(np.float32),
            "lengths": np.array([6, 2, 4], np.int32),
            "x_time_major": rng.randn(5, 2, 4).astype(np.float32)}


CASES = [
    ("lstm", "uni", [("lstm", 5)], {}),
    ("lstm_lengths", "uni", [("lstm", 5)], {"sequence_length": "lengths"}),
    ("basic_lstm_bias", "uni", [("basic_lstm", 3)], {"forget_bias": 0.5}),
    ("gru_lengths", "uni", [("gru", 4)], {"sequence_length": "lengths"}),
    ("rnn", "uni", [("rnn", 3)], {}),
    ("multi", "uni", [("multi", [("lstm", 4), ("gru", 3), ("rnn", 2)])],
     {"sequence_length": "lengths"}),
    ("time_major", "uni", [("gru", 3)], {"time_major": True}),
    ("bi_lengths", "bi", [("lstm", 3), ("gru", 2)], {"sequence_length": "lengths"}),
    ("bi_multi", "bi", [("multi", [("gru", 3), ("gru", 2)]), ("rnn", 4)], {}),
    ("bi_time_major", "bi", [("lstm", 2), ("lstm", 3)], {"time_major": True}),
    # TF1 LSTMCell's peepholes and projections
    ("lstm_peepholes", "uni", [("lstm", 4, {"use_peepholes": True, "cell_clip": 0.8})],
     {"sequence_length": "lengths"}),
    ("lstm_projection", "uni", [("lstm", 5, {"num_proj": 3, "proj_clip": 0.3})], {}),
    ("bi_peepholes_projection", "bi",
     [("lstm", 4, {"use_peepholes": True, "num_proj": 2}), ("lstm", 3, {"num_proj": 4})],
     {"sequence_length": "lengths"}),
    ("multi_projection", "uni",
     [("multi", [("lstm", 4, {"num_proj": 2}), ("gru", 3)])], {"time_major": True}),
    # unrolled networks
    ("static_lstm", "static", [("lstm", 4)], {}),
    ("static_gru_lengths", "static", [("gru", 3)], {"sequence_length": "lengths"}),
    ("static_multi", "static", [("multi", [("lstm", 3, {"num_proj": 2}), ("rnn", 2)])],
     {"sequence_length": "lengths"}),
    ("static_bi", "static_bi", [("lstm", 3), ("gru", 2)], {}),
    ("static_bi_lengths", "static_bi", [("gru", 2), ("lstm", 3, {"use_peepholes": True})],
     {"sequence_length": "lengths"}),
]
