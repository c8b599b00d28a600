"""Plan-time graph optimisations for the Session (inference-style rewrites of a plan).

`optimize_plan` rewrites the ordered step list of one compiled plan; the graph itself is
never modified, so every plan of a Session (and a saved model) stays the original.
The rewrites, in order:

1. Constant folding: a step whose inputs are all constants (initializers, or outputs of
   steps folded before it) runs once at plan time and its outputs join the plan's
   constants. Only deterministic, stateless default-domain ops without subgraphs are
   folded (no Random*, Dropout, Multinomial, Bernoulli, nothing stateful); a kernel that
   raises is left in place, so the error surfaces at run time as usual.
1a. Erf Gelu: 0.5 x (1 + erf(x / sqrt 2)) spelled as Div/Mul, Erf, Add, Mul, Mul
   (PyTorch below opset 20, Hugging Face BERT) becomes one Gelu step on float32/float64
   (`train/fuse_gelu.py`).
2. Conv + per-channel affine folding: a Conv with constant weights followed by a chain
   of BatchNormalization (inference, constant parameters) and Mul / Add by constant
   per-channel tensors becomes one Conv with rescaled weights and bias.
3. BatchNormalization with constant parameters becomes a precomputed multiply-add, and
   absorbs following per-channel Mul / Add by constants when the rank is known.
4. Relu fusion: a Relu whose input comes only from a Conv, BN-affine, Add, Sum, Mul,
   Sub, MatMul, Gemm or Concat step is applied in place on that step's fresh output.
4a. Bias forwarding: a fused Conv without Relu read only by a fused 1x1 Conv without
   padding drops its bias, which the 1x1 Conv adds through its own: W (y + b1) + b2 =
   W y + (W b1 + b2), per group. ShuffleNet's depthwise convs (BatchNorm folded) feed
   such 1x1 convs, and their bias was a separate pass over their output.
5. Channel-shuffle folding: a fused Conv followed by Reshape (N, g, C/g, ...) ->
   Transpose (0, 2, 1, ...) -> Reshape (N, C, ...) writes its output already shuffled.
6. AveragePool and 1x1 Conv swap: both are linear, and the average of a per-channel
   constant (the bias) is that constant when no window counts padding. An
   AveragePool read only by a fused 1x1 Conv (stride 1, no padding, group 1) runs
   after the Conv's GEMM, on its output channels (Inception's pool projections: 576 ->
   128 channels, 4.5x less pooling), followed by the bias and Relu; a fused 1x1 Conv
   without Relu read only by a strided AveragePool runs after the pool, on 4x fewer
   pixels (DenseNet's transition layers).
7. Concat folding: fused Convs whose only reader is a channel-axis Concat write their
   results straight into their channel slices of the Concat's output, which the first
   of them allocates; the Concat then only copies its other inputs.
8. Relu past MaxPool: a fused Conv + Relu read only by a MaxPool (no Indices) leaves
   the Relu to the pooled output. Relu is monotonic, so max(relu(x)) = relu(max(x))
   over any window holding at least one input element (checked per input shape; an
   all-padding window falls back to the original order), and the pooled output is
   4x smaller for the usual 3x3/2 pool. The same holds for a Concat of such Convs
   (folded by rewrite 7) read only by a MaxPool (SqueezeNet's and Inception's pools).
9. SiLU: Sigmoid(x) read only by a Mul(x, Sigmoid(x)), where x is read by those two
   steps only, becomes one `ops.activation.silu` step on float32/float64 (other dtypes
   run the two kernels in turn): four passes over x instead of five, no intermediate.
10. Gelu in place: an exact float32 Gelu whose input only it reads, fresh from a
   MatMul, Gemm, Conv or two-input Add step (a transformer's FFN projection and bias),
   writes its result over that input, still in cache, instead of into a new array
   (the transformer benchmark's four Gelu steps 1.94 -> 1.75 ms in the model).
11. Residual into the Conv: an Add (+ Relu) of a fused Conv's output (no Relu, read
   only by the Add) and a shortcut that the Add reads last, a fresh array of the plan
   (a Conv, MatMul, Gemm, Add or Sum output, neither fetched, fed nor read by the
   Conv), becomes one step at the Add's place: the Conv sums into the shortcut's
   memory, its GEMM accumulating there where MKL does it (`ops.conv.conv_nd`'s `add`;
   ResNet's blocks from 28x28 down: one pass over each block output less).
12. Relu into the depthwise Conv: a fused Conv + Relu (channel-shuffled or not) read
   only by a fused 2-D depthwise Conv leaves the Relu to the depthwise Conv, which
   applies it while copying each input plane (numba's 3x3 forms; a pass of its own
   otherwise): ShuffleNet's 16 grouped 1x1 convs lose a pass over their output each.
   The producer's bias moves along (max(x + b, 0) in the same copy, b in the
   shuffled channel order): a grouped 1x1 conv without a bias multiplies its input
   in place instead of copying it under a row of ones.
13. oneDNN chains (`train/onednn_chains.py`; made right after rewrites 2-4, so 4a-12
   see only the steps left outside): when oneDNN is the conv backend, each run of
   consecutive fused Convs (group 1, or groups of whole 16-channel blocks), MaxPool,
   AveragePool, GlobalAveragePool, LRN, Relu, channel Concat, Add/Sum of two step
   outputs, BatchNormalization + Relu clips (rewrite 4's, DenseNet's) and inference
   Dropout holding two Convs or more becomes one step that keeps its values in
   oneDNN's channel-blocked layout (`ops/onednn_chain.py`): only values read outside
   the run, fetched or kept come out as NCHW arrays. The step runs the original steps
   when oneDNN declines, is switched off, or its inputs are not finite float32 images.
14. Dense layers (`train/fuse_dense.py`; made before rewrite 4, which would sum the
   bias into the product in place): when oneDNN is active, a MatMul by a constant
   float32 matrix + an Add of a constant bias (+ a Gelu) becomes one oneDNN matmul
   applying the bias and Gelu as it writes (`ops/onednn_matmul.py`).

A rewrite only touches values nobody else reads: an intermediate consumed by exactly one
step and neither fetched, fed nor a graph input/output. Plans using dead-value control
flow (Switch/Merge) are left alone, and plans with subgraph ops (If/Loop/Scan, whose
bodies read outer values by name) are only constant-folded. Free lists (`_Step.free`)
are recomputed afterwards.
"""

from __future__ import annotations

import numpy as np

from ..format import DType
from ..ops import REGISTRY, KernelContext, jit
from ..ops.activation import gelu_in_place
from ..ops.activation import relu as relu_op
from ..ops.activation import silu as silu_op
from ..ops.common import remember
from ..ops.registry import NUM_OUTPUTS, mark_plan_constant
from ..ops.scratch import begin_kernel
from .fuse_dense import fuse_dense
from .fuse_gelu import fuse_erf_gelu
from .onednn_chains import onednn_chains

_NONDETERMINISTIC = frozenset({
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
    "Multinomial", "Bernoulli", "Dropout"})

_RELU_PRODUCERS = frozenset({"Conv", "Add", "Sum", "Mul", "Sub", "MatMul", "Gemm",
                             "Concat", "BatchNormalization"})


def optimize_plan(graph, steps: list, template: list, keep: set, fed: set,
                  graph_inputs=(), folded: dict | None = None) -> list:
    """Return the optimised step list; `template` gains folded constants in place.
    `folded` (node id -> (node, inputs, values)), shared by a Session's plans, keeps
    each node's folded values, so plans share them instead of each folding its own
    copy; they are used again only for the very same input arrays (a constant whose
    data was replaced folds anew)."""
    if any(s.node.op_type in ("Switch", "Merge") for s in steps):
        return steps
    from .session import _Step  # session imports this module

    protected = set(keep) | set(fed) | set(graph_inputs)
    steps = _fold_constants(steps, template, fed, graph_inputs, protected,
                            {} if folded is None else folded)
    # Folded steps read constants only (never freed), so dropping them needs no new free
    # lists. Subgraphs read outer values by name (the Session's implicit inputs, kept
    # alive through its free lists), invisible to the consumer counts: no fusion then.
    if any(_has_subgraph(s) for s in steps):
        return steps
    # before the other fusions, which would fold the chain's Muls into their producers
    steps = fuse_erf_gelu(steps, lambda i: _const(i, template, fed, graph_inputs),
                          protected, _Step)
    # the steps as compiled: a later rewrite that matches op types (SiLU) must not take
    # a step an earlier one already changed (a Mul that absorbed a Relu)
    as_compiled = list(steps)
    # before _fuse, which would sum the bias into the product in place
    steps = fuse_dense(steps, lambda i: _const(i, template, fed, graph_inputs), protected,
                       _Step)
    steps = _fuse(graph, steps, template, fed, graph_inputs, protected, _Step)
    steps = onednn_chains(steps, lambda i: _const(i, template, fed, graph_inputs),
                          protected, _Step)
    steps = _bias_into_pointwise_conv(steps, protected, _Step)
    steps = _fold_shuffles(steps, template, fed, graph_inputs, protected, _Step)
    steps = _pointwise_conv_before_avgpool(steps, protected, _Step)
    steps = _avgpool_before_pointwise_conv(steps, protected, _Step)
    steps = _fold_concats(graph, steps, protected, _Step)
    steps = _relu_past_maxpool(steps, protected, _Step)
    steps = _fuse_silu(steps, protected, _Step, {id(s) for s in as_compiled})
    steps = _gelu_in_place(steps, protected, _Step)
    steps = _residual_into_conv(steps, protected, _Step)
    steps = _relu_into_depthwise(steps, protected, _Step)
    _recompute_free(steps, protected | {i for i, v in enumerate(template) if v is not None})
    return steps


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def _const(i, template, fed, graph_inputs):
    """The constant value of tensor i, or None (fed/graph inputs are never constant)."""
    if i < 0 or i in fed or i in graph_inputs:
        return None
    v = template[i]
    return v if isinstance(v, np.ndarray) else None


def _has_subgraph(step) -> bool:
    op = REGISTRY.get(step.node.op_type, step.node.domain)
    return any(spec.type in ("graph", "graphs") for spec in op.attrs)


def _foldable(step) -> bool:
    node = step.node
    if node.domain not in ("", "ai.onnx") or node.op_type in _NONDETERMINISTIC:
        return False
    op = REGISTRY.get(node.op_type, node.domain)
    if op.stateful or any(spec.type in ("graph", "graphs") for spec in op.attrs):
        return False
    return not node.control_inputs


def _fold_constants(steps, template, fed, graph_inputs, protected, folded):
    out = []
    ctx = KernelContext()
    for step in steps:
        if _foldable(step):
            args = [None if i < 0 else _const(i, template, fed, graph_inputs)
                    for i in step.inputs]
            if all(a is not None for a, i in zip(args, step.inputs) if i >= 0):
                # a node whose inputs are all constants folds to the same values in
                # every plan (fed tensors are never constant)
                held = folded.get(id(step.node))
                if held is not None and held[0] is step.node and len(held[1]) == len(args) \
                        and all(a is b for a, b in zip(args, held[1])):
                    values = held[2]
                else:
                    try:
                        begin_kernel()
                        values = step.kernel(args, step.attrs, ctx)
                    except Exception:  # leave it to run time, which reports it properly
                        values = None
                # only tensors are folded (sequences, optionals... stay run-time values)
                if values is not None and len(values) >= len(step.outputs) and all(
                        isinstance(v, np.ndarray) for o, v in zip(step.outputs, values)
                        if o >= 0):
                    for o, v in zip(step.outputs, values):
                        if o >= 0:
                            v.flags.writeable = False  # shared by every run and plan
                            mark_plan_constant(v)
                            template[o] = v
                    folded[id(step.node)] = (step.node, tuple(args), values)
                    continue
        out.append(step)
    return out


def _consumers(steps):
    users: dict[int, list[int]] = {}
    for k, s in enumerate(steps):
        for i in set(s.inputs):
            if i >= 0:
                users.setdefault(i, []).append(k)
    return users


def _sole_reader(steps, users, t, protected, op_type=None):
    """The index of the one step reading intermediate t as its only input (of op type
    `op_type`, default domain, one output when given), or None."""
    readers = users.get(t, ())
    if t in protected or len(readers) != 1:
        return None
    step = steps[readers[0]]
    if list(step.inputs) != [t] or op_type is not None and (
            step.node.op_type != op_type or step.node.domain not in ("", "ai.onnx")
            or len(step.outputs) != 1):
        return None
    return readers[0]


def _recompute_free(steps, keep):
    last: dict[int, int] = {}
    for pos, s in enumerate(steps):
        for i in s.inputs:
            if i >= 0:
                last[i] = pos
    for pos, s in enumerate(steps):
        s.free = tuple(i for i in set(s.inputs)
                       if i >= 0 and last.get(i) == pos and i not in keep)


def _same_dtype(graph, t: int, value: np.ndarray) -> bool:
    """Whether tensor t of `graph` is known to have value's dtype."""
    dt = graph.tensors[t].dtype
    return dt is not DType.UNDEFINED and np.dtype(dt.numpy) == value.dtype


def _per_channel_vector(c, rank, channels):
    """c as a (C,) vector if it broadcasts against (N, C, *sp) of `rank` per channel."""
    if c is None or c.dtype.kind != "f" or rank is None:
        return None
    shape = c.shape
    if len(shape) > rank:
        return None
    full = (1,) * (rank - len(shape)) + tuple(shape)
    if any(d != 1 for k, d in enumerate(full) if k != 1):
        return None
    if channels is not None and full[1] not in (1, channels):
        return None
    return c.reshape(-1).astype(np.float64)


# --------------------------------------------------------------------------------------
# fusion
# --------------------------------------------------------------------------------------


class _Affine:
    """y = x * a + b per channel (float64 accumulation of the chain)."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def then_mul(self, c):
        return _Affine(self.a * c, self.b * c)

    def then_add(self, c):
        return _Affine(self.a, self.b + c)


def _bn_affine(step, template, fed, graph_inputs):
    """(a, b) of an inference BatchNormalization with constant parameters, or None."""
    attrs = step.attrs
    if attrs.get(NUM_OUTPUTS, 1) != 1 or int(attrs.get("training_mode", 0) or 0) \
            or int(attrs.get("spatial", 1) if attrs.get("spatial") is not None else 1) != 1:
        return None
    if len(step.inputs) < 5 or len(step.outputs) != 1:
        return None
    params = [_const(i, template, fed, graph_inputs) for i in step.inputs[1:5]]
    if any(p is None or p.ndim != 1 or p.dtype.kind != "f" for p in params):
        return None
    scale, bias, mean, var = (p.astype(np.float64) for p in params)
    if not scale.shape == bias.shape == mean.shape == var.shape:
        return None
    a = scale / np.sqrt(var + float(attrs["epsilon"]))
    return _Affine(a, bias - mean * a)


def _fuse(graph, steps, template, fed, graph_inputs, protected, Step):
    users = _consumers(steps)
    removed: set[int] = set()
    replace: dict[int, object] = {}

    def sole_user(t):
        """Index of the only step reading tensor t, if t is a private intermediate."""
        if t in protected:
            return None
        u = users.get(t, [])
        if len(u) != 1 or u[0] in removed:
            return None
        return u[0]

    def absorb_chain(t, affine, rank, channels):
        """Follow BN / per-channel Mul / Add steps from tensor t; return (affine, t, taken)."""
        taken = []
        while True:
            k = sole_user(t)
            if k is None:
                break
            s = steps[k]
            op = s.node.op_type
            if s.node.domain not in ("", "ai.onnx") or len(s.outputs) != 1:
                break
            if op == "BatchNormalization" and s.inputs[0] == t:
                bn = _bn_affine(s, template, fed, graph_inputs)
                if bn is None or (channels is not None and bn.a.shape[0] != channels) \
                        or affine is not None and not _composable(bn.a, bn.b):
                    break
                affine = _Affine(affine.a * bn.a, affine.b * bn.a + bn.b) if affine \
                    else bn
                channels = bn.a.shape[0]
            elif op in ("Mul", "Add") and len(s.inputs) == 2 and t in s.inputs \
                    and s.inputs[0] != s.inputs[1]:
                other = s.inputs[1] if s.inputs[0] == t else s.inputs[0]
                value = _const(other, template, fed, graph_inputs)
                # a constant of another dtype makes the Mul/Add's result that dtype
                # (a float64 constant on a float32 Conv): folding it would not
                if value is None or not _same_dtype(graph, t, value):
                    break
                c = _per_channel_vector(value, rank, channels)
                if c is None or affine is None or c.shape[0] not in (1, affine.a.shape[0]) \
                        or not (_composable(c) if op == "Mul" else _composable(None, c)):
                    break
                affine = affine.then_mul(c) if op == "Mul" else affine.then_add(c)
            else:
                break
            taken.append(k)
            t = s.outputs[0]
        return affine, t, taken

    def relu_after(t):
        k = sole_user(t)
        if k is None:
            return None
        s = steps[k]
        if s.node.op_type == "Relu" and s.node.domain in ("", "ai.onnx") \
                and s.inputs[0] == t and len(s.outputs) == 1:
            return k
        return None

    def conv_after(t):
        """(index, weights, bias) of a Conv with constant weights reading t as its data
        input and nothing else, when t is a private intermediate."""
        k = sole_user(t)
        if k is None:
            return None
        s = steps[k]
        if s.node.op_type != "Conv" or s.node.domain not in ("", "ai.onnx") \
                or s.inputs[0] != t or t in s.inputs[1:] or len(s.outputs) != 1:
            return None
        w = _const(s.inputs[1], template, fed, graph_inputs)
        bi = s.inputs[2] if len(s.inputs) > 2 else -1
        b = _const(bi, template, fed, graph_inputs) if bi >= 0 else None
        if w is None or w.dtype.kind != "f" or w.ndim < 3 or (bi >= 0 and b is None) \
                or (b is not None and b.shape != w.shape[:1]):
            return None
        return k, w, b

    # Conv steps whose weights/bias an earlier BN+Relu rewrite replaced (see below)
    conv_override: dict[int, tuple] = {}

    for k, step in enumerate(steps):
        if k in removed:
            continue
        op = step.node.op_type
        if step.node.domain not in ("", "ai.onnx"):
            continue
        # (a malformed node, e.g. without weights, is left to its kernel to report)
        if op == "Conv" and len(step.outputs) == 1 and len(step.inputs) >= 2:
            w = _const(step.inputs[1], template, fed, graph_inputs)
            bi = step.inputs[2] if len(step.inputs) > 2 else -1
            b = _const(bi, template, fed, graph_inputs) if bi >= 0 else None
            if k in conv_override:
                w, b = conv_override[k]
            elif w is None or w.dtype.kind != "f" or (bi >= 0 and b is None) \
                    or (b is not None and (b.dtype.kind != "f" or b.shape != w.shape[:1])):
                continue   # (a bias that does not fit is left to the kernel to refuse)
            m = w.shape[0]
            start = _Affine(np.ones(m), np.zeros(m) if b is None else b.astype(np.float64))
            affine, t, taken = absorb_chain(step.outputs[0], start, w.ndim, m)
            if taken:
                w2 = w.astype(np.float64) * affine.a.reshape((-1,) + (1,) * (w.ndim - 1))
                b2 = np.broadcast_to(affine.b, (m,))
                if not _fits(w.dtype, w2, b2):
                    # a float16 W = 200 scaled by 400 overflows though x * W * 400 may
                    # not: the chain then runs as it is
                    affine, t, taken = start, step.outputs[0], []
                else:
                    w2, b2 = w2.astype(w.dtype), b2.astype(w.dtype)
            if not taken:
                w2, b2 = w, b
            relu = relu_after(t)
            # every constant-weight Conv becomes a fused step, even with nothing to
            # fuse: its per-node cache keeps the GEMM-ready weights across runs
            out = steps[taken[-1]].outputs[0] if taken else step.outputs[0]
            if relu is not None:
                taken.append(relu)
                out = steps[relu].outputs[0]
            replace[k] = Step(_conv_kernel(step.kernel, w2, b2, relu is not None),
                              step.attrs, (step.inputs[0],), (out,), step.node, (), False)
            removed.update(taken)
        elif op == "BatchNormalization":
            bn = _bn_affine(step, template, fed, graph_inputs)
            if bn is None:
                continue
            shape = graph.tensors[step.inputs[0]].shape if step.inputs[0] >= 0 else None
            rank = len(shape) if shape is not None else None
            affine, t, taken = absorb_chain(step.outputs[0], bn, rank, bn.a.shape[0])
            relu = relu_after(t)
            if relu is not None:
                taken.append(relu)
                t = steps[relu].outputs[0]
            chain, cur = [], step.outputs[0]
            for j in taken:
                sj = steps[j]
                args = tuple(None if i == cur or i < 0 else template[i] for i in sj.inputs)
                chain.append((sj.kernel, sj.attrs, args, list(sj.inputs).index(cur)))
                cur = sj.outputs[0]
            conv = conv_after(t) if relu is not None and rank == 4 else None
            if conv is not None and conv[0] not in conv_override:
                scaled = _scale_into_conv(affine, conv[1], conv[2], conv[0], steps)
            else:
                scaled = None
            if scaled is not None:
                # BN + Relu + Conv: relu(a x + b) = a * max(x - c, 0) with c = -b / a
                # (a > 0): the Conv takes the scale a, this step only clips (DenseNet's
                # BN-Relu-Conv: 1 or 2 passes over the data instead of 3)
                w2, b2, one_by_one = scaled
                conv_override[conv[0]] = (w2, b2)
                kernel = _clip_kernel(affine, one_by_one,
                                      _affine_kernel(affine, rank, True, step.kernel,
                                                     step.attrs, chain))
            else:
                kernel = _affine_kernel(affine, rank, relu is not None, step.kernel,
                                        step.attrs, chain)
            replace[k] = Step(kernel, step.attrs, step.inputs, (t,), step.node, (), False)
            removed.update(taken)
        elif op in _RELU_PRODUCERS and len(step.outputs) == 1:
            relu = relu_after(step.outputs[0])
            pos = _fresh_operand(step, k, steps, replace, removed, sole_user) \
                if op in ("Add", "Sum") else None
            if relu is None and pos is None:
                continue
            outs = steps[relu].outputs if relu is not None else step.outputs
            if pos is not None:
                kernel = _add_into(step.kernel, pos, relu is not None)
            else:
                kernel = _relu_fused(step.kernel)
            replace[k] = Step(kernel, step.attrs, step.inputs, outs, step.node, (),
                              step.dead_aware)
            if relu is not None:
                removed.add(relu)
    return [replace.get(k, s) for k, s in enumerate(steps) if k not in removed]


# Ops whose kernels (fused or not) return a new array, or one of their own fresh
# operands written in place: never an input, a constant or a view of one.
_FRESH_PRODUCERS = frozenset({"Conv", "MatMul", "Gemm", "Add", "Sum"})


def _fresh_operand(step, k, steps, replace, removed, sole_user):
    """Position of an operand of a 2-input Add/Sum that a Conv, MatMul, Gemm or Add
    step (fused or not) produced and only this step reads: a fresh array nobody else
    sees, which may take the sum in place (a bias or residual add after a GEMM)."""
    ins = list(step.inputs)
    if len(ins) != 2 or ins[0] < 0 or ins[1] < 0 or ins[0] == ins[1]:
        return None
    for pos, t in enumerate(ins):
        if sole_user(t) != k:
            continue
        for j in range(k):
            st = replace.get(j, steps[j])
            if t in st.outputs and j not in removed:
                if st.node.op_type in _FRESH_PRODUCERS \
                        and st.node.domain in ("", "ai.onnx") and len(st.outputs) == 1:
                    return pos
                break
    return None


def _broadcasts_into(small: tuple, big: tuple) -> bool:
    """Whether shape `small` broadcasts to exactly `big` (so b adds into a in place);
    shapes that do not broadcast at all are left to the Add kernel's own error."""
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(reversed(small), reversed(big)))


def _add_into(add, pos, relu):
    """Add/Sum of two tensors written into operand `pos` (a private fresh array)
    when it already has the result's shape and dtype; then Relu in place if fused."""
    def kernel(inputs, attrs, ctx):
        a, b = inputs[pos], inputs[1 - pos]
        if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype \
                and a.dtype.kind == "f" and a.flags.writeable and a is not b \
                and (a.shape == b.shape or _broadcasts_into(b.shape, a.shape)):
            np.add(a, b, out=a)
            if relu:
                relu_op(a, out=a)
            return (a,)
        outs = add(inputs, attrs, ctx)
        if not relu:
            return outs
        y = outs[0]
        return (np.maximum(y, np.zeros((), y.dtype)),) + tuple(outs[1:])
    kernel.add_into = (pos, relu)
    return kernel


# (see _scale_into_conv) BN shifts of trained networks are a few units; this bounds
# the cancellation error by about 64 * float32 epsilon * sum |W|
_ONE_BY_ONE_MAX_SHIFT = 64.0


def _scale_into_conv(affine, w, b, conv_k, steps):
    """Conv weights/bias taking a per-channel scale a (> 0) of its input, or None.

    Returns (w * a over input channels, bias, one_by_one): for a 1x1 Conv without
    padding the input may stay shifted by c = -b/a (max(x, c) instead of
    max(x - c, 0)), the bias absorbing -W' c.
    """
    a, sh = affine.a, affine.b
    attrs = steps[conv_k].attrs
    group = int(attrs.get("group", 1) or 1)
    # float16 weights scaled by a and activations shifted by c leave float16's range
    # long before float32's (the clip runs in float32, the Conv in float16)
    if w.dtype not in (np.float32, np.float64) \
            or group != 1 or a.ndim != 1 or w.shape[1] != a.shape[0] \
            or not np.all(np.isfinite(a)) or not np.all(a > 0) \
            or not np.all(np.isfinite(sh)):
        return None
    shape = (1, -1) + (1,) * (w.ndim - 2)
    w2 = w.astype(np.float64) * a.reshape(shape)
    m = w.shape[0]
    b2 = np.zeros(m) if b is None else b.astype(np.float64)
    pads = attrs.get("pads")
    # max(x, c) with -W' c in the bias: a channel the Relu zeroes still adds W' c and
    # then takes it away, exact only to float32's rounding of W' c = -W shift; shifts
    # beyond _ONE_BY_ONE_MAX_SHIFT take max(x - c, 0) instead, one more pass
    one_by_one = all(k == 1 for k in w.shape[2:]) and not (pads and any(pads)) \
        and (attrs.get("auto_pad") or "NOTSET") in ("NOTSET", "VALID") \
        and bool(np.all(np.abs(sh) <= _ONE_BY_ONE_MAX_SHIFT))
    c = -sh / a
    if one_by_one:
        b2 = b2 - w2.reshape(m, -1) @ c
    # c is subtracted from (1x1: compared with) the activations in float32 (float64
    # for float64 weights): a tiny scale (a pruned channel, a = 1e-39) makes it
    # overflow, and x - c must stay finite too
    limit = np.finfo(np.float64 if w.dtype == np.float64 else np.float32).max / 4
    if not _fits(w.dtype, w2, b2) or not np.all(np.abs(c) < limit):
        return None
    return w2.astype(w.dtype), b2.astype(w.dtype), one_by_one


def _composable(scale=None, shift=None) -> bool:
    """Whether a per-channel x * scale + shift may merge with the affine before it:
    (x a + b) c = x (a c) + b c needs finite constants (a c of inf turns the graph's
    inf into inf - inf = NaN). A c of 0 may still merge: it can only change the sign
    of a zero result, and pruned BatchNorm channels (scale 0) must keep their fold."""
    return (scale is None or bool(np.all(np.isfinite(scale)))) \
        and (shift is None or bool(np.all(np.isfinite(shift))))


def _fits(dtype, *arrays) -> bool:
    """Whether float64 `arrays` (folded weights and biases) stay finite in `dtype`."""
    with np.errstate(over="ignore", invalid="ignore"):
        return all(np.all(np.isfinite(np.asarray(x, np.float64)))
                   and np.all(np.isfinite(np.asarray(x).astype(dtype))) for x in arrays)


def _clip_kernel(affine, one_by_one, fallback):
    """The BN (+ chain) + Relu step once the scale went into the next Conv:
    max(x, c) (1x1 Conv next) or max(x - c, 0), c = -b/a per channel."""
    a64 = affine.a
    c64 = -affine.b / affine.a
    cache: dict = {}

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.ndim != 4 \
                or x.shape[1] != a64.shape[0]:
            (y,) = fallback(inputs, attrs, ctx)  # relu(a x + b), then undo the scale
            # per channel (axis 1) whatever the rank the run brings
            shape = (1, -1) + (1,) * max(0, y.ndim - 2)
            y = y / a64.reshape(shape).astype(y.dtype)
            if one_by_one:
                y += c64.reshape(shape).astype(y.dtype)
            return (y,)
        cdt = np.float64 if x.dtype == np.float64 else np.float32
        c = cache.get(cdt)
        if c is None:
            c = cache[cdt] = c64.astype(cdt).reshape(-1, 1, 1)
        compiled = _per_channel_kernels(x, cdt)
        if compiled is not None:  # one pass (numba) instead of numpy's one or two
            flat, y = _channels_flat(x)
            if one_by_one:
                compiled.clip_below(flat, c.reshape(-1), y.reshape(flat.shape))
            else:
                compiled.shift_relu(flat, c.reshape(-1), x.dtype.type(0),
                                    y.reshape(flat.shape))
            return (y,)
        if one_by_one:
            y = np.maximum(x, c, dtype=cdt)
        else:
            y = np.subtract(x, c, dtype=cdt)
            relu_op(y, out=y)
        return (y.astype(x.dtype, copy=False),)

    kernel.clip = (c64, one_by_one)  # for the oneDNN chains (rewrite 13)
    return kernel


def _conv_kernel(conv, w, b, relu, relu_input=False, input_shift=None):
    """A fused Conv step: `conv` (the registry's Conv kernel, or another op's) with the
    constant weights w and bias b, then Relu when `relu`; `relu_input`: of max(x, 0)
    (rewrite 12), or of max(x + input_shift(x.shape), 0) when that gives a per-channel
    vector (the producer's bias, moved too). The kernel carries `conv_parts` (conv,
    w, b, relu) and its weight cache for the later rewrites."""
    from ..ops import conv as conv_ops
    from ..ops.conv_depthwise import _rectified_input

    cache: dict = {}  # GEMM-ready weights of this node, built on first use

    def kernel(inputs, attrs, ctx):
        shift = input_shift(np.shape(inputs[0])) if input_shift is not None else None
        if conv is conv_ops._conv_kernel and isinstance(inputs[0], np.ndarray):
            y = conv_ops.conv_nd(inputs[0], w, b, attrs, cache, relu=relu,
                                 relu_input=relu_input, input_shift=shift)
        else:
            x = _rectified_input(np.asarray(inputs[0]), shift) if relu_input \
                else inputs[0]
            (y,) = conv([x, w, b], attrs, ctx)
            if relu:
                y = _relu_inplace(y)
        return (y,)
    kernel.conv_parts = (conv, w, b, relu)
    kernel.relu_input, kernel.input_shift = relu_input, input_shift
    kernel.cache = cache
    return kernel


def _bias_into_pointwise_conv(steps, protected, Step):
    """A fused Conv (no Relu) read only by a fused unpadded 1x1 Conv: its bias moves
    into the 1x1 Conv's bias (rewrite 4a)."""
    from ..ops import conv as conv_ops

    users = _consumers(steps)
    out = list(steps)
    for k in range(len(out)):
        step = out[k]  # a 1x1 Conv may already carry a bias moved into it
        parts = getattr(step.kernel, "conv_parts", None)
        if parts is None or parts[0] is not conv_ops._conv_kernel or parts[2] is None \
                or parts[3] or len(step.outputs) != 1:
            continue
        j = _sole_reader(out, users, step.outputs[0], protected)
        after = getattr(out[j].kernel, "conv_parts", None) if j is not None else None
        if after is None or after[0] is not conv_ops._conv_kernel \
                or not _unpadded_pointwise(after[1], out[j].attrs):
            continue
        b1 = np.asarray(parts[2], np.float64).reshape(-1)
        w2 = np.asarray(after[1])
        m, cg = w2.shape[:2]
        nxt = out[j]
        group = int(nxt.attrs.get("group", 1) or 1)
        if b1.size != cg * group or m % group:
            continue
        # output channel i of group g reads input channels g*cg .. (g+1)*cg - 1
        moved = np.einsum("gmc,gc->gm", w2.astype(np.float64).reshape(group, m // group, cg),
                          b1.reshape(group, cg)).reshape(m)
        b2 = moved if after[2] is None else moved + np.asarray(after[2], np.float64)
        if not _fits(w2.dtype, b2):
            continue  # W b1 + b2 overflows w2's dtype (float16): the bias stays apart
        out[k] = Step(_conv_kernel(parts[0], parts[1], None, False), step.attrs,
                      step.inputs, step.outputs, step.node, (), False, step.ctrl)
        out[j] = Step(_conv_kernel(after[0], after[1], b2.astype(w2.dtype), after[3]),
                      nxt.attrs, nxt.inputs, nxt.outputs, nxt.node, (), False, nxt.ctrl)
    return out


def _unpadded_pointwise(w, attrs) -> bool:
    """A Conv whose kernel is all ones in size and that pads nothing: every output
    pixel is a weighted sum of one input pixel's channels (any stride, any group)."""
    mode = attrs.get("auto_pad") or "NOTSET"
    if isinstance(mode, bytes):
        mode = mode.decode()
    return w.ndim >= 3 and all(d == 1 for d in w.shape[2:]) \
        and mode in ("NOTSET", "VALID") \
        and all(int(v) == 0 for v in (attrs.get("pads") or ()))


def _fold_shuffles(steps, template, fed, graph_inputs, protected, Step):
    """Fused Conv -> Reshape (N, g, C/g, *sp) -> Transpose (0, 2, 1, ...) -> Reshape
    (N, C, *sp), a channel shuffle, becomes one step: the Conv writes its output with
    the channels already permuted (`conv_nd(shuffle=g)`), the three copies go away.
    Only Conv steps built by `_fuse` (constant weights, `conv_parts`) qualify; the
    target shapes are checked at run time, with the original steps as fallback."""
    users = _consumers(steps)
    removed: set[int] = set()
    replace: dict[int, object] = {}

    def sole(t, op):
        if t in protected or t < 0:
            return None
        u = users.get(t, [])
        if len(u) != 1 or u[0] in removed:
            return None
        s = steps[u[0]]
        if s.node.op_type != op or s.node.domain not in ("", "ai.onnx") \
                or len(s.outputs) != 1 or not s.inputs or s.inputs[0] != t \
                or t in s.inputs[1:]:
            return None
        return u[0]

    for k, step in enumerate(steps):
        parts = getattr(step.kernel, "conv_parts", None)
        if parts is None or len(step.outputs) != 1:
            continue
        r1 = sole(step.outputs[0], "Reshape")
        tr = sole(steps[r1].outputs[0], "Transpose") if r1 is not None else None
        r2 = sole(steps[tr].outputs[0], "Reshape") if tr is not None else None
        if r2 is None:
            continue
        s1, st, s2 = steps[r1], steps[tr], steps[r2]
        sh1 = _const(s1.inputs[1], template, fed, graph_inputs) if len(s1.inputs) == 2 else None
        sh2 = _const(s2.inputs[1], template, fed, graph_inputs) if len(s2.inputs) == 2 else None
        perm = st.attrs.get("perm")
        if sh1 is None or sh2 is None or sh1.ndim != 1 or sh2.ndim != 1 or perm is None \
                or s1.attrs.get("allowzero") or s2.attrs.get("allowzero"):
            continue
        rank = len(sh2)
        if rank < 3 or len(sh1) != rank + 1 \
                or list(perm) != [0, 2, 1] + list(range(3, rank + 1)):
            continue
        chain = [(s1.kernel, s1.attrs, template[s1.inputs[1]]),
                 (st.kernel, st.attrs, None), (s2.kernel, s2.attrs, template[s2.inputs[1]])]
        replace[k] = Step(_shuffled_conv_kernel(parts, [int(d) for d in sh1],
                                                [int(d) for d in sh2], chain),
                          step.attrs, step.inputs, s2.outputs, step.node, (), False)
        removed.update((r1, tr, r2))
    if not replace:
        return steps
    return [replace.get(k, s) for k, s in enumerate(steps) if k not in removed]


# Per-shape memos of fused steps are dropped when they reach this many entries: a
# model fed ever new input shapes (a dynamic axis) would otherwise grow them forever.
_PER_SHAPE_ENTRIES = 64


# what a memo's .get gives for a key it does not hold (None is a remembered answer)
_UNKNOWN = object()


def _remember(memo: dict, key, value):
    """memo[key] = value, bounded at _PER_SHAPE_ENTRIES keys (see ops.common.remember)."""
    return remember(memo, key, value, _PER_SHAPE_ENTRIES)


def _shuffle_group(y_shape, sh1, sh2) -> int:
    """The group g of the channel shuffle that the Reshape (sh1) -> Transpose ->
    Reshape (sh2) chain of `_fold_shuffles` makes of a Conv output of `y_shape`, or 0
    when the shapes do not fit that pattern (the chain then runs as written)."""
    def resolve(target, shape):
        out = [shape[i] if d == 0 and i < len(shape) else d for i, d in enumerate(target)]
        if out.count(-1) == 1:
            known = int(np.prod([d for d in out if d != -1]))
            out[out.index(-1)] = int(np.prod(shape)) // known if known else -1
        return out

    y_shape = list(y_shape)
    if len(y_shape) != len(sh2) or len(sh1) <= 1:
        return 0
    m, g1 = y_shape[1], sh1[1]
    if g1 > 1 and m % g1 == 0 \
            and resolve(sh1, y_shape) == [y_shape[0], g1, m // g1] + y_shape[2:] \
            and resolve(sh2, [y_shape[0], m // g1, g1] + y_shape[2:]) == y_shape:
        return g1
    return 0


def _shuffled_conv_kernel(parts, sh1, sh2, chain, bias_moved=False):
    """A fused Conv step followed by a channel shuffle (see `_fold_shuffles`).
    `bias_moved` (no Relu then): where the shuffle folds (`_shuffle_group` of the
    Conv's output shape, whichever path runs), the bias is left out, to be added by
    the reader (rewrite 12), which decides from the same shape."""
    from ..ops import conv as conv_ops

    conv, w, b, relu = parts
    plain = _conv_kernel(conv, w, None if bias_moved else b, relu)
    cache: dict = {}
    groups: dict = {}  # input shape -> shuffle g, or 0 when the shapes do not fit

    def shuffle_of(x, attrs):
        g = groups.get(x.shape)
        if g is None:
            g = 0
            if x.ndim == w.ndim:
                *_, out_sp = conv_ops._pool_geometry(x.shape[2:], list(w.shape[2:]), attrs)
                g = _shuffle_group([x.shape[0], w.shape[0]] + list(out_sp), sh1, sh2)
            _remember(groups, x.shape, g)
        return g

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if conv is conv_ops._conv_kernel and type(x) is np.ndarray \
                and x.dtype.kind == "f":
            g = shuffle_of(x, attrs)
            if g:
                return (conv_ops.conv_nd(x, w, None if bias_moved else b, attrs, cache,
                                         shuffle=g, relu=relu),)
        (y,) = plain(inputs, attrs, ctx)
        if bias_moved and b is not None and not _shuffle_group(np.shape(y), sh1, sh2):
            y = y + np.asarray(b, y.dtype).reshape((-1,) + (1,) * (np.ndim(y) - 2))
        for kern, kattrs, arg in chain:
            y = kern([y] if arg is None else [y, arg], kattrs, ctx)[0]
        return (y,)

    kernel.shuffled_parts = (parts, sh1, sh2, chain)
    kernel.bias_moved = bias_moved
    return kernel


def _fold_concats(graph, steps, protected, Step):
    """Concat on axis 1 of inputs some of which fused Conv steps (`conv_parts`, the
    registry Conv kernel) produce for it alone: the first of those Convs (in plan
    order) allocates the Concat's output (N, sum C, *sp) under the Concat's output
    slot and the others read that slot; each writes its result into its channel slice
    (`conv_nd(out=)`: the GEMM lands there, no copy). The Concat step reads the buffer
    as an extra input and copies in only the inputs not already in place. Channel
    counts come from the Conv weights, and for other inputs from the graph's static
    shapes; every piece is checked at run time and any mismatch (an unexpected shape
    or dtype) falls back to the ordinary concatenation of the inputs."""
    from ..ops import conv as conv_ops
    from ..ops import shape as shape_ops

    users = _consumers(steps)
    producer = {o: k for k, s in enumerate(steps) for o in s.outputs if o >= 0}
    replace: dict[int, object] = {}
    for k, step in enumerate(steps):
        if step.kernel is not shape_ops._concat or step.node.op_type != "Concat" \
                or len(step.outputs) != 1 or step.outputs[0] < 0:
            continue
        ins = list(step.inputs)
        if len(ins) < 2 or min(ins) < 0 or len(set(ins)) != len(ins):
            continue
        convs: dict[int, int] = {}  # input position -> producing step
        chans: list | None = []
        rank = None
        for pos, t in enumerate(ins):
            j = producer.get(t)
            parts = getattr(steps[j].kernel, "conv_parts", None) if j is not None else None
            if parts is not None and parts[0] is conv_ops._conv_kernel and j not in replace \
                    and t not in protected and users.get(t) == [k] \
                    and len(steps[j].outputs) == 1 and len(steps[j].inputs) == 1:
                convs[pos] = j
                chans.append(int(parts[1].shape[0]))
                rank = parts[1].ndim
            else:
                shape = graph.tensors[t].shape
                c = shape[1] if shape is not None and len(shape) > 1 else None
                if not isinstance(c, (int, np.integer)) or c < 0:
                    chans = None
                    break
                chans.append(int(c))
        axis = step.attrs.get("axis")
        if chans is None or not convs or isinstance(axis, (bool, np.bool_)) \
                or not isinstance(axis, (int, np.integer)) or axis not in (1, 1 - rank):
            continue
        offs = [sum(chans[:p]) for p in range(len(chans))]
        total = sum(chans)
        cat = step.outputs[0]
        first = min(convs.values())
        # Every piece a rectified Conv and only a MaxPool reading the result: the Relu
        # moves past the pool as in rewrite 8 (one pass over 4x fewer values)
        pool = _sole_reader(steps, users, cat, protected, "MaxPool") \
            if len(convs) == len(ins) else None
        if pool is not None and not all(steps[j].kernel.conv_parts[3]
                                        for j in convs.values()):
            pool = None
        if pool is not None:
            p = steps[pool]
            replace[pool] = Step(_maxpool_then_relu(p.kernel), p.attrs, p.inputs, p.outputs,
                                 p.node, (), False)
        for pos, j in convs.items():
            sj = steps[j]
            parts = sj.kernel.conv_parts
            if pool is not None:
                parts = parts[:3] + (False,)
            kern = _concat_conv_kernel(parts, offs[pos], total, j == first)
            if j == first:
                replace[j] = Step(kern, sj.attrs, sj.inputs, sj.outputs + (cat,), sj.node,
                                  (), False)
            else:
                replace[j] = Step(kern, sj.attrs, sj.inputs + (cat,), sj.outputs, sj.node,
                                  (), False)
        replace[k] = Step(_concat_into_kernel(step.kernel, len(ins), offs, chans),
                          step.attrs, step.inputs + (cat,), step.outputs, step.node, (),
                          False)
    if not replace:
        return steps
    return [replace.get(k, s) for k, s in enumerate(steps)]


def _concat_conv_kernel(parts, off, total, first):
    """A fused Conv writing into channels [off, off + M) of a Concat buffer (see
    `_fold_concats`); `first` allocates the buffer and returns it as a second output,
    the others read it as their second input. Falls back to a plain result (which the
    Concat then copies) when the buffer does not fit."""
    from ..ops import conv as conv_ops

    conv, w, b, relu = parts
    plain = _conv_kernel(conv, w, b, relu)
    m = w.shape[0]
    cache: dict = {}
    geometry: dict = {}  # (input shape, dtype) -> buffer shape, or None

    def buffer_shape(x, attrs):
        key = (x.shape, x.dtype)
        # one lookup: another thread's `_remember` may empty the dict between two
        found = geometry.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            shape = None
            if x.ndim == w.ndim and x.dtype in (np.float32, np.float64):
                *_, out_sp = conv_ops._pool_geometry(x.shape[2:], list(w.shape[2:]), attrs)
                if all(o is not None and o >= 0 for o in out_sp):
                    shape = (x.shape[0], total) + tuple(out_sp)
            return _remember(geometry, key, shape)
        return found

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        buf = None
        if type(x) is np.ndarray:
            shape = buffer_shape(x, attrs)
            if first:
                buf = np.empty(shape, x.dtype) if shape is not None else None
            else:
                buf = inputs[1]
                if type(buf) is not np.ndarray or buf.shape != shape or buf.dtype != x.dtype:
                    buf = None
        if buf is None:
            (y,) = plain(inputs[:1], attrs, ctx)
        else:
            y = conv_ops.conv_nd(x, w, b, attrs, cache, out=buf[:, off:off + m],
                                 relu=relu)
        return (y, buf) if first else (y,)

    return kernel


def _concat_into_kernel(concat, n_in, offs, chans):
    """The Concat of a folded group: inputs already in their slice of the buffer
    (its last input) stay, the others are copied in; the ordinary concatenation
    when anything does not fit."""
    def kernel(inputs, attrs, ctx):
        args, buf = inputs[:n_in], inputs[n_in]
        if type(buf) is np.ndarray:
            copies = []
            for a, off, c in zip(args, offs, chans):
                view = buf[:, off:off + c]
                if not isinstance(a, np.ndarray) or a.dtype != buf.dtype \
                        or a.shape != view.shape:
                    break
                if a.ctypes.data != view.ctypes.data or a.strides != view.strides:
                    copies.append((view, a))
            else:
                for view, a in copies:
                    np.copyto(view, a)
                return (buf,)
        return concat(args, attrs, ctx)

    return kernel


def _affine_kernel(affine, rank, relu, bn_kernel, bn_attrs, chain):
    """x * a + b per channel (+ Relu), in the input's float compute dtype.

    `chain` holds (kernel, attrs, args, position) of the absorbed steps, `args` with the
    constants captured and the running value at `position`. An input the fold does not
    cover (wrong rank, channel count or dtype) runs those steps one by one instead.
    """
    a64, b64 = affine.a, affine.b
    cache: dict = {}

    def unfused(inputs, ctx):
        y = bn_kernel(inputs, bn_attrs, ctx)[0]
        for kern, attrs, args, pos in chain:
            args = list(args)
            args[pos] = y
            y = kern(args, attrs, ctx)[0]
        return (y,)

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.ndim < 2 \
                or (rank is not None and x.ndim != rank) or x.shape[1] != a64.shape[0]:
            return unfused(inputs, ctx)
        cdt = np.float64 if x.dtype == np.float64 else np.float32
        key = (x.ndim, cdt)
        ab = cache.get(key)
        if ab is None:
            shape = (-1,) + (1,) * (x.ndim - 2)
            ab = cache[key] = (a64.astype(cdt).reshape(shape), b64.astype(cdt).reshape(shape))
        compiled = _per_channel_kernels(x, cdt)
        if compiled is not None:  # one pass (numba) instead of numpy's two or three
            flat, y = _channels_flat(x)
            compiled.affine(flat, ab[0].reshape(-1), ab[1].reshape(-1), relu,
                            x.dtype.type(0), y.reshape(flat.shape))
            return (y,)
        y = np.multiply(x, ab[0], dtype=cdt)
        y += ab[1]
        if relu:
            relu_op(y, out=y)
        return (y.astype(x.dtype, copy=False),)

    return kernel


def _per_channel_kernels(x, cdt):
    """ops/normalization_jit.py's kernels for x (float32/float64, not empty) when the JIT
    backend is numba, else None (numpy's passes)."""
    if x.dtype != cdt or x.size == 0 or type(x) is not np.ndarray:
        return None
    return jit.kernels("normalization")


def _channels_flat(x):
    """(x as C-contiguous (N, C, P), a new array of x's shape for the result)."""
    x = np.ascontiguousarray(x)
    return x.reshape(x.shape[0], x.shape[1], -1), np.empty_like(x)


def _relu_inplace(y):
    if isinstance(y, np.ndarray) and y.flags.writeable and y.dtype.kind == "f":
        relu_op(y, out=y)
        return y
    return np.maximum(y, 0)


def _relu_fused(producer):
    def kernel(inputs, attrs, ctx):
        outs = producer(inputs, attrs, ctx)
        y = outs[0]
        # only a fresh array (owning its data, not one of the inputs) is updated in place
        if isinstance(y, np.ndarray) and y.base is None and y.flags.writeable \
                and y.dtype.kind == "f" and not any(y is a for a in inputs):
            relu_op(y, out=y)
        else:
            y = np.maximum(y, np.zeros((), y.dtype))
        return (y,) + tuple(outs[1:])
    kernel.relu_after = producer
    return kernel


def _relu_past_maxpool(steps, protected, Step):
    """Fused Conv + Relu -> MaxPool becomes Conv -> MaxPool + Relu (see rewrite 8)."""
    users = _consumers(steps)
    out = list(steps)
    for k, step in enumerate(steps):
        parts = getattr(step.kernel, "conv_parts", None)
        if parts is None or not parts[3] or len(step.outputs) != 1:
            continue
        j = _sole_reader(steps, users, step.outputs[0], protected, "MaxPool")
        if j is None:
            continue
        pool = steps[j]
        conv, w, b, _ = parts
        out[k] = Step(_conv_kernel(conv, w, b, False), step.attrs, step.inputs,
                      step.outputs, step.node, (), False)
        out[j] = Step(_maxpool_then_relu(pool.kernel), pool.attrs, pool.inputs,
                      pool.outputs, pool.node, (), False)
    return out


def _maxpool_then_relu(maxpool):
    """MaxPool on a not yet rectified input, then Relu on its (smaller) output; Relu
    first, as written, when some window may cover padding only."""
    from ..ops import pool as pool_ops

    safe: dict = {}  # (input shape, attrs id) -> every window holds an input element

    def every_window_reads_input(shape, attrs):
        key = (shape, id(attrs))
        ok = safe.get(key)
        if ok is None:
            kernel, strides, dil, pb, _, out_sp = pool_ops._geometry(shape, attrs)
            ok = len(shape) >= 3 and all(d == 1 for d in dil) and all(
                o >= 1 and -p + k - 1 >= 0 and (o - 1) * s - p <= n - 1
                for n, k, s, p, o in zip(shape[2:], kernel, strides, pb, out_sp))
            _remember(safe, key, ok)
        return ok

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if type(x) is np.ndarray and x.dtype.kind == "f" \
                and every_window_reads_input(x.shape, attrs):
            (y,) = maxpool(inputs, attrs, ctx)
            return (_relu_inplace(y),)
        return maxpool([_relu_inplace(x)], attrs, ctx)

    return kernel


def _pointwise_conv_before_avgpool(steps, protected, Step):
    """AveragePool read only by a fused 1x1 Conv: the Conv's GEMM first, then the pool
    on its (usually fewer) channels, then bias and Relu (see rewrite 6)."""
    from ..ops import conv as conv_ops

    users = _consumers(steps)
    out = list(steps)
    for k, pool in enumerate(steps):
        if pool.node.op_type != "AveragePool" or pool.node.domain not in ("", "ai.onnx") \
                or len(pool.outputs) != 1 or len(pool.inputs) != 1:
            continue
        j = _sole_reader(steps, users, pool.outputs[0], protected)
        if j is None:
            continue
        conv = steps[j]
        parts = getattr(conv.kernel, "conv_parts", None)
        if parts is None or parts[0] is not conv_ops._conv_kernel:
            continue
        a, pa = conv.attrs, pool.attrs
        # averaging a per-channel constant (the bias) returns it unless padding counts
        if not _is_pointwise(parts[1], a) or not _bias_survives_average(pa):
            continue
        out[k] = Step(_pointwise_conv_weights_only(parts), a, pool.inputs, pool.outputs,
                      conv.node, (), False)
        out[j] = Step(_avgpool_bias_relu(pool.kernel, parts), pa, conv.inputs, conv.outputs,
                      pool.node, (), False)
    return out


def _pointwise_conv_weights_only(parts):
    """A fused 1x1 Conv without its bias and Relu (they follow the pool)."""
    from ..ops import conv as conv_ops

    conv, w, _, _ = parts
    cache: dict = {}

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if conv is conv_ops._conv_kernel and isinstance(x, np.ndarray):
            return (conv_ops.conv_nd(x, w, None, attrs, cache),)
        return conv([x, w], attrs, ctx)

    return kernel


def _avgpool_bias_relu(pool, parts):
    """AveragePool, then the moved Conv's bias (per channel) and Relu."""
    _, _, b, relu = parts
    biases: dict = {}  # (dtype, rank) -> the bias shaped to broadcast over channels

    def kernel(inputs, attrs, ctx):
        (y,) = pool(inputs, attrs, ctx)
        if b is not None:
            bias = biases.get((y.dtype, y.ndim))
            if bias is None:
                bias = biases[(y.dtype, y.ndim)] = np.asarray(b).astype(y.dtype).reshape(
                    (1, -1) + (1,) * (y.ndim - 2))
            if isinstance(y, np.ndarray) and y.flags.writeable and y.base is None:
                y += bias
            else:
                y = y + bias
        if relu:
            y = _relu_inplace(y)
        return (y,)

    return kernel


def _avgpool_before_pointwise_conv(steps, protected, Step):
    """A fused 1x1 Conv (no Relu) read only by a strided AveragePool: the pool first,
    then the Conv on the fewer pixels (see rewrite 6)."""
    from ..ops import conv as conv_ops

    users = _consumers(steps)
    out = list(steps)
    for k, conv in enumerate(steps):
        parts = getattr(conv.kernel, "conv_parts", None)
        if parts is None or parts[0] is not conv_ops._conv_kernel or parts[3] \
                or len(conv.outputs) != 1 or not _is_pointwise(parts[1], conv.attrs):
            continue
        j = _sole_reader(steps, users, conv.outputs[0], protected, "AveragePool")
        if j is None:
            continue
        pool = steps[j]
        if not _bias_survives_average(pool.attrs) \
                or np.prod([int(s) for s in (pool.attrs.get("strides") or (1,))]) < 2:
            continue
        out[k] = Step(pool.kernel, pool.attrs, conv.inputs, conv.outputs, pool.node, (),
                      False)
        out[j] = Step(conv.kernel, conv.attrs, pool.inputs, pool.outputs, conv.node, (),
                      False)
    return out


def _is_pointwise(w, attrs) -> bool:
    """A 1x1, stride-1, unpadded, ungrouped 2-D Conv."""
    return w.ndim == 4 and w.shape[2:] == (1, 1) and int(attrs.get("group", 1) or 1) == 1 \
        and all(int(v) == 1 for v in (attrs.get("strides") or ())) \
        and all(int(v) == 0 for v in (attrs.get("pads") or ()))


def _bias_survives_average(attrs) -> bool:
    """Whether this AveragePool maps a per-channel constant to itself: no window
    counts padding, and every window holds an input element (a window over padding
    only averages to 0, not to the constant)."""
    pads = [int(v) for v in (attrs.get("pads") or ())]
    kernel = [int(k) for k in (attrs.get("kernel_shape") or ())]
    if any(int(d) != 1 for d in (attrs.get("dilations") or ())) \
            or any(p > k - 1 for p, k in zip(pads, kernel + kernel)):
        return False
    return not int(attrs.get("count_include_pad", 0) or 0) or (
        not any(pads)
        and attrs.get("auto_pad", "NOTSET") in ("NOTSET", "VALID")
        and not int(attrs.get("ceil_mode", 0) or 0))


def _fuse_silu(steps, protected, Step, unchanged: set):
    """Rewrite 9 (see the module docstring): Sigmoid + Mul pairs become SiLU steps,
    where both steps are as compiled (`unchanged` holds their ids): a Mul that Relu
    fusion took over computes relu(x * sigmoid(x)), which SiLU alone is not."""
    users = _consumers(steps)
    replace: dict[int, object] = {}
    removed: set[int] = set()
    for k, step in enumerate(steps):
        node = step.node
        if node.op_type != "Sigmoid" or node.domain not in ("", "ai.onnx") \
                or len(step.inputs) != 1 or len(step.outputs) != 1:
            continue
        x, s = step.inputs[0], step.outputs[0]
        if x < 0 or x in protected or s in protected:
            continue
        readers = users.get(s, [])
        if len(readers) != 1:
            continue
        j = readers[0]
        mul = steps[j]
        if id(step) not in unchanged or id(mul) not in unchanged \
                or mul.node.op_type != "Mul" or mul.node.domain not in ("", "ai.onnx") \
                or sorted(mul.inputs) != sorted((x, s)) or len(mul.outputs) != 1 \
                or sorted(users.get(x, [])) != sorted((k, j)) or j in removed:
            continue
        replace[k] = Step(_silu_kernel(step.kernel, mul.kernel, mul.attrs,
                                       list(mul.inputs).index(s)),
                          step.attrs, (x,), mul.outputs, node, (), False)
        removed.add(j)
    if not replace:
        return steps
    return [replace.get(k, s) for k, s in enumerate(steps) if k not in removed]


_SILU_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _silu_kernel(sigmoid, mul, mul_attrs, gate):
    """One step for Mul(x, Sigmoid(x)); `gate` is the sigmoid's operand position."""
    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if type(x) is np.ndarray and x.dtype in _SILU_DTYPES:
            return (silu_op(x),)
        (g,) = sigmoid(inputs, attrs, ctx)
        return mul((x, g) if gate == 1 else (g, x), mul_attrs, ctx)
    return kernel


# Producers whose output is a new array private to the plan (or, for Add, one of its
# fresh operands written in place): a Gelu that alone reads it may overwrite it
_GELU_IN_PLACE_PRODUCERS = frozenset({"MatMul", "Gemm", "Conv", "Add"})


def _gelu_in_place(steps, protected, Step):
    """Rewrite 10 (see the module docstring): exact Gelu steps on a fresh output only
    they read compute in place."""
    users = _consumers(steps)
    producer = {t: s for s in steps for t in s.outputs}
    out = list(steps)
    for k, step in enumerate(steps):
        node = step.node
        if node.op_type != "Gelu" or node.domain not in ("", "ai.onnx") \
                or len(step.inputs) != 1 or len(step.outputs) != 1 \
                or step.attrs.get("approximate", "none") != "none":
            continue
        x = step.inputs[0]
        src = producer.get(x)
        if x < 0 or x in protected or users.get(x) != [k] or src is None \
                or src.node.op_type not in _GELU_IN_PLACE_PRODUCERS \
                or src.node.domain not in ("", "ai.onnx") or len(src.outputs) != 1 \
                or src.node.op_type == "Add" and len(src.inputs) != 2:
            continue
        out[k] = Step(_gelu_in_place_kernel(step.kernel), step.attrs, step.inputs,
                      step.outputs, node, (), False)
    return out


def _gelu_in_place_kernel(gelu):
    """Gelu over its float32 input's own memory; other inputs go to the Gelu kernel."""
    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if type(x) is np.ndarray and x.dtype == np.float32 and x.flags.c_contiguous \
                and x.flags.writeable:
            return (gelu_in_place(x),)
        return gelu(inputs, attrs, ctx)
    return kernel


def _residual_into_conv(steps, protected, Step):
    """Rewrite 11 (see the module docstring): Conv + residual Add (+ Relu) as one step
    writing into the shortcut."""
    from ..ops import conv as conv_ops

    users = _consumers(steps)
    producer = {t: k for k, s in enumerate(steps) for t in s.outputs}
    out, removed = list(steps), set()
    for k, step in enumerate(steps):
        fused = getattr(step.kernel, "add_into", None)
        if fused is None or step.node.op_type not in ("Add", "Sum") or len(step.inputs) != 2:
            continue
        pos, relu = fused
        t_conv, t_short = step.inputs[pos], step.inputs[1 - pos]
        j = producer.get(t_conv)
        parts = getattr(steps[j].kernel, "conv_parts", None) if j is not None else None
        src = producer.get(t_short)
        if parts is None or parts[0] is not conv_ops._conv_kernel or parts[3] \
                or j in removed or users.get(t_conv) != [k] or t_conv in protected \
                or t_short < 0 or t_short in protected or t_short in steps[j].inputs \
                or src is None or max(users.get(t_short, ())) != k \
                or steps[src].node.op_type not in _FRESH_PRODUCERS \
                or steps[src].node.domain not in ("", "ai.onnx") \
                or len(steps[src].outputs) != 1:
            continue
        conv = steps[j]
        out[k] = Step(_conv_residual_kernel(parts, relu, pos, step.kernel), conv.attrs,
                      tuple(conv.inputs) + (t_short,), step.outputs, conv.node, (), False)
        removed.add(j)
    return [s for k, s in enumerate(out) if k not in removed]


def _conv_residual_kernel(parts, relu, pos, add):
    """The fused Conv `parts` with the shortcut (its step's last input) added before the
    Relu: conv_nd sums into the shortcut's memory; other inputs run the Conv and then
    the Add step's own kernel (operand `pos` the Conv's output)."""
    from ..ops import conv as conv_ops

    conv, w, b, _ = parts
    plain = _conv_kernel(conv, w, b, False)
    cache = plain.cache

    def kernel(inputs, attrs, ctx):
        x, shortcut = inputs[0], inputs[-1]
        if type(x) is np.ndarray and type(shortcut) is np.ndarray \
                and x.dtype == shortcut.dtype and x.dtype in _RESIDUAL_DTYPES:
            return (conv_ops.conv_nd(x, w, b, attrs, cache, relu=relu, add=shortcut),)
        (y,) = plain(inputs[:-1], attrs, ctx)
        pair = [None, None]
        pair[pos], pair[1 - pos] = y, shortcut
        return add(pair, attrs, ctx)
    return kernel


_RESIDUAL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _relu_into_depthwise(steps, protected, Step):
    """A fused Conv + Relu, or one writing its output channel-shuffled (rewrite 5),
    read only by a fused 2-D depthwise Conv: the Relu moves into the depthwise Conv,
    which applies it as it reads its input (rewrite 12). Runs last: the depthwise step
    it makes keeps `conv_parts` for inspection but no earlier rewrite sees it."""
    from ..ops import conv as conv_ops

    users = _consumers(steps)
    out = list(steps)
    for k in range(len(out)):
        step = out[k]  # a depthwise Conv may already apply the Relu before it
        without_relu = _without_relu(step.kernel)
        if without_relu is None or len(step.outputs) != 1:
            continue
        j = _sole_reader(out, users, step.outputs[0], protected)
        after = getattr(out[j].kernel, "conv_parts", None) if j is not None else None
        if after is None or after[0] is not conv_ops._conv_kernel \
                or getattr(out[j].kernel, "relu_input", False) \
                or not _depthwise_2d(after[1], out[j].attrs):
            continue
        nxt = out[j]
        moved = _without_relu_and_bias(step.kernel)
        make, shift = moved if moved is not None else (without_relu, None)
        out[k] = Step(make(), step.attrs, step.inputs, step.outputs, step.node,
                      (), False, step.ctrl)
        out[j] = Step(_conv_kernel(*after, relu_input=True, input_shift=shift), nxt.attrs,
                      nxt.inputs, nxt.outputs, nxt.node, (), False, nxt.ctrl)
    return out


def _without_relu_and_bias(kernel):
    """For a fused Conv step's kernel (the registry's Conv, plain or writing its output
    channel-shuffled) that ends in a Relu and has a bias: (a function making the same
    kernel without its Relu and bias, shift(y_shape) -> the bias in the order of the
    output channels the reader sees, or None when the kernel added it itself); else
    None. The reader then convolves max(y + shift, 0): a grouped 1x1 conv with a bias
    copies its input under a row of ones (`conv._pointwise_with_ones_row`), one
    without multiplies it in place."""
    from ..ops import conv as conv_ops

    parts = getattr(kernel, "conv_parts", None)
    if parts is not None and parts[3] and parts[0] is conv_ops._conv_kernel \
            and parts[2] is not None:
        rectify = getattr(kernel, "relu_input", False)
        own_shift = getattr(kernel, "input_shift", None)
        bias = np.asarray(parts[2]).reshape(-1)
        return (lambda: _conv_kernel(parts[0], parts[1], None, False, rectify, own_shift),
                lambda y_shape: bias)
    shuffled = getattr(kernel, "shuffled_parts", None)
    if shuffled is not None and shuffled[0][3] and shuffled[0][0] is conv_ops._conv_kernel \
            and shuffled[0][2] is not None:
        parts, sh1, sh2, chain = shuffled
        bias = np.asarray(parts[2]).reshape(-1)
        per_shape: dict = {}  # reader input shape -> the shift, or None

        def shift(y_shape):
            y_shape = tuple(y_shape)
            if y_shape not in per_shape:
                g = _shuffle_group(y_shape, sh1, sh2)
                # channel i*(M/g) + k lands at k*g + i; with no g the kernel ran its
                # chain as written, with the bias
                _remember(per_shape, y_shape, np.ascontiguousarray(
                    bias.reshape(g, -1).T.reshape(-1)) if g else None)
            return per_shape[y_shape]

        return (lambda: _shuffled_conv_kernel(parts[:3] + (False,), sh1, sh2, chain,
                                              bias_moved=True), shift)
    return None


def _without_relu(kernel):
    """For a fused Conv step's kernel that ends in a Relu (plain, or writing its output
    channel-shuffled): a function making the same kernel without the Relu (still
    rectifying its input when it did); else None."""
    parts = getattr(kernel, "conv_parts", None)
    if parts is not None and parts[3]:
        rectify = getattr(kernel, "relu_input", False)
        own_shift = getattr(kernel, "input_shift", None)
        return lambda: _conv_kernel(parts[0], parts[1], parts[2], False, rectify, own_shift)
    shuffled = getattr(kernel, "shuffled_parts", None)
    if shuffled is not None and shuffled[0][3]:
        parts, sh1, sh2, chain = shuffled
        return lambda: _shuffled_conv_kernel(parts[:3] + (False,), sh1, sh2, chain)
    return None


def _depthwise_2d(w, attrs) -> bool:
    """Whether a Conv with weights w and these attributes is a 2-D depthwise conv with
    a kernel larger than one pixel (group == C == M)."""
    group = attrs.get("group", 1) or 1
    return w.ndim == 4 and w.shape[1] == 1 and int(group) == w.shape[0] > 1 \
        and w.shape[2:] != (1, 1)

