"""Shared pieces of the exported-model corpus tests (test_pytorch_exported.py,
test_hf_exported.py, test_timm_exported.py, test_torchvision_exported.py,
test_tf2onnx_exported.py, test_paddle_exported.py, test_sklearn_exported.py,
test_gbdt_exported.py, test_ort_processed.py, test_jax_exported.py,
test_rewritten_models.py, test_pretrained_models.py, test_corpus_older_opsets.py): each corpus
is a folder of ONNX files with seeded inputs (and the source framework's outputs) saved
by np.save, listed in the folder's index.json."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest


def corpus_folder(name: str) -> str:
    """tests/convert/data/<name>."""
    return os.path.join(os.path.dirname(__file__), "data", name)


def load_index(folder: str) -> dict:
    """The folder's index.json."""
    with open(os.path.join(folder, "index.json"), encoding="utf-8") as f:
        return json.load(f)


def load_array(folder: str, name: str) -> np.ndarray:
    """An .npy file of the folder (never pickled); numpy unicode arrays (strings)
    become object arrays, as onnxruntime and onegraph take and give strings."""
    a = np.load(os.path.join(folder, name), allow_pickle=False)
    return a.astype(object) if a.dtype.kind == "U" else a


def strict_xfail_params(files, xfails: dict) -> list:
    """pytest params over the sorted files, those in `xfails` (file -> reason) marked
    as strict xfails."""
    return [pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=xfails[f]))
            if f in xfails else f for f in sorted(files)]


def assert_same_array(got, want, what: str, rtol: float, atol: float) -> None:
    """Same shape and dtype; floats within rtol/atol, everything else equal."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def assert_zipmap(got, want, what: str, rtol: float, atol: float) -> None:
    """`got` a sequence of {label: probability} maps (a ZipMap output); `want`
    (probabilities [N, C], labels [C]) or another such sequence: same labels in the same
    order and of the same type, probabilities within rtol/atol."""
    if isinstance(want, tuple):
        probs, labels = want
        want = [dict(zip(labels, row)) for row in probs.tolist()]
    assert isinstance(got, (list, tuple)), f"{what}: a {type(got).__name__}, not a list"
    assert len(got) == len(want), f"{what}: {len(got)} maps != {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert isinstance(g, dict), f"{what}[{i}]: a {type(g).__name__}, not a dict"
        assert list(g) == list(w), f"{what}[{i}]: keys {list(g)} != {list(w)}"
        assert all(type(k) is type(v) for k, v in zip(g, w)), \
            f"{what}[{i}]: key types {[type(k) for k in g]} != {[type(k) for k in w]}"
        np.testing.assert_allclose([float(v) for v in g.values()],
                                   [float(v) for v in w.values()], rtol=rtol, atol=atol,
                                   err_msg=f"{what}[{i}]")


def model_file(folder: str, name: str) -> tuple[str, bytes]:
    """(path, serialized bytes) of the folder's model file `name`."""
    path = os.path.join(folder, name)
    with open(path, "rb") as f:
        return path, f.read()


def feed_sets(folder: str, entry: dict) -> list:
    """An index entry's feeds: one dict per input size (its input_files, then its
    alt_input_files, a second batch/sequence size, when the model has dynamic axes)."""
    sets = [entry["input_files"]] + ([entry["alt_input_files"]]
                                     if entry.get("alt_input_files") else [])
    return [{name: np.load(os.path.join(folder, f), allow_pickle=False)
             for name, f in zip(entry["inputs"], files)} for files in sets]


def stored_sets(folder: str, entry: dict) -> list:
    """An index entry's [(feeds, the stored outputs)]: its input_files and
    output_files, then its alt_input_files and alt_output_files (another batch or
    sequence size, or another branch) when it has them."""
    sets = [("input_files", "output_files")]
    if entry.get("alt_input_files"):
        sets.append(("alt_input_files", "alt_output_files"))
    return [({n: load_array(folder, f) for n, f in zip(entry["inputs"], entry[i])},
             [load_array(folder, f) for f in entry[o]]) for i, o in sets]


def ort_outputs(model_bytes: bytes, feeds: dict, outputs: list, optimize: bool = True) -> list:
    """onnxruntime's (CPU) `outputs` of the serialized model, fed the feeds it takes
    (an initializer listed as a graph input need not be fed); its warnings (exporters'
    contradicting value_info, tf2onnx's tf_half_pixel_for_nn) are not printed.
    optimize=False runs the nodes as written (no QDQ pairs fused into integer kernels)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    takes = {i.name for i in sess.get_inputs()}
    return sess.run(outputs, {k: v for k, v in feeds.items() if k in takes})


def check_runs_as_onnxruntime(folder: str, name: str, tol: float,
                              half_tol: float | None = None) -> None:
    """The corpus model `name` imports, runs in onegraph's Session with onnxruntime's
    outputs (at every input size of its index entry), and its to_onnx export passes
    ONNX's full check and gives onnxruntime the same outputs: within `tol` (rtol and
    atol), or `half_tol` where a feed or the output is float16."""
    import onnx

    import onegraph as og
    from onegraph.convert import from_onnx, to_onnx

    entry = load_index(folder)[name]
    path, original = model_file(folder, name)
    outputs = entry["outputs"]
    model = from_onnx(path)
    session = og.Session(model)
    exported = to_onnx(model)
    onnx.checker.check_model(exported, full_check=True)
    for k, feeds in enumerate(feed_sets(folder, entry)):
        half_feeds = any(v.dtype == np.float16 for v in feeds.values())
        want = ort_outputs(original, feeds, outputs)
        got = session.run(outputs, feeds)
        back = ort_outputs(exported.SerializeToString(), feeds, outputs)
        for out, g, b, w in zip(outputs, got, back, want):
            half = half_tol is not None and (half_feeds or w.dtype == np.float16)
            t = half_tol if half else tol
            what = f"{name} size {k} output {out!r}"
            assert_same_array(g, w, what, t, t)
            assert_same_array(b, w, what + " after to_onnx", t, t)


def export_at_older_opset(path: str, target: int, refusals):
    """to_onnx of the model at `path` written at opset `target`, checked (the default
    domain's opset is `target`, ONNX's full check passes); or None when the export is
    refused with a ConversionError "cannot write ... at opset TARGET" whose reason
    matches one of the regular expressions `refusals` (any other refusal fails)."""
    import re

    import onnx

    from onegraph.convert import from_onnx, to_onnx
    from onegraph.errors import ConversionError

    try:
        proto = to_onnx(from_onnx(path), opset=target)
    except ConversionError as e:
        message = str(e)
        assert message.startswith("cannot write ") and f"at opset {target}" in message \
            and any(re.search(why, message) for why in refusals), message
        return None
    assert [o.version for o in proto.opset_import if o.domain == ""] == [target]
    onnx.checker.check_model(proto, full_check=True)
    return proto
