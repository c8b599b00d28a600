"""Export small scikit-learn (and LightGBM/XGBoost) models to ONNX, as skl2onnx and
onnxmltools really write them.

A test-corpus generator for onegraph's ONNX importer. Users arrive with scikit-learn
models that skl2onnx converted, and those graphs are mostly the ONNX-ML domain
(ai.onnx.ml): LinearClassifier/LinearRegressor, SVMClassifier/SVMRegressor,
TreeEnsembleClassifier/TreeEnsembleRegressor, Scaler, Normalizer, Imputer,
OneHotEncoder, LabelEncoder, ArrayFeatureExtractor, Binarizer, FeatureVectorizer,
ZipMap (a sequence of maps), mixed with standard ops (MatMul, TopK, ReduceLogSumExp,
Where, ...) for KNN, naive Bayes, MLP, KMeans, PCA and the pipelines' glue. This
script fits small seeded models on small data (make_classification/make_regression,
iris, a digits subset, a pandas DataFrame with numeric, string and int columns),
converts each with `skl2onnx.to_onnx` (LightGBM and XGBoost classifiers with
`onnxmltools.convert_lightgbm` / `convert_xgboost`) at two opset pairs, and saves
held-out inputs and scikit-learn's own outputs on them, the independent oracle the
tests compare against:

    OUT/<model>__skl2onnx_op<opset>_ml<ml>.onnx        (onnxmltools: __onnxmltools_)
    OUT/<model>__skl2onnx_op<opset>_ml<ml>.in<k>.npy   inputs, in graph input order
    OUT/<model>__skl2onnx_op<opset>_ml<ml>.out<k>.npy  scikit-learn's output k:
        predict -> the label output; predict_proba (or, for classifiers without
        probabilities, decision_function) -> the probabilities/scores output;
        predict -> a regressor's output; transform -> a transformer's output; for
        KMeans transform (distances) -> scores, for IsolationForest
        decision_function -> scores. Stored in the ONNX output's dtype (float32 for
        the float32 pipelines, the float64 one keeps float64) and reshaped to its
        declared rank ((N,) -> (N, 1) for regressors).
        A ZipMap output (a sequence of {label: probability} maps) is stored as the
        2-D predict_proba array, and the class labels (classes_) beside it:
    OUT/<model>__..._ml<ml>.out<k>.labels.npy
    OUT/index.json   {"generator": versions, "models": {file: entry}, "failures": [...]}
                     an entry gives name, estimator, converter, the requested and the
                     written opsets (default domain and ai.onnx.ml), ONNX input and
                     output names (graph order), input/output files, which scikit-learn
                     method gave each output ("oracle"), the ZipMap outputs' label
                     files, and when onnxruntime was importable its max abs difference
                     from scikit-learn (labels must agree exactly); a failure gives
                     name, file, opsets and the converter's error (or that the
                     converted model disagrees with scikit-learn under onnxruntime:
                     such files are not kept).

String inputs and string labels are saved as numpy unicode arrays ('<U'), never
object arrays, so everything loads with allow_pickle=False; the tests turn them into
object arrays (as onnxruntime and onegraph take and give strings).

Opsets: every model at {'': 13, 'ai.onnx.ml': 1} (falling back to ml 2 when skl2onnx
refuses ml 1, the refusal recorded) and at the newest pair skl2onnx 1.20 is tested
with, {'': 22, 'ai.onnx.ml': 3} (its OPSET_ML_TO_OPSET stops at ml 3). The first
tree model is also tried at {'': 22, 'ai.onnx.ml': 5}, so index.json records whether
skl2onnx writes TreeEnsemble (ai.onnx.ml 5) yet (1.20 does not: it writes the same
TreeEnsembleClassifier graph as at ml 3; that file is not kept). skl2onnx imports
the lowest ai.onnx.ml version the graph's ops need, not the one asked for, so an
"_ml3" file often imports ai.onnx.ml 1 (index.json's written_opsets says what each
file imports). LightGBM/XGBoost go through onnxmltools once, at target_opset 15 (the
newest onnxmltools 1.16 accepts; it writes ai.onnx 9 -- XGBoost: no default-domain
import at all -- and ai.onnx.ml 1 whatever it is asked).

It needs scikit-learn, skl2onnx, onnx, numpy and pandas; onnxmltools with lightgbm and
xgboost are optional (their models are skipped without them); onnxruntime is optional
but the corpus was written with it. It is not run by onegraph's tests:

    python3 -m venv /tmp/sklvenv
    /tmp/sklvenv/bin/pip install scikit-learn skl2onnx onnx onnxruntime numpy pandas \\
        lightgbm xgboost onnxmltools
    /tmp/sklvenv/bin/python tools/export_sklearn_models.py OUT_DIR [--only NAME ...]

HistGradientBoosting needs a shim with these versions (see SHIM_NOTE): its
conversion is tried as is first (the refusal recorded in failures), then with the
shim, and the kept file's entry says converter_patch. The script re-executes itself
with PYTHONHASHSEED=0 (skl2onnx orders opset_import by iterating a set), so a rerun
writes the same bytes, except the onnxmltools files, whose graph name is a fresh
uuid each time.

The corpus in tests/convert/data/sklearn_exported/ was written this way.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

import numpy as np
import onnx
import pandas as pd
import sklearn
import skl2onnx
from skl2onnx import to_onnx
from sklearn import datasets
from sklearn.base import is_classifier
from sklearn.cluster import KMeans
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import (AdaBoostClassifier, ExtraTreesClassifier, ExtraTreesRegressor,
                              GradientBoostingClassifier, GradientBoostingRegressor,
                              HistGradientBoostingClassifier,
                              HistGradientBoostingRegressor, IsolationForest,
                              RandomForestClassifier, RandomForestRegressor,
                              VotingClassifier)
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import (LinearRegression, LogisticRegression, Ridge,
                                  SGDClassifier)
from sklearn.naive_bayes import BernoulliNB, GaussianNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (Binarizer, KBinsDiscretizer, MinMaxScaler, Normalizer,
                                   OneHotEncoder, OrdinalEncoder, PolynomialFeatures,
                                   RobustScaler, StandardScaler)
from sklearn.svm import SVC, SVR, LinearSVC, NuSVR, OneClassSVM
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from corpus_tool import (kept_records, rerun_with_pinned_hash_seed,  # tools/, this folder
                         save_arrays, write_index)

try:  # optional: LightGBM / XGBoost through onnxmltools
    import lightgbm
    import onnxmltools
    import xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType
except ImportError:  # pragma: no cover - the corpus was written with them
    lightgbm = onnxmltools = xgboost = FloatTensorType = None

warnings.filterwarnings("ignore")  # convergence warnings of the tiny fits

# (default opset, ai.onnx.ml opset) pairs; the first falls back to ml 2 if ml 1 fails
LOW, LOW_FALLBACK, NEW = (13, 1), (13, 2), (22, 3)
# onnxmltools 1.16 accepts target_opset <= 15 and writes the opsets its converters
# need (ai.onnx 9 or none, ai.onnx.ml 1) whatever it is asked: one file each
ONNXMLTOOLS = [(15, None)]
PROBE = (22, 5)   # tried on the first tree model only: does skl2onnx write ml 5?
# With onnxruntime importable, a conversion whose onnxruntime outputs differ from
# scikit-learn's by more than this (or whose labels differ at all) is recorded as a
# failure and not kept. float32 inference against float64 scikit-learn stays well
# below it for every model kept (index.json has each one's ort_max_abs_err).
ORT_AGREES = 1e-3
N_TEST = 12       # held-out rows per model
SHIM_NOTE = ("skl2onnx 1.20 passes bools (False at leaves, numpy bools of "
             "missing_go_to_left at branches) as nodes_missing_value_tracks_true for "
             "HistGradientBoosting trees, which onnx 1.23's make_attribute refuses "
             "('Expected an int, got a boolean'); converted again with those values "
             "turned into ints, the graph skl2onnx means to write")


HGB_NOTE = "kept as converted again with the shim (its entry's converter_patch)"


@contextlib.contextmanager
def _bool_attr_shim():
    """While active, skl2onnx's tree_ensemble.add_node gets
    nodes_missing_value_tracks_true as an int (see SHIM_NOTE)."""
    from skl2onnx.common import tree_ensemble as te
    orig = te.add_node

    def add_node(*args, nodes_missing_value_tracks_true=0, **kw):
        return orig(*args, nodes_missing_value_tracks_true=int(
            nodes_missing_value_tracks_true), **kw)
    te.add_node = add_node
    try:
        yield
    finally:
        te.add_node = orig


# ----------------------------------------------------------------------------------
# Data (seeded, small)
# ----------------------------------------------------------------------------------

def _split(x, y, n_test=N_TEST):
    """(train X, train y, held-out X as float32): the last n_test rows are held out."""
    return x[:-n_test], y[:-n_test], np.ascontiguousarray(x[-n_test:], dtype=np.float32)


def _clf_data(n_classes=3, n_features=6, n=100, seed=0):
    x, y = datasets.make_classification(
        n_samples=n + N_TEST, n_features=n_features, n_informative=4, n_redundant=1,
        n_classes=n_classes, n_clusters_per_class=1, class_sep=1.0, random_state=seed)
    return _split(x.astype(np.float32), y)


def _reg_data(n_features=5, n_targets=1, n=80, seed=0):
    x, y = datasets.make_regression(n_samples=n + N_TEST, n_features=n_features,
                                    n_informative=4, n_targets=n_targets, noise=5.0,
                                    random_state=seed)
    return _split(x.astype(np.float32), y / 50.0)


def _iris():
    x, y = datasets.load_iris(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    return _split(x[order].astype(np.float32), y[order])


def _digits():
    """A digits subset: classes 0-3, 8x8 pixels (64 features), 160 rows."""
    x, y = datasets.load_digits(n_class=4, return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))[:160]
    return _split(x[order].astype(np.float32), y[order])


def _frame(n=90 + N_TEST, seed=0):
    """A DataFrame as users have them: three float columns, a string colour column
    and an int64 size column; the target depends on all of them."""
    rng = np.random.default_rng(seed)
    colours = np.array(["red", "green", "blue", "black"])
    df = pd.DataFrame({
        "age": rng.uniform(18, 80, n).astype(np.float32),
        "income": rng.lognormal(3, 0.5, n).astype(np.float32),
        "score": rng.standard_normal(n).astype(np.float32),
        "colour": colours[rng.integers(0, 4, n)],
        "size": rng.integers(1, 5, n).astype(np.int64),
    })
    logit = (0.05 * (df.age - 45) + 0.02 * (df.income - 20) + df.score
             + (df.colour == "red") * 1.5 - (df["size"] - 2.5) * 0.7)
    y = (logit > 0).astype(np.int64).to_numpy()
    return df.iloc[:-N_TEST], y[:-N_TEST], df.iloc[-N_TEST:].reset_index(drop=True)


# ----------------------------------------------------------------------------------
# Catalogue
# ----------------------------------------------------------------------------------

def _fit(model, x, y=None):
    return model.fit(x) if y is None else model.fit(x, y)


def catalogue():
    """The models: a list of dicts with name, make (-> (fitted model, held-out X:
    an array, or a DataFrame whose columns become the ONNX inputs)), oracle ({ONNX
    output name: scikit-learn method}), and optionally: zipmap (True keeps
    skl2onnx's default ZipMap on a classifier's probabilities; False, the default for
    models with a probabilities output, passes {'zipmap': False}; None passes no
    options, for LinearSVC, whose converter has no zipmap option), raw_scores (also
    pass {'raw_scores': True}), step_options ({pipeline step: skl2onnx options}),
    text (scikit-learn takes the [N, 1] string column as (N,)), shim (retry with the
    bool-attribute shim, see SHIM_NOTE), note (why the conversion is known to fail,
    copied into its failure record), converter ('skl2onnx', 'lightgbm' or 'xgboost')
    and tree (a tree model: the ml 5 probe is tried on the first)."""
    c3, c2, r1 = _clf_data, lambda: _clf_data(2, seed=1), _reg_data
    lab_proba = {"label": "predict", "probabilities": "predict_proba"}
    lab_dec = {"label": "predict", "probabilities": "decision_function"}
    zip_proba = {"output_label": "predict", "output_probability": "predict_proba"}
    reg = {"variable": "predict"}
    tr = {"variable": "transform"}

    def clf(model, data=c3):
        def make():
            x, y, t = data()
            return _fit(model, x, y), t
        return make

    def unsup(model, data):
        def make():
            x, _, t = data()
            return _fit(model, x), t
        return make

    def str_labels():
        x, y, t = _iris()
        names = np.array(["setosa", "versicolor", "virginica"])
        return _fit(LogisticRegression(max_iter=500), x, names[y]), t

    def f64():
        x, y, t = r1(n_features=4, seed=3)
        return _fit(LinearRegression(), x.astype(np.float64), y), t.astype(np.float64)

    def with_nan(x, t, seed=4):
        """Copies of x and t with 10% / 20% NaN: the trees learn missing-value routes
        (nodes_missing_value_tracks_true) and the held-out rows take them."""
        rng = np.random.default_rng(seed)
        x, t = x.copy(), t.copy()
        x[rng.random(x.shape) < 0.1] = np.nan
        t[rng.random(t.shape) < 0.2] = np.nan
        return x, t

    def hgb_nan(model):
        def make():
            x, y, t = (c3 if is_classifier(model) else r1)()
            x, t = with_nan(x, t)
            return _fit(model, x, y), t
        return make

    def imputer():
        x, _, t = r1(seed=5)
        rng = np.random.default_rng(5)
        x, t = x.copy(), t.copy()
        x[rng.random(x.shape) < 0.15] = np.nan
        t[rng.random(t.shape) < 0.25] = np.nan
        return _fit(SimpleImputer(strategy="mean"), x), t

    def onehot_strings():
        rng = np.random.default_rng(6)
        cats = [np.array(["a", "b", "c"]), np.array(["x", "yy", "zzz", "w"])]
        col = lambda n: np.stack([c[rng.integers(0, len(c), n)] for c in cats], 1)  # noqa
        x = col(60)
        t = col(N_TEST)
        t[0, 1] = "unseen"                      # handle_unknown="ignore": all zeros
        return _fit(OneHotEncoder(handle_unknown="ignore", sparse_output=False), x), t

    def ordinal_ints():
        rng = np.random.default_rng(7)
        x = np.stack([rng.choice([3, 7, 11], 60), rng.choice([0, 1, 2, 5, 9], 60)],
                     1).astype(np.int64)
        t = np.stack([rng.choice([3, 7, 11], N_TEST), rng.choice([0, 1, 2, 5, 9], N_TEST)],
                     1).astype(np.int64)
        return _fit(OrdinalEncoder(dtype=np.float32), x), t

    def tree_f64():
        x, y, t = r1(seed=8)
        return _fit(DecisionTreeRegressor(max_depth=4, random_state=0),
                    x.astype(np.float64), y), t.astype(np.float64)

    def forest_strings():
        x, y, t = c3()
        names = np.array(["cat", "dog", "emu"])
        return _fit(RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
                    x, names[y]), t

    def text_clf():
        """TfidfVectorizer (word 1-2 grams) on a (N,) string column, then
        LogisticRegression."""
        rng = np.random.default_rng(9)
        words = ["good", "bad", "fine", "awful", "great", "movie", "plot", "actor",
                 "very", "not"]
        docs = np.array([" ".join(rng.choice(words, rng.integers(3, 8)))
                         for _ in range(80 + N_TEST)])
        y = np.array([d.count("good") + d.count("great") - d.count("bad")
                      - d.count("awful") > 0 for d in docs]).astype(np.int64)
        pipe = Pipeline([("tfidf", TfidfVectorizer(ngram_range=(1, 2))),
                         ("clf", LogisticRegression(max_iter=500))])
        return _fit(pipe, docs[:-N_TEST], y[:-N_TEST]), docs[-N_TEST:].reshape(-1, 1)

    def column_transformer():
        df, y, t = _frame()
        pre = ColumnTransformer([
            ("num", StandardScaler(), ["age", "income", "score"]),
            ("cat", OneHotEncoder(handle_unknown="ignore"), ["colour", "size"])])
        return _fit(Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=500))]),
                    df, y), t

    def lgbm():
        x, y, t = c3()
        x, t = with_nan(x, t)
        return _fit(lightgbm.LGBMClassifier(n_estimators=10, num_leaves=8, max_depth=4,
                                            min_child_samples=5, verbose=-1,
                                            random_state=0), x, y), t

    def xgb():
        x, y, t = c3()
        x, t = with_nan(x, t)
        return _fit(xgboost.XGBClassifier(n_estimators=10, max_depth=3,
                                          random_state=0), x, y), t

    trees = dict(tree=True)
    rs = dict(random_state=0)
    cat = [
        dict(name="linear_regression", make=clf(LinearRegression(), r1), oracle=reg),
        dict(name="linear_regression_f64", make=f64, oracle=reg),
        dict(name="ridge_2targets", make=clf(Ridge(alpha=0.5),
                                             lambda: r1(n_targets=2, seed=2)), oracle=reg),
        dict(name="logreg_binary", make=clf(LogisticRegression(), c2), oracle=lab_proba),
        dict(name="logreg_binary_zipmap", make=clf(LogisticRegression(), c2),
             oracle=zip_proba, zipmap=True),
        dict(name="logreg_multi", make=clf(LogisticRegression(max_iter=500), _iris),
             oracle=lab_proba),
        dict(name="logreg_multi_zipmap", make=clf(LogisticRegression(max_iter=500), _iris),
             oracle=zip_proba, zipmap=True),
        dict(name="logreg_string_labels_zipmap", make=str_labels, oracle=zip_proba,
             zipmap=True),
        dict(name="sgd_hinge", make=clf(SGDClassifier(random_state=0)), oracle=lab_dec),
        dict(name="linear_svc_binary", make=clf(LinearSVC(random_state=0), c2),
             oracle=lab_dec, zipmap=None),
        dict(name="svc_rbf_proba", make=clf(SVC(probability=True, **rs), _iris),
             oracle=lab_proba),
        dict(name="svr_rbf", make=clf(SVR(C=2.0), r1), oracle=reg),
        dict(name="decision_tree_clf", make=clf(DecisionTreeClassifier(max_depth=4, **rs)),
             oracle=lab_proba, **trees),
        dict(name="decision_tree_reg", make=clf(DecisionTreeRegressor(max_depth=4, **rs),
                                                r1), oracle=reg, **trees),
        dict(name="random_forest_clf_zipmap",
             make=clf(RandomForestClassifier(n_estimators=10, max_depth=4, **rs)),
             oracle=zip_proba, zipmap=True, **trees),
        dict(name="random_forest_reg",
             make=clf(RandomForestRegressor(n_estimators=10, max_depth=4, **rs), r1),
             oracle=reg, **trees),
        dict(name="extra_trees_clf",
             make=clf(ExtraTreesClassifier(n_estimators=10, max_depth=4, **rs), c2),
             oracle=lab_proba, **trees),
        dict(name="extra_trees_reg",
             make=clf(ExtraTreesRegressor(n_estimators=10, max_depth=4, **rs), r1),
             oracle=reg, **trees),
        dict(name="gradient_boosting_clf",
             make=clf(GradientBoostingClassifier(n_estimators=10, max_depth=3, **rs)),
             oracle=lab_proba, **trees),
        dict(name="gradient_boosting_binary",
             make=clf(GradientBoostingClassifier(n_estimators=10, max_depth=3, **rs), c2),
             oracle=lab_proba, **trees),
        dict(name="gradient_boosting_reg",
             make=clf(GradientBoostingRegressor(n_estimators=10, max_depth=3, **rs), r1),
             oracle=reg, **trees),
        dict(name="hist_gradient_boosting_clf_nan",
             make=hgb_nan(HistGradientBoostingClassifier(max_iter=10, max_depth=3, **rs)),
             note=HGB_NOTE, oracle=lab_proba, shim=True, **trees),
        dict(name="hist_gradient_boosting_reg_nan",
             make=hgb_nan(HistGradientBoostingRegressor(max_iter=10, max_depth=3, **rs)),
             note=HGB_NOTE, oracle=reg, shim=True, **trees),
        dict(name="isolation_forest",
             make=unsup(IsolationForest(n_estimators=10, max_samples=32, **rs), c3),
             oracle={"label": "predict", "scores": "decision_function"}, **trees),
        dict(name="knn_clf", make=clf(KNeighborsClassifier(n_neighbors=5)),
             oracle=lab_proba),
        dict(name="knn_reg", make=clf(KNeighborsRegressor(n_neighbors=4), r1), oracle=reg),
        dict(name="knn_reg_distance",
             make=clf(KNeighborsRegressor(n_neighbors=4, weights="distance"), r1),
             oracle=reg, note="skl2onnx 1.20 multiplies the TopK(largest=0) distances by "
             "-1 before Max(., 1e-6) and Reciprocal, so every weight is 1e6: the graph "
             "computes uniform weights (a skl2onnx bug)"),
        dict(name="gaussian_nb", make=clf(GaussianNB()), oracle=lab_proba),
        dict(name="mlp_clf",
             make=clf(MLPClassifier(hidden_layer_sizes=(8,), max_iter=300, **rs)),
             oracle=lab_proba),
        dict(name="mlp_reg",
             make=clf(MLPRegressor(hidden_layer_sizes=(8,), activation="tanh",
                                   max_iter=300, **rs), r1), oracle=reg),
        dict(name="kmeans", make=unsup(KMeans(3, n_init=3, **rs), c3),
             oracle={"label": "predict", "scores": "transform"}),
        dict(name="pca", make=unsup(PCA(3, whiten=True, **rs), c3), oracle=tr),
        dict(name="truncated_svd", make=unsup(TruncatedSVD(3, **rs), c3), oracle=tr),
        dict(name="standard_scaler", make=unsup(StandardScaler(), c3), oracle=tr),
        dict(name="minmax_scaler", make=unsup(MinMaxScaler((-1, 2)), c3), oracle=tr),
        dict(name="robust_scaler", make=unsup(RobustScaler(), c3), oracle=tr),
        dict(name="normalizer_l1", make=unsup(Normalizer("l1"), c3), oracle=tr),
        dict(name="normalizer_max", make=unsup(Normalizer("max"), c3), oracle=tr,
             note="scikit-learn's norm='max' divides by max(|x|); skl2onnx writes the "
             "ai.onnx.ml Normalizer with norm MAX, which onnxruntime computes as x / "
             "max(x), so rows whose largest magnitude is negative differ"),
        dict(name="binarizer", make=unsup(Binarizer(threshold=0.3), c3), oracle=tr),
        dict(name="imputer_mean_nan", make=imputer, oracle=tr),
        dict(name="onehot_strings", make=onehot_strings, oracle=tr),
        dict(name="ordinal_ints", make=ordinal_ints, oracle=tr),
        dict(name="column_transformer_logreg", make=column_transformer, oracle=lab_proba),
        dict(name="scaler_pca_logreg_zipmap",
             make=clf(Pipeline([("scale", StandardScaler()), ("pca", PCA(8, **rs)),
                                ("clf", LogisticRegression(max_iter=500))]), _digits),
             oracle=zip_proba, zipmap=True),
        # less common but real: double-precision trees (the *_as_tensor attributes),
        # string class labels on a tree ensemble, other SVM kernels and one-class,
        # ensembles of ensembles, calibration, text features
        dict(name="decision_tree_reg_f64", make=tree_f64, oracle=reg, **trees,
             note="skl2onnx 1.20 writes a TreeEnsembleRegressor (importing ai.onnx.ml 1 "
             "even when asked for 3, without the *_as_tensor attributes) whose output "
             "it declares double: ai.onnx.ml says float, so onnx's full check and "
             "onnxruntime both refuse the model"),
        dict(name="random_forest_string_labels", make=forest_strings, oracle=lab_proba,
             **trees),
        dict(name="svc_binary_proba", make=clf(SVC(probability=True, **rs), c2),
             oracle=lab_proba),
        dict(name="svc_poly_scores", make=clf(SVC(kernel="poly", degree=2, **rs)),
             oracle=lab_dec),
        dict(name="one_class_svm", make=unsup(OneClassSVM(nu=0.2, gamma=0.2), c3),
             oracle={"label": "predict", "scores": "decision_function"}),
        dict(name="nu_svr_sigmoid", make=clf(NuSVR(kernel="sigmoid", gamma=0.05), r1),
             oracle=reg),
        dict(name="linear_svc_multi", make=clf(LinearSVC(random_state=0)),
             oracle=lab_dec, zipmap=None),
        dict(name="logreg_raw_scores", make=clf(LogisticRegression(max_iter=500), _iris),
             oracle=lab_dec, raw_scores=True),
        dict(name="adaboost_clf",
             make=clf(AdaBoostClassifier(DecisionTreeClassifier(max_depth=2),
                                         n_estimators=8, **rs)),
             oracle=lab_proba, **trees),
        dict(name="voting_soft",
             make=clf(VotingClassifier([("lr", LogisticRegression(max_iter=500)),
                                        ("dt", DecisionTreeClassifier(max_depth=3, **rs)),
                                        ("nb", GaussianNB())], voting="soft",
                                       flatten_transform=False)),  # skl2onnx needs it
             oracle=lab_proba),
        dict(name="calibrated_linear_svc",
             make=clf(CalibratedClassifierCV(LinearSVC(random_state=0), cv=3)),
             oracle=lab_proba),
        dict(name="bernoulli_nb", make=clf(BernoulliNB(binarize=0.0)), oracle=lab_proba),
        dict(name="poly_features_ridge",
             make=clf(Pipeline([("poly", PolynomialFeatures(2)), ("ridge", Ridge())]), r1),
             oracle=reg),
        dict(name="kbins_onehot",
             make=unsup(KBinsDiscretizer(4, encode="onehot-dense", strategy="quantile",
                                         quantile_method="averaged_inverted_cdf"), c3),
             oracle=tr),
        dict(name="tfidf_text_logreg", make=text_clf, oracle=lab_proba, text=True,
             step_options={"tfidf": {"locale": "C"}}),
        dict(name="tfidf_text_logreg_en_us", make=text_clf, oracle=lab_proba, text=True,
             note="skl2onnx's default StringNormalizer locale is en_US, which "
             "onnxruntime can only load where that C++ locale is installed (not here): "
             "tfidf_text_logreg is the same model written with locale='C'"),
    ]
    if onnxmltools is not None:
        cat += [
            dict(name="lightgbm_clf", make=lgbm, oracle=lab_proba, converter="lightgbm",
                 **trees),
            dict(name="xgboost_clf", make=xgb, oracle=lab_proba, converter="xgboost",
                 **trees),
        ]
    return cat


# ----------------------------------------------------------------------------------
# Conversion and oracle
# ----------------------------------------------------------------------------------

def _inputs(x) -> list:
    """The held-out X as the ONNX inputs: one array, or one [N, 1] column per
    DataFrame column (skl2onnx's convention for a DataFrame)."""
    if isinstance(x, pd.DataFrame):
        return [x[c].to_numpy().astype(np.str_).reshape(-1, 1)
                if pd.api.types.is_string_dtype(x[c])
                else np.asarray(x[c].to_numpy()).reshape(-1, 1) for c in x.columns]
    return [np.asarray(x).astype(np.str_) if np.asarray(x).dtype.kind in "OU"
            else np.asarray(x)]


def _convert(entry, model, x, opsets, shim=False):
    """The ONNX ModelProto for `model` at (opset, ml opset), with the
    nodes_missing_value_tracks_true shim if `shim`."""
    if shim:
        with _bool_attr_shim():
            return _convert(entry, model, x, opsets)
    opset, ml = opsets
    conv = entry.get("converter", "skl2onnx")
    if conv == "skl2onnx":
        zipmap = entry.get("zipmap", False if "probabilities" in entry["oracle"] else None)
        options = {} if zipmap is None or zipmap else {id(model): {"zipmap": False}}
        if entry.get("raw_scores"):
            options.setdefault(id(model), {})["raw_scores"] = True
        for step, opts in entry.get("step_options", {}).items():
            options[id(model.named_steps[step])] = opts
        options = options or None
        sample = x if isinstance(x, pd.DataFrame) else x[:1]
        return to_onnx(model, sample, target_opset={"": opset, "ai.onnx.ml": ml},
                       options=options)
    # onnxmltools takes one int target_opset and picks the opsets it writes itself
    # (the lowest its converters need: ai.onnx 9 and ai.onnx.ml 1 for these trees)
    if conv == "lightgbm":
        return onnxmltools.convert_lightgbm(
            model, initial_types=[("X", FloatTensorType([None, x.shape[1]]))],
            target_opset=opset, zipmap=False)
    return onnxmltools.convert_xgboost(   # writes no ZipMap; has no zipmap option
        model, initial_types=[("X", FloatTensorType([None, x.shape[1]]))],
        target_opset=opset)


def _declared(proto) -> dict:
    """{output name: ('tensor', rank) or ('zipmap', None)} from the graph outputs."""
    out = {}
    for o in proto.graph.output:
        t = o.type
        if t.HasField("sequence_type"):
            out[o.name] = ("zipmap", None)
        else:
            out[o.name] = ("tensor", len(t.tensor_type.shape.dim))
    return out


_NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
       onnx.TensorProto.INT64: np.int64, onnx.TensorProto.STRING: np.str_}


def _oracle(entry, model, x, proto) -> tuple[list, dict]:
    """scikit-learn's outputs in graph output order (each cast to the output's ONNX
    dtype and given its declared rank) and {output name: class labels} for the ZipMap
    outputs."""
    decl = _declared(proto)
    outs, labels = [], {}
    if entry.get("text"):
        x = x.ravel()   # the ONNX input is a [N, 1] string column; sklearn wants (N,)
    for o in proto.graph.output:
        method = entry["oracle"][o.name]
        v = np.asarray(getattr(model, method)(x))
        if decl[o.name][0] == "zipmap":
            labels[o.name] = np.asarray(model.classes_)
            if labels[o.name].dtype.kind in "OU":
                labels[o.name] = labels[o.name].astype(np.str_)
            outs.append(v.astype(np.float32))
            continue
        rank = decl[o.name][1]
        if v.ndim == 1 and rank == 2:
            v = v.reshape(-1, 1)          # regressors: (N,) -> (N, 1)
        dtype = _NP[o.type.tensor_type.elem_type]
        outs.append(v.astype(np.str_) if dtype is np.str_ else v.astype(dtype))
    return outs, labels


def _feeds(arrays, names) -> dict:
    """{input name: array}, unicode arrays as object arrays (onnxruntime's strings)."""
    return {n: a.astype(object) if a.dtype.kind == "U" else a
            for n, a in zip(names, arrays)}


def _ort_check(proto, arrays, want, labels) -> tuple[float | None, str | None]:
    """(max abs difference between onnxruntime and scikit-learn, a disagreement that
    is not a rounding error or None); (None, None) without onnxruntime."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None, None
    names = [o.name for o in proto.graph.output]
    try:
        sess = ort.InferenceSession(proto.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        got = sess.run(names, _feeds(arrays, [i.name for i in proto.graph.input]))
    except Exception as e:  # noqa: BLE001 - onnxruntime refuses the model
        return None, f"onnxruntime fails: {str(e).strip().splitlines()[0][:200]}"
    err = 0.0
    for n, g, w in zip(names, got, want):
        if n in labels:   # ZipMap: a list of dicts
            keys = [k for k in labels[n].tolist()]
            if len(g) != len(w) or any(list(d) != keys for d in g):
                return err, f"{n}: ZipMap keys/rows differ from classes_"
            g = np.asarray([[d[k] for k in keys] for d in g], dtype=np.float32)
        g = np.asarray(g)
        if g.shape != w.shape:
            return err, f"{n}: shape {g.shape} != scikit-learn's {w.shape}"
        if w.dtype.kind in "fc":
            if np.any(np.isnan(g) != np.isnan(w)):
                return err, f"{n}: NaN where scikit-learn has none (or the reverse)"
            if w.size:
                err = max(err, float(np.nanmax(np.abs(g.astype(np.float64) - w))))
        elif not np.array_equal(g.astype(w.dtype), w):
            return err, f"{n}: {np.sum(g.astype(w.dtype) != w)} of {w.size} values " \
                        "differ from scikit-learn's"
    return err, None



def _written_opsets(proto) -> dict:
    return {(i.domain or "ai.onnx"): i.version for i in proto.opset_import}


def export_entry(entry, out_dir, opsets, shim=False):
    """Convert one model at `opsets` (with the bool-attribute shim if `shim`), save
    inputs and scikit-learn's outputs; return (file, index entry) or (None,
    failure)."""
    conv = entry.get("converter", "skl2onnx")
    tool = "skl2onnx" if conv == "skl2onnx" else "onnxmltools"
    stem = f"{entry['name']}__{tool}_op{opsets[0]}" \
        + (f"_ml{opsets[1]}" if opsets[1] else "")
    fail = dict(name=entry["name"], file=stem + ".onnx", converter=tool,
                opset=opsets[0], ml_opset=opsets[1])
    if shim:
        fail["converter_patch"] = SHIM_NOTE
    if entry.get("note"):
        fail["note"] = entry["note"]
    model, x = entry["make"]()
    try:
        proto = _convert(entry, model, x, opsets, shim)
        onnx.checker.check_model(proto, full_check=True)
    except Exception as e:  # recorded, not fatal: a refused conversion is data too
        msg = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
        cause = e.__cause__
        if cause is not None:   # skl2onnx wraps onnx's errors: the cause says more
            msg += f" ... caused by {type(cause).__name__}: {str(cause)[:160]}"
        return None, dict(fail, error=f"{type(e).__name__}: {msg}")
    arrays = _inputs(x)
    in_names = [i.name for i in proto.graph.input]
    out_names = [o.name for o in proto.graph.output]
    if len(in_names) != len(arrays):
        return None, dict(fail, error=f"{len(in_names)} graph inputs for {len(arrays)} "
                                      "arrays")
    try:
        want, labels = _oracle(entry, model, x, proto)
    except KeyError as e:
        return None, dict(fail, error=f"unexpected output {e} (outputs {out_names})")
    if opsets == PROBE and not any(n.op_type == "TreeEnsemble" for n in proto.graph.node):
        wrote = sorted({n.op_type for n in proto.graph.node})
        ml = _written_opsets(proto).get("ai.onnx.ml")
        return None, dict(fail, error=f"skl2onnx writes no TreeEnsemble (ai.onnx.ml 5): "
                          f"asked for ml 5 it wrote {wrote} importing ai.onnx.ml {ml}, "
                          "the same graph as at ml 3 (not kept)")
    err, bad = _ort_check(proto, arrays, want, labels)
    if bad is not None and bad.startswith("onnxruntime fails"):
        return None, dict(fail, error="converted, but " + bad)
    if bad is not None or (err is not None and err > ORT_AGREES):
        return None, dict(fail, error="converted, but onnxruntime disagrees with "
                          "scikit-learn: " + (bad or f"max abs error {err:.3g}"))
    path = os.path.join(out_dir, stem + ".onnx")
    onnx.save(proto, path)
    est = model.steps[-1][1] if isinstance(model, Pipeline) else model
    rec = dict(name=entry["name"], estimator=type(model).__name__
               + (f"({type(est).__name__})" if est is not model else ""),
               converter=tool, opset=opsets[0], ml_opset=opsets[1],
               written_opsets=_written_opsets(proto),
               # the main graph's ops as "domain:op" ("" the default domain)
               ops=sorted({(n.domain or "") + ":" + n.op_type for n in proto.graph.node}),
               inputs=in_names, outputs=out_names,
               oracle=[entry["oracle"][n] for n in out_names],
               size=os.path.getsize(path),
               input_files=save_arrays(out_dir, stem, "in", arrays),
               output_files=save_arrays(out_dir, stem, "out", want))
    if shim:
        rec["converter_patch"] = SHIM_NOTE
    if labels:
        rec["zipmap_labels"] = {}
        for n, lab in labels.items():
            f = rec["output_files"][out_names.index(n)].replace(".npy", ".labels.npy")
            np.save(os.path.join(out_dir, f), lab, allow_pickle=False)
            rec["zipmap_labels"][n] = f
    if err is not None:
        rec["ort_max_abs_err"] = err
    return stem + ".onnx", rec


def main(argv=None):
    """Convert the catalogue (or `--only` names) into the output folder and write
    index.json there."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", default=None)
    a = ap.parse_args(argv)
    rerun_with_pinned_hash_seed(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    index_path = os.path.join(a.out_dir, "index.json")
    models, failures = kept_records(index_path, a.only)   # a partial run keeps the rest
    probed = False
    for entry in catalogue():
        if a.only and entry["name"] not in a.only:
            continue
        todo = [LOW, NEW] if entry.get("converter", "skl2onnx") == "skl2onnx" \
            else ONNXMLTOOLS
        if entry.get("tree") and not probed:
            todo.append(PROBE)
            probed = True
        for opsets in todo:
            # first as the converter writes it; failing that, with the shim (entries
            # that need it), then at ml 2 (for the low pair); every failure recorded
            attempts = [(o, s) for o in ([opsets, LOW_FALLBACK] if opsets == LOW
                                         else [opsets])
                        for s in ([False, True] if entry.get("shim") else [False])]
            for o, shim in attempts:
                file, rec = export_entry(entry, a.out_dir, o, shim)
                if file is not None:
                    break
                failures.append(rec)
                print(f"{rec['file']:<55} FAILED {rec['error']}", flush=True)
            if file is None:
                continue
            models[file] = rec
            err = rec.get("ort_max_abs_err")
            print(f"{file:<55} {rec['size']:>7,} bytes"
                  + ("" if err is None else f"  ort-vs-sklearn {err:.2e}"), flush=True)
    gen = dict(scikit_learn=sklearn.__version__, skl2onnx=skl2onnx.__version__,
               onnx=onnx.__version__, numpy=np.__version__, pandas=pd.__version__)
    if onnxmltools is not None:
        gen.update(onnxmltools=onnxmltools.__version__, lightgbm=lightgbm.__version__,
                   xgboost=xgboost.__version__)
    try:
        import onnxruntime
        gen["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    write_index(index_path, gen, models, failures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
