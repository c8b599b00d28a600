"""og.zeros / og.ones: small fills are constants, large ones ConstantOfShape nodes (as
TF's tf.zeros builds a Fill), which hold only the shape in the graph and its file."""

import os
import time

import numpy as np
import pytest

import onegraph as og


@pytest.mark.parametrize("fn, value", [(og.zeros, 0), (og.ones, 1)])
@pytest.mark.parametrize("dtype", [og.float32, og.float64, og.int64, og.uint8, og.bool_])
def test_large_fill_is_a_node_with_the_right_values(fn, value, dtype):
    g = og.Graph()
    with g.as_default():
        t = fn([50, 40], dtype, name="fill")
        small = fn([3, 3], dtype)
    assert t.op is not None and t.op.type == "ConstantOfShape"
    assert small.op is None  # a plain constant below 1000 elements
    assert t.shape == (50, 40) and t.dtype == dtype
    sess = og.Session(g)
    got, got_small = sess.run([t, small])
    np.testing.assert_array_equal(got, np.full((50, 40), value, dtype.numpy))
    np.testing.assert_array_equal(got_small, np.full((3, 3), value, dtype.numpy))
    assert got.dtype == dtype.numpy


def test_large_fill_costs_no_memory_or_file_space(tmp_path):
    g = og.Graph()
    with g.as_default():
        start = time.perf_counter()
        huge = og.zeros([2 ** 34], og.uint8)          # 16 GiB if it were made now
        built = time.perf_counter() - start
        x = og.placeholder(og.float32, [None, 1000], name="x")
        w = og.zeros([1000, 1000])                         # 4 MB as a constant
        y = og.identity(og.matmul(x, w) + og.ones([1000]), name="y")
    assert huge.shape == (2 ** 34,) and built < 1.0
    path = str(tmp_path / "m.og")
    og.save(g, path, signatures={"serving": og.signature({"x": x}, {"y": y})})
    assert os.path.getsize(path) < 100_000
    sess = og.Session(og.load(path))
    (out,) = sess.run(["y"], {"x": np.ones((2, 1000), np.float32)})
    np.testing.assert_array_equal(out, np.ones((2, 1000), np.float32))


def test_string_zeros_are_empty_strings_and_string_ones_are_refused():
    g = og.Graph()
    with g.as_default():
        s = og.zeros([1200], og.string)
        with pytest.raises(TypeError, match="ones: a string tensor has zeros"):
            og.ones([2], og.string)
    got = og.Session(g).run(s)
    assert got.shape == (1200,) and all(v == "" for v in got[:5])


def test_fills_of_types_older_opsets_cannot_fill_stay_constants():
    """ConstantOfShape takes bfloat16 only from opset 20: such a fill stays a constant,
    which exports at any opset."""
    from onegraph.convert import to_onnx

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.DType.BFLOAT16, [40, 30], name="x")
        z = og.zeros([40, 30], og.DType.BFLOAT16)
        y = og.identity(x + z, name="y")
    assert z.op is None
    proto = to_onnx(g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})}),
                    opset=13)
    assert "ConstantOfShape" not in {n.op_type for n in proto.graph.node}
