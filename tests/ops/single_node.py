"""One-node ONNX models and their onnxruntime results, for kernel tests that use
onnxruntime (or the ONNX reference evaluator) as the oracle."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def one_node_model(op_type, inputs, output_type=TensorProto.FLOAT, initializers=None,
                   opset=19, **attrs):
    """A model of one `op_type` node with output "y". `inputs`: (name, element type,
    shape) of the graph inputs, in order; `initializers`: {name: array} for constant
    inputs, which follow the graph inputs (an empty name leaves an optional input out:
    give it as ("", None, None))."""
    names = [name for name, _, _ in inputs] + list(initializers or {})
    node = helper.make_node(op_type, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], op_type.lower(),
        [helper.make_tensor_value_info(name, elem, shape)
         for name, elem, shape in inputs if name],
        [helper.make_tensor_value_info("y", output_type, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9 if opset >= 19 else 8
    return model


def feeds_model(op_type, feeds, opset, out_dtype=None, initializers=None, **attrs):
    """A model of one `op_type` node whose graph inputs are named, typed and shaped
    after `feeds` (name -> array, in input order), then `initializers`; output "y" of
    `out_dtype` (default: the first feed's)."""
    elem = helper.np_dtype_to_tensor_dtype
    first = np.asarray(next(iter(feeds.values())))
    out = elem(np.dtype(out_dtype or first.dtype))
    node = helper.make_node(op_type, list(feeds) + list(initializers or {}), ["y"], **attrs)
    graph = helper.make_graph(
        [node], op_type.lower(),
        [helper.make_tensor_value_info(k, elem(np.asarray(v).dtype), np.shape(v))
         for k, v in feeds.items()],
        [helper.make_tensor_value_info("y", out, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9 if opset >= 19 else 8
    return model


def run_onnxruntime(model, feeds):
    """The first output of `model` run by onnxruntime's CPU provider (warnings off)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def node_inputs(inputs, feeds=None):
    """(input names, graph inputs, initializers) of a node from `inputs`, a list of
    (name, array or None) in the op's input order: None is an omitted optional input
    (written as ""); names in `feeds` (all, when feeds is None) become graph inputs
    typed and shaped after their arrays, the other arrays initializers."""
    names, graph_inputs, inits = [], [], []
    for name, value in inputs:
        if value is None:
            names.append("")
            continue
        names.append(name)
        value = np.asarray(value)
        if feeds is None or name in feeds:
            graph_inputs.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
        else:
            inits.append(numpy_helper.from_array(value, name))
    return names, graph_inputs, inits


def ort_session(model, optimize=True):
    """An onnxruntime CPU session of `model` with its warnings off (and its graph
    optimizations off unless `optimize`)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def ort_outputs(model, feeds, outputs=None):
    """onnxruntime's outputs of `model` named `outputs`, or its first output alone."""
    got = ort_session(model).run(outputs, feeds)
    return got if outputs is not None else got[0]


def onegraph_outputs(model, feeds, outputs=None):
    """The Session's outputs of the imported `model` named `outputs`, or its first
    output alone."""
    import onegraph
    from onegraph.convert import from_onnx

    names = outputs or [model.graph.output[0].name]
    got = onegraph.Session(from_onnx(model)).run(names, feeds)
    return got if outputs is not None else got[0]
