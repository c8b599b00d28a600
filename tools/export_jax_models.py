"""Export small JAX / Flax (nnx) models to ONNX with jax2onnx, as it really writes them.

A test-corpus generator for onegraph's ONNX importer, beside the PyTorch, tf2onnx,
paddle2onnx and tree-model ones. jax2onnx traces a JAX callable to a jaxpr and writes
one ONNX pattern per JAX primitive (dot_general -> MatMul/Gemm/Einsum, scan and
while_loop -> Loop, cond -> If, scatter -> ScatterND, sort/top_k -> TopK, cumsum ->
CumSum, ...), so its graphs differ from the framework exporters' ones. The catalogue:

* flax.nnx models with seeded random weights: an MLP (GELU, dynamic batch), a CNN in
  NHWC (Conv, BatchNorm in inference with non-trivial running statistics, max and
  average pooling), the same CNN exported with inputs_as_nchw, a grouped / dilated /
  strided / transposed convolution block, a transformer encoder block (MultiHeadAttention
  with a causal mask, LayerNorm, GELU), RMSNorm / GroupNorm / LayerNorm, an Embed text
  model, nnx.RNN over LSTM and GRU cells, activations;
* JAX functions: a lax.scan RNN, lax.fori_loop / while_loop / cond / switch, einsum,
  cumulative ops, sort / argsort / top_k, gather-style indexing (take, take_along_axis,
  fancy and strided indexing), scatter-style updates (.at[].set/add/max/mul,
  segment_sum), where / clip / rounding, softmax / log_softmax / argmax / logsumexp,
  concat / stack / split, dynamic_slice and dynamic_update_slice with run-time starts,
  pad modes, reductions, integer arithmetic (floor division, remainder, bit ops),
  elementwise math (erf, log1p, expm1, atan2, pow), iota / one_hot / tril, float64
  models (enable_double_precision), lax.conv_general_dilated with asymmetric padding
  and reduce_window;
* more_models(): dot_product_attention, vmap, associative_scan, searchsorted / unique,
  float16, rfft / irfft, special functions, gathers in clip / fill / wrap modes, 1-D /
  3-D / transposed convolutions, SAME pooling, a KV-cache style fori_loop, a while_loop
  with a run-time trip count, rounding modes and float remainders, nnx LinearGeneral /
  Einsum / Embed.attend.

Each model is exported at opset 23 (jax2onnx's default) and the flax models also at
opset 18; models with a dynamic batch ('B') get a second input set at another batch.
JAX (jit on the CPU) computes the oracle; onnxruntime must agree with JAX within
ORT_AGREES (relative to the value's size) and exactly on integers and booleans for a
file to be kept; otherwise the model goes into index.json's failures with what went
wrong (jax2onnx's refusal, or onnxruntime's disagreement). Files:

    OUT/<name>__jax2onnx_op<opset>.onnx
    OUT/<stem>.in<k>.npy / <stem>.out<k>.npy         inputs, JAX's outputs
    OUT/<stem>.in<k>.alt.npy / <stem>.out<k>.alt.npy  a second batch (dynamic models)
    OUT/index.json  {"generator": versions, "models": {file: entry}, "failures": [...]}:
                    an entry gives name, opset, dynamic, ops, sizes, input/output names
                    and files, and onnxruntime's largest difference from JAX.

Run it (not by onegraph's tests) in its own venv:

    python3 -m venv /tmp/jaxvenv
    /tmp/jaxvenv/bin/pip install jax==0.10.2 jaxlib==0.10.2 flax==0.12.8 \\
        jax2onnx==0.17.1 onnx==1.23.2 onnxruntime==1.32.0 numpy
    /tmp/jaxvenv/bin/python tools/export_jax_models.py OUT_DIR [--only NAME ...]

The corpus in tests/convert/data/jax_exported/ was written this way. jax2onnx writes
the same bytes for the same model, inputs are seeded, so a rerun writes the same files.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
import onnx

from corpus_tool import kept_records, save_arrays, write_index  # tools/, this folder

warnings.filterwarnings("ignore")

OPSETS = (23,)           # every model
FLAX_OPSETS = (23, 18)   # the nnx models also at an older opset
BATCH, ALT_BATCH = 2, 5
# onnxruntime must agree with JAX within this, relative to the value's size
# (|ort - jax| <= ORT_AGREES * (1 + |jax|)), and exactly on integers, for a file to be kept
ORT_AGREES = 1e-4
HALF_AGREES = 5e-3   # the same for float16 outputs (JAX and onnxruntime round differently)
# JAX2ONNX_KEEP_FAILED=DIR saves the exports that fail the checks (with inputs and JAX's
# outputs) in DIR, to see what another runtime makes of them; they stay out of the index
KEEP_FAILED = os.environ.get("JAX2ONNX_KEEP_FAILED")


# ----------------------------------------------------------------------------------
# Catalogue
# ----------------------------------------------------------------------------------

def _normal(rng, *shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _set_bn_stats(bn, rng):
    """Running mean / variance and scale / bias away from the 0 / 1 defaults, so an
    inference BatchNorm really does something."""
    n = bn.mean.value.shape[0]
    bn.mean.value = _normal(rng, n, scale=0.5)
    bn.var.value = (0.5 + rng.random(n)).astype(np.float32)
    bn.scale.value = (0.5 + rng.random(n)).astype(np.float32)
    bn.bias.value = _normal(rng, n, scale=0.2)


def flax_models():
    """name -> (build() -> callable, inputs(rng, batch) -> arrays, dynamic, options)."""
    from flax import nnx
    import jax
    import jax.numpy as jnp

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(8, 32, rngs=rngs)
            self.l2 = nnx.Linear(32, 16, rngs=rngs)
            self.l3 = nnx.Linear(16, 4, rngs=rngs)

        def __call__(self, x):
            return self.l3(nnx.relu(self.l2(nnx.gelu(self.l1(x)))))

    class CNN(nnx.Module):
        def __init__(self, rngs):
            self.c1 = nnx.Conv(3, 8, (3, 3), rngs=rngs)
            self.bn1 = nnx.BatchNorm(8, use_running_average=True, rngs=rngs)
            self.c2 = nnx.Conv(8, 16, (3, 3), strides=2, padding="VALID", rngs=rngs)
            self.bn2 = nnx.BatchNorm(16, use_running_average=True, rngs=rngs)
            self.fc = nnx.Linear(16 * 2 * 2, 10, rngs=rngs)
            rng = np.random.default_rng(7)
            _set_bn_stats(self.bn1, rng)
            _set_bn_stats(self.bn2, rng)

        def __call__(self, x):                       # x: [B, 16, 16, 3] (NHWC)
            # window_shape by keyword: jax2onnx's max_pool patch takes one positional
            x = nnx.max_pool(nnx.relu(self.bn1(self.c1(x))), window_shape=(2, 2),
                             strides=(2, 2))
            x = nnx.avg_pool(nnx.relu(self.bn2(self.c2(x))), window_shape=(2, 2),
                             strides=(1, 1))
            return self.fc(x.reshape(x.shape[0], -1))

    class ConvBlock(nnx.Module):
        def __init__(self, rngs):
            self.grouped = nnx.Conv(8, 8, (3, 3), feature_group_count=8, rngs=rngs)
            self.dilated = nnx.Conv(8, 12, (3, 3), kernel_dilation=2, padding="SAME",
                                    rngs=rngs)
            self.strided = nnx.Conv(12, 12, (2, 3), strides=(2, 1), padding=((1, 0), (2, 1)),
                                    rngs=rngs)
            self.up = nnx.ConvTranspose(12, 6, (2, 2), strides=(2, 2), rngs=rngs)
            self.c1d = nnx.Conv(6, 4, 3, padding="CAUSAL", rngs=rngs)

        def __call__(self, x):                       # x: [B, 12, 12, 8]
            x = nnx.silu(self.grouped(x))
            x = nnx.elu(self.dilated(x))
            x = nnx.leaky_relu(self.strided(x), 0.1)
            x = self.up(x)
            b, h, w, c = x.shape
            return self.c1d(x.reshape(b, h * w, c))    # a causal 1-D conv over the pixels

    class Encoder(nnx.Module):
        def __init__(self, rngs):
            self.ln1 = nnx.LayerNorm(16, rngs=rngs)
            self.att = nnx.MultiHeadAttention(4, 16, decode=False, rngs=rngs)
            self.ln2 = nnx.LayerNorm(16, rngs=rngs)
            self.fc1 = nnx.Linear(16, 32, rngs=rngs)
            self.fc2 = nnx.Linear(32, 16, rngs=rngs)

        def __call__(self, x):                       # x: [B, 6, 16]
            mask = nnx.make_causal_mask(x[..., 0])
            h = self.ln1(x)
            x = x + self.att(h, h, h, mask=mask, deterministic=True)
            return x + self.fc2(nnx.gelu(self.fc1(self.ln2(x)), approximate=False))

    class Norms(nnx.Module):
        def __init__(self, rngs):
            self.rms = nnx.RMSNorm(12, rngs=rngs)
            self.gn = nnx.GroupNorm(12, num_groups=3, rngs=rngs)
            self.ln = nnx.LayerNorm(12, use_bias=False, epsilon=1e-3, rngs=rngs)
            rng = np.random.default_rng(8)
            self.gn.scale.value = (0.5 + rng.random(12)).astype(np.float32)
            self.gn.bias.value = _normal(rng, 12, scale=0.3)

        def __call__(self, x):                       # x: [B, 5, 12]
            return self.rms(x) + self.gn(x) * self.ln(x)

    class TextModel(nnx.Module):
        def __init__(self, rngs):
            self.emb = nnx.Embed(50, 16, rngs=rngs)
            self.fc = nnx.Linear(16, 3, rngs=rngs)

        def __call__(self, ids):                     # ids: [B, 7] int32
            h = self.emb(ids)
            keep = (ids > 0).astype(jnp.float32)[..., None]
            pooled = (h * keep).sum(1) / jnp.maximum(keep.sum(1), 1.0)
            return jax.nn.log_softmax(self.fc(pooled))

    class Recurrent(nnx.Module):
        def __init__(self, cell, rngs):
            self.rnn = nnx.RNN(cell(6, 10, rngs=rngs))
            self.fc = nnx.Linear(10, 2, rngs=rngs)

        def __call__(self, x):                       # x: [B, 5, 6]
            return self.fc(self.rnn(x))

    def scanned_cell(cell, lstm):
        # nnx.RNN itself does not trace under jax2onnx (recorded as a failure); the
        # same cell split into (graphdef, state) and merged inside the traced
        # function scans fine: lax.scan over the cell's __call__
        graphdef, state = nnx.split(cell(6, 10, rngs=nnx.Rngs(0)))
        head = nnx.split(nnx.Linear(10, 2, rngs=nnx.Rngs(1)))

        def run(x):                                  # x: [B, 5, 6]
            c, fc = nnx.merge(graphdef, state), nnx.merge(*head)
            z = jnp.zeros((x.shape[0], 10), jnp.float32)
            carry, ys = jax.lax.scan(lambda cr, xt: c(cr, xt), (z, z) if lstm else z,
                                     jnp.swapaxes(x, 0, 1))
            last = carry[1] if lstm else carry
            return fc(jnp.swapaxes(ys, 0, 1)), last
        return run

    class Activations(nnx.Module):
        def __init__(self, rngs):
            self.l = nnx.Linear(6, 6, rngs=rngs)

        def __call__(self, x):
            h = self.l(x)
            return jnp.stack([nnx.sigmoid(h), nnx.softplus(h), nnx.celu(h), nnx.selu(h),
                              nnx.hard_tanh(h), nnx.log_sigmoid(h), nnx.swish(h),
                              nnx.relu6(h * 4), nnx.hard_sigmoid(h), nnx.hard_swish(h),
                              nnx.gelu(h, approximate=True), nnx.tanh(h)], axis=1)

    def mk(cls, *a):
        return lambda: cls(*a, rngs=nnx.Rngs(0))

    return {
        "nnx_mlp": (mk(MLP), lambda r, b: [_normal(r, b, 8)], True, {}),
        "nnx_cnn_bn_pool": (mk(CNN), lambda r, b: [_normal(r, b, 16, 16, 3)], True, {}),
        "nnx_cnn_nchw_input": (mk(CNN), lambda r, b: [_normal(r, b, 16, 16, 3)], False,
                               {"inputs_as_nchw": [0]}),
        "nnx_conv_variants": (mk(ConvBlock), lambda r, b: [_normal(r, b, 12, 12, 8)], True,
                              {}),
        "nnx_transformer_encoder": (mk(Encoder), lambda r, b: [_normal(r, b, 6, 16)], True,
                                    {}),
        "nnx_norms": (mk(Norms), lambda r, b: [_normal(r, b, 5, 12, scale=2.0) + 1.0], True,
                      {}),
        "nnx_embed_text": (mk(TextModel),
                           lambda r, b: [r.integers(0, 50, (b, 7)).astype(np.int32)], True,
                           {}),
        "nnx_rnn_module_lstm": (mk(Recurrent, nnx.LSTMCell),
                                lambda r, b: [_normal(r, b, 5, 6)], False, {}),
        "nnx_lstm_cell_scan": (lambda: scanned_cell(nnx.LSTMCell, True),
                               lambda r, b: [_normal(r, b, 5, 6)], True, {}),
        "nnx_gru_cell_scan": (lambda: scanned_cell(nnx.GRUCell, False),
                              lambda r, b: [_normal(r, b, 5, 6)], True, {}),
        "nnx_activations": (mk(Activations), lambda r, b: [_normal(r, b, 6, scale=2.0)],
                            True, {}),
    }


def more_models():
    """More JAX functions and nnx layers: attention, vmap, associative_scan, searchsorted,
    unique, float16, FFT, special functions, out-of-range gathers, 1-D / 3-D and
    transposed convolutions, SAME average pooling, a KV-cache style loop, rounding and
    float remainders. name -> (build, inputs, dynamic, options) as in function_models."""
    from flax import nnx
    import jax
    import jax.numpy as jnp
    from jax import lax

    def attention(q, k, v):                          # [B, 5, 2, 4] each
        return (jax.nn.dot_product_attention(q, k, v, is_causal=True),
                jax.nn.dot_product_attention(q, k, v))

    def vmapped(x, y):                               # x: [B, 3], y: [B, 4]
        return jax.vmap(lambda a, b: jnp.outer(a, b).sum(0) * a.mean())(x, y)

    def assoc_scan(x):                               # x: [3, 7]
        return lax.associative_scan(jnp.add, x, axis=1), \
            lax.associative_scan(jnp.maximum, x, axis=0)

    edges = np.array([-1.5, -0.2, 0.0, 0.3, 1.1, 2.0], np.float32)

    def search_unique(x, ids):                       # x: [9], ids: [10] int32
        return (jnp.searchsorted(edges, x), jnp.searchsorted(edges, x, side="right"),
                jnp.unique(ids, size=6, fill_value=-1))

    w16 = _normal(np.random.default_rng(21), 6, 5, scale=0.4).astype(np.float16)

    def half(x):                                     # x: [B, 6] float16
        h = x @ w16
        return jax.nn.gelu(h), jax.nn.softmax(h, axis=-1), h.astype(jnp.float32).sum(-1)

    def half_elementwise(x):                         # x: [B, 6] float16
        h = x * w16[:, 0] + jnp.float16(0.25)
        return jax.nn.gelu(h), jax.nn.softmax(h, axis=-1), jnp.cumsum(h, axis=1), \
            h.astype(jnp.float32).sum(-1)

    def fft(x):                                      # x: [2, 8]
        f = jnp.fft.rfft(x, axis=-1)
        return jnp.real(f), jnp.imag(f)

    def fft_abs(x):                                  # x: [2, 8]
        return jnp.abs(jnp.fft.rfft(x, axis=-1))

    def fft_inverse(x):                              # x: [2, 8]
        return jnp.fft.irfft(jnp.fft.rfft(x, axis=-1) * 0.5, n=8)

    def special(x, y):                               # x in (-1, 1), y > 0
        return (lax.erf_inv(x), lax.lgamma(y), lax.digamma(y),
                jax.scipy.special.logit((x + 1) / 2), jax.scipy.special.xlogy(y, y))

    def gather_modes(x, idx):                        # x: [5, 3], idx: [4] int32, some out
        return (x.at[idx].get(mode="clip"), x.at[idx].get(mode="fill", fill_value=-7.0),
                jnp.take(x, idx, axis=0, mode="wrap"))

    k1 = _normal(np.random.default_rng(22), 4, 3, 3, scale=0.5)        # OIW
    k3 = _normal(np.random.default_rng(23), 2, 3, 2, 2, 2, scale=0.5)  # OIDHW
    kt = _normal(np.random.default_rng(24), 3, 3, 2, 3, scale=0.5)     # HWIO

    def convs(x1, x2):                               # [B, 3, 10], [B, 6, 6, 2] NHWC
        y1 = lax.conv_general_dilated(x1, k1, (2,), ((2, 1),), rhs_dilation=(2,))
        yt = lax.conv_transpose(x2, kt, (2, 2), "SAME",
                                dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return y1, yt

    def conv3d(x3):                                  # [2, 3, 4, 5, 6]
        return lax.conv_general_dilated(x3, k3, (1, 2, 1), "SAME")

    def pools(x):                                    # x: [B, 7, 7, 3] NHWC
        return (nnx.avg_pool(x, window_shape=(3, 3), strides=(2, 2), padding="SAME"),
                nnx.avg_pool(x, window_shape=(2, 2), strides=(1, 1), padding="SAME",
                             count_include_pad=False),
                nnx.max_pool(x, window_shape=(3, 2), strides=(2, 1), padding="SAME"),
                nnx.min_pool(x, window_shape=(2, 2), strides=(2, 2)))

    def kv_cache(x):                                 # x: [4, 3] rows written one by one
        def body(i, cache):
            row = lax.dynamic_slice(x, (i, 0), (1, 3)) * (i + 1).astype(jnp.float32)
            return lax.dynamic_update_slice(cache, row, (3 - i, 0))
        return lax.fori_loop(0, 4, body, jnp.zeros((4, 3), jnp.float32))

    def kv_cache_carry(x):                           # the same, x carried by the loop
        def body(i, state):
            cache, src = state
            row = lax.dynamic_slice(src, (i, 0), (1, 3)) * (i + 1).astype(jnp.float32)
            return lax.dynamic_update_slice(cache, row, (3 - i, 0)), src
        return lax.fori_loop(0, 4, body, (jnp.zeros((4, 3), jnp.float32), x))[0]

    def while_count(x, n):                           # n: int32 scalar trip count
        return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 0.5 + 1.0),
                              (jnp.int32(0), x))[1]

    def roundings(x, y):                             # x: halves and random, y != 0
        return jnp.round(x), jnp.trunc(x), jnp.remainder(x, y), jnp.floor_divide(x, y)

    def round_away(x):                               # halves away from zero
        return lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)

    def fmod(x, y):                                  # C's fmod: the sign of x
        return jnp.fmod(x, y)

    class Layers(nnx.Module):
        def __init__(self, rngs):
            self.lg = nnx.LinearGeneral((3, 4), 5, axis=(-2, -1), rngs=rngs)
            self.emb = nnx.Embed(7, 5, rngs=rngs)
            self.drop = nnx.Dropout(0.5, deterministic=True, rngs=rngs)
            self.ein = nnx.Einsum("bk,kn->bn", (5, 6), (6,), rngs=rngs)

        def __call__(self, x):                       # x: [B, 3, 4]
            h = self.drop(nnx.relu(self.lg(x)))
            return self.emb.attend(h), self.ein(h)

    fn = lambda f: (lambda: f)                     # noqa: E731 - a plain function
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.7], np.float32)
    return {
        "attention": (fn(attention), lambda r, b: [_normal(r, b, 5, 2, 4) for _ in range(3)],
                      True, {}),
        "vmapped": (fn(vmapped), lambda r, b: [_normal(r, b, 3), _normal(r, b, 4)], True, {}),
        "assoc_scan": (fn(assoc_scan), lambda r, b: [_normal(r, 3, 7)], False, {}),
        "search_unique": (fn(search_unique), lambda r, b: [
            np.concatenate([edges[:3], _normal(r, 6)]).astype(np.float32),
            r.integers(0, 4, 10).astype(np.int32)], False, {}),
        "float16": (fn(half), lambda r, b: [_normal(r, b, 6).astype(np.float16)], True, {}),
        "fft": (fn(fft), lambda r, b: [_normal(r, 2, 8)], False, {}),
        "fft_inverse": (fn(fft_inverse), lambda r, b: [_normal(r, 2, 8)], False, {}),
        "float16_elementwise": (fn(half_elementwise),
                                lambda r, b: [_normal(r, b, 6).astype(np.float16)], True, {}),
        "special": (fn(special), lambda r, b: [np.tanh(_normal(r, 2, 5)),
                                               0.2 + 3 * r.random((2, 5)).astype(np.float32)],
                    False, {}),
        "gather_modes": (fn(gather_modes), lambda r, b: [_normal(r, 5, 3),
                                                         np.array([0, 7, -1, 3], np.int32)],
                         False, {}),
        "convs": (fn(convs), lambda r, b: [_normal(r, b, 3, 10), _normal(r, b, 6, 6, 2)], True,
                  {}),
        "conv3d": (fn(conv3d), lambda r, b: [_normal(r, 2, 3, 4, 5, 6)], False, {}),
        "fft_abs": (fn(fft_abs), lambda r, b: [_normal(r, 2, 8)], False, {}),
        "pools": (fn(pools), lambda r, b: [_normal(r, b, 7, 7, 3)], True, {}),
        "kv_cache": (fn(kv_cache), lambda r, b: [_normal(r, 4, 3)], False, {}),
        "kv_cache_carry": (fn(kv_cache_carry), lambda r, b: [_normal(r, 4, 3)], False, {}),
        "while_count": (fn(while_count), lambda r, b: [_normal(r, 2, 3), np.int32(4)], False,
                        {}),
        "roundings": (fn(roundings), lambda r, b: [np.concatenate([halves, _normal(r, 4) * 3]),
                                                   np.array([2, -2, 1.5, -1.5, 3, -3, 0.7,
                                                             -0.7, 2, -2, 1.3, -1.3],
                                                            np.float32)], False, {}),
        "round_away": (fn(round_away), lambda r, b: [halves], False, {}),
        "fmod": (fn(fmod), lambda r, b: [
            np.concatenate([halves, _normal(r, 4) * 3]),
            np.array([2, -2, 1.5, -1.5, 3, -3, 0.7, -0.7, 2, -2, 1.3, -1.3], np.float32)],
            False, {}),
        "nnx_layers": ((lambda: Layers(rngs=nnx.Rngs(0))), lambda r, b: [_normal(r, b, 3, 4)],
                       True, {}),
    }


def function_models():
    """name -> (build() -> callable, inputs(rng, batch) -> arrays, dynamic, options)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    w_rnn = _normal(np.random.default_rng(11), 4, 8, scale=0.5)
    u_rnn = _normal(np.random.default_rng(12), 8, 8, scale=0.3)

    def scan_rnn(x):                                 # x: [B, T, 4]
        def step(h, xt):
            h = jnp.tanh(xt @ w_rnn + h @ u_rnn)
            return h, h.sum(-1)
        h0 = jnp.zeros((x.shape[0], 8), jnp.float32)
        h, ys = lax.scan(step, h0, jnp.swapaxes(x, 0, 1))
        return h, ys.T

    def loops(x):                                    # x: [3, 4]
        a = lax.fori_loop(0, 5, lambda i, v: v * 0.9 + jnp.sin(v) * i, x)
        b = lax.while_loop(lambda s: s[1] < 7, lambda s: (s[0] * 1.1 + 0.1, s[1] + 1),
                           (x, jnp.int32(0)))[0]
        return a, b

    def cond(x):                                     # x: [2, 5]
        return lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: jnp.exp(-v), x)

    def switch(x, k):                                # x: [2, 5], k: int32 scalar
        return lax.switch(k, [jnp.sin, jnp.cos, lambda v: v * v], x)

    def einsums(a, b, c):                            # a: [2,3,4], b: [2,4,5], c: [3,4]
        return (jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("bij,ij->bi", a, c),
                jnp.einsum("bij->bji", a), jnp.einsum("ij,kj->ik", c, c),
                jnp.einsum("bij,bij->b", a, a))

    def cumulative(x):                               # x: [3, 6]
        return (jnp.cumsum(x, axis=1), jnp.cumsum(x[:, ::-1], axis=1)[:, ::-1],
                lax.cummax(x, axis=1),
                lax.cummin(x, axis=0), jnp.cumsum(x.astype(jnp.int32), axis=0),
                lax.cumsum(x, 0, reverse=True))

    def cumprod(x):                                  # x: [3, 6]
        return jnp.cumprod(1.0 + 0.1 * x, axis=0)

    def sorting(x):                                  # x: [4, 9]
        vals, idx = lax.top_k(x, 3)
        return jnp.sort(x, axis=1), jnp.argsort(x, axis=0), vals, idx, \
            -jnp.sort(-x, axis=0)

    def sort_descending(x):                          # x: [4, 9]
        return jnp.sort(x, axis=1, descending=True)

    def gathers(x, idx):                             # x: [6, 5], idx: [4] int32 in [-6, 6)
        return (x[idx], jnp.take(x, idx % 5, axis=1), x[:, ::2], x[::-1, 1:4],
                jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1),
                x[idx[:2, None], idx[None, 2:] % 5], x[jnp.array([0, 2]), 3])

    def scatters(x, idx, v):                         # x: [6, 3], idx: [4] int32, v: [4, 3]
        seg = jax.ops.segment_sum(v, idx % 3, num_segments=3)
        return (x.at[idx].set(v), x.at[idx].add(v), x.at[idx].max(v), x.at[idx].mul(v),
                x.at[1:3, 0].set(-1.0), seg)

    def elementwise(x, y):                           # x, y: [B, 7]
        return (jnp.where(x > y, x, y * 2.0), jnp.clip(x, -0.5, 0.7), jnp.round(x * 3),
                jnp.floor(x * 3), jnp.ceil(x * 3), jnp.sign(x), jnp.abs(y),
                jnp.maximum(x, y), jnp.minimum(x, 0.1), jnp.nan_to_num(jnp.log(x)),
                jnp.isfinite(jnp.log(x)))

    def softmaxes(x):                                # x: [B, 4, 8]
        return (jax.nn.softmax(x, axis=-1), jax.nn.log_softmax(x, axis=1),
                jnp.argmax(x, axis=-1), jnp.argmin(x, axis=1),
                jax.nn.logsumexp(x, axis=(1, 2)), jax.nn.standardize(x, axis=-1))

    def shapes(x):                                   # x: [B, 6, 4]
        a, b, c = jnp.split(x, [1, 4], axis=1)
        return (jnp.concatenate([c, a, x[:, :1]], axis=1), jnp.stack([a, a * 2], axis=-1),
                b.reshape(b.shape[0], -1), jnp.transpose(x, (2, 0, 1)),
                jnp.expand_dims(x[:, 0], 1).squeeze(1), jnp.tile(a, (1, 2, 1)),
                jnp.repeat(a, 2, axis=2), jnp.broadcast_to(a[:, :, :1], a.shape))

    def dynamic_slices(x, i, j):                     # x: [6, 8], i, j: int32 scalars
        part = lax.dynamic_slice(x, (i, j), (3, 4))
        upd = lax.dynamic_update_slice(x, jnp.ones((2, 3), jnp.float32) * 9.0, (j, i))
        return part, upd, lax.dynamic_slice_in_dim(x, i * 2, 2, axis=1)

    def pads(x):                                     # x: [3, 4]
        return jnp.pad(x, ((1, 2), (0, 3))), jnp.pad(x, ((0, 1), (2, 0)), constant_values=-3.5)

    def pad_reflect_edge(x):                         # x: [3, 4]
        return jnp.pad(x, 1, mode="reflect"), jnp.pad(x, ((2, 0), (1, 1)), mode="edge")

    def pad_symmetric_wrap(x):                       # x: [3, 4]
        return (jnp.pad(x, ((3, 2), (1, 2)), mode="symmetric"),
                jnp.pad(x, ((0, 0), (5, 1)), mode="wrap"))

    def pad_negative(x):                             # x: [3, 4]
        return lax.pad(x, 0.0, ((1, -1, 0), (-1, 2, 0)))

    def pad_interior(x):                             # x: [3, 4]
        return lax.pad(x, 0.0, ((1, -1, 1), (0, 0, 2)))

    def reductions(x):                               # x: [B, 5, 6]
        return (x.sum(axis=(0, 2)), x.mean(axis=1), x.max(axis=-1), x.min(),
                jnp.prod(1.0 + 0.1 * x, axis=2), x.var(axis=1), x.std(axis=(1, 2)),
                (x > 0).any(axis=1), (x > -2).all(axis=2), jnp.linalg.norm(x, axis=-1))

    def integers(a, b):                              # a, b: [B, 6] int32, b != 0
        return (a // b, a % b, lax.rem(a, b), a & b, a | b, a ^ b, ~a, jnp.abs(a), -a,
                a * b + 3, jnp.maximum(a, b), (a < b) & (a != 0), (a > b) | ~(a == b),
                jnp.sign(b), a.astype(jnp.float32) / b)

    def shifts(a):                                   # a: [2, 6] int32
        return a << 2, a >> 1, lax.shift_right_logical(a, 1)

    def math(x, y):                                  # x: [B, 6] any sign, y: [B, 6] > 0
        return (jax.scipy.special.erf(x), jnp.log1p(y), jnp.expm1(x), jnp.arctan2(x, y),
                jnp.power(y, x), jnp.sqrt(y), lax.rsqrt(y), jnp.tan(x * 0.3),
                jnp.arcsin(jnp.tanh(x)), jnp.cosh(x), jnp.reciprocal(y),
                jax.nn.sigmoid(x), jnp.exp2(x), jnp.log10(y), y ** 3, jnp.square(x))

    def one_hot(ids):                                # ids: [4] int32, some negative
        return jax.nn.one_hot(ids, 5)

    def iota_onehot(ids, x):                         # ids: [B, 5] int32, x: [5, 5]
        return (jax.nn.one_hot(ids, 7), jnp.tril(x), jnp.triu(x, 1), jnp.eye(4, 6, 1),
                jnp.arange(ids.shape[1]) * ids, jnp.linspace(0.0, 1.0, 6) + x[0, 0])

    def float64(x, y):                               # x, y: float64
        return (x @ y.T, jnp.exp(x) / jnp.sum(jnp.exp(x), axis=1, keepdims=True),
                jnp.cumsum(x, axis=0), jnp.sqrt(jnp.abs(x)) + 1e-12)

    k_conv = _normal(np.random.default_rng(13), 5, 3, 3, 2, scale=0.4)  # OIHW

    def lax_conv_pool(x):                            # x: [B, 3, 9, 9] (NCHW)
        y = lax.conv_general_dilated(x, k_conv, (2, 1), ((1, 2), (0, 1)),
                                     lhs_dilation=(1, 1), rhs_dilation=(1, 2),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        m = lax.reduce_window(y[0], -jnp.inf, lax.max, (1, 2, 2), (1, 2, 1), "VALID")
        s = lax.reduce_window(y, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1),
                              ((0, 0), (0, 0), (1, 1), (1, 1)))
        return m, s

    def reduce_window_4d(x):                         # x: [2, 3, 6, 5]
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 1), "VALID")

    def image_resize(x):                             # x: [B, 6, 6, 2]
        b = x.shape[0]
        return (jax.image.resize(x, (b, 12, 9, 2), "linear", antialias=False),
                jax.image.resize(x, (b, 4, 6, 2), "linear", antialias=False))

    def resize_cubic(x):                             # x: [2, 6, 6, 2]
        return jax.image.resize(x, (2, 9, 12, 2), "cubic", antialias=False)

    def resize_nearest(x):                           # x: [2, 6, 6, 2]
        return jax.image.resize(x, (2, 3, 12, 2), "nearest", antialias=False)

    r32 = np.int32

    def ints(lo, hi, *shape):
        return lambda r: r.integers(lo, hi, shape).astype(r32)

    def nz(r, b):
        v = r.integers(-20, 20, (b, 6)).astype(r32)
        return np.where(v == 0, 3, v).astype(r32)

    fn = lambda f: (lambda: f)                     # noqa: E731 - a plain function
    return {
        "scan_rnn": (fn(scan_rnn), lambda r, b: [_normal(r, b, 7, 4)], True, {}),
        "loops": (fn(loops), lambda r, b: [_normal(r, 3, 4)], False, {}),
        "cond_true": (fn(cond), lambda r, b: [np.abs(_normal(r, 2, 5))], False, {}),
        "cond_false": (fn(cond), lambda r, b: [-np.abs(_normal(r, 2, 5))], False, {}),
        "switch": (fn(switch), lambda r, b: [_normal(r, 2, 5), np.int32(1)], False, {}),

        "einsums": (fn(einsums), lambda r, b: [_normal(r, 2, 3, 4), _normal(r, 2, 4, 5),
                                               _normal(r, 3, 4)], False, {}),
        "cumulative": (fn(cumulative), lambda r, b: [_normal(r, 3, 6, scale=3.0)], False, {}),
        "cumprod": (fn(cumprod), lambda r, b: [_normal(r, 3, 6)], False, {}),
        "sort_descending": (fn(sort_descending), lambda r, b: [_normal(r, 4, 9)], False, {}),
        "pad_interior": (fn(pad_interior), lambda r, b: [_normal(r, 3, 4)], False, {}),
        "pad_negative": (fn(pad_negative), lambda r, b: [_normal(r, 3, 4)], False, {}),
        "pad_reflect_edge": (fn(pad_reflect_edge), lambda r, b: [_normal(r, 3, 4)], False,
                             {}),
        "pad_symmetric_wrap": (fn(pad_symmetric_wrap), lambda r, b: [_normal(r, 3, 4)],
                               False, {}),
        "resize_nearest": (fn(resize_nearest), lambda r, b: [_normal(r, 2, 6, 6, 2)], False,
                           {}),
        "resize_cubic": (fn(resize_cubic), lambda r, b: [_normal(r, 2, 6, 6, 2)], False, {}),
        "shifts": (fn(shifts), lambda r, b: [ints(-50, 50, 2, 6)(r)], False, {}),
        "one_hot_negative": (fn(one_hot), lambda r, b: [np.array([0, -1, 4, -5], r32)],
                             False, {}),
        "reduce_window_4d": (fn(reduce_window_4d), lambda r, b: [_normal(r, 2, 3, 6, 5)],
                             False, {}),
        "sorting": (fn(sorting), lambda r, b: [r.permutation(36).reshape(4, 9)
                                               .astype(np.float32)], False, {}),
        "gathers": (fn(gathers), lambda r, b: [_normal(r, 6, 5),
                                               np.array([0, -1, 3, 5], r32)], False, {}),
        "scatters": (fn(scatters), lambda r, b: [_normal(r, 6, 3),
                                                 np.array([4, 0, -2, 2], r32),
                                                 _normal(r, 4, 3)], False, {}),
        "elementwise": (fn(elementwise), lambda r, b: [_normal(r, b, 7), _normal(r, b, 7)],
                        True, {}),
        "softmaxes": (fn(softmaxes), lambda r, b: [_normal(r, b, 4, 8, scale=3.0)], True,
                      {}),
        "shapes": (fn(shapes), lambda r, b: [_normal(r, b, 6, 4)], True, {}),
        "dynamic_slices": (fn(dynamic_slices), lambda r, b: [_normal(r, 6, 8), r32(2),
                                                             r32(3)], False, {}),
        "dynamic_slices_clamped": (fn(dynamic_slices), lambda r, b: [_normal(r, 6, 8),
                                                                     r32(7), r32(-1)],
                                   False, {}),
        "pads": (fn(pads), lambda r, b: [_normal(r, 3, 4)], False, {}),
        "reductions": (fn(reductions), lambda r, b: [_normal(r, b, 5, 6)], True, {}),
        "integers": (fn(integers), lambda r, b: [ints(-50, 50, b, 6)(r), nz(r, b)], False,
                     {}),
        "integers_dyn": (fn(integers), lambda r, b: [ints(-50, 50, b, 6)(r), nz(r, b)],
                         True, {}),
        "math": (fn(math), lambda r, b: [_normal(r, b, 6), 0.1 + r.random((b, 6))
                                         .astype(np.float32) * 3], False, {}),
        "math_dyn": (fn(math), lambda r, b: [_normal(r, b, 6), 0.1 + r.random((b, 6))
                                             .astype(np.float32) * 3], True, {}),
        "iota_onehot": (fn(iota_onehot), lambda r, b: [ints(0, 8, b, 5)(r), _normal(r, 5, 5)],
                        True, {}),
        "float64": (fn(float64), lambda r, b: [r.standard_normal((b, 4)),
                                               r.standard_normal((3, 4))], True,
                    {"enable_double_precision": True}),
        "lax_conv_pool": (fn(lax_conv_pool), lambda r, b: [_normal(r, b, 3, 9, 9)], True, {}),
        "image_resize": (fn(image_resize), lambda r, b: [_normal(r, b, 6, 6, 2)], False, {}),
        "image_resize_dyn": (fn(image_resize), lambda r, b: [_normal(r, b, 6, 6, 2)], True,
                             {}),
    }


# whose fault each expected failure is, copied into its failure record (onegraph runs
# every kept-aside export the way onnxruntime does: JAX2ONNX_KEEP_FAILED)
NOTES = {
    "nnx_rnn_module_lstm": "jax2onnx cannot trace nnx.RNN (its Rngs are mutated across "
                           "trace levels); the same cells scanned by hand export fine "
                           "(nnx_lstm_cell_scan, nnx_gru_cell_scan)",
    "switch": "jax2onnx crashes on lax.switch with a run-time index",
    "cumprod": "jax2onnx writes a CumProd node, which ONNX has no op for at opset 23",
    "sort_descending": "jax2onnx's jnp.sort patch takes no descending argument",
    "pad_interior": "jax2onnx refuses lax.pad with interior padding",
    "pad_reflect_edge": "jax2onnx's reflect/edge padding writes a Reshape whose declared "
                        "shape contradicts ONNX's inference; onnxruntime refuses the model "
                        "and onegraph's Session raises a ShapeError at that Reshape",
    "shifts": "jax2onnx writes BitShift over int32, which ONNX's BitShift does not take "
              "(unsigned only); onnxruntime and onegraph refuse the model",
    "one_hot_negative": "JAX's one_hot gives a zero row for a negative id; ONNX OneHot "
                        "counts a negative index from the end and jax2onnx writes it "
                        "unmasked; onegraph gives onnxruntime's (ONNX's) result",
    "dynamic_slices_clamped": "JAX clamps dynamic_slice starts so that the slice keeps its "
                              "size; jax2onnx writes Slice with the start as given, which "
                              "ONNX clamps to the end (a shorter slice); onegraph gives "
                              "onnxruntime's (ONNX's) result",
    "resize_nearest": "JAX's nearest downsampling picks the other pixel of each pair than "
                      "the Resize jax2onnx writes (half_pixel, round_prefer_floor); "
                      "onegraph gives onnxruntime's result",
    "resize_cubic": "jax2onnx writes Resize cubic (a = -0.5, half_pixel) without "
                    "exclude_outside, while JAX renormalizes the kernel at the border; "
                    "onegraph gives onnxruntime's result",
    "integers_dyn": "jax2onnx cannot trace this with a symbolic batch",
    "assoc_scan": "jax2onnx lowers lax.associative_scan to lax.pad with interior padding, "
                  "which it refuses",
    "float16": "jax2onnx writes a float16 Gemm with a float32 bias C: an invalid model "
               "that onnxruntime refuses (float16_elementwise, without the matmul, is kept)",
    "fft_inverse": "jax2onnx refuses irfft ('IRFFT requires complex64 or complex128 "
                   "input')",
    "fft_abs": "jax2onnx keeps rfft's complex output as a trailing axis of 2 and writes "
               "jnp.abs over it as a plain Abs: [2, 5, 2] where JAX gives [2, 5]; "
               "onegraph gives onnxruntime's result",
    "conv3d": "jax2onnx refuses a 3-D lax.conv_general_dilated ('Unsupported conv layouts')",
    "round_away": "jax2onnx writes lax.round(AWAY_FROM_ZERO) as ONNX Round, which rounds "
                  "halves to even (2.5 -> 2, JAX 3); onegraph gives onnxruntime's result",
    "kv_cache": "jax2onnx's fori_loop cannot close over a traced input (it calls "
                "np.asarray on it); the same loop with the input carried exports "
                "(kv_cache_carry)",
    "math_dyn": "jax2onnx cannot trace this with a symbolic batch",
    "image_resize_dyn": "jax2onnx cannot trace jax.image.resize with a symbolic batch",
}


# ----------------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------------

def _spec(a, dynamic):
    """jax2onnx's input spec for the array a: its shape with a symbolic batch 'B' on
    axis 0 when dynamic (and a is not a scalar), with a's dtype."""
    import jax
    shape = tuple(a.shape)
    if dynamic and shape:
        shape = ("B",) + shape[1:]
    return jax.ShapeDtypeStruct(shape, a.dtype)


def _first_line(e):
    msg = str(e).strip().splitlines()[0][:240] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}"


def _jax_outputs(fn, arrays, double):
    import jax
    jax.config.update("jax_enable_x64", bool(double))
    out = jax.jit(fn)(*arrays)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(o) for o in out]


_NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
       onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
       onnx.TensorProto.BOOL: np.bool_, onnx.TensorProto.FLOAT16: np.float16}


def _ort_vs_jax(proto, feeds_list, wants):  # noqa: C901 - one check after another
    """(max abs error, None) when onnxruntime gives JAX's outputs on every input set,
    else (error so far, what differs); the error is None where onnxruntime refuses the
    model or fails to run it."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    try:
        sess = ort.InferenceSession(proto.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime refuses the model
        return None, "onnxruntime refuses the model: " + _first_line(e)
    err = 0.0
    names = [o.name for o in proto.graph.output]
    for feeds, want in zip(feeds_list, wants):
        # float16 inputs: every output inherits their rounding
        half = any(np.asarray(v).dtype == np.float16 for v in feeds.values())
        try:
            got = sess.run(names, feeds)
        except Exception as e:  # noqa: BLE001
            return None, "onnxruntime fails: " + _first_line(e)
        for n, g, w in zip(names, got, want):
            if g.shape != w.shape:
                return err, f"{n}: shape {g.shape} != JAX's {w.shape}"
            if w.dtype.kind == "f":
                if np.any(np.isnan(g) != np.isnan(w)):
                    return err, f"{n}: NaN at other places than JAX's"
                if w.size:
                    d = np.abs(g.astype(np.float64) - w)
                    d = np.where(np.isnan(d), 0.0, d)
                    err = max(err, float(d.max()))
                    worst = float((d / (1.0 + np.abs(np.nan_to_num(w)))).max())
                    if worst > (HALF_AGREES if half or w.dtype == np.float16
                                else ORT_AGREES):
                        return err, f"{n}: max abs error {d.max():.3g} (relative {worst:.3g})"
            elif not np.array_equal(g, w):
                return err, f"{n}: {int(np.sum(g != w))} of {w.size} values differ from JAX's"
    return err, None



def export_model(name, spec, opset, out_dir):
    """Export one catalogue model at `opset`, check onnxruntime against JAX, save it;
    (file, index entry) or (None, failure record)."""
    from jax2onnx import to_onnx
    build, make_inputs, dynamic, options = spec
    stem = f"{name}__jax2onnx_op{opset}"
    fail = dict(name=name, file=stem + ".onnx", opset=opset)
    if name in NOTES:
        fail["note"] = NOTES[name]
    double = bool(options.get("enable_double_precision"))
    arrays = make_inputs(np.random.default_rng(abs(hash_name(name)) % 2**31), BATCH)
    alt = make_inputs(np.random.default_rng(abs(hash_name(name)) % 2**31 + 1), ALT_BATCH) \
        if dynamic else None
    fn = build()
    try:
        want = _jax_outputs(fn, arrays, double)
        want_alt = _jax_outputs(fn, alt, double) if dynamic else None
        proto = to_onnx(fn, [_spec(a, dynamic) for a in arrays], opset=opset,
                        model_name=name, **options)
        onnx.checker.check_model(proto)
    except Exception as e:  # noqa: BLE001 - recorded: a refusal is data too
        return None, dict(fail, error=_first_line(e))
    try:
        onnx.checker.check_model(proto, full_check=True)
        full_check = None
    except Exception as e:  # noqa: BLE001 - kept: the importer meets such files too
        # jax2onnx writes some value_info shapes that contradict ONNX's inference
        full_check = _first_line(e)
    in_names = [i.name for i in proto.graph.input]
    out_names = [o.name for o in proto.graph.output]
    if len(out_names) != len(want):
        return None, dict(fail, error=f"{len(out_names)} outputs, JAX gives {len(want)}")
    # JAX's outputs in the ONNX outputs' dtypes (jax2onnx may widen int32 indices)
    types = [_NP.get(o.type.tensor_type.elem_type) for o in proto.graph.output]
    cast = [t is not None and w.dtype != t for t, w in zip(types, want)]

    def as_onnx(ws):
        return [w.astype(t) if c else w for w, t, c in zip(ws, types, cast)]
    nchw = options.get("inputs_as_nchw", ())

    def feeds(values):
        # inputs_as_nchw: JAX takes NHWC, the ONNX model the same data as NCHW
        return dict(zip(in_names, (np.transpose(a, (0, 3, 1, 2)) if k in nchw
                                   else np.asarray(a) for k, a in enumerate(values))))
    sets, wants = [feeds(arrays)], [as_onnx(want)]
    if dynamic:
        sets.append(feeds(alt))
        wants.append(as_onnx(want_alt))
    err, bad = _ort_vs_jax(proto, sets, wants)
    if bad is not None and KEEP_FAILED:
        os.makedirs(KEEP_FAILED, exist_ok=True)
        onnx.save(proto, os.path.join(KEEP_FAILED, stem + ".onnx"))
        save_arrays(KEEP_FAILED, stem, "in", sets[0].values())
        save_arrays(KEEP_FAILED, stem, "out", wants[0])
    refused = None
    if bad is not None and err is None and full_check is None:
        # onnxruntime cannot run a valid model: kept, JAX alone is the oracle
        refused = bad
    elif bad is not None and err is None:
        return None, dict(fail, error=f"exported, but fails the full check ({full_check}) "
                          f"and {bad}")
    elif bad is not None:
        return None, dict(fail, error="exported, but onnxruntime disagrees with JAX: " + bad)
    path = os.path.join(out_dir, stem + ".onnx")
    onnx.save(proto, path)
    rec = dict(name=name, opset=opset, dynamic=dynamic,
               options={k: v for k, v in options.items()},
               ops=sorted({(n.domain or "") + ":" + n.op_type for n in _all_nodes(proto.graph)}),
               functions=sorted({f.name for f in proto.functions}),
               inputs=in_names, outputs=out_names, size=os.path.getsize(path),
               input_files=save_arrays(out_dir, stem, "in", sets[0].values()),
               output_files=save_arrays(out_dir, stem, "out", wants[0]))
    if dynamic:
        rec["alt_input_files"] = save_arrays(out_dir, stem, "in", sets[1].values(), ".alt")
        rec["alt_output_files"] = save_arrays(out_dir, stem, "out", wants[1], ".alt")
    if any(cast):
        rec["jax_dtypes_cast"] = {n: str(w.dtype) for n, w, c in zip(out_names, want, cast)
                                  if c}
    rec["ort_max_abs_err"] = err
    if refused:
        rec["ort_refuses"] = refused
    if full_check:
        rec["full_check_error"] = full_check
    return stem + ".onnx", rec


def _all_nodes(graph):
    """The graph's nodes and those of its subgraphs (Loop / If / Scan bodies)."""
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(a.g)
            for g in a.graphs:
                yield from _all_nodes(g)


def hash_name(name: str) -> int:
    """A seed from the model's name that does not depend on PYTHONHASHSEED."""
    return int.from_bytes(name.encode()[:8].ljust(8, b"\0"), "little") ^ len(name)


def _versions():
    import flax
    import jax
    import jax2onnx
    import onnxruntime
    from importlib.metadata import version
    return dict(jax=jax.__version__, jaxlib=version("jaxlib"), flax=flax.__version__,
                jax2onnx=getattr(jax2onnx, "__version__", version("jax2onnx")),
                onnx=onnx.__version__, onnxruntime=onnxruntime.__version__,
                numpy=np.__version__)


def main(argv=None):
    """Export the catalogue (or the `--only` names) into OUT_DIR and write index.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", default=None)
    a = ap.parse_args(argv)
    import jax
    jax.config.update("jax_platforms", "cpu")
    os.makedirs(a.out_dir, exist_ok=True)
    index_path = os.path.join(a.out_dir, "index.json")
    models, failures = kept_records(index_path, a.only)
    todo = [(n, s, FLAX_OPSETS) for n, s in flax_models().items()] + \
        [(n, s, OPSETS) for n, s in {**function_models(), **more_models()}.items()]
    for name, spec, opsets in todo:
        if a.only and name not in a.only:
            continue
        for opset in opsets:
            file, rec = export_model(name, spec, opset, a.out_dir)
            if file is None:
                failures.append(rec)
                print(f"{rec['file']:<48} FAILED {rec['error']}", flush=True)
                continue
            models[file] = rec
            if rec.get("ort_refuses"):
                failures.append(dict(name=name, file=file, opset=opset, kept=True,
                                     error=rec["ort_refuses"],
                                     note="onnxruntime's fault: the model is valid ONNX "
                                     "(MaxPool over 4 spatial axes); kept, JAX alone is "
                                     "the oracle"))
            err = rec["ort_max_abs_err"]
            print(f"{file:<48} {rec['size']:>8,} bytes  ort-vs-jax "
                  + (f"{err:.2e}" if err is not None else rec["ort_refuses"]), flush=True)
    write_index(index_path, _versions(), models, failures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
