"""Automatic differentiation as a graph-to-graph transform.

`gradients(ys, xs)` walks back from `ys` over the ops that lie between `xs` and `ys`
(in reverse creation order, which is a topological order of a built graph), asks each
op's gradient rule for the gradients of its inputs, and sums partial gradients of a
tensor with one AddN node. Rules are graph builders (see `onegraph.ops.registry`), so
the result is ordinary graph nodes that can be saved, placed and run.

A gradient may be *sparse*: `IndexedSlices(values, indices, like)` (Gather's gradient
w.r.t. its params) stays sparse through aggregation and reaches optimizers as is, so
an embedding update touches only the looked-up rows (ScatterAdd / SparseApply*).

Overrides: `RegisterGradient("Name")` registers a rule under a name and
`gradient_override_map({"OpType": "Name"})` applies it to ops built inside the block;
`custom_gradient(f)` gives one Python function its own gradient.
"""

from __future__ import annotations

import collections
import enum
import contextlib
import functools
from typing import Callable, Sequence

from ..errors import GradientNotDefinedError, OneGraphError
from ..format import DType
from ..ops import REGISTRY
from . import graph as _g
from .graph import Graph, Operation, Tensor


class IndexedSlicesValue(collections.namedtuple("IndexedSlicesValue",
                                                  ["values", "indices", "dense_shape"])):
    """What Session.run gives for a fetched og.IndexedSlices (TF1's
    tf.IndexedSlicesValue): its values, indices and the dense tensor's shape."""

    __slots__ = ()


class IndexedSlices:
    """A sparse gradient: rows `indices` of a dense tensor shaped like `like` get `values`.

    Attributes:
        values: Tensor (num_indices, *like.shape[1:]).
        indices: int64 Tensor (num_indices,); repeated indices accumulate.
        like: the dense tensor (its shape and dtype define the dense gradient).
    """

    __slots__ = ("values", "indices", "like")

    def __init__(self, values: Tensor, indices: Tensor, like: Tensor):
        self.values, self.indices, self.like = values, indices, like

    @property
    def graph(self) -> Graph:
        return self.values.graph

    def to_dense(self) -> Tensor:
        """The dense gradient (one IndexedSlicesToDense node)."""
        return self.graph.op("IndexedSlicesToDense", [self.values, self.indices, self.like])

    def _as_graph_tensor(self, graph):
        # where a Tensor is wanted (og.convert_to_tensor, an op's input) the slices are
        # made dense, as TF's conversion does
        if graph is not None and graph is not self.graph:
            raise OneGraphError("IndexedSlices of another graph")
        return self.to_dense()

    def __repr__(self) -> str:
        return f"<og.IndexedSlices values={self.values.name!r} indices={self.indices.name!r}>"


_REGISTERED: dict[str, Callable] = {}


def RegisterGradient(name: str):  # noqa: N802 - TF's spelling
    """Decorator registering `rule(b, op, grads) -> list` under `name`.

    Use it with `gradient_override_map` (or name an op type to override that op's
    rule everywhere).

    Raises:
        OneGraphError: the name is already registered.
    """
    def deco(fn):
        if name in _REGISTERED:
            raise OneGraphError(f"gradient {name!r} registered twice")
        _REGISTERED[name] = fn
        return fn
    return deco


def _no_gradients(b, op, grads) -> list:
    """A NotDifferentiable op's rule: None for every input."""
    return [None] * len(op.inputs)


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TF's spelling
    """Declare that ops of `op_type` have no gradient: og.gradients gives None for
    their inputs rather than raising (TF's tf.NotDifferentiable / no_gradient). A
    second declaration of the same type is a no-op (a module imported again); a rule
    og.gradient_override_map names still replaces it per graph.

    Raises:
        TypeError: op_type is not a str.
        OneGraphError: another rule is registered under op_type.
    """
    if not isinstance(op_type, str):
        raise TypeError(f"NotDifferentiable: op_type must be a str, got {op_type!r:.40}")
    if _REGISTERED.get(op_type) is _no_gradients:
        return
    RegisterGradient(op_type)(_no_gradients)


no_gradient = NoGradient = NotDifferentiable


@contextlib.contextmanager
def gradient_override_map(mapping: dict, graph: Graph | None = None):
    """Inside the block, ops of type K built get the gradient registered as mapping[K]."""
    g = graph or _g.get_default_graph()
    start = len(g._ir.nodes)
    try:
        yield
    finally:
        for n in range(start, len(g._ir.nodes)):
            name = mapping.get(g._ir.nodes[n].op_type)
            if name is not None:
                if name not in _REGISTERED:
                    raise OneGraphError(f"no gradient registered as {name!r}")
                g._node_grad[n] = _REGISTERED[name]


def custom_gradient(f: Callable):
    """Decorator: `f(*xs)` returns `(y, grad_fn)`; `grad_fn(dy)` returns the xs' gradients.

    The forward graph `f` builds is used as is; `og.gradients` uses `grad_fn` instead
    of differentiating through it.

    Example::

        @og.custom_gradient
        def clip_grad(x):
            def grad(dy):
                return og.clip_by_value(dy, -1.0, 1.0)
            return og.identity(x), grad
    """
    @functools.wraps(f)
    def wrapper(*xs):
        xs_t = [_g.convert_to_tensor(x) for x in xs]
        y, grad_fn = f(*xs_t)
        ys = list(y) if isinstance(y, (list, tuple)) else [y]
        g = xs_t[0].graph if xs_t else ys[0].graph
        # IdentityN(ys..., xs...) -> outputs; only the ys outputs are returned. The
        # rule sends nothing into f's internals (ys) and grad_fn's result to the xs.
        outs = g.op("IdentityN", ys + xs_t, name=f"{f.__name__}/custom_gradient")
        outs = outs if isinstance(outs, list) else [outs]
        n = g._producer[outs[0].tensor_index]
        n_y = len(ys)

        def rule(b, node, grads):
            dys = grads[:n_y]
            dys = [d if d is not None else b.op("ZerosLike", [yy]) for d, yy in
                   zip(dys, node.inputs[:n_y])]
            dx = grad_fn(*dys)
            dx = list(dx) if isinstance(dx, (list, tuple)) else [dx]
            return [None] * n_y + dx

        g._node_grad[n] = rule
        result = outs[:n_y]
        return result if isinstance(y, (list, tuple)) else result[0]
    return wrapper


def _rule_for(g: Graph, n: int):
    override = g._node_grad.get(n)
    if override is not None:
        return override
    node = g._ir.nodes[n]
    mapped = g._grad_override_map.get(node.op_type)
    if mapped is not None:
        return _REGISTERED[mapped]
    if node.op_type in _REGISTERED and node.domain in ("", "onegraph"):
        return _REGISTERED[node.op_type]
    return REGISTRY.get(node.op_type, node.domain).gradient


def _targets(x) -> list[int]:
    """Tensor indices whose gradients make up the gradient of x (a Variable: its reads)."""
    reads = getattr(x, "_reads", None)
    if reads is not None:
        return [t.tensor_index for t in reads]
    return [_g.convert_to_tensor(x).tensor_index]


def _is_float(g: Graph, t: int) -> bool:
    tensor = g._ir.tensors[t]
    dt = tensor.dtype
    return not tensor.containers and (dt is DType.UNDEFINED or dt.numpy.kind == "f")


def aggregate(g: Graph, parts: list):
    """Sum partial gradients: AddN of dense ones; sparse ones stay sparse if all are."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, IndexedSlices) for p in parts):
        values = g.op("Concat", [p.values for p in parts], {"axis": 0})
        indices = g.op("Concat", [p.indices for p in parts], {"axis": 0})
        return IndexedSlices(values, indices, parts[0].like)
    dense = [p.to_dense() if isinstance(p, IndexedSlices) else p for p in parts]
    return g.op("AddN", dense)


def dense(grad):
    """A gradient as a dense Tensor (IndexedSlices are scattered into zeros)."""
    return grad.to_dense() if isinstance(grad, IndexedSlices) else grad


class AggregationMethod:
    """How gradients that reach one tensor from several ops are summed (TF1's
    tf.AggregationMethod). onegraph sums them with one AddN whichever is chosen: the
    methods differ in TF only in scheduling and memory."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    """What gradients() gives for an x that ys do not depend on (TF1's
    tf.UnconnectedGradients): None, or zeros shaped like x."""

    NONE = "none"
    ZERO = "zero"


def check_aggregation_method(method) -> None:
    """Refuse an aggregation method TF does not know (None is the default).

    Raises:
        ValueError: TF's message.
    """
    if method is not None and method not in (AggregationMethod.ADD_N,
                                             AggregationMethod.EXPERIMENTAL_TREE,
                                             AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        raise ValueError(f"Invalid aggregation_method specified {method}.")


def gradients(ys, xs, grad_ys=None, name: str = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method=None, stop_gradients: Sequence | None = None,
              unconnected_gradients=UnconnectedGradients.NONE, *,
              _in_context: bool = False, _loop=None) -> list:
    """Symbolic gradients of sum(ys) with respect to each of xs (TF1's tf.gradients,
    with its arguments in its order).

    Args:
        ys: a tensor or list of tensors (differentiated as their sum, each weighted
            by its grad_ys entry).
        xs: tensors or Variables.
        grad_ys: initial gradients for ys (default ones shaped like each y).
        name: name scope of the gradient nodes.
        colocate_gradients_with_ops, gate_gradients: TF's device placement and
            scheduling knobs; no effect in onegraph's in-process runtime.
        aggregation_method: an og.AggregationMethod (checked; gradients are summed
            with one AddN whichever it is).
        stop_gradients: tensors treated as constants (TF1): nothing propagates
            through the ops that produce them, but a stop tensor that is itself one
            of xs still gets its gradient.
        unconnected_gradients: og.UnconnectedGradients.NONE (or "none"): None for an
            x that ys do not depend on; ZERO ("zero"): zeros shaped like it.
        _in_context, _loop: internal (the backward body of a while loop builds its
            nodes in its own context, differentiating the body of forward loop
            context `_loop`).

    Returns:
        One entry per x: a Tensor, an `IndexedSlices` (sparse, e.g. an embedding
        looked up with Gather), or None if x does not influence ys.

    Raises:
        GradientNotDefinedError: an op on a path from xs to ys has no gradient rule
            (the message names the op type and the node).
        ValueError: ys is an empty list, grad_ys is given with a different length
            than ys or an entry of another shape than its y, an entry of xs or
            stop_gradients belongs to another graph, or aggregation_method or
            unconnected_gradients is not one of TF's values.
    """
    del colocate_gradients_with_ops, gate_gradients   # placement and scheduling only
    check_aggregation_method(aggregation_method)
    try:
        zero_unconnected = UnconnectedGradients(unconnected_gradients) is \
            UnconnectedGradients.ZERO
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: "
                         f"{unconnected_gradients!r}") from None
    result = _gradients(ys, xs, grad_ys, stop_gradients, name, _in_context, _loop)
    if zero_unconnected:
        result = [_zeros_like(x, name) if gr is None else gr for gr, x in
                  zip(result, xs if isinstance(xs, (list, tuple)) else [xs])]
    return result


def _zeros_like(x, scope: str) -> Tensor:
    """Zeros shaped like the tensor or Variable x (an unconnected gradient), in the
    gradients' name scope."""
    t = _g.convert_to_tensor(x)
    with t.graph.name_scope(scope or "gradients"):
        return t.graph.op("ZerosLike", [t], name="zeros_like")


def _gradients(ys, xs, grad_ys, stop_gradients, name, _in_context, _loop) -> list:
    """gradients() without TF's knobs: see there."""
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs_list = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    if not ys:
        raise ValueError("gradients: ys is empty; give a tensor or a list of tensors")
    # TF1 takes None or one tensor for stop_gradients as well as a list
    if stop_gradients is None:
        stop_gradients = ()
    elif not isinstance(stop_gradients, (list, tuple, set, frozenset)):
        stop_gradients = [stop_gradients]
    ys = [_g.convert_to_tensor(y) for y in ys]
    g = ys[0].graph
    ir = g._ir
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    grad_ys = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
    if len(grad_ys) != len(ys):
        raise ValueError(f"gradients: {len(grad_ys)} grad_ys for {len(ys)} ys")
    for what, items in (("xs", xs_list), ("stop_gradients", stop_gradients)):
        for item in items:
            _check_graph(item, g, what)
    x_targets = [_targets(x) for x in xs_list]
    stop = {_g.convert_to_tensor(s).tensor_index for s in stop_gradients}
    x_set = {t for ts in x_targets for t in ts}
    producers = g._producer

    # consumers: tensor -> nodes reading it
    consumers: dict[int, list[int]] = {}
    for n, node in enumerate(ir.nodes):
        for i in node.inputs:
            if i >= 0:
                consumers.setdefault(i, []).append(n)
    # nodes forward-reachable from xs
    forward: set[int] = set()
    stack = [t for ts in x_targets for t in ts]
    seen_t: set[int] = set()
    while stack:
        t = stack.pop()
        # a stop tensor downstream of xs is a constant; one of xs is still a source
        if t in seen_t or (t in stop and t not in x_set):
            continue
        seen_t.add(t)
        for n in consumers.get(t, ()):
            if n not in forward:
                forward.add(n)
                stack.extend(ir.nodes[n].outputs)
    # nodes backward-reachable from ys (through data edges), limited to forward
    between: set[int] = set()
    stack = [y.tensor_index for y in ys]
    seen_t = set()
    while stack:
        t = stack.pop()
        if t in seen_t or t in stop:
            continue
        seen_t.add(t)
        n = producers.get(t)
        if n is None or n not in forward or n in between:
            continue
        between.add(n)
        stack.extend(i for i in ir.nodes[n].inputs if i >= 0)

    grads: dict[int, list] = {}
    with g.control_dependencies(None), g.name_scope(name or "gradients"):
        # gradient nodes are built outside control-flow contexts, except for the
        # backward body of a while loop, which differentiates inside its own frame
        saved_cf = g._cf_stack
        g._cf_stack = list(saved_cf) if _in_context else []
        loops_done: set[int] = set()
        try:
            for y, gy in zip(ys, grad_ys):
                if not _is_float(g, y.tensor_index):
                    continue  # an integer or bool y has no gradient (TF1: None)
                if gy is None:
                    gy = g.op("OnesLike", [y])
                else:
                    gy = g.convert(gy, y.dtype)
                    _check_grad_y(y, gy)
                grads.setdefault(y.tensor_index, []).append(gy)
            for n in sorted(between, reverse=True):
                loop = _loop_to_differentiate(g, n, _loop) if g._loop_of_node else None
                if loop is not None:  # a whole while loop at once (BPTT)
                    if id(loop) not in loops_done:
                        loops_done.add(id(loop))
                        _loop_gradients(g, loop, grads, stop)
                    continue
                node = ir.nodes[n]
                out_grads = []
                for t in node.outputs:
                    parts = None if t in stop else grads.get(t)
                    if parts and len(parts) > 1:
                        grads[t] = parts = [aggregate(g, parts)]
                    out_grads.append(parts[0] if parts else None)
                if all(o is None for o in out_grads):
                    continue
                rule = _rule_for(g, n)
                if rule is None:
                    raise GradientNotDefinedError(
                        f"op {node.op_type!r} (node {node.name!r}) has no gradient rule; "
                        "wrap its input in og.stop_gradient or register one with "
                        "og.RegisterGradient")
                dense_grads = [dense(o) for o in out_grads]
                # (a name ending in "/" or empty would leave the gradients scope)
                with g.name_scope(node.name.replace(":", "_").strip("/") or node.op_type):
                    in_grads = rule(g, Operation(g, n), dense_grads)
                if len(in_grads) != len(node.inputs):
                    raise OneGraphError(f"gradient rule of {node.op_type} returned "
                                        f"{len(in_grads)} entries for {len(node.inputs)} "
                                        "inputs")
                for t, gr in zip(node.inputs, in_grads):
                    # a stop tensor collects its gradient (it may be one of xs) but
                    # never passes it on: its producer reads None above
                    if gr is None or t < 0 or not _is_float(g, t):
                        continue
                    grads.setdefault(t, []).append(gr)
            result = []
            for ts in x_targets:
                parts = [p for t in ts for p in grads.get(t, ())]
                result.append(aggregate(g, parts))
        finally:
            g._cf_stack = saved_cf
    return result


def _check_graph(item, g: Graph, what: str) -> None:
    """Raise ValueError if a tensor or Variable of `what` belongs to another graph than
    ys: it would be looked up by its index in ys's graph, another tensor there."""
    owner = getattr(item, "graph", None)
    if owner is not None and owner is not g:
        raise ValueError(f"gradients: {what} entry {getattr(item, 'name', item)!r} "
                         "belongs to another graph than ys")


def _check_grad_y(y: Tensor, gy: Tensor) -> None:
    """Raise ValueError if grad_ys' entry cannot have y's shape (TF1: "Incompatible
    shapes"); a broadcast one would give gradients of the wrong shape."""
    ys, gs = y.shape, gy.shape
    if ys is None or gs is None:
        return
    if len(ys) != len(gs) or any(a is not None and b is not None and a != b
                                 for a, b in zip(ys, gs)):
        raise ValueError(f"gradients: grad_ys entry of shape {list(gs)} for y "
                         f"{y.name!r} of shape {list(ys)}; they must be the same")


def _loop_to_differentiate(g: Graph, n: int, current):
    from .control_flow import loop_to_differentiate as find

    return find(g, n, current)


def _loop_gradients(g: Graph, loop, grads: dict, stop: set) -> None:
    from .control_flow import while_loop_gradients

    d_exits = []
    for e in loop.exits[1:]:
        parts = None if e.tensor_index in stop else grads.get(e.tensor_index)
        d_exits.append(aggregate(g, parts) if parts else None)
    if all(d is None for d in d_exits):
        return
    for t, gr in while_loop_gradients(g, loop, d_exits, stop):
        if gr is not None and _is_float(g, t):
            grads.setdefault(t, []).append(gr)


def hessian_vector_product(ys, xs, vs) -> list:
    """Gradients of (grad(ys, xs) . vs) w.r.t. xs (forward-over-reverse not needed)."""
    grads = gradients(ys, xs)
    from . import api

    dots = [api.reduce_sum(dense(gr) * v) for gr, v in zip(grads, vs) if gr is not None]
    return gradients(api.add_n(dots), xs)
