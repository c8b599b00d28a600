"""Operators: control_flow family — ONNX If, Loop, Scan and the sequence ops they use.

The subgraph ops run their bodies through `ctx.run_graph(body, inputs)`. In the
Session each call is a subgraph frame: the body's free names are looked up by name in
the enclosing frames (ONNX outer-scope semantics). These frames are our equivalent of
the paper's Switch/Merge (If), Enter/Exit/NextIteration (Loop, Scan) machinery: the
frame plays Enter/Exit, the kernel's Python loop plays NextIteration and the branch
choice plays Switch/Merge, without dead values.

Sequences are Python lists of numpy arrays (SequenceEmpty, SequenceConstruct,
SequenceInsert, SequenceAt, SequenceErase, SequenceLength, ConcatFromSequence,
SplitToSequence, SequenceMap), enough for loops that accumulate values.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError
from .elementwise import onnx_type_to_numpy
from .registry import NUM_OUTPUTS, TensorInfo, define

# No known failures: the node tests of If, Loop, Scan and the sequence ops pass, in the
# single-node kernel harness (subgraphs from the importer) and end to end.
KNOWN_FAILURES: dict[str, str] = {}


# --------------------------------------------------------------------------- helpers

def _body_info(graph, index: int) -> TensorInfo:
    """What the body graph declares about one of its tensors."""
    t = graph.tensors[index]
    if t.containers:  # a sequence/optional: its dtype and shape are the element's
        return TensorInfo(None, None)
    try:
        dtype = None if t.dtype.name == "UNDEFINED" else t.dtype.numpy
    except Exception:  # noqa: BLE001 - dtype without numpy equivalent
        dtype = None
    shape = None if t.shape is None else tuple(None if d < 0 else d for d in t.shape)
    return TensorInfo(dtype, shape)


def _element_type(value) -> np.dtype | None:
    """The element type of a tensor value; None for a sequence (a list), an empty
    optional (None) or anything else that has none."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    return None


def _same_type(a, b) -> bool:
    """Whether two numpy dtypes are one ONNX element type (object, str and bytes arrays
    all hold ONNX strings)."""
    a, b = np.dtype(a), np.dtype(b)
    return a == b or (a.kind in "OUS" and b.kind in "OUS")


def _check_kept_type(op: str, what: str, before, after) -> None:
    """A value a body carries from one iteration to the next (Loop's loop-carried
    values, Scan's state variables) keeps its element type, as onnxruntime requires.
    `before` and `after` are values or element types; unknown ones are not checked.

    Raises:
        ShapeError: the body gives `what` another element type than it came in with.
    """
    a = before if isinstance(before, np.dtype) else _element_type(before)
    b = after if isinstance(after, np.dtype) else _element_type(after)
    if a is not None and b is not None and not _same_type(a, b):
        raise ShapeError(f"{op}: the body turns {what} from {a.name} into {b.name}; it "
                         f"must keep its element type")


def _merge_info(a: TensorInfo, b: TensorInfo) -> TensorInfo:
    dtype = a.dtype if a.dtype is not None else b.dtype
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        shape = a.shape if b.shape is None else (b.shape if a.shape is None else None)
        if a.shape is not None and b.shape is not None:
            shape = None
    else:
        shape = tuple(x if x == y else None for x, y in zip(a.shape, b.shape))
    return TensorInfo(dtype, shape)


def _empty_like_output(graph, index: int, lead: int = 0) -> np.ndarray:
    """A zero-length stacked scan output, shaped from the body's declared output."""
    info = _body_info(graph, index)
    dtype = info.dtype if info.dtype is not None else np.float32
    rest = tuple(d if d is not None else 0 for d in (info.shape or ()))
    return np.zeros((lead,) + rest, dtype=dtype)


def _as_bool(value, what: str) -> bool:
    arr = np.asarray(value)
    if arr.size != 1:
        raise ExecutionError(f"{what} must hold one element, got shape {list(arr.shape)}")
    return bool(arr.reshape(-1)[0])


def _check_one_shape(op: str, k: int, values: list) -> None:
    """The values of scan output k, one per iteration in order, have one shape (ONNX
    stacks them; onnxruntime refuses another: "Inconsistent shape in loop output").
    Without this numpy's stack failed, reported as a shape mismatch of the node's
    inputs.

    Raises:
        ShapeError: naming the first iteration whose value has another shape.
    """
    first = np.shape(values[0])
    for j, value in enumerate(values[1:], 1):
        if np.shape(value) != first:
            raise ShapeError(f"{op}: scan output {k} has shape {list(np.shape(value))} in "
                             f"iteration {j} but {list(first)} in iteration 0; the body "
                             f"must give it one shape in every iteration")


def _passes_condition_through(body) -> bool:
    """Whether a Loop body's condition output is its condition input, directly or
    through Identity nodes: then a Loop without a trip count whose condition starts
    true never ends."""
    producers = {t: n for n in body.nodes for t in n.outputs}
    t = body.outputs[0]
    for _ in range(len(body.nodes) + 1):
        if t == body.inputs[1]:
            return True
        node = producers.get(t)
        if node is None or node.op_type != "Identity" or node.domain not in ("", "ai.onnx") \
                or len(node.inputs) != 1:
            return False
        t = node.inputs[0]
    return False


def _check_body_condition(dtype) -> None:
    """The Loop body's first output, the condition, is a bool tensor (ONNX types it B;
    onnxruntime refuses another). `dtype` None (unknown) is not checked.

    Raises:
        ShapeError: the condition has another element type.
    """
    if dtype is not None and np.dtype(dtype) != np.bool_:
        raise ShapeError(f"Loop: the body's condition output (output 0) must be bool, "
                         f"got {np.dtype(dtype).name}")


# --------------------------------------------------------------------------- If

def _check_branch_types(k: int, then_info: TensorInfo, else_info: TensorInfo) -> None:
    """If's output k has one element type in both branches (ONNX: "the same data
    type"); a branch that does not state it is not checked.

    Raises:
        ShapeError: the branches state different element types for output k.
    """
    a, b = then_info.dtype, else_info.dtype
    if a is not None and b is not None and not _same_type(a, b):
        raise ShapeError(f"If: output {k} is {np.dtype(a).name} in then_branch but "
                         f"{np.dtype(b).name} in else_branch; both branches must give "
                         f"one element type")


def _if(inputs, attrs, ctx):
    """Run then_branch or else_branch (no inputs) and return its outputs.

    Raises:
        ExecutionError: the branch has another number of outputs than the node.
        ShapeError: an output's element type is not the one both branches state (the
            other branch's would be what inference gave the node's output).
    """
    branch = attrs["then_branch"] if _as_bool(inputs[0], "If: cond") else attrs["else_branch"]
    which = "then_branch" if branch is attrs["then_branch"] else "else_branch"
    wanted = attrs.get(NUM_OUTPUTS)
    if wanted is not None and wanted != len(branch.outputs):
        # ONNX: the node has one output per branch output; extra ones would be dropped
        raise ExecutionError(f"If: {which} has {len(branch.outputs)} output(s), the node "
                             f"{wanted}")
    outs = tuple(ctx.run_graph(branch, []))
    for k, value in enumerate(outs):
        got = _element_type(value)
        if got is None:
            continue
        for key in ("then_branch", "else_branch"):
            g = attrs[key]
            if k >= len(g.outputs):
                continue
            stated = _body_info(g, g.outputs[k]).dtype
            if stated is not None and not _same_type(stated, got):
                raise ShapeError(f"If: output {k} from {which} is {got.name}, but {key} "
                                 f"states {np.dtype(stated).name}; both branches must give "
                                 f"one element type")
    return outs


def _infer_if(attrs, inputs):
    then_g, else_g = attrs["then_branch"], attrs["else_branch"]
    if len(then_g.outputs) != len(else_g.outputs):
        raise ShapeError(f"If: then_branch has {len(then_g.outputs)} outputs, else_branch "
                         f"{len(else_g.outputs)}")
    for k, (a, b) in enumerate(zip(then_g.outputs, else_g.outputs)):
        _check_branch_types(k, _body_info(then_g, a), _body_info(else_g, b))
    cond = inputs[0]
    if cond is not None and cond.value is not None:
        chosen = then_g if _as_bool(cond.value, "If: cond") else else_g
        return [_body_info(chosen, i) for i in chosen.outputs]
    return [_merge_info(_body_info(then_g, a), _body_info(else_g, b))
            for a, b in zip(then_g.outputs, else_g.outputs)]


# --------------------------------------------------------------------------- Loop

def _loop(inputs, attrs, ctx):
    """ONNX Loop: run body while (i < M) and cond; carry N values, stack scan outputs.

    Body inputs are (iteration_num, cond, v_1..v_N); body outputs are (cond, v_1..v_N,
    scan_1..scan_K). Omitted M means no trip limit, omitted cond means true.
    """
    body = attrs["body"]
    max_trips = inputs[0] if inputs else None
    cond_in = inputs[1] if len(inputs) > 1 else None
    carried = list(inputs[2:])
    n_carried = len(carried)
    n_scan = len(body.outputs) - 1 - n_carried
    if n_scan < 0 or len(body.inputs) != 2 + n_carried:
        raise ExecutionError(f"Loop: body takes {len(body.inputs)} inputs and returns "
                             f"{len(body.outputs)} outputs for {n_carried} loop-carried values")
    limit = None
    if max_trips is not None:
        m = np.asarray(max_trips)
        if m.size != 1:  # onnxruntime takes any one-element shape
            raise ShapeError(f"Loop: M must hold one element (the trip count), got shape "
                             f"{list(m.shape)}")
        limit = int(m.reshape(-1)[0])
    cond = True if cond_in is None else _as_bool(cond_in, "Loop: cond")
    # The spec makes the iteration number and condition scalars; onnxruntime feeds
    # them as one-element 1-D tensors to a body that declares them 1-D (tf2onnx's
    # CropAndResize Loop and older tf2onnx bodies do, and slice with them)
    as_1d = [(lambda s: s is not None and len(s) == 1)(_body_info(body, t).shape)
             for t in body.inputs[:2]]
    if limit is None and cond and _passes_condition_through(body):
        # onnxruntime runs such a loop until memory runs out (a scan output grows)
        raise ExecutionError("Loop: there is no trip count M and the body returns its "
                             "condition input unchanged, so with cond true the loop "
                             "would never end")
    scans: list[list] = [[] for _ in range(n_scan)]
    i = 0
    while cond and (limit is None or i < limit):
        iter_arg, cond_arg = np.array(i, dtype=np.int64), np.array(cond, dtype=bool)
        if as_1d[0]:
            iter_arg = iter_arg.reshape(1)
        if as_1d[1]:
            cond_arg = cond_arg.reshape(1)
        outs = ctx.run_graph(body, [iter_arg, cond_arg] + carried)
        _check_body_condition(_element_type(outs[0]))
        cond = _as_bool(outs[0], "Loop body: cond output")
        for k in range(n_carried):
            _check_kept_type("Loop", f"loop-carried value {k}", carried[k], outs[1 + k])
        carried = list(outs[1:1 + n_carried])
        for k in range(n_scan):
            scans[k].append(outs[1 + n_carried + k])
        i += 1
    stacked = []
    for k, values in enumerate(scans):
        index = body.outputs[1 + n_carried + k]
        if values:
            _check_one_shape("Loop", k, values)
            stacked.append(np.stack([np.asarray(v) for v in values]))
        elif _body_info(body, index).shape is None:
            shape = _first_trip_shape(body, index, carried, ctx)
            empty = _empty_like_output(body, index)
            stacked.append(empty if shape is None else np.zeros((0,) + shape, empty.dtype))
        else:
            stacked.append(_empty_like_output(body, index))
    return tuple(carried) + tuple(stacked)


def _first_trip_shape(body, index: int, carried: list, ctx) -> tuple | None:
    """The shape body output `index` would have on a first iteration, by onegraph's
    inference over the body given the loop's inputs and the enclosing values the body
    reads (`ctx.outer_value`), or None where its rank is unknown; dims that depend on
    values are 0, as onnxruntime gives them. A Loop run zero times stacks no values, yet
    its scan output has the body output's shape after the 0 (onnxruntime takes it from
    its shape inference); onnxscript leaves bodies untyped. Never raises."""
    from ..errors import OneGraphError
    from .inference import infer_graph

    known = {body.inputs[0]: TensorInfo(np.dtype(np.int64), ()),
             body.inputs[1]: TensorInfo(np.dtype(np.bool_), ())}
    for i, value in zip(body.inputs[2:], carried):
        if isinstance(value, np.ndarray):
            known[i] = TensorInfo(value.dtype, value.shape)
    produced = {o for node in body.nodes for o in node.outputs if o >= 0}
    for i, t in enumerate(body.tensors):
        if i in produced or i in known or t.data is not None or t.containers:
            continue
        value = ctx.outer_value(t.name) if ctx is not None else None
        if isinstance(value, np.ndarray):
            small = value if value.size <= 64 else None
            known[i] = TensorInfo(value.dtype, value.shape, small)
    try:
        info = infer_graph(body, known)[index]
    except (OneGraphError, ValueError, TypeError):
        return None
    if info is None or info.shape is None:
        return None
    return tuple(0 if d is None else int(d) for d in info.shape)


def _infer_loop(attrs, inputs):
    m = inputs[0] if inputs else None
    if m is not None and m.shape is not None and any(d not in (None, 1) for d in m.shape):
        raise ShapeError(f"Loop: M must hold one element (the trip count), got shape "
                         f"{list(m.shape)}")
    body = attrs["body"]
    carried = list(inputs[2:])
    n_carried = len(carried)
    if body.outputs:
        _check_body_condition(_body_info(body, body.outputs[0]).dtype)
    out = []
    for k in range(n_carried):
        declared = _body_info(body, body.outputs[1 + k])
        given = carried[k]
        if given is not None and given.dtype is not None and declared.dtype is not None:
            _check_kept_type("Loop", f"loop-carried value {k}", np.dtype(given.dtype),
                             np.dtype(declared.dtype))
        if given is None:
            out.append(declared)
            continue
        same = declared.shape is not None and given.shape is not None and \
            tuple(declared.shape) == tuple(given.shape)
        out.append(TensorInfo(given.dtype if given.dtype is not None else declared.dtype,
                              given.shape if same else None))
    for index in body.outputs[1 + n_carried:]:
        info = _body_info(body, index)
        out.append(TensorInfo(info.dtype,
                              None if info.shape is None else (None,) + tuple(info.shape)))
    return out


# --------------------------------------------------------------------------- Scan

def _check_directions(attrs, name):
    """Scan's scan_input_directions / scan_output_directions hold 0 (forward) or 1
    (reverse) only.

    Raises:
        OpAttributeError: another value (it would silently run forward).
    """
    values = attrs[name]
    if values is not None and any(int(d) not in (0, 1) for d in values):
        raise OpAttributeError(f"Scan: {name} {list(values)} may hold only 0 (forward) "
                               f"and 1 (reverse)")


def _check_scan_given(inputs, m: int) -> None:
    """Every input of Scan is given: its initial states and scan inputs are one
    variadic list with nothing optional in it, and an omitted one (an empty name in
    ONNX, -1 here) would reach the body as None (onnxruntime refuses the model at load:
    "Scan input 0 was not a tensor").

    Raises:
        ShapeError: naming the omitted input and what it stands for.
    """
    n_state = len(inputs) - m
    for k, value in enumerate(inputs):
        if value is None:
            what = f"initial state {k}" if k < n_state else f"scan input {k - n_state}"
            raise ShapeError(f"Scan: input {k} ({what}) is omitted (an empty name); every "
                             f"initial state and scan input must be given")


def _norm(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise ExecutionError(f"Scan: {what} axis {axis} out of range for rank {rank}")
    return axis % rank


def _scan(inputs, attrs, ctx):
    """ONNX Scan (opset 9+): iterate the body over slices of the scan inputs.

    The first N inputs are initial states, the last `num_scan_inputs` are scanned along
    `scan_input_axes` (reversed where `scan_input_directions` is 1). Body outputs are
    N new states then K per-iteration values, stacked along `scan_output_axes`
    (prepended where `scan_output_directions` is 1).
    """
    body = attrs["body"]
    m = attrs["num_scan_inputs"]
    n_state = len(inputs) - m
    if n_state < 0:
        raise ExecutionError(f"Scan: num_scan_inputs={m} but only {len(inputs)} inputs")
    _check_scan_given(inputs, m)
    states = list(inputs[:n_state])
    scan_in = [np.asarray(x) for x in inputs[n_state:]]
    in_axes = list(attrs["scan_input_axes"] or [0] * m)
    in_dirs = list(attrs["scan_input_directions"] or [0] * m)
    if len(in_axes) != m or len(in_dirs) != m:
        raise ExecutionError("Scan: scan_input_axes/directions need one entry per scan input")
    n_out = len(body.outputs) - n_state
    out_axes = list(attrs["scan_output_axes"] or [0] * n_out)
    out_dirs = list(attrs["scan_output_directions"] or [0] * n_out)
    if n_out < 0 or len(out_axes) != n_out or len(out_dirs) != n_out:
        raise ExecutionError("Scan: body outputs / scan_output_axes / directions disagree")
    _check_directions(attrs, "scan_input_directions")
    _check_directions(attrs, "scan_output_directions")
    axes = [_norm(a, x.ndim, "scan input") for a, x in zip(in_axes, scan_in)]
    lengths = {x.shape[a] for x, a in zip(scan_in, axes)}
    if len(lengths) > 1:
        raise ExecutionError(f"Scan: scan inputs have different lengths {sorted(lengths)}")
    length = lengths.pop() if lengths else 0
    collected: list[list] = [[] for _ in range(n_out)]
    for t in range(length):
        slices = [np.take(x, length - 1 - t if d == 1 else t, axis=a)
                  for x, a, d in zip(scan_in, axes, in_dirs)]
        outs = ctx.run_graph(body, states + slices)
        for k in range(n_state):
            _check_kept_type("Scan", f"state variable {k}", states[k], outs[k])
        states = list(outs[:n_state])
        for k in range(n_out):
            collected[k].append(np.asarray(outs[n_state + k]))
    results = []
    for k in range(n_out):
        values = collected[k]
        if values:
            _check_one_shape("Scan", k, values)
        if out_dirs[k] == 1:
            values = values[::-1]
        if values:
            stacked = np.stack(values)
        else:
            stacked = _empty_like_output(body, body.outputs[n_state + k])
        axis = out_axes[k]
        rank = stacked.ndim
        if not -rank <= axis < rank:
            raise ExecutionError(f"Scan: scan_output_axes entry {axis} out of range")
        results.append(np.moveaxis(stacked, 0, axis % rank))
    return tuple(states) + tuple(results)


def _infer_scan(attrs, inputs):
    _check_directions(attrs, "scan_input_directions")
    _check_directions(attrs, "scan_output_directions")
    body = attrs["body"]
    m = attrs["num_scan_inputs"]
    _check_scan_given(inputs, m)
    n_state = len(inputs) - m
    for k in range(min(n_state, len(body.outputs))):
        given, declared = inputs[k], _body_info(body, body.outputs[k])
        if given is not None and given.dtype is not None and declared.dtype is not None:
            _check_kept_type("Scan", f"state variable {k}", np.dtype(given.dtype),
                             np.dtype(declared.dtype))
    out = [inputs[k] if inputs[k] is not None else _body_info(body, body.outputs[k])
           for k in range(n_state)]
    length = None
    in_axes = list(attrs["scan_input_axes"] or [0] * m)
    if m and inputs[n_state] is not None and inputs[n_state].shape is not None:
        shape = inputs[n_state].shape
        if -len(shape) <= in_axes[0] < len(shape):
            length = shape[in_axes[0] % len(shape)]
    n_out = len(body.outputs) - n_state
    out_axes = list(attrs["scan_output_axes"] or [0] * n_out)
    for k in range(n_out):
        info = _body_info(body, body.outputs[n_state + k])
        if info.shape is None:
            out.append(TensorInfo(info.dtype, None))
            continue
        rank = len(info.shape) + 1
        axis = out_axes[k] % rank if -rank <= out_axes[k] < rank else 0
        shape = list(info.shape)
        shape.insert(axis, length)
        out.append(TensorInfo(info.dtype, tuple(shape)))
    return [TensorInfo(o.dtype, o.shape) for o in out]


# --------------------------------------------------------------------------- sequences

def _seq_empty(inputs, attrs, ctx):
    """An empty sequence (a Python list)."""
    return ([],)


def _seq_construct(inputs, attrs, ctx):
    """A sequence of the given tensors."""
    return (list(inputs),)


def _seq_position(seq, pos, what: str, insert: bool = False) -> int:
    """Sequence position `pos` (its first value, as onnxruntime reads it) in [0, n]
    (insert) or [0, n) for a sequence of n; negative positions count from the end.

    Raises:
        ShapeError: `pos` holds no value.
        ExecutionError: the position is out of range.
    """
    n = len(seq)
    if isinstance(pos, list):
        raise ShapeError(f"{what}: input 'position' must be a tensor, got a sequence")
    flat = np.asarray(pos).reshape(-1)
    if flat.size == 0:
        raise ShapeError(f"{what}: input 'position' is empty (shape "
                         f"{list(np.shape(pos))}); it must hold the index")
    p = int(flat[0])
    hi = n if insert else n - 1
    if not -n <= p <= hi:
        raise ExecutionError(f"{what}: position {p} out of range for a sequence of {n}")
    return p + n if p < 0 else p


def _check_insert_type(held, given) -> None:
    """SequenceInsert's tensor has the element type of the sequence (ONNX: "the same
    data type"); an unknown one (None) is not checked.

    Raises:
        ShapeError: the types differ.
    """
    if held is not None and given is not None and not _same_type(held, given):
        raise ShapeError(f"SequenceInsert: the sequence holds {np.dtype(held).name} "
                         f"tensors, the tensor to insert is {np.dtype(given).name}")


def _seq_insert(inputs, attrs, ctx):
    """Copy of the sequence with the tensor inserted at `position` (default: end).

    Raises:
        ShapeError: the tensor's element type is not that of the sequence's elements
            (an empty sequence holds none to compare with).
    """
    seq, value = list(inputs[0]), inputs[1]
    if seq:
        _check_insert_type(_element_type(seq[0]), _element_type(value))
    pos = inputs[2] if len(inputs) > 2 else None
    if pos is None:
        seq.append(value)
    else:
        seq.insert(_seq_position(seq, pos, "SequenceInsert", insert=True), value)
    return (seq,)


def _seq_at(inputs, attrs, ctx):
    """The tensor at `position` (negative counts from the end)."""
    seq = inputs[0]
    return (seq[_seq_position(seq, inputs[1], "SequenceAt")],)


def _seq_erase(inputs, attrs, ctx):
    """Copy of the sequence without the tensor at `position` (default: last)."""
    seq = list(inputs[0])
    pos = inputs[1] if len(inputs) > 1 else None
    if not seq:
        raise ExecutionError("SequenceErase: empty sequence")
    del seq[-1 if pos is None else _seq_position(seq, pos, "SequenceErase")]
    return (seq,)


def _seq_length(inputs, attrs, ctx):
    """Number of tensors in the sequence, as an int64 scalar."""
    return (np.array(len(inputs[0]), dtype=np.int64),)


def _check_concat_sequence(seq, axis: int, new_axis: bool) -> int:
    """ConcatFromSequence's axis in [0, r] (stacking, new_axis=1: ONNX accepts
    [-r-1, r]) or [0, r) (concatenating: [-r, r-1]) for tensors of rank r, after
    checking the tensors fit: one rank, equal dims but along the axis (all equal when
    stacking), and a concatenation of at least rank 1 (onnxruntime: "Cannot
    concatenate scalars").

    Raises:
        ExecutionError: the sequence is empty (as onnxruntime refuses it).
        OpAttributeError: axis is outside the valid range.
        ShapeError: the tensors do not fit together.
    """
    op = "ConcatFromSequence"
    if not seq:
        raise ExecutionError(f"{op}: empty sequence")
    rank = seq[0].ndim
    for k, x in enumerate(seq[1:], 1):
        if x.ndim != rank:
            raise ShapeError(f"{op}: tensor {k} of the sequence has rank {x.ndim} (shape "
                             f"{list(x.shape)}), tensor 0 rank {rank} (shape "
                             f"{list(seq[0].shape)}); all need one rank")
    if not new_axis and rank == 0:
        raise ShapeError(f"{op}: the sequence holds scalars, which cannot be concatenated "
                         f"(new_axis=1 stacks them)")
    top = rank + 1 if new_axis else rank
    if not -top <= axis < top:
        raise OpAttributeError(f"{op}: axis {axis} is out of range for "
                               f"{'stacking' if new_axis else 'concatenating'} tensors of "
                               f"rank {rank}: it must be in [{-top}, {top - 1}]")
    axis %= top
    for k, x in enumerate(seq[1:], 1):
        differ = [d for d in range(rank) if x.shape[d] != seq[0].shape[d]
                  and (new_axis or d != axis)]
        if differ:
            raise ShapeError(f"{op}: tensor {k} of the sequence has shape {list(x.shape)}, "
                             f"tensor 0 {list(seq[0].shape)}: dim {differ[0]} differs"
                             + ("" if new_axis else f" (only axis {axis} may)"))
    return axis


def _concat_from_sequence(inputs, attrs, ctx):
    """Concatenate (new_axis=0) or stack (new_axis=1) the sequence along `axis`.

    Raises:
        ExecutionError: the sequence is empty.
        OpAttributeError: axis out of range (see `_check_concat_sequence`).
        ShapeError: the tensors' ranks or dims do not fit together.
    """
    seq = [np.asarray(x) for x in inputs[0]]
    axis = _check_concat_sequence(seq, int(attrs["axis"]), bool(attrs["new_axis"]))
    if attrs["new_axis"]:
        return (np.stack(seq, axis=axis),)
    return (np.concatenate(seq, axis=axis),)


def _split_axis(axis: int, rank: int) -> int:
    """SplitToSequence's axis in [0, rank) (ONNX accepts [-rank, rank-1]).

    Raises:
        OpAttributeError: axis out of that range.
    """
    if not -rank <= axis < rank:
        raise OpAttributeError(f"SplitToSequence: axis {axis} out of range for rank {rank}")
    return axis % rank


def _split_to_sequence(inputs, attrs, ctx):
    """Split a tensor into a sequence: by `split` sizes, a scalar chunk size, or 1s.

    Raises:
        OpAttributeError: axis out of range.
        ShapeError: a scalar split that is not positive, a split size below 0.
        ExecutionError: split sizes that do not sum to the axis' length.
    """
    x = np.asarray(inputs[0])
    split = inputs[1] if len(inputs) > 1 else None
    axis = _split_axis(attrs["axis"], x.ndim)
    n = x.shape[axis]
    if split is None:
        # a zero-length axis has no chunk of 1 (np.split would divide by zero)
        parts = np.split(x, n, axis=axis) if n else []
        if not attrs["keepdims"]:
            parts = [np.squeeze(p, axis=axis) for p in parts]
        return (parts,)
    split = np.asarray(split)
    if split.ndim == 0:
        size = int(split)
        if size <= 0:  # range() below would refuse 0 and yield nothing for below 0
            raise ShapeError(f"SplitToSequence: a scalar split is the size of every chunk "
                             f"and must be positive, got {size}")
        if n == 0:  # chunks "all of size split": none (np.split gives one empty chunk)
            return ([],)
        bounds = list(range(size, n, size))
    else:
        if (split < 0).any():
            raise ShapeError(f"SplitToSequence: split sizes must be >= 0, got "
                             f"{split.tolist()}")
        bounds = list(np.cumsum(split)[:-1])
        if int(np.sum(split)) != n:
            raise ExecutionError(f"SplitToSequence: sizes {split.tolist()} do not sum to {n}")
    return (np.split(x, bounds, axis=axis),)


# --------------------------------------------------------------------------- SequenceMap

def _sequence_map(inputs, attrs, ctx):
    """ONNX SequenceMap: run `body` once per element of the input sequence.

    Call i passes element i of `input_sequence` and, for each additional input,
    element i when it is a sequence (same length required) or the tensor itself; body
    output k of every call becomes element i of output sequence k.

    Raises:
        ExecutionError: the body's input/output counts do not match the node, or an
            additional sequence has another length than the input sequence.
    """
    body = attrs["body"]
    first, extra = inputs[0], list(inputs[1:])
    if not isinstance(first, list):
        raise ExecutionError("SequenceMap: input_sequence must be a sequence, got a tensor")
    if len(body.inputs) != 1 + len(extra):
        raise ExecutionError(f"SequenceMap: body takes {len(body.inputs)} inputs for "
                             f"{1 + len(extra)} node inputs")
    for k, value in enumerate(extra):
        if isinstance(value, list) and len(value) != len(first):
            raise ExecutionError(f"SequenceMap: additional input {k + 1} is a sequence of "
                                 f"{len(value)} for an input sequence of {len(first)}")
    results: list[list] = [[] for _ in body.outputs]
    for i, item in enumerate(first):
        args = [item] + [v[i] if isinstance(v, list) else v for v in extra]
        outs = ctx.run_graph(body, args)
        for k, value in enumerate(outs):
            results[k].append(value)
    return tuple(results)


def _infer_sequence_map(attrs, inputs):
    return [TensorInfo(None, None) for _ in attrs["body"].outputs]


# A sequence's TensorInfo describes its elements, as a sequence tensor's declared dtype
# and shape do (inference.py); these rules carry the element type, shapes may differ.

def _infer_seq_empty(attrs, inputs):
    try:
        dtype = onnx_type_to_numpy(attrs["dtype"])
    except OpAttributeError:  # not a type: the kernel, which does not need it, runs
        dtype = None
    return [TensorInfo(dtype, None)]


def _infer_seq_construct(attrs, inputs):
    known = [i.dtype for i in inputs if i is not None and i.dtype is not None]
    return [TensorInfo(known[0] if known else None, None)]


def _infer_seq_insert(attrs, inputs):
    seq, tensor = inputs[0], inputs[1]
    held = None if seq is None else seq.dtype
    given = None if tensor is None else tensor.dtype
    _check_insert_type(held, given)
    return [TensorInfo(held if held is not None else given, None)]


def _infer_seq_element(attrs, inputs):
    """Same element type as the input sequence (SequenceErase, SequenceAt,
    ConcatFromSequence)."""
    seq = inputs[0]
    return [TensorInfo(None if seq is None else seq.dtype, None)]


def _infer_split_to_sequence(attrs, inputs):
    x = inputs[0]
    if x is not None and x.shape is not None:
        _split_axis(attrs["axis"], len(x.shape))
    return [TensorInfo(None if x is None else x.dtype, None)]


def _infer_seq_length(attrs, inputs):
    return [TensorInfo(np.dtype(np.int64), ())]


OPS = (
    define("If", ["cond"], ["outputs*"], _if,
           [("then_branch", "graph"), ("else_branch", "graph")], infer=_infer_if,
           since_version=13, doc="Run one of two subgraphs; our Switch/Merge."),
    define("Loop", ["M?", "cond?", "v_initial*"], ["v_final_and_scan_outputs*"], _loop,
           [("body", "graph")], infer=_infer_loop, since_version=13,
           doc="Iterate a subgraph; our Enter/NextIteration/Exit frame."),
    define("Scan", ["initial_state_and_scan_inputs*"], ["final_state_and_scan_outputs*"],
           _scan, [("body", "graph"), ("num_scan_inputs", "int"),
                   ("scan_input_axes", "ints", None), ("scan_input_directions", "ints", None),
                   ("scan_output_axes", "ints", None),
                   ("scan_output_directions", "ints", None)],
           infer=_infer_scan, since_version=11),
    define("SequenceEmpty", [], ["output"], _seq_empty, [("dtype", "int", 1)],
           infer=_infer_seq_empty, since_version=11),
    define("SequenceConstruct", ["inputs*"], ["output_sequence"], _seq_construct,
           infer=_infer_seq_construct, since_version=11),
    define("SequenceInsert", ["input_sequence", "tensor", "position?"], ["output_sequence"],
           _seq_insert, infer=_infer_seq_insert, since_version=11),
    define("SequenceAt", ["input_sequence", "position"], ["tensor"], _seq_at,
           infer=_infer_seq_element, since_version=11),
    define("SequenceErase", ["input_sequence", "position?"], ["output_sequence"],
           _seq_erase, infer=_infer_seq_element, since_version=11),
    define("SequenceLength", ["input_sequence"], ["length"], _seq_length,
           infer=_infer_seq_length, since_version=11),
    define("ConcatFromSequence", ["input_sequence"], ["concat_result"],
           _concat_from_sequence, [("axis", "int"), ("new_axis", "int", 0)],
           infer=_infer_seq_element, since_version=11),
    define("SplitToSequence", ["input", "split?"], ["output_sequence"], _split_to_sequence,
           [("axis", "int", 0), ("keepdims", "int", 1)], infer=_infer_split_to_sequence,
           since_version=11),
    define("SequenceMap", ["input_sequence", "additional_inputs*"], ["out_sequence*"],
           _sequence_map, [("body", "graph")], infer=_infer_sequence_map, since_version=17,
           doc="Apply a subgraph to every element of a sequence."),
)
