"""og.image.ssim, sobel_edges and ssim_multiscale of images whose every dim, the
channel count included, only the run knows (TF1 tiles its kernels with the run-time
channel count): TensorFlow's recorded cases with all image dims hidden while building
(values and gradients), the ONNX export fed two channel counts, and the errors that
remain for an unknown rank."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError
from onegraph.train import image_more  # noqa: F401  (puts ssim_multiscale in og.image)

from . import tf1_reference
from .tf1_imageextra_cases import CASES as EXTRA_CASES
from .tf1_imagemore_cases import CASES as MORE_CASES

_MORE = [c for c in MORE_CASES if c[1] in ("image.ssim", "image.sobel_edges")]
_MSSSIM = [c for c in EXTRA_CASES if c[1] == "image.ssim_multiscale"]


@pytest.fixture(scope="module")
def more():
    return tf1_reference.load("imagemore")


@pytest.fixture(scope="module")
def extra():
    return tf1_reference.load("imageextra")


@pytest.mark.parametrize("case", _MORE, ids=[c[0] for c in _MORE])
def test_ssim_and_sobel_edges_of_run_time_channels_match_tensorflow(more, case):
    """TF's ssim / sobel_edges cases, batch, height, width and channels unknown while
    building: TF's values and gradients (tolerances as test_image_more's)."""
    tf1_reference.check_case(more, case, rtol=1e-5, atol=1e-5,
                             hidden_dims=tf1_reference.hidden_axes(more, case))


@pytest.mark.parametrize("case", _MSSSIM, ids=[c[0] for c in _MSSSIM])
def test_ssim_multiscale_of_run_time_channels_matches_tensorflow(extra, case):
    """TF's MS-SSIM cases (a 3-D pair and odd sizes among them) with every dim unknown
    while building: TF's values and gradients (tolerances as test_image_extra's)."""
    tf1_reference.check_case(extra, case, rtol=1e-5, atol=1e-5,
                             hidden_dims=tf1_reference.hidden_axes(extra, case))


def _twice(a: np.ndarray) -> np.ndarray:
    """a with its channels repeated: twice the channels, each SSIM term unchanged."""
    return np.concatenate([a, a], axis=-1)


def _exported(build, inputs: int):
    """An onnxruntime session of og's graph of build(*images), the images float32
    placeholders "a", "b" with all four dims unknown; run(*arrays) gives its output."""
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime checks the export")
    from onegraph.convert import to_onnx

    g = og.Graph()
    with g.as_default():
        holders = {k: og.placeholder(og.float32, [None] * 4, name=k) for k in "ab"[:inputs]}
        out = build(*holders.values())
        proto = to_onnx(g, signatures={"serving": og.signature(holders, {"out": out})})
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return lambda *arrays: sess.run(["out"], dict(zip("ab", arrays)))[0]


def _close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)


def test_ssim_of_run_time_channels_exports_and_runs_in_onnxruntime(more):
    """Fed 3 and 6 channels. Oracle: TF's recorded value; with the channels repeated
    the mean over channels is TF's value again."""
    run = _exported(lambda a, b: og.image.ssim(a, b, 1.0), 2)
    big, noisy = more["in/big"], more["in/big_noisy"]      # 3 channels
    _close(run(big, noisy), more["out/ssim"], "3 channels")
    _close(run(_twice(big), _twice(noisy)), more["out/ssim"], "6 channels")


def test_sobel_edges_of_run_time_channels_exports_and_runs_in_onnxruntime(more):
    """Fed TF's 3-channel and 1-channel images: TF's recorded edges."""
    run = _exported(og.image.sobel_edges, 1)
    _close(run(more["in/rgb"]), more["out/sobel_edges"], "3 channels")
    _close(run(more["in/grey4"]), more["out/sobel_edges_grey"], "1 channel")


def test_ssim_multiscale_of_run_time_channels_exports_and_runs_in_onnxruntime(extra):
    """TF's ssim_multiscale_3 case fed with 3 and (repeated) 6 channels: TF's value."""
    run = _exported(lambda a, b: og.image.ssim_multiscale(
        a, b, 1.0, power_factors=(0.2, 0.3, 0.5), filter_size=7), 2)
    ms_a, ms_b = extra["in/ms_a"], extra["in/ms_b"]         # 3 channels, odd height
    _close(run(ms_a, ms_b), extra["out/ssim_multiscale_3"], "3 channels")
    _close(run(_twice(ms_a), _twice(ms_b)), extra["out/ssim_multiscale_3"], "6 channels")


def test_sobel_edges_of_one_and_three_run_time_channels_in_one_graph(more):
    """The same session graph fed TF's 3-channel and 1-channel images."""
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [None] * 4)
        edges = og.image.sobel_edges(p)
        assert edges.shape is not None and len(edges.shape) == 5
        sess = og.Session(g)
        for key, name in (("rgb", "sobel_edges"), ("grey4", "sobel_edges_grey")):
            np.testing.assert_allclose(sess.run(edges, {p: more[f"in/{key}"]}),
                                       more[f"out/{name}"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("build, message", [
    (lambda x: og.image.ssim(x, x, 1.0), "ssim: images must be at least 3-D .* unknown rank"),
    (lambda x: og.image.ssim_multiscale(x, x, 1.0),
     "ssim_multiscale: images must be at least 3-D .* unknown rank"),
    (lambda x: og.image.sobel_edges(x), "sobel_edges: images must be 4-D, got an unknown"),
])
def test_an_unknown_rank_is_still_refused(build, message):
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match=message):
            build(og.placeholder(og.float32))


@pytest.mark.parametrize("build, shape, message", [
    (lambda x: og.image.ssim(x, x, 1.0), [4, 4], "ssim: images need rank >= 3"),
    (lambda x: og.image.sobel_edges(x), [2, 4, 4], "sobel_edges: images must be 4-D"),
])
def test_a_known_rank_too_small_is_still_refused(build, shape, message):
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match=message):
            build(og.placeholder(og.float32, shape))


@pytest.mark.parametrize("lead", [(), (1, 2)], ids=["3-D", "5-D"])
def test_ssim_of_run_time_channels_keeps_the_leading_dims(more, lead):
    """TF's ssim and ssim_map cases on single images and on a [1, 2, ...] batch, every
    dim unknown while building: TF's values, one per image (map)."""
    for name, kwargs in (("ssim", {}),
                         ("ssim_map", {"filter_size": 5, "k1": 0.02, "k2": 0.05,
                                       "return_index_map": True})):
        want = more[f"out/{name}"]
        g = og.Graph()
        with g.as_default():
            pa = og.placeholder(og.float32, [None] * (3 + len(lead)))
            pb = og.placeholder(og.float32, [None] * (3 + len(lead)))
            out = og.image.ssim(pa, pb, 1.0, **kwargs)
            sess = og.Session(g)
            if lead:
                feeds = {pa: more["in/big"].reshape(lead + more["in/big"].shape[1:]),
                         pb: more["in/big_noisy"].reshape(lead + more["in/big"].shape[1:])}
                np.testing.assert_allclose(sess.run(out, feeds),
                                           want.reshape(lead + want.shape[1:]),
                                           rtol=1e-5, atol=1e-5, err_msg=name)
            for i in range(0 if lead else 2):
                got = sess.run(out, {pa: more["in/big"][i], pb: more["in/big_noisy"][i]})
                np.testing.assert_allclose(got, want[i], rtol=1e-5, atol=1e-5, err_msg=name)


def test_ssim_of_run_time_channels_checks_the_size_at_run_time():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None] * 4)
        y = og.image.ssim(x, x, 1.0, filter_size=7)
        with pytest.raises(ExecutionError, match="filter_size 7"):
            og.Session(g).run(y, {x: np.zeros((2, 5, 9, 4), np.float32)})
