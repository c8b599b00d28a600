"""og.control_dependencies and og.group as TF1 has them: ops given by name, refused
entries, constants and variable reads inside control flow that wait for them."""

import numpy as np
import pytest

import onegraph as og


def test_ops_given_by_name_are_control_inputs():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(1.0, name="v")
        v.assign(5.0, name="upd")
        with og.control_dependencies(["upd"]):
            r = og.identity(v)
        grouped = og.group("upd")
    assert [op.name for op in r.op.control_inputs] == ["upd"]
    assert [op.name for op in grouped.control_inputs] == ["upd"]
    assert og.Session(g).run(r) == 5.0


@pytest.mark.parametrize("bad", [1, None, lambda: None])
def test_entries_that_are_no_op_tensor_or_name_are_refused(bad):
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="control_dependencies: a control input must "
                                            "be an op, a tensor, a variable or the name"):
            with og.control_dependencies([bad]):
                og.no_op()
        with pytest.raises(TypeError, match="group: a control input must be"):
            og.group(bad)
        with pytest.raises(KeyError, match="no tensor named 'nothing'"):
            with og.control_dependencies(["nothing"]):
                pass


def test_a_constant_inside_control_dependencies_waits_for_them():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(1.0, name="v")
        upd = v.assign(5.0)
        with og.control_dependencies([upd]):
            c = og.constant(np.array([7.0, 8.0]), name="c")
    assert c.name == "c"
    sess = og.Session(g)
    np.testing.assert_array_equal(sess.run(c), [7.0, 8.0])
    assert sess.run(v) == 5.0


def test_a_variable_used_in_a_cond_branch_after_an_assign_reads_the_new_value():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(1.0, name="v")
        p = og.placeholder(og.bool_, [])

        def branch():
            with og.control_dependencies([v.assign(7.0)]):
                return og.identity(v), v + 0.0

        out = og.cond(p, branch, lambda: (og.identity(v), v + 0.0))
    sess = og.Session(g)
    assert [float(t) for t in sess.run(out, {p: True})] == [7.0, 7.0]
    sess.run(v.assign(1.0))
    assert [float(t) for t in sess.run(out, {p: False})] == [1.0, 1.0]


def test_a_variable_as_control_input_does_not_run_its_initializer():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(1.0, name="v")
        x = og.placeholder(og.float32, [], name="x")
        with og.control_dependencies([v]):
            y = og.identity(x)
        grouped = og.group(v, y)
    sess = og.Session(g)
    sess.run(v.assign(5.0))
    sess.run(y, {x: 0.0})
    sess.run(grouped, {x: 0.0})
    assert sess.run(v) == 5.0  # TF1: a variable's op is the variable, not its initializer


def test_cond_and_gradients_without_a_name_stay_in_the_enclosing_scope():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        with og.name_scope("outer"):
            y = og.cond(x > 0, lambda: x * 2.0, lambda: x * 3.0, name=None)
            (d,) = og.gradients(y, [x], name=None)
    assert y.name.startswith("outer/cond/") and d.name.startswith("outer/gradients/")
