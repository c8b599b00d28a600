"""Bad arguments to the graph-building API give named errors at build time (from an
audit of the public API): plain values are never silently turned into NaN, shapes,
names, ints and bools are checked and named, huge counts are refused before anything
is allocated, and optimizer, seed, Saver and RunMetadata arguments are validated.
"""

import resource

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import OneGraphError, ShapeError


@pytest.fixture
def x():
    g = og.Graph()
    with g.as_default():
        yield og.placeholder(og.float32, [2, 3], name="x")


def _ints(g):
    with g.as_default():
        return og.placeholder(og.int64, [2], name="xi")


# --------------------------------------------------------------------------- 1. _fit

@pytest.mark.parametrize("value, match", [
    (None, r"cannot convert None \(NoneType\) to float32"),
    ("abc", r"cannot convert 'abc' \(str\) to float32"),
    (b"abc", r"\(bytes\) to float32"),
    ({"a": 1}, r"\(dict\) to float32"),
    (np.array([1, "a"], dtype=object), r"to float32: it holds str"),
    ([1.0, None], r"to float32: it holds NoneType"),
    (np.array([1 + 2j]), r"complex"),
], ids=["None", "str", "bytes", "dict", "object-array", "list-with-None", "complex"])
def test_bad_plain_operand_is_a_named_error_not_nan(x, value, match):
    with pytest.raises(OneGraphError, match="Add: .*" + match):
        og.add(x, value)


def test_none_constant_with_dtype_is_refused():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(OneGraphError, match=r"cannot convert None \(NoneType\) to "
                                                r"float32"):
            og.constant(None, og.float32)


@pytest.mark.parametrize("value", [None, "abc", 2 ** 70, 2.5, {"a": 1}])
def test_bad_operand_for_an_int_tensor_is_refused(value):
    g = og.Graph()
    xi = _ints(g)
    with g.as_default():
        with pytest.raises(OneGraphError, match="to int64"):
            xi + value


def test_dict_operand_through_operator(x):
    with pytest.raises(OneGraphError, match=r"Mul: .*\(dict\) to float32"):
        x * {"a": 1}


def test_legitimate_plain_values_still_convert(x):
    g = x.graph
    xi = _ints(g)
    with g.as_default():
        outs = [x + v for v in (1, 2.5, True, [1, 2, 3], np.float64(3), np.int32(4),
                                np.array([1, 2, 3], np.int8), 2 ** 70)]
        outs_i = [xi + v for v in (1, True, [1, 2], np.int32(4), 3.0, np.array([1.0, 2.0]))]
        s = og.constant(["a", "b"], og.string)
        mixed = og.constant(np.array([1, 2.5], object), og.float32)
    assert all(o.dtype == og.float32 for o in outs)
    assert all(o.dtype == og.int64 for o in outs_i)
    assert s.dtype == og.string
    sess = og.Session(g)
    np.testing.assert_array_equal(sess.run(outs[0], {x: np.zeros((2, 3), np.float32)}),
                                  np.ones((2, 3)))
    np.testing.assert_array_equal(sess.run(outs_i[4], {xi: np.array([1, 2])}), [4, 5])
    np.testing.assert_array_equal(sess.run(mixed), [1.0, 2.5])


@pytest.mark.parametrize("make", [
    lambda: og.train.SGD(None), lambda: og.train.SGD(float("nan")),
    lambda: og.train.SGD(float("inf")), lambda: og.train.SGD("abc"),
    lambda: og.train.SGD(True),
], ids=["None", "nan", "inf", "str", "bool"])
def test_bad_learning_rate_is_refused(make):
    with pytest.raises((TypeError, ValueError), match="SGD: learning_rate"):
        make()


# --------------------------------------------------------------------------- 2. shapes

@pytest.mark.parametrize("shape, err, match", [
    (4, TypeError, "placeholder: shape must be a list of ints"),
    ("ab", TypeError, "placeholder: shape must be a list"),
    ([2.0], TypeError, "placeholder: shape: dim 0 must be an int"),
    ([True], TypeError, "placeholder: shape: dim 0 must be an int"),
    ([2, -2], ShapeError, "placeholder: shape: dim 1 is -2"),
], ids=["bare-int", "str", "float-dim", "bool-dim", "negative"])
def test_bad_placeholder_shape(shape, err, match):
    g = og.Graph()
    with g.as_default():
        with pytest.raises(err, match=match):
            og.placeholder(og.float32, shape)


def test_unknown_dims_still_accepted():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [None, -1, 3])
        b = og.placeholder(og.float32, None)
        c = og.placeholder(og.float32, np.array([2, 3]))
    assert a.shape == (None, None, 3) and b.shape is None and c.shape == (2, 3)


@pytest.mark.parametrize("fn", [og.zeros, og.ones])
@pytest.mark.parametrize("shape, err", [(-1, ShapeError), (None, ShapeError),
                                        ([2, None], ShapeError), ("ab", TypeError),
                                        (1.5, TypeError)])
def test_bad_zeros_ones_shape(fn, shape, err):
    g = og.Graph()
    with g.as_default():
        with pytest.raises(err, match=f"{fn.__name__}: shape"):
            fn(shape)


def test_zeros_ones_still_take_ints_and_lists():
    g = og.Graph()
    with g.as_default():
        assert og.zeros(3).shape == (3,)
        assert og.ones([2, 2], og.int64).shape == (2, 2)
        assert og.zeros((0,)).shape == (0,)


# --------------------------------------------------------------------------- 3. cond

def test_cond_refuses_a_float_predicate():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        p = og.placeholder(og.float32, [], name="p")
        with pytest.raises(ShapeError, match="cond 'cond': pred must be a bool tensor"):
            og.cond(p, lambda: x + 1.0, lambda: x - 1.0)


@pytest.mark.parametrize("pred", ["no", None, {"a": 1}])
def test_cond_refuses_a_non_bool_python_predicate(pred):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        with pytest.raises(OneGraphError, match="cond 'cond': pred"):
            og.cond(pred, lambda: x + 1.0, lambda: x - 1.0)


def test_cond_refuses_a_non_scalar_predicate():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        p = og.placeholder(og.bool_, [2], name="p")
        with pytest.raises(ShapeError, match="pred must be a scalar"):
            og.cond(p, lambda: x, lambda: x)


@pytest.mark.parametrize("which", ["true_fn", "false_fn"])
def test_cond_needs_callables(which):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        fns = {"true_fn": lambda: x, "false_fn": lambda: x}
        fns[which] = x
        with pytest.raises(TypeError, match=f"cond 'cond': {which} must be a callable"):
            og.cond(og.constant(True), fns["true_fn"], fns["false_fn"])


def test_cond_with_a_python_bool_still_works():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        y = og.cond(True, lambda: x + 1.0, lambda: x - 1.0)
    assert og.Session(g).run(y, {x: np.float32(1)}) == 2.0


@pytest.mark.parametrize("which", ["cond", "body"])
def test_while_loop_needs_callables(which):
    g = og.Graph()
    with g.as_default():
        i = og.constant(0)
        fns = {"cond": lambda i: i < 3, "body": lambda i: i + 1}
        fns[which] = True
        with pytest.raises(TypeError, match=f"while_loop 'while': {which} must be a "
                                            "callable"):
            og.while_loop(fns["cond"], fns["body"], [i])


# --------------------------------------------------------------------------- 4. names

@pytest.mark.parametrize("build, match", [
    (lambda x: og.relu(x, name=["a"]), "Relu: name must be a str"),
    (lambda x: og.relu(x, name=np.array([1, 2])), "Relu: name must be a str"),
    (lambda x: og.placeholder(og.float32, [2], name=5), "placeholder: name must be a str"),
    (lambda x: og.constant(1.0, name=1.5), "constant: name must be a str"),
    (lambda x: og.name_scope(1.5).__enter__(), "name_scope: name must be a str"),
    (lambda x: og.name_scope(0).__enter__(), "name_scope: name must be a str"),
    (lambda x: og.Variable(1.0, name=3), "Variable: name must be a str"),
    (lambda x: og.cond(True, lambda: x, lambda: x, name=1), "cond: name must be a str"),
], ids=["op-list", "op-array", "placeholder", "constant", "name_scope", "name_scope-0",
        "Variable", "cond"])
def test_non_str_names_are_refused(x, build, match):
    with x.graph.as_default():
        with pytest.raises(TypeError, match=match):
            build(x)


# --------------------------------------------------------------------------- 5. ints

@pytest.mark.parametrize("build, err, match", [
    (lambda x: og.reduce_sum(x, axis="a"), TypeError, "ReduceSum: axis must be an int"),
    (lambda x: og.reduce_sum(x, axis=[0, 1.5]), TypeError, r"ReduceSum: axis\[1\]"),
    (lambda x: og.reduce_mean(x, 1, keepdims="no"), TypeError,
     "ReduceMean: keepdims must be a bool"),
    (lambda x: og.argmax(x, axis=1.0), TypeError, "argmax: axis must be an int"),
    (lambda x: og.expand_dims(x, 2 ** 70), ValueError, "expand_dims: axis .* int64 range"),
    (lambda x: og.expand_dims(x, 5), ShapeError, "expand_dims: axis 5 is out of range"),
    (lambda x: og.unstack(x, axis=None), TypeError, "unstack: axis must be an int"),
    (lambda x: og.unstack(x, axis=3), ShapeError, "unstack: axis 3 is out of range"),
    (lambda x: og.unstack(x, num=3), ShapeError, "unstack: num is 3 but axis 0"),
    (lambda x: og.split(x, 2.0, 1), TypeError, "split: num_or_sizes must be a list"),
    (lambda x: og.split(x, 2, 1), ShapeError, "does not split into 2 equal parts"),
    (lambda x: og.split(x, 0, 1), ValueError, "split: num_or_sizes is 0"),
    (lambda x: og.split(x, [1, 1], 1), ShapeError, "do not add up to the length 3"),
    (lambda x: og.concat([x, x], "0"), TypeError, "concat: axis must be an int"),
    (lambda x: og.matmul(x, x, transpose_b="yes"), TypeError,
     "matmul: transpose_b must be a bool"),
    (lambda x: og.reshape(x, None), TypeError, "reshape: new_shape must be a list"),
    (lambda x: og.reshape(x, [3, "2"]), TypeError, r"reshape: new_shape\[1\]"),
    (lambda x: og.transpose(x, "ab"), TypeError, "transpose: perm must be a list"),
    (lambda x: og.tile(x, [1, 2.0]), TypeError, r"tile: multiples\[1\]"),
    (lambda x: og.one_hot([1], 2.5), TypeError, "one_hot: depth must be an int"),
    (lambda x: og.one_hot([1], -1), ValueError, "one_hot: depth must be >= 0"),
    (lambda x: og.one_hot([1], 3, on_value="a"), OneGraphError, "one_hot: on_value"),
    (lambda x: og.gather(x, [0], axis="0"), TypeError, "gather: axis must be an int"),
    (lambda x: og.pad(x, [1, 2]), TypeError, "pad: paddings must be a list of"),
    (lambda x: og.pad(x, [[0, 0]]), ShapeError, "pad: paddings has 1 rows"),
    (lambda x: og.pad(x, [[0, 0], [1, 1]], "a"), ValueError, "pad: mode must be"),
    (lambda x: og.pad(x, [[0, 0], [1, 1]], constant_values="a"), OneGraphError,
     "pad: constant_values"),
    (lambda x: og.clip_by_value(x, None, 1.0), OneGraphError, "clip_by_value: .*None"),
    (lambda x: og.squeeze(x, axis="0"), TypeError, "squeeze: axis must be an int"),
    (lambda x: og.signature(inputs="x"), TypeError, "signature: inputs must be a dict"),
    (lambda x: og.control_dependencies(5), TypeError, "control_dependencies"),
    (lambda x: x[::0], OneGraphError, "the step must not be 0"),
    (lambda x: x[0:"a"], OneGraphError,
     "slice bounds must be ints, scalar integer tensors or None"),
    (lambda x: x[True], OneGraphError, "unsupported index True"),
    (lambda x: og.nn.softmax(x, axis="a"), TypeError, "softmax: axis must be an int"),
    (lambda x: og.nn.dropout(x, "a"), TypeError, "dropout: keep_prob must be a number"),
    (lambda x: og.nn.dropout(x, rate="a"), TypeError, "dropout: rate must be a number"),
    (lambda x: og.nn.dropout(x), TypeError, "give keep_prob or rate"),
    (lambda x: og.nn.dense(x, 2.5), TypeError, "dense: units must be an int"),
    (lambda x: og.nn.dense(x, 0), ValueError, "dense: units must be > 0"),
    (lambda x: og.nn.dense(x, 3, activation="relu"), TypeError,
     "dense: activation must be a function"),
    (lambda x: og.nn.gelu(x, approximate="tanh"), TypeError,
     "gelu: approximate must be a bool"),
    (lambda x: og.nn.batch_norm(x, True, axis="1"), TypeError,
     "batch_norm: axis must be an int"),
    (lambda x: og.nn.batch_norm(x, True, momentum=[0.9]), TypeError,
     "batch_norm: momentum must be a number"),
    (lambda x: og.group(x, name=np.array([1, 2])), TypeError, "group: name must be a str"),
    (lambda x: og.pad(x, np.array(1)), TypeError, "pad: paddings must be a list of"),
    (lambda x: x[2 ** 70], ValueError, "index is .* beyond the int64 range"),
    (lambda x: og.add_to_collection(["a"], x), TypeError,
     "collection name must be hashable"),
    (lambda x: og.get_collection({}), TypeError, "collection name must be hashable"),
    (lambda x: og.variables_initializer(np.array(1)), TypeError,
     "variables_initializer: var_list must be a list"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_int_and_bool_arguments(x, build, err, match):
    with x.graph.as_default():
        with pytest.raises(err, match=match):
            build(x)


@pytest.mark.parametrize("value", [1.0, np.float32(3.0)])
def test_dense_on_a_scalar_is_a_shape_error(value):
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ShapeError, match="dense: x .* known rank >= 2"):
            og.nn.dense(value, 3)


@pytest.mark.parametrize("build", [
    lambda x: og.split(x, 2 ** 40, 1),
    lambda x: og.unstack(x, num=2 ** 40),
    lambda x: og.unstack(og.placeholder(og.float32, [None, 3]), num=2 ** 40),
    lambda x: x.graph.op("Split", [x], {"axis": 0}, num_outputs=2 ** 40),
], ids=["split", "unstack-known", "unstack-unknown", "Graph.op"])
def test_huge_counts_are_refused_before_allocating(x, build):
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:  # a MemoryError instead of an OOM kill if the count reached an allocation
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, hard))
    except (ValueError, OSError):
        pass
    try:
        with x.graph.as_default():
            with pytest.raises((ValueError, ShapeError), match="1099511627776"):
                build(x)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.parametrize("build, err", [
    (lambda x: og.concat([], 0), ValueError),
    (lambda x: og.add_n([]), ValueError),
    (lambda x: og.stack([]), ValueError),
    (lambda x: og.concat(x, 0), TypeError),
], ids=["concat", "add_n", "stack", "concat-tensor"])
def test_empty_or_non_list_values(x, build, err):
    with x.graph.as_default():
        with pytest.raises(err, match="values|inputs"):
            build(x)


@pytest.mark.parametrize("fn", [og.global_variables, og.trainable_variables,
                                og.global_variables_initializer,
                                og.train.get_or_create_global_step])
def test_graph_arguments_must_be_graphs(fn):
    with pytest.raises(TypeError, match=f"{fn.__name__}: graph must be an og.Graph"):
        fn(graph="g")


def test_other_graph_arguments():
    with pytest.raises(TypeError, match="convert_to_tensor: graph must be an og.Graph"):
        og.convert_to_tensor(1.0, graph=5)
    with pytest.raises(TypeError, match="Variable: graph must be an og.Graph"):
        og.Variable(1.0, graph="g")
    with pytest.raises(TypeError, match="set_random_seed: graph must be an og.Graph"):
        og.set_random_seed(1, graph="g")


def test_valid_int_arguments_still_work(x):
    with x.graph.as_default():
        assert og.reduce_sum(x, np.int64(1), keepdims=True).shape == (2, 1)
        assert og.reduce_sum(x, [0, 1], keepdims=None).shape == ()
        assert len(og.split(x, 3, axis=np.int32(1))) == 3
        assert [p.shape for p in og.split(x, [1, -1], 1)] == [(2, 1), (2, 2)]
        assert len(og.unstack(x, num=2)) == 2
        assert og.matmul(x, x, transpose_b=True).shape == (2, 2)
        assert og.one_hot([1, 2], np.int64(4)).shape == (2, 4)
        assert og.pad(x, np.array([[0, 0], [1, 1]])).shape == (2, 5)
        assert og.stack([x, x], axis=1).shape == (2, 2, 3)


# --------------------------------------------------------------------------- 6. optim

@pytest.mark.parametrize("make, err, match", [
    (lambda: og.train.SGD(-1.0), ValueError, r"SGD: learning_rate must be in \[0"),
    (lambda: og.train.Adam(beta1=True), TypeError, "Adam: beta1 must be a number"),
    (lambda: og.train.Adam(beta2=2 ** 70), ValueError, r"Adam: beta2 must be in \[0"),
    (lambda: og.train.Adam(beta1=1.0), ValueError, "Adam: beta1"),
    (lambda: og.train.Adam(epsilon=-1e-8), ValueError, "Adam: epsilon"),
    (lambda: og.train.RMSProp(rho=2 ** 70), ValueError, "RMSProp: rho"),
    (lambda: og.train.RMSProp(momentum=float("nan")), ValueError, "RMSProp: momentum"),
    (lambda: og.train.AdamW(weight_decay=None), TypeError, "AdamW: weight_decay"),
    (lambda: og.train.AdamW(weight_decay=-0.1), ValueError, "AdamW: weight_decay"),
    (lambda: og.train.Momentum(0.1, momentum=1.5), ValueError, "Momentum: momentum"),
    (lambda: og.train.Momentum(0.1, use_nesterov="no"), TypeError,
     "Momentum: use_nesterov must be a bool"),
    (lambda: og.train.AdaGrad(0.1, initial_accumulator_value=-1), ValueError,
     "AdaGrad: initial_accumulator_value"),
    (lambda: og.train.SGD(0.1, clipnorm=0.0), ValueError, "SGD: clipnorm"),
    (lambda: og.train.SGD(0.1, clipvalue="a"), TypeError, "SGD: clipvalue"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_optimizer_hyper_parameters(make, err, match):
    with pytest.raises(err, match=match):
        make()


def test_valid_learning_rates_still_accepted():
    g = og.Graph()
    with g.as_default():
        step = og.train.get_or_create_global_step()
        for lr in (0.1, 0, np.float32(0.1), og.constant(0.1),
                   og.train.exponential_decay(0.1, step, 10, 0.9),
                   lambda s: og.constant(0.1)):
            og.train.SGD(lr)


@pytest.mark.parametrize("schedule", ["exponential_decay", "cosine_decay"])
@pytest.mark.parametrize("steps, err", [(0, ValueError), (-5, ValueError),
                                        ("10", TypeError), (float("nan"), ValueError)])
def test_decay_steps_must_be_positive(schedule, steps, err):
    g = og.Graph()
    with g.as_default():
        step = og.train.get_or_create_global_step()
        args = (0.1, step, steps, 0.9) if schedule == "exponential_decay" else \
            (0.1, step, steps)
        with pytest.raises(err, match=f"{schedule}: decay_steps"):
            getattr(og.train, schedule)(*args)


def test_minimize_refuses_an_integer_loss():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.ones(3, np.float32))
        loss = og.cast(og.reduce_sum(w), og.int64)
        with pytest.raises(ShapeError, match="loss .* must be floating point, got int64"):
            og.train.SGD(0.1).minimize(loss)


def test_minimize_still_sums_a_non_scalar_loss():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.ones(3, np.float32))
        train = og.train.SGD(0.5).minimize(w * 2.0)
    sess = og.Session(g)
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("build, match", [
    (lambda v: v.assign_add(og.constant(np.ones(3, np.int64))),
     "AssignAdd to variable .*value is int64 but the variable is float32"),
    (lambda v: v.assign(np.zeros(5, np.float32)), r"Assign to variable .*shape \[5\]"),
    (lambda v: v.assign_sub(np.ones((2, 3), np.float32)),
     r"AssignSub to variable .*shape \[2, 3\]"),
    (lambda v: v.assign(og.placeholder(og.float64, [3])), "Assign to variable .*float64"),
], ids=["add-int64", "assign-shape", "sub-shape", "assign-float64"])
def test_assign_checks_dtype_and_shape_at_build_time(build, match):
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.ones(3, np.float32), name="v")
        with pytest.raises(ShapeError, match=match):
            build(v)


def test_assign_none_is_refused():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.ones(3, np.float32), name="v")
        with pytest.raises(OneGraphError, match="Assign to variable 'v': cannot convert None"):
            v.assign(None)


def test_valid_assigns_still_work():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.ones(3, np.float32), name="v")
        a = v.assign_add(1.0)          # broadcasts without changing the shape
        b = v.assign_sub(np.ones(3, np.float32))
        c = v.assign(og.placeholder(og.float32, [None]))
    sess = og.Session(g)
    np.testing.assert_array_equal(sess.run(a), [2, 2, 2])
    np.testing.assert_array_equal(sess.run(b), [1, 1, 1])
    assert c.shape == (3,)


# --------------------------------------------------------------------------- 7. seeds

@pytest.mark.parametrize("seed, err", [("x", TypeError), (1.5, TypeError), (-1, ValueError),
                                       (np.array(3), TypeError), (float("nan"), TypeError),
                                       (True, TypeError)])
def test_bad_seeds(seed, err):
    g = og.Graph()
    with pytest.raises(err, match="Session: seed"):
        og.Session(g, seed=seed)
    with pytest.raises(err, match="set_random_seed: seed"):
        og.set_random_seed(seed, graph=g)


def test_valid_seeds():
    g = og.Graph()
    og.Session(g, seed=None)
    og.Session(g, seed=np.int64(3))
    og.Session(g, seed=2 ** 70)
    og.set_random_seed(np.uint32(7), graph=g)
    assert g.seed == 7
    with pytest.raises(TypeError, match="set_random_seed: seed"):
        og.set_random_seed(None, graph=g)


# --------------------------------------------------------------------------- 8. saver

def test_saver_refuses_duplicate_variables():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.ones(2, np.float32), name="v")
        with pytest.raises(ValueError, match="variable 'v' twice"):
            og.train.Saver(var_list=[v, v])
        with pytest.raises(ValueError, match="variable 'v' twice"):
            og.train.Saver(var_list=[v, "v"])
        with pytest.raises(ValueError, match="variable 'v' twice"):
            og.train.Saver(var_list={"a": v, "b": v})


@pytest.mark.parametrize("step, err, match", [
    (True, TypeError, "global_step must be an int or a step tensor, got bool"),
    (-1, ValueError, "global_step must be >= 0, got -1"),
    (1.5, TypeError, "global_step must be an int or a step tensor"),
])
def test_saver_save_refuses_bad_global_step(tmp_path, step, err, match):
    g = og.Graph()
    with g.as_default():
        og.Variable(np.ones(2, np.float32), name="v")
        saver = og.train.Saver()
    with pytest.raises(err, match=match):
        saver.save(og.Session(g), str(tmp_path), global_step=step)
    assert not list(tmp_path.iterdir())


def test_saver_save_refuses_a_negative_step_tensor(tmp_path):
    g = og.Graph()
    with g.as_default():
        og.Variable(np.ones(2, np.float32), name="v")
        s = og.Variable(np.int64(-3), name="s", trainable=False)
        saver = og.train.Saver()
    with pytest.raises(ValueError, match="global_step must hold an integer >= 0"):
        saver.save(og.Session(g), str(tmp_path), global_step=s)


def test_saver_save_still_numbers_files(tmp_path):
    g = og.Graph()
    with g.as_default():
        og.Variable(np.ones(2, np.float32), name="v")
        step = og.train.get_or_create_global_step()
        saver = og.train.Saver()
    sess = og.Session(g)
    assert saver.save(sess, str(tmp_path), global_step=np.int64(7)).endswith("ckpt-7.og")
    assert saver.save(sess, str(tmp_path), global_step=step).endswith("ckpt-0.og")


@pytest.mark.parametrize("top", ["x", 1.5, None, True])
def test_run_metadata_summary_top_must_be_an_int(top):
    meta = og.RunMetadata()
    with pytest.raises(TypeError, match="RunMetadata.summary: top must be an int"):
        meta.summary(top)


def test_run_metadata_summary_with_an_int():
    g = og.Graph()
    with g.as_default():
        y = og.constant(1.0) + 1.0
    meta = og.RunMetadata()
    og.Session(g).run(y, run_metadata=meta)
    assert "slowest" in meta.summary(np.int64(3))
    assert "slowest" not in meta.summary(0)


def test_gradients_arguments():
    """Empty ys is a clear ValueError; stop_gradients may be None or one tensor, as in
    TF1."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        y = og.reduce_sum(og.multiply(x, x))
        with pytest.raises(ValueError, match="ys is empty"):
            og.gradients([], [x])
        (none_stop,) = og.gradients(y, [x], stop_gradients=None)
        (one_stop,) = og.gradients(y, [x], stop_gradients=x)  # x itself still gets it
        sess = og.Session(g)
        feed = {x: np.array([1.0, -2.0], np.float32)}
        np.testing.assert_allclose(sess.run(none_stop, feed), [2.0, -4.0])
        np.testing.assert_allclose(sess.run(one_stop, feed), [2.0, -4.0])
