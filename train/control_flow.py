"""Dataflow control flow: `og.cond`, `og.while_loop`, `og.foldl`, `og.map_fn`, `og.scan`.

Built from the paper's primitives (Switch, Merge, Enter, Exit, NextIteration,
LoopCond) and run by the Session with dead-value propagation (`train/frames.py`).

* `cond(pred, true_fn, false_fn)`: each branch is built in a context that routes every
  outside tensor it uses through a Switch on `pred` (one per tensor and branch); ops
  of a branch with only constant inputs get a control edge from the branch's pivot.
  The untaken branch is dead, so only the taken one runs; Merges join the results.
  Gradients: Merge's gradient is a Switch on the same predicate, Switch's a Merge
  (recorded with its predicate, so second order works), so gradients flow only
  through the taken branch.
* `while_loop(cond, body, loop_vars)`: a frame whose outside tensors enter through
  constant Enters. `cond` and `body` are called once, while the graph is built. Loop
  variables keep their dtype and their shape (or the `shape_invariants` entry):
  both are checked when the body is built, as TF1 does.
* Its gradient (backpropagation through time, as in TF1) is a second loop that runs
  as many iterations backwards and applies the gradient rules of the forward body's
  ops, which are not built again nor run again. Every forward value a rule reads is
  saved on a per-run stack while the forward loop runs (a StackPush in the forward
  body) and popped in the backward body (a StackPop): the backward loop's context
  captures such values (`WhileContext.capture` with `grad_of`). Each gradient call
  gets its own stacks. A value that is dead in a forward iteration (an untaken cond
  branch) is pushed as dead, so its pop is dead in the matching backward iteration.
  Stack pushes run only in steps that also run the matching pops (`frames.py`).
* `map_fn` / `scan` collect their per-element results with AccumulatorWrite (one row
  written per iteration into an array allocated once), so time and memory are O(n).
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from ..errors import GradientNotDefinedError, OneGraphError, ShapeError
from ..format import DType, TensorKind
from . import api
from . import graph as _g
from .gradients import RegisterGradient, dense
from .graph import Graph, Tensor, _ir_shape, _shape_tuple


# --------------------------------------------------------------------------- contexts

class _Context:
    """Base of cond/while build contexts (what `Graph.op` consults)."""

    def __init__(self, g: Graph):
        self.g = g
        self.outer = g._cf_stack[-1] if g._cf_stack else None
        self.inside: set[int] = set()
        self.captures: dict[int, Tensor] = {}
        self.nodes: set[int] = set()
        self.pivot: int | None = None
        # loop-invariant values (constant Enters): live on every iteration, so they do
        # not make an op follow the iteration's liveness; such ops get the pivot
        self.invariant: set[int] = set()

    def __enter__(self):
        self.g._cf_stack.append(self)
        return self

    def __exit__(self, *exc):
        self.g._cf_stack.pop()

    def outer_op(self, *args, **kwargs):
        """Build an op in the enclosing context (captures go through the outer ones)."""
        g = self.g
        saved = g._cf_stack
        g._cf_stack = saved[:saved.index(self)] if self in saved else list(saved)
        try:
            return g.op(*args, **kwargs)
        finally:
            g._cf_stack = saved

    def mark(self, indices) -> None:
        c = self
        while c is not None:
            c.inside.update(indices)
            c = c.outer

    def add_op(self, n: int, in_tensors) -> None:
        c = self
        while c is not None:
            c.nodes.add(n)
            c = c.outer
        node = self.g._ir.nodes[n]
        self.mark(node.outputs)
        if self.pivot is not None and not any(
                t is not None and t.tensor_index in self.inside
                and t.tensor_index not in self.invariant for t in in_tensors):
            if self.pivot not in node.control_inputs:
                node.control_inputs.append(self.pivot)

    def _external(self, t: Tensor) -> bool:
        if t.tensor_index in self.inside:
            return False
        return self.g._ir.tensors[t.tensor_index].kind is not TensorKind.CONSTANT

    def capture(self, t: Tensor) -> Tensor:
        if not self._external(t):
            return t
        got = self.captures.get(t.tensor_index)
        if got is None:
            got = self._capture(t)
            self.captures[t.tensor_index] = got
            self.mark([got.tensor_index])
        return got


class CondContext(_Context):
    """One branch of a cond: outside tensors come in through Switch(t, pred)[branch]."""

    def __init__(self, g: Graph, pred: Tensor, branch: int):
        super().__init__(g)
        self.pred, self.branch = pred, branch
        sw = self.outer_op("Switch", [pred, pred], name="cond/pivot_switch")
        self.pivot_tensor = self.outer_op("Identity", [sw[branch]],
                                          name=f"cond/pivot_{'tf'[branch]}")
        self.pivot = g._producer[self.pivot_tensor.tensor_index]
        self.mark([sw[branch].tensor_index, self.pivot_tensor.tensor_index])

    def _capture(self, t: Tensor) -> Tensor:
        return self.outer_op("Switch", [t, self.pred], name="cond/switch")[self.branch]


class WhileContext(_Context):
    """A loop body/condition: outside tensors come in through constant Enters.

    A backward loop (`grad_of` = the forward loop's WhileInfo) also captures the
    forward body's values: a forward constant Enter stands for the tensor it enters,
    any other forward value is saved on a stack in the forward loop and popped here.
    """

    def __init__(self, g: Graph, frame: str, grad_of: "WhileInfo | None" = None):
        super().__init__(g)
        self.frame = frame
        self.grad_of = grad_of
        self.info: WhileInfo | None = None  # set once the loop is built
        self.entered: dict[int, Tensor] = {}  # constant Enter output -> entered tensor
        self.popped: dict[int, Tensor] = {}   # forward tensor -> its StackPop here

    def capture(self, t: Tensor) -> Tensor:
        f = self.grad_of
        if f is None or t.tensor_index in self.inside \
                or t.tensor_index not in f.ctx.inside:
            return super().capture(t)
        got = self.popped.get(t.tensor_index)
        if got is None:
            src = f.ctx.entered.get(t.tensor_index)
            got = self.capture(src) if src is not None else _saved_value(self, f, t)
            self.popped[t.tensor_index] = got
        return got

    def _capture(self, t: Tensor) -> Tensor:
        e = self.outer_op("Enter", [t], {"frame_name": self.frame, "is_constant": 1},
                          name=f"{self.frame}/enter_const")
        self.invariant.add(e.tensor_index)
        self.entered[e.tensor_index] = t
        return e


def _saved_value(bctx: WhileContext, f: "WhileInfo", t: Tensor) -> Tensor:
    """Forward loop value `t`, one per iteration, in reverse order inside `bctx`.

    Builds a Stack where the forward loop itself is built (a fresh stack per run of
    the loop), a StackPush in the forward body (run with the body's pivot, pushing a
    dead value as dead) and returns a StackPop built in the backward body.
    """
    g = bctx.g
    attrs = {"stack_name": g.unique_name(f"{f.frame}/saved")}  # unique: frames.py pairs
    saved = g._cf_stack                                         # pushes with pops by it
    try:
        g._cf_stack = list(f.outer_stack)
        stack = g.op("Stack", [], attrs, name="saved_stack")
        g._cf_stack = list(f.outer_stack) + [f.ctx]
        g.op("StackPush", [stack, t], attrs, name="saved_push",
             control_inputs=[f.body_in[0]])
    finally:
        g._cf_stack = saved
    return g.op("StackPop", [stack], attrs, dtypes=[t.dtype], shapes=[t.shape],
                name="saved_pop")


def _refuse_second_order(g: Graph, info: "WhileInfo") -> None:
    """A gradient loop reading saved float values cannot be differentiated: the
    gradient would have to flow back through its stacks into the forward loop."""
    f = info.ctx.grad_of
    if f is None:
        return
    for t in info.ctx.popped.values():
        node = g._ir.nodes[g._producer[t.tensor_index]]
        if node.op_type == "StackPop" and t.dtype is not DType.UNDEFINED \
                and t.dtype.numpy.kind == "f":  # not a stack handle (nested loops)
            raise GradientNotDefinedError(
                f"second-order gradients through og.while_loop are not supported: loop "
                f"{info.frame!r} is the gradient of loop {f.frame!r} and reads its saved "
                f"value {node.name!r}; differentiate the loop once, or unroll it")


@RegisterGradient("StackPop")
def _stack_pop_grad(b, op, grads):
    raise GradientNotDefinedError(
        f"second-order gradients through og.while_loop are not supported: a gradient "
        f"reaches {op.name!r}, a forward loop value saved for backpropagation; "
        "differentiate the loop once, or unroll it")


# --------------------------------------------------------------------------- nesting

# composite values (og.TensorArray) that loops and conds carry as their tensors:
# type -> (to_tensors(value) -> list of tensors, from_tensors(value, tensors) -> value)
_COMPOSITES: dict = {}


def register_composite(cls: type, to_tensors: Callable, from_tensors: Callable) -> None:
    """Let while_loop / cond carry values of cls: flattened to `to_tensors(value)`,
    rebuilt as `from_tensors(value, tensors)` (value gives the static metadata)."""
    _COMPOSITES[cls] = (to_tensors, from_tensors)


def _flatten(structure) -> list:
    """Leaves of a nest of lists, tuples (named too) and dicts (keys in sorted order);
    a registered composite gives its tensors."""
    if type(structure) in _COMPOSITES:
        return list(_COMPOSITES[type(structure)][0](structure))
    if isinstance(structure, dict):
        return [x for k in sorted(structure) for x in _flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [x for s in structure for x in _flatten(s)]
    return [structure]


def _pack(structure, flat: list):
    """`flat` (as `_flatten` orders it) packed into the nest `structure`."""
    it = iter(flat)

    def pack(s):
        if type(s) in _COMPOSITES:
            to_tensors, from_tensors = _COMPOSITES[type(s)]
            return from_tensors(s, [next(it) for _ in to_tensors(s)])
        if isinstance(s, dict):
            vals = {k: pack(s[k]) for k in sorted(s)}
            return type(s)((k, vals[k]) for k in s)
        if isinstance(s, tuple) and hasattr(s, "_fields"):  # namedtuple
            return type(s)(*[pack(x) for x in s])
        if isinstance(s, (list, tuple)):
            return type(s)(pack(x) for x in s)
        return next(it)
    return pack(structure)


def _skeleton(structure):
    """The nest without its leaves, to compare structures."""
    if type(structure) in _COMPOSITES:
        return (type(structure).__name__, len(_flatten(structure)))
    if isinstance(structure, dict):
        return ("dict", tuple((k, _skeleton(structure[k])) for k in sorted(structure)))
    if isinstance(structure, (list, tuple)):
        kind = type(structure).__name__ if hasattr(structure, "_fields") else "seq"
        return (kind, tuple(_skeleton(x) for x in structure))
    return None


def _flatten_up_to(structure, values) -> list:
    """`values` flattened as deep as `structure` goes (its leaves may be lists); a
    composite's entry is ignored: its tensors keep their own static shapes."""
    if type(structure) in _COMPOSITES:
        return [t.shape for t in _flatten(structure)]
    if isinstance(structure, dict):
        return [x for k in sorted(structure) for x in _flatten_up_to(structure[k], values[k])]
    if isinstance(structure, (list, tuple)):
        if not isinstance(values, (list, tuple)) or len(values) != len(structure):
            raise OneGraphError(f"shape_invariants {values!r} does not match the structure "
                                "of loop_vars")
        return [x for s, v in zip(structure, values) for x in _flatten_up_to(s, v)]
    return [values]


def _graph_of(values) -> Graph:
    for v in values:
        if isinstance(v, Tensor) or hasattr(v, "_as_graph_tensor"):
            return _g.convert_to_tensor(v).graph
    return _g.get_default_graph()


# --------------------------------------------------------------------------- cond

def cond(pred, true_fn: Callable, false_fn: Callable, name: str = "cond"):
    """Run `true_fn()` if pred else `false_fn()`: only the taken branch executes.

    Args:
        pred: boolean scalar tensor.
        true_fn, false_fn: functions building each branch; they return a tensor, an
            Operation (e.g. `lambda: train_op`, `og.no_op`) or a (possibly nested)
            list/tuple/namedtuple/dict of them, the same structure and dtypes in both
            branches (as TF1, x and [x] match; the result is then x's).
        name: name scope of the cond's nodes.

    Returns:
        The taken branch's result, in the same structure; an Operation where the
        branches returned Operations (running it runs the taken branch's op).

    Raises:
        OneGraphError: the branches return different structures, or pred is a plain
            value that is not a bool (a str, None, ...).
        ShapeError: an output has different dtypes in the two branches, or pred is
            not a bool tensor, or is of a known rank other than 0 (TF1 refuses both).
        TypeError: true_fn or false_fn is not callable (pass `lambda: x`, not x), or
            name is not a str.
    """
    for what, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if not callable(fn):
            raise TypeError(f"cond {name!r}: {what} must be a callable that builds the "
                            f"branch (e.g. lambda: x), got {type(fn).__name__}")
    _g.check_name(name, "cond")
    g = _graph_of([pred])
    p = _g.bool_tensor(pred, f"cond {name!r}: pred", g)
    if p.shape is not None and len(p.shape) != 0:
        raise ShapeError(f"cond {name!r}: pred must be a scalar, got shape "
                         f"{list(p.shape)}")
    with g.name_scope(name or "cond"):  # (None would open the root scope)
        with CondContext(g, p, 1) as ct:
            true_out = true_fn()
            rt = [_branch_result(g, ct, r) for r in _flatten(true_out)]
        with CondContext(g, p, 0) as cf:
            false_out = false_fn()
            rf = [_branch_result(g, cf, r) for r in _flatten(false_out)]
        if _skeleton(true_out) != _skeleton(false_out):
            # TF1 (strict=False) unpacks a one-element list or tuple: x matches [x]
            true_out, false_out = _unpack_single(true_out), _unpack_single(false_out)
        ops_t = [isinstance(r, _g.Operation) for r in _flatten(true_out)]
        ops_f = [isinstance(r, _g.Operation) for r in _flatten(false_out)]
        if len(rt) != len(rf) or _skeleton(true_out) != _skeleton(false_out) \
                or ops_t != ops_f:
            raise OneGraphError(f"cond {name!r}: true_fn and false_fn return different "
                                f"structures ({len(rt)} and {len(rf)} values; an "
                                "Operation matches only an Operation)")
        for k, (a, b) in enumerate(zip(rf, rt)):
            if a.dtype != b.dtype:
                raise ShapeError(f"cond {name!r}: output {k} has dtype "
                                 f"{b.dtype.short_name} in true_fn but "
                                 f"{a.dtype.short_name} in false_fn; both branches must "
                                 "return the same dtypes")
        outs = []
        for a, b, is_op in zip(rf, rt, ops_t):
            m = g.op("Merge", [a, b], name="merge")[0]
            g._merge_pred[g._producer[m.tensor_index]] = p
            outs.append(m.op if is_op else m)
    return _pack(true_out, outs)


def case(pred_fn_pairs, default: Callable | None = None, exclusive: bool = False,
         strict: bool = False, name: str = "case"):
    """The result of the fn of the first true predicate, else of `default` (TF1's
    `tf.case`): nested conds, so only the chosen fn's ops run.

    Args:
        pred_fn_pairs: a list of (boolean scalar tensor, callable) pairs, or a dict
            of them (tested in its order).
        default: callable for when no predicate is true. None: the last pair's fn,
            with an assertion that its predicate is true (a run where none is raises
            ExecutionError, as TF1's).
        exclusive: also assert that at most one predicate is true (every predicate
            is then evaluated).
        strict: accepted for TF1 compatibility: results keep the structure the fns
            return, a one-element list staying a list when every fn returns one.
        name: name scope of the case's nodes.

    Returns:
        The chosen fn's result, in its structure.

    Raises:
        TypeError: pred_fn_pairs is not a list or dict of (predicate, callable)
            pairs, it is empty, default is not callable, or name is not a str.
        OneGraphError, ShapeError: as `cond` (fns of different structures or dtypes,
            a predicate that is not a bool scalar).
    """
    del strict
    from .debugging import Assert

    _g.check_name(name, "case")
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else pred_fn_pairs
    if not isinstance(pairs, (list, tuple)) or not pairs or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and callable(p[1]) for p in pairs):
        raise TypeError(f"case {name!r}: pred_fn_pairs must be a non-empty list of "
                        "(predicate, callable) pairs")
    if default is not None and not callable(default):
        raise TypeError(f"case {name!r}: default must be a callable, got "
                        f"{type(default).__name__}")
    g = _graph_of([p for p, _ in pairs])
    preds = [_g.bool_tensor(p, f"case {name!r}: predicate {k}", g)
             for k, (p, _) in enumerate(pairs)]
    fns = [fn for _, fn in pairs]
    every = list(preds)
    with g.name_scope(name or "case"):
        if default is None:
            last, last_fn = preds.pop(), fns.pop()

            def default():
                check = Assert(last, [f"case {name!r}: none of the conditions evaluated "
                                      "as True"], name="none_true")
                return _after([check], last_fn())

        def chain(k: int):
            if k == len(preds):
                return default()
            return cond(preds[k], fns[k], lambda: chain(k + 1), name="cond")

        if exclusive and len(every) > 1:
            count = api.reduce_sum(api.cast(api.stack(every), DType.INT32))
            check = Assert(api.less_equal(count, 1),
                           [f"case {name!r}: more than one condition evaluated as True; "
                            "conditions:"] + every, summarize=len(every), name="exclusive")
            return _after([check], chain(0))
        return chain(0)


def _after(ops: list, result):
    """`result` (a structure of tensors and ops), each element passed through an
    Identity (or a NoOp) that runs after `ops`."""
    g = _graph_of(list(ops))
    with g.control_dependencies(ops):
        flat = [api.group(r) if isinstance(r, _g.Operation) else api.identity(g.convert(r))
                for r in _flatten(result)]
    return _pack(result, flat)


def _branch_result(g, ctx, r) -> Tensor:
    """A branch's result as a tensor of that branch. An Operation (`lambda: train_op`)
    becomes the branch's pivot with a control edge from it, so running the cond's
    result runs the op of the taken branch only (as TF1's cond)."""
    if isinstance(r, _g.Operation):
        return g.op("Identity", [ctx.pivot_tensor], control_inputs=[r], name="branch_op")
    r = g.convert(r)
    return _in_branch(g, ctx, r if _is_inside(ctx, r) else ctx.capture(r))


def _unpack_single(out):
    if isinstance(out, (list, tuple)) and not hasattr(out, "_fields") and len(out) == 1:
        return out[0]
    return out


def _is_inside(ctx, t: Tensor) -> bool:
    return t.tensor_index in ctx.inside


def _in_branch(g, ctx, t: Tensor) -> Tensor:
    """A tensor that is dead when the branch is not taken (constants get the pivot)."""
    if t.tensor_index in ctx.inside:
        return t
    # a constant returned directly: make it flow through the branch
    return g.op("Identity", [t], control_inputs=[], name="branch_const")


# --------------------------------------------------------------------------- while

class WhileInfo:
    """What the gradient of a while loop needs to know about the forward loop."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _differentiable(dtype: DType) -> bool:
    """Float loop values, and accumulators (whose static dtype is UNDEFINED)."""
    return dtype is DType.UNDEFINED or dtype.numpy.kind == "f"


def _fits(shape, invariant) -> bool:
    """TF1's rule: `shape` is at least as specific as the invariant (None = any)."""
    if invariant is None:
        return True
    if shape is None or len(shape) != len(invariant):
        return False
    return all(i is None or s == i for s, i in zip(shape, invariant))


def _show(shape) -> str:
    return "unknown" if shape is None else str(list(shape)).replace("None", "?")


def while_loop(cond_fn: Callable, body: Callable, loop_vars, maximum_iterations=None,
               shape_invariants=None, name: str = "while", back_prop: bool = True,
               parallel_iterations: int = 10, swap_memory: bool = False,
               _grad_of: "WhileInfo | None" = None):
    """Repeat `loop_vars = body(*loop_vars)` while `cond_fn(*loop_vars)` is true.

    `cond_fn` and `body` are called once, while the graph is built (never by
    `Session.run` nor by gradients). Each loop variable keeps its dtype, and its
    shape unless `shape_invariants` allows it to change (TF1's rule).

    Args:
        cond_fn: function of the loop variables returning a boolean scalar tensor.
        body: function of the loop variables returning new values in the same
            structure.
        loop_vars: a tensor, or a (possibly nested) list/tuple/namedtuple/dict of
            tensors or values. A list/tuple is passed to cond_fn and body as
            separate arguments.
        maximum_iterations: optional bound on the number of iterations: an int or a
            scalar integer tensor.
        shape_invariants: optional, in the structure of loop_vars: per variable the
            shape it keeps across iterations (a list with None for dimensions that
            may change), or None for any shape. Default: each initial shape.
        name: name of the frame.
        back_prop: False makes the results constants for gradients (stop_gradient).
        parallel_iterations, swap_memory: accepted for TF1 compatibility; iterations
            always run one after another, in memory.

    Returns:
        The loop variables' final values, in the structure of loop_vars.

    Raises:
        TypeError: cond_fn or body is not callable, or name is not a str.
        OneGraphError: body returns another number of values than loop_vars, or
            shape_invariants does not match loop_vars.
        ShapeError: body changes a variable's dtype, or returns a shape its invariant
            does not allow (pass shape_invariants), or maximum_iterations is not an
            integer scalar.

    Example::

        i, s = og.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i),
                             [og.constant(0), og.constant(0)])
    """
    del parallel_iterations, swap_memory  # iterations run one after another
    for what, fn in (("cond", cond_fn), ("body", body)):
        if not callable(fn):
            raise TypeError(f"while_loop {name!r}: {what} must be a callable of the loop "
                            f"variables, got {type(fn).__name__}")
    _g.check_name(name, "while_loop")
    strict = _grad_of is None  # a gradient loop's carries may have vaguer static shapes
    items = _flatten(loop_vars)
    g = _graph_of(items)
    items = [g.convert(v) for v in items]
    spread = isinstance(loop_vars, (list, tuple)) and not hasattr(loop_vars, "_fields")

    def call(fn, flat):
        packed = _pack(loop_vars, flat)
        return fn(*packed) if spread else fn(packed)

    if shape_invariants is None:
        inv = [x.shape for x in items]
    else:
        inv = [None if s is None else _shape_tuple(s, f"while_loop {name!r}: "
                                                      "shape_invariants")
               for s in _flatten_up_to(loop_vars, shape_invariants)]
    frame = g.unique_name(name)
    for k, (v, s) in enumerate(zip(items, inv)):
        if strict and not _fits(v.shape, s):
            raise ShapeError(f"while_loop {frame!r}: loop variable {k} ({v.name!r}) has "
                             f"shape {_show(v.shape)}, which its shape invariant "
                             f"{_show(s)} does not allow")
    limit = None
    if maximum_iterations is not None:
        if isinstance(maximum_iterations, Tensor) or hasattr(maximum_iterations,
                                                             "_as_graph_tensor"):
            limit = g.convert(maximum_iterations)
            if limit.dtype.numpy.kind not in "iu" or limit.shape not in (None, ()):
                raise ShapeError(f"while_loop {frame!r}: maximum_iterations must be an "
                                 f"integer scalar, got {limit.dtype.short_name} of shape "
                                 f"{_show(limit.shape)}")
            if limit.dtype is not DType.INT64:
                limit = api.cast(limit, DType.INT64)
        else:
            limit = np.int64(maximum_iterations)
    start = len(g._ir.nodes)
    counter0 = g.constant(np.array(0, np.int64))
    all_vars = [counter0] + items
    inv = [()] + inv
    enters = [g.op("Enter", [v], {"frame_name": frame}, name=f"{frame}/enter") for v in all_vars]
    with WhileContext(g, frame, _grad_of) as ctx:
        ctx.mark([e.tensor_index for e in enters])
        merges = []
        for e, shape in zip(enters, inv):
            m = g.op("Merge", [e, e], name=f"{frame}/merge")[0]
            g._ir.tensors[m.tensor_index].shape = _ir_shape(shape)
            merges.append(m)
        i, vs = merges[0], merges[1:]
        # ops of the condition with only constant inputs (an inner loop's counter)
        # follow the counter's Merge, so the frame holds them as it holds the body's
        ctx.pivot = g._producer[i.tensor_index]
        c = g.convert(call(cond_fn, vs))
        if limit is not None:
            c = api.logical_and(c, api.less(i, limit))
        lc = g.op("LoopCond", [c], name=f"{frame}/loop_cond")
        switches = [g.op("Switch", [m, lc], name=f"{frame}/switch") for m in merges]
        exits = [g.op("Exit", [sw[0]], {"frame_name": frame}, name=f"{frame}/exit")
                 for sw in switches]
        body_in = [g.op("Identity", [sw[1]], name=f"{frame}/body_in") for sw in switches]
        ctx.pivot = g._producer[body_in[0].tensor_index]
        outs = _flatten(call(body, body_in[1:]))
        if len(outs) != len(items):
            raise OneGraphError(f"while_loop {frame!r}: body returned {len(outs)} values "
                                f"for {len(items)} loop variables")
        outs = [g.convert(o, None if v.dtype is DType.UNDEFINED else v.dtype)
                for o, v in zip(outs, items)]
        for k, (o, v, s) in enumerate(zip(outs, items, inv[1:])):
            if strict and v.dtype is not DType.UNDEFINED and o.dtype != v.dtype:
                raise ShapeError(f"while_loop {frame!r}: loop variable {k} ({v.name!r}) "
                                 f"enters the loop as {v.dtype.short_name} but the body "
                                 f"returns {o.dtype.short_name}")
            if strict and not _fits(o.shape, s):
                raise ShapeError(f"while_loop {frame!r}: loop variable {k} ({v.name!r}) "
                                 f"has shape {_show(s)} but the body returns shape "
                                 f"{_show(o.shape)}; pass shape_invariants to let its "
                                 "shape change across iterations")
        outs = [o if o.tensor_index in ctx.inside else g.op("Identity", [o]) for o in outs]
        outs = [body_in[0] + np.int64(1)] + outs
        nexts = [g.op("NextIteration", [o], name=f"{frame}/next") for o in outs]
    for m, nx in zip(merges, nexts):
        g._ir.nodes[g._producer[m.tensor_index]].inputs[1] = nx.tensor_index
    parent = next((c for c in reversed(g._cf_stack) if isinstance(c, WhileContext)), None)
    info = WhileInfo(frame=frame, start=start, end=len(g._ir.nodes), ctx=ctx, enters=enters,
                     merges=merges, exits=exits, body_in=body_in, outs=outs, nexts=nexts,
                     n_vars=len(items), outer_stack=list(g._cf_stack), parent_ctx=parent)
    ctx.info = info
    loop_nodes = {n for n in range(start, len(g._ir.nodes))
                  if n in ctx.nodes or g._ir.nodes[n].op_type in ("Enter", "Exit")
                  and g._ir.nodes[n].attributes.get("frame_name") == frame}
    info.nodes = loop_nodes
    for n in loop_nodes:  # inner loops' nodes keep their own (innermost) loop
        g._loop_of_node.setdefault(n, info)
    results = exits[1:]
    if not back_prop:
        results = [api.stop_gradient(r) for r in results]
    return _pack(loop_vars, results)


def loop_to_differentiate(g: Graph, n: int, current: "WhileContext | None"):
    """The loop whose gradient covers node n when differentiating inside `current`
    (the forward loop whose backward body is being built; None at top level): the
    outermost loop holding n nested in `current`, or None if n is `current`'s own."""
    info = g._loop_of_node.get(n)
    while info is not None:
        if info.ctx is current:
            return None
        if info.parent_ctx is current:
            return info
        info = info.parent_ctx.info if info.parent_ctx is not None else None
    return None


def while_loop_gradients(g: Graph, info: WhileInfo, d_exits: list,
                         stop: Iterable[int] = ()) -> list[tuple]:
    """Gradients of the loop's inputs (initial loop variables and captured outside
    tensors) given the gradients of its exits; returns [(tensor index, gradient)]
    (a tensor both entering as a loop variable and captured appears twice). `stop`:
    the caller's stop_gradients (tensor indices); those inside the body stop there.

    The backward loop applies the gradient rules of the forward body's own nodes;
    the forward values they read come from stacks (see `WhileContext.capture`).
    """
    from .gradients import gradients

    n_vars = info.n_vars
    _refuse_second_order(g, info)
    floats = [k for k in range(n_vars) if _differentiable(info.body_in[k + 1].dtype)]
    # captured outside tensors, keyed as the body refers to them; gradients go to the
    # tensor each Enter actually reads (an outer frame's Enter for nested loops)
    ext = [t for t in info.ctx.captures
           if g._ir.tensors[t].dtype is not DType.UNDEFINED
           and g._ir.tensors[t].dtype.numpy.kind == "f"]
    ext_in = [info.ctx.captures[t] for t in ext]
    entered = [g._ir.nodes[g._producer[e.tensor_index]].inputs[0] for e in ext_in]
    ext_t = [Tensor(g, t) for t in entered]
    d0 = []
    for k in floats:
        d = d_exits[k]
        d0.append(dense(d) if d is not None else api.zeros_like(info.exits[k + 1]))
    acc0 = [api.zeros_like(t) for t in ext_t]
    n_iter = info.exits[0]
    ys = [info.outs[k + 1] for k in floats]
    targets = [info.body_in[k + 1] for k in floats]
    # the backward walk stops at the body's inputs and the loop's own machinery
    stop = list(info.body_in) + ext_in + list(info.nexts) + [
        Tensor(g, t) for t in stop if t in info.ctx.inside]
    invariants = [()] + [info.merges[k + 1].shape for k in floats] + [t.shape for t in ext_t]

    def bcond(k, *rest):
        return api.greater(k, np.int64(0))

    def bbody(k, *carry):
        dv = list(carry[:len(floats)])
        acc = list(carry[len(floats):])
        grads = gradients(ys, targets + ext_in, grad_ys=dv, stop_gradients=stop,
                          _in_context=True, _loop=info.ctx)
        new_dv = [dense(gr) if gr is not None else api.zeros_like(v)
                  for gr, v in zip(grads[:len(floats)], targets)]
        new_acc = [a if gr is None else a + dense(gr)
                   for a, gr in zip(acc, grads[len(floats):])]
        return [k - np.int64(1)] + new_dv + new_acc

    res = while_loop(bcond, bbody, [n_iter] + d0 + acc0, shape_invariants=invariants,
                     name=f"{info.frame}_grad", _grad_of=info)
    res = list(res)
    # inputs that reach no exit with a gradient get None, not zeros (TF1; an
    # optimizer must not update a variable the loss does not depend on)
    used_vars, used_ext = _reaching_inputs(g, info, floats, ext_in, d_exits)
    out = []
    for k, d in zip(floats, res[1:1 + len(floats)]):
        if k in used_vars:
            out.append((g._ir.nodes[g._producer[info.enters[k + 1].tensor_index]].inputs[0],
                        d))
    out.extend((t, d) for j, (t, d) in enumerate(zip(entered, res[1 + len(floats):]))
               if j in used_ext)
    return out


def _reaching_inputs(g: Graph, info: WhileInfo, floats: list, ext_in: list,
                     d_exits: list) -> tuple[set, set]:
    """(loop variables k, captured tensors j by position in ext_in) whose value can
    reach an exit that has a gradient, through any number of iterations: the body's
    data dependencies from each loop variable's next value back to the body inputs,
    closed over the loop."""
    body_var = {info.body_in[k + 1].tensor_index: k for k in floats}
    ext_pos = {t.tensor_index: j for j, t in enumerate(ext_in)}
    nodes = info.ctx.nodes

    def sources(t0: int) -> tuple[set, set]:
        vars_, exts, seen, stack = set(), set(), set(), [t0]
        while stack:
            t = stack.pop()
            if t in seen:
                continue
            seen.add(t)
            if t in body_var:
                vars_.add(body_var[t])
                continue
            if t in ext_pos:
                exts.add(ext_pos[t])
                continue
            n = g._producer.get(t)
            if n is not None and n in nodes:
                stack.extend(i for i in g._ir.nodes[n].inputs if i >= 0)
        return vars_, exts

    used_vars = {k for k in floats if d_exits[k] is not None}
    used_ext: set = set()
    todo = list(used_vars)
    while todo:
        k = todo.pop()
        vars_, exts = sources(info.outs[k + 1].tensor_index)
        used_ext |= exts
        for j in vars_ - used_vars:
            used_vars.add(j)
            todo.append(j)
    return used_vars, used_ext


@RegisterGradient("Switch")
def _switch_grad(b, op, grads):
    gf, gt = grads
    gf = gf if gf is not None else b.op("ZerosLike", [op.outputs[0]])
    gt = gt if gt is not None else b.op("ZerosLike", [op.outputs[1]])
    m = b.op("Merge", [gf, gt])[0]
    b._merge_pred[b._producer[m.tensor_index]] = op.inputs[1]  # for its own gradient
    return [m, None]


@RegisterGradient("Merge")
def _merge_grad(b, op, grads):
    pred = b._merge_pred.get(op.node_index)
    if pred is None:
        raise OneGraphError(f"Merge {op.name!r} was not built by og.cond: no gradient")
    sw = b.op("Switch", [grads[0], pred])
    return [sw[0], sw[1]]
@RegisterGradient("AccumulatorWrite")
def _accumulator_write_grad(b, op, grads):
    # the accumulator passes its gradient on whole: its row `index` before this write
    # holds nothing differentiable (the array is allocated empty), so it need not be
    # zeroed, which would copy the array once per iteration
    row = b.op("Gather", [grads[0], op.inputs[1]], {"axis": 0})
    return [grads[0], None, row, None]


@RegisterGradient("AccumulatorStack")
def _accumulator_stack_grad(b, op, grads):
    return [grads[0]]


# --------------------------------------------------------------------------- functional

def _length(elems: Tensor):
    if elems.shape is not None and elems.shape[0] is not None:
        return api.constant(np.int64(elems.shape[0]))
    return api.gather(api.shape(elems), np.int64(0))


def _elements(elems, what: str) -> Tensor:
    t = _g.convert_to_tensor(elems)
    if t.shape is not None and len(t.shape) == 0:
        raise ShapeError(f"{what}: elems must have a leading dimension, got a scalar")
    return t


def foldl(fn: Callable, elems, initializer=None, name: str = "foldl", back_prop: bool = True,
          parallel_iterations: int = 10, swap_memory: bool = False):
    """acc = fn(acc, elems[i]) for i = 0..n-1, starting from initializer; returns acc.

    Args:
        fn: function (acc, element) -> new acc, in the structure of initializer.
        elems: tensor whose leading dimension is iterated over.
        initializer: the first acc (a tensor or a nest of tensors); None means
            elems[0], and the fold then runs over elems[1:].
        name, back_prop, parallel_iterations, swap_memory: as for `while_loop`.

    Returns:
        The last acc, in the structure of initializer.

    Raises:
        ShapeError: elems is a scalar, or fn changes acc's dtype or shape.
    """
    elems = _elements(elems, "foldl")
    n = _length(elems)
    first = 0
    if initializer is None:
        initializer, first = api.gather(elems, np.int64(0)), 1

    def body(i, acc):
        x = api.gather(elems, i)
        return [i + np.int64(1), fn(acc, x)]

    _, res = while_loop(lambda i, acc: api.less(i, n), body,
                        [api.constant(np.int64(first)), initializer], name=name,
                        back_prop=back_prop, parallel_iterations=parallel_iterations,
                        swap_memory=swap_memory)
    return res


def _accumulate(acc, i, value: Tensor, n):
    """AccumulatorWrite of row i (see ops/dataflow.py)."""
    return acc.graph.op("AccumulatorWrite", [acc, i, value, n])


def _stack_rows(g: Graph, acc: Tensor, row: Tensor, n) -> Tensor:
    """The (n, *row.shape) result of an accumulator whose rows look like `row`."""
    elem = row.shape if row.shape is not None else ()
    out = g.op("AccumulatorStack", [acc],
               {"dtype": row.dtype.numpy.name,
                "element_shape": [-1 if d is None else int(d) for d in elem]})
    length = g.static_value(n)
    out.set_shape(None if row.shape is None else
                  (None if length is None else int(length),) + tuple(elem))
    return out


def map_fn(fn: Callable, elems, dtype=None, name: str = "map_fn", back_prop: bool = True,
           parallel_iterations: int = 10, swap_memory: bool = False):
    """[fn(elems[i]) for i in range(n)] stacked along a new axis 0 (one while loop).

    fn is called once, while the graph is built; results are written row by row into
    one array, so time and memory are O(n). An empty elems gives an empty result
    shaped (0, *fn's static output shape).

    Args:
        fn: function of one element returning one tensor.
        elems: tensor whose leading dimension is mapped over.
        dtype: fn's output dtype (TF1's keyword); checked when given.
        name, back_prop, parallel_iterations, swap_memory: as for `while_loop`.

    Returns:
        A tensor of shape (n, *fn's output shape).

    Raises:
        ShapeError: elems is a scalar, or fn's output does not have `dtype`.
    """
    elems = _elements(elems, "map_fn")
    g = elems.graph
    n = _length(elems)
    acc0 = g.op("AccumulatorNew", [])
    rows = []

    def body(i, acc):
        y = g.convert(fn(api.gather(elems, i)))
        if dtype is not None and y.dtype != _g.as_dtype(dtype):
            raise ShapeError(f"map_fn: fn returns {y.dtype.short_name}, but dtype="
                             f"{_g.as_dtype(dtype).short_name} was given")
        rows.append(y)
        return [i + np.int64(1), _accumulate(acc, i, y, n)]

    _, out = while_loop(lambda i, acc: api.less(i, n), body,
                        [api.constant(np.int64(0)), acc0], shape_invariants=[(), None],
                        name=name, back_prop=back_prop,
                        parallel_iterations=parallel_iterations, swap_memory=swap_memory)
    return _stack_rows(g, out, rows[0], n)


def scan(fn: Callable, elems, initializer=None, name: str = "scan", back_prop: bool = True,
         parallel_iterations: int = 10, swap_memory: bool = False):
    """Like foldl, but returns every intermediate acc stacked along axis 0.

    Args:
        fn: function (acc, element) -> new acc, in the structure of initializer.
        elems: tensor whose leading dimension is scanned.
        initializer: the first acc (a tensor or a nest of tensors); None means
            elems[0], which is then also the result's first row (TF1's rule).
        name, back_prop, parallel_iterations, swap_memory: as for `while_loop`.

    Returns:
        For each leaf of acc, the n accs stacked along a new axis 0, in the structure
        of initializer.

    Raises:
        ShapeError: elems is a scalar, or fn changes acc's dtype or shape.
    """
    elems = _elements(elems, "scan")
    g = elems.graph
    n = _length(elems)
    first = 0
    if initializer is None:
        initializer, first = api.gather(elems, np.int64(0)), 1
    init = [g.convert(x) for x in _flatten(initializer)]
    k = len(init)
    accs0 = [g.op("AccumulatorNew", []) for _ in range(k)]
    if first:  # row 0 is elems[0] itself
        accs0 = [_accumulate(a, api.constant(np.int64(0)), x, n) for a, x in zip(accs0, init)]

    def body(i, state, accs):
        x = api.gather(elems, i)
        new = [g.convert(v, s.dtype) for v, s in
               zip(_flatten(fn(_pack(initializer, list(state)), x)), init)]
        if len(new) != k:
            raise OneGraphError(f"scan: fn returned {len(new)} values for an acc of {k}")
        return [i + np.int64(1), new, [_accumulate(a, i, v, n) for a, v in zip(accs, new)]]

    _, _, outs = while_loop(lambda i, s, a: api.less(i, n), body,
                            [api.constant(np.int64(first)), init, accs0],
                            shape_invariants=[(), [x.shape for x in init], [None] * k],
                            name=name, back_prop=back_prop,
                            parallel_iterations=parallel_iterations, swap_memory=swap_memory)
    return _pack(initializer, [_stack_rows(g, o, x, n) for o, x in zip(outs, init)])
