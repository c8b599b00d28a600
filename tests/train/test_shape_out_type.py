"""og.shape takes TF1's out_type (int64 by default here, onegraph's integer type; int32
on request, TF1's default), and the image ops take int32 scalar tensors as sizes and
offsets, as TF1's do (they used to meet int64 dims in a Sub and fail)."""

import numpy as np
import pytest

import onegraph as og


def _run(fetches, feeds):
    return og.Session(og.get_default_graph()).run(fetches, feeds)


def test_shape_out_type():
    x_v = np.zeros((3, 4, 5), np.float32)
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [None, 4, None])
        default, as32, as64 = og.shape(x), og.shape(x, out_type=og.int32), \
            og.shape(x, name="s64", out_type="int64")
        named = og.shape(x, name="dims", out_type=og.int32)
        assert default.dtype == og.int64 and as32.dtype == og.int32
        assert as64.dtype == og.int64 and as64.name.startswith("s64")
        assert named.name.startswith("dims")
        got = _run([default, as32, as64, named], {x: x_v})
    for v, dt in zip(got, (np.int64, np.int32, np.int64, np.int32)):
        assert v.dtype == dt
        np.testing.assert_array_equal(v, [3, 4, 5])


@pytest.mark.parametrize("out_type", [og.float32, og.int16, "uint8"])
def test_shape_refuses_other_out_types(out_type):
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [2])
        with pytest.raises(TypeError, match="shape: out_type must be int32 or int64"):
            og.shape(x, out_type=out_type)


def test_image_sizes_as_int32_tensors():
    x_v = np.random.default_rng(0).random((2, 6, 5, 3), dtype=np.float32)
    with og.Graph().as_default():
        p = og.placeholder(og.float32, [None, None, None, 3])
        dims = og.shape(p, out_type=og.int32)
        h, w = dims[1], dims[2]
        outs = [og.image.crop_to_bounding_box(p, h - 4, 1, 3, w - 2),
                og.image.pad_to_bounding_box(p, 1, w - 3, h + 2, w * 2),
                og.image.resize_image_with_crop_or_pad(p, h + 3, w - 2)]
        got = _run(outs, {p: x_v})
    np.testing.assert_array_equal(got[0], x_v[:, 2:5, 1:4])
    want = np.zeros((2, 8, 10, 3), np.float32)
    want[:, 1:7, 2:7] = x_v
    np.testing.assert_array_equal(got[1], want)
    want = np.zeros((2, 9, 3, 3), np.float32)
    want[:, 1:7] = x_v[:, :, 1:4]
    np.testing.assert_array_equal(got[2], want)


def test_split_sizes_as_a_tensor():
    """TF1's tf.split takes the sizes as a 1-D integer tensor: the part count is its
    static length, or `num` when that is unknown; the sizes are checked at run time."""
    x_v = np.arange(12, dtype=np.float32).reshape(3, 4)
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [None, 4])
        n = og.shape(x, out_type=og.int32)[0]
        first, rest = og.split(x, og.stack([1, n - 1]))
        s = og.placeholder(og.int32, [None])
        a, b = og.split(x, s, axis=1, num=2)
        assert a.shape == (None, None) and b.shape == (None, None)
        got = _run([first, rest, a, b], {x: x_v, s: np.array([3, 1], np.int32)})
        for g, w in zip(got, (x_v[:1], x_v[1:], x_v[:, :3], x_v[:, 3:])):
            np.testing.assert_array_equal(g, w)
        with pytest.raises(og.ShapeError, match="parts \\[2, 3\\] do not sum to 4"):
            _run([a, b], {x: x_v, s: np.array([2, 3], np.int32)})
        with pytest.raises(og.ShapeError, match="3 parts .* for the node's 2 output"):
            _run([a, b], {x: x_v, s: np.array([1, 1, 2], np.int32)})
        with pytest.raises(ValueError, match="length is unknown.* give num"):
            og.split(x, s)
        with pytest.raises(og.ShapeError, match="num is 3, but num_or_size_splits holds 2"):
            og.split(x, og.constant([1, 2]), num=3)
        with pytest.raises(og.ShapeError, match="must be 1-D, got shape \\[1, 2\\]"):
            og.split(x, og.constant([[1, 2]]))
