"""og.cond's Switch/Merge machinery written as ONNX If nodes, for the export.

A graph built with the training API holds a cond as the paper builds it: every outside
tensor a branch reads comes in through a Switch on the predicate (output 1 for the true
branch, 0 for the false one), the branch's ops read those, and a Merge per result joins
the two branches (input 1 the true result, input 0 the false one). ONNX has no dead
values, so the export rewrites each cond into an If whose then/else subgraphs hold the
branch's ops and read the Switches' data inputs from the enclosing graph by name, as
tf2onnx does for TensorFlow's conds.

The rewrite reads only the dataflow, so it also works on a loaded `.og` file:

* a branch is what the Merge's input depends on, back to the Switches of its own
  cond. A Merge met on the way opens an inner cond and its Switches close it, so a
  walk counts the nesting depth; the inner cond is rewritten inside the subgraph;
* the predicate is the Switches' second input; a branch of constants only (no Switch
  on its data path) finds it through the control edge its ops have from the branch's
  pivot, an Identity of Switch(pred, pred);
* Merges whose branches share an op become one If with several outputs, so shared
  work is done once.

Control edges do not carry over (ONNX has none): a branch keeps the ops its results
depend on, so an op that only a control edge inside a branch ran (a moving-average
update) is left out, as it is from the rest of a signature's export.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from ..errors import ConversionError
from ..format.ir import Graph, Node, TensorKind

_DOMAIN = "onegraph"
# the ops of a while_loop's frame, which a branch walk does not look past
_LOOP_FRAME_OPS = frozenset({"Enter", "Exit", "NextIteration", "LoopCond"})


def _is(node: Node, op_type: str) -> bool:
    return node.op_type == op_type and node.domain == _DOMAIN


def is_cond_merge(g: Graph, node: Node, producers: dict[int, int]) -> bool:
    """Whether `node` is the Merge of an og.cond: two inputs, neither entering or
    carrying a loop frame (a while_loop's Merge takes an Enter and a NextIteration).
    Never raises."""
    if not _is(node, "Merge") or len(node.inputs) != 2:
        return False
    for i in node.inputs:
        p = producers.get(i) if i >= 0 else None
        if p is not None and (_is(g.nodes[p], "Enter") or _is(g.nodes[p], "NextIteration")):
            return False
    return True


@dataclasses.dataclass
class _Branch:
    """One side of one Merge: the ops it runs and the Switches it reads through."""
    members: set            # node indices of the branch (inner conds included)
    switches: set           # its own cond's Switch nodes it reads through
    preds: set              # predicate tensors found (Switch inputs, pivots)


def _walk_branch(g: Graph, producers: dict[int, int], start: int, side: int,
                 where: str) -> _Branch:
    """The branch whose result is tensor `start` (`side` 1: true, 0: false).

    Raises:
        ConversionError: the branch reads a Switch of its own cond through the
            other branch's output (the graph is not a cond og.cond builds).
    """
    members: set = set()
    switches: set = set()
    preds: set = set()
    seen: set = set()
    stack = [(start, 0, False)]  # (tensor, depth, reached through a control edge)
    while stack:
        item = stack.pop()
        t, depth, by_control = item
        n = t if by_control else (producers.get(t) if t >= 0 else None)
        if n is None or (n, depth) in seen:
            continue
        seen.add((n, depth))
        node = g.nodes[n]
        if by_control and not _is_pivot(g, producers, node):
            continue  # only a pivot's control edge says which branch an op is in
        if _is(node, "Switch") and len(node.inputs) == 2:
            if depth == 0:
                if not by_control and node.outputs[side] != t:
                    raise ConversionError(
                        f"{where}: its {'true' if side else 'false'} result reads the "
                        f"other branch's output of Switch {node.name!r}")
                switches.add(n)
                preds.add(node.inputs[1])
                continue
            members.add(n)
            stack.extend((i, depth - 1, False) for i in node.inputs if i >= 0)
            continue
        members.add(n)
        if node.domain == _DOMAIN and node.op_type in _LOOP_FRAME_OPS:
            # a while_loop inside the branch: kept whole as its ops, which the export
            # then names as having no ONNX equivalent
            continue
        inner = depth + 1 if is_cond_merge(g, node, producers) else depth
        stack.extend((i, inner, False) for i in node.inputs if i >= 0)
        stack.extend((c, depth, True) for c in node.control_inputs
                     if 0 <= c < len(g.nodes))
    return _Branch(members, switches, preds)


def _is_pivot(g: Graph, producers: dict[int, int], node: Node) -> bool:
    """An Identity of one output of Switch(pred, pred): a branch's pivot, which ops of
    constants only get a control edge from."""
    if node.op_type != "Identity" or node.domain not in ("", "ai.onnx") \
            or len(node.inputs) != 1 or node.inputs[0] < 0:
        return False
    p = producers.get(node.inputs[0])
    return p is not None and _is(g.nodes[p], "Switch") \
        and len(set(g.nodes[p].inputs)) == 1


def conds_as_ifs(g: Graph, merges: list[int], fetched=(), where: str = "") -> Graph:
    """A copy of `g` where the cond Merges `merges` (node indices) and every cond they
    hold are If nodes (node indices change). `fetched` are tensors read from outside
    the graph (a signature's outputs), for a Merge's value_index. The ops the Ifs took
    in are still listed: the caller keeps only what its outputs depend on.

    Raises:
        ConversionError: a cond's predicate cannot be found or differs between its
            Switches, or a branch reads the wrong output of its own Switch.
    """
    producers = g.producers()
    branches: dict[int, tuple[_Branch, _Branch]] = {}
    for m in merges:
        node = g.nodes[m]
        here = f"{where}cond merge {node.name!r}"
        branches[m] = tuple(_walk_branch(g, producers, node.inputs[side], side, here)
                            for side in (0, 1))
    # a Merge inside another listed Merge's branch is that cond's to rewrite
    inner = set()
    for m, sides in branches.items():
        inner |= {k for b in sides for k in b.members if k in branches and k != m}
    top = [m for m in merges if m not in inner]
    groups = _groups(top, branches)
    out = copy.copy(g)
    out.nodes = list(g.nodes)
    out.tensors = list(g.tensors)
    read = {i for node in g.nodes for i in node.inputs} | set(g.outputs) | set(fetched)
    gone: set = set()
    for group in groups:
        pred = _predicate(g, producers, group, branches, where)
        first = g.nodes[group[0]]
        name = first.name.rsplit("/", 1)[0] if "/" in first.name else first.name
        subgraphs = {}
        for side, key in ((1, "then_branch"), (0, "else_branch")):
            members = set().union(*(branches[m][side].members for m in group))
            switches = set().union(*(branches[m][side].switches for m in group))
            results = [g.nodes[m].inputs[side] for m in group]
            sub = _branch_graph(g, producers, members, switches, results,
                                f"{name}/{key}", read, group)
            subgraphs[key] = sub
        outputs = [g.nodes[m].outputs[0] for m in group]
        for m in group:  # the value_index output, where something reads it
            if len(g.nodes[m].outputs) > 1 and g.nodes[m].outputs[1] in read:
                outputs.append(g.nodes[m].outputs[1])
        out.nodes[group[0]] = Node("If", [pred], outputs, subgraphs,
                                   name=f"{name}/If", device=first.device)
        gone |= set(group[1:])  # the group's other Merges are now the If's outputs
    return _without_nodes(out, gone)


def _without_nodes(g: Graph, gone: set) -> Graph:
    """`g` without the nodes `gone`; control edges are renumbered (those to a node
    that went go too)."""
    if not gone:
        return g
    new_index, kept = {}, []
    for k, n in enumerate(g.nodes):
        if k not in gone:
            new_index[k] = len(kept)
            kept.append(n)
    g.nodes = [dataclasses.replace(n, control_inputs=[new_index[c] for c in n.control_inputs
                                                      if c in new_index])
               if n.control_inputs else n for n in kept]
    return g


def _groups(top: list[int], branches) -> list[list[int]]:
    """The Merges in `top` grouped by shared branch ops or Switches (one If each)."""
    parent = {m: m for m in top}

    def find(m):
        while parent[m] != m:
            parent[m] = parent[parent[m]]
            m = parent[m]
        return m

    owner: dict[tuple, int] = {}
    for m in top:
        for side in (0, 1):
            b = branches[m][side]
            for k in b.members | b.switches:
                other = owner.setdefault((side, k), m)
                if other != m:
                    parent[find(m)] = find(other)
    out: dict[int, list[int]] = {}
    for m in top:
        out.setdefault(find(m), []).append(m)
    return list(out.values())


def _predicate(g: Graph, producers, group, branches, where: str) -> int:
    """The predicate tensor of a group's cond, from its Switches or pivots."""
    preds = set()
    for m in group:
        for b in branches[m]:
            preds |= b.preds
    names = sorted(g.tensors[p].name for p in preds)
    if len(preds) != 1:
        what = (f"reads predicates {names}" if preds else
                "has no Switch to read its predicate from")
        raise ConversionError(f"{where}cond merge {g.nodes[group[0]].name!r} {what}: "
                              "it is not a cond og.cond builds")
    return next(iter(preds))


def _branch_graph(g: Graph, producers, members: set, switches: set, results: list[int],
                  name: str, read: set, group: list[int]) -> Graph:
    """The subgraph of one side of a cond: the branch ops its results depend on, each
    Switch output read as the Switch's data input (a name of the enclosing graph),
    outer values by name, and the results as outputs."""
    sub = Graph(name=name)
    local: dict[int, int] = {}  # g's tensor index -> sub's

    def ref(t: int) -> int:
        if t < 0:
            return t
        if t in local:
            return local[t]
        p = producers.get(t)
        if p in switches:
            src = g.nodes[p].inputs[0]
            k = ref(src)
            local[t] = k
            return k
        tensor = g.tensors[t]
        if p is None or p not in needed:
            # a value of the enclosing graph, read by name
            tensor = dataclasses.replace(tensor, kind=TensorKind.ACTIVATION, data=None)
        sub.tensors.append(tensor)
        local[t] = len(sub.tensors) - 1
        return local[t]

    needed = _needed(g, producers, results, members)
    position = {k: j for j, k in enumerate(sorted(needed))}
    nodes = []
    for k in sorted(needed):
        node = g.nodes[k]
        # control edges stay only for an inner cond to find its pivots by
        nodes.append(dataclasses.replace(
            node, inputs=[ref(i) for i in node.inputs],
            outputs=[ref(o) for o in node.outputs],
            control_inputs=[position[c] for c in node.control_inputs if c in position]))
    outputs = []
    for m, t in zip(group, results):
        k = ref(t)
        if producers.get(t) not in needed or k in outputs:
            # an outer value or one already listed: ONNX wants each branch output
            # made in the branch, so an Identity copies it
            alias = dataclasses.replace(sub.tensors[k], name=f"{sub.tensors[k].name}"
                                        f"__{name.rsplit('/', 1)[-1]}_{len(outputs)}",
                                        kind=TensorKind.ACTIVATION, data=None)
            sub.tensors.append(alias)
            a = len(sub.tensors) - 1
            nodes.append(Node("Identity", [k], [a], name=f"{sub.tensors[a].name}"))
            k = a
        outputs.append(k)
    then = name.endswith("then_branch")
    for m in group:  # the Merge's value_index: 1 where the true branch ran
        merge = g.nodes[m]
        if len(merge.outputs) > 1 and merge.outputs[1] in read:
            tensor = g.tensors[merge.outputs[1]]
            value = np.array(1 if then else 0, dtype=tensor.dtype.numpy)
            sub.tensors.append(dataclasses.replace(
                tensor, name=f"{tensor.name}__{name.rsplit('/', 1)[-1]}",
                kind=TensorKind.ACTIVATION, data=None))
            k = len(sub.tensors) - 1
            nodes.append(Node("Constant", [], [k], {"value": value},
                              name=sub.tensors[k].name))
            outputs.append(k)
    sub.nodes = nodes
    sub.outputs = outputs
    inner = [k for k, node in enumerate(sub.nodes)
             if is_cond_merge(sub, node, sub.producers())]
    if inner:
        sub = conds_as_ifs(sub, inner, where=f"{name}: ")
        sub = _pruned(sub)
    return sub


def _needed(g: Graph, producers, results: list[int], members: set) -> set:
    """The branch ops its results depend on, with the pivots (and what they read) of
    inner conds whose branches hold only ops of constants."""
    roots = list(results)
    while True:
        needed = _data_ancestors(g, producers, roots, members)
        extra = [g.nodes[c].outputs[0] for k in needed for c in g.nodes[k].control_inputs
                 if c in members and _is_pivot(g, producers, g.nodes[c])
                 and producers.get(g.nodes[c].inputs[0]) in members
                 and g.nodes[c].outputs[0] not in roots]
        if not extra:
            return needed
        roots.extend(dict.fromkeys(extra))


def _data_ancestors(g: Graph, producers, results: list[int], members: set) -> set:
    """The branch ops (`members`) the results depend on through data edges."""
    needed: set = set()
    stack = [t for t in results if t >= 0]
    seen: set = set()
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        p = producers.get(t)
        if p is None or p not in members or p in needed:
            continue
        needed.add(p)
        stack.extend(i for i in g.nodes[p].inputs if i >= 0)
    return needed


def _pruned(sub: Graph) -> Graph:
    """`sub` with only the nodes its outputs depend on and the tensors those read or
    write: an inner cond's If took its Switches and branch ops in, and a tensor left
    listed would read as a name of the enclosing graph."""
    producers = sub.producers()
    keep: set = set()
    stack = list(sub.outputs)
    by_name = {t.name: i for i, t in enumerate(sub.tensors)}
    seen: set = set()
    while stack:
        t = stack.pop()
        if t < 0 or t in seen:
            continue
        seen.add(t)
        p = producers.get(t)
        if p is None or p in keep:
            continue
        keep.add(p)
        node = sub.nodes[p]
        stack.extend(node.inputs)
        for inner in node.subgraphs():
            stack.extend(by_name[n] for n in outer_reads(inner) if n in by_name)
    nodes = [n for k, n in enumerate(sub.nodes) if k in keep]
    used = sorted({i for n in nodes for i in list(n.inputs) + list(n.outputs) if i >= 0}
                  | {i for i in sub.outputs if i >= 0})
    index = {old: new for new, old in enumerate(used)}
    sub.tensors = [sub.tensors[i] for i in used]
    sub.nodes = [dataclasses.replace(
        n, inputs=[index[i] if i >= 0 else i for i in n.inputs],
        outputs=[index[i] if i >= 0 else i for i in n.outputs], control_inputs=[])
        for n in nodes]
    sub.outputs = [index[i] for i in sub.outputs]
    return sub


def outer_reads(g: Graph) -> set[str]:
    """Names `g` (or a graph nested in it) reads that none of its nodes define.
    Never raises."""
    read = {g.tensors[i].name for n in g.nodes for i in n.inputs if i >= 0}
    read |= {g.tensors[i].name for i in g.outputs if i >= 0}
    for n in g.nodes:
        for inner in n.subgraphs():
            read |= outer_reads(inner)
    return read - {g.tensors[o].name for n in g.nodes for o in n.outputs if o >= 0} \
        - {g.tensors[i].name for i in g.inputs}


def branch_defined_names(g: Graph) -> set[str]:
    """Names the nodes of `g` and of the graphs nested in it define. Never raises."""
    names = {g.tensors[o].name for n in g.nodes for o in n.outputs if o >= 0}
    for n in g.nodes:
        for inner in n.subgraphs():
            names |= branch_defined_names(inner)
    return names
