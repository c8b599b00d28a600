"""Fixes from a second structure-aware fuzz of from_onnx + Session (the ONNX backend
node tests, each mutated: attribute values and types, node inputs, initializers,
declared input types, feeds of other shapes and dtypes, swapped op types).

Each case is a bad input that reached numpy (or Python) and came back as an
ExecutionError wrapping a raw ValueError/IndexError, a huge allocation, or a hang;
each now gets a named onegraph error saying what is wrong (or, where the input is
valid ONNX, a result).
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402

from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import (ExecutionError, OpAttributeError,  # noqa: E402
                             ResourceExhaustedError, ShapeError)
from onegraph.train.session import Session  # noqa: E402

F32 = np.float32


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _run(node, inputs, feeds, opset=21, outputs=None, domain_opsets=()):
    """Import a one-node model (graph inputs `inputs`, outputs undeclared in shape) and
    run it on `feeds`; returns the outputs."""
    outs = outputs or [_vi(n, T.UNDEFINED, None) for n in node.output]
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v)
                                              for d, v in domain_opsets]
    model = helper.make_model(helper.make_graph([node], "g", inputs, outs),
                              opset_imports=ops)
    model.ir_version = 10
    return Session(from_onnx(model)).run([o.name for o in outs], feeds)


def _float_out(name):
    return [_vi(name, T.FLOAT, None)]


# --------------------------------------------------------------------- shape ops

@pytest.mark.parametrize("shape, match", [
    ([2, -3], r"node 'ex' \(Expand\).*shape \[2, -3\] has a negative dim"),
    ([2, 4], r"node 'ex' \(Expand\).*cannot broadcast"),
])
def test_expand_bad_shape_is_a_shape_error(shape, match):
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="ex")
    with pytest.raises(ShapeError, match=match):
        _run(node, [_vi("x", T.FLOAT, [2, 3]), _vi("s", T.INT64, [2])],
             {"x": np.ones((2, 3), F32), "s": np.array(shape, np.int64)},
             outputs=_float_out("y"))


def test_expand_to_a_huge_shape_is_refused_before_allocating():
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="ex")
    with pytest.raises(ResourceExhaustedError, match=r"node 'ex' \(Expand\).*over the limit"):
        _run(node, [_vi("x", T.FLOAT, [2, 3]), _vi("s", T.INT64, [3])],
             {"x": np.ones((2, 3), F32), "s": np.array([10**9, 2, 3], np.int64)},
             outputs=_float_out("y"))


def test_constant_of_shape_huge_is_refused_before_allocating():
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="cs")
    with pytest.raises(ResourceExhaustedError,
                       match=r"node 'cs' \(ConstantOfShape\).*over the limit"):
        _run(node, [_vi("s", T.INT64, [2])], {"s": np.array([60000, 10000], np.int64)},
             outputs=_float_out("y"))


def test_concat_of_inputs_of_different_rank_is_a_shape_error():
    node = helper.make_node("Concat", ["a", "b"], ["y"], name="cc", axis=0)
    with pytest.raises(ShapeError, match=r"node 'cc' \(Concat\).*differ in rank"):
        _run(node, [_vi("a", T.FLOAT, None), _vi("b", T.FLOAT, None)],
             {"a": np.ones((2, 3), F32), "b": np.ones(3, F32)}, outputs=_float_out("y"))


def test_matmul_of_a_scalar_fed_where_undeclared_is_a_shape_error():
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    with pytest.raises(ShapeError, match=r"node 'mm' \(MatMul\).*scalar operands"):
        _run(node, [_vi("a", T.FLOAT, None), _vi("b", T.FLOAT, None)],
             {"a": np.ones((2, 3), F32), "b": np.ones((), F32)}, outputs=_float_out("y"))


@pytest.mark.parametrize("seed", [-1, 2**40])
def test_dropout_takes_any_int64_seed(seed):
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], name="dr", seed=seed)
    ins = [_vi("x", T.FLOAT, [64]), _vi("r", T.FLOAT, []), _vi("t", T.BOOL, [])]
    feeds = {"x": np.ones(64, F32), "r": np.array(0.5, F32), "t": np.array(True)}
    outs = [_vi("y", T.FLOAT, None), _vi("m", T.BOOL, None)]
    y, m = _run(node, ins, feeds, outputs=outs)
    np.testing.assert_array_equal(y, np.where(m, 2.0, 0.0).astype(F32))
    y2, _ = _run(node, ins, feeds, outputs=outs)
    np.testing.assert_array_equal(y, y2)


# --------------------------------------------------------------------- attention family

def _attention_3d(**attrs):
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], name="att", **attrs)
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal((1, 3, 8)).astype(F32) for n in "qkv"}
    ins = [_vi(n, T.FLOAT, None) for n in "qkv"]
    return node, ins, feeds


@pytest.mark.parametrize("attrs", [dict(q_num_heads=2, kv_num_heads=-2),
                                   dict(q_num_heads=-4, kv_num_heads=2)])
def test_attention_negative_head_count_is_an_attribute_error(attrs):
    node, ins, feeds = _attention_3d(**attrs)
    with pytest.raises(OpAttributeError, match=r"node 'att' \(Attention\).*head count -"):
        _run(node, ins, feeds, opset=23, outputs=_float_out("y"))


def test_attention_negative_scale_scales_the_scores_by_it():
    node, ins, feeds = _attention_3d(q_num_heads=2, kv_num_heads=2, scale=-0.5)
    (y,) = _run(node, ins, feeds, opset=23, outputs=_float_out("y"))
    q, k, v = (feeds[n].reshape(1, 3, 2, 4).transpose(0, 2, 1, 3) for n in "qkv")
    s = -0.5 * q @ k.swapaxes(-1, -2)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(y, want.transpose(0, 2, 1, 3).reshape(1, 3, 8), rtol=1e-5)


@pytest.mark.parametrize("attrs, match", [
    (dict(num_heads=-1), "num_heads must be positive, got -1"),
    (dict(num_heads=2, rotary_embedding_dim=-2), "rotary_embedding_dim -2 must be even"),
])
def test_rotary_embedding_negative_attributes_are_attribute_errors(attrs, match):
    node = helper.make_node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"], name="rope",
                            **attrs)
    ins = [_vi("x", T.FLOAT, None), _vi("c", T.FLOAT, [4, 2]), _vi("s", T.FLOAT, [4, 2]),
           _vi("p", T.INT64, [1, 3])]
    feeds = {"x": np.ones((1, 3, 8), F32), "c": np.ones((4, 2), F32),
             "s": np.zeros((4, 2), F32), "p": np.zeros((1, 3), np.int64)}
    with pytest.raises(OpAttributeError, match=r"node 'rope' \(RotaryEmbedding\).*" + match):
        _run(node, ins, feeds, opset=23, outputs=_float_out("y"))


def test_linear_attention_with_value_missing_is_a_shape_error():
    # value dropped: the past state (B, H, dk, dv) arrives in its place
    node = helper.make_node("LinearAttention", ["q", "k", "st"], ["y", "s"], name="la",
                            q_num_heads=2, kv_num_heads=2, update_rule="linear")
    feeds = {"q": np.ones((2, 1, 8), F32), "k": np.ones((2, 1, 8), F32),
             "st": np.ones((2, 2, 4, 4), F32)}
    ins = [_vi(n, T.FLOAT, None) for n in feeds]
    with pytest.raises(ShapeError, match=r"node 'la' \(LinearAttention\).*same B and T"):
        _run(node, ins, feeds, opset=27,
             outputs=[_vi("y", T.FLOAT, None), _vi("s", T.FLOAT, None)])


def test_causal_conv_with_a_bias_of_the_wrong_size_is_a_shape_error():
    node = helper.make_node("CausalConvWithState", ["x", "w", "b"], ["y", "s"], name="cc")
    feeds = {"x": np.ones((1, 4, 5), F32), "w": np.ones((4, 1, 3), F32),
             "b": np.ones((16,), F32)}
    ins = [_vi(n, T.FLOAT, None) for n in feeds]
    with pytest.raises(ShapeError, match=r"node 'cc' \(CausalConvWithState\).*bias shape"):
        _run(node, ins, feeds, opset=27,
             outputs=[_vi("y", T.FLOAT, None), _vi("s", T.FLOAT, None)])


# --------------------------------------------------------------------- image ops

@pytest.mark.parametrize("size, error, match", [
    ([1, 1, -2, 3], ShapeError, "size \\[1, 1, -2, 3\\] has a negative dimension"),
    ([1, 1, 10**6, 10**6], ResourceExhaustedError, "the grid .*over the limit"),
])
def test_affine_grid_bad_size(size, error, match):
    node = helper.make_node("AffineGrid", ["t", "s"], ["g"], name="ag")
    feeds = {"t": np.zeros((1, 2, 3), F32), "s": np.array(size, np.int64)}
    with pytest.raises(error, match=r"node 'ag' \(AffineGrid\).*" + match):
        _run(node, [_vi("t", T.FLOAT, [1, 2, 3]), _vi("s", T.INT64, [4])], feeds,
             outputs=_float_out("g"))


def test_center_crop_pad_to_a_huge_shape_is_refused_before_allocating():
    node = helper.make_node("CenterCropPad", ["x", "s"], ["y"], name="ccp")
    feeds = {"x": np.ones((2, 3), F32), "s": np.array([10**6, 10**6], np.int64)}
    with pytest.raises(ResourceExhaustedError,
                       match=r"node 'ccp' \(CenterCropPad\).*over the limit"):
        _run(node, [_vi("x", T.FLOAT, [2, 3]), _vi("s", T.INT64, [2])], feeds,
             outputs=_float_out("y"))


def _roi_align(rois, dtype=F32, elem=T.FLOAT):
    node = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], name="ra",
                            output_height=2, output_width=2, sampling_ratio=1)
    feeds = {"x": np.ones((1, 1, 4, 4), dtype), "r": np.array(rois, dtype),
             "b": np.zeros(len(rois), np.int64)}
    ins = [_vi("x", elem, [1, 1, 4, 4]), _vi("r", elem, [len(rois), 4]),
           _vi("b", T.INT64, [len(rois)])]
    return _run(node, ins, feeds, outputs=[_vi("y", elem, None)])


def test_roi_align_far_away_roi_samples_nothing():
    # was an IndexError: the sample positions (1e30) overflowed the int conversion
    (y,) = _roi_align([[0, 0, 1e30, 1e30], [0.5, 0.5, 2.5, 2.5]])
    assert np.all(y[0] == 0) and np.all(y[1] == 1)


def test_roi_align_roi_of_infinite_extent_is_a_shape_error():
    with pytest.raises(ShapeError, match=r"node 'ra' \(RoiAlign\).*roi 0 .*not finite"):
        _roi_align([[-1e308, 0, 1e308, 2]], np.float64, T.DOUBLE)


def test_resize_non_finite_roi_is_a_shape_error():
    node = helper.make_node("Resize", ["x", "roi", "sc"], ["y"], name="rs", mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize")
    feeds = {"x": np.ones((1, 1, 4, 4), F32),
             "roi": np.array([0, 0, np.nan, 0, 1, 1, 1, 1], F32),
             "sc": np.array([1, 1, 2, 2], F32)}
    ins = [_vi("x", T.FLOAT, [1, 1, 4, 4]), _vi("roi", T.FLOAT, [8]),
           _vi("sc", T.FLOAT, [4])]
    with pytest.raises(ShapeError, match=r"node 'rs' \(Resize\).*roi .* not finite"):
        _run(node, ins, feeds, outputs=_float_out("y"))


# --------------------------------------------------------------------- other kernels

def test_tree_ensemble_huge_n_targets_is_refused_before_allocating():
    node = helper.make_node(
        "TreeEnsemble", ["x"], ["y"], name="te", domain="ai.onnx.ml", n_targets=2**40,
        aggregate_function=1, post_transform=0, tree_roots=[0], nodes_modes=helper.make_tensor(
            "m", T.UINT8, [1], [0]), nodes_featureids=[0], nodes_splits=helper.make_tensor(
            "s", T.FLOAT, [1], [0.5]), nodes_truenodeids=[0], nodes_trueleafs=[1],
        nodes_falsenodeids=[1], nodes_falseleafs=[1], leaf_targetids=[0, 0],
        leaf_weights=helper.make_tensor("w", T.FLOAT, [2], [1.0, 2.0]))
    with pytest.raises(ResourceExhaustedError,
                       match=r"node 'te' \(TreeEnsemble\).*n_targets 1099511627776"):
        _run(node, [_vi("x", T.FLOAT, [3, 2])], {"x": np.zeros((3, 2), F32)},
             outputs=_float_out("y"), domain_opsets=[("ai.onnx.ml", 5)])


@pytest.mark.parametrize("zps, match", [
    ({"xz": np.array([1, 2], np.uint8)}, "x_zero_point must hold one value"),
    ({"xz": np.array(0, np.uint8), "wz": np.array([1, 2, 3], np.uint8)},
     "w_zero_point must hold one value or one per output channel \\(1\\)"),
])
def test_conv_integer_zero_point_of_the_wrong_size_is_a_shape_error(zps, match):
    names = ["x", "w"] + list(zps)
    node = helper.make_node("ConvInteger", names, ["y"], name="ci")
    feeds = {"x": np.ones((1, 1, 3, 3), np.uint8), "w": np.ones((1, 1, 2, 2), np.uint8),
             **zps}
    ins = [_vi(n, T.UINT8, None) for n in names]
    with pytest.raises(ShapeError, match=r"node 'ci' \(ConvInteger\).*" + match):
        _run(node, ins, feeds, outputs=[_vi("y", T.INT32, None)])


def test_gather_nd_batch_dims_past_the_fed_ranks_is_a_shape_error():
    node = helper.make_node("GatherND", ["x", "i"], ["y"], name="gn", batch_dims=2)
    feeds = {"x": np.ones((2, 2), np.int32), "i": np.zeros((2, 1), np.int64)}
    ins = [_vi("x", T.INT32, None), _vi("i", T.INT64, None)]
    with pytest.raises(ShapeError, match=r"node 'gn' \(GatherND\).*batch_dims=2 does not fit"):
        _run(node, ins, feeds, outputs=[_vi("y", T.INT32, None)])


def test_layer_normalization_bias_of_higher_rank_is_a_shape_error():
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln", axis=0)
    feeds = {"x": np.ones((2, 3, 5), F32), "s": np.ones((2, 3, 5), F32),
             "b": np.ones((1, 2, 3, 5), F32)}
    ins = [_vi("x", T.FLOAT, [2, 3, 5]), _vi("s", T.FLOAT, [2, 3, 5]), _vi("b", T.FLOAT, None)]
    with pytest.raises(ShapeError,
                       match=r"node 'ln' \(LayerNormalization\).*B of shape \[1, 2, 3, 5\]"):
        _run(node, ins, feeds, outputs=_float_out("y"))


def test_sequence_insert_with_a_sequence_as_position_is_a_shape_error():
    build = helper.make_node("SequenceConstruct", ["x"], ["seq"], name="sc")
    node = helper.make_node("SequenceInsert", ["seq", "x", "seq"], ["out"], name="si")
    seq_t = helper.make_tensor_sequence_value_info("out", T.FLOAT, None)
    model = helper.make_model(
        helper.make_graph([build, node], "g", [_vi("x", T.FLOAT, [2])], [seq_t]),
        opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    with pytest.raises(ShapeError, match=r"node 'si' \(SequenceInsert\).*must be a tensor"):
        Session(from_onnx(model)).run(["out"], {"x": np.ones(2, F32)})


@pytest.mark.parametrize("through_identity", [True, False])
def test_loop_without_trip_count_passing_its_condition_through_is_refused(through_identity):
    # was a hang: the body never changes cond, and no M bounds the loop
    body_nodes = [helper.make_node("Add", ["v_in", "one"], ["v_out"]),
                  helper.make_node("Constant", [], ["one"], value=helper.make_tensor(
                      "c", T.FLOAT, [], [1.0]))]
    cond_out = "cond_in"
    if through_identity:
        body_nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
        cond_out = "cond_out"
    body = helper.make_graph(
        body_nodes, "body",
        [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("v_in", T.FLOAT, [])],
        [_vi(cond_out, T.BOOL, []), _vi("v_out", T.FLOAT, [])])
    node = helper.make_node("Loop", ["", "c", "v"], ["r"], name="lp", body=body)
    ins = [_vi("c", T.BOOL, []), _vi("v", T.FLOAT, [])]
    outs = _float_out("r")
    with pytest.raises(ExecutionError, match=r"node 'lp' \(Loop\).*would never end"):
        _run(node, ins, {"c": np.array(True), "v": np.array(0, F32)}, outputs=outs)
    # a false condition runs the body zero times, as before
    (r,) = _run(node, ins, {"c": np.array(False), "v": np.array(5, F32)}, outputs=outs)
    assert r == 5


def test_range_of_a_huge_length_is_refused_before_allocating():
    node = helper.make_node("Range", ["a", "b", "d"], ["y"], name="rg")
    feeds = {"a": np.array(-2**40, np.int64), "b": np.array(6, np.int64),
             "d": np.array(1, np.int64)}
    ins = [_vi(n, T.INT64, []) for n in feeds]
    with pytest.raises(ResourceExhaustedError,
                       match=r"node 'rg' \(Range\).*start -1099511627776, limit 6"):
        _run(node, ins, feeds, outputs=[_vi("y", T.INT64, None)])



def test_concat_kernel_refuses_mixed_dtypes_fed_undeclared():
    # (found as a fuzzed float Constant among the int64 parts of a shape in an expanded
    # LinearAttention: numpy promoted the shape to float64, and Reshape failed with a
    # TypeError)
    node = helper.make_node("Concat", ["a", "b"], ["y"], name="cc", axis=0)
    with pytest.raises(ShapeError, match=r"node 'cc' \(Concat\).*differ in dtype"):
        _run(node, [_vi("a", T.UNDEFINED, None), _vi("b", T.UNDEFINED, None)],
             {"a": np.ones(2, np.int64), "b": np.ones(2, F32)}, outputs=_float_out("y"))
