"""Behaviour of shape/indexing/reduction ops beyond the ONNX node cases: value-based
inference (constant folding of shape subgraphs), partial shapes and edge cases."""

import numpy as np
import pytest

from onegraph.errors import ShapeError
from onegraph.ops import KernelContext, TensorInfo, get_op


def run(op_type, inputs, **attrs):
    op = get_op(op_type)
    return op.kernel(inputs, op.resolve_attrs(attrs), KernelContext())


def infer(op_type, infos, **attrs):
    op = get_op(op_type)
    return op.infer(op.resolve_attrs(attrs), infos)


def known(arr):
    arr = np.asarray(arr)
    return TensorInfo(arr.dtype, arr.shape, arr)


F32 = np.dtype(np.float32)
I64 = np.dtype(np.int64)


def test_shape_value_propagates_when_dims_known():
    (out,) = infer("Shape", [TensorInfo(F32, (2, 3, None))], end=2)
    assert out.shape == (2,) and out.value.tolist() == [2, 3]
    (out,) = infer("Shape", [TensorInfo(F32, (2, 3, None))])
    assert out.shape == (3,) and out.value is None
    (out,) = infer("Size", [TensorInfo(F32, (2, 3))])
    assert out.value == 6 and out.dtype == I64


def test_shape_subgraph_folds():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds to a known shape."""
    (shape,) = infer("Shape", [TensorInfo(F32, (4, 6))])
    (dim0,) = infer("Gather", [shape, known(np.array(0, np.int64))])
    assert dim0.value == 4 and dim0.shape == ()
    (unsq,) = infer("Unsqueeze", [dim0, known(np.array([0], np.int64))])
    assert unsq.value.tolist() == [4]
    (cat,) = infer("Concat", [unsq, known(np.array([-1], np.int64))], axis=0)
    assert cat.value.tolist() == [4, -1]
    (out,) = infer("Reshape", [TensorInfo(F32, (4, 6)), cat])
    assert out.shape == (4, 6)


def test_folding_skips_big_outputs():
    (out,) = infer("ConstantOfShape", [known(np.array([100000, 1000]))])
    assert out.shape == (100000, 1000) and out.value is None
    (out,) = infer("Range", [known(np.int64(0)), known(np.int64(5)), known(np.int64(2))])
    assert out.shape == (3,) and out.value.tolist() == [0, 2, 4]


def test_value_dependent_inference_without_values_keeps_rank():
    x = TensorInfo(F32, (2, 3))
    assert infer("Reshape", [x, TensorInfo(I64, (3,))])[0].shape == (None,) * 3
    assert infer("Expand", [x, TensorInfo(I64, (4,))])[0].shape == (None,) * 4
    assert infer("Tile", [x, TensorInfo(I64, (2,))])[0].shape == (None, None)
    assert infer("Slice", [x, TensorInfo(I64, (1,)), TensorInfo(I64, (1,)),
                           known(np.array([1]))])[0].shape == (2, None)
    assert infer("ConstantOfShape", [TensorInfo(I64, (2,))])[0].shape == (None, None)
    assert infer("Range", [TensorInfo(F32, ()), TensorInfo(F32, ()),
                           TensorInfo(F32, ())])[0].shape == (None,)
    assert infer("Unsqueeze", [x, TensorInfo(I64, (2,))])[0].shape == (None,) * 4
    assert infer("Pad", [x, TensorInfo(I64, (4,))])[0].shape == (None, None)
    assert infer("Resize", [TensorInfo(F32, (1, 1, 4, 4)), None,
                            TensorInfo(F32, (4,))])[0].shape == (None,) * 4
    assert infer("ReduceSum", [x, TensorInfo(I64, (1,))], keepdims=0)[0].shape == (None,)


def test_squeeze_and_unsqueeze_with_axes_known_only_at_run_time():
    # only the axes' count is known: the rank numpy's squeeze / expand_dims give, every
    # dim unknown; nothing when the input's rank or the axes' count is unknown
    x = np.ones((1, 3, 1), np.float32)
    axes = TensorInfo(I64, (2,))
    (sq,) = infer("Squeeze", [TensorInfo(F32, x.shape), axes])
    assert sq.dtype == F32 and sq.shape == (None,) * np.squeeze(x, axis=(0, 2)).ndim
    (unsq,) = infer("Unsqueeze", [TensorInfo(F32, x.shape), axes])
    assert unsq.dtype == F32 and unsq.shape == (None,) * np.expand_dims(x, (0, 2)).ndim
    for op in ("Squeeze", "Unsqueeze"):
        assert infer(op, [TensorInfo(F32, None), axes])[0].shape is None
        assert infer(op, [TensorInfo(F32, x.shape), TensorInfo(I64, (None,))])[0].shape is None


def test_value_dependent_inference_with_values():
    x = TensorInfo(F32, (2, 3))
    assert infer("Reshape", [x, known(np.array([0, -1]))])[0].shape == (2, 3)
    assert infer("Reshape", [TensorInfo(F32, (None, 3)), known(np.array([0, -1]))]
                 )[0].shape == (None, None)
    assert infer("Expand", [x, known(np.array([4, 1, 3]))])[0].shape == (4, 2, 3)
    assert infer("Tile", [x, known(np.array([2, 2]))])[0].shape == (4, 6)
    assert infer("Pad", [x, known(np.array([1, 0, 1, -1]))])[0].shape == (4, 2)
    assert infer("Resize", [TensorInfo(F32, (1, 1, 4, 4)), None,
                            known(np.array([1, 1, 2, 0.5], np.float32))])[0].shape \
        == (1, 1, 8, 2)
    assert infer("ReduceMean", [x, known(np.array([-1]))])[0].shape == (2, 1)
    with pytest.raises(ShapeError):
        infer("Expand", [x, known(np.array([4, 2]))])


def test_split_num_outputs_uneven_and_zero():
    parts = run("Split", [np.arange(7)], num_outputs=3)
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4, 5], [6]]
    infos = infer("Split", [TensorInfo(F32, (7, 2))], num_outputs=3)
    assert [i.shape for i in infos] == [(3, 2), (3, 2), (1, 2)]
    assert infer("Split", [TensorInfo(F32, (6,))]) == []


def test_pad_negative_crops_and_modes_keep_dtype():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    (y,) = run("Pad", [x, np.array([0, -1, 1, 1]), np.array(9, np.int32)])
    assert y.dtype == np.int32 and y.shape == (4, 4)
    assert y[:, -1].tolist() == [9, 9, 9, 9] and y[-1].tolist() == [9, 9, 9, 9]
    (y,) = run("Pad", [x, np.array([1, 1]), None, np.array([1])], mode="wrap")
    assert y[0].tolist() == [3, 0, 1, 2, 3, 0]


def test_resize_nearest_keeps_integer_dtype():
    x = np.arange(4, dtype=np.uint8).reshape(1, 1, 2, 2)
    (y,) = run("Resize", [x, None, np.array([1, 1, 2, 2], np.float32)])
    assert y.dtype == np.uint8 and y.shape == (1, 1, 4, 4)
    (y,) = run("Resize", [x, None, None, np.array([3, 3], np.int64)], mode="linear",
               axes=[2, 3])
    assert y.dtype == np.uint8 and y.shape == (1, 1, 3, 3)


def test_dropout_seeded_is_deterministic_and_unseeded_uses_ctx():
    x = np.ones((50, 50), np.float32)
    a = run("Dropout", [x, np.float32(0.5), np.bool_(True)], seed=3)
    b = run("Dropout", [x, np.float32(0.5), np.bool_(True)], seed=3)
    assert np.array_equal(a[0], b[0]) and a[0].dtype == np.float32
    assert set(np.unique(a[0])) <= {0.0, 2.0} and a[1].dtype == bool
    y, mask = run("Dropout", [x, np.float32(0.5), np.bool_(True)])
    assert 0.3 < mask.mean() < 0.7
    y, mask = run("Dropout", [x])
    assert np.array_equal(y, x) and mask.all()


@pytest.mark.parametrize("inputs", [[], [np.float32(0.5)], [np.float32(0.5), np.bool_(False)],
                                    [np.float32(0.0), np.bool_(True)]])
def test_dropout_at_inference_passes_the_input_through(inputs):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    op = get_op("Dropout")
    only_output = op.kernel([x] + inputs, op.resolve_attrs({}, num_outputs=1),
                            KernelContext())
    assert len(only_output) == 1 and only_output[0] is x  # no copy, no mask built
    y, mask = op.kernel([x] + inputs, op.resolve_attrs({}, num_outputs=2), KernelContext())
    assert y is x and mask.dtype == bool and mask.shape == x.shape and mask.all()


def test_constant_variants():
    assert run("Constant", [], value_int=3)[0].dtype == np.int64
    assert run("Constant", [], value_floats=[1.0, 2.0])[0].dtype == np.float32
    assert run("Constant", [], value_strings=["a", "b"])[0].tolist() == ["a", "b"]
    out = infer("Constant", [], value_ints=[1, 2])[0]
    assert out.value.tolist() == [1, 2] and out.shape == (2,)


def test_topk_ties_and_unsigned():
    x = np.array([[3, 1, 3, 2, 1]], dtype=np.uint64)
    vals, idx = run("TopK", [x, np.array([3])])
    assert vals.tolist() == [[3, 3, 2]] and idx.tolist() == [[0, 2, 3]]
    vals, idx = run("TopK", [x, np.array([2])], largest=0)
    assert vals.tolist() == [[1, 1]] and idx.tolist() == [[1, 4]]


def test_reductions_dtype_and_noop():
    x = np.array([[1, 2], [3, 5]], dtype=np.int32)
    (m,) = run("ReduceMean", [x, np.array([1])], keepdims=0)
    assert m.dtype == np.int32
    (s,) = run("ReduceSum", [x, np.array([], np.int64)], noop_with_empty_axes=1)
    assert np.array_equal(s, x)
    (s,) = run("ReduceSum", [x.astype(np.float16)])
    assert s.dtype == np.float16 and s.shape == (1, 1) and s.item() == 11
    (a,) = run("ArgMax", [np.array([[1, 3, 3]])], axis=1, select_last_index=1)
    assert a.tolist() == [[2]] and a.dtype == np.int64


def test_indexing_edge_cases():
    x = np.arange(10)
    (y,) = run("Slice", [x, np.array([-1]), np.array([-2**63]), None, np.array([-3])])
    assert y.tolist() == [9, 6, 3, 0]
    with pytest.raises(ShapeError):
        run("Gather", [x, np.array([10])])
    (y,) = run("ScatterND", [np.zeros(4, np.float32), np.array([[1], [1]]),
                             np.array([2, 3], np.float32)], reduction="add")
    assert y.tolist() == [0, 5, 0, 0]
    (nz,) = run("NonZero", [np.array([[0, 1], [2, 0]])])
    assert nz.dtype == np.int64 and nz.tolist() == [[0, 1], [1, 0]]
    y, first, inv, counts = run("Unique", [np.array([3, 1, 3, 2])], sorted=0)
    assert y.tolist() == [3, 1, 2] and first.tolist() == [0, 1, 3]
    assert inv.tolist() == [0, 1, 0, 2] and counts.tolist() == [2, 1, 1]


def test_registry_lists_are_sorted():
    from onegraph.ops import indexing, reduction, shape
    for module in (shape, indexing, reduction):
        names = [op.name for op in module.OPS]
        assert names == sorted(names)


def test_matmul_stack_against_one_matrix_is_one_gemm_with_the_same_result():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 5, 6)).astype(np.float32)
    a = x.transpose(0, 2, 3, 1)            # a non-contiguous (2, 5, 6, 8) view
    b = rng.standard_normal((8, 3)).astype(np.float32)
    want = np.einsum("nhwk,kj->nhwj", a.astype(np.float64), b.astype(np.float64))
    (y,) = run("MatMul", [a, b])
    assert y.shape == (2, 5, 6, 3) and y.dtype == np.float32
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pads", [[5, 1], [7, 5], [4, 0], [0, 6], [2, 2]])
def test_pad_wrap_of_pads_longer_than_the_axis_is_periodic(pads):
    """Output index j of a wrap Pad copies input j mod n, for pads of several turns.
    numpy 1.24's np.pad got (5, 1) on 3 values wrong ([2 0 0 1 2 ...]), so the expected
    values are indexed here directly."""
    x = np.arange(6.0).reshape(2, 3)
    (y,) = run("Pad", [x, np.array([0, pads[0], 0, pads[1]])], mode="wrap")
    cols = np.arange(-pads[0], 3 + pads[1]) % 3
    np.testing.assert_array_equal(y, x[:, cols])
