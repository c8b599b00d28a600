"""A random-geometry differential sweep of the window ops against onnxruntime.

Conv, ConvTranspose, MaxPool, AveragePool and LpPool pick among many fast paths by
guard conditions on the geometry (ops/conv.py, ops/conv_depthwise.py, ops/pool.py),
and the Session's plan-time rewrites (train/optimize.py) choose others again, with a
weight cache. Bugs sit at the guards' edges, so each example draws a VALID geometry
from a seeded numpy generator (1-D/2-D/3-D, odd/even, tiny and 1xN images, explicit,
asymmetric and auto_pad padding, ceil_mode, dilations, strides 1-5, kernels larger
than the image, batch > 1, channel counts around the group and path thresholds,
float16/float32/float64, int8/uint8 MaxPool with Indices and storage_order, a few
infinities and NaNs), builds a one-node ONNX model (weights as initializers, so the
Session fuses the Conv and keeps its cache; sometimes fed as inputs instead) or a
small fused chain (see CHAINS: Conv -> BatchNormalization -> Relu, Conv -> Relu ->
MaxPool, Convs -> Concat, a grouped Conv -> Reshape -> Transpose -> Reshape channel
shuffle, BatchNormalization -> Relu -> Conv, Conv -> Mul -> Add, Conv -> 1x1 Conv,
AveragePool and 1x1 Conv in both orders), and checks the Session's outputs against
onnxruntime's. Models with a symbolic dim run a second time on another shape (the
caches then hold the first shape's entries).

Geometries onnxruntime refuses are skipped (that draw only), as are results where
onnxruntime leaves the spec and ONNX's reference evaluator agrees with the Session
(`OrtDiverges`); the draws avoid the known cases of both (`_pool_undefined`, SAME
with dilations). A dtype onnxruntime has no kernel for (float16/float64 on some ops)
is compared with onnxruntime's float32 run of the same values instead.
`ONEGRAPH_SWEEP_EXAMPLES` sets the draws per test block (default: a CI-sized count,
deterministic); the explicit regression cases at the end are the minimal
reproductions of what longer sweeps found.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .ort_draws import OrtDiverges, OrtRefused, ort_run  # noqa: E402
from ..window_length import padding_only_window, window_out  # noqa: E402

OPSET = 19
# draws per test block (each kind runs _BLOCKS blocks); the sweeps that found the
# regression cases below ran 10000+ per kind
_PER_BLOCK = int(os.environ.get("ONEGRAPH_SWEEP_EXAMPLES", "100"))
_BLOCKS = 3


# --------------------------------------------------------------------------------------
# Geometry draws: plain dicts (readable reproductions), every one valid for ONNX
# --------------------------------------------------------------------------------------


def _pick(rng, values, p=None):
    """One of `values` (any objects), with probabilities `p`."""
    return values[int(rng.choice(len(values), p=p))]


def _dtype(rng):
    """A float dtype, mostly float32."""
    return _pick(rng, [np.float32, np.float16, np.float64], [0.8, 0.1, 0.1])


def _out_sizes(sp, kernel, attrs, ceil=False):
    """Output spatial sizes of a Conv/pool geometry (None when some dim is empty)."""
    nsp = len(sp)
    strides = attrs.get("strides", [1] * nsp)
    dil = attrs.get("dilations", [1] * nsp)
    mode = attrs.get("auto_pad", "NOTSET")
    pads = attrs.get("pads", [0] * 2 * nsp)
    out = []
    for i, n in enumerate(sp):
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-n // strides[i])
        elif mode == "VALID":
            o = window_out(n, kernel[i], strides[i], dil[i], 0, 0, ceil)
        else:
            o = window_out(n, kernel[i], strides[i], dil[i], pads[i], pads[nsp + i], ceil)
        if o < 1:
            return None
        out.append(o)
    return out


def _pool_pads(sp, kernel, attrs, out):
    """(begin, end) pads per dim of a pool geometry, SAME's total as the spec gives it
    (possibly negative)."""
    nsp = len(sp)
    strides = attrs.get("strides", [1] * nsp)
    dil = attrs.get("dilations", [1] * nsp)
    mode = attrs.get("auto_pad", "NOTSET")
    if mode == "VALID":
        return [(0, 0)] * nsp
    if mode == "NOTSET":
        pads = attrs.get("pads", [0] * 2 * nsp)
        return list(zip(pads[:nsp], pads[nsp:]))
    pads = []
    for n, k, s, d, o in zip(sp, kernel, strides, dil, out):
        total = (o - 1) * s + (k - 1) * d + 1 - n
        small = total // 2
        pads.append((small, total - small) if mode == "SAME_UPPER" else (total - small, small))
    return pads


def _pool_undefined(sp, kernel, attrs, out):
    """Whether a pool geometry leaves the spec's ground: SAME padding that comes out
    negative (a stride longer than the window: onnxruntime refuses or crops, the
    Session pads nothing, as TensorFlow does), or a window over padding only (dilated
    windows: onnxruntime's maximum is float's lowest value, ONNX's reference 0, the
    Session's -inf, and each names another index)."""
    strides = attrs.get("strides", [1] * len(sp))
    dil = attrs.get("dilations", [1] * len(sp))
    return padding_only_window(sp, kernel, strides, dil,
                               _pool_pads(sp, kernel, attrs, out), out)


def _same_negative(sp, kernel, attrs):
    """Whether a Conv's SAME padding comes out negative (a stride past the kernel):
    the Session pads nothing (as ONNX's reference and TensorFlow), where onnxruntime
    starts the windows inside the image."""
    strides = attrs.get("strides", [1] * len(sp))
    return attrs.get("auto_pad", "").startswith("SAME") and any(
        -(-n // s) * s - s + k < n for n, k, s in zip(sp, kernel, strides))


def _window_attrs(rng, nsp, kernel, dilate=True, pad_below_kernel=False):
    """strides, dilations and padding (explicit, asymmetric or auto_pad) for `kernel`."""
    attrs = {}
    strides = [_pick(rng, [1, 2, 3, 4, 5], [0.52, 0.3, 0.1, 0.04, 0.04]) for _ in range(nsp)]
    if rng.random() < 0.6:
        strides = [strides[0]] * nsp
    if any(s != 1 for s in strides) or rng.random() < 0.3:
        attrs["strides"] = strides
    if dilate and rng.random() < 0.25:
        attrs["dilations"] = [_pick(rng, [1, 2, 3], [0.3, 0.5, 0.2]) for _ in range(nsp)]
    dil = attrs.get("dilations", [1] * nsp)
    mode = _pick(rng, ["none", "sym", "asym", "SAME_UPPER", "SAME_LOWER", "VALID"],
                 [0.2, 0.3, 0.2, 0.12, 0.1, 0.08])
    if mode in ("SAME_UPPER", "SAME_LOWER", "VALID"):
        attrs["auto_pad"] = mode
    elif mode != "none":
        top = [k - 1 if pad_below_kernel else (k - 1) * d + 2
               for k, d in zip(kernel, dil)]
        begin = [int(rng.integers(0, t + 1)) for t in top]
        end = list(begin) if mode == "sym" else [int(rng.integers(0, t + 1)) for t in top]
        attrs["pads"] = begin + end
    return attrs


def _image(rng, nsp, lo, hi):
    """Spatial sizes: sometimes square, sometimes 1 x N."""
    sp = [int(rng.integers(lo, hi + 1)) for _ in range(nsp)]
    r = rng.random()
    if r < 0.4:
        sp = [sp[0]] * nsp
    elif r < 0.5 and nsp > 1:
        sp[0] = 1
    return sp


def _draw_conv(rng, transpose=False, nsp=None):
    """A Conv (or ConvTranspose) example: shapes, attrs, dtype, bias."""
    nsp = nsp or _pick(rng, [1, 2, 3], [0.15, 0.75, 0.1])
    for _ in range(200):
        profile = _pick(rng, ["tiny", "small", "mid", "big", "winograd", "depthwise", "stem"],
                        [0.2, 0.28, 0.24, 0.08, 0.08, 0.07, 0.05])
        if nsp != 2 and profile not in ("tiny", "small", "mid"):
            profile = "small"
        kind = _pick(rng, ["dense", "depthwise", "grouped"], [0.5, 0.25, 0.25])
        if profile in ("winograd", "depthwise", "stem"):
            kind = "depthwise" if profile == "depthwise" else "dense"
        if profile == "tiny":
            cg, mg, img = int(rng.integers(1, 5)), int(rng.integers(1, 5)), (1, 6)
        elif profile == "small":
            cg, mg, img = int(rng.integers(1, 13)), int(rng.integers(1, 13)), (1, 16)
        elif profile == "mid":
            cg, mg, img = int(rng.integers(12, 41)), int(rng.integers(2, 41)), (2, 30)
        elif profile == "big":
            cg, mg, img = int(rng.integers(56, 97)), int(rng.integers(40, 97)), (10, 24)
        elif profile == "winograd":   # Winograd F(2x2, 3x3): C*M/(C+M) >= 20, 12x12 up
            cg, mg, img = int(rng.integers(40, 97)), int(rng.integers(40, 97)), (12, 36)
        elif profile == "depthwise":  # the depthwise same-width and row forms
            cg, mg, img = int(rng.integers(2, 33)), 1, (12, 40)
        else:                         # a stem: few channels, large image, blocked im2col
            cg, mg, img = int(rng.integers(1, 5)), int(rng.integers(4, 33)), (48, 120)
        group = 1
        if kind == "depthwise":
            group = cg if profile in ("mid", "big", "depthwise") else int(rng.integers(1, 9))
            cg, mg = 1, _pick(rng, [1, 1, 1, 2])
        elif kind == "grouped":
            group = int(rng.integers(2, 5))
            cg, mg = max(1, cg // group), max(1, mg // group)
        if nsp == 3:
            img = (1, 6)
        sp = _image(rng, nsp, *img)
        if profile == "winograd":
            kernel = [3, 3]
        elif profile == "stem":
            kernel = [_pick(rng, [3, 5, 7, 11])] * nsp
        elif profile in ("big", "depthwise") or (profile == "mid" and rng.random() < 0.5):
            kernel = [_pick(rng, [3, 3, 1, 5, 2])] * nsp
        else:
            kernel = [int(rng.integers(1, 8 if profile == "tiny" else 6)) for _ in range(nsp)]
            if rng.random() < 0.5:
                kernel = [kernel[0]] * nsp
        attrs = _window_attrs(rng, nsp, kernel, dilate=True)
        if attrs.get("auto_pad", "").startswith("SAME") and not transpose:
            attrs.pop("dilations", None)   # onnxruntime refuses SAME with dilations
            if _same_negative(sp, kernel, attrs):
                continue
        if profile in ("big", "winograd", "depthwise") and rng.random() < 0.7:
            attrs.pop("strides", None)
            attrs.pop("dilations", None)
        if group > 1:
            attrs["group"] = group
        if transpose:
            attrs = _transpose_attrs(rng, attrs, sp, kernel)
            out = attrs.pop("_out")
        else:
            out = _out_sizes(sp, kernel, attrs)
        if out is None:
            continue
        n = _pick(rng, [1, 1, 2, 3])
        c = cg * group
        m = mg * group
        w_shape = [c, mg] + kernel if transpose else [m, cg] + kernel
        macs = n * m * cg * np.prod(kernel) * np.prod(out if not transpose else sp)
        if macs > 1.2e8 or n * c * np.prod(sp) > 3e5:
            continue
        return dict(kind="ConvTranspose" if transpose else "Conv", x=[n, c] + sp,
                    w=w_shape, bias=bool(rng.random() < 0.6), attrs=attrs,
                    dtype=_dtype(rng), dynamic=_pick(rng, [None, "batch", "spatial"],
                                                     [0.6, 0.25, 0.15]),
                    w_input=bool(rng.random() < 0.15), special=bool(rng.random() < 0.08))
    raise AssertionError("no valid geometry drawn")


def _transpose_attrs(rng, attrs, sp, kernel):
    """ConvTranspose attrs from a Conv draw: output_padding / output_shape added, pads
    kept below the dilated kernel; `_out` holds the output size (None: invalid)."""
    nsp = len(sp)
    attrs = dict(attrs)
    strides = attrs.get("strides", [1] * nsp)
    dil = attrs.get("dilations", [1] * nsp)
    mode = attrs.get("auto_pad", "NOTSET")
    if "pads" in attrs:
        attrs["pads"] = [min(p, (k - 1) * d) for p, k, d in
                         zip(attrs["pads"], kernel + kernel, dil + dil)]
    pads = attrs.get("pads", [0] * 2 * nsp)
    natural = [s * (n - 1) + (k - 1) * d + 1 for n, k, s, d in zip(sp, kernel, strides, dil)]
    r = rng.random()
    # output_shape with explicit pads (which it overrides); not with SAME, where
    # onnxruntime splits an odd or negative total padding unlike the spec's reference
    if r < 0.2 and not mode.startswith("SAME"):
        attrs["output_shape"] = [max(1, o - int(rng.integers(0, 3))
                                     + int(rng.integers(0, s)))
                                 for o, s in zip(natural, strides)]
        out = attrs["output_shape"]
    elif mode in ("SAME_UPPER", "SAME_LOWER"):
        out = [n * s for n, s in zip(sp, strides)]
        if any(a < o for a, o in zip(natural, out)):
            # a stride longer than the dilated kernel: the spec's output (in * stride)
            # needs negative padding, and onnxruntime gives the natural size instead
            out = [0]
    else:
        if r < 0.5 and max(strides) > 1:
            attrs["output_padding"] = [int(rng.integers(0, s)) for s in strides]
        op = attrs.get("output_padding", [0] * nsp)
        if mode == "VALID":
            pads = [0] * 2 * nsp
        out = [a + p - b - e for a, p, b, e in zip(natural, op, pads[:nsp], pads[nsp:])]
    attrs["_out"] = out if min(out) >= 1 else None
    return attrs


def _draw_pool(rng, op, nsp=None):
    """A MaxPool / AveragePool / LpPool example."""
    nsp = nsp or _pick(rng, [1, 2, 3], [0.15, 0.75, 0.1])
    for _ in range(200):
        profile = _pick(rng, ["tiny", "small", "big"], [0.3, 0.55, 0.15])
        if nsp == 3:
            profile = "tiny"
        c, img = {"tiny": (int(rng.integers(1, 4)), (1, 5)),
                  "small": (int(rng.integers(1, 17)), (1, 20)),
                  "big": (int(rng.integers(40, 120)), (20, 48))}[profile]
        sp = _image(rng, nsp, *img)
        if rng.random() < 0.35:
            kernel = [3] * nsp
        else:
            kernel = [int(rng.integers(1, 8 if profile == "tiny" else 6)) for _ in range(nsp)]
            if rng.random() < 0.5:
                kernel = [kernel[0]] * nsp
        attrs = _window_attrs(rng, nsp, kernel, dilate=True, pad_below_kernel=True)
        if rng.random() < 0.3 and nsp == 2:   # the 3x3 fast paths' own geometries
            attrs = _pick(rng, [dict(pads=[1, 1, 1, 1]), dict(strides=[2, 2]),
                                dict(strides=[2, 2], pads=[1, 1, 1, 1]),
                                dict(strides=[2, 2], pads=[0, 0, 1, 1]),
                                dict(strides=[2, 2], auto_pad="SAME_UPPER")])
            kernel = [3, 3]
        if attrs.get("auto_pad", "").startswith("SAME"):
            # onnxruntime sizes SAME padding for the undilated kernel (not the spec)
            attrs.pop("dilations", None)
        attrs["kernel_shape"] = kernel
        ceil = rng.random() < 0.3
        if ceil:
            attrs["ceil_mode"] = 1
        if op == "AveragePool" and rng.random() < 0.4:
            attrs["count_include_pad"] = 1
        if op == "LpPool":
            attrs["p"] = _pick(rng, [1, 2, 3])
        dtype = _dtype(rng)
        if op == "MaxPool" and rng.random() < 0.15:
            dtype = _pick(rng, [np.int8, np.uint8])
        indices = op == "MaxPool" and rng.random() < 0.35
        if indices and nsp > 1 and rng.random() < 0.4:
            attrs["storage_order"] = 1
        out = _out_sizes(sp, kernel, attrs, ceil)
        if out is None or _pool_undefined(sp, kernel, attrs, out):
            continue
        n = _pick(rng, [1, 1, 2, 3])
        return dict(kind=op, x=[n, c] + sp, attrs=attrs, indices=indices, dtype=dtype,
                    dynamic=_pick(rng, [None, "batch", "spatial"], [0.6, 0.25, 0.15]),
                    special=bool(dtype in (np.float32, np.float64) and rng.random() < 0.1))
    raise AssertionError("no valid geometry drawn")


CHAINS = ["conv_bn_relu", "conv_relu_maxpool", "concat", "shuffle", "bn_relu_conv",
          "conv_affine", "conv_pointwise", "pool_pointwise", "pointwise_pool"]


def _draw_pointwise(rng, c, nsp=2):
    """A 1x1 Conv's (weight shape, attrs) on c channels: grouped, strided or plain."""
    groups = [g for g in (1, 2, 3, 4, c) if c % g == 0]
    g = _pick(rng, groups) if rng.random() < 0.4 else 1
    attrs = {"group": g} if g > 1 else {}
    if rng.random() < 0.2:
        attrs["strides"] = [2] * nsp
    return [int(rng.integers(1, 5)) * g, c // g] + [1] * nsp, attrs


def _draw_chain(rng):
    """A fused chain (see CHAINS and `_build`)."""
    chain = _pick(rng, CHAINS)
    if chain in ("pool_pointwise", "pointwise_pool"):
        pool = _draw_pool(rng, "AveragePool", nsp=2)
        if pool["dtype"] not in (np.float32, np.float64, np.float16):
            pool["dtype"] = np.float32
        c = pool["x"][1]
        w, attrs = _draw_pointwise(rng, c)
        if chain == "pointwise_pool":
            attrs.pop("strides", None)
            pool["attrs"]["strides"] = [2, 2]
            pool["attrs"].pop("auto_pad", None)
            pool["attrs"].pop("pads", None)
            if not _out_sizes(pool["x"][2:], pool["attrs"]["kernel_shape"], pool["attrs"],
                              bool(pool["attrs"].get("ceil_mode"))):
                return _draw_chain(rng)
        elif "strides" in attrs:
            attrs.pop("strides")
        return dict(kind=chain, x=pool["x"], w=w, attrs=attrs, pool=pool["attrs"],
                    bias=bool(rng.random() < 0.7), relu=bool(rng.random() < 0.5),
                    dtype=pool["dtype"], dynamic=pool["dynamic"])
    if chain == "shuffle":
        g = int(rng.integers(2, 5))
        cg, mg = int(rng.integers(1, 25)), int(rng.integers(1, 25))
        sp = _image(rng, 2, 1, 20)
        grouped = rng.random() < 0.8
        attrs = {"group": g} if grouped else {}
        if rng.random() < 0.25:
            attrs["strides"] = [2, 2]
        k = _pick(rng, [1, 1, 3])   # (ShuffleNet shuffles after 1x1 convs; 3x3 too here)
        if k == 3:
            attrs["pads"] = [1, 1, 1, 1]
        out = _out_sizes(sp, [k, k], attrs)
        return dict(kind="shuffle", x=[_pick(rng, [1, 1, 2]), cg * g] + sp,
                    w=[mg * g, cg if grouped else cg * g, k, k], bias=bool(rng.random() < 0.7),
                    attrs=attrs, g=g, relu=bool(rng.random() < 0.4), out=out,
                    reshape=_pick(rng, ["explicit", "zero_minus_one"]),
                    dtype=_pick(rng, [np.float32, np.float64, np.float16], [0.8, 0.1, 0.1]),
                    dynamic=None)
    nsp = 2 if chain in ("conv_relu_maxpool", "concat") else _pick(rng, [1, 2, 2, 2, 3])
    case = _draw_conv(rng, nsp=nsp)
    case["kind"] = chain
    case["dynamic"] = _pick(rng, [None, "batch", "spatial"], [0.6, 0.25, 0.15])
    case["relu"] = bool(chain != "conv_bn_relu" or rng.random() < 0.8)
    # the Session's MaxPool keeps a window's NaN (np.maximum), onnxruntime's skips it
    case["special"] = case["special"] and chain == "conv_bn_relu"
    out = _out_sizes(case["x"][2:], case["w"][2:], case["attrs"])
    if chain == "conv_relu_maxpool" or (chain == "concat" and rng.random() < 0.3):
        for _ in range(50):
            pool = _draw_pool(rng, "MaxPool", nsp=2)
            kernel = pool["attrs"]["kernel_shape"]
            pooled = _out_sizes(out, kernel, pool["attrs"], bool(pool["attrs"].get("ceil_mode")))
            if pooled and not _pool_undefined(out, kernel, pool["attrs"], pooled):
                case["pool"] = pool["attrs"]
                # (float16 rounding differences after a Conv would move near ties)
                case["indices"] = pool["indices"] and case["dtype"] != np.float16
                break
    if chain == "concat":
        case["m2"] = int(rng.integers(1, 8)) * case["attrs"].get("group", 1)
        for _ in range(30):   # a second Conv of another geometry, same output size
            kernel = [int(rng.integers(1, 6)) for _ in range(2)]
            attrs = _window_attrs(rng, 2, kernel)
            if attrs.get("auto_pad", "").startswith("SAME"):
                attrs.pop("dilations", None)
            if _out_sizes(case["x"][2:], kernel, attrs) == out \
                    and not _same_negative(case["x"][2:], kernel, attrs):
                case["w2"] = [case["m2"] // case["attrs"].get("group", 1) * _pick(rng, [1, 2]),
                              case["x"][1]] + kernel
                case["attrs2"] = attrs
                break
        case["x_too"] = out == case["x"][2:] and rng.random() < 0.5
    if chain == "conv_pointwise":
        case["relu"] = False
        case["w2"], case["attrs2"] = _draw_pointwise(rng, case["w"][0], nsp)
    if chain in ("bn_relu_conv", "conv_affine"):
        case["signs"] = bool(rng.random() < 0.2)   # some non-positive BN scales
    return case


# --------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------


class _Model:
    """Nodes, initializers and fed weights of a small graph under construction; float
    constants are rounded through `values` (the case's dtype) before taking `dtype`,
    so a float32 rebuild of a float16 case holds the very same values."""

    def __init__(self, dtype, rng, values=None):
        self.dtype, self.rng, self.values = dtype, rng, values or dtype
        self.nodes, self.inits, self.feeds = [], [], {}

    def const(self, value, dtype=None, feed=False):
        """A new constant: an initializer, or a graph input fed with it (`feed`)."""
        value = np.asarray(value)
        if dtype is None:
            value = value.astype(self.values).astype(self.dtype)
        else:
            value = value.astype(dtype)
        name = f"c{len(self.inits) + len(self.feeds)}"
        if feed:
            self.feeds[name] = value
        else:
            self.inits.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [f"t{len(self.nodes)}_{k}" for k in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
        return outs

    def weights(self, shape, fan_in):
        return self.rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))

    def model(self, x_shape, outputs, x_dtype=None):
        """The model of input "x" (`x_shape`) and `outputs` (a second one: Indices)."""
        elem = helper.np_dtype_to_tensor_dtype
        x_dtype = np.dtype(x_dtype or self.dtype)
        graph = helper.make_graph(
            self.nodes, "sweep",
            [helper.make_tensor_value_info("x", elem(x_dtype), x_shape)]
            + [helper.make_tensor_value_info(k, elem(v.dtype), v.shape)
               for k, v in self.feeds.items()],
            [helper.make_tensor_value_info(o, TensorProto.INT64 if k else elem(x_dtype),
                                           None) for k, o in enumerate(outputs)],
            self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        return model


def _conv_node(b, case, x="x", w_shape=None, attrs=None):
    attrs = dict(case["attrs"] if attrs is None else attrs)
    w_shape = w_shape or case["w"]
    fan = int(np.prod(w_shape[1:])) if case["kind"] != "ConvTranspose" \
        else int(w_shape[0] * np.prod(w_shape[2:])) // max(1, attrs.get("group", 1))
    feed = bool(case.get("w_input"))
    inputs = [x, b.const(b.weights(w_shape, fan), feed=feed)]
    if case.get("bias"):
        m = w_shape[1] * attrs.get("group", 1) if case["kind"] == "ConvTranspose" \
            else w_shape[0]
        inputs.append(b.const(b.rng.standard_normal(m), feed=feed))
    op = "ConvTranspose" if case["kind"] == "ConvTranspose" else "Conv"
    return b.node(op, inputs, **attrs)[0]


def _build(case, dtype, seed):
    """(model, output names, fed weights) of `case` in `dtype` (weights drawn from
    `seed` and rounded to the case's dtype: a float32 rebuild holds the same values)."""
    b = _Model(dtype, np.random.default_rng(seed), case["dtype"])
    kind = case["kind"]
    x_shape = list(case["x"])
    if case.get("dynamic") == "batch":
        x_shape[0] = "N"
    elif case.get("dynamic") == "spatial":
        x_shape[2:] = [f"S{i}" for i in range(len(x_shape) - 2)]
    if kind in ("Conv", "ConvTranspose"):
        outs = [_conv_node(b, case)]
    elif kind in ("MaxPool", "AveragePool", "LpPool"):
        outs = b.node(kind, ["x"], 2 if case.get("indices") else 1, **case["attrs"])
        if np.dtype(case["dtype"]).kind in "iu":   # MaxPool int8/uint8: no float fallback
            return b.model(x_shape, outs, case["dtype"]), outs, b.feeds
    elif kind in ("conv_bn_relu", "conv_relu_maxpool"):
        y = _conv_node(b, case)
        if kind == "conv_bn_relu":
            m = case["w"][0]
            rng = b.rng
            y = b.node("BatchNormalization",
                       [y, b.const(rng.uniform(0.2, 2, m)), b.const(rng.standard_normal(m)),
                        b.const(rng.standard_normal(m)), b.const(rng.uniform(0.3, 3, m))],
                       epsilon=1e-3)[0]
        if case["relu"]:
            y = b.node("Relu", [y])[0]
        outs = [y]
        if case.get("pool"):
            outs = b.node("MaxPool", [y], 2 if case.get("indices") else 1, **case["pool"])
    elif kind == "bn_relu_conv":
        c = case["x"][1]
        scale = b.rng.uniform(0.2, 2, c)
        if case["signs"]:
            scale[b.rng.integers(0, c)] *= _pick(b.rng, [-1, 0])
        y = b.node("BatchNormalization",
                   ["x", b.const(scale), b.const(b.rng.standard_normal(c)),
                    b.const(b.rng.standard_normal(c)), b.const(b.rng.uniform(0.3, 3, c))],
                   epsilon=1e-3)[0]
        y = b.node("Relu", [y])[0]
        outs = [_conv_node(b, case, x=y)]
    elif kind == "conv_affine":
        m = case["w"][0]
        y = _conv_node(b, case)
        nsp = len(case["x"]) - 2
        shapes = [(m,) + (1,) * nsp, (1, m) + (1,) * nsp, (1,), (m,) + (1,) * (nsp - 1)]
        if case["x"][0] == 1 and nsp < 2:   # broadcasts to a higher rank: no fold
            shapes.append((m, 1, 1))
        shape = _pick(b.rng, shapes)
        scale = b.rng.uniform(0.2, 2, shape)
        if case["signs"]:
            scale = -scale
        y = b.node("Mul", [y, b.const(scale)])[0]
        y = b.node("Add", [y, b.const(b.rng.standard_normal(shape))])[0]
        outs = [b.node("Relu", [y])[0]] if case["relu"] else [y]
    elif kind == "conv_pointwise":
        y = _conv_node(b, case)
        y = _conv_node(b, case, x=y, w_shape=case["w2"], attrs=case["attrs2"])
        outs = [b.node("Relu", [y])[0]] if b.rng.random() < 0.5 else [y]
    elif kind == "pool_pointwise":
        y = b.node("AveragePool", ["x"], **case["pool"])[0]
        y = _conv_node(b, case, x=y)
        outs = [b.node("Relu", [y])[0]] if case["relu"] else [y]
    elif kind == "pointwise_pool":
        y = _conv_node(b, case)
        outs = b.node("AveragePool", [y], **case["pool"])
    elif kind == "concat":
        w2 = case.get("w2", [case["m2"]] + list(case["w"][1:]))
        pieces = [_conv_node(b, case), _conv_node(b, case, w_shape=w2,
                                                  attrs=case.get("attrs2"))]
        if case["relu"]:
            pieces = [b.node("Relu", [p])[0] for p in pieces]
        if case.get("x_too"):
            pieces.insert(int(b.rng.integers(0, 3)), "x")
        outs = b.node("Concat", pieces, axis=1)
        if case.get("pool"):
            outs = b.node("MaxPool", outs, 2 if case.get("indices") else 1, **case["pool"])
    elif kind == "shuffle":
        y = _conv_node(b, case)
        if case["relu"]:
            y = b.node("Relu", [y])[0]
        n, g, m, (h, w) = case["x"][0], case["g"], case["w"][0], case["out"]
        if case["reshape"] == "explicit":
            s1, s2 = [n, g, m // g, h, w], [n, m, h, w]
        else:
            s1, s2 = [0, g, -1, h, w], [0, -1, h, w]
        y = b.node("Reshape", [y, b.const(s1, np.int64)])[0]
        y = b.node("Transpose", [y], perm=[0, 2, 1, 3, 4])[0]
        outs = b.node("Reshape", [y, b.const(s2, np.int64)])
    else:
        raise AssertionError(kind)
    return b.model(x_shape, outs), outs, b.feeds


def _input(case, shape, dtype, rng):
    """The input: for MaxPool distinct values when they fit (ties are checked by the
    integer draws), small integers for int8/uint8 (many ties, zeros tying with
    uint8's zero padding), else normal; `special` cases get some infinities and NaNs."""
    size = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        lo, hi = (0, _pick(rng, [3, 256])) if dtype.kind == "u" else (-128, 128)
        return rng.integers(lo, hi, size=shape).astype(dtype)
    if case["kind"] == "MaxPool" and size <= 2048:
        x = (rng.permutation(size).reshape(shape) - size // 2).astype(dtype) / 8
    else:
        x = rng.standard_normal(shape).astype(dtype)
    if case.get("special"):
        flat = x.reshape(-1)
        where = rng.integers(0, size, size=max(1, size // 50))
        # (onnxruntime's MaxPool skips NaN and gives float's lowest value for -inf)
        values = [np.inf] if case["kind"] == "MaxPool" else [np.inf, -np.inf, np.nan]
        flat[where] = rng.choice(values, size=where.size)
    return x


def _second_shape(case):
    """Another input shape for a model with a symbolic dim (None: no second run)."""
    shape = list(case["x"])
    if case.get("dynamic") == "batch":
        shape[0] = shape[0] % 3 + 1
        return shape
    if case.get("dynamic") == "spatial":
        bigger = [d + 1 for d in shape[2:]]
        kernel = case["w"][2:] if "w" in case else case["attrs"]["kernel_shape"]
        attrs = {k: v for k, v in case["attrs"].items() if k != "output_shape"}
        if "output_shape" in case["attrs"]:
            return None
        out = _out_sizes(bigger, kernel, attrs, bool(attrs.get("ceil_mode")))
        ok = case["kind"] not in ("Conv", "MaxPool", "AveragePool", "LpPool") or out
        if out and "kernel_shape" in attrs and _pool_undefined(bigger, kernel, attrs, out):
            ok = False
        return shape[:2] + bigger if ok else None
    return None


# --------------------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------------------


def _tolerance(dtype):
    return 2e-3 if dtype == np.float16 else 1e-4


def _compare(got, ref, dtype, where):
    """Assert the Session's outputs `got` match `ref` (shapes, dtype, values; NaN where
    `ref` has NaN, infinities where it has them)."""
    for k, (g, r) in enumerate(zip(got, ref)):
        g, r = np.asarray(g), np.asarray(r)
        assert g.shape == r.shape, f"{where} output {k}: shape {g.shape} != {r.shape}"
        if r.dtype.kind in "iu":
            assert g.dtype == r.dtype, f"{where} output {k}: dtype {g.dtype}"
            np.testing.assert_array_equal(g, r, err_msg=f"{where} output {k}")
            continue
        assert g.dtype == dtype, f"{where} output {k}: dtype {g.dtype}"
        tol = _tolerance(dtype)
        finite = np.isfinite(r)
        scale = max(1.0, float(np.max(np.abs(r[finite].astype(np.float64)), initial=0)))
        np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=tol,
                                   atol=tol * scale, err_msg=f"{where} output {k}")


def _reference_agrees(model, outs, feeds, got, dtype):
    """Whether ONNX's reference evaluator gives the Session's `got` for `feeds`."""
    from onnx.reference import ReferenceEvaluator

    try:
        ref = ReferenceEvaluator(model).run(outs, feeds)
        _compare(got, ref, dtype, "reference")
    except Exception:  # noqa: BLE001 (no agreement, whatever the reason)
        return False
    return True


def check_case(case, seed):
    """Run `case` in the Session and onnxruntime on one or two inputs; raise
    AssertionError on a mismatch, OrtRefused when onnxruntime refuses the case."""
    dtype = case["dtype"]
    model, outs, weights = _build(case, dtype, seed)
    rng = np.random.default_rng(seed + 1)
    shapes = [case["x"]]
    second = _second_shape(case)
    if second is not None:
        shapes.append(second)
    feeds = [dict(weights, x=_input(case, s, dtype, rng)) for s in shapes]
    refs = []
    for f in feeds:
        try:
            refs.append(ort_run(model, outs, f))
        except OrtRefused:
            if refs:   # the second shape does not fit the model: one run only
                feeds = feeds[:1]
                break
            if dtype == np.float32 or np.dtype(dtype).kind != "f":
                raise
            # no kernel for this dtype: onnxruntime's float32 run of the same values
            m32, _, _ = _build(case, np.float32, seed)
            refs.append(ort_run(m32, outs, {k: v.astype(np.float32) for k, v in f.items()}))
    session = og.Session(from_onnx(model))
    for run, (f, ref) in enumerate(zip(feeds, refs)):
        got = session.run(outs, f)
        try:
            _compare(got, ref, dtype, f"{case} run {run}")
        except AssertionError as e:
            if _reference_agrees(model, outs, f, got, dtype):
                raise OrtDiverges(str(e)[:300]) from e
            raise


DRAWS = {
    "Conv": lambda rng: _draw_conv(rng),
    "ConvTranspose": lambda rng: _draw_conv(rng, transpose=True),
    "MaxPool": lambda rng: _draw_pool(rng, "MaxPool"),
    "AveragePool": lambda rng: _draw_pool(rng, "AveragePool"),
    "LpPool": lambda rng: _draw_pool(rng, "LpPool"),
    "chain": _draw_chain,
}


def sweep(kind, block, count, diverged=None):
    """Draw and check `count` examples of `kind` from block `block`'s seed; returns
    (checked, refused, failures as (case, seed, message)). The cases where
    onnxruntime diverges from the spec (see `OrtDiverges`) go to `diverged`."""
    diverged = [] if diverged is None else diverged
    rng = np.random.default_rng([sorted(DRAWS).index(kind), block])
    checked, refused, failures = 0, 0, []
    for i in range(count):
        case = DRAWS[kind](rng)
        seed = int(rng.integers(1 << 30))
        try:
            check_case(case, seed)
            checked += 1
        except OrtDiverges:
            diverged.append(case)
        except OrtRefused:
            refused += 1
        except Exception as e:  # noqa: BLE001 (a crash is a finding too)
            failures.append((case, seed, f"{type(e).__name__}: {str(e)[:1500]}"))
    return checked, refused, failures


@pytest.mark.parametrize("block", range(_BLOCKS))
@pytest.mark.parametrize("kind", sorted(DRAWS))
def test_random_geometries_match_onnxruntime(kind, block):
    diverged = []
    checked, refused, failures = sweep(kind, block, _PER_BLOCK, diverged)
    assert not failures, "\n\n".join(f"{c} seed {s}: {m}" for c, s, m in failures[:3])
    assert checked >= refused, f"onnxruntime refused {refused} of {checked + refused}"
    # the draws avoid onnxruntime's known deviations: many more would mean the
    # reference evaluator, not onnxruntime, is what the Session is checked against
    assert len(diverged) * 10 <= checked, f"{len(diverged)} divergences: {diverged[:2]}"


# --------------------------------------------------------------------------------------
# Regression cases: the sweep's findings, reduced
# --------------------------------------------------------------------------------------

F32 = np.float32

REGRESSIONS = [
    # a 1x1 Conv whose stride passes the input (one window per dim): the geometry
    # turns that stride into 1, and the 1x1 GEMM path then skipped its subsampling
    # and read every input pixel ("cannot reshape array of size 2 into shape (1,1,1)")
    pytest.param(dict(kind="Conv", x=[1, 1, 2], w=[1, 1, 1], bias=False,
                      attrs=dict(strides=[3]), dtype=F32), id="conv1x1-stride-past-input-1d"),
    pytest.param(dict(kind="Conv", x=[1, 4, 2], w=[1, 4, 1], bias=False,
                      attrs=dict(strides=[3], auto_pad="SAME_UPPER"), dtype=F32,
                      dynamic="spatial"), id="conv1x1-stride-past-input-same"),
    pytest.param(dict(kind="conv_relu_maxpool", x=[3, 1, 2, 2], w=[1, 1, 1, 1], bias=True,
                      attrs=dict(strides=[3, 3]), dtype=F32, relu=True, dynamic="batch",
                      pool=dict(pads=[1, 2, 1, 1], kernel_shape=[3, 3])),
                 id="conv1x1-stride-past-input-fused"),
    pytest.param(dict(kind="Conv", x=[2, 8, 2, 5], w=[16, 8, 1, 1], bias=True,
                      attrs=dict(strides=[3, 1]), dtype=F32),
                 id="conv1x1-stride-past-input-ones-row"),
]


@pytest.mark.parametrize("case", REGRESSIONS)
def test_regression_cases_match_onnxruntime(case):
    check_case(dict(case), seed=0)
