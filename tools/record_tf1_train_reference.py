"""Record TensorFlow's tf.compat.v1 results for tests/train/test_train_tf1_extras.py.

Needs tensorflow (not a onegraph dependency); run it by hand when a case changes:

    TF_CPP_MIN_LOG_LEVEL=3 /path/to/tf/python tools/record_tf1_train_reference.py

It writes tests/train/data/tf1_train_extras_reference.npz (through a temp file and
os.replace, so a failed run leaves the old file), self-describing so the test needs
neither TensorFlow nor this script:

- "in/<key>": the fixed seeded inputs;
- "spec/<kind>/<case>": the case as a JSON string (hyper-parameters, which variables,
  how many steps), for kind "ema", "opt" or "sched";
- "ema/<case>/<item>/<k>": each shadow variable's value after k updates (k = 0: after
  the initializer), "ema/<case>/names": the graph's global variables, the
  MOVING_AVERAGE_VARIABLES collection and variables_to_restore() (JSON);
- "opt/<case>/<var>/<slot>/<k>": a variable ("var") and its slots after k train steps,
  "opt/<case>/names": the graph's global variable names (JSON);
- "sched/<case>": the schedule's value at the steps "in/sched_steps".

Everything is in graph mode (tf.compat.v1, a tf.Graph per case), float32 unless a case
says otherwise. Nothing is pickled: the JSON strings are numpy unicode arrays.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf1_train_extras_reference.npz")
STEPS = 4


def make_inputs() -> dict:
    """The fixed inputs every case draws from (seeded)."""
    rng = np.random.RandomState(20240611)
    return {
        "w0": rng.uniform(-2, 2, (2, 3)).astype(np.float32),
        "b0": rng.uniform(-1, 1, (3,)).astype(np.float32),
        "wv": rng.uniform(-3, 3, (STEPS, 2, 3)).astype(np.float32),   # w per EMA step
        "bv": rng.uniform(-3, 3, (STEPS, 3)).astype(np.float32),
        "xv": rng.uniform(-2, 2, (STEPS, 3)).astype(np.float32),      # fed tensor input
        "X": rng.uniform(-1.5, 1.5, (STEPS, 2, 3)).astype(np.float32),  # dense loss
        "Y": rng.uniform(-1.5, 1.5, (STEPS, 3)).astype(np.float32),
        "emb0": rng.uniform(-1, 1, (5, 2)).astype(np.float32),
        # one row never looked up (4), repeats within a step, a negative-free ids list
        "ids": np.array([[0, 2, 2, 1], [3, 1, 1, 1], [0, 3, 2, 0], [2, 2, 2, 3]], np.int64),
        "wt": rng.uniform(-2, 2, (STEPS, 4, 2)).astype(np.float32),
        "sched_steps": np.arange(0, 15, dtype=np.int64),
    }


# --------------------------------------------------------------------------- cases

EMA_CASES = {
    # decay: a number, or {"variable": value} for a float32 Variable holding it
    "plain": dict(decay=0.9, num_updates=False, zero_debias=False, items=["w", "b", "t"]),
    "num_updates": dict(decay=0.999, num_updates=True, zero_debias=False, items=["w", "t"]),
    "debias": dict(decay=0.8, num_updates=False, zero_debias=True, items=["w", "t"]),
    "debias_num_updates": dict(decay=0.95, num_updates=True, zero_debias=True,
                               items=["t", "b"]),
    "decay_variable": dict(decay={"variable": 0.7}, num_updates=False, zero_debias=False,
                           items=["w", "t"]),
    "float64": dict(decay=0.85, num_updates=True, zero_debias=True, items=["w", "t"],
                    dtype="float64"),
}

_FTRL, _PGD, _PADA = "FtrlOptimizer", "ProximalGradientDescentOptimizer", \
    "ProximalAdagradOptimizer"
OPT_CASES = {
    "ftrl_default": dict(opt=_FTRL, kwargs=dict(learning_rate=0.1)),
    "ftrl_l1_l2": dict(opt=_FTRL, kwargs=dict(learning_rate=0.5, l1_regularization_strength=0.05,
                                               l2_regularization_strength=0.1)),
    "ftrl_power": dict(opt=_FTRL, kwargs=dict(learning_rate=0.3, learning_rate_power=-0.3,
                                              initial_accumulator_value=0.5,
                                              l1_regularization_strength=0.01)),
    "ftrl_power0": dict(opt=_FTRL, kwargs=dict(learning_rate=0.05, learning_rate_power=0.0,
                                               l2_regularization_strength=0.2)),
    "ftrl_shrinkage": dict(opt=_FTRL, kwargs=dict(
        learning_rate=0.2, l1_regularization_strength=0.02, l2_regularization_strength=0.05,
        l2_shrinkage_regularization_strength=0.1)),
    "ftrl_beta": dict(opt=_FTRL, kwargs=dict(learning_rate=0.4, beta=0.5,
                                             l1_regularization_strength=0.01,
                                             l2_regularization_strength=0.1)),
    "ftrl_names": dict(opt=_FTRL, kwargs=dict(learning_rate=0.1, accum_name="acc",
                                              linear_name="lin", name="MyFtrl")),
    "ftrl_zero_accum": dict(opt=_FTRL, kwargs=dict(learning_rate=0.2,
                                                   initial_accumulator_value=0.0,
                                                   l1_regularization_strength=0.01)),
    "ftrl_float64": dict(opt=_FTRL, dtype="float64", kwargs=dict(
        learning_rate=0.25, learning_rate_power=-0.4, l1_regularization_strength=0.02,
        l2_regularization_strength=0.01, l2_shrinkage_regularization_strength=0.05)),
    # learning_rate = exponential_decay(0.2, global_step, 2, 0.5), minimize increments it
    "ftrl_schedule_beta": dict(opt=_FTRL, lr_schedule=[0.2, 2, 0.5], kwargs=dict(
        beta=0.3, l1_regularization_strength=0.01)),
    "ftrl_sparse": dict(opt=_FTRL, sparse=True, kwargs=dict(learning_rate=0.3)),
    "ftrl_sparse_l1_l2": dict(opt=_FTRL, sparse=True, kwargs=dict(
        learning_rate=0.5, l1_regularization_strength=0.3, l2_regularization_strength=0.1)),
    "ftrl_sparse_shrinkage_beta": dict(opt=_FTRL, sparse=True, kwargs=dict(
        learning_rate=0.2, l1_regularization_strength=0.01, beta=0.2,
        l2_shrinkage_regularization_strength=0.2)),
    "ftrl_sparse_power": dict(opt=_FTRL, sparse=True, kwargs=dict(
        learning_rate=0.3, learning_rate_power=-0.7, initial_accumulator_value=1.0)),
    "pgd_plain": dict(opt=_PGD, kwargs=dict(learning_rate=0.1)),
    "pgd_l1": dict(opt=_PGD, kwargs=dict(learning_rate=0.1, l1_regularization_strength=0.05)),
    "pgd_l2": dict(opt=_PGD, kwargs=dict(learning_rate=0.2, l2_regularization_strength=0.3)),
    "pgd_l1_l2": dict(opt=_PGD, kwargs=dict(learning_rate=0.3, l1_regularization_strength=0.5,
                                            l2_regularization_strength=0.2)),
    "pgd_sparse": dict(opt=_PGD, sparse=True, kwargs=dict(learning_rate=0.2)),
    "pgd_sparse_l1_l2": dict(opt=_PGD, sparse=True, kwargs=dict(
        learning_rate=0.3, l1_regularization_strength=0.4, l2_regularization_strength=0.1)),
    "padagrad_plain": dict(opt=_PADA, kwargs=dict(learning_rate=0.5)),
    "padagrad_l1": dict(opt=_PADA, kwargs=dict(learning_rate=0.5,
                                               l1_regularization_strength=0.05)),
    "padagrad_l1_l2": dict(opt=_PADA, kwargs=dict(learning_rate=0.4, initial_accumulator_value=0.3,
                                                  l1_regularization_strength=0.1,
                                                  l2_regularization_strength=0.2)),
    "padagrad_sparse": dict(opt=_PADA, sparse=True, kwargs=dict(learning_rate=0.5)),
    "padagrad_sparse_l1_l2": dict(opt=_PADA, sparse=True, kwargs=dict(
        learning_rate=0.6, initial_accumulator_value=0.2, l1_regularization_strength=0.2,
        l2_regularization_strength=0.3)),
}

SLOTS = {_FTRL: ["accum", "linear"], _PGD: [], _PADA: ["accumulator"]}

SCHED_CASES = {   # noisy_linear_cosine_decay with initial_variance=0, piecewise_constant_decay
    "noisy_default": dict(fn="noisy_linear_cosine_decay",
                          kwargs=dict(learning_rate=0.1, decay_steps=10, initial_variance=0.0)),
    "noisy_params": dict(fn="noisy_linear_cosine_decay", kwargs=dict(
        learning_rate=0.5, decay_steps=7, initial_variance=0.0, variance_decay=0.3,
        num_periods=2.0, alpha=0.1, beta=0.01)),
    "noisy_quarter": dict(fn="noisy_linear_cosine_decay", kwargs=dict(
        learning_rate=0.3, decay_steps=5, initial_variance=0.0, num_periods=0.25,
        beta=0.0)),
    "piecewise": dict(fn="piecewise_constant_decay", step_arg="x",
                      kwargs=dict(boundaries=[3, 7], values=[1.0, 0.5, 0.1])),
}


# --------------------------------------------------------------------------- recording

def _ema_case(tf, name: str, spec: dict, inputs: dict, arrays: dict) -> None:
    v1 = tf.compat.v1
    dt = np.dtype(spec.get("dtype", "float32"))
    with tf.Graph().as_default() as g:
        w = v1.Variable(inputs["w0"].astype(dt), name="w")
        b = v1.Variable(inputs["b0"].astype(dt), name="b")
        x = v1.placeholder(dt, [3], name="x")
        t = tf.identity(x * np.asarray(1.5, dt), name="t")
        items = {"w": w, "b": b, "t": t}
        step = v1.train.get_or_create_global_step()
        decay = spec["decay"]
        if isinstance(decay, dict):
            decay = v1.Variable(np.float32(decay["variable"]), trainable=False,
                                name="decay_var")
        ema = v1.train.ExponentialMovingAverage(
            decay, num_updates=step if spec["num_updates"] else None,
            zero_debias=spec["zero_debias"])
        update = ema.apply([items[k] for k in spec["items"]])
        wv, bv = v1.placeholder(dt, [2, 3]), v1.placeholder(dt, [3])
        set_vars = tf.group(w.assign(wv), b.assign(bv))
        inc = step.assign_add(1)
        shadows = {k: ema.average(items[k]) for k in spec["items"]}
        names = {
            "global": [v.op.name for v in v1.global_variables()],
            "moving_average_variables": [v.op.name for v in
                                         v1.get_collection(v1.GraphKeys.MOVING_AVERAGE_VARIABLES)],
            "restore": {k: v.op.name for k, v in ema.variables_to_restore().items()},
            "average_name": {k: ema.average_name(items[k]) for k in spec["items"]},
        }
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            for k, s in shadows.items():
                arrays[f"ema/{name}/{k}/0"] = sess.run(s)
            for n in range(STEPS):
                sess.run(set_vars, {wv: inputs["wv"][n].astype(dt),
                                    bv: inputs["bv"][n].astype(dt)})
                sess.run(update, {x: inputs["xv"][n].astype(dt)})
                sess.run(inc)
                for k, s in shadows.items():
                    arrays[f"ema/{name}/{k}/{n + 1}"] = sess.run(s)
    arrays[f"ema/{name}/names"] = np.array(json.dumps(names, sort_keys=True))


def _ema_reinit_case(tf, inputs: dict, arrays: dict) -> None:
    """A shadow's initializer run after its variable changed copies the current value."""
    v1 = tf.compat.v1
    with tf.Graph().as_default() as g:
        w = v1.Variable(inputs["w0"], name="w")
        ema = v1.train.ExponentialMovingAverage(0.5)
        ema.apply([w])
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(w.assign(inputs["wv"][0]))
            sess.run(ema.average(w).initializer)
            arrays["ema_reinit/shadow"] = sess.run(ema.average(w))


def _opt_case(tf, name: str, spec: dict, inputs: dict, arrays: dict) -> None:
    v1 = tf.compat.v1
    dt = np.dtype(spec.get("dtype", "float32"))
    cls = getattr(v1.train, spec["opt"])
    with tf.Graph().as_default() as g:
        step = v1.train.get_or_create_global_step()
        kwargs = dict(spec["kwargs"])
        if "lr_schedule" in spec:
            lr0, decay_steps, rate = spec["lr_schedule"]
            kwargs["learning_rate"] = v1.train.exponential_decay(lr0, step, decay_steps, rate)
        opt = cls(**kwargs)
        if spec.get("sparse"):
            emb = v1.Variable(inputs["emb0"].astype(dt), name="emb")
            ids = v1.placeholder(tf.int64, [None], name="ids")
            wt = v1.placeholder(dt, [None, 2], name="wt")
            loss = tf.reduce_sum(tf.gather(emb, ids) * wt)
            owned = {"emb": emb}
        else:
            w = v1.Variable(inputs["w0"].astype(dt), name="w")
            b = v1.Variable(inputs["b0"].astype(dt), name="b")
            xp = v1.placeholder(dt, [2, 3], name="X")
            yp = v1.placeholder(dt, [3], name="Y")
            loss = (tf.reduce_sum(w * xp) + 0.5 * tf.reduce_sum(tf.square(w))
                    + tf.reduce_sum(b * yp) + 0.5 * tf.reduce_sum(tf.square(b)))
            owned = {"w": w, "b": b}
        grads = opt.compute_gradients(loss, list(owned.values()))
        if spec.get("sparse"):
            assert type(grads[0][0]).__name__ == "IndexedSlices", type(grads[0][0])
        train = opt.apply_gradients(grads, global_step=step)
        fetch = {f"{k}/var": v for k, v in owned.items()}
        for k, v in owned.items():
            for s in SLOTS[spec["opt"]]:
                fetch[f"{k}/{s}"] = opt.get_slot(v, s)
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            for n in range(STEPS + 1):
                for key, value in sess.run(fetch).items():
                    arrays[f"opt/{name}/{key}/{n}"] = value
                if n == STEPS:
                    break
                if spec.get("sparse"):
                    feed = {ids: inputs["ids"][n], wt: inputs["wt"][n].astype(dt)}
                else:
                    feed = {xp: inputs["X"][n].astype(dt), yp: inputs["Y"][n].astype(dt)}
                sess.run(train, feed)
        names = [v.op.name for v in v1.global_variables()]
    arrays[f"opt/{name}/names"] = np.array(json.dumps(names))


def _sched_case(tf, name: str, spec: dict, inputs: dict, arrays: dict) -> None:
    v1 = tf.compat.v1
    with tf.Graph().as_default() as g:
        step = v1.placeholder(tf.int64, [], name="step")
        kwargs = {spec.get("step_arg", "global_step"): step, **spec["kwargs"]}
        value = getattr(v1.train, spec["fn"])(**kwargs)
        with v1.Session(graph=g) as sess:
            arrays[f"sched/{name}"] = np.array(
                [sess.run(value, {step: s}) for s in inputs["sched_steps"]])


def main() -> None:
    """Record every case with TensorFlow and write the reference file atomically."""
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    inputs = make_inputs()
    arrays = {f"in/{k}": v for k, v in inputs.items()}
    for kind, cases, record in (("ema", EMA_CASES, _ema_case), ("opt", OPT_CASES, _opt_case),
                                ("sched", SCHED_CASES, _sched_case)):
        for name, spec in cases.items():
            arrays[f"spec/{kind}/{name}"] = np.array(json.dumps(spec, sort_keys=True))
            record(tf, name, spec, inputs, arrays)
    _ema_reinit_case(tf, inputs, arrays)
    arrays["version"] = np.array(tf.__version__)
    out = os.path.abspath(OUT)
    fd, tmp = tempfile.mkstemp(prefix=".tf1_train_extras-", suffix=".npz",
                               dir=os.path.dirname(out))
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.chmod(tmp, 0o644)   # mkstemp's 0600 would stay on the data file
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    print(f"wrote {out}: {len(EMA_CASES) + 1} EMA, {len(OPT_CASES)} optimizer, "
          f"{len(SCHED_CASES)} schedule cases, {len(arrays)} arrays "
          f"(TensorFlow {tf.__version__})")


if __name__ == "__main__":
    main()
