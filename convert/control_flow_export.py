"""og.cond and og.while_loop written as ONNX If and Loop nodes, for the export.

A graph built with the training API holds control flow as the paper builds it, and
ONNX has no dead values, so the export rewrites it into ONNX's functional control
flow, as tf2onnx does for TensorFlow graphs. The rewrite reads only the dataflow, so
it also works on a loaded `.og` file.

**cond**: every outside tensor a branch reads comes in through a Switch on the
predicate (output 1 for the true branch, 0 for the false one), the branch's ops read
those, and a Merge per result joins the branches (input 1 the true result). It becomes
an If whose then/else subgraphs hold the ops each branch's results need, reading the
Switches' data inputs from the enclosing graph by name.

* A branch is what the Merge's input depends on, back to the Switches of its own cond.
  A Merge met on the way opens an inner cond and its Switches close it, so the walk
  counts the nesting depth; a while_loop met on the way (at its Exit) is taken whole
  and the walk goes on from what enters it.
* The predicate is the Switches' second input; a branch of constants only (no Switch on
  its data path) finds it through the control edge its ops have from the branch's
  pivot, an Identity of Switch(pred, pred).
* Merges whose branches share an op become one If with several outputs.
* TF2's lowering of If (convert_variables_to_constants_v2's graphs) puts Identity
  chains (Func/<cond>/then/_N/input/_M, .../output/_K) between the Switches, the branch
  ops and the Merge, which are ops of the branch as any other; its Merge takes the then
  result first, so which input is the true one is what Switch outputs each reads; its
  constants have a control edge from a NoOp (input_control_node) that has one from the
  pivot, so a control edge reaches the pivot through such NoOps.

**while_loop**: each loop variable enters the frame (Enter), a Merge joins it with the
value of the last iteration (NextIteration), the condition reads the Merges, a
Switch per variable on the LoopCond sends it to the body (output 1) or out of the loop
(output 0, Exit); outside tensors enter through constant Enters. It becomes a Loop
carrying the variables (the frame's own counter too), whose body runs the condition
and, in an If on it, the body; the If's else branch hands the variables back unchanged
and stops the Loop. So the condition is checked before every iteration, the first
too, as TF1 does, at the price of one last pass that only evaluates it.

Inner structures are rewritten inside the subgraphs of the outer ones. Control edges do
not carry over (ONNX has none): a subgraph keeps the ops its results depend on, so an
op only a control edge ran (a moving-average update) is left out, as it is from the
rest of a signature's export. map_fn's and scan's accumulators are made ONNX
sequences before (`accumulator_export`), so a Loop carries them as any value;
gradient stacks stay as they are, and the export names them as ops without an ONNX
equivalent.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ConversionError
from ..format.ir import DType, Graph, Node, TensorKind

_DOMAIN = "onegraph"


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


def holds_control_flow(g: Graph, nodes) -> bool:
    """Whether any of g's nodes `nodes` is a cond's Merge or a loop's Exit (what
    `as_functional` rewrites). Never raises."""
    producers = g.producers()
    return any(_is(g.nodes[k], "Exit") or is_cond_merge(g, g.nodes[k], producers)
               for k in nodes)


# ------------------------------------------------------------------------ structures

@dataclasses.dataclass
class _Frame:
    """A while_loop's frame, as its nodes say."""
    name: str
    enters: list            # the loop variables' Enter nodes, in Merge order
    merges: list
    switches: list
    exits: list             # Exit node per variable, or None
    nexts: list             # NextIteration node per variable
    loop_cond: int
    constants: list         # constant Enters (outside tensors the frame reads)
    cond_nodes: set = dataclasses.field(default_factory=set)
    body_nodes: set = dataclasses.field(default_factory=set)

    def nodes(self) -> set:
        return set(self.enters) | set(self.merges) | set(self.switches) \
            | {x for x in self.exits if x is not None} | set(self.nexts) \
            | {self.loop_cond} | set(self.constants) | self.cond_nodes | self.body_nodes

    def entered(self, g: Graph) -> list[int]:
        """The tensors entering the frame (initial values, then captured tensors)."""
        return [g.nodes[e].inputs[0] for e in self.enters + self.constants]


@dataclasses.dataclass
class _Branch:
    """One side of one cond Merge: the ops it runs and the Switches it reads through."""
    members: set
    switches: set
    preds: set
    sides: dict = dataclasses.field(default_factory=dict)  # Switch output read -> Switch


class _Scope:
    """What the walks of one graph share: producers, consumers and frames; `taken`,
    the names used anywhere in the export (new names are made unique against it);
    `cut`, the tensors a signature feeds (graph inputs: a walk stops at them)."""

    def __init__(self, g: Graph, where: str, taken: set, cut=frozenset()):
        self.g, self.where, self.taken, self.cut = g, where, taken, cut
        self.producers = g.producers()
        self.consumers: dict[int, list[int]] = {}
        for k, node in enumerate(g.nodes):
            for i in node.inputs:
                if i >= 0:
                    self.consumers.setdefault(i, []).append(k)
        self.frames = _frames(self)
        self.exit_frame = {x: f for f in self.frames.values() for x in f.exits
                           if x is not None}


def _frames(scope: _Scope) -> dict:
    """{frame name: _Frame} of the scope's graph. A frame that is not one og.while_loop
    builds is left out: its ops stay, and the export names them."""
    g = scope.g
    by_frame: dict[str, list[int]] = {}
    for k, node in enumerate(g.nodes):
        if _is(node, "Enter") and len(node.inputs) == 1 and len(node.outputs) == 1:
            by_frame.setdefault(str(node.attributes.get("frame_name", "")), []).append(k)
    frames = {}
    for name, enters in by_frame.items():
        frame = _frame(scope, name, enters)
        if frame is not None:
            frames[name] = frame
    return frames


def _frame(scope: _Scope, name: str, enters: list[int]) -> _Frame | None:
    g, producers = scope.g, scope.producers

    def consumer(t: int, op_type: str, position: int = 0):
        for c in scope.consumers.get(t, ()):
            node = g.nodes[c]
            if _is(node, op_type) and len(node.inputs) > position \
                    and node.inputs[position] == t \
                    and (op_type != "Switch" or _on_loop_cond(node)):
                return c
        return None

    def _on_loop_cond(switch: Node) -> bool:
        # a cond in the condition also switches the Merge, on its own predicate
        p = producers.get(switch.inputs[1]) if len(switch.inputs) == 2 else None
        return p is not None and _is(g.nodes[p], "LoopCond")

    constants = [e for e in enters if g.nodes[e].attributes.get("is_constant")]
    rows = []
    for e in enters:
        if e in constants:
            continue
        m = consumer(g.nodes[e].outputs[0], "Merge")
        if m is None or len(g.nodes[m].inputs) != 2:
            return None
        nx = producers.get(g.nodes[m].inputs[1])
        sw = consumer(g.nodes[m].outputs[0], "Switch")
        if nx is None or not _is(g.nodes[nx], "NextIteration") or sw is None \
                or len(g.nodes[sw].inputs) != 2:
            return None
        rows.append((m, e, sw, consumer(g.nodes[sw].outputs[0], "Exit"), nx))
    if not rows or all(r[3] is None for r in rows):
        return None
    rows.sort()
    conds = {g.nodes[sw].inputs[1] for _, _, sw, _, _ in rows}
    lc = producers.get(next(iter(conds))) if len(conds) == 1 else None
    if lc is None or not _is(g.nodes[lc], "LoopCond") or not g.nodes[lc].inputs:
        return None
    return _Frame(name, [r[1] for r in rows], [r[0] for r in rows], [r[2] for r in rows],
                  [r[3] for r in rows], [r[4] for r in rows], lc, constants)


def _walk_frame(scope: _Scope, frame: _Frame) -> None:
    """Fill the frame's condition and body nodes: what the LoopCond's input and the
    NextIterations' inputs depend on, back to the frame's Merges, its Switches' body
    outputs and its constant Enters.

    Raises:
        ConversionError: a signature feeds a tensor computed inside the loop (a Loop
            computes its body itself; it cannot take one iteration's value).
    """
    g = scope.g
    stops = set(frame.merges) | set(frame.constants) | set(frame.switches)
    frame.cond_nodes = _upstream(scope, [g.nodes[frame.loop_cond].inputs[0]], stops)
    frame.body_nodes = _upstream(scope, [g.nodes[n].inputs[0] for n in frame.nexts], stops)
    fed = [g.tensors[o].name for n in sorted(frame.cond_nodes | frame.body_nodes)
           for o in g.nodes[n].outputs if o in scope.cut]
    if fed:
        raise ConversionError(f"{scope.where}signature input {fed[0]!r} is computed inside "
                              f"while_loop {frame.name!r}: an ONNX Loop cannot take it "
                              "from outside; feed a value the loop reads instead")


def _upstream(scope: _Scope, tensors: list[int], stops: set = frozenset(),
              within: set | None = None) -> set:
    """Nodes the tensors depend on through data edges, not past the nodes `stops` nor
    outside `within` (None: anywhere)."""
    found: set = set()
    stack = [t for t in tensors if t >= 0]
    while stack:
        t = stack.pop()
        n = scope.producers.get(t)
        if n is None or n in stops or n in found or (within is not None and n not in within):
            continue
        found.add(n)
        stack.extend(i for i in scope.g.nodes[n].inputs if i >= 0)
    return found


def _walk_branch(scope: _Scope, start: int) -> _Branch:
    """The branch whose result is tensor `start`: its ops, the Switches of its own cond
    it reads, their predicates and which of their outputs (0, 1) it reads. Never
    raises (`_cond_branches` judges the outputs read)."""
    g, producers = scope.g, scope.producers
    members: set = set()
    switches: set = set()
    preds: set = set()
    sides: dict = {}
    seen: set = set()
    stack = [(start, 0, False)]  # (tensor, or node after a control edge; depth; edge)
    while stack:
        t, depth, by_control = stack.pop()
        if not by_control and t in scope.cut:
            continue  # fed: a graph input of the export, read by name
        n = t if by_control else (producers.get(t) if t >= 0 else None)
        if n is None or (n, depth) in seen:
            continue
        seen.add((n, depth))
        node = g.nodes[n]
        frame = scope.exit_frame.get(n)
        if frame is not None:  # a while_loop in the branch: whole, then what enters it
            members |= frame.nodes()
            stack.extend((i, depth, False) for i in frame.entered(g) if i >= 0)
            continue
        if _is(node, "Switch") and len(node.inputs) == 2:
            if depth == 0:
                switches.add(n)
                preds.add(node.inputs[1])
                sides.setdefault(node.outputs.index(t) if t in node.outputs else -1, n)
                continue
            members.add(n)
            stack.extend((i, depth - 1, False) for i in node.inputs if i >= 0)
            continue
        members.add(n)
        inner = depth + 1 if is_cond_merge(g, node, producers) else depth
        stack.extend((i, inner, False) for i in node.inputs if i >= 0)
        # only a pivot's control edge says which branch an op is in (TF2's lowering
        # reaches it through a NoOp, the function call's input_control_node)
        pivots, relays = _pivot_links(g, producers, node)
        if pivots:
            members |= relays
            stack.extend((c, depth, False) for p in pivots for c in g.nodes[p].outputs[:1])
    return _Branch(members, switches, preds, sides)


def _cond_branches(scope: _Scope, m: int, where: str) -> tuple:
    """(false branch, true branch, position of the true result among Merge `m`'s
    inputs). og.cond and TF1 give the true result second, TF2's lowering of If first:
    the Switch outputs each input reads say which it is (1: the true side).

    Raises:
        ConversionError: a branch reads both outputs of its cond's Switches, or both
            branches read the same output.
    """
    g = scope.g
    walked = [_walk_branch(scope, i) for i in g.nodes[m].inputs]
    read = [set(b.sides) for b in walked]
    # the order more of the outputs read agree with (a tie: og's and TF1's)
    true_at = 0 if len(read[0] & {1}) + len(read[1] & {0}) \
        > len(read[1] & {1}) + len(read[0] & {0}) else 1
    for position, b in enumerate(walked):
        side = 1 if position == true_at else 0
        wrong = [k for k in b.sides if k != side]
        if wrong:
            raise ConversionError(
                f"{where}: its {'true' if side else 'false'} result reads the other "
                f"branch's output of Switch {g.nodes[b.sides[wrong[0]]].name!r}")
    return walked[1 - true_at], walked[true_at], true_at


def _pivot_links(g: Graph, producers: dict[int, int], node: Node,
                 within: set | None = None) -> tuple[set, set]:
    """(pivots, relays): the pivots `node` has a control edge from, directly or through
    NoOps that only relay control edges (TF2's lowering puts one between a branch's
    pivot and its ops), with those NoOps; no relays without a pivot. `within`: only
    nodes among these. Never raises."""
    pivots, relays, seen = set(), set(), set()
    stack = list(node.control_inputs)
    while stack:
        c = stack.pop()
        if not 0 <= c < len(g.nodes) or c in seen or (within is not None and c not in within):
            continue
        seen.add(c)
        other = g.nodes[c]
        if _is_pivot(g, producers, other):
            pivots.add(c)
        elif _is(other, "NoOp") and not other.inputs and not other.outputs:
            relays.add(c)
            stack.extend(other.control_inputs)
    return pivots, (relays if pivots else set())


def _is_pivot(g: Graph, producers: dict[int, int], node: Node) -> bool:
    """An Identity of one output of Switch(pred, pred): a branch's pivot, which ops of
    constants only get a control edge from."""
    if node.op_type != "Identity" or node.domain not in ("", "ai.onnx") \
            or len(node.inputs) != 1 or node.inputs[0] < 0:
        return False
    p = producers.get(node.inputs[0])
    return p is not None and _is(g.nodes[p], "Switch") \
        and len(set(g.nodes[p].inputs)) == 1


# --------------------------------------------------------------------------- rewrite

def as_functional(g: Graph, candidates=None, fetched=(), where: str = "",
                  taken: set | None = None, cut=frozenset()) -> Graph:
    """A copy of `g` where og.cond's Switch/Merge and og.while_loop's frames are If
    and Loop nodes (node indices change; the ops they took in are still listed, for
    the caller to keep only what its outputs depend on).

    `candidates` (node indices, None: all) limits the rewrite to the structures whose
    Merge or Exit is among them (a signature's part of a training graph); `fetched`
    are tensors read from outside the graph, for a Merge's value_index; `taken` the
    names used in the whole model (default: g's, nested graphs' included), which new
    names avoid and join; `cut` the tensors a signature feeds.

    Raises:
        ConversionError: a cond's predicate cannot be found or differs between its
            Switches, a branch reads the wrong output of its own Switch, or a signature
            feeds a tensor computed inside a loop. (A loop frame that is not one
            og.while_loop builds stays as it is.)
    """
    scope = _Scope(g, where, used_names(g) if taken is None else taken, cut)
    producers = scope.producers

    def wanted(k: int) -> bool:
        return candidates is None or k in candidates

    frames = [f for f in scope.frames.values()
              if any(x is not None and wanted(x) for x in f.exits)]
    for f in frames:
        _walk_frame(scope, f)
    merges = [k for k, node in enumerate(g.nodes)
              if wanted(k) and is_cond_merge(g, node, producers)]
    branches, true_at = {}, {}
    for m in merges:
        here = f"{where}cond merge {g.nodes[m].name!r}"
        *branches[m], true_at[m] = _cond_branches(scope, m, here)
    # a structure inside another one's subgraphs is that one's to rewrite
    inside: set = set()
    for m, sides in branches.items():
        inside |= {k for b in sides for k in b.members if k != m}
    for f in frames:
        inside |= f.cond_nodes | f.body_nodes
    top_merges = [m for m in merges if m not in inside]
    top_frames = [f for f in frames if not any(x in inside for x in f.exits)]
    if not top_merges and not top_frames:
        return g
    out = g.copy()
    read = {i for node in g.nodes for i in node.inputs} | set(g.outputs) | set(fetched)
    gone: set = set()
    for group in _groups(scope, top_merges, branches):
        gone |= _cond_as_if(scope, out, group, branches, true_at, read)
    for f in top_frames:
        gone |= _loop_as_loop(scope, out, f)
    return _without_nodes(out, gone)


def used_names(g: Graph) -> set[str]:
    """The tensor names of `g` and of every graph nested in it. Never raises."""
    names = {t.name for t in g.tensors}
    for node in g.nodes:
        for inner in node.subgraphs():
            names |= used_names(inner)
    return names


def _cond_as_if(scope: _Scope, out: Graph, group: list[int], branches, true_at: dict,
                read: set) -> set:
    """Put the If of one group of a cond's Merges in `out` (at the first Merge's
    place); returns the other Merges' indices, which the If replaces. `true_at`: per
    Merge, which of its inputs is the true result."""
    g = scope.g
    pred = _predicate(g, group, branches, scope.where)
    first = g.nodes[group[0]]
    name = first.name.rsplit("/", 1)[0] if "/" in first.name else first.name
    subgraphs = {}
    for side, key in ((1, "then_branch"), (0, "else_branch")):
        members = set().union(*(branches[m][side].members for m in group))
        switches = set().union(*(branches[m][side].switches for m in group))
        renamed = {g.nodes[s].outputs[k]: g.nodes[s].inputs[0]
                   for s in switches for k in (0, 1)}
        at = {m: true_at[m] if side else 1 - true_at[m] for m in group}
        results = [g.nodes[m].inputs[at[m]] for m in group]
        needed = _needed(scope, results, members)
        sub = _subgraph(scope, needed, renamed, [], results, f"{name}/{key}",
                        recurse=False)
        for m in group:  # the Merge's value_index: which of its inputs this branch is
            merge = g.nodes[m]
            if len(merge.outputs) > 1 and merge.outputs[1] in read:
                tensor = g.tensors[merge.outputs[1]]
                _constant_output(sub, np.array(at[m], tensor.dtype.numpy),
                                 f"{tensor.name}__{key}", scope.taken)
        subgraphs[key] = _functional_subgraph(sub, f"{name}/{key}: ", scope.taken)
    outputs = [g.nodes[m].outputs[0] for m in group]
    for m in group:
        if len(g.nodes[m].outputs) > 1 and g.nodes[m].outputs[1] in read:
            outputs.append(g.nodes[m].outputs[1])
    out.nodes[group[0]] = Node("If", [pred], outputs, subgraphs, name=f"{name}/If",
                               device=first.device)
    return set(group[1:])


def _loop_as_loop(scope: _Scope, out: Graph, f: _Frame) -> set:
    """Put the Loop of frame `f` in `out` (at its first Exit's place); returns the
    frame's other Exits, which the Loop replaces."""
    g, taken = scope.g, scope.taken
    entering = {g.nodes[e].outputs[0]: g.nodes[e].inputs[0] for e in f.constants}
    merged = [g.nodes[m].outputs[0] for m in f.merges]
    # the body: the condition on the variables, then an If that runs the body or
    # hands the variables back and stops
    body = _subgraph(scope, _needed(scope, [g.nodes[f.loop_cond].inputs[0]], f.cond_nodes),
                     dict(entering), merged, [], f"{f.name}/body", recurse=False)
    iteration = body.add_tensor(fresh_name(f"{f.name}/iteration", taken), DType.INT64, ())
    going = body.add_tensor(fresh_name(f"{f.name}/cond_in", taken), DType.BOOL, ())
    body.inputs = [iteration, going] + body.inputs
    renamed = dict(entering)
    for sw, m in zip(f.switches, merged):
        renamed[g.nodes[sw].outputs[1]] = m
    results = [g.nodes[n].inputs[0] for n in f.nexts]
    # what the body reads of the condition's values (a closure) the Loop body has
    # computed already: the If's branch reads it from there
    then = _subgraph(scope, _needed(scope, results, f.body_nodes - f.cond_nodes), renamed,
                     [], results, f"{f.name}/run_body")
    _constant_output(then, np.array(True), f"{f.name}/continue", taken)
    stop = _subgraph(scope, set(), {}, [], merged, f"{f.name}/stop")
    _constant_output(stop, np.array(False), f"{f.name}/stop_now", taken)
    condition = body.find_tensor(g.tensors[g.nodes[f.loop_cond].inputs[0]].name)
    if condition is None:  # the condition is an outside value (a constant, an Enter)
        condition = _outer(body, g.tensors[entering.get(g.nodes[f.loop_cond].inputs[0],
                                                        g.nodes[f.loop_cond].inputs[0])])
    nexts = []
    for m in merged:
        t = g.tensors[m]
        nexts.append(_like(body, t, fresh_name(f"{t.name}__next", taken)))
    keep_going = body.add_tensor(fresh_name(f"{f.name}/keep_going", taken), DType.BOOL, ())
    body.nodes.append(Node("If", [condition], nexts + [keep_going],
                           {"then_branch": then, "else_branch": stop},
                           name=f"{f.name}/step"))
    body.outputs = [keep_going] + nexts
    body = _functional_subgraph(body, f"{f.name}/body: ", taken)
    start = out.add_tensor(fresh_name(f"{f.name}/start", taken), DType.BOOL, (),
                           TensorKind.CONSTANT, np.array(True))
    outputs = []
    for k, x in enumerate(f.exits):
        if x is not None:
            outputs.append(g.nodes[x].outputs[0])
        else:
            t = g.tensors[merged[k]]
            outputs.append(_like(out, t, fresh_name(f"{t.name}__final", taken)))
    exits = [x for x in f.exits if x is not None]
    inits = [g.nodes[e].inputs[0] for e in f.enters]
    out.nodes[exits[0]] = Node("Loop", [-1, start] + inits, outputs, {"body": body},
                               name=f"{f.name}/Loop", device=g.nodes[exits[0]].device)
    return set(exits[1:])


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


def _groups(scope: _Scope, top: list[int], branches) -> list[list[int]]:
    """The Merges in `top` grouped by shared branch ops or Switches (one If each).
    Merges one of which depends on the other stay apart: a gradient's cond reads the
    forward cond's Switches, and also its output, so one If would feed itself."""
    group_of = {m: [m] for m in top}
    upstream: dict[int, set] = {}

    def feeds(a: int, b: int) -> bool:  # whether Merge a's output reaches cond b
        if b not in upstream:
            nodes = set().union(*(x.members | x.switches for x in branches[b]))
            outside = [i for k in nodes for i in scope.g.nodes[k].inputs
                       if i >= 0 and scope.producers.get(i) not in nodes]
            upstream[b] = _upstream(scope, outside)
        return a in upstream[b]

    owner: dict[tuple, int] = {}
    for m in top:
        for side in (0, 1):
            b = branches[m][side]
            for k in b.members | b.switches:
                other = owner.setdefault((side, k), m)
                mine, theirs = group_of[m], group_of[other]
                if mine is theirs or any(feeds(a, b) or feeds(b, a)
                                         for a in mine for b in theirs):
                    continue
                mine.extend(theirs)
                for x in theirs:
                    group_of[x] = mine
    out, seen = [], set()
    for m in top:
        if id(group_of[m]) not in seen:
            seen.add(id(group_of[m]))
            out.append(group_of[m])
    return out


def _predicate(g: Graph, group, branches, where: str) -> int:
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


# ------------------------------------------------------------------------- subgraphs

def _needed(scope: _Scope, results: list[int], members: set) -> set:
    """The ops among `members` the results depend on through data edges, with the
    pivots (and what they read) of inner conds whose branches hold only constants."""
    g = scope.g
    roots = list(results)
    while True:
        needed = _upstream(scope, roots, within=members)
        extra, relays = [], set()
        for k in needed:
            pivots, through = _pivot_links(g, scope.producers, g.nodes[k], members)
            inner = [p for p in pivots if scope.producers.get(g.nodes[p].inputs[0]) in members]
            if inner:  # an inner cond's pivot: kept with the NoOps relaying its edge
                relays |= through
                extra.extend(g.nodes[p].outputs[0] for p in inner
                             if g.nodes[p].outputs[0] not in roots)
        if not extra:
            return needed | relays
        roots.extend(dict.fromkeys(extra))


def _subgraph(scope: _Scope, nodes: set, renamed: dict[int, int], inputs: list[int],
              results: list[int], name: str, recurse: bool = True) -> Graph:
    """Graph `name` of the scope's nodes `nodes`: a tensor in `renamed` is read as the
    tensor it maps to; `inputs` (tensors) are its inputs, `results` its outputs (an
    Identity copies a result made outside or listed twice, as ONNX wants each output
    made in its graph); other values, and fed ones, are read by name from the
    enclosing graph. `recurse`: rewrite the control flow inside it now (else the
    caller does)."""
    g, producers, taken = scope.g, scope.producers, scope.taken
    sub = Graph(name=name)
    local: dict[int, int] = {}

    def ref(t: int) -> int:
        if t < 0:
            return t
        t = _follow(renamed, t)
        if t not in local:
            tensor = g.tensors[t]
            if (producers.get(t) not in nodes or t in scope.cut) and t not in inputs:
                # a value of the enclosing graph (its constants and variables too, so
                # a weight is written once, where the outermost graph holds it)
                tensor = dataclasses.replace(tensor, kind=TensorKind.ACTIVATION, data=None)
            sub.tensors.append(tensor)
            local[t] = len(sub.tensors) - 1
        return local[t]

    sub.inputs = [ref(t) for t in inputs]
    position = {k: j for j, k in enumerate(sorted(nodes))}
    for k in sorted(nodes):
        node = g.nodes[k]
        # control edges stay only for an inner cond to find its pivots by
        sub.nodes.append(dataclasses.replace(
            node, inputs=[ref(i) for i in node.inputs],
            outputs=[_computed(sub, g.tensors[o], taken) if o in scope.cut else ref(o)
                     for o in node.outputs],
            control_inputs=[position[c] for c in node.control_inputs if c in position]))
    made = {o for node in sub.nodes for o in node.outputs}
    for t in results:
        k = ref(t)
        if k not in made or k in sub.outputs:
            source = sub.tensors[k]
            alias = _like(sub, source, fresh_name(f"{source.name}__{name.rsplit('/', 1)[-1]}",
                                              taken))
            sub.nodes.append(Node("Identity", [k], [alias], name=sub.tensors[alias].name))
            k = alias
        sub.outputs.append(k)
    return _functional_subgraph(sub, f"{name}: ", taken) if recurse else sub


def _computed(sub: Graph, tensor, taken: set) -> int:
    """A fresh value for an output a signature feeds of a node kept for another of
    its outputs (the fed name is the graph input)."""
    return _like(sub, tensor, fresh_name(f"{tensor.name}__computed", taken))


def _follow(renamed: dict[int, int], t: int) -> int:
    seen = set()
    while t in renamed and t not in seen:
        seen.add(t)
        t = renamed[t]
    return t


def _outer(sub: Graph, tensor) -> int:
    """Index in `sub` of a value of the enclosing graph read by name."""
    k = sub.find_tensor(tensor.name)
    if k is not None:
        return k
    sub.tensors.append(dataclasses.replace(tensor, kind=TensorKind.ACTIVATION, data=None))
    return len(sub.tensors) - 1


def _like(graph: Graph, tensor, name: str) -> int:
    """Append to `graph` a value named `name` of `tensor`'s type (a sequence stays
    one); returns its index."""
    graph.tensors.append(dataclasses.replace(tensor, name=name, kind=TensorKind.ACTIVATION,
                                             data=None, quantization=None))
    return len(graph.tensors) - 1


def _constant_output(sub: Graph, value: np.ndarray, name: str, taken: set) -> None:
    """Append an output of `sub` made by a Constant node holding `value`."""
    k = sub.add_tensor(fresh_name(name, taken), DType.from_numpy(value.dtype), value.shape)
    sub.nodes.append(Node("Constant", [], [k], {"value": value}, name=sub.tensors[k].name))
    sub.outputs.append(k)


def fresh_name(name: str, taken: set) -> str:
    """`name`, or `name_1`, `name_2`, ... the first not in `taken` (then taken)."""
    candidate, k = name, 0
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    taken.add(candidate)
    return candidate


def _functional_subgraph(sub: Graph, where: str, taken: set) -> Graph:
    """`sub` with its own control flow rewritten and only what its outputs need."""
    if not holds_control_flow(sub, range(len(sub.nodes))):
        return _pruned(sub) if any(n.control_inputs for n in sub.nodes) else sub
    return _pruned(as_functional(sub, where=where, taken=taken))


def _pruned(sub: Graph) -> Graph:
    """`sub` with only the nodes its outputs depend on and the tensors those read or
    write: an inner If or Loop took in ops still listed, and a tensor left listed
    would read as a name of the enclosing graph. Control edges go."""
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
                  | {i for i in sub.outputs + sub.inputs if i >= 0}
                  | {by_name[n] for node in nodes for inner in node.subgraphs()
                     for n in outer_reads(inner) if n in by_name})
    index = {old: new for new, old in enumerate(used)}
    sub.tensors = [sub.tensors[i] for i in used]
    sub.nodes = [dataclasses.replace(
        n, inputs=[index[i] if i >= 0 else i for i in n.inputs],
        outputs=[index[i] if i >= 0 else i for i in n.outputs], control_inputs=[])
        for n in nodes]
    sub.outputs = [index[i] for i in sub.outputs]
    sub.inputs = [index[i] for i in sub.inputs]
    return sub


def outer_reads(g: Graph) -> set[str]:
    """Names `g` (or a graph nested in it) reads from the graphs around it: read or
    listed as outputs, and neither made by its nodes, nor its inputs, nor its own
    constants. Never raises."""
    read = {g.tensors[i].name for n in g.nodes for i in n.inputs if i >= 0}
    read |= {g.tensors[i].name for i in g.outputs if i >= 0}
    for n in g.nodes:
        for inner in n.subgraphs():
            read |= outer_reads(inner)
    return read - {g.tensors[o].name for n in g.nodes for o in n.outputs if o >= 0} \
        - {g.tensors[i].name for i in g.inputs} \
        - {t.name for t in g.tensors if t.data is not None}


def defined_names(g: Graph) -> set[str]:
    """Names the nodes of `g` and of the graphs nested in it define, with the nested
    graphs' inputs. Never raises."""
    names = {g.tensors[o].name for n in g.nodes for o in n.outputs if o >= 0}
    for n in g.nodes:
        for inner in n.subgraphs():
            names |= defined_names(inner) | {inner.tensors[i].name for i in inner.inputs}
    return names
