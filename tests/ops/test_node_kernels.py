"""Every ONNX node test whose model is a single node of a registered op, run on our kernel.

Cases we knowingly do not pass are listed with a reason in the `KNOWN_FAILURES` dict of
the op family module (they also appear in docs/onnx_coverage.md); everything else must
match the ONNX reference outputs, and shape/dtype inference must agree with the kernel.
Subgraph ops take their subgraph attributes from onegraph's ONNX importer and run them
through a Session; sequence outputs are compared element by element. Two kinds of listed
case are still checked here rather than expected to fail:

- bfloat16 Attention (reason `_BF16_ROUNDING`): compared at a bfloat16 tolerance;
- random ops whose reference is one particular draw (`CHANCE_MATCHES`): everything that
  does not depend on the draw (output count, shape, dtype, values in {0, 1}).
  tests/ops/test_random_kernels.py checks their distributions and seeds.

Left out of the parametrization (both run end to end in tests/convert/test_onnx_backend.py):
see `_NOT_SINGLE_NODE` and `_KERNEL_NOT_HERE` below.
"""

import numpy as np
import pytest

from onegraph import ops
from onegraph.convert import from_onnx
from onegraph.ops import REGISTRY, KernelContext, TensorInfo, get_op
from onegraph.ops.attention import _BF16_ROUNDING
from onegraph.ops.random import CHANCE_MATCHES
from onegraph.train.session import Session

from ..convert.backend import assert_draw_independent, compare
from .node_cases import (all_node_cases, declared_outputs,
                         onnx_attr_value, present_outputs, run_node_kernel, single_node_cases)

KNOWN_FAILURES: dict[str, str] = {}
for _family in ops._FAMILIES:
    KNOWN_FAILURES.update(getattr(_family, "KNOWN_FAILURES", {}))

# The importer does not keep this case's node: ONNX Scan-8 (batched, with sequence_lens)
# becomes a Loop over a Scan-9 body, so the Scan kernel never sees this form.
_NOT_SINGLE_NODE = {
    "test_scan_sum": "Scan-8 is rewritten by the importer (Loop around Scan-9)",
}
# Kernel test only. The body declares the loop-carried sequence's elements as scalars but
# receives [1]-shaped slices; a Session runs a body without checking its inputs, while
# this harness runs subgraphs through the public Session.run, which rejects the feed.
_KERNEL_NOT_HERE = {
    "test_loop16_seq_none": "body input declared with scalar elements, fed [1]-shaped ones",
}

# bfloat16 Attention: onegraph computes in float32 and rounds once; the reference rounds
# inside the op. Measured here and in tests/convert: the largest difference is 2**-8
# absolute (one bfloat16 ulp at the outputs' magnitude; all |y| < 1) and 1.37 * 2**-7
# relative; 43-75 of 192 elements are off at the cases' own rtol 1e-3. The tolerance
# below (one ulp at |y| ~ 1, plus bfloat16's largest relative spacing) still holds with
# every element one more ulp off, and fails for zeros, a dropped causal mask, outputs 1%
# off, or (in 4 of 5 cases) a softmax scale 10% off.
BF16_RTOL, BF16_ATOL = 2.0 ** -7, 2.0 ** -8

_OPS = {op.name for op in REGISTRY if op.domain == ""}
_ALL = list(single_node_cases(_OPS))
_MODELS = {c.name: c.model for c in all_node_cases()}


def _base(name):
    """The node test's name, without the data set index that `single_node_cases` adds."""
    return name.rsplit("[", 1)[0]


_CASES = [c for c in _ALL if _base(c[0]) not in _NOT_SINGLE_NODE]
_KERNEL_CASES = [c for c in _CASES if _base(c[0]) not in _KERNEL_NOT_HERE]


def _reason(name):
    for prefix, why in KNOWN_FAILURES.items():
        if name.startswith(prefix):
            return why
    return None


def _has_subgraphs(node):
    from onnx import AttributeProto

    return any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute)


def _attributes(name, node):
    """The node's attributes as its kernel takes them: decoded here, or for subgraph ops
    taken from the node onegraph's ONNX importer makes (subgraphs become Graphs)."""
    if not _has_subgraphs(node):
        return {a.name: onnx_attr_value(a) for a in node.attribute}
    graph = from_onnx(_MODELS[_base(name)]).graph
    assert [n.op_type for n in graph.nodes] == [node.op_type], \
        f"{name}: the importer rewrote the node; list it in _NOT_SINGLE_NODE"
    return graph.nodes[0].attributes


class _SubgraphContext(KernelContext):
    """Runs a kernel's subgraphs (If branches, Loop/Scan/SequenceMap bodies) through a
    Session of the subgraph, fed by the subgraph's input names."""

    def __init__(self):
        self._sessions = {}

    def run_graph(self, graph, inputs):
        if id(graph) not in self._sessions:
            self._sessions[id(graph)] = (graph, Session(graph))
        session = self._sessions[id(graph)][1]
        names = [graph.tensors[i].name for i in graph.inputs]
        assert len(inputs) == len(names), f"subgraph {graph.name!r}: {len(inputs)} inputs"
        return list(session.run([graph.tensors[i].name for i in graph.outputs],
                                dict(zip(names, inputs))))


def _run_kernel(name, node, inputs):
    if not _has_subgraphs(node):
        return run_node_kernel(node, inputs)
    op = get_op(node.op_type, node.domain)
    attrs = op.resolve_attrs(_attributes(name, node), num_outputs=declared_outputs(node))
    it = iter(inputs)
    args = [None if input_name == "" else next(it) for input_name in node.input]
    return op.kernel(args, attrs, _SubgraphContext())


@pytest.mark.parametrize("case", _KERNEL_CASES, ids=[c[0] for c in _KERNEL_CASES])
def test_node_kernel(case, request):
    name, node, inputs, expected, rtol, atol = case
    why = _reason(name)
    checked_here = (_BF16_ROUNDING, *CHANCE_MATCHES)
    if why and why not in checked_here:
        # still run it: a known failure that now passes must be taken off the list
        request.node.add_marker(pytest.mark.xfail(reason=why, strict=True))
    actual = _run_kernel(name, node, inputs)
    assert isinstance(actual, tuple), f"{name}: kernel must return a tuple"
    actual = [actual[k] for k in present_outputs(node) if k < len(actual)]
    if why in CHANCE_MATCHES:
        assert_draw_independent(expected, actual, name)
    elif why == _BF16_ROUNDING:
        assert all(np.asarray(w).dtype.name == "bfloat16" for w in expected), name
        compare(expected, actual, BF16_RTOL, BF16_ATOL, name)
        try:
            compare(expected, actual, rtol, atol, name)
        except AssertionError:
            return
        pytest.fail(f"{name} now matches at the case's rtol {rtol}: take it off "
                    f"KNOWN_FAILURES")
    else:
        compare(expected, actual, rtol, atol, name)


def _compatible(inferred, actual):
    if inferred is None:
        return True
    return len(inferred) == len(actual) and all(
        d is None or d == a for d, a in zip(inferred, actual))


def _input_info(value):
    """What inference is told about an input: dtype and shape of a tensor; nothing about
    a sequence or an empty optional (as `infer_graph` describes such values)."""
    if value is None or isinstance(value, list):
        return TensorInfo(None, None)
    x = np.asarray(value)
    return TensorInfo(x.dtype, tuple(x.shape))


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_node_inference(case):
    """Inferred dtype and shape (given input dtypes/shapes only) agree with the outputs.

    Not marked for known kernel failures: inference does not run the kernel."""
    name, node, inputs, expected, rtol, atol = case
    op = get_op(node.op_type, node.domain)
    if op.infer is None:
        pytest.fail(f"{node.op_type} has no shape/dtype inference")
    attrs = op.resolve_attrs(_attributes(name, node), num_outputs=declared_outputs(node))
    it = iter(inputs)
    infos = [None if input_name == "" else _input_info(next(it)) for input_name in node.input]
    result = op.infer(attrs, infos)
    result = [result[k] for k in present_outputs(node) if k < len(result)]
    assert len(result) == len(expected), \
        f"{name}: inference gives {len(result)} outputs, want {len(expected)}"
    for k, (info, want) in enumerate(zip(result, expected)):
        if want is None:  # an empty optional: nothing to compare
            continue
        if isinstance(want, list):
            # A sequence has no tensor shape; a dtype, if inferred, is its elements'.
            assert info.shape is None, \
                f"{name} output {k} is a sequence, inferred as a tensor of shape {info.shape}"
            assert info.dtype is None or all(
                np.asarray(w).dtype == np.dtype(info.dtype) for w in want), \
                f"{name} output {k}: inferred {info.dtype}, elements " \
                f"{sorted({str(np.asarray(w).dtype) for w in want})}"
            continue
        want = np.asarray(want)
        if info.dtype is not None:
            if want.dtype.kind in "OSU":  # strings: object arrays in onegraph
                assert np.dtype(info.dtype).kind in "OSU", \
                    f"{name} output {k}: inferred {info.dtype} for strings"
            else:
                assert np.dtype(info.dtype) == want.dtype, f"{name} output {k} dtype"
        assert _compatible(info.shape, want.shape), \
            f"{name} output {k}: inferred {info.shape}, actual {want.shape}"
