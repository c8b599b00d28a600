"""og.TensorShape: what Tensor.shape / get_shape() return, with TF's methods (the
idioms of TF1 code: x.get_shape().as_list()[-1], shape.ndims, shape_invariants of
TensorShape([None, 5])), and set_shape merging as TF's does. Expected behaviour from
TF 2.21's tf.TensorShape, which tf.compat.v1 uses (indexing gives ints or None)."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError


def test_tensor_shapes_are_tuples_with_tfs_methods():
    x = og.placeholder(og.float32, [None, 5])
    s = x.get_shape()
    assert s == (None, 5) and x.shape == [None, 5] and isinstance(s, tuple)
    assert s.as_list() == [None, 5] and s.ndims == s.rank == 2 and s.dims == [None, 5]
    assert s[-1] == 5 and s[0] is None and s[1:] == (5,) and s[1:].as_list() == [5]
    assert not s.is_fully_defined() and s.num_elements() is None
    assert og.TensorShape([2, 3]).num_elements() == 6
    assert str(s) == "(None, 5)" and repr(s) == "TensorShape([None, 5])"
    n, d = s                                                   # unpacks as a tuple
    assert (n, d) == (None, 5)


def test_unknown_rank():
    u = og.placeholder(og.float32)
    assert u.shape is None                                     # as onegraph had it
    s = u.get_shape()
    assert s.ndims is None and s.dims is None and not s.is_fully_defined()
    assert str(s) == "<unknown>" and s != og.TensorShape([])   # not a scalar's shape
    with pytest.raises(ValueError, match="unknown TensorShape"):
        s.as_list()
    assert og.placeholder(og.float32, og.TensorShape(None)).shape is None


def test_combining_shapes():
    a, b = og.TensorShape([None, 5]), og.TensorShape([3, None])
    assert a.is_compatible_with(b) and a.merge_with(b) == (3, 5)
    assert a.concatenate([7]) == (None, 5, 7) and a + [7] == (None, 5, 7)
    assert [1] + a == (1, None, 5)
    assert a.merge_with(None) == a and og.TensorShape(None).merge_with(a) == a
    assert not a.is_compatible_with([None, 4]) and not a.is_compatible_with([5])
    with pytest.raises(ValueError, match="not compatible"):
        a.merge_with([None, 4])
    assert a.with_rank(2) == a
    with pytest.raises(ValueError):
        a.with_rank(3)
    with pytest.raises(ValueError):
        a.with_rank_at_least(3)
    with pytest.raises(ValueError):
        a.assert_has_rank(1)
    with pytest.raises(TypeError, match="a dim must be an int"):
        og.TensorShape([2.5])
    assert og.dimension_value(og.Dimension(4)) == 4 and og.dimension_value(None) is None
    assert og.TensorShape([og.Dimension(2), None]) == (2, None)


def test_set_shape_merges_as_tfs_does():
    x = og.placeholder(og.float32, [None, 5])
    x.set_shape([3, None])
    assert x.shape == (3, 5)                                   # replaced before: (3, ?)
    x.set_shape(og.TensorShape(None))
    assert x.shape == (3, 5)
    with pytest.raises(ShapeError, match="not compatible"):
        x.set_shape([4, 5])
    with pytest.raises(ShapeError, match="not compatible"):
        x.set_shape([3, 5, 1])


def test_variables_and_shape_invariants():
    v = og.Variable(np.zeros((2, 3), np.float32))
    assert v.get_shape().as_list() == [2, 3]
    i = og.constant(0)
    _, grown = og.while_loop(lambda j, a: j < 3,
                             lambda j, a: (j + 1, og.concat([a, a], 0)),
                             [i, og.zeros([1, 5])],
                             shape_invariants=[og.TensorShape([]), og.TensorShape([None, 5])])
    assert grown.shape == (None, 5)                            # TF's
    assert og.Session().run(grown).shape == (8, 5)


def test_dtypes_answer_tfs_questions():
    """TF's DType attributes, as tf.compat.v1 2.21 answers them."""
    x = og.placeholder(og.float32, [None, 5])
    assert x.dtype.base_dtype == og.float32 and x.dtype.as_numpy_dtype is np.float32
    assert x.dtype.is_floating and not x.dtype.is_integer and x.dtype.size == 4
    assert og.int32.max == 2147483647 and og.int32.min == -2147483648
    assert og.float32.min == np.float32(-3.4028235e+38)
    assert og.uint8.is_unsigned and og.uint8.is_integer and not og.int8.is_unsigned
    assert og.bfloat16.is_floating and og.bool_.is_bool and not og.float64.is_complex
    assert not og.bool_.is_integer and not og.bool_.is_floating
    with pytest.raises(TypeError, match="no min or max"):
        og.bool_.max
