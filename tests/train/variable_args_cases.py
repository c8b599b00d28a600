"""TF1's full argument lists of tf.Variable, tf.get_variable and tf.variable_scope
(regularizers, custom getters, constraints, validate_shape, trainable=None,
synchronization / aggregation, positional collections, get_local_variable,
model_variables, moving_average_variables) that tools/record_tf_variable_args.py runs
under TensorFlow (tf.compat.v1) and tests/train/test_variable_args.py under onegraph.

Each case is a function of the module `tf` returning a list of observations: values as
lists, errors as [class name, stage], names without their ":0" suffix, dtypes and enum
members by lower-case name.
"""

from __future__ import annotations

import numpy as np


def _build(fn):
    try:
        return ["ok", fn()]
    except Exception as e:  # noqa: BLE001 - the class is compared
        return [type(e).__name__, "build"]


def _refused(fn):
    """Whether fn raises while building (an assign of a shape that does not fit: TF's
    ValueError, og's ShapeError, which all of og's static shape checks raise)."""
    try:
        fn()
    except Exception:  # noqa: BLE001 - the two libraries' classes differ here
        return "refused"
    return "built"


def _run(tf, fetch, feed=None):
    """Run the global and local initializers, then fetch."""
    try:
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            value = sess.run(fetch, feed)
        return ["ok", _plain(value)]
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, "run"]


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return None if value is None else np.round(np.asarray(value, np.float64), 5).tolist()


def _name(x) -> str:
    n = x.name
    return n[:-2] if n.endswith(":0") else n


def _names(items) -> list:
    return [_name(x) for x in items]


def _lower(x) -> str:
    return str(getattr(x, "name", x)).lower()


def _shape(v):
    s = v.get_shape()
    if s.ndims is None:
        return None
    return [None if d is None else int(d) for d in
            (getattr(d, "value", d) for d in s.as_list())]


def _l2(w):
    return tf_of(w).multiply(0.5, tf_of(w).reduce_sum(tf_of(w).square(w)), name="l2")


_TF = []


def tf_of(_):
    return _TF[-1]


def _init(values):
    return np.asarray(values, np.float32)


def _losses(tf):
    return tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)


def regularizer_loss_value(tf):
    with tf.variable_scope("net"):
        tf.get_variable("w", initializer=_init([[1.0, 2.0], [3.0, 4.0]]), regularizer=_l2)
    losses = _losses(tf)
    return [len(losses), _names(losses), _run(tf, losses),
            _run(tf, tf.losses.get_regularization_loss())]


def regularizer_not_on_reuse(tf):
    with tf.variable_scope("net"):
        a = tf.get_variable("w", [2, 3], regularizer=_l2)
    with tf.variable_scope("net", reuse=True):
        b = tf.get_variable("w", [2, 3], regularizer=_l2)
    with tf.variable_scope("net", reuse=tf.AUTO_REUSE):
        c = tf.get_variable("w", [2, 3], regularizer=_l2)
        tf.get_variable("v", [3], regularizer=_l2)
    return [a is b, b is c, len(_losses(tf)), _names(_losses(tf))]


def regularizer_scope_default(tf):
    with tf.variable_scope("net", regularizer=_l2) as sc:
        tf.get_variable("a", initializer=_init([1.0, 2.0]))
        with tf.variable_scope("inner"):
            tf.get_variable("b", initializer=_init([3.0]))
        tf.get_variable("c", initializer=_init([5.0]), regularizer=tf.no_regularizer)
        tf.get_variable("d", initializer=_init([7.0]), regularizer=lambda w: None)
    return [sc.regularizer is _l2, _names(_losses(tf)), _run(tf, _losses(tf))]


def regularizer_scope_set(tf):
    with tf.variable_scope("s") as sc:
        sc.set_regularizer(_l2)
        tf.get_variable("w", initializer=_init([2.0]))
    with tf.variable_scope(sc):
        tf.get_variable("v", initializer=_init([4.0]))
    with tf.variable_scope("t"):
        tf.get_variable("u", initializer=_init([4.0]))
    return [_names(_losses(tf)), _run(tf, _losses(tf))]


def regularizer_inside_name_scope(tf):
    with tf.name_scope("outer"):
        with tf.variable_scope("net"):
            with tf.name_scope("deeper"):
                tf.get_variable("w", initializer=_init([1.0, 1.0]), regularizer=_l2)
    return [_names(_losses(tf))]


def no_regularizer_returns_none(tf):
    return [tf.no_regularizer(tf.constant(1.0)) is None]


def _recording_getter(log):
    def getter(getter, name, *args, **kwargs):
        log.append({"name": name, "args": len(args), "keys": sorted(kwargs),
                    "shape": kwargs.get("shape"), "dtype": _lower(kwargs.get("dtype")),
                    "trainable": kwargs.get("trainable"), "reuse": str(kwargs.get("reuse")),
                    "collections": kwargs.get("collections"),
                    "validate_shape": kwargs.get("validate_shape"),
                    "synchronization": _lower(kwargs.get("synchronization")),
                    "aggregation": _lower(kwargs.get("aggregation")),
                    "regularizer": kwargs.get("regularizer") is not None})
        return getter(name, *args, **kwargs)
    return getter


def custom_getter_sees(tf):
    log = []
    with tf.variable_scope("s", custom_getter=_recording_getter(log)):
        v = tf.get_variable("w", [2, 3], regularizer=_l2)
        w = tf.get_variable("i", [4], dtype=tf.int32, trainable=False, collections=["x"])
    with tf.variable_scope("s", reuse=True, custom_getter=_recording_getter(log)):
        u = tf.get_variable("w", [2, 3])
    return [log, _name(v), _name(w), u is v, _names(tf.get_collection("x"))]


def custom_getter_argument(tf):
    log = []
    v = tf.get_variable("w", [2], custom_getter=_recording_getter(log))
    return [log, _name(v), _shape(v)]


def custom_getter_renames(tf):
    def getter(getter, name, *args, **kwargs):
        return getter(name + "_x", *args, **kwargs)

    with tf.variable_scope("s", custom_getter=getter):
        v = tf.get_variable("w", [1])
    return [_name(v), _names(tf.global_variables())]


def _tagging(tag, order):
    def getter(getter, name, *args, **kwargs):
        order.append(tag + "+")
        v = getter(name, *args, **kwargs)
        order.append(tag + "-")
        return v
    return getter


def custom_getter_nested_order(tf):
    order = []
    with tf.variable_scope("a", custom_getter=_tagging("outer", order)):
        with tf.variable_scope("b", custom_getter=_tagging("inner", order)):
            with tf.variable_scope("c"):
                v = tf.get_variable("w", [1])
        tf.get_variable("u", [1])
    return [order, _name(v)]


def custom_getter_argument_replaces_scope(tf):
    order = []
    with tf.variable_scope("a", custom_getter=_tagging("scope", order)):
        tf.get_variable("w", [1], custom_getter=_tagging("arg", order))
    return [order]


def custom_getter_jump_into_scope(tf):
    order = []
    with tf.variable_scope("a", custom_getter=_tagging("first", order)) as sc:
        pass
    with tf.variable_scope("b"):
        with tf.variable_scope(sc, custom_getter=_tagging("second", order)):
            v = tf.get_variable("w", [1])
    return [order, _name(v)]


def custom_getter_transforms_value(tf):
    def doubled(getter, name, *args, **kwargs):
        return getter(name, *args, **kwargs) * 2.0

    with tf.variable_scope("s", custom_getter=doubled):
        y = tf.get_variable("w", initializer=_init([1.0, 3.0]))
    return [_run(tf, y), _names(tf.global_variables())]


def custom_getter_constraint_keyword(tf):
    seen = []

    def no_constraint(getter, name, shape, dtype, initializer, regularizer, reuse,
                      trainable, collections, caching_device, partitioner, validate_shape,
                      use_resource, synchronization, aggregation):
        seen.append("plain")
        return getter(name, shape, dtype, initializer, regularizer, reuse, trainable,
                      collections, caching_device, partitioner, validate_shape,
                      use_resource, synchronization=synchronization,
                      aggregation=aggregation)

    def with_constraint(getter, name, constraint=None, **kwargs):
        seen.append(constraint is not None)
        return getter(name, constraint=constraint, **kwargs)

    a = tf.get_variable("a", [1], custom_getter=no_constraint, constraint=abs)
    b = tf.get_variable("b", [1], custom_getter=with_constraint, constraint=abs)
    return [seen, a.constraint is None, b.constraint is abs]


def custom_getter_not_callable(tf):
    with tf.variable_scope("s", custom_getter=5):
        out = [_build(lambda: _name(tf.get_variable("w", [1])))]
    out.append(_build(lambda: _name(tf.get_variable("v", [1], custom_getter="g"))))
    return out


def constraint_kept(tf):
    def clip(x):
        return tf.clip_by_value(x, 0.0, 1.0)

    v = tf.Variable([1.0, 2.0], constraint=clip)
    w = tf.get_variable("w", [2], constraint=clip)
    plain = tf.get_variable("p", [2])
    with tf.variable_scope("c", constraint=clip) as sc:
        x = tf.get_variable("x", [2])
        y = tf.get_variable("y", [2], constraint=abs)
        with tf.variable_scope("inner") as inner:
            z = tf.get_variable("z", [2])
    return [v.constraint is clip, w.constraint is clip, plain.constraint is None,
            sc.constraint is clip, x.constraint is clip, y.constraint is abs,
            inner.constraint is None, z.constraint is None]


def constraint_not_callable(tf):
    return [_build(lambda: _name(tf.Variable([1.0], constraint=3))),
            _build(lambda: _name(tf.get_variable("w", [1], constraint="clip")))]


def validate_shape_false_assign(tf):
    v = tf.Variable(np.zeros([3], np.float32), validate_shape=False, name="v",
                    shape=tf.TensorShape(None))
    a = v.assign(np.ones([2, 2], np.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = _plain(sess.run(v))
        after = _plain(sess.run(a))
        again = _plain(sess.run(v))
    return [_shape(v), before, after, again]


def validate_shape_false_keeps_static_shape(tf):
    v = tf.Variable(np.zeros([3], np.float32), validate_shape=False, name="v")
    u = tf.Variable(np.zeros([3], np.float32), validate_shape=False, shape=[None])
    a = u.assign(np.ones([5], np.float32))
    return [_shape(v), _refused(lambda: _name(v.assign(np.ones([2, 2], np.float32)))),
            _shape(u), _run(tf, a)]


def validate_shape_false_get_variable(tf):
    v = tf.get_variable("w", initializer=_init([1.0, 2.0]), validate_shape=False)
    u = tf.get_variable("u", [2, 2], validate_shape=False)
    return [_shape(v), _shape(u),
            _refused(lambda: _name(v.assign(_init([[1.0, 2.0, 3.0]]))))]


def validate_shape_true_refuses(tf):
    v = tf.Variable(np.zeros([3], np.float32))
    return [_refused(lambda: _name(v.assign(np.ones([2, 2], np.float32))))]


def variable_shape_argument(tf):
    a = tf.Variable([1.0, 2.0], shape=[None], validate_shape=False)
    b = tf.Variable([1.0, 2.0], shape=[2])
    c = tf.Variable([1.0, 2.0], shape=[None])
    return [_shape(a), _shape(b), _shape(c),
            _build(lambda: _name(tf.Variable([1.0, 2.0], shape=[3])))]


def trainable_none(tf):
    a = tf.Variable([1.0], trainable=None, name="a")
    b = tf.Variable([1.0], name="b", synchronization=tf.VariableSynchronization.ON_READ)
    c = tf.get_variable("c", [1], trainable=None)
    d = tf.get_variable("d", [1], synchronization=tf.VariableSynchronization.ON_READ,
                        aggregation=tf.VariableAggregation.SUM)
    e = tf.Variable([1.0], trainable=False, name="e")
    return [_names(tf.trainable_variables()), _names(tf.global_variables()),
            [bool(v.trainable) for v in (a, b, c, d, e)]]


def synchronization_aggregation_values(tf):
    good = tf.Variable([1.0], synchronization=tf.VariableSynchronization.ON_WRITE,
                       aggregation=tf.VariableAggregation.MEAN)
    return [_lower(good.synchronization), _lower(good.aggregation),
            _build(lambda: _name(tf.Variable([1.0], synchronization=7))),
            _build(lambda: _name(tf.Variable([1.0], aggregation="bogus"))),
            _build(lambda: _name(tf.get_variable("w", [1], synchronization=9))),
            _build(lambda: _lower(tf.Variable([1.0], aggregation=1).aggregation)),
            [m.name for m in tf.VariableSynchronization],
            sorted(m.name for m in tf.VariableAggregation)]


def collections_given(tf):
    # (keywords: tf.compat.v1.Variable of TF 2.x takes a third positional argument as
    # validate_shape; TF1's and og's third is collections, see test_variable_args)
    a = tf.Variable([1.0], trainable=True, collections=["mine"])
    b = tf.Variable([2.0], trainable=False, collections=("mine", "other"), name="b")
    c = tf.get_variable("c", [1], collections=["own"])
    return [_names(tf.get_collection("mine")), _names(tf.get_collection("other")),
            _names(tf.global_variables()), _names(tf.trainable_variables()),
            _names(tf.get_collection("own")), _name(a), _name(c), bool(b.trainable),
            _build(lambda: _name(tf.Variable([1.0], collections=5)))]


def extra_arguments_accepted(tf):
    a = tf.Variable([1.0, 2.0], expected_shape=[5], caching_device="/cpu:0",
                    use_resource=True, name="a")
    b = tf.get_variable("b", [2], caching_device="/cpu:0", use_resource=False,
                        validate_shape=True, partitioner=None)
    with tf.variable_scope("s", caching_device="/cpu:0", use_resource=True,
                           partitioner=None) as sc:
        c = tf.get_variable("c", [3])
        with tf.variable_scope("t") as inner:
            pass
    return [_name(a), _shape(a), _name(b), _name(c), sc.caching_device, sc.use_resource,
            inner.caching_device, inner.use_resource, sc.partitioner is None]


def partitioner_scalar_and_not_callable(tf):
    out = [_build(lambda: _shape(tf.get_variable("s", [], partitioner=lambda **k: [1])))]
    out.append(_build(lambda: _name(tf.get_variable("w", [4, 2], partitioner=3))))
    return out


def initial_value_required(tf):
    return [_build(lambda: _name(tf.Variable()))]


def get_local_variable_collections(tf):
    a = tf.get_local_variable("a", [2])
    b = tf.get_local_variable("b", [1], trainable=True, collections=["extra"])
    with tf.variable_scope("s") as sc:
        c = tf.get_local_variable("c", initializer=_init([3.0]), regularizer=_l2)
    return [_names(tf.local_variables()), _names(tf.global_variables()),
            _names(tf.trainable_variables()), _names(tf.get_collection("extra")),
            [bool(v.trainable) for v in (a, b, c)], _names(sc.local_variables()),
            _names(_losses(tf)),
            _run(tf, c)]


def local_variable_reuse(tf):
    with tf.variable_scope("s"):
        a = tf.get_local_variable("a", [2])
    with tf.variable_scope("s", reuse=True):
        b = tf.get_local_variable("a", [2])
    return [a is b, _names(tf.local_variables())]


def model_variables_collection(tf):
    keys = [tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES]
    tf.Variable([1.0], collections=keys, name="m")
    with tf.variable_scope("net"):
        tf.get_variable("k", [1], collections=keys)
    tf.Variable([1.0], name="plain")
    return [_names(tf.model_variables()), _names(tf.model_variables("net")),
            tf.GraphKeys.MODEL_VARIABLES]


def moving_average_collection(tf):
    v = tf.Variable([1.0], name="v")
    tf.Variable([2.0], name="u")
    ema = tf.train.ExponentialMovingAverage(0.9)
    ema.apply([v])
    return [_names(tf.moving_average_variables()), tf.GraphKeys.MOVING_AVERAGE_VARIABLES]


def scope_attributes(tf):
    with tf.variable_scope("s", regularizer=_l2, constraint=abs) as sc:
        with tf.variable_scope("t", reuse=tf.AUTO_REUSE) as inner:
            pass
    return [sc.regularizer is _l2, sc.constraint is abs, sc.custom_getter is None,
            inner.regularizer is _l2, inner.constraint is None, sc.partitioner is None,
            str(inner.reuse)]


CASES = ("regularizer_loss_value", "regularizer_not_on_reuse", "regularizer_scope_default",
         "regularizer_scope_set", "regularizer_inside_name_scope",
         "no_regularizer_returns_none", "custom_getter_sees", "custom_getter_argument",
         "custom_getter_renames", "custom_getter_nested_order",
         "custom_getter_argument_replaces_scope", "custom_getter_jump_into_scope",
         "custom_getter_transforms_value", "custom_getter_constraint_keyword",
         "custom_getter_not_callable", "constraint_kept", "constraint_not_callable",
         "validate_shape_false_assign", "validate_shape_false_keeps_static_shape",
         "validate_shape_false_get_variable",
         "validate_shape_true_refuses", "variable_shape_argument", "trainable_none",
         "synchronization_aggregation_values", "collections_given",
         "extra_arguments_accepted", "partitioner_scalar_and_not_callable",
         "initial_value_required", "get_local_variable_collections",
         "local_variable_reuse", "model_variables_collection", "moving_average_collection",
         "scope_attributes")


def run(tf, name):
    """Build case `name` in a fresh graph of `tf` and return its observations."""
    _TF.append(tf)
    try:
        with tf.Graph().as_default():
            return globals()[name](tf)
    finally:
        _TF.pop()
