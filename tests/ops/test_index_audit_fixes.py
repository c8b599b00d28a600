"""Fixes from the audit of the reduction, indexing and shape kernels against
onnxruntime and ONNX's reference evaluator (about 20,000 one-node models).

- GatherND with a batch dim of 0 gives the empty result (it failed in a reshape).
- An Einsum equation with stray dots ("i.j", "....") is refused while importing: onnx's
  shape inference looped forever on it. An empty equation is a ShapeError.
- Resize linear/cubic onto a very long axis gathers instead of building a dense
  (out, in) matrix of gigabytes; Pad's opposite huge pads cancel without being
  materialised; OneHot of no indices and a huge depth allocates nothing.
- Trilu takes a one-element 1-D k (as onnxruntime); Reshape's 0 beyond the input's
  rank, OneHot's infinite depth, Range's infinite length, Squeeze's repeated axis and
  Pad of a scalar are named errors or results, not Python internals.
"""

import os
import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import ConversionError, ShapeError  # noqa: E402
from onegraph.train.session import Session  # noqa: E402

_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}


def _model(op, feeds, consts=None, **attrs):
    consts = consts or {}
    node = helper.make_node(op, list(feeds) + list(consts), ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, _TYPES[a.dtype], a.shape) for n, a in feeds.items()],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                             ir_version=10)


def _run(op, feeds, consts=None, **attrs):
    return Session(from_onnx(_model(op, feeds, consts, **attrs))).run(["y"], feeds)[0]


def _ort(op, feeds, consts=None, **attrs):
    model = _model(op, feeds, consts, **attrs)
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]


@pytest.mark.parametrize("x_shape, i_shape, batch_dims, want", [
    ((0, 2, 3), (0, 1), 1, (0, 3)), ((2, 0, 4), (2, 0, 1), 2, (2, 0))])
def test_gather_nd_over_an_empty_batch(x_shape, i_shape, batch_dims, want):
    feeds = {"x": np.zeros(x_shape, np.float32), "i": np.zeros(i_shape, np.int64)}
    got = _run("GatherND", feeds, batch_dims=batch_dims)
    assert got.shape == want == _ort("GatherND", feeds, batch_dims=batch_dims).shape


@pytest.mark.timeout(60)
@pytest.mark.parametrize("equation", ["i.j", "i..j->i", "......->", "...."])
def test_einsum_with_stray_dots_is_refused_before_onnx_inference(equation):
    # onnx's C++ inference never returns on these: a hang would hit the timeout
    model = _model("Einsum", {"x": np.ones((2, 3), np.float32)}, equation=equation)
    with pytest.raises(ConversionError, match="is malformed"):
        from_onnx(model)


def test_einsum_without_labels_for_an_input_is_a_shape_error():
    with pytest.raises(ShapeError, match="names 0 dims"):
        _run("Einsum", {"x": np.ones(3, np.float32)}, equation="")


_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _peak_rss_mib(code: str) -> float:
    """Run `code` (which may use np, _run) in a fresh interpreter; its peak RSS."""
    script = textwrap.dedent(f"""
        import resource, numpy as np
        from onnx import TensorProto, helper, numpy_helper
        from tests.ops.test_index_audit_fixes import _run
        {code}
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """)
    # the child imports tests.ops.*: run it from the repository root so that works
    # whatever directory pytest was started from
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True, cwd=_REPO)
    return int(out.stdout.split()[-1]) / 1024


@pytest.mark.parametrize("code", [
    # 500 -> 400,000 linear: the dense matrix alone would be 1.6 GB
    "y = _run('Resize', {'x': np.ones((1, 500), np.float32)}, "
    "{'roi': np.zeros(0, np.float32), 'scales': np.asarray([1, 800], np.float32)}, "
    "mode='linear'); assert y.shape == (1, 400000)",
    # pads of -2**40 and +2**40 cancel: a (2, 3) result
    "y = _run('Pad', {'x': np.ones((2, 3), np.float32)}, "
    "{'pads': np.asarray([-2**40, 0, 2**40, 0], np.int64)}); "
    "assert y.shape == (2, 3) and not y.any()",
    # no indices, depth 1e9: an empty (0, 1e9) result
    "y = _run('OneHot', {'i': np.zeros(0, np.int64)}, "
    "{'depth': np.asarray(10**9, np.int64), 'v': np.asarray([0, 1], np.float32)}); "
    "assert y.shape == (0, 10**9)",
], ids=["resize_long_axis", "pad_cancelling", "one_hot_empty"])
def test_large_but_cheap_results_stay_small_in_memory(code):
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert _peak_rss_mib(code) < max(600, baseline * 2)


def test_resize_onto_a_long_axis_matches_onnxruntime():
    feeds = {"x": np.random.RandomState(0).rand(1, 300).astype(np.float32)}
    consts = {"roi": np.zeros(0, np.float32), "scales": np.asarray([1, 50], np.float32)}
    got = _run("Resize", feeds, consts, mode="linear")
    # onnxruntime maps coordinates in float32: ~1e-5 off this far along the axis
    np.testing.assert_allclose(got, _ort("Resize", feeds, consts, mode="linear"),
                               atol=5e-5)


def test_trilu_takes_a_one_element_k_and_names_a_bad_one():
    x = {"x": np.arange(12, dtype=np.float32).reshape(3, 4)}
    got = _run("Trilu", x, {"k": np.asarray([1], np.int64)})
    np.testing.assert_array_equal(got, np.triu(x["x"], 1))
    with pytest.raises(ShapeError, match="k must be an integer scalar"):
        _run("Trilu", x, {"k": np.asarray([1, 2], np.int64)})


@pytest.mark.parametrize("op, feeds, consts, attrs, message", [
    ("Reshape", {"x": np.asarray(4.0, np.float32)}, {"s": np.asarray([0], np.int64)}, {},
     "copies input dim 0"),
    ("OneHot", {"i": np.asarray([1], np.int64)},
     {"d": np.asarray(np.inf, np.float32), "v": np.asarray([0, 1], np.float32)}, {},
     "depth must be a finite number"),
    ("Range", {"s": np.asarray(0.0, np.float32)},
     {"l": np.asarray(np.inf, np.float32), "d": np.asarray(1.0, np.float32)}, {},
     "no finite length"),
    ("Squeeze", {"x": np.zeros((2, 1), np.float32)}, {"a": np.asarray([1, -1], np.int64)},
     {}, "name an axis twice"),
])
def test_bad_values_are_named_shape_errors(op, feeds, consts, attrs, message):
    with pytest.raises(ShapeError, match=message):
        _run(op, feeds, consts, **attrs)


def test_pad_of_a_scalar_is_the_scalar():
    got = _run("Pad", {"x": np.asarray(4.0, np.float32)}, {"p": np.zeros(0, np.int64)},
               mode="edge")
    assert got.shape == () and got == 4.0
