"""Record what TF1's small top-level functions and tf.nest give for the scenarios of
tests/train/tf1_odds_cases.py (tests/train/test_api_tf1_odds.py runs them in onegraph).

Needs tensorflow (not a onegraph dependency); run it by hand when the scenarios change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_odds.py
"""

from __future__ import annotations

import numpy as np
import tensorflow.compat.v1 as tf

from tf_recording import TRAIN_TESTS, load_cases, write_reference  # noqa: E402

tf.disable_eager_execution()

OUT = TRAIN_TESTS / "data" / "tf1_odds_reference.json"


def main() -> None:
    cases = load_cases("tf1_odds_cases")
    ref: dict = {"tensors": {}, "nest": cases.nest_results(tf), "same_structure": {}}
    with tf.Graph().as_default():
        built = cases.tensors(tf)
        with tf.Session() as sess:
            values = sess.run(built)
    for name, t in built.items():
        v = np.asarray(values[name])
        ref["tensors"][name] = {"dtype": v.dtype.name, "shape": list(v.shape),
                                "static_shape": None if t.shape.ndims is None
                                else t.shape.as_list(), "values": v.reshape(-1).tolist()}
    for name, (a, b, check) in cases.SAME_STRUCTURE.items():
        try:
            tf.nest.assert_same_structure(a, b, check_types=check)
            ref["same_structure"][name] = None
        except (ValueError, TypeError) as e:
            ref["same_structure"][name] = type(e).__name__
    write_reference(OUT, ref)


if __name__ == "__main__":
    main()
