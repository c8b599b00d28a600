"""Record TensorFlow's tf.compat.v1 outputs for the TF1-compatibility test cases.

Needs tensorflow (not a onegraph dependency); run it by hand when a case list changes:

    python tools/record_tf1_reference.py image   # tests/train/tf1_image_cases.py
    python tools/record_tf1_reference.py nn      # tests/train/tf1_nn_cases.py
    python tools/record_tf1_reference.py NAME    # any tests/train/tf1_NAME_cases.py in
                                                 # tf1_nn_cases.py's form
    TF_USE_LEGACY_KERAS=1 python tools/record_tf1_reference.py rnn  # tf1_rnn_cases.py
    python tools/record_tf1_reference.py metrics  # tf1_metrics_cases.py (streaming)
    python tools/record_tf1_reference.py scatter  # tf1_scatter_cases.py (variables)
    python tools/record_tf1_reference.py strings  # tf1_strings_cases.py (string outputs
                                                  # stored as fixed-width unicode)

(the rnn cells need the tf-keras package beside tensorflow).

Each writes tests/train/data/tf1_<name>_reference.npz holding the inputs ("in/<key>"),
each case's output ("out/<case>") and, for the nn and rnn cases, the gradients of
sum(output * R) ("grad/<case>/<key>", R stored as "r/<case>"; the rnn cases also the
variables' values "var/<case>/<name>" and the final states; the metrics cases the
update_op's result and the value after each batch, "update/<case>/<b>" and
"value/<case>/<b>"), so the tests compare
onegraph with what TensorFlow computed without TensorFlow installed.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests", "train")
sys.path.insert(0, TESTS)


def _image_cases(tf, arrays: dict) -> int:
    from tf1_image_cases import CASES, make_inputs

    inputs = make_inputs()
    arrays.update({f"in/{k}": v for k, v in inputs.items()})
    for name, fn, key, kwargs in CASES:
        out = getattr(tf.compat.v1.image, fn)(tf.constant(inputs[key]), **kwargs)
        arrays[f"out/{name}"] = np.asarray(out)
    return len(CASES)


def _storable(value: np.ndarray) -> np.ndarray:
    """An output as np.savez stores it without pickle: a string tensor's object array
    of bytes as fixed-width unicode, the bytes decoded as UTF-8 with surrogate escapes
    for those that are not UTF-8 (onegraph's spelling of them; trailing NULs are lost,
    so string cases avoid them). Other arrays are returned as they are."""
    if value.dtype.kind != "O":
        return value
    flat = [v.decode("utf-8", "surrogateescape") for v in value.reshape(-1)]
    return np.array(flat, dtype=str).reshape(value.shape)


def _op_cases(tf, arrays: dict, which: str) -> int:
    """Cases of tests/train/tf1_<which>_cases.py in the function-call form (see
    tf1_nn_cases.py): each output ("out/<case>", or "out/<case>/<k>" for a function
    returning several, with "nout/<case>" their count), and the gradients of the sum
    of each float output times a fixed random R ("r/<case>[/<k>]") with respect to
    the listed inputs."""
    import importlib

    cases = importlib.import_module(f"tf1_{which}_cases")
    inputs = cases.make_inputs()
    arrays.update({f"in/{k}": v for k, v in inputs.items()})
    rng = np.random.RandomState(7)
    for name, path, args, kwargs, wrt in cases.CASES:
        fn = tf.compat.v1
        for part in path.split("."):
            fn = getattr(fn, part)
        held = {k[1:]: tf.Variable(inputs[k[1:]]) for k in wrt}

        def value(v):
            if isinstance(v, str) and v.startswith("@"):
                return held.get(v[1:], tf.constant(inputs[v[1:]]))
            if isinstance(v, (tuple, list)):  # lists of shards, sampled_values, ...
                return type(v)(value(part) for part in v)
            return v

        with tf.GradientTape() as tape:
            result = fn(*[value(a) for a in args], **{k: value(v) for k, v in kwargs.items()})
            several = isinstance(result, (tuple, list))
            outs = list(result) if several else [result]
            rs, terms = [], []
            for out in outs:
                if out.dtype.is_floating:
                    r = np.asarray(rng.randn(*out.shape)).astype(out.dtype.as_numpy_dtype)
                    terms.append(tf.reduce_sum(tf.cast(out, tf.float64) * r))
                else:   # integer or bool results: nothing to differentiate
                    r = np.zeros(out.shape, np.float64)
                rs.append(r)
            loss = tf.add_n(terms) if terms else None
        grads = tape.gradient(loss, [held[k[1:]] for k in wrt]) if wrt and loss is not None \
            else []
        suffixes = [f"/{k}" for k in range(len(outs))] if several else [""]
        if several:
            arrays[f"nout/{name}"] = np.asarray(len(outs))
        for suffix, out, r in zip(suffixes, outs, rs):
            arrays[f"out/{name}{suffix}"] = _storable(np.asarray(out))
            arrays[f"r/{name}{suffix}"] = r
        for k, g in zip(wrt, grads):
            if g is not None:
                arrays[f"grad/{name}/{k[1:]}"] = np.asarray(
                    tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g)
    return len(cases.CASES)


def _tf_cell(tf, spec):
    kind, arg = spec[:2]
    options = spec[2] if len(spec) > 2 else {}
    cells = tf.compat.v1.nn.rnn_cell
    if kind == "multi":
        return cells.MultiRNNCell([_tf_cell(tf, c) for c in arg])
    return {"lstm": cells.LSTMCell, "basic_lstm": cells.BasicLSTMCell,
            "gru": cells.GRUCell, "rnn": cells.BasicRNNCell}[kind](arg, **options)


def _rnn_cases(tf, arrays: dict) -> int:
    from tf1_rnn_cases import CASES, make_inputs

    inputs = make_inputs()
    arrays.update({f"in/{k}": v for k, v in inputs.items()})
    rng = np.random.RandomState(11)
    v1 = tf.compat.v1
    for name, kind, specs, kwargs in CASES:
        kwargs = dict(kwargs)
        time_major = kwargs.get("time_major", False)
        forget_bias = kwargs.pop("forget_bias", None)
        with tf.Graph().as_default():
            x = v1.placeholder(tf.float32, (inputs["x_time_major"] if time_major
                                            else inputs["x"]).shape)
            feed = {x: inputs["x_time_major"] if time_major else inputs["x"]}
            if "sequence_length" in kwargs:
                kwargs["sequence_length"] = tf.constant(inputs[kwargs["sequence_length"]])
            cells = [_tf_cell(tf, s) for s in specs]
            if forget_bias is not None:
                cells = [v1.nn.rnn_cell.BasicLSTMCell(specs[0][1], forget_bias=forget_bias)]
            if kind in ("static", "static_bi"):  # one output: the steps stacked on axis 1
                steps = tf.unstack(x, axis=1)
                if kind == "static":
                    out_steps, state = v1.nn.static_rnn(cells[0], steps, dtype=tf.float32,
                                                        **kwargs)
                else:
                    out_steps, state_fw, state_bw = v1.nn.static_bidirectional_rnn(
                        cells[0], cells[1], steps, dtype=tf.float32, **kwargs)
                    state = (state_fw, state_bw)
                outs = [tf.stack(out_steps, axis=1)]
            elif kind == "uni":
                out, state = v1.nn.dynamic_rnn(cells[0], x, dtype=tf.float32, **kwargs)
                outs = [out]
            else:
                outs, state = v1.nn.bidirectional_dynamic_rnn(cells[0], cells[1], x,
                                                              dtype=tf.float32, **kwargs)
                outs = list(outs)
            rs = [tf.constant(rng.randn(*o.shape).astype(np.float32)) for o in outs]
            loss = tf.add_n([tf.reduce_sum(o * r) for o, r in zip(outs, rs)])
            grad = tf.gradients(loss, x)[0]
            leaves = tf.nest.flatten(state)
            with v1.Session() as sess:
                for var in v1.trainable_variables():
                    value = (rng.randn(*var.shape) * 0.5).astype(np.float32)
                    var.load(value, sess)
                    arrays[f"var/{name}/{var.op.name}"] = value
                got = sess.run([outs, leaves, grad, rs], feed)
        for k, o in enumerate(got[0]):
            arrays[f"out/{name}/{k}"] = o
            arrays[f"r/{name}/{k}"] = got[3][k]
        for k, leaf in enumerate(got[1]):
            arrays[f"state/{name}/{k}"] = leaf
        arrays[f"grad/{name}"] = got[2]
    return len(CASES)


def _metric_cases(tf, arrays: dict) -> int:
    """The streaming metrics of tf1_metrics_cases.py in graph mode: each "@key" input
    holds one batch per entry of its first axis; update_op runs once per batch, then
    the value is read."""
    from tf1_metrics_cases import CASES, make_inputs

    inputs = make_inputs()
    arrays.update({f"in/{k}": v for k, v in inputs.items()})
    v1 = tf.compat.v1
    for name, path, args, kwargs in CASES:
        with tf.Graph().as_default():
            fn = v1
            for part in path.split("."):
                fn = getattr(fn, part)
            holders = {}

            def value(v):
                if isinstance(v, str) and v.startswith("@"):
                    key = v[1:]
                    if key not in holders:
                        a = inputs[key]
                        holders[key] = v1.placeholder(tf.as_dtype(a.dtype), a.shape[1:])
                    return holders[key]
                return v

            metric, update = fn(*[value(a) for a in args],
                                **{k: value(v) for k, v in kwargs.items()})
            batches = {len(inputs[k]) for k in holders}
            assert len(batches) == 1, name
            with v1.Session() as sess:
                sess.run(v1.local_variables_initializer())
                for b in range(batches.pop()):
                    feed = {holders[k]: inputs[k][b] for k in holders}
                    arrays[f"update/{name}/{b}"] = np.asarray(sess.run(update, feed))
                    arrays[f"value/{name}/{b}"] = np.asarray(sess.run(metric))
    return len(CASES)


def _scatter_cases(tf, arrays: dict) -> int:
    """The sparse variable updates of tf1_scatter_cases.py in graph mode: each case
    updates a fresh variable once; its result (the new value) is "out/<case>"."""
    from tf1_scatter_cases import CASES, make_inputs

    inputs = make_inputs()
    arrays.update({f"in/{k}": v for k, v in inputs.items()})
    v1 = tf.compat.v1
    for name, fn, key, indices, updates in CASES:
        start = inputs[key]
        value = (inputs[updates[1:]] if isinstance(updates, str) else np.asarray(updates))
        with tf.Graph().as_default():
            var = v1.Variable(start)
            op = getattr(v1, fn)(var, tf.constant(np.asarray(indices, np.int64)),
                                 tf.constant(value.astype(start.dtype)))
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                arrays[f"out/{name}"] = np.asarray(sess.run(op))
    return len(CASES)


def main(argv: list[str]) -> int:
    """Write tests/train/data/tf1_<which>_reference.npz for argv[0]: image, rnn,
    metrics, scatter, or
    the name of a tests/train/tf1_<name>_cases.py in tf1_nn_cases.py's form."""
    import tensorflow as tf

    record = {"image": _image_cases, "rnn": _rnn_cases, "metrics": _metric_cases,
              "scatter": _scatter_cases}
    if len(argv) != 1 or not (argv[0] in record or os.path.exists(
            os.path.join(TESTS, f"tf1_{argv[0]}_cases.py"))):
        print(__doc__)
        return 2
    path = os.path.join(TESTS, "data", f"tf1_{argv[0]}_reference.npz")
    arrays = {"tensorflow_version": np.asarray(tf.__version__)}
    if argv[0] in record:
        count = record[argv[0]](tf, arrays)
    else:
        count = _op_cases(tf, arrays, argv[0])
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    print(f"wrote {count} cases to {path} (tensorflow {tf.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
