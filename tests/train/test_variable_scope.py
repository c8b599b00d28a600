"""TF1's variable sharing (train/variable_scope.py) and initializers
(train/initializers.py): sharing between towers, reuse modes, scope and op names,
re-entering captured scopes, every refusal with its message, initializer statistics
against numpy-computed expectations, seeding rules, saving, and training."""

import math
import re
import sys
import threading

import numpy as np
import pytest

import onegraph as og
from onegraph.train import initializers as init
from onegraph.train.variable_scope import (AUTO_REUSE, VariableScope, get_variable,
                                           get_variable_scope, variable_scope)

R = np.random.default_rng(11)


def tower(x):
    """A dense layer whose weights come from get_variable (shared when reused)."""
    w = get_variable("w", [3, 2])
    b = get_variable("b", [2], initializer=init.constant_initializer(0.5))
    return og.matmul(x, w) + b


def two_towers():
    """Graph with towers on inputs x1 and x2 sharing model/w and model/b."""
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(1)
        x1 = og.placeholder(og.float32, [None, 3], name="x1")
        x2 = og.placeholder(og.float32, [None, 3], name="x2")
        with variable_scope("model"):
            y1 = tower(x1)
        with variable_scope("model", reuse=True):
            y2 = tower(x2)
    return g, x1, x2, y1, y2


def batch(n=5):
    return R.standard_normal((n, 3)).astype(np.float32)


# --------------------------------------------------------------------------- sharing

def test_two_towers_built_with_reuse_share_their_variables():
    g, x1, x2, y1, y2 = two_towers()
    assert [v.name for v in og.global_variables(g)] == ["model/w", "model/b"]
    assert [v.name for v in og.trainable_variables(g)] == ["model/w", "model/b"]
    sess = og.Session(g)
    xb = batch()
    a, b = sess.run([y1, y2], {x1: xb, x2: xb})
    np.testing.assert_array_equal(a, b)
    w = og.global_variables(g)[0]
    np.testing.assert_allclose(a, xb @ sess.run(w) + 0.5, rtol=1e-6)


def test_gradients_of_either_tower_reach_the_shared_variable():
    g, x1, x2, y1, y2 = two_towers()
    with g.as_default():
        w = og.global_variables(g)[0]
        (g2,) = og.gradients(og.reduce_sum(y2), [w])
        (g12,) = og.gradients(og.reduce_sum(y1) + og.reduce_sum(y2), [w])
    xa, xb = batch(4), batch(6)
    sess = og.Session(g)
    np.testing.assert_allclose(sess.run(g2, {x2: xb}), xb.T @ np.ones((6, 2)), rtol=1e-5)
    np.testing.assert_allclose(sess.run(g12, {x1: xa, x2: xb}),
                               xa.T @ np.ones((4, 2)) + xb.T @ np.ones((6, 2)), rtol=1e-5)


def test_sgd_on_one_tower_updates_the_variable_the_other_tower_uses():
    g, x1, x2, y1, y2 = two_towers()
    with g.as_default():
        train = og.train.SGD(0.1).minimize(og.reduce_sum(y1))
    w, b = og.global_variables(g)[:2]
    sess = og.Session(g)
    w0 = sess.run(w)
    xa, xb = batch(4), batch()
    sess.run(train, {x1: xa})
    np.testing.assert_allclose(sess.run(w), w0 - 0.1 * xa.T @ np.ones((4, 2)), rtol=1e-5)
    np.testing.assert_allclose(sess.run(b), 0.5 - 0.1 * 4 * np.ones(2), rtol=1e-6)
    np.testing.assert_allclose(sess.run(y2, {x2: xb}), xb @ sess.run(w) + sess.run(b),
                               rtol=1e-5)


def test_auto_reuse_creates_once_then_returns_the_same_variable():
    g = og.Graph()
    with g.as_default():
        def layer():
            with variable_scope("auto", reuse=AUTO_REUSE):
                return get_variable("v", [2])
        first, second = layer(), layer()
        with variable_scope("auto", reuse=AUTO_REUSE):
            other = get_variable("u", [1])
    assert first is second
    assert other.name == "auto/u"
    assert [v.name for v in og.global_variables(g)] == ["auto/v", "auto/u"]


def test_reuse_is_inherited_by_nested_scopes_and_false_means_inherit():
    g = og.Graph()
    with g.as_default():
        with variable_scope("m"), variable_scope("in"):
            v = get_variable("v", [1])
        with variable_scope("m", reuse=True):
            with variable_scope("in") as inner:
                assert inner.reuse is True
                assert get_variable("v", [1]) is v
                with pytest.raises(ValueError, match="Variable m/in/new does not exist"):
                    get_variable("new", [1])
            with variable_scope("in", reuse=False):
                assert get_variable("v", [1]) is v
        with variable_scope("m", reuse=AUTO_REUSE), variable_scope("in") as auto:
            assert auto.reuse is AUTO_REUSE
            assert get_variable("v", [1]) is v


def test_reuse_variables_of_a_captured_scope():
    g = og.Graph()
    with g.as_default():
        with variable_scope("s") as scope:
            v = get_variable("v", [2])
            scope.reuse_variables()
            assert get_variable("v", [2]) is v
        assert get_variable_scope().reuse is False


# --------------------------------------------------------------------------- names

def test_nested_scopes_name_variables_and_ops():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        with variable_scope("a") as a:
            with variable_scope("b") as ab:
                v = get_variable("v", [1])
                op = og.identity(x, name="op")
        with variable_scope("a") as again:
            w = get_variable("w", [1])
            op2 = og.identity(x, name="op")
    assert (a.name, ab.name, again.name) == ("a", "a/b", "a")
    assert (v.name, w.name) == ("a/b/v", "a/w")
    assert (op.name, op2.name) == ("a/b/op", "a_1/op")
    assert (a.original_name_scope, ab.original_name_scope,
            again.original_name_scope) == ("a/", "a/b/", "a_1/")


def test_variable_names_ignore_name_scopes():
    g = og.Graph()
    with g.as_default():
        with og.name_scope("ns"):
            v = get_variable("v", [1])
            with variable_scope("vs"):
                w = get_variable("w", [1])
    assert (v.name, w.name) == ("v", "vs/w")


def test_default_names_are_uniquified_and_restart_when_the_parent_is_reentered():
    g = og.Graph()
    with g.as_default():
        with variable_scope("foo") as foo:
            with variable_scope(None, default_name="bar"):
                a = get_variable("a", [1])
            with variable_scope(None, default_name="bar") as bar1:
                b = get_variable("b", [1])
        with variable_scope(foo):
            with variable_scope(None, default_name="bar"):
                c = get_variable("c", [1])
        with variable_scope(foo):  # leaving a captured scope forgets the names opened
            with variable_scope(None, default_name="bar"):
                d = get_variable("d", [1])
    assert (a.name, b.name, c.name, d.name) == ("foo/bar/a", "foo/bar_1/b", "foo/bar/c",
                                                "foo/bar/d")
    assert bar1.original_name_scope == "foo/bar_1/"


def test_reentering_a_captured_scope_from_elsewhere():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        with variable_scope("foo", initializer=init.ones_initializer(),
                            dtype=og.float64) as foo:
            v = get_variable("v", [2])
        with variable_scope("other"):
            with variable_scope(foo, reuse=True) as back:
                assert get_variable("v", [2]) is v
                op = og.identity(x, name="op")
            with variable_scope(foo) as again:
                u = get_variable("u", [3])
        with variable_scope("outer", reuse=True):
            with variable_scope(foo):  # the captured scope keeps its own reuse
                fresh = get_variable("fresh", [1])
        with variable_scope("p"), variable_scope("q") as pq:
            pass
        with variable_scope(pq):  # ops get a name scope from the last part only
            op_q = og.identity(x, name="op")
            q_var = get_variable("qv", [1])
    assert (op_q.name, q_var.name) == ("q/op", "p/q/qv")
    assert (back.name, back.original_name_scope, back.reuse) == ("foo", "foo/", True)
    assert again.reuse is False and foo.reuse is False
    assert op.name == "other/foo/op"
    assert (u.name, u.dtype, fresh.name) == ("foo/u", og.float64, "foo/fresh")
    np.testing.assert_array_equal(og.Session(g).run(u), np.ones(3))


def test_scope_initializer_and_dtype_apply_and_are_inherited():
    g = og.Graph()
    with g.as_default():
        with variable_scope("s", initializer=init.constant_initializer(3.0),
                            dtype=og.float64):
            v = get_variable("v", [2])
            with variable_scope("t") as t:
                u = get_variable("u", [2])
                k = get_variable("k", [2], dtype=og.int32)
                z = get_variable("z", [2], initializer=init.zeros_initializer())
    assert t.dtype == og.float64 and isinstance(t.initializer, init.Constant)
    sess = og.Session(g)
    for var, dtype, value in ((v, np.float64, 3), (u, np.float64, 3), (k, np.int32, 3),
                              (z, np.float64, 0)):
        got = sess.run(var)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.full(2, value))


def test_default_initializers_by_dtype():
    g = og.Graph()
    with g.as_default():
        f = get_variable("f", [40, 60])
        i = get_variable("i", [3], dtype=og.int64)
        b = get_variable("b", [3], dtype=og.bool_)
    sess = og.Session(g)
    limit = math.sqrt(6.0 / (40 + 60))
    values = sess.run(f)
    assert values.dtype == np.float32 and np.abs(values).max() <= limit
    assert np.abs(values).max() > 0.9 * limit
    np.testing.assert_array_equal(sess.run(i), np.zeros(3, np.int64))
    np.testing.assert_array_equal(sess.run(b), np.zeros(3, bool))


def test_value_and_callable_initializers():
    g = og.Graph()
    with g.as_default():
        arr = get_variable("arr", initializer=np.arange(6, dtype=np.float64).reshape(2, 3))
        ten = get_variable("ten", initializer=og.constant([1.0, 2.0]))
        noarg = get_variable("noarg", initializer=lambda: np.ones(3, np.int32))
        made = get_variable("made", [2, 2],
                            initializer=lambda shape, dtype: og.ones(shape, dtype) * 2.0)
        init_op = og.global_variables_initializer()
    assert (arr.shape, arr.dtype, ten.shape, noarg.dtype) == ((2, 3), og.float64, (2,),
                                                             og.int32)
    assert made.initial_value.name.startswith("made/Initializer/")
    sess = og.Session(g)
    sess.run(init_op)
    np.testing.assert_array_equal(sess.run(arr), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(sess.run(ten), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(made), np.full((2, 2), 2.0))


def test_initializers_are_built_outside_control_dependencies():
    g = og.Graph()
    with g.as_default():
        gate = og.no_op(name="gate")
        with og.control_dependencies([gate]):
            v = get_variable("v", [2],
                             initializer=lambda shape, dtype: og.random_normal(shape))
    assert v.initializer.control_inputs == []
    assert v.initial_value.op.control_inputs == []


def test_trainable_collections_and_scope_variable_lists():
    g = og.Graph()
    with g.as_default():
        with variable_scope("s") as s:
            a = get_variable("a", [1])
            b = get_variable("b", [1], trainable=False)
            c = get_variable("c", [1], collections=["mine"])
        d = get_variable("sd", [1])
    assert og.trainable_variables(g) == [a, c, d]
    assert g.get_collection("mine") == [c]
    assert c not in og.global_variables(g)
    with g.as_default():
        assert s.global_variables() == [a, b]
        assert s.trainable_variables() == [a, c]


def test_values_make_their_graph_the_default():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
    with variable_scope("v", values=[x]):
        assert og.get_default_graph() is g
        w = get_variable("w", [1])
    assert w.graph is g
    other = og.Graph()
    with other.as_default():
        y = og.placeholder(og.float32, [2], name="y")
    with pytest.raises(ValueError, match="same graph"):
        variable_scope("v", values=[x, y])


def test_scopes_are_per_thread_and_the_store_is_shared():
    g = og.Graph()
    seen = {}

    def worker():
        with g.as_default():
            seen["scope"] = get_variable_scope().name
            try:
                with variable_scope("main"):
                    get_variable("v", [1])
            except ValueError as e:
                seen["error"] = str(e)
            with variable_scope("main", reuse=True):
                seen["v"] = get_variable("v", [1])

    with g.as_default(), variable_scope("main"):
        v = get_variable("v", [1])
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert seen["scope"] == ""
    assert "Variable main/v already exists" in seen["error"]
    assert seen["v"] is v


# --------------------------------------------------------------------------- errors

def test_creating_twice_without_reuse_is_refused_and_says_where():
    g = og.Graph()
    with g.as_default():
        with variable_scope("scope"):
            get_variable("w", [2, 4])
        with variable_scope("scope"):
            with pytest.raises(ValueError) as e:
                get_variable("w", [2, 4])
    text = str(e.value)
    assert text.startswith("Variable scope/w already exists, disallowed. Did you mean to "
                           "set reuse=True or reuse=og.AUTO_REUSE in VarScope? "
                           "Originally defined at:")
    assert "test_variable_scope.py" in text


def test_reuse_of_a_missing_variable_is_refused():
    g = og.Graph()
    with g.as_default(), variable_scope("scope", reuse=True):
        with pytest.raises(ValueError, match=re.escape(
                "Variable scope/w does not exist, or was not created with "
                "og.get_variable(). Did you mean to set reuse=og.AUTO_REUSE in "
                "VarScope?")):
            get_variable("w", [2, 4])


def test_reuse_with_another_shape_or_dtype_is_refused():
    g = og.Graph()
    with g.as_default():
        with variable_scope("scope"):
            get_variable("w", [2, 4])
        with variable_scope("scope", reuse=True):
            with pytest.raises(ValueError, match=re.escape(
                    "Trying to share variable scope/w, but specified shape (3, 4) and "
                    "found shape (2, 4).")):
                get_variable("w", [3, 4])
            with pytest.raises(ValueError, match=re.escape("specified shape (4,) and")):
                get_variable("w", [4])
            with pytest.raises(ValueError, match=re.escape(
                    "Trying to share variable scope/w, but specified dtype float64 and "
                    "found dtype float32.")):
                get_variable("w", [2, 4], dtype=og.float64)
            assert get_variable("w").name == "scope/w"
            assert get_variable("w", [None, 4]).name == "scope/w"


def test_initializer_and_shape_refusals():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match=re.escape(
                "If initializer is a constant, do not specify shape.")):
            get_variable("c", [2], initializer=np.zeros(2, np.float32))
        with pytest.raises(ValueError, match=re.escape(
                "Initializer type 'float64' and explicit dtype 'float32' don't match.")):
            get_variable("c", dtype=og.float32, initializer=np.zeros(2))
        with pytest.raises(ValueError, match=re.escape(
                "Shape of a new variable (u) must be fully defined, but instead was "
                "(?, 4).")):
            get_variable("u", [None, 4])
        with pytest.raises(ValueError, match=re.escape("(n) must be fully defined, but "
                                                       "instead was <unknown>.")):
            get_variable("n")
        with pytest.raises(ValueError, match="an initializer for variable f8 of "
                                             "float8e4m3fn is required"):
            get_variable("f8", [2], dtype="float8e4m3fn")
    assert og.global_variables(g) == []


def test_bad_arguments_are_refused_with_named_errors():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(TypeError, match="get_variable: name must be a str"):
            get_variable(3, [1])
        with pytest.raises(ValueError, match="get_variable: name must not be empty"):
            get_variable("", [1])
        with pytest.raises(TypeError, match="get_variable: shape"):
            get_variable("v", 3)
        with pytest.raises(TypeError, match="get_variable: trainable must be a bool"):
            get_variable("v", [1], trainable="yes")
        with pytest.raises(TypeError, match="get_variable: collections must be a list"):
            get_variable("v", [1], collections="mine")
        with pytest.raises(TypeError, match="if default_name is None then name_or_scope"):
            variable_scope(None)
        with pytest.raises(TypeError, match="name_or_scope must be a str or a "
                                            "VariableScope, got int"):
            variable_scope(3)
        with pytest.raises(TypeError, match="default_name must be a str"):
            variable_scope(None, default_name=3)
        with pytest.raises(TypeError, match="auxiliary_name_scope must be True or False"):
            variable_scope("s", auxiliary_name_scope=1)
        with pytest.raises(ValueError, match="reuse must be True, False, None or "
                                             "og.AUTO_REUSE"):
            variable_scope("s", reuse="yes")
        with pytest.raises(ValueError, match="reuse=True cannot be used without a "
                                             "name_or_scope"):
            variable_scope(None, default_name="d", reuse=True)
        with pytest.raises(TypeError, match="values must be a list"):
            variable_scope("s", values=og.constant(1.0))
        with pytest.raises(TypeError, match="variable_scope: dtype: unknown dtype"):
            variable_scope("s", dtype="float33")
        with pytest.raises(TypeError, match="get_variable: dtype: unknown dtype"):
            get_variable("v", [1], dtype="float33")
        with pytest.raises(TypeError, match="VariableScope.set_dtype: dtype: unknown"):
            get_variable_scope().set_dtype("float33")


def test_improper_nesting_is_refused_and_leaves_the_default_graph_alone():
    g = og.Graph()
    outer, inner = variable_scope("a", values=[]), variable_scope("b", values=[])
    with g.as_default():
        outer.__enter__()
        inner.__enter__()
        with pytest.raises(RuntimeError, match="improper nesting of variable_scope"):
            outer.__exit__(None, None, None)
        with pytest.raises(RuntimeError, match="improper nesting"):
            inner.__exit__(None, None, None)
        assert og.get_default_graph() is g
    assert og.get_default_graph() is not g


def test_auxiliary_name_scope_false_opens_no_op_scope():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        with variable_scope("quiet", auxiliary_name_scope=False) as quiet:
            op = og.identity(x, name="op")
            v = get_variable("v", [1])
    assert (op.name, v.name, quiet.original_name_scope) == ("op", "quiet/v", "")


# --------------------------------------------------------------------------- statistics

def assert_moments(values, mean, std):
    """values' mean and std within 5 standard errors of the expected ones; the std's
    standard error comes from the sample's fourth moment."""
    v = np.asarray(values, np.float64).ravel()
    n = v.size
    assert abs(v.mean() - mean) <= 5 * std / math.sqrt(n), (v.mean(), mean)
    m4 = np.mean((v - v.mean()) ** 4)
    se_std = math.sqrt(max(m4 - v.var() ** 2, 0.0) / n) / (2 * std)
    assert abs(v.std() - std) <= 5 * se_std, (v.std(), std)


def truncated_std(a: float) -> float:
    """Std of a standard normal truncated to [-a, a]: 1 - 2a phi(a) / (2 Phi(a) - 1)."""
    phi = math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    return math.sqrt(1 - 2 * a * phi / math.erf(a / math.sqrt(2)))


def draw(initializer, shape, dtype=None):
    """initializer(shape) in a fresh graph (no graph seed)."""
    with og.Graph().as_default():
        return initializer(shape) if dtype is None else initializer(shape, dtype=dtype)


N = 100_000


def test_truncation_constant_matches_the_truncated_normal_std():
    assert init.TRUNCATED_STDDEV == pytest.approx(truncated_std(2.0), abs=1e-12)


def test_random_normal_statistics():
    values = draw(init.random_normal_initializer(1.5, 0.3, seed=1), [N])
    assert values.dtype == np.float32
    assert_moments(values, 1.5, 0.3)


def test_truncated_normal_statistics_and_bounds():
    values = draw(init.truncated_normal_initializer(-1.0, 2.0, seed=2, dtype=og.float64),
                  [N])
    assert values.dtype == np.float64
    assert np.abs(values + 1.0).max() <= 4.0
    assert np.abs(values + 1.0).max() > 3.9
    assert_moments(values, -1.0, 2.0 * truncated_std(2.0))


def test_random_uniform_statistics_and_bounds():
    values = draw(init.random_uniform_initializer(-3.0, 2.0, seed=3), [N])
    assert values.min() >= -3.0 and values.max() < 2.0
    assert_moments(values, -0.5, 5.0 / math.sqrt(12))
    ints = draw(init.random_uniform_initializer(2, 7, seed=4, dtype=og.int32), [N])
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {2, 3, 4, 5, 6}
    assert_moments(ints, 4.0, math.sqrt((5 ** 2 - 1) / 12))


def test_glorot_uniform_limits_and_std():
    fan_in, fan_out = 300, 400
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    values = draw(init.glorot_uniform_initializer(seed=5), [fan_in, fan_out])
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.999 * limit
    assert_moments(values, 0.0, limit / math.sqrt(3))


def test_glorot_normal_std():
    fan_in, fan_out = 300, 400
    std = math.sqrt(2.0 / (fan_in + fan_out))
    values = draw(init.glorot_normal_initializer(seed=6), [fan_in, fan_out])
    assert np.abs(values).max() <= 2 * std / init.TRUNCATED_STDDEV * (1 + 1e-6)
    assert_moments(values, 0.0, std)


def test_fans_of_vectors_matrices_and_conv_kernels():
    assert init.compute_fans([]) == (1, 1)
    assert init.compute_fans([7]) == (7, 7)
    assert init.compute_fans([4, 3]) == (4, 3)
    assert init.compute_fans([3, 3, 16, 32]) == (3 * 3 * 16, 3 * 3 * 32)
    assert init.compute_fans([5, 2, 3, 8, 4]) == (5 * 2 * 3 * 8, 5 * 2 * 3 * 4)


@pytest.mark.parametrize("mode,n", [("fan_in", 144), ("fan_out", 288), ("fan_avg", 216)])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal",
                                          "untruncated_normal", "uniform"])
def test_variance_scaling_of_a_conv_kernel(mode, n, distribution):
    scale = 2.0
    std = math.sqrt(scale / n)  # n = receptive field (3*3) * in (16) or out (32)
    shape = [3, 3, 16, 32]
    values = np.stack([draw(init.variance_scaling_initializer(scale, mode, distribution,
                                                              seed=k), shape)
                       for k in range(22)])  # 22 * 4608 values
    assert values.shape == (22, 3, 3, 16, 32)
    assert_moments(values, 0.0, std)
    bound = {"uniform": math.sqrt(3) * std, "untruncated_normal": math.inf}.get(
        distribution, 2 * std / init.TRUNCATED_STDDEV)
    assert np.abs(values).max() <= bound * (1 + 1e-6)


def test_he_and_lecun_scale_by_fan_in():
    for make, std in ((init.he_normal, math.sqrt(2 / 500)),
                      (init.he_uniform, math.sqrt(2 / 500)),
                      (init.lecun_normal, math.sqrt(1 / 500)),
                      (init.lecun_uniform, math.sqrt(1 / 500))):
        assert_moments(draw(make(seed=8), [500, 200]), 0.0, std)


def test_variance_scaling_uses_the_partition_full_shape():
    class Partition:
        full_shape = [100, 50]

    with og.Graph().as_default():
        values = init.variance_scaling_initializer(1.0, "fan_in", "uniform", seed=1)(
            [100000, 2], partition_info=Partition())
    assert np.abs(values).max() <= math.sqrt(3 / 100) and np.abs(values).max() > 0.17


@pytest.mark.parametrize("shape", [[6, 4], [3, 5], [3, 3, 4, 8]])
def test_orthogonal(shape):
    q = draw(init.orthogonal_initializer(gain=2.0, seed=9, dtype=og.float64), shape)
    assert q.shape == tuple(shape)
    flat = q.reshape(-1, shape[-1])
    small = min(flat.shape)
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-10)


def test_constant_initializer_lays_out_values_as_tf1():
    c = init.constant_initializer
    with og.Graph().as_default():
        np.testing.assert_array_equal(c(7)([2, 2]), np.full((2, 2), 7, np.float32))
        np.testing.assert_array_equal(c(list(range(8)))([2, 4]),
                                      np.arange(8).reshape(2, 4))
        padded = c(list(range(8)))([3, 4])
        np.testing.assert_array_equal(padded, np.r_[np.arange(8), [7] * 4].reshape(3, 4))
        np.testing.assert_array_equal(c([])([2], dtype=og.int64), np.zeros(2, np.int64))
        assert c([1, 2])([2], dtype=og.int32).dtype == np.int32
        with pytest.raises(ValueError, match=re.escape(
                "Too many elements provided. Needed at most 6, but received 8")):
            c(list(range(8)))([2, 3])
        with pytest.raises(TypeError, match=re.escape(
                "Expected Tensor's shape: (3, 4), got (8,).")):
            c(list(range(8)), verify_shape=True)([3, 4])
        with pytest.raises(TypeError, match="constant_initializer: .*whole number"):
            c([0.5])([1], dtype=og.int32)
    with pytest.raises(TypeError, match="constant_initializer: invalid type for initial "
                                        "value: dict"):
        c({"a": 1})


def test_zeros_and_ones_initializers():
    with og.Graph().as_default():
        z = init.zeros_initializer(dtype=og.int32)([2, 3])
        o = init.ones_initializer()([2], dtype=og.bool_)
        z64 = init.zeros_initializer(dtype=og.int32)([2], dtype=og.int64)
    assert z.dtype == np.int32 and not z.any()
    assert z64.dtype == np.int64
    assert o.dtype == bool and o.all()


def test_initializer_argument_errors():
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="random_normal_initializer: dtype must be a "
                                             "floating point type, got int32"):
            init.random_normal_initializer(dtype=og.int32)
        with pytest.raises(ValueError, match="glorot_uniform_initializer: dtype must be a "
                                             "floating point"):
            init.glorot_uniform_initializer()([2, 2], dtype=og.int64)
        with pytest.raises(ValueError, match="truncated_normal_initializer: seed must be "
                                             ">= 0"):
            init.truncated_normal_initializer(seed=-1)
        with pytest.raises(TypeError, match="random_uniform_initializer: seed must be"):
            init.random_uniform_initializer(seed="1")
        with pytest.raises(TypeError, match="random_normal_initializer: mean must be a "
                                            "number"):
            init.random_normal_initializer(mean="0")
        with pytest.raises(ValueError, match="variance_scaling_initializer: scale must be "
                                             "a positive number"):
            init.variance_scaling_initializer(scale=0.0)
        with pytest.raises(ValueError, match="variance_scaling_initializer: mode must be "
                                             "one of fan_in, fan_out, fan_avg"):
            init.variance_scaling_initializer(mode="fan")
        with pytest.raises(TypeError, match="variance_scaling_initializer: distribution "
                                            "must be a str"):
            init.variance_scaling_initializer(distribution=3)
        with pytest.raises(ValueError, match="orthogonal_initializer: the shape must "
                                             "have at least 2 dims"):
            init.orthogonal_initializer()([3])
        with pytest.raises(ValueError, match="random_uniform_initializer: maxval must be "
                                             "given for the integer dtype int32"):
            init.random_uniform_initializer(dtype=og.int32)([3])
        with pytest.raises(TypeError, match="random_uniform_initializer: minval must be "
                                            "an int"):
            init.random_uniform_initializer(0.5, 3, dtype=og.int32)([3])
        with pytest.raises(ValueError, match="need minval < maxval"):
            init.random_uniform_initializer(3, 3, dtype=og.int32)([3])
        with pytest.raises(ValueError, match="zeros_initializer: shape must be fully "
                                             "known"):
            init.zeros_initializer()([None, 2])
        with pytest.raises(TypeError, match="zeros_initializer: shape"):
            init.zeros_initializer()(3)
        with pytest.raises(TypeError, match="ones_initializer: dtype"):
            init.ones_initializer(dtype="float33")


# --------------------------------------------------------------------------- seeds

def build_value(graph_seed, op_seed, name="w", initializer=init.random_normal_initializer):
    """The initial value of get_variable(name) in a new graph."""
    g = og.Graph()
    with g.as_default():
        if graph_seed is not None:
            og.set_random_seed(graph_seed)
        v = get_variable(name, [1000], initializer=initializer(seed=op_seed))
    return og.Session(g).run(v)


def test_same_graph_and_op_seed_give_the_same_values_across_graphs():
    same = build_value(1, 7)
    np.testing.assert_array_equal(same, build_value(1, 7))
    np.testing.assert_array_equal(same, build_value(1, 7, name="other"))
    np.testing.assert_array_equal(build_value(None, 7), build_value(None, 7))
    assert not np.array_equal(same, build_value(2, 7))
    assert not np.array_equal(same, build_value(1, 8))
    assert not np.array_equal(same, build_value(None, 7))


def test_graph_seed_alone_repeats_builds_and_separates_variables():
    glorot = init.glorot_uniform_initializer
    a = build_value(1, None, initializer=glorot)
    np.testing.assert_array_equal(a, build_value(1, None, initializer=glorot))
    assert not np.array_equal(a, build_value(2, None, initializer=glorot))
    assert not np.array_equal(a, build_value(1, None, name="v", initializer=glorot))


def test_unseeded_draws_differ_between_builds():
    assert not np.array_equal(build_value(None, None), build_value(None, None))


def test_default_initializer_follows_the_graph_seed():
    def build():
        g = og.Graph()
        with g.as_default():
            og.set_random_seed(4)
            with variable_scope("m"):
                w, v = get_variable("w", [20, 10]), get_variable("v", [20, 10])
        return og.Session(g).run([w, v])

    (w1, v1), (w2, v2) = build(), build()
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(v1, v2)
    assert not np.array_equal(w1, v1)


# --------------------------------------------------------------------------- saving

def test_save_and_load_keep_the_values(tmp_path):
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(5)
        x = og.placeholder(og.float32, [None, 3], name="x")
        with variable_scope("model"):
            y = tower(x)
        train = og.train.SGD(0.1).minimize(og.reduce_sum(og.square(y)))
    sig = {"serving": og.signature({"x": x}, {"y": y})}
    sess = og.Session(g)
    w, b = og.global_variables(g)[:2]
    initial = sess.run(w)
    og.save(g, str(tmp_path / "initial.og"), signatures=sig)
    xb = batch()
    sess.run(train, {x: xb})
    og.save(g, str(tmp_path / "trained.og"), session=sess, signatures=sig)

    def saved(path):
        model = og.load(str(tmp_path / path))
        return model, {t.name: np.array(t.data) for t in model.graph.tensors
                       if t.kind is og.TensorKind.VARIABLE}

    _, first = saved("initial.og")
    np.testing.assert_array_equal(first["model/w"], initial)
    np.testing.assert_array_equal(first["model/b"], np.full(2, 0.5, np.float32))
    model, trained = saved("trained.og")
    np.testing.assert_array_equal(trained["model/w"], sess.run(w))
    assert not np.array_equal(trained["model/w"], initial)
    out = og.Session(model).run_signature("serving", x=xb)["y"]
    np.testing.assert_allclose(out, sess.run(y, {x: xb}), rtol=1e-6)


def test_variable_scope_objects():
    root = VariableScope(False)
    assert (root.name, root.reuse, root.original_name_scope) == ("", False, "")
    assert repr(AUTO_REUSE) == "<_ReuseMode.AUTO_REUSE: 1>"
    with og.Graph().as_default():
        assert get_variable_scope().name == ""
        with variable_scope("x") as x:
            assert get_variable_scope() is x
        assert get_variable_scope().name == ""


def test_initializers_called_with_partition_info_only_when_they_take_it():
    g = og.Graph()
    seen = []

    def needs_it(shape, dtype, partition_info):
        seen.append(partition_info)
        return np.zeros(shape, dtype.numpy)

    with g.as_default():
        a = get_variable("a", [2], initializer=needs_it)
        b = get_variable("b", [2], initializer=lambda shape, dtype: np.ones(shape))
    assert seen == [None] and (a.shape, b.shape) == ((2,), (2,))


def test_variables_made_in_a_cond_branch_are_initialized_outside_it():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [], name="p")

        def branch():
            v = get_variable("v", [2],
                             initializer=lambda shape, dtype: og.ones(shape) + 1.0)
            return v + 1.0

        out = og.cond(p, branch, lambda: og.constant([0.0, 0.0]))
        init_op = og.global_variables_initializer()
    sess = og.Session(g)
    sess.run(init_op, {p: False})
    np.testing.assert_array_equal(sess.run(og.global_variables(g)[0]), [2.0, 2.0])
    np.testing.assert_array_equal(sess.run(out, {p: True}), [3.0, 3.0])


def test_orthogonal_signs_are_fixed_so_entries_are_symmetric():
    corners = [draw(init.orthogonal_initializer(seed=k, dtype=og.float64), [4, 3])[0, 0]
               for k in range(20)]
    assert min(corners) < 0 < max(corners)


def test_float_uniform_rounding_never_reaches_maxval():
    values = draw(init.random_uniform_initializer(0.0, 1.0, seed=12, dtype=og.float16), [N])
    assert values.dtype == np.float16 and values.max() < 1.0 and values.min() >= 0.0


def test_nn_layers_share_their_variables_in_a_reusing_scope():
    """og.nn.dense / conv2d make their variables with get_variable (as tf.layers do):
    built again under reuse=True they use the same kernel and bias."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        img = og.placeholder(og.float32, [None, 2, 5, 5], name="img")
        with og.variable_scope("tower"):
            a = og.nn.dense(x, 3)
            ca = og.nn.conv2d(img, 4, 3)
        with og.variable_scope("tower", reuse=True):
            b = og.nn.dense(x, 3)
            cb = og.nn.conv2d(img, 4, 3)
        other = og.nn.dense(x, 3)
    names = [v.name for v in og.global_variables(g)]
    assert names == ["tower/dense/kernel", "tower/dense/bias", "tower/conv2d/kernel",
                     "tower/conv2d/bias", "dense/kernel", "dense/bias"]
    rng = np.random.default_rng(0)
    feed = {x: rng.standard_normal((2, 4)).astype(np.float32),
            img: rng.standard_normal((2, 2, 5, 5)).astype(np.float32)}
    va, vb, vca, vcb, vo = og.Session(g).run([a, b, ca, cb, other], feed)
    np.testing.assert_array_equal(va, vb)
    np.testing.assert_array_equal(vca, vcb)
    assert not np.array_equal(va, vo)  # a layer outside the scope has its own weights
    with g.as_default(), pytest.raises(ValueError, match="tower/dense/kernel already exists"):
        with og.variable_scope("tower"):
            og.nn.dense(x, 3)


def test_threads_building_in_their_own_scopes_keep_their_names():
    """Name scopes, like TF1's name stack, are per thread: two threads opening their
    own variable scopes at once never see each other's."""
    g = og.Graph()
    problems = []
    barrier = threading.Barrier(2)

    def build(k):
        try:
            with g.as_default():
                barrier.wait(10)
                for j in range(150):
                    with og.variable_scope(f"t{k}"):
                        v = og.get_variable(f"w{j}", [2])
                        y = og.identity(v)
                    if v.name != f"t{k}/w{j}" or not y.name.startswith(f"t{k}"):
                        problems.append((k, j, v.name, y.name))
        except Exception as e:  # recorded and checked below
            problems.append((k, repr(e)))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=build, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(old)
    assert problems == []


def test_tensor_initializer_from_inside_a_cond_is_refused_before_anything_is_made():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [], name="p")

        def branch():
            with pytest.raises(ValueError, match="Initializer for variable w is from inside "
                                                 "a control-flow construct"):
                og.get_variable("w", initializer=og.constant([1.0, 2.0]) * 2.0)
            return og.constant(1.0)

        og.cond(p, branch, lambda: og.constant(0.0))
        assert og.global_variables(g) == []
        w = og.get_variable("w", [2])  # the name is still free
    assert w.name == "w"


@pytest.mark.parametrize("layer", ["dense", "conv2d"])
def test_layers_take_the_scope_initializer_and_a_default_name(layer):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        img = og.placeholder(og.float32, [None, 2, 5, 5], name="img")
        build = (lambda n: og.nn.dense(x, 3, name=n)) if layer == "dense" else \
            (lambda n: og.nn.conv2d(img, 4, 3, name=n))
        with og.variable_scope("s", initializer=og.constant_initializer(0.5)):
            build(None)
    kernel, bias = og.global_variables(g)
    assert kernel.name == f"s/{layer}/kernel" and bias.name == f"s/{layer}/bias"
    sess = og.Session(g)
    assert np.all(sess.run(kernel) == 0.5)   # tf.layers: kernel from the scope's
    assert np.all(sess.run(bias) == 0.0)     # ... the bias stays zeros


def test_the_same_variable_scope_object_can_be_entered_again():
    g = og.Graph()
    with g.as_default():
        scope = og.variable_scope("m")
        with scope:
            a = og.get_variable("w", [2])
        with scope as again:
            again.reuse_variables()
            b = og.get_variable("w", [2])
    assert a is b and a.name == "m/w"


def test_python_number_initializers_take_the_explicit_dtype():
    """A Python number has no dtype of its own: with dtype= it becomes that dtype
    (TF1 reads an int as int32); a value that does not fit is refused by name."""
    g = og.Graph()
    with g.as_default():
        a = og.get_variable("a", initializer=0, dtype=og.int32)
        b = og.get_variable("b", initializer=[1.5, 2.0], dtype=og.float64)
        c = og.get_variable("c", initializer=[1, 2])      # no dtype: the value's own
        with pytest.raises(og.OneGraphError, match=r"get_variable 'd': initializer: "
                                                   r"cannot convert 1.5 to int32"):
            og.get_variable("d", initializer=1.5, dtype=og.int32)
        with pytest.raises(ValueError, match="Initializer type 'int64' and explicit "
                                             "dtype 'int32' don't match"):
            og.get_variable("e", initializer=np.int64(3), dtype=og.int32)
    sess = og.Session(g)
    assert sess.run(a).dtype == np.int32 and sess.run(a) == 0
    assert sess.run(b).dtype == np.float64
    assert sess.run(c).dtype == np.int64


def test_update_ops_of_a_scoped_variable_do_not_repeat_the_scope():
    g = og.Graph()
    with g.as_default():
        with og.name_scope("s"):
            w = og.Variable(1.0, name="w")
            add = w.assign_add(1.0)
            read = w.read_value()
    assert w.name == "s/w"
    assert add.op.name == "s/w/AssignAdd" and read.op.name == "s/w/read_1"


def test_assign_assign_add_and_assign_sub_names_and_values():
    """Each update op is named "<variable>/<op type>" unless named (uniquified: the
    initializer is w/Assign), refuses a non-str name, and sets the value TF1's would
    (numpy computes the expectation)."""
    start, delta = np.array([1.0, 2.0], np.float32), np.array([0.5, -4.0], np.float32)
    g = og.Graph()
    with g.as_default():
        w = og.Variable(start, name="w")
        ops = [w.assign(delta), w.assign_add(delta), w.assign_sub(delta),
               w.assign(start, name="reset")]
        for update in (w.assign, w.assign_add, w.assign_sub):
            with pytest.raises(TypeError, match="name must be a str"):
                update(delta, name=3)
    assert [op.op.type for op in ops] == ["Assign", "AssignAdd", "AssignSub", "Assign"]
    assert [op.op.name for op in ops] == ["w/Assign_1", "w/AssignAdd", "w/AssignSub", "reset"]
    sess = og.Session(g)
    sess.run(w.initializer)
    expected = [delta, delta + delta, delta, start]
    for op, want in zip(ops, expected):
        np.testing.assert_array_equal(sess.run(op), want)


def test_name_scope_reentry_and_reset_as_tf1():
    with og.Graph().as_default():
        with og.name_scope("s") as s:
            pass
        assert s == "s/"
        with og.name_scope(s):  # re-entered as it is, not uniquified to s_1
            assert og.constant(1.0, name="r").name == "s/r"
        with og.name_scope("outer"):
            with og.name_scope(s):
                assert og.identity(og.constant(1.0), name="r2").name == "s/r2"
            with og.name_scope(None):
                assert og.identity(og.constant(1.0), name="r3").name == "r3"
            with og.name_scope(""):
                assert og.identity(og.constant(1.0), name="r4").name == "r4"
            assert og.identity(og.constant(1.0), name="r5").name == "outer/r5"


def test_device_scopes_merge_and_reset_as_tf1():
    with og.Graph().as_default():
        with og.device("/job:ps/task:0"):
            assert og.no_op().device == "/job:ps/task:0"
            with og.device("/device:CPU:0"):
                assert og.no_op().device == "/job:ps/task:0/device:CPU:0"
                with og.device("/task:1"):
                    assert og.no_op().device == "/job:ps/task:1/device:CPU:0"
            with og.device("/gpu:1"):  # TF1's legacy spelling
                assert og.no_op().device == "/job:ps/task:0/device:GPU:1"
            with og.device(None):
                assert og.no_op().device == ""
            with og.device(""):
                assert og.no_op().device == "/job:ps/task:0"
        with pytest.raises(ValueError, match="cannot parse 'ps' of 'ps'"):
            with og.device("ps"):
                pass
