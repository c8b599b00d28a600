"""Graph API basics, optimizers (vs numpy reference updates), clipping, schedules, and
the og.nn layers that the accuracy tests do not exercise."""

import numpy as np
import pytest

import onegraph as og


def test_graph_api_names_scopes_devices_and_control_dependencies():
    g = og.Graph()
    with g.as_default():
        with og.name_scope("layer"), og.device("/job:ps/task:0"):
            v = og.Variable(np.zeros(2, np.float32), name="v")
            y = v + 1.0
        inc = v.assign_add(np.ones(2, np.float32))
        with og.control_dependencies([inc]):
            after = v.read_value() * 1.0
        grp = og.group(inc, y)
    assert v.name == "layer/v" and y.op.device == "/job:ps/task:0"
    assert y.name.startswith("layer/")
    sess = og.Session(g)
    np.testing.assert_array_equal(sess.run(after), [1, 1])
    sess.run(grp)
    np.testing.assert_array_equal(sess.run(v), [2, 2])
    assert og.trainable_variables(g) == [v]
    x = og.raw_ops
    assert "Conv" in dir(x)


def test_variable_lists_filtered_by_scope_as_tf1():
    """tf.trainable_variables(scope) / global_variables / local_variables take a regular
    expression matched against the start of the names (a GAN's two var_lists)."""
    g = og.Graph()
    with g.as_default():
        with og.variable_scope("gen"):
            wg = og.get_variable("w", [2])
        with og.variable_scope("disc"):
            wd = og.get_variable("w", [2])
            steps = og.Variable(0, trainable=False, name="steps")
        total = og.Variable(0.0, trainable=False, name="total",
                            collections=[og.GraphKeys.LOCAL_VARIABLES])
        assert og.trainable_variables("gen") == [wg]
        assert og.trainable_variables("disc") == [wd]
        assert og.trainable_variables(scope="d|g") == [wg, wd]
        assert og.trainable_variables("en") == []            # from the start only
        assert og.global_variables("disc") == [wd, steps]
        assert og.local_variables("tot") == [total]
    assert og.trainable_variables(graph=g) == [wg, wd]
    assert og.trainable_variables(g) == [wg, wd]              # a Graph first: the graph
    assert og.global_variables("gen", g) == [wg]
    with pytest.raises(TypeError, match="scope must be a str"):
        og.trainable_variables(3, g)


def test_tensor_operators_and_indexing():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [2, 3])
        out = [a + 1, 2 - a, a * a, a / 2, -a, a[1], a[:, 1:], a[..., ::-1], a @ og.ones([3, 1])]
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = og.Session(g).run(out, {a: v})
    want = [v + 1, 2 - v, v * v, v / 2, -v, v[1], v[:, 1:], v[..., ::-1], v @ np.ones((3, 1))]
    for x, y in zip(got, want, strict=True):
        np.testing.assert_allclose(x, y)


def _quadratic(opt, steps=3, dense=True):
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.array([1.0, -2.0], np.float32), name="w")
        loss = og.reduce_sum(w * w * og.constant(np.float32([1.0, 3.0])))
        train = opt.minimize(loss, global_step=og.train.get_or_create_global_step())
    sess = og.Session(g)
    for _ in range(steps):
        sess.run(train)
    return sess.run(w), int(sess.run(g.get_collection(og.GLOBAL_STEP)[0]))


def _numpy_reference(kind, steps=3, lr=0.1):
    w = np.array([1.0, -2.0])
    c = np.array([1.0, 3.0])
    m = np.zeros(2)
    v = np.zeros(2)
    acc = np.full(2, 0.1)
    for t in range(1, steps + 1):
        g = 2 * c * w
        if kind == "sgd":
            w = w - lr * g
        elif kind == "momentum":
            m = 0.9 * m + g
            w = w - lr * m
        elif kind == "nesterov":
            m = 0.9 * m + g
            w = w - lr * (g + 0.9 * m)
        elif kind == "adagrad":
            acc = acc + g * g
            w = w - lr * g / (np.sqrt(acc) + 1e-7)
        elif kind == "rmsprop":
            v = 0.9 * v + 0.1 * g * g
            m = 0.0 * m + lr * g / np.sqrt(v + 1e-7)
            w = w - m
        elif kind in ("adam", "adamw"):
            if kind == "adamw":
                w = w - lr * 0.01 * w
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            w = w - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return w


@pytest.mark.parametrize("kind,opt", [
    ("sgd", lambda: og.train.SGD(0.1)),
    ("momentum", lambda: og.train.Momentum(0.1, 0.9)),
    ("nesterov", lambda: og.train.Momentum(0.1, 0.9, use_nesterov=True)),
    ("adagrad", lambda: og.train.AdaGrad(0.1)),
    ("rmsprop", lambda: og.train.RMSProp(0.1)),
    ("adam", lambda: og.train.Adam(0.1)),
    ("adamw", lambda: og.train.AdamW(0.1, weight_decay=0.01)),
])
def test_optimizers_match_numpy_reference(kind, opt):
    w, step = _quadratic(opt())
    np.testing.assert_allclose(w, _numpy_reference(kind), rtol=1e-5, atol=1e-6)
    assert step == 3


def test_clipping_and_schedules():
    g = og.Graph()
    with g.as_default():
        t = og.constant(np.float32([3.0, 4.0]))
        by_norm = og.train.clip_by_norm(t, 1.0)
        (c1, c2), norm = og.train.clip_by_global_norm([t, t], 5.0)
        step = og.train.get_or_create_global_step()
        exp = og.train.exponential_decay(1.0, step, 10, 0.5, staircase=True)
        cos = og.train.cosine_decay(1.0, step, 10)
        pw = og.train.piecewise_constant(step, [5, 10], [1.0, 0.5, 0.1])
        set_step = step.assign(og.placeholder(og.int64, [], name="s"))
    sess = og.Session(g)
    np.testing.assert_allclose(sess.run(by_norm), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(sess.run(norm), np.sqrt(50), rtol=1e-6)
    np.testing.assert_allclose(sess.run(c1), np.array([3, 4]) * 5 / np.sqrt(50), rtol=1e-6)
    for s, want in [(0, (1.0, 1.0, 1.0)), (5, (1.0, 0.5, 1.0)), (12, (0.5, 0.0, 0.1))]:
        sess.run(set_step, {"s": s})
        got = sess.run([exp, cos, pw])
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_minimize_with_clipping_runs():
    w, _ = _quadratic(og.train.SGD(0.1, clipvalue=0.5, global_clipnorm=10.0), steps=1)
    np.testing.assert_allclose(w, [0.95, -1.95], rtol=1e-6)


def test_batch_norm_dropout_embedding_and_losses():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3, 4, 4])
        y = og.nn.batch_norm(x, training=True)
        y_inf = og.nn.batch_norm(x, training=False, name="bn_inf")
        d = og.nn.dropout(og.ones([1000]), rate=0.5)
        emb = og.Variable(np.eye(4, dtype=np.float32), name="emb")
        looked = og.nn.embedding_lookup(emb, og.constant(np.array([[3, 1]])))
        mse = og.nn.mean_squared_error(og.constant([1.0, 2.0]), og.constant([2.0, 4.0]))
        xent = og.nn.softmax_cross_entropy(og.constant([[0.0, 1.0]]), og.constant([[0.0, 0.0]]))
        train = og.train.SGD(0.1).minimize(og.reduce_sum(y * y))
    sess = og.Session(g, seed=0)
    v = np.random.default_rng(0).standard_normal((8, 3, 4, 4)).astype(np.float32) * 2 + 1
    out = sess.run(y, {x: v})
    np.testing.assert_allclose(out.mean(axis=(0, 2, 3)), 0, atol=1e-5)
    np.testing.assert_allclose(out.std(axis=(0, 2, 3)), 1, atol=1e-3)
    np.testing.assert_allclose(sess.run(y_inf, {x: v}), v / np.sqrt(1 + 1e-5), rtol=1e-5)
    dv = sess.run(d)
    assert set(np.unique(dv)) <= {0.0, 2.0} and 400 < (dv > 0).sum() < 600
    np.testing.assert_array_equal(sess.run(looked), np.eye(4)[[[3, 1]]])
    assert float(sess.run(mse)) == 2.5
    np.testing.assert_allclose(sess.run(xent), [np.log(2)], rtol=1e-6)
    moving = [v for v in og.global_variables(g) if v.name == "batch_norm/moving_mean"][0]
    sess.run(train, {x: v})  # runs the moving-average updates (UPDATE_OPS) too
    assert np.all(np.abs(sess.run(moving)) > 0.01)


def test_gradient_not_defined_error_and_saving_lints(tmp_path):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        logits = og.nn.dense(x, 3)
    m = g.to_model(signatures={"serving": og.signature({"x": x}, {"y": logits})})
    m.lint()
    og.save(g, str(tmp_path / "m.og"), signatures={"serving": og.signature({"x": x},
                                                                           {"y": logits})})
    loaded = og.load(str(tmp_path / "m.og"))
    out = og.Session(loaded).run_signature("serving", x=np.ones((2, 4), np.float32))
    assert out["y"].shape == (2, 3)


def test_small_constants_of_types_with_equal_bytes_stay_apart():
    # uint4, int4, float8e4m3fn and float4e2m1 zeros are the same byte; the graph's
    # cache of small constants handed the first one's tensor to the others
    g = og.Graph()
    with g.as_default():
        names = ["uint4", "float8e4m3fn", "int4", "float4e2m1", "uint8"]
        zs = [og.zeros([2], n) for n in names]
        got = og.Session(g).run(zs)
    assert [z.dtype.short_name for z in zs] == names
    assert [str(v.dtype) for v in got] == ["uint4", "float8_e4m3fn", "int4",
                                           "float4_e2m1fn", "uint8"]


def _np_partitioned(shards, ids, strategy):
    """numpy oracle: the full matrix the shards split (TF1's "mod": row r in shard
    r % n at r // n; "div": consecutive blocks), then its rows `ids`."""
    n = len(shards)
    if strategy == "div":
        full = np.concatenate(shards)
    else:
        full = np.empty((sum(len(s) for s in shards),) + shards[0].shape[1:], shards[0].dtype)
        for r in range(len(full)):
            full[r] = shards[r % n][r // n]
    return full[ids]


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_of_shards_as_tf1(strategy):
    """A list of params is shards split by partition_strategy (uneven: 5, 5, 4 rows);
    the third positional argument is the strategy, as TF1's."""
    rng = np.random.RandomState(0)
    shards = [rng.randn(k, 3).astype(np.float32) for k in (5, 5, 4)]
    ids = np.array([0, 1, 2, 9, 13, 7])
    g = og.Graph()
    with g.as_default():
        i = og.placeholder(og.int32, [None])
        e = og.nn.embedding_lookup([og.constant(s) for s in shards], i, strategy)
        assert e.shape == (None, 3)
        got = og.Session(g).run(e, {i: ids})
    np.testing.assert_array_equal(got, _np_partitioned(shards, ids, strategy))


def test_embedding_lookup_max_norm_and_sparse_gradient():
    rng = np.random.RandomState(1)
    table = rng.randn(10, 2, 3) * 3
    ids = np.array([[0, 9], [3, 3]])
    g = og.Graph()
    with g.as_default():
        w = og.Variable(table, name="table")
        e = og.nn.embedding_lookup(w, og.constant(ids), max_norm=2.0)
        (grad,) = og.gradients(og.reduce_sum(e), [w])
        sess = og.Session(g)
        got = sess.run(e)
    rows = table[ids]
    norms = np.sqrt((rows ** 2).sum(axis=(2, 3), keepdims=True))
    np.testing.assert_allclose(got, rows * np.minimum(1.0, 2.0 / norms), rtol=1e-12)
    assert isinstance(grad, og.IndexedSlices)
    with pytest.raises(ValueError, match="partition_strategy must be 'mod' or 'div'"):
        og.nn.embedding_lookup([og.zeros([2, 3])], [0], "rows")
    with pytest.raises(ValueError, match="non-empty list"):
        og.nn.embedding_lookup([], [0])
