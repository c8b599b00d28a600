"""Operators: ONNX-ML tree ensembles (`ai.onnx.ml`): TreeEnsemble (ml opset 5) and the
classic TreeEnsembleRegressor / TreeEnsembleClassifier (ml opset 3, with the
`*_as_tensor` double attributes).

All three compile their attributes into one flat node table (`_Forest`) and share one
walk: every (sample, tree) pair advances one level per numpy step, so the only Python
loop is over tree depth. A branch is taken when ``x <op> split`` holds or when x is NaN
and the node's missing value tracks true; this is onnxruntime's rule (so NaN takes the
true branch of BRANCH_NEQ).

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
  onnxruntime reads them the other way round.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .ml import (_F32, _I64, _ML, _OBJ, _TRANSFORMS, _array, _check_lengths, _check_range,
                 _class_labels, _enum, _post_transform, _sigmoid)
from .common import check_result_size
from .registry import TensorInfo, define, kernel_cache

KNOWN_FAILURES: dict[str, str] = {}


_MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
          "BRANCH_MEMBER", "LEAF")


_MEMBER, _LEAF = 6, 7


# Which comparison outcomes take the true branch, per mode code: bit 1 x < split,
# 2 x == split, 4 x > split, 8 unordered (a NaN: only BRANCH_NEQ holds, as x != split
# does); set membership and leaves are handled apart.
_TRUE_OUTCOMES = np.array([1 | 2, 1, 2 | 4, 4, 2, 1 | 4 | 8, 0, 0], dtype=np.uint8)


_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")


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
    """Whether each (node, feature value) pair takes its node's true branch.

    Every comparison mode at once: the outcome of x against the split as one bit
    (less / equal / greater / unordered), tested against the mode's bit mask.
    """
    mode = forest.mode[node]
    split = forest.split[node]
    outcome = np.less(v, split).view(np.uint8)
    outcome |= np.equal(v, split).view(np.uint8) << 1
    outcome |= np.greater(v, split).view(np.uint8) << 2
    outcome |= (outcome == 0).view(np.uint8) << 3
    go = (_TRUE_OUTCOMES[mode] & outcome) != 0
    if forest.members is not None and forest.members.size:
        sel = mode == _MEMBER
        if sel.any():
            want = _complex_keys(forest.member_rank[node[sel]], v[sel])
            members = forest.members
            pos = np.minimum(np.searchsorted(members, want), members.size - 1)
            go[sel] = members[pos] == want
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
    # flat offset of each pair's sample row in x: one 1-D gather per level
    row_start = np.repeat(np.arange(0, x.size, max(x.shape[1], 1)), n_trees)
    flat_x = np.ascontiguousarray(x).reshape(-1)
    is_leaf = forest.mode == _LEAF
    active = np.flatnonzero(~is_leaf[pos])
    for _ in range(int((~is_leaf).sum())):
        if not active.size:
            break
        node = pos[active]
        go = _branch(forest, node, flat_x[row_start[active] + forest.feature[node]])
        nxt = np.where(go, forest.true_next[node], forest.false_next[node])
        pos[active] = nxt
        active = active[~is_leaf[nxt]]
    if active.size:
        raise OpAttributeError(f"{op}: the node links form a cycle (a path never reaches a "
                               "leaf)")
    return pos


def _aggregate(op: str, forest: _Forest, leaves: np.ndarray, n: int,
               aggregate: str) -> np.ndarray:
    """Combine the votes of the reached leaves into float64 scores [N, n_targets].

    Raises:
        ResourceExhaustedError: the scores would pass the 2 GiB limit (n_targets 2**40
            asked numpy for terabytes).
    """
    check_result_size(op, "the scores", (n, forest.n_targets), 8,
                      cause=f"n_targets {forest.n_targets}")
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
        # (without a single vote bincount gives int64 zeros, whatever the weights)
        out = np.bincount(flat, weight, minlength=size).astype(np.float64, copy=False)
        if aggregate == "AVERAGE" and n_trees:
            out /= n_trees
    else:
        out = np.full(size, np.inf if aggregate == "MIN" else -np.inf)
        (np.minimum if aggregate == "MIN" else np.maximum).at(out, flat, weight)
        out[np.bincount(flat, minlength=size) == 0] = 0.0
    return out.reshape(n, forest.n_targets)


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
    forest, aggregate, transform = _compiled(attrs, lambda: (
        _compile_tree_ensemble(attrs),
        _enum(op, "aggregate_function", attrs["aggregate_function"], _AGGREGATES),
        _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)))
    x = inputs[0]
    xf = _features(op, x, forest)
    scores = _aggregate(op, forest, _walk(op, forest, xf), x.shape[0], aggregate)
    return (_post_transform(scores, transform).astype(x.dtype),)


def _compiled(attrs, build):
    """build() (the node's compiled attributes) once per executor-resolved attrs: the
    tables cost far more than a small batch's walk (100 trees of depth 8: 6 ms)."""
    cache = kernel_cache(attrs)
    got = cache.get("trees")
    if got is None:
        got = cache["trees"] = build()
    return got


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
    forest, aggregate, transform, base = _compiled(attrs, lambda: (
        _compile_classic(op, attrs, "target", n_targets),
        _enum(op, "aggregate_function", attrs["aggregate_function"], _AGGREGATES),
        _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS),
        _base_values(op, attrs, n_targets)))
    x = inputs[0]
    scores = _aggregate(op, forest, _walk(op, forest, _features(op, x, forest)), x.shape[0],
                        aggregate)
    if base is not None:
        scores += base
    return (_post_transform(scores, transform).astype(np.float32),)


def _regressor_infer(attrs, inputs):
    x = inputs[0]
    n = x.shape[0] if x.shape is not None and len(x.shape) == 2 else None
    return [TensorInfo(_F32, (n, attrs.get("n_targets")))]


def _classifier(inputs, attrs, ctx):
    """TreeEnsembleClassifier (ml opset 3): [N, F] -> labels [N], float32 scores [N, C].

    Raises OpAttributeError for inconsistent attributes, ShapeError for a bad X.
    """
    op = "TreeEnsembleClassifier"

    def build():
        labels = _class_labels(op, attrs, "classlabels_int64s")
        forest = _compile_classic(op, attrs, "class", labels.size)
        transform = _enum(op, "post_transform", attrs["post_transform"], _TRANSFORMS)
        binary = labels.size == 2 and forest.vote_target.size \
            and not forest.vote_target.any()
        base = _base_values(op, attrs, labels.size, allow_one=bool(binary))
        return labels, forest, transform, binary, base

    labels, forest, transform, binary, base = _compiled(attrs, build)
    x = inputs[0]
    scores = _aggregate(op, forest, _walk(op, forest, _features(op, x, forest)), x.shape[0], "SUM")
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


_CLASSIC_NODE_ATTRS = [
    ("nodes_treeids", "ints", None), ("nodes_nodeids", "ints", None),
    ("nodes_featureids", "ints", None), ("nodes_modes", "strings", None),
    ("nodes_values", "floats", None), ("nodes_values_as_tensor", "tensor", None),
    ("nodes_truenodeids", "ints", None), ("nodes_falsenodeids", "ints", None),
    ("nodes_missing_value_tracks_true", "ints", None), ("nodes_hitrates", "floats", None),
    ("nodes_hitrates_as_tensor", "tensor", None), ("base_values", "floats", None),
    ("base_values_as_tensor", "tensor", None), ("post_transform", "string", "NONE"),
]


OPS = (
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
)
