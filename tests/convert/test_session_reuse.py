"""One Session reused as an onnxruntime server reuses one InferenceSession, against
onnxruntime.

A server keeps one session per model and runs it again and again: with inputs of other
shapes (batch sizes 1, 3, 1, 2; other sequence lengths and image sizes where the model's
inputs have symbolic dims), from several threads at once (the very first run included,
while plans and weight caches are still being built), refilling the same input buffers
in place, and keeping or post-processing the returned arrays in place. onnxruntime gives
every such run the outputs a fresh session gives; so must onegraph, whose Session caches
compiled plans per (feeds, fetches), fused and GEMM-ready Conv weights, Winograd
transforms, per-shape geometry and per-thread scratch memory.

Every result is checked against onnxruntime run on the same inputs (computed before the
threads start). Models: real exported models of the corpora under data/ (see corpus.py)
and small graphs built with onnx.helper. The last tests hold what the sweep found: two
kernel caches (NCHWc Conv's decoded filter, MatMulNBits' dequantized weight) were keyed
on the identity or address of a fed array and went stale when the caller refilled it in
place (kernels now cache only on the executors' plan constants), and a Resize rounding
difference found on the way.
"""

import sys
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx

from ..ort_int8 import needs_exact_int8_oracle
from .corpus import corpus_folder, load_array, load_index, model_file, ort_outputs

TOL = 1e-4
JOIN_SECONDS = 60  # a thread still running after this counts as a hang


def _entry(corpus: str, name: str) -> dict:
    index = load_index(corpus_folder(corpus))
    return index["models"][name] if "models" in index else index[name]


def _seed_feeds(corpus: str, name: str) -> dict:
    """The corpus entry's stored (seeded) feeds."""
    entry = _entry(corpus, name)
    folder = corpus_folder(corpus)
    return {n: load_array(folder, f) for n, f in zip(entry["inputs"], entry["input_files"])}


def _drawn(seeds: dict, shapes: dict, rng) -> dict:
    """Feeds of the given shapes (inputs not named keep theirs) holding values drawn from
    the seed feed's own values, so token ids stay within the vocabulary the seeds use;
    attention masks are ones."""
    out = {}
    for name, a in seeds.items():
        shape = tuple(shapes.get(name, a.shape))
        if "mask" in name:
            out[name] = np.ones(shape, a.dtype)
        else:
            out[name] = rng.choice(a.reshape(-1), size=shape).astype(a.dtype)
    return out


def _assert_close(got, want, what: str, tol: float = TOL) -> None:
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, \
            f"{what} output {k}: {g.shape} {g.dtype} != {w.shape} {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{what} output {k}")


def _run_threads(session, jobs: list, outputs: list, tol: float = TOL) -> None:
    """Each job (a list of (feeds, onnxruntime's outputs)) in its own thread on the one
    session, all starting together (a barrier) with thread switches forced as often as
    Python allows; every result must be onnxruntime's and no thread may hang."""
    problems: list = []
    barrier = threading.Barrier(len(jobs))

    def work(t):
        try:
            barrier.wait(JOIN_SECONDS)
        except threading.BrokenBarrierError:
            problems.append(f"thread {t}: the threads did not start together")
        for i, (feeds, want) in enumerate(jobs[t]):
            try:
                _assert_close(session.run(outputs, feeds), want, f"thread {t} run {i}", tol)
            except Exception as e:  # noqa: BLE001 - collected and reported below
                problems.append(f"thread {t} run {i}: {type(e).__name__}: {e}"[:400])

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(t,), daemon=True)
                   for t in range(len(jobs))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(JOIN_SECONDS)
    finally:
        sys.setswitchinterval(old)
    hung = [t for t, th in enumerate(threads) if th.is_alive()]
    assert not hung, f"threads {hung} still running after {JOIN_SECONDS} s (deadlock?)"
    assert not problems, "\n".join(problems[:6])


# --------------------------------------------------------------------------------------
# Corpus models, one Session, shapes changing run after run
# --------------------------------------------------------------------------------------

# (corpus, file, the shapes of variants B and C); A is the stored feeds. The runs go
# A, B, A, C, B through one Session.
RESHAPED = [
    ("hf_exported", "bert__ts_op17_dyn.onnx",  # seeds (2, 8)
     {"input_ids": (3, 8), "attention_mask": (3, 8)},
     {"input_ids": (1, 16), "attention_mask": (1, 16)}),
    ("hf_exported", "gpt2_kv_cache__dynamo_op18_dyn.onnx",  # batch 2, past 5
     {"input_ids": (3, 1), "attention_mask": (3, 6)}
     | {f"past_{kv}_{i}": (3, 2, 5, 16) for kv in ("key", "value") for i in (0, 1)},
     {"input_ids": (1, 1), "attention_mask": (1, 12)}
     | {f"past_{kv}_{i}": (1, 2, 11, 16) for kv in ("key", "value") for i in (0, 1)}),
    ("hf_exported", "resnet__ts_op17_dyn.onnx",  # (2, 3, 32, 32): Conv/BN fusion
     {"pixel_values": (3, 3, 32, 32)}, {"pixel_values": (1, 3, 64, 64)}),
    ("torchvision_exported", "convnext__dynamo_op23_dynhw.onnx",  # (1, 3, 32, 32)
     {"images": (3, 3, 32, 32)}, {"images": (2, 3, 64, 64)}),
    ("paddle_exported", "lstm_state__p2o_op13_dyn.onnx",  # LSTM with initial states
     {"x": (3, 5, 8), "h0": (1, 3, 12), "c0": (1, 3, 12)},
     {"x": (1, 5, 8), "h0": (1, 1, 12), "c0": (1, 1, 12)}),
    ("jax_exported", "scan_rnn__jax2onnx_op23.onnx",  # Scan, (2, 7, 4)
     {"in_0": (3, 7, 4)}, {"in_0": (1, 7, 4)}),
    ("ort_processed", "bert_eager__opt_q4.onnx",  # MatMulNBits, Attention (contrib)
     {"input_ids": (3, 8), "attention_mask": (3, 8)},
     {"input_ids": (1, 16), "attention_mask": (1, 16)}),
    ("ort_processed", "distilbert_eager__qop.onnx",  # QLinear* and integer MatMuls
     {"input_ids": (3, 8), "attention_mask": (3, 8)},
     {"input_ids": (1, 16), "attention_mask": (1, 16)}),
]


@pytest.mark.parametrize("corpus,name,shapes_b,shapes_c", RESHAPED,
                         ids=[f"{c}/{n}" for c, n, _, _ in RESHAPED])
def test_one_session_with_changing_shapes_gives_onnxruntimes_outputs(corpus, name,
                                                                   shapes_b, shapes_c):
    """Runs A, B, A, C, B (batch and sequence/image sizes changing) through one Session
    give onnxruntime's outputs for each input, as a fresh session would."""
    entry = _entry(corpus, name)
    path, original = model_file(corpus_folder(corpus), name)
    outputs = entry["outputs"]
    seeds = _seed_feeds(corpus, name)
    rng = np.random.default_rng(5)
    feeds = {"A": seeds, "B": _drawn(seeds, shapes_b, rng), "C": _drawn(seeds, shapes_c, rng)}
    if needs_exact_int8_oracle() and any(
            i.data_type == TensorProto.INT8 for i in onnx.load(path).graph.initializer):
        # onnxruntime's int8 products saturate on this CPU (tests/ort_int8.py): the
        # reference is then a fresh Session per input, which is what reuse must match
        want = {k: og.Session(from_onnx(path)).run(outputs, f) for k, f in feeds.items()}
    else:
        want = {k: ort_outputs(original, f, outputs) for k, f in feeds.items()}
    session = og.Session(from_onnx(path))
    for k in "ABACB":
        _assert_close(session.run(outputs, feeds[k]), want[k], f"{name} run {k}")


@pytest.mark.parametrize("corpus,name,shapes_b", [
    ("hf_exported", "resnet__ts_op17_dyn.onnx", {"pixel_values": (3, 3, 32, 32)}),
    ("ort_processed", "bert_eager__opt_q4.onnx",
     {"input_ids": (3, 8), "attention_mask": (3, 8)})])
def test_empty_batches_between_ordinary_ones(corpus, name, shapes_b):
    """Runs A, an empty batch, A, an empty batch, B through one Session: the per-shape
    memos and cached weights of the empty runs (no pixels, no rows to multiply) must
    not leak into the ordinary ones, nor the other way round."""
    entry = _entry(corpus, name)
    path, original = model_file(corpus_folder(corpus), name)
    outputs = entry["outputs"]
    seeds = _seed_feeds(corpus, name)
    feeds = {"A": seeds, "0": {k: v[:0] for k, v in seeds.items()},
             "B": _drawn(seeds, shapes_b, np.random.default_rng(4))}
    want = {k: ort_outputs(original, f, outputs) for k, f in feeds.items()}
    session = og.Session(from_onnx(path))
    for k in "A0A0B":
        _assert_close(session.run(outputs, feeds[k]), want[k], f"{name} run {k}")


def test_loop_counts_and_sizes_change_through_one_session():
    """onnxscript's Loop and Scan inside a function: the trip count n and the batch
    change run after run."""
    corpus, name = "onnxscript_exported", "loop_scan_in_function__onnxscript_op18.onnx"
    entry = _entry(corpus, name)
    path, original = model_file(corpus_folder(corpus), name)
    outputs = entry["outputs"]
    seeds = _seed_feeds(corpus, name)
    rng = np.random.default_rng(6)
    runs = []
    for rows, n in [(None, None), (1, 5), (None, None), (4, 1), (2, 0), (1, 5)]:
        f = dict(seeds)
        if rows is not None:
            f = _drawn(seeds, {"x": (rows, seeds["x"].shape[1])}, rng)
            f["n"] = np.asarray(n, seeds["n"].dtype).reshape(seeds["n"].shape)
        runs.append(f)
    session = og.Session(from_onnx(path))
    for k, f in enumerate(runs):
        _assert_close(session.run(outputs, f), ort_outputs(original, f, outputs),
                      f"{name} run {k}")


def _greedy_decode(run, feeds: dict, outputs: list, steps: int):
    """`steps` runs of a key/value-cache decoder, each fed the previous run's present
    key/values as its past ones, the argmax token and the mask grown by one; the
    list of each run's logits."""
    logits = []
    for _ in range(steps):
        got = run(outputs, feeds)
        logits.append(got[0])
        ids = feeds["input_ids"]
        token = np.argmax(got[0][:, -1], axis=-1).astype(ids.dtype)[:, None]
        mask = feeds["attention_mask"]
        feeds = {"input_ids": token,
                 "attention_mask": np.concatenate([mask, np.ones_like(mask[:, :1])], 1)}
        for name, value in zip(outputs[1:], got[1:]):
            feeds["past" + name[len("present"):]] = value
    return logits


def test_decoding_loop_feeds_outputs_back_as_inputs():
    """GPT-2 with a key/value cache decoded greedily for 5 steps through one Session:
    each run's present key/values (arrays the Session returned) are the next run's
    past ones, the cache growing by one position per run; onnxruntime decodes with its
    own outputs the same way and every step's logits (hence tokens) must agree."""
    corpus, name = "hf_exported", "gpt2_kv_cache__dynamo_op18_dyn.onnx"
    entry = _entry(corpus, name)
    path, original = model_file(corpus_folder(corpus), name)
    seeds = _seed_feeds(corpus, name)
    want = _greedy_decode(lambda out, f: ort_outputs(original, f, out), seeds,
                          entry["outputs"], 5)
    got = _greedy_decode(og.Session(from_onnx(path)).run, seeds, entry["outputs"], 5)
    for k, (g, w) in enumerate(zip(got, want)):
        _assert_close([g], [w], f"{name} step {k}")


# --------------------------------------------------------------------------------------
# Threads sharing one Session
# --------------------------------------------------------------------------------------

def _corpus_jobs(corpus, name, shapes: list, runs: int, seed: int):
    """Per thread (one per entry of `shapes`' rotation), `runs` (feeds, onnxruntime's
    outputs) with fresh values, the shapes rotating through `shapes`."""
    entry = _entry(corpus, name)
    path, original = model_file(corpus_folder(corpus), name)
    seeds = _seed_feeds(corpus, name)
    rng = np.random.default_rng(seed)
    jobs = []
    for t in range(4):
        mine = []
        for i in range(runs):
            f = _drawn(seeds, shapes[(t + i) % len(shapes)], rng)
            mine.append((f, ort_outputs(original, f, entry["outputs"])))
        jobs.append(mine)
    return path, entry["outputs"], jobs


def test_threads_share_one_convnet_session_from_its_first_run():
    """HF ResNet (Conv/BN/Relu fusion, residual adds): 4 threads run one fresh Session
    at once, each its own images of batch 1-3 and sizes 32 and 64."""
    shapes = [{"pixel_values": s} for s in
              [(1, 3, 32, 32), (3, 3, 32, 32), (2, 3, 64, 64), (1, 3, 64, 64)]]
    path, outputs, jobs = _corpus_jobs("hf_exported", "resnet__ts_op17_dyn.onnx",
                                       shapes, 4, 7)
    _run_threads(og.Session(from_onnx(path)), jobs, outputs)


def test_threads_share_one_transformer_session_from_its_first_run():
    """HF BERT: 4 threads run one fresh Session at once, each its own token ids of
    batch 1-3 and sequence lengths 8 and 16."""
    shapes = [{"input_ids": s, "attention_mask": s} for s in
              [(1, 8), (3, 8), (2, 16), (1, 16)]]
    path, outputs, jobs = _corpus_jobs("hf_exported", "bert__ts_op17_dyn.onnx",
                                       shapes, 4, 8)
    _run_threads(og.Session(from_onnx(path)), jobs, outputs)


def _loop_of_conv_blocks(channels: int = 16) -> onnx.ModelProto:
    """Loop(n) over h = h + Conv1x1(Relu(BN(Conv3x3(h)))), the weights initializers of
    the outer graph (the body's Conv/BN/Relu are fused in its own plan), with the mean
    of each step as a scan output; batch and image size symbolic."""
    rng = np.random.default_rng(0)
    c = channels
    inits = [
        numpy_helper.from_array((rng.standard_normal((c, c, 3, 3)) * .2).astype(np.float32),
                                "w"),
        numpy_helper.from_array(rng.uniform(.5, 1.5, c).astype(np.float32), "scale"),
        numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "bias"),
        numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "mean"),
        numpy_helper.from_array(rng.uniform(.5, 1.5, c).astype(np.float32), "var"),
        numpy_helper.from_array((rng.standard_normal((c, c, 1, 1)) * .2).astype(np.float32),
                                "w1")]
    body = helper.make_graph(
        [helper.make_node("Conv", ["h_in", "w"], ["conv"], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["conv", "scale", "bias", "mean", "var"],
                          ["bn"]),
         helper.make_node("Relu", ["bn"], ["relu"]),
         helper.make_node("Conv", ["relu", "w1"], ["conv1"]),
         helper.make_node("Add", ["conv1", "h_in"], ["h_out"]),
         helper.make_node("ReduceMean", ["h_out"], ["step_mean"], keepdims=0),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("step_mean", TensorProto.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y", "means"], body=body)], "loop",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", c, "H", "W"]),
         helper.make_tensor_value_info("means", TensorProto.FLOAT, ["T"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def test_loop_of_fused_conv_blocks_reused_sequentially_and_from_threads():
    """The Loop body's plan (compiled once, shared by every run) with trip counts
    0-4 and images from 5x5 to 40x40: sequentially through one Session, then from 4
    threads on a fresh one."""
    model = _loop_of_conv_blocks()
    data = model.SerializeToString()
    rng = np.random.default_rng(1)
    cases = []
    for n, b, h, w in [(3, 1, 20, 20), (1, 3, 8, 12), (4, 2, 40, 40), (0, 1, 5, 5),
                       (2, 2, 33, 17)]:
        f = {"n": np.array(n, np.int64),
             "x": rng.standard_normal((b, 16, h, w)).astype(np.float32)}
        cases.append((f, ort_outputs(data, f, ["y", "means"])))
    session = og.Session(from_onnx(model))
    for k in [0, 1, 0, 2, 3, 1, 4, 2]:
        _assert_close(session.run(["y", "means"], cases[k][0]), cases[k][1], f"case {k}")
    jobs = [[cases[(t + i) % len(cases)] for i in range(5)] for t in range(4)]
    _run_threads(og.Session(from_onnx(model)), jobs, ["y", "means"])


# --------------------------------------------------------------------------------------
# The caller's arrays: outputs kept and written over, input buffers refilled in place
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("corpus,name", [("hf_exported", "resnet__ts_op17_dyn.onnx"),
                                         ("hf_exported", "bert__ts_op17_dyn.onnx")])
def test_callers_arrays_kept_written_over_and_refilled(corpus, name):
    """Outputs the caller keeps are not changed by later runs, and writing over them (as
    in-place post-processing does) does not change later runs; one set of input buffers
    refilled in place between runs (writeable, and as read-only views of them) gives
    onnxruntime's outputs for their current values."""
    entry = _entry(corpus, name)
    path, original = model_file(corpus_folder(corpus), name)
    outputs = entry["outputs"]
    seeds = _seed_feeds(corpus, name)
    rng = np.random.default_rng(9)
    other = _drawn(seeds, {}, rng)
    want_a = ort_outputs(original, seeds, outputs)
    want_b = ort_outputs(original, other, outputs)
    session = og.Session(from_onnx(path))
    first = session.run(outputs, seeds)
    kept = [a.copy() for a in first]
    second = session.run(outputs, other)
    _assert_close(first, kept, "outputs of run 1 after run 2", 0)
    for a in first + second:
        a[...] = np.nan
    _assert_close(session.run(outputs, seeds), want_a, "run after writing over outputs")
    for read_only in (False, True):
        session = og.Session(from_onnx(path))
        buffers = {k: v.copy() for k, v in seeds.items()}
        feeds = {}
        for k, v in buffers.items():
            feeds[k] = v.view()
            feeds[k].flags.writeable = not read_only
        _assert_close(session.run(outputs, feeds), want_a, f"read_only={read_only} run 1")
        for k, v in buffers.items():
            v[...] = other[k]
        _assert_close(session.run(outputs, feeds), want_b,
                      f"read_only={read_only} after refilling the buffers")


# --------------------------------------------------------------------------------------
# Findings of the reuse sweep (fixed)
# --------------------------------------------------------------------------------------

def _nchwc_conv_with_fed_filter(block: int) -> onnx.ModelProto:
    nodes = [helper.make_node("ReorderInput", ["x"], ["xb"], domain="com.microsoft.nchwc"),
             helper.make_node("Conv", ["xb", "w"], ["yb"], domain="com.microsoft.nchwc",
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("ReorderOutput", ["yb"], ["y"], domain="com.microsoft.nchwc",
                              channels=block)]
    graph = helper.make_graph(
        nodes, "nchwc",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, block, 5, 5]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [block, block, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, block, 5, 5])])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft.nchwc", 1)])
    model.ir_version = 9
    return model


def test_nchwc_conv_filter_refilled_in_place_is_read_again():
    """An NCHWc Conv (onnxruntime's ORT_ENABLE_ALL layout) whose filter is a graph
    input: the caller refills the same filter array between runs; onnxruntime convolves
    with the new values. onegraph reads the blocked filter with this machine's block
    size, as onnxruntime does; 16 channels fit both block sizes (8 with AVX2, 16 with
    AVX-512)."""
    from onegraph.ops import ms_nchwc

    if ms_nchwc.machine_block_size() not in (8, 16):
        pytest.skip("onegraph runs NCHWc Convs only with an x86 block size")
    model = _nchwc_conv_with_fed_filter(16)
    data = model.SerializeToString()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 16, 5, 5)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    session = og.Session(from_onnx(model))
    _assert_close(session.run(["y"], {"x": x, "w": w}),
                  ort_outputs(data, {"x": x, "w": w}, ["y"]), "first run")
    w[...] = rng.standard_normal(w.shape)  # the same buffer, new values
    _assert_close(session.run(["y"], {"x": x, "w": w}),
                  ort_outputs(data, {"x": x, "w": w}, ["y"]), "after refilling w")


def test_matmul_nbits_weight_fed_as_read_only_view_is_read_again():
    """MatMulNBits whose packed 4-bit weight and scales are graph inputs, fed as
    read-only views of the caller's buffers (as np.load(mmap_mode="r") or a framework's
    read-only export gives them); the caller refills the weight buffer between runs and
    onnxruntime multiplies by the new weight."""
    k, n, block = 32, 8, 32
    node = helper.make_node("MatMulNBits", ["a", "b", "scales"], ["y"],
                            domain="com.microsoft", K=k, N=n, bits=4, block_size=block)
    graph = helper.make_graph(
        [node], "nbits",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, k]),
         helper.make_tensor_value_info("b", TensorProto.UINT8, [n, k // block, block // 2]),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, [n * (k // block)])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 9
    data = model.SerializeToString()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, k)).astype(np.float32)
    packed = rng.integers(0, 256, (n, k // block, block // 2), dtype=np.uint8)
    scales = rng.uniform(0.5, 1.0, n * (k // block)).astype(np.float32)
    feeds = {"a": a, "b": packed.view(), "scales": scales.view()}
    feeds["b"].flags.writeable = False
    feeds["scales"].flags.writeable = False
    session = og.Session(from_onnx(model))
    _assert_close(session.run(["y"], feeds), ort_outputs(data, feeds, ["y"]), "first run")
    packed[...] = rng.integers(0, 256, packed.shape, dtype=np.uint8)
    _assert_close(session.run(["y"], feeds), ort_outputs(data, feeds, ["y"]),
                  "after refilling the weight buffer")


# --------------------------------------------------------------------------------------
# Side finding of the concurrency sweep (not a reuse bug: a fresh Session did the same)
# --------------------------------------------------------------------------------------

def test_crop_and_resize_sample_on_the_last_row_is_inside():
    """Resize tf_crop_and_resize with a flipped box (start 1.2 > end 0.6 on a 6-row
    image, 4 output rows): output row 1 reads source row 1.2*5 + (0.6 - 1.2)*5/3 = 5, the
    last row, which onnxruntime (computing in float32) interpolates; tf2onnx's
    CropAndResize (a Loop of such Resizes) showed it on drawn boxes."""
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize",
                            extrapolation_value=0.0)
    graph = helper.make_graph(
        [node], "crop",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 6, 7]),
         helper.make_tensor_value_info("roi", TensorProto.FLOAT, [8]),
         helper.make_tensor_value_info("sizes", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    feeds = {"x": np.arange(1, 43, dtype=np.float32).reshape(1, 1, 6, 7),
             "roi": np.array([0, 0, 1.2, .9, 1, 1, .6, .2], np.float32),
             "sizes": np.array([1, 1, 4, 5], np.int64)}
    want = ort_outputs(model.SerializeToString(), feeds, ["y"])
    assert want[0][0, 0, 1, 0] == pytest.approx(41.4, abs=1e-3)  # inside for onnxruntime
    _assert_close(og.Session(from_onnx(model)).run(["y"], feeds), want, "crop")
