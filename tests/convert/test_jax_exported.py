"""JAX and Flax (nnx) models as jax2onnx writes them, against JAX's own outputs.

data/jax_exported/ holds 48 small seeded models in 58 ONNX files (99 op types; 2.4 MB on
disk with their inputs and outputs), written by tools/export_jax_models.py (jax2onnx
0.17.1, JAX 0.10.2, flax 0.12.8; index.json has the versions):

* flax.nnx models with random weights, at opsets 23 and 18: an MLP (GELU), a CNN in
  NHWC (Conv, inference BatchNormalization with non-trivial running statistics, max and
  average pooling), the same CNN exported with inputs_as_nchw, grouped / dilated /
  strided / transposed / causal 1-D convolutions, a transformer encoder block
  (MultiHeadAttention with a causal mask, LayerNorm, exact GELU), RMSNorm + GroupNorm +
  LayerNorm, an Embed text model (int32 ids, masked mean, log_softmax), LSTM and GRU
  cells scanned with lax.scan (Loop), twelve activations, LinearGeneral / Einsum /
  Embed.attend with an inference Dropout;
* JAX functions at opset 23: a lax.scan RNN, fori_loop / while_loop (Loop), cond on
  both branches (If), einsum, cumulative sums / max / min (CumSum, reverse), sort /
  argsort / top_k (TopK), gather-style indexing (Gather, GatherElements, GatherND,
  strided and reversed Slice), scatter-style updates (.at[].set/add/max/mul and
  segment_sum: ScatterND with reductions), where / clip / rounding / isfinite,
  softmax / log_softmax / argmax / argmin / logsumexp, split / concat / stack / tile /
  repeat, dynamic_slice and dynamic_update_slice with run-time int32 starts, constant,
  negative, symmetric and wrap padding, reductions (ReduceL2, ReduceLogSumExp, ...),
  int32 arithmetic and bit ops, elementwise math, iota / one_hot / tril / eye, float64,
  lax.conv_general_dilated (1-D and 2-D, asymmetric padding, rhs dilation) and
  conv_transpose, reduce_window and SAME max / average pooling (with and without the
  padding counted), linear jax.image.resize, dot_product_attention (causal), vmap,
  searchsorted and unique(size=), a float16 model, rfft (DFT), erf_inv / lgamma /
  digamma / logit / xlogy, out-of-range gathers in clip / fill / wrap modes, a KV-cache
  style fori_loop of dynamic_update_slice, a while_loop with a run-time trip count,
  round / trunc / remainder / fmod / floor_divide on halves and negative divisors.

Most models have a dynamic batch ('B') and a second input set at another batch size
(*.alt.npy). Four files carry value_info shapes that contradict ONNX's shape inference
(the CNNs: index.json's full_check_error); onnxruntime runs them anyway, and so must
onegraph. One (reduce_window_4d: MaxPool over four spatial axes, valid ONNX) is refused by
onnxruntime ("Unsupported pooling size"), so JAX alone is its oracle. What jax2onnx
refused or wrote wrong (CumProd, BitShift on int32, nnx.RNN, lax.switch, a OneHot and
a Slice without JAX's masking / clamping, nearest and cubic resize, reflect padding,
symbolic batches, away-from-zero rounding, a float16 Gemm with a float32 bias, complex
abs, irfft, 3-D convolution, associative_scan, fori_loop closing over an input) is in
index.json's failures (22), with whose fault it is; onegraph gives onnxruntime's result
on each of those exports that onnxruntime runs, and refuses the invalid ones
(BitShift on int32, the mixed-type Gemm) with a ConversionError as onnxruntime does.

Each model must import, run in the Session to JAX's outputs and onnxruntime's (at both
batch sizes, and the dynamic ones on batches of one and of zero rows), come back from
to_onnx as a model that passes the full ONNX checker and gives onnxruntime JAX's
outputs, and be written at opsets 17 and 13 or refused with a ConversionError naming
what the target lacks (BitwiseAnd, ScatterND's reduction, DFT, float16 CumSum).

Tolerances: rtol = atol = 1e-4 on floats, integers and booleans exactly; HALF_TOL =
5e-3 for float16_elementwise (float16 feeds: a half ulp at its cumsum's magnitude of 4
is 2e-3, and JAX, onnxruntime and onegraph each round the float16 steps their own way).
Measured largest differences: onegraph vs JAX 2.4e-6 in float32 (lax_conv_pool, a
convolution summed in another order) and 9.8e-4 in float16, onnxruntime vs JAX 2.9e-6
and 2.0e-3, float64 8.9e-16; every other float32 output is within 2e-6, so 1e-4 leaves
a margin of 40x while a wrong op (a missed mask, a wrong pad or branch) moves outputs
by 1e-1 or more.
"""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import ShapeError  # noqa: E402

from .corpus import (assert_same_array, corpus_folder,  # noqa: E402
                     export_at_older_opset, load_array, load_index, model_file, ort_outputs,
                     stored_sets, strict_xfail_params)

DATA = corpus_folder("jax_exported")
INDEX = load_index(DATA)
MODELS = INDEX["models"]

RTOL = ATOL = 1e-4
HALF_TOL = 5e-3

# file -> reason: corpus models that fail because of an onegraph bug (strict xfails); none
XFAILS: dict[str, str] = {}





def _params(names=None):
    return strict_xfail_params(MODELS if names is None else names, XFAILS)


def _tol(feeds, want) -> float:
    """HALF_TOL where a feed or the output is float16, else RTOL (= ATOL)."""
    half = any(v.dtype == np.float16 for v in feeds.values()) or want.dtype == np.float16
    return HALF_TOL if half else RTOL


@pytest.mark.parametrize("name", _params())
def test_session_matches_jax_and_onnxruntime(name):
    entry = MODELS[name]
    path, original = model_file(DATA, name)
    outputs = entry["outputs"]
    session = og.Session(from_onnx(path))
    for k, (feeds, want_jax) in enumerate(stored_sets(DATA, entry)):
        got = session.run(outputs, feeds)
        want_ort = None if entry.get("ort_refuses") else ort_outputs(original, feeds, outputs)
        for j, (out, g, w) in enumerate(zip(outputs, got, want_jax)):
            what, tol = f"{name} input set {k} output {out!r}", _tol(feeds, w)
            assert_same_array(g, w, what + " vs JAX", tol, tol)
            if want_ort is not None:
                assert_same_array(g, want_ort[j], what + " vs onnxruntime", tol, tol)


@pytest.mark.parametrize("name", _params())
def test_round_trip_through_to_onnx(name):
    """The export passes the full checker and gives JAX's outputs: in onnxruntime, or
    (where onnxruntime refuses the original too) in onegraph's Session after a second
    import."""
    entry = MODELS[name]
    outputs = entry["outputs"]
    exported = to_onnx(from_onnx(os.path.join(DATA, name)))
    onnx.checker.check_model(exported, full_check=True)
    data = exported.SerializeToString()
    again = og.Session(from_onnx(exported)) if entry.get("ort_refuses") else None
    for k, (feeds, want_jax) in enumerate(stored_sets(DATA, entry)):
        back = again.run(outputs, feeds) if again else ort_outputs(data, feeds, outputs)
        for out, b, w in zip(outputs, back, want_jax):
            tol = _tol(feeds, w)
            assert_same_array(b, w, f"{name} input set {k} output {out!r} after to_onnx",
                              tol, tol)


@pytest.mark.parametrize("rows", [0, 1])
@pytest.mark.parametrize("name", _params([n for n, e in MODELS.items()
                                          if e["dynamic"] and not e.get("ort_refuses")]))
def test_batch_of_zero_and_one(name, rows):
    """The dynamic models on the first `rows` rows of their batch: onegraph gives
    onnxruntime's outputs (an empty batch goes through every op with a zero-size dim),
    or refuses the feed where onnxruntime does (lax_conv_pool takes row 0)."""
    entry = MODELS[name]
    _, original = model_file(DATA, name)
    outputs = entry["outputs"]
    feeds, _ = stored_sets(DATA, entry)[0]
    batched = {i.name for i in onnx.load_from_string(original).graph.input
               if i.type.tensor_type.shape.dim
               and i.type.tensor_type.shape.dim[0].dim_param == "B"}
    part = {k: v[:rows] if k in batched else v for k, v in feeds.items()}
    session = og.Session(from_onnx(os.path.join(DATA, name)))
    try:
        want = ort_outputs(original, part, outputs)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error classes
        assert type(e).__module__.startswith("onnxruntime"), e
        with pytest.raises(ShapeError):
            session.run(outputs, part)
        return
    got = session.run(outputs, part)
    for out, g, w in zip(outputs, got, want):
        tol = _tol(part, w)
        assert_same_array(g, w, f"{name} ({rows} rows) output {out!r}", tol, tol)


# what opsets 17 and 13 lack, in the refusals these models meet
OLDER_REFUSALS = (r"the op came in at opset 1[78]",            # Bitwise*, DFT
                  r"its reduction 'max' came in at opset 18",  # ScatterND
                  r"its attribute 'reduction' came in at opset 16",
                  r"is float16, which CumSum accepts from opset 14")


@pytest.mark.parametrize("target", [17, 13])
@pytest.mark.parametrize("name", _params())
def test_written_at_an_older_opset(name, target):
    """to_onnx(opset=17 / 13) passes the full checker and gives JAX's outputs (in
    onnxruntime, or onegraph where onnxruntime refuses the model), or is refused with
    a ConversionError naming what the target lacks."""
    entry = MODELS[name]
    outputs = entry["outputs"]
    proto = export_at_older_opset(os.path.join(DATA, name), target, OLDER_REFUSALS)
    if proto is None:
        return
    data = proto.SerializeToString()
    again = og.Session(from_onnx(proto)) if entry.get("ort_refuses") else None
    feeds, want_jax = stored_sets(DATA, entry)[0]
    back = again.run(outputs, feeds) if again else ort_outputs(data, feeds, outputs)
    for out, b, w in zip(outputs, back, want_jax):
        tol = _tol(feeds, w)
        assert_same_array(b, w, f"{name} at opset {target} output {out!r}", tol, tol)


def test_the_corpus_covers_what_it_promises():
    """The models, opsets, ops, dynamic batches, odd files and recorded failures the
    module docstring names are all there, and the folder stays under 4 MB."""
    entries = list(MODELS.values())
    names = {e["name"] for e in entries}
    assert len(names) >= 45 and len(MODELS) >= 55
    assert {"nnx_mlp", "nnx_cnn_bn_pool", "nnx_cnn_nchw_input", "nnx_transformer_encoder",
            "nnx_lstm_cell_scan", "nnx_gru_cell_scan", "scan_rnn", "loops", "cond_true",
            "cond_false", "einsums", "cumulative", "sorting", "gathers", "scatters",
            "softmaxes", "dynamic_slices", "pads", "integers", "float64",
            "reduce_window_4d", "attention", "float16_elementwise", "fft", "pools",
            "kv_cache_carry", "gather_modes", "nnx_layers"} <= names
    assert {e["opset"] for e in entries} == {18, 23}
    ops = set().union(*(e["ops"] for e in entries))
    assert {":Conv", ":ConvTranspose", ":BatchNormalization", ":MaxPool", ":AveragePool",
            ":Loop", ":If", ":Einsum", ":CumSum", ":TopK", ":GatherND", ":GatherElements",
            ":ScatterND", ":OneHot", ":Trilu", ":Resize", ":Pad", ":Softmax",
            ":LogSoftmax", ":Gelu", ":BitwiseAnd", ":ReduceLogSumExp", ":Erf", ":DFT",
            ":Unique", ":Mod"} <= ops
    assert len(ops) >= 95
    assert sum(bool(e.get("alt_input_files")) for e in entries) >= 20
    for name, e in MODELS.items():  # dynamic files really leave the batch open
        first = onnx.load(os.path.join(DATA, name)).graph.input[0]
        dims = first.type.tensor_type.shape.dim
        if e["dynamic"]:
            assert dims[0].dim_param == "B", name
    assert any(e.get("ort_refuses") for e in entries)
    assert sum(bool(e.get("full_check_error")) for e in entries) >= 4
    dtypes = {str(load_array(DATA, f).dtype) for e in entries for f in e["input_files"]}
    assert {"float32", "int32", "float64", "float16"} <= dtypes
    # what jax2onnx refused or wrote wrong is recorded, not silently dropped
    failed = {f["name"] for f in INDEX["failures"]}
    assert {"cumprod", "shifts", "one_hot_negative", "dynamic_slices_clamped",
            "resize_nearest", "resize_cubic", "switch", "nnx_rnn_module_lstm", "round_away",
            "float16", "fft_abs", "kv_cache"} <= failed
    assert all(f.get("note") for f in INDEX["failures"])
    total = os.path.getsize(os.path.join(DATA, "index.json"))
    for name, e in MODELS.items():
        graph = onnx.load(os.path.join(DATA, name)).graph
        assert [i.name for i in graph.input] == e["inputs"], name
        assert [o.name for o in graph.output] == e["outputs"], name
        files = [name] + e["input_files"] + e["output_files"] \
            + e.get("alt_input_files", []) + e.get("alt_output_files", [])
        for f in files:
            total += os.path.getsize(os.path.join(DATA, f))
    assert total < 4 * 1024 * 1024
