"""Rewrite 13 (train/onednn_chains.py, ops/onednn_chain.py): runs of conv-net steps run
by oneDNN on channel-blocked buffers, checked against onnxruntime on seeded random
weights; the steps' own kernels when oneDNN declines or is switched off."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.ops import onednn

from ..backends import needs_backend
from ..threads import run_together

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

pytestmark = [needs_backend(onednn, "onednn", "oneDNN (the onednn extra)"),
              pytest.mark.usefixtures("with_onednn")]


def _conv(name, x, c_in, c_out, k, rng, weights, stride=1, pad=None, relu=True):
    """A Conv (He-scaled random weights and bias) and optionally its Relu; the output
    name."""
    w = rng.standard_normal((c_out, c_in, k, k)).astype(np.float32) * np.sqrt(
        2.0 / (c_in * k * k))
    weights[name + "_w"] = w
    weights[name + "_b"] = rng.standard_normal(c_out).astype(np.float32) * 0.1
    p = k // 2 if pad is None else pad
    nodes = [helper.make_node("Conv", [x, name + "_w", name + "_b"], [name],
                              kernel_shape=[k, k], strides=[stride, stride],
                              pads=[p, p, p, p], name=name)]
    if relu:
        nodes.append(helper.make_node("Relu", [name], [name + "_r"], name=name + "_relu"))
        return nodes, name + "_r"
    return nodes, name


def _fire_net(rng, c=3, squeeze=16, expand=32, ceil_mode=1, include_pad=0, lrn=True):
    """A SqueezeNet-like net: 3x3/2 stem, MaxPool, fire module (1x1 squeeze, 1x1 and
    3x3 expands, channel Concat), AveragePool, LRN, a 1x1 conv, GlobalAveragePool."""
    weights = {}
    nodes, t = _conv("stem", "x", c, 32, 3, rng, weights, stride=2, pad=0)
    nodes.append(helper.make_node("MaxPool", [t], ["pool1"], kernel_shape=[3, 3],
                                  strides=[2, 2], ceil_mode=ceil_mode, name="pool1"))
    n2, s = _conv("squeeze", "pool1", 32, squeeze, 1, rng, weights)
    n3, e1 = _conv("expand1", s, squeeze, expand, 1, rng, weights)
    n4, e3 = _conv("expand3", s, squeeze, expand, 3, rng, weights)
    nodes += n2 + n3 + n4
    nodes.append(helper.make_node("Concat", [e1, e3], ["cat"], axis=1, name="cat"))
    nodes.append(helper.make_node("Dropout", ["cat"], ["drop"], name="drop"))
    nodes.append(helper.make_node("AveragePool", ["drop"], ["avg"], kernel_shape=[3, 3],
                                  strides=[1, 1], pads=[1, 1, 1, 1],
                                  count_include_pad=include_pad, name="avg"))
    last = "avg"
    if lrn:
        nodes.append(helper.make_node("LRN", ["avg"], ["lrn"], size=5, alpha=1e-3,
                                      beta=0.75, bias=1.5, name="lrn"))
        last = "lrn"
    n5, h = _conv("head", last, 2 * expand, 10, 1, rng, weights)
    nodes += n5
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["y"], name="gap"))
    return nodes, weights


def _model(nodes, weights, x_shape, outputs=("y",)):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [helper.make_tensor(k, TensorProto.FLOAT, v.shape, v.ravel())
         for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model


def _ort(model, feeds, outputs):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(list(outputs), feeds)


def _chains(sess):
    """The chain steps of the Session's (one) plan."""
    (plan,) = sess._plans.values()
    return [s for s in plan.steps if s.node.op_type == "OneDnnChain"]


def _check(model, x, outputs=("y",), rtol=1e-4, atol=1e-5):
    sess = og.Session(from_onnx(model))
    got = sess.run(list(outputs), {"x": x})
    want = _ort(model, {"x": x}, outputs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return sess


@pytest.mark.parametrize("ceil_mode,include_pad", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("size", [33, 40])
def test_fire_net_runs_as_one_chain(ceil_mode, include_pad, size):
    rng = np.random.default_rng(size + 2 * ceil_mode + include_pad)
    nodes, weights = _fire_net(rng, ceil_mode=ceil_mode, include_pad=include_pad)
    model = _model(nodes, weights, [1, 3, size, size])
    x = rng.standard_normal((1, 3, size, size)).astype(np.float32)
    sess = _check(model, x)
    (plan,) = sess._plans.values()
    (chain,) = plan.steps  # the whole net
    programs = list(chain.kernel.programs.values())
    assert len(programs) == 1 and programs[0] is not False
    assert len(chain.kernel.members) >= 10


def test_concat_off_the_block_boundaries_and_batch_two():
    # 24 + 24 channels: the second input starts mid-block, so the Concat copies
    rng = np.random.default_rng(5)
    nodes, weights = _fire_net(rng, squeeze=8, expand=24)
    model = _model(nodes, weights, [2, 3, 29, 29])
    x = rng.standard_normal((2, 3, 29, 29)).astype(np.float32)
    sess = _check(model, x)
    (chain,) = _chains(sess)
    assert all(chain.kernel.programs.values())


def test_fetched_intermediates_come_out_of_the_chain():
    rng = np.random.default_rng(6)
    nodes, weights = _fire_net(rng)
    outputs = ("y", "cat", "drop", "squeeze_r", "pool1")
    model = _model(nodes, weights, [1, 3, 31, 31], outputs)
    x = rng.standard_normal((1, 3, 31, 31)).astype(np.float32)
    sess = _check(model, x, outputs)
    (chain,) = _chains(sess)
    assert all(chain.kernel.programs.values())


def test_new_input_shapes_get_programs_up_to_the_limit_then_the_steps_run():
    from onegraph.train import onednn_chains

    rng = np.random.default_rng(7)
    nodes, weights = _fire_net(rng, lrn=False)
    model = _model(nodes, weights, [1, 3, None, None])
    sess = og.Session(from_onnx(model))
    for size in range(25, 25 + onednn_chains._PROGRAMS_PER_CHAIN + 2):
        x = rng.standard_normal((1, 3, size, size)).astype(np.float32)
        np.testing.assert_allclose(sess.run("y", {"x": x}), _ort(model, {"x": x}, ["y"])[0],
                                   rtol=1e-4, atol=1e-5)
    (chain,) = _chains(sess)
    assert len(chain.kernel.programs) == onednn_chains._PROGRAMS_PER_CHAIN


def test_switching_oneDNN_off_runs_the_chain_steps():
    rng = np.random.default_rng(8)
    nodes, weights = _fire_net(rng)
    model = _model(nodes, weights, [1, 3, 27, 27])
    x = rng.standard_normal((1, 3, 27, 27)).astype(np.float32)
    sess = og.Session(from_onnx(model))
    want = _ort(model, {"x": x}, ["y"])[0]
    np.testing.assert_allclose(sess.run("y", {"x": x}), want, rtol=1e-4, atol=1e-5)
    (chain,) = _chains(sess)
    calls = []
    real = chain.kernel.members[0].kernel
    chain.kernel.members[0].kernel = lambda *a: calls.append(1) or real(*a)
    onednn.use_backend("numpy")
    np.testing.assert_allclose(sess.run("y", {"x": x}), want, rtol=1e-4, atol=1e-5)
    assert calls == [1]


def test_a_wide_3x3_conv_runs_on_its_own_path_inside_the_chain():
    # 3x3 stride-1 with many channels on a wide image: Winograd (conv.py) beats
    # oneDNN there, so the chain hands it its input in NCHW and takes its output back
    rng = np.random.default_rng(9)
    weights = {}
    n1, a = _conv("a", "x", 8, 128, 1, rng, weights)
    n2, b = _conv("b", a, 128, 128, 3, rng, weights)
    n3, c = _conv("c", b, 128, 32, 1, rng, weights, relu=False)
    model = _model(n1 + n2 + n3 + [helper.make_node("Identity", [c], ["y"])], weights,
                   [1, 8, 30, 30])
    x = rng.standard_normal((1, 8, 30, 30)).astype(np.float32)
    sess = _check(model, x, rtol=1e-4, atol=1e-4)
    (chain,) = _chains(sess)
    (program,) = chain.kernel.programs.values()
    assert [s[0] for s in program.steps].count("host") == 1


def test_threads_share_a_chain():
    rng = np.random.default_rng(10)
    nodes, weights = _fire_net(rng)
    model = _model(nodes, weights, [1, 3, 35, 35])
    sess = og.Session(from_onnx(model))
    xs = [rng.standard_normal((1, 3, 35, 35)).astype(np.float32) for _ in range(4)]
    wants = [_ort(model, {"x": x}, ["y"])[0] for x in xs]
    sess.run("y", {"x": xs[0]})
    errors = []

    def work(k):
        try:
            for _ in range(5):
                np.testing.assert_allclose(sess.run("y", {"x": xs[k]}), wants[k],
                                           rtol=1e-4, atol=1e-5)
        except Exception as e:  # reported below
            errors.append(e)

    assert run_together(work, 4, timeout=60) == [] and not errors


def test_a_step_that_fails_is_named():
    # a Concat of images of different sizes: the chain declines, the steps run, and
    # the Concat's own error names its node
    rng = np.random.default_rng(11)
    weights = {}
    n1, a = _conv("a", "x", 3, 16, 3, rng, weights, stride=2)
    n2, b = _conv("b", "x", 3, 16, 3, rng, weights)
    model = _model(n1 + n2 + [helper.make_node("Concat", [a, b], ["y"], axis=1,
                                               name="cat")], weights, [1, 3, 16, 16])
    sess = og.Session(from_onnx(model))
    with pytest.raises(og.OneGraphError, match="node 'cat' \\(Concat\\)"):
        sess.run("y", {"x": np.zeros((1, 3, 16, 16), np.float32)})
    (chain,) = _chains(sess)
    assert list(chain.kernel.programs.values()) == [False]


def test_no_chain_for_one_conv_or_without_oneDNN():
    rng = np.random.default_rng(12)
    weights = {}
    n1, a = _conv("a", "x", 3, 16, 3, rng, weights)
    model = _model(n1 + [helper.make_node("MaxPool", [a], ["y"], kernel_shape=[2, 2])],
                   weights, [1, 3, 16, 16])
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    assert _chains(_check(model, x)) == []
    nodes, weights = _fire_net(rng)
    onednn.use_backend("numpy")
    assert _chains(_check(_model(nodes, weights, [1, 3, 27, 27]),
                          rng.standard_normal((1, 3, 27, 27)).astype(np.float32))) == []


@pytest.mark.parametrize("op", ["Add", "Sum"])
@pytest.mark.parametrize("relu", [True, False])
def test_residual_blocks_stay_in_the_chain(op, relu):
    rng = np.random.default_rng(13)
    weights = {}
    n1, stem = _conv("stem", "x", 3, 32, 3, rng, weights, stride=2)
    n2, a = _conv("a", stem, 32, 32, 3, rng, weights)
    n3, b = _conv("b", a, 32, 32, 1, rng, weights, relu=False)
    nodes = n1 + n2 + n3 + [helper.make_node(op, [b, stem], ["sum"], name="add")]
    if relu:
        nodes.append(helper.make_node("Relu", ["sum"], ["sum_r"]))
    n4, c = _conv("c", "sum_r" if relu else "sum", 32, 16, 1, rng, weights, relu=False)
    model = _model(nodes + n4 + [helper.make_node("Identity", [c], ["y"])], weights,
                   [1, 3, 23, 23])
    x = rng.standard_normal((1, 3, 23, 23)).astype(np.float32)
    sess = _check(model, x)
    (chain,) = _chains(sess)
    assert [m.node.op_type for m in chain.kernel.members].count(op) == 1
    assert all(chain.kernel.programs.values())


def test_an_add_of_a_constant_breaks_the_chain():
    rng = np.random.default_rng(14)
    # (a per-channel constant would fold into the conv)
    weights = {"shift": rng.standard_normal((16, 12, 12)).astype(np.float32)}
    n1, a = _conv("a", "x", 3, 16, 3, rng, weights)
    n2, b = _conv("b", a, 16, 16, 3, rng, weights, relu=False)
    nodes = n1 + n2 + [helper.make_node("Add", [b, "shift"], ["s"])]
    n3, c = _conv("c", "s", 16, 16, 1, rng, weights)
    n4, d = _conv("d", c, 16, 16, 1, rng, weights, relu=False)
    model = _model(nodes + n3 + n4 + [helper.make_node("Identity", [d], ["y"])], weights,
                   [1, 3, 12, 12])
    sess = _check(model, rng.standard_normal((1, 3, 12, 12)).astype(np.float32))
    chains = _chains(sess)
    assert len(chains) == 2 and all(all(c.kernel.programs.values()) for c in chains)


def test_a_chain_may_start_with_a_pool_of_its_input():
    rng = np.random.default_rng(15)
    weights = {}
    n1, a = _conv("a", "p", 5, 16, 3, rng, weights)
    n2, b = _conv("b", a, 16, 24, 3, rng, weights, relu=False)
    model = _model([helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2],
                                     strides=[2, 2])] + n1 + n2
                   + [helper.make_node("Identity", [b], ["y"])], weights, [1, 5, 20, 20])
    sess = _check(model, rng.standard_normal((1, 5, 20, 20)).astype(np.float32))
    (chain,) = _chains(sess)
    assert len(chain.kernel.members) == 3 and all(chain.kernel.programs.values())


def test_nan_and_inf_inputs_run_the_steps_which_keep_nan():
    # oneDNN's Relu and MaxPool give numbers for NaN; the steps, like onnxruntime,
    # keep it: a NaN pixel must reach the output
    rng = np.random.default_rng(16)
    nodes, weights = _fire_net(rng)
    model = _model(nodes, weights, [1, 3, 29, 29])
    x = rng.standard_normal((1, 3, 29, 29)).astype(np.float32)
    x[0, :, 5, 5] = np.nan
    x[0, :, 20, 7] = np.inf
    sess = og.Session(from_onnx(model))
    got = sess.run("y", {"x": x})
    want = _ort(model, {"x": x}, ["y"])[0]
    assert np.isnan(want).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-4,
                               atol=1e-5)
    (chain,) = _chains(sess)
    assert chain.kernel.programs == {}  # the steps ran


def test_steps_without_a_oneDNN_kernel_run_on_their_own_inside_the_chain():
    # an Add that broadcasts (N, C, H, W) + (N, C, 1, 1) and an AveragePool counting
    # padding whose ceil_mode windows pass the pads have no oneDNN form here: they run
    # their own kernels on NCHW copies
    rng = np.random.default_rng(17)
    weights = {}
    n1, a = _conv("a", "x", 3, 16, 3, rng, weights)
    n2, b = _conv("b", a, 16, 16, 3, rng, weights, relu=False)
    nodes = n1 + n2 + [
        helper.make_node("GlobalAveragePool", [a], ["g"]),
        helper.make_node("Add", [b, "g"], ["s"]),
        helper.make_node("AveragePool", ["s"], ["l"], kernel_shape=[3, 3], strides=[2, 2],
                         ceil_mode=1, count_include_pad=1)]
    n3, c = _conv("c", "l", 16, 8, 1, rng, weights, relu=False)
    model = _model(nodes + n3 + [helper.make_node("Identity", [c], ["y"])], weights,
                   [1, 3, 14, 14])
    sess = _check(model, rng.standard_normal((1, 3, 14, 14)).astype(np.float32))
    (chain,) = _chains(sess)
    (program,) = chain.kernel.programs.values()
    assert sorted(s[1].kind for s in program.steps if s[0] == "host") == ["add", "avgpool"]


@pytest.mark.parametrize("k", [1, 3])
def test_dense_blocks_keep_their_batch_norms_in_the_chain(k):
    # DenseNet's layer: BatchNormalization + Relu (its scale folded into the next conv,
    # which leaves max(x, c) before a 1x1 conv, max(x - c, 0) before a 3x3) -> conv ->
    # conv -> Concat with the layer's input
    rng = np.random.default_rng(18 + k)
    weights = {}
    n1, stem = _conv("stem", "x", 3, 32, 3, rng, weights)
    nodes = list(n1)
    x_in = stem
    for layer in range(2):
        c = 32 + 16 * layer
        p = f"l{layer}"
        weights[p + "_s"] = rng.uniform(0.5, 1.5, c).astype(np.float32)
        weights[p + "_o"] = rng.standard_normal(c).astype(np.float32) * 0.3
        weights[p + "_m"] = rng.standard_normal(c).astype(np.float32) * 0.2
        weights[p + "_v"] = rng.uniform(0.5, 2.0, c).astype(np.float32)
        nodes += [helper.make_node("BatchNormalization", [x_in, p + "_s", p + "_o",
                                                          p + "_m", p + "_v"], [p + "_bn"]),
                  helper.make_node("Relu", [p + "_bn"], [p + "_br"])]
        n2, a = _conv(p + "_a", p + "_br", c, 32, k, rng, weights)
        n3, b = _conv(p + "_b", a, 32, 16, 3, rng, weights, relu=False)
        nodes += n2 + n3 + [helper.make_node("Concat", [x_in, b], [p + "_cat"], axis=1)]
        x_in = p + "_cat"
    model = _model(nodes + [helper.make_node("Identity", [x_in], ["y"])], weights,
                   [1, 3, 20, 20])
    sess = _check(model, rng.standard_normal((1, 3, 20, 20)).astype(np.float32),
                  rtol=1e-4, atol=1e-4)
    (chain,) = _chains(sess)
    assert [m.node.op_type for m in chain.kernel.members].count("BatchNormalization") == 2
    assert all(chain.kernel.programs.values())


@pytest.mark.parametrize("per_group,chained", [(32, True), (8, False)])
def test_grouped_convs_join_with_whole_channel_blocks(per_group, chained):
    rng = np.random.default_rng(19)
    weights = {}
    n1, a = _conv("a", "x", 3, 2 * per_group, 3, rng, weights)
    weights["g_w"] = (rng.standard_normal((2 * per_group, per_group, 3, 3))
                      / np.sqrt(9 * per_group)).astype(np.float32)
    nodes = n1 + [helper.make_node("Conv", [a, "g_w"], ["g"], group=2, pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["g"], ["g_r"])]
    n2, c = _conv("c", "g_r", 2 * per_group, 16, 1, rng, weights, relu=False)
    model = _model(nodes + n2 + [helper.make_node("Identity", [c], ["y"])], weights,
                   [1, 3, 15, 15])
    sess = _check(model, rng.standard_normal((1, 3, 15, 15)).astype(np.float32))
    members = [m for ch in _chains(sess) for m in ch.kernel.members]
    assert any(m.attrs.get("group") == 2 for m in members) == chained


@pytest.mark.parametrize("fetch_mask", [False, True])
def test_an_inference_dropout_with_a_ratio_and_a_mask_joins_unless_its_mask_is_read(
        fetch_mask):
    rng = np.random.default_rng(20)
    weights = {"ratio": np.array(0.5, np.float32)}
    n1, a = _conv("a", "x", 3, 16, 3, rng, weights)
    nodes = n1 + [helper.make_node("Dropout", [a, "ratio"], ["d", "mask"])]
    n2, b = _conv("b", "d", 16, 16, 1, rng, weights, relu=False)
    outputs = ("y", "mask") if fetch_mask else ("y",)
    model = _model(nodes + n2 + [helper.make_node("Identity", [b], ["y"])], weights,
                   [1, 3, 12, 12], outputs)
    if fetch_mask:
        model.graph.output[1].type.tensor_type.elem_type = TensorProto.BOOL
    x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
    sess = og.Session(from_onnx(model))
    got = sess.run(list(outputs), {"x": x})
    want = _ort(model, {"x": x}, outputs)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)
    if fetch_mask:
        np.testing.assert_array_equal(got[1], want[1])
    assert len(_chains(sess)) == (0 if fetch_mask else 1)
