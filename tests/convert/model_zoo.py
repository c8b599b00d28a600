"""Real-model fixtures shared by tests/convert/test_light_models.py and
benchmarks/bench_inference.py: the onnx wheel's "light" models, their inputs, seeded
random-weight variants, and a small transformer encoder built with onnx.helper.

Imports onnx (test/benchmark code only; the package itself keeps onnx in convert/).
"""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def light_model_names() -> list[str]:
    """Names ("resnet50", ...) of the light models shipped in the onnx wheel."""
    paths = glob.glob(os.path.join(LIGHT_DIR, "light_*.onnx"))
    return sorted(os.path.basename(p)[len("light_"):-len(".onnx")] for p in paths)


def light_model_path(name: str) -> str:
    return os.path.join(LIGHT_DIR, f"light_{name}.onnx")


def light_reference_output(name: str) -> np.ndarray:
    """The stored reference output (`light_<name>_output_0.pb`)."""
    return numpy_helper.to_array(onnx.load_tensor(
        os.path.join(LIGHT_DIR, f"light_{name}_output_0.pb")))


def graph_feeds(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs that are not initializers (what a caller must feed)."""
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def light_input(info: onnx.ValueInfoProto) -> np.ndarray:
    """The input the onnx backend runner feeds light models.

    `onnx.backend.test.runner.Runner.generate_dummy_data(..., random=False)`: unknown
    dims become 1 and the float32 tensor is ``arange(n).reshape(shape) / n``.
    """
    shape = tuple(d.dim_value if d.HasField("dim_value") else 1
                  for d in info.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


# --------------------------------------------------------------------------------------
# Random-weight variants
# --------------------------------------------------------------------------------------


def _consumers(graph) -> dict[str, list[tuple[onnx.NodeProto, int]]]:
    users: dict[str, list] = {}
    for node in graph.node:
        for k, name in enumerate(node.input):
            users.setdefault(name, []).append((node, k))
    return users


def _random_weight(shape, role, rng) -> np.ndarray:
    """He-scaled normal weights for rank >= 2; for vectors a value fitting the role.

    Roles: ("BatchNormalization", 1|4) are scale and variance (kept in [0.5, 1.5]),
    but a BN closing a residual branch (feeding Add/Sum) gets a scale in [0.1, 0.3];
    a vector reaching a Mul (through Unsqueeze) is a scale as well; everything else
    (biases, BN mean, shifts) is N(0, 0.1).
    """
    shape = tuple(int(d) for d in shape)
    if len(shape) >= 2:
        fan_in = int(np.prod(shape[1:])) or 1
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    if role == ("residual", 1):
        # scale of a BN closing a residual branch: small, as with zero-init gamma, so
        # activations do not grow ~2x per block through deep residual stacks
        return rng.uniform(0.1, 0.3, shape).astype(np.float32)
    if role in (("BatchNormalization", 1), ("BatchNormalization", 4), ("Mul", 0),
                ("Mul", 1)):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return (rng.standard_normal(shape) * 0.1).astype(np.float32)


def random_weight_variant(model: onnx.ModelProto, seed: int = 0,
                          expose_logits: bool = True) -> onnx.ModelProto:
    """A copy of `model` whose constant-filled weights are seeded random initializers.

    Every ConstantOfShape node with a constant shape (how the light models produce
    their weights) and every float initializer of rank >= 1 whose elements are all
    equal is replaced by an initializer of the same shape (see `_random_weight`).
    With `expose_logits`, the input of a final Softmax becomes an extra graph output,
    so comparisons are not blunted by a saturated softmax.
    """
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    rng = np.random.default_rng(seed)
    inits = {i.name: i for i in g.initializer}
    users = _consumers(g)

    def role(name):
        for node, k in users.get(name, []):
            if node.op_type == "BatchNormalization" and k == 1 and any(
                    u.op_type in ("Add", "Sum") for u, _ in users.get(node.output[0], [])):
                return ("residual", 1)
            if node.op_type == "Unsqueeze":
                for nxt, j in users.get(node.output[0], []):
                    return (nxt.op_type, j)
            return (node.op_type, k)
        return None

    keep_nodes = []
    new_inits = []
    for node in g.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in inits:
            shape = numpy_helper.to_array(inits[node.input[0]])
            w = _random_weight(shape, role(node.output[0]), rng)
            new_inits.append(numpy_helper.from_array(w, node.output[0]))
            continue
        keep_nodes.append(node)
    replaced = []
    for i, init in enumerate(g.initializer):
        if init.data_type != TensorProto.FLOAT or len(init.dims) == 0:
            continue
        a = numpy_helper.to_array(init)
        if a.size > 1 and np.all(a == a.flat[0]):
            replaced.append((i, numpy_helper.from_array(
                _random_weight(a.shape, role(init.name), rng), init.name)))
    for i, t in replaced:
        g.initializer[i].CopyFrom(t)
    del g.node[:]
    g.node.extend(keep_nodes)
    g.initializer.extend(new_inits)
    if expose_logits:
        outs = {o.name: o for o in g.output}
        for node in g.node:
            if node.op_type == "Softmax" and node.output[0] in outs \
                    and node.input[0] not in outs:
                logits = onnx.ValueInfoProto()  # softmax keeps its input's type
                logits.CopyFrom(outs[node.output[0]])
                logits.name = node.input[0]
                g.output.append(logits)
    # drop initializers nobody reads any more (the shapes of removed ConstantOfShape)
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    kept = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    names = {t.name for t in kept}
    graph_inputs = [v for v in g.input if v.name not in names and v.name not in inits]
    del g.input[:]
    g.input.extend(graph_inputs)
    m.ir_version = max(m.ir_version, 4)  # initializers need not be listed as inputs
    return m


# --------------------------------------------------------------------------------------
# Transformer encoder
# --------------------------------------------------------------------------------------


def transformer_encoder(layers: int = 4, d_model: int = 256, heads: int = 4,
                        ffn: int = 1024, seq: int = 128, batch: int = 1, seed: int = 0,
                        activation: str = "Gelu", opset: int = 20) -> onnx.ModelProto:
    """A post-LayerNorm transformer encoder (MatMul/Add/Softmax/Gelu, random weights).

    Input ``x`` (batch, seq, d_model) float32, output ``y`` of the same shape.
    """
    rng = np.random.default_rng(seed)
    dh = d_model // heads
    nodes, inits = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def weight(name, shape):
        return const(name, (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32))

    def bias(name, n):
        return const(name, (rng.standard_normal(n) * 0.02).astype(np.float32))

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    split_shape = const("split_shape", np.array([batch, seq, heads, dh], np.int64))
    merge_shape = const("merge_shape", np.array([batch, seq, d_model], np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(dh), np.float32))
    h = "x"
    for i in range(layers):
        p = f"l{i}_"

        def proj(tag, src, n_in, n_out):
            mm = node("MatMul", [src, weight(p + tag + "_w", (n_in, n_out))], p + tag + "_mm")
            return node("Add", [mm, bias(p + tag + "_b", n_out)], p + tag)

        def heads_of(t, perm):
            r = node("Reshape", [t, split_shape], t + "_split")
            return node("Transpose", [r], t + "_heads", perm=perm)

        q = heads_of(proj("q", h, d_model, d_model), [0, 2, 1, 3])
        k = heads_of(proj("k", h, d_model, d_model), [0, 2, 3, 1])
        v = heads_of(proj("v", h, d_model, d_model), [0, 2, 1, 3])
        s = node("Mul", [node("MatMul", [q, k], p + "qk"), scale], p + "scores")
        a = node("Softmax", [s], p + "attn", axis=-1)
        ctx = node("MatMul", [a, v], p + "ctx")
        ctx = node("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], p + "ctx_m")
        o = proj("o", ctx, d_model, d_model)
        h1 = node("Add", [h, o], p + "res1")
        h1 = node("LayerNormalization", [h1, const(p + "ln1_g", np.ones(d_model, np.float32)),
                                         bias(p + "ln1_b", d_model)], p + "ln1", axis=-1,
                  epsilon=1e-5)
        f = proj("ff1", h1, d_model, ffn)
        f = node(activation, [f], p + "act")
        f = proj("ff2", f, ffn, d_model)
        h2 = node("Add", [h1, f], p + "res2")
        h = node("LayerNormalization", [h2, const(p + "ln2_g", np.ones(d_model, np.float32)),
                                        bias(p + "ln2_b", d_model)], p + "ln2", axis=-1,
                 epsilon=1e-5)
    nodes.append(helper.make_node("Identity", [h], ["y"], name="y"))
    graph = helper.make_graph(
        nodes, "transformer_encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, d_model])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, d_model])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def transformer_input(batch: int = 1, seq: int = 128, d_model: int = 256,
                      seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, seq, d_model)).astype(
        np.float32)
