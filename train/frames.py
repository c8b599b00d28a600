"""Loop frames for the Session: the paper's Enter / Exit / NextIteration semantics.

A while loop is a *frame*: the nodes reachable from its Enter nodes up to its Exit
nodes. The Session plans a frame as one macro step (`FrameRunner`) whose inputs are the
tensors entering the frame and whose outputs are the Exit tensors. Running it executes
the frame's nodes in topological order once per iteration, with dead values:

* iteration 0: Enter outputs carry their inputs, NextIteration outputs are dead, so
  each Merge forwards the entering value;
* iteration k > 0: loop-variable Enters are dead and Merges forward the value the
  NextIteration produced in iteration k - 1; constant Enters (`is_constant`) carry
  their value on every iteration;
* the LoopCond's Switch sends the values to the Exits (live) once the predicate is
  false, and the body (then dead) produces dead NextIteration outputs: the loop ends.

Iterations run one after the other (parallel_iterations = 1). Frames nest: an inner
loop is a macro step inside the outer frame. A node is skipped (dead) when a data
input is dead (Merge excepted) or when a control input's output is dead, which is how
ops with only constant inputs inside a cond branch or loop body follow their pivot.
ONNX If/Loop/Scan keep running as subgraphs (`KernelContext.run_graph`); this module
is the dataflow machinery for graphs built with `og.cond` / `og.while_loop`.
"""

from __future__ import annotations

import heapq

from ..errors import ExecutionError
from ..ops import REGISTRY
from ..ops.common import kernel_failure
from ..ops.dataflow import DEAD
from ..ops.registry import NODE_KEY
from ..ops.scratch import begin_kernel

MAX_ITERATIONS = 10_000_000


class _Proxy:
    """Stands in for a node where plans need one (messages, plan optimisers)."""

    __slots__ = ("name", "op_type", "domain", "attributes", "inputs", "outputs",
                 "control_inputs")

    def __init__(self, name, op_type, inputs=(), outputs=()):
        self.name, self.op_type, self.domain = name, op_type, "onegraph"
        self.attributes, self.control_inputs = {}, []
        self.inputs, self.outputs = list(inputs), list(outputs)


class _Sub:
    __slots__ = ("kernel", "attrs", "inputs", "outputs", "ctrl", "kind", "node", "const")

    def __init__(self, kernel, attrs, inputs, outputs, ctrl, kind, node, const=False):
        self.kernel, self.attrs, self.inputs, self.outputs = kernel, attrs, inputs, outputs
        self.ctrl, self.kind, self.node, self.const = ctrl, kind, node, const


class FrameUnit:
    """A contracted loop frame: external inputs -> Exit outputs."""

    def __init__(self, name, nodes, inputs, outputs, ctrl_nodes):
        self.name = name
        self.nodes = nodes            # node indices of the frame (incl. inner frames)
        self.inputs = inputs          # external tensor indices read inside
        self.outputs = outputs        # Exit output tensors
        self.ctrl_nodes = ctrl_nodes  # external nodes the frame has control edges from
        self.node = _Proxy(f"while/{name}", "WhileFrame", inputs, outputs)
        self.kernel = None
        self.first = min(nodes)


def control_outputs(graph, node_index: int, accept) -> tuple:
    """The tensors whose deadness makes node `node_index` dead through its control
    inputs: the first output of each control input for which `accept(index)` holds,
    and, through a control input that is a NoOp (no outputs: TF2's lowered conds relay
    a branch's pivot to the branch's constants through one, input_control_node), those
    of the NoOp's own control inputs, as TF's executor passes deadness along control
    edges."""
    found, seen, todo = [], set(), list(graph.nodes[node_index].control_inputs)
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        node = graph.nodes[c]
        if node.op_type == "NoOp" and not node.outputs:
            todo.extend(node.control_inputs)
        elif node.outputs and accept(c):
            found.append(node.outputs[0])
    return tuple(found)


def has_frames(graph, nodes) -> bool:
    return any(graph.nodes[n].op_type == "Enter" for n in nodes)


def frame_closure(graph, nodes: set) -> set:
    """Nodes of every frame that has a node in `nodes` (a frame runs whole), except
    StackPushes whose stack no StackPop among them reads."""
    out = set(nodes)
    for name, members in _frames(graph, set(range(len(graph.nodes)))).items():
        if members & nodes:
            out |= members
    # values saved for a gradient loop are pushed only when that loop's pops run
    popped = {graph.nodes[n].attributes.get("stack_name") for n in out
              if graph.nodes[n].op_type == "StackPop"}
    return {n for n in out if graph.nodes[n].op_type != "StackPush"
            or graph.nodes[n].attributes.get("stack_name") in popped}


def _consumers(graph):
    cons: dict[int, list[int]] = {}
    for n, node in enumerate(graph.nodes):
        for t in node.inputs:
            if t >= 0:
                cons.setdefault(t, []).append(n)
    ctrl: dict[int, list[int]] = {}
    for n, node in enumerate(graph.nodes):
        for c in node.control_inputs:
            ctrl.setdefault(c, []).append(n)
    return cons, ctrl


def _frames(graph, scope: set) -> dict[str, set]:
    """frame name -> its nodes (within scope): forward from its Enters to its Exits."""
    cons, ctrl = _consumers(graph)
    frames: dict[str, set] = {}
    for n in scope:
        node = graph.nodes[n]
        if node.op_type == "Enter":
            frames.setdefault(node.attributes.get("frame_name", ""), set()).add(n)
    out = {}
    for name, enters in frames.items():
        members = set()
        stack = list(enters)
        while stack:
            n = stack.pop()
            if n in members or n not in scope:
                continue
            members.add(n)
            node = graph.nodes[n]
            if node.op_type == "Exit" and node.attributes.get("frame_name", "") == name:
                continue
            for t in node.outputs:
                stack.extend(cons.get(t, ()))
            stack.extend(ctrl.get(n, ()))
        out[name] = members
    # a loop with an Exit in another frame (the walk from a frame's Enters stops at
    # its own Exits, so a later loop is never reached) is nested in it: that frame
    # holds all of it, also the parts no path from the outer frame reaches (an inner
    # loop's counter in a condition built before og.while_loop gave conditions a pivot)
    exits = {name: {n for n in members if graph.nodes[n].op_type == "Exit"
                    and graph.nodes[n].attributes.get("frame_name", "") == name}
             for name, members in out.items()}
    changed = True
    while changed:
        changed = False
        for outer, members in out.items():
            for inner, inner_members in out.items():
                if inner != outer and exits[inner] & members \
                        and not inner_members <= members:
                    members |= inner_members
                    changed = True
    return out


def contract(graph, order: list[int]) -> list:
    """`order` with each outermost frame replaced by a FrameUnit (in a valid order)."""
    scope = set(order)
    frames = _frames(graph, scope)
    if not frames:
        return list(order)
    # outermost frames: not inside another frame's node set
    outer = {name: m for name, m in frames.items()
             if not any(name != o and (m < om) for o, om in frames.items())}
    owner = {}
    units = []
    for name, members in outer.items():
        produced = {t for n in members for t in graph.nodes[n].outputs}
        inputs = sorted({t for n in members for t in graph.nodes[n].inputs
                         if t >= 0 and t not in produced})
        outputs = [graph.nodes[n].outputs[0] for n in sorted(members)
                   if graph.nodes[n].op_type == "Exit"
                   and graph.nodes[n].attributes.get("frame_name", "") == name]
        ctrl_nodes = sorted({c for n in members for c in graph.nodes[n].control_inputs
                             if c not in members})
        unit = FrameUnit(name, members, inputs, outputs, ctrl_nodes)
        units.append(unit)
        for n in members:
            owner[n] = unit
    producer = {t: n for n in scope for t in graph.nodes[n].outputs}
    items = [n for n in order if n not in owner] + units

    def key(it):
        return it.first if isinstance(it, FrameUnit) else it

    def deps(it):
        if isinstance(it, FrameUnit):
            ins, ctl = it.inputs, it.ctrl_nodes
        else:
            node = graph.nodes[it]
            ins, ctl = [t for t in node.inputs if t >= 0], node.control_inputs
        found = set()
        for t in ins:
            p = producer.get(t)
            if p is not None:
                found.add(owner.get(p, p))
        for c in ctl:
            if c in scope:
                found.add(owner.get(c, c))
        found.discard(it)
        return found

    ids = {id(it) if isinstance(it, FrameUnit) else ("n", it): it for it in items}

    def ident(it):
        return id(it) if isinstance(it, FrameUnit) else ("n", it)

    indeg = {ident(it): 0 for it in items}
    users: dict = {ident(it): [] for it in items}
    for it in items:
        for d in deps(it):
            if graph.nodes[d].op_type == "NextIteration" if not isinstance(d, FrameUnit) \
                    else False:
                continue
            indeg[ident(it)] += 1
            users[ident(d)].append(it)
    heap = [(key(it), i, ident(it)) for i, it in enumerate(items) if indeg[ident(it)] == 0]
    heapq.heapify(heap)
    out = []
    counter = len(items)
    while heap:
        _, _, i = heapq.heappop(heap)
        it = ids[i]
        out.append(it)
        for u in users[i]:
            indeg[ident(u)] -= 1
            if indeg[ident(u)] == 0:
                counter += 1
                heapq.heappush(heap, (key(u), counter, ident(u)))
    if len(out) != len(items):
        raise ExecutionError("cycle between loop frames and the rest of the graph")
    return out


class FrameRunner:
    """Kernel of a FrameUnit: runs the frame's iterations (see the module doc)."""

    def __init__(self, session, graph, unit: FrameUnit, template: list, topo: list[int]):
        self.unit = unit
        inner_order = [n for n in topo if n in unit.nodes]
        # own Enters stay plain steps; inner frames become nested runners
        own_enters = {n for n in unit.nodes if graph.nodes[n].op_type == "Enter"
                      and graph.nodes[n].attributes.get("frame_name", "") == unit.name}
        inner_scope = [n for n in inner_order if n not in own_enters]
        inner = contract(graph, inner_scope)
        items = sorted(own_enters) + [it for it in inner]
        self.template = template
        self.steps = []
        self.next_outputs = []
        for it in items:
            if isinstance(it, FrameUnit):
                runner = FrameRunner(session, graph, it, template, topo)
                it.kernel = runner
                ctrl = tuple(graph.nodes[c].outputs[0] for c in it.ctrl_nodes
                             if c in unit.nodes and graph.nodes[c].outputs)
                self.steps.append(_Sub(runner, {}, tuple(it.inputs), tuple(it.outputs), ctrl,
                                       "frame", it.node))
                continue
            node = graph.nodes[it]
            where = f"node {node.name!r} ({node.op_type}): "
            op = REGISTRY.get(node.op_type, node.domain, where)
            op.check_arity(node.inputs, node.outputs, where)
            attrs = op.resolve_attrs(node.attributes, where)
            attrs[NODE_KEY] = (id(graph), it)  # per-node state: a seeded op's stream
            ctrl = control_outputs(graph, it, lambda c: c in unit.nodes)
            # a StackPush saves a forward value for the gradient loop even when it is
            # dead (its pop is then dead too); its control input (the body's pivot)
            # still skips it when the whole body is dead
            kind = {"Enter": "enter", "Merge": "merge", "StackPush": "merge"}.get(
                node.op_type, "op")
            self.steps.append(_Sub(op.kernel, attrs, tuple(node.inputs), tuple(node.outputs),
                                   ctrl, kind, node, bool(attrs.get("is_constant", 0))))
            if node.op_type == "NextIteration":
                self.next_outputs.extend(node.outputs)

    def __call__(self, inputs, attrs, ctx):
        unit = self.unit
        values = list(self.template)
        for t, v in zip(unit.inputs, inputs):
            values[t] = v
        for t in self.next_outputs:
            values[t] = DEAD
        first = True
        for _ in range(MAX_ITERATIONS):
            for st in self.steps:
                if st.kind == "enter":
                    v = values[st.inputs[0]] if (first or st.const) else DEAD
                    values[st.outputs[0]] = v
                    continue
                args = [values[i] if i >= 0 else None for i in st.inputs]
                dead = any(values[c] is DEAD for c in st.ctrl)
                if not dead and st.kind != "merge":
                    dead = any(a is DEAD for a in args)
                if dead:
                    outs = (DEAD,) * len(st.outputs)
                else:
                    try:
                        begin_kernel()
                        outs = st.kernel(args, st.attrs, ctx)
                    except Exception as e:
                        from ..errors import CancelledError, OneGraphError

                        if isinstance(e, CancelledError) or (
                                isinstance(e, ExecutionError) and str(e).startswith("node ")):
                            raise  # a closed queue, or named by an inner frame already
                        if isinstance(e, OneGraphError):
                            raise type(e)(f"node {st.node.name!r} ({st.node.op_type}) in "
                                          f"loop {unit.name!r}: {e}") from e
                        raise kernel_failure(e, f"node {st.node.name!r} ({st.node.op_type}) "
                                                f"in loop {unit.name!r}", args) from e
                for i, v in zip(st.outputs, outs):
                    values[i] = v
            if all(values[t] is DEAD for t in self.next_outputs):
                break
            first = False
        else:
            raise ExecutionError(f"loop {unit.name!r} exceeded {MAX_ITERATIONS} iterations")
        return tuple(values[t] for t in unit.outputs)
