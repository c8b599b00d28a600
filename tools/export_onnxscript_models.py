"""ONNX models as onnxscript writes and rewrites them: authored with @script, and corpus
models after onnxscript's optimizer, its default rewrite rules and its onnxruntime fusions.

A test-corpus generator for onegraph's ONNX importer. onnxscript (with onnx-ir) is what
PyTorch's dynamo exporter is built on, and users run its optimizer and rewriter over
exported files before deploying them. Two families:

* authored: models written with the @script decorator, whose graphs call model-local
  functions (FunctionProto): attribute parameters referenced in the body
  (ref_attr_name) on ops' attributes, in Constant(value_float / value_ints = @attr)
  and inside If / Loop / Scan bodies; attribute defaults (FunctionProto.attribute_proto)
  taken by calls that leave them out; functions calling functions in other custom
  domains (domain versions 1 and 2), one function name in two domains, functions with
  If / Loop / Scan in their bodies and a function called inside a Loop body; sequence
  ops; Optional ops; optional inputs left out (""); torchlib-style references (Cast to=,
  Constant value_floats / value_int, CumSum, Trilu, ArgMax, Split); a reference the
  call leaves absent passed on to a function with a default of its own (hand-edited
  call: onnxscript insists on the attribute); opset 18 and 23 models (RMSNormalization,
  RotaryEmbedding, Attention in functions), and an opset 23 model whose function is
  written at opset 18. Expected outputs are the plain-numpy meaning of each model
  (onnxruntime must agree within ORT_AGREES);
* rewritten: models of tests/convert/data/{hf_exported, pytorch_exported, timm_exported,
  torchvision_exported} after (i) onnxscript.optimizer.optimize (constant folding,
  function inlining, dead code), (ii) onnxscript.rewriter.rewrite with its default
  rules (no-op removal, Conv+BatchNormalization, Pad into Conv, Min/Max to Clip, Reshape
  shapes materialized, slices collapsed, ...), (iii) onnxscript.rewriter.ort_fusions
  .optimize_for_ort, which writes com.microsoft contrib ops (SkipLayerNormalization,
  SkipSimplifiedLayerNormalization, MultiHeadAttention, Attention, BiasGelu, FastGelu,
  FusedMatMul, Gelu, GroupNorm) and SimplifiedLayerNormalization in ONNX's domain,
  (iv) onnxscript.rewriter.onnx_fusions after optimize and onnxscript's version
  converter to opset 23 (whose RMSNormalization / RotaryEmbedding fusions need it),
  (v) a pipeline of onnx-ir's own passes (every Constant, in subgraphs too, lifted to an
  initializer, subgraph initializers moved to the main graph and read from outer scope,
  equal initializers shared, common subexpressions and Identity removed, every attribute
  default written out, initializers listed as graph inputs), and, in the sweep only
  (--rewrites to_opset23), (vi) optimize and the conversion to opset 23 alone. The
  oracle is onnxruntime on the ORIGINAL model with the source corpus's stored inputs
  (every input size it has); a rewrite is a candidate if onnxruntime runs it to
  the original's outputs within ORT_AGREES (relative to the value's size; HALF_AGREES
  for float16) and exactly on integers, or if it is valid ONNX (full check) that
  onnxruntime cannot run (ort_refuses: no kernel, or a RotaryEmbedding cache of batch 1),
  which only a PREFERRED entry keeps. Rewrites that crash or hang onnxscript, rename
  outputs, or that onnxruntime refuses (when invalid) or runs to other outputs are
  failure records; rewrites that leave the op mix and node count as they were are only
  counted. Each rewrite keeps its PREFERRED source models (RNN, attention, layer norms,
  GELU, rotary, convolution nets, detection post-processing) and then the most changed
  others (contrib ops added first, one per model family) within a small byte budget.

Files:

    OUT/<name>__onnxscript_op<opset>.onnx        an authored model
    OUT/<rewrite>__<hf|pt|timm|tv>__<source stem>.onnx   a rewritten corpus model
    OUT/<stem>.in<k>.npy [.alt.npy]   seeded inputs (authored) or the source corpus's
    OUT/<stem>.out<k>.npy [.alt.npy]  numpy's outputs (authored) or onnxruntime's on the
                                      original model (rewritten)
    OUT/index.json  {"generator": versions, "models": {file: entry}, "failures": [...],
                     "sweep": {rewrite: counts per source corpus}}

With --sweep-dir DIR every changed rewrite (not only the kept ones) is written to DIR in
the same layout, so onegraph can be run over all of them.

Run it (not by onegraph's tests) in its own venv, from the repository root:

    python3 -m venv /tmp/osx/venv
    /tmp/osx/venv/bin/pip install onnxscript==0.7.2 onnx-ir==1.1.0 onnx==1.23.2 \\
        onnxruntime==1.32.0 numpy==2.4.6
    /tmp/osx/venv/bin/python tools/export_onnxscript_models.py OUT_DIR [--only NAME ...]

The corpus in tests/convert/data/onnxscript_exported/ was written this way; inputs are
seeded and onnxscript is deterministic, so a rerun writes the same files.
"""
# no `from __future__ import annotations`: onnxscript evaluates the @script functions'
# annotations (FLOAT[N, 4], tuples of them)

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import warnings
from typing import Sequence

import numpy as np
import onnx
from onnxscript import BOOL, FLOAT, INT64, graph, script
from onnxscript import opset18 as op
from onnxscript import opset23 as op23
from onnxscript.values import Opset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_tool import (compare_outputs, first_line, kept_records,  # noqa: E402
                         save_arrays, write_index)  # (tools/, this folder)

warnings.filterwarnings("ignore")

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests",
                    "convert", "data")
CORPORA = ("hf_exported", "pytorch_exported", "timm_exported", "torchvision_exported")
TAGS = {"hf_exported": "hf", "pytorch_exported": "pt", "timm_exported": "timm",
        "torchvision_exported": "tv",
        # other corpora, for sweeps (--corpora)
        "tf2onnx_exported": "tf", "paddle_exported": "paddle", "jax_exported": "jax",
        "sklearn_exported": "skl", "gbdt_exported": "gbdt", "rewritten": "rw",
        "ort_processed": "ortp", "tflite_converted": "tflite"}
REWRITES = ("optimize", "rewrite", "ort_fusions", "onnx_fusions", "ir_passes")
SWEEP_ONLY = ("to_opset23",)
ORT_AGREES = 1e-4      # |rewritten - original| <= ORT_AGREES * (1 + |original|)
HALF_AGREES = 5e-3     # the same where a feed or the output is float16
# bytes per rewrite (models, inputs and outputs) that models beyond PREFERRED may fill
BUDGET = {"optimize": 60_000, "rewrite": 60_000, "ort_fusions": 150_000,
          "onnx_fusions": 40_000, "ir_passes": 0}
MAX_MODEL = 160_000    # larger rewritten models are swept, never kept
# kept first where their rewrite changed them (corpus/tag, source stem): RNN, attention,
# layer norms, GELU, rotary, convolution nets and detection post-processing
PREFERRED = {
    "optimize": ["pt/lstm__ts_op17_dyn", "pt/gpt_sdpa__ts_op17_dyn",
                 "hf/gpt_neox__ts_op17_dyn", "pt/ops_act__ts_op17", "hf/vit_fp16__ts_op17",
                 "tv/googlenet__ts_op11", "tv/ops_batched_nms__ts_op16"],
    "rewrite": ["timm/mobileone__ts_op20", "timm/repvgg__ts_op17",
                "hf/resnet_no_folding__ts_op20_dyn", "hf/phi__ts_op17_dyn", "pt/bert__ts_op17",
                "tv/ops_boxes__ts_op11"],
    "ort_fusions": ["hf/llama__dynamo_op18_dyn", "hf/gemma2__dynamo_op18_dyn",
                    "hf/phi__dynamo_op18_dyn", "hf/opt__dynamo_op18", "hf/vit__dynamo_op18_dyn",
                    "pt/bert__ts_op17", "timm/convmixer__dynamo_op18", "timm/mixer__ts_op20",
                    "timm/swin__dynamo_op23_fp16", "hf/wav2vec2__dynamo_op18_dyn",
                    "pt/ops_act__ts_op17", "timm/tnt__dynamo_op23", "pt/ops_math__ts_op20"],
    "onnx_fusions": ["hf/llama__dynamo_op18_dyn", "hf/phi__dynamo_op18_dyn",
                     "tv/ops_roi_align__ts_op17_dyn"],
    "ir_passes": ["pt/ops_resize__ts_op20", "pt/lstm__ts_op17_dyn",
                  "tv/ops_batched_nms__ts_op16", "tv/ssdlite__ts_op17"],
}

# ---------------------------------------------------------------------------------------
# authored models

NN = Opset("custom.nn", 1)
MATH = Opset("custom.math", 1)
BLOCKS = Opset("custom.blocks", 2)
DOM_A = Opset("custom.a", 1)
DOM_B = Opset("custom.b", 1)
N = "N"  # the dynamic batch dimension of the authored models
M = "M"  # a dynamic dimension that is not the batch


@script(MATH, default_opset=op)
def scale_shift(x, scale: float, shift: float = 0.5):
    """x * scale + shift: a required and a defaulted float attribute, each read through
    Constant(value_float=@attr)."""
    return x * scale + shift


@script(NN, default_opset=op)
def leaky_affine(x, alpha: float = 0.1, scale: float = 2.0):
    """LeakyRelu(alpha=@alpha) then scale_shift(scale=@scale) of another domain: an
    attribute reference passed on to a nested function call."""
    return scale_shift(op.LeakyRelu(x, alpha=alpha), scale=scale)


@script(default_opset=op)
def attr_refs_nested(x: FLOAT[N, 6]) -> FLOAT[N, 6]:
    """Three calls of one function with none, one and both of its defaulted attributes."""
    a = leaky_affine(x)
    b = leaky_affine(x, alpha=0.3)
    c = leaky_affine(x, alpha=0.05, scale=-1.5)
    return a + b * c


def _leaky_affine(x, alpha=0.1, scale=2.0):
    return np.where(x > 0, x, alpha * x) * scale + 0.5


@script(NN, default_opset=op)
def permute_softmax(x, perm: Sequence[int], axis: int = -1):
    """Transpose(perm=@perm) and Softmax(axis=@axis): ints and int attribute references."""
    return op.Softmax(op.Transpose(x, perm=perm), axis=axis)


@script(NN, default_opset=op)
def pad_with(x, pads, mode: str = "constant"):
    """Pad(mode=@mode): a string attribute reference, the constant_value input left out."""
    return op.Pad(x, pads, mode=mode)


@script(NN, default_opset=op)
def sum_over(x, axes: Sequence[int], keepdims: int = 0):
    """ReduceSum over Constant(value_ints=@axes), keepdims=@keepdims (as torchlib writes
    reductions)."""
    return op.ReduceSum(x, op.Constant(value_ints=axes), keepdims=keepdims)


@script(default_opset=op)
def attr_kinds(x: FLOAT[N, 3, 4]) -> (FLOAT[N, 4, 3], FLOAT[4, N, 3],
                                         FLOAT[N, 5, 8], FLOAT[N, 5, 8], FLOAT[N],
                                         FLOAT[N, 1, 4]):
    """int, ints and string attributes, given and defaulted, referenced in function
    bodies."""
    pads = op.Constant(value_ints=[0, 1, 2, 0, 1, 2])
    s1 = permute_softmax(x, perm=[0, 2, 1])
    s2 = permute_softmax(x, perm=[2, 0, 1], axis=0)
    p1 = pad_with(x, pads, mode="reflect")
    p2 = pad_with(x, pads)
    r1 = sum_over(x, axes=[1, 2])
    r2 = sum_over(x, axes=[1], keepdims=1)
    return s1, s2, p1, p2, r1, r2


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _attr_kinds(x):
    pads = ((0, 0), (1, 1), (2, 2))
    return [_softmax(x.transpose(0, 2, 1), -1), _softmax(x.transpose(2, 0, 1), 0),
            np.pad(x, pads, mode="reflect"), np.pad(x, pads), x.sum(axis=(1, 2)),
            x.sum(axis=1, keepdims=True)]


@script(NN, default_opset=op)
def gated(x, thr: float = 0.0, gain: float = 3.0):
    """If on a run-time condition against @thr, each branch reading @gain: attribute
    references inside a function's subgraphs."""
    if op.ReduceSum(x, keepdims=0) > thr:
        y = x * gain
    else:
        y = op.Neg(x) - gain
    return y


@script(default_opset=op)
def if_in_function(x: FLOAT[N, 5]) -> (FLOAT[N, 5], FLOAT[N, 5]):
    """The same function with its defaults and with its threshold moved: the two input
    sets take different branches."""
    return gated(x), gated(x, thr=-1000.0, gain=0.25)


def _gated(x, thr=0.0, gain=3.0):
    return x * gain if x.sum() > thr else -x - gain


@script(NN, default_opset=op)
def repeat_decay(x, n, decay: float = 0.5):
    """A Loop of run-time count n carrying x * @decay + i."""
    y = x
    for i in range(n):
        y = y * decay + op.CastLike(i, y)
    return y


@script(NN, default_opset=op)
def running_sum_max(x):
    """Scan over the rows of x: the running sum and the running maximum."""
    @graph()
    def body(acc, top, row):
        acc_out = acc + row
        top_out = op.Max(top, row)
        s = op.Identity(acc_out)
        m = op.Identity(top_out)
        return acc_out, top_out, s, m
    first = op.Gather(x, op.Constant(value_int=0), axis=0)
    zero = first * 0.0
    start = zero - 1000.0
    _, _, sums, maxes = op.Scan(zero, start, x, body=body, num_scan_inputs=1)
    return sums, maxes


@script(default_opset=op)
def loop_scan_in_function(x: FLOAT[N, 4], n: INT64) -> (FLOAT[N, 4], FLOAT[N, 4],
                                                            FLOAT[N, 4]):
    """A Loop (run-time count, 0 in the second input set) and a Scan, each in a
    function body."""
    sums, maxes = running_sum_max(x)
    return repeat_decay(x, n, decay=0.75), sums, maxes


def _repeat_decay(x, n, decay=0.5):
    y = x
    for i in range(int(n)):
        y = y * np.float32(decay) + np.float32(i)
    return y


def _loop_scan(x, n):
    return [_repeat_decay(x, n, 0.75), np.cumsum(x, axis=0),
            np.maximum.accumulate(np.maximum(x, -1000.0), axis=0)]


@script(NN, default_opset=op)
def split_rejoin(x, chunk: int = 2):
    """SplitToSequence into chunks of @chunk columns, the first chunk appended again,
    the second erased, rejoined by ConcatFromSequence; and the sequence's length."""
    seq = op.SplitToSequence(x, op.Constant(value_int=chunk), axis=1)
    seq = op.SequenceInsert(seq, op.SequenceAt(seq, op.Constant(value_int=0)))
    seq = op.SequenceErase(seq, op.Constant(value_int=1))
    return op.ConcatFromSequence(seq, axis=1), op.SequenceLength(seq)


@script(NN, default_opset=op)
def stack_steps(x, n):
    """A Loop that builds a sequence (one scaled copy of x per step), then stacked by
    ConcatFromSequence(new_axis=1)."""
    seq = op.SequenceEmpty(dtype=1)
    for i in range(n):
        seq = op.SequenceInsert(seq, x * op.CastLike(i + 1, x))
    return op.ConcatFromSequence(seq, axis=1, new_axis=1)


@script(default_opset=op)
def sequences(x: FLOAT[N, 7], n: INT64) -> (FLOAT[N, 7], INT64, FLOAT[N, 3, 7],
                                               FLOAT[N, 7]):
    """Sequence ops in functions, and SequenceConstruct / SequenceAt(-1) in the graph."""
    joined, length = split_rejoin(x)
    steps = stack_steps(x, n)
    last = op.SequenceAt(op.SequenceConstruct(x, joined, x * 2.0), op.Constant(value_int=-1))
    return joined, length, steps, last


def _sequences(x, n):
    parts = [x[:, k:k + 2] for k in range(0, 7, 2)]
    parts.append(parts[0])
    del parts[1]
    joined = np.concatenate(parts, axis=1)
    steps = np.stack([x * np.float32(i + 1) for i in range(int(n))], axis=1)
    return [joined, np.array(len(parts), np.int64), steps, x * 2.0]


@script(NN, default_opset=op)
def clip_and_crop(x, lo, hi):
    """Clip with its min left out, then with its max left out, then Slice without axes
    and steps: empty input names in a function body."""
    a = op.Clip(x, None, hi)
    b = op.Clip(a, lo)
    return op.Slice(b, op.Constant(value_ints=[0, 0, 1, 0]),
                    op.Constant(value_ints=[1000, 1000, 1000, -1]))


@script(default_opset=op)
def optional_omitted(x: FLOAT[N, 2, 4, 6], w: FLOAT[6, 3]) -> (
        FLOAT[N, 2, 3, 5], FLOAT[N, 2, 8, 12], FLOAT[N, 2, 5, 7], FLOAT[4, 3],
        FLOAT[N, 2, 4, 6]):
    """Omitted optional inputs: Clip min / max, Slice axes / steps, Resize roi and
    scales (sizes given), Pad constant_value and axes, Gemm C, Dropout ratio."""
    lo = op.Constant(value_float=-0.5)
    hi = op.Constant(value_float=0.75)
    c = clip_and_crop(x, lo, hi)
    shape = op.Shape(x, end=2)
    sizes = op.Concat(shape, op.Constant(value_ints=[8, 12]), axis=0)
    r = op.Resize(x, None, None, sizes, mode="nearest")
    p = op.Pad(x, op.Constant(value_ints=[0, 0, 0, 0, 0, 0, 1, 1]))
    g = op.Gemm(op.Reshape(op.Slice(x, op.Constant(value_ints=[0]),
                                    op.Constant(value_ints=[1])),
                           op.Constant(value_ints=[-1, 6])), w, None, transB=0)
    d = op.Dropout(x)
    return c, r, p, g[0:4, :], d


def _optional_omitted(x, w):
    c = np.clip(np.minimum(x, 0.75), -0.5, None)[:, :, 1:, :-1]
    rows = (np.arange(8) * 4 / 8).astype(int)
    cols = (np.arange(12) * 6 / 12).astype(int)
    r = x[:, :, rows][:, :, :, cols]
    p = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1)))
    g = (x[:1].reshape(-1, 6) @ w)[0:4]
    return [c, r, p, g, x]


@script(NN, default_opset=op23)
def rms_rotary(x, scale, cos, sin, eps: float = 1e-5, interleaved: int = 0):
    """Opset 23's RMSNormalization(epsilon=@eps) and RotaryEmbedding(interleaved=
    @interleaved) in a function."""
    normed = op23.RMSNormalization(x, scale, epsilon=eps, axis=-1)
    return op23.RotaryEmbedding(normed, cos, sin, interleaved=interleaved, num_heads=2)


@script(default_opset=op23)
def opset23_functions(x: FLOAT[N, 5, 8], scale: FLOAT[8], cos: FLOAT[N, 5, 2],
                      sin: FLOAT[N, 5, 2]) -> (FLOAT[N, 5, 8], FLOAT[N, 5, 8]):
    """An opset 23 model: RMSNormalization + RotaryEmbedding (2 heads of 4, rotary on
    all of each head) in a function, called with the default and with interleaving and
    another epsilon."""
    return rms_rotary(x, scale, cos, sin), rms_rotary(x, scale, cos, sin, eps=0.5,
                                                      interleaved=1)


def _rms_rotary(x, scale, cos, sin, eps=1e-5, interleaved=0):
    normed = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + eps) * scale
    n, s, _ = x.shape
    h = normed.reshape(n, s, 2, 4)
    c, si = cos[:, :, None, :], sin[:, :, None, :]
    if interleaved:
        x1, x2 = h[..., 0::2], h[..., 1::2]
        out = np.empty_like(h)
        out[..., 0::2] = x1 * c - x2 * si
        out[..., 1::2] = x2 * c + x1 * si
    else:
        x1, x2 = h[..., :2], h[..., 2:]
        out = np.concatenate([x1 * c - x2 * si, x2 * c + x1 * si], axis=-1)
    return out.reshape(n, s, 8).astype(np.float32)


@script(BLOCKS, default_opset=op)
def flatten_cast(x, to_shape: Sequence[int]):
    """Opset 18 Reshape / Squeeze / Cast / ReduceMean: ops that changed up to opset 23, in
    a function written at opset 18 (inlined into an opset 23 model)."""
    r = op.Reshape(x, op.Constant(value_ints=to_shape))
    m = op.ReduceMean(r, op.Constant(value_ints=[-1]), keepdims=1)
    q = op.Squeeze(m, op.Constant(value_ints=[-1]))
    return op.Cast(op.Cast(q * 10.0, to=7), to=1)


@script(default_opset=op23)
def function_older_opset(x: FLOAT[N, 3, 4]) -> FLOAT[N, 6]:
    """An opset 23 model calling a function of domain version 2 written at opset 18
    (ONNX's checker calls such a function incompatible with the model's opset where the
    function's ops changed since; onnxruntime runs it)."""
    return op23.Identity(flatten_cast(x, to_shape=[0, 6, 2]))


def _function_older_opset(x):
    return np.trunc(x.reshape(x.shape[0], 6, 2).mean(-1) * 10.0).astype(np.float32)


@script(DOM_A, default_opset=op)
def block(x, k: float = 2.0):
    """custom.a::block: x * @k."""
    return x * k


@script(DOM_B, default_opset=op)
def block_b(x, k: float = 3.0):
    """custom.b::block once renamed (onnxscript names a function after its Python name):
    x + @k."""
    return x + k


@script(NN, default_opset=op)
def stats(x):
    """Three outputs (mean, centered, the input passed through); callers use some."""
    mean = op.ReduceMean(x, op.Constant(value_ints=[-1]), keepdims=1)
    return mean, x - mean, op.Identity(x)


@script(NN, default_opset=op)
def step(x, i, gain: float = 0.5):
    """One loop step: gated(x) with gain=@gain (a nested call inside the caller's Loop
    body) plus the step number."""
    return gated(x, gain=gain) + op.CastLike(i, x)


@script(default_opset=op)
def call_sites(x: FLOAT[N, 4], n: INT64) -> (FLOAT[N, 4], FLOAT[N, 4],
                                                FLOAT[N, 4], FLOAT[N, 4]):
    """One function name in two domains, a multi-output function with unused outputs,
    and a function called from the graph's own Loop body."""
    a = block(x)
    b = block_b(x, k=-1.0)
    _, centered, _ = stats(x)
    y = x
    for i in range(n):
        y = step(y, i, gain=0.5)
    return a, b, centered, y


def _call_sites(x, n):
    y = x
    for i in range(int(n)):
        y = _gated(y, 0.0, 0.5) + np.float32(i)
    return [x * 2.0, x - 1.0, x - x.mean(-1, keepdims=True), y]


@script(NN, default_opset=op)
def scanned(x, k: float = 2.0):
    """Scan whose body reads the function's attribute @k: acc * k + row."""
    @graph()
    def body(acc, row):
        nxt = acc * k + row
        out = op.Identity(nxt)
        return nxt, out
    z = op.Gather(x, op.Constant(value_int=0), axis=0) * 0.0
    _, outs = op.Scan(z, x, body=body, num_scan_inputs=1)
    return outs


@script(NN, default_opset=op)
def deep(x, n, gain: float = 1.5, axes: Sequence[int] = (1,), how: str = "reflect"):
    """@gain read in an If inside a Loop; ints and string attributes with defaults."""
    y = x
    for i in range(n):
        if op.ReduceSum(y, keepdims=0) > 0.0:
            y = y - gain
        else:
            y = y + gain * 2.0
    s = op.ReduceMax(y, op.Constant(value_ints=axes), keepdims=1)
    p = op.Pad(y, op.Constant(value_ints=[0, 1, 0, 1]), mode=how)
    return y, s, p


@script(NN, default_opset=op)
def optional_pass(x):
    """Optional / OptionalHasElement / OptionalGetElement."""
    o = op.Optional(x)
    return op.OptionalGetElement(o), op.OptionalHasElement(o)


@script(default_opset=op)
def subgraph_attrs(x: FLOAT[N, 4], n: INT64) -> (FLOAT[N, 4], FLOAT[N, 4],
                                                     FLOAT[N, 1], FLOAT[N, 6],
                                                     FLOAT[N, 4], BOOL):
    """Attribute references in a Scan body and in an If inside a Loop; ints / string
    defaults; optional values."""
    a = scanned(x, k=0.5)
    y, s, p = deep(x, n)
    g, h = optional_pass(x)
    return a, y, s, p, g, h


def _subgraph_attrs(x, n):
    acc, rows = np.zeros_like(x[0]), []
    for row in x:
        acc = acc * np.float32(0.5) + row
        rows.append(acc)
    y = x
    for _ in range(int(n)):
        y = y - np.float32(1.5) if y.sum() > 0 else y + np.float32(3.0)
    return [np.stack(rows), y, y.max(axis=1, keepdims=True),
            np.pad(y, ((0, 0), (1, 1)), mode="reflect"), x, np.array(True)]


@script(NN, default_opset=op23)
def sdpa(q, k, v, causal: int = 0, scale: float = 0.5):
    """Opset 23 Attention(is_causal=@causal, scale=@scale) in a function."""
    return op23.Attention(q, k, v, is_causal=causal, scale=scale)


@script(default_opset=op23)
def attention23(q: FLOAT[N, 2, 3, 4], k: FLOAT[N, 2, 5, 4],
                v: FLOAT[N, 2, 5, 4]) -> (FLOAT[N, 2, 3, 4], FLOAT[N, 2, 3, 4]):
    """Attention with its defaults and causal with another scale."""
    return sdpa(q, k, v), sdpa(q, k, v, causal=1, scale=0.25)


def _attention(q, k, v, causal=0, scale=0.5):
    s = (q.astype(np.float64) @ k.swapaxes(-1, -2)) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    return (_softmax(s, -1) @ v).astype(np.float32)


@script(MATH, default_opset=op)
def leaky_default(x, beta: float = 0.3):
    """LeakyRelu(alpha=@beta) with a default of its own."""
    return op.LeakyRelu(x, alpha=beta)


@script(NN, default_opset=op)
def leaky_passing(x, alpha: float):
    """leaky_default(beta=@alpha): a call whose attribute is a reference to an attribute
    of its own caller that has no default."""
    return leaky_default(x, beta=alpha) * 2.0


@script(default_opset=op)
def inherited_default(x: FLOAT[N, 4]) -> (FLOAT[N, 4], FLOAT[N, 4], FLOAT[N, 4]):
    """leaky_passing called without its alpha (the call's attribute removed after
    onnxscript wrote it: onnxscript requires it): the reference is then absent in the
    inner call, whose own default beta = 0.3 applies; and the inner function called
    with and without beta."""
    return leaky_passing(x, alpha=0.2), leaky_default(x), leaky_default(x, beta=0.05)


def _inherited_default(x):
    return [np.where(x > 0, x, np.float32(0.3) * x) * 2.0,
            np.where(x > 0, x, np.float32(0.3) * x), np.where(x > 0, x, np.float32(0.05) * x)]


def _drop_alpha(proto: onnx.ModelProto) -> onnx.ModelProto:
    """Remove the graph's call of leaky_passing's alpha attribute."""
    for node in proto.graph.node:
        if node.op_type == "leaky_passing":
            del node.attribute[:]
    return proto


@script(NN, default_opset=op)
def typed_ops(x, dtype: int = 7, upper: int = 0, ex: int = 1, rev: int = 0, last: int = 1,
              fs: Sequence[float] = (0.5, -1.0, 2.0, 0.0), steps: int = 2, parts: int = 2):
    """Attribute references as torchlib writes them: Cast(to=@dtype), Trilu(upper=),
    CumSum(exclusive=, reverse=), ArgMax(select_last_index=), Constant(value_floats=
    @fs), a Loop count from Constant(value_int=@steps), Split(num_outputs=@parts)."""
    c = op.Cast(op.Mul(x, 2.5), to=dtype)
    t = op.Trilu(x, upper=upper)
    cs = op.CumSum(x, op.Constant(value_int=1), exclusive=ex, reverse=rev)
    am = op.ArgMax(op.Round(x), axis=1, keepdims=0, select_last_index=last)
    w = op.Constant(value_floats=fs)
    y = x
    for i in range(op.Constant(value_int=steps)):
        y = y * w
    a, b = op.Split(x, axis=1, num_outputs=parts)
    return c, t, cs, am, y, a - b


@script(default_opset=op)
def typed_attr_refs(x: FLOAT[N, 4]) -> (INT64[N, 4], FLOAT[N, 4], FLOAT[N, 4], INT64[N],
                                         FLOAT[N, 4], FLOAT[N, 2], FLOAT[N, 4], FLOAT[N, 4],
                                         FLOAT[N, 4], INT64[N], FLOAT[N, 4], FLOAT[N, 2]):
    """typed_ops with its defaults and with every attribute given."""
    c, t, cs, am, y, d = typed_ops(x)
    c2, t2, cs2, am2, y2, d2 = typed_ops(x, dtype=1, upper=1, ex=0, rev=1, last=0,
                                         fs=[1.0, 2.0, 3.0, 4.0], steps=1)
    return c, t, cs, am, y, d, c2, t2, cs2, am2, y2, d2


def _typed_ops(x, dtype=np.int64, upper=False, ex=True, rev=False, last=True,
               fs=(0.5, -1.0, 2.0, 0.0), steps=2):
    c = (x * np.float32(2.5)).astype(dtype)
    t = np.triu(x) if upper else np.tril(x)
    v = x[:, ::-1] if rev else x
    cs = np.cumsum(v, axis=1) - (v if ex else 0)
    cs = cs[:, ::-1] if rev else cs
    r = np.round(x)
    am = (r.shape[1] - 1 - np.argmax(r[:, ::-1], axis=1)) if last else np.argmax(r, axis=1)
    y = x * np.asarray(fs, np.float32) ** steps
    return [c, t, cs, am.astype(np.int64), y, x[:, :2] - x[:, 2:]]


def _typed_attr_refs(x):
    return _typed_ops(x) + _typed_ops(x, np.float32, True, False, True, False,
                                      (1.0, 2.0, 3.0, 4.0), 1)


@script(NN, default_opset=op)
def seq_branch(x, flag):
    """If whose branches give a sequence (SplitToSequence of the rows, or [x, 2x]),
    concatenated after it."""
    if flag:
        s = op.SplitToSequence(x, op.Constant(value_int=1), axis=0)
    else:
        s = op.SequenceConstruct(x, x * 2.0)
    return op.ConcatFromSequence(s, axis=0)


@script(NN, default_opset=op)
def seq_map(x):
    """SequenceMap (a @graph body) over the rows: each row's sum."""
    @graph()
    def body(t):
        return op.ReduceSum(t, keepdims=1)
    s = op.SplitToSequence(x, op.Constant(value_int=1), axis=0)
    return op.ConcatFromSequence(op.SequenceMap(s, body=body), axis=0)


@script(NN, default_opset=op)
def reverse_scan(x):
    """Scan over the rows from the last, its outputs written from the last: the sum of
    exp(row) from each row to the end."""
    @graph()
    def body(acc, row):
        nxt = acc + op.Exp(row)
        return nxt, op.Identity(nxt)
    z = op.Gather(x, op.Constant(value_int=0), axis=0) * 0.0
    _, outs = op.Scan(z, x, body=body, num_scan_inputs=1, scan_input_directions=[1],
                      scan_output_directions=[1])
    return outs


@script(default_opset=op)
def sequence_branches(x: FLOAT[N, 3], flag: BOOL) -> (FLOAT[M, 3], FLOAT[N, 1],
                                                       FLOAT[N, 3]):
    """Sequences out of If branches, SequenceMap, a reversed Scan; all in functions."""
    return seq_branch(x, flag), seq_map(x), reverse_scan(x)


def _sequence_branches(x, flag):
    e = np.exp(x.astype(np.float64))
    return [x if flag else np.concatenate([x, x * 2]), x.sum(axis=1, keepdims=True),
            np.cumsum(e[::-1], axis=0)[::-1]]


def _rename_block_b(proto: onnx.ModelProto) -> onnx.ModelProto:
    """Name custom.b's function 'block' like custom.a's (calls renamed too)."""
    for f in proto.functions:
        if f.name == "block_b":
            f.name = "block"
    for node in proto.graph.node:
        if node.op_type == "block_b":
            node.op_type = "block"
    return proto


def _rng(seed: int):
    return np.random.default_rng(seed)


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _rotary_caches(rng, n):
    angles = rng.uniform(0, 3, size=(n, 5, 2))
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def authored_models() -> dict:
    """name -> (onnxscript model function, opset, input sets [[arrays]], numpy reference
    taking the arrays and giving the outputs, note, post-processing of the proto)."""
    r = _rng(0)
    xs = [_f32(r, 3, 6), _f32(r, 5, 6)]
    ak = [_f32(r, 2, 3, 4), _f32(r, 3, 3, 4)]
    pos = np.abs(_f32(r, 2, 5)) + 0.1
    ifs = [[pos], [-np.abs(_f32(r, 3, 5)) - 0.1]]
    ls = [[_f32(r, 3, 4), np.array(3, np.int64)], [_f32(r, 2, 4), np.array(0, np.int64)]]
    sq = [[_f32(r, 2, 7), np.array(3, np.int64)], [_f32(r, 4, 7), np.array(3, np.int64)]]
    w = _f32(r, 6, 3)
    oo = [[_f32(r, 2, 2, 4, 6), w], [_f32(r, 3, 2, 4, 6), w]]
    sc = np.abs(_f32(r, 8)) + 0.5
    rot = []
    for n in (2, 3):
        cos, sin = _rotary_caches(r, n)
        rot.append([_f32(r, n, 5, 8), sc, cos, sin])
    fo = [[_f32(r, 2, 3, 4)], [_f32(r, 4, 3, 4)]]
    cs = [[_f32(r, 3, 4), np.array(4, np.int64)], [_f32(r, 2, 4), np.array(1, np.int64)]]
    sa = [[_f32(r, 3, 4), np.array(3, np.int64)], [_f32(r, 2, 4) - 3, np.array(2, np.int64)]]
    ih = [[_f32(r, 3, 4)], [_f32(r, 5, 4)]]
    # ties in Round and ArgMax (x.5 rounds to even; equal maxima) on purpose
    tr = [[np.array([[0.4, 1.6, -2.2, 1.5], [2.5, 2.5, -0.5, 0.1], [-1, 3, 3, 0]], np.float32)],
          [np.round(_f32(r, 5, 4) * 4) / 2]]
    sb = [[_f32(r, 3, 3), np.array(True)], [_f32(r, 2, 3), np.array(False)]]
    at = [[_f32(r, n, 2, 3, 4), _f32(r, n, 2, 5, 4), _f32(r, n, 2, 5, 4)] for n in (2, 1)]
    return {
        "attr_refs_nested": (attr_refs_nested, 18, [[xs[0]], [xs[1]]],
                             lambda x: [_leaky_affine(x) + _leaky_affine(x, 0.3)
                                        * _leaky_affine(x, 0.05, -1.5)],
                             "nested calls across custom domains, float attribute "
                             "references, defaults given / partly given / left out", None),
        "attr_kinds": (attr_kinds, 18, [[ak[0]], [ak[1]]], _attr_kinds,
                       "int, ints (perm, Constant value_ints) and string (Pad mode) "
                       "attribute references with and without defaults", None),
        "if_in_function": (if_in_function, 18, ifs,
                           lambda x: [_gated(x), _gated(x, -1000.0, 0.25)],
                           "If in a function body reading attributes in both branches; "
                           "the input sets take different branches", None),
        "loop_scan_in_function": (loop_scan_in_function, 18, ls, _loop_scan,
                                  "Loop (run-time count, 0 in the second set) and Scan "
                                  "(@graph body, two scan outputs) in function bodies",
                                  None),
        "sequences": (sequences, 18, sq, _sequences,
                      "SplitToSequence / SequenceInsert / SequenceErase / "
                      "ConcatFromSequence / SequenceLength in a function, a Loop that "
                      "builds a sequence, SequenceConstruct / SequenceAt(-1)", None),
        "optional_omitted": (optional_omitted, 18, oo, _optional_omitted,
                             "optional inputs left out: Clip min / max and Slice axes / "
                             "steps in a function; Resize roi / scales, Pad "
                             "constant_value / axes, Gemm C, Dropout ratio", None),
        "opset23_functions": (opset23_functions, 23, rot,
                              lambda x, s, c, si: [_rms_rotary(x, s, c, si),
                                                   _rms_rotary(x, s, c, si, 0.5, 1)],
                              "opset 23 RMSNormalization and RotaryEmbedding with "
                              "attribute references in a function", None),
        "function_older_opset": (function_older_opset, 23, fo,
                                 lambda x: [_function_older_opset(x)],
                                 "opset 23 model, its function (domain version 2) written "
                                 "at opset 18 with Reshape / Squeeze / Cast / ReduceMean",
                                 None),
        "call_sites": (call_sites, 18, cs, _call_sites,
                       "one function name in two domains, a three-output function with "
                       "two outputs unused, a function (calling a function with If) "
                       "called in the graph's Loop body", _rename_block_b),
        "subgraph_attrs": (subgraph_attrs, 18, sa, _subgraph_attrs,
                           "attribute references in a Scan body and in an If inside a "
                           "Loop, ints / string attribute defaults, Optional ops", None),
        "attention23": (attention23, 23, at,
                        lambda q, k, v: [_attention(q, k, v), _attention(q, k, v, 1, 0.25)],
                        "opset 23 Attention with attribute references (is_causal, scale) "
                        "in a function", None),
        "inherited_default": (inherited_default, 18, ih, _inherited_default,
                              "a call leaves out an attribute (no default) that its "
                              "function passes on by reference to a function with a "
                              "default: ONNX applies the inner default (hand-edited "
                              "call: onnxscript requires the attribute)", _drop_alpha),
        "typed_attr_refs": (typed_attr_refs, 18, tr, _typed_attr_refs,
                            "attribute references as torchlib writes them: Cast(to=), "
                            "Trilu, CumSum exclusive / reverse, ArgMax select_last_index "
                            "(ties), Constant value_floats / value_int (a Loop count), "
                            "Split num_outputs", None),
        "sequence_branches": (sequence_branches, 18, sb, _sequence_branches,
                              "If branches giving sequences, SequenceMap with a @graph "
                              "body, a Scan read and written from the last row; the input "
                              "sets take both branches", None),
    }


def _versions() -> dict:
    from importlib.metadata import version
    return {p: version(p) for p in ("onnxscript", "onnx-ir", "onnx", "onnxruntime",
                                    "numpy")}


def _ort(model_bytes: bytes, feeds: dict, outputs: list) -> list:
    """onnxruntime's (CPU, graph optimizations off) outputs."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    takes = {i.name for i in sess.get_inputs()}
    return sess.run(outputs, {k: v for k, v in feeds.items() if k in takes})


def _ops(model: onnx.ModelProto) -> collections.Counter:
    """Op counts ('domain:Op', the default domain as ':Op') over the graph, its
    subgraphs and the model's local functions (and their subgraphs)."""
    count = collections.Counter()

    def walk(nodes):
        for n in nodes:
            count[("" if n.domain == "ai.onnx" else n.domain) + ":" + n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g.node)
                for g in a.graphs:
                    walk(g.node)
    walk(model.graph.node)
    for fn in model.functions:
        walk(fn.node)
    return count


def export_authored(name: str, spec: tuple, out_dir: str) -> tuple:
    """Write one authored model with its inputs and numpy's outputs; (file, record) or
    (None, failure record)."""
    fn, opset, input_sets, reference, note, post = spec
    stem = f"{name}__onnxscript_op{opset}"
    file = stem + ".onnx"
    rec = dict(name=name, file=file, family="authored", opset=opset, note=note)
    try:
        proto = fn.to_model_proto()
        if post is not None:
            proto = post(proto)
    except Exception as e:  # noqa: BLE001 - onnxscript's refusal
        return None, dict(rec, error="onnxscript refuses: " + first_line(e))
    try:
        onnx.checker.check_model(proto, full_check=True)
    except Exception as e:  # noqa: BLE001 - kept if onnxruntime runs it right
        # (function_older_opset: the checker calls an opset 18 function's ops
        # incompatible with the opset 23 model; onnxruntime runs it)
        rec["full_check_error"] = first_line(e)
    written = next(o.version for o in proto.opset_import if o.domain == "")
    assert written == opset, f"{name}: onnxscript wrote opset {written}, not {opset}"
    inputs = [i.name for i in proto.graph.input]
    outputs = [o.name for o in proto.graph.output]
    data = proto.SerializeToString()
    err = 0.0
    wants = []
    for k, arrays in enumerate(input_sets):
        want = [np.asarray(w) for w in reference(*arrays)]
        want = [w.astype(np.float32) if w.dtype == np.float64 else w for w in want]
        feeds = dict(zip(inputs, arrays))
        try:
            got = _ort(data, feeds, outputs)
        except Exception as e:  # noqa: BLE001
            return None, dict(rec, error=f"onnxruntime fails (input set {k}): "
                              + first_line(e))
        e2, bad = compare_outputs(got, want, outputs, ORT_AGREES, HALF_AGREES)
        if bad:
            return None, dict(rec, error=f"onnxruntime differs from numpy (input set {k}): "
                              + bad)
        err = max(err, e2)
        wants.append(want)
    onnx.save(proto, os.path.join(out_dir, file))
    rec.update(inputs=inputs, outputs=outputs, ops=sorted(_ops(proto)),
               functions=[f"{f.domain}::{f.name}" for f in proto.functions],
               dynamic=len(input_sets) > 1, ort_max_abs_err=err, size=len(data))
    rec["input_files"] = save_arrays(out_dir, stem, "in", input_sets[0])
    rec["output_files"] = save_arrays(out_dir, stem, "out", wants[0])
    if len(input_sets) > 1:
        rec["alt_input_files"] = save_arrays(out_dir, stem, "in", input_sets[1], ".alt")
        rec["alt_output_files"] = save_arrays(out_dir, stem, "out", wants[1], ".alt")
    return file, rec


# ---------------------------------------------------------------------------------------
# rewritten corpus models


def rewrite(kind: str, model: onnx.ModelProto) -> tuple:
    """(the model as onnxscript rewrites it with `kind`, a note: fusion counts)."""
    import onnx_ir as ir
    import onnxscript.optimizer
    import onnxscript.rewriter
    if kind == "optimize":
        return onnxscript.optimizer.optimize(model), ""
    if kind == "rewrite":
        return onnxscript.rewriter.rewrite(model), ""
    if kind == "ort_fusions":
        from onnxscript.rewriter.ort_fusions import optimize_for_ort
        m, counts = optimize_for_ort(ir.serde.deserialize_model(model))
        return ir.serde.serialize_model(m), ", ".join(
            f"{k} {v}" for k, v in sorted(counts.items()) if v)
    if kind == "onnx_fusions":
        # its fusions (RMSNormalization, RotaryEmbedding) need opset 23: converted first
        from onnxscript import version_converter
        from onnxscript.rewriter import onnx_fusions
        m = ir.serde.deserialize_model(model)
        onnxscript.optimizer.optimize(m)
        version_converter.convert_version(m, 23)
        onnxscript.optimizer.optimize(m)
        counts = onnx_fusions.fuse(m)
        return ir.serde.serialize_model(m), ", ".join(
            f"{k} {v}" for k, v in sorted(counts.items()) if v)
    if kind == "ir_passes":
        # onnx-ir's own passes, as a pipeline: every Constant (in subgraphs too) lifted to
        # an initializer, subgraph initializers moved to the main graph (read from outer
        # scope), equal initializers shared, every attribute default written out,
        # initializers listed as graph inputs (overridable defaults)
        import onnx_ir.passes.common as passes
        m = ir.serde.deserialize_model(model)
        for p in (passes.LiftConstantsToInitializersPass(lift_all_constants=True,
                                                         size_limit=0),
                  passes.LiftSubgraphInitializersToMainGraphPass(),
                  passes.DeduplicateInitializersPass(),
                  passes.CommonSubexpressionEliminationPass(),
                  passes.IdentityEliminationPass(),
                  passes.AddDefaultAttributesPass(),
                  passes.AddInitializersToInputsPass(),
                  passes.NameFixPass()):
            p(m)
        return ir.serde.serialize_model(m), ""
    if kind == "to_opset23":
        from onnxscript import version_converter
        m = ir.serde.deserialize_model(model)
        onnxscript.optimizer.optimize(m)
        version_converter.convert_version(m, 23)
        return ir.serde.serialize_model(m), ""
    raise ValueError(kind)


def _rewrite_worker(kind: str, jobs_file: str) -> int:
    """Child process: rewrite each (source, destination) pair of the JSON jobs file,
    printing START / DONE / ERROR lines, so that the parent can tell which model crashed
    or hung the process."""
    with open(jobs_file, encoding="utf-8") as f:
        jobs = json.load(f)
    for src, dst in jobs:
        print("START", src, flush=True)
        try:
            new, note = rewrite(kind, onnx.load(src))
            onnx.save(new, dst)
            print("DONE", src, note.replace("\n", " "), flush=True)
        except Exception as e:  # noqa: BLE001 - the parent records the refusal
            print("ERROR", src, first_line(e).replace("\n", " "), flush=True)
    return 0


def rewrite_all(kind: str, sources: list, tmp: str, timeout: float) -> dict:
    """{source path: (rewritten ModelProto, note) or an error string}, rewritten in a
    child process (restarted after a crash or a time-out, recorded against its model)."""
    results, todo = {}, list(sources)
    while todo:
        jobs = [(src, os.path.join(tmp, f"{kind}{k}.onnx")) for k, src in enumerate(todo)]
        jobs_file = os.path.join(tmp, "jobs.json")
        with open(jobs_file, "w", encoding="utf-8") as f:
            json.dump(jobs, f)
        log = os.path.join(tmp, "log.txt")
        with open(log, "w", encoding="utf-8") as out:
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                     kind, jobs_file], stdout=out, stderr=subprocess.DEVNULL)
            try:
                code = proc.wait(timeout=timeout * len(jobs))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = "timeout"
        dst = dict(jobs)
        started = None
        with open(log, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for line in lines:
            word, _, rest = line.partition(" ")
            src, _, msg = rest.partition(" ")
            if word == "START":
                started = src
            elif word == "DONE":
                results[src] = (onnx.load(dst[src]), msg)
                started = None
            elif word == "ERROR":
                results[src] = f"onnxscript fails: {msg}"
                started = None
        if started is not None:
            results[started] = f"the rewrite crashed or hung the process ({code})"
        elif code != 0:
            for src in todo:
                results.setdefault(src, f"the rewrite process failed ({code})")
        todo = [s for s in todo if s not in results]
    return results


def _entries(corpus: str) -> dict:
    with open(os.path.join(DATA, corpus, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    index = index.get("models", index)
    return {k: v for k, v in sorted(index.items())
            if k.endswith(".onnx") and "inputs" in v and "input_files" in v}


def _feed_sets(corpus: str, entry: dict) -> list:
    """[(feeds, file suffix)] at each stored input size."""
    sets = [(entry["input_files"], "")]
    if entry.get("alt_input_files"):
        sets.append((entry["alt_input_files"], ".alt"))
    return [({n: np.load(os.path.join(DATA, corpus, f), allow_pickle=False)
              for n, f in zip(entry["inputs"], files)}, suffix) for files, suffix in sets]


def sweep_one(kind, corpus, name, entry, new) -> tuple:
    """Check one rewritten corpus model (`new`: (ModelProto, note) or onnxscript's error);
    ("same" | "kept" | "failed" | "skipped", record, payload)."""
    original = onnx.load(os.path.join(DATA, corpus, name))
    before = _ops(original)
    rec = dict(rewrite=kind, source_corpus=corpus, source_file=name, family="rewritten",
               opset=next((o.version for o in original.opset_import
                           if o.domain in ("", "ai.onnx")), None))
    outputs = entry["outputs"]
    sets = _feed_sets(corpus, entry)
    try:
        wants = [_ort(original.SerializeToString(), feeds, outputs) for feeds, _ in sets]
    except Exception as e:  # noqa: BLE001 - e.g. bfloat16: no oracle
        return "skipped", dict(rec, error="onnxruntime cannot run the original: "
                               + first_line(e)), None
    if any(not isinstance(w, np.ndarray) for ws in wants for w in ws):
        return "skipped", dict(rec, error="a sequence or map output (ZipMap)"), None
    if isinstance(new, str):
        return "failed", dict(rec, error=new), None
    new, note = new
    if note:
        rec["fusions"] = note
    try:
        onnx.checker.check_model(new)
    except Exception as e:  # noqa: BLE001 - kept if onnxruntime runs it right
        # (SimplifiedLayerNormalization written in ONNX's domain, where onnxruntime
        # registers it; nodes out of topological order)
        rec["check_error"] = first_line(e)
    if "check_error" not in rec:
        try:
            onnx.checker.check_model(new, full_check=True)
        except Exception as e:  # noqa: BLE001 - kept if onnxruntime runs it right
            rec["full_check_error"] = first_line(e)
    if [o.name for o in new.graph.output] != outputs:
        return "failed", dict(rec, error="outputs renamed or dropped: "
                              f"{[o.name for o in new.graph.output]}"), None
    data = new.SerializeToString()
    err = 0.0
    for (feeds, suffix), want in zip(sets, wants):
        try:
            got = _ort(data, feeds, outputs)
        except Exception as e:  # noqa: BLE001
            rec["error"] = (f"onnxruntime fails on the rewritten model (input set"
                            f"{suffix or ' 0'}): " + first_line(e))
            if "check_error" in rec or "full_check_error" in rec:
                return "failed", rec, None
            # valid ONNX that onnxruntime cannot run (no kernel for GroupNorm or
            # RoiAlign-22, RotaryEmbedding caches of batch 1): a candidate whose only
            # oracle is the original model's outputs
            rec["ort_refuses"] = rec.pop("error")
            break
        half = any(v.dtype == np.float16 for v in feeds.values())
        e2, bad = compare_outputs(got, want, outputs, ORT_AGREES, HALF_AGREES, half)
        err = max(err, e2)
        if bad:
            return "failed", dict(rec, error="the rewritten model's outputs differ from the "
                                  f"original's (input set{suffix or ' 0'}): {bad}"), None
    after = _ops(new)
    if after == before:
        return "same", rec, None
    rec.update(ops_added=sorted(set(after) - set(before)),
               ops_removed=sorted(set(before) - set(after)),
               ops=sorted(after), nodes_before=sum(before.values()),
               nodes_after=sum(after.values()),
               inputs=[i.name for i in new.graph.input if i.name in sets[0][0]],
               outputs=outputs, dynamic=bool(entry.get("alt_input_files")),
               ort_max_abs_err=None if rec.get("ort_refuses") else err, size=len(data))
    return "kept", rec, (new, sets, wants)


def _score(rec) -> tuple:
    """Most contrib (com.microsoft) ops added, then most op types added or removed, then
    most nodes saved, then smallest."""
    contrib = sum(o.startswith("com.microsoft:") for o in rec["ops_added"])
    return (-contrib, -(len(rec["ops_added"]) + len(rec["ops_removed"])),
            -(rec["nodes_before"] - rec["nodes_after"]), rec["size"])


def _pick_order(candidates: list) -> list:
    """The order in which the budget takes a rewrite's changed models: the PREFERRED
    ones, then one per source family (bert, resnet, ...) by _score, then the rest by
    _score."""
    ranked = sorted(candidates, key=lambda c: _score(c[0]))
    first = [c for c in ranked if f"{TAGS[c[0]['source_corpus']]}/{c[0]['source_file'][:-5]}"
             in PREFERRED.get(c[0]["rewrite"], ())]
    order = list(first)
    families = {c[0]["source_file"].split("__")[0] for c in first}
    for c in ranked:
        family = c[0]["source_file"].split("__")[0]
        if family not in families:
            families.add(family)
            order.append(c)
    return order + [c for c in ranked if not any(c is o for o in order)]


def _save_rewritten(out_dir: str, rec: dict, payload: tuple) -> str:
    new, sets, wants = payload
    tag = TAGS[rec["source_corpus"]]
    stem = f"{rec['rewrite']}__{tag}__{rec['source_file'][:-5]}"
    onnx.save(new, os.path.join(out_dir, stem + ".onnx"))
    for (feeds, suffix), want in zip(sets, wants):
        key = "alt_" if suffix else ""
        rec[key + "input_files"] = save_arrays(out_dir, stem, "in",
                                               [feeds[n] for n in rec["inputs"]], suffix)
        rec[key + "output_files"] = save_arrays(out_dir, stem, "out", want, suffix)
    return stem + ".onnx"


def sweep_rewrites(kinds, corpora, out_dir, sweep_dir, budget_scale, max_source, timeout):
    """Run each rewrite over each corpus model; keep the PREFERRED ones and the most
    changed others within the budget in out_dir (all changed ones in sweep_dir when
    given); (models, failures, sweep counts)."""
    models, failures = {}, []
    sweep = {k: collections.Counter() for k in kinds}
    sweep_models = {}
    for kind in kinds:
        candidates = []
        sources = [os.path.join(DATA, c, n) for c in corpora for n in _entries(c)
                   if os.path.getsize(os.path.join(DATA, c, n)) <= max_source]
        with tempfile.TemporaryDirectory() as tmp:
            rewritten = rewrite_all(kind, sources, tmp, timeout)
        for corpus in corpora:
            for name, entry in _entries(corpus).items():
                src = os.path.join(DATA, corpus, name)
                if src not in rewritten:
                    sweep[kind][f"{corpus}:too_big"] += 1
                    continue
                what, rec, payload = sweep_one(kind, corpus, name, entry, rewritten[src])
                sweep[kind][f"{corpus}:{'changed' if what == 'kept' else what}"] += 1
                print(f"{kind:<12} {corpus}/{name:<44} {what} {rec.get('error', '')}"
                      f"{rec.get('fusions', '')}"[:300], flush=True)
                if what == "failed" or rec.get("ort_refuses"):
                    failures.append(dict(rec, file=f"{kind}__{TAGS[corpus]}__{name}",
                                         name=f"{kind}__{TAGS[corpus]}__{name[:-5]}",
                                         error=rec.get("error", rec.get("ort_refuses"))))
                if what != "kept":
                    continue
                if sweep_dir:
                    copy = dict(rec)
                    sweep_models[_save_rewritten(sweep_dir, copy, payload)] = copy
                preferred = f"{TAGS[corpus]}/{name[:-5]}" in PREFERRED.get(kind, ())
                if rec["size"] <= MAX_MODEL and kind in BUDGET and (
                        preferred or not rec.get("ort_refuses")):
                    candidates.append((rec, payload))
        used = 0
        for rec, payload in _pick_order(candidates):
            new, sets, wants = payload
            arrays = sum(v.nbytes for feeds, _ in sets for v in feeds.values()) + \
                sum(np.asarray(w).nbytes for ws in wants for w in ws)
            preferred = f"{TAGS[rec['source_corpus']]}/{rec['source_file'][:-5]}" \
                in PREFERRED[kind]
            if not preferred:
                if used + rec["size"] + arrays > BUDGET[kind] * budget_scale:
                    continue
                used += rec["size"] + arrays
            file = _save_rewritten(out_dir, rec, payload)
            rec["name"] = file[:-5]
            models[file] = rec
            sweep[kind]["kept_in_corpus"] += 1
    if sweep_dir:
        for file, rec in sweep_models.items():
            rec["name"] = file[:-5]
        write_index(os.path.join(sweep_dir, "index.json"), _versions(), sweep_models, [])
    return models, failures, {k: dict(sorted(c.items())) for k, c in sweep.items()}


def main(argv=None):
    """Write the authored models and the kept rewrites into OUT_DIR with index.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--only", nargs="*", default=None,
                    help="rewrite only these authored models (no corpus rewrites)")
    ap.add_argument("--rewrites", nargs="*", default=list(REWRITES))
    ap.add_argument("--corpora", nargs="*", default=list(CORPORA))
    ap.add_argument("--sweep-dir", default=None)
    ap.add_argument("--budget-scale", type=float, default=1.0)
    ap.add_argument("--max-source", type=int, default=3_000_000,
                    help="larger source models are not rewritten")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per model")
    ap.add_argument("--worker", nargs=2, metavar=("KIND", "JOBS"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        return _rewrite_worker(*a.worker)
    os.makedirs(a.out_dir, exist_ok=True)
    if a.sweep_dir:
        os.makedirs(a.sweep_dir, exist_ok=True)
    index_path = os.path.join(a.out_dir, "index.json")
    # a partial rerun (--only) keeps the other records and the sweep of index.json
    models, failures = kept_records(index_path, a.only)
    sweep = {}
    if a.only and os.path.exists(index_path):
        with open(index_path, encoding="utf-8") as f:
            sweep = json.load(f).get("sweep", {})
    for name, spec in authored_models().items():
        if a.only is not None and name not in a.only:
            continue
        file, rec = export_authored(name, spec, a.out_dir)
        if file is None:
            failures.append(rec)
            print(f"{rec['file']:<48} FAILED {rec['error']}", flush=True)
        else:
            models[file] = rec
            print(f"{file:<48} {rec['size']:>8,} bytes  ort-vs-numpy "
                  f"{rec['ort_max_abs_err']:.2e}", flush=True)
    if a.rewrites and not a.only:
        kept, failed, sweep = sweep_rewrites(a.rewrites, a.corpora, a.out_dir, a.sweep_dir,
                                             a.budget_scale, a.max_source, a.timeout)
        models.update(kept)
        failures += failed
    write_index(index_path, _versions(), models, failures)
    with open(index_path, encoding="utf-8") as f:
        index = json.load(f)
    index["sweep"] = sweep
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
