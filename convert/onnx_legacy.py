"""Rewrites of pre-opset-9 constructs that onnx's version converter upgrades wrongly.

Scan before opset 9 was batched: an optional `sequence_lens` input came first, every
state and scan input carried a leading batch axis, scan inputs had time on axis 1, and
the body ran once per batch entry on unbatched values. onnx's Scan 8 -> 9 adapter
drops the batch axes from the model's declared inputs instead, so the upgraded model
no longer accepts its own inputs. Here such a Scan is first spelled, still in opset 8,
as the loops its specification describes:

    Loop over the batch b:                       (outer; its scan outputs stack on b)
        states = init_i[b];  seq_j = scan_j[b]
        Loop over time t < max_sequence_length:  (inner; its scan outputs stack on t)
            elements = seq_j[t]  (or [n_b - 1 - t] for a reversed input)
            run the body; with sequence_lens, an If keeps the old states and writes zero
            scan elements at steps t >= n_b (the padding the specification leaves open)

Loop, If, Gather, Shape, Sub, Cast, Less and Expand all exist in opset 8 with the
meaning they keep later, so the converter then upgrades the result faithfully.
"""

from __future__ import annotations

from ..errors import ConversionError

# Scan lost its batch axis in this opset.
UNBATCHED_SCAN_OPSET = 9

_DEFAULT_DOMAINS = ("", "ai.onnx")


def needs_scan_rewrite(proto, default_opset: int | None) -> bool:
    """Whether the model has a batched (opset < 9) Scan anywhere, subgraphs included."""
    if default_opset is None or default_opset >= UNBATCHED_SCAN_OPSET:
        return False
    return any(n.op_type == "Scan" and n.domain in _DEFAULT_DOMAINS
               for n in _all_nodes(proto.graph))


def rewrite_batched_scans(proto):
    """A copy of `proto` (default-domain opset < 9) with every Scan, in any graph,
    replaced by the equivalent Loop over the batch around a Loop over time.

    Raises:
        ConversionError: a Scan's inputs, outputs and body disagree (counts, missing
            body, no scan input), naming the node.
    """
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(proto)
    names = _Names(out.graph)
    _rewrite_graph(out.graph, names)
    return out


def _subgraphs(node):
    """The graphs held in a node's attributes (If branches, Loop/Scan bodies)."""
    for attr in node.attribute:
        if attr.g.ByteSize():
            yield attr.g
        yield from attr.graphs


def _all_nodes(graph):
    for node in graph.node:
        yield node
        for sub in _subgraphs(node):
            yield from _all_nodes(sub)


class _Names:
    """Fresh tensor names that clash with no name anywhere in the model."""

    def __init__(self, graph):
        self.taken: set[str] = set()
        self._collect(graph)
        self.count = 0

    def _collect(self, graph):
        for coll in (graph.input, graph.output, graph.value_info):
            self.taken.update(v.name for v in coll)
        self.taken.update(t.name for t in graph.initializer)
        for node in graph.node:
            self.taken.update(node.input)
            self.taken.update(node.output)
            for sub in _subgraphs(node):
                self._collect(sub)

    def fresh(self, hint: str) -> str:
        while True:
            self.count += 1
            name = f"{hint}__scan8_{self.count}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def _rewrite_graph(graph, names):
    nodes = []
    for node in graph.node:
        for sub in _subgraphs(node):
            _rewrite_graph(sub, names)
        if node.op_type == "Scan" and node.domain in _DEFAULT_DOMAINS:
            nodes.extend(_lower_scan(node, names))
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)


def _scan_parts(node):
    """(sequence_lens or '', inits, scans, body, directions) of an opset-8 Scan."""
    from onnx import helper

    where = f"Scan node {node.name!r}" if node.name else \
        f"the Scan node making {list(node.output)}"
    attrs = {a.name: a for a in node.attribute}
    if "body" not in attrs or "num_scan_inputs" not in attrs:
        raise ConversionError(f"{where}: opset-8 Scan needs the attributes body and "
                              "num_scan_inputs")
    body = attrs["body"].g
    m = int(helper.get_attribute_value(attrs["num_scan_inputs"]))
    rest = list(node.input[1:])
    n = len(rest) - m
    if m < 1 or n < 0 or len(body.input) != n + m or len(body.output) < n \
            or len(node.output) != len(body.output):
        raise ConversionError(
            f"{where}: {n} states, {m} scan inputs and {len(node.output)} outputs do not "
            f"fit a body of {len(body.input)} inputs and {len(body.output)} outputs")
    directions = list(helper.get_attribute_value(attrs["directions"])) \
        if "directions" in attrs else [0] * m
    if len(directions) != m or any(d not in (0, 1) for d in directions):
        raise ConversionError(f"{where}: directions {directions} must be {m} values of 0 "
                              "(forward) or 1 (reverse)")
    seq_lens = node.input[0] if len(node.input) else ""
    return seq_lens, rest[:n], rest[n:], body, directions


def _lower_scan(node, names):
    """The nodes that replace one opset-8 Scan (see the module docstring)."""
    from onnx import TensorProto, helper

    seq_lens, inits, scans, body, directions = _scan_parts(node)
    body = _with_fresh_names(body, names)
    n = len(inits)
    k = len(body.output) - n
    make = helper.make_node
    i64 = TensorProto.INT64

    def const(value):
        name = names.fresh("const")
        return name, make("Constant", [], [name],
                          value=helper.make_tensor(name, i64, [], [value]))

    zero, zero_node = const(0)
    one, one_node = const(1)
    shape, batch, max_len, last = (names.fresh(h) for h in ("shape", "batch", "max_len",
                                                             "last"))
    outer_nodes = [zero_node, one_node,
                   make("Shape", [scans[0]], [shape]),
                   make("Gather", [shape, zero], [batch], axis=0),
                   make("Gather", [shape, one], [max_len], axis=0),
                   make("Sub", [max_len, one], [last])]

    # --- the body of the Loop over time (one step of one batch entry)
    t, c_in, c_out = names.fresh("t"), names.fresh("cond_in"), names.fresh("cond_out")
    b = names.fresh("b")
    n_b = names.fresh("seq_len") if seq_lens else None
    seq = [names.fresh("seq") for _ in scans]
    step = [make("Identity", [c_in], [c_out])]
    live = None
    if seq_lens:
        t_f, n_f, live = names.fresh("t_f"), names.fresh("n_f"), names.fresh("live")
        step += [make("Cast", [t], [t_f], to=TensorProto.DOUBLE),
                 make("Cast", [n_b], [n_f], to=TensorProto.DOUBLE),
                 make("Less", [t_f, n_f], [live])]
    for j, (src, rev) in enumerate(zip(seq, directions)):
        idx = t
        if rev:
            back = names.fresh("rev_index")
            if seq_lens:
                n_last = names.fresh("seq_last")
                step += [make("Sub", [n_b, one], [n_last]),
                         make("Sub", [n_last, t], [back])]
                idx = _select(step, names, live, back, t, "index")
            else:
                step.append(make("Sub", [last, t], [back]))
                idx = back
        step.append(make("Gather", [src, idx], [body.input[n + j].name], axis=0))
    step.extend(body.node)
    state_out = [o.name for o in body.output[:n]]
    scan_out = [o.name for o in body.output[n:]]
    if seq_lens:
        state_out = [_select(step, names, live, new, old.name, "state")
                     for new, old in zip(state_out, body.input[:n])]
        scan_out = [_zero_unless(step, names, live, o) for o in body.output[n:]]
    step_graph = helper.make_graph(
        step, names.fresh("scan_step"),
        [helper.make_tensor_value_info(t, i64, []),
         helper.make_tensor_value_info(c_in, TensorProto.BOOL, [])] + list(body.input[:n]),
        [helper.make_tensor_value_info(c_out, TensorProto.BOOL, [])]
        + [_typed_like(o, name) for o, name in zip(body.output[:n], state_out)]
        + [_typed_like(o, name) for o, name in zip(body.output[n:], scan_out)],
        initializer=list(body.initializer), value_info=list(body.value_info))
    step_graph.sparse_initializer.extend(body.sparse_initializer)

    # --- the body of the Loop over the batch
    bc_in, bc_out = names.fresh("batch_cond_in"), names.fresh("batch_cond_out")
    init_b = [names.fresh("init") for _ in inits]
    fin_b = [names.fresh("final") for _ in inits]
    out_b = [names.fresh("scan_out") for _ in range(k)]
    entry = [make("Identity", [bc_in], [bc_out])]
    entry += [make("Gather", [x, b], [xb], axis=0) for x, xb in zip(inits, init_b)]
    entry += [make("Gather", [x, b], [xb], axis=0) for x, xb in zip(scans, seq)]
    if seq_lens:
        raw = names.fresh("seq_len_raw")
        entry += [make("Gather", [seq_lens, b], [raw], axis=0),
                  make("Cast", [raw], [n_b], to=i64)]
    entry.append(make("Loop", [max_len, ""] + init_b, fin_b + out_b, body=step_graph))
    entry_graph = helper.make_graph(
        entry, names.fresh("scan_batch_entry"),
        [helper.make_tensor_value_info(b, i64, []),
         helper.make_tensor_value_info(bc_in, TensorProto.BOOL, [])],
        [helper.make_tensor_value_info(bc_out, TensorProto.BOOL, [])]
        + [_typed_like(o, name, keep_shape=False)
           for o, name in zip(body.output, fin_b + out_b)])

    loop = make("Loop", [batch, ""], list(node.output), body=entry_graph,
                name=node.name or names.fresh("scan8_loop"))
    return outer_nodes + [loop]


def _with_fresh_names(body, names):
    """A copy of `body` whose own values (inputs, initializers, node outputs) have
    fresh names. Once inlined into a Loop, a body output becomes an intermediate value,
    and ONNX's shape inference confuses an intermediate with an outer value of the
    same name (Scan bodies often reuse the outer output names)."""
    from onnx import GraphProto

    out = GraphProto()
    out.CopyFrom(body)
    own = [v.name for v in out.input] + [t.name for t in out.initializer] \
        + [t.values.name for t in out.sparse_initializer] \
        + [o for nd in out.node for o in nd.output if o]
    mapping = {name: names.fresh(name) for name in dict.fromkeys(own)}
    for coll in (out.input, out.output, out.value_info):
        for v in coll:
            v.name = mapping.get(v.name, v.name)
    for t in out.initializer:
        t.name = mapping[t.name]
    for t in out.sparse_initializer:
        t.values.name = mapping[t.values.name]
    _rename_uses(out, mapping, top=True)
    return out


def _rename_uses(graph, mapping, top=False):
    """Apply `mapping` to the node inputs (and, at the top, outputs) of `graph` and to
    the outer-scope references of its nested graphs, stopping where a nested graph
    defines the name itself."""
    for nd in graph.node:
        nd.input[:] = [mapping.get(i, i) for i in nd.input]
        if top:
            nd.output[:] = [mapping.get(o, o) for o in nd.output]
        for sub in _subgraphs(nd):
            local = {v.name for v in sub.input} | {t.name for t in sub.initializer} \
                | {o for x in sub.node for o in x.output}
            inner = {k: v for k, v in mapping.items() if k not in local}
            for v in sub.output:
                v.name = inner.get(v.name, v.name)
            _rename_uses(sub, inner)


def _select(nodes, names, live, when_live, otherwise, hint):
    """Append If(live, when_live, otherwise) to `nodes`; returns its output name."""
    from onnx import helper

    out = names.fresh(hint)
    branches = []
    for src in (when_live, otherwise):
        res = names.fresh(hint + "_branch")
        branches.append(helper.make_graph(
            [helper.make_node("Identity", [src], [res])], names.fresh(hint + "_if"), [],
            [helper.make_empty_tensor_value_info(res)]))
    nodes.append(helper.make_node("If", [live], [out], then_branch=branches[0],
                                  else_branch=branches[1]))
    return out


def _zero_unless(nodes, names, live, info):
    """The scan element `info` at live steps, zeros of its shape after the sequence
    ends (the element itself when its type is unknown or not numeric)."""
    from onnx import TensorProto, helper

    elem = info.type.tensor_type.elem_type if info.type.HasField("tensor_type") else 0
    if elem in (0, TensorProto.STRING):
        return info.name
    zero, shape, zeros = names.fresh("zero"), names.fresh("shape"), names.fresh("zeros")
    nodes += [helper.make_node("Constant", [], [zero],
                               value=helper.make_tensor(zero, elem, [], [0])),
              helper.make_node("Shape", [info.name], [shape]),
              helper.make_node("Expand", [zero, shape], [zeros])]
    return _select(nodes, names, live, info.name, zeros, "scan_elem")


def _typed_like(info, name, keep_shape=True):
    """A ValueInfo called `name` with the type of `info` (element type only unless
    keep_shape)."""
    from onnx import ValueInfoProto

    out = ValueInfoProto()
    out.CopyFrom(info)
    out.name = name
    if not keep_shape and out.type.HasField("tensor_type"):
        out.type.tensor_type.ClearField("shape")
    return out
