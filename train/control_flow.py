"""Dataflow control flow: `og.cond`, `og.while_loop`, `og.foldl`, `og.map_fn`, `og.scan`.

Built from the paper's primitives (Switch, Merge, Enter, Exit, NextIteration,
LoopCond) and run by the Session with dead-value propagation (`train/frames.py`).

* `cond(pred, true_fn, false_fn)`: each branch is built in a context that routes every
  outside tensor it uses through a Switch on `pred` (one per tensor and branch); ops
  of a branch with only constant inputs get a control edge from the branch's pivot.
  The untaken branch is dead, so only the taken one runs; Merges join the results.
  Gradients: Merge's gradient is a Switch on the same predicate, Switch's a Merge,
  so gradients flow only through the taken branch.
* `while_loop(cond, body, loop_vars)`: a frame whose outside tensors enter through
  constant Enters. Its gradient (backpropagation through time) is a second loop that
  runs as many iterations backwards: the forward loop pushes each iteration's loop
  variables onto per-run stacks, the backward loop pops them, rebuilds the body on
  them and applies `gradients` to it (the body's internals are recomputed, the loop
  state is stored), carrying the loop variables' gradients and summing the gradients
  of captured outside tensors (weights) over the iterations.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import OneGraphError
from ..format import DType, TensorKind
from . import api
from . import graph as _g
from .gradients import RegisterGradient, dense
from .graph import Graph, Tensor


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
    """A loop body/condition: outside tensors come in through constant Enters."""

    def __init__(self, g: Graph, frame: str):
        super().__init__(g)
        self.frame = frame

    def _capture(self, t: Tensor) -> Tensor:
        e = self.outer_op("Enter", [t], {"frame_name": self.frame, "is_constant": 1},
                          name=f"{self.frame}/enter_const")
        self.invariant.add(e.tensor_index)
        return e


def _flat(x) -> tuple[list, Callable]:
    if isinstance(x, (list, tuple)):
        items = list(x)
        return items, (lambda vals, kind=type(x): kind(vals) if kind is tuple else list(vals))
    return [x], (lambda vals: vals[0])


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
        true_fn, false_fn: functions building each branch; they return a tensor or a
            list/tuple of tensors of matching structure and dtypes.

    Returns:
        The taken branch's result, in the same structure.

    Raises:
        OneGraphError: the branches return different structures.
    """
    g = _graph_of([pred])
    p = g.convert(pred)
    with g.name_scope(name):
        with CondContext(g, p, 1) as ct:
            rt, rebuild = _flat(true_fn())
            rt = [ct.capture(g.convert(r)) if not _is_inside(ct, g.convert(r))
                  else g.convert(r) for r in rt]
            rt = [_in_branch(g, ct, r) for r in rt]
        with CondContext(g, p, 0) as cf:
            rf, _ = _flat(false_fn())
            rf = [g.convert(r) for r in rf]
            rf = [_in_branch(g, cf, cf.capture(r) if not _is_inside(cf, r) else r) for r in rf]
        if len(rt) != len(rf):
            raise OneGraphError(f"cond: branches return {len(rt)} and {len(rf)} values")
        outs = []
        for a, b in zip(rf, rt):
            m = g.op("Merge", [a, b], name="merge")[0]
            g._merge_pred[g._producer[m.tensor_index]] = p
            outs.append(m)
    return rebuild(outs)


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


def while_loop(cond_fn: Callable, body: Callable, loop_vars, maximum_iterations=None,
               shape_invariants=None, name: str = "while"):
    """Repeat `loop_vars = body(*loop_vars)` while `cond_fn(*loop_vars)` is true.

    Args:
        cond_fn: function of the loop variables returning a boolean scalar tensor.
        body: function of the loop variables returning new values (same structure).
        loop_vars: a tensor or list/tuple of tensors (or values).
        maximum_iterations: optional int bound on the number of iterations.
        shape_invariants: optional shapes (None entries = any) per loop variable, for
            variables whose shape changes across iterations.
        name: name of the frame.

    Returns:
        The loop variables' final values, in the structure of loop_vars.

    Example::

        i, s = og.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i),
                             [og.constant(0), og.constant(0)])
    """
    items, rebuild = _flat(loop_vars)
    g = _graph_of(items)
    items = [g.convert(v) for v in items]
    frame = g.unique_name(name)
    start = len(g._ir.nodes)
    counter0 = g.constant(np.array(0, np.int64))
    all_vars = [counter0] + items
    inv = [None] + (list(shape_invariants) if shape_invariants is not None
                    else [None] * len(items))
    enters = [g.op("Enter", [v], {"frame_name": frame}, name=f"{frame}/enter") for v in all_vars]
    with WhileContext(g, frame) as ctx:
        ctx.mark([e.tensor_index for e in enters])
        merges = []
        for e, shape in zip(enters, inv):
            m = g.op("Merge", [e, e], name=f"{frame}/merge",
                     shapes=[shape, ()] if shape is not None else None)[0]
            merges.append(m)
        i, vs = merges[0], merges[1:]
        c = g.convert(cond_fn(*vs))
        if maximum_iterations is not None:
            c = api.logical_and(c, api.less(i, np.int64(maximum_iterations)))
        lc = g.op("LoopCond", [c], name=f"{frame}/loop_cond")
        switches = [g.op("Switch", [m, lc], name=f"{frame}/switch") for m in merges]
        exits = [g.op("Exit", [sw[0]], {"frame_name": frame}, name=f"{frame}/exit")
                 for sw in switches]
        body_in = [g.op("Identity", [sw[1]], name=f"{frame}/body_in") for sw in switches]
        ctx.pivot = g._producer[body_in[0].tensor_index]
        outs, _ = _flat(body(*body_in[1:]))
        if len(outs) != len(items):
            raise OneGraphError(f"while_loop: body returned {len(outs)} values for "
                                f"{len(items)} loop variables")
        outs = [g.convert(o, v.dtype) for o, v in zip(outs, items)]
        outs = [o if o.tensor_index in ctx.inside else g.op("Identity", [o]) for o in outs]
        outs = [body_in[0] + np.int64(1)] + outs
        nexts = [g.op("NextIteration", [o], name=f"{frame}/next") for o in outs]
    for m, nx in zip(merges, nexts):
        node = g._ir.nodes[g._producer[m.tensor_index]]
        node.inputs[1] = nx.tensor_index
        _relax_shape(g, m, nx)
    info = WhileInfo(frame=frame, start=start, end=len(g._ir.nodes), ctx=ctx, enters=enters,
                     merges=merges, exits=exits, body_in=body_in, outs=outs, body=body,
                     n_vars=len(items), outer_stack=list(g._cf_stack), stacks=None)
    loop_nodes = {n for n in range(start, len(g._ir.nodes))
                  if n in ctx.nodes or g._ir.nodes[n].op_type in ("Enter", "Exit")
                  and g._ir.nodes[n].attributes.get("frame_name") == frame}
    info.nodes = loop_nodes
    for n in loop_nodes:
        g._loop_of_node[n] = info
    return rebuild(exits[1:])


def _relax_shape(g, merged: Tensor, other: Tensor) -> None:
    a, b = g._ir.tensors[merged.tensor_index], g._ir.tensors[other.tensor_index]
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        if a.shape is not None and b.shape is not None:
            a.shape = None
        return
    a.shape = tuple(x if x == y else -1 for x, y in zip(a.shape, b.shape))


def while_loop_gradients(g: Graph, info: WhileInfo, d_exits: list) -> list[tuple]:
    """Gradients of the loop's inputs (initial loop variables and captured outside
    tensors) given the gradients of its exits; returns [(tensor index, gradient)]
    (a tensor both entering as a loop variable and captured appears twice)."""
    from .gradients import gradients

    n_vars = info.n_vars
    floats = [k for k in range(n_vars) if info.body_in[k + 1].dtype.numpy.kind == "f"]
    if info.stacks is None:
        saved = g._cf_stack
        g._cf_stack = list(info.outer_stack)
        try:
            stacks = [g.op("Stack", [], {"stack_name": f"{info.frame}/stack{k}"},
                           name=f"{info.frame}/stack") for k in range(n_vars)]
            g._cf_stack = list(info.outer_stack) + [info.ctx]
            for k in range(n_vars):
                g.op("StackPush", [stacks[k], info.body_in[k + 1]],
                     {"stack_name": f"{info.frame}/stack{k}"}, name=f"{info.frame}/push")
        finally:
            g._cf_stack = saved
        info.stacks = stacks
    stacks = info.stacks
    # captured outside tensors, keyed as the body refers to them; gradients go to the
    # tensor each Enter actually reads (an outer frame's Enter for nested loops)
    ext = [t for t, _ in info.ctx.captures.items()
           if g._ir.tensors[t].dtype is not DType.UNDEFINED
           and g._ir.tensors[t].dtype.numpy.kind == "f"]
    entered = [g._ir.nodes[g._producer[info.ctx.captures[t].tensor_index]].inputs[0]
               for t in ext]
    ext_t = [Tensor(g, t) for t in entered]
    d0 = []
    for k in floats:
        d = d_exits[k]
        d0.append(dense(d) if d is not None else api.zeros_like(info.exits[k + 1]))
    acc0 = [api.zeros_like(t) for t in ext_t]
    n_iter = info.exits[0]

    def bcond(k, *rest):
        return api.greater(k, np.int64(0))

    def bbody(k, *carry):
        dv = list(carry[:len(floats)])
        acc = list(carry[len(floats):])
        bctx = g._cf_stack[-1]
        vals = []
        for j in range(n_vars):
            src = info.body_in[j + 1]
            vals.append(g.op("StackPop", [stacks[j]], {"stack_name": f"{info.frame}/stack{j}"},
                             dtypes=[src.dtype], shapes=[src.shape], name="pop"))
        outs, _ = _flat(info.body(*vals))
        outs = [g.convert(o) for o in outs]
        ys = [outs[j] for j in floats]
        targets = [vals[j] for j in floats]
        ext_in = [bctx.captures.get(t) for t in ext]
        grads = gradients(ys, targets + [e for e in ext_in if e is not None], grad_ys=dv,
                          _in_context=True)
        new_dv = [dense(gr) if gr is not None else api.zeros_like(v)
                  for gr, v in zip(grads[:len(floats)], targets)]
        rest = iter(grads[len(floats):])
        new_acc = []
        for a, e in zip(acc, ext_in):
            gr = next(rest) if e is not None else None
            new_acc.append(a if gr is None else a + dense(gr))
        return [k - np.int64(1)] + new_dv + new_acc

    res = while_loop(bcond, bbody, [n_iter] + d0 + acc0, name=f"{info.frame}_grad")
    res = list(res)
    out = []
    for k, d in zip(floats, res[1:1 + len(floats)]):
        out.append((g._ir.nodes[g._producer[info.enters[k + 1].tensor_index]].inputs[0], d))
    out.extend(zip(entered, res[1 + len(floats):]))
    return out


@RegisterGradient("Switch")
def _switch_grad(b, op, grads):
    gf, gt = grads
    gf = gf if gf is not None else b.op("ZerosLike", [op.outputs[0]])
    gt = gt if gt is not None else b.op("ZerosLike", [op.outputs[1]])
    return [b.op("Merge", [gf, gt])[0], None]


@RegisterGradient("Merge")
def _merge_grad(b, op, grads):
    pred = b._merge_pred.get(op.node_index)
    if pred is None:
        raise OneGraphError(f"Merge {op.name!r} was not built by og.cond: no gradient")
    sw = b.op("Switch", [grads[0], pred])
    return [sw[0], sw[1]]


# --------------------------------------------------------------------------- functional

def _length(elems: Tensor):
    if elems.shape is not None and elems.shape[0] is not None:
        return api.constant(np.int64(elems.shape[0]))
    return api.gather(api.shape(elems), np.int64(0))


def foldl(fn: Callable, elems, initializer, name: str = "foldl"):
    """acc = fn(acc, elems[i]) for i = 0..n-1, starting from initializer; returns acc."""
    elems = _g.convert_to_tensor(elems)
    n = _length(elems)
    init, rebuild = _flat(initializer)

    def body(i, *acc):
        x = api.gather(elems, i)
        new, _ = _flat(fn(rebuild(list(acc)), x))
        return [i + np.int64(1)] + list(new)

    res = while_loop(lambda i, *acc: api.less(i, n), body,
                     [api.constant(np.int64(0))] + list(init), name=name)
    return rebuild(list(res[1:]))


def _stacked(fn_out: Tensor, elems_len, g):
    shape = fn_out.shape
    empty = np.zeros((0,) + tuple(d if d is not None else 0 for d in shape),
                     dtype=fn_out.dtype.numpy)
    return g.constant(empty), [None] + list(shape)


def map_fn(fn: Callable, elems, name: str = "map_fn"):
    """[fn(elems[i]) for i in range(n)] stacked along a new axis 0 (one while loop)."""
    elems = _g.convert_to_tensor(elems)
    g = elems.graph
    probe = g.convert(fn(api.gather(elems, np.int64(0))))  # for the element shape only
    if probe.shape is None or any(d is None for d in probe.shape):
        raise OneGraphError("map_fn needs fn's output shape to be known")
    acc0, inv = _stacked(probe, None, g)
    n = _length(elems)

    def body(i, acc):
        y = g.convert(fn(api.gather(elems, i)))
        return [i + np.int64(1), api.concat([acc, api.expand_dims(y, 0)], 0)]

    _, out = while_loop(lambda i, acc: api.less(i, n), body,
                        [api.constant(np.int64(0)), acc0], shape_invariants=[None, inv],
                        name=name)
    return out


def scan(fn: Callable, elems, initializer, name: str = "scan"):
    """Like foldl, but returns every intermediate acc stacked along axis 0."""
    elems = _g.convert_to_tensor(elems)
    g = elems.graph
    init = g.convert(initializer)
    if init.shape is None or any(d is None for d in init.shape):
        raise OneGraphError("scan needs the initializer's shape to be known")
    acc0, inv = _stacked(init, None, g)
    n = _length(elems)

    def body(i, acc, out):
        new = g.convert(fn(acc, api.gather(elems, i)), acc.dtype)
        return [i + np.int64(1), new, api.concat([out, api.expand_dims(new, 0)], 0)]

    _, _, out = while_loop(lambda i, a, o: api.less(i, n), body,
                           [api.constant(np.int64(0)), init, acc0],
                           shape_invariants=[None, None, inv], name=name)
    return out
