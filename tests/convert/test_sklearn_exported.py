"""Models as skl2onnx (and onnxmltools) really write them, against scikit-learn's own
outputs.

data/sklearn_exported/ holds 58 small seeded models in 114 files. 56 are scikit-learn
1.9 estimators converted by skl2onnx 1.20: linear and ridge regression (one in
float64), logistic regression (binary, multiclass, string labels, raw scores; with
skl2onnx's default ZipMap and with zipmap=False), SGD and LinearSVC scores, SVC
(rbf and binary with probabilities, poly scores), SVR, NuSVR, OneClassSVM, decision
trees, random forests (one with string labels), extra trees, gradient boosting,
histogram gradient boosting on NaN inputs, AdaBoost, IsolationForest, soft voting,
a calibrated LinearSVC, k-nearest neighbours, Gaussian and Bernoulli naive Bayes,
MLPs, KMeans, PCA, TruncatedSVD, the scalers, Normalizer, Binarizer, SimpleImputer,
KBinsDiscretizer, PolynomialFeatures, a OneHotEncoder on strings, an OrdinalEncoder
on ints, a ColumnTransformer over a DataFrame (float, string and int64 inputs), a
StandardScaler/PCA/LogisticRegression pipeline and a TfidfVectorizer text pipeline;
two are a LightGBM and an XGBoost classifier (NaN inputs) converted by onnxmltools
1.16. Each skl2onnx model is there at {'': 13, 'ai.onnx.ml': 1} (ml 2 where skl2onnx
needs it) and at {'': 22, 'ai.onnx.ml': 3}, with held-out inputs and scikit-learn's
outputs on them (the independent oracle): predict for labels, predict_proba /
decision_function for probabilities and scores, predict for regressors, transform
for transformers. A ZipMap output is stored as the probability matrix plus the class
labels, and the sequence of maps is compared map by map (keys, their types, values).
index.json says which file feeds which input, which holds which output and which
scikit-learn method gave it, and lists what the converters refused or got wrong
(kept out of the corpus). `tools/export_sklearn_models.py` wrote them.

Each model must import, run in the Session to scikit-learn's outputs and to
onnxruntime's, and come back from to_onnx as a model that passes the full ONNX
checker and gives onnxruntime scikit-learn's outputs again.

Tolerances: labels and other integer or string outputs exactly; floats within
rtol 1e-5 and atol 1e-5. scikit-learn computes in float64 and these graphs in
float32 (linear_regression_f64 in float64), so they differ by float32 rounding: the
largest difference from scikit-learn over the corpus is 1.0e-6 for onnxruntime
(gaussian_nb's probabilities; index.json has each file's ort_max_abs_err) and 9.5e-7
for onegraph (logreg_raw_scores' scores). Tree thresholds cause no difference on
these inputs: scikit-learn's trees compare float32 inputs too, and the held-out rows
do not sit on a threshold. No output needs a looser tolerance.
"""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402

from .corpus import (assert_same_array, assert_zipmap, corpus_folder, load_array,  # noqa: E402
                     load_index, model_file, strict_xfail_params)

DATA = corpus_folder("sklearn_exported")
INDEX = load_index(DATA)
MODELS = INDEX["models"]

RTOL = ATOL = 1e-5


# file -> reason, for the Session test and the round-trip test (strict xfails); none
# now (the text models need com.microsoft Tokenizer: ops/ms_text.py)
XFAIL_SESSION: dict[str, str] = {}
XFAIL_ROUND_TRIP: dict[str, str] = dict(XFAIL_SESSION)


def _params(xfails):
    return strict_xfail_params(MODELS, xfails)


def _load(f):
    return load_array(DATA, f)


def _feeds(entry) -> dict:
    return {n: _load(f) for n, f in zip(entry["inputs"], entry["input_files"])}


def _wants(entry) -> list:
    """scikit-learn's outputs in graph output order: an array, or for a ZipMap output
    (probabilities [N, C], class labels [C])."""
    zipmaps = entry.get("zipmap_labels", {})
    return [(_load(f), _load(zipmaps[n]).tolist()) if n in zipmaps else _load(f)
            for n, f in zip(entry["outputs"], entry["output_files"])]


def _ort(model_bytes, feeds, outputs):
    so = ort.SessionOptions()
    so.log_severity_level = 3  # onnxmltools declares LightGBM's label as [1]: warns
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    return sess.run(outputs, feeds)


def _assert_same(got, want, what):
    if isinstance(want, (tuple, list)):
        assert_zipmap(got, want, what, RTOL, ATOL)
        return
    assert_same_array(got, want, what, RTOL, ATOL)


@pytest.mark.parametrize("name", _params(XFAIL_SESSION))
def test_session_matches_sklearn_and_onnxruntime(name):
    entry = MODELS[name]
    path, original = model_file(DATA, name)
    outputs, feeds = entry["outputs"], _feeds(entry)
    got = og.Session(from_onnx(path)).run(outputs, feeds)
    want_ort = _ort(original, feeds, outputs)
    for out, g, s, o in zip(outputs, got, _wants(entry), want_ort):
        what = f"{name} output {out!r}"
        _assert_same(g, s, what + " vs scikit-learn")
        _assert_same(g, o if isinstance(s, np.ndarray) else list(o),
                     what + " vs onnxruntime")


@pytest.mark.parametrize("name", _params(XFAIL_ROUND_TRIP))
def test_round_trip_through_to_onnx(name):
    entry = MODELS[name]
    outputs = entry["outputs"]
    exported = to_onnx(from_onnx(os.path.join(DATA, name)))
    onnx.checker.check_model(exported, full_check=True)
    back = _ort(exported.SerializeToString(), _feeds(entry), outputs)
    for out, b, s in zip(outputs, back, _wants(entry)):
        _assert_same(b if isinstance(s, np.ndarray) else list(b), s,
                     f"{name} output {out!r} after to_onnx")


def test_the_corpus_is_complete_and_small():
    names = {e["name"] for e in MODELS.values()}
    assert len(names) >= 35
    assert {"logreg_multi_zipmap", "logreg_string_labels_zipmap", "svc_rbf_proba",
            "random_forest_clf_zipmap", "gradient_boosting_clf",
            "hist_gradient_boosting_clf_nan", "column_transformer_logreg",
            "scaler_pca_logreg_zipmap", "onehot_strings", "isolation_forest",
            "knn_clf", "mlp_clf", "kmeans"} <= names
    assert {(e["opset"], e["ml_opset"]) for e in MODELS.values()
            if e["converter"] == "skl2onnx"} == {(13, 1), (13, 2), (22, 3)}
    assert {e["converter"] for e in MODELS.values()} == {"skl2onnx", "onnxmltools"}
    ops = set().union(*(e["ops"] for e in MODELS.values()))
    assert {"ai.onnx.ml:" + op for op in (
        "LinearClassifier", "LinearRegressor", "SVMClassifier", "SVMRegressor",
        "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap", "Scaler",
        "Normalizer", "Imputer", "OneHotEncoder", "LabelEncoder",
        "ArrayFeatureExtractor", "Binarizer")} <= ops
    zipmapped = [e for e in MODELS.values() if e.get("zipmap_labels")]
    assert len(zipmapped) >= 8
    # what the converters refused or got wrong is recorded, not silently dropped
    assert {f["name"] for f in INDEX["failures"]} >= {
        "knn_reg_distance", "normalizer_max", "isolation_forest", "ordinal_ints",
        "hist_gradient_boosting_clf_nan", "decision_tree_clf"}
    total = os.path.getsize(os.path.join(DATA, "index.json"))
    for name, e in MODELS.items():
        assert len(e["input_files"]) == len(e["inputs"])
        assert len(e["output_files"]) == len(e["outputs"]) == len(e["oracle"])
        graph = onnx.load(os.path.join(DATA, name)).graph
        assert [i.name for i in graph.input] == e["inputs"], name
        assert [o.name for o in graph.output] == e["outputs"], name
        for n in e.get("zipmap_labels", {}):  # exactly the sequence outputs
            assert graph.output[e["outputs"].index(n)].type.HasField("sequence_type")
        for f in [name] + e["input_files"] + e["output_files"] \
                + list(e.get("zipmap_labels", {}).values()):
            total += os.path.getsize(os.path.join(DATA, f))
    assert total < 3 * 1024 * 1024
