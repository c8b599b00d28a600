"""og.train's TF1-named optimizers and schedules against numpy spellings of TF1's
update rules and formulas, several steps each, dense and sparse gradients."""

import numpy as np
import pytest

import onegraph as og

C = np.array([[0.5, -1.0, 2.0], [0.1, 0.0, -3.0]])
W0 = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])


def _momentum(lr, momentum, nesterov):
    state = {"accum": np.zeros_like(W0)}

    def step(w, g):
        state["accum"] = momentum * state["accum"] + g
        return w - lr * (g + momentum * state["accum"] if nesterov else state["accum"])
    return step


def _adagrad(lr, initial):
    state = {"accum": np.full_like(W0, initial)}

    def step(w, g):
        state["accum"] = state["accum"] + g * g
        return w - lr * g / np.sqrt(state["accum"])
    return step


def _rmsprop(lr, decay, momentum, eps, centered):
    state = {"ms": np.ones_like(W0), "mg": np.zeros_like(W0), "mom": np.zeros_like(W0)}

    def step(w, g):
        state["ms"] = decay * state["ms"] + (1 - decay) * g * g
        state["mg"] = decay * state["mg"] + (1 - decay) * g
        denominator = state["ms"] - state["mg"] ** 2 if centered else state["ms"]
        state["mom"] = momentum * state["mom"] + lr * g / np.sqrt(denominator + eps)
        return w - state["mom"]
    return step


def _adadelta(lr, rho, eps):
    state = {"accum": np.zeros_like(W0), "update": np.zeros_like(W0)}

    def step(w, g):
        state["accum"] = rho * state["accum"] + (1 - rho) * g * g
        update = np.sqrt(state["update"] + eps) / np.sqrt(state["accum"] + eps) * g
        state["update"] = rho * state["update"] + (1 - rho) * update * update
        return w - lr * update
    return step


CASES = {   # (the optimizer, a fresh numpy oracle of its update)
    "momentum": (lambda: og.train.MomentumOptimizer(0.1, 0.9),
                 lambda: _momentum(0.1, 0.9, False)),
    "nesterov": (lambda: og.train.MomentumOptimizer(0.1, 0.8, use_nesterov=True),
                 lambda: _momentum(0.1, 0.8, True)),
    "adagrad": (lambda: og.train.AdagradOptimizer(0.5, initial_accumulator_value=0.2),
                lambda: _adagrad(0.5, 0.2)),
    "rmsprop": (lambda: og.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5),
                lambda: _rmsprop(0.01, 0.8, 0.5, 1e-10, False)),
    "centered": (lambda: og.train.RMSPropOptimizer(0.01, momentum=0.3, epsilon=1e-6,
                                                   centered=True),
                 lambda: _rmsprop(0.01, 0.9, 0.3, 1e-6, True)),
    "adadelta": (lambda: og.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
                 lambda: _adadelta(1.0, 0.9, 1e-6)),
}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tf1_optimizers_follow_tf1_update_rules(name, sparse):
    make, make_oracle = CASES[name]
    oracle = make_oracle()
    g = og.Graph()
    with g.as_default():
        w = og.Variable(W0.copy(), name="w")
        rows = og.nn.embedding_lookup(w, [0, 1]) if sparse else w
        loss = og.reduce_sum(rows * C) + 0.5 * og.reduce_sum(og.square(rows))
        train = make().minimize(loss)
        init = og.global_variables_initializer()
    sess = og.Session(g)
    sess.run(init)
    want = W0.copy()
    for _ in range(4):
        sess.run(train)
        want = oracle(want, C + want)
        # (learning rates and momenta are float32 constants, as in og.train)
        np.testing.assert_allclose(sess.run(w), want, rtol=1e-6, atol=1e-9)


def test_tf1_optimizers_refuse_what_tf1_refuses():
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        og.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="decay"):
        og.train.RMSPropOptimizer(0.1, decay=1.5)
    with pytest.raises(TypeError, match="use_locking"):
        og.train.MomentumOptimizer(0.1, 0.9, use_locking="yes")
    with pytest.raises(TypeError):
        og.train.MomentumOptimizer(0.1)   # momentum has no default in TF1


def _schedule_values(build, steps):
    g = og.Graph()
    with g.as_default():
        step = og.placeholder(og.int64, [], name="step")
        rate = build(step)
    sess = og.Session(g)
    return np.array([sess.run(rate, {step: s}) for s in steps])


STEPS = [0, 1, 5, 10, 15, 25, 40]


@pytest.mark.parametrize("cycle", [False, True])
def test_polynomial_decay(cycle):
    got = _schedule_values(lambda s: og.train.polynomial_decay(
        0.1, s, 10, end_learning_rate=0.01, power=2.0, cycle=cycle), STEPS)
    want = []
    for s in STEPS:
        span = 10 * max(np.ceil(s / 10), 1) if cycle else 10
        t = s if cycle else min(s, 10)
        want.append((0.1 - 0.01) * (1 - t / span) ** 2 + 0.01)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("staircase", [False, True])
def test_natural_exp_and_inverse_time_decay(staircase):
    ratio = np.array(STEPS) / 10.0
    if staircase:
        ratio = np.floor(ratio)
    got = _schedule_values(lambda s: og.train.natural_exp_decay(0.1, s, 10, 0.5, staircase),
                           STEPS)
    np.testing.assert_allclose(got, 0.1 * np.exp(-0.5 * ratio), rtol=1e-6)
    got = _schedule_values(lambda s: og.train.inverse_time_decay(0.1, s, 10, 0.5, staircase),
                           STEPS)
    np.testing.assert_allclose(got, 0.1 / (1 + 0.5 * ratio), rtol=1e-6)


@pytest.mark.parametrize("name", ["momentum", "nesterov", "adagrad", "rmsprop", "centered"])
def test_sparse_gradients_leave_the_rows_not_looked_up_alone(name):
    """(review: centered RMSProp updated every row for a gathered gradient, where TF1's
    SparseApplyCenteredRMSProp touches only the rows looked up)"""
    make, _ = CASES[name]
    g = og.Graph()
    with g.as_default():
        w = og.Variable(W0.copy(), name="w")
        optimizer = make()
        both = optimizer.minimize(og.reduce_sum(w * C) + 0.5 * og.reduce_sum(og.square(w)))
        row = og.nn.embedding_lookup(w, [0])
        first = optimizer.minimize(og.reduce_sum(row * C[:1]))
        init = og.global_variables_initializer()
    sess = og.Session(g)
    sess.run(init)
    sess.run(both)
    before = sess.run(w)
    sess.run(first)
    after = sess.run(w)
    np.testing.assert_array_equal(after[1], before[1])
    assert not np.array_equal(after[0], before[0])
