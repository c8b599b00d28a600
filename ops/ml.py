"""Operators: the ONNX-ML domain (`ai.onnx.ml`), its data-preparation ops.

Classical machine-learning ops that converters such as skl2onnx emit. This module has
the ones that reshape, encode or rescale features: Binarizer, ArrayFeatureExtractor,
LabelEncoder (ml opset 1 classes_strings, opset 2 list attributes and opset 4 tensor
attributes, all in one definition; the importer checks a node's attribute names against
the schema of the model's ml opset, so each model uses its own opset's set), Scaler,
Normalizer, Imputer, OneHotEncoder, CategoryMapper and FeatureVectorizer, ZipMap (a
classifier's scores as one {label: probability} dict per sample), DictVectorizer and
CastMap (maps to tensors), plus the score post-transforms shared by the models. The
models themselves are in `ml_trees.py` (tree ensembles) and `ml_linear.py` (linear
models and SVMs).

These follow the spec where onnxruntime departs from it:
* Scaler's offset and scale may each hold 1 or C values (onnxruntime wants equal
  lengths); Scaler and Imputer read features along the last axis ([*, F], as the
  Imputer spec says; onnxruntime uses axis 1 also for rank > 2); Imputer takes int32;
* Normalizer: MAX divides by max(x) as the spec and onnxruntime do (onnx.reference uses
  max |x|); L1 and L2 are the norms their names say, sum |x| and sqrt(sum x^2), keeping
  signs (the spec's formulas read literally would drop them; onnxruntime and
  onnx.reference agree with us); a zero divisor leaves the row as it is;
* OneHotEncoder truncates float inputs to int64 before the lookup, as the spec says;
* PROBIT uses the same erfinv approximation as onnxruntime (Winitzki, a = 0.147).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError
from .registry import TensorInfo, define, kernel_cache
from .strings import _strings

KNOWN_FAILURES: dict[str, str] = {}


_OBJ = np.dtype(object)


_F32 = np.dtype(np.float32)


_I64 = np.dtype(np.int64)


def _array(value, dtype=None):
    """An attribute value (list or tensor) as a 1-D array, or None when absent."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        out = value.reshape(-1)
        return out if dtype is None else out.astype(dtype, copy=False)
    if dtype is _OBJ:
        out = np.empty(len(value), dtype=object)
        out[:] = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in value]
        return out
    return np.asarray(list(value), dtype=dtype)


def _attr_array(attrs, name: str, dtype=None):
    """`_array(attrs[name], dtype)`, converted once per node (kept in its kernel cache):
    long attribute lists (support vectors, coefficients) cost more to convert than a
    small batch costs to score. Callers must not modify the result in place."""
    cache = kernel_cache(attrs)
    key = ("array", name, dtype)
    if key not in cache:
        cache[key] = _array(attrs.get(name), dtype)
    return cache[key]


def _check_range(op: str, name: str, ids: np.ndarray, bound: int) -> None:
    """Raise OpAttributeError unless every id lies in [0, bound)."""
    bad = (ids < 0) | (ids >= bound)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise OpAttributeError(f"{op}: {name}[{k}] = {int(ids[k])} is out of range "
                               f"[0, {bound})")


def _check_lengths(op: str, arrays: dict, expected: int | None = None) -> int:
    """The common length of the given attributes (None entries skipped).

    Raises:
        OpAttributeError: two attributes differ in length (names them).
    """
    lengths = {name: len(a) for name, a in arrays.items() if a is not None}
    if expected is None and lengths:
        expected = next(iter(lengths.values()))
    if any(n != expected for n in lengths.values()):
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise OpAttributeError(f"{op}: attributes must have the same length, got {detail}")
    return expected or 0


def _binarizer(inputs, attrs, ctx):
    """1 where x > threshold, else 0 (NaN gives 0), in x's dtype."""
    x = inputs[0]
    return ((x > attrs["threshold"]).astype(x.dtype),)


def _binarizer_infer(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _feature_extractor(inputs, attrs, ctx):
    """Take the given (flattened) indices along the last axis; 1-D input gives [1, k].

    Raises ShapeError for a scalar input or an index outside the last axis.
    """
    x, indices = inputs
    if x.ndim == 0:
        raise ShapeError("ArrayFeatureExtractor: input X must have rank >= 1, got a scalar")
    idx = np.asarray(indices).reshape(-1).astype(np.int64, copy=False)
    dim = x.shape[-1]
    if idx.size and (idx.min() < 0 or idx.max() >= dim):
        bad = idx[(idx < 0) | (idx >= dim)][0]
        raise ShapeError(f"ArrayFeatureExtractor: index {int(bad)} out of range for the last "
                         f"axis of size {dim}")
    out = np.take(x, idx, axis=-1)
    return (out.reshape(1, -1) if x.ndim == 1 else out,)


def _feature_extractor_infer(attrs, inputs):
    x, y = inputs
    k = None
    if y.shape is not None and all(d is not None for d in y.shape):
        k = int(np.prod(y.shape, dtype=np.int64))
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    lead = (1,) if len(x.shape) == 1 else tuple(x.shape[:-1])
    return [TensorInfo(x.dtype, lead + (k,))]


_KEY_ATTRS = ("keys_strings", "keys_int64s", "keys_floats", "keys_tensor")


_VALUE_ATTRS = ("values_strings", "values_int64s", "values_floats", "values_tensor")


_LIST_DTYPES = {"strings": _OBJ, "int64s": _I64, "floats": _F32}


def _one_of(attrs, names, what):
    """(name, 1-D array) of the single given attribute among `names`."""
    given = [n for n in names if attrs.get(n) is not None]
    if len(given) != 1:
        raise OpAttributeError(f"LabelEncoder: exactly one of {', '.join(names)} must be set "
                               f"for the {what}, got {given or 'none'}")
    name = given[0]
    suffix = name.split("_", 1)[1]
    return name, _array(attrs[name], _LIST_DTYPES.get(suffix))


def _value_dtype(attrs):
    """The output dtype LabelEncoder's attributes select, or None if they are invalid."""
    given = [n for n in _VALUE_ATTRS if attrs.get(n) is not None]
    if len(given) != 1:
        return None
    if given[0] == "values_tensor":
        return np.asarray(attrs["values_tensor"]).dtype
    return _LIST_DTYPES[given[0].split("_", 1)[1]]


def _label_default(attrs, values_name, dtype):
    """The value for inputs absent from the keys."""
    if values_name == "values_tensor" and attrs.get("default_tensor") is not None:
        d = np.asarray(attrs["default_tensor"]).reshape(-1)
        if d.size != 1:
            raise OpAttributeError(f"LabelEncoder: default_tensor must hold one value, got "
                                   f"{d.size}")
        return d[0] if dtype == _OBJ else d.astype(dtype)[0]
    if dtype == _OBJ:
        return attrs["default_string"]
    if dtype.kind in "iu":
        return attrs["default_int64"]
    return attrs["default_float"]


def _opset1_mapping(attrs, x_dtype) -> dict:
    """ml opset 1's LabelEncoder attributes as the equivalent opset-2 lists.

    Opset 1 maps strings to their index in classes_strings (default_int64 when absent;
    a repeated class maps to its last index, as in onnxruntime) and integers to
    classes_strings[i] (default_string when i is out of range): keys_strings ->
    values_int64s 0..n-1, or keys_int64s 0..n-1 -> values_strings.

    Raises:
        OpAttributeError: keys_* or values_* attributes are given too.
        ShapeError: the input is neither strings nor integers.
    """
    mixed = [n for n in _KEY_ATTRS + _VALUE_ATTRS if attrs.get(n) is not None]
    if mixed:
        raise OpAttributeError(f"LabelEncoder: classes_strings (ml opset 1) cannot be "
                               f"combined with {', '.join(mixed)} (ml opset 2 and later)")
    classes = list(attrs["classes_strings"])
    index = list(range(len(classes)))
    out = {k: v for k, v in attrs.items() if k != "classes_strings"}
    kind = np.dtype(x_dtype).kind
    if kind in "OSU":
        out.update(keys_strings=classes, values_int64s=index)
    elif kind in "iu":
        out.update(keys_int64s=index, values_strings=classes)
    else:
        raise ShapeError(f"LabelEncoder: classes_strings maps strings or integers, got "
                         f"input of type {np.dtype(x_dtype)}")
    return out


def _label_encoder(inputs, attrs, ctx):
    """Map each element through keys -> values (last duplicate key wins).

    Float keys equal to NaN match NaN inputs. An ml opset 1 node (classes_strings) is
    run as its opset-2 equivalent, see `_opset1_mapping`. Raises OpAttributeError for
    missing or mismatched key/value attributes, ShapeError when the input type differs
    from the keys'.
    """
    if attrs.get("classes_strings") is not None:
        attrs = _opset1_mapping(attrs, inputs[0].dtype)
    _, keys = _one_of(attrs, _KEY_ATTRS, "keys")
    values_name, values = _one_of(attrs, _VALUE_ATTRS, "values")
    if len(keys) != len(values):
        raise OpAttributeError(f"LabelEncoder: {len(keys)} keys but {len(values)} values")
    if keys.dtype.kind in "SU":
        keys = _array(list(keys), _OBJ)
    x = inputs[0]
    x_is_text = x.dtype.kind in "OSU"
    if x_is_text != (keys.dtype == _OBJ):
        raise ShapeError(f"LabelEncoder: input of type {x.dtype} does not match keys of "
                         f"type {'string' if keys.dtype == _OBJ else keys.dtype}")
    default = _label_default(attrs, values_name, values.dtype)
    if x_is_text:
        x = _strings(x)
        nan_value = None
    else:
        common = np.float64 if (keys.dtype.kind == "f" or x.dtype.kind == "f") else np.int64
        keys = keys.astype(common)
        x = x.astype(common, copy=False)
        nan_value = None
        if common is np.float64:
            nan_keys = np.isnan(keys)
            if nan_keys.any():
                nan_value = values[np.flatnonzero(nan_keys)[-1]]
                keys, values = keys[~nan_keys], values[~nan_keys]
    order = np.argsort(keys, kind="stable")
    sk, sv = keys[order], values[order]
    # a stable sort keeps equal keys in attribute order: the last of each run wins
    last = np.ones(len(sk), dtype=bool)
    if len(sk) > 1:
        last[:-1] = sk[1:] != sk[:-1]
    sk, sv = sk[last], sv[last]
    fill = np.empty((), dtype=values.dtype)
    fill[()] = default
    if len(sk) == 0:
        out = np.full(x.shape, fill, dtype=values.dtype)
    else:
        pos = np.minimum(np.searchsorted(sk, x), len(sk) - 1)
        hit = sk[pos] == x
        out = np.where(hit, sv[pos], fill).astype(values.dtype, copy=False)
    if nan_value is not None:
        out[np.isnan(x)] = nan_value
    return (out.reshape(x.shape),)


def _label_encoder_infer(attrs, inputs):
    x = inputs[0]
    if attrs.get("classes_strings") is not None:
        kind = None if x.dtype is None else np.dtype(x.dtype).kind
        dtype = _I64 if kind is not None and kind in "OSU" else \
            _OBJ if kind is not None and kind in "iu" else None
        return [TensorInfo(dtype, x.shape)]
    return [TensorInfo(_value_dtype(attrs), x.shape)]


_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def _erfinv(x: np.ndarray) -> np.ndarray:
    # Winitzki's approximation with onnxruntime's constants, so PROBIT agrees with it
    ln = np.log((1.0 - x) * (1.0 + x))
    a = 2.0 / (3.14159 * 0.147) + 0.5 * ln
    return np.where(x < 0, -1.0, 1.0) * np.sqrt(np.sqrt(a * a - ln / 0.147) - a)


def _sigmoid(s: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -s))


def _post_transform(scores: np.ndarray, transform: str) -> np.ndarray:
    """Apply NONE / SOFTMAX / LOGISTIC / SOFTMAX_ZERO / PROBIT to score rows [N, C]."""
    if transform == "NONE" or scores.size == 0:
        return scores
    if transform == "LOGISTIC":
        return _sigmoid(scores)
    if transform == "PROBIT":
        return np.sqrt(2.0) * _erfinv(2.0 * scores - 1.0)
    shifted = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    if transform == "SOFTMAX_ZERO":
        # exact zeros (no evidence) stay zero instead of getting exp(0 - max)
        e = np.where(np.abs(scores) > 1e-7, e, 0.0)
    total = e.sum(axis=1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _enum(op: str, name: str, value, names: tuple) -> str:
    """An enum attribute (int code or name) as its name."""
    if isinstance(value, (int, np.integer)) and 0 <= value < len(names):
        return names[int(value)]
    if isinstance(value, str) and value in names:
        return value
    raise OpAttributeError(f"{op}: {name} must be one of {', '.join(names)}, got {value!r}")


def _per_feature(op: str, name: str, values: np.ndarray, n_features: int) -> np.ndarray:
    """A per-feature attribute of length 1 (shared) or n_features, as given.

    Raises ShapeError when its length is neither.
    """
    if values.size not in (1, n_features):
        raise ShapeError(f"{op}: {name} has {values.size} values but X has {n_features} "
                         "features (expected 1 or that many)")
    return values


def _last_axis_input(op: str, x: np.ndarray) -> int:
    """The feature count (last axis) of an input that must have rank >= 1."""
    if x.ndim == 0:
        raise ShapeError(f"{op}: input X must have rank >= 1, got a scalar")
    return x.shape[-1]


def _scaler(inputs, attrs, ctx):
    """(X - offset) * scale along the last axis, as float32.

    offset and scale each hold one value or one per feature (the spec; onnxruntime
    insists on equal lengths). Raises ShapeError for other lengths.
    """
    op = "Scaler"
    x = inputs[0]
    n = _last_axis_input(op, x)
    offset = _array(attrs["offset"], np.float64)
    scale = _array(attrs["scale"], np.float64)
    offset = np.zeros(1) if offset is None or not offset.size else offset
    scale = np.ones(1) if scale is None or not scale.size else scale
    offset = _per_feature(op, "offset", offset, n)
    scale = _per_feature(op, "scale", scale, n)
    return (((x.astype(np.float64) - offset) * scale).astype(np.float32),)


def _float_like_infer(attrs, inputs):
    return [TensorInfo(_F32, inputs[0].shape)]


_NORMS = ("MAX", "L1", "L2")


def _normalizer(inputs, attrs, ctx):
    """Divide each row ([C] or [N, C]) by its MAX, L1 or L2 norm, as float32.

    A zero divisor leaves the row unchanged. Raises OpAttributeError for an unknown
    norm, ShapeError for rank other than 1 or 2.
    """
    op = "Normalizer"
    norm = _enum(op, "norm", attrs["norm"], _NORMS)
    x = inputs[0]
    if x.ndim not in (1, 2):
        raise ShapeError(f"{op}: X must be [C] or [N, C], got shape {list(x.shape)}")
    rows = x.astype(np.float64).reshape(-1 if x.ndim == 2 else 1, x.shape[-1])
    if rows.shape[1] == 0:
        return (x.astype(np.float32),)
    if norm == "MAX":
        div = rows.max(axis=1, keepdims=True)
    elif norm == "L1":
        div = np.abs(rows).sum(axis=1, keepdims=True)
    else:
        div = np.sqrt(np.square(rows).sum(axis=1, keepdims=True))
    out = np.divide(rows, div, out=rows.copy(), where=div != 0)
    return (out.reshape(x.shape).astype(np.float32),)


def _imputer(inputs, attrs, ctx):
    """Replace elements equal to the replaced value (NaN matches NaN) per feature.

    Float inputs use imputed_value_floats / replaced_value_float, integer inputs the
    int64 attributes; one value or one per feature (last axis). The output keeps X's
    dtype. Raises OpAttributeError when the matching imputed list is empty, ShapeError
    for a scalar X or a list length that fits neither 1 nor the feature count.
    """
    op = "Imputer"
    x = inputs[0]
    n = _last_axis_input(op, x)
    if x.dtype.kind == "f":
        name, imputed = "imputed_value_floats", _array(attrs["imputed_value_floats"], x.dtype)
        replaced = attrs["replaced_value_float"]
    else:
        name, imputed = "imputed_value_int64s", _array(attrs["imputed_value_int64s"], np.int64)
        replaced = attrs["replaced_value_int64"]
    if imputed is None or not imputed.size:
        raise OpAttributeError(f"{op}: {name} must be given (and not empty) for input of "
                               f"type {x.dtype}")
    imputed = _per_feature(op, name, imputed, n).astype(x.dtype)
    if x.dtype.kind == "f" and np.isnan(replaced):
        hit = np.isnan(x)
    else:
        hit = x == replaced
    return (np.where(hit, imputed, x).astype(x.dtype, copy=False),)


def _same_infer(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _one_hot_encoder(inputs, attrs, ctx):
    """One-hot over the categories: shape S -> float32 S + [n_categories].

    Numbers are truncated to int64 and looked up in cats_int64s, strings in
    cats_strings. With zeros=0 an unknown value is an error (ExecutionError); with
    zeros=1 it encodes as all zeros. Raises OpAttributeError unless exactly one
    category list is given, ShapeError when the input type does not match it.
    """
    op = "OneHotEncoder"
    ints, strings = attrs.get("cats_int64s"), attrs.get("cats_strings")
    if (ints is None) == (strings is None) or not len(ints if ints is not None else strings):
        raise OpAttributeError(f"{op}: exactly one of cats_int64s and cats_strings must be "
                               "given, and not empty")
    x = inputs[0]
    is_text = x.dtype.kind in "OSU"
    if is_text != (strings is not None):
        raise ShapeError(f"{op}: input of type {x.dtype} needs "
                         f"{'cats_strings' if is_text else 'cats_int64s'}")
    if is_text:
        cats = _array(strings, _OBJ)
        values = _strings(x)
    else:
        cats = _array(ints, np.int64)
        values = x.astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64, copy=False)
    # the first occurrence of a duplicated category gets the bit
    order = np.argsort(cats, kind="stable")
    sc = cats[order]
    flat = values.reshape(-1)
    pos = np.minimum(np.searchsorted(sc, flat, side="left"), sc.size - 1)
    hit = sc[pos] == flat if flat.size else np.zeros(0, bool)
    if not attrs["zeros"] and not hit.all():
        bad = flat[~hit][0] if is_text else int(flat[~hit][0])
        raise ExecutionError(f"{op}: value {bad!r} is not a category and zeros = 0")
    out = np.zeros((flat.size, cats.size), np.float32)
    rows = np.flatnonzero(hit)
    out[rows, order[pos[rows]]] = 1.0
    return (out.reshape(x.shape + (cats.size,)),)


def _one_hot_encoder_infer(attrs, inputs):
    cats = attrs.get("cats_strings")
    if cats is None:
        cats = attrs.get("cats_int64s")
    shape = inputs[0].shape
    k = len(cats) if cats is not None else None
    return [TensorInfo(_F32, None if shape is None else tuple(shape) + (k,))]


def _category_mapper(inputs, attrs, ctx):
    """Strings -> int64 or int64 -> strings through the paired category lists.

    The direction follows the input type; values absent from the lists map to
    default_int64 / default_string; a duplicated key maps to its last partner.
    Raises OpAttributeError when the two lists differ in length.
    """
    op = "CategoryMapper"
    strings = _array(attrs["cats_strings"], _OBJ)
    ints = _array(attrs["cats_int64s"], np.int64)
    strings = np.zeros(0, _OBJ) if strings is None else strings
    ints = np.zeros(0, np.int64) if ints is None else ints
    _check_lengths(op, {"cats_strings": strings, "cats_int64s": ints})
    x = inputs[0]
    if x.dtype.kind in "OSU":
        keys, values, default = strings, ints, attrs["default_int64"]
        x = _strings(x)
    elif x.dtype.kind in "iu":
        keys, values, default = ints, strings, attrs["default_string"]
        x = x.astype(np.int64, copy=False)
    else:
        raise ShapeError(f"{op}: input must be string or int64, got {x.dtype}")
    fill = np.empty((), dtype=values.dtype)
    fill[()] = default
    if not keys.size:
        return (np.full(x.shape, fill, dtype=values.dtype),)
    order = np.argsort(keys, kind="stable")
    sk, sv = keys[order], values[order]
    # equal keys stay in attribute order after a stable sort: keep the last of each run
    last = np.ones(sk.size, bool)
    last[:-1] = sk[1:] != sk[:-1]
    sk, sv = sk[last], sv[last]
    pos = np.minimum(np.searchsorted(sk, x), sk.size - 1)
    out = np.where(sk[pos] == x, sv[pos], fill).astype(values.dtype, copy=False)
    return (out.reshape(x.shape),)


def _category_mapper_infer(attrs, inputs):
    x = inputs[0]
    if x.dtype is None:
        return [TensorInfo(None, x.shape)]
    return [TensorInfo(_I64 if np.dtype(x.dtype).kind in "OSU" else _OBJ, x.shape)]


def _feature_vectorizer(inputs, attrs, ctx):
    """Concatenate the inputs, each as [N, d_i] (cut or zero-padded), into float32.

    Input i is read as [N, -1] (a 1-D input as one row) and its first inputdimensions[i]
    values are kept, padded with zeros when it has fewer. Raises OpAttributeError when
    inputdimensions does not have one entry per input, ShapeError when the batch sizes
    differ.
    """
    op = "FeatureVectorizer"
    dims = _array(attrs["inputdimensions"], np.int64)
    dims = np.zeros(0, np.int64) if dims is None else dims
    if dims.size != len(inputs) or (dims < 0).any():
        raise OpAttributeError(f"{op}: inputdimensions {dims.tolist()} must give one "
                               f"non-negative size per input ({len(inputs)} inputs)")
    batch = [1 if a.ndim <= 1 else a.shape[0] for a in inputs]
    if len(set(batch)) > 1:
        raise ShapeError(f"{op}: inputs have different batch sizes {batch}")
    n = batch[0] if batch else 1
    out = np.zeros((n, int(dims.sum())), np.float32)
    if n == 0:  # nothing to copy, and reshape(0, -1) cannot tell the widths
        return (out,)
    start = 0
    for a, d in zip(inputs, dims.tolist()):  # one step per input, not per sample
        rows = a.reshape(n, -1)
        k = min(d, rows.shape[1])
        out[:, start:start + k] = rows[:, :k]
        start += d
    return (out,)


def _feature_vectorizer_infer(attrs, inputs):
    dims = attrs.get("inputdimensions")
    batch = None
    for info in inputs:
        if info is not None and info.shape is not None:
            batch = 1 if len(info.shape) <= 1 else info.shape[0]
            break
    return [TensorInfo(_F32, (batch, int(sum(dims)) if dims is not None else None))]


_ML = "ai.onnx.ml"


def _class_labels(op: str, attrs, ints_name: str) -> np.ndarray:
    """The class labels of a classifier: its `ints_name` (classlabels_ints or
    classlabels_int64s) or classlabels_strings attribute.

    Raises:
        OpAttributeError: neither or both are given, or the one given is empty.
    """
    ints, strings = attrs.get(ints_name), attrs.get("classlabels_strings")
    if (ints is None) == (strings is None) or not len(ints if ints is not None else strings):
        raise OpAttributeError(f"{op}: exactly one of {ints_name} and classlabels_strings "
                               "must be given, and not empty")
    return _attr_array(attrs, ints_name, np.int64) if ints is not None \
        else _attr_array(attrs, "classlabels_strings", _OBJ)


def _zipmap(inputs, attrs, ctx):
    """ZipMap: float X [N, C] (or [C], one row) -> a list of N dicts {label: value}, the
    keys from classlabels_int64s or classlabels_strings, the values Python floats (as
    onnxruntime gives them).

    Raises:
        OpAttributeError: not exactly one non-empty label list.
        ShapeError: X is not [N, C] / [C], or C is not the number of labels.
    """
    labels = _class_labels("ZipMap", attrs, "classlabels_int64s").tolist()
    x = np.asarray(inputs[0])
    if x.ndim not in (1, 2):
        raise ShapeError(f"ZipMap: X must be [N, C] or [C], got shape {list(x.shape)}")
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    if rows.shape[1] != len(labels):
        raise ShapeError(f"ZipMap: X has {rows.shape[1]} columns for {len(labels)} labels")
    return ([dict(zip(labels, row)) for row in rows.astype(np.float32).tolist()],)


def _map_input(op: str, x) -> dict:
    """X of a map-reading op: a dict (as the Session passes a fed map).

    Raises ShapeError for anything else."""
    if not isinstance(x, dict):
        raise ShapeError(f"{op}: X must be a map (a dict), got {type(x).__name__}")
    return x


def _map_values(op: str, values: list) -> np.ndarray:
    """A map's values (numbers or strings, plain or 0-d arrays) as one 1-D array."""
    items = [v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in values]
    if any(isinstance(v, (str, bytes)) for v in items):
        out = np.empty(len(items), dtype=object)
        out[:] = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in items]
        return out
    try:
        return np.asarray(items, dtype=np.result_type(*values) if values else np.float32)
    except (TypeError, ValueError) as e:
        raise ShapeError(f"{op}: map values must be numbers or strings ({e})") from None


def _dict_vectorizer(inputs, attrs, ctx):
    """DictVectorizer: a map -> [1, V], entry i the value of vocabulary[i] (zero, or ""
    for strings, where the map lacks it). Keys outside the vocabulary are ignored, as
    onnxruntime does (the spec asks for every key to be in it).

    Raises:
        OpAttributeError: not exactly one non-empty vocabulary.
        ShapeError: X is not a map, or its keys are not the vocabulary's type.
    """
    op = "DictVectorizer"
    ints, strings = attrs.get("int64_vocabulary"), attrs.get("string_vocabulary")
    if (ints is None) == (strings is None) or not len(ints if ints is not None else strings):
        raise OpAttributeError(f"{op}: exactly one of int64_vocabulary and string_vocabulary "
                               "must be given, and not empty")
    cache = kernel_cache(attrs)
    index = cache.get("vocabulary")
    if index is None:
        vocab = _array(ints, np.int64).tolist() if ints is not None \
            else _array(strings, _OBJ).tolist()
        index = cache["vocabulary"] = (
            {k: i for i, k in reversed(list(enumerate(vocab)))}, len(vocab))
    positions, size = index
    x = _map_input(op, inputs[0])
    keys = list(x)
    want_str = strings is not None
    if any(isinstance(k, str) != want_str for k in keys):
        raise ShapeError(f"{op}: the map's keys must be {'strings' if want_str else 'ints'}, "
                         f"as the vocabulary's are")
    values = _map_values(op, list(x.values()))
    out = np.zeros((1, size), dtype=values.dtype) if values.dtype != object \
        else np.full((1, size), "", dtype=object)
    hit = [(positions[k], v) for k, v in zip(keys, values) if k in positions]
    if hit:
        cols, vals = zip(*hit)
        out[0, list(cols)] = vals
    return (out,)


_CAST_TO = ("TO_FLOAT", "TO_STRING", "TO_INT64")
_MAP_FORMS = ("DENSE", "SPARSE")


def _cast_map(inputs, attrs, ctx):
    """CastMap: a map with int64 keys -> [1, N] of its values cast (cast_to): DENSE
    gives the values in key order, SPARSE puts value k at position k of max_map slots
    (keys outside [0, max_map) dropped, as onnxruntime does). TO_INT64 truncates toward
    zero; TO_STRING formats numbers as "%f" (onnxruntime's format; its SPARSE filler is
    "0.f", ours "0.000000"); string values are parsed as numbers for TO_FLOAT/TO_INT64.

    Raises:
        OpAttributeError: an unknown cast_to or map_form, or max_map < 1 for SPARSE.
        ShapeError: X is not a map with int keys.
        ExecutionError: a string value that is not a number.
    """
    op = "CastMap"
    cast_to = _enum(op, "cast_to", attrs["cast_to"], _CAST_TO)
    form = _enum(op, "map_form", attrs["map_form"], _MAP_FORMS)
    x = _map_input(op, inputs[0])
    if any(not isinstance(k, (int, np.integer)) or isinstance(k, bool) for k in x):
        raise ShapeError(f"{op}: the map's keys must be ints")
    order = sorted(x, key=int)
    keys = np.asarray([int(k) for k in order], dtype=np.int64)
    values = _map_values(op, [x[k] for k in order])
    if values.dtype == object and cast_to != "TO_STRING":
        try:
            values = np.asarray([float(v) for v in values], dtype=np.float64)
        except ValueError as e:
            raise ExecutionError(f"{op}: cannot cast a string value to a number ({e})") from None
    if form == "SPARSE":
        size = int(attrs["max_map"])
        if size < 1:
            raise OpAttributeError(f"{op}: max_map must be >= 1 for SPARSE, got {size}")
        keep = (keys >= 0) & (keys < size)
        dense = np.zeros(size, dtype=values.dtype) if values.dtype != object \
            else np.full(size, "0.000000", dtype=object)  # strings reach here for TO_STRING only
        dense[keys[keep]] = values[keep]
        values = dense
    if cast_to == "TO_FLOAT":
        out = values.astype(np.float32)
    elif cast_to == "TO_INT64":
        out = np.trunc(values.astype(np.float64)).astype(np.int64)
    else:
        out = np.empty(values.size, dtype=object)
        out[:] = [v if isinstance(v, str) else f"{float(v):f}" for v in values.tolist()]
    return (out.reshape(1, -1),)


OPS = (
    define("ArrayFeatureExtractor", ["X", "Y"], ["Z"], _feature_extractor,
           infer=_feature_extractor_infer, domain=_ML, since_version=1),
    define("DictVectorizer", ["X"], ["Y"], _dict_vectorizer,
           attrs=[("int64_vocabulary", "ints", None), ("string_vocabulary", "strings", None)],
           domain=_ML, since_version=1),
    define("CastMap", ["X"], ["Y"], _cast_map,
           attrs=[("cast_to", "string", "TO_FLOAT"), ("map_form", "string", "DENSE"),
                  ("max_map", "int", 1)],
           domain=_ML, since_version=1),
    define("ZipMap", ["X"], ["Z"], _zipmap,
           attrs=[("classlabels_int64s", "ints", None), ("classlabels_strings", "strings", None)],
           domain=_ML, since_version=1, dtypes=("float32",)),
    define("Binarizer", ["X"], ["Y"], _binarizer, attrs=[("threshold", "float", 0.0)],
           infer=_binarizer_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("LabelEncoder", ["X"], ["Y"], _label_encoder,
           attrs=[("classes_strings", "strings", None),  # ml opset 1
                  ("keys_strings", "strings", None), ("keys_int64s", "ints", None),
                  ("keys_floats", "floats", None), ("keys_tensor", "tensor", None),
                  ("values_strings", "strings", None), ("values_int64s", "ints", None),
                  ("values_floats", "floats", None), ("values_tensor", "tensor", None),
                  ("default_string", "string", "_Unused"), ("default_int64", "int", -1),
                  ("default_float", "float", -0.0), ("default_tensor", "tensor", None)],
           infer=_label_encoder_infer, domain=_ML, since_version=4),
    define("Scaler", ["X"], ["Y"], _scaler,
           attrs=[("offset", "floats", None), ("scale", "floats", None)],
           infer=_float_like_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("Normalizer", ["X"], ["Y"], _normalizer, attrs=[("norm", "string", "MAX")],
           infer=_float_like_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("Imputer", ["X"], ["Y"], _imputer,
           attrs=[("imputed_value_floats", "floats", None),
                  ("imputed_value_int64s", "ints", None),
                  ("replaced_value_float", "float", 0.0), ("replaced_value_int64", "int", 0)],
           infer=_same_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("OneHotEncoder", ["X"], ["Y"], _one_hot_encoder,
           attrs=[("cats_int64s", "ints", None), ("cats_strings", "strings", None),
                  ("zeros", "int", 1)],
           infer=_one_hot_encoder_infer, domain=_ML, since_version=1),
    define("CategoryMapper", ["X"], ["Y"], _category_mapper,
           attrs=[("cats_int64s", "ints", None), ("cats_strings", "strings", None),
                  ("default_int64", "int", -1), ("default_string", "string", "_Unused")],
           infer=_category_mapper_infer, domain=_ML, since_version=1),
    define("FeatureVectorizer", ["X*"], ["Y"], _feature_vectorizer,
           attrs=[("inputdimensions", "ints", None)],
           infer=_feature_vectorizer_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
)
