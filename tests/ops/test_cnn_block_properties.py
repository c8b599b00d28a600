"""Random small CNN blocks give the same float32 results in the Session as in onnxruntime.

Each example is an ONNX graph with constant weights (initializers), built with
`onnx.helper`:

    x -> [BatchNorm -> Relu] -> Conv -> [BatchNorm] -> [Mul / Add by constants] -> [Relu]
      -> [channel shuffle] -> [Concat with a second Conv on the same input, or with it]
      -> [MaxPool | AveragePool | GlobalAveragePool] with [1x1 Conv [-> Relu]] before
         or after it

Conv geometry (kernel 1..5, strides 1..3, dilations 1..2, explicit asymmetric pads or
auto_pad, dense / depthwise / grouped, bias or not) and the image and channel sizes
are drawn so that the Session's plan-time rewrites (`train/optimize.py`: BatchNorm and
Mul / Add folding, Relu fusion, BN-Relu-Conv scaling, bias forwarding into 1x1 convs,
channel-shuffle folding, AveragePool / 1x1 Conv swaps, Concat buffers written through
`conv_nd(out=)`, Relu past MaxPool) and the fast kernels behind them (`ops/conv.py`:
Winograd 3x3, channels-last im2col, GEMM-then-shift, 1x1 ones-row bias, grouped 1x1
shuffle, blocked im2col and grouped GEMMs; `ops/conv_depthwise.py`: the same-width,
rows and channels-last forms; `ops/pool.py`: flat, 3x3 and two-GEMM pools) get
reached; `PINNED` holds blocks for the paths that few random draws reach.

Every model runs twice on different inputs (the second run on the weight caches the
first one filled), and half of them a third time with another batch size; each result
is checked, and must not change through the later runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .random_graphs import GraphBuilder, ci_settings  # noqa: E402

MAX_CHANNELS = 48
MAX_IMAGE = 32


# --------------------------------------------------------------------------------------
# Geometry
# --------------------------------------------------------------------------------------


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _window_out(size, k, s, d, pb, pe):
    """Output length of a floor-mode sliding window over `size` padded by (pb, pe)."""
    return (size + pb + pe - (k - 1) * d - 1) // s + 1


def _conv_out(size, axis, conv):
    """Output length of `conv` (a drawn Conv spec) along spatial axis 0 or 1."""
    k, s, d = conv["kernel"][axis], conv["strides"][axis], conv["dilations"][axis]
    mode = conv.get("auto_pad", "NOTSET")
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        return -(-size // s)
    if mode == "VALID":
        return _window_out(size, k, s, d, 0, 0)
    return _window_out(size, k, s, d, conv["pads"][axis], conv["pads"][axis + 2])


# --------------------------------------------------------------------------------------
# Strategies: a block is plain data (shapes, attributes, a seed) so that a failing
# example prints as a readable reproduction
# --------------------------------------------------------------------------------------


@st.composite
def _main_conv(draw, c, focused):
    """(conv spec, smallest image height, smallest width) for the block's first Conv."""
    if focused:
        # Winograd needs C*M/(C+M) >= 20 (C and M around 40..48 here), so the top of
        # the range is drawn more often than a uniform draw would
        wide = st.one_of(st.integers(16, MAX_CHANNELS), st.sampled_from([40, 44, 48]))
        if draw(st.sampled_from(["3x3", "3x3", "3x3", "1x1"])) == "1x1":
            # ones-row bias path: M >= 2C
            m = draw(st.integers(2 * c, 2 * c + 16))
            return dict(m=m, group=1, kernel=[1, 1], strides=[1, 1], dilations=[1, 1],
                        pads=[0, 0, 0, 0], bias=draw(st.booleans())), 1, 1
        pads = draw(st.one_of(st.just([1, 1, 1, 1]), st.lists(st.integers(0, 2), min_size=4,
                                                                max_size=4)))
        return dict(m=draw(wide), group=1, kernel=[3, 3], strides=[1, 1],
                    dilations=[1, 1], pads=pads, bias=draw(st.booleans())), 3, 3

    kind = draw(st.sampled_from(["dense", "depthwise", "grouped"] if c > 1 else ["dense"]))
    if kind == "dense":
        # few outputs (M <= C/2) half the time: GEMM-then-shift
        group, m = 1, draw(st.one_of(st.integers(1, MAX_CHANNELS),
                                     st.integers(1, max(1, c // 2))))
    elif kind == "depthwise":
        group, m = c, c
    else:
        group = draw(st.sampled_from(_divisors(c)[1:]))
        m = group * draw(st.integers(1, max(1, MAX_CHANNELS // group)))
    # the shapes real networks use most, each with its own fast paths, or anything
    shape = draw(st.sampled_from(["any", "any", "3x3", "3x3/2", "1x1", "same"]))
    dilations = [1, 1]
    if shape == "3x3":
        kernel, strides = [3, 3], [1, 1]
    elif shape == "3x3/2":
        kernel, strides = [3, 3], [2, 2]
    elif shape == "1x1":
        kernel, strides = [1, 1], draw(st.sampled_from([[1, 1], [2, 2]]))
    elif shape == "same":
        k = draw(st.sampled_from([3, 5]))
        kernel, strides = [k, k], [1, 1]
    else:
        kernel = [draw(st.integers(1, 5)), draw(st.integers(1, 5))]
        strides = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
        if draw(st.integers(0, 2)) == 0:
            dilations = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    conv = dict(m=m, group=group, kernel=kernel, strides=strides, dilations=dilations,
                bias=draw(st.booleans()))
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if shape != "any":
        # centred pads ("same" size at stride 1)
        conv["pads"] = [(k - 1) // 2 for k in kernel] * 2
        return conv, 1, 1
    modes = ["NOTSET", "NOTSET", "NOTSET", "VALID"]
    if dilations == [1, 1]:
        # onnxruntime rejects auto_pad SAME_* with dilations ("Dilation not supported")
        modes += ["SAME_UPPER", "SAME_LOWER"]
    mode = draw(st.sampled_from(modes))
    if mode == "NOTSET":
        pads = [draw(st.integers(0, k - 1)) for k in kernel + kernel]
        conv["pads"] = pads
        # the smallest image whose output is not empty
        return conv, max(1, spans[0] - pads[0] - pads[2]), \
            max(1, spans[1] - pads[1] - pads[3])
    conv["auto_pad"] = mode
    if mode == "VALID":
        return conv, spans[0], spans[1]
    return conv, 1, 1


@st.composite
def _branch_conv(draw, h, w, ho, wo):
    """A Conv on an (h, w) image with an (ho, wo) output (kernel 1..3 per axis), or None
    when no such Conv exists."""
    options = []
    for size, out in ((h, ho), (w, wo)):
        fits = [(k, s, pb, pe) for k in (1, 2, 3) for s in (1, 2, 3)
                for pb in range(k) for pe in range(k)
                if _window_out(size, k, s, 1, pb, pe) == out]
        if not fits:
            return None
        options.append(fits)
    (kh, sh, th, bh), (kw, sw, tw, bw) = (draw(st.sampled_from(o)) for o in options)
    return dict(m=draw(st.integers(1, 32)), group=1, kernel=[kh, kw], strides=[sh, sw],
                dilations=[1, 1], pads=[th, tw, bh, bw], bias=draw(st.booleans()))


@st.composite
def _pool(draw, h, w):
    kind = draw(st.sampled_from(["MaxPool", "MaxPool", "AveragePool", "AveragePool",
                                 "GlobalAveragePool"]))
    if kind == "GlobalAveragePool":
        return dict(op=kind, attrs={})
    # the common pools (3x3 "same", 3x3/2 with and without pad, 2x2/2) have their own
    # kernels; pads < kernel keep every window on at least one input pixel (ONNX
    # leaves all-padding windows undefined for AveragePool)
    preset = draw(st.sampled_from(["any", "any", "3x3/1", "3x3/2", "3x3/2 pad", "2x2/2"]))
    if preset == "any":
        # windows up to the image size: the output is never empty
        kernel = [draw(st.integers(1, min(3, n))) for n in (h, w)]
        strides = [draw(st.integers(1, 3)) for _ in kernel]
        pads = [draw(st.integers(0, k - 1)) for k in kernel + kernel]
    else:
        kernel, strides, pad = {"3x3/1": ([3, 3], [1, 1], 1), "3x3/2": ([3, 3], [2, 2], 0),
                                "3x3/2 pad": ([3, 3], [2, 2], 1),
                                "2x2/2": ([2, 2], [2, 2], 0)}[preset]
        if min(h, w) + 2 * pad < kernel[0]:
            kernel = [1, 1]
        pads = [pad] * 4
    attrs = dict(kernel_shape=kernel, strides=strides)
    modes = ["NOTSET"] * 5 + ["VALID"]
    if all(s <= k for s, k in zip(strides, kernel)):
        # SAME_* pads then stay in [0, kernel); onnxruntime's pools reject the negative
        # total padding a stride above the kernel size can give ("padding values must
        # be non-negative") where Conv and the ONNX shape inference clamp it to 0
        modes += ["SAME_UPPER", "SAME_LOWER"]
    mode = draw(st.sampled_from(modes)) if preset == "any" else "NOTSET"
    if mode == "NOTSET":
        attrs["pads"] = pads
        if draw(st.integers(0, 3)) == 0:
            attrs["ceil_mode"] = 1
    else:
        attrs["auto_pad"] = mode
    if kind == "AveragePool" and draw(st.booleans()):
        attrs["count_include_pad"] = 1
    return dict(op=kind, attrs=attrs)


@st.composite
def cnn_blocks(draw, focused=False):
    """A block spec (see the module docstring); `focused`: the first Conv is a 3x3
    stride-1 or an expanding 1x1 one on 16..48 channels and 8..40-pixel images."""
    n = draw(st.integers(1, 2))
    if focused:
        c = draw(st.one_of(st.integers(16, MAX_CHANNELS), st.sampled_from([40, 44, 48])))
        # up to 40 pixels: Winograd runs in 16-row bands past 32 output rows, and past
        # 1024 output pixels im2col (in blocks of rows) takes over from channels-last
        size = st.one_of(st.integers(8, MAX_IMAGE), st.integers(20, 40))
    else:
        c = draw(st.integers(1, MAX_CHANNELS))
    conv, min_h, min_w = draw(_main_conv(c, focused))
    if focused:
        h = draw(size)
        w = draw(st.one_of(st.just(h), size))  # square images most of the time
    else:
        # larger images half the time: the depthwise forms and pool kernels switch
        # on the pixel count
        h, w = (draw(st.one_of(st.integers(lo, MAX_IMAGE),
                               st.integers(max(lo, 14), MAX_IMAGE)))
                for lo in (min_h, min_w))
    ho, wo = _conv_out(h, 0, conv), _conv_out(w, 1, conv)
    m = conv["m"]
    block = dict(x=(n, c, h, w), batch2=None, seed=draw(st.integers(0, 2**32 - 1)),
                 preact=draw(st.sampled_from([None] * 4 + ["positive", "mixed"])),
                 conv=conv, bn=draw(st.booleans()), affine=[],
                 relu=draw(st.booleans()), shuffle=None, concat=None, pool=None, tail=None)
    if draw(st.integers(0, 3)) == 0:
        # per-channel Mul / Add by constants (Caffe's Scale layers), folded into the
        # Conv with the BatchNorm; the constant shapes broadcast per channel or whole
        block["affine"] = draw(st.lists(
            st.tuples(st.sampled_from(["Mul", "Add"]),
                      st.sampled_from(["C11", "1C11", "1", "scalar"])),
            min_size=1, max_size=2))

    # a channel shuffle, after grouped convs mostly; in groups of the conv's own group
    # mostly too (ShuffleNet), which a grouped 1x1 conv writes straight into the
    # shuffled layout
    if m > 1 and draw(st.integers(0, 1 if conv["group"] > 1 else 4)) == 0:
        choices = _divisors(m)[1:]
        if conv["group"] > 1:
            choices = [conv["group"]] * len(choices) + choices
        g = draw(st.sampled_from(choices))
        block["shuffle"] = dict(g=g, form=draw(st.integers(0, 2)))

    channels = m
    concat = draw(st.sampled_from([None, None, "conv", "conv", "input"]))
    if concat == "input" and (ho, wo) == (h, w):
        block["concat"] = dict(kind="input", first=draw(st.booleans()))
        channels += c
    elif concat is not None:
        branch = draw(_branch_conv(h, w, ho, wo))
        if branch is not None:
            # `built_first`: the branch precedes the main Conv in the graph, so that it
            # is the one that allocates the Concat buffer
            block["concat"] = dict(kind="conv", first=draw(st.booleans()), conv=branch,
                                   relu=draw(st.booleans()),
                                   built_first=draw(st.booleans()))
            channels += branch["m"]

    if draw(st.booleans()):
        block["pool"] = draw(_pool(ho, wo))

    if draw(st.integers(0, 2)) == 0:
        group = draw(st.sampled_from([1, 1, 1] + [g for g in _divisors(channels)[1:]
                                                  if g <= 8]))
        # before the pool: a 1x1 Conv read by a strided AveragePool runs after it; after
        # the pool: an AveragePool read by a 1x1 Conv runs after the Conv's GEMM
        block["tail"] = dict(m=group * draw(st.integers(1, max(1, 64 // group))),
                             group=group, bias=draw(st.booleans()),
                             relu=draw(st.booleans()),
                             before_pool=block["pool"] is not None and draw(st.booleans()))

    # a symbolic batch dim and a third run with another batch size: the per-node
    # caches (geometry, Concat buffers, shuffle groups) are keyed by input shape.
    # Shuffle form 0 spells the batch size out, so it only takes the one it names.
    if draw(st.booleans()) and not (block["shuffle"] and block["shuffle"]["form"] == 0):
        block["batch2"] = draw(st.integers(1, 3))
    return block


# --------------------------------------------------------------------------------------
# Building and running the graph
# --------------------------------------------------------------------------------------


class _GraphBuilder(GraphBuilder):
    """CNN layers on top of the shared node/initializer bookkeeping."""

    def conv(self, x, c, spec):
        m, group, (kh, kw) = spec["m"], spec["group"], spec["kernel"]
        fan_in = c // group * kh * kw
        w = self.rng.standard_normal((m, c // group, kh, kw)) / np.sqrt(fan_in)
        inputs = [x, self.const(w)]
        if spec["bias"]:
            inputs.append(self.const(self.rng.standard_normal(m) * 0.5))
        attrs = dict(kernel_shape=spec["kernel"], strides=spec["strides"], group=group)
        if spec["dilations"] != [1, 1]:
            attrs["dilations"] = spec["dilations"]
        if "auto_pad" in spec:
            attrs["auto_pad"] = spec["auto_pad"]
        else:
            attrs["pads"] = spec["pads"]
        return self.add("Conv", inputs, **attrs)

    def pointwise(self, x, c, spec):
        """A 1x1 Conv (+ Relu)."""
        y = self.conv(x, c, dict(spec, kernel=[1, 1], strides=[1, 1], dilations=[1, 1],
                                 pads=[0, 0, 0, 0]))
        return self.add("Relu", [y]) if spec["relu"] else y

    def per_channel(self, x, op, c, form):
        """x * k or x + k, k a constant of shape (C, 1, 1), (1, C, 1, 1), (1,) or ()."""
        shape = {"C11": (c, 1, 1), "1C11": (1, c, 1, 1), "1": (1,), "scalar": ()}[form]
        k = self.rng.uniform(0.5, 1.5, shape) if op == "Mul" \
            else self.rng.normal(0, 0.5, shape)
        return self.add(op, [x, self.const(k)])

    def batchnorm(self, x, c, positive=False):
        """BatchNormalization with random parameters, the scale of either sign unless
        `positive`: BN-Relu-Conv moves a positive scale into the Conv only."""
        scale = self.rng.uniform(0.5, 1.5, c)
        if not positive:
            scale *= self.rng.choice([-1.0, 1.0], c)
        params = [scale, self.rng.normal(0, 0.5, c), self.rng.normal(0, 0.5, c),
                  self.rng.uniform(0.2, 2.0, c)]
        return self.add("BatchNormalization", [x] + [self.const(p) for p in params])

    def shuffle(self, x, n, m, g, ho, wo, form):
        """Reshape (N, g, M/g, H, W) -> Transpose (0, 2, 1, 3, 4) -> Reshape (N, M, H, W),
        the shapes written out or with the 0 / -1 placeholders exporters use."""
        first = [[n, g, m // g, ho, wo], [0, g, -1, ho, wo], [-1, g, m // g, ho, wo]][form]
        second = [[n, m, ho, wo], [0, -1, ho, wo], [0, m, ho, wo]][form]
        t = self.add("Reshape", [x, self.const(first, np.int64)])
        t = self.add("Transpose", [t], perm=[0, 2, 1, 3, 4])
        return self.add("Reshape", [t, self.const(second, np.int64)])


def _build_model(block):
    """The ONNX model of a block spec, and the name of its output."""
    n, c, h, w = block["x"]
    g = _GraphBuilder(np.random.default_rng(block["seed"]))
    x = "x"
    if block["preact"]:
        x = g.add("Relu", [g.batchnorm(x, c, block["preact"] == "positive")])
    concat = block["concat"]
    if concat and concat["kind"] == "conv" and concat["built_first"]:
        other = g.conv(x, c, concat["conv"])
    conv = block["conv"]
    y = g.conv(x, c, conv)
    m = conv["m"]
    if block["bn"]:
        y = g.batchnorm(y, m)
    for op, form in block["affine"]:
        y = g.per_channel(y, op, m, form)
    if block["relu"]:
        y = g.add("Relu", [y])
    if block["shuffle"]:
        ho, wo = _conv_out(h, 0, conv), _conv_out(w, 1, conv)
        y = g.shuffle(y, n, m, block["shuffle"]["g"], ho, wo, block["shuffle"]["form"])
    channels = m
    if concat:
        if concat["kind"] == "input":
            other = x
            channels += c
        else:
            if not concat["built_first"]:
                other = g.conv(x, c, concat["conv"])
            if concat["relu"]:
                other = g.add("Relu", [other])
            channels += concat["conv"]["m"]
        y = g.add("Concat", [y, other] if concat["first"] else [other, y], axis=1)
    pool, tail = block["pool"], block["tail"]
    if tail and tail["before_pool"]:
        y = g.pointwise(y, channels, tail)
    if pool:
        y = g.add(pool["op"], [y], **pool["attrs"])
    if tail and not tail["before_pool"]:
        y = g.pointwise(y, channels, tail)
    batch = n if block["batch2"] is None else "N"
    graph = onnx.helper.make_graph(
        g.nodes, "block",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [batch, c, h, w])],
        [onnx.helper.make_tensor_value_info(y, onnx.TensorProto.FLOAT, None)],
        initializer=g.initializers)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, y


def _assert_close(got, want):
    assert got.dtype == np.float32 and got.shape == want.shape, (got.dtype, got.shape,
                                                                  want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4,
                               atol=1e-4 * max(1.0, float(np.abs(want).max())))


def check_block(block):
    """The Session's results equal onnxruntime's for inputs run one after the other
    (two of the same shape, then one of batch `batch2` if set), and no run overwrites
    the result of an earlier one."""
    model, out = _build_model(block)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    reference = ort.InferenceSession(model.SerializeToString(), options,
                                     providers=["CPUExecutionProvider"])
    sess = og.Session(from_onnx(model))
    rng = np.random.default_rng(block["seed"] + 1)
    shapes = [block["x"]] * 2
    if block["batch2"] is not None:
        shapes.append((block["batch2"],) + tuple(block["x"][1:]))
    results = []
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        got = sess.run([out], {"x": x})[0]
        _assert_close(got, reference.run([out], {"x": x})[0])
        results.append((got, got.copy()))
    for got, kept in results:
        np.testing.assert_array_equal(got, kept)


@ci_settings(60)
@given(cnn_blocks())
def test_random_cnn_blocks_match_onnxruntime(block):
    check_block(block)


@ci_settings(40)
@given(cnn_blocks(focused=True))
def test_wide_3x3_and_expanding_1x1_blocks_match_onnxruntime(block):
    """Sizes that surely reach Winograd, channels-last im2col and the ones-row bias."""
    check_block(block)


def _pinned(x, conv, **parts):
    """A block spec from the parts that differ from a plain Conv on x."""
    conv = dict(dict(group=1, strides=[1, 1], dilations=[1, 1], bias=True), **conv)
    conv.setdefault("pads", [(k - 1) // 2 for k in conv["kernel"]] * 2)
    block = dict(x=x, batch2=None, seed=0, preact=None, conv=conv, bn=False, affine=[],
                 relu=False, shuffle=None, concat=None, pool=None, tail=None)
    block.update(parts)
    return block


def _pool_spec(op, k, s, p, **attrs):
    return dict(op=op, attrs=dict(kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                                  **attrs))


def _tail(m, group=1, relu=False, before_pool=False):
    return dict(m=m, group=group, bias=True, relu=relu, before_pool=before_pool)


# Paths that only a few in a thousand random draws reach, pinned so that every run
# takes them: the ids say which path or rewrite each block reaches
PINNED = {
    "maxpool-3x3s2-pad1-relu-past-pool": _pinned(
        (1, 8, 20, 20), dict(m=16, kernel=[3, 3]), bn=True, relu=True,
        pool=_pool_spec("MaxPool", 3, 2, 1)),
    "avgpool-3x3s1-window-passes": _pinned(
        (2, 4, 32, 32), dict(m=8, kernel=[3, 3]), pool=_pool_spec("AveragePool", 3, 1, 1)),
    "pointwise-then-strided-avgpool-swap": _pinned(
        (1, 16, 16, 16), dict(m=32, kernel=[1, 1]), bn=True, batch2=2,
        pool=_pool_spec("AveragePool", 2, 2, 0)),
    "avgpool-then-pointwise-swap": _pinned(
        (1, 24, 14, 14), dict(m=24, kernel=[3, 3]), relu=True,
        pool=_pool_spec("AveragePool", 3, 1, 1), tail=_tail(12, relu=True)),
    "depthwise-rows": _pinned(
        (2, 12, 28, 28), dict(m=12, group=12, kernel=[3, 3], pads=[0, 0, 0, 0]), relu=True),
    "depthwise-rows-stride2": _pinned(
        (1, 6, 44, 44), dict(m=6, group=6, kernel=[3, 3], strides=[2, 2]), bn=True),
    "depthwise-bias-into-pointwise": _pinned(
        (1, 24, 16, 16), dict(m=24, group=24, kernel=[3, 3]), bn=True, tail=_tail(48)),
    "im2col-row-blocks": _pinned(
        (1, 48, 32, 32), dict(m=16, kernel=[5, 5], dilations=[2, 2], pads=[4, 4, 4, 4])),
    "winograd-bands-into-concat": _pinned(
        (1, 48, 36, 36), dict(m=48, kernel=[3, 3]), relu=True,
        concat=dict(kind="conv", first=True, relu=True, built_first=True,
                    conv=dict(m=8, group=1, kernel=[1, 1], strides=[1, 1], dilations=[1, 1],
                              pads=[0, 0, 0, 0], bias=True)),
        pool=_pool_spec("MaxPool", 3, 2, 0)),
    "grouped-pointwise-shuffle": _pinned(
        (2, 24, 14, 14), dict(m=48, group=3, kernel=[1, 1]), bn=True, relu=True,
        shuffle=dict(g=3, form=1), batch2=1),
    "bn-relu-pointwise": _pinned((1, 16, 12, 12), dict(m=32, kernel=[1, 1]),
                                 preact="positive"),
    "bn-relu-3x3": _pinned((1, 16, 12, 12), dict(m=8, kernel=[3, 3]), preact="positive"),
}


@pytest.mark.parametrize("block", PINNED.values(), ids=PINNED.keys())
def test_pinned_blocks_match_onnxruntime(block):
    check_block(block)
