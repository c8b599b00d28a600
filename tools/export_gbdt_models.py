"""Export small gradient-boosted tree models (XGBoost, LightGBM, CatBoost) to ONNX, as
their converters really write them.

A test-corpus generator for onegraph's ONNX importer, beside the scikit-learn one
(tools/export_sklearn_models.py, which holds one LightGBM and one XGBoost classifier).
Gradient-boosted trees reach ONNX three ways, and this script uses all three:

* onnxmltools: `convert_xgboost` / `convert_lightgbm` (TreeEnsembleClassifier /
  TreeEnsembleRegressor of ai.onnx.ml 1, plus Exp/Mul for log-link objectives, Sum for
  LightGBM's split trees, ZipMap when asked);
* CatBoost's own `save_model(format="onnx")` (ai.onnx.ml 2, ZipMap on classifiers);
* skl2onnx, for scikit-learn pipelines (StandardScaler + XGBoost / LightGBM) whose
  boosters are registered with `update_registered_converter` as onnxmltools documents;
  only here can the ai.onnx.ml opset be chosen.

Each model is fitted on seeded synthetic data (make_classification / make_regression,
about 10% NaN in the training features where the library routes missing values) and
its held-out inputs keep about 20% NaN, so the trees' default directions
(nodes_missing_value_tracks_true) are taken. The *_extreme_inputs models' held-out rows
also hold +-inf, +-1e30, +-3e38 and -0.0; the *_on_thresholds models' held-out rows sit
exactly on the converted trees' split values or one float32 ulp off (BRANCH_LT vs
BRANCH_LEQ; CatBoost's borders). Nothing is pickled: the models are trained anew on
every run with fixed seeds. Files:

    OUT/<model>__<tool>[_op<opset>][_ml<ml>].onnx   tool: onnxmltools, catboost, skl2onnx
    OUT/<stem>.in<k>.npy    inputs, in graph input order
    OUT/<stem>.out<k>.npy   the library's own output k: predict -> labels (classifiers)
                            or values (regressors, reshaped to the declared [N, 1]);
                            predict_proba -> probabilities. Stored in the ONNX
                            output's dtype. A ZipMap output is stored as the
                            predict_proba matrix with the class labels beside it:
    OUT/<stem>.out<k>.labels.npy
    OUT/index.json   {"generator": versions, "models": {file: entry}, "failures": [...]},
                     the format of tests/convert/data/sklearn_exported/index.json: an
                     entry gives name, estimator, converter, requested and written
                     opsets, ops, input/output names and files, the oracle method of
                     each output, ZipMap label files and onnxruntime's largest
                     difference from the library (ort_max_abs_err); a failure gives the
                     converter's refusal, or that onnxruntime disagrees with the library
                     on the converted model (such files are not kept).

Opsets: onnxmltools 1.16 takes one int target_opset (at most 15; a dict is refused) and
writes ai.onnx.ml 1 whatever it is asked, so its files are written once at 15 (no _ml
suffix). CatBoost picks its own (ai.onnx.ml 2). The skl2onnx pipelines are written at
{'': 13, 'ai.onnx.ml': 1}, {'': 17, 'ai.onnx.ml': 3} and {'': 21, 'ai.onnx.ml': 3};
{'': 21, 'ai.onnx.ml': 5} is tried and refused by skl2onnx 1.20 (recorded). No
converter here writes TreeEnsemble (ai.onnx.ml 5) or the *_as_tensor double attributes
(skl2onnx refuses the float64 pipelines, recorded); the float64 files are onnxmltools'
trees fed a double input (the tree ops accept it and still give float32).

Run it (not by onegraph's tests) in its own venv:

    /work/main/.venv/bin/python -m venv /tmp/gbdtvenv
    /tmp/gbdtvenv/bin/pip install xgboost lightgbm catboost onnxmltools skl2onnx \\
        scikit-learn onnx==1.23.2 onnxruntime==1.32.0 numpy
    /tmp/gbdtvenv/bin/python tools/export_gbdt_models.py OUT_DIR [--only NAME ...]

The corpus in tests/convert/data/gbdt_exported/ was written this way (index.json's
generator has the versions). A rerun writes the same .npy bytes; the .onnx files differ
only in CatBoost's metadata (train_finish_time, model_guid) and onnxmltools' random
graph names, so index.json's sizes may move by a byte.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx

from corpus_tool import (kept_records, rerun_with_pinned_hash_seed,  # tools/, this folder
                         save_arrays, write_index)

warnings.filterwarnings("ignore")  # the libraries' deprecation chatter on tiny fits

N_TEST = 16        # held-out rows per model
NAN_TRAIN, NAN_TEST = 0.1, 0.2   # share of NaN features in training / held-out rows
ONNXMLTOOLS_OPSET = 15           # the highest target_opset onnxmltools 1.16 accepts
PIPE_OPSETS = [(13, 1), (17, 3), (21, 3)]
ML5_PROBE = (21, 5)              # tried on the first pipeline: is ai.onnx.ml 5 written?
# onnxruntime must agree with the library within this, relative to the value's size
# (|ort - lib| <= ORT_AGREES * (1 + |lib|)), and on every label, for a file to be kept.
# The libraries sum float32 (XGBoost, CatBoost) or float64 (LightGBM) leaves and
# onnxruntime sums float32, so a few float32 ulps of the total are expected.
ORT_AGREES = 1e-4


# ----------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------

def _holes(x: np.ndarray, share: float, seed: int) -> np.ndarray:
    """A copy of x with `share` of its entries (seeded) set to NaN."""
    x = x.copy()
    x[np.random.default_rng(seed).random(x.shape) < share] = np.nan
    return x


def clf_data(n_classes=2, n_features=6, n=300, seed=0, nan=True):
    """(train X, train y, held-out X): float32 features, int labels; NaN holes if nan."""
    x, y = _make_clf(n_classes, n_features, n + N_TEST, seed)
    return _split(x, y, nan, seed)


def _make_clf(n_classes, n_features, n, seed):
    from sklearn.datasets import make_classification
    x, y = make_classification(n_samples=n, n_features=n_features, n_informative=4,
                               n_redundant=1, n_classes=n_classes, n_clusters_per_class=1,
                               class_sep=0.8, random_state=seed)
    return x.astype(np.float32), y.astype(np.int64)


def reg_data(n_features=6, n=300, seed=0, nan=True, kind="real"):
    """(train X, train y, held-out X) for a regressor; `kind` shapes the target:
    'real' (any sign), 'positive' (> 0, for gamma), 'count' (Poisson counts),
    'unit' (in [0, 1], for logistic regression), 'tweedie' (>= 0 with zeros)."""
    from sklearn.datasets import make_regression
    x, y = make_regression(n_samples=n + N_TEST, n_features=n_features, n_informative=4,
                           noise=5.0, random_state=seed)
    y = y / np.abs(y).max()          # in [-1, 1]
    if kind == "positive":
        y = np.exp(1.5 * y)
    elif kind == "count":
        y = np.random.default_rng(seed).poisson(np.exp(1.5 * y)).astype(np.float64)
    elif kind == "unit":
        y = 1.0 / (1.0 + np.exp(-4.0 * y))
    elif kind == "tweedie":
        y = np.maximum(y, 0.0) * 3.0
    return _split(x.astype(np.float32), y, nan, seed)


def _split(x, y, nan, seed):
    train, test = x[:-N_TEST], x[-N_TEST:]
    if nan:
        train, test = _holes(train, NAN_TRAIN, seed + 100), _holes(test, NAN_TEST, seed + 200)
    return train, y[:-N_TEST], np.ascontiguousarray(test, dtype=np.float32)


def with_categories(x_train, x_test, column=0, n_cats=6, seed=0):
    """Copies with `column` replaced by small non-negative integer categories (as
    LightGBM wants them), one held-out category unseen in training and one NaN."""
    rng = np.random.default_rng(seed)
    a, b = x_train.copy(), x_test.copy()
    a[:, column] = rng.integers(0, n_cats, len(a))
    b[:, column] = rng.integers(0, n_cats + 1, len(b))   # n_cats: never seen
    b[0, column] = np.nan
    return a, b


def with_zeros(x_train, x_test, seed=0):
    """Copies with a quarter of the entries set to exactly 0.0 (zero_as_missing /
    missing=0 models take them as missing)."""
    rng = np.random.default_rng(seed)
    a, b = x_train.copy(), x_test.copy()
    a[rng.random(a.shape) < 0.25] = 0.0
    b[rng.random(b.shape) < 0.25] = 0.0
    return a, b


def with_extremes(x_train, x_test, seed=0):
    """The held-out rows with about a quarter of the entries replaced by +-inf, +-1e30,
    +-3e38 (near float32's largest) or -0.0, the first row all +inf and the second all
    -inf: every split then compares against values beyond its thresholds."""
    rng = np.random.default_rng(seed)
    b = x_test.copy()
    specials = np.array([np.inf, -np.inf, 1e30, -1e30, 3e38, -3e38, -0.0], np.float32)
    mask = rng.random(b.shape) < 0.25
    b[mask] = rng.choice(specials, int(mask.sum()))
    b[0], b[1] = np.inf, -np.inf
    return x_train, b


def on_thresholds(proto, x, seed=0):
    """A copy of x in which, per row, about 60% of the features a tree splits on are set
    exactly to one of that feature's split values, or one float32 ulp either side:
    the rows that tell BRANCH_LT from BRANCH_LEQ (and a rounded threshold from the
    library's own)."""
    splits = {}
    for node in proto.graph.node:
        if not node.op_type.startswith("TreeEnsemble"):
            continue
        att = {a.name: a for a in node.attribute}
        for f, v, m in zip(att["nodes_featureids"].ints, att["nodes_values"].floats,
                           att["nodes_modes"].strings):
            if m != b"LEAF":
                splits.setdefault(f, set()).add(v)
    rng = np.random.default_rng(seed)
    x = x.copy()
    for row in x:
        for f, values in sorted(splits.items()):
            if rng.random() < 0.6:
                t = np.float32(sorted(values)[rng.integers(len(values))])
                row[f] = [t, np.nextafter(t, np.float32(np.inf)),
                          np.nextafter(t, np.float32(-np.inf))][rng.integers(3)]
    return x


# ----------------------------------------------------------------------------------
# Catalogue
# ----------------------------------------------------------------------------------

CLF = {"label": "predict", "probabilities": "predict_proba"}
F64_NOTE = ("skl2onnx declares a float64 pipeline's output double, but onnxmltools' "
            "tree converters write float32 trees (no *_as_tensor attributes): the "
            "checker refuses the graph")
# skl2onnx names a ZipMap-ed classifier's outputs so
ZIP = {"output_label": "predict", "output_probability": "predict_proba"}


def catalogue():
    """The models: dicts with name, make (-> (fitted model, held-out X)), converter
    ('xgboost', 'lightgbm', 'catboost' or 'skl2onnx'), oracle ({ONNX output name: the
    library's method, "predict_proba:k" for its column k}), and optionally: zipmap
    (keep the converter's ZipMap; "columns": skl2onnx's one output per class), split
    (LightGBM's trees per TreeEnsembleRegressor), double (feed float64), thresholds
    (move the held-out rows onto the converted trees' split values, see on_thresholds),
    note (why a failure is expected, copied into its failure record)."""
    import catboost
    import lightgbm
    import xgboost
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    xgb_common = dict(n_jobs=1, random_state=0, tree_method="hist")
    lgb_common = dict(n_jobs=1, random_state=0, verbose=-1, min_child_samples=5)
    cb_common = dict(thread_count=1, random_seed=0, verbose=0, allow_writing_files=False)
    reg = {"variable": "predict"}
    cb_reg = {"predictions": "predict"}

    def fit(model, data, prep=None, **fit_kw):
        def make():
            x, y, t = data()
            if prep is not None:
                x, t = prep(x, t)
            return model.fit(x, y, **fit_kw), t
        return make

    def xgb_c(**kw):
        return xgboost.XGBClassifier(**{**dict(n_estimators=20, max_depth=3), **xgb_common,
                                        **kw})

    def xgb_r(**kw):
        return xgboost.XGBRegressor(**{**dict(n_estimators=20, max_depth=3), **xgb_common,
                                       **kw})

    def lgb_c(**kw):
        return lightgbm.LGBMClassifier(**{**dict(n_estimators=20, num_leaves=8),
                                          **lgb_common, **kw})

    def lgb_r(**kw):
        return lightgbm.LGBMRegressor(**{**dict(n_estimators=20, num_leaves=8),
                                         **lgb_common, **kw})

    def pipe(model):
        return Pipeline([("scale", StandardScaler()), ("gbdt", model)])

    def data(fn, **kw):
        return lambda: fn(**kw)

    def string_labels():
        x, y, t = clf_data(n_classes=3, seed=15)
        return x, np.array(["ant", "bee", "cicada"])[y], t

    def two_targets():
        x, y, t = reg_data(seed=16)
        return x, np.stack([y, np.sin(3 * y)], axis=1), t

    b, m4, m5 = data(clf_data, seed=1), data(clf_data, n_classes=4, seed=2), \
        data(clf_data, n_classes=5, n_features=8, seed=3)
    r = data(reg_data, seed=4)
    xgb, lgb, cb, skl = (dict(converter=c) for c in ("xgboost", "lightgbm", "catboost",
                                                      "skl2onnx"))
    cat = [
        # XGBoost through onnxmltools
        dict(name="xgb_binary_nan", make=fit(xgb_c(), b), oracle=CLF, **xgb),
        dict(name="xgb_binary_deep_base_score", make=fit(xgb_c(max_depth=7, base_score=0.3,
                                                               n_estimators=15), b),
             oracle=CLF, **xgb),
        dict(name="xgb_multiclass4_nan", make=fit(xgb_c(max_depth=4), m4), oracle=CLF, **xgb),
        dict(name="xgb_multiclass5_lossguide",
             make=fit(xgb_c(grow_policy="lossguide", max_leaves=12, max_depth=0,
                            n_estimators=10), m5), oracle=CLF, **xgb),
        dict(name="xgb_reg_squarederror_nan", make=fit(xgb_r(), r), oracle=reg, **xgb),
        dict(name="xgb_reg_base_score_depth1",
             make=fit(xgb_r(max_depth=1, base_score=2.5, n_estimators=30), r),
             oracle=reg, **xgb),
        dict(name="xgb_reg_depth8", make=fit(xgb_r(max_depth=8, n_estimators=8),
                                             data(reg_data, seed=5)), oracle=reg, **xgb),
        dict(name="xgb_reg_logistic", make=fit(xgb_r(objective="reg:logistic"),
                                               data(reg_data, kind="unit", seed=6)),
             oracle=reg, note="onnxmltools writes the margin sum with post_transform NONE "
             "and the probability-scale base_score: no sigmoid", **xgb),
        dict(name="xgb_reg_poisson", make=fit(xgb_r(objective="count:poisson"),
                                              data(reg_data, kind="count", seed=7)),
             oracle=reg, **xgb),
        dict(name="xgb_reg_tweedie", make=fit(xgb_r(objective="reg:tweedie"),
                                              data(reg_data, kind="tweedie", seed=8)),
             oracle=reg, **xgb),
        dict(name="xgb_reg_gamma", make=fit(xgb_r(objective="reg:gamma"),
                                            data(reg_data, kind="positive", seed=9)),
             oracle=reg, **xgb),
        dict(name="xgb_reg_pseudohuber", make=fit(xgb_r(objective="reg:pseudohubererror"),
                                                  r), oracle=reg, **xgb),
        dict(name="xgb_reg_absoluteerror", make=fit(xgb_r(objective="reg:absoluteerror"),
                                                    r), oracle=reg, **xgb),
        dict(name="xgb_reg_missing_zero", make=fit(xgb_r(missing=0.0), r, with_zeros),
             oracle=reg, note="XGBoost takes 0.0 as missing (missing=0); the ONNX tree "
             "ops only take NaN as missing", **xgb),
        dict(name="xgb_reg_double_input", make=fit(xgb_r(), r), oracle=reg, double=True,
             **xgb),
        dict(name="xgb_reg_extreme_inputs", make=fit(xgb_r(max_depth=4), r, with_extremes),
             oracle=reg, **xgb),
        dict(name="xgb_binary_on_thresholds", make=fit(xgb_c(max_depth=4), b), oracle=CLF,
             thresholds=True, **xgb),
        dict(name="xgb_multiclass4_on_thresholds", make=fit(xgb_c(n_estimators=8), m4),
             oracle=CLF, thresholds=True, **xgb),
        dict(name="xgb_reg_2targets", make=fit(xgb_r(), two_targets), oracle=reg,
             note="onnxmltools writes every leaf's vote for target 0 (XGBoost's trees "
             "alternate between the targets) and declares the output [N, 1]", **xgb),
        dict(name="xgb_ranker", make=fit(xgboost.XGBRanker(n_estimators=10, max_depth=3,
                                                           **xgb_common), b,
                                         qid=np.repeat(np.arange(20), 15)),
             oracle=reg, **xgb),
        dict(name="xgb_reg_dart", make=fit(xgb_r(booster="dart", rate_drop=0.1), r),
             oracle=reg, **xgb),
        # LightGBM through onnxmltools
        dict(name="lgbm_binary_nan", make=fit(lgb_c(), b), oracle=CLF, **lgb),
        dict(name="lgbm_multiclass4_nan", make=fit(lgb_c(num_leaves=12), m4), oracle=CLF,
             **lgb),
        dict(name="lgbm_multiclass5_zipmap", make=fit(lgb_c(n_estimators=10), m5),
             oracle=CLF, zipmap=True, **lgb),
        dict(name="lgbm_multiclass_string_labels", make=fit(lgb_c(n_estimators=10),
                                                            string_labels),
             oracle=CLF, zipmap=True, **lgb),
        dict(name="lgbm_reg_nan", make=fit(lgb_r(), r), oracle=reg, **lgb),
        dict(name="lgbm_reg_deep_split",
             make=fit(lgb_r(num_leaves=64, max_depth=9, n_estimators=30),
                      data(reg_data, seed=10, n=600)), oracle=reg, split=7, **lgb),
        dict(name="lgbm_reg_poisson", make=fit(lgb_r(objective="poisson"),
                                               data(reg_data, kind="count", seed=7)),
             oracle=reg, **lgb),
        dict(name="lgbm_reg_gamma", make=fit(lgb_r(objective="gamma"),
                                             data(reg_data, kind="positive", seed=9)),
             oracle=reg, **lgb),
        dict(name="lgbm_reg_tweedie", make=fit(lgb_r(objective="tweedie"),
                                               data(reg_data, kind="tweedie", seed=8)),
             oracle=reg, **lgb),
        dict(name="lgbm_reg_quantile", make=fit(lgb_r(objective="quantile", alpha=0.8), r),
             oracle=reg, **lgb),
        dict(name="lgbm_reg_huber", make=fit(lgb_r(objective="huber", alpha=0.5), r),
             oracle=reg, **lgb),
        dict(name="lgbm_reg_l1", make=fit(lgb_r(objective="l1"), r), oracle=reg, **lgb),
        dict(name="lgbm_reg_categorical", make=fit(lgb_r(), r, with_categories,
                                                   categorical_feature=[0]),
             oracle=reg, **lgb),
        dict(name="lgbm_binary_categorical",
             make=fit(lgb_c(cat_smooth=1.0, min_data_per_group=5), b, with_categories,
                      categorical_feature=[0]), oracle=CLF, **lgb),
        dict(name="lgbm_reg_zero_as_missing", make=fit(lgb_r(zero_as_missing=True), r,
                                                       with_zeros), oracle=reg, **lgb),
        dict(name="lgbm_reg_no_missing", make=fit(lgb_r(use_missing=False),
                                                  data(reg_data, seed=11, nan=False)),
             oracle=reg, **lgb),
        dict(name="lgbm_reg_linear_tree", make=fit(lgb_r(linear_tree=True),
                                                   data(reg_data, seed=12, nan=False)),
             oracle=reg, note="onnxmltools writes the trees but not LightGBM's linear "
             "leaf models", **lgb),
        dict(name="lgbm_reg_rf", make=fit(lgb_r(boosting_type="rf", bagging_freq=1,
                                                bagging_fraction=0.7), r),
             oracle=reg, note="boosting_type='rf' averages its trees; onnxmltools sums "
             "them", **lgb),
        dict(name="lgbm_binary_extreme_inputs", make=fit(lgb_c(), b, with_extremes),
             oracle=CLF, **lgb),
        dict(name="lgbm_reg_on_thresholds", make=fit(lgb_r(), r), oracle=reg,
             thresholds=True, note="LightGBM keeps float64 thresholds and onnxmltools "
             "writes them rounded to float32: a float32 input between the two routes the "
             "other way", **lgb),
        dict(name="lgbm_multiclassova", make=fit(lgb_c(objective="multiclassova"), m4),
             oracle=CLF, note="multiclassova scores each class with its own sigmoid; "
             "onnxmltools writes a SOFTMAX over the classes", **lgb),
        dict(name="lgbm_reg_double_input", make=fit(lgb_r(), r), oracle=reg, double=True,
             **lgb),
        # CatBoost's own exporter (oblivious trees; numeric features)
        dict(name="catboost_binary", make=fit(catboost.CatBoostClassifier(
            iterations=20, depth=4, **cb_common), b), oracle=CLF, zipmap=True, **cb),
        dict(name="catboost_multiclass", make=fit(catboost.CatBoostClassifier(
            iterations=15, depth=3, loss_function="MultiClass", **cb_common), m4),
             oracle=CLF, zipmap=True, **cb),
        dict(name="catboost_multiclass_string_labels", make=fit(catboost.CatBoostClassifier(
            iterations=10, depth=4, loss_function="MultiClass", **cb_common), string_labels),
             oracle=CLF, zipmap=True, **cb),
        dict(name="catboost_binary_extreme_inputs", make=fit(catboost.CatBoostClassifier(
            iterations=15, depth=4, **cb_common), b, with_extremes), oracle=CLF, zipmap=True,
             **cb),
        dict(name="catboost_reg_on_thresholds", make=fit(catboost.CatBoostRegressor(
            iterations=15, depth=4, **cb_common), r), oracle=cb_reg, thresholds=True, **cb),
        dict(name="catboost_multiclass_one_vs_all", make=fit(catboost.CatBoostClassifier(
            iterations=10, depth=3, loss_function="MultiClassOneVsAll", **cb_common), m4),
             oracle=CLF, zipmap=True, note="MultiClassOneVsAll scores each class with its "
             "own sigmoid; CatBoost's exporter writes a SOFTMAX", **cb),
        dict(name="catboost_reg_rmse", make=fit(catboost.CatBoostRegressor(
            iterations=20, depth=5, **cb_common), r), oracle=cb_reg, **cb),
        dict(name="catboost_reg_nan_max", make=fit(catboost.CatBoostRegressor(
            iterations=20, depth=3, nan_mode="Max", **cb_common), data(reg_data, seed=13)),
             oracle=cb_reg, **cb),
        dict(name="catboost_reg_depth8_nonan", make=fit(catboost.CatBoostRegressor(
            iterations=10, depth=8, **cb_common), data(reg_data, seed=14, nan=False)),
             oracle=cb_reg, **cb),
        # scikit-learn pipelines through skl2onnx (registered onnxmltools converters)
        dict(name="pipe_scaler_xgb_binary", make=fit(pipe(xgb_c()), b), oracle=CLF,
             pipeline=True, **skl),
        dict(name="pipe_scaler_xgb_reg", make=fit(pipe(xgb_r(max_depth=5)), r),
             oracle=reg, pipeline=True, **skl),
        dict(name="pipe_scaler_lgbm_multiclass4", make=fit(pipe(lgb_c()), m4), oracle=CLF,
             pipeline=True, **skl),
        dict(name="pipe_scaler_lgbm_reg_zipmapless", make=fit(pipe(lgb_r()), r),
             oracle=reg, pipeline=True, **skl),
        dict(name="pipe_scaler_lgbm_multiclass4_zipmap_columns",
             make=fit(pipe(lgb_c(n_estimators=10)), m4), zipmap="columns", pipeline=True,
             oracle={"output_label": "predict",
                     **{f"i{k}": f"predict_proba:{k}" for k in range(4)}}, **skl),
        dict(name="pipe_scaler_xgb_reg_double", make=fit(pipe(xgb_r()), r), oracle=reg,
             double=True, pipeline=True, note=F64_NOTE, **skl),
        dict(name="pipe_scaler_lgbm_reg_double", make=fit(pipe(lgb_r()), r), oracle=reg,
             double=True, pipeline=True, note=F64_NOTE, **skl),
        dict(name="pipe_scaler_lgbm_binary_zipmap", make=fit(pipe(lgb_c()), b),
             oracle=ZIP, zipmap=True, pipeline=True, **skl),
    ]
    return cat


# ----------------------------------------------------------------------------------
# Conversion
# ----------------------------------------------------------------------------------

_REGISTERED = []


def _register_skl2onnx():
    """Teach skl2onnx the XGBoost / LightGBM estimators (onnxmltools' converters), once."""
    if _REGISTERED:
        return
    import lightgbm
    import xgboost
    from onnxmltools.convert.lightgbm.operator_converters.LightGbm import convert_lightgbm
    from onnxmltools.convert.xgboost.operator_converters.XGBoost import convert_xgboost
    from skl2onnx import update_registered_converter
    from skl2onnx.common.shape_calculator import (calculate_linear_classifier_output_shapes,
                                                  calculate_linear_regressor_output_shapes)
    clf_opts = {"nocl": [True, False], "zipmap": [True, False, "columns"]}
    for est, alias, shapes, conv, opts in [
            (xgboost.XGBClassifier, "XGBoostXGBClassifier",
             calculate_linear_classifier_output_shapes, convert_xgboost, clf_opts),
            (xgboost.XGBRegressor, "XGBoostXGBRegressor",
             calculate_linear_regressor_output_shapes, convert_xgboost, None),
            (lightgbm.LGBMClassifier, "LightGbmLGBMClassifier",
             calculate_linear_classifier_output_shapes, convert_lightgbm, clf_opts),
            (lightgbm.LGBMRegressor, "LightGbmLGBMRegressor",
             calculate_linear_regressor_output_shapes, convert_lightgbm, {"split": None})]:
        update_registered_converter(est, alias, shapes, conv, options=opts)
    _REGISTERED.append(True)


def _convert(entry, model, x, opsets):
    """The ONNX ModelProto of `model` (held-out X `x`) at opsets (default, ml)."""
    conv = entry["converter"]
    if conv == "catboost":
        # CatBoost writes the file itself; read it back from a scratch folder
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            model.save_model(path, format="onnx",
                             export_parameters={"onnx_domain": "ai.catboost",
                                                "onnx_model_version": 1})
            return onnx.load(path)
    if conv == "skl2onnx":
        _register_skl2onnx()
        from skl2onnx import to_onnx
        last = model.steps[-1][1]
        options = None
        if any(m.startswith("predict_proba") for m in entry["oracle"].values()):
            zipmap = entry.get("zipmap", False)   # True, False or "columns"
            options = {id(last): {"zipmap": zipmap if isinstance(zipmap, str)
                                  else bool(zipmap)}}
        sample = x[:1].astype(np.float64) if entry.get("double") else x[:1]
        return to_onnx(model, sample, target_opset={"": opsets[0], "ai.onnx.ml": opsets[1]},
                       options=options)
    import onnxmltools
    from onnxmltools.convert.common.data_types import DoubleTensorType, FloatTensorType
    tensor = DoubleTensorType if entry.get("double") else FloatTensorType
    types = [("X", tensor([None, x.shape[1]]))]
    if conv == "lightgbm":
        return onnxmltools.convert_lightgbm(model, initial_types=types,
                                            target_opset=opsets[0],
                                            zipmap=bool(entry.get("zipmap")),
                                            split=entry.get("split"))
    return onnxmltools.convert_xgboost(model, initial_types=types, target_opset=opsets[0])


_NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
       onnx.TensorProto.INT64: np.int64, onnx.TensorProto.STRING: np.str_}


def _oracle(entry, model, x, proto):
    """The library's outputs in graph output order, each in its ONNX output's dtype and
    rank, and {output name: class labels} for ZipMap outputs."""
    outs, labels = [], {}
    for o in proto.graph.output:
        # "predict_proba:k" is column k of predict_proba (zipmap="columns" outputs)
        method, _, column = entry["oracle"][o.name].partition(":")
        v = np.asarray(getattr(model, method)(x))
        if column:
            v = v[:, int(column)]
        if o.type.HasField("sequence_type"):   # ZipMap: probabilities + labels
            labels[o.name] = np.asarray(model.classes_)
            if labels[o.name].dtype.kind in "OU":   # never object arrays (no pickle)
                labels[o.name] = labels[o.name].astype(np.str_)
            outs.append(v.astype(np.float32))
            continue
        tt = o.type.tensor_type
        rank = len(tt.shape.dim)
        if entry["converter"] == "catboost" and o.name == "predictions":
            # CatBoost declares its regressor output [N], but TreeEnsembleRegressor
            # gives [N, n_targets] (onnxruntime: [N, 1]): the op's shape is stored
            rank = 2
        if v.ndim == 1 and rank == 2:
            v = v.reshape(-1, 1)       # regressors: (N,) -> (N, 1)
        elif v.ndim == 2 and rank == 1 and v.shape[1] == 1:
            v = v.reshape(-1)          # CatBoost's predict: (N, 1) labels
        dtype = _NP[tt.elem_type]
        outs.append(v.astype(np.str_) if dtype is np.str_ else v.astype(dtype))
    return outs, labels


def _ort_check(proto, feeds, want, labels):
    """(max abs difference between onnxruntime and the library, a disagreement beyond
    rounding or None)."""
    import onnxruntime as ort
    names = [o.name for o in proto.graph.output]
    so = ort.SessionOptions()
    so.log_severity_level = 3
    try:
        sess = ort.InferenceSession(proto.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        got = sess.run(names, feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime refuses the model
        return None, f"onnxruntime fails: {str(e).strip().splitlines()[0][:200]}"
    err = 0.0
    for n, g, w in zip(names, got, want):
        if n in labels:
            keys = labels[n].tolist()
            if any(list(d) != keys for d in g):
                return err, f"{n}: ZipMap keys differ from classes_"
            g = [[d[k] for k in keys] for d in g]
        g = np.asarray(g)
        if g.shape != w.shape:
            return err, f"{n}: shape {g.shape} != the library's {w.shape}"
        if w.dtype.kind == "f":
            if np.any(np.isnan(g) != np.isnan(w)):
                return err, f"{n}: NaN where the library has none (or the reverse)"
            diff = np.abs(g.astype(np.float64) - w)
            if w.size:
                err = max(err, float(np.nanmax(diff)))
            worst = np.nanmax(diff / (1.0 + np.abs(w))) if w.size else 0.0
            if worst > ORT_AGREES:
                return err, f"{n}: max abs error {err:.3g} (relative {worst:.3g})"
        elif not np.array_equal(g.astype(w.dtype), w):
            return err, f"{n}: {int(np.sum(g.astype(w.dtype) != w))} of {w.size} values " \
                        "differ from the library's"
    return err, None



def _written_opsets(proto):
    return {(i.domain or "ai.onnx"): i.version for i in proto.opset_import}


def _stem(entry, opsets):
    conv = entry["converter"]
    tool = {"xgboost": "onnxmltools", "lightgbm": "onnxmltools"}.get(conv, conv)
    stem = f"{entry['name']}__{tool}"
    if opsets[0]:
        stem += f"_op{opsets[0]}"
    if opsets[1]:
        stem += f"_ml{opsets[1]}"
    return tool, stem


def _first_line(e):
    msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}"


def export_entry(entry, out_dir, opsets):
    """Convert one model at `opsets`, save inputs and the library's outputs; return
    (file, index entry) or (None, failure record)."""
    tool, stem = _stem(entry, opsets)
    fail = dict(name=entry["name"], file=stem + ".onnx", converter=tool,
                opset=opsets[0], ml_opset=opsets[1])
    if entry.get("note"):
        fail["note"] = entry["note"]
    model, x = entry["make"]()
    try:
        proto = _convert(entry, model, x, opsets)
        onnx.checker.check_model(proto, full_check=True)
    except Exception as e:  # recorded, not fatal: a refusal is data too
        return None, dict(fail, error=_first_line(e))
    if opsets == ML5_PROBE and not any(n.op_type == "TreeEnsemble" for n in proto.graph.node):
        return None, dict(fail, error="no TreeEnsemble written at ai.onnx.ml 5: "
                          f"{sorted({n.op_type for n in proto.graph.node})}")
    if entry.get("thresholds"):
        x = on_thresholds(proto, x)
    feed = x.astype(np.float64) if entry.get("double") else x
    in_names = [i.name for i in proto.graph.input]
    out_names = [o.name for o in proto.graph.output]
    feeds = {in_names[0]: feed}
    try:
        want, labels = _oracle(entry, model, x, proto)
    except KeyError as e:
        return None, dict(fail, error=f"unexpected output {e} (outputs {out_names})")
    err, bad = _ort_check(proto, feeds, want, labels)
    if bad is not None:
        prefix = "converted, but " if bad.startswith("onnxruntime fails") else \
            "converted, but onnxruntime disagrees with the library: "
        return None, dict(fail, error=prefix + bad)
    path = os.path.join(out_dir, stem + ".onnx")
    onnx.save(proto, path)
    est = model.steps[-1][1] if hasattr(model, "steps") else model
    rec = dict(name=entry["name"],
               estimator=type(model).__name__ + (f"({type(est).__name__})"
                                                 if est is not model else ""),
               converter=tool, opset=opsets[0], ml_opset=opsets[1],
               written_opsets=_written_opsets(proto),
               ops=sorted({(n.domain or "") + ":" + n.op_type for n in proto.graph.node}),
               inputs=in_names, outputs=out_names,
               oracle=[entry["oracle"][n] for n in out_names],
               size=os.path.getsize(path),
               input_files=save_arrays(out_dir, stem, "in", [feed]),
               output_files=save_arrays(out_dir, stem, "out", want))
    if labels:
        rec["zipmap_labels"] = {}
        for n, lab in labels.items():
            f = rec["output_files"][out_names.index(n)].replace(".npy", ".labels.npy")
            np.save(os.path.join(out_dir, f), lab, allow_pickle=False)
            rec["zipmap_labels"][n] = f
    rec["ort_max_abs_err"] = err
    return stem + ".onnx", rec


def _versions():
    import catboost
    import lightgbm
    import onnxmltools
    import onnxruntime
    import skl2onnx
    import sklearn
    import xgboost
    return dict(xgboost=xgboost.__version__, lightgbm=lightgbm.__version__,
                catboost=catboost.__version__, onnxmltools=onnxmltools.__version__,
                skl2onnx=skl2onnx.__version__, scikit_learn=sklearn.__version__,
                onnx=onnx.__version__, onnxruntime=onnxruntime.__version__,
                numpy=np.__version__)


def main(argv=None):
    """Convert the catalogue (or the `--only` names) into OUT_DIR and write its
    index.json."""
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
        conv = entry["converter"]
        if conv == "skl2onnx":
            todo = list(PIPE_OPSETS)
            if not probed:
                todo.append(ML5_PROBE)
                probed = True
        elif conv == "catboost":
            todo = [(None, None)]
        else:
            todo = [(ONNXMLTOOLS_OPSET, None)]
        for opsets in todo:
            file, rec = export_entry(entry, a.out_dir, opsets)
            if file is None:
                failures.append(rec)
                print(f"{rec['file']:<60} FAILED {rec['error']}", flush=True)
                continue
            models[file] = rec
            print(f"{file:<60} {rec['size']:>8,} bytes  ort-vs-lib "
                  f"{rec['ort_max_abs_err']:.2e}", flush=True)
    write_index(index_path, _versions(), models, failures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
