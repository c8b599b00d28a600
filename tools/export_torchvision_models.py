"""Export tiny torchvision architectures to ONNX, as PyTorch's exporters really write them.

A test-corpus generator for onegraph's ONNX importer. It builds torchvision's own model
classes with shrunken constructor arguments (random seeded weights, randomised
BatchNorm statistics, eval mode; nothing is downloaded): detection (Faster R-CNN,
Mask R-CNN, Keypoint R-CNN, RetinaNet, FCOS, SSD, SSDlite on tiny backbones, with a
zero score threshold so random weights still detect), segmentation (FCN, DeepLabV3's
ASPP, LRASPP), classification (GoogLeNet's Inception blocks, MNASNet, ShuffleNetV2,
SqueezeNet's Fire blocks, RegNet, EfficientNet/V2, Swin/Swin V2, MaxViT, ViT,
ConvNeXt, MobileNetV3, DenseNet), video (R3D, MC3, R(2+1)D, S3D blocks, MViT),
optical flow (RAFT-small built tiny, two flow updates) and torchvision.ops (nms,
batched_nms, roi_align, roi_pool, ps_roi_align, ps_roi_pool, box_iou,
MultiScaleRoIAlign, FeaturePyramidNetwork, StochasticDepth and DropBlock in eval,
deform_conv2d). Each is exported with `torch.onnx.export` by the TorchScript exporter
(`dynamo=False`, opsets 11, 16, 17) and the dynamo exporter (opsets 18, 23) as its
catalogue entry says, some with a dynamic batch or image size; each export is run by
onnxruntime against eager torch (an export onnxruntime cannot run or that disagrees is
refused, not kept), and the files are:

    OUT/<model>__<exporter>_op<opset>[_dyn|_dynhw].onnx
    OUT/<stem>.in<k>.npy       seeded inputs (np.save, never pickled)
    OUT/<stem>.in<k>.alt.npy   a second batch or image size (dynamic models)
    OUT/<stem>.out<k>[.alt].npy  eager PyTorch's outputs on them (a second oracle)
    OUT/index.json   {file: entry} as the tests read it, plus "refused": {file: error},
                     "notes": {file: whose fault} and "generator": the versions

`--sweep` exports every model at every exporter/opset/dynamic variant (or those of
`--variants`) into a scratch folder instead (to look for trouble beyond the corpus;
nothing there is kept); the catalogue's entries without jobs (Swin V1, MobileNetV3,
EfficientNet V1, MC3, Faster/Mask R-CNN on an FPN with two RoI levels, a torchvision-sized
RetinaNet head) are built for the sweep only.

It needs torch (CPU), torchvision, onnx, onnxscript, onnxruntime and numpy. It is not
run by onegraph's tests. Run it from the repository root:

    /tmp/torchvenv/bin/python tools/export_torchvision_models.py
        [OUT_DIR] [--only NAME ...] [--sweep [--variants ts11,dy23hw,...]]
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import re
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torchvision
from torchvision import ops
from torchvision.models import convnext, efficientnet, maxvit, mnasnet
from torchvision.models import densenet, mobilenetv3, regnet, shufflenetv2, squeezenet
from torchvision.models import swin_transformer, vision_transformer
from torchvision.models.detection import backbone_utils, faster_rcnn, fcos, keypoint_rcnn
from torchvision.models.detection import mask_rcnn, retinanet, ssd, ssdlite
from torchvision.models.detection.anchor_utils import AnchorGenerator, DefaultBoxGenerator
from torchvision.models.optical_flow import raft
from torchvision.models.segmentation import deeplabv3, fcn, lraspp
from torchvision.models.video import resnet as video_resnet

from corpus_tool import strip_dynamo_debug_info  # tools/, this folder

S3D = sys.modules["torchvision.models.video.s3d"]
MVIT = sys.modules["torchvision.models.video.mvit"]
googlenet = sys.modules["torchvision.models.googlenet"]

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                           "convert", "data", "torchvision_exported")
NCLS = 10
SEG_CLS = 3  # segmentation classes (the saved maps are per class)
MAX_BYTES = 400_000  # per-model budget: the folder must stay under 5 MB
# every (exporter, opset, dynamic) a --sweep run tries, by name
SWEEP_JOBS = dict(ts11=("ts", 11, False), ts13=("ts", 13, False), ts16=("ts", 16, False),
                  ts17=("ts", 17, False), ts18=("ts", 18, False), ts20=("ts", 20, False),
                  ts17d=("ts", 17, True), ts11hw=("ts", 11, "hw"), ts17hw=("ts", 17, "hw"),
                  dy18=("dynamo", 18, False), dy23=("dynamo", 23, False),
                  dy18d=("dynamo", 18, True), dy23d=("dynamo", 23, True),
                  dy23hw=("dynamo", 23, "hw"))


# whose fault a refusal is, where it is not the exporter refusing (checked by running the
# export kept anyway in onegraph and ONNX's ReferenceEvaluator against eager PyTorch)
NOTES = {
    "mvit__ts_op17.onnx": "onnxruntime's: it cannot run the If of pool_skip (a Squeeze "
                          "output allocated at another branch's shape); onegraph and ONNX's "
                          "ReferenceEvaluator match eager PyTorch within 1.2e-7",
    "ops_roi_align__dynamo_op23.onnx": "onnxruntime's: no RoiAlign-22 kernel; onegraph "
                                       "matches eager PyTorch within 1e-6",
    "ops_multiscale_roi_align__dynamo_op23.onnx": "onnxruntime's: no RoiAlign-22 kernel; "
                                                  "onegraph matches eager within 1.4e-6",
    "ops_roi_align__ts_op11.onnx": "the exporter's: RoiAlign-10 cannot say aligned=True, "
                                   "the export drops it (onnxruntime 1.66 off eager)",
    "vit__dynamo_op23_dyn.onnx": "the exporter's: batch 1 is baked into a Reshape of "
                                 "nn.MultiheadAttention; onegraph, onnxruntime and the "
                                 "ReferenceEvaluator all refuse batch 2",
    "raft__dynamo_op23_dyn.onnx": "the exporter's: its optimiser pass crashes",
}


# ----------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------

def _normal(*shape):
    """A factory of seeded N(0, 1) float32 tensors of `shape` ((batch, ...) with the
    batch and the last two axes replaced for the second size of dynamic models)."""
    def make(rng, batch, hw):
        s = list(shape)
        if batch is not None:
            s[0] = batch
        if hw is not None:
            s[-2:] = hw
        return torch.from_numpy(rng.standard_normal(s).astype(np.float32))
    return make


def _blobs(c=3, h=64, w=64):
    """A factory of detection images: a few bright seeded rectangles on a dim noisy
    background (values in [0, 1], as detection models take), one image (c, H, W)."""
    def make(rng, batch, hw):
        hh, ww = hw or (h, w)
        img = rng.uniform(0.0, 0.2, (c, hh, ww)).astype(np.float32)
        for _ in range(3):
            y0, x0 = rng.integers(0, hh // 2), rng.integers(0, ww // 2)
            y1, x1 = y0 + rng.integers(8, hh // 2), x0 + rng.integers(8, ww // 2)
            img[:, y0:y1, x0:x1] = rng.uniform(0.5, 1.0, (c, 1, 1))
        return torch.from_numpy(img)
    return make


def _boxes(n, size, seed_shift=0):
    """A factory of `n` seeded boxes (x1, y1, x2, y2) inside a size x size image, as a
    float32 (n, 4) tensor (its count replaced by the batch of the second size)."""
    def make(rng, batch, hw):
        m = batch if batch is not None else n
        xy = rng.uniform(0, size * 0.6, (m, 2))
        wh = rng.uniform(2, size * 0.4, (m, 2))
        return torch.from_numpy(np.concatenate([xy, xy + wh], 1).astype(np.float32))
    return make


def _rois(n, size):
    """A factory of `n` seeded RoIs (batch index 0, x1, y1, x2, y2), float32 (n, 5)."""
    box = _boxes(n, size)

    def make(rng, batch, hw):
        b = box(rng, batch, hw)
        return torch.cat([torch.zeros(b.shape[0], 1), b], 1)
    return make


# ----------------------------------------------------------------------------------
# Wrappers: fixed tuples of tensors in and out, as ONNX graphs want them
# ----------------------------------------------------------------------------------

class Detector(nn.Module):
    """A torchvision detection model taking one image (3, H, W) and giving its boxes,
    scores, labels (and masks or keypoints) as a tuple."""

    def __init__(self, model, extra=()):
        """Wrap `model`, giving the result keys `extra` after boxes, scores, labels."""
        super().__init__()
        self.model = model
        self.keys = ("boxes", "scores", "labels") + tuple(extra)

    def forward(self, image):
        """The detections of `image`."""
        out = self.model([image])[0]
        return tuple(out[k] for k in self.keys)


class Segmenter(nn.Module):
    """A torchvision segmentation model giving its "out" map only."""

    def __init__(self, model):
        """Wrap `model`."""
        super().__init__()
        self.model = model

    def forward(self, x):
        """The class logits map of `x`."""
        return self.model(x)["out"]


class Flow(nn.Module):
    """RAFT with a fixed number of flow updates, giving the last flow only."""

    def __init__(self, model, updates):
        """Wrap `model` with `updates` flow updates."""
        super().__init__()
        self.model, self.updates = model, updates

    def forward(self, image1, image2):
        """The flow from image1 to image2."""
        return self.model(image1, image2, num_flow_updates=self.updates)[-1]


class OpModule(nn.Module):
    """A module calling `fn(*inputs)` (a torchvision.ops function with fixed arguments);
    `params` are its sub-modules or weights, if any."""

    def __init__(self, fn, params=None):
        """Wrap `fn`, registering the modules of `params` (a dict)."""
        super().__init__()
        self.fn = fn
        self.params = nn.ModuleDict(params or {})

    def forward(self, *inputs):
        """fn(*inputs), with the registered modules after the inputs when any."""
        return self.fn(self.params, *inputs)


# ----------------------------------------------------------------------------------
# Model factories
# ----------------------------------------------------------------------------------

def _conv(cin, cout, stride=1):
    """Conv3x3 + BN + ReLU."""
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


class TinyBody(nn.Module):
    """Three strided conv stages (8, 16, 16 channels: strides 4, 8, 16); a single
    feature map when used whole (`out_channels`, as torchvision's detection models ask),
    named stages for IntermediateLayerGetter/BackboneWithFPN."""

    def __init__(self, width=8, out=16):
        """Channels `width` then `out`."""
        super().__init__()
        self.stem = nn.Sequential(_conv(3, width, 2), _conv(width, width, 2))
        self.layer1 = _conv(width, out, 2)
        self.layer2 = _conv(out, out, 2)
        self.out_channels = out

    def forward(self, x):
        """The stride-16 features."""
        return self.layer2(self.layer1(self.stem(x)))


def _fpn_backbone(out=16):
    """A BackboneWithFPN over TinyBody's two stages (plus FPN's max-pool level), `out`
    channels."""
    return backbone_utils.BackboneWithFPN(TinyBody(), {"layer1": "0", "layer2": "1"},
                                          [16, 16], out)


DET = dict(min_size=64, max_size=96)


def _rcnn_parts():
    """The anchor generator, RoI pooler, box head and predictor shared by the R-CNNs."""
    anchors = AnchorGenerator(((16, 32),), ((0.5, 1.0, 2.0),))
    pool = ops.MultiScaleRoIAlign(["0"], 3, 2)
    return dict(rpn_anchor_generator=anchors, box_roi_pool=pool,
                box_head=faster_rcnn.TwoMLPHead(16 * 9, 32),
                box_predictor=faster_rcnn.FastRCNNPredictor(32, 3),
                rpn_pre_nms_top_n_test=50, rpn_post_nms_top_n_test=20,
                box_detections_per_img=10, box_score_thresh=0.0)


def _faster_rcnn(thresh=0.0):
    """Faster R-CNN on TinyBody (one feature level)."""
    kw = _rcnn_parts()
    kw["box_score_thresh"] = thresh
    return Detector(faster_rcnn.FasterRCNN(TinyBody(), num_classes=None, **DET, **kw))


def _mask_rcnn():
    """Mask R-CNN on TinyBody, a one-conv mask head (masks pasted in the image), three
    detections (each one a full-image mask)."""
    kw = _rcnn_parts()
    kw["box_detections_per_img"] = 3
    m = mask_rcnn.MaskRCNN(TinyBody(), num_classes=None, **DET, **kw,
                           mask_roi_pool=ops.MultiScaleRoIAlign(["0"], 7, 2),
                           mask_head=mask_rcnn.MaskRCNNHeads(16, (8,), 1),
                           mask_predictor=mask_rcnn.MaskRCNNPredictor(8, 8, 3))
    return Detector(m, ("masks",))


def _keypoint_rcnn():
    """Keypoint R-CNN on TinyBody, 5 keypoints, a one-conv keypoint head."""
    kw = _rcnn_parts()
    m = keypoint_rcnn.KeypointRCNN(
        TinyBody(), num_classes=None, **DET, **kw,
        keypoint_roi_pool=ops.MultiScaleRoIAlign(["0"], 7, 2),
        keypoint_head=keypoint_rcnn.KeypointRCNNHeads(16, (8,)),
        keypoint_predictor=keypoint_rcnn.KeypointRCNNPredictor(8, 5))
    return Detector(m, ("keypoints", "keypoints_scores"))


def _faster_rcnn_fpn(mask=False):
    """A larger Faster (or Mask) R-CNN for the sweep: a tiny FPN (RoIs mapped to two
    levels by MultiScaleRoIAlign's level mapper), 128-pixel images, 300/100 proposals,
    50 detections of four classes."""
    anchors = AnchorGenerator(((16,), (32,), (64,)), ((0.5, 1.0, 2.0),) * 3)
    kw = dict(rpn_anchor_generator=anchors, min_size=128, max_size=160,
              box_roi_pool=ops.MultiScaleRoIAlign(["0", "1"], 7, 2),
              box_head=faster_rcnn.TwoMLPHead(16 * 49, 64),
              box_predictor=faster_rcnn.FastRCNNPredictor(64, 5),
              rpn_pre_nms_top_n_test=300, rpn_post_nms_top_n_test=100,
              box_detections_per_img=50, box_score_thresh=0.0)
    if not mask:
        return Detector(faster_rcnn.FasterRCNN(_fpn_backbone(), num_classes=None, **kw))
    m = mask_rcnn.MaskRCNN(_fpn_backbone(), num_classes=None, **kw,
                           mask_roi_pool=ops.MultiScaleRoIAlign(["0", "1"], 14, 2),
                           mask_head=mask_rcnn.MaskRCNNHeads(16, (16, 16), 1),
                           mask_predictor=mask_rcnn.MaskRCNNPredictor(16, 16, 5))
    return Detector(m, ("masks",))


def _retinanet_large():
    """RetinaNet as torchvision builds it (four-conv heads, nine anchors a place) on the
    tiny FPN at 128 pixels, 100 detections of four classes, for the sweep."""
    bb = _fpn_backbone()
    sizes = tuple((s, int(s * 1.26), int(s * 1.59)) for s in (16, 32, 64))
    anchors = AnchorGenerator(sizes, ((0.5, 1.0, 2.0),) * 3)
    return Detector(retinanet.RetinaNet(bb, 5, min_size=128, max_size=160,
                                        anchor_generator=anchors,
                                        head=retinanet.RetinaNetHead(16, 9, 5),
                                        score_thresh=0.0, detections_per_img=100,
                                        topk_candidates=200))


def _retinanet():
    """RetinaNet on a tiny FPN (three levels), two classes."""
    bb = _fpn_backbone()
    anchors = AnchorGenerator(((16,), (32,), (64,)), ((0.5, 1.0, 2.0),) * 3)
    head = retinanet.RetinaNetHead(16, 3, 3)
    # one conv (not four) before each of the head's outputs: the same ops, a third of
    # the bytes
    head.classification_head.conv = head.classification_head.conv[:1]
    head.regression_head.conv = head.regression_head.conv[:1]
    return Detector(retinanet.RetinaNet(bb, 3, **DET, anchor_generator=anchors, head=head,
                                        score_thresh=0.0, detections_per_img=10,
                                        topk_candidates=20))


def _fcos():
    """FCOS on a tiny FPN (three levels), one conv per head branch."""
    bb = _fpn_backbone()
    anchors = AnchorGenerator(((8,), (16,), (32,)), ((1.0,),) * 3)
    # FCOSHead's branches default to GroupNorm(32, C): built empty, then given branches
    # of one conv with four groups (suiting 16 channels)
    head = fcos.FCOSHead(16, 1, 3, num_convs=0)
    gn = functools.partial(nn.GroupNorm, 4)
    head.classification_head = fcos.FCOSClassificationHead(16, 1, 3, 1, norm_layer=gn)
    head.regression_head = fcos.FCOSRegressionHead(16, 1, 1, norm_layer=gn)
    return Detector(fcos.FCOS(bb, 3, **DET, anchor_generator=anchors, head=head,
                              score_thresh=0.0, detections_per_img=10, topk_candidates=20))


class SSDBody(nn.Module):
    """Two feature maps (strides 8 and 16) in an OrderedDict, as SSD's backbones give."""

    def __init__(self):
        """Channels 16 and 16."""
        super().__init__()
        self.a = nn.Sequential(_conv(3, 8, 2), _conv(8, 16, 2), _conv(16, 16, 2))
        self.b = _conv(16, 16, 2)

    def forward(self, x):
        """{"0": stride 8, "1": stride 16}."""
        a = self.a(x)
        return collections.OrderedDict([("0", a), ("1", self.b(a))])


def _ssd(lite=False, thresh=0.0):
    """SSD (or SSDlite's depthwise head) on SSDBody at 64x64, two classes, keeping
    detections scoring above `thresh`."""
    anchors = DefaultBoxGenerator([[2], [2, 3]])
    n = anchors.num_anchors_per_location()
    if lite:
        head = ssdlite.SSDLiteHead([16, 16], n, 3, functools.partial(nn.BatchNorm2d))
    else:
        head = ssd.SSDHead([16, 16], n, 3)
    return Detector(ssd.SSD(SSDBody(), anchors, (64, 64), 3, head=head, score_thresh=thresh,
                            detections_per_img=10, topk_candidates=20))


def _seg_body():
    """TinyBody's stages through IntermediateLayerGetter: {"out": stride 16}."""
    return torchvision.models._utils.IntermediateLayerGetter(TinyBody(),
                                                             {"layer2": "out"})


def _fcn():
    """FCN: tiny body, FCNHead."""
    return Segmenter(fcn.FCN(_seg_body(), fcn.FCNHead(16, SEG_CLS)))


def _deeplab():
    """DeepLabV3: tiny body, torchvision's ASPP (three dilations and image pooling) at 8
    channels, then DeepLabHead's conv and classifier."""
    head = nn.Sequential(deeplabv3.ASPP(16, (1, 2, 3), 8), nn.Conv2d(8, 8, 3, padding=1),
                         nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, SEG_CLS, 1))
    return Segmenter(deeplabv3.DeepLabV3(_seg_body(), head))


def _lraspp():
    """LRASPP over the low (stride 8) and high (stride 16) features of a tiny body."""
    body = torchvision.models._utils.IntermediateLayerGetter(
        TinyBody(), {"layer1": "low", "layer2": "high"})
    return Segmenter(lraspp.LRASPP(body, 16, 16, SEG_CLS, inter_channels=8))


def _googlenet():
    """GoogLeNet-style: a stem then two of torchvision's Inception blocks (four branches,
    ceil-mode max pool), global pool, classifier."""
    bc = googlenet.BasicConv2d
    return nn.Sequential(bc(3, 8, kernel_size=3, stride=2, padding=1),
                         nn.MaxPool2d(3, 2, ceil_mode=True),
                         googlenet.Inception(8, 4, 4, 8, 2, 4, 4),
                         nn.MaxPool2d(3, 2, ceil_mode=True),
                         googlenet.Inception(20, 8, 4, 8, 2, 4, 4),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(24, NCLS))


def _mnasnet():
    """MNASNet at alpha 0.1, one block per inverted-residual stack, its fixed 1280-wide
    head conv narrowed to 32."""
    m = mnasnet.MNASNet(0.1, num_classes=NCLS)
    for i in range(8, 14):  # the stacks repeat their block up to 4 times
        m.layers[i] = m.layers[i][:1]
    cin = m.layers[14].in_channels
    m.layers[14] = nn.Conv2d(cin, 32, 1, bias=False)
    m.layers[15] = nn.BatchNorm2d(32)
    m.classifier[1] = nn.Linear(32, NCLS)
    return m


def _squeezenet():
    """SqueezeNet 1.1's layout with narrow Fire blocks (squeeze 4, expand 8+8)."""
    m = squeezenet.SqueezeNet("1_1", num_classes=NCLS)
    fire = squeezenet.Fire
    m.features = nn.Sequential(nn.Conv2d(3, 16, 3, 2), nn.ReLU(),
                               nn.MaxPool2d(3, 2, ceil_mode=True), fire(16, 4, 8, 8),
                               fire(16, 4, 8, 8), nn.MaxPool2d(3, 2, ceil_mode=True),
                               fire(16, 8, 16, 16))
    m.classifier[1] = nn.Conv2d(32, NCLS, 1)
    return m


def _efficientnet():
    """EfficientNet (B0-like MBConv with squeeze-excitation), three narrow stages."""
    c = functools.partial(efficientnet.MBConvConfig, width_mult=1.0, depth_mult=1.0)
    cfg = [c(1, 3, 1, 8, 8, 1), c(4, 3, 2, 8, 16, 1), c(4, 5, 2, 16, 16, 2)]
    return efficientnet.EfficientNet(cfg, 0.2, num_classes=NCLS, last_channel=32)


def _efficientnet_v2():
    """EfficientNetV2: Fused-MBConv stages then MBConv stages, narrow."""
    f, c = efficientnet.FusedMBConvConfig, efficientnet.MBConvConfig
    cfg = [f(1, 3, 1, 8, 8, 1), f(4, 3, 2, 8, 16, 1), c(4, 3, 2, 16, 16, 1),
           c(6, 3, 1, 16, 24, 1)]
    return efficientnet.EfficientNet(cfg, 0.2, num_classes=NCLS, last_channel=32)


def _mobilenet_v3():
    """MobileNetV3-small-like: hard-swish, SE with hard-sigmoid, narrow."""
    b = functools.partial(mobilenetv3.InvertedResidualConfig, width_mult=1.0)
    cfg = [b(8, 3, 8, 8, True, "RE", 2, 1), b(8, 3, 24, 16, False, "RE", 2, 1),
           b(16, 5, 32, 16, True, "HS", 1, 1)]
    return mobilenetv3.MobileNetV3(cfg, 32, num_classes=NCLS)


def _swin(v2):
    """Swin (or Swin V2: cosine attention, log-spaced relative positions, post-norm) on
    32x32 images: patch 4, windows 4, two stages."""
    kw = {}
    if v2:
        kw = dict(block=swin_transformer.SwinTransformerBlockV2,
                  downsample_layer=swin_transformer.PatchMergingV2)
    return swin_transformer.SwinTransformer([4, 4], 8, [2, 1], [1, 2], [4, 4],
                                            stochastic_depth_prob=0.0, num_classes=NCLS,
                                            **kw)


def _video_resnet(conv, block=video_resnet.BasicBlock, widths=(8, 8, 8, 8)):
    """A torchvision VideoResNet (R3D/MC3/R(2+1)D by `conv`, one per stage) with an
    8-wide stem and stage widths `widths` (torchvision fixes 64 to 512)."""
    m = video_resnet.VideoResNet(block, conv, [1, 1, 1, 1], video_resnet.BasicStem,
                                 num_classes=NCLS)
    m.stem = nn.Sequential(nn.Conv3d(3, 8, (3, 7, 7), (1, 2, 2), (1, 3, 3), bias=False),
                           nn.BatchNorm3d(8), nn.ReLU())
    m.inplanes = 8
    for k, (w, c) in enumerate(zip(widths, conv)):
        setattr(m, f"layer{k + 1}", m._make_layer(block, c, w, 1, 1 if k == 0 else 2))
    m.fc = nn.Linear(widths[-1], NCLS)
    return m


def _s3d():
    """S3D's layout at a few channels: temporal separable convs, one separable
    Inception block, 3-D pooling, conv classifier."""
    bn = functools.partial(nn.BatchNorm3d, eps=0.001, momentum=0.001)
    tsc = S3D.TemporalSeparableConv
    feats = nn.Sequential(tsc(3, 8, 7, 2, 3, bn), nn.MaxPool3d((1, 3, 3), (1, 2, 2),
                                                              (0, 1, 1)),
                          tsc(8, 16, 3, 1, 1, bn), S3D.SepInceptionBlock3D(16, 4, 4, 8, 2,
                                                                           4, 4, bn),
                          nn.MaxPool3d((3, 3, 3), (2, 2, 2), (1, 1, 1)))
    return nn.Sequential(feats, nn.AdaptiveAvgPool3d(1), nn.Conv3d(20, NCLS, 1),
                         nn.Flatten())


def _mvit():
    """MViT V2 (pooled multi-head attention, relative positions) on 4x32x32 clips: two
    blocks of 16 then 32 channels."""
    cfg = [MVIT.MSBlockConfig(1, 16, 16, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 2, 2]),
           MVIT.MSBlockConfig(2, 16, 32, [3, 3, 3], [3, 3, 3], [1, 2, 2], [1, 1, 1])]
    return MVIT.MViT((32, 32), 4, cfg, residual_pool=True, residual_with_cls_embed=False,
                     rel_pos_embed=True, proj_after_attn=True, dropout=0.0,
                     num_classes=NCLS, patch_embed_kernel=(3, 7, 7),
                     patch_embed_stride=(2, 4, 4), patch_embed_padding=(1, 3, 3))


def _raft():
    """RAFT-small's layout built tiny: 8-wide encoders, a 2-level radius-2 correlation
    pyramid, 8-wide GRU; two flow updates."""
    m = raft._raft(weights=None, progress=False,
                   feature_encoder_layers=(8, 8, 8, 8, 16),
                   feature_encoder_block=raft.BottleneckBlock,
                   feature_encoder_norm_layer=nn.InstanceNorm2d,
                   context_encoder_layers=(8, 8, 8, 8, 16),
                   context_encoder_block=raft.BottleneckBlock,
                   context_encoder_norm_layer=None,
                   corr_block_num_levels=2, corr_block_radius=2,
                   motion_encoder_corr_layers=(16,), motion_encoder_flow_layers=(16, 8),
                   motion_encoder_out_channels=8, recurrent_block_hidden_state_size=8,
                   recurrent_block_kernel_size=(3,), recurrent_block_padding=(1,),
                   flow_head_hidden_size=8, use_mask_predictor=False)
    return Flow(m, 2)


# torchvision.ops, one module each (so a wrong kernel names itself)
def _op_nms(p, boxes, scores):
    return ops.nms(boxes, scores, 0.5)


def _op_batched_nms(p, boxes, scores):
    idx = (scores * 1000).to(torch.int64) % 3  # three classes, from the data
    return ops.batched_nms(boxes, scores, idx, 0.4)


def _op_roi_align(p, x, rois):
    return (ops.roi_align(x, rois, (3, 3), 0.5, 2, aligned=False),
            ops.roi_align(x, rois, (2, 4), 0.5, 0, aligned=True),
            ops.roi_align(x, rois, 3, 0.25, 1, aligned=True))


def _op_roi_pool(p, x, rois):
    return ops.roi_pool(x, rois, (3, 3), 0.5)


def _op_ps_roi_align(p, x, rois):
    return ops.ps_roi_align(x, rois, 2, 0.5, 2)


def _op_ps_roi_pool(p, x, rois):
    return ops.ps_roi_pool(x, rois, 2, 0.5)


def _op_box_ops(p, a, b):
    return (ops.box_iou(a, b), ops.generalized_box_iou(a, b), ops.box_area(a),
            ops.box_convert(a, "xyxy", "cxcywh"), ops.clip_boxes_to_image(a * 1.5, (20, 24)))


def _op_multiscale(p, f0, f1, boxes):
    feats = collections.OrderedDict([("0", f0), ("1", f1)])
    return p["pool"](feats, [boxes], [(64, 64)])


def _op_fpn(p, f0, f1, f2):
    out = p["fpn"](collections.OrderedDict([("a", f0), ("b", f1), ("c", f2)]))
    return tuple(out.values())


def _op_regularizers(p, x):
    # eval mode: both are identities around the conv, as deployed
    return p["drop"](p["sd"](p["conv"](x)))


def _op_deform(p, x, offset):
    return ops.deform_conv2d(x, offset, p["conv"].weight, p["conv"].bias, padding=(1, 1))


def _regularizers():
    return dict(conv=nn.Conv2d(4, 4, 3, padding=1),
                sd=ops.StochasticDepth(0.5, "row"), drop=ops.DropBlock2d(0.5, 3))


# ----------------------------------------------------------------------------------
# Catalogue
# ----------------------------------------------------------------------------------

def catalogue():
    """The models: dicts of name, family, make (a factory), inputs (names and input
    factories), outputs (names), dyn (per input, its dynamic axes: "batch" -> axes,
    "hw" -> axes) and jobs ((exporter, opset, dynamic) of the kept corpus)."""
    ts11, ts16, ts17 = ("ts", 11, False), ("ts", 16, False), ("ts", 17, False)
    ts11hw, ts17d, ts17hw = ("ts", 11, "hw"), ("ts", 17, True), ("ts", 17, "hw")
    ts16hw = ("ts", 16, "hw")
    dy18, dy23, dy23d = ("dynamo", 18, False), ("dynamo", 23, False), ("dynamo", 23, True)
    dy18d, dy23hw = ("dynamo", 18, True), ("dynamo", 23, "hw")
    img = [("images", _normal(1, 3, 32, 32))]
    clip = [("clip", _normal(1, 3, 4, 16, 16))]
    bhw = {"batch": {"images": [0]}, "hw": {"images": [0, 2, 3]}}
    det_in = [("image", _blobs(h=40, w=40))]  # resized to 64 inside the models
    det_dyn = {"hw": {"image": [1, 2]}}
    det3 = ["boxes", "scores", "labels"]
    feat = lambda c, s: _normal(1, c, s, s)  # noqa: E731
    cls = dict(outputs=["logits"], dyn=bhw)
    seg = dict(outputs=["out"], dyn=bhw)
    det = dict(outputs=det3, dyn=det_dyn, family_kind="detection")
    vid = dict(outputs=["logits"], dyn={"batch": {"clip": [0]}})
    ops_fam = dict(family="ops")
    return [
        # detection (the TorchScript exporter; torchvision's own ONNX tests use opset 11+)
        dict(name="fasterrcnn", make=_faster_rcnn, inputs=det_in, jobs=[ts11hw],
             **det),
        dict(name="fasterrcnn_empty", family="fasterrcnn", make=lambda: _faster_rcnn(0.99),
             inputs=det_in, jobs=[], **det),
        dict(name="maskrcnn", make=_mask_rcnn, inputs=det_in, jobs=[ts16hw],
             **{**det, "outputs": det3 + ["masks"]}),
        dict(name="keypointrcnn", make=_keypoint_rcnn, inputs=det_in, jobs=[ts17hw],
             **{**det, "outputs": det3 + ["keypoints", "keypoints_scores"]}),
        dict(name="retinanet", make=_retinanet, inputs=det_in, jobs=[ts11], **det),
        dict(name="fcos", make=_fcos, inputs=det_in, jobs=[ts16hw], **det),
        dict(name="ssd", make=_ssd, inputs=det_in, jobs=[ts11], **det),
        # larger detection models (the sweep only: too large for the corpus)
        dict(name="fasterrcnn_fpn", family="fasterrcnn", make=_faster_rcnn_fpn,
             inputs=[("image", _blobs(h=96, w=112))], jobs=[], **det),
        dict(name="maskrcnn_fpn", family="maskrcnn", make=lambda: _faster_rcnn_fpn(True),
             inputs=[("image", _blobs(h=96, w=112))], jobs=[],
             **{**det, "outputs": det3 + ["masks"]}),
        dict(name="retinanet_large", family="retinanet", make=_retinanet_large,
             inputs=[("image", _blobs(h=96, w=112))], jobs=[], **det),
        dict(name="ssdlite", make=lambda: _ssd(True), inputs=det_in, jobs=[ts17], **det),
        # nothing scores 0.99: empty outputs (zero-length boxes, scores, labels)
        dict(name="ssdlite_empty", family="ssdlite", make=lambda: _ssd(True, 0.99),
             inputs=det_in, jobs=[ts16], **det),
        # segmentation
        dict(name="fcn", make=_fcn, inputs=img, jobs=[dy23hw], **seg),
        dict(name="deeplabv3", make=_deeplab, inputs=img, jobs=[ts17hw], **seg),
        dict(name="lraspp", make=_lraspp, inputs=img, jobs=[dy23d], **seg),
        # classification
        dict(name="googlenet", make=_googlenet, inputs=img, jobs=[ts11, dy23hw], **cls),
        dict(name="mnasnet", make=_mnasnet, inputs=img, jobs=[ts17d], **cls),
        dict(name="shufflenetv2", make=lambda: shufflenetv2.ShuffleNetV2(
            [1, 1, 1], [8, 16, 32, 32, 32], num_classes=NCLS), inputs=img,
            jobs=[dy23d], **cls),
        dict(name="squeezenet", make=_squeezenet, inputs=img, jobs=[ts11hw], **cls),
        dict(name="regnet", make=lambda: regnet.RegNet(regnet.BlockParams.from_init_params(
            depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25),
            num_classes=NCLS, stem_width=8), inputs=img, jobs=[dy23hw], **cls),
        dict(name="efficientnet", make=_efficientnet, inputs=img, jobs=[], **cls),
        dict(name="efficientnet_v2", make=_efficientnet_v2, inputs=img, jobs=[dy18d],
             **cls),
        dict(name="mobilenet_v3", make=_mobilenet_v3, inputs=img, jobs=[], **cls),
        dict(name="densenet", make=lambda: densenet.DenseNet(4, (2, 2), 8, 2,
                                                             num_classes=NCLS),
             inputs=img, jobs=[dy23], **cls),
        dict(name="swin", make=lambda: _swin(False), inputs=img, jobs=[], **cls),
        dict(name="swin_v2", make=lambda: _swin(True), inputs=img, jobs=[ts17], **cls),
        dict(name="maxvit", make=lambda: maxvit.MaxVit((32, 32), 8, 2, [16, 16], [1, 1], 8,
                                                       0.0, num_classes=NCLS),
             inputs=img, jobs=[ts17], **cls),
        dict(name="vit", make=lambda: vision_transformer.VisionTransformer(
            32, 8, 2, 2, 16, 32, num_classes=NCLS), inputs=img, jobs=[dy18, dy23d],
            **cls),
        dict(name="convnext", make=lambda: convnext.ConvNeXt(
            [convnext.CNBlockConfig(8, 16, 1), convnext.CNBlockConfig(16, None, 1)],
            layer_scale=0.5, num_classes=NCLS), inputs=img, jobs=[ts17, dy23hw], **cls),
        # video
        dict(name="r3d", make=lambda: _video_resnet([video_resnet.Conv3DSimple] * 4),
             inputs=clip, jobs=[ts17d], **vid),
        dict(name="mc3", make=lambda: _video_resnet(
            [video_resnet.Conv3DSimple] + [video_resnet.Conv3DNoTemporal] * 3),
            inputs=clip, jobs=[], **vid),
        dict(name="r2plus1d", make=lambda: _video_resnet([video_resnet.Conv2Plus1D] * 4),
             inputs=clip, jobs=[ts16], **vid),
        dict(name="s3d", make=_s3d, inputs=clip, jobs=[ts17d, dy23], **vid),
        dict(name="mvit", make=_mvit, inputs=[("clip", _normal(1, 3, 4, 32, 32))],
             jobs=[ts17, dy23], **vid),
        # optical flow
        dict(name="raft", make=_raft, inputs=[("image1", _normal(1, 3, 32, 32)),
                                              ("image2", _normal(1, 3, 32, 32))],
             outputs=["flow"], dyn={"batch": {"image1": [0], "image2": [0]}},
             jobs=[ts16, dy23d]),
        # torchvision.ops
        dict(name="ops_nms", make=lambda: OpModule(_op_nms), outputs=["keep"],
             inputs=[("boxes", _boxes(30, 32)), ("scores", lambda r, b, h: torch.from_numpy(
                 r.permutation(30).astype(np.float32) / 30))], jobs=[ts11], **ops_fam),
        dict(name="ops_batched_nms", make=lambda: OpModule(_op_batched_nms),
             outputs=["keep"], inputs=[("boxes", _boxes(30, 32)), (
                 "scores", lambda r, b, h: torch.from_numpy(
                     r.permutation(30).astype(np.float32) / 30 + 0.01))],
             jobs=[ts16], **ops_fam),
        dict(name="ops_roi_align", make=lambda: OpModule(_op_roi_align),
             outputs=["a", "b", "c"], inputs=[("x", feat(4, 16)), ("rois", _rois(6, 32))],
             dyn={"batch": {"rois": [0]}}, jobs=[ts11, ts17d, dy18, dy23], **ops_fam),
        dict(name="ops_roi_pool", make=lambda: OpModule(_op_roi_pool), outputs=["y"],
             inputs=[("x", feat(4, 16)), ("rois", _rois(6, 32))], jobs=[ts11, dy23],
             **ops_fam),
        dict(name="ops_ps_roi_align", make=lambda: OpModule(_op_ps_roi_align),
             outputs=["y"], inputs=[("x", feat(8, 16)), ("rois", _rois(6, 32))],
             jobs=[ts17, dy23], **ops_fam),
        dict(name="ops_ps_roi_pool", make=lambda: OpModule(_op_ps_roi_pool),
             outputs=["y"], inputs=[("x", feat(8, 16)), ("rois", _rois(6, 32))],
             jobs=[ts17, dy23], **ops_fam),
        dict(name="ops_boxes", make=lambda: OpModule(_op_box_ops),
             outputs=["iou", "giou", "area", "cxcywh", "clipped"],
             inputs=[("a", _boxes(5, 20)), ("b", _boxes(7, 20))], jobs=[ts11, dy18],
             **ops_fam),
        dict(name="ops_multiscale_roi_align", make=lambda: OpModule(_op_multiscale, dict(
            pool=ops.MultiScaleRoIAlign(["0", "1"], 3, 2))), outputs=["y"],
             inputs=[("f0", feat(4, 16)), ("f1", feat(4, 8)), ("boxes", _boxes(6, 64))],
             jobs=[ts16, dy18, dy23], **ops_fam),
        dict(name="ops_fpn", make=lambda: OpModule(_op_fpn, dict(
            fpn=ops.FeaturePyramidNetwork([4, 8, 8], 8, ops.feature_pyramid_network
                                          .LastLevelMaxPool()))),
             outputs=["p0", "p1", "p2", "pool"], inputs=[("f0", feat(4, 16)),
                                                         ("f1", feat(8, 8)),
                                                         ("f2", feat(8, 4))],
             jobs=[ts11, dy23], **ops_fam),
        dict(name="ops_regularizers", make=lambda: OpModule(_op_regularizers,
                                                            _regularizers()),
             outputs=["y"], inputs=[("x", feat(4, 8))], jobs=[ts17, dy18], **ops_fam),
        dict(name="ops_deform_conv2d", make=lambda: OpModule(_op_deform, dict(
            conv=nn.Conv2d(4, 4, 3, padding=1))), outputs=["y"],
             inputs=[("x", feat(4, 8)), ("offset", lambda r, b, h: torch.from_numpy(
                 r.uniform(-1.5, 1.5, (1, 18, 8, 8)).astype(np.float32)))],
             jobs=[ts17, dy23], **ops_fam),
    ]


# ----------------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------------

def build(entry):
    """Instantiate `entry`'s model with seeded weights and randomised BatchNorm
    statistics (so BN folding is exercised), in eval mode."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = entry["make"]()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, mod in model.named_modules():
            if name.endswith("cls_logits"):
                # RetinaNet's and FCOS's classifiers start at a 0.01 prior with 0.01-wide
                # weights: every score is 0.0100 and the ranking of detections is ties
                # (onnxruntime then orders them unlike eager torch); spread the scores
                mod.weight.copy_(torch.randn(mod.weight.shape, generator=g) * 0.3)
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.5)
        for mod in model.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm) and \
                    mod.running_mean is not None:
                n = mod.num_features
                mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                if mod.weight is not None:
                    mod.weight.copy_(torch.rand(n, generator=g) + 0.5)
                    mod.bias.copy_(torch.randn(n, generator=g) * 0.1)
    return model.eval()


def _inputs(entry, seed, dynamic):
    """The model's input tensors: seeded, at the default size, or (dynamic) the second
    one (batch 2 for "batch"; height and width +16/+8 for "hw")."""
    rng = np.random.default_rng(seed)
    out = []
    for name, make in entry["inputs"]:
        batch = hw = None
        axes = entry.get("dyn", {}).get(dynamic, {}).get(name) if dynamic else None
        if axes and dynamic is True or axes and dynamic == "batch":
            batch = 2
        elif axes and dynamic == "hw":
            t = make(np.random.default_rng(0), None, None)
            hw = (t.shape[-2] + 16, t.shape[-1] + 8)
        out.append(make(rng, batch, hw))
    return out


def _as_tuple(y):
    """Model outputs as a tuple of tensors."""
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def export_entry(entry, out_dir, exporter, opset, dynamic, max_bytes=MAX_BYTES,
                 save_outputs=True):
    """Export one model with `exporter` ('ts' or 'dynamo') at `opset` (dynamic: False,
    True for the batch axis, or "hw"); check it with onnxruntime; save its inputs and
    eager outputs; return its record (with "error" when refused)."""
    kind = "batch" if dynamic is True else dynamic
    suffix = {False: "", "batch": "_dyn", "hw": "_dynhw"}[kind]
    stem = f"{entry['name']}__{exporter}_op{opset}{suffix}"
    path = os.path.join(out_dir, stem + ".onnx")
    names = [n for n, _ in entry["inputs"]]
    outs = entry["outputs"]
    rec = dict(name=entry["name"], family=entry.get("family", entry["name"]),
               file=stem + ".onnx", exporter=exporter, opset=opset, dynamic=kind,
               inputs=names, outputs=outs)
    axes = entry.get("dyn", {}).get(kind) if kind else None
    if kind and not axes:
        rec["error"] = f"no {kind} axes"
        return rec
    try:
        model = build(entry)
        x = _inputs(entry, 123, False)
        with torch.no_grad():
            _as_tuple(model(*x))
    except Exception as e:  # the model itself fails: report, go on
        rec["error"] = f"build/forward: {_first_line(e)}"
        return rec
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            kw = dict(input_names=names, output_names=outs, opset_version=opset)
            if exporter == "ts":
                if axes:
                    kw["dynamic_axes"] = {n: {a: f"{n}_{a}" for a in ax}
                                          for n, ax in axes.items()}
                    if entry.get("family_kind") == "detection":
                        kw["dynamic_axes"].update({o: {0: "detections"} for o in outs})
                torch.onnx.export(model, tuple(x), path, dynamo=False, **kw)
            else:
                if axes:
                    kw["dynamic_shapes"] = tuple(
                        {a: torch.export.Dim.AUTO for a in axes.get(n, [])} or None
                        for n in names)
                torch.onnx.export(model, tuple(x), path, dynamo=True, external_data=False,
                                  verbose=False, **kw)
    except Exception as e:  # recorded, not fatal: a refused export is data too
        rec["error"] = _first_line(e)
        if os.path.exists(path):
            os.remove(path)
        return rec
    if exporter == "dynamo":
        strip_dynamo_debug_info(path)
    rec["size"] = os.path.getsize(path)
    if rec["size"] > max_bytes:
        rec["error"] = f"too large: {rec['size']} bytes"
        os.remove(path)
        return rec
    sets = [x] + ([_inputs(entry, 7, kind)] if kind else [])
    try:
        with torch.no_grad():
            eager = [[t.numpy() for t in _as_tuple(model(*s))] for s in sets]
    except Exception as e:
        rec["error"] = f"eager at the second size: {_first_line(e)}"
        os.remove(path)
        return rec
    bad = _check_with_onnxruntime(path, names, outs, sets, eager)
    if bad:  # a broken export would only test onnxruntime's errors
        rec["error"] = bad
        os.remove(path)
        return rec
    for k, (key, okey, sfx) in enumerate((("input_files", "output_files", ""),
                                          ("alt_input_files", "alt_output_files", ".alt"))):
        if k >= len(sets):
            break
        rec[key] = []
        for i, t in enumerate(sets[k]):
            f = f"{stem}.in{i}{sfx}.npy"
            np.save(os.path.join(out_dir, f), t.numpy(), allow_pickle=False)
            rec[key].append(f)
        if save_outputs:
            rec[okey] = []
            for i, a in enumerate(eager[k]):
                f = f"{stem}.out{i}{sfx}.npy"
                np.save(os.path.join(out_dir, f), a, allow_pickle=False)
                rec[okey].append(f)
    if entry.get("family_kind") == "detection":
        rec["detections"] = [int(e[0].shape[0]) for e in eager]
    return rec


def _first_line(e):
    """'Type: first line of the message' of exception `e` (at most 300 characters), and
    of its innermost cause when it has one (the dynamo exporter wraps the real error)."""
    def line(x):
        # without terminal colours and object addresses, so reruns write the same index
        text = re.sub(r"\x1b\[[0-9;]*m| at 0x[0-9a-f]+", "", str(x))
        lines = [s for s in text.strip().splitlines() if s.strip()]
        return f"{type(x).__name__}: {lines[0][:300] if lines else ''}"
    cause = e
    while cause.__cause__ is not None:
        cause = cause.__cause__
    return line(e) + (f" <- {line(cause)}" if cause is not e else "")


def _check_with_onnxruntime(path, names, outs, sets, eager):
    """None when onnxruntime runs the export at `path` on every input set and agrees
    with eager torch (within 1e-3), else what went wrong."""
    import onnxruntime as ort
    try:
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        takes = {i.name for i in sess.get_inputs()}
        for k, (xs, want) in enumerate(zip(sets, eager)):
            got = sess.run(outs, {n: t.numpy() for n, t in zip(names, xs) if n in takes})
            for o, g, w in zip(outs, got, want):
                if g.shape != w.shape:
                    return f"onnxruntime disagrees with torch on set {k} {o}: shape " \
                           f"{g.shape} != {w.shape}"
                if not np.allclose(g, w, rtol=1e-3, atol=1e-3):
                    err = float(np.max(np.abs(g.astype(np.float64) - w)))
                    return f"onnxruntime disagrees with torch on set {k} {o}: {err:.3g}"
    except Exception as e:  # an export onnxruntime cannot run
        return f"onnxruntime fails: {_first_line(e)}"
    return None


def write_index(out_dir, records, rerun=None):
    """index.json: the kept exports keyed by file (as the tests read them), and
    "refused": {file: first line of the error} for the rest. With `rerun` (the model
    names of an --only run) the entries of other models stay as they were."""
    index, refused = {}, {}
    path = os.path.join(out_dir, "index.json")
    if rerun is not None and os.path.exists(path):
        done = set(rerun)
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
        index = {k: v for k, v in old.items() if k.endswith(".onnx")
                 and k.split("__")[0] not in done}
        refused = {k: v for k, v in old.get("refused", {}).items()
                   if k.split("__")[0] not in done}
    for r in sorted(records, key=lambda r: r["file"]):
        if "error" in r:
            refused[r["file"]] = r["error"]
            continue
        e = {k: r[k] for k in ("exporter", "opset", "dynamic", "family", "inputs",
                               "outputs", "input_files")}
        for k in ("alt_input_files", "output_files", "alt_output_files", "detections"):
            if r.get(k):
                e[k] = r[k]
        index[r["file"]] = e
    index["refused"] = refused
    index["notes"] = {f: n for f, n in NOTES.items() if f in refused}
    import onnx
    import onnxruntime
    index["generator"] = dict(torch=torch.__version__, torchvision=torchvision.__version__,
                              onnx=onnx.__version__, onnxruntime=onnxruntime.__version__,
                              tool="tools/export_torchvision_models.py")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv=None):
    """Export the catalogue (or `--only` names) into the output folder and write its
    index.json; `--sweep` tries every variant instead (an exploration run)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?", default=DEFAULT_OUT)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--sweep", action="store_true",
                    help="export every model at every variant of SWEEP_JOBS")
    ap.add_argument("--variants", default=None,
                    help="with --sweep: a comma list of SWEEP_JOBS names to try")
    ap.add_argument("--max-bytes", type=int, default=MAX_BYTES)
    a = ap.parse_args(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    torch.set_num_threads(1)
    # nn.MultiheadAttention's fused inference path (aten::_native_multi_head_attention)
    # has no ONNX export; training-mode-equivalent math is what deployments export
    torch.backends.mha.set_fastpath_enabled(False)
    records = []
    for e in catalogue():
        if a.only and e["name"] not in a.only:
            continue
        jobs = e["jobs"]
        if a.sweep:
            jobs = [SWEEP_JOBS[v] for v in (a.variants.split(",") if a.variants
                                            else SWEEP_JOBS)]
        for exporter, opset, dyn in jobs:
            rec = export_entry(e, a.out_dir, exporter, opset, dyn, a.max_bytes,
                               save_outputs=not a.sweep)
            status = rec.get("error") or f"{rec['size']:,} bytes"
            if rec.get("detections"):
                status += f" detections {rec['detections']}"
            print(f"{rec['file']:<44} {status}", flush=True)
            records.append(rec)
    write_index(a.out_dir, records, rerun=a.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
