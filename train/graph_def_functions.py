"""og.import_graph_def's converters for TF2's functional ops: a GraphDef's function
library (FunctionDefs), If/StatelessIf, While/StatelessWhile, Case/StatelessCase,
PartitionedCall/StatefulPartitionedCall and calls of a library function by name.

A function call imports the callee's body in place (under a name scope named after
the calling node), its input arguments bound to the call's inputs. If becomes og.cond
and Case og.switch_case, each branch importing its branch function; While becomes
og.while_loop, the cond and body functions imported inside the loop. So the Session
runs them and onegraph.convert.to_onnx exports them (If/Loop) from og's IR alone.

Inside a FunctionDef a node's input names an output as "node:output_arg:index" (the
index counts within that output argument) or an input argument by its bare name; the
importer rewrites them to the graph form "node:flat_index".
"""

from __future__ import annotations

from ..errors import ConversionError
from .graph_def import NodeDef, func_name

__all__ = ["FUNCTION_CONVERTERS", "call_library_function", "reachable_nodes"]

# ops with more than one output argument, each one tensor: their names in order (from
# TF's op definitions); ops not listed have one (possibly list-valued) output argument
_OUTPUT_ARGS = {
    "FusedBatchNorm": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                       "reserve_space_2"),
    "FusedBatchNormV2": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                         "reserve_space_2"),
    "FusedBatchNormV3": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                         "reserve_space_2", "reserve_space_3"),
    "Switch": ("output_false", "output_true"),
    "Merge": ("output", "value_index"),
    "TopKV2": ("values", "indices"),
    "Unique": ("y", "idx"),
    "BroadcastGradientArgs": ("r0", "r1"),
}
# attributes naming the functions an op calls
_FUNC_ATTRS = ("then_branch", "else_branch", "cond", "body", "branches", "f")


def _og():
    from . import public    # og's namespace; imported late as public.py imports this
    return public


def _where(node) -> str:
    return f"node {node.name!r} ({node.op})"


def _callees(node) -> list:
    """The names of the library functions `node` calls through its attributes."""
    names = []
    for key in _FUNC_ATTRS:
        attr = node.attr.get(key)
        if attr is None:
            continue
        if attr.kind == "func":
            names.append(func_name(attr.value))
        elif attr.kind == "list":
            names.extend(func_name(v) for v in attr.value.get("func", []))
    return names


def reachable_nodes(graph_def, library: dict):
    """(where, NodeDef) for the graph's nodes and for the nodes of every library
    function they call, directly or not (`where` is "function/node" inside one).

    Raises:
        ConversionError: a node calls a function the library does not hold.
    """
    todo, seen = [], set()

    def visit(where_prefix, node):
        for name in _callees(node):
            if name not in library:
                raise ConversionError(f"import_graph_def: {_where(node)} calls function "
                                      f"{name!r}, which is not in the graph_def's library")
            if name not in seen:
                seen.add(name)
                todo.append(name)
        if node.op in library and node.op not in seen:
            seen.add(node.op)
            todo.append(node.op)
        return where_prefix + node.name, node

    for node in graph_def.node:
        yield visit("", node)
    while todo:
        fn = library[todo.pop(0)]
        for node in fn.node:
            yield visit(fn.name + "/", node)


def _function(ctx, node, name: str):
    """The FunctionDef `name` of ctx's library.

    Raises:
        ConversionError: the library has no such function.
    """
    fn = ctx.library.get(name)
    if fn is None:
        raise ConversionError(f"import_graph_def: {_where(node)} calls function {name!r}, "
                              f"which is not in the graph_def's library")
    return fn


def _attr_function(ctx, node, key: str):
    """The FunctionDef named by the call's func attribute `key`.

    Raises:
        ConversionError: the attribute is missing or names no library function.
    """
    attr = node.attr.get(key)
    if attr is None or attr.kind != "func":
        raise ConversionError(f"import_graph_def: {_where(node)} has no function "
                              f"attribute {key!r}")
    return _function(ctx, node, func_name(attr.value))


def _flat_ref(ref: str, producers: dict, ctx) -> str:
    """A FunctionDef input name as the graph form: "n:arg:i" -> "n:k" (k the flat
    output index), an argument name -> "arg:0"; control inputs are kept."""
    control = ref.startswith("^")
    parts = ref.lstrip("^").split(":")
    if control:
        return "^" + parts[0]
    if len(parts) != 3:
        return ":".join(parts) if len(parts) == 2 else f"{parts[0]}:0"
    src, arg, index = parts
    if not index.isdigit():
        raise ConversionError(f"import_graph_def: function input {ref!r} has no index")
    op = producers.get(src)
    names = _OUTPUT_ARGS.get(op)
    if names is None and op in ctx.library:
        names = tuple(ctx.library[op].output_args)
    if names is not None and arg in names:
        return f"{src}:{names.index(arg) + int(index)}"
    return f"{src}:{index}"


def _body_nodes(fn, ctx) -> list:
    """The function's nodes with inputs in the graph form; control inputs on an input
    argument are dropped (an argument is a value, ready before the body runs)."""
    producers = {n.name: n.op for n in fn.node}
    args = set(fn.input_args)
    out = []
    for node in fn.node:
        inputs = []
        for ref in node.input:
            if ref.startswith("^") and ref[1:] in args:
                continue
            inputs.append(_flat_ref(ref, producers, ctx))
        out.append(NodeDef(node.name, node.op, inputs, node.device, node.attr))
    return out


def _call(ctx, fn, args: list, where: str) -> list:
    """Import `fn`'s body with `args` (og Tensors) as its input arguments, in a name
    scope; returns its outputs (one per output argument).

    Raises:
        ConversionError: wrong argument count, a bad ret, or a body node that fails.
    """
    og = _og()
    if len(args) != len(fn.input_args):
        raise ConversionError(f"import_graph_def: {where} passes {len(args)} input(s) to "
                              f"function {fn.name!r}, which takes {len(fn.input_args)}")
    mapped = {f"{name}:0": t for name, t in zip(fn.input_args, args)}
    with og.name_scope(fn.name):
        outputs, _ = ctx.import_nodes(_body_nodes(fn, ctx), mapped)
    producers = {n.name: n.op for n in fn.node}
    results = []
    for name in fn.output_args:
        ref = fn.ret.get(name)
        if ref is None:
            raise ConversionError(f"import_graph_def: function {fn.name!r} does not say "
                                  f"which tensor its output {name!r} is (no ret entry)")
        flat = _flat_ref(ref, producers, ctx)
        if flat in mapped:
            results.append(mapped[flat])
            continue
        src, _, index = flat.rpartition(":")
        outs = outputs.get(src)
        if outs is None or int(index) >= len(outs):
            raise ConversionError(f"import_graph_def: function {fn.name!r} returns "
                                  f"{ref!r}, which is not a tensor of its body")
        results.append(outs[int(index)])
    return results


def _truth(t, node):
    """A TF If/While predicate as og's boolean scalar: TF takes a non-bool scalar as
    "not zero".

    Raises:
        ConversionError: the predicate is not a scalar.
    """
    og = _og()
    if t.shape is not None and len(t.shape) != 0:
        raise ConversionError(f"import_graph_def: {_where(node)}: the predicate must be "
                              f"a scalar for og's importer, got shape {list(t.shape)}")
    if t.dtype == og.bool:
        return t
    return og.not_equal(t, og.zeros([], t.dtype))


def _as_list(result) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _if(node, ins, ctx):
    """If/StatelessIf: og.cond over the then/else branch functions."""
    og = _og()
    then_fn = _attr_function(ctx, node, "then_branch")
    else_fn = _attr_function(ctx, node, "else_branch")
    pred, args = _truth(ins[0], node), list(ins[1:])
    if not then_fn.output_args:
        raise ConversionError(f"import_graph_def: {_where(node)} has no outputs; og's "
                              "importer takes If nodes that return values only")
    where = _where(node)
    result = og.cond(pred, lambda: _call(ctx, then_fn, args, where),
                     lambda: _call(ctx, else_fn, args, where))
    return _as_list(result)


def _case(node, ins, ctx):
    """Case/StatelessCase: og.switch_case over the branch functions (an index out of
    range runs the last branch, as TF's Case)."""
    og = _og()
    attr = node.attr.get("branches")
    names = [func_name(v) for v in attr.value.get("func", [])] \
        if attr is not None and attr.kind == "list" else []
    if not names:
        raise ConversionError(f"import_graph_def: {_where(node)} has no branches")
    fns = [_function(ctx, node, name) for name in names]
    if not fns[0].output_args:
        raise ConversionError(f"import_graph_def: {_where(node)} has no outputs; og's "
                              "importer takes Case nodes that return values only")
    args, where = list(ins[1:]), _where(node)
    branches = [lambda fn=fn: _call(ctx, fn, args, where) for fn in fns]
    index = ins[0] if ins[0].dtype == og.int32 else og.cast(ins[0], og.int32)
    return _as_list(og.switch_case(index, branches))


def _while(node, ins, ctx):
    """While/StatelessWhile: og.while_loop of the cond and body functions over all of
    the node's inputs (TF2 passes captured tensors as loop variables too)."""
    og = _og()
    cond_fn = _attr_function(ctx, node, "cond")
    body_fn = _attr_function(ctx, node, "body")
    where = _where(node)
    if not ins:
        raise ConversionError(f"import_graph_def: {where} has no loop variables")

    def cond(*values):
        result = _call(ctx, cond_fn, list(values), where)
        if len(result) != 1:
            raise ConversionError(f"import_graph_def: {where}: cond function "
                                  f"{cond_fn.name!r} returns {len(result)} values, not 1")
        return _truth(result[0], node)

    def body(*values):
        return _call(ctx, body_fn, list(values), where)

    return _as_list(og.while_loop(cond, body, list(ins)))


def _partitioned_call(node, ins, ctx):
    """PartitionedCall/StatefulPartitionedCall: the callee `f` imported inline."""
    fn = _attr_function(ctx, node, "f")
    with _og().name_scope(node.name):
        return _call(ctx, fn, list(ins), _where(node))


def call_library_function(node, ins, ctx):
    """A node whose op type names a library function: the function imported inline.

    Raises:
        ConversionError: the library has no function of that name (the importer lists
            such op types as unsupported before building).
    """
    fn = _function(ctx, node, node.op)
    with _og().name_scope(node.name):
        return _call(ctx, fn, list(ins), _where(node))


FUNCTION_CONVERTERS = {
    "If": _if, "StatelessIf": _if,
    "While": _while, "StatelessWhile": _while,
    "Case": _case, "StatelessCase": _case,
    "PartitionedCall": _partitioned_call, "StatefulPartitionedCall": _partitioned_call,
}
