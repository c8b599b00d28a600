"""og.train's ExponentialMovingAverage, global-step helpers, FtrlOptimizer,
ProximalGradientDescentOptimizer, ProximalAdagradOptimizer, noisy_linear_cosine_decay
and piecewise_constant_decay against TensorFlow 2.21's tf.compat.v1 (graph mode).

The expected numbers and names come from tests/train/data/tf1_train_extras_reference.npz,
recorded by tools/record_tf1_train_reference.py with TensorFlow (not a test
dependency). The file describes its own cases ("spec/..." JSON strings) and inputs
("in/..."), so each test below rebuilds TF's graph in og from them.
"""

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import OneGraphError, ShapeError

REF_PATH = os.path.join(os.path.dirname(__file__), "data", "tf1_train_extras_reference.npz")
with np.load(REF_PATH, allow_pickle=False) as _f:
    REF = {k: _f[k] for k in _f.files}
IN = {k[3:]: v for k, v in REF.items() if k.startswith("in/")}
STEPS = IN["wv"].shape[0]


def _cases(kind):
    prefix = f"spec/{kind}/"
    return sorted(k[len(prefix):] for k in REF if k.startswith(prefix))


def _spec(kind, name):
    return json.loads(str(REF[f"spec/{kind}/{name}"]))


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


def test_the_reference_file_holds_every_kind_of_case():
    assert len(_cases("ema")) >= 6 and len(_cases("opt")) >= 20 and len(_cases("sched")) >= 4
    assert str(REF["version"]).startswith("2.")


# --------------------------------------------------------------------------- EMA

def _ema_run(spec):
    """The og version of the recorder's EMA case: shadows after each step, and names."""
    dt = np.dtype(spec.get("dtype", "float32"))
    g = og.Graph()
    with g.as_default():
        w = og.Variable(IN["w0"].astype(dt), name="w")
        b = og.Variable(IN["b0"].astype(dt), name="b")
        x = og.placeholder(dt, [3], name="x")
        t = og.identity(x * np.asarray(1.5, dt), name="t")
        items = {"w": w, "b": b, "t": t}
        step = og.train.get_or_create_global_step()
        decay = spec["decay"]
        if isinstance(decay, dict):
            decay = og.Variable(np.float32(decay["variable"]), trainable=False,
                                name="decay_var")
        ema = og.train.ExponentialMovingAverage(
            decay, num_updates=step if spec["num_updates"] else None,
            zero_debias=spec["zero_debias"])
        update = ema.apply([items[k] for k in spec["items"]])
        wv, bv = og.placeholder(dt, [2, 3]), og.placeholder(dt, [3])
        set_vars = og.group(w.assign(wv), b.assign(bv))
        inc = step.assign_add(np.int64(1))
        shadows = {k: ema.average(items[k]) for k in spec["items"]}
        names = {
            "global": [v.name for v in og.global_variables(g)],
            "moving_average_variables": [
                v.name for v in g.get_collection(og.GraphKeys.MOVING_AVERAGE_VARIABLES)],
            "restore": {k: v.name for k, v in ema.variables_to_restore().items()},
            "average_name": {k: ema.average_name(items[k]) for k in spec["items"]},
        }
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    got = {f"{k}/0": sess.run(s) for k, s in shadows.items()}
    for n in range(STEPS):
        sess.run(set_vars, {wv: IN["wv"][n].astype(dt), bv: IN["bv"][n].astype(dt)})
        sess.run(update, {x: IN["xv"][n].astype(dt)})
        sess.run(inc)
        got.update({f"{k}/{n + 1}": sess.run(s) for k, s in shadows.items()})
    return got, names


@pytest.mark.parametrize("case", _cases("ema"))
def test_ema_shadows_follow_tf1_step_by_step(case):
    spec = _spec("ema", case)
    got, _ = _ema_run(spec)
    dt = np.dtype(spec.get("dtype", "float32"))
    for key, value in got.items():
        want = REF[f"ema/{case}/{key}"]
        assert value.dtype == want.dtype == dt, key
        np.testing.assert_allclose(value, want, **_tol(dt), err_msg=f"{case} {key}")


@pytest.mark.parametrize("case", _cases("ema"))
def test_ema_names_collections_and_variables_to_restore_are_tf1s(case):
    _, names = _ema_run(_spec("ema", case))
    want = json.loads(str(REF[f"ema/{case}/names"]))
    assert sorted(names["global"]) == sorted(want["global"])
    assert names["moving_average_variables"] == want["moving_average_variables"]
    assert names["restore"] == want["restore"]
    assert names["average_name"] == want["average_name"]


def test_ema_shadow_initializer_copies_the_variables_current_value():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(IN["w0"], name="w")
        ema = og.train.ExponentialMovingAverage(0.5)
        ema.apply([w])
    sess = og.Session(g)
    # og's variables start initialised: the shadow holds w's initial value already
    np.testing.assert_array_equal(sess.run(ema.average(w)), IN["w0"])
    sess.run(og.global_variables_initializer(g))
    sess.run(w.assign(IN["wv"][0]))
    sess.run(ema.average(w).initializer)
    np.testing.assert_array_equal(sess.run(ema.average(w)), REF["ema_reinit/shadow"])


def test_ema_after_a_train_step_under_control_dependencies():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.array([1.0, -2.0], np.float32), name="w")
        train = og.train.GradientDescentOptimizer(0.5).minimize(og.reduce_sum(w * w))
        ema = og.train.ExponentialMovingAverage(0.75)
        with og.control_dependencies([train]):
            step = ema.apply([w])
    sess = og.Session(g)
    shadow, value = np.array([1.0, -2.0], np.float32), np.array([1.0, -2.0], np.float32)
    for _ in range(3):
        sess.run(step)
        value = value - 0.5 * 2 * value               # w's new value, then averaged
        shadow = shadow - np.float32(0.25) * (shadow - value)
        np.testing.assert_allclose(sess.run(ema.average(w)), shadow, rtol=1e-6)


def test_ema_apply_twice_reuses_the_shadow_and_average_name_predicts_it():
    g = og.Graph()
    with g.as_default():
        with og.name_scope("layer"):
            w = og.Variable(np.zeros(2, np.float32), name="w")
        og.Variable(np.zeros(2, np.float32), name="layer/w/EMA")   # the name is taken
        ema = og.train.ExponentialMovingAverage(0.9, name="EMA")
        predicted = ema.average_name(w)
        assert predicted == "layer/w/EMA_1"
        assert ema.average(w) is None
        ema.apply([w])
        shadow = ema.average(w)
        ema.apply([w])
    assert ema.average(w) is shadow and shadow.name == predicted
    assert ema.average_name(w) == predicted and not shadow.trainable
    assert ema.name == "EMA"
    assert [v.name for v in og.global_variables(g)].count(predicted) == 1
    assert shadow in og.global_variables(g) and shadow not in og.trainable_variables(g)


def test_saver_restores_the_averages_into_the_model_from_variables_to_restore(tmp_path):
    g = og.Graph()
    with g.as_default():
        w = og.Variable(IN["w0"], name="w")
        b = og.Variable(IN["b0"], name="b")
        wv = og.placeholder(og.float32, [2, 3])
        ema = og.train.ExponentialMovingAverage(0.6)
        update = ema.apply([w])
        set_w = w.assign(wv)
        saver = og.train.Saver()
    sess = og.Session(g)
    for n in range(STEPS):
        sess.run(set_w, {wv: IN["wv"][n]})
        sess.run(update)
    averaged, last_b = sess.run(ema.average(w)), sess.run(b)
    assert not np.allclose(averaged, sess.run(w))
    path = saver.save(sess, str(tmp_path / "ckpt"))

    # the evaluation graph: the model alone; w gets its moving average, b itself
    e = og.Graph()
    with e.as_default():
        w2 = og.Variable(np.zeros((2, 3), np.float32), name="w")
        b2 = og.Variable(np.zeros(3, np.float32), name="b")
        to_restore = og.train.ExponentialMovingAverage(0.6).variables_to_restore()
        assert to_restore == {"w/ExponentialMovingAverage": w2, "b/ExponentialMovingAverage": b2}
        restorer = og.train.Saver(og.train.ExponentialMovingAverage(0.6).variables_to_restore(
            [w2]))
    esess = og.Session(e)
    restorer.restore(esess, path)
    np.testing.assert_array_equal(esess.run(w2), averaged)
    np.testing.assert_array_equal(esess.run(b2), last_b)

    # in the training graph itself: the shadows are not restored under their own names
    mapping = ema.variables_to_restore([w])
    assert mapping == {"w/ExponentialMovingAverage": w, "b": b}
    og.train.Saver(mapping).restore(sess, path)
    np.testing.assert_array_equal(sess.run(w), averaged)


def test_ema_refuses_bad_arguments():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.zeros(2, np.float32), name="w")
        k = og.Variable(np.zeros(2, np.int32), name="k")
        unknown = og.placeholder(og.float32, [None], name="u")
        EMA = og.train.ExponentialMovingAverage
        for bad, err in ((1.5, ValueError), (-0.1, ValueError), (float("nan"), ValueError),
                         ("0.9", TypeError), (None, TypeError), (True, TypeError),
                         (og.constant(1), TypeError), (og.constant([0.9, 0.9]), ShapeError)):
            with pytest.raises(err):
                EMA(bad)
        with pytest.raises(ValueError):
            EMA(0.9, num_updates=-1)
        with pytest.raises(TypeError):
            EMA(0.9, num_updates="3")
        with pytest.raises(TypeError):
            EMA(0.9, num_updates=og.constant("s"))
        with pytest.raises(TypeError):
            EMA(0.9, zero_debias="yes")
        with pytest.raises(TypeError):
            EMA(0.9, name="")
        ema = EMA(0.9)
        with pytest.raises(TypeError, match="half, float, or double"):
            ema.apply([k])
        with pytest.raises(TypeError):
            ema.apply(w)                     # not a list
        with pytest.raises(TypeError):
            ema.apply([np.zeros(2, np.float32)])
        with pytest.raises(ShapeError):
            ema.apply([unknown])
        with pytest.raises(TypeError):
            ema.average("w")
        with pytest.raises(TypeError):
            ema.average_name(3)
        with pytest.raises(TypeError):
            ema.variables_to_restore(w)
    other = og.Graph()
    with other.as_default():
        v = og.Variable(np.zeros(2, np.float32), name="v")
    with pytest.raises(OneGraphError):
        EMA(0.9).apply([w, v])


# --------------------------------------------------------------------------- global step

def test_global_step_helpers_follow_tf1():
    g = og.Graph()
    with g.as_default():
        assert og.train.get_global_step() is None
        with og.name_scope("inner"):
            step = og.train.create_global_step()
        assert step.name == "global_step" and step.dtype == og.int64 and step.shape == ()
        assert not step.trainable
        assert g.get_collection(og.GraphKeys.GLOBAL_STEP) == [step]
        assert step in og.global_variables(g)
        assert og.train.get_global_step() is step
        assert og.train.get_global_step(g) is step
        assert og.train.get_or_create_global_step() is step
        with pytest.raises(ValueError, match="already exists"):
            og.train.create_global_step(g)
        w = og.Variable(np.ones(2, np.float32), name="w")
        train = og.train.GradientDescentOptimizer(0.1).minimize(og.reduce_sum(w * w),
                                                                 global_step=step)
    sess = og.Session(g)
    assert og.train.global_step(sess, step) == 0
    for _ in range(3):
        sess.run(train)
    n = og.train.global_step(sess, step)
    assert n == 3 and type(n) is int
    assert og.train.global_step(sess, "global_step") == 3
    with pytest.raises(TypeError):
        og.train.global_step(None, step)


def test_get_global_step_finds_a_variable_named_global_step_outside_the_collection():
    g = og.Graph()
    with g.as_default():
        named = og.Variable(np.int32(5), trainable=False, name="global_step")
        assert og.train.get_global_step() is named
        with pytest.raises(ValueError):
            og.train.create_global_step()
    h = og.Graph()
    with h.as_default():
        og.Variable(np.float32(0), name="global_step")
        with pytest.raises(TypeError, match="integer"):
            og.train.get_global_step()
    two = og.Graph()
    with two.as_default():
        for name in ("s1", "s2"):
            two.add_to_collection(og.GraphKeys.GLOBAL_STEP,
                                  og.Variable(np.int64(0), name=name))
        assert og.train.get_global_step() is None   # TF1: several is none
        with pytest.raises(ValueError):
            og.train.create_global_step()
    with pytest.raises(TypeError):
        og.train.get_global_step(graph="main")


def test_assert_global_step_follows_tf1():
    g = og.Graph()
    with g.as_default():
        og.train.assert_global_step(og.Variable(np.int64(0), name="a"))
        og.train.assert_global_step(og.constant(np.int32(3)))
        og.train.assert_global_step(og.placeholder(og.int64, None))   # unknown shape
        og.train.assert_global_step(og.placeholder(og.int64, [None]))  # not fully known
        with pytest.raises(TypeError, match="integer"):
            og.train.assert_global_step(og.Variable(np.float32(0), name="f"))
        with pytest.raises(TypeError, match="scalar"):
            og.train.assert_global_step(og.Variable(np.zeros(2, np.int64), name="v"))
        with pytest.raises(TypeError, match="Variable or Tensor"):
            og.train.assert_global_step(3)


# --------------------------------------------------------------------------- optimizers

def _make_optimizer(spec, step):
    kwargs = dict(spec["kwargs"])
    if "lr_schedule" in spec:
        lr0, decay_steps, rate = spec["lr_schedule"]
        kwargs["learning_rate"] = og.train.exponential_decay(lr0, step, decay_steps, rate)
    return getattr(og.train, spec["opt"])(**kwargs)


def _opt_run(spec):
    """The og version of the recorder's optimizer case: {"<var>/<slot>/<k>": value}, the
    global variables' names and the optimizer."""
    dt = np.dtype(spec.get("dtype", "float32"))
    slots = {"FtrlOptimizer": ["accum", "linear"], "ProximalGradientDescentOptimizer": [],
             "ProximalAdagradOptimizer": ["accumulator"]}[spec["opt"]]
    g = og.Graph()
    with g.as_default():
        step = og.train.get_or_create_global_step()
        opt = _make_optimizer(spec, step)
        if spec.get("sparse"):
            emb = og.Variable(IN["emb0"].astype(dt), name="emb")
            ids = og.placeholder(og.int64, [None], name="ids")
            wt = og.placeholder(dt, [None, 2], name="wt")
            loss = og.reduce_sum(og.gather(emb, ids) * wt)
            owned = {"emb": emb}
        else:
            w = og.Variable(IN["w0"].astype(dt), name="w")
            b = og.Variable(IN["b0"].astype(dt), name="b")
            xp = og.placeholder(dt, [2, 3], name="X")
            yp = og.placeholder(dt, [3], name="Y")
            loss = (og.reduce_sum(w * xp) + 0.5 * og.reduce_sum(og.square(w))
                    + og.reduce_sum(b * yp) + 0.5 * og.reduce_sum(og.square(b)))
            owned = {"w": w, "b": b}
        grads = opt.compute_gradients(loss, list(owned.values()))
        if spec.get("sparse"):
            assert isinstance(grads[0][0], og.IndexedSlices)
        train = opt.apply_gradients(grads, global_step=step)
        fetch = {f"{k}/var": v for k, v in owned.items()}
        fetch.update({f"{k}/{s}": opt.get_slot(v, s) for k, v in owned.items() for s in slots})
    sess = og.Session(g)
    got = {}
    for n in range(STEPS + 1):
        got.update({f"{key}/{n}": value for key, value in sess.run(fetch).items()})
        if n == STEPS:
            break
        if spec.get("sparse"):
            feed = {ids: IN["ids"][n], wt: IN["wt"][n].astype(dt)}
        else:
            feed = {xp: IN["X"][n].astype(dt), yp: IN["Y"][n].astype(dt)}
        sess.run(train, feed)
    return got, [v.name for v in og.global_variables(g)], opt


@pytest.mark.parametrize("case", _cases("opt"))
def test_optimizer_variables_and_slots_follow_tf1_step_by_step(case):
    spec = _spec("opt", case)
    dt = np.dtype(spec.get("dtype", "float32"))
    got, names, opt = _opt_run(spec)
    assert sorted(names) == sorted(json.loads(str(REF[f"opt/{case}/names"])))
    assert set(got) == {k[len(f"opt/{case}/"):] for k in REF
                        if k.startswith(f"opt/{case}/") and not k.endswith("/names")}
    for key, value in got.items():
        want = REF[f"opt/{case}/{key}"]
        assert value.dtype == want.dtype == dt, key
        np.testing.assert_allclose(value, want, **_tol(dt), err_msg=f"{case} {key}")
    moved = got[f"{'emb' if spec.get('sparse') else 'w'}/var/{STEPS}"]
    assert not np.allclose(moved, got[f"{'emb' if spec.get('sparse') else 'w'}/var/0"])


def test_optimizer_slot_names_are_tf1s():
    _, _, ftrl = _opt_run(_spec("opt", "ftrl_default"))
    assert ftrl.get_slot_names() == ["accum", "linear"]
    _, _, adagrad = _opt_run(_spec("opt", "padagrad_plain"))
    assert adagrad.get_slot_names() == ["accumulator"]
    _, _, pgd = _opt_run(_spec("opt", "pgd_plain"))
    assert pgd.get_slot_names() == []


def test_sparse_updates_touch_only_the_rows_looked_up_and_negative_ids_count_from_the_end():
    def run(ids):
        g = og.Graph()
        with g.as_default():
            emb = og.Variable(IN["emb0"], name="emb")
            opt = og.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01,
                                         l2_shrinkage_regularization_strength=0.1)
            train = opt.minimize(og.reduce_sum(og.gather(emb, og.constant(ids)) * 2.0))
        sess = og.Session(g)
        sess.run(train)
        return sess.run(emb), sess.run(opt.get_slot(emb, "accum"))

    emb, accum = run(np.array([-1, 0, 0], np.int64))
    emb2, accum2 = run(np.array([4, 0, 0], np.int64))
    np.testing.assert_array_equal(emb, emb2)
    np.testing.assert_array_equal(accum, accum2)
    np.testing.assert_array_equal(emb[1:4], IN["emb0"][1:4])       # shrinkage: active rows
    np.testing.assert_allclose(accum[[0, 4]], [[16.1, 16.1], [4.1, 4.1]], rtol=1e-6)
    np.testing.assert_array_equal(accum[1:4], np.full((3, 2), 0.1, np.float32))


def test_ftrl_training_graph_with_ema_saves_loads_and_trains_alike(tmp_path):
    """The updates are ordinary graph ops: a saved training graph trains the same."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 3], name="x")
        ids = og.placeholder(og.int64, [None], name="ids")
        w = og.Variable(IN["w0"], name="w")
        emb = og.Variable(IN["emb0"], name="emb")
        v = og.Variable(IN["b0"], name="v")
        step = og.train.get_or_create_global_step()
        train = og.train.FtrlOptimizer(0.2, l1_regularization_strength=0.01).minimize(
            og.reduce_sum(w * x) + og.reduce_sum(og.gather(emb, ids)), global_step=step)
        ema = og.train.ExponentialMovingAverage(0.9, num_updates=step)
        with og.control_dependencies([train]):
            train = ema.apply([w, emb])
        train2 = og.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.01) \
            .minimize(og.reduce_sum(og.square(v) * x[0]))
        reads = {"w": og.identity(w), "avg": og.identity(ema.average(w)),
                 "emb": og.identity(emb), "v": og.identity(v)}
    path = str(tmp_path / "train.og")
    og.save(g, path, signatures={
        "train": og.signature({"x": x, "ids": ids}, targets=[train, train2]),
        "read": og.signature({}, reads)})
    loaded = og.Session(og.load(path))
    sess = og.Session(g)
    for n in range(STEPS):
        loaded.run_signature("train", x=IN["X"][n], ids=IN["ids"][n])
        sess.run([train, train2], {x: IN["X"][n], ids: IN["ids"][n]})
    got, want = loaded.run_signature("read"), sess.run(reads)
    for key in reads:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    assert not np.allclose(got["w"], IN["w0"]) and not np.allclose(got["avg"], got["w"])
    assert not np.allclose(got["v"], IN["b0"])


def test_optimizers_refuse_bad_arguments():
    Ftrl = og.train.FtrlOptimizer
    for kwargs, err in (
            (dict(learning_rate=0.0), ValueError), (dict(learning_rate=-0.1), ValueError),
            (dict(learning_rate="0.1"), TypeError), (dict(learning_rate=None), TypeError),
            (dict(learning_rate=0.1, learning_rate_power=0.5), ValueError),
            (dict(learning_rate=0.1, initial_accumulator_value=-1.0), ValueError),
            (dict(learning_rate=0.1, l1_regularization_strength=-0.1), ValueError),
            (dict(learning_rate=0.1, l2_regularization_strength=-0.1), ValueError),
            (dict(learning_rate=0.1, l2_shrinkage_regularization_strength=-1.0), ValueError),
            (dict(learning_rate=0.1, beta=-1.0), ValueError),
            (dict(learning_rate=0.1, beta="b"), TypeError),
            (dict(learning_rate=0.1, l1_regularization_strength=float("inf")), ValueError),
            (dict(learning_rate=0.1, accum_name=3), TypeError),
            (dict(learning_rate=0.1, linear_name=""), TypeError),
            (dict(learning_rate=0.1, use_locking="yes"), TypeError),
            (dict(learning_rate=0.1, name=""), TypeError)):
        with pytest.raises(err):
            Ftrl(**kwargs)
    Ftrl(0.1, initial_accumulator_value=0.0, learning_rate_power=0.0, beta=None)
    PGD = og.train.ProximalGradientDescentOptimizer
    PGD(0.0)     # no step, as TF1
    for kwargs, err in ((dict(learning_rate=-0.1), ValueError),
                        (dict(learning_rate=0.1, l1_regularization_strength=-1.0), ValueError),
                        (dict(learning_rate=0.1, l2_regularization_strength="x"), TypeError),
                        (dict(learning_rate=0.1, use_locking="no"), TypeError)):
        with pytest.raises(err):
            PGD(**kwargs)
    PA = og.train.ProximalAdagradOptimizer
    for kwargs, err in ((dict(learning_rate=0.1, initial_accumulator_value=0.0), ValueError),
                        (dict(learning_rate=0.1, initial_accumulator_value=-1.0), ValueError),
                        (dict(learning_rate=0.1, l1_regularization_strength=-1.0), ValueError),
                        (dict(learning_rate=0.0), ValueError),
                        (dict(learning_rate=[0.1]), TypeError)):
        with pytest.raises(err):
            PA(**kwargs)


# --------------------------------------------------------------------------- schedules

@pytest.mark.parametrize("case", _cases("sched"))
def test_schedules_follow_tf1_without_noise(case):
    spec = _spec("sched", case)
    g = og.Graph()
    with g.as_default():
        step = og.placeholder(og.int64, [], name="step")
        kwargs = {spec.get("step_arg", "global_step"): step, **spec["kwargs"]}
        if spec["fn"] == "piecewise_constant_decay":
            kwargs["global_step"] = kwargs.pop("x")
        value = getattr(og.train, spec["fn"])(**kwargs)
    sess = og.Session(g)
    got = np.array([sess.run(value, {step: s}) for s in IN["sched_steps"]])
    want = REF[f"sched/{case}"]
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_piecewise_constant_decay_is_piecewise_constant():
    assert og.train.piecewise_constant_decay is og.train.piecewise_constant


def _noise_samples(initial_variance, at_step, draws_per_run=250, runs=16, seed=None,
                   graph_seed=None, **kwargs):
    """eps of noisy_linear_cosine_decay at a step, recovered from the schedule's values
    (many schedule nodes per run, each drawing its own noise)."""
    g = og.Graph()
    with g.as_default():
        if graph_seed is not None:
            og.set_random_seed(graph_seed)
        step = og.constant(np.int64(at_step))
        values = [og.train.noisy_linear_cosine_decay(0.5, step, 10, initial_variance,
                                                     **kwargs) for _ in range(draws_per_run)]
    sess = og.Session(g, seed=seed)
    got = np.concatenate([np.array(sess.run(values)) for _ in range(runs)]).astype(np.float64)
    s = min(at_step, 10)
    alpha, beta, periods = kwargs.get("alpha", 0.0), kwargs.get("beta", 0.001), \
        kwargs.get("num_periods", 0.5)
    cosine = 0.5 * (1 + np.cos(np.pi * 2 * periods * s / 10))
    return (got / 0.5 - beta) / cosine - alpha - (10 - s) / 10


@pytest.mark.parametrize("at_step,variance_decay", [(0, 0.55), (3, 0.55), (6, 1.0)])
def test_noisy_linear_cosine_decay_noise_has_tf1s_distribution(at_step, variance_decay):
    eps = _noise_samples(2.0, at_step, seed=7, variance_decay=variance_decay)
    n = eps.size
    variance = 2.0 / (1.0 + at_step) ** variance_decay
    # mean within 5 standard errors, variance within 5 standard errors of a normal's
    assert abs(eps.mean()) < 5 * np.sqrt(variance / n)
    assert abs(eps.var() / variance - 1) < 5 * np.sqrt(2.0 / (n - 1))
    within = np.mean(np.abs(eps) < np.sqrt(variance))
    assert abs(within - 0.6827) < 5 * np.sqrt(0.6827 * 0.3173 / n)
    assert len(np.unique(eps)) > 0.99 * n        # every node and every run draws anew


def test_noisy_linear_cosine_decay_draws_from_the_sessions_generator():
    a = _noise_samples(1.0, 2, draws_per_run=5, runs=3, seed=11)
    b = _noise_samples(1.0, 2, draws_per_run=5, runs=3, seed=11)
    c = _noise_samples(1.0, 2, draws_per_run=5, runs=3, seed=12)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    d = _noise_samples(1.0, 2, draws_per_run=5, runs=3, graph_seed=3)
    e = _noise_samples(1.0, 2, draws_per_run=5, runs=3, graph_seed=3)
    np.testing.assert_array_equal(d, e)
    zero = _noise_samples(0.0, 2, draws_per_run=3, runs=2, seed=1)
    np.testing.assert_allclose(zero, 0.0, atol=1e-6)


def test_noisy_linear_cosine_decay_dtypes_and_errors():
    g = og.Graph()
    with g.as_default():
        step = og.train.get_or_create_global_step()
        lr64 = og.train.noisy_linear_cosine_decay(og.constant(np.float64(0.1)), step, 10,
                                                  initial_variance=0.0)
        lr32 = og.train.noisy_linear_cosine_decay(0.1, None, 10, initial_variance=0.0,
                                                  name="lr")
        assert lr64.dtype == og.float64 and lr32.dtype == og.float32
        assert lr32.name == "lr"
        for kwargs, err in ((dict(decay_steps=0), ValueError),
                            (dict(decay_steps=10, initial_variance=-1.0), ValueError),
                            (dict(decay_steps=10, alpha="a"), TypeError),
                            (dict(decay_steps=10, name=3), TypeError),
                            (dict(decay_steps=10, variance_decay=float("nan")), ValueError)):
            with pytest.raises(err):
                og.train.noisy_linear_cosine_decay(0.1, step, **kwargs)
        with pytest.raises(TypeError):
            og.train.noisy_linear_cosine_decay("0.1", step, 10)
        with pytest.raises(ValueError):
            og.train.noisy_linear_cosine_decay(-0.1, step, 10)
    sess = og.Session(g)
    np.testing.assert_allclose(sess.run(lr64), 0.1 * (1.0 + 0.001), rtol=1e-12)
    np.testing.assert_allclose(sess.run(lr32), 0.1 * (1.0 + 0.001), rtol=1e-6)


def test_new_names_are_exported():
    for name in ("ExponentialMovingAverage", "FtrlOptimizer", "ProximalAdagradOptimizer",
                 "ProximalGradientDescentOptimizer", "assert_global_step",
                 "create_global_step", "get_global_step", "global_step",
                 "noisy_linear_cosine_decay", "piecewise_constant_decay"):
        assert name in og.train.__all__ and callable(getattr(og.train, name))
