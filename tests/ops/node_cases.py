"""Load the ONNX backend node test cases and run single ops on our kernels.

This is the kernel-level half of conformance: each case's model is one node, whose
attributes are decoded here and handed to the registered kernel directly. The full
path (ONNX import -> Session) is checked in tests/convert.
"""

from __future__ import annotations

import numpy as np

from onegraph.convert.coverage import all_node_cases, as_numpy  # noqa: F401


def onnx_attr_value(attr):
    """Convert an onnx AttributeProto to the Python value our kernels expect."""
    from onnx import AttributeProto, helper, numpy_helper

    if attr.type == AttributeProto.TENSOR:
        return numpy_helper.to_array(attr.t)
    if attr.type == AttributeProto.STRING:
        return attr.s.decode("utf-8")
    if attr.type == AttributeProto.STRINGS:
        return [s.decode("utf-8") for s in attr.strings]
    if attr.type in (AttributeProto.INTS, AttributeProto.FLOATS):
        return list(helper.get_attribute_value(attr))
    if attr.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
        raise NotImplementedError("subgraph attributes are tested through the converter")
    return helper.get_attribute_value(attr)


def single_node_cases(op_types):
    """Yield (case_name, node, inputs, expected_outputs, rtol, atol) for one-node models."""
    for case in all_node_cases():
        graph = case.model.graph
        if len(graph.node) != 1 or graph.node[0].op_type not in op_types:
            continue
        for i, (inputs, outputs) in enumerate(case.data_sets):
            yield (f"{case.name}[{i}]", graph.node[0], [as_numpy(x) for x in inputs],
                   [as_numpy(x) for x in outputs], case.rtol, case.atol)


def present_outputs(node) -> list[int]:
    """Positions of the outputs a node asks for; ONNX marks skipped ones with ''.

    The reference data holds only these, in order."""
    return [k for k, name in enumerate(node.output) if name != ""]


def declared_outputs(node) -> int:
    """Output count of an ONNX node, not counting trailing omitted ('') outputs."""
    names = list(node.output)
    while names and names[-1] == "":
        names.pop()
    return len(names)


def run_node_kernel(node, inputs, opset_version=None):
    """Run our kernel for an ONNX NodeProto on numpy inputs; returns a tuple of outputs."""
    from onegraph.ops import KernelContext, get_op

    op = get_op(node.op_type, node.domain)
    attrs = {a.name: onnx_attr_value(a) for a in node.attribute}
    attrs = op.resolve_attrs(attrs, num_outputs=declared_outputs(node))
    # ONNX marks an omitted optional input with an empty name.
    args = []
    it = iter(inputs)
    for name in node.input:
        args.append(None if name == "" else next(it))
    return op.kernel(args, attrs, KernelContext())


def assert_outputs_match(expected, actual, rtol, atol, name):
    """Compare like the ONNX backend runner: dtype kind, shape and values (NaN-aware)."""
    assert len(actual) >= len(expected), f"{name}: {len(actual)} outputs, want {len(expected)}"
    for k, (want, got) in enumerate(zip(expected, actual)):
        got = np.asarray(got)
        want = np.asarray(want)
        assert got.shape == want.shape, f"{name} output {k}: shape {got.shape} != {want.shape}"
        if want.dtype == object or want.dtype.kind in "USO":
            assert got.tolist() == want.tolist(), f"{name} output {k}"
            continue
        assert got.dtype == want.dtype, f"{name} output {k}: dtype {got.dtype} != {want.dtype}"
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want, err_msg=f"{name} output {k}")
        else:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{name} output {k}")
