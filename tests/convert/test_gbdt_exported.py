"""Gradient-boosted tree models (XGBoost, LightGBM, CatBoost) as their ONNX converters
write them, against the libraries' own predictions.

data/gbdt_exported/ holds 47 small seeded models in 59 ONNX files (2.2 MB with their
inputs and outputs), written by tools/export_gbdt_models.py
(XGBoost 3.2, LightGBM 4.7, CatBoost 1.2, onnxmltools 1.16, skl2onnx 1.20; index.json
has the versions and lists what the converters refused or got wrong, kept out of the
corpus):

* XGBoost through onnxmltools (ai.onnx.ml 1): binary and 4- and 5-class classifiers
  (depthwise and lossguide growth, a base_score, depth 7), regressors with
  squared error, pseudo-Huber and absolute error, base_score with depth-1 stumps,
  depth 8, the log-link objectives (Poisson, Tweedie, gamma: TreeEnsembleRegressor,
  Exp and Mul) and one fed float64;
* LightGBM through onnxmltools (ai.onnx.ml 1): binary and 4-class classifiers, a
  5-class one with ZipMap, a 3-class one with string labels and ZipMap, regressors
  (L2, L1, Huber, quantile, Poisson, gamma, Tweedie: Exp), categorical splits (a
  regressor and a classifier, with an unseen category), use_missing=False, a deep one
  split over several TreeEnsembleRegressor nodes (summed), and one fed float64;
* CatBoost's own exporter (ai.onnx.ml 2, oblivious trees): a binary and two 3-class
  classifiers (ZipMap; one with string class labels: classlabels_strings and string
  map keys), regressors (depth 5, depth 8, nan_mode='Max');
* skl2onnx pipelines (StandardScaler + XGBoost / LightGBM, the boosters registered
  with update_registered_converter) at {'': 13, 'ai.onnx.ml': 1}, {'': 17,
  'ai.onnx.ml': 3} and {'': 21, 'ai.onnx.ml': 3}, one with ZipMap and one with
  zipmap='columns' (one probability output per class: Slice and Reshape).

Most held-out inputs are about 20% NaN (the training features 10%), so the trees'
missing-value routes (nodes_missing_value_tracks_true) are taken. Three models
(*_extreme_inputs: XGBoost, LightGBM, CatBoost) are fed +-inf, +-1e30, +-3e38 and -0.0
too, and three (*_on_thresholds: an XGBoost binary and 4-class classifier, a CatBoost
regressor) rows that sit exactly on the trees' split values or one float32 ulp off, so
BRANCH_LT (XGBoost) and CatBoost's borders are tested at the boundary. (LightGBM's
rows on its thresholds are left out: onnxmltools rounds LightGBM's float64 thresholds
to float32, and onnxruntime then disagrees with LightGBM; index.json's failures.)

No converter writes TreeEnsemble (ai.onnx.ml 5): skl2onnx refuses ml 5 (recorded in
index.json's failures), onnxmltools takes no ml opset, CatBoost picks ml 2. Nor does
any write the *_as_tensor double attributes: skl2onnx's float64 pipelines fail the
checker (recorded); the float64 files feed onnxmltools' float trees a double input.

Each model must import, run in the Session to the library's predictions (predict ->
labels or values, predict_proba -> probabilities; a ZipMap output map by map) and to
onnxruntime's, also on batches of one and of zero rows, and come back from to_onnx as a
model that passes the full ONNX checker and gives onnxruntime the same outputs.

Tolerances: labels exactly; NaN outputs at the same places; floats within rtol 1e-5,
atol 1e-5. A NaN (or inf, or on-threshold) input sent down the wrong branch changes
the output by a whole leaf weight, far beyond that, so routing must match exactly. The
trees add up float32 leaf values: onnxruntime in float32, onegraph in float64, XGBoost and CatBoost
in float32, LightGBM in float64. Measured over the corpus: onnxruntime vs the library
at most 5.1e-7 (xgb_reg_base_score_depth1, 30 stumps on a base of 2.5; index.json's
ort_max_abs_err); onegraph vs the library at most 2.4e-7 (xgb_reg_gamma, after Exp),
onegraph vs onnxruntime at most 4.5e-7 (xgb_reg_base_score_depth1). Every route agrees,
also on the extreme and threshold rows; 1e-5 leaves a margin of 20x over the
summation error.
"""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402

from .corpus import (assert_same_array, assert_zipmap, corpus_folder, feed_sets,  # noqa: E402
                     load_array, load_index, model_file, strict_xfail_params)

DATA = corpus_folder("gbdt_exported")
INDEX = load_index(DATA)
MODELS = INDEX["models"]

RTOL = ATOL = 1e-5

# file -> reason: corpus models that fail because of an onegraph bug (strict xfails),
# for the Session, one-row and round-trip tests; none
XFAILS: dict[str, str] = {}


def _params(xfails=None):
    return strict_xfail_params(MODELS, XFAILS if xfails is None else xfails)


def _wants(entry) -> list:
    """The library's outputs in graph output order: an array, or for a ZipMap output
    (probabilities [N, C], class labels [C])."""
    zipmaps = entry.get("zipmap_labels", {})
    return [(load_array(DATA, f), load_array(DATA, zipmaps[n]).tolist()) if n in zipmaps
            else load_array(DATA, f) for n, f in zip(entry["outputs"], entry["output_files"])]


def _ort(model_bytes, feeds, outputs):
    so = ort.SessionOptions()
    so.log_severity_level = 3  # onnxmltools declares some outputs' shapes loosely: warns
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    return sess.run(outputs, feeds)


def _assert_same(got, want, what):
    """Arrays: same shape, dtype, NaN positions, values within RTOL/ATOL (labels
    exactly); ZipMap outputs map by map."""
    if isinstance(want, (tuple, list)):
        assert_zipmap(list(got), want, what, RTOL, ATOL)
        return
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind == "f" and got.shape == want.shape:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what + " NaN")
    assert_same_array(got, want, what, RTOL, ATOL)


def _session(name):
    return og.Session(from_onnx(os.path.join(DATA, name)))


@pytest.mark.parametrize("name", _params())
def test_session_matches_library_and_onnxruntime(name):
    """The held-out rows: onegraph gives the library's predictions and onnxruntime's
    outputs."""
    entry = MODELS[name]
    _, original = model_file(DATA, name)
    outputs = entry["outputs"]
    (feeds,) = feed_sets(DATA, entry)
    got = _session(name).run(outputs, feeds)
    want_ort = _ort(original, feeds, outputs)
    for out, g, lib, o in zip(outputs, got, _wants(entry), want_ort):
        what = f"{name} output {out!r}"
        _assert_same(g, lib, what + " vs the library")
        _assert_same(g, o, what + " vs onnxruntime")


def _check_rows(name, rows):
    """The first `rows` held-out rows: onegraph gives onnxruntime's outputs."""
    entry = MODELS[name]
    _, original = model_file(DATA, name)
    outputs = entry["outputs"]
    (feeds,) = feed_sets(DATA, entry)
    part = {k: v[:rows] for k, v in feeds.items()}
    got = _session(name).run(outputs, part)
    for out, g, o in zip(outputs, got, _ort(original, part, outputs)):
        _assert_same(g, o, f"{name} ({rows} rows) output {out!r} vs onnxruntime")


@pytest.mark.parametrize("name", _params())
def test_batch_of_one_row(name):
    """The first held-out row alone (NaN in most models)."""
    _check_rows(name, 1)


@pytest.mark.parametrize("name", _params())
def test_batch_of_zero_rows(name):
    """No rows: the tree ops and ZipMap take an empty batch in onnxruntime."""
    _check_rows(name, 0)


@pytest.mark.parametrize("name", _params())
def test_round_trip_through_to_onnx(name):
    """to_onnx's export passes the full checker and gives onnxruntime the library's
    predictions."""
    entry = MODELS[name]
    outputs = entry["outputs"]
    exported = to_onnx(from_onnx(os.path.join(DATA, name)))
    onnx.checker.check_model(exported, full_check=True)
    (feeds,) = feed_sets(DATA, entry)
    back = _ort(exported.SerializeToString(), feeds, outputs)
    for out, b, lib in zip(outputs, back, _wants(entry)):
        _assert_same(b, lib, f"{name} output {out!r} after to_onnx")


def test_the_corpus_covers_what_it_promises():
    """The libraries, converters, opsets, ops, objectives, inputs and recorded refusals
    the module docstring names are all there, and the folder stays under 4 MB."""
    entries = list(MODELS.values())
    names = {e["name"] for e in entries}
    libraries = {e["name"].split("_")[0] for e in entries}
    assert {"xgb", "lgbm", "catboost", "pipe"} <= libraries
    assert {e["converter"] for e in entries} == {"onnxmltools", "catboost", "skl2onnx"}
    assert len(names) >= 45
    # the converters' objectives and features named in the docstring
    assert {"xgb_reg_poisson", "xgb_reg_tweedie", "xgb_reg_gamma", "xgb_multiclass4_nan",
            "xgb_binary_deep_base_score", "xgb_multiclass5_lossguide",
            "xgb_reg_double_input", "lgbm_reg_quantile", "lgbm_reg_huber",
            "lgbm_reg_poisson", "lgbm_reg_categorical", "lgbm_binary_categorical",
            "lgbm_reg_deep_split", "lgbm_multiclass5_zipmap", "lgbm_reg_double_input",
            "catboost_binary", "catboost_multiclass", "catboost_reg_nan_max",
            "pipe_scaler_xgb_binary", "pipe_scaler_lgbm_binary_zipmap",
            "xgb_reg_extreme_inputs", "lgbm_binary_extreme_inputs",
            "catboost_binary_extreme_inputs", "xgb_binary_on_thresholds",
            "xgb_multiclass4_on_thresholds", "catboost_reg_on_thresholds",
            "catboost_multiclass_string_labels", "lgbm_multiclass_string_labels",
            "pipe_scaler_lgbm_multiclass4_zipmap_columns"} <= names
    # ai.onnx.ml versions the files import: 1 (onnxmltools), 2 (CatBoost), 3 (skl2onnx)
    written_ml = {e["written_opsets"].get("ai.onnx.ml") for e in entries}
    assert {1, 2, 3} <= written_ml
    assert {(e["opset"], e["ml_opset"]) for e in entries if e["converter"] == "skl2onnx"} \
        == {(13, 1), (17, 3), (21, 3)}
    ops = set().union(*(e["ops"] for e in entries))
    assert {"ai.onnx.ml:TreeEnsembleClassifier", "ai.onnx.ml:TreeEnsembleRegressor",
            "ai.onnx.ml:ZipMap", "ai.onnx.ml:Scaler", ":Exp", ":Sum", ":Slice"} <= ops
    # classifiers and regressors, most on NaN inputs
    assert sum("predict_proba" in e["oracle"] for e in entries) >= 12
    assert sum(e["oracle"] == ["predict"] for e in entries) >= 20
    feeds = [np.load(os.path.join(DATA, e["input_files"][0])) for e in entries]
    assert sum(bool(np.isnan(f).any()) for f in feeds) >= 0.7 * len(entries)
    assert any(f.dtype == np.float64 for f in feeds)
    assert sum(bool(np.isposinf(f).any() and np.isneginf(f).any()) for f in feeds) >= 3
    assert any(np.load(os.path.join(DATA, f)).dtype.kind == "U" for e in entries
               for f in e.get("zipmap_labels", {}).values())
    # what the converters refused or got wrong is recorded, not silently dropped
    refused = {f["name"] for f in INDEX["failures"]}
    assert {"xgb_ranker", "xgb_reg_dart", "xgb_reg_logistic", "xgb_reg_2targets",
            "lgbm_reg_linear_tree", "lgbm_reg_zero_as_missing", "lgbm_reg_rf",
            "lgbm_reg_on_thresholds", "lgbm_multiclassova",
            "catboost_multiclass_one_vs_all", "pipe_scaler_xgb_reg_double",
            "pipe_scaler_lgbm_reg_double"} <= refused
    assert any(f["ml_opset"] == 5 for f in INDEX["failures"])
    total = os.path.getsize(os.path.join(DATA, "index.json"))
    for name, e in MODELS.items():
        graph = onnx.load(os.path.join(DATA, name)).graph
        assert [i.name for i in graph.input] == e["inputs"], name
        assert [o.name for o in graph.output] == e["outputs"], name
        assert len(e["output_files"]) == len(e["outputs"]) == len(e["oracle"])
        for f in [name] + e["input_files"] + e["output_files"] \
                + list(e.get("zipmap_labels", {}).values()):
            total += os.path.getsize(os.path.join(DATA, f))
    assert total < 4 * 1024 * 1024
