"""TF1's lookups on a graph: get_tensor_by_name / get_operation_by_name /
get_operations, Tensor.get_shape / consumers, Graph.finalized."""

import numpy as np
import pytest

import onegraph as og


def _graph():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        doubled = x * 2.0
        y = og.identity(doubled, name="y")
        z = og.identity(doubled + x, name="z")
    return g, x, doubled, y, z


def test_tensors_by_name_and_by_op_output():
    g, x, doubled, y, z = _graph()
    assert g.get_tensor_by_name("x") == x
    assert g.get_tensor_by_name("x:0") == x                       # a tensor's own name
    assert g.get_tensor_by_name("y:0") == y                       # output 0 of op y
    assert g.get_tensor_by_name(f"{doubled.op.name}:0") == doubled
    out = og.Session(g).run(g.get_tensor_by_name("y:0"),
                            {g.get_tensor_by_name("x:0"): np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(out, np.full((2, 3), 2.0, np.float32))


@pytest.mark.parametrize("name", ["nope", "y:1", "x:7", "nope:0", "y:", ":0"])
def test_unknown_tensor_names_are_key_errors(name):
    g, *_ = _graph()
    with pytest.raises(KeyError, match="get_tensor_by_name: no tensor named"):
        g.get_tensor_by_name(name)


def test_operations_by_name():
    g, x, doubled, y, z = _graph()
    assert g.get_operation_by_name("y") == y.op
    added = z.op.inputs[0].op
    assert g.get_operations() == [doubled.op, y.op, added, z.op]
    with pytest.raises(KeyError, match="that is a tensor name"):
        g.get_operation_by_name("x")            # a placeholder has no op
    with pytest.raises(KeyError, match="no op named 'nope'"):
        g.get_operation_by_name("nope")
    for lookup in (g.get_operation_by_name, g.get_tensor_by_name):
        with pytest.raises(TypeError, match="name must be a str"):
            lookup(3)


def test_shape_consumers_and_finalized():
    g, x, doubled, y, z = _graph()
    assert x.get_shape() == (None, 3)
    added = z.op.inputs[0].op
    assert x.consumers() == [doubled.op, added]
    assert doubled.consumers() == [y.op, added]
    assert y.consumers() == []
    assert not g.finalized
    g.finalize()
    assert g.finalized
