"""Operators: ONNX-ML linear models and SVMs (`ai.onnx.ml`): LinearRegressor,
LinearClassifier, SVMRegressor and SVMClassifier (ml opset 1), one matrix product per
op for all samples.

Where onnxruntime departs from the spec, or the spec is silent:
* LinearRegressor and SVMRegressor apply post_transform to every score row, also a
  single target (onnxruntime applies only PROBIT to LinearRegressor's single target
  and ignores it in SVMRegressor);
* LinearClassifier with one coefficient row and two classes (spec silent): label is
  the second class when s > 0; scores are onnxruntime's [1 - s, s] for NONE and PROBIT
  and the transform of [-s, s] otherwise (LOGISTIC then equals onnxruntime, SOFTMAX
  onnx.reference; onnxruntime leaves SOFTMAX scores untransformed here);
* SVMClassifier (spec silent on the details) follows libsvm and onnxruntime: one-vs-one
  votes, label = most votes also when probabilities are given, scores = pairwise
  decision values ([-d, d] for two classes) or the coupled probabilities. The post
  transform applies to those rows; onnxruntime skips SOFTMAX / SOFTMAX_ZERO for the
  binary [-d, d]. In linear mode (no support vectors) the label is the arg-max score
  also for two classes (onnxruntime then decides by weight-sign bookkeeping).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .ml import (_F32, _I64, _ML, _OBJ, _TRANSFORMS, _array, _attr_array, _check_lengths,
                 _class_labels, _enum, _post_transform, _sigmoid)
from .registry import TensorInfo, define

KNOWN_FAILURES: dict[str, str] = {}


def _linear_input(op: str, x: np.ndarray) -> np.ndarray:
    """X as float64 [N, F] ([F] becomes [1, F])."""
    if x.ndim not in (1, 2):
        raise ShapeError(f"{op}: X must be [F] or [N, F], got shape {list(x.shape)}")
    return x.astype(np.float64).reshape(-1 if x.ndim == 2 else 1, x.shape[-1])


def _weights(op: str, coefficients, rows: int, n_features: int,
             name: str = "coefficients") -> np.ndarray:
    """The attribute `name` (values `coefficients`) as [rows, n_features].

    Raises OpAttributeError when their count is not a multiple of rows, ShapeError when
    X's feature count does not match.
    """
    coef = _array(coefficients, np.float64)
    coef = np.zeros(0) if coef is None else coef
    if rows < 1 or coef.size % rows or not coef.size:
        raise OpAttributeError(f"{op}: {coef.size} {name} do not split into {rows} rows")
    if coef.size // rows != n_features:
        raise ShapeError(f"{op}: the {name} have {coef.size // rows} features per row "
                         f"but X has {n_features}")
    return coef.reshape(rows, n_features)


def _intercepts(op: str, intercepts, rows: int) -> np.ndarray:
    """intercepts as [rows] (absent: zeros)."""
    b = _array(intercepts, np.float64)
    if b is None or not b.size:
        return np.zeros(rows)
    if b.size != rows:
        raise OpAttributeError(f"{op}: {b.size} intercepts for {rows} coefficient rows")
    return b


def _linear_regressor(inputs, attrs, ctx):
    """X @ W.T + b, then post_transform: [N, F] -> float32 [N, targets].

    The transform applies to every row, also a single target (onnxruntime applies only
    PROBIT there). Raises OpAttributeError / ShapeError as `_weights` does.
    """
    op = "LinearRegressor"
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    x = _linear_input(op, inputs[0])
    w = _weights(op, _attr_array(attrs, "coefficients", np.float64), attrs["targets"],
                 x.shape[1])
    scores = x @ w.T + _intercepts(op, attrs["intercepts"], w.shape[0])
    return (_post_transform(scores, transform).astype(np.float32),)


def _linear_regressor_infer(attrs, inputs):
    x = inputs[0]
    n = None
    if x.shape is not None:
        n = 1 if len(x.shape) == 1 else x.shape[0]
    return [TensorInfo(_F32, (n, attrs.get("targets")))]


def _linear_classifier(inputs, attrs, ctx):
    """Scores X @ W.T + b and the arg-max label: [N, F] -> labels [N], float32 [N, C].

    A single coefficient row with two classes is the binary encoding: with s = x.w + b
    the label is the second class when s > 0, and the scores are [1 - s, s] for NONE
    and PROBIT, the transform of [-s, s] for the others.
    Raises OpAttributeError for inconsistent attributes, ShapeError for a bad X.
    """
    op = "LinearClassifier"
    labels = _class_labels(op, attrs, "classlabels_ints")
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    if attrs["multi_class"] not in (0, 1):
        raise OpAttributeError(f"{op}: multi_class must be 0 or 1, got {attrs['multi_class']}")
    coef = _attr_array(attrs, "coefficients", np.float64)
    n_coef = 0 if coef is None else coef.size
    b = _attr_array(attrs, "intercepts", np.float64)
    x = _linear_input(op, inputs[0])
    # one score row per class, or one row for two classes (the binary encoding); the
    # intercepts, when given, say which
    rows = labels.size
    if b is not None and b.size:
        rows = b.size
    elif labels.size == 2 and n_coef == x.shape[1]:
        rows = 1
    if rows != labels.size and not (rows == 1 and labels.size == 2):
        raise OpAttributeError(f"{op}: {rows} intercepts for {labels.size} classes")
    w = _weights(op, coef, rows, x.shape[1])
    scores = x @ w.T + _intercepts(op, b, rows)
    if rows == 1 and labels.size == 2:
        s = scores[:, 0]
        index = (s > 0).astype(np.int64)
        if transform in ("NONE", "PROBIT"):
            # onnxruntime's raw binary scores are [1 - s, s]
            scores = _post_transform(np.stack([1.0 - s, s], axis=1), transform)
        else:
            # the margin transforms see [-s, s]: LOGISTIC gives onnxruntime's
            # [sigmoid(-s), sigmoid(s)], SOFTMAX onnx.reference's result
            scores = _post_transform(np.stack([-s, s], axis=1), transform)
        return labels[index], scores.astype(np.float32)
    index = np.argmax(scores, axis=1) if scores.size else np.zeros(len(x), np.int64)
    return labels[index], _post_transform(scores, transform).astype(np.float32)


def _rows_and_classes(attrs, inputs):
    """(rows of X or None, number of class labels or None, labels are strings)."""
    x = inputs[0]
    n = None
    if x.shape is not None:
        n = 1 if len(x.shape) == 1 else x.shape[0]
    strings = attrs.get("classlabels_strings")
    classes = attrs.get("classlabels_ints") if strings is None else strings
    return n, (len(classes) if classes is not None else None), strings is not None


def _linear_classifier_infer(attrs, inputs):
    n, k, strings = _rows_and_classes(attrs, inputs)
    return [TensorInfo(_OBJ if strings else _I64, (n,)), TensorInfo(_F32, (n, k))]


_KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")


def _kernel_params(op: str, attrs):
    """(gamma, coef0, degree) from kernel_params (absent: zeros)."""
    p = _attr_array(attrs, "kernel_params", np.float64)
    if p is None or not p.size:
        return 0.0, 0.0, 0.0
    if p.size != 3:
        raise OpAttributeError(f"{op}: kernel_params must hold gamma, coef0 and degree, got "
                               f"{p.size} values")
    return float(p[0]), float(p[1]), float(p[2])


def _gram(kernel: str, params, x: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """K(x_i, v_j) for every sample and vector: [N, F] x [S, F] -> [N, S]."""
    gamma, coef0, degree = params
    if kernel == "RBF":
        # |x - v|^2 expanded into one matrix product; rounding can dip below zero
        d2 = (np.square(x).sum(1)[:, None] + np.square(vectors).sum(1)[None, :]
              - 2.0 * (x @ vectors.T))
        return np.exp(-gamma * np.maximum(d2, 0.0))
    dot = x @ vectors.T
    if kernel == "POLY":
        return np.power(gamma * dot + coef0, degree)
    if kernel == "SIGMOID":
        return np.tanh(gamma * dot + coef0)
    return dot


def _svm_regressor(inputs, attrs, ctx):
    """Support vector regression: [N, F] -> float32 [N, 1].

    With n_supports > 0, score = sum_j coefficients[j] K(x, sv_j) + rho[0]; with none,
    the linear model x . coefficients + rho[0]. one_class=1 outputs 1 where the score
    is positive, else -1. The post transform applies to the score (onnxruntime applies
    only PROBIT). Raises OpAttributeError for inconsistent attributes, ShapeError for a
    bad X.
    """
    op = "SVMRegressor"
    kernel = _enum(op, "kernel_type", attrs["kernel_type"], _KERNELS)
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    params = _kernel_params(op, attrs)
    rho = _attr_array(attrs, "rho", np.float64)
    if rho is None or rho.size != 1:
        raise OpAttributeError(f"{op}: rho must hold one value, got "
                               f"{0 if rho is None else rho.size}")
    x = _linear_input(op, inputs[0])
    n_sv = attrs["n_supports"]
    if n_sv < 0:
        raise OpAttributeError(f"{op}: n_supports must be >= 0, got {n_sv}")
    if n_sv:
        vectors = _weights(op, _attr_array(attrs, "support_vectors", np.float64), n_sv,
                           x.shape[1], "support_vectors")
        coef = _attr_array(attrs, "coefficients", np.float64)
        if coef is None or coef.size != n_sv:
            raise OpAttributeError(f"{op}: {0 if coef is None else coef.size} coefficients "
                                   f"for {n_sv} support vectors")
        score = _gram(kernel, params, x, vectors) @ coef
    else:
        score = x @ _weights(op, _attr_array(attrs, "coefficients", np.float64), 1,
                             x.shape[1])[0]
    score = score + rho[0]
    if attrs["one_class"]:
        score = np.where(score > 0, 1.0, -1.0)
    return (_post_transform(score[:, None], transform).astype(np.float32),)


def _svm_regressor_infer(attrs, inputs):
    x = inputs[0]
    n = None
    if x.shape is not None:
        n = 1 if len(x.shape) == 1 else x.shape[0]
    return [TensorInfo(_F32, (n, 1))]


def _pairs(n_classes: int):
    """Class index arrays (i, j), i < j, in libsvm's one-vs-one order."""
    i, j = np.triu_indices(n_classes, k=1)
    return i.astype(np.int64), j.astype(np.int64)


def _couple(r: np.ndarray) -> np.ndarray:
    """Class probabilities from pairwise ones (Wu, Lin and Weng's method 2, libsvm).

    `r[n, i, j]` estimates P(class i | i or j) for sample n. Solves, per sample, the
    quadratic problem with libsvm's fixed-point iteration and stopping rule; all samples
    iterate together and a converged sample stops changing. Returns [N, k].
    """
    n, k = r.shape[0], r.shape[1]
    eye = np.eye(k, dtype=bool)
    rt = np.swapaxes(r, 1, 2)
    # Q[t, t] = sum_{j != t} r[j, t]^2; Q[t, j] = -r[j, t] r[t, j]
    q = np.where(eye, 0.0, -rt * r)
    diag = np.where(eye, 0.0, np.square(rt)).sum(axis=2)
    q[:, eye] = diag
    p = np.full((n, k), 1.0 / k)
    eps = 0.005 / k
    live = np.ones(n, dtype=bool)
    for _ in range(max(100, k)):
        qp = np.einsum("nij,nj->ni", q, p)
        pqp = (p * qp).sum(axis=1)
        live &= np.abs(qp - pqp[:, None]).max(axis=1) >= eps
        if not live.any():
            break
        rows = np.flatnonzero(live)
        qs, ps, qps, pqps = q[rows], p[rows], qp[rows], pqp[rows]
        for t in range(k):  # Gauss-Seidel over classes, vectorised over samples
            qtt = qs[:, t, t]
            diff = (pqps - qps[:, t]) / qtt
            ps[:, t] += diff
            pqps = (pqps + diff * (diff * qtt + 2.0 * qps[:, t])) / np.square(1.0 + diff)
            ps /= (1.0 + diff)[:, None]
            qps = (qps + diff[:, None] * qs[:, t, :]) / (1.0 + diff)[:, None]
        p[rows] = ps
    return p


def _svm_classifier(inputs, attrs, ctx):
    """Support vector classification: [N, F] -> labels [N], float32 scores.

    With support vectors (vectors_per_class), libsvm's one-vs-one scheme: pair (i, j)
    has decision value d = rho_k + sum over class i's vectors of coefficients[j - 1] K
    + sum over class j's vectors of coefficients[i] K, a vote for i when d > 0, else
    for j; the label is the class with most votes (the first on ties). The scores are
    the C(C-1)/2 decision values, for two classes [-d, d]; with prob_a / prob_b, the
    class probabilities coupled from 1 / (1 + exp(d A + B)) instead. Without support
    vectors, the linear model X @ W.T + rho[0] and the arg-max label. The post transform
    applies to the score rows. Raises OpAttributeError for inconsistent
    attributes, ShapeError for a bad X.
    """
    op = "SVMClassifier"
    labels = _class_labels(op, attrs, "classlabels_ints")
    kernel = _enum(op, "kernel_type", attrs["kernel_type"], _KERNELS)
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    params = _kernel_params(op, attrs)
    x = _linear_input(op, inputs[0])
    n_classes = labels.size
    rho = _attr_array(attrs, "rho", np.float64)
    rho = np.zeros(0) if rho is None else rho
    per_class = _attr_array(attrs, "vectors_per_class", np.int64)
    per_class = np.zeros(0, np.int64) if per_class is None else per_class
    n_vectors = int(per_class.sum()) if per_class.size else 0
    if not n_vectors:
        w = _weights(op, _attr_array(attrs, "coefficients", np.float64), n_classes, x.shape[1])
        if not rho.size:
            raise OpAttributeError(f"{op}: rho must not be empty")
        # onnxruntime and onnx.reference add rho[0] to every class's score
        scores = x @ w.T + rho[0]
        index = np.argmax(scores, axis=1) if scores.size else np.zeros(len(x), np.int64)
        return labels[index], _post_transform(scores, transform).astype(np.float32)
    if per_class.size != n_classes or (per_class < 0).any():
        raise OpAttributeError(f"{op}: vectors_per_class {per_class.tolist()} must give a "
                               f"non-negative count for each of the {n_classes} classes")
    n_pairs = n_classes * (n_classes - 1) // 2
    if rho.size != n_pairs:
        raise OpAttributeError(f"{op}: rho has {rho.size} values for {n_pairs} class pairs")
    vectors = _weights(op, _attr_array(attrs, "support_vectors", np.float64), n_vectors,
                       x.shape[1], "support_vectors")
    coef = _attr_array(attrs, "coefficients", np.float64)
    if coef is None or coef.size != (n_classes - 1) * n_vectors:
        raise OpAttributeError(f"{op}: {0 if coef is None else coef.size} coefficients, "
                               f"expected (classes - 1) * vectors = "
                               f"{(n_classes - 1) * n_vectors}")
    coef = coef.reshape(n_classes - 1, n_vectors)
    owner = np.repeat(np.arange(n_classes), per_class)
    # spread each coefficient row over per-class columns, so one matrix product gives
    # part[n, r, c] = sum over class c's vectors v of coef[r, v] K(x_n, v)
    spread = np.zeros((n_vectors, n_classes - 1, n_classes))
    spread[np.arange(n_vectors)[:, None], np.arange(n_classes - 1)[None, :],
           owner[:, None]] = coef.T
    gram = _gram(kernel, params, x, vectors)
    part = (gram @ spread.reshape(n_vectors, -1)).reshape(len(x), n_classes - 1, n_classes)
    pi, pj = _pairs(n_classes)
    d = rho + part[:, pj - 1, pi] + part[:, pi, pj]
    winner = np.where(d > 0, pi, pj)
    votes = np.zeros((len(x), n_classes), np.int64)
    np.add.at(votes, (np.arange(len(x))[:, None], winner), 1)
    index = np.argmax(votes, axis=1) if len(x) else np.zeros(0, np.int64)
    prob_a = _attr_array(attrs, "prob_a", np.float64)
    prob_b = _attr_array(attrs, "prob_b", np.float64)
    if prob_a is not None and prob_a.size:
        _check_lengths(op, {"prob_a": prob_a, "prob_b": prob_b, "rho": rho})
        pair = np.clip(_sigmoid(-(d * prob_a + prob_b)), 1e-7, 1.0 - 1e-7)
        r = np.zeros((len(x), n_classes, n_classes))
        r[:, pi, pj] = pair
        r[:, pj, pi] = 1.0 - pair
        scores = _couple(r)
    elif n_classes == 2:
        scores = np.concatenate([-d, d], axis=1)
    else:
        scores = d
    return labels[index], _post_transform(scores, transform).astype(np.float32)


def _svm_classifier_infer(attrs, inputs):
    n, k, strings = _rows_and_classes(attrs, inputs)
    one_vs_one = bool(attrs.get("vectors_per_class")) and sum(attrs["vectors_per_class"]) > 0
    if k is not None and k > 2 and one_vs_one and not attrs.get("prob_a"):
        k = k * (k - 1) // 2
    return [TensorInfo(_OBJ if strings else _I64, (n,)), TensorInfo(_F32, (n, k))]


OPS = (
    define("LinearRegressor", ["X"], ["Y"], _linear_regressor,
           attrs=[("coefficients", "floats", None), ("intercepts", "floats", None),
                  ("targets", "int", 1), ("post_transform", "string", "NONE")],
           infer=_linear_regressor_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("LinearClassifier", ["X"], ["Y", "Z"], _linear_classifier,
           attrs=[("coefficients", "floats"), ("intercepts", "floats", None),
                  ("classlabels_ints", "ints", None), ("classlabels_strings", "strings", None),
                  ("multi_class", "int", 0), ("post_transform", "string", "NONE")],
           infer=_linear_classifier_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("SVMRegressor", ["X"], ["Y"], _svm_regressor,
           attrs=[("coefficients", "floats", None), ("kernel_params", "floats", None),
                  ("kernel_type", "string", "LINEAR"), ("n_supports", "int", 0),
                  ("one_class", "int", 0), ("post_transform", "string", "NONE"),
                  ("rho", "floats", None), ("support_vectors", "floats", None)],
           infer=_svm_regressor_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("SVMClassifier", ["X"], ["Y", "Z"], _svm_classifier,
           attrs=[("classlabels_ints", "ints", None), ("classlabels_strings", "strings", None),
                  ("coefficients", "floats", None), ("kernel_params", "floats", None),
                  ("kernel_type", "string", "LINEAR"), ("post_transform", "string", "NONE"),
                  ("prob_a", "floats", None), ("prob_b", "floats", None),
                  ("rho", "floats", None), ("support_vectors", "floats", None),
                  ("vectors_per_class", "ints", None)],
           infer=_svm_classifier_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
)
