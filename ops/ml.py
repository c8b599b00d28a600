"""Operators: the ONNX-ML domain (`ai.onnx.ml`).

Classical machine-learning ops that converters such as skl2onnx emit: Binarizer,
ArrayFeatureExtractor, LabelEncoder (ml opset 2 list attributes and opset 4 tensor
attributes), TreeEnsemble (ml opset 5) and the classic TreeEnsembleRegressor /
TreeEnsembleClassifier (ml opset 3, with the `*_as_tensor` double attributes);
the preprocessing ops Scaler, Normalizer, Imputer, OneHotEncoder, CategoryMapper and
FeatureVectorizer; LinearRegressor, LinearClassifier and SVMRegressor (ml opset 1).

All three tree ops compile their attributes into one flat node table (`_Forest`) and
share one walk: every (sample, tree) pair advances one level per numpy step, so the
only Python loop is over tree depth. A branch is taken when ``x <op> split`` holds or
when x is NaN and the node's missing value tracks true; this is onnxruntime's rule
(so NaN takes the true branch of BRANCH_NEQ).

Where the spec is silent we follow onnxruntime, except where its results depend on
internal bookkeeping rather than on the scores:
* a target or class no leaf voted for scores 0 (also for MIN/MAX), plus its base value;
* post transforms apply to every score row, also a single-target regression
  (onnxruntime applies only PROBIT there);
* the classifier's label is the first arg-max of the raw scores. The binary encoding
  skl2onnx emits (two classes, every vote for class 0: s, plus base_values[0], is the
  positive class's score) gives scores [1 - s, s] with label s > 0.5 when no weight is
  negative, else [-s, s] with label s > 0; LOGISTIC gives [sigmoid(-s), sigmoid(s)];
* TreeEnsemble's post_transform codes follow the spec (1 SOFTMAX, 2 LOGISTIC);
  onnxruntime reads them the other way round;
* PROBIT uses the same erfinv approximation as onnxruntime (Winitzki, a = 0.147).

The other ops follow the spec where onnxruntime departs from it:
* Scaler's offset and scale may each hold 1 or C values (onnxruntime wants equal
  lengths); Scaler and Imputer read features along the last axis ([*, F], as the
  Imputer spec says; onnxruntime uses axis 1 also for rank > 2); Imputer takes int32;
* Normalizer: MAX divides by max(x) as the spec and onnxruntime do (onnx.reference uses
  max |x|); L1 and L2 are the norms their names say, sum |x| and sqrt(sum x^2), keeping
  signs (the spec's formulas read literally would drop them; onnxruntime and
  onnx.reference agree with us); a zero divisor leaves the row as it is;
* LinearRegressor and SVMRegressor apply post_transform to every score row, also a
  single target (onnxruntime applies only PROBIT to LinearRegressor's single target
  and ignores it in SVMRegressor);
* LinearClassifier with one coefficient row and two classes (spec silent): label is
  the second class when s > 0; scores are onnxruntime's [1 - s, s] for NONE and PROBIT
  and the transform of [-s, s] otherwise (LOGISTIC then equals onnxruntime, SOFTMAX
  onnx.reference; onnxruntime leaves SOFTMAX scores untransformed here);
* OneHotEncoder truncates float inputs to int64 before the lookup, as the spec says;
* SVMClassifier (spec silent on the details) follows libsvm and onnxruntime: one-vs-one
  votes, label = most votes also when probabilities are given, scores = pairwise
  decision values ([-d, d] for two classes) or the coupled probabilities. The post
  transform applies to those rows; onnxruntime skips SOFTMAX / SOFTMAX_ZERO for the
  binary [-d, d]. In linear mode (no support vectors) the label is the arg-max score
  also for two classes (onnxruntime then decides by weight-sign bookkeeping).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError
from .registry import TensorInfo, define
from .strings import _strings

KNOWN_FAILURES: dict[str, str] = {}

_OBJ = np.dtype(object)
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


# --------------------------------------------------------------------------- helpers

def _array(value, dtype=None):
    """An attribute value (list or tensor) as a 1-D array, or None when absent."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        out = value.reshape(-1)
        return out if dtype is None else out.astype(dtype)
    if dtype is _OBJ:
        out = np.empty(len(value), dtype=object)
        out[:] = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in value]
        return out
    return np.asarray(list(value), dtype=dtype)


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


# --------------------------------------------------------------------------- Binarizer

def _binarizer(inputs, attrs, ctx):
    """1 where x > threshold, else 0 (NaN gives 0), in x's dtype."""
    x = inputs[0]
    return ((x > attrs["threshold"]).astype(x.dtype),)


def _binarizer_infer(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


# --------------------------------------------------------------------------- ArrayFeatureExtractor

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


# --------------------------------------------------------------------------- LabelEncoder

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


def _label_encoder(inputs, attrs, ctx):
    """Map each element through keys -> values (last duplicate key wins).

    Float keys equal to NaN match NaN inputs. Raises OpAttributeError for missing or
    mismatched key/value attributes, ShapeError when the input type differs from the keys'.
    """
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
    return [TensorInfo(_value_dtype(attrs), inputs[0].shape)]


# --------------------------------------------------------------------------- tree ensembles

_MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
          "BRANCH_MEMBER", "LEAF")
_MEMBER, _LEAF = 6, 7
_COMPARE = (np.less_equal, np.less, np.greater_equal, np.greater, np.equal, np.not_equal)
_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


@dataclasses.dataclass(slots=True)
class _Forest:
    """A tree ensemble as flat per-node arrays (leaves are nodes with mode _LEAF).

    `true_next`/`false_next` index this same table. Leaf k's votes are entries
    vote_start[k] : vote_start[k] + vote_count[k] of vote_target / vote_weight.
    Set-membership nodes test (member_rank[node], x) against the sorted complex keys
    `members` (real part: the node's rank among membership nodes, imaginary: a member).
    """

    feature: np.ndarray
    split: np.ndarray
    mode: np.ndarray
    true_next: np.ndarray
    false_next: np.ndarray
    tracks: np.ndarray | None
    roots: np.ndarray
    vote_start: np.ndarray
    vote_count: np.ndarray
    vote_target: np.ndarray
    vote_weight: np.ndarray
    n_targets: int
    member_rank: np.ndarray | None = None
    members: np.ndarray | None = None

    def check_features(self, op: str, n_features: int) -> None:
        """Raise ShapeError if an interior node reads a feature X does not have."""
        used = self.feature[self.mode != _LEAF]
        if used.size and (used.min() < 0 or used.max() >= n_features):
            bad = used[(used < 0) | (used >= n_features)][0]
            raise ShapeError(f"{op}: a node reads feature {int(bad)} but X has {n_features} "
                             "features")


def _complex_keys(rank: np.ndarray, value: np.ndarray) -> np.ndarray:
    # built part by part: rank + 1j * value would turn an inf or NaN value into a NaN rank
    keys = np.empty(len(rank), dtype=np.complex128)
    keys.real = rank
    keys.imag = value
    return keys


def _votes(op: str, node_of_vote: np.ndarray, target: np.ndarray, weight: np.ndarray,
           n_nodes: int, n_targets: int, target_name: str):
    """CSR layout of the votes per node: (start, count, target, weight) sorted by node."""
    _check_range(op, target_name, target, n_targets)
    order = np.argsort(node_of_vote, kind="stable")
    count = np.bincount(node_of_vote, minlength=n_nodes).astype(np.int64)
    start = np.cumsum(count) - count
    return start, count, target[order], weight[order].astype(np.float64)


def _compile_tree_ensemble(attrs) -> _Forest:
    """Build the node table of a TreeEnsemble (ml opset 5) node.

    Interior nodes keep their index; leaf j becomes node n_interior + j.

    Raises:
        OpAttributeError: attribute lengths differ, an index is out of range, a mode is
            unknown, or membership_values does not match the BRANCH_MEMBER nodes.
    """
    op = "TreeEnsemble"
    feature = _array(attrs["nodes_featureids"], np.int64)
    split = _array(attrs["nodes_splits"], np.float64)
    mode = _array(attrs["nodes_modes"], np.int64)
    true_ids = _array(attrs["nodes_truenodeids"], np.int64)
    false_ids = _array(attrs["nodes_falsenodeids"], np.int64)
    true_leaf = _array(attrs["nodes_trueleafs"], np.int64)
    false_leaf = _array(attrs["nodes_falseleafs"], np.int64)
    tracks = _array(attrs["nodes_missing_value_tracks_true"], np.int64)
    hitrates = _array(attrs["nodes_hitrates"])
    n_int = _check_lengths(op, {
        "nodes_featureids": feature, "nodes_splits": split, "nodes_modes": mode,
        "nodes_truenodeids": true_ids, "nodes_falsenodeids": false_ids,
        "nodes_trueleafs": true_leaf, "nodes_falseleafs": false_leaf,
        "nodes_missing_value_tracks_true": tracks if tracks is not None and len(tracks)
        else None, "nodes_hitrates": hitrates if hitrates is not None and len(hitrates)
        else None})
    target = _array(attrs["leaf_targetids"], np.int64)
    weight = _array(attrs["leaf_weights"], np.float64)
    n_leaf = _check_lengths(op, {"leaf_targetids": target, "leaf_weights": weight})
    if n_int == 0:
        raise OpAttributeError(f"{op}: the ensemble has no nodes")
    _check_range(op, "nodes_modes", mode, _MEMBER + 1)
    for name, flags in (("nodes_trueleafs", true_leaf), ("nodes_falseleafs", false_leaf)):
        _check_range(op, name, flags, 2)
    for name, ids, leafy in (("nodes_truenodeids", true_ids, true_leaf),
                             ("nodes_falsenodeids", false_ids, false_leaf)):
        if leafy.any():
            _check_range(op, f"{name} (leaf)", ids[leafy == 1], n_leaf)
        if (leafy == 0).any():
            _check_range(op, f"{name} (node)", ids[leafy == 0], n_int)
    roots = _array(attrs["tree_roots"], np.int64)
    _check_range(op, "tree_roots", roots, n_int)
    n_targets = attrs["n_targets"]
    if n_targets is None:
        n_targets = int(target.max()) + 1 if n_leaf else 1
    if n_targets < 1:
        raise OpAttributeError(f"{op}: n_targets must be positive, got {n_targets}")

    n_nodes = n_int + n_leaf
    feature = np.concatenate([feature, np.zeros(n_leaf, np.int64)])
    split = np.concatenate([split, np.zeros(n_leaf)])
    mode = np.concatenate([mode, np.full(n_leaf, _LEAF)]).astype(np.int8)
    true_next = np.concatenate([np.where(true_leaf == 1, true_ids + n_int, true_ids),
                                np.zeros(n_leaf, np.int64)])
    false_next = np.concatenate([np.where(false_leaf == 1, false_ids + n_int, false_ids),
                                 np.zeros(n_leaf, np.int64)])
    track = None
    if tracks is not None and len(tracks) and tracks.any():
        track = np.concatenate([tracks != 0, np.zeros(n_leaf, bool)])
    start, count, vt, vw = _votes(op, np.arange(n_int, n_nodes), target, weight, n_nodes,
                                  n_targets, "leaf_targetids")
    forest = _Forest(feature, split, mode, true_next, false_next, track, roots, start, count,
                     vt, vw, int(n_targets))
    _attach_members(forest, attrs["membership_values"], mode == _MEMBER)
    return forest


def _attach_members(forest: _Forest, values, is_member: np.ndarray) -> None:
    """Parse NaN-delimited membership sets (one per BRANCH_MEMBER node, in node order)."""
    n_sets = int(is_member.sum())
    if values is None:
        if n_sets:
            raise OpAttributeError("TreeEnsemble: BRANCH_MEMBER nodes need membership_values")
        return
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    delim = np.isnan(values)
    if int(delim.sum()) != n_sets or (values.size and not delim[-1]):
        raise OpAttributeError(f"TreeEnsemble: membership_values holds {int(delim.sum())} "
                               f"NaN-terminated sets, but there are {n_sets} BRANCH_MEMBER "
                               "nodes")
    set_of_value = np.cumsum(delim) - delim  # the set each value belongs to
    rank = np.full(len(is_member), -1, np.int64)
    rank[is_member] = np.arange(n_sets)
    forest.member_rank = rank
    forest.members = np.sort(_complex_keys(set_of_value[~delim], values[~delim]))


def _tree_lists(attrs, prefix: str):
    """The (treeids, nodeids, ids, weights) vote lists of a classic tree op."""
    weights = attrs.get(f"{prefix}_weights_as_tensor")
    if weights is None:
        weights = attrs.get(f"{prefix}_weights")
    return (_array(attrs.get(f"{prefix}_treeids"), np.int64),
            _array(attrs.get(f"{prefix}_nodeids"), np.int64),
            _array(attrs.get(f"{prefix}_ids"), np.int64), _array(weights, np.float64))


def _compile_classic(op: str, attrs, prefix: str, n_targets: int) -> _Forest:
    """Build the node table of a TreeEnsembleRegressor/Classifier node.

    Nodes are named by (tree id, node id); each tree's root is its first node in
    attribute order. `prefix` is "target" or "class" (the vote attributes).

    Raises:
        OpAttributeError: attributes missing or of different lengths, a child or vote
            names a node that does not exist, a vote is on an interior node, an id is
            repeated or out of range, or a mode is unknown.
    """
    values = attrs.get("nodes_values_as_tensor")
    if values is None:
        values = attrs.get("nodes_values")
    names = ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
             "nodes_truenodeids", "nodes_falsenodeids")
    missing = [n for n in names if attrs.get(n) is None]
    if missing:
        raise OpAttributeError(f"{op}: missing required attribute(s) {', '.join(missing)}")
    tree = _array(attrs["nodes_treeids"], np.int64)
    node = _array(attrs["nodes_nodeids"], np.int64)
    feature = _array(attrs["nodes_featureids"], np.int64)
    true_ids = _array(attrs["nodes_truenodeids"], np.int64)
    false_ids = _array(attrs["nodes_falsenodeids"], np.int64)
    tracks = _array(attrs.get("nodes_missing_value_tracks_true"), np.int64)
    mode_names = list(attrs["nodes_modes"])
    split = _array(values, np.float64) if values is not None else None
    n = _check_lengths(op, {
        "nodes_treeids": tree, "nodes_nodeids": node, "nodes_featureids": feature,
        "nodes_modes": mode_names, "nodes_truenodeids": true_ids,
        "nodes_falsenodeids": false_ids, "nodes_values": split,
        "nodes_missing_value_tracks_true": tracks if tracks is not None and len(tracks)
        else None})
    if n == 0:
        raise OpAttributeError(f"{op}: the ensemble has no nodes")
    codes = {m: i for i, m in enumerate(_MODES) if m != "BRANCH_MEMBER"}
    unknown = [m for m in mode_names if m not in codes]
    if unknown:
        raise OpAttributeError(f"{op}: unknown node mode {unknown[0]!r} (known: "
                               f"{', '.join(codes)})")
    mode = np.array([codes[m] for m in mode_names], dtype=np.int8)
    is_leaf = mode == _LEAF
    if split is None:
        if not is_leaf.all():
            raise OpAttributeError(f"{op}: nodes_values (or nodes_values_as_tensor) is required")
        split = np.zeros(n)
    limit = 1 << 31
    _check_range(op, "nodes_treeids", tree, limit)
    _check_range(op, "nodes_nodeids", node, limit)

    # (tree, node) pairs packed into one sortable int64 key
    key = (tree << 32) | node
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    dup = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if dup.size:
        k = order[dup[0] + 1]
        raise OpAttributeError(f"{op}: node id {int(node[k])} appears twice in tree "
                               f"{int(tree[k])}")

    def lookup(trees, ids, what):
        ids_ok = (ids >= 0) & (ids < limit)
        want = (trees << 32) | np.where(ids_ok, ids, 0)
        pos = np.minimum(np.searchsorted(sorted_key, want), n - 1)
        found = ids_ok & (sorted_key[pos] == want)
        if not found.all():
            k = int(np.flatnonzero(~found)[0])
            raise OpAttributeError(f"{op}: {what}[{k}] = {int(ids[k])} names no node of "
                                   f"tree {int(trees[k])}")
        return order[pos]

    interior = ~is_leaf
    true_next = np.zeros(n, np.int64)
    false_next = np.zeros(n, np.int64)
    true_next[interior] = lookup(tree[interior], true_ids[interior], "nodes_truenodeids")
    false_next[interior] = lookup(tree[interior], false_ids[interior], "nodes_falsenodeids")
    _, roots = np.unique(tree, return_index=True)

    v_tree, v_node, v_target, v_weight = _tree_lists(attrs, prefix)
    n_votes = _check_lengths(op, {f"{prefix}_treeids": v_tree, f"{prefix}_nodeids": v_node,
                                  f"{prefix}_ids": v_target, f"{prefix}_weights": v_weight})
    if n_votes and any(a is None for a in (v_tree, v_node, v_target, v_weight)):
        raise OpAttributeError(f"{op}: {prefix}_treeids, {prefix}_nodeids, {prefix}_ids and "
                               f"{prefix}_weights must be given together")
    if n_votes:
        _check_range(op, f"{prefix}_treeids", v_tree, limit)
        vote_node = lookup(v_tree, v_node, f"{prefix}_nodeids")
        if not is_leaf[vote_node].all():
            k = int(np.flatnonzero(~is_leaf[vote_node])[0])
            raise OpAttributeError(f"{op}: {prefix}_nodeids[{k}] = {int(v_node[k])} is not a "
                                   f"leaf of tree {int(v_tree[k])}")
    else:
        vote_node = v_target = np.zeros(0, np.int64)
        v_weight = np.zeros(0)
    start, count, vt, vw = _votes(op, vote_node, v_target, v_weight, n, n_targets,
                                  f"{prefix}_ids")
    track = tracks != 0 if tracks is not None and len(tracks) and tracks.any() else None
    return _Forest(feature, split, mode, true_next, false_next, track, roots.astype(np.int64),
                   start, count, vt, vw, int(n_targets))


def _features(op: str, x: np.ndarray, forest: _Forest) -> np.ndarray:
    """X as float64 [N, F], checked against the features the nodes read."""
    if x.ndim != 2:
        raise ShapeError(f"{op}: X must be [N, F], got shape {list(x.shape)}")
    forest.check_features(op, x.shape[1])
    return x.astype(np.float64, copy=False)


def _branch(forest: _Forest, node: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Whether each (node, feature value) pair takes its node's true branch."""
    mode = forest.mode[node]
    go = np.zeros(len(node), dtype=bool)
    for code in np.unique(mode):  # at most 7 modes
        sel = mode == code
        if code == _MEMBER:
            members = forest.members
            if members is None or members.size == 0:
                continue
            want = _complex_keys(forest.member_rank[node[sel]], v[sel])
            pos = np.minimum(np.searchsorted(members, want), members.size - 1)
            go[sel] = members[pos] == want
        elif code != _LEAF:
            go[sel] = _COMPARE[code](v[sel], forest.split[node[sel]])
    if forest.tracks is not None:
        go |= forest.tracks[node] & np.isnan(v)
    return go


def _walk(op: str, forest: _Forest, x: np.ndarray) -> np.ndarray:
    """The leaf each (sample, tree) pair reaches, as a flat [N * T] sample-major array.

    All pairs still on an interior node advance one level per step.

    Raises:
        OpAttributeError: a path is longer than the number of interior nodes (a cycle).
    """
    n_trees = forest.roots.size
    pos = np.tile(forest.roots, x.shape[0])
    row = np.repeat(np.arange(x.shape[0]), n_trees)
    is_leaf = forest.mode == _LEAF
    active = np.flatnonzero(~is_leaf[pos])
    for _ in range(int((~is_leaf).sum())):
        if not active.size:
            break
        node = pos[active]
        go = _branch(forest, node, x[row[active], forest.feature[node]])
        nxt = np.where(go, forest.true_next[node], forest.false_next[node])
        pos[active] = nxt
        active = active[~is_leaf[nxt]]
    if active.size:
        raise OpAttributeError(f"{op}: the node links form a cycle (a path never reaches a "
                               "leaf)")
    return pos


def _aggregate(forest: _Forest, leaves: np.ndarray, n: int, aggregate: str) -> np.ndarray:
    """Combine the votes of the reached leaves into float64 scores [N, n_targets]."""
    n_trees = forest.roots.size
    count = forest.vote_count[leaves]
    total = int(count.sum())
    sample = np.repeat(np.arange(leaves.size) // max(n_trees, 1), count)
    # index of each vote: its leaf's first vote plus its rank among that leaf's votes
    first = np.repeat(forest.vote_start[leaves] - (np.cumsum(count) - count), count)
    vote = first + np.arange(total)
    flat = sample * forest.n_targets + forest.vote_target[vote]
    weight = forest.vote_weight[vote]
    size = n * forest.n_targets
    if aggregate in ("SUM", "AVERAGE"):
        out = np.bincount(flat, weight, minlength=size)
        if aggregate == "AVERAGE" and n_trees:
            out /= n_trees
    else:
        out = np.full(size, np.inf if aggregate == "MIN" else -np.inf)
        (np.minimum if aggregate == "MIN" else np.maximum).at(out, flat, weight)
        out[np.bincount(flat, minlength=size) == 0] = 0.0
    return out.reshape(n, forest.n_targets)


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


def _base_values(op: str, attrs, n: int, allow_one: bool = False):
    base = attrs.get("base_values_as_tensor")
    if base is None:
        base = attrs.get("base_values")
    base = _array(base, np.float64)
    if base is None or base.size == 0:
        return None
    if base.size != n and not (allow_one and base.size == 1):
        raise OpAttributeError(f"{op}: base_values has {base.size} values for {n} "
                               f"{'classes' if allow_one else 'targets'}")
    return base


def _tree_ensemble(inputs, attrs, ctx):
    """TreeEnsemble (ml opset 5): [N, F] -> [N, n_targets] in X's dtype.

    Raises OpAttributeError for inconsistent attributes, ShapeError for a bad X.
    """
    op = "TreeEnsemble"
    forest = _compile_tree_ensemble(attrs)
    aggregate = _enum(op, "aggregate_function", attrs["aggregate_function"], _AGGREGATES)
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    x = inputs[0]
    xf = _features(op, x, forest)
    scores = _aggregate(forest, _walk(op, forest, xf), x.shape[0], aggregate)
    return (_post_transform(scores, transform).astype(x.dtype),)


def _tree_ensemble_infer(attrs, inputs):
    x = inputs[0]
    n = x.shape[0] if x.shape is not None and len(x.shape) == 2 else None
    targets = attrs.get("n_targets")
    if targets is None and attrs.get("leaf_targetids"):
        targets = max(attrs["leaf_targetids"]) + 1
    return [TensorInfo(x.dtype, (n, targets))]


def _regressor(inputs, attrs, ctx):
    """TreeEnsembleRegressor (ml opset 3): [N, F] -> float32 [N, n_targets].

    Raises OpAttributeError for inconsistent attributes, ShapeError for a bad X.
    """
    op = "TreeEnsembleRegressor"
    n_targets = attrs["n_targets"]
    if n_targets is None or n_targets < 1:
        raise OpAttributeError(f"{op}: n_targets must be a positive integer, got {n_targets}")
    forest = _compile_classic(op, attrs, "target", n_targets)
    aggregate = _enum(op, "aggregate_function", attrs["aggregate_function"], _AGGREGATES)
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    base = _base_values(op, attrs, n_targets)
    x = inputs[0]
    scores = _aggregate(forest, _walk(op, forest, _features(op, x, forest)), x.shape[0],
                        aggregate)
    if base is not None:
        scores += base
    return (_post_transform(scores, transform).astype(np.float32),)


def _regressor_infer(attrs, inputs):
    x = inputs[0]
    n = x.shape[0] if x.shape is not None and len(x.shape) == 2 else None
    return [TensorInfo(_F32, (n, attrs.get("n_targets")))]


def _class_labels(op: str, attrs) -> np.ndarray:
    ints, strings = attrs.get("classlabels_int64s"), attrs.get("classlabels_strings")
    if (ints is None) == (strings is None) or not len(ints if ints is not None else strings):
        raise OpAttributeError(f"{op}: exactly one of classlabels_int64s and "
                               "classlabels_strings must be given, and not empty")
    return _array(ints, np.int64) if ints is not None else _array(strings, _OBJ)


def _classifier(inputs, attrs, ctx):
    """TreeEnsembleClassifier (ml opset 3): [N, F] -> labels [N], float32 scores [N, C].

    Raises OpAttributeError for inconsistent attributes, ShapeError for a bad X.
    """
    op = "TreeEnsembleClassifier"
    labels = _class_labels(op, attrs)
    n_classes = labels.size
    forest = _compile_classic(op, attrs, "class", n_classes)
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    binary = n_classes == 2 and forest.vote_target.size and not forest.vote_target.any()
    base = _base_values(op, attrs, n_classes, allow_one=bool(binary))
    x = inputs[0]
    scores = _aggregate(forest, _walk(op, forest, _features(op, x, forest)), x.shape[0], "SUM")
    if binary:
        # every vote holds the positive class's score s (skl2onnx's binary encoding)
        s = scores[:, 0] + (base[0] if base is not None else 0.0)
        positive = not (forest.vote_weight < 0).any()
        winner = s > (0.5 if positive else 0.0)
        if transform == "LOGISTIC":
            scores = np.stack([_sigmoid(-s), _sigmoid(s)], axis=1)
        else:
            scores = _post_transform(np.stack([1.0 - s if positive else -s, s], axis=1),
                                     transform)
        index = winner.astype(np.int64)
    else:
        if base is not None:
            scores += base
        index = np.argmax(scores, axis=1) if scores.size else np.zeros(x.shape[0], np.int64)
        scores = _post_transform(scores, transform)
    return labels[index], scores.astype(np.float32)


def _classifier_infer(attrs, inputs):
    x = inputs[0]
    n = x.shape[0] if x.shape is not None and len(x.shape) == 2 else None
    strings = attrs.get("classlabels_strings")
    classes = attrs.get("classlabels_int64s") if strings is None else strings
    return [TensorInfo(_I64 if strings is None else _OBJ, (n,)),
            TensorInfo(_F32, (n, len(classes) if classes is not None else None))]


# --------------------------------------------------------------------------- preprocessing

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


# --------------------------------------------------------------------------- linear models

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
    w = _weights(op, attrs["coefficients"], attrs["targets"], x.shape[1])
    scores = x @ w.T + _intercepts(op, attrs["intercepts"], w.shape[0])
    return (_post_transform(scores, transform).astype(np.float32),)


def _linear_regressor_infer(attrs, inputs):
    x = inputs[0]
    n = None
    if x.shape is not None:
        n = 1 if len(x.shape) == 1 else x.shape[0]
    return [TensorInfo(_F32, (n, attrs.get("targets")))]


def _linear_labels(op: str, attrs) -> np.ndarray:
    """classlabels_ints or classlabels_strings (exactly one, not empty)."""
    ints, strings = attrs.get("classlabels_ints"), attrs.get("classlabels_strings")
    if (ints is None) == (strings is None) or not len(ints if ints is not None else strings):
        raise OpAttributeError(f"{op}: exactly one of classlabels_ints and "
                               "classlabels_strings must be given, and not empty")
    return _array(ints, np.int64) if ints is not None else _array(strings, _OBJ)


def _linear_classifier(inputs, attrs, ctx):
    """Scores X @ W.T + b and the arg-max label: [N, F] -> labels [N], float32 [N, C].

    A single coefficient row with two classes is the binary encoding: with s = x.w + b
    the label is the second class when s > 0, and the scores are [1 - s, s] for NONE
    and PROBIT, the transform of [-s, s] for the others.
    Raises OpAttributeError for inconsistent attributes, ShapeError for a bad X.
    """
    op = "LinearClassifier"
    labels = _linear_labels(op, attrs)
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    if attrs["multi_class"] not in (0, 1):
        raise OpAttributeError(f"{op}: multi_class must be 0 or 1, got {attrs['multi_class']}")
    coef = _array(attrs["coefficients"], np.float64)
    n_coef = 0 if coef is None else coef.size
    b = _array(attrs["intercepts"], np.float64)
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


def _linear_classifier_infer(attrs, inputs):
    x = inputs[0]
    n = None
    if x.shape is not None:
        n = 1 if len(x.shape) == 1 else x.shape[0]
    strings = attrs.get("classlabels_strings")
    classes = attrs.get("classlabels_ints") if strings is None else strings
    return [TensorInfo(_I64 if strings is None else _OBJ, (n,)),
            TensorInfo(_F32, (n, len(classes) if classes is not None else None))]


# --------------------------------------------------------------------------- encoders

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


# --------------------------------------------------------------------------- SVMs

_KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")


def _kernel_params(op: str, attrs):
    """(gamma, coef0, degree) from kernel_params (absent: zeros)."""
    p = _array(attrs["kernel_params"], np.float64)
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
    rho = _array(attrs["rho"], np.float64)
    if rho is None or rho.size != 1:
        raise OpAttributeError(f"{op}: rho must hold one value, got "
                               f"{0 if rho is None else rho.size}")
    x = _linear_input(op, inputs[0])
    n_sv = attrs["n_supports"]
    if n_sv < 0:
        raise OpAttributeError(f"{op}: n_supports must be >= 0, got {n_sv}")
    if n_sv:
        vectors = _weights(op, attrs["support_vectors"], n_sv, x.shape[1], "support_vectors")
        coef = _array(attrs["coefficients"], np.float64)
        if coef is None or coef.size != n_sv:
            raise OpAttributeError(f"{op}: {0 if coef is None else coef.size} coefficients "
                                   f"for {n_sv} support vectors")
        score = _gram(kernel, params, x, vectors) @ coef
    else:
        score = x @ _weights(op, attrs["coefficients"], 1, x.shape[1])[0]
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
    labels = _linear_labels(op, attrs)
    kernel = _enum(op, "kernel_type", attrs["kernel_type"], _KERNELS)
    transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
    params = _kernel_params(op, attrs)
    x = _linear_input(op, inputs[0])
    n_classes = labels.size
    rho = _array(attrs["rho"], np.float64)
    rho = np.zeros(0) if rho is None else rho
    per_class = _array(attrs["vectors_per_class"], np.int64)
    per_class = np.zeros(0, np.int64) if per_class is None else per_class
    n_vectors = int(per_class.sum()) if per_class.size else 0
    if not n_vectors:
        w = _weights(op, attrs["coefficients"], n_classes, x.shape[1])
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
    vectors = _weights(op, attrs["support_vectors"], n_vectors, x.shape[1], "support_vectors")
    coef = _array(attrs["coefficients"], np.float64)
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
    prob_a = _array(attrs["prob_a"], np.float64)
    prob_b = _array(attrs["prob_b"], np.float64)
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
    x = inputs[0]
    n = None
    if x.shape is not None:
        n = 1 if len(x.shape) == 1 else x.shape[0]
    strings = attrs.get("classlabels_strings")
    classes = attrs.get("classlabels_ints") if strings is None else strings
    k = len(classes) if classes is not None else None
    one_vs_one = bool(attrs.get("vectors_per_class")) and sum(attrs["vectors_per_class"]) > 0
    if k is not None and k > 2 and one_vs_one and not attrs.get("prob_a"):
        k = k * (k - 1) // 2
    return [TensorInfo(_I64 if strings is None else _OBJ, (n,)), TensorInfo(_F32, (n, k))]


_CLASSIC_NODE_ATTRS = [
    ("nodes_treeids", "ints", None), ("nodes_nodeids", "ints", None),
    ("nodes_featureids", "ints", None), ("nodes_modes", "strings", None),
    ("nodes_values", "floats", None), ("nodes_values_as_tensor", "tensor", None),
    ("nodes_truenodeids", "ints", None), ("nodes_falsenodeids", "ints", None),
    ("nodes_missing_value_tracks_true", "ints", None), ("nodes_hitrates", "floats", None),
    ("nodes_hitrates_as_tensor", "tensor", None), ("base_values", "floats", None),
    ("base_values_as_tensor", "tensor", None), ("post_transform", "string", "NONE"),
]

_ML = "ai.onnx.ml"

OPS = (
    define("ArrayFeatureExtractor", ["X", "Y"], ["Z"], _feature_extractor,
           infer=_feature_extractor_infer, domain=_ML, since_version=1),
    define("Binarizer", ["X"], ["Y"], _binarizer, attrs=[("threshold", "float", 0.0)],
           infer=_binarizer_infer, domain=_ML, since_version=1,
           dtypes=("float32", "float64", "int64", "int32")),
    define("LabelEncoder", ["X"], ["Y"], _label_encoder,
           attrs=[("keys_strings", "strings", None), ("keys_int64s", "ints", None),
                  ("keys_floats", "floats", None), ("keys_tensor", "tensor", None),
                  ("values_strings", "strings", None), ("values_int64s", "ints", None),
                  ("values_floats", "floats", None), ("values_tensor", "tensor", None),
                  ("default_string", "string", "_Unused"), ("default_int64", "int", -1),
                  ("default_float", "float", -0.0), ("default_tensor", "tensor", None)],
           infer=_label_encoder_infer, domain=_ML, since_version=4),
    define("TreeEnsemble", ["X"], ["Y"], _tree_ensemble,
           attrs=[("aggregate_function", "int", 1), ("post_transform", "int", 0),
                  ("tree_roots", "ints"), ("nodes_featureids", "ints"),
                  ("nodes_splits", "tensor"), ("nodes_modes", "tensor"),
                  ("nodes_truenodeids", "ints"), ("nodes_falsenodeids", "ints"),
                  ("nodes_trueleafs", "ints"), ("nodes_falseleafs", "ints"),
                  ("nodes_missing_value_tracks_true", "ints", None),
                  ("nodes_hitrates", "tensor", None), ("membership_values", "tensor", None),
                  ("leaf_targetids", "ints"), ("leaf_weights", "tensor"),
                  ("n_targets", "int", None)],
           infer=_tree_ensemble_infer, domain=_ML, since_version=5,
           dtypes=("float32", "float64", "float16")),
    define("TreeEnsembleClassifier", ["X"], ["Y", "Z"], _classifier,
           attrs=_CLASSIC_NODE_ATTRS + [
               ("class_treeids", "ints", None), ("class_nodeids", "ints", None),
               ("class_ids", "ints", None), ("class_weights", "floats", None),
               ("class_weights_as_tensor", "tensor", None),
               ("classlabels_int64s", "ints", None), ("classlabels_strings", "strings", None)],
           infer=_classifier_infer, domain=_ML, since_version=3,
           dtypes=("float32", "float64", "int64", "int32")),
    define("TreeEnsembleRegressor", ["X"], ["Y"], _regressor,
           attrs=_CLASSIC_NODE_ATTRS + [
               ("aggregate_function", "string", "SUM"), ("n_targets", "int", None),
               ("target_treeids", "ints", None), ("target_nodeids", "ints", None),
               ("target_ids", "ints", None), ("target_weights", "floats", None),
               ("target_weights_as_tensor", "tensor", None)],
           infer=_regressor_infer, domain=_ML, since_version=3,
           dtypes=("float32", "float64", "int64", "int32")),
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
