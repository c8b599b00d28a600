"""Export small PaddlePaddle models to ONNX, as paddle2onnx really writes them.

A test-corpus generator for onegraph's ONNX importer. It builds models from
paddle.vision.models (MobileNetV1/V2/V3 and ShuffleNetV2 at small scales, LeNet, and
shrunken ResNet, SqueezeNet, DenseNet, GoogLeNet, InceptionV3, VGG and AlexNet put
together from paddle's own building blocks: BasicBlock, BottleneckBlock, MakeFire,
DenseBlock, Inception, InceptionC, make_layers, ConvPoolLayer) and custom paddle.nn
layers (LSTM, GRU and SimpleRNN, bidirectional and stacked; TransformerEncoder/Decoder
and MultiHeadAttention; the norms; Conv1D/2D/3D and their transposes with groups,
dilation and padding modes; interpolate in every mode; pooling; gather/scatter,
sorting, cumsum, one_hot, pad, flip, roll and other tensor ops; yolo_box, prior_box,
roi_align and other detection ops), with random seeded weights (randomised BatchNorm
statistics, eval mode), and exports each with `paddle.onnx.export` (paddle2onnx, its
default Polygraphy constant folding included) at a few opsets, some with a dynamic
batch (InputSpec None). Each export runs in a forked child, because paddle2onnx aborts
the process on some refusals (and swallows or sys.exit()s on others). Every export is
checked with onnxruntime against Paddle's own (dygraph) outputs; an export that
paddle2onnx refuses, that onnxruntime cannot run, or that disagrees with Paddle is not
kept but recorded. The layer and op groups are several pieces side by side: when a
group is refused, each piece is exported alone, the refused pieces are recorded and
the group is exported again without them (its index entry names the pieces kept).

    OUT/<model>__p2o_op<opset>[_dyn].onnx
    OUT/<model>__p2o_op<opset>[_dyn].in<k>.npy       seeded inputs (np.save)
    OUT/<model>__p2o_op<opset>[_dyn].in<k>.alt.npy   a second batch size (dynamic)
    OUT/<model>__p2o_op<opset>[_dyn].out<k>.npy      Paddle's output k on the inputs
    OUT/index.json     the kept exports, keyed by file, as the tests read them
    OUT/refused.json   the exports that were not kept, with the reason

`--sweep` exports every model at every sweep opset (`--opsets`), dynamic and static,
and adds the full-size vision models (ResNet18/50, ResNeXt50, SqueezeNet, DenseNet121,
GoogLeNet, InceptionV3, VGG11, AlexNet, MobileNets at scale 1), to look for trouble
beyond the kept corpus. `--only` re-exports the named models into OUT's existing
index. P2O_KEEP_REFUSED=1 keeps the logs and the exports that disagree with Paddle,
to find whose fault a disagreement is.

It needs paddlepaddle (CPU; 3.3.1 wrote the corpus), paddle2onnx (2.1.0, which pins
onnx 1.17.0), onnxruntime and numpy; no network (weights are random, never
downloaded). It is not run by onegraph's tests. Run it with a Python that has them:

    python3.11 -m venv /tmp/paddlevenv
    /tmp/paddlevenv/bin/pip install paddlepaddle==3.3.1 paddle2onnx==2.1.0 \
        onnxruntime==1.32.0 numpy
    OMP_NUM_THREADS=1 /tmp/paddlevenv/bin/python tools/export_paddle_models.py \
        tests/convert/data/paddle_exported [--only NAME ...] [--sweep] [--opsets 9 ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import re
import sys
import traceback
from typing import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")  # two shared cores: stay on one

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn as nn  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
import paddle.vision.models as M  # noqa: E402
import paddle.vision.ops as V  # noqa: E402

# the modules themselves (paddle.vision.models.googlenet etc. name factory functions)
MOD = {n: importlib.import_module(f"paddle.vision.models.{n}") for n in
       ("resnet", "squeezenet", "densenet", "googlenet", "inceptionv3", "vgg", "alexnet")}

B_MAIN, B_ALT = 2, 3  # batch sizes of the inputs and of the .alt inputs
CHECK_RTOL, CHECK_ATOL = 1e-3, 1e-4  # onnxruntime vs Paddle, to keep an export
MAX_P2O_OPSET = 21  # paddle2onnx 2.1 aborts on anything above
# P2O_KEEP_REFUSED=1 keeps the export logs and the exports that disagree with Paddle
KEEP_REFUSED = bool(os.environ.get("P2O_KEEP_REFUSED"))


# ----------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------

@dataclasses.dataclass
class In:
    """One model input: its shape ("B" marks the batch axis), dtype and how to draw
    it: "randn" N(0, 1), "int" integers in [lo, hi), "uniform" in [lo, hi), "bool"."""

    name: str
    shape: tuple
    dtype: str = "float32"
    kind: str = "randn"
    lo: float = 0
    hi: float = 1

    def spec(self, dynamic: bool) -> paddle.static.InputSpec:
        """The InputSpec: the batch axis left open (None) when dynamic."""
        shape = [(None if dynamic else B_MAIN) if d == "B" else d for d in self.shape]
        return paddle.static.InputSpec(shape=shape, dtype=self.dtype, name=self.name)

    def draw(self, rng: np.random.Generator, batch: int) -> np.ndarray:
        """A seeded array of this input at the given batch size."""
        shape = tuple(batch if d == "B" else d for d in self.shape)
        if self.kind == "int":
            a = rng.integers(int(self.lo), int(self.hi), size=shape)
        elif self.kind == "uniform":
            a = rng.uniform(self.lo, self.hi, size=shape)
        elif self.kind == "bool":
            a = rng.random(shape) < 0.5
        else:
            a = rng.standard_normal(shape)
        return a.astype(self.dtype)


def img(c=3, h=32, w=32, name="image"):
    """An image batch input."""
    return In(name, ("B", c, h, w))


# ----------------------------------------------------------------------------------
# Catalogue
# ----------------------------------------------------------------------------------

@dataclasses.dataclass
class Model:
    """A model of the catalogue and how the corpus exports it: at `opsets`, those in
    `dynamic` with an open batch axis; `sweep_only` models only with --sweep. An op
    group names its `pieces` (label -> factory) so that a refused piece can be found
    and left out."""

    name: str
    family: str
    make: Callable[[], nn.Layer]
    inputs: list
    opsets: tuple = (13,)
    dynamic: tuple = ()
    sweep_only: bool = False
    seed: int = 0
    pieces: dict | None = None

    def build(self, keep=None, touch=False) -> nn.Layer:
        """The layer: with `keep`, an op group of only those pieces (`touch`: see
        Group)."""
        if keep is None or self.pieces is None:
            return self.make()
        return group(self.pieces, len(self.inputs), keep, touch)


def fn(f, arity):
    """A parameter-free layer whose forward is f (paddle's to_static needs a forward
    with named arguments, so one class per arity)."""
    if arity == 1:
        class Fn1(nn.Layer):
            def forward(self, a):
                return f(a)
        return Fn1()
    if arity == 2:
        class Fn2(nn.Layer):
            def forward(self, a, b):
                return f(a, b)
        return Fn2()

    class Fn3(nn.Layer):
        def forward(self, a, b, c):
            return f(a, b, c)
    return Fn3()


class Head(nn.Layer):
    """body, then global average pooling and a linear classifier of 10 classes."""

    def __init__(self, body, channels):
        super().__init__()
        self.body = body
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(channels, 10)

    def forward(self, x):
        return self.fc(paddle.flatten(self.pool(self.body(x)), 1))


def stem(c_out, c_in=3):
    """A conv-BN-ReLU stem with stride 2."""
    return nn.Sequential(nn.Conv2D(c_in, c_out, 3, stride=2, padding=1),
                         nn.BatchNorm2D(c_out), nn.ReLU())


def mini_resnet(bottleneck=False):
    """A two-stage ResNet of paddle's own BasicBlock or BottleneckBlock (8 and 16
    wide, the second stage downsampling with a 1x1 conv shortcut)."""
    blk = MOD["resnet"].BottleneckBlock if bottleneck else MOD["resnet"].BasicBlock
    exp = blk.expansion
    down = nn.Sequential(nn.Conv2D(8 * exp, 16 * exp, 1, stride=2),
                         nn.BatchNorm2D(16 * exp))
    first_down = None if exp == 1 else nn.Sequential(nn.Conv2D(8, 8 * exp, 1),
                                                     nn.BatchNorm2D(8 * exp))
    body = nn.Sequential(stem(8), blk(8, 8, downsample=first_down),
                         blk(8 * exp, 16, stride=2, downsample=down))
    return Head(body, 16 * exp)


def mini_squeezenet():
    """SqueezeNet-style: paddle's MakeFire modules between max pools."""
    body = nn.Sequential(stem(8), nn.MaxPool2D(3, 2, ceil_mode=True),
                         MOD["squeezenet"].MakeFire(8, 4, 8, 8),
                         MOD["squeezenet"].MakeFire(16, 4, 8, 8),
                         nn.MaxPool2D(3, 2, ceil_mode=True),
                         MOD["squeezenet"].MakeFire(16, 6, 12, 12))
    return Head(body, 24)


def mini_densenet():
    """DenseNet-style: paddle's DenseBlock and TransitionLayer, growth rate 4."""
    body = nn.Sequential(stem(8), MOD["densenet"].DenseBlock(8, 3, 2, 4, 0.0, name="db1"),
                         MOD["densenet"].TransitionLayer(20, 10),
                         MOD["densenet"].DenseBlock(10, 2, 2, 4, 0.0, name="db2"),
                         nn.BatchNorm2D(18), nn.ReLU())
    return Head(body, 18)


def mini_googlenet():
    """GoogLeNet-style: two of paddle's Inception modules (1x1, 3x3, 5x5, pool)."""
    body = nn.Sequential(stem(8), MOD["googlenet"].Inception(8, 16, 4, 4, 8, 2, 2, 2),
                         nn.MaxPool2D(3, 2, padding=1),
                         MOD["googlenet"].Inception(16, 16, 4, 4, 8, 2, 2, 2))
    return Head(body, 16)


def mini_inception_v3():
    """InceptionV3-style: paddle's InceptionC (factorised 1x7 / 7x1 convs, average
    pooling branch) at 16 channels in, behind a small stem."""
    body = nn.Sequential(stem(16), MOD["inceptionv3"].InceptionC(16, 4))
    return Head(body, 768)


def mini_vgg():
    """paddle's VGG over make_layers' features of a small cfg with BatchNorm, its
    classifier off (num_classes=0) and its 7x7 adaptive pool on, then a small head."""
    feats = MOD["vgg"].make_layers([8, "M", 16, "M", 16, "M"], batch_norm=True)
    vgg = M.VGG(feats, num_classes=0, with_pool=True)
    return nn.Sequential(vgg, nn.Flatten(), nn.Linear(16 * 49, 10))


def mini_alexnet():
    """AlexNet-style: paddle's ConvPoolLayer (conv, ReLU, 3x3/2 max pool) twice, a
    plain conv and a dropout-and-linear head (dropout is identity in eval mode)."""
    body = nn.Sequential(MOD["alexnet"].ConvPoolLayer(3, 8, 5, 2, 2, 0.1, act="relu"),
                         MOD["alexnet"].ConvPoolLayer(8, 16, 3, 1, 1, 0.1, act="relu"),
                         nn.Conv2D(16, 16, 3, padding=1), nn.ReLU())
    return nn.Sequential(body, nn.Flatten(), nn.Dropout(0.5), nn.Linear(16 * 3 * 3, 10))


class RNNs(nn.Layer):
    """An nn.LSTM / GRU / SimpleRNN: its output sequence and, when `states`, its final
    state(s) too."""

    def __init__(self, kind, states=True, **kw):
        super().__init__()
        self.states = states
        self.rnn = getattr(nn, kind)(8, 12, **kw)

    def forward(self, x):
        out, state = self.rnn(x)
        if not self.states:
            return out
        if isinstance(state, (tuple, list)):
            return out, state[0], state[1]
        return out, state


class LSTMWithState(nn.Layer):
    """A single-direction LSTM started from given states (batch on axis 1 of them)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 12)

    def forward(self, x, h0, c0):
        out, (h, c) = self.rnn(x, (h0, c0))
        return out, h, c


class Encoder(nn.Layer):
    """Token embedding plus learned positions into a 2-layer TransformerEncoder,
    causal when asked (a constant additive mask), mean-pooled to a linear head."""

    def __init__(self, causal=False, pre_norm=False, act="relu"):
        super().__init__()
        self.causal = causal
        self.emb = nn.Embedding(50, 16)
        self.pos = self.create_parameter([1, 7, 16])
        layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=act,
                                           normalize_before=pre_norm)
        self.enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16))
        self.fc = nn.Linear(16, 3)

    def forward(self, ids):
        x = self.emb(ids) + self.pos
        mask = None
        if self.causal:
            mask = paddle.triu(paddle.full([7, 7], -1e9), 1)
        h = self.enc(x, mask)
        return h, self.fc(h.mean(axis=1))


class Attention(nn.Layer):
    """nn.MultiHeadAttention with other key and value widths, weights returned."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiHeadAttention(16, 4, kdim=12, vdim=8, need_weights=True)

    def forward(self, q, k, v):
        out, w = self.mha(q, k, v)
        return out, w


class Decoder(nn.Layer):
    """A TransformerDecoder layer over a memory, with a causal target mask."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(16, 2, 24, dropout=0.0, activation="gelu")
        self.dec = nn.TransformerDecoder(layer, 1)

    def forward(self, tgt, memory):
        mask = paddle.triu(paddle.full([5, 5], -1e9), 1)
        return self.dec(tgt, memory, tgt_mask=mask)


# ----------------------------------------------------------------------------------
# Op groups: a model of several pieces side by side, each piece a layer or a function
# of the model's inputs. A piece paddle2onnx refuses (or gets wrong) is found by
# exporting the pieces alone, recorded in refused.json and left out of the group.
# ----------------------------------------------------------------------------------

class Group(nn.Layer):
    """The pieces (layers) applied to the same inputs, their outputs concatenated;
    with `touch`, one more output that reads every input, since paddle.jit.save
    refuses a model with an input that no output depends on (a piece exported alone
    may not read them all)."""

    def __init__(self, pieces, touch=False):
        super().__init__()
        self.parts = nn.LayerList(pieces)
        self.touch = touch

    def run(self, *xs):
        outs = []
        for p in self.parts:
            r = p(*xs)
            outs += list(r) if isinstance(r, (tuple, list)) else [r]
        if self.touch:
            # one value of each input, as shape [1] (paddle2onnx writes 0-D as [1])
            outs.append(paddle.add_n([paddle.cast(x, "float32").flatten()[:1] for x in xs]))
        return tuple(outs)


class Group1(Group):
    def forward(self, a):
        return self.run(a)


class Group2(Group):
    def forward(self, a, b):
        return self.run(a, b)


class Group3(Group):
    def forward(self, a, b, c):
        return self.run(a, b, c)


def group(pieces: dict, arity: int, keep=None, touch=False) -> nn.Layer:
    """A Group of the pieces named in `keep` (all by default); a piece factory that
    gives a plain function is wrapped as a parameter-free layer."""
    made = []
    for label, make in pieces.items():
        if keep is not None and label not in keep:
            continue
        p = make()
        made.append(p if isinstance(p, nn.Layer) else fn(p, arity))
    return (Group1, Group2, Group3)[arity - 1](made, touch)


class Pairwise(nn.Layer):
    """A two-input layer of 2-D inputs (nn.Bilinear) applied to the first rows of
    the model's two inputs."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, a, b):
        return self.layer(a[:, 0], b[:, 0])


class First(nn.Layer):
    """A layer applied to the first of the model's inputs only."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, a, *rest):
        return self.layer(a)


def _f(f):
    """A piece factory of the function f."""
    return lambda: f


def _i(**kw):
    """A piece: F.interpolate with these arguments."""
    return _f(lambda x: F.interpolate(x, **kw))


NORMS_2D = dict(batch_norm=lambda: nn.BatchNorm2D(6), group_norm=lambda: nn.GroupNorm(3, 6),
                instance_norm=lambda: nn.InstanceNorm2D(6),
                layer_norm_chw=lambda: nn.LayerNorm([6, 5, 4]),
                layer_norm_last=lambda: nn.LayerNorm(4),
                local_response_norm=lambda: nn.LocalResponseNorm(3),
                normalize=_f(lambda x: F.normalize(x, axis=1)))
NORMS_1D = dict(batch_norm_1d=lambda: nn.BatchNorm1D(4),
                instance_norm_1d=lambda: nn.InstanceNorm1D(4),
                group_norm_1d=lambda: nn.GroupNorm(2, 4),
                layer_norm=lambda: nn.LayerNorm(30))
NORMS_3D = dict(batch_norm_3d=lambda: nn.BatchNorm3D(4),
                instance_norm_3d=lambda: nn.InstanceNorm3D(4),
                group_norm_3d=lambda: nn.GroupNorm(4, 4))
CONVS_2D = dict(
    grouped_dilated=lambda: nn.Conv2D(4, 8, 3, groups=2, dilation=2, padding=2),
    strided_asymmetric=lambda: nn.Conv2D(4, 6, 3, stride=2, padding=[1, 0, 2, 1]),
    depthwise_same=lambda: nn.Conv2D(4, 4, 3, groups=4, padding="same"),
    valid_rect=lambda: nn.Conv2D(4, 4, (3, 5), padding="valid", stride=(1, 2)),
    reflect=lambda: nn.Conv2D(4, 4, 3, padding=1, padding_mode="reflect"),
    replicate=lambda: nn.Conv2D(4, 4, 3, padding=1, padding_mode="replicate"),
    circular=lambda: nn.Conv2D(4, 4, 3, padding=1, padding_mode="circular"),
    same_strided=lambda: nn.Conv2D(4, 4, 4, stride=2, padding="same"))
CONVS_1D = dict(
    grouped_dilated=lambda: nn.Conv1D(4, 8, 3, groups=2, dilation=2, padding=2),
    reflect=lambda: nn.Conv1D(4, 4, 3, padding=1, padding_mode="reflect"),
    circular=lambda: nn.Conv1D(4, 4, 3, padding=1, padding_mode="circular"),
    same_strided=lambda: nn.Conv1D(4, 4, 4, stride=2, padding="same"),
    transpose=lambda: nn.Conv1DTranspose(4, 6, 3, stride=2, padding=1, output_padding=1),
    transpose_grouped=lambda: nn.Conv1DTranspose(4, 4, 3, stride=2, groups=2, dilation=2))
CONVS_3D = dict(
    grouped=lambda: nn.Conv3D(4, 4, 3, padding=1, groups=2),
    strided_dilated=lambda: nn.Conv3D(4, 2, (1, 3, 3), stride=(1, 2, 2),
                                      dilation=(1, 2, 1)),
    transpose=lambda: nn.Conv3DTranspose(4, 2, 2, stride=2),
    transpose_padded=lambda: nn.Conv3DTranspose(4, 4, 3, stride=2, padding=1,
                                                output_padding=1, groups=2))
CONV_TRANSPOSES_2D = dict(
    grouped_output_padding=lambda: nn.Conv2DTranspose(4, 4, 3, stride=2, groups=2,
                                                      padding=1, output_padding=1),
    dilated_asymmetric=lambda: nn.Conv2DTranspose(4, 2, 3, dilation=2, padding=[1, 2]),
    strided=lambda: nn.Conv2DTranspose(4, 3, (2, 4), stride=(2, 3)))
INTERP_2D = dict(
    nearest_scale=_i(scale_factor=2.0, mode="nearest"),
    nearest_size=_i(size=[9, 11], mode="nearest"),
    nearest_down=_i(size=[3, 4], mode="nearest"),
    nearest_scale_list=_i(scale_factor=[2.0, 3.0], mode="nearest"),
    bilinear_scale_list=_i(scale_factor=[1.5, 2.0], mode="bilinear", align_corners=False),
    bilinear_scale=_i(scale_factor=2.0, mode="bilinear", align_corners=False),
    bilinear_corners=_i(size=[9, 11], mode="bilinear", align_corners=True),
    bilinear_mode1=_i(size=[9, 11], mode="bilinear", align_corners=False, align_mode=1),
    bilinear_down=_i(size=[3, 4], mode="bilinear", align_corners=False),
    bilinear_down_mode1=_i(size=[3, 4], mode="bilinear", align_mode=1,
                           align_corners=False),
    bicubic=_i(size=[9, 11], mode="bicubic", align_corners=False),
    bicubic_corners=_i(scale_factor=1.5, mode="bicubic", align_corners=True),
    bicubic_down=_i(size=[3, 4], mode="bicubic", align_corners=False),
    area=_i(size=[3, 4], mode="area"),
    upsampling_bilinear=lambda: nn.UpsamplingBilinear2D(scale_factor=2.0),
    upsampling_nearest=lambda: nn.UpsamplingNearest2D(size=[10, 7]))
INTERP_1D = dict(
    linear=_i(size=[31], mode="linear", align_corners=False, data_format="NCW"),
    linear_corners=_i(scale_factor=2.0, mode="linear", align_corners=True,
                      data_format="NCW"),
    linear_mode1=_i(size=[17], mode="linear", align_corners=False, align_mode=1,
                    data_format="NCW"))
INTERP_3D = dict(
    trilinear=_i(size=[4, 7, 5], mode="trilinear", align_corners=False),
    trilinear_corners=_i(scale_factor=2.0, mode="trilinear", align_corners=True),
    nearest=_i(scale_factor=2.0, mode="nearest", data_format="NCDHW"))
POOLS_2D = dict(
    max_ceil=_f(lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True)),
    max_padded=_f(lambda x: F.max_pool2d(x, 2, 2, padding=1)),
    avg_inclusive=_f(lambda x: F.avg_pool2d(x, 3, 2, padding=1, exclusive=False)),
    avg_exclusive_ceil=_f(lambda x: F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True)),
    adaptive_avg_uneven=_f(lambda x: F.adaptive_avg_pool2d(x, [3, 4])),
    adaptive_max_uneven=_f(lambda x: F.adaptive_max_pool2d(x, [3, 4])),
    adaptive_avg_even=_f(lambda x: F.adaptive_avg_pool2d(x, [7, 1])),
    adaptive_max_even=_f(lambda x: F.adaptive_max_pool2d(x, [1, 11])),
    global_avg=_f(lambda x: F.adaptive_avg_pool2d(x, 1)),
    global_max=_f(lambda x: F.adaptive_max_pool2d(x, 1)),
    lp=_f(lambda x: F.lp_pool2d(x, 2.0, 2)))
POOLS_1D = dict(
    max=_f(lambda x: F.max_pool1d(x, 3, 2, padding=1)),
    avg=_f(lambda x: F.avg_pool1d(x, 4, 3)),
    adaptive_avg_even=_f(lambda x: F.adaptive_avg_pool1d(x, 5)),
    adaptive_avg_uneven=_f(lambda x: F.adaptive_avg_pool1d(x, 7)),
    adaptive_max=_f(lambda x: F.adaptive_max_pool1d(x, 5)))
POOLS_3D = dict(
    max=_f(lambda x: F.max_pool3d(x, 2, 2)),
    avg=_f(lambda x: F.avg_pool3d(x, 3, 1, padding=1)),
    adaptive_avg_uneven=_f(lambda x: F.adaptive_avg_pool3d(x, [2, 3, 2])),
    adaptive_avg_global=_f(lambda x: F.adaptive_avg_pool3d(x, 1)))


def _rows(idx):
    return paddle.reshape(idx, [-1])[:3] % 5


def _order(x):
    return paddle.argsort(x[:, :, 0], axis=1)[:, :3]


GATHERS = dict(
    gather=_f(lambda x, i: paddle.gather(x, _rows(i), axis=1)),
    gather_nd=_f(lambda x, i: paddle.gather_nd(
        x, paddle.stack([i[:, 0] % 2, i[:, 1] % 5], axis=1))),
    index_select=_f(lambda x, i: paddle.index_select(x, _rows(i), axis=2)),
    take_along_axis=_f(lambda x, i: paddle.take_along_axis(x[:, :, 0], _order(x), 1)),
    put_along_axis=_f(lambda x, i: paddle.put_along_axis(x[:, :, 0], _order(x), 9.0, 1)),
    scatter_overwrite=_f(lambda x, i: paddle.scatter(
        x[0], paddle.to_tensor([1, 3, 0]), paddle.ones([3, 6]), overwrite=True)),
    scatter_add=_f(lambda x, i: paddle.scatter(
        x[0], paddle.to_tensor([1, 3, 1]), paddle.ones([3, 6]), overwrite=False)),
    scatter_nd_add=_f(lambda x, i: paddle.scatter_nd_add(
        x[0], paddle.to_tensor([[0], [4], [0]]), paddle.ones([3, 6]))),
    index_sample=_f(lambda x, i: paddle.index_sample(x[:, :, 0], _order(x))),
    embedding=_f(lambda x, i: F.embedding(i % 5, x[0])))
SORTS = dict(
    topk=_f(lambda x: paddle.topk(x, 3, axis=-1)),
    topk_smallest=_f(lambda x: paddle.topk(x, 2, axis=1, largest=False)),
    argsort_desc=_f(lambda x: paddle.argsort(x, axis=-1, descending=True)),
    sort=_f(lambda x: paddle.sort(x, axis=1)),
    argmax=_f(lambda x: paddle.argmax(x, axis=1)),
    argmin_keepdim=_f(lambda x: paddle.argmin(x, axis=-1, keepdim=True)),
    cumsum=_f(lambda x: paddle.cumsum(x, axis=-1)),
    cumsum_flipped=_f(lambda x: paddle.cumsum(paddle.flip(x, [1]), axis=1)),
    cumprod=_f(lambda x: paddle.cumprod(x * 0.5, dim=2)),
    kthvalue=_f(lambda x: paddle.kthvalue(x, 2, axis=-1)),
    unique_consecutive=_f(lambda x: paddle.unique_consecutive(paddle.floor(x))))
SHAPES = dict(
    one_hot=_f(lambda x, ids: F.one_hot(ids, 7)),
    expand=_f(lambda x, ids: paddle.expand(x[:, :1], [-1, 5, 6])),
    tile=_f(lambda x, ids: paddle.tile(x, [1, 2, 1])),
    flip=_f(lambda x, ids: paddle.flip(x, [1, 2])),
    roll=_f(lambda x, ids: paddle.roll(x, 2, axis=2)),
    roll_two_axes=_f(lambda x, ids: paddle.roll(x, [1, -2], [1, 2])),
    roll_flat=_f(lambda x, ids: paddle.roll(x, 3)),
    where=_f(lambda x, ids: paddle.where(x > 0, x, paddle.zeros_like(x))),
    masked_fill=_f(lambda x, ids: paddle.masked_fill(x, x < -0.5, 7.0)),
    tril_triu=_f(lambda x, ids: (paddle.tril(x), paddle.triu(x, 1))),
    split_concat=_f(lambda x, ids: paddle.concat(paddle.split(x, [2, 4], -1)[::-1], -1)),
    chunk=_f(lambda x, ids: paddle.chunk(x, 3, axis=-1)),
    stack_unstack=_f(lambda x, ids: paddle.stack(paddle.unstack(x, axis=1)[::-1], 2)),
    transpose_flatten=_f(lambda x, ids: paddle.flatten(paddle.transpose(x, [0, 2, 1]), 1)),
    squeeze_unsqueeze=_f(lambda x, ids: paddle.unsqueeze(paddle.squeeze(x[:, :1], 1),
                                                         [0, 3])),
    strided_slice=_f(lambda x, ids: paddle.strided_slice(x, [1, 2], [0, 5], [5, 0],
                                                         [2, -2])),
    step_slice=_f(lambda x, ids: x[:, ::2, 1:5:3]),
    repeat_interleave=_f(lambda x, ids: paddle.repeat_interleave(x, 2, axis=1)),
    meshgrid=_f(lambda x, ids: paddle.meshgrid(x[0, :, 0], x[0, 0, :])),
    diagonal=_f(lambda x, ids: paddle.diagonal(x, axis1=1, axis2=2)),
    masked_select=_f(lambda x, ids: paddle.masked_select(x, x > 0.5)),
    nonzero=_f(lambda x, ids: paddle.nonzero(x > 1.0)))
PADS = dict(
    constant=_f(lambda x: F.pad(x, [1, 2, 0, 1], mode="constant", value=0.5)),
    constant_all_axes=_f(lambda x: F.pad(x, [0, 0, 1, 0, 1, 2, 0, 1], value=-1.0)),
    reflect=_f(lambda x: F.pad(x, [2, 1, 1, 2], mode="reflect")),
    replicate=_f(lambda x: F.pad(x, [1, 2, 2, 1], mode="replicate")),
    circular=_f(lambda x: F.pad(x, [1, 1, 2, 0], mode="circular")),
    zero_pad_layer=lambda: nn.ZeroPad2D([1, 0, 2, 1]),
    reflect_1d=_f(lambda x: F.pad(paddle.reshape(x, [0, 4, -1]), [2, 3], mode="reflect",
                                  data_format="NCL")))


def _unary(**fs):
    return {k: _f(f) for k, f in fs.items()}


ACTIVATIONS = _unary(
    gelu=F.gelu, gelu_tanh=lambda x: F.gelu(x, approximate=True), silu=F.silu,
    hardswish=F.hardswish, hardsigmoid=F.hardsigmoid, mish=F.mish,
    softplus=lambda x: F.softplus(x, beta=2, threshold=5), softsign=F.softsign,
    elu=lambda x: F.elu(x, 0.7), selu=F.selu, leaky_relu=lambda x: F.leaky_relu(x, 0.1),
    relu6=lambda x: F.relu6(x * 4), celu=lambda x: F.celu(x, 1.5),
    hardtanh=lambda x: F.hardtanh(x, -0.5, 0.5),
    log_softmax=lambda x: F.log_softmax(x, axis=1), softmax=lambda x: F.softmax(x, -1),
    tanhshrink=F.tanhshrink, softshrink=lambda x: F.softshrink(x, 0.3),
    hardshrink=lambda x: F.hardshrink(x, 0.3),
    thresholded_relu=lambda x: F.thresholded_relu(x, 0.2), swish=F.swish,
    log_sigmoid=F.log_sigmoid, erf=paddle.erf, clip=lambda x: paddle.clip(x, -0.4, 0.6),
    sign=paddle.sign, round=lambda x: paddle.round(x * 3), floor=paddle.floor,
    ceil=paddle.ceil, pow=lambda x: paddle.pow(paddle.abs(x), 1.5),
    rsqrt=lambda x: paddle.rsqrt(paddle.abs(x) + 0.1),
    log1p=lambda x: paddle.log1p(paddle.abs(x)),
    remainder=lambda x: paddle.remainder(x * 3, paddle.full([1], 0.7)),
    floor_divide=lambda x: paddle.floor_divide(paddle.floor(x * 5), paddle.full([1], 2.)),
    atan=paddle.atan, sinh=paddle.sinh, reciprocal=lambda x: paddle.reciprocal(x + 5),
    square=paddle.square, expm1=paddle.expm1, logit=lambda x: paddle.logit(
        F.sigmoid(x), 0.01), glu=lambda x: F.glu(x, axis=-1))
PRELU = dict(prelu=lambda: nn.PReLU(5), prelu_shared=lambda: nn.PReLU(),
             rrelu_eval=lambda: nn.RReLU(), maxout=_f(lambda x: F.maxout(
                 paddle.reshape(x, [0, 5, 3, 2]), 5)))
REDUCTIONS = _unary(
    sum=lambda x: paddle.sum(x, axis=[1, 2]),
    mean_keepdim=lambda x: paddle.mean(x, axis=-1, keepdim=True),
    max=lambda x: paddle.max(x, axis=1), min_all=paddle.min,
    prod=lambda x: paddle.prod(x * 0.5 + 1, axis=2),
    logsumexp=lambda x: paddle.logsumexp(x, axis=1), std=lambda x: paddle.std(x, axis=-1),
    var=lambda x: paddle.var(x, axis=1), norm_2=lambda x: paddle.norm(x, p=2, axis=-1),
    norm_1=lambda x: paddle.norm(x, p=1, axis=1),
    norm_fro=lambda x: paddle.norm(x, p="fro", axis=[1, 2]),
    amax=lambda x: paddle.amax(x, axis=[0, 2]),
    any=lambda x: paddle.any(x > 1.5, axis=1), all=lambda x: paddle.all(x > -2.5, axis=-1),
    count_nonzero=lambda x: paddle.count_nonzero(x > 0, axis=1),
    median=lambda x: paddle.median(x, axis=-1))
MATMULS = dict(
    transpose_y=_f(lambda a, b: paddle.matmul(a, b, transpose_y=True)),
    transpose_x=_f(lambda a, b: paddle.matmul(a, b, transpose_x=True)),
    bmm=_f(lambda a, b: paddle.bmm(a, paddle.transpose(b, [0, 2, 1]))),
    einsum=_f(lambda a, b: paddle.einsum("bij,bkj->bik", a, b)),
    broadcast=_f(lambda a, b: paddle.matmul(a, paddle.ones([6, 2]))),
    outer=_f(lambda a, b: paddle.outer(a[0, 0], b[0, 0])),
    linear=lambda: First(nn.Linear(6, 3)),
    bilinear=lambda: Pairwise(nn.Bilinear(6, 6, 3)),
    dist=_f(lambda a, b: paddle.dist(a, b, 2.0)),
    cosine_similarity=_f(lambda a, b: F.cosine_similarity(a, b, axis=-1)))
DYNAMIC = dict(
    arange=_f(lambda x: x + paddle.arange(0, paddle.shape(x)[1], dtype="float32")
              .unsqueeze(-1)),
    full_like=_f(lambda x: paddle.full_like(x, 2.0) * x),
    reshape_zero=_f(lambda x: paddle.reshape(x, [0, -1, 2])),
    slice_by_size=_f(lambda x: x[:, : paddle.shape(x)[1] // 2]),
    linspace=_f(lambda x: paddle.linspace(0, 1, 4, dtype="float32") * x),
    expand_as=_f(lambda x: paddle.expand_as(x[:1], x)),
    zeros_shape=_f(lambda x: paddle.zeros(paddle.shape(x), "float32") + x),
    batch_size_out=_f(lambda x: paddle.shape(x)[0:1] * 2))
LOGIC = dict(
    compare=_f(lambda x, y: (paddle.greater_than(x, y), paddle.less_equal(x, y),
                             paddle.not_equal(x, y))),
    equal_int=_f(lambda x, y: paddle.equal(paddle.cast(x * 4, "int32"),
                                           paddle.cast(y * 4, "int32"))),
    logical=_f(lambda x, y: (paddle.logical_and(x > 0, y > 0),
                             paddle.logical_xor(x > 0, y < 0),
                             paddle.logical_or(x > 0.5, y < -0.5),
                             paddle.logical_not(x > y))),
    bitwise=_f(lambda x, y: paddle.bitwise_and(paddle.cast(x * 9, "int32"),
                                               paddle.cast(y * 9, "int32"))),
    isnan_isinf=_f(lambda x, y: (paddle.isnan(paddle.log(x)),
                                 paddle.isinf(1.0 / paddle.floor(x)))),
    max_min=_f(lambda x, y: (paddle.maximum(x, y), paddle.minimum(x, y))),
    cast=_f(lambda x, y: (paddle.cast(x > y, "float32") * x, paddle.cast(x * 10, "int64"))),
    atan2=_f(lambda x, y: paddle.atan2(x, y)),
    mod_int=_f(lambda x, y: paddle.mod(paddle.cast(x * 9, "int32"),
                                       paddle.full([1], 4, "int32"))),
    fmax=_f(lambda x, y: paddle.fmax(x, y)),
    allclose=_f(lambda x, y: paddle.isclose(x, y, rtol=0.5)),
    lerp=_f(lambda x, y: paddle.lerp(x, y, 0.3)),
    addmm=_f(lambda x, y: paddle.addmm(paddle.ones([5, 5]), x[0],
                                       paddle.transpose(y[0], [1, 0]), 0.5, 2.0)))
IM2COL = dict(
    unfold=_f(lambda x: F.unfold(x, [2, 3], strides=1, paddings=1)),
    pixel_shuffle=_f(lambda x: F.pixel_shuffle(x, 2)),
    pixel_unshuffle=_f(lambda x: F.pixel_unshuffle(x, 2)),
    channel_shuffle=_f(lambda x: F.channel_shuffle(x, 2)),
    fold=_f(lambda x: F.fold(F.unfold(x, 2, strides=2), [6, 8], 2, strides=2)),
    space_to_depth_reshape=_f(lambda x: paddle.reshape(
        paddle.transpose(paddle.reshape(x, [0, 4, 3, 2, 4, 2]), [0, 1, 3, 5, 2, 4]),
        [0, 16, 3, 4])))
DETECTION = dict(
    yolo_box=_f(lambda x, size: V.yolo_box(
        x, size, anchors=[10, 13, 16, 30, 33, 23], class_num=2, conf_thresh=0.01,
        downsample_ratio=8, clip_bbox=True)),
    yolo_box_unclipped=_f(lambda x, size: V.yolo_box(
        x, size, anchors=[10, 13, 16, 30, 33, 23], class_num=2, conf_thresh=0.3,
        downsample_ratio=16, clip_bbox=False, scale_x_y=1.05)))
YOLO_IOU = dict(yolo_box_iou_aware=_f(lambda x, size: V.yolo_box(
    x, size, anchors=[10, 13, 16, 30], class_num=3, conf_thresh=0.1, downsample_ratio=16,
    clip_bbox=False, iou_aware=True, iou_aware_factor=0.4)))
PRIOR = dict(prior_box=_f(lambda feat, image: V.prior_box(
    feat, image, min_sizes=[4.0, 8.0], max_sizes=[10.0, 16.0], aspect_ratios=[2.0],
    flip=True, clip=True, steps=[4.0, 4.0])))
ROI = dict(
    roi_align=_f(lambda x, b, n: V.roi_align(x, b, n, 3, spatial_scale=0.5,
                                             sampling_ratio=2)),
    roi_align_unaligned=_f(lambda x, b, n: V.roi_align(x, b, n, (2, 3), spatial_scale=0.5,
                                                       aligned=False)),
    roi_pool=_f(lambda x, b, n: V.roi_pool(x, b, n, 2, spatial_scale=0.5)))
NMS = dict(
    nms=_f(lambda boxes, scores: V.nms(boxes[0], 0.3, scores=scores[0, 0], top_k=6)),
    matrix_nms=_f(lambda boxes, scores: V.matrix_nms(
        boxes, scores, 0.05, 0.1, 10, 5, background_label=-1, return_index=True)[:2]),
    multiclass_nms3=_f(lambda boxes, scores: paddle._C_ops.multiclass_nms3(
        boxes, scores, None, 0.05, 10, 5, 0.4, True, 1.0, -1)),
    box_coder=_f(lambda boxes, scores: V.box_coder(
        boxes[0], [0.1, 0.1, 0.2, 0.2], paddle.transpose(scores, [1, 2, 0])[:2, :, :]
        .tile([1, 1, 4]) - 0.5, code_type="decode_center_size", axis=0)))


def boxes_input(name, shape, size=16.0):
    """Boxes [x1, y1, x2, y2] with x2 > x1, y2 > y1 (from [0, size)), of this shape."""
    return In(name, shape, kind="boxes", hi=size)


def _g(pieces, arity):
    return lambda: group(pieces, arity)


SEQ = In("x", ("B", 5, 8))
X3 = In("x", ("B", 5, 6))
X5 = In("x", ("B", 4, 6, 5, 3))
X1D = In("x", ("B", 4, 30))
IDS = In("ids", ("B", 7), "int64", "int", 0, 50)

CATALOGUE = [
    # vision models (paddle's classes, or minis of their blocks)
    Model("lenet", "lenet", lambda: M.LeNet(), [img(1, 28, 28)], (11,), (11,)),
    Model("mobilenet_v1", "mobilenet_v1", lambda: M.MobileNetV1(0.125, 10),
          [img()], (13,), (13,)),
    Model("mobilenet_v2", "mobilenet_v2", lambda: M.MobileNetV2(0.1, 10), [img()], (17,)),
    Model("mobilenet_v3_small", "mobilenet_v3", lambda: M.MobileNetV3Small(0.1, 10),
          [img()], (MAX_P2O_OPSET,), (MAX_P2O_OPSET,)),
    Model("shufflenet_v2", "shufflenet_v2", lambda: M.ShuffleNetV2(0.25, num_classes=10),
          [img()], (13,)),
    Model("shufflenet_v2_swish", "shufflenet_v2",
          lambda: M.ShuffleNetV2(0.25, act="swish", num_classes=10), [img()], (17,),
          sweep_only=True),
    Model("resnet_basic", "resnet", mini_resnet, [img()], (11, 17), (17,)),
    Model("resnet_bottleneck", "resnet", lambda: mini_resnet(True), [img()], (13,)),
    Model("squeezenet", "squeezenet", mini_squeezenet, [img()], (13,), (13,)),
    Model("densenet", "densenet", mini_densenet, [img()], (17,)),
    Model("googlenet", "googlenet", mini_googlenet, [img()], (11,)),
    Model("inception_v3", "inception_v3", mini_inception_v3, [img()], (MAX_P2O_OPSET,)),
    Model("vgg", "vgg", mini_vgg, [img(3, 56, 56)], (13,)),
    Model("alexnet", "alexnet", mini_alexnet, [img()], (17,)),
    # the full-size classes, sweep only (too big for the corpus)
    Model("resnet18_full", "resnet", lambda: M.resnet18(num_classes=10), [img()], (13,),
          sweep_only=True),
    Model("resnet50_full", "resnet", lambda: M.resnet50(num_classes=10), [img()], (17,),
          sweep_only=True),
    Model("resnext50_full", "resnet", lambda: M.resnext50_32x4d(num_classes=10),
          [img()], (17,), sweep_only=True),
    Model("squeezenet1_1_full", "squeezenet", lambda: M.SqueezeNet("1.1", 10),
          [img(3, 64, 64)], (13,), sweep_only=True),
    Model("densenet121_full", "densenet", lambda: M.DenseNet(121, num_classes=10),
          [img()], (13,), sweep_only=True),
    Model("googlenet_full", "googlenet", lambda: M.GoogLeNet(10), [img(3, 224, 224)],
          (13,), sweep_only=True),
    Model("inception_v3_full", "inception_v3", lambda: M.InceptionV3(10),
          [img(3, 96, 96)], (13,), sweep_only=True),
    Model("vgg11_full", "vgg", lambda: M.vgg11(num_classes=10), [img()], (13,),
          sweep_only=True),
    Model("alexnet_full", "alexnet", lambda: M.AlexNet(10), [img(3, 224, 224)], (13,),
          sweep_only=True),
    Model("mobilenet_v3_large_full", "mobilenet_v3", lambda: M.MobileNetV3Large(1.0, 10),
          [img()], (17,), sweep_only=True),
    Model("mobilenet_v2_full", "mobilenet_v2", lambda: M.MobileNetV2(1.0, 10), [img()],
          (11,), sweep_only=True),
    # recurrent and attention models
    Model("bilstm", "lstm", lambda: RNNs("LSTM", direction="bidirect"), [SEQ],
          (11, 17), (17,)),
    Model("bilstm_2layer", "lstm",
          lambda: RNNs("LSTM", False, num_layers=2, direction="bidirect"), [SEQ],
          (13, 17), (17,)),
    Model("bilstm_2layer_states", "lstm",
          lambda: RNNs("LSTM", num_layers=2, direction="bidirect"), [SEQ], (13,)),
    Model("lstm_state", "lstm", LSTMWithState,
          [SEQ, In("h0", (1, "B", 12)), In("c0", (1, "B", 12))], (13,), (13,)),
    Model("bigru", "gru", lambda: RNNs("GRU", direction="bidirect"), [SEQ],
          (11, 17), (17,)),
    Model("gru_2layer", "gru", lambda: RNNs("GRU", False, num_layers=2), [SEQ], (13,)),
    Model("gru_time_major", "gru", lambda: RNNs("GRU", time_major=True),
          [In("x", (5, "B", 8))], (13,), (13,)),
    Model("simple_rnn", "simple_rnn",
          lambda: RNNs("SimpleRNN", num_layers=2, direction="bidirect"), [SEQ], (13,)),
    Model("simple_rnn_relu", "simple_rnn",
          lambda: RNNs("SimpleRNN", activation="relu"), [SEQ], (17,), (17,)),
    Model("transformer_encoder", "transformer", Encoder, [IDS], (13, 17), (17,)),
    Model("transformer_causal", "transformer", lambda: Encoder(True, True, "gelu"),
          [IDS], (MAX_P2O_OPSET,), (MAX_P2O_OPSET,)),
    Model("multihead_attention", "transformer", Attention,
          [In("q", ("B", 4, 16)), In("k", ("B", 6, 12)), In("v", ("B", 6, 8))],
          (13,), (13,)),
    Model("transformer_decoder", "transformer", Decoder,
          [In("tgt", ("B", 5, 16)), In("memory", ("B", 6, 16))], (17,)),
    # layers
    Model("norms_2d", "norms", _g(NORMS_2D, 1), [In("x", ("B", 6, 5, 4))], (11, 17),
          (17,), pieces=NORMS_2D),
    Model("norms_1d", "norms", _g(NORMS_1D, 1), [X1D], (13,), (13,), pieces=NORMS_1D),
    Model("norms_3d", "norms", _g(NORMS_3D, 1), [X5], (17,), pieces=NORMS_3D),
    Model("convs_2d", "conv", _g(CONVS_2D, 1), [In("x", ("B", 4, 9, 8))], (11, 17),
          (17,), pieces=CONVS_2D),
    Model("convs_1d", "conv", _g(CONVS_1D, 1), [X1D], (13,), (13,), pieces=CONVS_1D),
    Model("convs_3d", "conv", _g(CONVS_3D, 1), [X5], (13,), pieces=CONVS_3D),
    Model("conv_transposes_2d", "conv", _g(CONV_TRANSPOSES_2D, 1),
          [In("x", ("B", 4, 6, 5))], (11, 17), (17,), pieces=CONV_TRANSPOSES_2D),
    Model("interp_2d", "interpolate", _g(INTERP_2D, 1), [In("x", ("B", 3, 5, 7))],
          (13, MAX_P2O_OPSET), (13,), pieces=INTERP_2D),
    Model("interp_1d", "interpolate", _g(INTERP_1D, 1), [X1D], (11, 17), (17,),
          pieces=INTERP_1D),
    Model("interp_3d", "interpolate", _g(INTERP_3D, 1), [X5], (13,), pieces=INTERP_3D),
    Model("pools_2d", "pooling", _g(POOLS_2D, 1), [In("x", ("B", 3, 7, 11))], (11, 17),
          (17,), pieces=POOLS_2D),
    Model("pools_1d", "pooling", _g(POOLS_1D, 1), [X1D], (13,), (13,), pieces=POOLS_1D),
    Model("pools_3d", "pooling", _g(POOLS_3D, 1), [X5], (17,), pieces=POOLS_3D),
    # tensor ops
    Model("gathers", "gather_scatter", _g(GATHERS, 2),
          [X3, In("idx", (3, 2), "int64", "int", 0, 10)], (11,), pieces=GATHERS),
    Model("sorts", "sort", _g(SORTS, 1), [X3], (13,), (13,), pieces=SORTS),
    Model("shape_ops", "shape", _g(SHAPES, 2),
          [X3, In("ids", ("B", 4), "int64", "int", 0, 7)], (17,), (17,),
          pieces=SHAPES),
    Model("pads", "pad", _g(PADS, 1), [In("x", ("B", 4, 5, 6))], (13, 21), (13,),
          pieces=PADS),
    Model("activations", "activation", _g(ACTIVATIONS, 1), [X3], (17,), (17,),
          pieces=ACTIVATIONS),
    Model("prelu", "activation", _g(PRELU, 1), [In("x", ("B", 5, 6))], (13,), (13,),
          pieces=PRELU),
    Model("reductions", "reduce", _g(REDUCTIONS, 1), [X3], (21,), (MAX_P2O_OPSET,),
          pieces=REDUCTIONS),
    Model("matmuls", "matmul", _g(MATMULS, 2), [In("a", (2, 4, 6)), In("b", (2, 4, 6))],
          (13,), pieces=MATMULS),
    Model("dynamic_shapes", "shape", _g(DYNAMIC, 1), [In("x", ("B", 6, 4))], (11, 17),
          (11, 17), pieces=DYNAMIC),
    Model("logic", "logic", _g(LOGIC, 2),
          [In("x", ("B", 5, 6), kind="uniform", lo=-1, hi=1),
           In("y", ("B", 5, 6), kind="uniform", lo=-1, hi=1)], (11,), pieces=LOGIC),
    Model("im2col_shuffle", "shape", _g(IM2COL, 1), [In("x", ("B", 4, 6, 8))], (13,),
          pieces=IM2COL),
    # detection ops
    Model("yolo_box", "detection", _g(DETECTION, 2),
          [In("x", (2, 21, 4, 5)), In("size", (2, 2), "int32", "int", 32, 48)],
          (11, 17), pieces=DETECTION),
    Model("yolo_box_iou_aware", "detection", _g(YOLO_IOU, 2),
          [In("x", (1, 18, 3, 3)), In("size", (1, 2), "int32", "int", 40, 60)], (11, 17)),
    Model("prior_box", "detection", _g(PRIOR, 2),
          [In("feat", (1, 4, 4, 5)), In("image", (1, 3, 16, 20))], (11, 17)),
    Model("roi", "detection", _g(ROI, 3),
          [In("x", (2, 3, 8, 8)), boxes_input("boxes", (4, 4)),
           In("num", (2,), "int32", "int", 2, 3)], (11, 13, 17), pieces=ROI),
    # every box in the one image: paddle2onnx's batch indices are all 0 (see ROI)
    Model("roi_one_image", "detection", _g(ROI, 3),
          [In("x", (1, 3, 8, 8)), boxes_input("boxes", (4, 4)),
           In("num", (1,), "int32", "int", 4, 5)], (13, 17), pieces=ROI),
    Model("nms", "detection", _g(NMS, 2),
          [boxes_input("boxes", (1, 8, 4)), In("scores", (1, 2, 8), kind="uniform")],
          (11, 16), pieces=NMS),
]


# ----------------------------------------------------------------------------------
# Building, running and exporting
# ----------------------------------------------------------------------------------

def draw_inputs(model: Model, batch: int, seed: int) -> list:
    """The seeded input arrays of the model at a batch size; box inputs are made
    valid boxes, and roi_align's per-image box counts add up to the box count."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in model.inputs:
        if spec.kind == "boxes":
            shape = tuple(batch if d == "B" else d for d in spec.shape)
            lo = rng.uniform(0, spec.hi * 0.6, size=shape[:-1] + (2,))
            wh = rng.uniform(spec.hi * 0.1, spec.hi * 0.4, size=shape[:-1] + (2,))
            arrays.append(np.concatenate([lo, lo + wh], -1).astype(spec.dtype))
        else:
            arrays.append(spec.draw(rng, batch))
    if model.name == "roi":
        arrays[2] = np.array([1, 3], dtype=np.int32)
    if model.name == "roi_one_image":
        arrays[2] = np.array([len(arrays[1])], dtype=np.int32)
    return arrays


def randomise(layer: nn.Layer, seed: int) -> None:
    """Seeded random parameters, and BatchNorm statistics away from 0 and 1 (so that
    a folded or dropped norm shows), in eval mode."""
    rng = np.random.default_rng(seed + 1000)
    for sub in layer.sublayers(include_self=True):
        mean, var = getattr(sub, "_mean", None), getattr(sub, "_variance", None)
        if mean is not None and var is not None:
            mean.set_value(rng.normal(0, 0.3, mean.shape).astype("float32"))
            var.set_value(rng.uniform(0.5, 1.5, var.shape).astype("float32"))
            if getattr(sub, "weight", None) is not None:
                sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape)
                                     .astype("float32"))
            if getattr(sub, "bias", None) is not None:
                sub.bias.set_value(rng.normal(0, 0.2, sub.bias.shape).astype("float32"))
    layer.eval()


def flat(out) -> list:
    """A model's outputs as a flat list of numpy arrays."""
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in flat(o)]
    return [np.asarray(out.numpy())]


def export(layer, prefix: str, specs: list, opset: int, log: str) -> tuple[bool, str]:
    """paddle.onnx.export in a forked child (paddle2onnx aborts the process on some
    refusals, and swallows or sys.exit()s on others): whether prefix.onnx appeared,
    and the error lines of the log."""
    if os.path.exists(prefix + ".onnx"):
        os.remove(prefix + ".onnx")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: its output to the log, its end by _exit
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        code = 0
        try:
            paddle.onnx.export(layer, prefix, input_spec=specs, opset_version=opset)
        except BaseException:  # noqa: BLE001  (SystemExit too: report and leave)
            traceback.print_exc()
            code = 3
        sys.stdout.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    with open(log, encoding="utf-8", errors="replace") as f:
        text = re.sub(r"\x1b\[[0-9;]*m", "", f.read())
    errors = [line.strip() for line in text.splitlines()
              if "ERROR" in line or "Error" in line or "error:" in line]
    ok = os.path.exists(prefix + ".onnx")
    return ok, ("; ".join(dict.fromkeys(errors))[-800:] or f"wait status {status}")


def compare(got: list, want: list) -> str:
    """'' when onnxruntime's outputs match Paddle's, else what differs."""
    if len(got) != len(want):
        return f"{len(got)} outputs, Paddle gives {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"output {k}: shape {g.shape}, Paddle {w.shape}"
        if w.dtype.kind in "fc":
            if not np.allclose(g, w, rtol=CHECK_RTOL, atol=CHECK_ATOL):
                err = float(np.max(np.abs(g.astype(np.float64) - w)))
                return f"output {k}: max abs error {err:.3g}"
        elif not np.array_equal(g, w):
            return f"output {k}: {int(np.sum(g != w))} values differ"
    return ""


def export_one(model: Model, opset: int, dynamic: bool, out: str, keep=None,
               stem_name=None, touch=False) -> dict:
    """Export one model at one opset (an op group: only the pieces in `keep`); its
    index entry ({'file', 'entry'}), or a refusal ({'refused': ...})."""
    import onnx
    import onnxruntime as ort

    stem_name = stem_name or f"{model.name}__p2o_op{opset}" + ("_dyn" if dynamic else "")
    prefix = os.path.join(out, stem_name)
    paddle.seed(model.seed)
    np.random.seed(model.seed)
    layer = model.build(keep, touch)
    randomise(layer, model.seed)
    feeds = [draw_inputs(model, B_MAIN, model.seed)]
    if dynamic:
        feeds.append(draw_inputs(model, B_ALT, model.seed + 1))
    record = dict(file=stem_name + ".onnx", name=model.name, opset=opset,
                  dynamic=dynamic)
    try:
        with paddle.no_grad():
            want = [flat(layer(*[paddle.to_tensor(a) for a in f])) for f in feeds]
    except Exception as e:  # noqa: BLE001
        return dict(record, stage="paddle", refused=f"{type(e).__name__}: {e}"[:500])
    specs = [i.spec(dynamic) for i in model.inputs]
    ok, err = export(layer, prefix, specs, opset, prefix + ".log")
    if not KEEP_REFUSED:
        os.remove(prefix + ".log")
    if not ok:
        return dict(record, stage="paddle2onnx", refused=err)
    proto = onnx.load(prefix + ".onnx")
    names_in = [i.name for i in proto.graph.input]
    names_out = [o.name for o in proto.graph.output]
    real_opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 3  # paddle2onnx's RNN outputs warn of shape merges
        sess = ort.InferenceSession(prefix + ".onnx", so,
                                    providers=["CPUExecutionProvider"])
        got = [sess.run(names_out, dict(zip(names_in, f))) for f in feeds]
    except Exception as e:  # noqa: BLE001
        if not KEEP_REFUSED:
            os.remove(prefix + ".onnx")
        return dict(record, stage="onnxruntime", refused=f"{type(e).__name__}: {e}"[:500])
    for k, (g, w) in enumerate(zip(got, want)):
        diff = compare(g, w)
        if diff:
            if not KEEP_REFUSED:
                os.remove(prefix + ".onnx")
            return dict(record, stage="onnxruntime vs paddle",
                        refused=f"batch {[B_MAIN, B_ALT][k]}: {diff}")
    entry = dict(dynamic="batch" if dynamic else False, exporter="paddle2onnx",
                 family=model.family, inputs=names_in, opset=real_opset,
                 outputs=names_out, name=model.name)
    if keep is not None:
        entry["pieces"] = list(keep)
    for k, (f, w) in enumerate(zip(feeds, want)):
        tag = ".alt" if k else ""
        ins = [f"{stem_name}.in{j}{tag}.npy" for j in range(len(f))]
        # Paddle's outputs at the first batch size only (the corpus's 5 MB budget: the
        # second size is checked against onnxruntime, and here against Paddle)
        outs = [] if k else [f"{stem_name}.out{j}.npy" for j in range(len(w))]
        for path, a in zip(ins + outs, list(f) + list(w)):
            np.save(os.path.join(out, path), a, allow_pickle=False)
        entry["alt_input_files" if k else "input_files"] = ins
        if not k:
            entry["output_files"] = outs
    return {"file": stem_name + ".onnx", "entry": entry}


def export_pieces(model: Model, opset: int, dynamic: bool, out: str,
                  refused: list) -> dict:
    """After an op group was refused: export each piece alone (into a scratch
    folder), record the refused ones, and export the group of the others."""
    scratch = os.path.join(out, "_pieces")
    os.makedirs(scratch, exist_ok=True)
    keep = []
    for label in model.pieces:
        res = export_one(model, opset, dynamic, scratch, [label], "piece", touch=True)
        if "entry" in res:
            keep.append(label)
        else:
            res["file"] = f"{model.name}.{label}__p2o_op{opset}" + ("_dyn" if dynamic else "")
            refused.append(res)
            print(f"  piece refused {res['file']} [{res['stage']}] {res['refused'][:200]}",
                  flush=True)
    for f in os.listdir(scratch):
        os.remove(os.path.join(scratch, f))
    os.rmdir(scratch)
    if not keep:
        return dict(file=model.name, name=model.name, opset=opset, dynamic=dynamic,
                    stage="pieces", refused="every piece refused")
    res = export_one(model, opset, dynamic, out, keep)
    if "entry" not in res:  # the kept pieces may not read every input
        res = export_one(model, opset, dynamic, out, keep, touch=True)
    return res


def variants(model: Model, sweep: bool, opsets) -> list:
    """(opset, dynamic) pairs to export: the catalogue's, or with --sweep every opset
    both ways (static only for models whose inputs have no batch axis)."""
    if not sweep:
        return [(op, op in model.dynamic) for op in model.opsets]
    has_batch = any("B" in i.shape for i in model.inputs)
    return [(op, d) for op in opsets for d in ((False, True) if has_batch else (False,))]


def write_index(out: str, index: dict, refused: list) -> None:
    """OUT/index.json (the kept exports) and OUT/refused.json (the others)."""
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "refused.json"), "w", encoding="utf-8") as f:
        json.dump(refused, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv=None) -> int:
    """Export the catalogue (or --only some of it) into OUT and write its index."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--only", nargs="*", help="model names")
    ap.add_argument("--sweep", action="store_true",
                    help="every opset, static and dynamic, and the full-size models")
    ap.add_argument("--opsets", nargs="*", type=int, default=[9, 11, 13, 15, 17, 19, 21])
    args = ap.parse_args(argv)
    paddle.set_device("cpu")
    if hasattr(paddle, "set_num_threads"):
        paddle.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    index, refused = {}, []
    if args.only and os.path.exists(os.path.join(args.out, "index.json")):
        # --only re-exports those models into the folder's index, keeping the others
        with open(os.path.join(args.out, "index.json"), encoding="utf-8") as f:
            index = {k: e for k, e in json.load(f).items() if e["name"] not in args.only}
        with open(os.path.join(args.out, "refused.json"), encoding="utf-8") as f:
            refused = [r for r in json.load(f) if r.get("name") not in args.only]
    for model in CATALOGUE:
        if args.only and model.name not in args.only:
            continue
        if model.sweep_only and not args.sweep:
            continue
        for opset, dynamic in variants(model, args.sweep, args.opsets):
            res = export_one(model, opset, dynamic, args.out)
            if "entry" not in res and model.pieces:
                refused.append(res)
                res = export_pieces(model, opset, dynamic, args.out, refused)
            if "entry" in res:
                index[res["file"]] = res["entry"]
                print(f"ok      {res['file']}", flush=True)
            else:
                refused.append(res)
                print(f"REFUSED {res['file']} [{res['stage']}] {res['refused'][:300]}",
                      flush=True)
        write_index(args.out, index, refused)  # after each model: a partial run shows
    print(f"{len(index)} kept, {len(refused)} refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
