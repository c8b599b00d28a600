"""ops/onednn.py: 2-D float32 convs through oneDNN, as the Session's fused Conv calls
them, against onnxruntime (weight cache, Relu, `out=` a Concat slice, batch 2, pads on
each side, strides, dilations, SAME padding); inf and NaN reaching the same outputs as
in onnxruntime; threads sharing one plan; new weights, too many input shapes and
declined implementations; and the backend choice. The oneDNN tests are skipped where
libdnnl does not load (the `onednn` extra is Linux x86-64 only)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from onegraph.errors import InvalidArgumentError
from onegraph.ops import conv, onednn
from onegraph.ops import get_op

from ..backends import needs_backend
from ..threads import run_together
from .test_conv_fast_paths import _assert_matches_ort, _fused_conv

pytest.importorskip("onnxruntime")

CASES = [
    ((1, 3, 33, 33), (8, 3, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),   # stem
    ((1, 3, 40, 36), (16, 3, 7, 7), dict(pads=[3, 3, 3, 3], strides=[2, 2])),  # 7x7 stem
    ((2, 16, 13, 13), (24, 16, 3, 3), dict(pads=[1, 1, 1, 1])),                # batch 2
    ((1, 20, 15, 15), (17, 20, 3, 3), dict(pads=[2, 2, 2, 2], dilations=[2, 2])),
    ((1, 8, 12, 10), (12, 8, 3, 3), dict(pads=[0, 1, 2, 0])),                  # asymmetric
    ((1, 16, 11, 11), (32, 16, 5, 5), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    ((2, 12, 9, 14), (20, 12, 1, 3), dict(pads=[0, 1, 0, 1])),                 # 1x3
    ((1, 5, 4, 4), (3, 5, 3, 3), {}),                                          # no pads
]


needs_onednn = needs_backend(onednn, "onednn", "oneDNN (the onednn extra)")


def _plans(cache):
    return [p for p in cache.get("onednn", {}).values() if p is not False]


@needs_onednn
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fused", ["cache", "cache+relu", "out+relu"])
def test_onednn_conv_matches_onnxruntime(case, bias, fused, with_onednn):
    xs, ws, attrs = case
    rng = np.random.default_rng(5)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32) if bias else None
    got, cache = _fused_conv(x, w, b, attrs, fused)
    plans = _plans(cache)
    assert plans, "oneDNN did not take the conv"
    assert not plans[0].implementation.startswith(onednn._SLOW_IMPLEMENTATIONS)
    _assert_matches_ort(got, x, w, b, attrs, fused.endswith("relu"))


@needs_onednn
def test_non_finite_inputs_reach_the_outputs_onnxruntime_gives(with_onednn):
    """inf and NaN in the image: the outputs whose windows hold them are inf or NaN
    exactly where onnxruntime's are."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 16, 12, 12)).astype(np.float32)
    x[0, 3, 2, 5] = np.nan
    x[0, 7, 9, 1] = np.inf
    x[0, 7, 9, 9] = -np.inf
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    attrs = dict(pads=[1, 1, 1, 1])
    got, cache = _fused_conv(x, w, b, attrs, "cache")
    assert _plans(cache)
    from .test_conv_fast_paths import _ort_conv
    want = _ort_conv(x, w, b, attrs)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    assert np.isnan(got).any() and np.isinf(got).any()
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4, atol=1e-3)


@needs_onednn
def test_a_fused_relu_keeps_nan_as_onnxruntime_does(with_onednn):
    """oneDNN's Relu post-op gives 0 for NaN; a conv + Relu whose input holds NaN or
    inf takes conv.py's paths, which keep it."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 16, 12, 12)).astype(np.float32)
    x[0, 3, 2, 5] = np.nan
    x[0, 7, 9, 1] = np.inf
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    attrs = dict(pads=[1, 1, 1, 1])
    got, cache = _fused_conv(x, w, None, attrs, "cache+relu")
    assert not _plans(cache)
    from .test_conv_fast_paths import _ort_conv
    want = np.maximum(_ort_conv(x, w, None, attrs), 0)
    assert np.isnan(want).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4, atol=1e-3)
    # finite inputs take oneDNN's plan again
    got, cache = _fused_conv(np.nan_to_num(x, posinf=0.0), w, None, attrs, "cache+relu")
    assert _plans(cache)


def _resolved(attrs):
    return get_op("Conv").resolve_attrs(attrs, num_outputs=1)


@needs_onednn
def test_threads_sharing_a_plan_get_their_own_results(with_onednn):
    """Threads running one node's plan at once (a Session shared by threads): each has
    its own stream, scratchpad and blocked buffers."""
    rng = np.random.default_rng(2)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    attrs = _resolved(dict(pads=[1, 1, 1, 1]))
    cache: dict = {}
    images = [rng.standard_normal((1, 16, 20, 20)).astype(np.float32) for _ in range(4)]
    want = [conv.conv_nd(x, w, b, attrs, cache) for x in images]
    assert _plans(cache)
    onednn.use_backend("numpy")
    oracle = [conv.conv_nd(x, w, b, attrs) for x in images]
    onednn.use_backend("onednn")
    for got, ref in zip(want, oracle):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    wrong = []

    def work(k):
        for _ in range(30):
            y = conv.conv_nd(images[k], w, b, attrs, cache)
            if not np.array_equal(y, want[k]):
                wrong.append(k)

    assert run_together(work, 4) == []
    assert wrong == []


@needs_onednn
def test_other_weights_make_another_plan(with_onednn):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 8, 10, 10)).astype(np.float32)
    attrs = _resolved(dict(pads=[1, 1, 1, 1]))
    cache: dict = {}
    for seed in range(2):
        w = np.random.default_rng(seed).standard_normal((12, 8, 3, 3)).astype(np.float32)
        got = conv.conv_nd(x, w, None, attrs, cache)
        assert _plans(cache)[0].w is w
        _assert_matches_ort(got, x, w, None, dict(pads=[1, 1, 1, 1]), False)


@needs_onednn
def test_input_shapes_past_the_limit_run_on_the_own_paths(with_onednn):
    """A node fed ever new image sizes keeps at most _PLANS_PER_CONV plans; the sizes
    past that still give the right result."""
    rng = np.random.default_rng(6)
    w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    attrs = dict(pads=[1, 1, 1, 1], strides=[2, 2])
    cache: dict = {}
    for size in range(9, 9 + onednn._PLANS_PER_CONV + 3):
        x = rng.standard_normal((1, 4, size, size)).astype(np.float32)
        got = conv.conv_nd(x, w, None, _resolved(attrs), cache)
        _assert_matches_ort(got, x, w, None, attrs, False)
    assert len(cache["onednn"]) == onednn._PLANS_PER_CONV


@needs_onednn
def test_declined_implementations_leave_the_conv_to_the_own_paths(with_onednn,
                                                                  monkeypatch):
    """A conv oneDNN would run with a slow fallback (here: every implementation counted
    slow) runs on conv.py's paths, and oneDNN is not asked again for that shape."""
    monkeypatch.setattr(onednn, "_SLOW_IMPLEMENTATIONS", ("",))
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 3, 17, 17)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    attrs = dict(pads=[1, 1, 1, 1], strides=[2, 2])
    cache: dict = {}
    for _ in range(2):
        got = conv.conv_nd(x, w, None, _resolved(attrs), cache, relu=True)
        _assert_matches_ort(got, x, w, None, attrs, True)
    assert list(cache["onednn"].values()) == [False]


def test_the_rule_sends_stems_and_small_images_but_not_wide_winograd_convs():
    pays = conv._onednn_pays
    assert pays(3, 64, 1, [7, 7], [2, 2], [1, 1], [112, 112])
    assert pays(16, 64, 1, [3, 3], [1, 1], [1, 1], [55, 55])
    assert pays(512, 512, 1, [3, 3], [1, 1], [1, 1], [7, 7])
    assert not pays(256, 256, 1, [3, 3], [1, 1], [1, 1], [56, 56])
    assert not pays(512, 1000, 1, [1, 1], [1, 1], [1, 1], [13, 13])   # 1x1: a GEMM
    assert not pays(112, 112, 112, [3, 3], [2, 2], [1, 1], [28, 28])  # depthwise


@pytest.mark.parametrize("value", ["bogus", "mkl"])
def test_use_backend_refuses_unknown_names(value):
    try:
        with pytest.raises(InvalidArgumentError, match="auto, numpy, onednn"):
            onednn.use_backend(value)
    finally:
        onednn._reset_for_tests()


def _run_python(code, **env):
    import os
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=120)


def test_environment_chooses_the_backend():
    code = """
        from onegraph.errors import UnavailableError, InvalidArgumentError
        from onegraph.ops import onednn
        try:
            print(onednn.backend())
        except (UnavailableError, InvalidArgumentError) as e:
            print(type(e).__name__, e)
    """
    assert _run_python(code, ONEGRAPH_DNNL="numpy").stdout.strip() == "numpy"
    out = _run_python(code, ONEGRAPH_DNNL="onednn",
                      ONEGRAPH_DNNL_LIBRARY="/nonexistent/libdnnl.so.3").stdout
    assert out.startswith("UnavailableError") and "'onednn' extra" in out
    out = _run_python(code, ONEGRAPH_DNNL="fast").stdout
    assert out.startswith("InvalidArgumentError") and "ONEGRAPH_DNNL='fast'" in out
    # auto without a loadable library: conv.py's own paths, no error
    assert _run_python(code, ONEGRAPH_DNNL_LIBRARY="/nonexistent/libdnnl.so.3"
                       ).stdout.strip() == "numpy"


def _ort_output(model, x):
    """onnxruntime's first output of `model` for input x."""
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _record_conv_2d(monkeypatch) -> list:
    """The list of what each onednn.conv_2d call returns (True: oneDNN ran it)."""
    done = []
    real = onednn.conv_2d

    def recording(*args):
        done.append(real(*args))
        return done[-1]

    monkeypatch.setattr(onednn, "conv_2d", recording)
    return done


@needs_onednn
def test_session_runs_a_conv_net_through_onednn_like_onnxruntime(dnnl_backend,
                                                                  monkeypatch):
    """A small conv net (stem, 3x3 convs, Concat of two branches, pool, classifier) in
    the Session under both backends against onnxruntime."""
    from onnx import TensorProto, helper, numpy_helper

    import onegraph
    from onegraph.convert import from_onnx

    rng = np.random.default_rng(9)

    def init(name, shape):
        scale = np.sqrt(2.0 / np.prod(shape[1:])) if len(shape) > 1 else 0.1
        return numpy_helper.from_array((rng.standard_normal(shape) * scale)
                                       .astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r0", "w2", "b2"], ["c2"]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Concat", ["r1", "r2"], ["cat"], axis=1),
        helper.make_node("Conv", ["cat", "w3", "b3"], ["c3"], pads=[2, 2, 2, 2],
                         dilations=[2, 2]),
        helper.make_node("GlobalAveragePool", ["c3"], ["y"]),
    ]
    inits = [init("w0", (16, 3, 3, 3)), init("b0", (16,)), init("w1", (24, 16, 3, 3)),
             init("b1", (24,)), init("w2", (8, 16, 1, 1)), init("b2", (8,)),
             init("w3", (10, 32, 3, 3)), init("b3", (10,))]
    graph = helper.make_graph(
        nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    want = _ort_output(model, x)
    done = _record_conv_2d(monkeypatch)
    session = onegraph.Session(from_onnx(model))
    for _ in range(2):
        got = session.run("y", {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    (plan,) = session._plans.values()
    if dnnl_backend == "onednn":
        # the net is one oneDNN chain (train/onednn_chains.py), no conv on its own
        (chain,) = plan.steps
        assert chain.node.op_type == "OneDnnChain" and all(chain.kernel.programs.values())
        assert done == []
    else:
        assert done.count(True) == 0


@needs_onednn
def test_single_convs_of_a_session_run_through_onednn(monkeypatch):
    """Convs outside chains (one conv between other ops) take oneDNN's plan per conv
    where the rule says it pays: the stem yes, the 1x1 no."""
    from onnx import TensorProto, helper, numpy_helper

    import onegraph
    from onegraph.convert import from_onnx

    onednn.use_backend("onednn")
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32),
                                     name) for name, shape in
             (("w0", (16, 3, 3, 3)), ("w1", (8, 16, 1, 1)))]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("Sigmoid", ["c0"], ["s"]),
         helper.make_node("Conv", ["s", "w1"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    want = _ort_output(model, x)
    done = _record_conv_2d(monkeypatch)
    session = onegraph.Session(from_onnx(model))
    try:
        for _ in range(2):
            np.testing.assert_allclose(session.run("y", {"x": x}), want, rtol=1e-4,
                                       atol=1e-5)
    finally:
        onednn._reset_for_tests()
    assert done == [True, True]


@needs_onednn
def test_a_process_forked_after_onednn_ran_on_threads_runs_the_own_paths():
    """GNU OpenMP's thread pool does not survive fork: a child forked after a oneDNN
    conv ran on two threads used to hang in its first conv. It now runs conv.py's
    own paths (the backend reads "numpy" there) and gives the parent's result."""
    code = """
        import multiprocessing as mp
        import numpy as np
        from onegraph.ops import conv, get_op, onednn
        attrs = get_op("Conv").resolve_attrs(dict(pads=[1, 1, 1, 1]), num_outputs=1)
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, 16, 40, 40)).astype(np.float32)
        w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
        cache = {}
        y = conv.conv_nd(x, w, None, attrs, cache)
        assert any(p is not False for p in cache["onednn"].values())

        def child(q):
            q.put((onednn.backend(), float(np.abs(conv.conv_nd(x, w, None, attrs, cache)
                                                   - y).max())))

        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        p.join(60)
        if p.is_alive():
            p.kill()
            print("hung")
        else:
            name, diff = q.get(timeout=5)
            print(name, diff < 1e-3 * float(np.abs(y).max()), onednn.backend())
    """
    result = _run_python(code, OMP_NUM_THREADS="2")
    assert result.stdout.strip() == "numpy True onednn", result.stdout + result.stderr
