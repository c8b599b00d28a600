"""og.train's TF1-named optimizers, minimize's global step and the schedules against
TensorFlow 2.21 tf.compat.v1 (graph mode): values, dtypes, variable names, arguments.

Every expected number or name below is TensorFlow 2.21 tf.compat.v1's result for the
same snippet, recorded once from a TensorFlow install (TensorFlow is not a test
dependency).
"""

import numpy as np
import pytest

import onegraph as og

W0 = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], np.float32)
C = np.array([[0.5, -1.0, 2.0], [0.1, 0.0, -3.0]], np.float32)


def _dense(make, steps=4, dtype=np.float32):
    """w after `steps` runs of make().minimize(sum(w * C) + sum(w^2) / 2)."""
    g = og.Graph()
    with g.as_default():
        w = og.Variable(W0.astype(dtype), name="w")
        loss = og.reduce_sum(w * C.astype(dtype)) + 0.5 * og.reduce_sum(og.square(w))
        train = make().minimize(loss)
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for _ in range(steps):
        sess.run(train)
    return sess.run(w)


EMB0 = np.array([[0.3, -1.2], [2.0, 0.5], [-0.7, 0.1], [1.5, -2.5]], np.float32)
WT = np.array([[1.0, -0.5], [0.25, 2.0], [-1.5, 0.75], [0.5, 0.5]], np.float32)
IDS = [[0, 2, 2], [1], [3, 0, 3, 3]]   # repeated indices, a row never looked up


def _sparse(make, steps=3, slots=()):
    """emb (and the named slots) after the steps of IDS, the gradient a sparse one
    (IndexedSlices from embedding_lookup)."""
    g = og.Graph()
    with g.as_default():
        emb = og.Variable(EMB0, name="emb")
        ids = og.placeholder(og.int64, [None], name="ids")
        wt = og.placeholder(og.float32, [None, 2], name="wt")
        optimizer = make()
        train = optimizer.minimize(og.reduce_sum(og.nn.embedding_lookup(emb, ids) * wt))
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for k in IDS[:steps]:
        sess.run(train, {ids: np.array(k), wt: WT[:len(k)]})
    return [sess.run(emb)] + [sess.run(optimizer.get_slot(emb, s)) for s in slots]


# --------------------------------------------------------------------------- Adam (W11)

ADAM = {   # name: (optimizer, dtype, TF 2.21 tf.compat.v1's w after 4 steps)
    "default_epsilon": (lambda: og.train.AdamOptimizer(0.1), np.float32,
                        [[0.6022003293037415, -1.6009149551391602, 0.10113976150751114],
                         [-0.14902304112911224, 2.60091495513916, -0.6006546020507812]]),
    "positional_epsilon_1": (lambda: og.train.AdamOptimizer(0.1, 0.8, 0.99, 1.0), np.float32,
                             [[0.9266179203987122, -1.8765263557434082, 0.3913740813732147],
                              [-0.005949844606220722, 2.876526117324829,
                               -0.8510386943817139]]),
    "float64": (lambda: og.train.AdamOptimizer(0.1, epsilon=0.1), np.float64,
                [[0.8359868637729723, -1.7679092166414034, 0.28573210675606214],
                 [-0.0178795996214861, 2.767909216641403, -0.740918388088428]]),
}


@pytest.mark.parametrize("name", sorted(ADAM))
def test_adam_optimizer_follows_tf1_epsilon_hat(name):
    make, dtype, want = ADAM[name]
    got = _dense(make, dtype=dtype)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12,
                               atol=1e-7 if dtype == np.float32 else 1e-14)


def test_adam_optimizer_on_a_sparse_gradient_is_tf1s():
    """TF1 sums repeated indices, then decays every row's moments (rows not looked up
    still move), with epsilon hat."""
    (got,) = _sparse(lambda: og.train.AdamOptimizer(0.1, epsilon=0.5))
    np.testing.assert_allclose(got, [[0.28604719042778015, -1.2005826234817505],
                                     [1.9921536445617676, 0.5040434002876282],
                                     [-0.6839755177497864, 0.06759405136108398],
                                     [1.5, -2.5028929710388184]],   # TF 2.21 tf.compat.v1
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("epsilon,gradient,want", [
    (1e-8, 1e-6, 0.7577498555183411),   # small gradients: visible at the default epsilon
    (1.0, 0.5, 0.9935926198959351),     # a large epsilon
])
def test_adam_optimizer_audit_examples(epsilon, gradient, want):
    """(audit W11, W11b) w = 1 after 3 steps of a constant gradient; `want` is TF 2.21
    tf.compat.v1's. og.train.Adam (the paper's form) keeps its own, documented values."""
    got = {}
    for make in (og.train.AdamOptimizer, og.train.Adam):
        g = og.Graph()
        with g.as_default():
            w = og.get_variable("w", [1], initializer=og.constant_initializer(1.0))
            train = make(0.1, epsilon=epsilon).minimize(og.reduce_sum(w * gradient))
        sess = og.Session(g)
        sess.run(og.global_variables_initializer(g))
        for _ in range(3):
            sess.run(train)
        got[make] = sess.run(w)
    np.testing.assert_allclose(got[og.train.AdamOptimizer], [want], rtol=1e-6)
    # og.train.Adam: var -= lr m_hat / (sqrt(v_hat) + epsilon)
    w = 1.0
    m = v = 0.0
    for t in (1, 2, 3):
        m, v = 0.9 * m + 0.1 * gradient, 0.999 * v + 0.001 * gradient ** 2
        w -= 0.1 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + epsilon)
    np.testing.assert_allclose(got[og.train.Adam], [w], rtol=1e-5)


# --------------------------------------------------------------------------- Adadelta (W12)

def test_adadelta_sparse_gradient_updates_only_the_rows_looked_up():
    emb, accum, accum_update = _sparse(
        lambda: og.train.AdadeltaOptimizer(1.0, rho=0.5, epsilon=1e-2), steps=2,
        slots=("accum", "accum_update"))
    # TF 2.21 tf.compat.v1 after 2 steps: row 0 (looked up at step 1 only) keeps its
    # accumulators at step 2, row 3 (never looked up) keeps zeros
    np.testing.assert_allclose(accum, [[0.5, 0.125], [0.5, 0.125], [0.78125, 3.78125],
                                       [0.0, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(
        accum_update, [[0.009803920052945614, 0.009259257465600967],
                       [0.009803920052945614, 0.009259257465600967],
                       [0.009873618371784687, 0.009973623789846897], [0.0, 0.0]], rtol=1e-6)
    np.testing.assert_array_equal(emb[3], EMB0[3])
    (emb,) = _sparse(lambda: og.train.AdadeltaOptimizer(1.0, rho=0.5, epsilon=1e-2))
    np.testing.assert_allclose(emb, [[0.09478176385164261, -1.2567152976989746],
                                     [1.8599720001220703, 0.6360827684402466],
                                     [-0.5594751238822937, -0.04123472422361374],
                                     [1.5, -2.638972282409668]],   # TF 2.21 tf.compat.v1
                               rtol=1e-6, atol=1e-7)


def test_adadelta_sparse_audit_example():
    """(audit W12) rows looked up as 0, 1, 1, 0: TF1 ends with both rows equal."""
    g = og.Graph()
    with g.as_default():
        w = og.get_variable("w", [2, 1], initializer=og.constant_initializer(0.0))
        i = og.placeholder(og.int32, [1], name="i")
        train = og.train.AdadeltaOptimizer(1.0, rho=0.5, epsilon=1e-2).minimize(
            og.reduce_sum(og.gather(w, i)))
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for k in [0, 1, 1, 0]:
        sess.run(train, {i: np.array([k], np.int32)})
    np.testing.assert_allclose(sess.run(w).ravel(), [-0.30145225, -0.30145225],  # TF 2.21
                               rtol=1e-6)


def test_adadelta_dense_unchanged():
    got = _dense(lambda: og.train.AdadeltaOptimizer(1.0, rho=0.5, epsilon=1e-2))
    np.testing.assert_allclose(got, [[0.3750007748603821, -1.3451935052871704,
                                      -0.1493200957775116],
                                     [-0.10000012814998627, 2.345193386077881,
                                      -0.33865922689437866]],   # TF 2.21 tf.compat.v1
                               rtol=1e-6, atol=1e-7)


# --------------------------------------------------------------------------- global step (W14)

@pytest.mark.parametrize("pass_step,want", [
    (False, (0, 0.10000000149011612, 0.5119999647140503)),   # TF 2.21 tf.compat.v1
    (True, (3, 0.012500000186264515, 0.6840000152587891)),
])
def test_minimize_increments_a_global_step_only_when_given_one(pass_step, want):
    g = og.Graph()
    with g.as_default():
        w = og.get_variable("w", [1], initializer=og.constant_initializer(1.0))
        step = og.train.get_or_create_global_step()
        lr = og.train.exponential_decay(0.1, step, 1, 0.5)
        optimizer = og.train.GradientDescentOptimizer(lr)
        loss = og.reduce_sum(w * w)
        train = optimizer.minimize(loss, global_step=step) if pass_step else \
            optimizer.minimize(loss)
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for _ in range(3):
        sess.run(train)
    assert int(sess.run(step)) == want[0]
    np.testing.assert_allclose(sess.run(lr), want[1], rtol=1e-6)
    np.testing.assert_allclose(sess.run(w), [want[2]], rtol=1e-6)


def test_minimize_without_a_global_step_creates_none():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.float32([1.0]), name="w")
        og.train.AdamOptimizer(0.1).minimize(og.reduce_sum(w * w))
        og.train.Adam(0.1).minimize(og.reduce_sum(w * w))
    assert g.get_collection(og.GLOBAL_STEP) == []
    assert "global_step" not in [v.name for v in og.global_variables(g)]


# --------------------------------------------------------------------------- arguments, names

def test_tf1_positional_arguments_get_name_and_get_slot_names():
    g = og.Graph()
    with g.as_default():
        w = og.get_variable("w", [2], initializer=og.constant_initializer(1.0))
        adam = og.train.AdamOptimizer(0.1, 0.8, 0.99, 1e-3, False, "A")
        descent = og.train.GradientDescentOptimizer(0.5, False, "GD")
        assert adam.get_slot_names() == [] and adam.get_name() == "A"   # as TF1
        first = adam.minimize(og.reduce_sum(w * w))
        second = descent.minimize(og.reduce_sum(w))
    # TF 2.21 tf.compat.v1's variables, slot names and values
    assert [v.name for v in og.global_variables(g)] == [
        "w", "beta1_power", "beta2_power", "w/A", "w/A_1"]
    assert adam.get_slot_names() == ["m", "v"] and descent.get_slot_names() == []
    assert descent.get_name() == "GD"
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for op in (first, second, first):
        sess.run(op)
    np.testing.assert_allclose(sess.run(w), [0.31318604946136475] * 2, rtol=1e-6)
    # beta powers start at beta (step 1's) and are multiplied by beta after each step
    np.testing.assert_allclose(sess.run(["beta1_power", "beta2_power"]), [0.8 ** 3, 0.99 ** 3],
                               rtol=1e-6)
    for make in (lambda: og.train.GradientDescentOptimizer(0.1, "yes"),
                 lambda: og.train.AdamOptimizer(0.1, use_locking="no")):
        with pytest.raises(TypeError, match="use_locking"):
            make()
    with pytest.raises(TypeError):
        og.train.GradientDescentOptimizer()   # TF1: learning_rate has no default


SLOT_NAMES = {   # TF 2.21 tf.compat.v1: global_variables() and get_slot names for "w"
    "adam": (lambda: og.train.AdamOptimizer(0.1),
             ["w", "beta1_power", "beta2_power", "w/Adam", "w/Adam_1"],
             {"m": "w/Adam", "v": "w/Adam_1"}),
    "momentum": (lambda: og.train.MomentumOptimizer(0.1, 0.9), ["w", "w/Momentum"],
                 {"momentum": "w/Momentum"}),
    "adagrad": (lambda: og.train.AdagradOptimizer(0.1), ["w", "w/Adagrad"],
                {"accumulator": "w/Adagrad"}),
    "rmsprop": (lambda: og.train.RMSPropOptimizer(0.1), ["w", "w/RMSProp", "w/RMSProp_1"],
                {"momentum": "w/RMSProp_1", "rms": "w/RMSProp"}),
    "rmsprop_centered": (lambda: og.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
                         ["w", "w/RMSProp", "w/RMSProp_1", "w/RMSProp_2"],
                         {"mg": "w/RMSProp_1", "momentum": "w/RMSProp_2", "rms": "w/RMSProp"}),
    "adadelta": (lambda: og.train.AdadeltaOptimizer(0.1), ["w", "w/Adadelta", "w/Adadelta_1"],
                 {"accum": "w/Adadelta", "accum_update": "w/Adadelta_1"}),
    "gradient_descent": (lambda: og.train.GradientDescentOptimizer(0.1), ["w"], {}),
    "adam_named": (lambda: og.train.AdamOptimizer(0.1, name="Foo"),
                   ["w", "beta1_power", "beta2_power", "w/Foo", "w/Foo_1"],
                   {"m": "w/Foo", "v": "w/Foo_1"}),
}


@pytest.mark.parametrize("name", sorted(SLOT_NAMES))
def test_tf1_optimizers_name_their_slots_as_tf1(name):
    make, variables, slots = SLOT_NAMES[name]
    g = og.Graph()
    with g.as_default():
        w = og.get_variable("w", [2], initializer=og.constant_initializer(1.0))
        optimizer = make()
        optimizer.minimize(og.reduce_sum(w * w))
    assert [v.name for v in og.global_variables(g)] == variables
    assert optimizer.get_slot_names() == sorted(slots)
    assert {s: optimizer.get_slot(w, s).name for s in slots} == slots


def test_tf1_slot_names_with_scopes_and_several_optimizers():
    g = og.Graph()
    with g.as_default():
        with og.variable_scope("s"):
            w = og.get_variable("w", [2], initializer=og.constant_initializer(1.0))
        u = og.get_variable("u", [2], initializer=og.constant_initializer(1.0))
        og.train.AdamOptimizer(0.1).minimize(og.reduce_sum(w * u))
        og.train.AdamOptimizer(0.1).minimize(og.reduce_sum(w * u))
        og.train.MomentumOptimizer(0.1, 0.9).minimize(og.reduce_sum(w * u))
        with og.name_scope("outer"):
            og.train.AdamOptimizer(0.1).minimize(og.reduce_sum(w * u))
    assert [v.name for v in og.global_variables(g)] == [   # TF 2.21 tf.compat.v1
        "s/w", "u", "beta1_power", "beta2_power", "s/w/Adam", "s/w/Adam_1", "u/Adam",
        "u/Adam_1", "beta1_power_1", "beta2_power_1", "s/w/Adam_2", "s/w/Adam_3", "u/Adam_2",
        "u/Adam_3", "s/w/Momentum", "u/Momentum", "outer/beta1_power", "outer/beta2_power",
        "s/w/Adam_4", "s/w/Adam_5", "u/Adam_4", "u/Adam_5"]


def test_keras_style_optimizers_keep_their_slot_names():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.float32([1.0, 2.0]), name="w")
        og.train.Adam(0.1).minimize(og.reduce_sum(w * w))
        og.train.Momentum(0.1).minimize(og.reduce_sum(w * w))
    assert [v.name for v in og.global_variables(g)] == [
        "w", "Adam/t", "w/Adam/m", "w/Adam/v", "w/Momentum/momentum"]


@pytest.mark.parametrize("make", [
    lambda: og.train.AdamOptimizer(0.1),
    lambda: og.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    lambda: og.train.AdadeltaOptimizer(1.0),
])
def test_tf1_named_slots_save_and_restore(tmp_path, make):
    g = og.Graph()
    with g.as_default():
        w = og.Variable(W0, name="w")
        train = make().minimize(og.reduce_sum(w * C) + 0.5 * og.reduce_sum(og.square(w)))
        saver = og.train.Saver()
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for _ in range(2):
        sess.run(train)
    path = saver.save(sess, str(tmp_path))
    saved = {v.name: sess.run(v) for v in og.global_variables(g)}
    for _ in range(2):
        sess.run(train)
    then = sess.run(w)
    fresh = og.Session(g)
    saver.restore(fresh, path)
    for v in og.global_variables(g):
        np.testing.assert_array_equal(fresh.run(v), saved[v.name], err_msg=v.name)
    for _ in range(2):
        fresh.run(train)
    np.testing.assert_array_equal(fresh.run(w), then)   # every slot was restored


# --------------------------------------------------------------------------- schedules (W16)

def _value(build, name=None):
    g = og.Graph()
    with g.as_default():
        out = build()
        if name is not None:
            assert out.name == name
    return og.Session(g).run(out)


STEP = lambda: og.constant(np.int64(7))  # noqa: E731

PIECEWISE = {   # values: TF 2.21 tf.compat.v1's value and dtype at step 7, boundary [5]
    "python_ints": ([3, 1], 1, np.int32),
    "python_floats": ([0.1, 0.01], 0.009999999776482582, np.float32),
    "numpy_float64": ([np.float64(0.1), np.float64(0.01)], 0.01, np.float64),
    "numpy_int64": ([np.int64(3), np.int64(1)], 1, np.int64),
    "tensors": (lambda: [og.constant(0.5), og.constant(0.25)], 0.25, np.float32),
}


@pytest.mark.parametrize("name", sorted(PIECEWISE))
def test_piecewise_constant_has_the_values_dtype(name):
    values, want, dtype = PIECEWISE[name]
    got = _value(lambda: og.train.piecewise_constant(
        STEP(), [5], values() if callable(values) else values))
    assert np.asarray(got).dtype == dtype
    assert got == want


def test_piecewise_constant_name_and_mixed_values():
    assert _value(lambda: og.train.piecewise_constant(STEP(), [5], [0.5, 0.25], name="pc"),
                  "pc") == np.float32(0.25)
    # TF1 refuses [1, 0.5] (int32 vs float32); onegraph makes both float32
    got = _value(lambda: og.train.piecewise_constant(STEP(), [5], [1, 0.5]))
    assert got.dtype == np.float32 and got == 0.5
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="same dtype"):
            og.train.piecewise_constant(STEP(), [5], [np.int64(1), np.float32(0.5)])


SCHEDULES = {   # TF 2.21 tf.compat.v1's value and dtype at step 7 (and og's result name)
    "exponential_tensor": (lambda: og.train.exponential_decay(og.constant(0.1), STEP(), 10, 0.5,
                                                              name="lr"),
                           0.06155722215771675, np.float32, "lr"),
    "exponential_float64": (lambda: og.train.exponential_decay(
        og.constant(np.float64(0.1)), STEP(), 10, 0.5), 0.06155722066724582, np.float64, None),
    "exponential_staircase_name": (lambda: og.train.exponential_decay(
        0.1, STEP(), 5, 0.5, staircase=True, name="lr2"), 0.05000000074505806, np.float32,
        "lr2"),
    "cosine_tensor": (lambda: og.train.cosine_decay(og.constant(0.1), STEP(), 10, alpha=0.1,
                                                    name="cos"),
                      0.028549665585160255, np.float32, "cos"),
    "polynomial_tensor": (lambda: og.train.polynomial_decay(og.constant(0.1), STEP(), 10, 0.01,
                                                            power=2.0),
                          0.01810000091791153, np.float32, None),
    "polynomial_float64": (lambda: og.train.polynomial_decay(
        og.constant(np.float64(0.1)), STEP(), 10, 0.01, power=2.0), 0.018099999796599153,
        np.float64, None),
    "natural_exp_tensor": (lambda: og.train.natural_exp_decay(og.constant(0.1), STEP(), 10, 0.5),
                           0.07046880573034286, np.float32, None),
    "inverse_time_tensor": (lambda: og.train.inverse_time_decay(og.constant(0.1), STEP(), 10,
                                                                0.5),
                            0.07407407462596893, np.float32, None),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_take_a_tensor_learning_rate_and_a_name(name):
    build, want, dtype, out_name = SCHEDULES[name]
    got = _value(build, out_name)
    assert np.asarray(got).dtype == dtype
    # (the decay factor is computed in float32 for a float64 rate as well)
    np.testing.assert_allclose(got, want, rtol=3e-7)


def test_schedule_refuses_an_integer_tensor_learning_rate():
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="floating-point tensor"):
            og.train.exponential_decay(og.constant(np.int32(1)), STEP(), 10, 0.5)
