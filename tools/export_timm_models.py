"""Export tiny timm (PyTorch Image Models) architectures to ONNX, as PyTorch's exporters
really write them.

A test-corpus generator for onegraph's ONNX importer: it builds timm's own model classes
(ResNet, ResNeXt, RegNet, EfficientNet, MobileNetV2/V3/V4, GhostNet, DenseNet, DPN, DLA,
CSPNet, ConvNeXt, ViT, DeiT, BEiT, Swin, MaxViT, PoolFormer, LeViT, PVTv2, FastViT,
RepVGG, VOLO, CaiT, XCiT, Sequencer and more) with shrunken constructor arguments
(a few channels, one block per stage, 32x32 images, random seeded weights, randomised
BatchNorm statistics, eval mode), exports each with `torch.onnx.export` by the
TorchScript exporter (`dynamo=False`, opsets 17 and 20) and the dynamo exporter (opsets
18 and 23), some with a dynamic batch axis (or batch, height and width), a few in
float16, with initializers as graph inputs, or without the dynamo optimiser; checks
each export with onnxruntime against eager torch (an export that onnxruntime cannot
run, or that disagrees, is recorded as failed) and saves seeded inputs next to it:

    OUT/<model>__<exporter>_op<opset>[_<variant>].onnx
    OUT/<model>__<exporter>_op<opset>[_<variant>].in0.npy      the images (np.save)
    OUT/<model>__<exporter>_op<opset>[_<variant>].in0.alt.npy  a second batch or image
                                                                 size (dynamic models)
    OUT/manifest.json   one record per export attempt, with the error when it failed
    OUT/index.json      the successful exports, keyed by file, as the tests read them

`--variants all` (or a list) exports every variant of every model instead of the
catalogue's choice, to look for trouble beyond the kept corpus.

It needs torch (CPU), timm, onnx, onnxscript, onnxruntime and numpy; no
network (weights are random, never downloaded). It is not run by onegraph's tests.
Run it with a Python that has them, e.g.:

    HF_HUB_OFFLINE=1 /tmp/torchvenv/bin/python tools/export_timm_models.py OUT_DIR
        [--only NAME ...] [--no-dynamo] [--check] [--variants all|LIST]
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import fcntl
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # random weights only: never reach a hub

import timm  # noqa: E402  (after the offline switch)
from timm.models import byoanet, byobnet, cspnet, efficientnet, ghostnet, mobilenetv3  # noqa: E402
from timm.models import maxxvit, metaformer, mlp_mixer, nfnet, regnet, vgg, volo  # noqa

from corpus_tool import strip_dynamo_debug_info  # noqa: E402 - tools/, this folder

NCLS = 10
# every export variant (for exploration runs; "hw": dynamic batch, height and width;
# "fp16": the model and its images in float16)
VARIANTS = dict(ts17=("ts", 17, False), ts20=("ts", 20, False), ts17d=("ts", 17, True),
                dy18=("dynamo", 18, False), dy23=("dynamo", 23, False),
                dy23d=("dynamo", 23, True), ts17hw=("ts", 17, "hw"),
                dy23hw=("dynamo", 23, "hw"), ts17h=("ts", 17, "fp16"),
                dy23h=("dynamo", 23, "fp16"), ts17nf=("ts", 17, "nofold"),
                ts17k=("ts", 17, "keepinit"), dy23no=("dynamo", 23, "noopt"),
                **{f"ts{op}": ("ts", op, False) for op in (9, 11, 13, 14, 15, 16, 18, 19)})
MAX_BYTES = 400_000  # per-model budget of the test corpus


# ----------------------------------------------------------------------------------
# Model factories (those create_model cannot shrink through keyword arguments)
# ----------------------------------------------------------------------------------

def _tm(name, **kw):
    """A factory of timm.create_model(name, random weights, NCLS classes, **kw)."""
    return lambda: timm.create_model(name, pretrained=False, num_classes=NCLS, **kw)


def _regnet():
    """A RegNetY-like net: four stages (8 to 64 wide) of grouped bottlenecks with SE."""
    cfg = regnet.RegNetCfg(depth=6, w0=8, wa=8.0, wm=2.0, group_size=4, bottle_ratio=1.0,
                           se_ratio=0.25, stem_width=8)
    return regnet.RegNet(cfg, num_classes=NCLS)


def _cspnet(base, chs):
    """A factory of a CSPNet-family model (CSPResNet, CSPDarkNet, DarkNet, CS3DarkNet):
    timm's `base` config with one block per stage of widths `chs` and an 8-wide stem."""
    def make():
        cfg = cspnet.model_cfgs[base]
        n = len(cfg.stages.depth)
        stages = dataclasses.replace(cfg.stages, depth=(1,) * n, out_chs=chs[:n])
        stem = dataclasses.replace(cfg.stem, out_chs=8)
        return cspnet.CspNet(dataclasses.replace(cfg, stem=stem, stages=stages),
                             num_classes=NCLS)
    return make


def _byob(blocks, stem_type, stem_chs=8, **kw):
    """A factory of a ByobNet (RepVGG, MobileOne, MobileViT, ...) of the given blocks."""
    def make():
        cfg = byobnet.ByoModelCfg(blocks=blocks, stem_type=stem_type, stem_chs=stem_chs,
                                  stem_pool="", **kw)
        return byobnet.ByobNet(cfg, num_classes=NCLS)
    return make


def _byob_small(base, div=16, **kw):
    """A factory of timm's ByobNet config `base` (BoTNet, HaloNet, LambdaNet, GENet,
    RegNetZ, ECA/GC ResNeXt, ...) with one block per stage, widths divided by `div`
    (at least 8), an 8-wide stem, for 32x32 images."""
    def shrink(b):
        if isinstance(b, (tuple, list)):
            return type(b)(shrink(x) for x in b)
        gs = b.gs if not b.gs or callable(b.gs) else 8  # groups must divide the width
        return dataclasses.replace(b, d=1, c=max(8, int(b.c // div)), gs=gs)

    def make():
        cfg = {**byobnet.model_cfgs, **byoanet.model_cfgs}[base]
        cfg = dataclasses.replace(cfg, blocks=shrink(cfg.blocks), stem_chs=8,
                                  num_features=min(cfg.num_features, 32), **kw)
        return byobnet.ByobNet(cfg, num_classes=NCLS, img_size=32)
    return make


def _blk(t, c, s=2, d=1, gs=0, br=1.0, **bkw):
    """One ByoBlockCfg."""
    return byobnet.ByoBlockCfg(type=t, d=d, c=c, s=s, gs=gs, br=br,
                               block_kwargs=bkw or None)


def _reparam(make):
    """A factory of `make`'s model with its train-time branches fused (RepVGG/MobileOne/
    FastViT reparameterisation), as it would be deployed."""
    def build():
        from timm.utils.model import reparameterize_model
        return reparameterize_model(make())
    return build


def _nfnet():
    """A normalisation-free ResNet: weight-standardised convs (ScaledStdConv2d), scaled
    residuals, SE-free."""
    cfg = nfnet.NfCfg(depths=(1, 1), channels=(16, 32), stem_chs=8, stem_type="3x3",
                      group_size=8, bottle_ratio=0.5, attn_layer="se", attn_kwargs={},
                      act_layer="gelu", num_features=32)
    return nfnet.NormFreeNet(cfg, num_classes=NCLS)


def _mobilevit():
    """MobileViT: inverted residuals then a MobileViT block (unfold to patches,
    transformer, fold back)."""
    bl = (_blk("bottle", 8, s=1, br=2.0, bottle_in=True, linear_out=True),
          _blk("bottle", 16, br=2.0, bottle_in=True, linear_out=True),
          (_blk("bottle", 16, br=2.0, bottle_in=True, linear_out=True),
           byobnet.ByoBlockCfg(type="mobilevit", d=1, c=16, s=1, gs=None, br=1.0,
                               block_kwargs=dict(transformer_dim=16, transformer_depth=1,
                                                 patch_size=2, num_heads=2))))
    return _byob(bl, "3x3", downsample="", num_features=32, act_layer="silu")()


def _narrow(make, outs, ins, n=32):
    """A factory of `make`'s model with its widest layer narrowed to `n` channels:
    the modules at dotted paths `outs` (a conv and its norm) keep their first `n` output
    channels, those at `ins` (the next conv or Linear) their first `n` inputs. timm fixes
    some heads at 1280 or 4096 channels whatever the width multiplier; slicing keeps the
    architecture and drops the bulk of the weights."""
    def build():
        m = make()
        with torch.no_grad():
            for path in outs:
                mod = m.get_submodule(path)
                for attr in ("weight", "bias", "running_mean", "running_var"):
                    t = getattr(mod, attr, None)
                    if t is not None:
                        setattr(mod, attr, type(t)(t[:n].clone()) if isinstance(
                            t, nn.Parameter) else t[:n].clone())
                for attr in ("out_channels", "num_features", "out_features"):
                    if hasattr(mod, attr):
                        setattr(mod, attr, n)
            for path in ins:
                mod = m.get_submodule(path)
                mod.weight = nn.Parameter(mod.weight[:, :n].clone())
                for attr in ("in_channels", "in_features"):
                    if hasattr(mod, attr):
                        setattr(mod, attr, n)
        return m
    return build


def _ghostnet(version):
    """A factory of GhostNet (v1, or v2 with its DFC attention) at a tenth of its width, its
    fixed 1280-wide head conv narrowed to 32 (the weights' bulk otherwise)."""
    def make():
        m = ghostnet._create_ghostnet(f"ghostnet{'v2' if version == 'v2' else ''}_100",
                                      width=0.1, version=version, num_classes=NCLS)
        m.conv_head = nn.Conv2d(m.conv_head.in_channels, 32, 1)
        m.classifier = nn.Linear(32, NCLS)
        return m
    return make


def _mixer(variant, **kw):
    """A factory of an MLP-Mixer-family model (Mixer, ResMLP, gMLP) on 32x32 images."""
    return lambda: mlp_mixer._create_mixer(variant, pretrained=False, num_classes=NCLS,
                                           img_size=32, patch_size=8, num_blocks=2,
                                           embed_dim=16, **kw)


def _maxxvit(base, **kw):
    """A factory of a MaxxVit-family model (MaxViT, CoAtNet) from timm's `base` config,
    shrunk by `kw`, with 8-wide attention heads, for 64x64 images."""
    def make():
        cfg = maxxvit.model_cfgs[base]
        tcfg = dataclasses.replace(cfg.transformer_cfg, dim_head=8)
        cfg = dataclasses.replace(cfg, transformer_cfg=tcfg, **kw)
        return maxxvit.MaxxVit(cfg, img_size=64, num_classes=NCLS)
    return make


class _Attention8(metaformer.Attention):
    """MetaFormer's self-attention token mixer with 8-wide heads (its default of 32 would
    leave the shrunken stages with no head)."""

    def __init__(self, dim, **kw):
        """Build it for `dim` channels."""
        super().__init__(dim, head_dim=8, **kw)


def _hrnet():
    """HRNet-W18-small with a quarter of the branch widths and one block per branch
    (parallel resolutions fused by strided convs and nearest upsampling); its
    classification head keeps timm's fixed widths."""
    from timm.models import hrnet
    cfg = copy.deepcopy(hrnet.cfg_cls["hrnet_w18_small"])
    cfg["stem_width"] = 8
    for k in ("stage1", "stage2", "stage3", "stage4"):
        cfg[k]["num_channels"] = tuple(max(4, c // 4) for c in cfg[k]["num_channels"])
        cfg[k]["num_blocks"] = tuple(1 for _ in cfg[k]["num_blocks"])
    return hrnet.HighResolutionNet(cfg, num_classes=NCLS)


def _xception():
    """An aligned Xception (separable convs, ReLU-first blocks, strided skips) of three
    narrow blocks."""
    from timm.models import xception_aligned
    blocks = [dict(in_chs=64, out_chs=16, stride=2), dict(in_chs=16, out_chs=24, stride=2),
              dict(in_chs=24, out_chs=(24, 32, 32), stride=1, no_skip=True,
                   start_with_relu=False)]
    return xception_aligned.XceptionAligned(blocks, num_classes=NCLS)


def _ls_scale(model, g):
    """Give constant parameters (layer-scale gammas at 1e-6 or 1e-5, zero-initialised
    last norms, tokens and heads) seeded random values: otherwise whole residual branches
    contribute nothing and a wrong kernel inside them would go unseen."""
    for name, p in model.named_parameters():
        if p.numel() == 0:
            continue
        if float(p.max()) == float(p.min()):
            if float(p.max()) == 0.0:
                p.data.copy_(torch.randn(p.shape, generator=g) * 0.2)
            else:  # scales: keep the sign, make them O(1)
                p.data.copy_(torch.rand(p.shape, generator=g) + 0.5)


# ----------------------------------------------------------------------------------
# Catalogue
# ----------------------------------------------------------------------------------

VIT = dict(img_size=32, patch_size=8, embed_dim=16, depth=2, num_heads=2)


def catalogue():
    """The models: a list of dicts with name, factory, image size (H, W; 32x32 unless
    said), exports (a list of (exporter, opset, dynamic)). Most get one export (the
    folder's size budget), some none (they are close cousins of others, and too large
    to keep as well: they run with --variants only); the exporters and opsets rotate
    over the catalogue."""
    ts17, ts20 = ("ts", 17, False), ("ts", 20, False)
    dy18, dy23 = ("dynamo", 18, False), ("dynamo", 23, False)
    ts17d, dy23d = ("ts", 17, True), ("dynamo", 23, True)
    ts17hw, dy23hw = ("ts", 17, "hw"), ("dynamo", 23, "hw")
    ts17h, dy23h = ("ts", 17, "fp16"), ("dynamo", 23, "fp16")
    ts17k, dy23no = ("ts", 17, "keepinit"), ("dynamo", 23, "noopt")
    ch = dict(layers=(1, 1, 1, 1), channels=(4, 8, 12, 16), stem_width=8)
    rep3 = (_blk("rep", 8), _blk("rep", 16), _blk("rep", 16))
    one = (_blk("one", 8, gs=1, num_conv_branches=2),
           _blk("one", 16, s=1, kernel_size=1, num_conv_branches=2))
    cat = [
        dict(name="resnet", hw=True, make=_tm("resnet18", **ch), jobs=[ts17d, dy18]),
        dict(name="seresnet", hw=True, make=_tm("seresnet18", **ch), jobs=[]),
        dict(name="resnet_d", hw=True, make=_tm("resnet18d", **ch), jobs=[dy23d]),
        dict(name="resnext", hw=True, make=_tm("resnext50_32x4d", layers=(1, 1, 1, 1),
                                      channels=(4, 4, 8, 8), stem_width=8,
                                      cardinality=4, base_width=32), jobs=[ts17]),
        dict(name="res2net", hw=True, make=_tm("res2net50_14w_8s", layers=(1, 1, 1, 1),
                                      channels=(4, 4, 8, 8), stem_width=8,
                                      base_width=16), jobs=[ts20]),
        dict(name="regnety", hw=True, make=_regnet, jobs=[ts17d]),
        dict(name="efficientnet", hw=True, make=_narrow(lambda: efficientnet._gen_efficientnet(
            "efficientnet_b0", channel_multiplier=0.1, depth_multiplier=0.2,
            num_classes=NCLS), ["conv_head", "bn2"], ["classifier"], n=16),
            jobs=[]),
        dict(name="efficientnetv2", hw=True, make=_narrow(
            lambda: efficientnet._gen_efficientnetv2_s(
                "efficientnetv2_s", channel_multiplier=0.1, depth_multiplier=0.1,
                num_classes=NCLS), ["conv_head", "bn2"], ["classifier"], n=16), jobs=[]),
        dict(name="mobilenetv2", hw=True, make=_narrow(lambda: efficientnet._gen_mobilenet_v2(
            "mobilenetv2_100", 0.15, depth_multiplier=0.3, num_classes=NCLS),
            ["conv_head", "bn2"], ["classifier"], n=16), jobs=[]),
        dict(name="mobilenetv3", hw=True, make=_narrow(lambda: mobilenetv3._gen_mobilenet_v3(
            "mobilenetv3_large_100", 0.1, depth_multiplier=0.3, num_classes=NCLS),
            ["conv_head"], ["classifier"], n=16), jobs=[dy23]),
        dict(name="mobilenetv4", hw=True, make=_narrow(lambda: mobilenetv3._gen_mobilenet_v4(
            "mobilenetv4_conv_small", 0.1, num_classes=NCLS), ["conv_head", "norm_head"],
            ["classifier"], n=16), jobs=[ts20]),
        dict(name="ghostnet", hw=True, make=_ghostnet("v1"), jobs=[]),
        dict(name="ghostnetv2", make=_ghostnet("v2"), img=(64, 64), jobs=[]),
        dict(name="rexnet", hw=True, make=_tm("rexnet_100", width_mult=0.15, depth_mult=0.2,
                                     final_chs=16), jobs=[dy18]),
        dict(name="densenet", hw=True, make=_tm("densenet121", growth_rate=4,
                                                block_config=(1, 2, 2)),
             jobs=[ts20]),
        # recorded failures: DPN's bottlenecks are 64 to 512 wide whatever the arguments
        # (too large for the corpus); EfficientFormer's last stage wants its 7x7 grid
        dict(name="dpn", make=_tm("dpn68", k_sec=(1, 1, 1, 1), inc_sec=(4, 4, 8, 8), k_r=4,
                                  groups=4, num_init_features=8, small=True), jobs=[ts17]),
        dict(name="efficientformer", make=_tm("efficientformer_l1", depths=(1, 1, 1, 1),
                                              embed_dims=(8, 16, 24, 32), num_vit=0),
             jobs=[ts17]),
        dict(name="dla", hw=True, make=_tm("dla34", levels=(1, 1, 1, 1, 1, 1),
                                  channels=(4, 4, 8, 8, 8, 16)), jobs=[ts17]),
        dict(name="cspresnet", hw=True, make=_cspnet("cspresnet50", (8, 8, 12, 16)), jobs=[ts20]),
        dict(name="cspdarknet", hw=True, make=_cspnet("cspdarknet53", (8, 8, 8, 12, 16)),
             jobs=[dy23]),
        dict(name="darknet", hw=True, make=_cspnet("darknet53", (8, 8, 8, 12, 16)), jobs=[ts17]),
        dict(name="cs3darknet", hw=True, make=_cspnet("cs3darknet_s", (8, 8, 12, 16)), jobs=[dy18]),
        dict(name="vgg", make=_narrow(lambda: vgg.VGG(
            [8, "M", 16, "M", 16, 16], mlp_ratio=0.004, num_classes=NCLS),
            ["pre_logits.fc2"], ["head.fc"], n=16), jobs=[dy18]),
        dict(name="convnext", hw=True, make=_tm("convnext_atto", dims=(8, 8, 16, 16),
                                       depths=(1, 1, 1, 1)), jobs=[ts17d]),
        dict(name="convnextv2", hw=True, make=_tm("convnextv2_atto", dims=(8, 8, 16, 16),
                                         depths=(1, 1, 1, 1)), jobs=[dy23]),
        dict(name="convmixer", hw=True, make=lambda: timm.models.convmixer.ConvMixer(
            16, 2, kernel_size=5, patch_size=4, num_classes=NCLS), jobs=[ts17k, dy18]),
        dict(name="mixer", make=_mixer("mixer_s16_224"), jobs=[ts20]),
        dict(name="resmlp", make=_mixer(
            "resmlp_12_224", mlp_ratio=4, block_layer=mlp_mixer.ResBlock,
            norm_layer=mlp_mixer.Affine), jobs=[dy18]),
        dict(name="gmlp", make=_mixer(
            "gmlp_ti16_224", mlp_ratio=6, block_layer=mlp_mixer.SpatialGatingBlock,
            mlp_layer=timm.layers.GatedMlp), jobs=[ts17]),
        dict(name="vit", make=_tm("vit_tiny_patch16_224", **VIT), jobs=[ts17d, dy23d]),
        dict(name="deit_distilled", make=_tm("deit_tiny_distilled_patch16_224", **VIT),
             jobs=[ts20]),
        dict(name="beit", make=_tm("beit_base_patch16_224", **VIT), jobs=[dy23]),
        dict(name="swin", make=_tm("swin_tiny_patch4_window7_224", img_size=32,
                                   embed_dim=8, depths=(2, 1), num_heads=(1, 2),
                                   window_size=4), jobs=[dy23h]),
        dict(name="swinv2", make=_tm("swinv2_tiny_window8_256", img_size=32, embed_dim=8,
                                     depths=(2, 1), num_heads=(1, 2), window_size=4),
             jobs=[ts20]),
        dict(name="poolformer", hw=True, make=lambda: metaformer._create_metaformer(
            "poolformer_s12", depths=(1, 1, 1, 1), dims=(8, 8, 16, 16), downsample_norm=None,
            mlp_act=nn.GELU, mlp_bias=True, norm_layers=metaformer.GroupNorm1,
            layer_scale_init_values=1e-5, res_scale_init_values=None, use_mlp_head=False,
            num_classes=NCLS), jobs=[ts17d]),
        dict(name="caformer", hw=True, make=lambda: metaformer._create_metaformer(
            "caformer_s18", depths=(1, 1, 1, 1), dims=(8, 8, 16, 16),
            token_mixers=[metaformer.SepConv] * 2 + [_Attention8] * 2,
            norm_layers=[metaformer.LayerNorm2dNoBias] * 2 + [metaformer.LayerNormNoBias] * 2,
            num_classes=NCLS), jobs=[dy23]),
        dict(name="convit", make=_tm("convit_tiny", local_up_to_layer=1,
                                     **dict(VIT, embed_dim=8)), jobs=[dy18]),
        dict(name="cait", make=_tm("cait_xxs24_224", depth_token_only=1, **VIT),
             jobs=[ts17]),
        dict(name="xcit", make=_tm("xcit_nano_12_p8_224", img_size=32, patch_size=8,
                                   embed_dim=16, depth=2, num_heads=2, cls_attn_layers=1),
             jobs=[ts20]),
        dict(name="levit", make=_tm("levit_128s", img_size=32, embed_dim=(16, 16, 24),
                                    key_dim=4, depth=(1, 1, 1), num_heads=(2, 2, 2)),
             jobs=[ts17h]),
        dict(name="pvt_v2", make=_tm("pvt_v2_b0", depths=(1, 1, 1, 1),
                                     embed_dims=(8, 8, 16, 16), num_heads=(1, 1, 2, 2),
                                     mlp_ratios=(2, 2, 2, 2)), jobs=[dy23]),
        dict(name="twins_svt", make=_tm("twins_svt_small", img_size=32,
                                        embed_dims=(8, 16, 16, 16), depths=(1, 1, 1, 1),
                                        num_heads=(1, 1, 2, 2), wss=(2, 2, 2, 2),
                                        mlp_ratios=(2, 2, 2, 2)), jobs=[ts17, dy18]),
        dict(name="edgenext", hw=True, make=_tm("edgenext_xx_small", dims=(8, 8, 16, 16),
                                       depths=(1, 1, 1, 1), heads=(2, 2, 2, 2)),
             jobs=[ts20]),
        dict(name="fastvit", make=_tm("fastvit_t8", layers=(1, 1, 1, 1),
                                      embed_dims=(16, 16, 32, 32),
                                      mlp_ratios=(2, 2, 2, 2)), jobs=[]),
        dict(name="fastvit_reparam", hw=True, make=_reparam(_tm(
            "fastvit_sa12", layers=(1, 1, 1, 1), embed_dims=(16, 16, 32, 32),
            mlp_ratios=(2, 2, 2, 2))), jobs=[dy23]),
        dict(name="repvgg", hw=True, make=_byob(rep3, "rep", downsample="conv1x1"),
             jobs=[ts17]),
        dict(name="repvgg_reparam", hw=True, make=_reparam(_byob(rep3, "rep")), jobs=[ts17d, dy23]),
        dict(name="mobileone", hw=True, make=_byob(one, "one"), jobs=[ts20]),
        dict(name="mobileone_reparam", hw=True, make=_reparam(_byob(one, "one")),
             jobs=[ts17, dy23no]),
        dict(name="mobilevit", hw=True, make=_mobilevit, jobs=[ts17]),
        dict(name="tresnet", hw=True, make=_tm("tresnet_m", layers=(1, 1, 1, 1),
                                               width_factor=0.0625),
             img=(64, 64), jobs=[ts17]),
        dict(name="nfnet", hw=True, make=_nfnet, jobs=[dy18]),
        dict(name="volo", make=lambda: volo.VOLO(
            (1, 1, 1, 1), img_size=32, patch_size=8, stem_hidden_dim=8,
            embed_dims=(16, 16, 16, 16), num_heads=(1, 1, 1, 1), mlp_ratio=2.0,
            num_classes=NCLS), jobs=[ts17, dy18]),
        dict(name="tnt", make=_tm("tnt_s_patch16_224", img_size=32, patch_size=8,
                                  embed_dim=16, inner_dim=8, depth=2, num_heads_inner=2,
                                  num_heads_outer=2), jobs=[dy23]),
        dict(name="sequencer", make=_tm("sequencer2d_s", img_size=32, layers=(1, 1, 1, 1),
                                        patch_sizes=(4, 2, 2, 1), embed_dims=(8, 8, 8, 8),
                                        hidden_sizes=(4, 4, 4, 4), mlp_ratios=(2, 2, 2, 2)),
             jobs=[ts17]),
        dict(name="maxvit", make=_maxxvit("maxvit_pico_rw", embed_dim=(8, 16), depths=(1, 1),
                                          block_type=("M", "M"), stem_width=(8, 8)),
             img=(64, 64), jobs=[ts17]),
        dict(name="coatnet", make=_maxxvit("coatnet_pico_rw", embed_dim=(8, 8, 16, 16),
                                           depths=(1, 1, 1, 1), stem_width=(8, 8)),
             img=(64, 64), jobs=[ts20]),
        dict(name="crossvit", make=_tm("crossvit_tiny_240", img_size=32, img_scale=(1.0, 1.0),
                                       patch_size=(8, 16), embed_dim=(8, 16),
                                       depth=((1, 1, 0),), num_heads=(2, 2),
                                       mlp_ratio=(2.0, 2.0, 1.0)), jobs=[dy23h]),
        # further families, mostly explored only (--variants), not kept in the corpus
        dict(name="tf_efficientnet", make=_narrow(lambda: efficientnet._gen_efficientnet(
            "tf_efficientnet_b0", channel_multiplier=0.1, depth_multiplier=0.2,
            pad_type="same", bn_eps=1e-3, num_classes=NCLS), ["conv_head", "bn2"],
            ["classifier"], n=16), jobs=[ts17hw], hw=True),
        dict(name="mixnet", make=_narrow(lambda: efficientnet._gen_mixnet_s(
            "mixnet_s", channel_multiplier=0.25, num_classes=NCLS), ["conv_head", "bn2"],
            ["classifier"], n=16), jobs=[], hw=True),
        dict(name="resnest", make=_tm("resnest14d", layers=(1, 1, 1, 1),
                                      channels=(8, 8, 16, 16), stem_width=8), jobs=[],
             hw=True),
        dict(name="skresnet", make=_tm("skresnet18", **ch), jobs=[], hw=True),
        dict(name="resnetv2", make=_tm("resnetv2_18", layers=(1, 1, 1, 1),
                                       channels=(8, 8, 16, 16), stem_chs=8), jobs=[],
             hw=True),
        dict(name="botnet", make=_byob_small("botnet26t"), jobs=[]),
        dict(name="halonet", make=_byob_small("halonet26t"), jobs=[]),
        dict(name="lambda_resnet", make=_byob_small("lambda_resnet26t"), jobs=[]),
        dict(name="eca_resnext", make=_byob_small("eca_resnext26ts"), jobs=[], hw=True),
        dict(name="gc_resnext", make=_byob_small("gcresnext26ts"), jobs=[], hw=True),
        dict(name="gernet", make=_byob_small("gernet_s"), jobs=[], hw=True),
        dict(name="regnetz", make=_byob_small("regnetz_b16"), jobs=[], hw=True),
        dict(name="eva02", make=_tm("eva02_tiny_patch14_224", **VIT), jobs=[]),
        dict(name="vit_map_reg", make=_tm("vit_tiny_patch16_224", global_pool="map",
                                          reg_tokens=2, **VIT), jobs=[]),
        dict(name="vit_dynsize", make=_tm("vit_tiny_patch16_224", dynamic_img_size=True,
                                          **VIT), jobs=[dy23hw], hw=True),
        dict(name="davit", make=_tm("davit_tiny", embed_dims=(8, 16, 16, 16),
                                    depths=(1, 1, 1, 1), num_heads=(1, 2, 2, 2),
                                    window_size=2), jobs=[]),
        dict(name="inception_next", make=_tm("inception_next_tiny", dims=(8, 8, 16, 16),
                                             depths=(1, 1, 1, 1)), jobs=[], hw=True),
        dict(name="mambaout", make=_tm("mambaout_femto", dims=(8, 8, 16, 16),
                                       depths=(1, 1, 1, 1)), jobs=[]),
        dict(name="efficientvit", make=_tm("efficientvit_b0", widths=(8, 8, 16, 16, 32),
                                           depths=(1, 1, 1, 1, 1), head_dim=8,
                                           head_widths=(32, 32)), jobs=[], hw=True),
        dict(name="repvit", make=_tm("repvit_m0_9", embed_dim=(8, 16, 16, 32),
                                     depth=(1, 1, 1, 1)), jobs=[], hw=True),
        dict(name="fasternet", make=_tm("fasternet_t0", embed_dim=16, depths=(1, 1, 1, 1)),
             jobs=[], hw=True),
        dict(name="starnet", make=_tm("starnet_s1", base_dim=8, depths=(1, 1, 1, 1)),
             jobs=[], hw=True),
        dict(name="lcnet", make=_narrow(lambda: mobilenetv3._gen_lcnet(
            "lcnet_050", 0.25, num_classes=NCLS), ["conv_head"], ["classifier"], n=16),
            jobs=[], hw=True),
        dict(name="pit", make=_tm("pit_ti_224", img_size=32, patch_size=4, stride=2,
                                  base_dims=(8, 8, 8), depth=(1, 1, 1), heads=(1, 2, 2)),
             jobs=[]),
        dict(name="visformer", make=_tm("visformer_tiny", img_size=32, init_channels=8,
                                        embed_dim=32, depth=(1, 1, 1), num_heads=2),
             jobs=[]),
        dict(name="hiera", make=_tm("hiera_tiny_224", img_size=64, embed_dim=8, num_heads=1,
                                    stages=(1, 1, 1, 1)), img=(64, 64), jobs=[]),
        dict(name="convnext_convmlp", make=_tm("convnext_atto", dims=(8, 8, 16, 16),
                                               depths=(1, 1, 1, 1), conv_mlp=True,
                                               kernel_sizes=3, head_norm_first=True),
             jobs=[], hw=True),
        dict(name="hrnet", make=_hrnet, jobs=[], hw=True),
        dict(name="xception", make=_xception, jobs=[ts20], hw=True),
        dict(name="resnet_catavgmax", make=_tm("resnet18", global_pool="catavgmax",
                                               act_layer="hard_swish", **ch),
             jobs=[], hw=True),
    ]
    return cat


# ----------------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------------

def build(entry):
    """Instantiate `entry`'s model with seeded weights, randomised BatchNorm statistics
    (so BN folding is exercised) and randomised constant parameters, in eval mode."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = entry["make"]()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        _ls_scale(model, g)
        for mod in model.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm) and mod.running_mean is not None:
                n = mod.num_features
                mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                if mod.weight is not None:
                    mod.weight.copy_(torch.rand(n, generator=g) + 0.5)
                    mod.bias.copy_(torch.randn(n, generator=g) * 0.1)
    return model.eval()


def _images(rng, n, hw):
    """A float32 image batch (n, 3, H, W) of seeded normal values."""
    return torch.from_numpy(rng.standard_normal((n, 3) + tuple(hw)).astype(np.float32))


def export_entry(entry, out_dir, exporter, opset, dynamic, max_bytes=MAX_BYTES):
    """Export one model with `exporter` ('ts' or 'dynamo') at `opset`, with a dynamic
    batch axis when `dynamic`; save its inputs; return its manifest record."""
    suffix = {False: "", True: "_dyn", "hw": "_dynhw", "fp16": "_fp16", "nofold": "_nofold",
              "keepinit": "_keepinit", "noopt": "_noopt"}[dynamic]
    stem = f"{entry['name']}__{exporter}_op{opset}{suffix}"
    path = os.path.join(out_dir, stem + ".onnx")
    hw = entry.get("img", (32, 32))
    rec = dict(name=entry["name"], file=stem + ".onnx", exporter=exporter, opset=opset,
               dynamic=dynamic, inputs=["pixels"], outputs=["logits"])
    # static models take one image, dynamic ones two (and one for the second size): the
    # inputs are stored in the corpus too; the dynamic models test batches
    x = _images(np.random.default_rng(123), 2 if dynamic else 1, hw)
    # the static variants: "fp16" (float16 weights and images), "nofold" (no constant
    # folding), "keepinit" (initializers listed as graph inputs too, as older exports
    # did), "noopt" (the dynamo exporter's graph before its optimiser)
    mode = dynamic if isinstance(dynamic, str) and dynamic != "hw" else None
    half = mode == "fp16"
    dynamic = rec["dynamic"] = False if mode else dynamic
    try:
        model = build(entry)
        if half:
            model, x = model.half(), x.half()
        with torch.no_grad():
            model(x)
    except Exception as e:  # the model itself fails at this size: report, go on
        rec["error"] = f"build/forward: {_first_line(e)}"
        return rec
    dyn = {"pixels": {0: "batch"}, "logits": {0: "batch"}}
    dims = {0: torch.export.Dim("batch", min=1, max=64)}
    if dynamic == "hw":  # height and width too: shape arithmetic runs at run time
        dyn["pixels"].update({2: "height", 3: "width"})
        dims.update({2: torch.export.Dim("height", min=16, max=256),
                     3: torch.export.Dim("width", min=16, max=256)})
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            kw = dict(input_names=["pixels"], output_names=["logits"], opset_version=opset)
            if exporter == "ts":
                if dynamic:
                    kw["dynamic_axes"] = dyn
                torch.onnx.export(model, (x,), path, dynamo=False,
                                  do_constant_folding=mode != "nofold",
                                  keep_initializers_as_inputs=mode == "keepinit", **kw)
            else:
                if dynamic:
                    kw["dynamic_shapes"] = (dims,)
                torch.onnx.export(model, (x,), path, dynamo=True, external_data=False,
                                  verbose=False, optimize=mode != "noopt", **kw)
    except Exception as e:  # recorded, not fatal: a failed export is data too
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
    batches = [x]
    if dynamic:
        alt_hw = (hw[0] + 16, hw[1] + 8) if dynamic == "hw" else hw
        batches.append(_images(np.random.default_rng(7), 1, alt_hw))
    bad = _check_with_onnxruntime(path, model, batches)
    if bad:  # a broken export (e.g. a size baked in) would only test onnxruntime's errors
        rec["error"] = bad
        os.remove(path)
        return rec
    for k, (key, sfx) in enumerate((("input_files", ""), ("alt_input_files", ".alt"))):
        if k < len(batches):
            f = f"{stem}.in0{sfx}.npy"
            np.save(os.path.join(out_dir, f), batches[k].numpy(), allow_pickle=False)
            rec[key] = [f]
    return rec


def _first_line(e):
    """'Type: first line of the message' of exception `e` (at most 300 characters)."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:300] if lines else ''}"


def _check_with_onnxruntime(path, model, batches):
    """None when onnxruntime runs the export at `path` on every batch and agrees with
    eager torch (within 1e-3), else what went wrong."""
    import onnxruntime as ort
    try:
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for k, xb in enumerate(batches):
            got = sess.run(["logits"], {"pixels": xb.numpy()})[0]
            with torch.no_grad():
                want = model(xb).numpy()
            tol = 1e-3 if want.dtype == np.float32 else 5e-2
            if got.shape != want.shape or not np.allclose(got, want, rtol=tol, atol=tol):
                return f"onnxruntime disagrees with torch on input {k}"
    except Exception as e:  # an export onnxruntime cannot run
        return f"onnxruntime fails: {_first_line(e)}"
    return None


def _save(out_dir, records, names):
    """Merge `records` (those of models `names`) into manifest.json and rewrite
    index.json, under a file lock (several generator processes may run at once)."""
    with open(os.path.join(out_dir, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        manifest = os.path.join(out_dir, "manifest.json")
        old = []
        if os.path.exists(manifest):
            with open(manifest, encoding="utf-8") as f:
                old = [r for r in json.load(f) if r["name"] not in names]
        allrec = sorted(old + records, key=lambda r: r["file"])
        with open(manifest, "w", encoding="utf-8") as f:
            json.dump(allrec, f, indent=1)
        index = {}
        for r in allrec:
            if "error" in r:
                continue
            e = {k: r[k] for k in ("exporter", "opset", "dynamic", "inputs", "outputs",
                                   "input_files")}
            e["family"] = r["name"]
            if r.get("alt_input_files"):
                e["alt_input_files"] = r["alt_input_files"]
            index[r["file"]] = e
        with open(os.path.join(out_dir, "index.json"), "w", encoding="utf-8") as f:
            json.dump(index, f, indent=1, sort_keys=True)
    os.remove(os.path.join(out_dir, ".lock"))


def main(argv=None):
    """Export the catalogue (or `--only` names) into the output folder; write
    manifest.json and index.json there. `--check` only builds each model and prints its
    parameter count."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--no-dynamo", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--max-bytes", type=int, default=MAX_BYTES,
                    help="larger exports are recorded as failed and not kept")
    ap.add_argument("--variants", default=None,
                    help="'all', or a comma list of " + ",".join(VARIANTS) + ": export "
                         "these variants (those that apply) instead of the catalogue's "
                         "jobs (an exploration run; the corpus keeps the catalogue's)")
    a = ap.parse_args(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    torch.set_num_threads(1)
    entries = [e for e in catalogue() if not a.only or e["name"] in a.only]
    if a.check:
        for e in entries:
            try:
                m = build(e)
                with torch.no_grad():
                    y = m(_images(np.random.default_rng(0), 2, e.get("img", (32, 32))))
                n = sum(p.numel() for p in m.parameters())
                print(f"{e['name']:<22} {n:>8,} params  out {tuple(y.shape)}", flush=True)
            except Exception as ex:  # report and go on
                print(f"{e['name']:<22} FAIL {type(ex).__name__}: {str(ex)[:200]}",
                      flush=True)
        return 0
    records = []
    for e in entries:
        jobs = e["jobs"]
        if a.variants:
            want = VARIANTS if a.variants == "all" else a.variants.split(",")
            jobs = [VARIANTS[v] for v in want
                    if VARIANTS[v][2] != "hw" or e.get("hw")]
        for exporter, opset, dyn in jobs:
            if a.no_dynamo and exporter == "dynamo":
                continue
            rec = export_entry(e, a.out_dir, exporter, opset, dyn, a.max_bytes)
            status = rec.get("error") or f"{rec['size']:,} bytes"
            print(f"{rec['file']:<40} {status}", flush=True)
            records.append(rec)
    _save(a.out_dir, records, {e["name"] for e in entries})
    return 0


if __name__ == "__main__":
    sys.exit(main())
