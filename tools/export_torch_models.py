"""Export small PyTorch models to ONNX, as PyTorch's exporters really write them.

A test-corpus generator for onegraph's ONNX importer: it defines small models in plain
torch code (ResNet, MobileNetV2, EfficientNet, UNet, YOLO head, BERT, ViT, GPT, LSTM/
GRU/RNN, a 1-D audio net and several op collections; narrow widths, seeded weights,
eval mode), exports each with `torch.onnx.export` at several opsets with the
TorchScript exporter (`dynamo=False`) and, where it works, the dynamo exporter, some
with dynamic batch / sequence axes, and saves seeded inputs next to each model:

    OUT/<model>__<exporter>_op<opset>[_dyn].onnx
    OUT/<model>__<exporter>_op<opset>[_dyn].in<k>.npy       inputs (np.save, no pickle)
    OUT/<model>__<exporter>_op<opset>[_dyn].in<k>.alt.npy   a second batch/sequence size
                                                              (dynamic models only)
    OUT/manifest.json   one entry per export: file, exporter, opset, dynamic, input and
                        output names, input files, or the error when the export failed

It needs torch (CPU), onnx, onnxscript (for the dynamo exporter) and numpy; it is not
run by onegraph's tests (onegraph itself does not depend on torch). Run it with a
Python that has torch, e.g.:

    python3 -m venv /tmp/torchvenv
    /tmp/torchvenv/bin/pip install torch onnx onnxscript numpy
    /tmp/torchvenv/bin/python tools/export_torch_models.py OUT_DIR [--only NAME ...]
        [--no-dynamo]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TS_OPSETS = (13, 17, 20)  # TorchScript exporter (20 is its newest)
DYNAMO_OPSETS = (18, 23)  # dynamo exporter (18 its default, 23 its newest)

# eval-mode nn.MultiheadAttention / TransformerEncoderLayer otherwise take PyTorch's
# fused "fast path", which neither exporter can write
torch.backends.mha.set_fastpath_enabled(False)


# ----------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------

class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 Conv/BatchNorm, ReLU, residual Add (with a 1x1
    projection when the stride or width changes)."""

    def __init__(self, cin, cout, stride=1):
        """Build the block for `cin` -> `cout` channels at `stride`."""
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        """conv-bn-relu-conv-bn + shortcut, then ReLU."""
        idt = x if self.down is None else self.down(x)
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return F.relu(y + idt)


class ResNetTiny(nn.Module):
    """A small ResNet: stem Conv/BN/ReLU/MaxPool, three basic blocks,
    AdaptiveAvgPool2d(1), flatten, Linear."""

    def __init__(self, ncls=10):
        """Build the net with `ncls` output classes."""
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        self.layers = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 16, 2),
                                    BasicBlock(16, 16))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, ncls)

    def forward(self, x):
        """Logits of image batch `x` (N, 3, H, W)."""
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


class InvertedResidual(nn.Module):
    """MobileNetV2 inverted residual: 1x1 expand, 3x3 depthwise (groups=C), ReLU6,
    1x1 linear projection, residual when shapes match."""

    def __init__(self, cin, cout, stride, expand):
        """Build the block (`expand` is the hidden width multiplier)."""
        super().__init__()
        hid = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hid, 1, bias=False), nn.BatchNorm2d(hid), nn.ReLU6()]
        layers += [nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False),
                   nn.BatchNorm2d(hid), nn.ReLU6(),
                   nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        """The block's output (with the residual when it applies)."""
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2Tiny(nn.Module):
    """A small MobileNetV2: stem, inverted residual blocks, 1x1 head, mean pooling,
    dropout (a no-op in eval), Linear."""

    def __init__(self, ncls=10):
        """Build the net with `ncls` classes."""
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU6())
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1, 1),
                                    InvertedResidual(8, 12, 2, 4),
                                    InvertedResidual(12, 12, 1, 4),
                                    InvertedResidual(12, 16, 2, 4))
        self.head = nn.Sequential(nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32),
                                  nn.ReLU6())
        self.cls = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, ncls))

    def forward(self, x):
        """Logits of `x` (N, 3, H, W); global pooling by mean over H and W."""
        x = self.head(self.blocks(self.stem(x)))
        return self.cls(x.mean([2, 3]))


class SqueezeExcite(nn.Module):
    """Squeeze-excitation: global average pool, 1x1 reduce, SiLU, 1x1 expand,
    sigmoid gate multiplied into the input."""

    def __init__(self, c, r=4):
        """Build the SE block for `c` channels, reduction `r`."""
        super().__init__()
        self.fc1 = nn.Conv2d(c, max(1, c // r), 1)
        self.fc2 = nn.Conv2d(max(1, c // r), c, 1)

    def forward(self, x):
        """x gated by its channel attention."""
        s = F.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(F.silu(self.fc1(s))))


class EfficientNetTiny(nn.Module):
    """A small EfficientNet-like net: SiLU stem, MBConv blocks with SE, a Hardswish
    head (as in MobileNetV3), Hardsigmoid gate, AdaptiveAvgPool2d, Linear."""

    def __init__(self, ncls=10):
        """Build the net with `ncls` classes."""
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.SiLU())
        self.dw = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1, groups=8, bias=False),
                                nn.BatchNorm2d(8), nn.SiLU())
        self.se = SqueezeExcite(8)
        self.proj = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16))
        self.dw2 = nn.Sequential(nn.Conv2d(16, 16, 5, 2, 2, groups=16, bias=False),
                                 nn.BatchNorm2d(16), nn.Hardswish())
        self.gate = nn.Hardsigmoid()
        self.head = nn.Sequential(nn.Conv2d(16, 24, 1), nn.Hardswish())
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(24, ncls)

    def forward(self, x):
        """Logits of `x` (N, 3, H, W)."""
        x = self.stem(x)
        x = x + self.proj[0](self.se(self.dw(x)))[:, :8] * 0.5
        x = self.proj(x)
        x = self.dw2(x)
        x = x * self.gate(x.mean((2, 3), keepdim=True))
        x = self.head(x)
        return self.fc(self.pool(x).flatten(1))


class UNetTiny(nn.Module):
    """A small UNet: two down stages (Conv/ReLU/MaxPool), up path with
    ConvTranspose2d, nn.Upsample nearest and bilinear (align_corners True and False),
    F.interpolate with scale_factor, torch.cat skip connections."""

    def __init__(self):
        """Build the net (3 input channels, 2 output channels)."""
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.e2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.up1 = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.d1 = nn.Sequential(nn.Conv2d(32, 8, 3, padding=1), nn.ReLU())
        self.up_nn = nn.Upsample(scale_factor=2, mode="nearest")
        self.up_bl = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.up_bt = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.d2 = nn.Sequential(nn.Conv2d(8 * 3 + 8, 8, 3, padding=1), nn.ReLU())
        self.up3 = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.out = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        """Segmentation logits at `x`'s resolution (H, W divisible by 8)."""
        a = self.e1(x)                       # H
        b = self.e2(F.max_pool2d(a, 2))      # H/2
        c = self.e3(F.max_pool2d(b, 2))      # H/4
        u = self.up1(c)                      # H/2
        d = self.d1(torch.cat([u, b], 1))    # H/2
        up = torch.cat([self.up_nn(d), self.up_bl(d), self.up_bt(d), a], 1)  # H
        e = self.d2(up)
        e = F.interpolate(e, scale_factor=0.5, mode="bilinear", align_corners=False)
        e = self.up3(e)                      # H
        return self.out(e)


class YoloHead(nn.Module):
    """A YOLO-style detection head: a conv gives (N, A*(5+C), H, W), then view/permute,
    sigmoid on xy/obj/cls, exp on wh, grid and anchor arithmetic, slicing, torch.cat
    of the decoded boxes over two scales."""

    def __init__(self, ncls=3, na=2):
        """Build the head for `ncls` classes and `na` anchors per cell."""
        super().__init__()
        self.na, self.no = na, ncls + 5
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.1))
        self.down = nn.Sequential(nn.Conv2d(8, 8, 3, 2, 1), nn.LeakyReLU(0.1))
        self.p1 = nn.Conv2d(8, na * self.no, 1)
        self.p2 = nn.Conv2d(8, na * self.no, 1)
        self.register_buffer("anchors", torch.tensor([[[10., 13.], [16., 30.]],
                                                      [[30., 61.], [62., 45.]]]))

    def decode(self, p, i, stride):
        """Decode one scale's raw predictions `p` into (N, A*H*W, 5+C) boxes."""
        n, _, h, w = p.shape
        p = p.view(n, self.na, self.no, h, w).permute(0, 1, 3, 4, 2).contiguous()
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                                torch.arange(w, dtype=torch.float32), indexing="ij")
        grid = torch.stack((xs, ys), 2).view(1, 1, h, w, 2)
        anchor = self.anchors[i].view(1, self.na, 1, 1, 2)
        s = p.sigmoid()
        xy = (s[..., 0:2] * 2 - 0.5 + grid) * stride
        wh = (s[..., 2:4] * 2) ** 2 * anchor
        conf = s[..., 4:]
        return torch.cat((xy, wh, conf), -1).view(n, -1, self.no)

    def forward(self, x):
        """Decoded boxes of both scales, concatenated: (N, boxes, 5+C)."""
        f1 = self.backbone(x)
        f2 = self.down(f1)
        return torch.cat([self.decode(self.p1(f1), 0, 2.0),
                          self.decode(self.p2(f2), 1, 4.0)], 1)


class BertTiny(nn.Module):
    """A BERT-style encoder: token + learned position + segment embeddings, LayerNorm,
    two nn.TransformerEncoderLayer (batch_first, GELU) with a key padding mask built
    from the attention mask, a pooler (tanh of Linear on the first token)."""

    def __init__(self, vocab=50, d=16, heads=2, layers=2, maxlen=32):
        """Build the encoder."""
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(maxlen, d)
        self.seg = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, heads, 32, dropout=0.0, activation="gelu",
                                           batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pool = nn.Linear(d, d)

    def forward(self, ids, mask):
        """Sequence output and pooled output of token ids `ids` (N, L) int64 with
        attention mask `mask` (N, L) int64 (1 = token, 0 = padding)."""
        n, l = ids.shape
        pos = torch.arange(l, device=ids.device).unsqueeze(0).expand(n, l)
        seg = (pos >= l // 2).long()
        h = self.ln(self.tok(ids) + self.pos(pos) + self.seg(seg))
        h = self.enc(h, src_key_padding_mask=mask == 0)
        return h, torch.tanh(self.pool(h[:, 0]))


class ViTTiny(nn.Module):
    """A ViT-style encoder: patch embedding (Conv2d, stride = patch), class token,
    learned positions, pre-norm blocks with nn.MultiheadAttention and a GELU MLP,
    classification from the class token."""

    def __init__(self, img=16, patch=4, d=16, heads=2, depth=2, ncls=10):
        """Build the encoder."""
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, patch)
        n = (img // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.1)
        self.n1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(depth)])
        self.att = nn.ModuleList([nn.MultiheadAttention(d, heads, batch_first=True)
                                  for _ in range(depth)])
        self.n2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(depth)])
        self.mlp = nn.ModuleList([nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(),
                                                nn.Linear(2 * d, d))
                                  for _ in range(depth)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, ncls)

    def forward(self, x):
        """Logits of images `x` (N, 3, img, img)."""
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for n1, att, n2, mlp in zip(self.n1, self.att, self.n2, self.mlp):
            h = n1(x)
            x = x + att(h, h, h, need_weights=False)[0]
            x = x + mlp(n2(x))
        return self.head(self.norm(x)[:, 0])


class GPTBlockTiny(nn.Module):
    """A GPT-style causal decoder: token embedding, sinusoid-free learned positions
    sliced to the run-time length, hand-written multi-head attention with a triangular
    mask built by torch.triu at run time (masked_fill with -inf), softmax, GELU(tanh)
    MLP, LayerNorm, tied LM head."""

    def __init__(self, vocab=40, d=16, heads=2, maxlen=32):
        """Build the decoder block."""
        super().__init__()
        self.h, self.d = heads, d
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(maxlen, d) * 0.1)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.lnf = nn.LayerNorm(d)

    def forward(self, ids):
        """Next-token logits (N, L, vocab) of token ids (N, L) int64."""
        n, l = ids.shape
        x = self.tok(ids) + self.pos[:l]
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=2)
        hd = self.d // self.h
        q = q.view(n, l, self.h, hd).transpose(1, 2)
        k = k.view(n, l, self.h, hd).transpose(1, 2)
        v = v.view(n, l, self.h, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (hd ** 0.5)
        causal = torch.triu(torch.ones(l, l, dtype=torch.bool), diagonal=1)
        att = att.masked_fill(causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(n, l, self.d)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return self.lnf(x) @ self.tok.weight.t()


class GPTSdpaTiny(nn.Module):
    """A causal attention block using F.scaled_dot_product_attention(is_causal=True)
    and RMS-style normalisation written with pow/mean/rsqrt."""

    def __init__(self, d=16, heads=2):
        """Build the block."""
        super().__init__()
        self.h, self.d = heads, d
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.w = nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x):
        """The block's output for `x` (N, L, d)."""
        n, l, _ = x.shape
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q, k, v = (t.reshape(n, l, self.h, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.o(y.transpose(1, 2).reshape(n, l, self.d))


class LSTMNet(nn.Module):
    """Sequence classifier: nn.LSTM (2 layers, bidirectional, batch_first), Linear
    head on the last time step, plus the final hidden state."""

    def __init__(self, din=6, hid=8, ncls=4):
        """Build the net."""
        super().__init__()
        self.rnn = nn.LSTM(din, hid, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hid, ncls)

    def forward(self, x):
        """Logits (N, ncls) and final hidden state of `x` (N, T, din)."""
        y, (h, c) = self.rnn(x)
        return self.fc(y[:, -1]), h


class GRUNet(nn.Module):
    """Sequence tagger: nn.GRU (2 layers, bidirectional, batch_first), Linear head on
    every step."""

    def __init__(self, din=6, hid=8, ncls=4):
        """Build the net."""
        super().__init__()
        self.rnn = nn.GRU(din, hid, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hid, ncls)

    def forward(self, x):
        """Per-step logits (N, T, ncls) of `x` (N, T, din)."""
        y, _ = self.rnn(x)
        return self.fc(y)


class RNNNet(nn.Module):
    """Elman RNN (tanh, 1 layer, sequence-first layout, explicit initial state) with
    a Linear head."""

    def __init__(self, din=5, hid=8, ncls=3):
        """Build the net."""
        super().__init__()
        self.rnn = nn.RNN(din, hid, num_layers=1)
        self.fc = nn.Linear(hid, ncls)

    def forward(self, x, h0):
        """Per-step logits (T, N, ncls) of `x` (T, N, din) from state `h0`."""
        y, _ = self.rnn(x, h0)
        return self.fc(y)


class LSTMUniNet(nn.Module):
    """Single-layer unidirectional LSTM with a given initial state (h0, c0)."""

    def __init__(self, din=4, hid=6):
        """Build the net."""
        super().__init__()
        self.rnn = nn.LSTM(din, hid, batch_first=True)

    def forward(self, x, h0, c0):
        """Outputs and final states of `x` (N, T, din)."""
        y, (h, c) = self.rnn(x, (h0, c0))
        return y, h, c


class AudioNet(nn.Module):
    """A 1-D conv audio net: Conv1d with padding='same' (odd and even kernels),
    dilation, BatchNorm1d, ReLU, AvgPool1d, MaxPool1d, global mean, Linear."""

    def __init__(self, ncls=5):
        """Build the net."""
        super().__init__()
        self.c1 = nn.Conv1d(1, 8, 9, stride=2, padding=4)
        self.b1 = nn.BatchNorm1d(8)
        self.c2 = nn.Conv1d(8, 8, 5, padding="same", dilation=2)
        self.b2 = nn.BatchNorm1d(8)
        self.c3 = nn.Conv1d(8, 12, 4, padding="same")
        self.b3 = nn.BatchNorm1d(12)
        self.fc = nn.Linear(12, ncls)

    def forward(self, x):
        """Logits of waveforms `x` (N, 1, T)."""
        x = F.relu(self.b1(self.c1(x)))
        x = F.avg_pool1d(F.relu(self.b2(self.c2(x))), 3, 2, 1)
        x = F.max_pool1d(F.relu(self.b3(self.c3(x))), 2)
        x = F.avg_pool1d(x, 3, 2, count_include_pad=False, ceil_mode=True)
        return self.fc(x.mean(-1))


class OpsIndexing(nn.Module):
    """Indexing and selection ops: torch.where, masked_fill, cumsum, topk, argmax,
    gather, index_select, expand, repeat, flip, roll, sort, cummax-free argmin."""

    def __init__(self):
        """No parameters apart from an index buffer."""
        super().__init__()
        self.register_buffer("idx", torch.tensor([3, 0, 2]))

    def forward(self, x):
        """A tuple of results for `x` (N, 6, 5)."""
        w = torch.where(x > 0, x, x * 0.1)
        m = x.masked_fill(x < -0.5, 0.0)
        cs = torch.cumsum(x, dim=1)
        csr = torch.cumsum(x.flip(2), dim=2).flip(2)
        tv, ti = torch.topk(x, 3, dim=-1)
        tsv, tsi = torch.topk(x, 2, dim=1, largest=False)
        am = torch.argmax(x, dim=1)
        amk = torch.argmin(x, dim=-1, keepdim=True)
        g = torch.gather(x, 2, ti)
        sel = torch.index_select(x, 1, self.idx)
        e = x[:, :1, :].expand(-1, 4, -1)
        r = x[:, :2].repeat(1, 2, 3)
        rl = torch.roll(x, shifts=2, dims=2)
        rl2 = torch.roll(x, shifts=(1, -1), dims=(1, 2))
        sv, si = torch.sort(x, dim=-1, descending=True)
        return w, m, cs, csr, tv, ti, tsv, tsi, am, amk, g, sel, e, r, rl, rl2, sv, si


class OpsMath(nn.Module):
    """Math, norm and layout ops: einsum, layer/group/instance norm, F.pad reflect /
    replicate / constant, pixel_shuffle / pixel_unshuffle, clamp, reductions with
    keepdim, logsumexp, norm, var/std, cosine similarity, log_softmax, prod."""

    def __init__(self):
        """Norm layers and an einsum weight."""
        super().__init__()
        self.ln = nn.LayerNorm([4, 4])
        self.gn = nn.GroupNorm(2, 8)
        self.inn = nn.InstanceNorm2d(8, affine=True)
        self.inn_noaff = nn.InstanceNorm2d(8)
        self.w = nn.Parameter(torch.randn(8, 3))

    def forward(self, x):
        """A tuple of results for `x` (N, 8, 4, 4)."""
        ein = torch.einsum("nchw,cd->ndhw", x, self.w)
        ein2 = torch.einsum("nchw,nchw->nc", x, x)
        ln = self.ln(x)
        gn = self.gn(x)
        inn = self.inn(x) + self.inn_noaff(x)
        pr = F.pad(x, (1, 2, 2, 1), mode="reflect")
        pp = F.pad(x, (2, 1, 0, 1), mode="replicate")
        pc = F.pad(x, (1, 1, 1, 1, 0, 1), value=0.5)
        ps = F.pixel_shuffle(x, 2)
        pu = F.pixel_unshuffle(x, 2)
        cl = torch.clamp(x, -0.5, 0.7)
        cmin = torch.clamp(x, min=0.1)
        s = x.sum(dim=(2, 3), keepdim=True)
        mx = x.amax(dim=1, keepdim=True)
        mn, mni = x.min(dim=2)
        mean = x.mean(dim=-1)
        lse = torch.logsumexp(x, dim=1)
        nrm = torch.linalg.vector_norm(x, 2, dim=1, keepdim=True)
        fnorm = F.normalize(x, dim=1)
        var = x.var(dim=1, unbiased=True)
        std = x.std(dim=(2, 3), keepdim=True, unbiased=False)
        cs = F.cosine_similarity(x[:, :4], x[:, 4:], dim=1)
        lsm = F.log_softmax(x, dim=1)
        prod = (x * 0.5 + 1).prod(dim=3)
        return (ein, ein2, ln, gn, inn, pr, pp, pc, ps, pu, cl, cmin, s, mx, mn, mni,
                mean, lse, nrm, fnorm, var, std, cs, lsm, prod)


class OpsActivations(nn.Module):
    """Elementwise activations and functions: LeakyReLU, PReLU, ELU, SELU, CELU,
    Softplus, Softsign, Mish, Tanhshrink, Hardtanh, GELU (erf and tanh), LogSigmoid,
    erf, trig, sign, round, floor, ceil, reciprocal, remainder, fmod, floor_divide,
    hard/soft shrink, ReLU6."""

    def __init__(self):
        """A PReLU with per-channel slopes."""
        super().__init__()
        self.prelu = nn.PReLU(4, 0.2)

    def forward(self, x):
        """A tuple of results for `x` (N, 4, 5)."""
        outs = [F.leaky_relu(x, 0.2), self.prelu(x), F.elu(x, 0.7), F.selu(x),
                F.celu(x, 1.3), F.softplus(x, beta=2.0), F.softsign(x), F.mish(x),
                F.tanhshrink(x), F.hardtanh(x, -0.3, 0.4), F.gelu(x),
                F.gelu(x, approximate="tanh"), F.logsigmoid(x), torch.erf(x),
                torch.sin(x) + torch.cos(x) * torch.atan(x), torch.sign(x),
                torch.round(x * 3), torch.floor(x * 3), torch.ceil(x * 3),
                torch.reciprocal(x.abs() + 1), torch.remainder(x * 5, 1.5),
                torch.fmod(x * 5, 1.5), torch.floor_divide(x * 5, 1.5),
                torch.exp(x).log1p(), torch.sqrt(x.abs()), x.pow(3), F.hardshrink(x, 0.3),
                F.softshrink(x, 0.3), F.relu6(x * 4)]
        return tuple(outs)


class OpsShapes(nn.Module):
    """Shape manipulation: flatten/unflatten, chunk/split, stack, squeeze/unsqueeze,
    transpose, narrow, strided slicing, negative-step-free reversal via flip,
    tril/triu, diagonal-free masks, arange from a shape, one_hot, nonzero-free
    boolean tricks, integer arithmetic on sizes."""

    def forward(self, x, ids):
        """A tuple of results for `x` (N, 6, 8) and int64 `ids` (N, 5)."""
        n = x.shape[0]
        a, b, c = x.chunk(3, dim=1)
        s1, s2 = x.split([2, 6], dim=2)
        st = torch.stack([a, b, c], dim=-1)
        fl = x.flatten(1).unflatten(1, (3, 16))
        t = x.transpose(1, 2)[..., ::2]
        nr = x.narrow(2, 1, 4)
        tr = torch.tril(x, -1) + torch.triu(x, 2)
        ar = torch.arange(x.shape[2], dtype=torch.float32) * x.shape[1]
        oh = F.one_hot(ids, 7).float()
        cnt = (x > 0).sum(dim=-1)
        anyp = (x > 1).any(dim=-1)
        allp = (x > -3).all(dim=1)
        bm = torch.bmm(x, x.transpose(1, 2))
        mm = x.reshape(n, -1) @ x.reshape(n, -1).t()
        ms = x[:, 1:-1, -3:]
        ne = x[:, [0, 2, 5]]
        un = x.unsqueeze(1).squeeze(1)[:, None, :, 0]
        emb = F.embedding(ids, x[0].t())
        return a, s1, s2, st, fl, t, nr, tr, ar + x, oh, cnt, anyp, allp, bm, mm, ms, ne, \
            un, emb


class OpsPoolConv(nn.Module):
    """Conv and pooling variants: dilated/grouped Conv2d, asymmetric stride, padding
    mode 'reflect' and 'circular', AvgPool2d with ceil_mode and count_include_pad
    False, MaxPool2d with dilation, AdaptiveAvgPool2d to (2, 3), AdaptiveMaxPool2d,
    LPPool-free, Conv3d, MaxPool with indices."""

    def __init__(self):
        """The conv layers."""
        super().__init__()
        self.c1 = nn.Conv2d(4, 8, 3, stride=(2, 1), padding=2, dilation=2, groups=2)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1, padding_mode="reflect")
        self.c3 = nn.Conv2d(4, 4, 3, padding=1, padding_mode="circular")
        self.c4 = nn.Conv3d(4, 2, (1, 3, 3), padding=(0, 1, 1))
        self.ct = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, groups=2, dilation=1)

    def forward(self, x):
        """A tuple of results for `x` (N, 4, 9, 9)."""
        a = self.c1(x)
        b = self.c2(x) + self.c3(x)
        c = F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
        d = F.avg_pool2d(x, 2, ceil_mode=True)
        e = F.max_pool2d(x, 3, 2, 1, dilation=2)
        f, fi = F.max_pool2d(x, 2, return_indices=True)
        g = F.adaptive_avg_pool2d(x, (3, 3))
        h = F.adaptive_max_pool2d(x, 1)
        i = self.c4(x.unsqueeze(2)).squeeze(2)
        j = self.ct(x)
        k = F.max_pool2d(x, 3, 2, ceil_mode=True)
        return a, b, c, d, e, f, fi, g, h, i, j, k


class OpsResize(nn.Module):
    """Resize variants: nearest/bilinear/bicubic with sizes and scale factors,
    align_corners True and False, non-integer scales, 1-D linear, nearest-exact,
    recompute_scale_factor (nearest-exact is left out: the TorchScript exporter
    cannot write it)."""

    def forward(self, x):
        """A tuple of results for `x` (N, 3, 5, 7)."""
        return (F.interpolate(x, size=(8, 9), mode="nearest"),
                F.interpolate(x, size=(8, 9), mode="bilinear", align_corners=False),
                F.interpolate(x, size=(8, 9), mode="bilinear", align_corners=True),
                F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=(2, 3), mode="nearest"),
                F.interpolate(x, size=(3, 4), mode="bicubic", align_corners=False),
                F.interpolate(x, size=(10, 6), mode="bicubic", align_corners=True),
                F.interpolate(x, scale_factor=0.6, mode="nearest",
                              recompute_scale_factor=True),
                F.interpolate(x[:, :, 0], size=11, mode="linear", align_corners=False),
                F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=True,
                              recompute_scale_factor=False))


class OpsDtype(nn.Module):
    """Dtype and integer ops users export: casts, integer division/remainder on int64,
    comparisons, bitwise on bool, int32 arithmetic, where on ints, clamp of ints,
    float16 round trip, min/max of two tensors, cumsum of ints."""

    def forward(self, x, k):
        """A tuple of results for float `x` (N, 6) and int64 `k` (N, 6)."""
        ki = k.to(torch.int32)
        return (k // 3, k % 3, torch.div(k, 4, rounding_mode="trunc"),
                torch.div(k - 5, 4, rounding_mode="floor"), (k - 5) % 4,
                (ki * 7 + 1).to(torch.int64), (x > 0) & (k > 2), (x > 0) | ~(k > 2),
                (x > 0) ^ (k > 3), torch.where(k > 2, k, -k), k.clamp(1, 4),
                x.half().float(), torch.maximum(x, x * -1), torch.minimum(x, k.float()),
                k.cumsum(1), x.to(torch.int64), (x * 10).round().int(),
                k.float().mean(1), k.max(dim=1).values, k.sum(), k.argmax(-1))


class TinyTransformerSeq2Seq(nn.Module):
    """nn.Transformer (encoder + decoder, batch_first) with a causal target mask from
    generate_square_subsequent_mask, on embedded token ids."""

    def __init__(self, vocab=30, d=16):
        """Build the model."""
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.tf = nn.Transformer(d, 2, 1, 1, 32, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt):
        """Logits (N, Lt, vocab) of source ids `src` (N, Ls) and target ids `tgt`."""
        l = tgt.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(l)
        return self.out(self.tf(self.emb(src), self.emb(tgt), tgt_mask=mask))


class ShuffleDenseTiny(nn.Module):
    """Patterns onegraph's plan-time fusions match, as real nets write them:
    ShuffleNet's channel shuffle after a depthwise Conv/BN, DenseNet's BN-ReLU-Conv
    with some negative BatchNorm scales and its Conv -> AvgPool transition,
    Inception's AvgPool -> 1x1 Conv projection, SqueezeNet's Concat of Convs ->
    MaxPool, a Conv concatenated with itself, x * sigmoid(x) written out, and a
    Conv followed by a per-channel Mul / Add."""

    def __init__(self):
        """The layers (narrow)."""
        super().__init__()
        self.c0 = nn.Conv2d(3, 8, 3, 1, 1)
        self.dw = nn.Conv2d(8, 8, 3, 1, 1, groups=8, bias=False)
        self.bn_dw = nn.BatchNorm2d(8)
        self.pw = nn.Conv2d(8, 8, 1, groups=2)
        self.bn_d = nn.BatchNorm2d(8)
        self.c_d = nn.Conv2d(8, 8, 1)
        self.c_d3 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn_d3 = nn.BatchNorm2d(8)
        self.trans = nn.Conv2d(16, 8, 1)
        self.proj = nn.Conv2d(8, 6, 1)
        self.sq1 = nn.Conv2d(8, 4, 1)
        self.sq3 = nn.Conv2d(8, 4, 3, padding=1)
        self.scale = nn.Parameter(torch.randn(1, 4, 1, 1))
        self.shift = nn.Parameter(torch.randn(4, 1, 1))

    def forward(self, x):
        """A tuple of intermediate results for `x` (N, 3, 16, 16)."""
        y = self.c0(x)
        s = self.bn_dw(self.dw(y))
        n, c, h, w = s.shape
        s = s.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        s = self.pw(s)
        d = self.c_d(F.relu(self.bn_d(s)))
        d3 = self.c_d3(F.relu(self.bn_d3(s)))
        t = F.avg_pool2d(self.trans(torch.cat([d, d3], 1)), 2)
        p = self.proj(F.avg_pool2d(t, 3, 1, 1, count_include_pad=False))
        p2 = self.proj(F.avg_pool2d(t, 3, 1, 1))
        q = F.max_pool2d(F.relu(torch.cat([self.sq1(t), self.sq3(t)], 1)), 3, 2, 1)
        r = self.sq1(t)
        rr = torch.cat([r, r], 1)
        si = q * torch.sigmoid(q)
        m = self.sq3(t) * self.scale + self.shift
        return p, p2, q, rr, si, m


class NegBNNet(nn.Module):
    """BatchNorm with some negative (and zero) scales between Convs and ReLUs, as
    pruned / trained nets have: Conv-BN-ReLU-Conv and BN-ReLU-Conv 1x1 and 3x3."""

    def __init__(self):
        """The layers; BN scales are set negative for some channels in _build."""
        super().__init__()
        self.c1 = nn.Conv2d(3, 6, 3, padding=1)
        self.b1 = nn.BatchNorm2d(6)
        self.c2 = nn.Conv2d(6, 6, 1)
        self.b2 = nn.BatchNorm2d(6)
        self.c3 = nn.Conv2d(6, 4, 3, padding=1)
        self.b3 = nn.BatchNorm2d(4)

    def forward(self, x):
        """The net's output for `x` (N, 3, H, W)."""
        y = self.c2(F.relu(self.b1(self.c1(x))))
        y = self.c3(F.relu(self.b2(y)))
        return F.relu(self.b3(y)) * 2.0 - 1.0


class GeluVariants(nn.Module):
    """GELU spelled by hand in the forms users write (exact with erf and a rounded
    sqrt(2), 0.5 x (1 + erf(x / 1.41421)), the tanh approximation, x * Phi(x) with
    a different constant that is NOT gelu), and nn.GELU."""

    def forward(self, x):
        """A tuple of GELU-ish results for `x`."""
        a = 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
        b = x * 0.5 * (1.0 + torch.erf(x * 0.7071067811865476))
        c = 0.5 * x * (1.0 + torch.erf(x / 2.0))
        d = 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
        e = x * 0.5 * (1.0 + torch.erf(x / 1.41421))
        f = F.gelu(x)
        g = 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0))) + x  # x read again
        return a, b, c, d, e, f, g


class ScatterGather(nn.Module):
    """Scatter / index ops: scatter, scatter_add, scatter_reduce, index_put with a
    boolean mask and with indices, index_add, masked_select, nonzero,
    boolean indexing, gather with negative dims."""

    def forward(self, x, idx):
        """A tuple of results for `x` (N, 6) float and `idx` (N, 4) int64 in [0, 6)."""
        z = torch.zeros_like(x)
        sc = z.scatter(1, idx, 1.0)
        sa = z.scatter_add(1, idx, torch.ones_like(idx, dtype=x.dtype))
        sr = x.scatter_reduce(1, idx, x[:, :4], reduce="amax", include_self=True)
        sm = x.scatter_reduce(1, idx, x[:, :4], reduce="sum")
        y = x.clone()
        y[x > 0.5] = 0.5
        y2 = x.clone()
        y2[:, 1:3] = -1.0
        y3 = x.clone()
        y3[torch.arange(x.shape[0]), idx[:, 0]] = 9.0
        ia = x.index_add(1, torch.tensor([0, 2]), x[:, :2])
        ms = torch.masked_select(x, x > 0)
        nz = torch.nonzero(x > 0)
        bi = x[x.sum(1) > -100]
        tad = torch.gather(x.flip(1), 1, idx)
        gn = torch.gather(x, -1, idx[:, -2:])
        return sc, sa, sr, sm, y, y2, y3, ia, ms, nz, bi, tad, gn


class Float16Net(nn.Module):
    """A small conv + linear + layernorm + softmax net, exported in float16
    (model.half(), float16 input), as users export for GPU deployment."""

    def __init__(self):
        """The layers."""
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.ln = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        """Class probabilities of `x` (N, 3, H, W) float16."""
        y = F.relu(self.bn(self.c(x)))
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.fc(F.gelu(self.ln(y))), -1), y.sum(-1)


class SpecialOps(nn.Module):
    """Less common ops real models use: grid_sample (bilinear / nearest, zeros /
    border / reflection padding, align_corners), affine_grid, unfold (im2col), fold,
    cdist, tensordot, baddbmm, addmm, trace-like einsum, outer, cross-free
    cumprod-free ops, pad with negative amounts (crop), ConvTranspose1d,
    AdaptiveAvgPool1d, LPPool-free, trilinear upsample, antialias-free."""

    def __init__(self):
        """Small layers."""
        super().__init__()
        self.ct1 = nn.ConvTranspose1d(4, 3, 4, stride=2, padding=1)

    def forward(self, x, g):
        """A tuple of results for `x` (N, 4, 6, 6) and a grid `g` (N, 5, 5, 2)."""
        outs = [F.grid_sample(x, g, mode="bilinear", padding_mode="zeros", align_corners=False),
                F.grid_sample(x, g, mode="bilinear", padding_mode="border", align_corners=True),
                F.grid_sample(x, g, mode="nearest", padding_mode="reflection",
                              align_corners=False),
                F.unfold(x, 3, padding=1, stride=2),
                F.fold(F.unfold(x, 2, stride=2), (6, 6), 2, stride=2),
                (x.flatten(2)[:, :, None] - x.flatten(2)[:, None, :2]).pow(2).sum(-1).sqrt(),
                torch.tensordot(x, x, dims=([2, 3], [2, 3])),
                torch.baddbmm(x[:, 0], x[:, 1], x[:, 2], beta=0.5, alpha=2.0),
                torch.addmm(x[0, 0], x[0, 1], x[0, 2]),
                torch.einsum("ncii->nc", x),
                torch.einsum("nchw,nchw->nhw", x, x),
                torch.einsum("bi,bj->bij", x[:, :, 0, 0], x[:, :, 1, 1]),
                F.pad(x, (-1, -2, 1, -1)),
                self.ct1(x[:, :, 0]),
                F.adaptive_avg_pool1d(x[:, :, 0], 3),
                F.interpolate(x.unsqueeze(2).expand(-1, -1, 2, -1, -1), scale_factor=2,
                              mode="trilinear", align_corners=False),
                torch.var_mean(x, dim=(2, 3))[0],
                torch.atan2(x[:, 0], x[:, 1]),
                torch.nan_to_num(torch.log(x), nan=0.0, neginf=-5.0)]
        return tuple(outs)


class SpatialTransformer(nn.Module):
    """A spatial transformer: affine_grid from a predicted theta, grid_sample, and a
    cumprod (opset 20 for the TorchScript exporter's affine_grid)."""

    def __init__(self):
        """A localisation Linear."""
        super().__init__()
        self.loc = nn.Linear(4 * 6 * 6, 6)

    def forward(self, x):
        """The warped `x` (N, 4, 6, 6) and a cumprod of it."""
        theta = self.loc(x.flatten(1)).view(-1, 2, 3) * 0.1 + torch.tensor(
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        g = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, g, align_corners=False), torch.cumprod(
            x[:, 0] * 0.5 + 1, dim=-1)


class ModernLLM(nn.Module):
    """A Llama-style block: nn.RMSNorm, rotary embeddings written with
    cat/slice/neg, grouped-query attention through F.scaled_dot_product_attention
    (enable_gqa) with a float additive mask, SwiGLU MLP."""

    def __init__(self, d=16, heads=4, kv=2):
        """Build the block."""
        super().__init__()
        self.h, self.kv, self.hd = heads, kv, d // heads
        self.n1 = nn.RMSNorm(d, eps=1e-5)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv * self.hd, bias=False)
        self.v = nn.Linear(d, kv * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.n2 = nn.RMSNorm(d, eps=1e-5)
        self.g = nn.Linear(d, 24, bias=False)
        self.u = nn.Linear(d, 24, bias=False)
        self.dn = nn.Linear(24, d, bias=False)

    def rope(self, t, l):
        """Rotary embedding of `t` (N, H, L, hd)."""
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2, dtype=torch.float32) / self.hd))
        ang = torch.arange(l, dtype=torch.float32)[:, None] * inv[None]
        cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
        t1, t2 = t[..., : self.hd // 2], t[..., self.hd // 2:]
        return t * cos + torch.cat([-t2, t1], -1) * sin

    def forward(self, x):
        """The block output of `x` (N, L, d)."""
        n, l, d = x.shape
        h = self.n1(x)
        q = self.rope(self.q(h).view(n, l, self.h, self.hd).transpose(1, 2), l)
        k = self.rope(self.k(h).view(n, l, self.kv, self.hd).transpose(1, 2), l)
        v = self.v(h).view(n, l, self.kv, self.hd).transpose(1, 2)
        mask = torch.full((l, l), float("-inf")).triu(1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        x = x + self.o(y.transpose(1, 2).reshape(n, l, d))
        h = self.n2(x)
        return x + self.dn(F.silu(self.g(h)) * self.u(h))


class SpectralNet(nn.Module):
    """Audio front end ops: torch.fft.rfft magnitude, a Hann window built at run
    time, framing with unfold, log-mel-like matmul, InstanceNorm1d, GroupNorm on 1-D."""

    def __init__(self):
        """A fixed 'mel' matrix."""
        super().__init__()
        self.register_buffer("mel", torch.rand(9, 6))
        self.inorm = nn.InstanceNorm1d(6, affine=True)
        self.gn = nn.GroupNorm(3, 6)

    def forward(self, x):
        """Features of waveforms `x` (N, T)."""
        frames = x.unfold(1, 16, 8)  # (N, F, 16)
        win = torch.hann_window(16, periodic=True)
        spec = torch.fft.rfft(frames * win, dim=-1).abs()
        mel = torch.log(spec @ self.mel + 1e-6).transpose(1, 2)
        return self.gn(self.inorm(mel)), spec


# ----------------------------------------------------------------------------------
# Catalogue and export
# ----------------------------------------------------------------------------------

def _rand(rng, *shape, scale=1.0):
    """A float32 tensor of seeded normal values."""
    return torch.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))


def _ints(rng, high, *shape, low=0):
    """An int64 tensor of seeded integers in [low, high)."""
    return torch.from_numpy(rng.integers(low, high, shape).astype(np.int64))


def catalogue():
    """The models to export: a list of dicts with name, module factory, inputs (a
    function of (rng, batch, seq) giving a tuple of tensors), input and output names,
    dynamic axes (or None), and the second (batch, seq) used for dynamic models."""

    def bert_inputs(rng, n, l):
        """ids and a padding mask with some trailing padding per row."""
        ids = _ints(rng, 50, n, l)
        mask = torch.ones(n, l, dtype=torch.int64)
        for i in range(n):
            mask[i, l - (i % 3):] = 0
        return ids, mask

    img = {0: "batch"}
    seq = {0: "batch", 1: "seq"}
    cat = [
        dict(name="resnet", make=ResNetTiny, inputs=lambda r, n, l: (_rand(r, n, 3, 32, 32),),
             ins=["x"], outs=["logits"], dyn={"x": img, "logits": img}, alt=(3, None)),
        dict(name="mobilenetv2", make=MobileNetV2Tiny,
             inputs=lambda r, n, l: (_rand(r, n, 3, 32, 32),), ins=["x"], outs=["logits"],
             dyn={"x": img, "logits": img}, alt=(1, None)),
        dict(name="efficientnet", make=EfficientNetTiny,
             inputs=lambda r, n, l: (_rand(r, n, 3, 32, 32),), ins=["x"], outs=["logits"],
             dyn=None),
        dict(name="unet", make=UNetTiny, inputs=lambda r, n, l: (_rand(r, n, 3, 16, 24),),
             ins=["x"], outs=["mask"], dyn=None),
        dict(name="yolo_head", make=YoloHead,
             inputs=lambda r, n, l: (_rand(r, n, 3, 32, 32),), ins=["x"], outs=["boxes"],
             dyn={"x": img, "boxes": img}, alt=(3, None)),
        dict(name="bert", make=BertTiny, inputs=lambda r, n, l: bert_inputs(r, n, l or 10),
             ins=["input_ids", "attention_mask"], outs=["hidden", "pooled"],
             dyn={"input_ids": seq, "attention_mask": seq, "hidden": seq,
                  "pooled": {0: "batch"}}, alt=(3, 7)),
        dict(name="vit", make=ViTTiny, inputs=lambda r, n, l: (_rand(r, n, 3, 16, 16),),
             ins=["pixels"], outs=["logits"], dyn={"pixels": img, "logits": img},
             alt=(1, None)),
        dict(name="gpt", make=GPTBlockTiny, inputs=lambda r, n, l: (_ints(r, 40, n, l or 9),),
             ins=["ids"], outs=["logits"], dyn={"ids": seq, "logits": seq}, alt=(1, 5)),
        dict(name="gpt_sdpa", make=GPTSdpaTiny,
             inputs=lambda r, n, l: (_rand(r, n, l or 7, 16),), ins=["x"], outs=["y"],
             dyn={"x": seq, "y": seq}, alt=(3, 4)),
        dict(name="lstm", make=LSTMNet, inputs=lambda r, n, l: (_rand(r, n, l or 7, 6),),
             ins=["x"], outs=["logits", "h"],
             dyn={"x": seq, "logits": {0: "batch"}, "h": {1: "batch"}}, alt=(3, 4)),
        dict(name="gru", make=GRUNet, inputs=lambda r, n, l: (_rand(r, n, l or 7, 6),),
             ins=["x"], outs=["tags"], dyn={"x": seq, "tags": seq}, alt=(1, 11)),
        dict(name="rnn", make=RNNNet,
             inputs=lambda r, n, l: (_rand(r, l or 6, n, 5), _rand(r, 1, n, 8)),
             ins=["x", "h0"], outs=["y"],
             dyn={"x": {0: "seq", 1: "batch"}, "h0": {1: "batch"},
                  "y": {0: "seq", 1: "batch"}}, alt=(3, 4)),
        dict(name="lstm_uni", make=LSTMUniNet,
             inputs=lambda r, n, l: (_rand(r, n, l or 5, 4), _rand(r, 1, n, 6),
                                     _rand(r, 1, n, 6)),
             ins=["x", "h0", "c0"], outs=["y", "h", "c"], dyn=None),
        dict(name="audio1d", make=AudioNet, inputs=lambda r, n, l: (_rand(r, n, 1, 64),),
             ins=["wave"], outs=["logits"], dyn={"wave": {0: "batch", 2: "time"},
                                                 "logits": img}, alt=(3, None),
             alt_inputs=lambda r: (_rand(r, 3, 1, 50),)),
        dict(name="ops_indexing", make=OpsIndexing,
             inputs=lambda r, n, l: (_rand(r, n, 6, 5),), ins=["x"], outs=None, dyn=None),
        dict(name="ops_math", make=OpsMath, inputs=lambda r, n, l: (_rand(r, n, 8, 4, 4),),
             ins=["x"], outs=None, dyn=None),
        dict(name="ops_act", make=OpsActivations,
             inputs=lambda r, n, l: (_rand(r, n, 4, 5),), ins=["x"], outs=None, dyn=None),
        dict(name="ops_shapes", make=OpsShapes,
             inputs=lambda r, n, l: (_rand(r, n, 6, 8), _ints(r, 7, n, 5)),
             ins=["x", "ids"], outs=None, dyn=None),
        dict(name="ops_poolconv", make=OpsPoolConv,
             inputs=lambda r, n, l: (_rand(r, n, 4, 9, 9),), ins=["x"], outs=None, dyn=None),
        dict(name="ops_resize", make=OpsResize,
             inputs=lambda r, n, l: (_rand(r, n, 3, 5, 7),), ins=["x"], outs=None, dyn=None),
        dict(name="ops_dtype", make=OpsDtype,
             inputs=lambda r, n, l: (_rand(r, n, 6), _ints(r, 10, n, 6)),
             ins=["x", "k"], outs=None, dyn=None),
        dict(name="seq2seq", make=TinyTransformerSeq2Seq,
             inputs=lambda r, n, l: (_ints(r, 30, n, 6), _ints(r, 30, n, l or 5)),
             ins=["src", "tgt"], outs=["logits"],
             dyn={"src": seq, "tgt": {0: "batch", 1: "tlen"}, "logits": {0: "batch",
                                                                          1: "tlen"}},
             alt=(3, 4)),
        dict(name="fusion_patterns", make=ShuffleDenseTiny,
             inputs=lambda r, n, l: (_rand(r, n, 3, 16, 16),), ins=["x"], outs=None,
             dyn={"x": img}, alt=(3, None)),
        dict(name="neg_bn", make=NegBNNet, inputs=lambda r, n, l: (_rand(r, n, 3, 8, 8),),
             ins=["x"], outs=["y"], dyn=None),
        dict(name="gelu_variants", make=GeluVariants,
             inputs=lambda r, n, l: (_rand(r, n, 5, 7, scale=3.0),), ins=["x"], outs=None,
             dyn=None),
        dict(name="scatter_gather", make=ScatterGather,
             inputs=lambda r, n, l: (_rand(r, n, 6), _ints(r, 6, n, 4)), ins=["x", "idx"],
             outs=None, dyn=None),
        dict(name="float16", make=Float16Net, half=True,
             inputs=lambda r, n, l: (_rand(r, n, 3, 8, 8).half(),), ins=["x"],
             outs=["probs", "s"], dyn=None),
        dict(name="special_ops", make=SpecialOps,
             inputs=lambda r, n, l: (_rand(r, n, 4, 6, 6),
                                     torch.from_numpy(r.uniform(-1.2, 1.2, (n, 5, 5, 2))
                                                      .astype(np.float32))),
             ins=["x", "grid"], outs=None, dyn=None),
        dict(name="spatial_transformer", make=SpatialTransformer,
             inputs=lambda r, n, l: (_rand(r, n, 4, 6, 6),), ins=["x"], outs=None,
             dyn=None),
        dict(name="llama_block", make=ModernLLM,
             inputs=lambda r, n, l: (_rand(r, n, l or 6, 16),), ins=["x"], outs=["y"],
             dyn={"x": seq, "y": seq}, alt=(1, 9)),
        dict(name="spectral", make=SpectralNet, inputs=lambda r, n, l: (_rand(r, n, 80),),
             ins=["wave"], outs=["feat", "spec"], dyn=None),
    ]
    return cat


def _build(entry):
    """Instantiate `entry`'s model with seeded weights and randomised BatchNorm
    statistics (so BN folding is exercised), in eval mode."""
    torch.manual_seed(0)
    model = entry["make"]()
    g = torch.Generator().manual_seed(1)
    for mod in model.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.weight.data.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.bias.data.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            if entry["name"] == "neg_bn":  # trained/pruned nets: negative and zero scales
                mod.weight.data[::2] *= -1
                mod.weight.data[1] = 0.0
                mod.bias.data.copy_(torch.randn(mod.num_features, generator=g))
    if entry.get("half"):
        model = model.half()
    return model.eval()


def _out_names(entry, model, args):
    """The output names: the entry's, or out0..outK for models returning tuples."""
    if entry["outs"]:
        return entry["outs"]
    with torch.no_grad():
        res = model(*args)
    return [f"out{i}" for i in range(len(res) if isinstance(res, tuple) else 1)]


def export_entry(entry, out_dir, exporter, opset, dynamic):
    """Export one model with `exporter` ('ts' or 'dynamo') at `opset`, with dynamic
    axes when `dynamic`; save its inputs; return its manifest record."""
    stem = f"{entry['name']}__{exporter}_op{opset}{'_dyn' if dynamic else ''}"
    path = os.path.join(out_dir, stem + ".onnx")
    model = _build(entry)
    rng = np.random.default_rng(123)
    args = entry["inputs"](rng, 2, None)
    try:
        outs = _out_names(entry, model, args)
    except Exception as e:  # the model itself fails: report, go on
        return dict(name=entry["name"], file=stem + ".onnx", exporter=exporter,
                    opset=opset, dynamic=dynamic, error=f"{type(e).__name__}: {e}")
    rec = dict(name=entry["name"], file=stem + ".onnx", exporter=exporter, opset=opset,
               dynamic=dynamic, inputs=entry["ins"], outputs=outs)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            kw = dict(input_names=entry["ins"], output_names=outs, opset_version=opset)
            if dynamic:
                kw["dynamic_axes"] = entry["dyn"]
            if exporter == "ts":
                torch.onnx.export(model, args, path, dynamo=False, do_constant_folding=True,
                                  **kw)
            else:
                torch.onnx.export(model, args, path, dynamo=True, external_data=False,
                                  verbose=False, **kw)
    except Exception as e:  # recorded, not fatal: a failed export is data too
        rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
        if os.path.exists(path):
            os.remove(path)
        return rec
    rec["size"] = os.path.getsize(path)
    files = []
    for k, a in enumerate(args):
        f = f"{stem}.in{k}.npy"
        np.save(os.path.join(out_dir, f), a.numpy(), allow_pickle=False)
        files.append(f)
    rec["input_files"] = files
    if dynamic:
        b, l = entry["alt"]
        alt = entry["alt_inputs"](np.random.default_rng(7)) if "alt_inputs" in entry \
            else entry["inputs"](np.random.default_rng(7), b, l)
        alt_files = []
        for k, a in enumerate(alt):
            f = f"{stem}.in{k}.alt.npy"
            np.save(os.path.join(out_dir, f), a.numpy(), allow_pickle=False)
            alt_files.append(f)
        rec["alt_input_files"] = alt_files
    return rec


def main(argv=None):
    """Export the catalogue (or `--only` names) into the output folder and write
    manifest.json there."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--no-dynamo", action="store_true")
    a = ap.parse_args(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    manifest = os.path.join(a.out_dir, "manifest.json")
    records = []
    if a.only and os.path.exists(manifest):  # keep the other models' records
        with open(manifest) as f:
            records = [r for r in json.load(f) if r["name"] not in a.only]
    for entry in catalogue():
        if a.only and entry["name"] not in a.only:
            continue
        jobs = [("ts", op, False) for op in TS_OPSETS]
        if entry["dyn"]:
            jobs += [("ts", 17, True)]
        if not a.no_dynamo:
            jobs += [("dynamo", op, False) for op in DYNAMO_OPSETS]
            if entry["dyn"]:
                jobs += [("dynamo", DYNAMO_OPSETS[-1], True)]
        for exporter, opset, dyn in jobs:
            rec = export_entry(entry, a.out_dir, exporter, opset, dyn)
            status = rec.get("error") or f"{rec['size']:,} bytes"
            print(f"{rec['file']:<45} {status}", flush=True)
            records.append(rec)
    with open(manifest, "w") as f:
        json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
