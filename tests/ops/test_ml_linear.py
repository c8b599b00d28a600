"""ONNX-ML preprocessing, linear, encoder and SVM ops (ops/ml.py) against onnxruntime.

Seeded random one-node models built with onnx.helper: several shapes and input types,
every post_transform / norm / kernel. onnx.reference is the oracle where onnxruntime
departs from the spec (see the ops/ml.py docstring); the named-error tests check that
bad attributes raise OpAttributeError and bad inputs ShapeError, naming the op.
"""

import statistics

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from onegraph.convert import from_onnx
from onegraph.errors import ExecutionError, OpAttributeError, ShapeError
from onegraph.ops import TensorInfo, get_op
from onegraph.train.session import Session

from .test_ml import close

ort = pytest.importorskip("onnxruntime")

ML = "ai.onnx.ml"
_ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
         np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int32): TensorProto.INT32,
         np.dtype(object): TensorProto.STRING}
F, I, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING
TRANSFORMS = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]


def one_node(op, feeds, out_types, **attrs):
    """A one-node ai.onnx.ml model with inputs named like `feeds` and typed outputs."""
    node = helper.make_node(op, list(feeds), [f"Y{i}" for i in range(len(out_types))],
                            domain=ML, **attrs)
    ins = [helper.make_tensor_value_info(k, _ELEM[v.dtype], [f"{k}_{i}" for i in range(v.ndim)])
           for k, v in feeds.items()]
    outs = [helper.make_tensor_value_info(f"Y{i}", t, None) for i, t in enumerate(out_types)]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs),
                          opset_imports=[helper.make_opsetid("", 19),
                                         helper.make_opsetid(ML, 3)])
    m.ir_version = 9
    return m


def run_og(m, feeds):
    return Session(from_onnx(m)).run([o.name for o in m.graph.output], feeds)


def run_ort(m, feeds):
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_ref(m, feeds):
    return ReferenceEvaluator(m).run(None, feeds)


def check(op, feeds, out_types, oracle=run_ort, **attrs):
    m = one_node(op, feeds, out_types, **attrs)
    # onnxruntime's PROBIT runs the erfinv approximation in float32, which cancels
    # catastrophically near 0 (errors up to ~7e-4 there)
    tol = 1e-3 if attrs.get("post_transform") == "PROBIT" else 1e-5
    close(run_og(m, feeds), oracle(m, feeds), rtol=tol, atol=tol)


def data(rng, shape, dtype=np.float32, low=-2, high=2):
    if np.dtype(dtype).kind == "i":
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# --------------------------------------------------------------------------- preprocessing

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@pytest.mark.parametrize("shape", [(5, 3), (3,), (2, 4, 3)])
def test_scaler_matches_ort(dtype, shape):
    rng = np.random.default_rng(len(shape))
    x = data(rng, shape, dtype)
    # onnxruntime reads axis 1 as the features also for rank > 2; we (and the spec's
    # [*, F] for Imputer) use the last axis, so rank 3 is compared with shared values
    for n in (1, 3) if len(shape) < 3 else (1,):
        check("Scaler", {"X": x}, [F], offset=rng.normal(size=n).tolist(),
              scale=rng.normal(size=n).tolist())


def test_scaler_single_offset_broadcasts_per_spec():
    # the spec lets offset and scale have 1 or C values each; onnxruntime wants equal sizes
    rng = np.random.default_rng(1)
    x = data(rng, (4, 3))
    check("Scaler", {"X": x}, [F], oracle=run_ref, offset=[0.5], scale=[1.0, 2.0, -3.0])
    m = one_node("Scaler", {"X": x}, [F], scale=[2.0])
    close(run_og(m, {"X": x}), [x * 2])


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
@pytest.mark.parametrize("shape", [(6, 4), (4,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_normalizer_matches_ort(norm, shape, dtype):
    rng = np.random.default_rng(7)
    x = data(rng, shape, dtype)
    if len(shape) == 2:
        x[1] = 0  # a zero divisor leaves the row as it is
        x[2] = -np.abs(x[2]) - 1  # negative max
    check("Normalizer", {"X": x}, [F], norm=norm)


@pytest.mark.parametrize("replaced", [float("nan"), 0.0, 1.5])
@pytest.mark.parametrize("per_feature", [True, False])
def test_imputer_float_matches_ort(replaced, per_feature):
    rng = np.random.default_rng(3)
    x = rng.choice([0.0, 1.5, -1.0, np.nan, 2.25], size=(8, 3)).astype(np.float32)
    values = [9.0, -8.0, 7.5] if per_feature else [9.0]
    for xs in (x, x[0], x.reshape(2, 4, 3)):
        m = one_node("Imputer", {"X": xs}, [F], imputed_value_floats=values,
                     replaced_value_float=replaced)
        hit = np.isnan(xs) if np.isnan(replaced) else xs == replaced
        want = np.where(hit, np.array(values, np.float32), xs)
        close(run_og(m, {"X": xs}), [want])
        if xs.ndim < 3 or not per_feature:
            close(run_og(m, {"X": xs}), run_ort(m, {"X": xs}))


def test_imputer_int_matches_ort_and_int32():
    rng = np.random.default_rng(4)
    x = rng.integers(-2, 3, size=(6, 3)).astype(np.int64)
    check("Imputer", {"X": x}, [I], imputed_value_int64s=[7, 8, 9], replaced_value_int64=0)
    check("Imputer", {"X": x}, [I], imputed_value_int64s=[5], replaced_value_int64=-2)
    # onnxruntime has no int32 kernel; the spec types allow it
    x32 = x.astype(np.int32)
    m = one_node("Imputer", {"X": x32}, [TensorProto.INT32], imputed_value_int64s=[7, 8, 9])
    (got,) = run_og(m, {"X": x32})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.where(x32 == 0, np.array([7, 8, 9]), x32))


# --------------------------------------------------------------------------- linear models

def linear_attrs(rng, rows, n_features, post):
    if post == "PROBIT":  # keep the scores inside (0, 1), where probit is defined
        coef = rng.uniform(-0.1, 0.1, size=(rows, n_features))
        return coef.ravel().tolist(), (0.5 + rng.uniform(-0.05, 0.05, rows)).tolist()
    return rng.normal(size=rows * n_features).tolist(), rng.normal(size=rows).tolist()


@pytest.mark.parametrize("post", TRANSFORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_linear_regressor_matches_ort(post, dtype):
    rng = np.random.default_rng(11)
    x = data(rng, (7, 4), dtype, -1, 1)
    coef, b = linear_attrs(rng, 3, 4, post)
    attrs = dict(coefficients=coef, intercepts=b, targets=3, post_transform=post)
    for xs in (x, x[0]):
        # onnxruntime has only a float32 LinearRegressor: compare with the float32 model
        xf = xs.astype(np.float32)
        close(run_og(one_node("LinearRegressor", {"X": xs}, [F], **attrs), {"X": xs}),
              run_ort(one_node("LinearRegressor", {"X": xf}, [F], **attrs), {"X": xf}),
              rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("post", TRANSFORMS)
def test_linear_regressor_single_target(post):
    # onnxruntime applies only PROBIT to a single target; the spec (and onnx.reference)
    # apply every transform
    rng = np.random.default_rng(12)
    x = data(rng, (5, 3), np.float32, -1, 1)
    coef, b = linear_attrs(rng, 1, 3, post)
    m = one_node("LinearRegressor", {"X": x}, [F], coefficients=coef, intercepts=b,
                 post_transform=post)
    (raw,) = run_ort(one_node("LinearRegressor", {"X": x}, [F], coefficients=coef,
                              intercepts=b), {"X": x})
    if post in ("NONE", "PROBIT"):
        want = run_ort(m, {"X": x})
    else:
        raw = raw.astype(np.float64)
        want = [{"LOGISTIC": 1 / (1 + np.exp(-raw)), "SOFTMAX": np.ones_like(raw),
                 "SOFTMAX_ZERO": (np.abs(raw) > 1e-7) * 1.0}[post].astype(np.float32)]
    close(run_og(m, {"X": x}), want, rtol=1e-4, atol=1e-4)
    check("LinearRegressor", {"X": x}, [F], coefficients=coef)  # no intercepts


@pytest.mark.parametrize("post", TRANSFORMS)
@pytest.mark.parametrize("strings", [False, True])
def test_linear_classifier_multiclass_matches_ort(post, strings):
    rng = np.random.default_rng(13)
    x = data(rng, (9, 4), np.float32, -1, 1)
    coef, b = linear_attrs(rng, 3, 4, post)
    labels = dict(classlabels_strings=["a", "b", "c"]) if strings else dict(
        classlabels_ints=[4, -1, 9])
    check("LinearClassifier", {"X": x}, [S if strings else I, F], coefficients=coef,
          intercepts=b, post_transform=post, **labels)
    # skl2onnx's binary logistic regression: two rows [-w, w]
    coef2, b2 = linear_attrs(rng, 1, 4, post)
    two = np.concatenate([-np.array(coef2), coef2]).tolist()
    labels = dict(classlabels_strings=["no", "yes"]) if strings else dict(
        classlabels_ints=[0, 1])
    check("LinearClassifier", {"X": x}, [S if strings else I, F], coefficients=two,
          intercepts=[-b2[0], b2[0]], post_transform=post, multi_class=1, **labels)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("strings", [False, True])
def test_linear_classifier_binary_single_row(post, strings):
    # one coefficient row for two classes: label by s > 0, scores [1 - s, s] (NONE, as
    # onnxruntime) or the transform of [-s, s] (LOGISTIC as onnxruntime; SOFTMAX as
    # onnx.reference, onnxruntime skips it here)
    rng = np.random.default_rng(14)
    x = data(rng, (12, 3), np.float64, -1, 1)
    labels = dict(classlabels_strings=["n", "p"]) if strings else dict(classlabels_ints=[3, 7])
    oracle = run_ort if post in ("NONE", "LOGISTIC") else run_ref
    for _ in range(3):
        coef = rng.normal(size=3)
        coef[0], coef[1] = abs(coef[0]), -abs(coef[1])
        check("LinearClassifier", {"X": x}, [S if strings else I, F], oracle=oracle,
              coefficients=coef.tolist(), intercepts=[float(rng.normal())],
              post_transform=post, **labels)


# --------------------------------------------------------------------------- encoders

def test_one_hot_encoder_matches_ort():
    x = np.array([[1.7, 3.0], [2.0, -1.0], [-1.5, -0.5]], np.float32)
    for xs in (x, x.astype(np.float64), x.astype(np.int64), x[0], x.reshape(1, 3, 2)):
        check("OneHotEncoder", {"X": xs}, [F], cats_int64s=[1, 2, 3, -1, 0])
    check("OneHotEncoder", {"X": x}, [F], cats_int64s=[1, 2, 3])
    s = np.array([["a", "b"], ["zz", "c"]], dtype=object)
    check("OneHotEncoder", {"X": s}, [F], cats_strings=["b", "a", "c"])
    check("OneHotEncoder", {"X": s[:, :1]}, [F], cats_strings=["a", "zz"], zeros=0)


def test_one_hot_encoder_errors():
    x = np.array([[1, 5]], np.int64)
    with pytest.raises(ExecutionError, match="OneHotEncoder: value 5 is not a category"):
        run_og(one_node("OneHotEncoder", {"X": x}, [F], cats_int64s=[1, 2], zeros=0), {"X": x})
    with pytest.raises(ShapeError, match="OneHotEncoder: input of type int64"):
        run_og(one_node("OneHotEncoder", {"X": x}, [F], cats_strings=["a"]), {"X": x})
    with pytest.raises(OpAttributeError, match="OneHotEncoder: exactly one of"):
        run_og(one_node("OneHotEncoder", {"X": x}, [F]), {"X": x})


def test_category_mapper_matches_ort():
    s = np.array([["a", "z"], ["b", "a"], ["c", ""]], dtype=object)
    check("CategoryMapper", {"X": s}, [I], cats_strings=["a", "b", "c"], cats_int64s=[5, 6, 7])
    check("CategoryMapper", {"X": s}, [I], cats_strings=["a", "b", "a"], cats_int64s=[5, 6, 7],
          default_int64=-9)
    i = np.array([[5, 7, 8], [6, 6, -1]], np.int64)
    check("CategoryMapper", {"X": i}, [S], cats_strings=["a", "b", "c"], cats_int64s=[5, 6, 7])
    check("CategoryMapper", {"X": i[0]}, [S], cats_strings=["a", "b"], cats_int64s=[5, 6],
          default_string="q")


def test_feature_vectorizer_matches_ort():
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.int64, np.float64):
        a, b = data(rng, (4, 3), dtype), data(rng, (4, 1), dtype)
        for dims in ([3, 1], [2, 3], [4, 1], [0, 1]):
            check("FeatureVectorizer", {"A": a, "B": b}, [F], inputdimensions=dims)
        check("FeatureVectorizer", {"A": a[0], "B": b[0]}, [F], inputdimensions=[3, 1])
        check("FeatureVectorizer", {"A": a.reshape(4, 3, 1), "B": b}, [F],
              inputdimensions=[3, 1])
        check("FeatureVectorizer", {"A": a}, [F], inputdimensions=[3])


# --------------------------------------------------------------------------- SVM

@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID"])
def test_svm_regressor_matches_ort(kernel):
    rng = np.random.default_rng(21)
    x = data(rng, (8, 3), np.float32, -1, 1)
    n_sv = 5
    attrs = dict(kernel_type=kernel, kernel_params=[0.3, 0.2, 3.0],
                 support_vectors=rng.normal(size=n_sv * 3).tolist(), n_supports=n_sv,
                 coefficients=rng.normal(size=n_sv).tolist(), rho=[float(rng.normal())])
    check("SVMRegressor", {"X": x}, [F], **attrs)
    x64 = x.astype(np.float64)  # onnxruntime has only a float32 kernel
    close(run_og(one_node("SVMRegressor", {"X": x64}, [F], **attrs), {"X": x64}),
          run_ort(one_node("SVMRegressor", {"X": x}, [F], **attrs), {"X": x}), 1e-4, 1e-4)
    check("SVMRegressor", {"X": x}, [F], **dict(attrs, one_class=1))
    # linear mode: no support vectors, the coefficients are the weights
    linear = dict(attrs, n_supports=0, coefficients=rng.normal(size=3).tolist())
    del linear["support_vectors"]
    check("SVMRegressor", {"X": x}, [F], **linear)


@pytest.mark.parametrize("post", ["LOGISTIC", "PROBIT", "SOFTMAX"])
def test_svm_regressor_post_transform_per_spec(post):
    # onnxruntime ignores post_transform here; the spec applies it to the score
    rng = np.random.default_rng(22)
    x = data(rng, (6, 2), np.float32, -1, 1)
    attrs = dict(kernel_type="RBF", kernel_params=[0.5, 0.0, 0.0],
                 support_vectors=[0.0, 1.0, 1.0, -1.0], n_supports=2,
                 coefficients=[0.15, -0.2], rho=[0.5])
    (raw,) = run_ort(one_node("SVMRegressor", {"X": x}, [F], **attrs), {"X": x})
    raw = raw.astype(np.float64)
    if post == "LOGISTIC":
        want, tol = 1 / (1 + np.exp(-raw)), 1e-5
    elif post == "SOFTMAX":
        want, tol = np.ones_like(raw), 1e-6
    else:  # the exact probit; ours uses onnxruntime's erfinv approximation (~0.2 %)
        want, tol = np.vectorize(statistics.NormalDist().inv_cdf)(raw), 5e-3
    m = one_node("SVMRegressor", {"X": x}, [F], post_transform=post, **attrs)
    close(run_og(m, {"X": x}), [want.astype(np.float32)], rtol=tol, atol=tol)


# --------------------------------------------------------------------------- errors, inference

X2 = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize("op,attrs,error,match", [
    ("Normalizer", dict(norm="L3"), OpAttributeError, "Normalizer: norm must be one of"),
    ("Scaler", dict(scale=[1.0, 2.0]), ShapeError, "Scaler: scale has 2 values but X has 3"),
    ("Imputer", dict(replaced_value_float=0.0), OpAttributeError,
     "Imputer: imputed_value_floats must be given"),
    ("Imputer", dict(imputed_value_floats=[1.0, 2.0]), ShapeError,
     "Imputer: imputed_value_floats has 2 values"),
    ("LinearRegressor", dict(coefficients=[1.0] * 6, targets=4), OpAttributeError,
     "LinearRegressor: 6 coefficients do not split into 4 rows"),
    ("LinearRegressor", dict(coefficients=[1.0] * 4, targets=2), ShapeError,
     "LinearRegressor: the coefficients have 2 features per row but X has 3"),
    ("LinearRegressor", dict(coefficients=[1.0] * 3, intercepts=[1.0, 2.0]), OpAttributeError,
     "LinearRegressor: 2 intercepts for 1 coefficient rows"),
    ("LinearRegressor", dict(coefficients=[1.0] * 3, post_transform="TANH"), OpAttributeError,
     "LinearRegressor: post_transform must be one of"),
    ("LinearClassifier", dict(coefficients=[1.0] * 9, intercepts=[0.0] * 3,
                              classlabels_ints=[1, 2]), OpAttributeError,
     "LinearClassifier: 3 intercepts for 2 classes"),
    ("LinearClassifier", dict(coefficients=[1.0] * 3), OpAttributeError,
     "LinearClassifier: exactly one of classlabels_ints"),
    ("LinearClassifier", dict(coefficients=[1.0] * 6, classlabels_ints=[1, 2], multi_class=3),
     OpAttributeError, "LinearClassifier: multi_class must be 0 or 1"),
    ("CategoryMapper", dict(cats_strings=["a"], cats_int64s=[1, 2]), OpAttributeError,
     "CategoryMapper: attributes must have the same length"),
    ("SVMRegressor", dict(coefficients=[1.0, 2.0, 3.0], rho=[0.0], kernel_type="CUBIC"),
     OpAttributeError, "SVMRegressor: kernel_type must be one of"),
    ("SVMRegressor", dict(coefficients=[1.0, 2.0, 3.0], rho=[0.0, 1.0]), OpAttributeError,
     "SVMRegressor: rho must hold one value"),
    ("SVMRegressor", dict(coefficients=[1.0], support_vectors=[1.0] * 6, n_supports=2,
                          rho=[0.0]), OpAttributeError,
     "SVMRegressor: 1 coefficients for 2 support vectors"),
    ("SVMRegressor", dict(coefficients=[1.0, 1.0], support_vectors=[1.0] * 4, n_supports=2,
                          rho=[0.0]), ShapeError,
     "SVMRegressor: the support_vectors have 2 features per row but X has 3"),
    ("SVMRegressor", dict(coefficients=[1.0] * 3, rho=[0.0], kernel_params=[1.0]),
     OpAttributeError, "SVMRegressor: kernel_params must hold gamma"),
])
def test_named_errors(op, attrs, error, match):
    out = [I, F] if op == "LinearClassifier" else [I if op == "CategoryMapper" else F]
    x = np.array([["a"]], object) if op == "CategoryMapper" else X2
    with pytest.raises(error, match=match):
        run_og(one_node(op, {"X": x}, out, **attrs), {"X": x})


def test_bad_input_shapes():
    x3 = np.zeros((2, 2, 3), np.float32)
    with pytest.raises(ShapeError, match="Normalizer: X must be"):
        run_og(one_node("Normalizer", {"X": x3}, [F]), {"X": x3})
    m = one_node("LinearRegressor", {"X": x3}, [F], coefficients=[1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match="LinearRegressor: X must be"):
        run_og(m, {"X": x3})
    a, b = np.zeros((2, 1), np.float32), np.zeros((3, 1), np.float32)
    m = one_node("FeatureVectorizer", {"A": a, "B": b}, [F], inputdimensions=[1, 1])
    with pytest.raises(ShapeError, match="FeatureVectorizer: inputs have different batch"):
        run_og(m, {"A": a, "B": b})
    m = one_node("FeatureVectorizer", {"A": a, "B": a}, [F], inputdimensions=[1])
    with pytest.raises(OpAttributeError, match="FeatureVectorizer: inputdimensions"):
        run_og(m, {"A": a, "B": a})


def test_inference_matches_outputs():
    f32, i64, obj = np.dtype(np.float32), np.dtype(np.int64), np.dtype(object)
    cases = [
        ("Scaler", dict(scale=[2.0]), [TensorInfo(i64, (4, 3))], [(f32, (4, 3))]),
        ("Imputer", dict(imputed_value_int64s=[1]), [TensorInfo(i64, (4, 3))],
         [(i64, (4, 3))]),
        ("LinearRegressor", dict(coefficients=[1.0] * 6, targets=2),
         [TensorInfo(f32, (5, 3))], [(f32, (5, 2))]),
        ("LinearClassifier", dict(coefficients=[1.0] * 3, classlabels_strings=["a", "b"]),
         [TensorInfo(f32, (5, 3))], [(obj, (5,)), (f32, (5, 2))]),
        ("OneHotEncoder", dict(cats_int64s=[1, 2, 3]), [TensorInfo(i64, (4, 2))],
         [(f32, (4, 2, 3))]),
        ("CategoryMapper", dict(cats_int64s=[1], cats_strings=["a"]),
         [TensorInfo(obj, (4,))], [(i64, (4,))]),
        ("FeatureVectorizer", dict(inputdimensions=[2, 3]),
         [TensorInfo(f32, (4, 2)), TensorInfo(f32, (4, 3))], [(f32, (4, 5))]),
        ("SVMRegressor", dict(coefficients=[1.0]), [TensorInfo(f32, (4, 1))], [(f32, (4, 1))]),
    ]
    for name, attrs, infos, want in cases:
        op = get_op(name, ML)
        got = op.infer(op.resolve_attrs(attrs), infos)
        assert [(g.dtype, g.shape) for g in got] == want, name


# --------------------------------------------------------------------------- SVMClassifier

def svc_attrs(rng, per_class, n_features, kernel, post="NONE", proba=False, strings=False):
    """A random one-vs-one SVMClassifier: vectors per class, (C-1) x V coefficients."""
    c, v = len(per_class), sum(per_class)
    attrs = dict(kernel_type=kernel, kernel_params=[0.4, 0.1, 2.0], post_transform=post,
                 vectors_per_class=per_class,
                 support_vectors=rng.normal(size=v * n_features).tolist(),
                 coefficients=rng.normal(size=(c - 1) * v).tolist(),
                 rho=rng.normal(size=c * (c - 1) // 2).tolist())
    if strings:
        attrs["classlabels_strings"] = [f"c{i}" for i in range(c)]
    else:
        attrs["classlabels_ints"] = list(range(10, 10 + c))
    if proba:
        attrs["prob_a"] = rng.uniform(-3, -1, c * (c - 1) // 2).tolist()
        attrs["prob_b"] = rng.normal(size=c * (c - 1) // 2).tolist()
    return attrs


@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID"])
@pytest.mark.parametrize("per_class", [[2, 3], [2, 1, 2], [1, 2, 0, 3]])
@pytest.mark.parametrize("proba", [False, True])
def test_svm_classifier_matches_ort(kernel, per_class, proba):
    rng = np.random.default_rng(31)
    x = data(rng, (30, 2), np.float32)
    posts = ["NONE", "LOGISTIC"]
    if proba or len(per_class) > 2:
        posts += ["SOFTMAX", "SOFTMAX_ZERO"]
    for post in posts:
        attrs = svc_attrs(rng, per_class, 2, kernel, post, proba, strings=post == "LOGISTIC")
        out = [S if post == "LOGISTIC" else I, F]
        check("SVMClassifier", {"X": x}, out, **attrs)
    x64 = x.astype(np.float64)  # onnxruntime has only a float32 kernel
    attrs = svc_attrs(rng, per_class, 2, kernel, "NONE", proba)
    close(run_og(one_node("SVMClassifier", {"X": x64}, [I, F], **attrs), {"X": x64}),
          run_ort(one_node("SVMClassifier", {"X": x}, [I, F], **attrs), {"X": x}), 1e-4, 1e-4)


def test_svm_classifier_binary_softmax_per_spec():
    # onnxruntime leaves the binary [-d, d] untransformed for SOFTMAX; we apply it
    rng = np.random.default_rng(32)
    x = data(rng, (10, 2), np.float32)
    attrs = svc_attrs(rng, [2, 2], 2, "RBF")
    label, raw = run_ort(one_node("SVMClassifier", {"X": x}, [I, F], **attrs), {"X": x})
    e = np.exp(raw.astype(np.float64))
    for post in ("SOFTMAX", "SOFTMAX_ZERO"):
        m = one_node("SVMClassifier", {"X": x}, [I, F], **dict(attrs, post_transform=post))
        close(run_og(m, {"X": x}), [label, (e / e.sum(1, keepdims=True)).astype(np.float32)])


def test_svm_classifier_linear_mode():
    rng = np.random.default_rng(33)
    x = data(rng, (20, 3), np.float32)
    for post in ("NONE", "LOGISTIC", "SOFTMAX"):
        attrs = dict(kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0], post_transform=post,
                     coefficients=rng.normal(size=9).tolist(), rho=[float(rng.normal())],
                     classlabels_ints=[3, 5, 7])
        check("SVMClassifier", {"X": x}, [I, F], **attrs)
    # two classes: the arg-max score (onnxruntime uses weight-sign bookkeeping here)
    w = rng.normal(size=(2, 3))
    m = one_node("SVMClassifier", {"X": x}, [I, F], coefficients=w.ravel().tolist(), rho=[0.2],
                 classlabels_ints=[0, 1])
    scores = x.astype(np.float64) @ w.T + 0.2
    close(run_og(m, {"X": x}), [np.argmax(scores, 1), scores.astype(np.float32)])


@pytest.mark.parametrize("change,match", [
    (dict(vectors_per_class=[2, 3, 0]), "SVMClassifier: vectors_per_class"),
    (dict(rho=[0.0, 1.0]), "SVMClassifier: rho has 2 values for 1 class pairs"),
    (dict(coefficients=[1.0] * 4), "SVMClassifier: 4 coefficients, expected"),
    (dict(prob_a=[1.0], prob_b=[1.0, 2.0]), "SVMClassifier: attributes must have the same"),
    (dict(kernel_type="RBF2"), "SVMClassifier: kernel_type must be one of"),
    (dict(post_transform="EXP"), "SVMClassifier: post_transform must be one of"),
])
def test_svm_classifier_bad_attributes(change, match):
    attrs = svc_attrs(np.random.default_rng(0), [2, 3], 3, "RBF")
    attrs.update(change)
    with pytest.raises(OpAttributeError, match=match):
        run_og(one_node("SVMClassifier", {"X": X2}, [I, F], **attrs), {"X": X2})
    attrs = svc_attrs(np.random.default_rng(0), [2, 3], 2, "RBF")
    with pytest.raises(ShapeError, match="SVMClassifier: the support_vectors have 2 features"):
        run_og(one_node("SVMClassifier", {"X": X2}, [I, F], **attrs), {"X": X2})


def test_svm_classifier_inference_matches_outputs():
    rng = np.random.default_rng(34)
    x = data(rng, (5, 2), np.float32)
    op = get_op("SVMClassifier", ML)
    for per_class, proba in (([1, 2, 2], False), ([1, 2, 2, 1], True), ([2, 2], False)):
        attrs = svc_attrs(rng, per_class, 2, "RBF", proba=proba)
        got = run_og(one_node("SVMClassifier", {"X": x}, [I, F], **attrs), {"X": x})
        infos = op.infer(op.resolve_attrs(attrs), [TensorInfo(np.dtype(np.float32), (5, 2))])
        assert [(i.dtype, i.shape) for i in infos] == [(g.dtype, g.shape) for g in got]


def test_svm_attributes_are_converted_once_per_node(monkeypatch):
    """A Session converts an SVM node's attribute lists (support vectors, coefficients)
    once, kept in the node's kernel cache, and the cached arrays give the same result
    on every run and for a different batch size."""
    from onegraph.ops import ml

    rng = np.random.default_rng(41)
    attrs = svc_attrs(rng, [3, 2, 4], 3, "RBF", "NONE", proba=True)
    x = data(rng, (7, 3), np.float32)
    m = one_node("SVMClassifier", {"X": x}, [I, F], **attrs)
    converted = []
    real = ml._array
    monkeypatch.setattr(ml, "_array", lambda value, dtype=None: (
        converted.append(1), real(value, dtype))[1])
    sess = Session(from_onnx(m))
    for xs in (x, x[:2], x):
        close(sess.run(["Y0", "Y1"], {"X": xs}), run_ort(m, {"X": xs}))
    first = len(converted)
    sess.run(["Y0", "Y1"], {"X": x})
    assert first and len(converted) == first
